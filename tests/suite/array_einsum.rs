//! `einsum`, `tensordot`, `tensordot_axes` and `kron` on a GPU against a naive host einsum
//! written here from NumPy's definition (each label's length, `...` broadcast from the right,
//! length-1 axes broadcast, NumPy's implicit output; every combination of the labels summed),
//! anchored by values NumPy 2.4 printed: CuPy's einsum cases (products, traces, diagonals,
//! transposes, outer and inner products, batches, three operands, uppercase labels, 0-d
//! operands, empty axes) on random data of `f64`, `f32`, `f16` (summed in `float`, rounded
//! once), wrapping `i32`, `i8` and `u8`, `bool` (or of ands) and complex `f64`, with
//! transposed, stepped and reversed views as operands, and the refusals. Also `divmod` (NumPy's
//! floor division and remainder, integer division by zero giving 0), `broadcast_arrays`, and
//! `may_share_memory`/`shares_memory` of views of one array against the flat indices the same
//! views of a host array hold.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use gpu_runtime::gpuarray::{self, math, Bool, DeviceArray, DeviceArrayView, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{s, Array2, ArrayD, ArrayViewD, Axis, Dimension, IxDyn, SliceInfoElem};
use gpu_runtime::types::Complex64;
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// NumPy's `einsum` on the host: the product of the operands' elements summed over every
/// combination of the labels, `add`, `mul` and `zero` being the element type's.
fn host_einsum<A: Copy>(
    subscripts: &str,
    ops: &[ArrayD<A>],
    zero: A,
    add: impl Fn(A, A) -> A,
    mul: impl Fn(A, A) -> A,
) -> ArrayD<A> {
    let (inputs, output) = match subscripts.split_once("->") {
        Some((i, o)) => (i, Some(o)),
        None => (subscripts, None),
    };
    let terms: Vec<&str> = inputs.split(',').collect();
    assert_eq!(terms.len(), ops.len(), "{subscripts}");
    let letters = |t: &str| t.replace("...", "").len();
    // `...` stands for the most axes any operand leaves to it. Its axes are labels 0.., below
    // every letter's code: sorted, they come first.
    let ell = terms
        .iter()
        .zip(ops)
        .filter(|(t, _)| t.contains("..."))
        .map(|(t, a)| a.ndim() - letters(t))
        .max()
        .unwrap_or(0);
    let labels_of = |t: &str, ndim: usize| -> Vec<u32> {
        match t.split_once("...") {
            None => t.chars().map(|c| c as u32).collect(),
            Some((before, after)) => {
                let own = ndim - before.len() - after.len();
                before
                    .chars()
                    .map(|c| c as u32)
                    .chain((ell - own..ell).map(|k| k as u32))
                    .chain(after.chars().map(|c| c as u32))
                    .collect()
            }
        }
    };
    let in_labels: Vec<Vec<u32>> = terms
        .iter()
        .zip(ops)
        .map(|(t, a)| labels_of(t, a.ndim()))
        .collect();
    let mut size: BTreeMap<u32, usize> = BTreeMap::new();
    for (ls, a) in in_labels.iter().zip(ops) {
        assert_eq!(ls.len(), a.ndim(), "{subscripts}");
        for (&l, &n) in ls.iter().zip(a.shape()) {
            let m = size.entry(l).or_insert(n);
            if *m == 1 {
                *m = n;
            } else {
                assert!(n == 1 || n == *m, "{subscripts}: label {l} of {n} and {m}");
            }
        }
    }
    let out: Vec<u32> = match output {
        Some(o) => labels_of(o, letters(o) + ell),
        None => {
            // `...`'s axes, then the letters used once, in the order of their codes.
            let all: Vec<u32> = in_labels.iter().flatten().copied().collect();
            size.keys()
                .copied()
                .filter(|&l| (l as usize) < ell || all.iter().filter(|&&m| m == l).count() == 1)
                .collect()
        }
    };
    let order: Vec<u32> = out
        .iter()
        .copied()
        .chain(size.keys().copied().filter(|l| !out.contains(l)))
        .collect();
    let dims: Vec<usize> = order.iter().map(|l| size[l]).collect();
    let mut result = ArrayD::from_elem(IxDyn(&dims[..out.len()]), zero);
    let total: usize = dims.iter().product();
    let mut coord = vec![0usize; order.len()];
    for c in 0..total {
        let mut r = c;
        for k in (0..order.len()).rev() {
            coord[k] = r % dims[k];
            r /= dims[k];
        }
        let value = ops
            .iter()
            .zip(&in_labels)
            .map(|(a, ls)| {
                let idx: Vec<usize> = ls
                    .iter()
                    .zip(a.shape())
                    .map(|(l, &n)| {
                        if n == 1 {
                            0
                        } else {
                            coord[order.iter().position(|m| m == l).unwrap()]
                        }
                    })
                    .collect();
                a[IxDyn(&idx)]
            })
            .reduce(&mul)
            .unwrap();
        let at = IxDyn(&coord[..out.len()]);
        result[&at] = add(result[&at], value);
    }
    result
}

/// An element type as the einsum kernel sums it, and the host's sum of it: `Acc` the host's
/// type of a sum, `done` its one rounding to the element type.
trait Summed: Element {
    type Acc: Copy + Debug;
    const ZERO: Self::Acc;
    fn random(rng: &mut Rng) -> Self;
    fn acc(self) -> Self::Acc;
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    fn done(a: Self::Acc) -> Self;
    fn same(got: Self, want: Self) -> bool;
}

impl Summed for f64 {
    type Acc = f64;
    const ZERO: f64 = 0.0;
    fn random(rng: &mut Rng) -> f64 {
        rng.f64()
    }
    fn acc(self) -> f64 {
        self
    }
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    fn done(a: f64) -> f64 {
        a
    }
    fn same(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-12 * want.abs().max(1.0)
    }
}

/// Summed in `float` on the device, in `f64` here.
impl Summed for f32 {
    type Acc = f64;
    const ZERO: f64 = 0.0;
    fn random(rng: &mut Rng) -> f32 {
        rng.f32()
    }
    fn acc(self) -> f64 {
        f64::from(self)
    }
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    fn done(a: f64) -> f32 {
        a as f32
    }
    fn same(got: f32, want: f32) -> bool {
        (got - want).abs() <= 1e-4 * want.abs().max(1.0)
    }
}

