//! Writes where a mask holds (`putmask`, `place`), the main diagonal (`fill_diagonal`,
//! `diag_indices`), the open mesh (`ix_`) and `real_if_close` on a GPU, against NumPy's
//! definitions written on the host, on random data: masks of every density, values shorter
//! and longer than the positions, element types of 1 to 16 bytes, tall, wide and cubic
//! arrays, and the refusals NumPy makes.

use gpu_runtime::gpuarray::{self, math, Bool, DeviceArray, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr1, Array, ArrayD, Dimension, IxDyn};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::{ArrayShapeError, Context, Error};
use gpu_suite::Rng;

/// `putmask` and `place` of `T` against the host: `a.flat[i] = values[i % len]` where the
/// mask holds (putmask), the k-th true position gets `vals[k % len]` (place).
fn mask_writes<T: Element + PartialEq + std::fmt::Debug>(
    ctx: &Context,
    rng: &mut Rng,
    make: impl Fn(u64) -> T,
) -> gpu_runtime::Result<()> {
    for shape in [vec![0usize], vec![1], vec![37], vec![6, 7], vec![3, 4, 5]] {
        let n: usize = shape.iter().product();
        for density in [0u64, 1, 5, 10] {
            let host: Vec<T> = (0..n).map(|_| make(rng.next_u64())).collect();
            let mask: Vec<bool> = (0..n).map(|_| rng.next_u64() % 10 < density).collect();
            for nv in [1usize, 3, n.max(1), n + 4] {
                let values: Vec<T> = (0..nv).map(|_| make(rng.next_u64())).collect();
                let what = format!(
                    "{} {shape:?} density {density} values {nv}",
                    std::any::type_name::<T>()
                );
                let dmask = DeviceArray::from_ndarray(
                    ctx,
                    &Array::from_shape_vec(IxDyn(&shape), mask.iter().map(|&b| Bool::from(b)).collect())
                        .unwrap(),
                )?;
                let dvalues = DeviceArray::from_ndarray(ctx, &arr1(&values))?;
                let fresh = || {
                    DeviceArray::from_ndarray(
                        ctx,
                        &Array::from_shape_vec(IxDyn(&shape), host.clone()).unwrap(),
                    )
                };

                let mut a = fresh()?;
                gpuarray::putmask(&mut a, &dmask, &dvalues)?;
                let want: Vec<T> = (0..n)
                    .map(|i| if mask[i] { values[i % nv] } else { host[i] })
                    .collect();
                assert_eq!(a.to_vec()?, want, "putmask {what}");

                let mut a = fresh()?;
                gpuarray::place(&mut a, &dmask, &dvalues)?;
                let mut k = 0;
                let want: Vec<T> = (0..n)
                    .map(|i| {
                        if mask[i] {
                            k += 1;
                            values[(k - 1) % nv]
                        } else {
                            host[i]
                        }
                    })
                    .collect();
                assert_eq!(a.to_vec()?, want, "place {what}");
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn putmask_and_place_write_where_the_mask_holds() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(77);
    mask_writes(&ctx, &mut rng, |r| (r % 1000) as f64 - 500.0)?;
    mask_writes(&ctx, &mut rng, |r| r as u8)?;
    mask_writes(&ctx, &mut rng, |r| f16::from_f32((r % 200) as f32 / 8.0))?;
    mask_writes(&ctx, &mut rng, |r| r as i64)?;
    mask_writes(&ctx, &mut rng, |r| {
        Complex64::new((r % 97) as f64, (r % 13) as f64)
    })?;

    // A mask of another element type: nonzero is true (NumPy converts it to bool).
    let mut a = DeviceArray::from_ndarray(&ctx, &arr1(&[0, 1, 2, 3, 4, 5]))?;
    let mask = DeviceArray::from_ndarray(&ctx, &arr1(&[0.0f32, 2.5, 0.0, -1.0, f32::NAN, 0.0]))?;
    let values = DeviceArray::from_ndarray(&ctx, &arr1(&[10, 20]))?;
    gpuarray::putmask(&mut a, &mask, &values)?;
    assert_eq!(a.to_vec()?, [0, 20, 2, 20, 10, 5]);
    // NumPy's docstring: putmask(x, x > 2, x**2) of arange(6).reshape(2, 3).
    let mut x = DeviceArray::<i32, _>::arange(&ctx, 0.0, 6.0, 1.0)?.reshape((2, 3))?;
    let squares = (&x * &x).eval()?;
    let big = x.gt(2)?;
    gpuarray::putmask(&mut x, &big, &squares)?;
    assert_eq!(x.to_vec()?, [0, 1, 2, 9, 16, 25]);
    // place(a, a > 2, [44, 55]) of arange(6): the values repeat.
    let mut a = DeviceArray::<i32, _>::arange(&ctx, 0.0, 6.0, 1.0)?;
    let big = a.gt(2)?;
    gpuarray::place(&mut a, &big, &DeviceArray::from_ndarray(&ctx, &arr1(&[44, 55]))?)?;
    assert_eq!(a.to_vec()?, [0, 1, 2, 44, 55, 44]);

    // The refusals: a mask of another size; `place` from nothing where the mask holds (but
    // not where it holds nowhere); no values write nothing.
    let mut a = DeviceArray::<f32, _>::zeros(&ctx, 4)?;
    let short = DeviceArray::from_ndarray(&ctx, &arr1(&[Bool::from(true)]))?;
    let one = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32]))?;
    for r in [
        gpuarray::putmask(&mut a, &short, &one),
        gpuarray::place(&mut a, &short, &one),
    ] {
        assert!(
            matches!(r, Err(Error::Shape(ArrayShapeError::ElementCounts { .. }))),
            "{r:?}"
        );
    }
    let none = DeviceArray::<f32, _>::zeros(&ctx, 0)?;
    let all = DeviceArray::from_ndarray(&ctx, &arr1(&[Bool::from(true); 4]))?;
    let nowhere = DeviceArray::from_ndarray(&ctx, &arr1(&[Bool::from(false); 4]))?;
    let r = gpuarray::place(&mut a, &all, &none);
    assert!(
        matches!(
            r,
            Err(Error::Shape(ArrayShapeError::EmptyOperand {
                operand: "vals",
                ..
            }))
        ),
        "{r:?}"
    );
    gpuarray::place(&mut a, &nowhere, &none)?;
    gpuarray::putmask(&mut a, &all, &none)?;
    assert_eq!(a.to_vec()?, [0.0; 4]);
    // Written in place: a transposed view is refused, not copied and lost.
    let mut m = DeviceArray::<f32, _>::zeros(&ctx, (2, 2))?;
    let mut t = m.view_mut().reversed_axes();
    let mask = DeviceArray::from_ndarray(&ctx, &arr1(&[Bool::from(true); 4]))?;
    let r = gpuarray::putmask(&mut t, &mask, &one);
    assert!(matches!(r, Err(Error::NotContiguous { .. })), "{r:?}");
    Ok(())
}

