//! Compiler options on an `ElementwiseKernel` (PyCUDA's `options=`), with no GPU: a kernel
//! with options is another kernel (its own cache key), and its source is unchanged.

use crate::gpuarray::kernels::elementwise::{ElementwiseKernel, Variant};

#[test]
fn options_make_another_kernel() {
    let plain = ElementwiseKernel::new("const float *x, float *y", "y = expf(x)").unwrap();
    let fast = plain.clone().options(&["-use_fast_math"]);
    let other = plain.clone().options(&["-use_fast_math", "-lineinfo"]);
    let none = plain.clone().options::<&str>(&[]);
    let keys = [plain.key, fast.key, other.key, none.key];
    for (a, ka) in keys.iter().enumerate() {
        for kb in &keys[a + 1..] {
            assert_ne!(ka, kb, "{keys:?}");
        }
    }
    assert_eq!(
        plain.source(Variant::Contiguous),
        fast.source(Variant::Contiguous)
    );
    assert_eq!(
        fast.key,
        plain.clone().options(&[String::from("-use_fast_math")]).key
    );
}