/// Eighths in [-1, 1]: their products and sums are exact in `float` (and in `f64`), so the one
/// rounding to `f16` is the same on both sides.
impl Summed for f16 {
    type Acc = f64;
    const ZERO: f64 = 0.0;
    fn random(rng: &mut Rng) -> f16 {
        f16::from_f64((rng.next_u64() % 17) as f64 / 8.0 - 1.0)
    }
    fn acc(self) -> f64 {
        self.to_f64()
    }
    fn add(a: f64, b: f64) -> f64 {
        a + b
    }
    fn mul(a: f64, b: f64) -> f64 {
        a * b
    }
    fn done(a: f64) -> f16 {
        f16::from_f64(a)
    }
    fn same(got: f16, want: f16) -> bool {
        got == want
    }
}

macro_rules! wrapping {
    ($($t:ty),*) => {$(
        /// Any bits: the products and sums wrap, as NumPy's do.
        impl Summed for $t {
            type Acc = $t;
            const ZERO: $t = 0;
            fn random(rng: &mut Rng) -> $t {
                rng.next_u64() as $t
            }
            fn acc(self) -> $t {
                self
            }
            fn add(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
            fn mul(a: $t, b: $t) -> $t {
                a.wrapping_mul(b)
            }
            fn done(a: $t) -> $t {
                a
            }
            fn same(got: $t, want: $t) -> bool {
                got == want
            }
        }
    )*};
}
wrapping!(i32, i8, u8);

/// NumPy's `bool` einsum: or of ands. A third true, so that not every sum is true.
impl Summed for Bool {
    type Acc = bool;
    const ZERO: bool = false;
    fn random(rng: &mut Rng) -> Bool {
        Bool::from(rng.next_u64().is_multiple_of(3))
    }
    fn acc(self) -> bool {
        self.get()
    }
    fn add(a: bool, b: bool) -> bool {
        a || b
    }
    fn mul(a: bool, b: bool) -> bool {
        a && b
    }
    fn done(a: bool) -> Bool {
        Bool::from(a)
    }
    fn same(got: Bool, want: Bool) -> bool {
        got == want
    }
}

impl Summed for Complex64 {
    type Acc = Complex64;
    const ZERO: Complex64 = Complex64::new(0.0, 0.0);
    fn random(rng: &mut Rng) -> Complex64 {
        Complex64::new(rng.f64(), rng.f64())
    }
    fn acc(self) -> Complex64 {
        self
    }
    fn add(a: Complex64, b: Complex64) -> Complex64 {
        a + b
    }
    fn mul(a: Complex64, b: Complex64) -> Complex64 {
        a * b
    }
    fn done(a: Complex64) -> Complex64 {
        a
    }
    fn same(got: Complex64, want: Complex64) -> bool {
        (got - want).norm() <= 1e-12 * want.norm().max(1.0)
    }
}

/// How an operand is laid out: as uploaded, or a view of a larger or differently ordered
/// upload (the same view taken of the host copy).
#[derive(Debug, Clone, Copy)]
enum Layout {
    Plain,
    /// All axes reversed (`t()`) of an upload of the reversed shape.
    Transposed,
    /// Every second row, from the second (`s![1..;2, ..]`), of an upload of twice the rows.
    Stepped,
    /// The first axis reversed (`flip(0)`).
    Reversed,
}

const LAYOUTS: [Layout; 4] = [
    Layout::Transposed,
    Layout::Stepped,
    Layout::Reversed,
    Layout::Plain,
];

impl Layout {
    fn stored(self, shape: &[usize]) -> Vec<usize> {
        let mut s = shape.to_vec();
        match self {
            Layout::Plain | Layout::Reversed => {}
            Layout::Transposed => s.reverse(),
            Layout::Stepped => s[0] *= 2,
        }
        s
    }

    fn every_second_row(ndim: usize) -> Vec<SliceInfoElem> {
        let all = |start| SliceInfoElem::Slice {
            start,
            end: None,
            step: 1,
        };
        let mut info = vec![all(0); ndim];
        info[0] = SliceInfoElem::Slice {
            start: 1,
            end: None,
            step: 2,
        };
        info
    }

    fn device<'a, T: Element>(
        self,
        v: DeviceArrayView<'a, T, IxDyn>,
    ) -> gpu_runtime::Result<DeviceArrayView<'a, T, IxDyn>> {
        match self {
            Layout::Plain => Ok(v),
            Layout::Transposed => Ok(v.reversed_axes()),
            Layout::Stepped => {
                let info = Layout::every_second_row(v.ndim());
                v.slice_move(&info[..])
            }
            Layout::Reversed => v.flip(0),
        }
    }

    fn host<T: Clone>(self, mut h: ArrayViewD<'_, T>) -> ArrayD<T> {
        match self {
            Layout::Plain => {}
            Layout::Transposed => h = h.reversed_axes(),
            Layout::Stepped => {
                let info = Layout::every_second_row(h.ndim());
                h = h.slice_move(&info[..]);
            }
            Layout::Reversed => h.invert_axis(Axis(0)),
        }
        h.to_owned()
    }
}

/// `einsum(subscripts)` of random operands of `shapes` (operand `k` laid out as
/// `layouts[k % len]`, a 0-d one as it is) on the device, on `stream` when given, against
/// [`host_einsum`].
fn check_einsum<T: Summed>(
    ctx: &Context,
    rng: &mut Rng,
    subscripts: &str,
    shapes: &[&[usize]],
    layouts: &[Layout],
    stream: Option<&Stream>,
) -> gpu_runtime::Result<()> {
    let layouts: Vec<Layout> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| {
            if s.is_empty() {
                Layout::Plain
            } else {
                layouts[k % layouts.len()]
            }
        })
        .collect();
    let stored: Vec<ArrayD<T>> = shapes
        .iter()
        .zip(&layouts)
        .map(|(s, l)| {
            let shape = l.stored(s);
            let n = shape.iter().product();
            ArrayD::from_shape_vec(IxDyn(&shape), (0..n).map(|_| T::random(rng)).collect()).unwrap()
        })
        .collect();
    let uploads = stored
        .iter()
        .map(|h| DeviceArray::from_ndarray(ctx, h))
        .collect::<gpu_runtime::Result<Vec<_>>>()?;
    let views = uploads
        .iter()
        .zip(&layouts)
        .map(|(d, l)| l.device(d.view()))
        .collect::<gpu_runtime::Result<Vec<_>>>()?;
    let refs: Vec<&DeviceArrayView<'_, T, IxDyn>> = views.iter().collect();
    let host_ops: Vec<ArrayD<T::Acc>> = stored
        .iter()
        .zip(&layouts)
        .map(|(h, l)| l.host(h.view()).mapv(T::acc))
        .collect();
    for (v, (h, s)) in views.iter().zip(host_ops.iter().zip(shapes)) {
        assert_eq!(
            (v.shape(), h.shape()),
            (*s, *s),
            "{subscripts}: an operand's view"
        );
    }
    let got = match stream {
        Some(stream) => {
            let got = gpuarray::on(stream).einsum(subscripts, &refs)?;
            stream.synchronize()?;
            got
        }
        None => gpuarray::einsum(subscripts, &refs)?,
    };
    let want = host_einsum(subscripts, &host_ops, T::ZERO, T::add, T::mul).mapv(T::done);
    let what = format!(
        "{} einsum {subscripts:?} of {shapes:?} as {layouts:?}",
        std::any::type_name::<T>()
    );
    assert_eq!(got.shape(), want.shape(), "{what}");
    let got = got.to_ndarray()?;
    for ((i, g), w) in got.indexed_iter().zip(want.iter()) {
        assert!(
            T::same(*g, *w),
            "{what}, element {:?}: {g:?} against {w:?}",
            i.slice()
        );
    }
    Ok(())
}

