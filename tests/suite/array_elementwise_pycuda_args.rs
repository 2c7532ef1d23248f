//! PyCUDA's habits in `ElementwiseKernel` arguments, on the GPU against host references on
//! random data: an array declared `float *x` (no `const`) passed with `KernelArg::input`
//! (compiled read-only; an operation that writes it is `ArgumentError::WrittenThroughInput`),
//! in the indexed and the element-bound forms, from C-order, transposed and broadcast views;
//! and a scalar parameter given a 0-d device array in the indexed form (read on the device:
//! computed by a reduction on a stream and used by the next launch on it, with no host copy),
//! as a view of one element of a larger array too; the misuses as typed errors.

use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::ndarray::{s, Array, Array1, Array2, IxDyn};
use gpu_runtime::{ArgumentError, Context, Error, Stream};
use gpu_suite::Rng;

fn close(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "{what}: element {i}: {g} vs {w}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn arrays_declared_writable_are_read_when_lent() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4601);
    let n = 10_007;
    let (hx, hy) = (rng.vec_f32(n), rng.vec_f32(n));
    let x = DeviceArray::from_ndarray(&ctx, &Array1::from(hx.clone()))?;
    let y = DeviceArray::from_ndarray(&ctx, &Array1::from(hy.clone()))?;
    let mut z = DeviceArray::<f32, _>::zeros(&ctx, n)?;
    // PyCUDA's text: every array `float *`.
    let k = ElementwiseKernel::new("float a, float *x, float *y, float *z", "z[i] = a * x[i] + y[i]")?;
    k.launch([
        KernelArg::scalar(2.0f32),
        KernelArg::input(&x),
        KernelArg::input(&y),
        KernelArg::output(&mut z),
    ])?;
    let want: Vec<f32> = hx.iter().zip(&hy).map(|(x, y)| 2.0 * x + y).collect();
    close("indexed, x and y lent", &z.to_vec()?, &want);
    // The same kernel with `x` passed writable: the declared kernel, the same values.
    let mut x2 = DeviceArray::from_ndarray(&ctx, &Array1::from(hx.clone()))?;
    k.launch([
        KernelArg::scalar(2.0f32),
        KernelArg::output(&mut x2),
        KernelArg::input(&y),
        KernelArg::output(&mut z),
    ])?;
    close("indexed, x writable", &z.to_vec()?, &want);
    // An operation that writes what it was lent is refused at its compile, typed.
    let writes = ElementwiseKernel::new("float *x, float *z", "x[i] = 0; z[i] = 1")?;
    let r = writes.launch([KernelArg::input(&x), KernelArg::output(&mut z)]);
    assert!(
        matches!(&r, Err(Error::Argument(ArgumentError::WrittenThroughInput { names, .. })) if names == "`x`"),
        "{r:?}"
    );
    assert_eq!(x.to_vec()?, hx, "x unchanged");
    // The element-bound form, a transposed and a broadcast input.
    let (r, c) = (37, 129);
    let hm: Vec<f32> = rng.vec_f32(r * c);
    let m = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((c, r), hm.clone()).unwrap())?;
    let row = DeviceArray::from_ndarray(&ctx, &Array1::from(hx[..c].to_vec()))?;
    let mut out = DeviceArray::<f32, _>::zeros(&ctx, (r, c))?;
    let bound = ElementwiseKernel::new("float *m, float *row, float *out", "out = m - row")?;
    bound.launch([
        KernelArg::input(&m.t()),
        KernelArg::input(&row),
        KernelArg::output(&mut out),
    ])?;
    let want: Vec<f32> = (0..r * c).map(|f| hm[(f % c) * r + f / c] - hx[f % c]).collect();
    close("element-bound, transposed and broadcast", &out.to_vec()?, &want);
    let writes = ElementwiseKernel::new("float *m, float *out", "m = 1; out = 2")?;
    let r = writes.launch([KernelArg::input(&m.t()), KernelArg::output(&mut out)]);
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::WrittenThroughInput { .. }))),
        "{r:?}"
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scalars_given_as_0_d_device_arrays_are_read_on_the_device() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(4602);
    let n = 4099;
    let hx = rng.vec_f32(n);
    let x = DeviceArray::from_ndarray(&ctx, &Array1::from(hx.clone()))?;
    let mut z = DeviceArray::<f32, _>::zeros(&ctx, n)?;
    // `a` is the maximum of `x`, computed into device memory on the stream and read by the
    // next launch on it: no host round trip between them.
    let mut a = DeviceArray::<f32, _>::zeros(&ctx, IxDyn(&[]))?;
    x.on(&stream).max_into(&mut a)?;
    let k = ElementwiseKernel::new(
        "float a, const float *x, float b, float *z",
        "z[i] = x[i] / a + b",
    )?;
    k.on(&stream).launch([
        KernelArg::input(&a),
        KernelArg::input(&x),
        KernelArg::scalar(0.5f32),
        KernelArg::output(&mut z),
    ])?;
    stream.synchronize()?;
    let amax = hx.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let want: Vec<f32> = hx.iter().map(|x| x / amax + 0.5).collect();
    close("a from max_into", &z.to_vec()?, &want);
    // Both scalars on the device, one a view of an element of a larger array.
    let hs: Vec<f32> = rng.vec_f32(5);
    let scalars = DeviceArray::from_ndarray(&ctx, &Array1::from(hs.clone()))?;
    let b = scalars.slice(s![3])?;
    k.launch([
        KernelArg::input(&a),
        KernelArg::input(&x),
        KernelArg::input(&b),
        KernelArg::output(&mut z),
    ])?;
    let want: Vec<f32> = hx.iter().map(|x| x / amax + hs[3]).collect();
    close("a and b on the device", &z.to_vec()?, &want);
    // Other types: an `int` and a `double` scalar.
    let ki = ElementwiseKernel::new(
        "int k, double s, const int *v, double *w",
        "w[i] = s * (v[i] + k)",
    )?;
    let hv: Vec<i32> = (0..n).map(|_| (rng.next_u64() % 1000) as i32 - 500).collect();
    let v = DeviceArray::from_ndarray(&ctx, &Array1::from(hv.clone()))?;
    let kk = DeviceArray::from_ndarray(&ctx, &Array::from_elem(IxDyn(&[]), 7i32))?;
    let ss = DeviceArray::from_ndarray(&ctx, &Array::from_elem(IxDyn(&[]), 0.25f64))?;
    let mut w = DeviceArray::<f64, _>::zeros(&ctx, n)?;
    ki.launch([
        KernelArg::input(&kk),
        KernelArg::input(&ss),
        KernelArg::input(&v),
        KernelArg::output(&mut w),
    ])?;
    let want: Vec<f64> = hv.iter().map(|&v| 0.25 * (v + 7) as f64).collect();
    assert_eq!(w.to_vec()?, want);
    // Misuse: a scalar given an array of one element that is not 0-d, of another type, or a
    // 0-d array in the element-bound form (declare it `const float *a` there: it broadcasts).
    let one = DeviceArray::<f32, _>::zeros(&ctx, 1)?;
    let r = k.launch([
        KernelArg::input(&one),
        KernelArg::input(&x),
        KernelArg::scalar(0.5f32),
        KernelArg::output(&mut z),
    ]);
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::KindDiffers { .. }))),
        "{r:?}"
    );
    let wrong = DeviceArray::<f64, _>::zeros(&ctx, IxDyn(&[]))?;
    let r = k.launch([
        KernelArg::input(&wrong),
        KernelArg::input(&x),
        KernelArg::scalar(0.5f32),
        KernelArg::output(&mut z),
    ]);
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::KindDiffers { .. }))),
        "{r:?}"
    );
    let bound = ElementwiseKernel::new("float a, const float *x, float *z", "z = a * x")?;
    let r = bound.launch([
        KernelArg::input(&a),
        KernelArg::input(&x),
        KernelArg::output(&mut z),
    ]);
    assert!(
        matches!(r, Err(Error::Argument(ArgumentError::KindDiffers { .. }))),
        "{r:?}"
    );
    Ok(())
}
