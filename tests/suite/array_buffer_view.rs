//! `DeviceArrayView::from_buffer`/`DeviceArrayViewMut::from_buffer_mut`: memory from
//! `ctx.to_device` (a `DeviceBuffer`) in `linear_combination` and the array functions, on a GPU
//! against host references on seeded random data.

use gpu_runtime::gpuarray::{
    linear_combination, Coefficient, DeviceArray, DeviceArrayView, DeviceArrayViewMut,
};
use gpu_runtime::ndarray::arr0;
use gpu_runtime::Context;
use gpu_suite::Rng;

#[test]
#[ignore = "needs a CUDA GPU"]
fn linear_combination_takes_buffers_from_to_device() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(46);
    for n in [0usize, 1, 1000, 4097] {
        let x: Vec<f32> = rng.vec_f32(n);
        let y: Vec<f32> = rng.vec_f32(n);
        let (bx, by) = (ctx.to_device(&x)?, ctx.to_device(&y)?);
        let b = DeviceArray::from_ndarray(&ctx, &arr0(-1.5f32))?;
        let mut bz = ctx.to_device(&vec![0.0f32; n])?;
        linear_combination(
            &[
                (2.0f32.into(), &DeviceArrayView::from_buffer(&bx)),
                (Coefficient::device(&b), &DeviceArrayView::from_buffer(&by)),
            ],
            &mut DeviceArrayViewMut::from_buffer_mut(&mut bz),
        )?;
        let got = bz.to_vec()?;
        assert_eq!(got.len(), n);
        for k in 0..n {
            let want = 2.0 * x[k] + -1.5 * y[k];
            assert!(
                (got[k] - want).abs() <= 1e-6 * want.abs().max(1.0),
                "n {n} [{k}]: {} want {want}",
                got[k]
            );
        }
        // The view is an array like any: a reduction over it.
        if n > 0 {
            let s = DeviceArrayView::from_buffer(&bx).sum_as::<f64>()?;
            let want: f64 = x.iter().map(|&v| f64::from(v)).sum();
            assert!((s - want).abs() <= 1e-9 * want.abs().max(1.0), "sum n {n}");
        }
    }
    Ok(())
}
