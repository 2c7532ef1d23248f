//! Broadcasting in elementwise launches (kernels, expressions, in-place operations,
//! `broadcast_to`), PyCUDA's indexed kernel text, and `linear_combination`, on the GPU against
//! CPU references (ndarray's own broadcasting) on random data: random shapes with empty and
//! 0-d arrays, axes of length 1, fewer axes on one side, reversed and stepped views, long rows
//! (the tiled strided path), several element types, NaN and infinity.

use gpu_runtime::gpuarray::{
    broadcast_shapes, linear_combination, Coefficient, DeviceArray, DeviceArrayView, ElementwiseKernel,
    KernelArg,
};
use gpu_runtime::ndarray::{arr0, Array, Array1, ArrayD, Axis, IxDyn, Slice};
use gpu_runtime::{ArgumentError, ArrayShapeError, Context, Error};
use gpu_suite::views::{info, Layout};
use gpu_suite::Rng;

/// A random shape of 0 to 3 axes: sometimes an empty axis, often axes of length 1, sometimes
/// one long axis (long rows take the tiled path).
fn out_shape(rng: &mut Rng) -> Vec<usize> {
    let ndim = (rng.next_u64() % 4) as usize;
    let mut large = false;
    (0..ndim)
        .map(|_| match rng.next_u64() % 12 {
            0 => 0,
            1 | 2 => 1,
            3 if !std::mem::replace(&mut large, true) => 300 + (rng.next_u64() % 3000) as usize,
            _ => 2 + (rng.next_u64() % 7) as usize,
        })
        .collect()
}

/// A shape that broadcasts to `to`: some leading axes dropped, some axes set to 1.
fn operand_shape(rng: &mut Rng, to: &[usize]) -> Vec<usize> {
    let drop = (rng.next_u64() % (to.len() as u64 + 1)) as usize;
    to[drop..]
        .iter()
        .map(|&d| if rng.next_u64().is_multiple_of(3) { 1 } else { d })
        .collect()
}

fn random(rng: &mut Rng, shape: &[usize]) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|_| rng.f32() * 2.0 - 1.0).collect();
    Array::from_shape_vec(IxDyn(shape), data).expect("the shape holds the data")
}

/// A random view (`gpu_suite::views`): the whole array, or (with at least one axis) its first
/// axis reversed, or every other element of its last axis taken from an array twice as long
/// there.
fn layout(rng: &mut Rng, shape: &[usize]) -> Layout {
    if shape.is_empty() {
        return Layout::Whole;
    }
    match rng.next_u64() % 3 {
        0 => Layout::Whole,
        1 => Layout::Reversed,
        _ => Layout::Stepped,
    }
}

/// The host data to upload for a view of `want` in `layout`: for `Reversed`, `want` reversed
/// on its first axis (the reversed view of it is `want`); for `Stepped`, `want` interleaved
/// with noise on its last axis.
fn backing(rng: &mut Rng, want: &ArrayD<f32>, layout: Layout) -> ArrayD<f32> {
    match layout {
        Layout::Whole => want.clone(),
        Layout::Reversed => want.slice_axis(Axis(0), Slice::new(0, None, -1)).to_owned(),
        Layout::Stepped => {
            let last = want.ndim() - 1;
            let mut shape = want.shape().to_vec();
            shape[last] *= 2;
            let mut b = random(rng, &shape);
            b.slice_axis_mut(Axis(last), Slice::new(0, None, 2)).assign(want);
            b
        }
    }
}

fn view(a: &DeviceArray<f32>, layout: Layout) -> DeviceArrayView<'_, f32> {
    a.slice(info(a.ndim(), layout)).expect("in bounds")
}

/// NaN where NaN is expected, the same infinities, and within `tol` elsewhere.
fn assert_matches(got: &ArrayD<f32>, want: &ArrayD<f32>, tol: f32, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    for (k, (&g, &w)) in got.iter().zip(want.iter()).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tol * (1.0 + w.abs());
        assert!(ok, "{what}: element {k}: got {g}, want {w}");
    }
}

