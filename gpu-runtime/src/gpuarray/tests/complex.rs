//! Complex elements with no GPU: every kernel a complex array's operations generate compiles
//! with NVRTC (sm_90), the functions NumPy does not define on complex numbers are typed errors
//! before anything compiles, and complex arguments are checked against declared C types.

use super::compiles;
use crate::error::{ArgumentError, Error};
use crate::gpuarray::copy::builtin::{kernel as builtin, Builtin};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{kernel, BinOp, Node, Store};
use crate::gpuarray::expr::func::{CmpOp, Func, MathFn};
use crate::gpuarray::kernels::args::{check_kinds, parse_params, KernelArg};
use crate::gpuarray::kernels::elementwise::Variant;
use crate::gpuarray::random::philox::{random_source, Distribution};
use crate::gpuarray::reduce::kernel::ReductionVariant;
use crate::gpuarray::reduce::ops::{kernel as reduction, Op};
use crate::gpuarray::Bool;
use crate::types::{Complex32, Complex64};

fn call(f: Func, args: Vec<Node>) -> Node {
    Node::Call(f, args)
}

fn bin(op: BinOp, l: Node, r: Node) -> Node {
    Node::Bin(op, Box::new(l), Box::new(r))
}

/// Every element type, real and complex.
const ALL: [DType; 15] = DType::ALL;

#[test]
fn fills_and_conversions_to_and_from_every_type_compile() {
    for c in [DType::Complex32, DType::Complex64] {
        compiles(
            "complex fill",
            &builtin(Builtin::Fill, c, c).unwrap().source(Variant::Contiguous),
        );
        for other in ALL {
            for (from, to) in [(c, other), (other, c)] {
                let k = builtin(Builtin::Convert, from, to).unwrap();
                compiles(
                    &format!("convert {from:?} -> {to:?}"),
                    &k.source(Variant::Strided(2)),
                );
            }
        }
    }
}

/// One expression holding every function and operator defined on complex numbers, per
/// complex type, compiles (so every name in the header is instantiated).
#[test]
fn every_complex_function_compiles_in_one_expression() {
    fn of<T: Element>(sources: &mut Vec<(String, String)>) {
        let mut compiles = |what: &str, source: &str| sources.push((what.to_owned(), source.to_owned()));
        let d = T::DTYPE;
        let x = || Node::ArrayOf(d);
        let mut e = bin(BinOp::Add, x(), Node::ScalarOf(d));
        for f in [
            MathFn::Exp,
            MathFn::Log,
            MathFn::Log10,
            MathFn::Sqrt,
            MathFn::Sin,
            MathFn::Cos,
            MathFn::Tan,
            MathFn::Sinh,
            MathFn::Cosh,
            MathFn::Tanh,
        ] {
            e = bin(BinOp::Mul, e, call(Func::Math(f), vec![x()]));
        }
        e = bin(BinOp::Div, e, call(Func::Pow, vec![x(), x()]));
        e = bin(BinOp::Sub, e, Node::Neg(Box::new(call(Func::Conj, vec![x()]))));
        let from_parts = call(
            Func::Cast(d),
            vec![bin(
                BinOp::Add,
                call(Func::Real, vec![x()]),
                bin(
                    BinOp::Add,
                    call(Func::Imag, vec![x()]),
                    bin(
                        BinOp::Add,
                        call(Func::Angle, vec![x()]),
                        call(Func::ComplexAbs, vec![x()]),
                    ),
                ),
            )],
        );
        e = bin(BinOp::Add, e, from_parts);
        let cond = call(
            Func::And,
            vec![
                call(Func::Compare(CmpOp::Eq), vec![x(), x()]),
                call(Func::Not, vec![call(Func::Compare(CmpOp::Ne), vec![x(), x()])]),
            ],
        );
        let cond = call(Func::Or, vec![cond, x()]);
        let classified = call(
            Func::Xor,
            vec![
                call(Func::Predicate("isnan"), vec![x()]),
                call(
                    Func::And,
                    vec![
                        call(Func::Predicate("isinf"), vec![x()]),
                        call(Func::Predicate("isfinite"), vec![x()]),
                    ],
                ),
            ],
        );
        let cond = call(Func::And, vec![cond, classified]);
        let w = call(
            Func::Where,
            vec![cond, e, call(Func::Cast(d), vec![Node::ArrayOf(DType::I32)])],
        );
        for store in [
            Store::Assign,
            Store::Compound(BinOp::Div),
            Store::Compound(BinOp::Mul),
        ] {
            let k = kernel::<T>(&w, store).unwrap();
            for v in [Variant::Contiguous, Variant::Strided(3)] {
                compiles(&format!("{d:?} {store:?} {v:?}"), &k.source(v));
            }
        }
        // The real results: parts, magnitude, and a complex number's truth.
        let parts = call(Func::Real, vec![x()]);
        let k = kernel::<f64>(&call(Func::Cast(DType::F64), vec![parts]), Store::Assign).unwrap();
        compiles("real part", &k.source(Variant::Contiguous));
        let k = kernel::<Bool>(&call(Func::Cast(DType::Bool), vec![x()]), Store::Assign).unwrap();
        compiles("complex to bool", &k.source(Variant::Contiguous));
    }
    // Each kernel is seconds of NVRTC (mostly ptxas): compiled on two threads.
    let mut sources = Vec::new();
    of::<Complex32>(&mut sources);
    of::<Complex64>(&mut sources);
    super::compile_all(sources);
}

