//! Selection and counting on a GPU against the host, on random data, for every element type
//! each accepts: `nonzero`, `flatnonzero`, `argwhere`, `count_nonzero` (all axes and along each), boolean masks
//! (`masked`, `set_masked`, `fill_masked`), `take_along_axis` and `take` with index arrays of
//! every integer type, `bincount`, `histogram`, `randint`; and the views and copies that move
//! axes or change the element type or the order (`swapaxes`, `moveaxis`, `view_as`,
//! `copy_order`, `reshape_order`). Shapes: 0-d, empty, lengths around the compaction's tile
//! (4096), transposed, stepped and broadcast views.

use gpu_runtime::gpuarray::{
    histogram_density, Bins, Bool, DeviceArray, DeviceArrayView, Element, IndexElement, IndexMode, ReduceAxis,
};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{s, Array, ArrayD, Axis, Dimension, IxDyn, Order, ShapeBuilder};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error};
use gpu_suite::Rng;

/// An element type drawn at random with about a third zeros (and, for floats, a NaN now and
/// then, which is nonzero), with NumPy's truth.
trait Draw: Element {
    fn draw(rng: &mut Rng) -> Self;
    fn truth(self) -> bool;
}

macro_rules! draw_int {
    ($($t:ty),*) => {$(
        impl Draw for $t {
            fn draw(rng: &mut Rng) -> Self {
                let r = rng.next_u64();
                if r % 3 == 0 { 0 } else { (r >> 8) as $t }
            }
            fn truth(self) -> bool { self != 0 }
        }
    )*};
}
draw_int!(i8, u8, i16, u16, i32, u32, i64, u64);

fn draw_f64(rng: &mut Rng) -> f64 {
    match rng.next_u64() % 12 {
        0..=3 => 0.0,
        4 => -0.0,
        5 => f64::NAN,
        _ => rng.f64() * 100.0,
    }
}

impl Draw for f32 {
    fn draw(rng: &mut Rng) -> Self {
        draw_f64(rng) as f32
    }
    fn truth(self) -> bool {
        self != 0.0
    }
}
impl Draw for f64 {
    fn draw(rng: &mut Rng) -> Self {
        draw_f64(rng)
    }
    fn truth(self) -> bool {
        self != 0.0
    }
}
impl Draw for f16 {
    fn draw(rng: &mut Rng) -> Self {
        f16::from_f64(draw_f64(rng))
    }
    fn truth(self) -> bool {
        self.to_f32() != 0.0
    }
}
impl Draw for bf16 {
    fn draw(rng: &mut Rng) -> Self {
        bf16::from_f64(draw_f64(rng))
    }
    fn truth(self) -> bool {
        self.to_f32() != 0.0
    }
}
impl Draw for Bool {
    fn draw(rng: &mut Rng) -> Self {
        Bool::from(!rng.next_u64().is_multiple_of(3))
    }
    fn truth(self) -> bool {
        bool::from(self)
    }
}
impl Draw for Complex32 {
    fn draw(rng: &mut Rng) -> Self {
        // Either part alone nonzero must count.
        let (a, b) = (rng.next_u64().is_multiple_of(2), rng.next_u64().is_multiple_of(2));
        Complex32::new(if a { 1.5 } else { 0.0 }, if b { -2.0 } else { 0.0 })
    }
    fn truth(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
}
impl Draw for Complex64 {
    fn draw(rng: &mut Rng) -> Self {
        let (a, b) = (rng.next_u64().is_multiple_of(2), rng.next_u64().is_multiple_of(2));
        Complex64::new(if a { 1.5 } else { 0.0 }, if b { -2.0 } else { 0.0 })
    }
    fn truth(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
}

fn random<T: Draw>(rng: &mut Rng, shape: &[usize]) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|_| T::draw(rng)).collect()).unwrap()
}

/// The host's C-order multi-indices of the true elements of `h`.
fn host_nonzero<T: Draw>(h: &ArrayD<T>) -> Vec<Vec<i64>> {
    h.indexed_iter()
        .filter(|(_, v)| v.truth())
        .map(|(ix, _)| ix.slice().iter().map(|&i| i as i64).collect())
        .collect()
}

/// Bitwise equality, so that NaN equals NaN.
fn same_bits<T: Copy>(a: &[T], b: &[T]) -> bool {
    let bytes = |v: &[T]| {
        // SAFETY: reading the bytes of plain `Copy` numbers (no padding in these types).
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }.to_vec()
    };
    a.len() == b.len() && bytes(a) == bytes(b)
}