/// CuPy's einsum cases (tests/cupy_tests/linalg_tests/test_einsum.py), with NumPy's results.
const CASES: &[(&str, &[&[usize]])] = &[
    ("ij,jk->ik", &[&[3, 4], &[4, 5]]),
    ("ij,jk", &[&[3, 4], &[4, 5]]),
    ("ii", &[&[4, 4]]),
    ("ii->i", &[&[4, 4]]),
    ("ij->ji", &[&[3, 5]]),
    ("ji", &[&[3, 5]]),
    ("i,j", &[&[3], &[4]]),
    ("i,i", &[&[7], &[7]]),
    ("ij,ij->ij", &[&[3, 4], &[3, 4]]),
    ("ijk,jil->kl", &[&[2, 3, 4], &[3, 2, 5]]),
    ("iij->ij", &[&[3, 3, 4]]),
    ("ijk->", &[&[2, 3, 4]]),
    ("...ij,...jk->...ik", &[&[2, 1, 3, 4], &[5, 4, 2]]),
    ("...ij->...ji", &[&[4, 2, 3]]),
    ("...,...", &[&[2, 1], &[3]]),
    ("ij,ij->", &[&[2, 1], &[2, 3]]),
    ("i...->...", &[&[4, 2, 3]]),
    ("ij,jk,kl->il", &[&[2, 3], &[3, 4], &[4, 5]]),
    ("Ab,bC", &[&[2, 3], &[3, 4]]),
    ("bA", &[&[2, 3]]),
    (",", &[&[], &[]]),
    ("->", &[&[]]),
    (",i->i", &[&[], &[5]]),
    ("...,...", &[&[], &[3]]),
    ("ij,jk->ik", &[&[0, 3], &[3, 4]]),
    ("ij,jk->ik", &[&[2, 0], &[0, 3]]),
    ("i->", &[&[0]]),
    ("ii->i", &[&[0, 0]]),
];

