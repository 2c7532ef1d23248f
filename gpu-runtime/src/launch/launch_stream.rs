//! The stream a launch is queued on, as the launch's checks see it.

use std::sync::Arc;

use cudarc::driver::sys;

use crate::driver::ordering::StreamInner;

/// The stream a launch is queued on, as the `#[kernel]` macro's generated code passes it
/// around: the legacy default stream of the kernel's context, or a [`Stream`](crate::Stream)
/// checked to belong to that context.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct LaunchStream<'a>(&'a Arc<StreamInner>);

impl<'a> LaunchStream<'a> {
    /// A launch on `stream`, which the caller checked belongs to the kernel's context.
    #[inline(always)]
    pub(crate) fn new(stream: &'a Arc<StreamInner>) -> Self {
        LaunchStream(stream)
    }

    /// The driver's handle.
    #[inline(always)]
    pub fn raw(&self) -> sys::CUstream {
        self.0.raw
    }

    #[inline(always)]
    pub(crate) fn inner(&self) -> &'a Arc<StreamInner> {
        self.0
    }
}