/// NumPy's `fill_diagonal` on the host: `a.flat[:end:step] = values` repeated.
fn host_fill_diagonal<T: Copy>(a: &mut ArrayD<T>, values: &[T], wrap: bool) {
    let shape = a.shape().to_vec();
    let (step, end) = if shape.len() == 2 {
        let end = if wrap || shape[0] <= shape[1] {
            shape[0] * shape[1]
        } else {
            shape[1] * shape[1]
        };
        (shape[1] + 1, end)
    } else {
        let mut stride = 1;
        let mut step = 1;
        for _ in 1..shape.len() {
            stride *= shape[0];
            step += stride;
        }
        (step, a.len())
    };
    let flat = a.as_slice_mut().unwrap();
    for (k, i) in (0..end).step_by(step).enumerate() {
        flat[i] = values[k % values.len()];
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fill_diagonal_and_diag_indices_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(5);
    for shape in [
        vec![4usize, 4],
        vec![3, 5],
        vec![7, 3],
        vec![1, 1],
        vec![0, 3],
        vec![3, 3, 3],
        vec![2, 2, 2, 2],
    ] {
        let n: usize = shape.iter().product();
        let host = Array::from_shape_vec(IxDyn(&shape), (0..n).map(|_| rng.f64()).collect()).unwrap();
        for wrap in [false, true] {
            for values in [
                vec![-1.0],
                vec![10.0, 20.0],
                (0..9).map(|k| 100.0 + k as f64).collect(),
            ] {
                let mut want = host.clone();
                host_fill_diagonal(&mut want, &values, wrap);
                let mut a = DeviceArray::from_ndarray(&ctx, &host)?;
                a.fill_diagonal_with(&DeviceArray::from_ndarray(&ctx, &arr1(&values))?, wrap)?;
                assert_eq!(
                    a.to_vec()?,
                    want.iter().copied().collect::<Vec<_>>(),
                    "{shape:?} wrap {wrap} {values:?}"
                );
            }
            let mut want = host.clone();
            host_fill_diagonal(&mut want, &[7.5], wrap);
            let mut a = DeviceArray::from_ndarray(&ctx, &host)?;
            a.fill_diagonal(7.5, wrap)?;
            assert_eq!(
                a.to_vec()?,
                want.iter().copied().collect::<Vec<_>>(),
                "{shape:?} wrap {wrap} scalar"
            );
        }
    }
    // Other element types: one and sixteen bytes.
    let mut b = DeviceArray::<u8, _>::zeros(&ctx, (3, 4))?;
    b.fill_diagonal(9, false)?;
    assert_eq!(b.to_vec()?, [9, 0, 0, 0, 0, 9, 0, 0, 0, 0, 9, 0]);
    let mut z = DeviceArray::<Complex64, _>::zeros(&ctx, (2, 2))?;
    z.fill_diagonal(Complex64::new(1.0, -1.0), false)?;
    assert_eq!(z.to_vec()?[3], Complex64::new(1.0, -1.0));
    // The refusals: one axis, unequal axes beyond two, a view not in C order.
    let mut v = DeviceArray::<f32, _>::zeros(&ctx, 5)?;
    let r = v.fill_diagonal(1.0, false);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::NotSquare { .. }))),
        "{r:?}"
    );
    let mut c = DeviceArray::<f32, _>::zeros(&ctx, (2, 2, 3))?;
    let r = c.fill_diagonal(1.0, false);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::NotSquare { .. }))),
        "{r:?}"
    );
    let mut m = DeviceArray::<f32, _>::zeros(&ctx, (3, 4))?;
    let r = m.view_mut().reversed_axes().fill_diagonal(1.0, false);
    assert!(matches!(r, Err(Error::NotContiguous { .. })), "{r:?}");

    // diag_indices: index arrays that pick the diagonal (a[i, i, i] through flat positions).
    let idx = gpuarray::diag_indices(&ctx, 4, 3)?;
    assert_eq!(idx.len(), 3);
    for i in &idx {
        assert_eq!(i.to_vec()?, [0i64, 1, 2, 3]);
    }
    let cube = DeviceArray::<f32, _>::zeros(&ctx, (3, 3, 3))?;
    let from = gpuarray::diag_indices_from(&cube)?;
    assert_eq!((from.len(), from[2].to_vec()?), (3, vec![0i64, 1, 2]));
    let r = gpuarray::diag_indices_from(&DeviceArray::<f32, _>::zeros(&ctx, (3, 4))?);
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::NotSquare { .. }))),
        "{r:?}"
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn ix_views_broadcast_to_the_cross_product() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(11);
    let lens = [3usize, 1, 4];
    let host: Vec<Vec<f64>> = lens
        .iter()
        .map(|&n| (0..n).map(|_| rng.f64()).collect())
        .collect();
    let dev: Vec<_> = host
        .iter()
        .map(|h| DeviceArray::from_ndarray(&ctx, &arr1(h)))
        .collect::<Result<_, _>>()?;
    let refs: Vec<_> = dev.iter().collect();
    let mesh = gpuarray::ix_(&refs)?;
    for (k, m) in mesh.iter().enumerate() {
        let mut shape = [1usize; 3];
        shape[k] = lens[k];
        assert_eq!(m.shape(), &shape[..]);
        assert_eq!(m.to_vec()?, host[k]);
    }
    // x + y + z over the mesh is the outer sum.
    let sum = (mesh[0].expr() + &mesh[1] + &mesh[2]).eval()?;
    let want = ArrayD::from_shape_fn(IxDyn(&lens), |i| host[0][i[0]] + host[1][i[1]] + host[2][i[2]]);
    assert_eq!(sum.shape(), want.shape());
    for (g, w) in sum.to_vec()?.iter().zip(want.iter()) {
        assert!((g - w).abs() <= 1e-12, "{g} against {w}");
    }
    // A strided vector keeps its stride; none gives none.
    let every_other = dev[2].slice(gpu_runtime::ndarray::s![..;2])?;
    let mesh = gpuarray::ix_(&[&every_other])?;
    assert_eq!(mesh[0].to_vec()?, [host[2][0], host[2][2]]);
    let none: [&DeviceArray<f64, gpu_runtime::ndarray::Ix1>; 0] = [];
    assert!(gpuarray::ix_(&none)?.is_empty());
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn real_if_close_drops_small_imaginary_parts() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(3);
    let n = 1000;
    let re: Vec<f64> = (0..n).map(|_| rng.f64() * 10.0 - 5.0).collect();
    // Imaginary parts below 100 epsilons (NumPy's default tol): `Rng::f64` is in [-1, 1).
    let small: Vec<f64> = (0..n).map(|_| rng.f64() * 99.0 * f64::EPSILON).collect();
    let z: Vec<Complex64> = re
        .iter()
        .zip(&small)
        .map(|(&r, &i)| Complex64::new(r, i))
        .collect();
    let d = DeviceArray::from_ndarray(&ctx, &arr1(&z))?;
    assert_eq!(
        math::real_if_close(&d, 100.0)?.map(|r| r.to_vec()).transpose()?,
        Some(re.clone())
    );
    // An absolute tolerance (at most 1) below the largest imaginary part: kept complex.
    let largest = small.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(math::real_if_close(&d, largest / 2.0)?.is_none());
    assert!(math::real_if_close(&d, largest * 2.0)?.is_some());
    let mut far = z.clone();
    far[n / 2].im = 1e-3;
    assert!(math::real_if_close(&DeviceArray::from_ndarray(&ctx, &arr1(&far))?, 100.0)?.is_none());
    // Complex32: epsilons of f32; a 2-d array keeps its shape.
    let z32: Vec<Complex32> = (0..12).map(|k| Complex32::new(k as f32, 1e-6)).collect();
    let d32 = DeviceArray::from_ndarray(&ctx, &Array::from_shape_vec((3, 4), z32).unwrap())?;
    let r = math::real_if_close(&d32, 100.0)?.expect("1e-6 is below 100 f32 epsilons");
    assert_eq!(
        (r.shape(), r.to_vec()?),
        (&[3, 4][..], (0..12).map(|k| k as f32).collect::<Vec<_>>())
    );
    // A tolerance of at most 1 is absolute (NumPy's rule): 1e-6 is not below 1e-7.
    assert!(math::real_if_close(&d32, 1.0)?.is_some());
    assert!(math::real_if_close(&d32, 1e-7)?.is_none());
    // NaN imaginary parts are not close; an empty array is (NumPy: all of nothing).
    let nan = DeviceArray::from_ndarray(&ctx, &arr1(&[Complex64::new(1.0, f64::NAN)]))?;
    assert!(math::real_if_close(&nan, 100.0)?.is_none());
    let empty = DeviceArray::<Complex64, _>::zeros(&ctx, 0)?;
    assert_eq!(math::real_if_close(&empty, 100.0)?.map(|r| r.len()), Some(0));
    Ok(())
}