#[test]
#[ignore = "needs a CUDA GPU"]
fn einsum_matches_a_naive_host_sum_in_f64() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(71);
    // The host reference itself against NumPy's printed results.
    let arange = |shape: &[usize]| {
        let n = shape.iter().product::<usize>();
        ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|v| v as f64).collect()).unwrap()
    };
    let add = |a: f64, b: f64| a + b;
    let mul = |a: f64, b: f64| a * b;
    let anchors = [
        (
            "ij,jk",
            vec![arange(&[2, 3]), arange(&[3, 4])],
            vec![20.0, 23.0, 26.0, 29.0, 56.0, 68.0, 80.0, 92.0],
        ),
        (
            "ijk,jil->kl",
            vec![arange(&[2, 3, 4]), arange(&[3, 2, 5])],
            [
                1000, 1060, 1120, 1180, 1240, 1075, 1141, 1207, 1273, 1339, 1150, 1222, 1294, 1366, 1438,
                1225, 1303, 1381, 1459, 1537,
            ]
            .map(f64::from)
            .to_vec(),
        ),
        ("ii->i", vec![arange(&[3, 3])], vec![0.0, 4.0, 8.0]),
        (
            "i...->...",
            vec![arange(&[2, 2, 3])],
            vec![6.0, 8.0, 10.0, 12.0, 14.0, 16.0],
        ),
        (
            "...,...",
            vec![arange(&[2, 1]) + 1.0, arange(&[3]) + 5.0],
            vec![5.0, 6.0, 7.0, 10.0, 12.0, 14.0],
        ),
        ("bA", vec![arange(&[2, 3])], vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]),
    ];
    for (subscripts, ops, want) in anchors {
        let host = host_einsum(subscripts, &ops, 0.0, add, mul);
        assert_eq!(
            host.iter().copied().collect::<Vec<_>>(),
            want,
            "host {subscripts}"
        );
        let dev = ops
            .iter()
            .map(|h| DeviceArray::from_ndarray(&ctx, h))
            .collect::<gpu_runtime::Result<Vec<_>>>()?;
        let refs: Vec<&DeviceArray<f64, IxDyn>> = dev.iter().collect();
        assert_eq!(
            gpuarray::einsum(subscripts, &refs)?.to_vec()?,
            want,
            "{subscripts}"
        );
    }
    // Contiguous operands, then views: each operand a different layout.
    for (c, &(subscripts, shapes)) in CASES.iter().enumerate() {
        check_einsum::<f64>(&ctx, &mut rng, subscripts, shapes, &[Layout::Plain], None)?;
        let rotated: Vec<Layout> = (0..4).map(|k| LAYOUTS[(c + k) % 4]).collect();
        check_einsum::<f64>(&ctx, &mut rng, subscripts, shapes, &rotated, None)?;
    }
    // Shapes NumPy gives.
    let shape_of = |subscripts: &str, shapes: &[&[usize]]| -> gpu_runtime::Result<Vec<usize>> {
        let ops = shapes
            .iter()
            .map(|s| DeviceArray::<f64, _>::zeros(&ctx, IxDyn(s)))
            .collect::<gpu_runtime::Result<Vec<_>>>()?;
        let refs: Vec<_> = ops.iter().collect();
        Ok(gpuarray::einsum(subscripts, &refs)?.shape().to_vec())
    };
    assert_eq!(
        shape_of("...ij,...jk->...ik", &[&[2, 1, 3, 4], &[5, 4, 2]])?,
        [2, 5, 3, 2]
    );
    assert_eq!(shape_of("...,...", &[&[2, 1], &[3]])?, [2, 3]);
    assert_eq!(shape_of("Ab,bC", &[&[2, 3], &[3, 4]])?, [2, 4]);
    assert_eq!(shape_of("bA", &[&[2, 3]])?, [3, 2]);
    assert_eq!(shape_of("Ba", &[&[2, 3]])?, [2, 3]);
    assert_eq!(shape_of(",", &[&[], &[]])?, Vec::<usize>::new());
    assert_eq!(shape_of("ij,jk->ik", &[&[0, 3], &[3, 4]])?, [0, 4]);
    // On a stream: a batch of transposed and stepped views.
    let stream = Stream::new(&ctx)?;
    for &(subscripts, shapes) in &CASES[..4] {
        check_einsum::<f64>(&ctx, &mut rng, subscripts, shapes, &LAYOUTS, Some(&stream))?;
    }
    check_einsum::<f64>(
        &ctx,
        &mut rng,
        "...ij,...jk->...ik",
        &[&[2, 1, 3, 4], &[5, 4, 2]],
        &LAYOUTS,
        Some(&stream),
    )?;
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn einsum_of_every_element_type_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(72);
    fn each<T: Summed>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
        for (c, &(subscripts, shapes)) in CASES.iter().enumerate() {
            check_einsum::<T>(ctx, rng, subscripts, shapes, &[Layout::Plain], None)?;
            let rotated: Vec<Layout> = (0..4).map(|k| LAYOUTS[(c + k) % 4]).collect();
            check_einsum::<T>(ctx, rng, subscripts, shapes, &rotated, None)?;
        }
        // Longer sums: a product of 64 along j.
        check_einsum::<T>(ctx, rng, "ij,jk->ik", &[&[5, 64], &[64, 6]], &LAYOUTS, None)?;
        check_einsum::<T>(ctx, rng, "i,i", &[&[300], &[300]], &[Layout::Plain], None)?;
        Ok(())
    }
    each::<f32>(&ctx, &mut rng)?;
    each::<f16>(&ctx, &mut rng)?;
    each::<i32>(&ctx, &mut rng)?;
    each::<i8>(&ctx, &mut rng)?;
    each::<u8>(&ctx, &mut rng)?;
    each::<Bool>(&ctx, &mut rng)?;
    each::<Complex64>(&ctx, &mut rng)?;
    // Values NumPy gives: int8 sums wrap, bool sums are or of ands, f16 rounds once.
    let i8s = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[100i8, 100]))?;
    let threes = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[3i8, 3]))?;
    assert_eq!(gpuarray::einsum("i,i", &[&i8s, &threes])?.to_vec()?, [88]);
    let (t, f) = (Bool::TRUE, Bool::FALSE);
    let a = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((2, 1), vec![t, f]).unwrap())?;
    let b = DeviceArray::from_ndarray(
        &ctx,
        &Array2::from_shape_vec((2, 3), vec![t, f, t, t, t, t]).unwrap(),
    )?;
    assert_eq!(gpuarray::einsum("ij,ij->", &[&a, &b])?.to_vec()?, [true]);
    assert_eq!(
        gpuarray::einsum("ij,ij->j", &[&a, &b])?.to_vec()?,
        [true, false, true]
    );
    // 4099 ones: 4099 in float, rounded once to f16's nearest, 4100 (a sum kept in f16 would
    // stop at 2048, where adding 1 rounds back to 2048).
    let ones = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::Array1::from_elem(4099, f16::ONE))?;
    assert_eq!(
        gpuarray::einsum("i->", &[&ones])?.to_vec()?,
        [f16::from_f32(4100.0)]
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn einsum_of_scalars_and_empty_axes_and_its_refusals() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let scalar = |v: f64| DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(&[]), v));
    let (x, y) = (scalar(2.5)?, scalar(-4.0)?);
    let p = gpuarray::einsum(",", &[&x, &y])?;
    assert_eq!((p.shape(), p.to_vec()?), (&[][..], vec![-10.0]));
    let c = gpuarray::einsum("->", &[&x])?;
    assert_eq!((c.shape(), c.to_vec()?), (&[][..], vec![2.5]));
    let v = DeviceArray::from_ndarray(
        &ctx,
        &ArrayD::from_shape_vec(IxDyn(&[3]), vec![1.0, 2.0, 3.0]).unwrap(),
    )?;
    assert_eq!(gpuarray::einsum(",i->i", &[&x, &v])?.to_vec()?, [2.5, 5.0, 7.5]);
    assert_eq!(gpuarray::einsum("i,", &[&v, &y])?.to_vec()?, [-4.0, -8.0, -12.0]);
    // Empty axes: an empty result, and a summed label of length 0 (zeros).
    let empty = |shape: &[usize]| DeviceArray::<i32, _>::zeros(&ctx, IxDyn(shape));
    let ones = |shape: &[usize]| DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(shape), 1i32));
    let e = gpuarray::einsum("ij,jk->ik", &[&empty(&[0, 3])?, &ones(&[3, 4])?])?;
    assert_eq!((e.shape(), e.to_vec()?), (&[0, 4][..], vec![]));
    let z = gpuarray::einsum("ij,jk->ik", &[&empty(&[2, 0])?, &empty(&[0, 3])?])?;
    assert_eq!((z.shape(), z.to_vec()?), (&[2, 3][..], vec![0; 6]));
    let z = gpuarray::einsum("i->", &[&empty(&[0])?])?;
    assert_eq!((z.shape(), z.to_vec()?), (&[][..], vec![0]));
    let z = gpuarray::einsum("ij,jk", &[&ones(&[2, 0])?, &ones(&[0, 3])?])?;
    assert_eq!((z.shape(), z.to_vec()?), (&[2, 3][..], vec![0; 6]));
    // The refusals: NumPy's errors.
    let arr = |shape: &[usize]| DeviceArray::<f32, _>::zeros(&ctx, IxDyn(shape));
    let refused: [(&str, Vec<Vec<usize>>); 10] = [
        ("ij->ii", vec![vec![2, 3]]),
        ("ij,jk", vec![vec![2, 3], vec![4, 5]]),
        ("ij,jk", vec![vec![2, 3]]),
        ("i", vec![vec![2], vec![2]]),
        ("i->j", vec![vec![2]]),
        ("i2", vec![vec![2, 2]]),
        ("ij", vec![vec![2]]),
        ("i", vec![vec![2, 3]]),
        ("...i->i", vec![vec![2, 3]]),
        ("ij,ij->", vec![vec![2, 3], vec![3, 2]]),
    ];
    for (subscripts, shapes) in refused {
        let ops = shapes
            .iter()
            .map(|s| arr(s))
            .collect::<gpu_runtime::Result<Vec<_>>>()?;
        let refs: Vec<_> = ops.iter().collect();
        match gpuarray::einsum(subscripts, &refs) {
            Err(Error::Shape(ArrayShapeError::Einsum { .. })) => {}
            other => panic!("{subscripts} of {shapes:?}: {other:?}"),
        }
    }
    let none: [&DeviceArray<f32, IxDyn>; 0] = [];
    assert!(matches!(
        gpuarray::einsum("", &none),
        Err(Error::Shape(ArrayShapeError::Einsum { .. }))
    ));
    // More operands than the kernel takes.
    let one = arr(&[2])?;
    let many = vec![&one; gpuarray::MAX_EINSUM_OPERANDS + 1];
    let subscripts = vec!["i"; many.len()].join(",");
    assert!(matches!(
        gpuarray::einsum(&subscripts, &many),
        Err(Error::Shape(ArrayShapeError::Einsum { .. }))
    ));
    let most = vec![&one; gpuarray::MAX_EINSUM_OPERANDS];
    let subscripts = vec!["i"; most.len()].join(",");
    assert_eq!(gpuarray::einsum(&subscripts, &most)?.to_vec()?, [0.0]);
    Ok(())
}

