//! The unit tests of `gpuarray` that need no GPU: every kernel it generates, compiled with
//! NVRTC for sm_90 on the host, and the checks that refuse what must not compile.

/// `$f::<T>()` for each integer type and `f32`, `f64` (a generic test function cannot be
/// looped over types).
macro_rules! for_each_number {
    ($f:ident) => {
        $f::<i8>();
        $f::<u8>();
        $f::<i16>();
        $f::<u16>();
        $f::<i32>();
        $f::<u32>();
        $f::<i64>();
        $f::<u64>();
        $f::<f32>();
        $f::<f64>();
    };
}

mod builtin;
mod complex;
mod expr_scan_random;
mod forms;
mod half;
mod math;
mod reduce;
mod vector;

/// Compiles `source` with NVRTC for sm_90 on the host, with the options a launch uses; a
/// failure panics naming `what` and showing the source.
fn compiles(what: &str, source: &str) {
    if let Err(e) = crate::gpuarray::kernels::registry::compile_check(source, "sm_90") {
        panic!("{what} does not compile: {e}\n{source}");
    }
}

/// The element type of a real scalar, for the kernels keyed by element types.
fn dt(s: gpu_cdecl::Scalar) -> crate::gpuarray::elements::dtype::DType {
    crate::gpuarray::elements::dtype::DType::from_scalar(s).expect("an element scalar")
}

/// The element scalars the compile tests run over, in one order: the integers, the 16-bit
/// floats when `half`, `f32`, `f64`, then `bool` when `bool`.
fn scalars(half: bool, bool: bool) -> Vec<gpu_cdecl::Scalar> {
    use gpu_cdecl::Scalar::*;
    let halves = [F16, Bf16].into_iter().filter(|_| half);
    let bools = [Bool].into_iter().filter(|_| bool);
    [I8, U8, I16, U16, I32, U32, I64, U64]
        .into_iter()
        .chain(halves)
        .chain([F32, F64])
        .chain(bools)
        .collect()
}

/// The source of builtin kernel `b` from `from` to `to` in `variant`.
fn builtin_source(
    b: crate::gpuarray::copy::builtin::Builtin,
    from: gpu_cdecl::Scalar,
    to: gpu_cdecl::Scalar,
    variant: crate::gpuarray::kernels::elementwise::Variant,
) -> String {
    crate::gpuarray::copy::builtin::kernel(b, dt(from), dt(to))
        .unwrap()
        .source(variant)
}
mod close;
mod complex_more;
mod options;
