//! `gpuarray::matmul`, `matmul_into`, `dot` through cuBLAS on a GPU (the `cublas` feature),
//! each compared with a CPU reference (in `f64`) on random data: random shapes including
//! `1 x k`, `k x 1` and an empty `k`; operands in C order, Fortran order, transposed views,
//! stepped and reversed views and column slices; batches with a broadcast operand; every
//! element type (`f16` and `bf16` with loose tolerances).
//!
//! `cargo test --features cublas --test array_matmul_gpu -- --ignored`

use gpu_runtime::gpuarray::{
    dot, matmul, matmul_into, matmul_into_on, matmul_on, DeviceArray, DeviceArrayView, MatmulElement,
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
    let batch = DeviceArray::<f32, Ix3>::zeros(&ctx, (2, 3, 5))?;
    assert!(dot(&a, &batch).is_err());
    let b = DeviceArray::<f32, Ix2>::zeros(&ctx, (3, 5))?;
    let mut wrong = DeviceArray::<f32, Ix2>::zeros(&ctx, (5, 4))?;
    assert!(matches!(
        matmul_into(&a, &b, &mut wrong),
        Err(Error::Gemm(GemmError::OutputShape { .. }))
    ));
    let mut fortran = DeviceArray::<f32, Ix2>::zeros(&ctx, (4, 5).f())?;
    assert!(matches!(
        matmul_into(&a, &b, &mut fortran),
        Err(Error::Gemm(GemmError::OutputLayout { .. }))
    ));
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
        a.assign_on(
            &s1,
            &DeviceArray::from_ndarray(&ctx, &ha.mapv(|v| v * round as f32))?,
        )?;
        matmul_into_on(&s2, &a, &b, &mut c)?;
        let want = reference(&ha.mapv(|v| v * round as f32), &hb);
        check(&c.to_vec()?, want.iter().copied(), 200, &format!("round {round}"));
        let fresh = matmul_on(&s1, &c.t(), &a)?;
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
