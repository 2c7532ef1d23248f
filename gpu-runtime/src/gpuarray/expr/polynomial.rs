//! NumPy's (and CuPy's) polynomial routines of 1-d coefficient arrays, highest power first:
//! `polyval` (Horner's rule, the coefficients in shared memory, four points a thread),
//! `polyadd` and `polysub` (one kernel each, the shorter operand aligned at the constant
//! term), `polymul` (`convolve` of the operands without their leading zeros), `poly` (the
//! coefficients of a polynomial of given roots, a block multiplying in one factor `x - r` at
//! a time) and `roots` (all roots at once by the Aberth-Ehrlich iteration in one block, where
//! NumPy takes the eigenvalues of the companion matrix: CuPy's `roots` takes only symmetric
//! or Hermitian companion matrices, which only polynomials of degree 2 at most have).

use ndarray::{Dimension, Ix1};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::promotion::TrueDivide;
use crate::gpuarray::expr::convolve::ConvolveMode;
use crate::gpuarray::expr::core::{empty_error, undefined_error};
use crate::gpuarray::kernels::codegen::Arith;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::{Arg, PreparedFunction};
use crate::types::Complex64;

/// The Aberth-Ehrlich iterations `roots` runs at most: each gains digits cubically near a
/// simple root and linearly near a multiple one, whose last digits no method of doubles
/// recovers (NumPy's eigenvalues of such roots are as far apart).
const MAX_ROOT_ITERATIONS: i32 = 1000;

/// Coefficients `polyval` keeps in shared memory (the rest, if any, are read from global
/// memory).
const SHARED_COEFFICIENTS: usize = 256;

/// Points a thread of `polyval` evaluates together.
const VAL_LANES: usize = 4;

/// The threads of the one block of `poly` and `roots`.
const ONE_BLOCK: u32 = 256;

/// Which kernel of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Val,
    Add,
    Sub,
    Poly,
    Roots,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Val => "gpu_polyval",
            Kind::Add => "gpu_polyadd",
            Kind::Sub => "gpu_polysub",
            Kind::Poly => "gpu_poly",
            Kind::Roots => "gpu_roots",
        }
    }
}

/// Kernels keyed by kind, operand type and result type.
static KERNELS: SourceKernels<(Kind, DType, DType)> = SourceKernels::new();

