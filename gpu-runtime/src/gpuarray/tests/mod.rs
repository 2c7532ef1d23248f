//! The unit tests of `gpuarray` that need no GPU: every kernel it generates, compiled with
//! NVRTC on the host (PTX, or a cubin where a kernel has inline PTX: `registry::check_arch`),
//! and the checks that refuse what must not compile.

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

/// Compiles `source` with NVRTC on the host, with the options a launch uses, for the
/// architecture [`check_arch`](crate::gpuarray::kernels::registry::check_arch) picks (PTX,
/// or a cubin where the source has inline PTX); a failure panics naming `what` and showing
/// the source.
fn compiles(what: &str, source: &str) {
    use crate::gpuarray::kernels::registry::{check_arch, compile_check};
    if let Err(e) = compile_check(source, check_arch(source)) {
        panic!("{what} does not compile: {e}\n{source}");
    }
}

/// [`compiles`] for each `(what, source)`, on two threads: a test made of a few large
/// kernels (seconds of NVRTC each, mostly ptxas) is not the last one running, alone on one
/// core. A failure panics as [`compiles`] does, naming the kernel.
fn compile_all(sources: Vec<(String, String)>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    while let Some((what, source)) = sources.get(next.fetch_add(1, Ordering::Relaxed)) {
                        compiles(what, source);
                    }
                })
            })
            .collect();
        // The first failure's own panic, naming its kernel (`scope` would say only that a
        // thread panicked).
        for w in workers {
            if let Err(panic) = w.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// [`compile_all`] still fails on one bad kernel among good ones, naming it and NVRTC's error.
#[test]
fn compile_all_names_the_kernel_that_does_not_compile() {
    let kernel = |body: &str| format!("extern \"C\" __global__ void k(float *x) {{ {body} }}\n");
    let mut sources: Vec<(String, String)> = (0..3)
        .map(|i| (format!("good {i}"), kernel("x[0] = 1.0f;")))
        .collect();
    sources.insert(1, ("the bad one".to_owned(), kernel("x[0] = undeclared_name;")));
    let panic = std::panic::catch_unwind(|| compile_all(sources)).expect_err("a bad kernel passed");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("the bad one does not compile") && message.contains("undeclared_name"),
        "{message}"
    );
}

/// The element type of a real scalar, for the kernels keyed by element types.
fn dt(s: gpu_cuda_source::Scalar) -> crate::gpuarray::elements::dtype::DType {
    crate::gpuarray::elements::dtype::DType::from_scalar(s).expect("an element scalar")
}

/// The element scalars the compile tests run over, in one order: the integers, the 16-bit
/// floats when `half`, `f32`, `f64`, then `bool` when `bool`.
fn scalars(half: bool, bool: bool) -> Vec<gpu_cuda_source::Scalar> {
    use gpu_cuda_source::Scalar::*;
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
    from: gpu_cuda_source::Scalar,
    to: gpu_cuda_source::Scalar,
    variant: crate::gpuarray::kernels::elementwise::Variant,
) -> String {
    crate::gpuarray::copy::builtin::kernel(b, dt(from), dt(to))
        .unwrap()
        .source(variant)
}
mod close;
mod complex_more;
mod options;
