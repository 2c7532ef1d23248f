//! A kernel's buffer arguments and its stream: each checked to belong to the kernel's context
//! (or to a peer it was given access to), and each buffer's use ordered on the launch's stream
//! after the other streams' uses (`driver::ordering`).

use cudarc::driver::sys;

use crate::driver::context::core::Context;
use crate::driver::memory::view::{DeviceView, DeviceViewMut};
use crate::driver::module::function::Function;
use crate::driver::stream::Stream;
use crate::error::{Error, Result};
use crate::launch::launch_stream::LaunchStream;

/// The device address of a buffer argument the kernel reads, after checking it lives in the
/// kernel's context or in a peer the context was given access to
/// ([`Context::enable_peer_access`]), and ordering the read on `stream` after the buffer's last
/// write.
#[inline(always)]
pub(crate) fn read_arg<T>(
    f: &Function,
    arg: &DeviceView<'_, T>,
    stream: LaunchStream<'_>,
) -> Result<sys::CUdeviceptr> {
    check_context(f.context(), arg.context())?;
    arg.read_on(stream.inner())?;
    Ok(arg.device_ptr())
}

/// [`read_arg`] for a buffer the kernel may write: ordered after every use of the buffer.
#[inline(always)]
pub(crate) fn write_arg<T>(
    f: &Function,
    arg: &DeviceViewMut<'_, T>,
    stream: LaunchStream<'_>,
) -> Result<sys::CUdeviceptr> {
    check_context(f.context(), arg.context())?;
    arg.write_on(stream.inner())?;
    Ok(arg.device_ptr())
}

#[inline(always)]
fn check_context(kernel: &Context, owner: &Context) -> Result<()> {
    if owner.is(kernel.raw()) {
        Ok(())
    } else {
        foreign_arg(kernel, owner)
    }
}

/// A buffer of another context passed to a kernel: allowed when the kernel's context was given
/// peer access to it (cold: the usual argument lives in the kernel's own context).
#[cold]
pub(crate) fn foreign_arg(kernel: &Context, owner: &Context) -> Result<()> {
    if kernel.has_peer_access(owner) {
        Ok(())
    } else {
        Err(Error::WrongContext {
            what: "a device buffer argument",
        })
    }
}

/// `stream`, after checking it belongs to the kernel's context and that no other library is
/// capturing it (`StreamInner::refuse_foreign_capture`).
#[inline]
pub(crate) fn stream_arg<'s>(f: &Function, stream: &'s Stream) -> Result<LaunchStream<'s>> {
    if stream.context().is(f.context().raw()) {
        stream.inner().refuse_foreign_capture()?;
        Ok(LaunchStream::new(stream.inner()))
    } else {
        Err(Error::WrongContext { what: "the stream" })
    }
}

/// The legacy default stream of the kernel's context, where `prepared_call` launches.
#[inline(always)]
pub(crate) fn legacy_stream(f: &Function) -> LaunchStream<'_> {
    LaunchStream::new(f.context().legacy())
}