/// Mixed real and complex operands (`promote::add` and the others): an expression converting
/// an array of every real type to each complex type, and combining it with a complex array
/// by each operator, compiles (one kernel per complex type).
#[test]
fn every_real_type_mixes_with_complex_in_one_expression() {
    for c in [DType::Complex32, DType::Complex64] {
        let mut e = Node::ArrayOf(c);
        for (k, real) in ALL.into_iter().filter(|d| !d.is_complex()).enumerate() {
            let op = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div][k % 4];
            e = bin(op, e, call(Func::Cast(c), vec![Node::ArrayOf(real)]));
        }
        let k = if c == DType::Complex32 {
            kernel::<Complex32>(&e, Store::Assign)
        } else {
            kernel::<Complex64>(&e, Store::Assign)
        };
        compiles(&format!("{c:?} mixed"), &k.unwrap().source(Variant::Strided(2)));
    }
}

/// The generated text of a complex expression: the header's functions, C++'s operators.
#[test]
fn complex_expressions_read_as_the_header_names_them() {
    let d = DType::Complex32;
    let e = call(
        Func::Math(MathFn::Exp),
        vec![bin(BinOp::Mul, Node::ArrayOf(d), Node::ScalarOf(d))],
    );
    let k = kernel::<Complex32>(&e, Store::Assign).unwrap();
    let src = k.source(Variant::Contiguous);
    assert!(src.contains("#include <gpu_runtime/complex.h>"), "{src}");
    assert!(src.contains("gpu_runtime::exp("), "{src}");
    assert!(
        src.contains("const gpu_runtime::complex<float> *__restrict__ x0__p"),
        "{src}"
    );
}

fn undefined(e: Error) -> (String, &'static str) {
    match e {
        Error::Argument(ArgumentError::UndefinedOnElement {
            function, element, ..
        }) => (function.into(), element),
        other => panic!("expected UndefinedOnElement, got {other:?}"),
    }
}

/// What NumPy does not define on complex numbers (or, for `abs`, gives another type of) is
/// a typed error naming the function and the type, before any compile.
#[test]
fn functions_without_complex_meaning_are_typed_errors() {
    let x = || Node::ArrayOf(DType::Complex64);
    let cases = [
        (call(Func::Compare(CmpOp::Lt), vec![x(), x()]), "Compare(Lt)"),
        (call(Func::Maximum, vec![x(), x()]), "Maximum"),
        (call(Func::Abs, vec![x()]), "Abs"),
        (call(Func::Sign, vec![x()]), "Sign"),
        (call(Func::Math(MathFn::Floor), vec![x()]), "Math(Floor)"),
        (
            call(Func::Predicate("signbit"), vec![x()]),
            "Predicate(\"signbit\")",
        ),
        (bin(BinOp::Rem, x(), x()), "Rem"),
        (bin(BinOp::FloorDiv, x(), x()), "FloorDiv"),
    ];
    for (node, name) in cases {
        let err = match kernel::<Bool>(&node, Store::Assign) {
            Err(e) => e,
            Ok(_) => match kernel::<Complex64>(&node, Store::Assign) {
                Err(e) => e,
                Ok(_) => panic!("{name} was accepted on complex"),
            },
        };
        assert_eq!(undefined(err), (name.to_owned(), "gpu_runtime::complex<double>"));
    }
    // In-place `%=` on a complex array.
    let err = kernel::<Complex32>(&Node::Array, Store::Compound(BinOp::Rem)).unwrap_err();
    assert_eq!(undefined(err).0, "Rem");
    // The real functions of complex numbers are not defined on reals.
    let err = kernel::<f32>(&call(Func::Real, vec![Node::ArrayOf(DType::F32)]), Store::Assign).unwrap_err();
    assert!(
        matches!(err, Error::Argument(ArgumentError::NotAnElementType { .. })),
        "{err:?}"
    );
}