/// The source of `kind` over elements of `t` (the result's `out`: `poly`'s type, or
/// `Complex64` for `roots`).
fn source(kind: Kind, t: DType, out: DType) -> String {
    let tc = t.c_name();
    let oc = out.c_name();
    let name = kind.name();
    let headers = headers_for([t, out, DType::Complex64]);
    match kind {
        Kind::Val => {
            // The coefficients staged in shared memory (up to `SHARED_COEFFICIENTS`), and
            // `VAL_LANES` points a thread interleaved: Horner's steps of one point depend on
            // each other, those of several do not.
            let a = Arith::of(t);
            format!(
                "{headers}extern \"C\" __global__ void {name}(unsigned long long len, const {tc} *__restrict__ p, \
                 long long np, const {tc} *__restrict__ x, {tc} *__restrict__ y) {{\n\
                 __shared__ {ac} ps[{shared}];\n\
                 for (long long k = threadIdx.x; k < np && k < {shared}; k += blockDim.x) ps[k] = {pk};\n\
                 __syncthreads();\n\
                 const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n\
                 for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < len;\n\
                      i += {lanes} * stride) {{\n\
                     {ac} v[{lanes}], s[{lanes}];\n\
                     #pragma unroll\n\
                     for (int j = 0; j < {lanes}; ++j) {{\n\
                         const unsigned long long e = i + j * stride;\n\
                         v[j] = e < len ? {v} : {zero};\n\
                         s[j] = {zero};\n\
                     }}\n\
                     for (long long k = 0; k < np; ++k) {{\n\
                         const {ac} c = k < {shared} ? ps[k] : {pk};\n\
                         #pragma unroll\n\
                         for (int j = 0; j < {lanes}; ++j) s[j] = s[j] * v[j] + c;\n\
                     }}\n\
                     #pragma unroll\n\
                     for (int j = 0; j < {lanes}; ++j) {{\n\
                         const unsigned long long e = i + j * stride;\n\
                         if (e < len) y[e] = {out};\n\
                     }}\n\
                 }}\n}}\n",
                ac = a.c(),
                shared = SHARED_COEFFICIENTS,
                lanes = VAL_LANES,
                v = a.read("x[e]"),
                zero = a.literal(0),
                pk = a.read("p[k]"),
                out = a.store("s[j]"),
            )
        }
        Kind::Add | Kind::Sub => {
            let a = Arith::of(t);
            let op = if kind == Kind::Add { "+" } else { "-" };
            format!(
                "{headers}extern \"C\" __global__ void {name}(unsigned long long len, const {tc} *__restrict__ a, \
                 long long na, const {tc} *__restrict__ b, long long nb, {tc} *__restrict__ z) {{\n\
                 for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < len;\n\
                      i += (unsigned long long)gridDim.x * blockDim.x) {{\n\
                     const long long ia = (long long)i - ((long long)len - na), ib = (long long)i - ((long long)len - nb);\n\
                     const {ac} u = ia >= 0 ? {ra} : {zero};\n\
                     const {ac} w = ib >= 0 ? {rb} : {zero};\n\
                     z[i] = {out};\n\
                 }}\n}}\n",
                ac = a.c(),
                ra = a.read("a[ia]"),
                rb = a.read("b[ib]"),
                zero = a.literal(0),
                out = a.store(&format!("u {op} w")),
            )
        }
        Kind::Poly => {
            // The factors multiplied in the result's type (as NumPy's `convolve` of each
            // `[1, -r]` computes), 16-bit floats in `float`.
            let o = Arith::of(out);
            format!(
                "{headers}extern \"C\" __global__ void {name}(const {tc} *__restrict__ r, long long n, \
                 {oc} *c, {oc} *tmp) {{\n\
                 for (long long j = threadIdx.x; j <= n; j += blockDim.x) {{ c[j] = {first}; tmp[j] = c[j]; }}\n\
                 __syncthreads();\n\
                 {oc} *src = c, *dst = tmp;\n\
                 for (long long k = 0; k < n; ++k) {{\n\
                     const {ac} rk = {rk};\n\
                     for (long long j = threadIdx.x; j <= k + 1; j += blockDim.x) {{\n\
                         {ac} v = {sj};\n\
                         if (j > 0) v = v - rk * {sj1};\n\
                         dst[j] = {store};\n\
                     }}\n\
                     __syncthreads();\n\
                     {oc} *t = src; src = dst; dst = t;\n\
                 }}\n\
                 if (src != c) for (long long j = threadIdx.x; j <= n; j += blockDim.x) c[j] = src[j];\n\
                 }}\n",
                ac = o.acc.c_name(),
                first = o.store(&format!("(j == 0 ? {} : {})", o.literal(1), o.literal(0))),
                rk = convert_c(t, o.acc, "r[k]"),
                sj = o.read("src[j]"),
                sj1 = o.read("src[j - 1]"),
                store = o.store("v"),
            )
        }
        Kind::Roots => format!(
            "{headers}typedef gpu_runtime::complex<double> C;\n\
             #define A(k) ({ak})\n\
             extern \"C\" __global__ void {name}(const {tc} *__restrict__ a, long long first, long long d, long long zeros, \
             C *z, C *w, int max_iter) {{\n\
             __shared__ double radius;\n\
             __shared__ int moving;\n\
             if (threadIdx.x == 0) {{\n\
                 // Every root is at most twice the largest |a_k / a_0|^(1/k) (Fujiwara's bound).\n\
                 const double lead = gpu_runtime::abs(A(0));\n\
                 double r = 0.0;\n\
                 for (long long k = 1; k <= d; ++k) {{\n\
                     const double m = gpu_runtime::abs(A(k));\n\
                     if (m > 0.0) r = fmax(r, pow(m / lead, 1.0 / k));\n\
                 }}\n\
                 radius = r;\n\
             }}\n\
             __syncthreads();\n\
             for (long long i = threadIdx.x; i < d; i += blockDim.x) {{\n\
                 const double t = 6.283185307179586 * i / d + 0.4;\n\
                 z[i] = C(radius * cos(t), radius * sin(t));\n\
             }}\n\
             for (long long i = threadIdx.x; i < zeros; i += blockDim.x) z[d + i] = C(0.0, 0.0);\n\
             __syncthreads();\n\
             for (int it = 0; it < max_iter; ++it) {{\n\
                 if (threadIdx.x == 0) moving = 0;\n\
                 __syncthreads();\n\
                 for (long long i = threadIdx.x; i < d; i += blockDim.x) {{\n\
                     const C zi = z[i];\n\
                     C ratio;\n\
                     // A guess on a root exactly (p = 0) stays; only one on a critical point\n\
                     // (p' = 0) is moved off.\n\
                     if (gpu_runtime::abs(zi) <= 1.0) {{\n\
                         C p = A(0), dp = C(0.0, 0.0);\n\
                         for (long long k = 1; k <= d; ++k) {{ dp = dp * zi + p; p = p * zi + A(k); }}\n\
                         ratio = p == C(0.0, 0.0) ? p : p / dp;\n\
                     }} else {{\n\
                         // p(z) = z^d q(1/z): Horner's rule on the reversed coefficients, in\n\
                         // powers of 1/z that cannot overflow.\n\
                         const C y = C(1.0, 0.0) / zi;\n\
                         C q = A(d), dq = C(0.0, 0.0);\n\
                         for (long long k = d - 1; k >= 0; --k) {{ dq = dq * y + q; q = q * y + A(k); }}\n\
                         ratio = q == C(0.0, 0.0) ? q : zi / (C((double)d, 0.0) - y * dq / q);\n\
                     }}\n\
                     C s = C(0.0, 0.0);\n\
                     for (long long j = 0; j < d; ++j) if (j != i) s = s + C(1.0, 0.0) / (zi - z[j]);\n\
                     C step = ratio == C(0.0, 0.0) ? ratio : ratio / (C(1.0, 0.0) - ratio * s);\n\
                     if (!isfinite(step.re) || !isfinite(step.im)) {{\n\
                         // A guess on a critical point or on another guess: moved off it.\n\
                         step = C(radius * 1e-3 * (1 + i % 7), radius * 1e-3);\n\
                     }}\n\
                     w[i] = step;\n\
                     if (gpu_runtime::abs(step) > 4.0 * 2.220446049250313e-16 * gpu_runtime::abs(zi)) atomicOr(&moving, 1);\n\
                 }}\n\
                 __syncthreads();\n\
                 for (long long i = threadIdx.x; i < d; i += blockDim.x) z[i] = z[i] - w[i];\n\
                 __syncthreads();\n\
                 const int go = moving;\n\
                 __syncthreads();\n\
                 if (!go) break;\n\
             }}\n\
             }}\n",
            ak = convert_c(t, DType::Complex64, "a[first + (k)]"),
        ),
    }
}