/// NumPy's `copyto(dst, src, where=mask)` on the host, after the leading unit axes of `src`
/// and `mask` beyond `dst`'s are dropped: broadcast by index.
fn host_copyto(dst: &ArrayD<f64>, src: &ArrayD<f64>, mask: Option<&ArrayD<bool>>) -> ArrayD<f64> {
    let nd = dst.ndim();
    let src = src
        .to_shape(IxDyn(&squeezed(src.shape(), nd)))
        .unwrap()
        .to_owned();
    let mask = mask.map(|m| m.to_shape(IxDyn(&squeezed(m.shape(), nd))).unwrap().to_owned());
    // The element of an array of `shape` (aligned on the last axis) that index `i` reads.
    let at = |shape: &[usize], i: &[usize]| {
        let lead = nd - shape.len();
        IxDyn(
            &shape
                .iter()
                .enumerate()
                .map(|(k, &d)| if d == 1 { 0 } else { i[lead + k] })
                .collect::<Vec<_>>(),
        )
    };
    ArrayD::from_shape_fn(dst.raw_dim(), |i| {
        let i = i.slice();
        if mask.as_ref().is_none_or(|m| m[at(m.shape(), i)]) {
            src[at(src.shape(), i)]
        } else {
            dst[IxDyn(i)]
        }
    })
}

