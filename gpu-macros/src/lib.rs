//! The `#[kernel]` attribute of `gpu-runtime`. Use it through `gpu_runtime::kernel`; its
//! documentation is there.
//!
//! This crate is only the entry points: each converts `proc_macro` tokens to `proc_macro2` ones
//! and back around a call into `gpu-macros-core`, where the parsers, checks and generators live
//! and are unit-tested (a proc-macro crate's own tests cannot run: see its Cargo.toml).

use proc_macro::TokenStream;

/// Declares a CUDA C kernel with a typed Rust signature, checked at compile time.
///
// The example is a file of its own so that gpu-runtime compiles it as a doctest (this crate's
// doctests do not run: see its Cargo.toml).
#[doc = include_str!("kernel_example.md")]
///
/// Each Rust parameter must match its C one (count, order, scalar width and signedness, pointer
/// constness: `const float *x` is `x: &[f32]`, `float *y` is `y: &mut [f32]`, `int n` is
/// `n: i32`); a mismatch is a compile error at the Rust parameter. The marks say what the
/// convenience call does with host data:
///
/// - `#[In]`: copied to the device before the launch (`&[T]`: a slice, `Vec`, array or
///   contiguous `ndarray`);
/// - `#[Out]`: copied back to the host after it (`&mut [T]`; not copied in, so the kernel
///   writes every element);
/// - `#[InOut]`: both.
///
/// An unmarked pointer parameter takes device memory (a `DeviceBuffer` or a view of one) in
/// every call; host data there is a compile error naming the fix (`ctx.to_device(..)` or a
/// mark). `#[len = n]` on a pointer refuses a buffer shorter than `n` (another argument's name,
/// or an expression of them) before the launch; `#[read_only]` takes a `T *` the kernel only
/// reads as `&[T]`.
///
/// On `fn name(args…);` it generates `name::prepare`, the typed `name::Kernel` with
/// `prepared_call`, `prepared_async_call`, `prepared_timed_call` and `call`, and a convenience
/// `name(&ctx, grid, block, args…)` (prepare, then `call`). Grid and block are an integer or a
/// 1-, 2- or 3-tuple. On `mod name { fn a(…); fn b(…); }` it does the same for each kernel,
/// compiled into one module. The `gpu_runtime` crate's guide has the whole type table and
/// everything generated (its chapter `kernels`).
///
/// Arguments: the source as a string literal (or `source = "…"`), or `file = "path.cu"`
/// relative to the crate's `Cargo.toml`; `name = "c_name"` when the C function is named
/// differently; `options = ["-use_fast_math"]` for extra NVRTC options; `include_dirs =
/// ["kernels/include"]` for header directories relative to the crate's `Cargo.toml` (a `file`'s
/// own directory is searched first, for `#include "common.h"` beside it; the file and every
/// header it includes from these are embedded in the binary and compiled from there);
/// `files = ["a.cu",
/// "b.cu"]` or `sources = ["…", "…"]` for one module linked from several sources (relocatable
/// device code, with the device runtime for kernels that launch kernels); `check = false` to
/// skip the build-time NVRTC compile of the whole source; `embed = ["sm_90", "compute_75"]` to
/// embed images compiled at build time (without it, PTX for the build machine's GPU when there
/// is one; `embed = []`: none); `instantiate = [f32, f64]` (or CUDA names: `[float,
/// float2, cuDoubleComplex]`) on `fn name<T>(…)` for a C++ kernel template, values for a
/// template over values (`[1024]` on a plain `fn`, `[(f32, 256)]` on a generic one); `prelude =
/// false` to compile without the typedefs nvcc's host headers declare (`uint`, `ushort`,
/// `ulong`, …). A crate's `Cargo.toml` may give every kernel `options` and `include-dirs` in
/// `[package.metadata.gpu-runtime]`.
///
/// The source is read as NVRTC compiles it, macros expanded and `#if`s evaluated, so kernels a
/// macro stamps out are declared by name. A pointer parameter the kernel accepts null is
/// `Option<&[T]>` / `Option<&mut [T]>` (`None` passes a null pointer).
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    gpu_macros_core::kernel(attr.into(), item.into()).into()
}

