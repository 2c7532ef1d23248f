//! The kernels of both forms of [`ElementwiseKernel`] operation (PyCUDA's indexed form, with
//! its preamble, `loop_prep` and `after_loop`; the element-bound form's strided kernels with
//! rows), compiled with NVRTC for sm_90 on the host (no GPU).

use super::compiles;
use crate::gpuarray::kernels::elementwise::{ElementwiseKernel, Variant};

/// PyCUDA's `test_elwise_kernel` and `test_elwise_kernel_with_options` (the `-D ADD_ONE`
/// option as a `#define` in the preamble), and PyCUDA-style text with pointer arithmetic,
/// `n`, `loop_prep` and `after_loop`.
#[test]
fn pycuda_s_indexed_kernels_compile() {
    let cases = [
        (
            "float a, float *x, float b, float *y, float *z",
            "z[i] = a*x[i] + b*y[i]",
            "",
            "",
            "",
        ),
        (
            "float* out, const float *in",
            "\n        out[i] = in[i]\n        #ifdef ADD_ONE\n            +1\n        #endif\n        ;\n        ",
            "#define ADD_ONE",
            "",
            "",
        ),
        (
            "const double *x, double *z",
            "*(z + i) = x[n - 1 - i] + shift",
            "",
            "double shift = 0.5;",
            "(void)shift;",
        ),
        (
            "const int *x, long long k, int *z",
            "z[i] = my_twice(x[i]) + (int)k",
            "__device__ int my_twice(int v) { return 2 * v; }",
            "",
            "if (i < 0) z[0] = 0;",
        ),
    ];
    for (arguments, operation, preamble, prep, after) in cases {
        let k = ElementwiseKernel::with_name("pycuda_form", arguments, operation)
            .expect("PyCUDA's arguments read")
            .preamble(preamble)
            .loop_prep(prep)
            .after_loop(after);
        assert!(k.is_indexed(), "{operation}");
        assert_eq!(k.variants(), vec![Variant::Indexed]);
        compiles(operation, &k.source(Variant::Indexed));
    }
}

/// The element-bound form's strided kernels (the flat loop and the rows) for every axis
/// count, with `loop_prep` and `after_loop`, and an operation using `i`.
#[test]
fn element_bound_kernels_with_prep_compile() {
    let k = ElementwiseKernel::new(
        "float a, const float *x, const double *y, float *z",
        "z = a * x + y + scale * i",
    )
    .expect("reads")
    .loop_prep("float scale = 0.0f;")
    .after_loop("(void)scale;");
    assert!(!k.is_indexed());
    for v in k.variants() {
        compiles(&format!("{v:?}"), &k.source(v));
    }
}