/// `shape` without its leading 1s beyond `nd` axes.
fn squeezed(shape: &[usize], nd: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    while s.len() > nd && s[0] == 1 {
        s.remove(0);
    }
    s
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn copyto_broadcasts_converts_and_masks() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(21);
    let random = |rng: &mut Rng, shape: &[usize]| {
        let n: usize = shape.iter().product();
        Array::from_shape_vec(
            IxDyn(shape),
            (0..n).map(|_| (rng.next_u64() % 1000) as f64 / 8.0).collect(),
        )
        .unwrap()
    };
    // CuPy's cases: same shape, transposed source, broadcast, squeezed, a transposed target.
    let cases: [(&[usize], &[usize], &[usize]); 6] = [
        (&[2, 3, 4], &[2, 3, 4], &[2, 3, 4]),
        (&[2, 3, 4], &[3, 1], &[3, 4]),
        (&[3, 4], &[1, 1, 3, 4], &[1, 3, 4]),
        (&[2, 3, 4], &[1, 2, 1, 4], &[3, 4]),
        (&[5], &[1], &[1, 5]),
        (&[0, 3], &[3], &[1]),
    ];
    for (dst_shape, src_shape, mask_shape) in cases {
        let dst_h = random(&mut rng, dst_shape);
        let src_h = random(&mut rng, src_shape);
        let mask_n: usize = mask_shape.iter().product();
        let mask_h = Array::from_shape_vec(
            IxDyn(mask_shape),
            (0..mask_n).map(|_| rng.next_u64().is_multiple_of(2)).collect(),
        )
        .unwrap();
        let what = format!("{dst_shape:?} <- {src_shape:?} where {mask_shape:?}");
        let src = DeviceArray::from_ndarray(&ctx, &src_h)?;
        let mask = DeviceArray::from_ndarray(&ctx, &mask_h.mapv(Bool::from))?;
        let mut dst = DeviceArray::from_ndarray(&ctx, &dst_h)?;
        gpuarray::copyto(&mut dst, &src)?;
        assert_eq!(
            dst.to_vec()?,
            host_copyto(&dst_h, &src_h, None)
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            "{what}"
        );
        let mut dst = DeviceArray::from_ndarray(&ctx, &dst_h)?;
        gpuarray::copyto_where(&mut dst, &src, &mask)?;
        let want = host_copyto(&dst_h, &src_h, Some(&mask_h));
        assert_eq!(
            dst.to_vec()?,
            want.iter().copied().collect::<Vec<_>>(),
            "where {what}"
        );
        // Into a transposed view of a Fortran-order target, and from f32 and i32 sources.
        let mut t = DeviceArray::from_ndarray(&ctx, &dst_h.t().as_standard_layout().to_owned())?;
        let mut tv = t.view_mut().reversed_axes();
        gpuarray::copyto_where(&mut tv, &src.astype::<f32>()?, &mask)?;
        let got = DeviceArray::from_ndarray(&ctx, &ArrayD::<f64>::zeros(IxDyn(dst_shape)))?;
        let mut got = got;
        got.assign(&t.t())?;
        assert_eq!(
            got.to_vec()?,
            want.iter().copied().collect::<Vec<_>>(),
            "transposed {what}"
        );
    }
    // A bool source into every kind of number (CuPy's `test_copyto_dtype`), an integer one
    // into f16.
    let flags = DeviceArray::from_ndarray(&ctx, &arr1(&[true, false, true]).mapv(Bool::from))?;
    let mut i = DeviceArray::<i8, _>::zeros(&ctx, 3)?;
    gpuarray::copyto(&mut i, &flags)?;
    assert_eq!(i.to_vec()?, [1, 0, 1]);
    let mut z = DeviceArray::<Complex32, _>::zeros(&ctx, 3)?;
    gpuarray::copyto(&mut z, &flags)?;
    assert_eq!(z.to_vec()?[2], Complex32::new(1.0, 0.0));
    let mut h = DeviceArray::<f16, _>::zeros(&ctx, 3)?;
    gpuarray::copyto(
        &mut h,
        &DeviceArray::from_ndarray(&ctx, &arr1(&[-7i32, 0, 2048]))?,
    )?;
    assert_eq!(
        h.to_vec()?,
        [f16::from_f32(-7.0), f16::from_f32(0.0), f16::from_f32(2048.0)]
    );
    // The refusals of CuPy's `test_copyto_raises_shape`: nothing is written.
    for (d, s) in [
        (&[][..], &[2usize][..]),
        (&[2, 0, 5, 4], &[2, 0, 3, 4]),
        (&[6], &[2, 3]),
        (&[2, 3], &[6]),
    ] {
        let mut dst = DeviceArray::<i64, _>::zeros(&ctx, IxDyn(d))?;
        let src = DeviceArray::<i64, _>::ones(&ctx, IxDyn(s))?;
        let r = gpuarray::copyto(&mut dst, &src);
        assert!(matches!(r, Err(Error::Shape(_))), "{d:?} <- {s:?}: {r:?}");
        assert!(dst.to_vec()?.iter().all(|&v| v == 0));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sort_complex_orders_by_real_then_imaginary_parts() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8);
    // NumPy's order with NaN: R + Rj, R + nanj, nan + Rj, nan + nanj; parts drawn from few
    // values so that ties in the real part are common.
    let key = |z: &Complex64| {
        let part = |v: f64| if v.is_nan() { (1, 0.0) } else { (0, v) };
        let (a, b) = (part(z.re), part(z.im));
        (a.0, a.1, b.0, b.1)
    };
    for shape in [vec![100usize], vec![2, 5, 3], vec![4, 1], vec![3, 0]] {
        let n: usize = shape.iter().product();
        let pick = |rng: &mut Rng| match rng.next_u64() % 9 {
            0 => f64::NAN,
            k => k as f64 - 4.0,
        };
        let z: Vec<Complex64> = (0..n)
            .map(|_| Complex64::new(pick(&mut rng), pick(&mut rng)))
            .collect();
        let host = Array::from_shape_vec(IxDyn(&shape), z).unwrap();
        let got = DeviceArray::from_ndarray(&ctx, &host)?.sort_complex()?;
        assert_eq!(got.shape(), &shape[..]);
        let got = got.to_vec()?;
        let last = *shape.last().unwrap();
        for (row, g) in host
            .as_slice()
            .unwrap()
            .chunks(last.max(1))
            .zip(got.chunks(last.max(1)))
        {
            let mut want = row.to_vec();
            want.sort_by(|a, b| key(a).partial_cmp(&key(b)).unwrap());
            let same = |a: &Complex64, b: &Complex64| {
                (a.re == b.re || a.re.is_nan() && b.re.is_nan())
                    && (a.im == b.im || a.im.is_nan() && b.im.is_nan())
            };
            assert!(
                want.iter().zip(g).all(|(w, g)| same(w, g)),
                "{shape:?}: {g:?} against {want:?}"
            );
        }
    }
    let c32 = DeviceArray::from_ndarray(
        &ctx,
        &arr1(&[Complex32::new(2.0, 1.0), Complex32::new(-1.0, 5.0)]),
    )?;
    assert_eq!(
        c32.sort_complex()?.to_vec()?,
        [Complex32::new(-1.0, 5.0), Complex32::new(2.0, 1.0)]
    );
    let zero_d = DeviceArray::<Complex64, _>::zeros(&ctx, IxDyn(&[]))?;
    let r = zero_d.sort_complex();
    assert!(
        matches!(r, Err(Error::Shape(ArrayShapeError::ZeroDimensional { .. }))),
        "{r:?}"
    );
    Ok(())
}