/// Every compaction of `h` (uploaded, and viewed transposed and stepped) against the host.
fn check_compaction<T: Draw>(ctx: &Context, rng: &mut Rng, h: &ArrayD<T>) -> gpu_runtime::Result<()> {
    let what = format!("{} {:?}", std::any::type_name::<T>(), h.shape());
    let d = DeviceArray::from_ndarray(ctx, h)?;
    let mut views: Vec<(ArrayD<T>, DeviceArrayView<'_, T, IxDyn>)> = vec![(h.clone(), d.view())];
    if h.ndim() >= 2 {
        views.push((h.t().to_owned(), d.t()));
    }
    if h.ndim() == 3 {
        views.push((
            h.slice(s![.., ..;2, ..]).to_owned().into_dyn(),
            d.slice(s![.., ..;2, ..])?.into_dyn(),
        ));
    }
    for (host, dev) in &views {
        let want = host_nonzero(host);
        assert_eq!(dev.count_nonzero()?, want.len(), "count_nonzero {what}");
        // Along each axis, kept or dropped (NumPy's `count_nonzero(a, axis=k, keepdims=)`).
        for k in 0..host.ndim() {
            let counts = host.map_axis(Axis(k), |lane| lane.iter().filter(|v| v.truth()).count() as i64);
            let got = dev.count_nonzero_axis(k)?;
            assert_eq!(got.shape(), counts.shape(), "count_nonzero_axis({k}) {what}");
            assert_eq!(
                got.to_vec()?,
                counts.iter().copied().collect::<Vec<_>>(),
                "count_nonzero_axis({k}) {what}"
            );
            let kept = dev.count_nonzero_axis(ReduceAxis::keepdims(k))?;
            let mut kept_shape = host.shape().to_vec();
            kept_shape[k] = 1;
            assert_eq!(
                kept.shape(),
                kept_shape,
                "count_nonzero_axis keepdims({k}) {what}"
            );
        }
        let flat: Vec<i64> = host
            .iter()
            .enumerate()
            .filter(|(_, v)| v.truth())
            .map(|(i, _)| i as i64)
            .collect();
        assert_eq!(dev.flatnonzero()?.to_vec()?, flat, "flatnonzero {what}");
        if host.ndim() == 0 {
            assert!(matches!(
                dev.nonzero(),
                Err(Error::Shape(ArrayShapeError::ZeroDimensional { .. }))
            ));
            assert_eq!(dev.argwhere()?.shape(), [want.len(), 0]);
            continue;
        }
        let nz = dev.nonzero()?;
        assert_eq!(nz.len(), host.ndim());
        for (axis, got) in nz.iter().enumerate() {
            let col: Vec<i64> = want.iter().map(|ix| ix[axis]).collect();
            assert_eq!(got.to_vec()?, col, "nonzero axis {axis} of {what}");
        }
        let rows: Vec<i64> = want.iter().flatten().copied().collect();
        let aw = dev.argwhere()?;
        assert_eq!(aw.shape(), [want.len(), host.ndim()], "argwhere {what}");
        assert_eq!(aw.to_vec()?, rows, "argwhere {what}");
        // Boolean masks: a[mask], a[mask] = values, a[mask] = scalar.
        let mask_h = random::<Bool>(rng, host.shape());
        let mask = DeviceArray::from_ndarray(ctx, &mask_h)?;
        let sel: Vec<T> = host
            .iter()
            .zip(mask_h.iter())
            .filter(|(_, m)| m.truth())
            .map(|(v, _)| *v)
            .collect();
        assert!(same_bits(&dev.masked(&mask)?.to_vec()?, &sel), "masked {what}");
        // Through a transposed mask too.
        let mask_t = mask_h.t().to_owned();
        let dev_t = dev.t();
        let dm_t = mask.t();
        let host_t = host.t();
        let sel_t: Vec<T> = host_t
            .iter()
            .zip(mask_t.iter())
            .filter(|(_, m)| m.truth())
            .map(|(v, _)| *v)
            .collect();
        assert!(
            same_bits(&dev_t.masked(&dm_t)?.to_vec()?, &sel_t),
            "masked transposed {what}"
        );
        let values: Vec<T> = (0..sel.len()).map(|_| T::draw(rng)).collect();
        let mut target = dev.to_contiguous()?;
        let vd = DeviceArray::from_ndarray(ctx, &Array::from(values.clone()))?;
        target.set_masked(&mask, &vd)?;
        let mut expect = host.clone();
        let mut k = 0;
        for (e, m) in expect.iter_mut().zip(mask_h.iter()) {
            if m.truth() {
                *e = values[k];
                k += 1;
            }
        }
        assert!(
            same_bits(&target.to_vec()?, &expect.iter().copied().collect::<Vec<_>>()),
            "set_masked {what}"
        );
        // Into a transposed (not C-contiguous) array.
        let mut target = dev.to_contiguous()?;
        let fill = T::draw(rng);
        target.view_mut().reversed_axes().fill_masked(&mask.t(), fill)?;
        let mut expect = host.clone();
        for (e, m) in expect.iter_mut().zip(mask_h.iter()) {
            if m.truth() {
                *e = fill;
            }
        }
        assert!(
            same_bits(&target.to_vec()?, &expect.iter().copied().collect::<Vec<_>>()),
            "fill_masked {what}"
        );
        // A values array of the wrong length.
        if sel.len() > 1 {
            let short = DeviceArray::from_ndarray(ctx, &Array::from(values[..sel.len() - 1].to_vec()))?;
            let mut target = dev.to_contiguous()?;
            assert!(target.set_masked(&mask, &short).is_err());
        }
    }
    Ok(())
}

fn compactions_of<T: Draw>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    for shape in [
        vec![],
        vec![0],
        vec![0, 3],
        vec![1],
        vec![4095],
        vec![4096],
        vec![4097],
        vec![100_003],
        vec![37, 129],
        vec![5, 6, 300],
    ] {
        let h = random::<T>(rng, &shape);
        check_compaction(ctx, rng, &h)?;
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn compactions_of_every_type_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(46);
    compactions_of::<Bool>(&ctx, &mut rng)?;
    compactions_of::<i8>(&ctx, &mut rng)?;
    compactions_of::<u8>(&ctx, &mut rng)?;
    compactions_of::<i16>(&ctx, &mut rng)?;
    compactions_of::<u16>(&ctx, &mut rng)?;
    compactions_of::<i32>(&ctx, &mut rng)?;
    compactions_of::<u32>(&ctx, &mut rng)?;
    compactions_of::<i64>(&ctx, &mut rng)?;
    compactions_of::<u64>(&ctx, &mut rng)?;
    compactions_of::<f16>(&ctx, &mut rng)?;
    compactions_of::<bf16>(&ctx, &mut rng)?;
    compactions_of::<f32>(&ctx, &mut rng)?;
    compactions_of::<f64>(&ctx, &mut rng)?;
    compactions_of::<Complex32>(&ctx, &mut rng)?;
    compactions_of::<Complex64>(&ctx, &mut rng)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_large_compaction_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(7);
    let n = (1 << 24) + 12345;
    let h: Vec<f32> = (0..n).map(|_| f32::draw(&mut rng)).collect();
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
    let want: Vec<i64> = (0..n).filter(|&i| h[i] != 0.0).map(|i| i as i64).collect();
    assert_eq!(d.flatnonzero()?.to_vec()?, want);
    let mask_h: Vec<Bool> = h.iter().map(|v| Bool::from(*v != 0.0)).collect();
    let mask = DeviceArray::from_ndarray(&ctx, &Array::from(mask_h))?;
    let sel: Vec<f32> = h.iter().copied().filter(|v| *v != 0.0).collect();
    assert!(same_bits(&d.masked(&mask)?.to_vec()?, &sel));
    Ok(())
}

/// More tiles than one round of the tiles' offset scan takes (16,384 tiles: 2^26 elements of
/// the index forms, 2^26 `u32` of `a[mask]`), so that the scan carries a total from one round
/// to the next.
#[test]
#[ignore = "needs a CUDA GPU"]
fn compactions_past_one_round_of_the_tile_scan_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let n = (1usize << 26) + 3 * 4096 + 17;
    let keep = |i: usize| i.is_multiple_of(3) || i % 7 == 5;
    let mask_h: Vec<Bool> = (0..n).map(|i| Bool::from(keep(i))).collect();
    let mask = DeviceArray::from_ndarray(&ctx, &Array::from(mask_h))?;
    let want: Vec<i64> = (0..n).filter(|&i| keep(i)).map(|i| i as i64).collect();
    let got = mask.flatnonzero()?.to_vec()?;
    assert_eq!(got.len(), want.len());
    assert!(got == want, "flatnonzero past one round of the scan");
    let values = DeviceArray::from_ndarray(&ctx, &Array::from((0..n as u32).collect::<Vec<u32>>()))?;
    let sel = values.masked(&mask)?.to_vec()?;
    assert!(
        sel.iter().map(|&v| i64::from(v)).eq(want.iter().copied()),
        "a[mask] past one round"
    );
    assert_eq!(mask.count_nonzero()?, want.len());
    Ok(())
}

