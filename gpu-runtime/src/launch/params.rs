//! What a kernel takes by value ([`KernelParam`]): plain data, and the handles of texture and
//! surface objects, whose launches are ordered after the memory behind them.

use crate::driver::texture::{SurfaceObject, TextureObject};
use crate::error::Result;
use crate::launch::launch_stream::LaunchStream;
use crate::types::repr::DeviceRepr;

/// A type that can be passed to a kernel by value.
///
/// Every [`DeviceRepr`] type is one; so is `bool` (a C `bool` argument), which is not a
/// [`DeviceRepr`] because not every byte is a valid `bool` when read back from the device.
///
/// # Safety
/// The value's bytes, as laid out in memory, must be exactly what the kernel's C parameter
/// expects.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a kernel by value: it does not implement `gpu_runtime::DeviceRepr`",
    label = "not a plain-data type a kernel can take",
    note = "for a `#[repr(C)]` struct whose layout matches the C struct, add `unsafe impl gpu_runtime::DeviceRepr for {Self} {{}}`"
)]
pub unsafe trait KernelParam: Copy {
    /// Orders the launch after the work on other streams this value depends on: for handles
    /// of resources (texture and surface objects), the uses of the memory behind them, and
    /// keeps the resource alive until the launch completes. Plain data depends on nothing.
    #[doc(hidden)]
    #[inline(always)]
    fn order_on(&self, _stream: &LaunchStream<'_>) -> Result<()> {
        Ok(())
    }

    /// For a graph's condition ([`ConditionalHandle`](crate::launch::ConditionalHandle)), the
    /// graph it belongs to, which a graph node given it records and the graph checks; `None`
    /// for every other value.
    #[doc(hidden)]
    #[inline(always)]
    fn condition_of(&self) -> Option<u64> {
        None
    }
}

// SAFETY: a DeviceRepr type has the layout of its C counterpart by its own contract.
unsafe impl<T: DeviceRepr> KernelParam for T {}
// SAFETY: Rust's bool is one byte holding 0 or 1, as C/C++'s bool is on every CUDA platform.
unsafe impl KernelParam for bool {}

// SAFETY: the first 8 bytes of a handle are the object (repr(C), `raw` first), which is what
// the kernel's 64-bit `cudaTextureObject_t` parameter receives; the driver copies only those.
unsafe impl KernelParam for TextureObject<'_> {
    #[inline]
    fn order_on(&self, stream: &LaunchStream<'_>) -> Result<()> {
        TextureObject::order_on(self, stream.inner())
    }
}

// SAFETY: as for TextureObject, with `cudaSurfaceObject_t`.
unsafe impl KernelParam for SurfaceObject<'_> {
    #[inline]
    fn order_on(&self, stream: &LaunchStream<'_>) -> Result<()> {
        SurfaceObject::order_on(self, stream.inner())
    }
}

/// A by-value argument, as the kernel takes it, after ordering the launch after the work it
/// depends on (texture and surface objects; nothing for plain data).
#[inline(always)]
pub(crate) fn by_value<T: KernelParam>(value: T, stream: LaunchStream<'_>) -> Result<T> {
    value.order_on(&stream)?;
    Ok(value)
}
