//! Arrays of CUDA vector types, on the host (no GPU): the generated fill and copy kernels of
//! every vector element type and user kernels over them compiled with NVRTC for sm_90, and the
//! checks of declared vector parameters against the arguments given.

use super::compiles;
use crate::error::{ArgumentError, Error};
use crate::gpuarray::copy::builtin::{kernel, Builtin};
use crate::gpuarray::elements::array_element::{ArrayElement, ElementType};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::kernels::args::{check_kinds, parse_params, KernelArg};
use crate::gpuarray::kernels::elementwise::{ElementwiseKernel, Variant};
use crate::launch::VectorType;
use crate::types::*;

/// One vector type of each family and width that has its own layout question: 12-byte
/// `float3`, 32-byte `double4` (wider than a 16-byte load), 1-byte lanes, 16-bit floats.
fn vector_types() -> Vec<ElementType> {
    vec![
        Float3::ELEMENT_TYPE,
        Float4::ELEMENT_TYPE,
        Float2::ELEMENT_TYPE,
        Double2::ELEMENT_TYPE,
        Double3::ELEMENT_TYPE,
        Double4::ELEMENT_TYPE,
        UChar4::ELEMENT_TYPE,
        Char3::ELEMENT_TYPE,
        Short2::ELEMENT_TYPE,
        Int4::ELEMENT_TYPE,
        UInt1::ELEMENT_TYPE,
        LongLong2::ELEMENT_TYPE,
        ULong3::ELEMENT_TYPE,
        Half2::ELEMENT_TYPE,
        BFloat162::ELEMENT_TYPE,
    ]
}

#[test]
fn fills_and_copies_of_vector_elements_compile() {
    for t in vector_types() {
        for variant in [Variant::Contiguous, Variant::Strided(1), Variant::Strided(3)] {
            let fill = kernel(Builtin::Fill, t, t).unwrap();
            compiles(&format!("fill {t:?} {variant:?}"), &fill.source(variant));
            let copy = kernel(Builtin::Copy, t, t).unwrap();
            compiles(&format!("copy {t:?} {variant:?}"), &copy.source(variant));
        }
    }
}

/// A copy between two types, or a conversion of vector elements, is no kernel the methods
/// ask for: refused as the broken invariant it would be, not generated.
#[test]
fn conversions_of_vector_elements_are_refused() {
    let (f3, f4) = (Float3::ELEMENT_TYPE, Float4::ELEMENT_TYPE);
    for (op, from, to) in [
        (Builtin::Copy, f3, f4),
        (Builtin::Convert, f3, f3),
        (Builtin::Convert, ElementType::Number(DType::F32), f3),
    ] {
        assert!(
            matches!(kernel(op, from, to), Err(Error::Internal { .. })),
            "{op:?} {from:?} -> {to:?}"
        );
    }
}

#[test]
fn user_kernels_over_vector_elements_compile() {
    let kernels = [
        (
            "const float3 *a, float *norm",
            "norm = sqrtf(a.x * a.x + a.y * a.y + a.z * a.z)",
        ),
        ("const float3 *a, float *out", "out[i] = a[i].x + a[i].y"),
        (
            "const float2 *p, const float2 *q, float4 *out",
            "out = make_float4(p.x, p.y, q.x, q.y)",
        ),
        ("uchar4 v, uchar4 *z", "z = v"),
        (
            "const double4 *x, double4 *z, double s",
            "z = make_double4(s * x.x, s * x.y, s * x.z, s * x.w)",
        ),
        ("const __half2 *h, __half2 *z", "z = __hadd2(h, h)"),
    ];
    for (arguments, operation) in kernels {
        let k = ElementwiseKernel::new(arguments, operation).unwrap();
        for variant in k.variants() {
            compiles(&format!("`{operation}` {variant:?}"), &k.source(variant));
        }
    }
}

#[test]
fn vector_parameters_are_declared() {
    let params = parse_params(
        "k",
        "const float3 *a, float4 *z, uchar4 v, cuFloatComplex c, const double2 *d, float s",
    )
    .unwrap();
    let read: Vec<(&str, bool, bool)> = params
        .iter()
        .map(|p| (p.elem.c_name(), p.array, p.mutable))
        .collect();
    assert_eq!(
        read,
        [
            ("float3", true, false),
            ("float4", true, true),
            ("uchar4", false, false),
            // CUDA's alias is the type it names.
            ("float2", false, false),
            ("double2", true, false),
            ("float", false, false),
        ]
    );
    assert_eq!(params[0].elem, ElementType::Vector(VectorType::of::<Float3>()));
    // Not a vector type, nor any element type: refused as before.
    assert!(matches!(
        parse_params("k", "const float5 *a"),
        Err(Error::Argument(ArgumentError::ArrayOfNonScalars { .. }))
    ));
}

#[test]
fn vector_arguments_are_checked_against_the_declaration() {
    let params = parse_params("k", "float3 v, float s").unwrap();
    // The declared types: accepted.
    check_kinds(
        "k",
        &params,
        &[KernelArg::scalar(Float3::new(1.0, 2.0, 3.0)), 2.0f32.into()],
    )
    .unwrap();
    // `float4` for `float3`, a vector for a number, a number for a vector: the typed mismatch,
    // naming both C types.
    let cases: [(KernelArg<'_>, KernelArg<'_>, &str, &str); 3] = [
        (
            KernelArg::scalar(Float4::splat(1.0)),
            1.0f32.into(),
            "float3",
            "float4",
        ),
        (
            Float3::splat(1.0).into(),
            KernelArg::scalar(Float3::splat(0.0)),
            "float",
            "float3",
        ),
        (1.0f32.into(), 1.0f32.into(), "float3", "float"),
    ];
    for (v, s, want, got) in cases {
        match check_kinds("k", &params, &[v, s]) {
            Err(Error::Argument(ArgumentError::ElementTypeDiffers {
                expected,
                given,
                expected_array: false,
                given_array: false,
                ..
            })) => assert_eq!((expected, given), (want, got)),
            other => panic!("{want} given {got}: {other:?}"),
        }
    }
}
