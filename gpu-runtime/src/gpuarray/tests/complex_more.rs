//! Complex `max`/`min`/`ptp`/`var`/`std` and `expm1`/`exp2`/`log2`/`log1p` with no GPU: the
//! kernels compile with NVRTC, read as NumPy's rules say, and the result types are checked.

use super::compiles;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{kernel, BinOp, Node, Store};
use crate::gpuarray::expr::func::{Func, MathFn};
use crate::gpuarray::kernels::elementwise::Variant;
use crate::gpuarray::reduce::kernel::ReductionVariant;
use crate::gpuarray::reduce::ops::{kernel as reduction, Op};
use crate::types::{Complex32, Complex64};

const VARIANTS: [ReductionVariant; 5] = [
    ReductionVariant::Contiguous,
    ReductionVariant::Strided(2),
    ReductionVariant::Final,
    ReductionVariant::AxisBlock(1),
    ReductionVariant::AxisColumns(2),
];

#[test]
fn complex_ordered_reductions_and_variance_compile() {
    fn of<T: Element, P: Element>() {
        for op in [Op::Max, Op::Min, Op::Ptp] {
            let k = reduction::<T, T>(op).unwrap();
            for v in VARIANTS {
                compiles(&format!("{op:?} {} {v:?}", T::c_name()), &k.source(v));
            }
        }
        let max = reduction::<T, T>(Op::Max)
            .unwrap()
            .source(ReductionVariant::Contiguous);
        // Lexicographic, NaN first.
        assert!(
            max.contains("a.re > b.re || (a.re == b.re && a.im > b.im)"),
            "{max}"
        );
        // A NaN in either operand wins before the order is looked at: (2, 0) must not beat
        // (1, NaN) on its real part.
        assert!(
            max.contains("gpu_cnan(a) ? a : gpu_cnan(b) ? b : gpu_cgt(a, b) ? a : b"),
            "{max}"
        );
        for root in [false, true] {
            let k = reduction::<T, P>(Op::Var { ddof: 1, root }).unwrap();
            for v in VARIANTS {
                compiles(&format!("var {} {v:?}", T::c_name()), &k.source(v));
            }
            let src = k.source(ReductionVariant::Final);
            assert!(
                src.contains("(a.r.m2 + a.i.m2) / fmax(a.r.n - 1.0, 0.0)"),
                "{src}"
            );
            assert_eq!(src.contains("sqrt("), root, "{src}");
        }
        // The variance into the complex type itself, or another real type: refused.
        assert!(reduction::<T, T>(Op::Var { ddof: 0, root: false }).is_err());
        assert!(reduction::<T, i32>(Op::Var { ddof: 0, root: false }).is_err());
        // argmax/argmin stay refused.
        assert!(reduction::<T, i64>(Op::ArgMax).is_err());
    }
    of::<Complex32, f32>();
    of::<Complex64, f64>();
}

#[test]
fn complex_expm1_exp2_log2_log1p_compile() {
    fn of<T: Element>() {
        let x = || Node::ArrayOf(T::DTYPE);
        let mut e = x();
        for f in [MathFn::Expm1, MathFn::Exp2, MathFn::Log2, MathFn::Log1p] {
            let one = Node::Call(Func::Math(f), vec![x()]);
            let k = kernel::<T>(&one, Store::Assign).unwrap();
            let src = k.source(Variant::Contiguous);
            assert!(
                src.contains(&format!("gpu_runtime::{}", format!("{f:?}").to_lowercase())),
                "{src}"
            );
            e = Node::Bin(BinOp::Add, Box::new(e), Box::new(one));
        }
        let k = kernel::<T>(&e, Store::Assign).unwrap();
        compiles(
            &format!("complex expm1.. {}", T::c_name()),
            &k.source(Variant::Strided(2)),
        );
    }
    of::<Complex32>();
    of::<Complex64>();
}
