//! Device arrays and generated kernels without a GPU: every source an elementwise or reduction
//! kernel generates compiles with NVRTC for sm_90, argument lists are checked when the kernel
//! is defined, and CUDA errors in an operation are compile errors.

use gpu_runtime::__testing::{check_arch, compile_check};
use gpu_runtime::gpuarray::{
    layout, CurandError, ElementwiseKernel, ReductionKernel, ReductionVariant, Variant,
};
use gpu_runtime::{ArgumentError, Error};

fn compiles(source: &str) {
    if let Err(e) = compile_check(source, check_arch(source)) {
        panic!("does not compile: {e}\n{source}");
    }
}

const ELEMENTWISE_VARIANTS: [Variant; 4] = [
    Variant::Contiguous,
    Variant::Strided(1),
    Variant::Strided(2),
    Variant::Strided(3),
];

#[test]
fn elementwise_sources_compile_in_every_variant() {
    let kernels = [
        ElementwiseKernel::new(
            "float a, const float *x, const float *y, float *z",
            "z = a * x + y",
        )
        .unwrap(),
        ElementwiseKernel::with_name("inplace", "double a, const double *x, double *y", "y += a * x")
            .unwrap(),
        ElementwiseKernel::with_name(
            "mixed",
            "const int *k, const unsigned char *m, double *z, long long *w",
            "z = k * 0.5 + m; w = i",
        )
        .unwrap(),
        ElementwiseKernel::with_name("cond", "const float *x, float *z", "if (x > 0) z = sqrtf(x);").unwrap(),
        // A comment at the end does not swallow the `;` the kernel ends the operation with.
        ElementwiseKernel::with_name("commented", "const float *x, float *z", "z = 2 * x // twice").unwrap(),
        ElementwiseKernel::with_name("helper", "const float *x, float *z", "z = twice(x)")
            .unwrap()
            .preamble("__device__ float twice(float v) { return 2 * v; }"),
    ];
    for k in &kernels {
        for v in ELEMENTWISE_VARIANTS {
            compiles(&k.source(v));
        }
    }
}

#[test]
fn elementwise_errors_in_the_operation_are_compile_errors() {
    let k = ElementwiseKernel::new("const float *x, float *z", "z = 1;\nz = x.nope").unwrap();
    for v in ELEMENTWISE_VARIANTS {
        let e = compile_check(&k.source(v), "sm_90").unwrap_err();
        // The operation is compiled under `#line 1 "operation"`: the log names its own line,
        // as the macro's build-time check does.
        match &e {
            // a message test: NVRTC's log points at the operation's own line.
            Error::Compile(c) => assert!(c.log.contains("operation(2): error"), "{}", c.log),
            other => panic!("{other}"),
        }
    }
    // An input is a `const` reference: assigning to it does not compile.
    let k = ElementwiseKernel::new("const float *x, float *z", "x = 1; z = 2").unwrap();
    assert!(compile_check(&k.source(Variant::Contiguous), "sm_90").is_err());
}

