//! [`HostCopy`]: a device-to-host copy into page-locked memory the future owns.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use ndarray::{Dimension, Ix1};

use crate::driver::future::synchronized::Synchronized;
use crate::driver::host::pinned::{HostAllocFlags, PinnedArray};
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::memops::memcpy_dtoh_async;
use crate::driver::memory::view::DeviceRead;
use crate::driver::stream::Stream;
use crate::error::{Error, Result};
use crate::types::repr::DeviceRepr;

/// A device-to-host copy in flight into a [`PinnedArray`] the future owns; completes with the
/// array once the copy (and the work before it on its stream) has finished.
/// Made by [`DeviceBuffer::to_host_future`] and [`memcpy_dtoh_future`].
///
/// Cancel-safe: dropped before the copy ran, it drops the array, whose record of the copy
/// keeps the memory allocated (or out of its pool) until the copy has finished, as every
/// allocation of this crate does; nothing is lost but the copy's result.
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
#[must_use = "a future waits for nothing unless it is awaited"]
#[derive(Debug)]
pub struct HostCopy<T: DeviceRepr, D: Dimension> {
    host: Option<PinnedArray<T, D>>,
    done: Synchronized,
}

// Nothing is pinned in place: the array moves out when the copy completes (every `Dimension`
// is an index list, `Unpin` in practice, but not declared so).
impl<T: DeviceRepr, D: Dimension> Unpin for HostCopy<T, D> {}

impl<T: DeviceRepr, D: Dimension> Future for HostCopy<T, D> {
    type Output = Result<PinnedArray<T, D>>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match Pin::new(&mut this.done).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Ready(Ok(())) => Poll::Ready(
                this.host
                    .take()
                    .ok_or(Error::PolledAfterCompletion { future: "HostCopy" }),
            ),
        }
    }
}

/// Queues a copy of `src` into `dst` on `stream` (after the work that writes `src`) and
/// returns a future owning `dst`, which completes with it once the copy has finished: the
/// async [`memcpy_dtoh_async`]. `dst` may come from a
/// [`PageLockedMemoryPool`](crate::tools::PageLockedMemoryPool), so that a server reuses its
/// host buffers; lengths must match (in elements, `dst` in memory order).
///
/// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
pub fn memcpy_dtoh_future<T: DeviceRepr, D: Dimension>(
    mut dst: PinnedArray<T, D>,
    src: &(impl DeviceRead<T> + ?Sized),
    stream: &Stream,
) -> Result<HostCopy<T, D>> {
    memcpy_dtoh_async(&mut dst, src, stream)?;
    let done = stream.synchronize_future()?;
    Ok(HostCopy {
        host: Some(dst),
        done,
    })
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Copies the buffer into new page-locked host memory on `stream`, after the work that
    /// writes it, and returns a future that completes with that memory once the copy has
    /// finished: [`to_vec`](Self::to_vec) for async programs (`.to_vec()` of the result, or
    /// read it in place).
    ///
    /// ```no_run
    /// # async fn f() -> gpu_runtime::Result<()> {
    /// use gpu_runtime::{Context, Stream};
    /// let ctx = Context::default()?;
    /// let stream = Stream::new(&ctx)?;
    /// let x = ctx.to_device(&[1.0f32, 2.0, 3.0])?;
    /// let host = x.to_host_future(&stream)?.await?;
    /// assert_eq!(host.as_slice_memory_order(), &[1.0, 2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// Needs the `gpuarray` feature (on by default), which brings `ndarray`.
    pub fn to_host_future(&self, stream: &Stream) -> Result<HostCopy<T, Ix1>> {
        let host = self
            .context()
            .pagelocked_empty::<T, _>(self.len(), HostAllocFlags::NONE)?;
        memcpy_dtoh_future(host, self, stream)
    }

    // The name this had before `_async` was kept for PyCUDA's "queued on a stream" alone:
    // code written against it still builds, and no warning is given (a deprecation would fail
    // the builds that deny warnings).
    #[doc(hidden)]
    pub fn to_host_async(&self, stream: &Stream) -> Result<HostCopy<T, Ix1>> {
        self.to_host_future(stream)
    }
}