#[test]
fn complex_reductions_compile_and_ordered_ones_are_refused() {
    fn of<T: Element>() {
        let kernels = [
            reduction::<T, T>(Op::Sum).unwrap(),
            reduction::<T, T>(Op::Prod).unwrap(),
            reduction::<T, T>(Op::Mean).unwrap(),
            reduction::<T, T>(Op::VDot).unwrap(),
            reduction::<T, T>(Op::Dot).unwrap(),
        ];
        for k in kernels {
            for v in [
                ReductionVariant::Contiguous,
                ReductionVariant::Strided(2),
                ReductionVariant::Final,
                ReductionVariant::AxisBlock(1),
                ReductionVariant::AxisColumns(2),
            ] {
                compiles(&format!("{} {v:?}", T::c_name()), &k.source(v));
            }
        }
        let vdot = reduction::<T, T>(Op::VDot)
            .unwrap()
            .source(ReductionVariant::Contiguous);
        assert!(vdot.contains("gpu_runtime::conj(x) * y"), "{vdot}");
        let dot = reduction::<T, T>(Op::Dot)
            .unwrap()
            .source(ReductionVariant::Contiguous);
        assert!(!dot.contains("conj"), "{dot}");
        // `max`/`min`/`ptp`/`var` are defined (reduce/complex.rs); into another type, and
        // `argmax`/`argmin`, refused.
        for op in [Op::Max, Op::Min, Op::ArgMax, Op::ArgMin, Op::Ptp] {
            let err = reduction::<T, f64>(op).map(drop).unwrap_err();
            assert_eq!(undefined(err).1, T::c_name());
        }
        // A complex array's mean, sum or product into a real type would drop the imaginary
        // part: refused.
        for op in [Op::Mean, Op::Sum, Op::Prod] {
            assert!(reduction::<T, f64>(op).is_err(), "{op:?}");
        }
        for op in [Op::Any, Op::All] {
            let k = reduction::<T, Bool>(op).unwrap();
            compiles("complex any/all", &k.source(ReductionVariant::Contiguous));
        }
    }
    of::<Complex32>();
    of::<Complex64>();
}

#[test]
fn complex_normal_fill_compiles_and_uniform_is_refused() {
    for src in [
        random_source::<Complex32>(Distribution::Normal).unwrap(),
        random_source::<Complex64>(Distribution::Normal).unwrap(),
    ] {
        compiles("complex normal", &src);
        assert!(src.contains("0.70710678118654752440"), "{src}");
    }
    let err = random_source::<Complex32>(Distribution::Uniform).unwrap_err();
    assert!(
        matches!(err, Error::Argument(ArgumentError::NoDistribution { .. })),
        "{err:?}"
    );
}

/// Declared complex parameters are read as complex element types, and a complex argument for
/// a real parameter (or the reverse) is a typed error naming both C types.
#[test]
fn complex_parameters_are_declared_and_checked() {
    let params = parse_params(
        "k",
        "gpu_runtime::complex<double> a, const pycuda::complex<float> *x, gpu_runtime::complex<float> *z, float s",
    )
    .unwrap();
    let dtypes: Vec<(Option<DType>, bool)> = params.iter().map(|p| (p.elem.number(), p.array)).collect();
    assert_eq!(
        dtypes,
        [
            (Some(DType::Complex64), false),
            (Some(DType::Complex32), true),
            (Some(DType::Complex32), true),
            (Some(DType::F32), false)
        ]
    );
    let scalar_params = parse_params("k", "gpu_runtime::complex<float> a, float b").unwrap();
    let ok = [
        KernelArg::scalar(Complex32::new(1.0, 2.0)),
        KernelArg::scalar(1.0f32),
    ];
    check_kinds("k", &scalar_params, &ok).unwrap();
    let swapped = [
        KernelArg::scalar(1.0f32),
        KernelArg::scalar(Complex32::new(1.0, 2.0)),
    ];
    let err = check_kinds("k", &scalar_params, &swapped).unwrap_err();
    match err {
        Error::Argument(ArgumentError::ElementTypeDiffers { expected, given, .. }) => {
            assert_eq!((expected, given), ("gpu_runtime::complex<float>", "float"))
        }
        other => panic!("{other:?}"),
    }
    let wrong_width = [
        KernelArg::scalar(Complex64::new(1.0, 2.0)),
        KernelArg::scalar(1.0f32),
    ];
    assert!(check_kinds("k", &scalar_params, &wrong_width).is_err());
}
