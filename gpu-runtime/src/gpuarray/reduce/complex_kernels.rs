//! The kernels of the complex reductions `reduce/complex.rs` documents: `max`, `min`, `ptp`
//! in NumPy's lexicographic order with NaN propagating, and the real `var`/`std`. Kept apart
//! from `ops` (which calls [`define`] for complex elements) so that neither imports the other.

use gpu_cuda_source::Scalar;

use crate::error::Result;
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::reduce::kernel::ReductionKernel;

/// The operations of complex elements defined here (`ops`'s `Op` of the same names).
#[derive(Debug, Clone, Copy)]
pub(super) enum ComplexOp {
    Max,
    Min,
    Ptp,
    /// The variance with this `ddof`, its square root with `root`.
    Var {
        ddof: u64,
        root: bool,
    },
}

/// The lexicographic comparisons and their NaN rule, for complex type `t`: `gpu_cmax(a, b)`
/// is whichever of `a` and `b` has a NaN part (`a` if both), else the greater (so a NaN in
/// either wins, as in NumPy's `maximum`); `gpu_cmin` likewise. The NaN test comes first: the
/// order alone would let `(2, 0)` beat `(1, NaN)`, as `2 > 1` decides before the imaginary
/// parts are compared.
fn order_def(t: &str) -> String {
    format!(
        "__device__ __forceinline__ bool gpu_cnan({t} a) {{ return a.re != a.re || a.im != a.im; }}\n\
         __device__ __forceinline__ bool gpu_cgt({t} a, {t} b) {{ return a.re > b.re || (a.re == b.re && a.im > b.im); }}\n\
         __device__ __forceinline__ {t} gpu_cmax({t} a, {t} b) {{ return gpu_cnan(a) ? a : gpu_cnan(b) ? b : gpu_cgt(a, b) ? a : b; }}\n\
         __device__ __forceinline__ {t} gpu_cmin({t} a, {t} b) {{ return gpu_cnan(a) ? a : gpu_cnan(b) ? b : gpu_cgt(b, a) ? a : b; }}\n"
    )
}

/// The kernel of `op` on the complex elements `T` producing `R`, where this module defines
/// one (`max`, `min`, `ptp` into `T`; `var`/`std` into `T`'s part type); `None` for the
/// others, which `ops` refuses. `welford` is `ops`'s Welford accumulator.
pub(super) fn define<T: Element, R: Element>(
    op: ComplexOp,
    welford: &str,
) -> Option<Result<ReductionKernel<R>>> {
    if !T::DTYPE.is_complex() {
        return None;
    }
    let t = T::c_name();
    let part = T::DTYPE.part_scalar();
    // The part type's infinities, for the neutral elements.
    let (lo, hi) = match part {
        Scalar::F32 => (f32::C_LOWEST, f32::C_HIGHEST),
        _ => (f64::C_LOWEST, f64::C_HIGHEST),
    };
    let x = format!("const {t} *x");
    let same = R::DTYPE == T::DTYPE;
    let size = std::mem::size_of::<T>();
    Some(match op {
        ComplexOp::Max | ComplexOp::Min if same => {
            let (pick, start) = match op {
                ComplexOp::Max => ("gpu_cmax(a, b)", lo),
                _ => ("gpu_cmin(a, b)", hi),
            };
            let neutral = format!("{t}({start}, {start})");
            ReductionKernel::with_accumulator("reduction", &x, "x", pick, &neutral, (t, &order_def(t), size))
        }
        ComplexOp::Ptp if same => {
            let def = format!(
                "{}struct gpu_crange {{ {t} lo; {t} hi; }};\n\
                 __device__ __forceinline__ gpu_crange gpu_crg({t} lo, {t} hi) {{ gpu_crange r; r.lo = lo; r.hi = hi; return r; }}\n",
                order_def(t)
            );
            ReductionKernel::with_accumulator(
                "ptp",
                &x,
                "gpu_crg(x, x)",
                "gpu_crg(gpu_cmin(a.lo, b.lo), gpu_cmax(a.hi, b.hi))",
                &format!("gpu_crg({t}({hi}, {hi}), {t}({lo}, {lo}))"),
                ("gpu_crange", &def, 2 * size),
            )
            .map(|k| k.post_map("a.hi - a.lo"))
        }
        ComplexOp::Var { ddof, root } if !R::DTYPE.is_complex() && R::SCALAR == part => {
            let def = format!(
                "{welford}struct gpu_cwelford {{ gpu_welford r; gpu_welford i; }};\n\
                 __device__ __forceinline__ gpu_cwelford gpu_cw(gpu_welford r, gpu_welford i) {{ gpu_cwelford c; c.r = r; c.i = i; return c; }}\n"
            );
            // M2 starts at `x - x` as the real variance's: NaN for a NaN or infinite part.
            let one = |p: &str| format!("gpu_w(1.0, (double)x.{p}, (double)x.{p} - (double)x.{p})");
            let var = format!("(a.r.m2 + a.i.m2) / fmax(a.r.n - {ddof}.0, 0.0)");
            let post = if root { format!("sqrt({var})") } else { var };
            ReductionKernel::with_accumulator(
                "var",
                &x,
                &format!("gpu_cw({}, {})", one("re"), one("im")),
                "gpu_cw(gpu_wmerge(a.r, b.r), gpu_wmerge(a.i, b.i))",
                "gpu_cw(gpu_w(0.0, 0.0, 0.0), gpu_w(0.0, 0.0, 0.0))",
                ("gpu_cwelford", &def, 48),
            )
            .map(|k| k.post_map(&cast::cast_c(Scalar::F64, R::SCALAR, &post)))
        }
        _ => return None,
    })
}
