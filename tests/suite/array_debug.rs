//! `{:?}` of device arrays on a GPU: `ndarray`'s `Debug` text of the same values and layout,
//! then the element type, for random data in every kind of layout (a large array elided around
//! `...`, transposed and stepped views, broadcast, 0-d, empty) and element type, read after
//! the writes queued on other streams.

use std::fmt::Debug;

use gpu_runtime::gpuarray::{ArrayElement, Bool, DeviceArray};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{s, Array, ArrayView, Dimension, IxDyn, ShapeBuilder};
use gpu_runtime::num_complex::Complex32;
use gpu_runtime::{Context, Stream};
use gpu_suite::Rng;

/// What `{:?}` of a device array holding `host`'s view shows: `ndarray`'s text and the dtype.
fn expected<T: ArrayElement, D: Dimension>(host: &ArrayView<'_, T, D>) -> String {
    format!("{host:?}, dtype={:?}", T::ELEMENT_TYPE)
}

fn random_f32(rng: &mut Rng, n: usize) -> Vec<f32> {
    rng.vec_f32(n).into_iter().map(|x| x * 100.0).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn debug_shows_the_values_as_ndarray() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(44);

    // Large: elided around `...`, in C and Fortran order and through views.
    let big = Array::from_shape_vec((300, 700), random_f32(&mut rng, 300 * 700)).unwrap();
    let dev = DeviceArray::from_ndarray(&ctx, &big)?;
    assert_eq!(format!("{dev:?}"), expected(&big.view()));
    assert!(format!("{dev:?}").contains("..."));
    assert_eq!(format!("{:?}", dev.t()), expected(&big.t()));
    let stepped = s![5..290;-3, 1..;7];
    assert_eq!(
        format!("{:?}", dev.slice(stepped)?),
        expected(&big.slice(stepped))
    );
    assert_eq!(
        format!("{:?}", dev.slice(s![.., 3])?),
        expected(&big.slice(s![.., 3]))
    );
    let f = Array::from_shape_vec((40, 50).f(), random_f32(&mut rng, 2000)).unwrap();
    assert_eq!(
        format!("{:?}", DeviceArray::from_ndarray(&ctx, &f)?),
        expected(&f.view())
    );
    let d4 = big
        .view()
        .into_shape_with_order((10, 30, 7, 100))
        .unwrap()
        .into_dyn();
    let dev4 = DeviceArray::from_ndarray(&ctx, &d4.to_owned())?;
    assert_eq!(format!("{dev4:?}"), expected(&d4));
    let perm = [2, 0, 3, 1];
    assert_eq!(
        format!("{:?}", dev4.view().permuted_axes(&perm)?),
        expected(&d4.view().permuted_axes(IxDyn(&perm)))
    );

    // Small: whole. Broadcast (stride 0), 0-d, empty.
    let row = Array::from_shape_vec(600, random_f32(&mut rng, 600)).unwrap();
    let dev_row = DeviceArray::from_ndarray(&ctx, &row.clone().into_dyn())?;
    assert_eq!(
        format!("{:?}", dev_row.broadcast_to(&[4, 600])?),
        expected(&row.broadcast(IxDyn(&[4, 600])).unwrap())
    );
    let small = Array::from_shape_vec((3, 4), random_f32(&mut rng, 12)).unwrap();
    let dev_small = DeviceArray::from_ndarray(&ctx, &small)?;
    assert_eq!(format!("{dev_small:?}"), expected(&small.view()));
    assert_eq!(format!("{dev_small:.2?}"), format!("{small:.2?}, dtype=F32"));
    let zero_d = small.slice(s![2, 1]);
    assert_eq!(format!("{:?}", dev_small.slice(s![2, 1])?), expected(&zero_d));
    for shape in [vec![0], vec![3, 0], vec![0, 4, 5]] {
        let empty = Array::<f32, _>::zeros(IxDyn(&shape));
        let dev = DeviceArray::<f32>::zeros(&ctx, IxDyn(&shape))?;
        assert_eq!(format!("{dev:?}"), expected(&empty.view()));
    }
    // `{:#?}` keeps the limits and adds the offset.
    let alt = format!("{:#?}", dev.slice(s![1.., ..])?);
    assert!(
        alt.contains("...") && alt.ends_with(", dtype=F32, offset=700, storage_len=210000"),
        "{alt}"
    );
    Ok(())
}

/// Every kind of element type: `{:?}` of each element as `ndarray` shows it.
fn check_type<T: ArrayElement + Debug>(ctx: &Context, values: Vec<T>) -> gpu_runtime::Result<()> {
    let n = values.len();
    let host = Array::from_shape_vec((n / 25, 25), values).unwrap();
    let dev = DeviceArray::from_ndarray(ctx, &host)?;
    assert_eq!(format!("{dev:?}"), expected(&host.view()));
    assert_eq!(format!("{:?}", dev.t()), expected(&host.t()));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn debug_of_every_element_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(45);
    let n = 40 * 25;
    check_type(&ctx, (0..n).map(|_| f16::from_f32(rng.f32())).collect())?;
    check_type(&ctx, (0..n).map(|_| bf16::from_f32(rng.f32())).collect())?;
    check_type(
        &ctx,
        (0..n).map(|_| Complex32::new(rng.f32(), rng.f32())).collect(),
    )?;
    check_type(
        &ctx,
        (0..n).map(|_| Bool::from(rng.next_u64() >> 63 == 1)).collect(),
    )?;
    check_type(&ctx, (0..n).map(|_| rng.f64()).collect())?;
    check_type(&ctx, (0..n).map(|_| rng.next_u64() as i64).collect())?;
    check_type(&ctx, (0..n).map(|_| rng.next_u64() as u8).collect())?;
    Ok(())
}

/// The values shown are those after the writes queued on other streams: `{:?}` reads in order
/// after them, as `to_vec` does.
#[test]
#[ignore = "needs a CUDA GPU"]
fn debug_reads_after_pending_writes() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let mut rng = Rng::new(46);
    let (rows, cols) = (4096, 4096);
    let host = Array::from_shape_vec((rows, cols), random_f32(&mut rng, rows * cols)).unwrap();
    let src = DeviceArray::from_ndarray(&ctx, &host)?;
    for _ in 0..3 {
        let mut dst = DeviceArray::<f32, _>::zeros(&ctx, (rows, cols))?;
        dst.on_mut(&stream).copy_from(&src)?;
        assert_eq!(format!("{dst:?}"), expected(&host.view()));
    }
    Ok(())
}