fn prepared(ctx: &Context, kind: Kind, t: DType, out: DType) -> Result<PreparedFunction> {
    KERNELS.prepared(ctx, (kind, t, out), kind.name(), || source(kind, t, out))
}

context_fns! {
    /// The values of the polynomial of coefficients `p` (highest power first) at each element of
    /// `x` (NumPy's `polyval(p, x)`): an array of `x`'s shape, by Horner's rule. Integers wrap as
    /// NumPy's do; `f16` and `bf16` are computed in `f32` and rounded once (NumPy rounds each
    /// step); no coefficients give zeros, as NumPy.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let p = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, 2.0, 3.0]))?; // x^2 + 2x + 3
    /// let x = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f64, 1.0, 2.0]))?;
    /// assert_eq!(gpuarray::polyval(&p, &x)?.to_vec()?, [3.0, 6.0, 11.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn polyval[T: Element, SP: Storage<Elem = T>, SX: Storage<Elem = T>, D: Dimension](
        &self, p: &DeviceArrayBase<SP, Ix1>, x: &DeviceArrayBase<SX, D>
    ) -> Result<DeviceArray<T, D>> {
        let stream = self.stream;
        let ctx = x.context();
        let mut y = DeviceArray::<T, D>::empty(ctx, x.raw_dim())?;
        if y.is_empty() {
            return Ok(y);
        }
        let np = p.len() as i64;
        let (p, x) = (
            OnStream::new(p, stream).c_order()?,
            OnStream::new(x, stream).c_order()?,
        );
        let (p, x) = (p.view(), x.view());
        let f = prepared(ctx, Kind::Val, T::DTYPE, T::DTYPE)?;
        let len = y.len() as u64;
        let args = [
            Arg::U64(len),
            Arg::input::<T, _>(&p),
            Arg::I64(np),
            Arg::input::<T, _>(&x),
            Arg::output(&mut y),
        ];
        registry::launch(&f, registry::grid_for(ctx, len)?, BLOCK, stream, &args)?;
        Ok(y)
    }
}

