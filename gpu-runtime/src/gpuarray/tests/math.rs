//! The kernels of math, comparison and logic expressions: their C text, their cache keys, and
//! that each compiles with NVRTC for sm_90 on the host (no GPU).

use gpu_cuda_source::Scalar;

use super::compiles;
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{kernel, BinOp, Expr, Node, Operand, Store};
use crate::gpuarray::expr::func::{CmpOp, Func, Math2Fn, MathFn};
use crate::gpuarray::kernels::elementwise::Variant;
use crate::gpuarray::reduce::kernel::ReductionVariant;

fn call(f: Func, args: Vec<Node>) -> Node {
    Node::Call(f, args)
}

const UNARY: [MathFn; 26] = [
    MathFn::Fabs,
    MathFn::Ceil,
    MathFn::Floor,
    MathFn::Exp,
    MathFn::Expm1,
    MathFn::Exp2,
    MathFn::Log,
    MathFn::Log1p,
    MathFn::Log10,
    MathFn::Log2,
    MathFn::Sqrt,
    MathFn::Cbrt,
    MathFn::Sin,
    MathFn::Cos,
    MathFn::Tan,
    MathFn::Asin,
    MathFn::Acos,
    MathFn::Atan,
    MathFn::Sinh,
    MathFn::Cosh,
    MathFn::Tanh,
    MathFn::Asinh,
    MathFn::Acosh,
    MathFn::Atanh,
    MathFn::Rint,
    MathFn::Trunc,
];

/// The functions of two operands written as the crate's helpers (`logaddexp`, `logaddexp2`,
/// `heaviside`), in every float type: the 16-bit ones through the `float` overloads.
#[test]
fn helper_math2_kernels_compile_in_every_float_type() {
    fn source<T: Element>(sum: &Node) -> String {
        kernel::<T>(sum, Store::Assign)
            .unwrap()
            .source(Variant::Contiguous)
    }
    for s in [DType::F16, DType::Bf16, DType::F32, DType::F64] {
        let two = |f| call(Func::Math2(f), vec![Node::ArrayOf(s), Node::ScalarOf(s)]);
        let sum = Node::Bin(
            BinOp::Add,
            Box::new(Node::Bin(
                BinOp::Add,
                Box::new(two(Math2Fn::Logaddexp)),
                Box::new(two(Math2Fn::Logaddexp2)),
            )),
            Box::new(two(Math2Fn::Heaviside)),
        );
        let text = match s {
            DType::F16 => source::<half::f16>(&sum),
            DType::Bf16 => source::<half::bf16>(&sum),
            DType::F32 => source::<f32>(&sum),
            _ => source::<f64>(&sum),
        };
        assert!(
            text.contains("gpu_logaddexp2(") && text.contains("gpu_heaviside("),
            "{text}"
        );
        compiles(&format!("logaddexp {s:?}"), &text);
    }
}

/// `sinc`, `i0` and `nextafter` in every float type (`nextafter` of the 16-bit ones by their
/// own spacing, not `float`'s), and `sinc` of the complex types.
#[test]
fn sinc_i0_and_nextafter_compile_in_every_float_type() {
    fn source<T: Element>(node: &Node) -> String {
        kernel::<T>(node, Store::Assign)
            .unwrap()
            .source(Variant::Contiguous)
    }
    for s in [DType::F16, DType::Bf16, DType::F32, DType::F64] {
        let one = |f| call(Func::Math(f), vec![Node::ArrayOf(s)]);
        let next = call(
            Func::Math2(Math2Fn::Nextafter),
            vec![Node::ArrayOf(s), Node::ScalarOf(s)],
        );
        let sum = Node::Bin(
            BinOp::Add,
            Box::new(Node::Bin(
                BinOp::Add,
                Box::new(one(MathFn::Sinc)),
                Box::new(one(MathFn::I0)),
            )),
            Box::new(next),
        );
        let text = match s {
            DType::F16 => source::<half::f16>(&sum),
            DType::Bf16 => source::<half::bf16>(&sum),
            DType::F32 => source::<f32>(&sum),
            _ => source::<f64>(&sum),
        };
        // The helper's text is in every kernel with helpers; `float`'s function only where
        // the elements are `float`.
        assert_eq!(text.contains("nextafterf("), s == DType::F32, "{text}");
        assert!(
            text.contains("gpu_sinc(") && text.contains("cyl_bessel_i0"),
            "{text}"
        );
        compiles(&format!("sinc {s:?}"), &text);
    }
    for s in [DType::Complex32, DType::Complex64] {
        let sinc = call(Func::Math(MathFn::Sinc), vec![Node::ArrayOf(s)]);
        let text = if s == DType::Complex32 {
            source::<crate::types::Complex32>(&sinc)
        } else {
            source::<crate::types::Complex64>(&sinc)
        };
        assert!(text.contains("gpu_csinc("), "{text}");
        compiles(&format!("sinc {s:?}"), &text);
    }
}

