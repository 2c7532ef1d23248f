//! Launches with argument types known only at run time (PyCUDA's `prepare("PiP")` and
//! `prepared_call`, and its `Function.__call__` with `drv.In`/`drv.Out`/`drv.InOut`), for
//! kernels from sources built at run time.
//!
//! ```no_run
//! use gpu_runtime::{launch::Arg, Context, SourceModule};
//! let ctx = Context::default()?;
//! let module = SourceModule::new(
//!     "__global__ void multiply_them(float *dest, const float *a, const float *b) {
//!          int i = threadIdx.x; dest[i] = a[i] * b[i]; }",
//! )
//! .load(&ctx)?;
//! let (a, b) = (vec![1.5f32; 400], vec![2.0f32; 400]);
//! let mut dest = vec![0f32; 400];
//! // Types come from the C declaration; the host arrays are copied in, and `dest` back out.
//! module.get_function("multiply_them")?.call(
//!     1,
//!     400,
//!     &mut [Arg::host_out(&mut dest), Arg::host_in(&a), Arg::host_in(&b)],
//! )?;
//! assert_eq!(dest[0], 3.0);
//! # Ok::<(), gpu_runtime::Error>(())
//! ```
//!
//! Every kind of argument the `#[kernel]` macro takes goes through [`Arg`] too: a CUDA vector
//! type (`Arg::from(Float4::new(..))`), a `#[repr(C)]` struct ([`Arg::by_value`]), a texture or
//! surface object (`Arg::from(texture.object())`, ordered after the writes to its memory and
//! keeping it alive, as the macro does). [`CallOptions`] gives a staged call a stream and
//! dynamic shared memory (PyCUDA's `stream=` and `shared_size=`).
//!
//! ```no_run
//! use gpu_runtime::{launch::Arg, Context, SourceModule, driver::Texture, driver::TextureDesc};
//! use gpu_runtime::driver::{ArrayDescriptor, CudaArray};
//! use gpu_runtime::types::Float2;
//!
//! #[derive(Clone, Copy)]
//! #[repr(C)]
//! struct Params { scale: f32, shift: Float2 }
//! // SAFETY: repr(C) plain data with the layout of the C struct.
//! unsafe impl gpu_runtime::DeviceRepr for Params {}
//!
//! let ctx = Context::default()?;
//! let module = SourceModule::new(
//!     "struct Params { float scale; float2 shift; };
//!      __global__ void warp(float *y, cudaTextureObject_t tex, Params p, int n) {
//!          int i = blockIdx.x * blockDim.x + threadIdx.x;
//!          if (i < n) y[i] = p.scale * tex1D<float>(tex, i * p.shift.x + p.shift.y); }",
//! )
//! .load(&ctx)?;
//! let mut array = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(256, 0))?;
//! array.copy_from_host(&vec![1.0f32; 256])?;
//! let tex = Texture::from_array(&array, &TextureDesc::default())?;
//! let p = Params { scale: 2.0, shift: Float2::new(0.5, 0.25) };
//! let mut y = vec![0f32; 256];
//! // PyCUDA's format string: a pointer, a 64-bit handle, 16 bytes by value, an int.
//! module.get_function("warp")?.prepare_format("PQ16si")?.call(
//!     1,
//!     256,
//!     &mut [Arg::host_out(&mut y), Arg::from(tex.object()), Arg::by_value(&p), Arg::I32(256)],
//! )?;
//! # Ok::<(), gpu_runtime::Error>(())
//! ```
//!
//! Safety comes from two checks. [`Function::prepare_args`] (or
//! [`prepare_format`](crate::driver::Function::prepare_format), or [`prepare_declared`](crate::driver::Function::prepare_declared))
//! compares the declared [`ArgType`]s with the kernel's C declaration, read from the module's
//! source; for a struct by value, with the C struct's size (from the driver, or compiled with
//! NVRTC) and, given [`StructType::with_fields`], its layout. Each launch compares every [`Arg`]
//! with the declared types (kind, constness, element size, by-value size and type, context)
//! before anything launches or is copied. A mismatch is an [`Error::Argument`] naming
//! the parameter ([`ArgumentError`](crate::ArgumentError)), and nothing is launched. Launches allocate nothing: the parameter array is on
//! the stack ([`MAX_ARGS`]).

mod arg;
mod call;
mod declared;
mod format;
mod prepared;
#[cfg(test)]
mod tests;
mod value;

pub use arg::{Arg, ArgType, HostArg, PtrArg, MAX_ARGS};
pub use call::CallOptions;
pub use prepared::PreparedFunction;
pub use value::{CudaVector, StructArg, StructType, VectorArg, VectorType};