fn take_along_with<I: IndexElement + TryFrom<i64>>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()>
where
    <I as TryFrom<i64>>::Error: std::fmt::Debug,
{
    let signed = I::try_from(-1).is_ok();
    let h: ArrayD<f32> = random::<f32>(rng, &[4, 5, 6]);
    let d = DeviceArray::from_ndarray(ctx, &h)?;
    for axis in [0isize, 1, 2, -1] {
        let ax = axis.rem_euclid(3) as usize;
        let len = h.shape()[ax] as i64;
        // Indices: the shape of `h` with 3 along `axis`, some of the others 1 (broadcast).
        let mut ishape = h.shape().to_vec();
        ishape[ax] = 3;
        if ax != 0 {
            ishape[0] = 1;
        }
        let raw: Vec<i64> = (0..ishape.iter().product::<usize>())
            .map(|_| {
                let v = (rng.next_u64() % len as u64) as i64;
                if signed && rng.next_u64().is_multiple_of(2) {
                    v - len
                } else {
                    v
                }
            })
            .collect();
        let ih = Array::from_shape_vec(
            IxDyn(&ishape),
            raw.iter().map(|&v| I::try_from(v).unwrap()).collect(),
        )
        .unwrap();
        let iv = Array::from_shape_vec(IxDyn(&ishape), raw).unwrap();
        let id = DeviceArray::from_ndarray(ctx, &ih)?;
        let got = d.take_along_axis(&id, axis)?;
        let mut oshape = h.shape().to_vec();
        oshape[ax] = 3;
        assert_eq!(got.shape(), &oshape[..]);
        let got = got.to_ndarray()?;
        for (ix, g) in got.indexed_iter() {
            let mut ii = ix.slice().to_vec();
            if ax != 0 {
                ii[0] = 0;
            }
            let mut src = ix.slice().to_vec();
            src[ax] = iv[IxDyn(&ii)].rem_euclid(len) as usize;
            assert!(
                same_bits(&[*g], &[h[IxDyn(&src)]]),
                "{} axis {axis} at {ix:?}",
                std::any::type_name::<I>()
            );
        }
        // `take` with the same index type, flattened.
        let flat_i = DeviceArray::from_ndarray(ctx, &ih.iter().copied().collect::<Array<I, _>>())?;
        let t = d.take(&flat_i, ax, IndexMode::Wrap)?;
        assert_eq!(t.shape()[ax], flat_i.len());
        // An index out of range.
        let bad = Array::from_shape_vec(
            IxDyn(&ishape),
            vec![I::try_from(len).unwrap(); ishape.iter().product()],
        )
        .unwrap();
        let bad = DeviceArray::from_ndarray(ctx, &bad)?;
        assert!(matches!(
            d.take_along_axis(&bad, axis),
            Err(Error::Shape(ArrayShapeError::IndexOutOfRange { .. }))
        ));
    }
    // A transposed array, a different number of axes.
    let dt = d.t();
    let i1 = DeviceArray::from_ndarray(
        ctx,
        &Array::from_shape_vec(IxDyn(&[1, 1, 1]), vec![I::try_from(0).unwrap()]).unwrap(),
    )?;
    // NumPy broadcasts the (1, 1, 1) indices against the other axes of the (6, 5, 4) view:
    // the result is (1, 5, 4), `out[0, j, k] = dt[0, j, k] = h[k, j, 0]`.
    let got = dt.take_along_axis(&i1, 0)?;
    assert_eq!(got.shape(), &[1, 5, 4]);
    let want: Vec<f32> = h.t().index_axis(Axis(0), 0).iter().copied().collect();
    assert!(same_bits(&got.to_vec()?, &want));
    let i2 = DeviceArray::from_ndarray(ctx, &Array::from(vec![I::try_from(0).unwrap()]))?;
    assert!(d.take_along_axis(&i2, 0).is_err());
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn take_along_axis_and_take_with_every_index_type_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(3);
    take_along_with::<i8>(&ctx, &mut rng)?;
    take_along_with::<u8>(&ctx, &mut rng)?;
    take_along_with::<i16>(&ctx, &mut rng)?;
    take_along_with::<u16>(&ctx, &mut rng)?;
    take_along_with::<i32>(&ctx, &mut rng)?;
    take_along_with::<u32>(&ctx, &mut rng)?;
    take_along_with::<i64>(&ctx, &mut rng)?;
    take_along_with::<u64>(&ctx, &mut rng)?;
    // Other element types through the same kernel.
    let h = random::<Complex64>(&mut rng, &[3, 4]);
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    let i = DeviceArray::from_ndarray(
        &ctx,
        &Array::from_shape_vec(IxDyn(&[3, 1]), vec![3u8, 0, 1]).unwrap(),
    )?;
    let got = d.take_along_axis(&i, 1)?.to_vec()?;
    assert_eq!(got, [h[[0, 3]], h[[1, 0]], h[[2, 1]]]);
    Ok(())
}