/// The bitwise functions, the shifts, `gcd`, `lcm` and `bitwise_count` in every integer type,
/// and the bitwise operators of `bool`.
#[test]
fn bitwise_kernels_compile_in_bool_and_every_integer_type() {
    fn source<T: Element>(node: &Node) -> String {
        kernel::<T>(node, Store::Assign)
            .unwrap()
            .source(Variant::Strided(2))
    }
    let two = |f, a: Node, b: Node| call(f, vec![a, b]);
    let chain = |s: DType, integer: bool| {
        let x = || Node::ArrayOf(s);
        let mut n = two(Func::BitAnd, x(), Node::ScalarOf(s));
        n = two(Func::BitOr, n, x());
        n = two(Func::BitXor, n, call(Func::Invert, vec![x()]));
        if integer {
            for f in [Func::Shl, Func::Shr, Func::Gcd, Func::Lcm] {
                n = two(f, n, x());
            }
        }
        n
    };
    macro_rules! each {
        ($($t:ty),*) => {$(
            let s = <$t>::DTYPE;
            let text = source::<$t>(&chain(s, true));
            assert!(text.contains("gpu_lcm<") && text.contains("gpu_lshift<"), "{text}");
            compiles(&format!("bitwise {s:?}"), &text);
            let count = call(Func::BitCount, vec![Node::ArrayOf(s)]);
            compiles(&format!("bitwise_count {s:?}"), &source::<u8>(&count));
        )*};
    }
    each!(i8, u8, i16, u16, i32, u32, i64, u64);
    let text = source::<Bool>(&chain(DType::Bool, false));
    assert!(text.contains("((bool)!"), "{text}");
    compiles("bitwise bool", &text);
    // Floats have no bits NumPy operates on: no result type, so an `Expr` refuses them.
    assert!(kernel::<f32>(&chain(DType::F32, true), Store::Assign).is_err());
}

/// Every math function of one and two operands, the predicates and `ldexp`, as one kernel per
/// float type (one expression holding them all compiles every name at once).
#[test]
fn math_kernels_compile_in_float_and_double() {
    for s in [DType::F32, DType::F64] {
        let x = || Node::ArrayOf(s);
        let mut sum = call(Func::Math(UNARY[0]), vec![x()]);
        for f in &UNARY[1..] {
            sum = Node::Bin(
                BinOp::Add,
                Box::new(sum),
                Box::new(call(Func::Math(*f), vec![x()])),
            );
        }
        for f in [Math2Fn::Fmod, Math2Fn::Atan2, Math2Fn::Hypot, Math2Fn::Copysign] {
            sum = Node::Bin(
                BinOp::Add,
                Box::new(sum),
                Box::new(call(Func::Math2(f), vec![x(), Node::ScalarOf(s)])),
            );
        }
        sum = Node::Bin(
            BinOp::Add,
            Box::new(sum),
            Box::new(call(Func::Ldexp, vec![x(), Node::ArrayOf(DType::I32)])),
        );
        let src = |t: DType| {
            if t == DType::F32 {
                kernel::<f32>(&sum, Store::Assign)
                    .unwrap()
                    .source(Variant::Contiguous)
            } else {
                kernel::<f64>(&sum, Store::Assign)
                    .unwrap()
                    .source(Variant::Contiguous)
            }
        };
        let text = src(s);
        compiles(&format!("math {s:?}"), &text);
        // The float kernel calls the `float` functions, never the `double` ones.
        if s == DType::F32 {
            assert!(
                text.contains("sinf(x12)") && text.contains("ldexpf(x30, (int)(x31))"),
                "{text}"
            );
            assert!(!text.contains(" sin(") && !text.contains("(sin("), "{text}");
        } else {
            assert!(text.contains("sin(x12)") && !text.contains("sinf("), "{text}");
        }
        let mut preds = call(Func::Predicate("isnan"), vec![x()]);
        for p in ["isinf", "isfinite", "signbit"] {
            preds = call(Func::Xor, vec![preds, call(Func::Predicate(p), vec![x()])]);
        }
        compiles(
            "predicates",
            &kernel::<Bool>(&preds, Store::Assign)
                .unwrap()
                .source(Variant::Strided(2)),
        );
    }
}

