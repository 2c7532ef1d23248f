//! `gpuarray::matmul`, `matmul_into`, `dot` through cuBLAS on a GPU (the `cublas` feature),
//! each compared with a CPU reference (in `f64`) on random data: random shapes including
//! `1 x k`, `k x 1` and an empty `k`; operands in C order, Fortran order, transposed views,
//! stepped and reversed views and column slices; batches with a broadcast operand; every
//! element type (`f16` and `bf16` with loose tolerances).
//!
//! `cargo test --features cublas --test cudarc -- --ignored array_matmul::`

use gpu_runtime::gpuarray::{
    self as gpuarray, dot, matmul, matmul_into, DeviceArray, DeviceArrayView, MatmulElement,
};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{s, Array, Array2, ArrayD, Ix2, Ix3, IxDyn, ShapeBuilder};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::{Context, Error, GemmError, Stream};
use gpu_suite::Rng;

/// An element type under test: made from and read as numbers, with its tolerance per term of
/// the sum.
trait TestElem: MatmulElement {
    fn from_f32(v: f32) -> Self;
    fn to_f64(self) -> f64;
    /// The error allowed per term of `k` (and for the result's own rounding).
    const TOL: f64;
}

impl TestElem for f32 {
    fn from_f32(v: f32) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    const TOL: f64 = 1e-5;
}
impl TestElem for f64 {
    fn from_f32(v: f32) -> Self {
        v as f64
    }
    fn to_f64(self) -> f64 {
        self
    }
    const TOL: f64 = 1e-12;
}
impl TestElem for f16 {
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    const TOL: f64 = 2e-3;
}
impl TestElem for bf16 {
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
    const TOL: f64 = 1.6e-2;
}

fn random<T: TestElem>(rng: &mut Rng, shape: &[usize], fortran: bool) -> ArrayD<T> {
    let n = shape.iter().product();
    let data: Vec<T> = (0..n).map(|_| T::from_f32(rng.f32())).collect();
    if fortran {
        Array::from_shape_vec(IxDyn(shape).f(), data).unwrap()
    } else {
        Array::from_shape_vec(IxDyn(shape), data).unwrap()
    }
}

/// The number of layouts [`operand`] makes.
const LAYOUTS: u64 = 6;

/// A `rows x cols` operand in layout `kind`: the device array it is a view of, and the host
/// array of the same values and the layout's base shape.
/// 0 C order; 1 Fortran order; 2 the transpose of a C-order `cols x rows`; 3 every other row
/// of a `2 rows x cols`; 4 rows reversed; 5 columns `1..cols + 1` of a `rows x (cols + 3)`.
fn operand<T: TestElem>(
    ctx: &Context,
    rng: &mut Rng,
    rows: usize,
    cols: usize,
    kind: u64,
) -> (DeviceArray<T, Ix2>, Array2<T>) {
    let base_shape = match kind {
        2 => [cols, rows],
        3 => [2 * rows, cols],
        5 => [rows, cols + 3],
        _ => [rows, cols],
    };
    let base = random::<T>(rng, &base_shape, kind == 1)
        .into_dimensionality::<Ix2>()
        .unwrap();
    (DeviceArray::from_ndarray(ctx, &base).unwrap(), base)
}

/// The view of layout `kind` of `d` (see [`operand`]), and the host values it shows.
fn view_of<'a, T: TestElem>(
    d: &'a DeviceArray<T, Ix2>,
    host: &Array2<T>,
    kind: u64,
) -> (DeviceArrayView<'a, T, Ix2>, Array2<T>) {
    let cols = host.ncols();
    match kind {
        2 => (d.t(), host.t().to_owned()),
        3 => (
            d.slice(s![..;2, ..]).unwrap(),
            host.slice(s![..;2, ..]).to_owned(),
        ),
        4 => (
            d.slice(s![..;-1, ..]).unwrap(),
            host.slice(s![..;-1, ..]).to_owned(),
        ),
        5 => (
            d.slice(s![.., 1..cols - 2]).unwrap(),
            host.slice(s![.., 1..cols - 2]).to_owned(),
        ),
        _ => (d.view(), host.clone()),
    }
}

fn reference<T: TestElem>(a: &Array2<T>, b: &Array2<T>) -> Array2<f64> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    Array2::from_shape_fn((m, n), |(i, j)| {
        (0..k).map(|l| a[[i, l]].to_f64() * b[[l, j]].to_f64()).sum()
    })
}

fn check<T: TestElem>(got: &[T], want: impl IntoIterator<Item = f64>, k: usize, what: &str) {
    let want: Vec<f64> = want.into_iter().collect();
    assert_eq!(got.len(), want.len(), "{what}");
    let tol = T::TOL * (k as f64 + 1.0);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let g = g.to_f64();
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: element {i}: {g} vs {w}"
        );
    }
}

fn dims(rng: &mut Rng) -> usize {
    match rng.next_u64() % 8 {
        0 => 1,
        1 => 0,
        2 => 60 + (rng.next_u64() % 80) as usize,
        _ => 1 + (rng.next_u64() % 17) as usize,
    }
}

