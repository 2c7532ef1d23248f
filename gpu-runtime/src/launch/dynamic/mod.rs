//! Launches with argument types known only at run time (PyCUDA's `prepare("PiP")` and
//! `prepared_call`, and its `Function.__call__` with `drv.In`/`drv.Out`/`drv.InOut`), for
//! kernels from sources built at run time.
//!
//! ```no_run
//! use gpu_runtime::{Arg, Context, SourceModule};
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
//! Safety comes from two checks. [`Function::prepare_args`] compares the declared [`ArgType`]s with
//! the kernel's C declaration, read from the module's source. Each launch compares the
//! [`Arg`]s with the declared types (kind, constness, element size, context). A mismatch is an
//! [`Error::ArgumentMismatch`] and nothing is launched.

mod arg;
mod prepared;
#[cfg(test)]
mod tests;

pub use arg::{Arg, ArgType, HostArg, PtrArg};
pub use prepared::{PreparedFunction, MAX_ARGS};