fn bincount_of<T: IndexElement + TryFrom<u64>>(
    ctx: &Context,
    rng: &mut Rng,
    max: u64,
) -> gpu_runtime::Result<()>
where
    <T as TryFrom<u64>>::Error: std::fmt::Debug,
{
    for n in [0usize, 1, 1000, 300_001] {
        let v: Vec<u64> = (0..n).map(|_| rng.next_u64() % max).collect();
        let h: Vec<T> = v.iter().map(|&x| T::try_from(x).unwrap()).collect();
        let w: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
        let d = DeviceArray::from_ndarray(ctx, &Array::from(h))?;
        let wd = DeviceArray::from_ndarray(ctx, &Array::from(w.clone()))?;
        for minlength in [0usize, 5, max as usize + 3] {
            let len = v
                .iter()
                .map(|&x| x as usize + 1)
                .max()
                .unwrap_or(0)
                .max(minlength);
            let mut counts = vec![0i64; len];
            let mut sums = vec![0f64; len];
            for (x, wt) in v.iter().zip(&w) {
                counts[*x as usize] += 1;
                sums[*x as usize] += f64::from(*wt);
            }
            assert_eq!(
                d.bincount(minlength)?.to_vec()?,
                counts,
                "{} n {n}",
                std::any::type_name::<T>()
            );
            let got = d.bincount_weighted(&wd, minlength)?.to_vec()?;
            for (g, s) in got.iter().zip(&sums) {
                assert!(
                    (g - s).abs() <= 1e-9 * (1.0 + s.abs()) * n as f64,
                    "weighted: {g} vs {s}"
                );
            }
            assert_eq!(got.len(), len);
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bincount_of_every_integer_type_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(11);
    bincount_of::<i8>(&ctx, &mut rng, 100)?;
    bincount_of::<u8>(&ctx, &mut rng, 256)?;
    bincount_of::<i16>(&ctx, &mut rng, 5000)?;
    bincount_of::<u16>(&ctx, &mut rng, 60000)?;
    bincount_of::<i32>(&ctx, &mut rng, 17)?;
    bincount_of::<u32>(&ctx, &mut rng, 4096)?;
    bincount_of::<i64>(&ctx, &mut rng, 100_000)?;
    bincount_of::<u64>(&ctx, &mut rng, 3)?;
    // Negative values, a strided view, a weight array of another shape.
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(vec![3i32, -2, 5, 1, 1, 0]))?;
    assert!(matches!(
        d.bincount(0),
        Err(Error::Shape(ArrayShapeError::NegativeValue { value: -2, .. }))
    ));
    let stepped = d.slice(s![..;2])?;
    assert_eq!(stepped.bincount(0)?.to_vec()?, [0, 1, 0, 1, 0, 1]);
    let w = DeviceArray::<f64, _>::zeros(&ctx, 4)?;
    assert!(d.bincount_weighted(&w, 0).is_err());
    // NumPy takes 1-d input only.
    let z = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr0(2u8))?;
    assert!(z.bincount(0).is_err());
    let two = DeviceArray::<u8, _>::zeros(&ctx, (2, 2))?;
    assert!(two.bincount(0).is_err());
    Ok(())
}