/// Every function of any number type, with every element type of operand, compiles; the
/// comparison gives `bool` and `where` takes it.
#[test]
fn generic_kernels_compile_for_every_type() {
    fn of<T: Element>() {
        let s = T::DTYPE;
        let x = || Node::ArrayOf(s);
        let mut e = call(Func::Maximum, vec![x(), Node::ScalarOf(s)]);
        for f in [Func::Minimum, Func::Fmax, Func::Fmin, Func::Pow] {
            e = call(f, vec![e, x()]);
        }
        e = call(Func::Sign, vec![call(Func::Abs, vec![e])]);
        for op in [BinOp::Div, BinOp::Rem, BinOp::FloorDiv] {
            e = Node::Bin(op, Box::new(e), Box::new(x()));
        }
        let cond = call(
            Func::And,
            vec![
                call(Func::Compare(CmpOp::Gt), vec![x(), Node::ScalarOf(s)]),
                call(Func::Not, vec![call(Func::Compare(CmpOp::Ne), vec![x(), x()])]),
            ],
        );
        let w = call(
            Func::Where,
            vec![cond, e, call(Func::Cast(s), vec![Node::ArrayOf(DType::F64)])],
        );
        for store in [
            Store::Assign,
            Store::Compound(BinOp::Rem),
            Store::Compound(BinOp::Div),
        ] {
            let k = kernel::<T>(&w, store).unwrap();
            compiles(&format!("{s:?} {store:?}"), &k.source(Variant::Contiguous));
        }
        let cmp = call(Func::Compare(CmpOp::Le), vec![x(), x()]);
        let k = kernel::<Bool>(&cmp, Store::Assign).unwrap();
        compiles(&format!("{s:?} compare"), &k.source(Variant::Strided(3)));
        // From and to every type.
        for to in super::scalars(false, true) {
            let k = crate::gpuarray::copy::builtin::kernel(
                crate::gpuarray::copy::builtin::Builtin::Convert,
                s,
                crate::gpuarray::tests::dt(to),
            )
            .unwrap();
            compiles(
                &format!("convert {s:?} -> {to:?}"),
                &k.source(Variant::Contiguous),
            );
        }
    }
    for_each_number!(of);
    of::<Bool>();
    let fill = crate::gpuarray::copy::builtin::kernel(
        crate::gpuarray::copy::builtin::Builtin::Fill,
        crate::gpuarray::elements::dtype::DType::Bool,
        crate::gpuarray::elements::dtype::DType::Bool,
    )
    .unwrap();
    compiles("fill bool", &fill.source(Variant::Contiguous));
}

#[test]
fn split_and_logic_kernels_compile() {
    for k in crate::gpuarray::expr::math::test_split_kernels() {
        compiles("frexp/modf", &k.source(Variant::Contiguous));
        compiles("frexp/modf strided", &k.source(Variant::Strided(2)));
    }
    for k in crate::gpuarray::reduce::logic::test_kernels() {
        for v in [ReductionVariant::Contiguous, ReductionVariant::Final] {
            compiles("any/all", &k.source(v));
        }
    }
    for k in crate::gpuarray::reduce::logic::test_count_kernels() {
        for v in [ReductionVariant::Contiguous, ReductionVariant::Strided(2)] {
            compiles("count_nonzero", &k.source(v));
        }
    }
}