/// `z = a * x + y` with x and y of random shapes that broadcast to z's, in random layouts.
#[test]
#[ignore = "needs a CUDA GPU"]
fn elementwise_kernels_broadcast_random_shapes() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let axpy = ElementwiseKernel::new(
        "float a, const float *x, const float *y, float *z",
        "z = a * x + y",
    )?;
    let mut rng = Rng::new(27);
    for round in 0..60 {
        let to = out_shape(&mut rng);
        let (sx, sy) = (operand_shape(&mut rng, &to), operand_shape(&mut rng, &to));
        let shape = broadcast_shapes(&[&sx, &sy])?;
        let (hx, hy) = (random(&mut rng, &sx), random(&mut rng, &sy));
        let (lx, ly) = (layout(&mut rng, &sx), layout(&mut rng, &sy));
        let (bx, by) = (backing(&mut rng, &hx, lx), backing(&mut rng, &hy, ly));
        let (x, y) = (
            DeviceArray::from_ndarray(&ctx, &bx)?,
            DeviceArray::from_ndarray(&ctx, &by)?,
        );
        let (vx, vy) = (view(&x, lx), view(&y, ly));
        let a = rng.f32() + 0.5;
        let mut z = DeviceArray::<f32>::zeros(&ctx, IxDyn(&shape))?;
        axpy.launch([
            KernelArg::scalar(a),
            KernelArg::input(&vx),
            KernelArg::input(&vy),
            KernelArg::output(&mut z),
        ])?;
        let want = &hx.broadcast(shape.clone()).expect("broadcasts") * a
            + &hy.broadcast(shape.clone()).expect("broadcasts");
        let what = format!("round {round}: {sx:?} ({lx:?}) with {sy:?} ({ly:?})");
        assert_matches(&z.to_ndarray()?, &want, 1e-6, &what);
        // Expressions broadcast the same way, into a new array of the broadcast shape.
        let e = (&vx * a + &vy).eval()?;
        assert_matches(&e.to_ndarray()?, &want, 1e-6, &format!("expression, {what}"));
    }
    Ok(())
}

/// The cases NumPy's broadcasting page draws, each as `x + y`, and the long rows of the tiled
/// path (`(n, m) + (m,)`, `(n, m) + (n, 1)`, rows not a multiple of a tile).
#[test]
#[ignore = "needs a CUDA GPU"]
fn numpy_s_cases_and_long_rows() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let add = ElementwiseKernel::new("const float *x, const float *y, float *z", "z = x + y")?;
    let mut rng = Rng::new(3);
    let cases: [(&[usize], &[usize]); 12] = [
        (&[4, 3], &[3]),
        (&[4, 1], &[3]),
        (&[4, 1], &[1, 3]),
        (&[15, 3, 5], &[15, 1, 5]),
        (&[15, 3, 5], &[3, 1]),
        (&[8, 1, 6, 1], &[7, 1, 5]),
        (&[5, 4], &[]),
        (&[], &[]),
        (&[0, 3], &[3]),
        (&[300, 5000], &[5000]),
        (&[700, 2049], &[700, 1]),
        (&[3, 1, 4097], &[2, 1]),
    ];
    for (sx, sy) in cases {
        let shape = broadcast_shapes(&[sx, sy])?;
        let (hx, hy) = (random(&mut rng, sx), random(&mut rng, sy));
        let (x, y) = (
            DeviceArray::from_ndarray(&ctx, &hx)?,
            DeviceArray::from_ndarray(&ctx, &hy)?,
        );
        let mut z = DeviceArray::<f32>::zeros(&ctx, IxDyn(&shape))?;
        // Both orders: the broadcast operand first or second.
        for swap in [false, true] {
            let (first, second) = if swap { (&y, &x) } else { (&x, &y) };
            add.launch([
                KernelArg::input(first),
                KernelArg::input(second),
                KernelArg::output(&mut z),
            ])?;
            let want = &hx.broadcast(shape.clone()).expect("broadcasts")
                + &hy.broadcast(shape.clone()).expect("broadcasts");
            assert_matches(&z.to_ndarray()?, &want, 0.0, &format!("{sx:?} + {sy:?}"));
        }
    }
    Ok(())
}