context_fns! {
    /// The sum of two polynomials (NumPy's `polyadd(a1, a2)`), coefficients highest power first:
    /// the shorter aligned at the constant term, `max(len)` coefficients, leading zeros kept as
    /// NumPy keeps them.
    fn polyadd[T: Element, S1: Storage<Elem = T>, S2: Storage<Elem = T>](
        &self, a1: &DeviceArrayBase<S1, Ix1>, a2: &DeviceArrayBase<S2, Ix1>
    ) -> Result<DeviceArray<T, Ix1>> {
        add_sub(Kind::Add, a1, a2, self.stream)
    }

    /// The difference `a1 - a2` of two polynomials (NumPy's `polysub`), as [`polyadd`]. `bool`
    /// coefficients are refused
    /// ([`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement)), as
    /// NumPy refuses `-` on them.
    fn polysub[T: Element, S1: Storage<Elem = T>, S2: Storage<Elem = T>](
        &self, a1: &DeviceArrayBase<S1, Ix1>, a2: &DeviceArrayBase<S2, Ix1>
    ) -> Result<DeviceArray<T, Ix1>> {
        if T::DTYPE == DType::Bool {
            return Err(undefined_error("polysub", "Sub", T::c_name()));
        }
        add_sub(Kind::Sub, a1, a2, self.stream)
    }

    /// The product of two polynomials (NumPy's `polymul(a1, a2)`): the [`convolve`] of the
    /// coefficients without their leading zeros (a polynomial of only zeros is `[0]`), as NumPy
    /// computes it. Waits for the first nonzero index of each. Empty operands are
    /// [`ArrayShapeError::EmptyOperand`](crate::error::ArrayShapeError::EmptyOperand), as NumPy's
    /// `convolve` refuses them.
    ///
    /// [`convolve`]: crate::gpuarray::convolve
    fn polymul[T: Element, S1: Storage<Elem = T>, S2: Storage<Elem = T>](
        &self, a1: &DeviceArrayBase<S1, Ix1>, a2: &DeviceArrayBase<S2, Ix1>
    ) -> Result<DeviceArray<T, Ix1>> {
        for (x, operand) in [(a1.len(), "a1"), (a2.len(), "a2")] {
            if x == 0 {
                return Err(empty_error("polymul", operand));
            }
        }
        let (v1, v2) = (without_leading_zeros(a1)?, without_leading_zeros(a2)?);
        self.convolve(&v1, &v2, ConvolveMode::Full)
    }

    /// The coefficients, highest power first and leading 1, of the polynomial whose roots are
    /// the elements of `zeros` (NumPy's `poly` of a 1-d array): `len + 1` coefficients of
    /// NumPy's type (`f64` for `bool` and the integers, the type itself for `f32`, `f64` and
    /// complex numbers; `f16` and `bf16` stay too, each factor multiplied in `f32` and rounded to
    /// the type, where NumPy gives `f64`),
    /// multiplied out one factor `x - r` at a time as NumPy's `convolve`s do. Complex
    /// roots give complex coefficients (NumPy returns the real parts where the roots come in
    /// conjugate pairs: take [`Expr::real`](crate::gpuarray::Expr::real)); no roots give
    /// `[1]` (NumPy: the scalar `1.0`). NumPy's `poly` of a square matrix (of its eigenvalues)
    /// is not here.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let r = DeviceArray::from_ndarray(&ctx, &arr1(&[1i32, 2, 3]))?;
    /// assert_eq!(gpuarray::poly(&r)?.to_vec()?, [1.0, -6.0, 11.0, -6.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn poly[T: TrueDivide, S: Storage<Elem = T>](
        &self, zeros: &DeviceArrayBase<S, Ix1>
    ) -> Result<DeviceArray<T::Quotient, Ix1>> {
        let ctx = zeros.context();
        let n = zeros.len();
        let mut c = DeviceArray::<T::Quotient, Ix1>::empty(ctx, n + 1)?;
        let mut tmp = DeviceArray::<T::Quotient, Ix1>::empty(ctx, n + 1)?;
        let r = OnStream::new(zeros, self.stream).c_order()?;
        let r = r.view();
        let f = prepared(ctx, Kind::Poly, T::DTYPE, T::Quotient::DTYPE)?;
        let args = [
            Arg::input::<T, _>(&r),
            Arg::I64(n as i64),
            Arg::output(&mut c),
            Arg::output(&mut tmp),
        ];
        registry::launch(&f, 1, ONE_BLOCK, self.stream, &args)?;
        Ok(c)
    }

    /// The roots of the polynomial of coefficients `p` (NumPy's `roots(p)`), highest power
    /// first, as `Complex64` (NumPy returns them real where every one is; take
    /// [`Expr::real`](crate::gpuarray::Expr::real)). Leading zeros are dropped and each
    /// trailing zero is a root at 0, listed last, as NumPy does; fewer than two coefficients left
    /// give no roots. The others are found together by the Aberth-Ehrlich iteration in `f64`
    /// (NumPy: the eigenvalues of the companion matrix; CuPy takes only symmetric companion
    /// matrices), in no particular order: sort them to compare. A root of multiplicity `m` is
    /// found to about `1/m` of the digits, as by NumPy. Waits for the coefficients.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let p = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f64, -3.0, 2.0]))?; // (x - 1)(x - 2)
    /// let mut r: Vec<f64> = gpuarray::roots(&p)?.to_vec()?.iter().map(|z| z.re).collect();
    /// r.sort_by(f64::total_cmp);
    /// assert!((r[0] - 1.0).abs() < 1e-12 && (r[1] - 2.0).abs() < 1e-12);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn roots[T: Element, S: Storage<Elem = T>](
        &self, p: &DeviceArrayBase<S, Ix1>
    ) -> Result<DeviceArray<Complex64, Ix1>> {
        let ctx = p.context();
        // The copy back is ordered after the work queued on the stream (the array records it).
        let host = p.to_vec()?;
        let Some(first) = host.iter().position(|&c| c != T::zero()) else {
            return DeviceArray::empty(ctx, 0);
        };
        let last = host.iter().rposition(|&c| c != T::zero()).unwrap_or(first);
        let (degree, zeros) = (last - first, host.len() - 1 - last);
        let mut z = DeviceArray::<Complex64, Ix1>::empty(ctx, degree + zeros)?;
        if z.is_empty() {
            return Ok(z);
        }
        let mut scratch = DeviceArray::<Complex64, Ix1>::empty(ctx, degree.max(1))?;
        let p = OnStream::new(p, self.stream).c_order()?;
        let p = p.view();
        let f = prepared(ctx, Kind::Roots, T::DTYPE, DType::Complex64)?;
        let args = [
            Arg::input::<T, _>(&p),
            Arg::I64(first as i64),
            Arg::I64(degree as i64),
            Arg::I64(zeros as i64),
            Arg::output(&mut z),
            Arg::output(&mut scratch),
            Arg::I32(MAX_ROOT_ITERATIONS),
        ];
        registry::launch(&f, 1, ONE_BLOCK, self.stream, &args)?;
        Ok(z)
    }
}