/// An elementwise kernel (PyCUDA's and CuPy's `ElementwiseKernel`) declared with Rust types
/// and checked at `cargo build`.
///
/// ```ignore
/// use gpu_runtime::{elementwise, gpuarray::DeviceArray};
///
/// #[elementwise("z = a * x + y")]
/// fn axpy(a: f32, x: &DeviceArray<f32>, y: &DeviceArray<f32>, z: &mut DeviceArray<f32>);
///
/// axpy(2.0, &x, &y.t(), &mut z)?;        // the legacy default stream
/// axpy_on(&stream, 2.0, &x, &y, &mut z)?; // a stream of yours, without waiting
/// ```
///
/// On a signature without a body it generates `fn axpy(...) -> gpu_runtime::Result<()>`,
/// `fn axpy_on(stream: &Stream, ...)`, and a module `axpy` with `KERNEL` (a
/// `gpu_runtime::gpuarray::ElementwiseFn`: the C arguments and operation) and `kernel()` (the
/// `ElementwiseKernel`, built once per process; each context compiles it once).
///
/// Arguments are scalars (`a: f32`), arrays the operation reads (`x: &DeviceArray<f32>`) and
/// arrays it writes (`z: &mut DeviceArray<f32>`), of the element types f32, f64, i8, u8, i16,
/// u16, i32, u32, i64, u64, `half::f16` and `half::bf16` (C's `__half` and `__nv_bfloat16`, whose
/// CUDA headers the kernel includes; written `f16`, `half::f16` or `gpu_runtime::half::f16`)
/// `gpu_runtime::gpuarray::Bool` (C's `bool`; Rust's `bool` is refused, since the device may
/// write any byte), `Complex32` and `Complex64` (`gpu_runtime::complex<float>`/`<double>`, whose
/// header the kernel includes), and the CUDA vector types (`Float3`, ...). `DeviceArrayView`, `DeviceArrayViewMut` or `PooledArray` may be
/// written instead of `DeviceArray`: the type names only the element type, and the generated
/// function takes any array or view of it (any storage, any dimension, any layout). In the
/// operation an array is named as its element, `i` is the element's index and `n` the number
/// of elements; several statements and locals are allowed.
///
/// Checked at build time, each a compile error: a name in the operation that is not an
/// argument, a local, `i`, `n`, a C keyword or type, or a called function; an assignment
/// (`=`, `+=`, `++`, ...) to an array taken as `&` or to a scalar; no array taken as `&mut`,
/// or one the operation never assigns; element types other than those above, or one of their
/// names given to another type (`type f16 = u16;`, refused by a constant assertion); `return` and
/// `goto`. When NVRTC can be loaded at build time, the operation is compiled in a kernel that
/// binds the arguments as the run-time kernels do, and CUDA errors (`x % 2.5f` on floats, an
/// undefined function) are compile errors quoting NVRTC, at the operation's line and column.
/// `GPU_RUNTIME_BUILD_CHECK=0` skips that compile, as for `#[kernel]`.
#[proc_macro_attribute]
pub fn elementwise(attr: TokenStream, item: TokenStream) -> TokenStream {
    gpu_macros_core::elementwise(attr.into(), item.into()).into()
}

/// A reduction (CuPy's `ReductionKernel`, PyCUDA's `ReductionKernel`) declared with Rust
/// types and checked at `cargo build`, as [`macro@elementwise`] is for elementwise kernels.
///
/// ```ignore
/// use gpu_runtime::{gpuarray::DeviceArray, reduction};
///
/// #[reduction(map = "x * x", reduce = "a + b", neutral = "0.0", post_map = "sqrt(a)")]
/// fn norm2(x: &DeviceArray<f64>) -> f64;
///
/// let r = norm2(&x)?;                      // a 0-d array, on the legacy default stream
/// let r = norm2_on(&stream, &x.t())?;      // a stream of yours, without waiting
/// let rows = norm2::kernel()?.reduce_axis(/* the ReductionKernel's other forms */);
/// ```
///
/// On a signature without a body it generates `fn norm2(...) ->
/// gpu_runtime::Result<DeviceArray<f64, IxDyn>>` (the reduction over every element, a 0-d
/// array), `fn norm2_on(stream: &Stream, ...)`, and a module `norm2` with `KERNEL` (a
/// `gpu_runtime::gpuarray::ReductionFn`) and `kernel()` (the typed
/// `ReductionKernel<f64>`, built once per process; each context compiles it once), whose
/// `reduce_axis`, `reduce_into` and `source` are there too.
///
/// `map` is an expression of the arguments (arrays named as their elements, `i` the element's
/// index), `reduce` one of `a` and `b` (associative and commutative), `neutral` the value that
/// changes nothing, `post_map` (optional, default `a`) one of the reduced value `a` and the
/// count `n`; the result type (`-> f64`) is the accumulator's too. Arguments are scalars and
/// arrays taken as `&` (a reduction writes only its result), of the element types of
/// [`macro@elementwise`]; the result is a number type. Checked at build time, each a compile
/// error: an argument or result type that is not one of those, an array taken as `&mut`, no
/// array; and, when NVRTC can be loaded at build time, every variant of the kernel the run time
/// may compile (over all axes, along one, for 1 to 8 axes), generated by the run time's own
/// generator, is compiled, so that a CUDA error in an expression is a compile error quoting
/// NVRTC at that expression's string literal, with its line and column.
/// `GPU_RUNTIME_BUILD_CHECK=0` skips that compile, as for `#[kernel]`.
#[proc_macro_attribute]
pub fn reduction(attr: TokenStream, item: TokenStream) -> TokenStream {
    gpu_macros_core::reduction(attr.into(), item.into()).into()
}

/// A test that needs a CUDA GPU (PyCUDA's `mark_cuda_test`): `#[gpu_test] fn name(ctx:
/// &gpu_runtime::Context) { … }` becomes a `#[test]` marked `#[ignore = "needs a CUDA GPU"]`
/// (run it with `cargo test -- --ignored` on a machine with a GPU) that opens the default
/// context and passes it in. The parameter may be left out; the body may return a `Result`.
/// Use it through `gpu_runtime::gpu_test`.
#[proc_macro_attribute]
pub fn gpu_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    gpu_macros_core::gpu_test(attr.into(), item.into()).into()
}