/// In-place operations broadcast what they read; an output that would have to grow, shapes
/// that do not broadcast, and outputs that overlap themselves are typed errors before launch.
#[test]
#[ignore = "needs a CUDA GPU"]
fn in_place_broadcasts_and_errors() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let axpy = ElementwiseKernel::new("float a, const float *x, float *y", "y += a * x")?;
    let mut rng = Rng::new(11);
    let (hy, hx) = (random(&mut rng, &[6, 1000]), random(&mut rng, &[1000]));
    let mut y = DeviceArray::from_ndarray(&ctx, &hy)?;
    let x = DeviceArray::from_ndarray(&ctx, &hx)?;
    axpy.launch([
        KernelArg::scalar(2.0f32),
        KernelArg::input(&x),
        KernelArg::output(&mut y),
    ])?;
    let want = &hy + &(&hx * 2.0f32);
    assert_matches(&y.to_ndarray()?, &want, 1e-6, "y += 2 x");
    // A 0-d operand.
    let s = DeviceArray::from_ndarray(&ctx, &arr0(-1.5f32).into_dyn())?;
    axpy.launch([
        KernelArg::scalar(1.0f32),
        KernelArg::input(&s),
        KernelArg::output(&mut y),
    ])?;
    assert_matches(&y.to_ndarray()?, &(&want - 1.5f32), 1e-6, "y += 0-d");
    // The result would be (6, 1000) but the output is (1000,): NumPy's error.
    let mut small = DeviceArray::from_ndarray(&ctx, &hx)?;
    let r = axpy.launch([
        KernelArg::scalar(1.0f32),
        KernelArg::input(&y),
        KernelArg::output(&mut small),
    ]);
    match r {
        Err(Error::Shape(ArrayShapeError::OutputShape { shape, broadcast, .. })) => {
            assert_eq!((shape, broadcast), (vec![1000], vec![6, 1000]));
        }
        other => panic!("{other:?}"),
    }
    // Shapes that do not broadcast name both.
    let three = DeviceArray::from_ndarray(&ctx, &random(&mut rng, &[3]))?;
    let r = axpy.launch([
        KernelArg::scalar(1.0f32),
        KernelArg::input(&three),
        KernelArg::output(&mut y),
    ]);
    match r {
        Err(Error::Shape(ArrayShapeError::Broadcast { shape, other })) => {
            assert_eq!((shape, other), (vec![3], vec![6, 1000]));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        (&x + &three).eval(),
        Err(Error::Shape(ArrayShapeError::Broadcast { .. }))
    ));
    Ok(())
}

/// `broadcast_to` is ndarray's `broadcast`, as a stride-0 view, for random shapes and
/// layouts; a shape it cannot reach is an error.
#[test]
#[ignore = "needs a CUDA GPU"]
fn broadcast_to_matches_ndarray() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8);
    for _ in 0..30 {
        let to = out_shape(&mut rng);
        let from = operand_shape(&mut rng, &to);
        let h = random(&mut rng, &from);
        let l = layout(&mut rng, &from);
        let b = backing(&mut rng, &h, l);
        let a = DeviceArray::from_ndarray(&ctx, &b)?;
        let v = view(&a, l);
        let wide = v.broadcast_to(&to)?;
        assert_eq!(wide.shape(), to.as_slice());
        let want = h.broadcast(to.clone()).expect("broadcasts").to_owned();
        assert_matches(
            &wide.to_contiguous()?.to_ndarray()?,
            &want,
            0.0,
            &format!("{from:?} -> {to:?}"),
        );
    }
    let a = DeviceArray::from_ndarray(&ctx, &random(&mut rng, &[3, 2]))?;
    assert!(matches!(
        a.broadcast_to(&[3, 4]),
        Err(Error::Shape(ArrayShapeError::Broadcast { .. }))
    ));
    Ok(())
}

/// Integer and double elements broadcast the same way (the layout is the element type's
/// business of nobody), and NaN and infinity pass through as NumPy's arithmetic gives them.
#[test]
#[ignore = "needs a CUDA GPU"]
fn other_element_types_and_non_finite_values() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(12);
    let hi = Array::from_shape_fn(IxDyn(&[5, 1, 7]), |_| (rng.next_u64() % 1000) as i64 - 500);
    let hj = Array::from_shape_fn(IxDyn(&[4, 1]), |_| (rng.next_u64() % 1000) as i64 - 500);
    let (i, j) = (
        DeviceArray::from_ndarray(&ctx, &hi)?,
        DeviceArray::from_ndarray(&ctx, &hj)?,
    );
    let got = (&i + &j).eval()?.to_ndarray()?;
    let want =
        &hi.broadcast(vec![5, 4, 7]).expect("broadcasts") + &hj.broadcast(vec![5, 4, 7]).expect("broadcasts");
    assert_eq!(got, want);
    let hd = Array::from_shape_fn(IxDyn(&[3, 400]), |_| rng.f64());
    let he = Array::from_shape_fn(IxDyn(&[400]), |_| rng.f64());
    let (d, e) = (
        DeviceArray::from_ndarray(&ctx, &hd)?,
        DeviceArray::from_ndarray(&ctx, &he)?,
    );
    let got = (&d * &e).eval()?.to_ndarray()?;
    let want = &hd * &he;
    assert_eq!(got, want);
    let specials = Array1::from(vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1.0]).into_dyn();
    let column = Array::from_shape_vec(IxDyn(&[6, 1]), specials.iter().copied().collect()).expect("a column");
    let (s, c) = (
        DeviceArray::from_ndarray(&ctx, &specials)?,
        DeviceArray::from_ndarray(&ctx, &column)?,
    );
    let got = (&s + &c).eval()?.to_ndarray()?;
    let want = &specials.broadcast(vec![6, 6]).expect("broadcasts")
        + &column.broadcast(vec![6, 6]).expect("broadcasts");
    assert_matches(&got, &want, 0.0, "NaN and infinities");
    Ok(())
}

