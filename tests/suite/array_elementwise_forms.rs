//! PyCUDA's indexed form declared with `#[elementwise]`, without a GPU: the macro's build-time
//! check compiled the kernel the run time builds from it (the indexed variant alone), and
//! that kernel compiles with NVRTC for sm_90.

use gpu_runtime::__testing::{check_arch, compile_check};
use gpu_runtime::gpuarray::Variant;

/// `z[i] = ...` with `n` and the arrays as pointers: PyCUDA's text, checked at build time.
#[gpu_runtime::elementwise("z[i] = a * x[i] + y[n - 1 - i]")]
fn declared_indexed(
    a: f32,
    x: &gpu_runtime::gpuarray::DeviceArray<f32>,
    y: &gpu_runtime::gpuarray::DeviceArray<f32>,
    z: &mut gpu_runtime::gpuarray::DeviceArray<f32>,
);

#[test]
fn declared_indexed_kernels_are_the_indexed_variant() {
    let k = declared_indexed::kernel().expect("the declared kernel");
    assert!(k.is_indexed());
    assert_eq!(k.variants(), vec![Variant::Indexed]);
    let source = k.source(Variant::Indexed);
    assert!(source.contains("void declared_indexed_indexed(long long n, float a"));
    if let Err(e) = compile_check(&source, check_arch(&source)) {
        panic!("does not compile: {e}\n{source}");
    }
}