#[test]
fn elementwise_arguments_are_checked_when_defined() {
    type Case = (&'static str, fn(&ArgumentError) -> bool);
    let bad: [Case; 9] = [
        ("float a", |e| {
            matches!(
                e,
                ArgumentError::NoArray {
                    needs: "an elementwise kernel",
                    ..
                }
            )
        }),
        // The declaration parser refuses a pointer to a pointer before the kernel sees it.
        ("const float *x, float **z", |e| {
            matches!(e, ArgumentError::UnreadableArguments { .. })
        }),
        (
            "const float *x, float *x",
            |e| matches!(e, ArgumentError::NameTaken { name, .. } if name == "x"),
        ),
        (
            "const float *i",
            |e| matches!(e, ArgumentError::NameTaken { name, .. } if name == "i"),
        ),
        (
            "const float *x__p",
            |e| matches!(e, ArgumentError::NameTaken { name, .. } if name == "x__p"),
        ),
        // CUDA's vector types (`float4 v`) are element types; another named type is not.
        ("const float *x, params_t v", |e| {
            matches!(e, ArgumentError::NotScalarOrArray { .. })
        }),
        ("const float5 *x", |e| {
            matches!(e, ArgumentError::ArrayOfNonScalars { .. })
        }),
        // `bool` is an element type (`gpuarray::Bool`); `size_t` is not.
        ("const size_t *x", |e| {
            matches!(e, ArgumentError::NotAnElementType { .. })
        }),
        ("const float *x, ", |e| {
            matches!(e, ArgumentError::UnreadableArguments { .. })
        }),
    ];
    for (args, is_expected) in bad {
        let r = ElementwiseKernel::new(args, "x");
        assert!(
            matches!(&r, Err(Error::Argument(e)) if is_expected(e)),
            "{args} gave {r:?}"
        );
    }
    assert!(matches!(
        ElementwiseKernel::with_name("not a name", "const float *x", "x"),
        Err(Error::Argument(ArgumentError::NotAnIdentifier { kernel })) if &*kernel == "not a name"
    ));
}

#[test]
fn reduction_sources_compile_in_every_variant() {
    let variants = [
        ReductionVariant::Contiguous,
        ReductionVariant::Strided(2),
        ReductionVariant::Final,
        ReductionVariant::AxisBlock(1),
        ReductionVariant::AxisBlock(3),
        ReductionVariant::AxisThread(2),
    ];
    let norm = ReductionKernel::<f64>::new("const double *x", "x * x", "a + b", "0.0")
        .unwrap()
        .post_map("sqrt(a)");
    let mean = ReductionKernel::<f32>::new("const float *x, float w", "w * x", "a + b", "0.0f")
        .unwrap()
        .post_map("a / n");
    let count =
        ReductionKernel::<u64>::new("const int *x, int t", "x > t ? 1ull : 0ull", "a + b", "0ull").unwrap();
    for v in variants {
        compiles(&norm.source(v));
        compiles(&mean.source(v));
        compiles(&count.source(v));
    }
}

#[test]
fn reductions_take_inputs_only() {
    assert!(matches!(
        ReductionKernel::<f32>::new("float *x", "x", "a + b", "0"),
        Err(Error::Argument(ArgumentError::ReductionOutput { name, .. })) if name == "x"
    ));
    assert!(matches!(
        ReductionKernel::<f32>::new("float s", "s", "a + b", "0"),
        Err(Error::Argument(ArgumentError::NoArray {
            needs: "a reduction",
            ..
        }))
    ));
}

#[test]
fn layouts_of_views() {
    assert!(layout::is_c_contiguous(&[3, 4], &[4, 1]));
    assert!(layout::is_f_contiguous(&[3, 4], &[1, 3]));
    let s = layout::slice(&[3, 4], &[4, 1], gpu_runtime::ndarray::s![..;-1, 1..;2].as_ref()).unwrap();
    assert_eq!((s.shape, s.strides, s.offset), (vec![3, 2], vec![-4, 2], 9));
    assert!(layout::reshape(&[3, 4], &[1, 3], &[12]).is_err());
}

#[test]
fn scan_sources_compile_and_are_checked() {
    use gpu_runtime::gpuarray::{ScanKernel, ScanVariant};
    let kernels = [
        ScanKernel::<f64>::new("a + b", "0.0")
            .unwrap()
            .source(ScanVariant::LookBack),
        ScanKernel::<i32>::new("a > b ? a : b", "(-2147483647 - 1)")
            .unwrap()
            .source(ScanVariant::Lanes(2)),
        ScanKernel::<u8>::new("a | b", "0")
            .unwrap()
            .source(ScanVariant::LookBack),
    ];
    for k in &kernels {
        compiles(k);
    }
    assert!(ScanKernel::<f32>::new(" ", "0").is_err());
    let bad = ScanKernel::<f32>::new("a.nope", "0")
        .unwrap()
        .source(ScanVariant::LookBack);
    assert!(matches!(compile_check(&bad, "sm_90"), Err(Error::Compile(_))));
}

#[test]
fn random_sources_compile_and_philox_is_random123s() {
    use gpu_runtime::__testing::philox4x32_10;
    use gpu_runtime::gpuarray::{random_source, Distribution};
    compiles(&random_source::<u32>(Distribution::Uniform).unwrap());
    compiles(&random_source::<f32>(Distribution::Normal).unwrap());
    compiles(&random_source::<f64>(Distribution::Uniform).unwrap());
    assert!(random_source::<i64>(Distribution::Normal).is_err());
    assert_eq!(
        philox4x32_10([0; 4], [0; 2]),
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    );
}

#[test]
fn expressions_render_their_structure() {
    use gpu_runtime::gpuarray::Operand;
    // Scalars only (no array: evaluating it is an error, which needs a GPU to reach).
    let e = -(Operand::<f32>::into_expr(2.0f32) * 3.0f32) / 4.0f32;
    assert_eq!(
        e.operation(),
        "out = ((float)(((float)-((float)(s0 * s1))) / s2))"
    );
    assert!(e.shape().is_none());
}

/// Declared with `#[elementwise]`: the operation was checked at build time; here the kernel
/// the run time generates from it compiles in every variant.
#[gpu_runtime::elementwise("z = a * x + y")]
fn declared_axpy(
    a: f32,
    x: &gpu_runtime::gpuarray::DeviceArray<f32>,
    y: &gpu_runtime::gpuarray::DeviceArray<f32>,
    z: &mut gpu_runtime::gpuarray::DeviceArray<f32>,
);

#[gpu_runtime::elementwise("int t = x * k; w = t + (int)i; acc += w")]
fn declared_two_statements(
    k: i32,
    x: &gpu_runtime::gpuarray::DeviceArray<i32>,
    w: &mut gpu_runtime::gpuarray::DeviceArray<i32>,
    acc: &mut gpu_runtime::gpuarray::DeviceArray<i64>,
);

#[test]
fn declared_elementwise_sources_compile() {
    assert_eq!(
        declared_axpy::KERNEL.arguments(),
        "float a, const float *x, const float *y, float *z"
    );
    assert_eq!(declared_axpy::KERNEL.operation(), "z = a * x + y");
    assert_eq!(
        declared_two_statements::KERNEL.arguments(),
        "int k, const int *x, int *w, long long *acc"
    );
    for k in [
        declared_axpy::kernel().unwrap(),
        declared_two_statements::kernel().unwrap(),
    ] {
        for v in ELEMENTWISE_VARIANTS {
            compiles(&k.source(v));
        }
    }
    // Built once per process: the same kernel each time.
    assert!(std::ptr::eq(
        declared_axpy::kernel().unwrap(),
        declared_axpy::kernel().unwrap()
    ));
}

/// Set in the child process of `missing_curand_is_an_error_not_a_panic`.
const CURAND_CHILD_ENV: &str = "GPU_SUITE_GPUARRAY_CURAND_CHILD";

/// cuRAND is looked for before cudarc may touch it: with no libcurand on the loader's path
/// (the child runs with an empty LD_LIBRARY_PATH), asking for it is a typed error, not a panic.
#[test]
fn missing_curand_is_an_error_not_a_panic() {
    if std::env::var(CURAND_CHILD_ENV).as_deref() == Ok("no-curand") {
        match gpu_runtime::gpuarray::curand_version() {
            Err(e @ CurandError::Cuda(Error::Unsupported { .. })) => {
                // The message says what was tried and how to install it (a message test).
                let text = e.to_string();
                assert!(text.contains("libcurand"), "{text}");
                assert!(text.contains("pip install nvidia-curand"), "{text}");
                // Asked again, the same error (the search is made once).
                assert!(matches!(
                    gpu_runtime::gpuarray::curand_version(),
                    Err(CurandError::Cuda(Error::Unsupported { .. }))
                ));
                println!("child: cuRAND not found: {text}");
            }
            Ok(v) => println!("child: cuRAND {v} loaded from the system's path"),
            Err(e) => panic!("unexpected error: {e}"),
        }
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .arg(crate::common::test_path(
            module_path!(),
            "missing_curand_is_an_error_not_a_panic",
        ))
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .env(CURAND_CHILD_ENV, "no-curand")
        .env("LD_LIBRARY_PATH", "")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "the child failed (a panic?):\n{text}"
    );
    assert!(
        text.contains("child: cuRAND not found: filling an array through cuRAND needs libcurand")
            || text.contains("loaded from the system's path"),
        "{text}"
    );
}