/// PyCUDA's `test_elwise_kernel`: `z[i] = a*x[i] + b*y[i]` over `float *` arrays.
#[test]
#[ignore = "needs a CUDA GPU"]
fn pycuda_elwise_kernel() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(50);
    let lin_comb = ElementwiseKernel::with_name(
        "linear_combination",
        "float a, float *x, float b, float *y, float *z",
        "z[i] = a*x[i] + b*y[i]",
    )?;
    assert!(lin_comb.is_indexed());
    for n in [0usize, 1, 50, 100_003] {
        let (ha, hb) = (Array1::from(rng.vec_f32(n)), Array1::from(rng.vec_f32(n)));
        let (mut a, mut b) = (
            DeviceArray::from_ndarray(&ctx, &ha)?,
            DeviceArray::from_ndarray(&ctx, &hb)?,
        );
        let mut c = DeviceArray::<f32, _>::zeros(&ctx, n)?;
        // `float *x`, not `const float *x`: the kernel may write it, so it is passed as such.
        lin_comb.launch([
            5.0f32.into(),
            KernelArg::output(&mut a),
            6.0f32.into(),
            KernelArg::output(&mut b),
            KernelArg::output(&mut c),
        ])?;
        let want = (&ha * 5.0 + &hb * 6.0).into_dyn();
        assert_matches(&c.to_ndarray()?.into_dyn(), &want, 1e-5, &format!("n = {n}"));
    }
    Ok(())
}

/// PyCUDA's `test_elwise_kernel_with_options` (its `-D ADD_ONE` as a `#define` in the
/// preamble: the operation's `#ifdef` lines run as written), and `loop_prep`, `after_loop`,
/// `n` and pointer arithmetic.
#[test]
#[ignore = "needs a CUDA GPU"]
fn pycuda_elwise_kernel_with_options_and_loop_prep() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(51);
    let add_one = ElementwiseKernel::new(
        "float* out, const float *in",
        "\n        out[i] = in[i]\n        #ifdef ADD_ONE\n            +1\n        #endif\n        ;\n        ",
    )?
    .preamble("#define ADD_ONE");
    let hin = Array1::from(rng.vec_f32(50));
    let input = DeviceArray::from_ndarray(&ctx, &hin)?;
    let mut out = DeviceArray::<f32, _>::zeros(&ctx, 50)?;
    add_one.launch([KernelArg::output(&mut out), KernelArg::input(&input)])?;
    assert_matches(
        &out.to_ndarray()?.into_dyn(),
        &(&hin + 1.0).into_dyn(),
        1e-6,
        "add one",
    );

    let reverse = ElementwiseKernel::new("const float *x, float *z", "*(z + i) = x[n - 1 - i] * scale")?
        .loop_prep("float scale = 2.0f;")
        .after_loop("(void)scale;");
    let mut z = DeviceArray::<f32, _>::zeros(&ctx, 50)?;
    reverse.launch([KernelArg::input(&input), KernelArg::output(&mut z)])?;
    let want: Vec<f32> = hin.iter().rev().map(|v| v * 2.0).collect();
    assert_matches(
        &z.to_ndarray()?.into_dyn(),
        &Array1::from(want).into_dyn(),
        0.0,
        "reversed",
    );

    // A view that is not C-contiguous is refused, not read as memory.
    let r = reverse.launch([
        KernelArg::input(&input.slice(gpu_runtime::ndarray::s![..;2])?),
        KernelArg::output(&mut DeviceArray::<f32, _>::zeros(&ctx, 25)?),
    ]);
    assert!(
        matches!(
            r,
            Err(Error::Argument(ArgumentError::IndexedNotContiguous { .. }))
        ),
        "{r:?}"
    );
    Ok(())
}