/// NumPy's histogram on the host: bin `i` is `[e[i], e[i+1])`, the last closed; the edges as
/// the library computes them (checked separately against NumPy's values). NaN and values
/// outside the edges are not counted.
pub(super) fn host_histogram(x: &[f64], e: &[f64]) -> Vec<i64> {
    let n = e.len() - 1;
    let mut c = vec![0i64; n];
    for &v in x {
        if !(v >= e[0] && v <= e[n]) {
            continue;
        }
        let b = e.partition_point(|&t| t <= v).saturating_sub(1).min(n - 1);
        c[b] += 1;
    }
    c
}

/// [`host_histogram`] with weights: each bin's sum of the weights of its values.
fn host_weighted_histogram(x: &[f64], w: &[f64], e: &[f64]) -> Vec<f64> {
    let n = e.len() - 1;
    let mut c = vec![0.0; n];
    for (&v, &wt) in x.iter().zip(w) {
        if !(v >= e[0] && v <= e[n]) {
            continue;
        }
        let b = e.partition_point(|&t| t <= v).saturating_sub(1).min(n - 1);
        c[b] += wt;
    }
    c
}

fn histogram_of<T: Element>(
    ctx: &Context,
    rng: &mut Rng,
    from: impl Fn(f64) -> T,
    to: impl Fn(T) -> f64,
) -> gpu_runtime::Result<()> {
    for n in [0usize, 1, 999, 250_001] {
        let h: Vec<T> = (0..n).map(|_| from(rng.f64() * 50.0)).collect();
        let x: Vec<f64> = h.iter().map(|&v| to(v)).collect();
        let d = DeviceArray::from_ndarray(ctx, &Array::from(h))?;
        for bins in [1usize, 10, 4096, 5000] {
            for range in [None, Some((-10.0, 20.0))] {
                let (c, e) = d.histogram(Bins::Count { bins, range })?;
                let e = e.to_vec()?;
                assert_eq!(e.len(), bins + 1);
                assert_eq!(
                    c.to_vec()?,
                    host_histogram(&x, &e),
                    "{} n {n} bins {bins} {range:?}",
                    std::any::type_name::<T>()
                );
                if n > 0 && range.is_none() {
                    assert_eq!(
                        c.to_vec()?.iter().sum::<i64>(),
                        n as i64,
                        "every value in the data's range"
                    );
                }
                // Weights of small integers (f32, converted to f64): every sum is exact in
                // any order of the atomic adds.
                let wts: Vec<f32> = (0..n).map(|_| (rng.next_u64() % 7) as f32 - 3.0).collect();
                let wd = DeviceArray::from_ndarray(ctx, &Array::from(wts.clone()))?;
                let (sums, we) = d.histogram_weighted(Bins::Count { bins, range }, &wd)?;
                assert_eq!(we.to_vec()?, e, "weighted edges");
                let wf: Vec<f64> = wts.iter().map(|&v| f64::from(v)).collect();
                assert_eq!(
                    sums.to_vec()?,
                    host_weighted_histogram(&x, &wf, &e),
                    "weighted {} n {n} bins {bins} {range:?}",
                    std::any::type_name::<T>()
                );
                // NumPy's density: counts over the total and the bin widths.
                let counts = c.to_vec()?;
                let total: i64 = counts.iter().sum();
                let density =
                    histogram_density(&c, &DeviceArray::from_ndarray(ctx, &Array::from(e.clone()))?)?
                        .to_vec()?;
                for (k, (&g, &cnt)) in density.iter().zip(&counts).enumerate() {
                    let want = cnt as f64 / total as f64 / (e[k + 1] - e[k]);
                    assert!(
                        // Equal also when both are infinite: a 16-bit type's edges can round
                        // to one value, a bin of width 0 (NumPy divides by it too).
                        (g.is_nan() && want.is_nan()) || g == want || (g - want).abs() <= 1e-12 * want.abs(),
                        "density bin {k}: {g} against {want}"
                    );
                }
            }
        }
        let edges = [-3.0, 0.0, 0.0, 2.5, 10.0, 10.0, 49.0];
        let (c, e) = d.histogram(Bins::Edges(&edges))?;
        assert_eq!(e.to_vec()?, edges);
        assert_eq!(c.to_vec()?, host_histogram(&x, &edges));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn histograms_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(5);
    histogram_of::<f32>(&ctx, &mut rng, |v| v as f32, f64::from)?;
    histogram_of::<f64>(&ctx, &mut rng, |v| v, |v| v)?;
    histogram_of::<f16>(&ctx, &mut rng, f16::from_f64, |v| v.to_f64())?;
    histogram_of::<i32>(&ctx, &mut rng, |v| v as i32, f64::from)?;
    histogram_of::<u8>(&ctx, &mut rng, |v| v as u8, f64::from)?;
    histogram_of::<i64>(&ctx, &mut rng, |v| v as i64 - 25, |v| v as f64)?;
    // NumPy's values: np.histogram([1, 2, 2, 4], 3) and the right edge of the last bin.
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(vec![1.0f64, 2.0, 2.0, 4.0]))?;
    let (c, e) = d.histogram(Bins::Count { bins: 3, range: None })?;
    assert_eq!(
        (c.to_vec()?, e.to_vec()?),
        (vec![1, 2, 1], vec![1.0, 2.0, 3.0, 4.0])
    );
    // NumPy's density=True of the same: [0.25, 0.5, 0.25].
    assert_eq!(histogram_density(&c, &e)?.to_vec()?, [0.25, 0.5, 0.25]);
    // CuPy's weighted cases: np.histogram(np.arange(9), [0, 1, 3, 6, 10],
    // weights=[2, 1, 1, 1, 1, 1, 1, 1, 1]) -> [2, 2, 3, 3]; np.histogram(np.linspace(0, 10, 10),
    // bins=np.arange(11), weights=[0] * 5 + [1] * 5) -> five 0s, five 1s.
    let d = DeviceArray::from_ndarray(&ctx, &Array::from((0..9i64).collect::<Vec<_>>()))?;
    let w = DeviceArray::from_ndarray(&ctx, &Array::from(vec![2i64, 1, 1, 1, 1, 1, 1, 1, 1]))?;
    let (sums, _) = d.histogram_weighted(Bins::Edges(&[0.0, 1.0, 3.0, 6.0, 10.0]), &w)?;
    assert_eq!(sums.to_vec()?, [2.0, 2.0, 3.0, 3.0]);
    let v = DeviceArray::<f64, _>::linspace(&ctx, 0.0, 10.0, 10, true)?;
    let w = DeviceArray::from_ndarray(&ctx, &Array::from([[0.0f64; 5], [1.0; 5]].concat()))?;
    let edges: Vec<f64> = (0..11).map(f64::from).collect();
    let (sums, _) = v.histogram_weighted(Bins::Edges(&edges), &w)?;
    assert_eq!(sums.to_vec()?, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
    // Weights of the 16-bit float types (their headers come with the weights' type).
    let w16 = DeviceArray::from_ndarray(&ctx, &Array::from(vec![f16::from_f64(0.5); 10]))?;
    let (sums, _) = v.histogram_weighted(Bins::Edges(&edges), &w16)?;
    assert_eq!(sums.to_vec()?, [0.5; 10]);
    let idx = DeviceArray::from_ndarray(&ctx, &Array::from(vec![0i32, 3, 3, 1, 0, 0, 2, 3, 3, 3]))?;
    let wb = DeviceArray::from_ndarray(&ctx, &Array::from(vec![bf16::from_f64(1.5); 10]))?;
    assert_eq!(idx.bincount_weighted(&wb, 0)?.to_vec()?, [4.5, 1.5, 1.5, 7.5]);
    assert_eq!(
        idx.bincount_weighted(&w16, 5)?.to_vec()?,
        [1.5, 0.5, 0.5, 2.5, 0.0]
    );
    // Complex weights are refused, as NumPy's bincount refuses to cast them to float64.
    let wz = DeviceArray::from_ndarray(&ctx, &Array::from(vec![Complex64::new(1.0, 2.0); 10]))?;
    assert!(matches!(
        v.histogram_weighted(Bins::Edges(&edges), &wz),
        Err(Error::Argument(ArgumentError::UndefinedOnElement { .. }))
    ));
    assert!(matches!(
        idx.bincount_weighted(&wz, 0),
        Err(Error::Argument(ArgumentError::UndefinedOnElement { .. }))
    ));
    assert!(matches!(
        v.histogram_weighted(Bins::Edges(&edges), &d),
        Err(Error::Shape(ArrayShapeError::ElementCounts { .. }))
    ));
    // All equal: the range widens by 0.5 (np.histogram([5, 5], 2) -> [1, 1]... edges 4.5, 5, 5.5).
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(vec![5i32, 5]))?;
    let (c, e) = d.histogram(Bins::Count { bins: 2, range: None })?;
    assert_eq!((c.to_vec()?, e.to_vec()?), (vec![0, 2], vec![4.5, 5.0, 5.5]));
    // NaN in the data: refused without a range, not counted with one.
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(vec![1.0f32, f32::NAN, 3.0]))?;
    assert!(matches!(
        d.histogram(Bins::Count { bins: 2, range: None }),
        Err(Error::Shape(ArrayShapeError::HistogramRange { .. }))
    ));
    let (c, _) = d.histogram(Bins::Count {
        bins: 2,
        range: Some((0.0, 4.0)),
    })?;
    assert_eq!(c.to_vec()?, [1, 1]);
    assert!(d.histogram(Bins::Count { bins: 0, range: None }).is_err());
    assert!(d
        .histogram(Bins::Count {
            bins: 2,
            range: Some((3.0, 1.0))
        })
        .is_err());
    assert!(d.histogram(Bins::Edges(&[1.0, 0.0])).is_err());
    // A transposed 2-d array is flattened.
    let h = Array::from_shape_vec((2, 3), vec![0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5]).unwrap();
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    let (c, _) = d.t().histogram(Bins::Count {
        bins: 2,
        range: Some((0.0, 6.0)),
    })?;
    assert_eq!(c.to_vec()?, [3, 3]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn axes_views_and_orders_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(9);
    let h = random::<f32>(&mut rng, &[2, 3, 4]);
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    let sw = d.view().swapaxes(0, -1)?;
    assert_eq!(sw.shape(), [4, 3, 2]);
    let mut hs = h.view();
    hs.swap_axes(0, 2);
    assert!(same_bits(&sw.to_vec()?, &hs.iter().copied().collect::<Vec<_>>()));
    let mv = d.view().moveaxis(&[0], &[-1])?;
    let hm = h.view().permuted_axes(vec![1, 2, 0]);
    assert_eq!(mv.shape(), hm.shape());
    assert!(same_bits(&mv.to_vec()?, &hm.iter().copied().collect::<Vec<_>>()));
    // Fortran-order copies and reshapes.
    let f = d.copy_order(Order::F)?;
    assert!(f.is_fortran_layout());
    assert!(same_bits(&f.to_vec()?, &h.iter().copied().collect::<Vec<_>>()));
    let r = d.reshape_order(&[4, 6], Order::F)?;
    let hr = h.to_shape(((4, 6), Order::F)).unwrap();
    assert!(same_bits(&r.to_vec()?, &hr.iter().copied().collect::<Vec<_>>()));
    let rt = d.t().reshape_order(&[24], Order::F)?;
    let ht: Vec<f32> = h.t().to_shape((24, Order::F)).unwrap().iter().copied().collect();
    assert!(same_bits(&rt.to_vec()?, &ht));
    // Views as other types: bytes of the host array.
    let ints: Vec<i32> = (0..12).map(|_| rng.next_u64() as i32).collect();
    let hi = Array::from_shape_vec((3, 4), ints.clone()).unwrap();
    let di = DeviceArray::from_ndarray(&ctx, &hi)?;
    let as16 = di.view_as::<i16>()?;
    assert_eq!(as16.shape(), [3, 8]);
    let want16: Vec<i16> = ints
        .iter()
        .flat_map(|v| [(*v as u32 & 0xffff) as i16, (*v as u32 >> 16) as i16])
        .collect();
    assert_eq!(as16.to_vec()?, want16);
    let as64 = di.view_as::<u64>()?;
    assert_eq!(as64.shape(), [3, 2]);
    let want64: Vec<u64> = ints
        .chunks(2)
        .map(|p| (p[0] as u32 as u64) | ((p[1] as u32 as u64) << 32))
        .collect();
    assert_eq!(as64.to_vec()?, want64);
    let asf = di.view_as::<f32>()?;
    assert_eq!(
        asf.to_vec()?
            .iter()
            .map(|f| f.to_bits() as i32)
            .collect::<Vec<_>>(),
        ints
    );
    // Transposed: same size only.
    assert_eq!(di.t().view_as::<u32>()?.shape(), [4, 3]);
    assert!(di.t().view_as::<i16>().is_err());
    let z = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr0(1i32))?;
    assert!(z.view_as::<i16>().is_err());
    // A view of a row from element 1: not aligned for u64.
    let row = di.slice(s![.., 1..3])?;
    assert!(row.view_as::<u64>().is_err());
    assert_eq!(row.view_as::<i16>()?.shape(), [3, 4]);
    Ok(())
}