/// The polynomial routines on a stream (`gpuarray::on(&stream).polyval(&p, &x)`).
/// `a` (not empty) without its leading zeros ([`trim_zeros`]), a polynomial of only zeros
/// keeping its last one: NumPy's `poly1d` of it is `[0]`. Waits for the first nonzero index.
///
/// [`trim_zeros`]: DeviceArrayBase::trim_zeros
fn without_leading_zeros<T: Element, S: Storage<Elem = T>>(
    a: &DeviceArrayBase<S, Ix1>,
) -> Result<DeviceArrayView<'_, T, Ix1>> {
    match a.trim_zeros(true, false)? {
        v if v.is_empty() => a.slice(ndarray::s![a.len() - 1..]),
        v => Ok(v),
    }
}

fn add_sub<T, S1, S2>(
    kind: Kind,
    a1: &DeviceArrayBase<S1, Ix1>,
    a2: &DeviceArrayBase<S2, Ix1>,
    stream: Option<&Stream>,
) -> Result<DeviceArray<T, Ix1>>
where
    T: Element,
    S1: Storage<Elem = T>,
    S2: Storage<Elem = T>,
{
    let ctx = a1.context();
    let len = a1.len().max(a2.len());
    let mut z = DeviceArray::<T, Ix1>::empty(ctx, len)?;
    if len == 0 {
        return Ok(z);
    }
    let (s1, s2) = (
        OnStream::new(a1, stream).c_order()?,
        OnStream::new(a2, stream).c_order()?,
    );
    let (v1, v2) = (s1.view(), s2.view());
    let f = prepared(ctx, kind, T::DTYPE, T::DTYPE)?;
    let args = [
        Arg::U64(len as u64),
        Arg::input::<T, _>(&v1),
        Arg::I64(a1.len() as i64),
        Arg::input::<T, _>(&v2),
        Arg::I64(a2.len() as i64),
        Arg::output(&mut z),
    ];
    registry::launch(&f, registry::grid_for(ctx, len as u64)?, BLOCK, stream, &args)?;
    Ok(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_compile_for_every_element_type() {
        for t in DType::ALL {
            let quotient = if t.is_bool_or_integer() { DType::F64 } else { t };
            for (kind, out, params) in [
                (Kind::Val, t, 5),
                (Kind::Add, t, 6),
                (Kind::Sub, t, 6),
                (Kind::Poly, quotient, 4),
                (Kind::Roots, DType::Complex64, 7),
            ] {
                let s = source(kind, t, out);
                assert_eq!(
                    gpu_cuda_source::find_kernel(&s, kind.name())
                        .unwrap()
                        .params
                        .len(),
                    params
                );
                if let Err(e) = registry::compile_check(&s, "sm_90") {
                    panic!("{kind:?} of {t:?}: {e}");
                }
            }
        }
    }
}