/// NumPy's `kron` on the host: `a` and `b` given leading axes of 1 to the same count, each
/// output axis `a`'s index times `b`'s length plus `b`'s index.
fn host_kron<A: Copy>(a: &ArrayD<A>, b: &ArrayD<A>, mul: impl Fn(A, A) -> A) -> ArrayD<A> {
    let nd = a.ndim().max(b.ndim());
    let pad = |x: &ArrayD<A>| {
        let mut shape = vec![1; nd - x.ndim()];
        shape.extend_from_slice(x.shape());
        x.to_shape(IxDyn(&shape)).unwrap().to_owned()
    };
    let (a, b) = (pad(a), pad(b));
    let shape: Vec<usize> = a.shape().iter().zip(b.shape()).map(|(x, y)| x * y).collect();
    ArrayD::from_shape_fn(IxDyn(&shape), |o| {
        let ia: Vec<usize> = (0..nd).map(|k| o[k] / b.shape()[k]).collect();
        let ib: Vec<usize> = (0..nd).map(|k| o[k] % b.shape()[k]).collect();
        mul(a[IxDyn(&ia)], b[IxDyn(&ib)])
    })
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tensordot_and_kron_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(73);
    let mut random = |shape: &[usize]| {
        let n = shape.iter().product();
        ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|_| rng.f64()).collect::<Vec<_>>()).unwrap()
    };
    let near = |got: &[f64], want: &ArrayD<f64>, what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "{what}, element {i}: {g} against {w}"
            );
        }
    };
    let (add, mul) = (|a: f64, b: f64| a + b, |a: f64, b: f64| a * b);
    // tensordot(a, b, n): NumPy's n = 0 (outer), 1, 2 and 3 on 3-d arrays, as einsum.
    let a = random(&[2, 3, 4]);
    for (n, b_shape, subscripts) in [
        (0, vec![3, 2], "ijk,lm->ijklm"),
        (1, vec![4, 3, 2], "ijk,klm->ijlm"),
        (2, vec![3, 4, 5], "ijk,jkl->il"),
        (3, vec![2, 3, 4], "ijk,ijk->"),
    ] {
        let b = random(&b_shape);
        let want = host_einsum(subscripts, &[a.clone(), b.clone()], 0.0, add, mul);
        let (da, db) = (
            DeviceArray::from_ndarray(&ctx, &a)?,
            DeviceArray::from_ndarray(&ctx, &b)?,
        );
        let got = gpuarray::tensordot(&da, &db, n)?;
        assert_eq!(got.shape(), want.shape(), "tensordot n = {n}");
        near(&got.to_vec()?, &want, &format!("tensordot n = {n}"));
    }
    // NumPy's tensordot(arange(24).reshape(2, 3, 4), arange(24).reshape(3, 4, 2), 2).
    let ar = |shape: &[usize]| {
        let n = shape.iter().product::<usize>();
        ArrayD::from_shape_vec(IxDyn(shape), (0..n as i32).collect()).unwrap()
    };
    let (x, y) = (
        DeviceArray::from_ndarray(&ctx, &ar(&[2, 3, 4]))?,
        DeviceArray::from_ndarray(&ctx, &ar(&[3, 4, 2]))?,
    );
    assert_eq!(
        gpuarray::tensordot(&x, &y, 2)?.to_vec()?,
        [1012, 1078, 2596, 2806]
    );
    // tensordot_axes: a's axes 1, 0 with b's 0, 1 (a[i, j, k] b[j, i, l]), negative or not;
    // a 2-d `b` against a 3-d `a`; a transposed view.
    let a = random(&[3, 4, 5]);
    let b = random(&[4, 3, 2]);
    let want = host_einsum("ijk,jil->kl", &[a.clone(), b.clone()], 0.0, add, mul);
    let (da, db) = (
        DeviceArray::from_ndarray(&ctx, &a)?,
        DeviceArray::from_ndarray(&ctx, &b)?,
    );
    for (axes_a, axes_b) in [([1, 0], [0, 1]), ([-2, -3], [0, -2]), ([-2, 0], [-3, 1])] {
        let got = gpuarray::tensordot_axes(&da, &db, &axes_a, &axes_b)?;
        assert_eq!(got.shape(), [5, 2], "axes {axes_a:?} {axes_b:?}");
        near(
            &got.to_vec()?,
            &want,
            &format!("tensordot axes {axes_a:?} {axes_b:?}"),
        );
    }
    let m = random(&[5, 6]);
    let dm = DeviceArray::from_ndarray(
        &ctx,
        &m.clone()
            .into_dimensionality::<gpu_runtime::ndarray::Ix2>()
            .unwrap(),
    )?;
    let want = host_einsum("ijk,kl->ijl", &[a.clone(), m.clone()], 0.0, add, mul);
    near(&gpuarray::tensordot(&da, &dm, 1)?.to_vec()?, &want, "3-d by 2-d");
    let want = host_einsum(
        "ijk,lk->ijl",
        &[a.clone(), m.t().to_owned().into_dyn()],
        0.0,
        add,
        mul,
    );
    let mt = dm.t();
    near(
        &gpuarray::tensordot_axes(&da, &mt, &[2], &[-1])?.to_vec()?,
        &want,
        "a transposed b",
    );
    // The refusals: lengths that differ, more axes than an array has, unpaired axes.
    let refusals = [
        gpuarray::tensordot(&da, &db, 1).map(|_| ()),
        gpuarray::tensordot(&dm, &da, 3).map(|_| ()),
        gpuarray::tensordot_axes(&da, &db, &[0, 1], &[1]).map(|_| ()),
        gpuarray::tensordot_axes(&da, &db, &[0], &[0]).map(|_| ()),
    ];
    for (k, r) in refusals.into_iter().enumerate() {
        assert!(
            matches!(r, Err(Error::Shape(ArrayShapeError::Einsum { .. }))),
            "refusal {k}: {r:?}"
        );
    }
    // kron: 1-d by 1-d, 2-d by 2-d, and the padding of 1-d by 2-d and 2-d by 1-d, in i32 and
    // f64.
    let mut ints = Rng::new(74);
    let mut int_array = |shape: &[usize]| {
        let n = shape.iter().product();
        ArrayD::from_shape_vec(
            IxDyn(shape),
            (0..n)
                .map(|_| (ints.next_u64() % 41) as i32 - 20)
                .collect::<Vec<_>>(),
        )
        .unwrap()
    };
    for (sa, sb) in [
        (vec![3], vec![4]),
        (vec![2, 3], vec![3, 2]),
        (vec![3], vec![2, 4]),
        (vec![2, 4], vec![3]),
        (vec![2, 1, 3], vec![2, 2]),
        (vec![1], vec![5]),
    ] {
        let (ha, hb) = (int_array(&sa), int_array(&sb));
        let want = host_kron(&ha, &hb, |x, y| x * y);
        let (da, db) = (
            DeviceArray::from_ndarray(&ctx, &ha)?,
            DeviceArray::from_ndarray(&ctx, &hb)?,
        );
        let got = gpuarray::kron(&da, &db)?;
        assert_eq!(got.shape(), want.shape(), "kron {sa:?} {sb:?}");
        assert_eq!(
            got.to_vec()?,
            want.iter().copied().collect::<Vec<_>>(),
            "kron {sa:?} {sb:?}"
        );
        let (fa, fb) = (random(&sa), random(&sb));
        let want = host_kron(&fa, &fb, mul);
        let (da, db) = (
            DeviceArray::from_ndarray(&ctx, &fa)?,
            DeviceArray::from_ndarray(&ctx, &fb)?,
        );
        let got = gpuarray::kron(&da, &db)?;
        assert_eq!(got.shape(), want.shape(), "kron {sa:?} {sb:?}");
        near(&got.to_vec()?, &want, &format!("f64 kron {sa:?} {sb:?}"));
    }
    // NumPy's kron([[1, 2], [3, 4]], [5, 6, 7]), and of two 1-d arrays of different types of
    // dimension.
    let a = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr2(&[[1, 2], [3, 4]]))?;
    let b = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[5, 6, 7]))?;
    let k = gpuarray::kron(&a, &b)?;
    assert_eq!(k.shape(), [2, 6]);
    assert_eq!(k.to_vec()?, [5, 6, 7, 10, 12, 14, 15, 18, 21, 20, 24, 28]);
    let k = gpuarray::kron(&b, &a)?;
    assert_eq!(k.shape(), [2, 6]);
    assert_eq!(k.to_vec()?, [5, 10, 6, 12, 7, 14, 15, 20, 18, 24, 21, 28]);
    Ok(())
}