/// What the typed operators build: leaves carry their own types, the parameter list uses
/// them, and the text of a single-type expression is what it was before typed leaves.
#[test]
fn typed_leaves_render_their_own_types() {
    let x = Operand::<f32>::into_expr(1.5f32);
    let cond = x.gt(2.0f32);
    assert_eq!(cond.operation(), "out = ((bool)(s0 > s1))");
    let w = Expr::where_(cond, 3i64, Operand::<i64>::into_expr(4i64).abs());
    assert_eq!(
        w.operation(),
        "out = ((long long)(((bool)(s0 > s1)) ? s2 : gpu_abs((long long)(s3))))"
    );
    let k = kernel::<i64>(&w.node, Store::Assign).unwrap();
    let src = k.source(Variant::Contiguous);
    assert!(
        src.contains("float s0, float s1, long long s2, long long s3"),
        "{src}"
    );
    assert!(
        src.contains("gpu_neg_wrap"),
        "the helpers are in the preamble: {src}"
    );
    // A plain single-type expression has no preamble.
    let plain = Operand::<f32>::into_expr(1.0f32) * 2.0f32;
    let k = kernel::<f32>(&plain.node, Store::Assign).unwrap();
    assert!(!k.source(Variant::Contiguous).contains("gpu_div"));
    // Fused math: one operation.
    let e = (Operand::<f32>::into_expr(1.0f32) * 2.0f32).sin().exp();
    assert_eq!(e.operation(), "out = expf(sinf(((float)(s0 * s1))))");
    let e = Operand::<i32>::into_expr(7).floor_divide(0) % 3;
    assert_eq!(e.operation(), "out = gpu_rem<int>(gpu_floordiv<int>(s0, s1), s2)");
    // The math functions keep an array's dimension type (PyCUDA's `a = cumath.sin(a)`), and
    // give `IxDyn` for an expression: these coercions are what must type-check.
    type Sin1 = fn(
        &crate::gpuarray::DeviceArray<f32, ndarray::Ix1>,
    ) -> crate::Result<crate::gpuarray::DeviceArray<f32, ndarray::Ix1>>;
    let _: Sin1 = |a| crate::gpuarray::math::sin(a);
    type Exp2 = fn(
        &crate::gpuarray::DeviceArray<i32, ndarray::Ix2>,
    ) -> crate::Result<crate::gpuarray::DeviceArray<f64, ndarray::Ix2>>;
    let _: Exp2 = |a| crate::gpuarray::math::exp(a);
    // `/` on integers is NumPy's true division, in `double`.
    let e: Expr<'_, f64> = Operand::<i32>::into_expr(7) / 2;
    assert_eq!(e.operation(), "out = ((double)(((double)(s0)) / ((double)(s1))))");
    let e: Expr<'_, f64> = 7u8 / Operand::<u8>::into_expr(2);
    assert_eq!(e.operation(), "out = ((double)(((double)(s0)) / ((double)(s1))))");
    let e = Operand::<f64>::into_expr(7.0).floor_divide(2.0);
    assert_eq!(e.operation(), "out = gpu_floordiv((double)(s0), (double)(s1))");
    let e = Operand::<u8>::into_expr(7)
        .cast::<f32>()
        .sqrt()
        .isnan()
        .logical_not();
    assert_eq!(
        e.operation(),
        "out = ((bool)!(bool)(((bool)isnan(sqrtf(((float)(s0)))))))"
    );
}

/// The cache key holds the leaves' types: the same structure over other types is another
/// kernel, the same structure and types the same one.
#[test]
fn cache_keys_hold_leaf_types() {
    let cmp = |s: DType| call(Func::Compare(CmpOp::Gt), vec![Node::ArrayOf(s), Node::ArrayOf(s)]);
    let a = kernel::<Bool>(&cmp(DType::F32), Store::Assign).unwrap();
    let b = kernel::<Bool>(&cmp(DType::F32), Store::Assign).unwrap();
    let c = kernel::<Bool>(&cmp(DType::F64), Store::Assign).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert!(!std::sync::Arc::ptr_eq(&a, &c));
    assert!(a
        .source(Variant::Contiguous)
        .contains("const float *__restrict__ x0__p"));
    assert!(c
        .source(Variant::Contiguous)
        .contains("const double *__restrict__ x0__p"));
}

/// A function on a type it is not defined on is a typed error, not a kernel that fails to
/// compile (the typed API cannot build one; the table guards itself).
#[test]
fn undefined_functions_are_refused() {
    let node = call(Func::Math(MathFn::Sin), vec![Node::ArrayOf(DType::I32)]);
    let err = kernel::<i32>(&node, Store::Assign).unwrap_err();
    assert!(
        matches!(
            err,
            crate::Error::Argument(crate::error::ArgumentError::NotAnElementType {
                scalar: Scalar::I32,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(MathFn::Sin.c_function(DType::F32), Some("sinf"));
    assert_eq!(MathFn::Sin.c_function(DType::F64), Some("sin"));
    assert_eq!(MathFn::Sin.c_function(DType::I32), None);
}
