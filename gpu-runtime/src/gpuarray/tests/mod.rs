//! The unit tests of `gpuarray` that need no GPU: every kernel it generates, compiled with
//! NVRTC for sm_90 on the host, and the checks that refuse what must not compile.

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
fn dt(s: gpu_cdecl::Scalar) -> crate::gpuarray::elements::dtype::DType {
    crate::gpuarray::elements::dtype::DType::from_scalar(s).expect("an element scalar")
}
mod close;
mod complex_more;
mod options;