fn products_in_every_layout<T: TestElem>(seed: u64) -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(seed);
    for round in 0..60 {
        let (m, k, n) = (dims(&mut rng), dims(&mut rng), dims(&mut rng));
        let (ka, kb) = (rng.next_u64() % LAYOUTS, rng.next_u64() % LAYOUTS);
        let (da, ha) = operand::<T>(&ctx, &mut rng, m, k, ka);
        let (db, hb) = operand::<T>(&ctx, &mut rng, k, n, kb);
        let (va, a) = view_of(&da, &ha, ka);
        let (vb, b) = view_of(&db, &hb, kb);
        let what = format!("round {round}: ({m}x{k} layout {ka}) @ ({k}x{n} layout {kb})");
        let c = matmul(&va, &vb)?;
        assert_eq!(c.shape(), &[m, n], "{what}");
        assert!(c.is_standard_layout());
        let want = reference(&a, &b);
        check(&c.to_vec()?, want.iter().copied(), k, &what);
        // The operands are unchanged (a copy, where one was made, is the copy's).
        assert_eq!(va.to_ndarray()?, a, "{what}");
        // Into an existing array, which had other values (an empty k writes zeros).
        let mut into =
            DeviceArray::<T, Ix2>::from_ndarray(&ctx, &Array2::from_elem((m, n), T::from_f32(7.0)))?;
        matmul_into(&va, &vb, &mut into)?;
        check(&into.to_vec()?, want.iter().copied(), k, &format!("{what}, into"));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f32_products_in_every_layout() -> gpu_runtime::Result<()> {
    products_in_every_layout::<f32>(1)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f64_products_in_every_layout() -> gpu_runtime::Result<()> {
    products_in_every_layout::<f64>(2)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f16_products_in_every_layout() -> gpu_runtime::Result<()> {
    products_in_every_layout::<f16>(3)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bf16_products_in_every_layout() -> gpu_runtime::Result<()> {
    products_in_every_layout::<bf16>(4)
}

fn batched<T: TestElem>(seed: u64) -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(seed);
    for round in 0..24 {
        let batch = [0, 1, 3, 5][(rng.next_u64() % 4) as usize];
        let (m, k, n) = (dims(&mut rng) % 40, dims(&mut rng) % 40, dims(&mut rng) % 40);
        // 0: both 3-D; 1: b 2-D; 2: a 2-D; 3: a is a batch of one; 4: b transposed per
        // matrix (a permuted view, no copy).
        let form = rng.next_u64() % 5;
        let a_batch = match form {
            2 => None,
            3 => Some(1),
            _ => Some(batch),
        };
        let b_batch = if form == 1 { None } else { Some(batch) };
        let shape_of = |b: Option<usize>, r, c| match b {
            Some(b) => vec![b, r, c],
            None => vec![r, c],
        };
        let ha = random::<T>(&mut rng, &shape_of(a_batch, m, k), false);
        let hb = if form == 4 {
            random::<T>(&mut rng, &[batch, n, k], false)
        } else {
            random::<T>(&mut rng, &shape_of(b_batch, k, n), false)
        };
        let (da, db) = (
            DeviceArray::from_ndarray(&ctx, &ha)?,
            DeviceArray::from_ndarray(&ctx, &hb)?,
        );
        let (vb, hb) = if form == 4 {
            (
                db.view().permuted_axes(&[0, 2, 1])?,
                hb.view().permuted_axes(IxDyn(&[0, 2, 1])).to_owned(),
            )
        } else {
            (db.view(), hb)
        };
        let what = format!("round {round}: {:?} @ {:?} (form {form})", ha.shape(), hb.shape());
        let c = matmul(&da, &vb)?;
        assert_eq!(c.shape(), &[batch, m, n], "{what}");
        let matrix = |x: &ArrayD<T>, i: usize| -> Array2<T> {
            match x.ndim() {
                3 => {
                    let x3 = x.view().into_dimensionality::<Ix3>().unwrap();
                    x3.slice(s![if x3.shape()[0] == 1 { 0 } else { i }, .., ..])
                        .to_owned()
                }
                _ => x.view().into_dimensionality::<Ix2>().unwrap().to_owned(),
            }
        };
        let mut want = Vec::new();
        for i in 0..batch {
            want.extend(reference(&matrix(&ha, i), &matrix(&hb, i)).iter().copied());
        }
        check(&c.to_vec()?, want, k, &what);
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f32_batches_with_broadcast_and_transposed_operands() -> gpu_runtime::Result<()> {
    batched::<f32>(11)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f64_batches_with_broadcast_and_transposed_operands() -> gpu_runtime::Result<()> {
    batched::<f64>(12)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn f16_and_bf16_batches() -> gpu_runtime::Result<()> {
    batched::<f16>(13)?;
    batched::<bf16>(14)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn vectors_and_dot_follow_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(21);
    let (hv, hm) = (
        random::<f64>(&mut rng, &[5], false),
        random::<f64>(&mut rng, &[5, 3], false),
    );
    let (v, mtx) = (
        DeviceArray::from_ndarray(&ctx, &hv)?,
        DeviceArray::from_ndarray(&ctx, &hm)?,
    );
    let hm2 = hm.view().into_dimensionality::<Ix2>().unwrap().to_owned();
    let hv1: Vec<f64> = hv.iter().copied().collect();
    // (5,) @ (5, 3) -> (3,)
    let vm = matmul(&v, &mtx)?;
    assert_eq!(vm.shape(), &[3]);
    let want: Vec<f64> = (0..3)
        .map(|j| (0..5).map(|l| hv1[l] * hm2[[l, j]]).sum())
        .collect();
    check(&vm.to_vec()?, want, 5, "vector @ matrix");
    // (3, 5) @ (5,) -> (3,), through a transposed view.
    let mv = dot(&mtx.t(), &v)?;
    assert_eq!(mv.shape(), &[3]);
    let want: Vec<f64> = (0..3)
        .map(|j| (0..5).map(|l| hm2[[l, j]] * hv1[l]).sum())
        .collect();
    check(&mv.to_vec()?, want, 5, "transposed matrix . vector");
    // (5,) . (5,) -> a 0-d array; a reversed vector is copied first.
    let rev = v.slice(s![..;-1])?;
    let vv = dot(&v, &rev)?;
    assert_eq!(vv.shape(), &[] as &[usize]);
    let want: f64 = (0..5).map(|l| hv1[l] * hv1[4 - l]).sum();
    check(&vv.to_vec()?, [want], 5, "vector . reversed vector");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn shapes_and_outputs_that_do_not_fit_are_typed_errors() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let a = DeviceArray::<f32, Ix2>::zeros(&ctx, (4, 3))?;
    let b = DeviceArray::<f32, Ix2>::zeros(&ctx, (4, 5))?;
    assert!(matches!(
        matmul(&a, &b),
        Err(Error::Gemm(GemmError::ShapesDoNotMultiply { a, b })) if a == [4, 3] && b == [4, 5]
    ));
    // NumPy's N-d `dot` sums over `a`'s last axis (3) and the batch's second to last (4).
    let batch = DeviceArray::<f32, Ix3>::zeros(&ctx, (2, 4, 5))?;
    assert!(matches!(
        dot(&a, &batch),
        Err(Error::Gemm(GemmError::ShapesDoNotMultiply { .. }))
    ));
    let b = DeviceArray::<f32, Ix2>::zeros(&ctx, (3, 5))?;
    let mut wrong = DeviceArray::<f32, Ix2>::zeros(&ctx, (5, 4))?;
    assert!(matches!(
        matmul_into(&a, &b, &mut wrong),
        Err(Error::Gemm(GemmError::OutputShape { .. }))
    ));
    // An `out` of any layout is written (through a temporary): zeros times zeros.
    let mut fortran = DeviceArray::<f32, Ix2>::from_ndarray(&ctx, &Array2::from_elem((4, 5).f(), 9.0))?;
    matmul_into(&a, &b, &mut fortran)?;
    assert_eq!(fortran.to_vec()?, vec![0.0; 20]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn products_on_streams_are_ordered_with_other_work() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(31);
    let (s1, s2) = (Stream::new(&ctx)?, Stream::new(&ctx)?);
    let ha = random::<f32>(&mut rng, &[300, 200], false)
        .into_dimensionality::<Ix2>()
        .unwrap();
    let hb = random::<f32>(&mut rng, &[200, 100], false)
        .into_dimensionality::<Ix2>()
        .unwrap();
    let mut a = DeviceArray::<f32, Ix2>::zeros(&ctx, (300, 200))?;
    let b = DeviceArray::from_ndarray(&ctx, &hb)?;
    let mut c = DeviceArray::<f32, Ix2>::zeros(&ctx, (300, 100))?;
    for round in 0..5 {
        // Written on s1, multiplied on s2, read back on the legacy stream: each waits for the
        // one before through the arrays' stream records, with no synchronisation here.
        a.on_mut(&s1)
            .assign(&DeviceArray::from_ndarray(&ctx, &ha.mapv(|v| v * round as f32))?)?;
        gpuarray::on(&s2).matmul_into(&a, &b, &mut c)?;
        let want = reference(&ha.mapv(|v| v * round as f32), &hb);
        check(&c.to_vec()?, want.iter().copied(), 200, &format!("round {round}"));
        let fresh = gpuarray::on(&s1).matmul(&c.t(), &a)?;
        assert_eq!(fresh.shape(), &[100, 200]);
    }
    Ok(())
}

/// A complex element under test: its parts as `f64`, made from two `f32`s.
trait ComplexElem: MatmulElement {
    fn new(re: f32, im: f32) -> Self;
    fn parts(self) -> (f64, f64);
    /// The error allowed per term of the sum.
    const TOL: f64;
}
impl ComplexElem for Complex32 {
    fn new(re: f32, im: f32) -> Self {
        Complex32::new(re, im)
    }
    fn parts(self) -> (f64, f64) {
        (self.re as f64, self.im as f64)
    }
    const TOL: f64 = 2e-5;
}
impl ComplexElem for Complex64 {
    fn new(re: f32, im: f32) -> Self {
        Complex64::new(re as f64, im as f64)
    }
    fn parts(self) -> (f64, f64) {
        (self.re, self.im)
    }
    const TOL: f64 = 1e-12;
}

/// Complex products of random shapes (an empty `k` included), with `b` in C order, as a
/// transposed view (`CUBLAS_OP_T`: a transpose, never a conjugate) and reversed (copied), and
/// batches with a broadcast 2-D `b`, against the host's sums in `f64`.
fn complex_products<T: ComplexElem>(seed: u64) -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(seed);
    let rand = |rng: &mut Rng, shape: &[usize]| -> ArrayD<T> {
        ArrayD::from_shape_fn(IxDyn(shape), |_| {
            T::new(rng.f32() * 2.0 - 1.0, rng.f32() * 2.0 - 1.0)
        })
    };
    for round in 0..20 {
        let batch = [1, 1, 3][(rng.next_u64() % 3) as usize];
        let (m, k, n) = (
            1 + rng.next_u64() as usize % 33,
            rng.next_u64() as usize % 40,
            1 + rng.next_u64() as usize % 33,
        );
        let form = rng.next_u64() % 3;
        let ha = rand(&mut rng, &[batch, m, k]);
        // 0: b (k, n) in C order; 1: b the transpose of a stored (n, k); 2: b reversed on k.
        let hb_stored = if form == 1 {
            rand(&mut rng, &[n, k])
        } else {
            rand(&mut rng, &[k, n])
        };
        let da = DeviceArray::from_ndarray(&ctx, &ha)?;
        let db = DeviceArray::from_ndarray(&ctx, &hb_stored)?;
        let (vb, hb): (DeviceArrayView<'_, T, IxDyn>, ArrayD<T>) = match form {
            1 => (
                db.view().reversed_axes(),
                hb_stored.view().reversed_axes().to_owned(),
            ),
            2 => (
                db.slice(s![..;-1, ..])?.into_dyn(),
                hb_stored.slice(s![..;-1, ..]).to_owned().into_dyn(),
            ),
            _ => (db.view(), hb_stored.clone()),
        };
        let c = matmul(&da, &vb)?;
        assert_eq!(c.shape(), &[batch, m, n], "round {round}");
        let got = c.to_vec()?;
        for bi in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    let (mut re, mut im) = (0.0f64, 0.0f64);
                    for l in 0..k {
                        let (ar, ai) = ha[[bi, i, l]].parts();
                        let (br, bim) = hb[[l, j]].parts();
                        re += ar * br - ai * bim;
                        im += ar * bim + ai * br;
                    }
                    let (gr, gi) = got[(bi * m + i) * n + j].parts();
                    let tol = T::TOL * (k as f64 + 1.0);
                    assert!(
                        (gr - re).abs() <= tol && (gi - im).abs() <= tol,
                        "round {round} (form {form}, {batch}x{m}x{k}x{n}) at {bi},{i},{j}: ({gr}, {gi}) vs ({re}, {im})"
                    );
                }
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex64_and_complex128_products() -> gpu_runtime::Result<()> {
    complex_products::<Complex32>(41)?;
    complex_products::<Complex64>(42)
}

/// Issue 41: `[5, 3, 2] @ [2]` of `Complex64` (a batched matrix-vector product) crashed the
/// process with SIGSEGV; it must give the product.
#[test]
#[ignore = "needs a CUDA GPU"]
fn issue41_batched_matrix_vector_complex64() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4141);
    let ha = ArrayD::from_shape_fn(IxDyn(&[5, 3, 2]), |_| Complex64::new(rng.f64(), rng.f64()));
    let hb = ArrayD::from_shape_fn(IxDyn(&[2]), |_| Complex64::new(rng.f64(), rng.f64()));
    let (da, db) = (
        DeviceArray::from_ndarray(&ctx, &ha)?,
        DeviceArray::from_ndarray(&ctx, &hb)?,
    );
    let c = matmul(&da, &db)?;
    assert_eq!(c.shape(), &[5, 3]);
    let got = c.to_vec()?;
    for i in 0..5 {
        for j in 0..3 {
            let want = ha[[i, j, 0]] * hb[[0]] + ha[[i, j, 1]] * hb[[1]];
            assert!((got[i * 3 + j] - want).norm() < 1e-12, "{i},{j}");
        }
    }
    Ok(())
}

/// Issue 41: `matmul`, `matmul_into` and `dot` over every shape family NumPy's and CuPy's
/// matmul tests use, times every element type `matmul` takes, with operands in six layouts
/// (C and Fortran order, transposed, stepped, reversed, broadcast), against a host reference
/// in `f64`; and a randomized test of matmul, reductions, copies and expressions on random
/// shapes, views and element types that accepts only right values or a typed error.
mod issue41 {
    use std::panic::{catch_unwind, AssertUnwindSafe};

    use gpu_runtime::gpuarray::{
        dot, matmul, matmul_into, DeviceArray, DeviceArrayView, Element, MatmulElement, ReduceAxis,
    };
    use gpu_runtime::half::{bf16, f16};
    use gpu_runtime::ndarray::{Array, ArrayD, Axis, IxDyn, ShapeBuilder, SliceInfo, SliceInfoElem};
    use gpu_runtime::types::{Complex32, Complex64};
    use gpu_runtime::{Context, Error, GemmError};
    use gpu_suite::Rng;

    type Parts = (f64, f64);

    /// A result's shape, and for each element its value and the sum of its terms' magnitudes.
    type Expected = (Vec<usize>, Vec<(Parts, f64)>);

    /// An element type under test: random values, its value as real and imaginary parts in
    /// `f64` (exact for every type here), and its rounding.
    pub(super) trait Num: MatmulElement + std::fmt::Debug + PartialEq {
        const NAME: &'static str;
        /// The unit roundoff of the type: a result's own rounding.
        const EPS: f64;
        /// The unit roundoff of what its sums and products accumulate in (`f32` for `f16`
        /// and `bf16`).
        const ACC: f64;
        /// The type `astype` widens it to without rounding.
        type Wide: Element + std::fmt::Debug;
        fn rand(rng: &mut Rng) -> Self;
        fn parts(self) -> Parts;
        fn wide_parts(w: Self::Wide) -> Parts;
        /// The mean of every element (a real type's `mean`, a complex one's
        /// `mean_as::<Complex64>`).
        fn mean(v: &DeviceArrayView<'_, Self, IxDyn>) -> gpu_runtime::Result<Parts>;
        /// The means along `axis`, in C order.
        fn mean_axis(
            v: &DeviceArrayView<'_, Self, IxDyn>,
            axis: ReduceAxis,
        ) -> gpu_runtime::Result<Vec<Parts>>;
    }

    macro_rules! real {
        ($t:ty, $name:literal, $eps:expr, $acc:expr, $from:expr, $to:expr) => {
            impl Num for $t {
                const NAME: &'static str = $name;
                const EPS: f64 = $eps;
                const ACC: f64 = $acc;
                type Wide = f64;
                fn rand(rng: &mut Rng) -> Self {
                    ($from)(rng)
                }
                fn parts(self) -> Parts {
                    (($to)(self), 0.0)
                }
                fn wide_parts(w: f64) -> Parts {
                    (w, 0.0)
                }
                fn mean(v: &DeviceArrayView<'_, Self, IxDyn>) -> gpu_runtime::Result<Parts> {
                    Ok(v.mean()?.parts())
                }
                fn mean_axis(
                    v: &DeviceArrayView<'_, Self, IxDyn>,
                    axis: ReduceAxis,
                ) -> gpu_runtime::Result<Vec<Parts>> {
                    Ok(v.mean_axis(axis)?
                        .to_vec()?
                        .into_iter()
                        .map(|x| x.parts())
                        .collect())
                }
            }
        };
    }
    real!(f32, "f32", 6e-8, 6e-8, |r: &mut Rng| r.f32(), |x: f32| x as f64);
    real!(f64, "f64", 1.2e-16, 1.2e-16, |r: &mut Rng| r.f64(), |x: f64| x);
    real!(
        f16,
        "f16",
        4.9e-4,
        6e-8,
        |r: &mut Rng| f16::from_f32(r.f32()),
        |x: f16| x.to_f64()
    );
    real!(
        bf16,
        "bf16",
        3.9e-3,
        6e-8,
        |r: &mut Rng| bf16::from_f32(r.f32()),
        |x: bf16| x.to_f64()
    );

    macro_rules! complex {
        ($t:ty, $name:literal, $eps:expr, $part:ty) => {
            impl Num for $t {
                const NAME: &'static str = $name;
                const EPS: f64 = $eps;
                const ACC: f64 = $eps;
                type Wide = Complex64;
                fn rand(rng: &mut Rng) -> Self {
                    <$t>::new(rng.f64() as $part, rng.f64() as $part)
                }
                fn parts(self) -> Parts {
                    (self.re as f64, self.im as f64)
                }
                fn wide_parts(w: Complex64) -> Parts {
                    (w.re, w.im)
                }
                fn mean(v: &DeviceArrayView<'_, Self, IxDyn>) -> gpu_runtime::Result<Parts> {
                    let m = v.mean_as::<Complex64>()?;
                    Ok((m.re, m.im))
                }
                fn mean_axis(
                    v: &DeviceArrayView<'_, Self, IxDyn>,
                    axis: ReduceAxis,
                ) -> gpu_runtime::Result<Vec<Parts>> {
                    let m = v.mean_axis_as::<Complex64>(axis)?;
                    Ok(m.to_vec()?.into_iter().map(|z| (z.re, z.im)).collect())
                }
            }
        };
    }
    complex!(Complex32, "Complex32", 6e-8, f32);
    complex!(Complex64, "Complex64", 1.2e-16, f64);

    fn mul(a: Parts, b: Parts) -> Parts {
        (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
    }

    fn abs(a: Parts) -> f64 {
        a.0.hypot(a.1)
    }

    /// Whether `got` is within `tol` of `want` in both parts.
    fn close(got: Parts, want: Parts, tol: f64) -> bool {
        (got.0 - want.0).abs() <= tol && (got.1 - want.1).abs() <= tol
    }

    fn random_array<T: Num>(rng: &mut Rng, shape: &[usize], fortran: bool) -> ArrayD<T> {
        let n = shape.iter().product();
        let data: Vec<T> = (0..n).map(|_| T::rand(rng)).collect();
        if fortran {
            Array::from_shape_vec(IxDyn(shape).f(), data)
        } else {
            Array::from_shape_vec(IxDyn(shape), data)
        }
        .expect("the shape holds the data")
    }

    /// How a device operand is viewed.
    enum How {
        Plain,
        Permuted(Vec<usize>),
        Sliced(SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn>),
        Broadcast(Vec<usize>),
    }

    /// A device array and the view of it an operand is.
    pub(super) struct Stored<T: Num> {
        dev: DeviceArray<T, IxDyn>,
        how: How,
    }

    impl<T: Num> Stored<T> {
        fn view(&self) -> gpu_runtime::Result<DeviceArrayView<'_, T, IxDyn>> {
            match &self.how {
                How::Plain => Ok(self.dev.view()),
                How::Permuted(p) => self.dev.view().permuted_axes(p),
                How::Sliced(info) => self.dev.slice(info),
                How::Broadcast(shape) => self.dev.broadcast_to(shape),
            }
        }
    }

    /// The number of recipes [`make`] knows.
    const RECIPES: u64 = 6;

    /// A device operand of logical shape `shape` by `recipe`, and its values on the host:
    /// 0 C order; 1 Fortran order; 2 a permuted view of a C-order array (the last two axes
    /// swapped, or with `random` any permutation); 3 a view with steps (every other element of
    /// the last axis, or with `random` steps of -2 to 3 on every axis from an offset); 4 the
    /// first axis reversed; 5 broadcast (the first axis, or with `random` any axes, from
    /// length 1, or with `random` leading axes added).
    fn make<T: Num>(
        ctx: &Context,
        rng: &mut Rng,
        shape: &[usize],
        recipe: u64,
        random: bool,
    ) -> gpu_runtime::Result<(Stored<T>, ArrayD<T>)> {
        let n = shape.len();
        let upload = |host: &ArrayD<T>, how: How| -> gpu_runtime::Result<Stored<T>> {
            Ok(Stored {
                dev: DeviceArray::from_ndarray(ctx, host)?,
                how,
            })
        };
        match recipe {
            1 => {
                let host = random_array::<T>(rng, shape, true);
                Ok((upload(&host, How::Plain)?, host))
            }
            2 if n >= 2 => {
                let mut perm: Vec<usize> = (0..n).collect();
                if random {
                    for i in (1..n).rev() {
                        perm.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
                    }
                } else {
                    perm.swap(n - 2, n - 1);
                }
                let mut stored_shape = vec![0; n];
                for (j, &p) in perm.iter().enumerate() {
                    stored_shape[p] = shape[j];
                }
                let stored = random_array::<T>(rng, &stored_shape, false);
                let host = stored.view().permuted_axes(IxDyn(&perm)).to_owned();
                Ok((upload(&stored, How::Permuted(perm))?, host))
            }
            3 | 4 if n >= 1 => {
                let mut stored_shape = Vec::with_capacity(n);
                let elems: Vec<SliceInfoElem> = (0..n)
                    .map(|ax| {
                        let step: isize = match (recipe, random) {
                            (4, _) if ax == 0 => -1,
                            (4, _) => 1,
                            (_, true) => [1, 2, 3, -1, -2][(rng.next_u64() % 5) as usize],
                            (_, false) if ax + 1 == n => 2,
                            (_, false) => 1,
                        };
                        let front = if random { (rng.next_u64() % 2) as usize } else { 0 };
                        let len = shape[ax];
                        let span = if len == 0 {
                            0
                        } else {
                            (len - 1) * step.unsigned_abs() + 1
                        };
                        stored_shape
                            .push(front + span + if random { (rng.next_u64() % 2) as usize } else { 0 });
                        SliceInfoElem::Slice {
                            start: front as isize,
                            end: Some((front + span) as isize),
                            step,
                        }
                    })
                    .collect();
                let info = SliceInfo::try_from(elems).expect("a slice of every axis");
                let stored = random_array::<T>(rng, &stored_shape, false);
                let host = stored.slice(&info).to_owned();
                assert_eq!(host.shape(), shape, "the recipe's slice");
                Ok((upload(&stored, How::Sliced(info))?, host))
            }
            5 if n >= 1 => {
                let drop = if random {
                    (rng.next_u64() % (n as u64 + 1)) as usize
                } else {
                    0
                };
                let base_shape: Vec<usize> = (drop..n)
                    .map(|ax| {
                        let one = if random {
                            rng.next_u64().is_multiple_of(2)
                        } else {
                            ax == 0 && shape[ax] > 0
                        };
                        if one {
                            1
                        } else {
                            shape[ax]
                        }
                    })
                    .collect();
                let base = random_array::<T>(rng, &base_shape, false);
                let host = base.broadcast(IxDyn(shape)).expect("broadcasts").to_owned();
                Ok((upload(&base, How::Broadcast(shape.to_vec()))?, host))
            }
            _ => {
                let host = random_array::<T>(rng, shape, false);
                Ok((upload(&host, How::Plain)?, host))
            }
        }
    }

    /// The shape of NumPy's `matmul` of any number of axes (batch axes broadcast), or `None`
    /// where NumPy raises.
    fn numpy_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
        if a.is_empty() || b.is_empty() {
            return None;
        }
        let a2: Vec<usize> = if a.len() == 1 { vec![1, a[0]] } else { a.to_vec() };
        let b2: Vec<usize> = if b.len() == 1 { vec![b[0], 1] } else { b.to_vec() };
        let (ra, rb) = (a2.len() - 2, b2.len() - 2);
        if a2[ra + 1] != b2[rb] {
            return None;
        }
        let nb = ra.max(rb);
        let mut shape = Vec::new();
        for i in 0..nb {
            let da = if i + ra >= nb { a2[i + ra - nb] } else { 1 };
            let db = if i + rb >= nb { b2[i + rb - nb] } else { 1 };
            shape.push(match (da, db) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => return None,
            });
        }
        if a.len() > 1 {
            shape.push(a2[ra]);
        }
        if b.len() > 1 {
            shape.push(b2[rb + 1]);
        }
        Some(shape)
    }

    /// NumPy's `a @ b` of operands of any number of axes in `f64` (batch axes broadcast): the
    /// result's shape, and for each element (C order) its value and the sum of the magnitudes
    /// of its terms (what its rounding error scales with); `None` where NumPy refuses.
    fn reference<T: Num>(a: &ArrayD<T>, b: &ArrayD<T>) -> Option<Expected> {
        let shape = numpy_shape(a.shape(), b.shape())?;
        let a2: Vec<usize> = if a.ndim() == 1 {
            vec![1, a.len()]
        } else {
            a.shape().to_vec()
        };
        let b2: Vec<usize> = if b.ndim() == 1 {
            vec![b.len(), 1]
        } else {
            b.shape().to_vec()
        };
        let (ra, rb) = (a2.len() - 2, b2.len() - 2);
        let nbt = ra.max(rb);
        // Axis `i` of the broadcast batch, in an operand with `r` batch axes of `dims`.
        let own = |dims: &[usize], r: usize, i: usize| (i + r >= nbt).then(|| dims[i + r - nbt]);
        let batch: Vec<usize> = (0..nbt)
            .map(|i| match (own(&a2, ra, i), own(&b2, rb, i)) {
                (Some(x), Some(1)) | (Some(x), None) => x,
                (_, Some(y)) => y,
                (None, None) => 1,
            })
            .collect();
        let (a_c, b_c) = (a.as_standard_layout(), b.as_standard_layout());
        let (av, bv) = (
            a_c.view().into_shape_with_order(IxDyn(&a2)).expect("C order"),
            b_c.view().into_shape_with_order(IxDyn(&b2)).expect("C order"),
        );
        let (m, k, n) = (a2[ra], a2[ra + 1], b2[rb + 1]);
        let count: usize = batch.iter().product();
        let mut out = Vec::with_capacity(count * m * n);
        for t in 0..count {
            let mut idx = vec![0; nbt];
            let mut rest = t;
            for i in (0..nbt).rev() {
                idx[i] = rest % batch[i];
                rest /= batch[i];
            }
            // The operand's own batch index: its axes of length 1 broadcast.
            let at = |dims: &[usize], r: usize| -> Vec<usize> {
                (0..r)
                    .map(|j| if dims[j] == 1 { 0 } else { idx[j + nbt - r] })
                    .collect()
            };
            let (ia, ib) = (at(&a2, ra), at(&b2, rb));
            for i in 0..m {
                for j in 0..n {
                    let (mut v, mut s) = ((0.0, 0.0), 0.0);
                    for l in 0..k {
                        let mut xa = ia.clone();
                        xa.extend([i, l]);
                        let mut xb = ib.clone();
                        xb.extend([l, j]);
                        let (x, y) = (av[IxDyn(&xa)].parts(), bv[IxDyn(&xb)].parts());
                        let p = mul(x, y);
                        v = (v.0 + p.0, v.1 + p.1);
                        s += abs(x) * abs(y);
                    }
                    out.push((v, s));
                }
            }
        }
        Some((shape, out))
    }

    /// NumPy's `dot(a, b)` in `f64`, as [`reference`] gives `matmul`'s: a 0-d operand scales the
    /// other; up to 2 axes each, or a 1-D `b`, `matmul`'s; otherwise the sum product over `a`'s
    /// last axis and `b`'s second to last, of shape `a[:-1] + b[:-2] + b[-1:]` (`a` as rows
    /// `(M, k)` times `b` moved to `(k, P)`).
    fn dot_reference<T: Num>(a: &ArrayD<T>, b: &ArrayD<T>) -> Option<Expected> {
        if a.ndim() == 0 || b.ndim() == 0 {
            let (x, c) = if a.ndim() == 0 { (b, a) } else { (a, b) };
            let c = c.iter().next().expect("0-d").parts();
            let out = x
                .as_standard_layout()
                .iter()
                .map(|e| (mul(e.parts(), c), abs(e.parts()) * abs(c)))
                .collect();
            return Some((x.shape().to_vec(), out));
        }
        if a.ndim() <= 2 && b.ndim() <= 2 || b.ndim() == 1 {
            return reference(a, b);
        }
        let (na, nb) = (a.ndim(), b.ndim());
        let k = a.shape()[na - 1];
        if b.shape()[nb - 2] != k {
            return None;
        }
        let rows = if na == 1 {
            a.as_standard_layout().to_owned()
        } else {
            let m: usize = a.shape()[..na - 1].iter().product();
            a.as_standard_layout()
                .to_owned()
                .into_shape_with_order(IxDyn(&[m, k]))
                .expect("C order")
        };
        let mut order = vec![nb - 2];
        order.extend(0..nb - 2);
        order.push(nb - 1);
        let moved = b
            .view()
            .permuted_axes(IxDyn(&order))
            .as_standard_layout()
            .to_owned();
        // Not `b.len() / k`: with `k = 0` the columns are still there.
        let cols: usize = moved.shape()[1..].iter().product();
        let moved = moved.into_shape_with_order(IxDyn(&[k, cols])).expect("C order");
        let (_, values) = reference(&rows, &moved)?;
        let mut shape = a.shape()[..na - 1].to_vec();
        shape.extend_from_slice(&b.shape()[..nb - 2]);
        shape.push(b.shape()[nb - 1]);
        Some((shape, values))
    }

    /// The tolerance of a sum of `terms` terms whose magnitudes add up to `s`, of value `w`.
    fn tolerance<T: Num>(terms: usize, s: f64, w: f64) -> f64 {
        4.0 * (terms as f64 + 1.0) * T::ACC * s + 2.0 * T::EPS * w + 1e-300
    }

    /// The first element where `got` is not within tolerance of `want`, described.
    fn mismatch<T: Num>(got: &[T], want: &[(Parts, f64)], terms: usize) -> Option<String> {
        if got.len() != want.len() {
            return Some(format!("{} elements, want {}", got.len(), want.len()));
        }
        got.iter().zip(want).enumerate().find_map(|(i, (g, &(w, s)))| {
            let tol = tolerance::<T>(terms, s, abs(w));
            (!close(g.parts(), w, tol))
                .then(|| format!("element {i}: {:?} vs {w:?} (tolerance {tol:e})", g.parts()))
        })
    }

    fn refused<R>(r: &gpu_runtime::Result<R>) -> bool {
        matches!(r, Err(Error::Gemm(GemmError::ShapesDoNotMultiply { .. })))
    }

    /// The shape pairs of NumPy's and CuPy's matmul tests: vector and matrix on either side,
    /// batches, a batch of one and a 2-D operand broadcast, empty rows, columns, inner and
    /// batch axes, and shapes `matmul` refuses (not multiplying, 0-d, more than 3 axes).
    pub(super) const FAMILIES: &[(&[usize], &[usize])] = &[
        // 1-D x 1-D
        (&[3], &[3]),
        (&[1], &[1]),
        (&[0], &[0]),
        (&[17], &[17]),
        // 1-D x 2-D, 2-D x 1-D
        (&[3], &[3, 4]),
        (&[0], &[0, 4]),
        (&[3], &[3, 0]),
        (&[4, 3], &[3]),
        (&[0, 3], &[3]),
        (&[4, 0], &[0]),
        (&[1, 1], &[1]),
        // 2-D x 2-D
        (&[4, 3], &[3, 5]),
        (&[1, 1], &[1, 1]),
        (&[1, 7], &[7, 1]),
        (&[7, 1], &[1, 7]),
        (&[0, 3], &[3, 5]),
        (&[4, 0], &[0, 5]),
        (&[4, 3], &[3, 0]),
        (&[33, 20], &[20, 65]),
        // batched x 1-D, 1-D x batched
        (&[5, 3, 2], &[2]),
        (&[2, 4, 3], &[3]),
        (&[0, 4, 3], &[3]),
        (&[3, 0, 2], &[2]),
        (&[3, 2, 0], &[0]),
        (&[2], &[5, 2, 3]),
        (&[3], &[2, 3, 1]),
        (&[0], &[2, 0, 4]),
        // batched x batched, broadcast batches, batches of one
        (&[5, 3, 2], &[5, 2, 4]),
        (&[2, 4, 3], &[2, 3, 5]),
        (&[1, 3, 4], &[5, 4, 2]),
        (&[5, 3, 4], &[1, 4, 2]),
        (&[1, 3, 4], &[1, 4, 2]),
        (&[1, 1, 1], &[1, 1, 1]),
        (&[0, 3, 4], &[0, 4, 2]),
        (&[0, 3, 4], &[1, 4, 2]),
        (&[3, 1, 4], &[3, 4, 1]),
        // batched x 2-D, 2-D x batched
        (&[5, 3, 2], &[2, 4]),
        (&[3, 2], &[5, 2, 4]),
        (&[1, 3, 4], &[4, 2]),
        (&[4, 0, 3], &[3, 2]),
        // refused by matmul: inner lengths differ, batches differ, 0-d (dot takes 0-d, and
        // (2, 3, 4) with (3, 4, 5)); then more than 3 axes, which both take
        (&[3], &[4]),
        (&[4, 3], &[4, 5]),
        (&[2, 3, 4], &[3, 4, 5]),
        (&[5, 3, 2], &[3]),
        (&[], &[3]),
        (&[3, 4], &[]),
        (&[2, 1, 3, 4], &[5, 4, 2]),
        (&[2, 3], &[4, 1, 3, 2]),
    ];

    /// Every family in every pair of recipes, through `matmul`, `matmul_into` and `dot`.
    pub(super) fn families<T: Num>(seed: u64) -> gpu_runtime::Result<()> {
        let ctx = Context::default()?;
        let mut rng = Rng::new(seed);
        let (mut computed, mut refusals) = (0, 0);
        for &(sa, sb) in FAMILIES {
            for ra in 0..RECIPES {
                for rb in 0..RECIPES {
                    let (xa, ha) = make::<T>(&ctx, &mut rng, sa, ra, false)?;
                    let (xb, hb) = make::<T>(&ctx, &mut rng, sb, rb, false)?;
                    let (va, vb) = (xa.view()?, xb.view()?);
                    let what = format!("{}: {sa:?} (recipe {ra}) @ {sb:?} (recipe {rb})", T::NAME);
                    let note = |e: Error| {
                        eprintln!("{what}: {e}");
                        e
                    };
                    // `dot` first: NumPy's takes shapes `matmul` refuses (0-d, N-d).
                    match dot_reference(&ha, &hb) {
                        Some((shape, want)) => {
                            let d = dot(&va, &vb).map_err(note)?;
                            assert_eq!(d.shape(), shape.as_slice(), "{what}, dot");
                            let terms = sa.last().copied().unwrap_or(1);
                            if let Some(m) = mismatch(&d.to_vec()?, &want, terms) {
                                panic!("{what}, dot: {m}");
                            }
                        }
                        None => assert!(refused(&dot(&va, &vb)), "{what}: dot not refused"),
                    }
                    let Some((shape, want)) = reference(&ha, &hb) else {
                        assert!(refused(&matmul(&va, &vb)), "{what}: not refused");
                        refusals += 1;
                        continue;
                    };
                    let k = sa[sa.len() - 1];
                    let c = matmul(&va, &vb).map_err(note)?;
                    assert_eq!(c.shape(), shape.as_slice(), "{what}");
                    assert!(c.is_standard_layout(), "{what}");
                    if let Some(m) = mismatch(&c.to_vec()?, &want, k) {
                        panic!("{what}: {m}");
                    }
                    let fill = ArrayD::from_elem(IxDyn(&shape), T::rand(&mut rng));
                    let mut into = DeviceArray::<T, IxDyn>::from_ndarray(&ctx, &fill)?;
                    matmul_into(&va, &vb, &mut into).map_err(note)?;
                    if let Some(m) = mismatch(&into.to_vec()?, &want, k) {
                        panic!("{what}, into: {m}");
                    }
                    // The operands are unchanged.
                    assert_eq!(va.to_ndarray()?, ha, "{what}: a changed");
                    assert_eq!(vb.to_ndarray()?, hb, "{what}: b changed");
                    computed += 1;
                }
            }
        }
        let per = (RECIPES * RECIPES) as usize;
        assert_eq!(computed + refusals, FAMILIES.len() * per);
        assert_eq!(refusals, 6 * per);
        Ok(())
    }

    /// The operations of the randomized test.
    #[derive(Debug, Clone, Copy)]
    enum Op {
        Matmul,
        Sum,
        Max,
        Min,
        Mean,
        Copy,
        ToContiguous,
        Astype,
        Expression,
    }
    const OPS: [Op; 9] = [
        Op::Matmul,
        Op::Sum,
        Op::Max,
        Op::Min,
        Op::Mean,
        Op::Copy,
        Op::ToContiguous,
        Op::Astype,
        Op::Expression,
    ];

    /// A random shape of up to 4 axes: mostly short, some of length 0 or 1, now and then one
    /// long axis.
    fn random_shape(rng: &mut Rng, ndim: usize) -> Vec<usize> {
        (0..ndim)
            .map(|_| match rng.next_u64() % 14 {
                0 => 0,
                1 | 2 => 1,
                3 => 17 + (rng.next_u64() % 40) as usize,
                _ => 2 + (rng.next_u64() % 5) as usize,
            })
            .collect()
    }

    /// What one case found wrong (values, or an `Ok` where only an error is right); `Ok(())`
    /// with nothing pushed is a pass, `Err` a typed error the caller counts.
    type Found = Vec<String>;

    /// One random case of `op` on `T`: random shapes and views; values checked against the
    /// host, errors checked where one is the only right answer.
    fn case<T: Num>(ctx: &Context, rng: &mut Rng, op: Op, found: &mut Found) -> gpu_runtime::Result<()> {
        let ndim = (rng.next_u64() % 5) as usize;
        let shape = random_shape(rng, ndim);
        let recipe = rng.next_u64() % RECIPES;
        if let Op::Matmul = op {
            return matmul_case::<T>(ctx, rng, found);
        }
        let (x, hx) = make::<T>(ctx, rng, &shape, recipe, true)?;
        let v = x.view()?;
        let what = format!(
            "{} {op:?} of {shape:?} (recipe {recipe}, strides {:?})",
            T::NAME,
            v.strides()
        );
        let parts = hx.map(|x| x.parts());
        // An axis to reduce along: now and then one past the last (an error).
        let axis = (rng.next_u64() % (ndim as u64 + 1)) as usize;
        let keep = rng.next_u64().is_multiple_of(2);
        let along = if keep {
            ReduceAxis::keepdims(axis)
        } else {
            ReduceAxis::new(axis)
        };
        let whole = rng.next_u64().is_multiple_of(2);
        // The lanes along `axis` in C order of the other axes, each as its values.
        let lanes =
            || -> Vec<Vec<Parts>> { parts.lanes(Axis(axis)).into_iter().map(|l| l.to_vec()).collect() };
        let sum_of = |l: &[Parts]| -> (Parts, f64) {
            let v = l.iter().fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
            (v, l.iter().map(|&x| abs(x)).sum())
        };
        let reduced_shape = || -> Vec<usize> {
            let mut s = shape.clone();
            if keep {
                s[axis] = 1;
            } else {
                s.remove(axis);
            }
            s
        };
        match op {
            Op::Matmul => unreachable!("above"),
            Op::Sum if whole => {
                let got = v.sum()?;
                let all: Vec<Parts> = parts.iter().copied().collect();
                let (w, s) = sum_of(&all);
                if !close(got.parts(), w, tolerance::<T>(all.len(), s, abs(w))) {
                    found.push(format!("{what}: sum {:?}, want {w:?}", got.parts()));
                }
            }
            Op::Sum => {
                if axis >= ndim {
                    if v.sum_axis(along).is_ok() {
                        found.push(format!("{what}: sum along axis {axis} is Ok"));
                    }
                    return Ok(());
                }
                let got = v.sum_axis(along)?;
                if got.shape() != reduced_shape().as_slice() {
                    found.push(format!("{what}: sum along {axis} has shape {:?}", got.shape()));
                    return Ok(());
                }
                let n = shape[axis];
                let want: Vec<(Parts, f64)> = lanes().iter().map(|l| sum_of(l)).collect();
                if let Some(m) = mismatch(&got.to_vec()?, &want, n) {
                    found.push(format!("{what}: sum along {axis}: {m}"));
                }
            }
            Op::Max | Op::Min => {
                let is_max = matches!(op, Op::Max);
                // NumPy orders complex numbers lexicographically (real part, then imaginary);
                // a real element's imaginary part is 0, so one rule serves both.
                let pick = |l: &[Parts]| -> Parts {
                    let better = |a: Parts, b: Parts| if is_max { b > a } else { b < a };
                    l.iter()
                        .copied()
                        .reduce(|a, b| if better(a, b) { b } else { a })
                        .unwrap_or((f64::NAN, 0.0))
                };
                if whole {
                    let got = if is_max { v.max() } else { v.min() };
                    if parts.is_empty() {
                        if got.is_ok() {
                            found.push(format!("{what}: Ok where empty"));
                        }
                        return Ok(());
                    }
                    let all: Vec<Parts> = parts.iter().copied().collect();
                    let got = got?;
                    if got.parts() != pick(&all) {
                        found.push(format!("{what}: {:?}, want {:?}", got.parts(), pick(&all)));
                    }
                } else {
                    let got = if is_max {
                        v.max_axis(along)
                    } else {
                        v.min_axis(along)
                    };
                    if axis >= ndim || shape[axis] == 0 {
                        if got.is_ok() {
                            found.push(format!("{what}: Ok along {axis} (no such axis or empty)"));
                        }
                        return Ok(());
                    }
                    let got = got?;
                    let want: Vec<Parts> = lanes().iter().map(|l| pick(l)).collect();
                    let got: Vec<Parts> = got.to_vec()?.into_iter().map(|g| g.parts()).collect();
                    if got != want {
                        found.push(format!("{what}: along {axis}: {got:?}, want {want:?}"));
                    }
                }
            }
            Op::Mean => {
                let mean_of = |l: &[Parts]| -> (Parts, f64) {
                    let ((re, im), s) = sum_of(l);
                    let n = l.len() as f64;
                    ((re / n, im / n), s / n)
                };
                let ok = |got: Parts, (w, s): (Parts, f64), n: usize| {
                    if n == 0 {
                        // NumPy's mean of nothing is NaN.
                        got.0.is_nan()
                    } else {
                        close(got, w, tolerance::<T>(n, s, abs(w)))
                    }
                };
                if whole {
                    let got = T::mean(&v)?;
                    let all: Vec<Parts> = parts.iter().copied().collect();
                    if !ok(got, mean_of(&all), all.len()) {
                        found.push(format!("{what}: mean {got:?}, want {:?}", mean_of(&all)));
                    }
                } else {
                    if axis >= ndim {
                        if T::mean_axis(&v, along).is_ok() {
                            found.push(format!("{what}: mean along axis {axis} is Ok"));
                        }
                        return Ok(());
                    }
                    let got = T::mean_axis(&v, along)?;
                    let want: Vec<(Parts, f64)> = lanes().iter().map(|l| mean_of(l)).collect();
                    if got.len() != want.len() {
                        found.push(format!("{what}: {} means, want {}", got.len(), want.len()));
                    } else if let Some(i) = (0..got.len()).find(|&i| !ok(got[i], want[i], shape[axis])) {
                        found.push(format!(
                            "{what}: mean {i} along {axis}: {:?}, want {:?}",
                            got[i], want[i]
                        ));
                    }
                }
            }
            Op::Copy | Op::ToContiguous => {
                let got = if let Op::Copy = op {
                    v.copy()?
                } else {
                    v.to_contiguous()?
                };
                if let Op::ToContiguous = op {
                    if !got.is_standard_layout() {
                        found.push(format!("{what}: to_contiguous has strides {:?}", got.strides()));
                    }
                }
                if got.to_ndarray()? != hx {
                    found.push(format!("{what}: the copy differs"));
                }
            }
            Op::Astype => {
                let wide = v.astype::<T::Wide>()?;
                let same = v.astype::<T>()?;
                let got: Vec<Parts> = wide.to_ndarray()?.iter().map(|&w| T::wide_parts(w)).collect();
                let want: Vec<Parts> = parts.iter().copied().collect();
                if got != want {
                    found.push(format!("{what}: astype to the wide type differs"));
                }
                if same.to_ndarray()? != hx {
                    found.push(format!("{what}: astype to itself differs"));
                }
            }
            Op::Expression => {
                // y of a shape that broadcasts to x's (or, now and then, one that does not).
                let drop = (rng.next_u64() % (ndim as u64 + 1)) as usize;
                let mut y_shape: Vec<usize> = shape[drop..]
                    .iter()
                    .map(|&d| if rng.next_u64().is_multiple_of(3) { 1 } else { d })
                    .collect();
                let clash = !y_shape.is_empty() && rng.next_u64().is_multiple_of(8) && shape[drop] > 1;
                if clash {
                    y_shape[0] = shape[drop] + 1;
                }
                let y_recipe = rng.next_u64() % RECIPES;
                let (y, hy) = make::<T>(ctx, rng, &y_shape, y_recipe, true)?;
                let vy = y.view()?;
                let got = ((&v + &vy) * &v - &vy).eval();
                if clash {
                    if got.is_ok() {
                        found.push(format!("{what}: Ok with y of shape {y_shape:?}"));
                    }
                    return Ok(());
                }
                let got = got?;
                let hy = hy.broadcast(IxDyn(&shape)).expect("broadcasts").to_owned();
                if got.shape() != shape.as_slice() {
                    found.push(format!("{what}: expression of shape {:?}", got.shape()));
                    return Ok(());
                }
                let got = got.to_vec()?;
                for (i, ((g, &x), &y)) in got.iter().zip(hx.iter()).zip(hy.iter()).enumerate() {
                    let (x, y) = (x.parts(), y.parts());
                    let s = (x.0 + y.0, x.1 + y.1);
                    let p = mul(s, x);
                    let w = (p.0 - y.0, p.1 - y.1);
                    let scale = 1.0 + abs(x) + abs(y);
                    if !close(g.parts(), w, 8.0 * T::EPS * scale * scale) {
                        found.push(format!("{what}: element {i}: {:?}, want {w:?}", g.parts()));
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// A random product: shapes of the families (and now and then of 4 axes, which NumPy's
    /// batch broadcasting takes too, or not multiplying) in random views.
    fn matmul_case<T: Num>(ctx: &Context, rng: &mut Rng, found: &mut Found) -> gpu_runtime::Result<()> {
        let nd = |rng: &mut Rng| match rng.next_u64() % 16 {
            0 => 0,
            1 => 4,
            x => 1 + (x % 3) as usize,
        };
        let (na, nb) = (nd(rng), nd(rng));
        let sa = random_shape(rng, na);
        let mut sb = random_shape(rng, nb);
        if na > 0 && nb > 0 && !rng.next_u64().is_multiple_of(6) {
            // Mostly shapes that multiply: the inner lengths and the batches agree.
            sb[if nb == 1 { 0 } else { nb - 2 }] = sa[na - 1];
            if na >= 3 && nb >= 3 {
                sb[nb - 3] = if rng.next_u64().is_multiple_of(4) {
                    1
                } else {
                    sa[na - 3]
                };
            }
        }
        let (ra, rb) = (rng.next_u64() % RECIPES, rng.next_u64() % RECIPES);
        let (xa, ha) = make::<T>(ctx, rng, &sa, ra, true)?;
        let (xb, hb) = make::<T>(ctx, rng, &sb, rb, true)?;
        let (va, vb) = (xa.view()?, xb.view()?);
        let what = format!(
            "{} matmul {sa:?} (strides {:?}) @ {sb:?} (strides {:?})",
            T::NAME,
            va.strides(),
            vb.strides()
        );
        let got = matmul(&va, &vb);
        let Some((shape, want)) = reference(&ha, &hb) else {
            if !refused(&got) {
                found.push(format!("{what}: not refused"));
            }
            return Ok(());
        };
        let got = got?;
        if got.shape() != shape.as_slice() {
            found.push(format!("{what}: shape {:?}, want {shape:?}", got.shape()));
        } else if let Some(m) = mismatch(&got.to_vec()?, &want, sa[na - 1]) {
            found.push(format!("{what}: {m}"));
        }
        Ok(())
    }

    /// `cases` random cases with a fixed seed, each run under `catch_unwind`: a panic fails
    /// the test, as does a value that differs from the host's or an `Ok` where only an error
    /// is right; a typed error is accepted (and printed), as long as most cases compute.
    pub(super) fn randomized(seed: u64, cases: usize) {
        let ctx = Context::default().expect("a GPU");
        let mut rng = Rng::new(seed);
        let (mut computed, mut errors, mut failures) = (0usize, Vec::new(), Vec::new());
        for i in 0..cases {
            let op = OPS[(rng.next_u64() % OPS.len() as u64) as usize];
            let dtype = rng.next_u64() % 6;
            let mut found = Found::new();
            let outcome = catch_unwind(AssertUnwindSafe(|| match dtype {
                0 => case::<f32>(&ctx, &mut rng, op, &mut found),
                1 => case::<f64>(&ctx, &mut rng, op, &mut found),
                2 => case::<f16>(&ctx, &mut rng, op, &mut found),
                3 => case::<bf16>(&ctx, &mut rng, op, &mut found),
                4 => case::<Complex32>(&ctx, &mut rng, op, &mut found),
                _ => case::<Complex64>(&ctx, &mut rng, op, &mut found),
            }));
            match outcome {
                Err(panic) => {
                    let msg = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    failures.push(format!("case {i} ({op:?}, dtype {dtype}): panicked: {msg}"));
                }
                Ok(Err(e)) => errors.push(format!("case {i} ({op:?}, dtype {dtype}): {e}")),
                Ok(Ok(())) => computed += 1,
            }
            failures.extend(found.into_iter().map(|f| format!("case {i}: {f}")));
        }
        for e in &errors {
            eprintln!("typed error: {e}");
        }
        assert!(
            failures.is_empty(),
            "{} failures:\n{}",
            failures.len(),
            failures.join("\n")
        );
        assert!(
            computed * 10 >= cases * 8,
            "only {computed} of {cases} cases computed; errors:\n{}",
            errors.join("\n")
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn issue41_families_f32() -> gpu_runtime::Result<()> {
    issue41::families::<f32>(4101)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn issue41_families_f64() -> gpu_runtime::Result<()> {
    issue41::families::<f64>(4102)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn issue41_families_f16() -> gpu_runtime::Result<()> {
    issue41::families::<f16>(4103)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn issue41_families_bf16() -> gpu_runtime::Result<()> {
    issue41::families::<bf16>(4104)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn issue41_families_complex32() -> gpu_runtime::Result<()> {
    issue41::families::<Complex32>(4105)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn issue41_families_complex64() -> gpu_runtime::Result<()> {
    issue41::families::<Complex64>(4106)
}

/// Matmul, reductions, copies and expressions on random shapes, views and element types
/// (fixed seed): right values or a typed error, never a panic.
#[test]
#[ignore = "needs a CUDA GPU"]
fn issue41_randomized_ops_give_right_values_or_typed_errors() {
    issue41::randomized(41, 600);
}
