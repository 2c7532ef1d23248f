//! `#[reduction]` functions on a GPU, each compared with the same reduction on the host on
//! random data: over every axis (an array, a transposed view, on a stream), with a scalar and
//! two arrays, and along one axis through the typed kernel the declaration makes.

use gpu_runtime::gpuarray::{DeviceArray, KernelArg};
use gpu_runtime::ndarray::{Array, Axis};
use gpu_runtime::{reduction, Context, Stream};
use gpu_suite::Rng;

#[reduction(map = "x * x", reduce = "a + b", neutral = "0.0", post_map = "sqrt(a)")]
fn norm2(x: &DeviceArray<f64>) -> f64;

#[reduction(map = "x > t ? 1ll : 0ll", reduce = "a + b", neutral = "0ll")]
fn count_above(t: i32, x: &DeviceArray<i32>) -> i64;

#[reduction(map = "m ? x * w : -1e30f", reduce = "fmaxf(a, b)", neutral = "-1e30f")]
fn masked_max(w: f32, x: &DeviceArray<f32>, m: &DeviceArray<u8>) -> f32;

fn close(got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-9 * (1.0 + want.abs()), "{got} vs {want}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reduction_fns_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(47);
    let (rows, cols) = (513, 1029);
    let host = Array::from_shape_fn((rows, cols), |_| rng.f64());
    let x = DeviceArray::from_ndarray(&ctx, &host)?;
    let want = host.iter().map(|v| v * v).sum::<f64>().sqrt();
    close(norm2(&x)?.to_vec()?[0], want);
    close(norm2(&x.t())?.to_vec()?[0], want);
    let on_stream = norm2_on(&stream, &x)?;
    stream.synchronize()?;
    close(on_stream.to_vec()?[0], want);
    // Along one axis, through the typed `ReductionKernel<f64>`.
    let per_row = norm2::kernel()?
        .reduce_axis([KernelArg::input(&x)], 1)?
        .to_vec()?;
    let want_rows: Vec<f64> = host
        .axis_iter(Axis(0))
        .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
        .collect();
    assert_eq!(per_row.len(), rows);
    for (g, w) in per_row.iter().zip(&want_rows) {
        close(*g, *w);
    }

    let ints = Array::from_shape_fn(100_003, |_| (rng.next_u64() % 1000) as i32);
    let xi = DeviceArray::from_ndarray(&ctx, &ints.clone().into_dyn())?;
    let want = ints.iter().filter(|&&v| v > 500).count() as i64;
    assert_eq!(count_above(500, &xi)?.to_vec()?, [want]);

    let xf = Array::from_shape_fn((300, 70), |_| rng.f32());
    let mask = Array::from_shape_fn((300, 70), |_| rng.next_u64().is_multiple_of(3) as u8);
    let (dx, dm) = (
        DeviceArray::from_ndarray(&ctx, &xf)?,
        DeviceArray::from_ndarray(&ctx, &mask)?,
    );
    let want = xf
        .iter()
        .zip(&mask)
        .map(|(&v, &m)| if m != 0 { v * 2.5 } else { -1e30 })
        .fold(-1e30f32, f32::max);
    assert_eq!(masked_max(2.5, &dx.t(), &dm.t())?.to_vec()?, [want]);
    Ok(())
}
