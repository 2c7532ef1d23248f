//! Which Rust types may cross to the device: as buffer elements and as by-value kernel arguments.

/// A type whose values can be copied to and from device memory byte for byte.
///
/// # Safety
/// Implement this only for `Copy` types that are `#[repr(C)]` (or `#[repr(transparent)]` over
/// such a type), contain no pointers or references, and for which **every bit pattern is a valid
/// value**: device code may write any bytes into a buffer that is later read back as `[T]`. The
/// layout must match the C type the kernel uses for it (size, alignment and field offsets).
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Particle { x: f32, y: f32, mass: f32 }
/// // SAFETY: repr(C), three f32 fields, any bit pattern is a valid Particle, and the kernel
/// // declares `struct Particle { float x, y, mass; }`.
/// unsafe impl gpu_runtime::DeviceRepr for Particle {}
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be copied to the GPU: it does not implement `gpu_runtime::DeviceRepr`",
    label = "not a plain-data type the device can hold",
    note = "for a `#[repr(C)]` struct whose layout matches the C struct, add `unsafe impl gpu_runtime::DeviceRepr for {Self} {{}}`"
)]
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {}

macro_rules! device_repr {
    ($($t:ty),*) => {$(
        // SAFETY: primitive numbers are plain data and every bit pattern is valid.
        unsafe impl DeviceRepr for $t {}
    )*};
}
device_repr!(i8, u8, i16, u16, i32, u32, i64, u64, isize, usize, f32, f64);
#[cfg(feature = "half")]
device_repr!(half::f16, half::bf16);

// SAFETY: arrays of plain data are plain data with the same guarantees.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}