fn randint_of<T: IndexElement + Ord + Into<i128>>(ctx: &Context, low: T, high: T) -> gpu_runtime::Result<()> {
    let n = 200_000;
    let a = DeviceArray::<T, _>::randint(ctx, n, low, high, 1234)?.to_vec()?;
    let b = DeviceArray::<T, _>::randint(ctx, n, low, high, 1234)?.to_vec()?;
    let c = DeviceArray::<T, _>::randint(ctx, n, low, high, 99)?.to_vec()?;
    assert_eq!(a, b, "the same seed gives the same values");
    assert!(
        a.iter().all(|v| *v >= low && *v < high),
        "{}",
        std::any::type_name::<T>()
    );
    let (lo, hi): (i128, i128) = (low.into(), high.into());
    let r = hi - lo;
    if r == 1 {
        // One value: nothing random to check but the range.
        return Ok(());
    }
    assert_ne!(a, c, "another seed gives others");
    if r <= 16 {
        // Every value about n / r times: within 6 standard deviations.
        let mut counts = vec![0i64; r as usize];
        for v in &a {
            let v: i128 = (*v).into();
            counts[(v - lo) as usize] += 1;
        }
        let e = n as f64 / r as f64;
        let sd = (e * (1.0 - 1.0 / r as f64)).sqrt();
        for (k, c) in counts.iter().enumerate() {
            assert!(
                (*c as f64 - e).abs() < 6.0 * sd,
                "value {k}: {c} of {n}, expected {e}"
            );
        }
    } else {
        // The mean within 6 standard deviations of the range's.
        let mean: f64 = a
            .iter()
            .map(|v| (Into::<i128>::into(*v) - lo) as f64)
            .sum::<f64>()
            / n as f64;
        let (m, sd) = (
            (r as f64 - 1.0) / 2.0,
            r as f64 / 12f64.sqrt() / (n as f64).sqrt(),
        );
        assert!((mean - m).abs() < 6.0 * sd, "mean {mean}, expected {m}");
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn randint_is_uniform_in_its_range_for_every_integer_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    randint_of::<i8>(&ctx, -5, 3)?;
    randint_of::<i8>(&ctx, i8::MIN, i8::MAX)?;
    randint_of::<u8>(&ctx, 0, 255)?;
    randint_of::<i16>(&ctx, -300, 300)?;
    randint_of::<u16>(&ctx, 7, 10)?;
    randint_of::<i32>(&ctx, 1, 7)?;
    randint_of::<i32>(&ctx, i32::MIN, i32::MAX)?;
    randint_of::<u32>(&ctx, 0, u32::MAX)?;
    randint_of::<i64>(&ctx, -3, 13)?;
    randint_of::<i64>(&ctx, i64::MIN, i64::MAX)?;
    randint_of::<i64>(&ctx, 0, 3_000_000_000_000)?;
    randint_of::<u64>(&ctx, 0, u64::MAX)?;
    randint_of::<u64>(&ctx, 5, 6)?;
    assert!(matches!(
        DeviceArray::<i32, _>::randint(&ctx, 4, 3, 3, 0),
        Err(Error::Shape(ArrayShapeError::EmptyRange { ref low, ref high })) if low == "3" && high == "3"
    ));
    // A transposed array is filled in C order of its own indices.
    let mut t = DeviceArray::<i16, _>::zeros(&ctx, (40, 30).f())?;
    t.fill_randint(-2, 2, 8)?;
    let c = DeviceArray::<i16, _>::randint(&ctx, (40, 30), -2, 2, 8)?;
    assert_eq!(t.to_vec()?, c.to_vec()?);
    Ok(())
}