/// NumPy's `npy_divmod` of two doubles: the quotient floored, the remainder of the divisor's
/// sign.
fn py_divmod(a: f64, b: f64) -> (f64, f64) {
    let mut m = a % b;
    if b == 0.0 {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(b);
    }
    let q = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0.0f64.copysign(a / b)
    };
    (q, m)
}

/// Python's `//` and `%` of integers, NumPy's 0 for a zero divisor (`MIN // -1` wraps).
fn py_divmod_i32(a: i32, b: i32) -> (i32, i32) {
    if b == 0 {
        return (0, 0);
    }
    let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
    if r != 0 && ((r < 0) != (b < 0)) {
        (q - 1, r + b)
    } else {
        (q, r)
    }
}

/// The same double: NaN for NaN, and the sign of a zero.
fn same_f64(g: f64, w: f64) -> bool {
    (g.is_nan() && w.is_nan()) || (g == w && g.is_sign_negative() == w.is_sign_negative())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn divmod_floors_as_numpy_does() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // NumPy's divmod of these int32 pairs.
    let x = [7, -7, 7, -7, 0, 5, -5, i32::MIN, i32::MIN, 6, -6];
    let y = [2, 2, -2, -2, 3, 0, 0, -1, 1, -4, 4];
    let q_np = [3, -4, -4, 3, 0, 0, 0, i32::MIN, i32::MIN, -2, -2];
    let r_np = [1, 1, -1, -1, 0, 0, 0, 0, 0, -2, 2];
    let dx = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&x))?;
    let dy = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&y))?;
    let (q, r) = math::divmod(&dx, &dy)?;
    assert_eq!((q.to_vec()?, r.to_vec()?), (q_np.to_vec(), r_np.to_vec()));
    for i in 0..x.len() {
        assert_eq!(
            py_divmod_i32(x[i], y[i]),
            (q_np[i], r_np[i]),
            "host divmod({}, {})",
            x[i],
            y[i]
        );
    }
    // Random int32, broadcast (5, 1) against (7,) divisors that include 0, and scalars.
    let mut rng = Rng::new(75);
    let hx: Vec<i32> = (0..5).map(|_| (rng.next_u64() % 201) as i32 - 100).collect();
    let hy: Vec<i32> = (0..7)
        .map(|k| {
            if k == 3 {
                0
            } else {
                (rng.next_u64() % 13) as i32 - 6
            }
        })
        .collect();
    let dx = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((5, 1), hx.clone()).unwrap())?;
    let dy = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::Array1::from_vec(hy.clone()))?;
    let (q, r) = math::divmod(&dx, &dy)?;
    assert_eq!(q.shape(), [5, 7]);
    let (q, r) = (q.to_vec()?, r.to_vec()?);
    for (i, &a) in hx.iter().enumerate() {
        for (j, &b) in hy.iter().enumerate() {
            let want = py_divmod_i32(a, b);
            assert_eq!(
                (q[i * 7 + j], r[i * 7 + j]),
                want,
                "divmod({a}, {b}) at [{i}, {j}]"
            );
        }
    }
    let (q, r) = math::divmod(&dx, -3i32)?;
    let want: (Vec<i32>, Vec<i32>) = hx.iter().map(|&a| py_divmod_i32(a, -3)).unzip();
    assert_eq!((q.to_vec()?, r.to_vec()?), want, "divmod(x, -3)");
    let (q, r) = math::divmod(-17i32, &dy)?;
    let want: (Vec<i32>, Vec<i32>) = hy.iter().map(|&b| py_divmod_i32(-17, b)).unzip();
    assert_eq!((q.to_vec()?, r.to_vec()?), want, "divmod(-17, y)");
    // NumPy's divmod of these doubles: the floor, the divisor's sign, signed zeros, a zero
    // divisor (inf or NaN, and a NaN remainder), an infinite divisor, 3.0 // 0.1 = 29.
    let x = [
        7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 0.0, 5.0, -5.0, 0.0, 1e300, 3.0, -1.0, 1.0, -1e-300,
    ];
    let y = [
        2.0,
        2.0,
        -2.0,
        -2.0,
        3.0,
        3.0,
        -3.0,
        0.0,
        0.0,
        0.0,
        1e-10,
        0.1,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
    ];
    let inf = f64::INFINITY;
    let q_np = [
        3.0,
        -4.0,
        -4.0,
        3.0,
        0.0,
        -0.0,
        -0.0,
        inf,
        -inf,
        f64::NAN,
        inf,
        29.0,
        -1.0,
        -1.0,
        -1.0,
    ];
    let r_np = [
        1.5,
        0.5,
        -0.5,
        -1.5,
        0.0,
        0.0,
        -0.0,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        5.476641984772742e-11,
        0.09999999999999984,
        inf,
        -inf,
        1e300,
    ];
    let dx = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&x))?;
    let dy = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&y))?;
    let (q, r) = math::divmod(&dx, &dy)?;
    let (q, r) = (q.to_vec()?, r.to_vec()?);
    for i in 0..x.len() {
        let (hq, hr) = py_divmod(x[i], y[i]);
        assert!(
            same_f64(hq, q_np[i]) && same_f64(hr, r_np[i]),
            "host divmod({}, {})",
            x[i],
            y[i]
        );
        assert!(
            same_f64(q[i], q_np[i]) && same_f64(r[i], r_np[i]),
            "divmod({}, {}) at {i}: ({}, {}) against NumPy's ({}, {})",
            x[i],
            y[i],
            q[i],
            r[i],
            q_np[i],
            r_np[i]
        );
    }
    // Random doubles of either sign, and their divmod by a scalar.
    let hx: Vec<f64> = (0..200).map(|_| rng.f64() * 100.0).collect();
    let hy: Vec<f64> = (0..200).map(|_| rng.f64() * 8.0).collect();
    let dx = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::Array1::from_vec(hx.clone()))?;
    let dy = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::Array1::from_vec(hy.clone()))?;
    let (q, r) = math::divmod(&dx, &dy)?;
    let (q, r) = (q.to_vec()?, r.to_vec()?);
    for i in 0..hx.len() {
        let (wq, wr) = py_divmod(hx[i], hy[i]);
        assert!(
            same_f64(q[i], wq) && same_f64(r[i], wr),
            "divmod({}, {}) at {i}: ({}, {}) against ({wq}, {wr})",
            hx[i],
            hy[i],
            q[i],
            r[i]
        );
    }
    let (q, r) = math::divmod(&dx, -0.75)?;
    let (q, r) = (q.to_vec()?, r.to_vec()?);
    for i in 0..hx.len() {
        let (wq, wr) = py_divmod(hx[i], -0.75);
        assert!(
            same_f64(q[i], wq) && same_f64(r[i], wr),
            "divmod({}, -0.75) at {i}: ({}, {}) against ({wq}, {wr})",
            hx[i],
            q[i],
            r[i]
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn broadcast_arrays_and_shared_memory_of_views() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // broadcast_arrays: (3, 1), (1, 4), (4,) and a 0-d array to (3, 4), views of stride 0.
    let host: Vec<ArrayD<i32>> = [vec![3, 1], vec![1, 4], vec![4], vec![]]
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let n = s.iter().product::<usize>();
            ArrayD::from_shape_vec(IxDyn(s), (0..n as i32).map(|v| 10 * k as i32 + v).collect()).unwrap()
        })
        .collect();
    let dev = host
        .iter()
        .map(|h| DeviceArray::from_ndarray(&ctx, h))
        .collect::<gpu_runtime::Result<Vec<_>>>()?;
    let refs: Vec<_> = dev.iter().collect();
    let views = gpuarray::broadcast_arrays(&refs)?;
    assert_eq!(views.len(), 4);
    for (k, (v, h)) in views.iter().zip(&host).enumerate() {
        assert_eq!(v.shape(), [3, 4], "operand {k}");
        let want: Vec<i32> = h.broadcast(IxDyn(&[3, 4])).unwrap().iter().copied().collect();
        assert_eq!(v.to_vec()?, want, "operand {k}");
        assert_eq!(v.to_contiguous()?.to_vec()?, want, "operand {k}, contiguous");
        assert!(gpuarray::shares_memory(v, &dev[k]), "operand {k}");
    }
    assert_eq!(views[0].strides()[1], 0);
    assert_eq!(views[1].strides()[0], 0);
    assert_eq!(views[2].strides()[0], 0);
    assert_eq!(views[3].strides(), [0, 0]);
    // One array is itself; shapes that do not broadcast are refused.
    let alone = gpuarray::broadcast_arrays(&[&dev[2]])?;
    assert_eq!(
        (alone[0].shape(), alone[0].to_vec()?),
        (&[4][..], vec![20, 21, 22, 23])
    );
    let three = DeviceArray::from_ndarray(&ctx, &ArrayD::from_elem(IxDyn(&[3]), 1i32))?;
    match gpuarray::broadcast_arrays(&[&dev[2], &three]) {
        Err(Error::Shape(ArrayShapeError::Broadcast { .. })) => {}
        other => panic!("(4,) with (3,): {:?}", other.map(|v| v.len())),
    }

    // Views of a (6, 8) array against the same views of the host's flat indices: they share
    // memory when their index sets meet, may share it when their ranges of indices do.
    let a = DeviceArray::<f32, _>::zeros(&ctx, (6, 8))?;
    let other = DeviceArray::<f32, _>::zeros(&ctx, (6, 8))?;
    let idx = Array2::from_shape_fn((6, 8), |(i, j)| i * 8 + j);
    let far = idx.mapv(|v| v + 1_000_000);
    let (row0, col7) = (a.slice(s![0..1, ..])?, a.slice(s![.., 7..])?);
    let mut views: Vec<(&str, DeviceArrayView<'_, f32, IxDyn>, ArrayD<usize>)> = vec![
        ("a", a.view().into_dyn(), idx.clone().into_dyn()),
        (
            "even rows",
            a.slice(s![..;2, ..])?.into_dyn(),
            idx.slice(s![..;2, ..]).to_owned().into_dyn(),
        ),
        (
            "odd rows",
            a.slice(s![1..;2, ..])?.into_dyn(),
            idx.slice(s![1..;2, ..]).to_owned().into_dyn(),
        ),
        (
            "left half",
            a.slice(s![.., ..4])?.into_dyn(),
            idx.slice(s![.., ..4]).to_owned().into_dyn(),
        ),
        (
            "right half",
            a.slice(s![.., 4..])?.into_dyn(),
            idx.slice(s![.., 4..]).to_owned().into_dyn(),
        ),
        (
            "rows 0-1",
            a.slice(s![0..2, ..])?.into_dyn(),
            idx.slice(s![0..2, ..]).to_owned().into_dyn(),
        ),
        (
            "rows 2-3",
            a.slice(s![2..4, ..])?.into_dyn(),
            idx.slice(s![2..4, ..]).to_owned().into_dyn(),
        ),
        (
            "block 1-2",
            a.slice(s![1..3, 2..5])?.into_dyn(),
            idx.slice(s![1..3, 2..5]).to_owned().into_dyn(),
        ),
        (
            "block 2-3",
            a.slice(s![2..4, 4..7])?.into_dyn(),
            idx.slice(s![2..4, 4..7]).to_owned().into_dyn(),
        ),
        (
            "column 0",
            a.slice(s![.., 0])?.into_dyn(),
            idx.slice(s![.., 0]).to_owned().into_dyn(),
        ),
        (
            "column 1",
            a.slice(s![.., 1])?.into_dyn(),
            idx.slice(s![.., 1]).to_owned().into_dyn(),
        ),
        (
            "element [5, 7]",
            a.slice(s![5, 7])?.into_dyn(),
            idx.slice(s![5, 7]).to_owned().into_dyn(),
        ),
        (
            "element [0, 7]",
            a.slice(s![0, 7])?.into_dyn(),
            idx.slice(s![0, 7]).to_owned().into_dyn(),
        ),
        (
            "every third",
            a.slice(s![..;3, ..;3])?.into_dyn(),
            idx.slice(s![..;3, ..;3]).to_owned().into_dyn(),
        ),
        (
            "odd odd",
            a.slice(s![1..;2, 1..;2])?.into_dyn(),
            idx.slice(s![1..;2, 1..;2]).to_owned().into_dyn(),
        ),
        (
            "rows reversed",
            a.slice(s![..;-1, ..])?.into_dyn(),
            idx.slice(s![..;-1, ..]).to_owned().into_dyn(),
        ),
        (
            "last row reversed",
            a.slice(s![5, ..;-1])?.into_dyn(),
            idx.slice(s![5, ..;-1]).to_owned().into_dyn(),
        ),
        (
            "empty",
            a.slice(s![0..0, ..])?.into_dyn(),
            idx.slice(s![0..0, ..]).to_owned().into_dyn(),
        ),
        ("t()", a.t().into_dyn(), idx.t().to_owned().into_dyn()),
        (
            "odd rows reversed_axes",
            a.slice(s![1..;2, ..])?.reversed_axes().into_dyn(),
            idx.slice(s![1..;2, ..]).reversed_axes().to_owned().into_dyn(),
        ),
        (
            "swapaxes of columns 5..",
            a.slice(s![.., 5..])?.swapaxes(0, 1)?.into_dyn(),
            idx.slice(s![.., 5..]).t().to_owned().into_dyn(),
        ),
        (
            "flip(1) of rows 3-4",
            a.slice(s![3..5, ..])?.flip(1)?.into_dyn(),
            idx.slice(s![3..5, ..;-1]).to_owned().into_dyn(),
        ),
        ("another array", other.view().into_dyn(), far.clone().into_dyn()),
        (
            "its even rows",
            other.slice(s![..;2, ..])?.into_dyn(),
            far.slice(s![..;2, ..]).to_owned().into_dyn(),
        ),
    ];
    // broadcast_to: row 0 as five rows, and column 7 as 8 columns.
    views.push((
        "row 0 broadcast to (5, 8)",
        row0.broadcast_to(&[5, 8])?,
        idx.slice(s![0..1, ..])
            .broadcast((5, 8))
            .unwrap()
            .to_owned()
            .into_dyn(),
    ));
    views.push((
        "column 7 broadcast to (6, 8)",
        col7.broadcast_to(&[6, 8])?,
        idx.slice(s![.., 7..])
            .broadcast((6, 8))
            .unwrap()
            .to_owned()
            .into_dyn(),
    ));
    for (name, v, h) in &views {
        assert_eq!(v.shape(), h.shape(), "{name}");
    }
    let mut pairs = 0;
    for (na, va, ha) in &views {
        let sa: BTreeSet<usize> = ha.iter().copied().collect();
        for (nb, vb, hb) in &views {
            let sb: BTreeSet<usize> = hb.iter().copied().collect();
            let shares = sa.intersection(&sb).next().is_some();
            let may = match (sa.first(), sa.last(), sb.first(), sb.last()) {
                (Some(a0), Some(a1), Some(b0), Some(b1)) => a0 <= b1 && b0 <= a1,
                _ => false,
            };
            assert_eq!(
                gpuarray::shares_memory(va, vb),
                shares,
                "shares_memory({na}, {nb})"
            );
            assert_eq!(
                gpuarray::may_share_memory(va, vb),
                may,
                "may_share_memory({na}, {nb})"
            );
            pairs += usize::from(may && !shares);
        }
    }
    // Interleaved views that may share and do not: even and odd rows, the halves, columns.
    assert!(pairs >= 6, "{pairs} pairs that may share memory and do not");
    // Arrays of different dimension types, and a different element type over the same bytes.
    assert!(gpuarray::shares_memory(&a, &a.slice(s![2, 3])?));
    assert!(!gpuarray::may_share_memory(&a, &other));
    assert!(!gpuarray::shares_memory(
        &a.slice(s![..3, ..])?,
        &a.slice(s![3.., ..])?
    ));
    Ok(())
}