/// `linear_combination` with number and device coefficients, against the host's sum, with a
/// broadcast term.
#[test]
#[ignore = "needs a CUDA GPU"]
fn linear_combinations() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(52);
    let (hx, hy, hw) = (
        random(&mut rng, &[40, 30]),
        random(&mut rng, &[40, 30]),
        random(&mut rng, &[30]),
    );
    let (x, y, w) = (
        DeviceArray::from_ndarray(&ctx, &hx)?,
        DeviceArray::from_ndarray(&ctx, &hy)?,
        DeviceArray::from_ndarray(&ctx, &hw)?,
    );
    let (a, b, c) = (rng.f32(), rng.f32(), rng.f32());
    let cb = DeviceArray::from_ndarray(&ctx, &arr0(b).into_dyn())?;
    let mut z = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[40, 30]))?;
    linear_combination(
        &[(a.into(), &x), (Coefficient::device(&cb), &y), (c.into(), &w)],
        &mut z,
    )?;
    let want = &hx * a + &hy * b + &hw.broadcast(vec![40, 30]).expect("broadcasts") * c;
    assert_matches(&z.to_ndarray()?, &want, 1e-5, "a x + b y + c w");
    let none: [(Coefficient<'_, f32>, &DeviceArray<f32>); 0] = [];
    assert!(linear_combination(&none, &mut z).is_err());
    Ok(())
}

/// Transpose copies (the tiled path: `to_contiguous`, `assign`, `astype` of transposed and
/// permuted views, reversed axes included, sizes not a multiple of a tile) against ndarray's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn transpose_copies_match_ndarray() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(77);
    for round in 0..12 {
        let (r, c) = (
            32 + (rng.next_u64() % 700) as usize,
            32 + (rng.next_u64() % 700) as usize,
        );
        let h = random(&mut rng, &[r, c]);
        let a = DeviceArray::from_ndarray(&ctx, &h)?;
        let got = a.t().to_contiguous()?.to_ndarray()?;
        assert_eq!(got, h.t().to_owned(), "round {round}: ({r}, {c})");
        // A reversed axis: negative strides on one side.
        let rev = a.slice(gpu_runtime::ndarray::s![..;-1, ..])?;
        let got = rev.t().astype::<f64>()?.to_ndarray()?;
        let want = h.slice(gpu_runtime::ndarray::s![..;-1, ..]).t().mapv(f64::from);
        assert_eq!(got, want, "round {round}: reversed");
        // Into an array of another layout already there.
        let mut into = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[c, r]))?;
        into.assign(&a.t())?;
        assert_eq!(into.to_ndarray()?, h.t().to_owned());
    }
    // A 3-D permutation whose axes merge into a 2-D transpose.
    let h = random(&mut rng, &[40, 6, 70]);
    let a = DeviceArray::from_ndarray(&ctx, &h)?;
    let p = a.view().permuted_axes(&[2, 0, 1])?;
    let want = h.view().permuted_axes(IxDyn(&[2, 0, 1])).to_owned();
    assert_eq!(p.to_contiguous()?.to_ndarray()?, want);
    Ok(())
}

#[gpu_runtime::elementwise("z[i] = a * x[i] + y[n - 1 - i]")]
fn declared_indexed(a: f32, x: &DeviceArray<f32>, y: &DeviceArray<f32>, z: &mut DeviceArray<f32>);

/// An `#[elementwise]` fn in PyCUDA's indexed form runs the kernel its build-time check
/// compiled.
#[test]
#[ignore = "needs a CUDA GPU"]
fn declared_indexed_fn_runs() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(53);
    let (hx, hy) = (random(&mut rng, &[3, 333]), random(&mut rng, &[3, 333]));
    let (x, y) = (
        DeviceArray::from_ndarray(&ctx, &hx)?,
        DeviceArray::from_ndarray(&ctx, &hy)?,
    );
    let mut z = DeviceArray::<f32>::zeros(&ctx, IxDyn(&[3, 333]))?;
    declared_indexed(1.5, &x, &y, &mut z)?;
    let flat_y: Vec<f32> = hy.iter().copied().collect();
    let want: Vec<f32> = hx
        .iter()
        .enumerate()
        .map(|(i, &v)| 1.5 * v + flat_y[flat_y.len() - 1 - i])
        .collect();
    let want = Array::from_shape_vec(IxDyn(&[3, 333]), want).expect("the shape");
    assert_matches(&z.to_ndarray()?, &want, 1e-6, "declared indexed");
    Ok(())
}
