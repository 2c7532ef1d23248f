//! Launches on a real GPU, each checked against a CPU reference on random data.
//! Run on a GPU machine: `cargo test --test suite -- --ignored kernel_run::` (or ../shared/gpu/pack + .gpu/run).

use crate::common;

use common::*;
use gpu_runtime::{ArrayShapeError, CopyError, Error, LaunchConfigError, Stream};
use gpu_suite::{assert_close, Rng};
use ndarray::Array2;

#[test]
#[ignore = "needs a CUDA GPU"]
fn axpy_convenience_call_copies_in_and_out() {
    let ctx = ctx();
    let n = 100_003;
    let mut rng = Rng::new(1);
    let x = rng.vec_f32(n);
    let mut y = rng.vec_f32(n);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
    axpy(
        &ctx,
        ((n as u32).div_ceil(256),),
        (256,),
        2.5,
        &x,
        &mut y,
        n as i32,
    )
    .unwrap();
    assert_close(&y, &want, 1e-6);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn axpy_prepared_call_on_device_buffers() {
    let ctx = ctx();
    let n = 1 << 20;
    let mut rng = Rng::new(2);
    let x = rng.vec_f32(n);
    let y = rng.vec_f32(n);
    let k = axpy::prepare(&ctx).unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.to_device(&y).unwrap();
    k.prepared_call((4096,), (256,), -1.5, &xd, &mut yd, n as i32)
        .unwrap();
    k.prepared_call(4096, 256, -1.5, &xd, &mut yd, n as i32).unwrap();
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| -1.5 * x + (-1.5 * x + y)).collect();
    assert_close(&yd.to_vec().unwrap(), &want, 1e-5);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn prepared_async_and_timed_calls() {
    let ctx = ctx();
    let n = 1 << 16;
    let mut rng = Rng::new(3);
    let x = rng.vec_f32(n);
    let y = rng.vec_f32(n);
    let k = axpy::prepare(&ctx).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.to_device(&y).unwrap();
    k.prepared_async_call((256,), (256,), &stream, 3.0, &xd, &mut yd, n as i32)
        .unwrap();
    stream.synchronize().unwrap();
    assert!(stream.is_done().unwrap());
    let t = k
        .prepared_timed_call((256,), (256,), 1.0, &xd, &mut yd, n as i32)
        .unwrap();
    assert!(t.as_nanos() > 0 && t.as_secs_f64() < 1.0, "{t:?}");
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 4.0 * x + y).collect();
    assert_close(&yd.to_vec().unwrap(), &want, 1e-5);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn views_of_buffers_are_kernel_arguments() {
    let ctx = ctx();
    let mut rng = Rng::new(4);
    let x = rng.vec_f32(1000);
    let y = rng.vec_f32(1000);
    let k = axpy::prepare(&ctx).unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.to_device(&y).unwrap();
    // Only elements 100..300 of y change, from elements 100..300 of x.
    k.prepared_call(
        1,
        256,
        2.0,
        &xd.slice(100..300).unwrap(),
        &mut yd.slice_mut(100..300).unwrap(),
        200,
    )
    .unwrap();
    let got = yd.to_vec().unwrap();
    let mut want = y.clone();
    for i in 0..200 {
        want[100 + i] = 2.0 * x[100 + i] + y[100 + i];
    }
    assert_close(&got, &want, 1e-6);
}

macro_rules! affine_int_case {
    ($rng:ident, $ctx:ident, $kernel:path, $t:ty, $lo:expr, $hi:expr) => {{
        let n = 4099usize;
        let span = ($hi as i128 - $lo as i128 + 1) as u64;
        let mut pick = || ($lo as i128 + ($rng.next_u64() % span) as i128) as $t;
        let x: Vec<$t> = (0..n).map(|_| pick()).collect();
        let (a, b) = (pick(), pick());
        let mut y = vec![0 as $t; n];
        $kernel(&$ctx, (n as u32).div_ceil(128), 128, &x, &mut y, a, b, n as i32).unwrap();
        for i in 0..n {
            let want = (a as i128 * x[i] as i128 + b as i128) as $t;
            assert_eq!(
                y[i],
                want,
                "{} element {i}: {a} * {} + {b}",
                stringify!($kernel),
                x[i]
            );
        }
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_integer_scalar_type_round_trips_through_a_kernel() {
    let ctx = ctx();
    let mut rng = Rng::new(5);
    // Results wrap like C conversions to narrow types; operands stay small enough that the
    // promoted (int) arithmetic never overflows, which would be undefined behaviour in C.
    affine_int_case!(rng, ctx, affine::affine_signed_char, i8, -128, 127);
    affine_int_case!(rng, ctx, affine::affine_unsigned_char, u8, 0, 255);
    affine_int_case!(rng, ctx, affine::affine_short, i16, -32768, 32767);
    affine_int_case!(rng, ctx, affine::affine_unsigned_short, u16, 0, 40000);
    affine_int_case!(rng, ctx, affine::affine_int, i32, -40000, 40000);
    affine_int_case!(rng, ctx, affine::affine_unsigned_int, u32, 0, 60000);
    affine_int_case!(
        rng,
        ctx,
        affine::affine_long,
        i64,
        -3_000_000_000i64,
        3_000_000_000i64
    );
    affine_int_case!(rng, ctx, affine::affine_unsigned_long, u64, 0, 4_000_000_000u64);
    affine_int_case!(
        rng,
        ctx,
        affine::affine_long_long,
        i64,
        -3_000_000_000i64,
        3_000_000_000i64
    );
    affine_int_case!(
        rng,
        ctx,
        affine::affine_unsigned_long_long,
        u64,
        0,
        4_000_000_000u64
    );
    affine_int_case!(rng, ctx, affine::affine_size_t, usize, 0, 4_000_000_000usize);
    affine_int_case!(
        rng,
        ctx,
        affine::affine_ptrdiff_t,
        isize,
        -3_000_000_000isize,
        3_000_000_000isize
    );
    affine_int_case!(rng, ctx, affine::affine_int8_t, i8, -128, 127);
    affine_int_case!(rng, ctx, affine::affine_uint16_t, u16, 0, 40000);
    affine_int_case!(
        rng,
        ctx,
        affine::affine_int64_t,
        i64,
        -3_000_000_000i64,
        3_000_000_000i64
    );
    affine_int_case!(rng, ctx, affine::affine_uint32_t, u32, 0, 60000);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn float_scalar_types_round_trip_through_a_kernel() {
    let ctx = ctx();
    let mut rng = Rng::new(6);
    let n = 5000;
    let x = rng.vec_f32(n);
    let mut y = vec![0f32; n];
    affine::affine_float(
        &ctx,
        (n as u32).div_ceil(256),
        256,
        &x,
        &mut y,
        1.25,
        -0.5,
        n as i32,
    )
    .unwrap();
    let want: Vec<f32> = x.iter().map(|x| 1.25 * x - 0.5).collect();
    assert_close(&y, &want, 1e-6);

    let xd: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
    let mut yd = vec![0f64; n];
    affine::affine_double(
        &ctx,
        (n as u32).div_ceil(256),
        256,
        &xd,
        &mut yd,
        0.75,
        0.125,
        n as i32,
    )
    .unwrap();
    for i in 0..n {
        assert!((yd[i] - (0.75 * xd[i] + 0.125)).abs() < 1e-14, "element {i}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_scalar_kind_arrives_intact_in_one_call() {
    let ctx = ctx();
    let mut rng = Rng::new(7);
    for _ in 0..20 {
        let r = rng.next_u64();
        let (a, b, c, d) = (r as i8, (r >> 8) as u8, (r >> 16) as i16, (r >> 32) as u16);
        let (e, f, g, h) = (
            rng.next_u64() as i32,
            rng.next_u64() as u32,
            rng.next_u64() as i64,
            rng.next_u64(),
        );
        let (x, y, t) = (rng.f32(), rng.f64(), r & 1 == 1);
        let (s, p) = (rng.next_u64() as usize, rng.next_u64() as isize);
        let mut ints = vec![0i64; 11];
        let mut reals = vec![0f64; 2];
        let mut ints_d = ctx.to_device(&ints).unwrap();
        let mut reals_d = ctx.to_device(&reals).unwrap();
        echo_scalars::prepare(&ctx)
            .unwrap()
            .prepared_call(
                1,
                1,
                a,
                b,
                c,
                d,
                e,
                f,
                g,
                h,
                x,
                y,
                t,
                s,
                p,
                &mut ints_d,
                &mut reals_d,
            )
            .unwrap();
        ints_d.copy_to_host(&mut ints).unwrap();
        reals_d.copy_to_host(&mut reals).unwrap();
        let want = [
            a as i64, b as i64, c as i64, d as i64, e as i64, f as i64, g, h as i64, t as i64, s as i64,
            p as i64,
        ];
        assert_eq!(ints, want);
        assert_eq!(reals, [x as f64, y]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_2d_grid_over_ndarray_matrices() {
    let ctx = ctx();
    let mut rng = Rng::new(8);
    let (h, w) = (123, 517);
    let a = Array2::from_shape_fn((h, w), |_| rng.f32());
    let b = Array2::from_shape_fn((h, w), |_| rng.f32());
    let mut c = Array2::<f32>::zeros((h, w));
    let grid = ((w as u32).div_ceil(16), (h as u32).div_ceil(16));
    add2d(&ctx, grid, (16, 16), &a, &b, &mut c, w as i32, h as i32).unwrap();
    let want = &a - &(&b * 2.0);
    assert_close(c.as_slice().unwrap(), want.as_slice().unwrap(), 1e-6);

    // The same through device buffers and from_device into an ndarray of the right shape.
    let k = add2d::prepare(&ctx).unwrap();
    let (ad, bd) = (ctx.to_device(&a).unwrap(), ctx.to_device(&b).unwrap());
    let mut cd = ctx.alloc::<f32>(h * w).unwrap();
    k.prepared_call(grid, (16, 16, 1), &ad, &bd, &mut cd, w as i32, h as i32)
        .unwrap();
    let back: Array2<f32> = ctx.from_device(&cd, (h, w)).unwrap();
    assert_eq!(back, c);
    let e = ctx.from_device(&cd, (h + 1, w)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Copy(CopyError::ShapeLength { ref shape, elements, buffer, .. })
                if shape == &[h + 1, w] && elements == (h + 1) * w && buffer == h * w
        ),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dynamic_shared_memory_for_extern_shared() {
    let ctx = ctx();
    let mut rng = Rng::new(9);
    let block = 256usize;
    let n = block * 37;
    let input = rng.vec_f32(n);
    let mut output = vec![0f32; n];
    block_reverse::prepare(&ctx)
        .unwrap()
        .with_shared_mem((block * 4) as u32)
        .call((n / block) as u32, block as u32, &input, &mut output, n as i32)
        .unwrap();
    let want: Vec<f32> = input
        .chunks(block)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    assert_eq!(output, want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn in_out_inout_with_slices_vecs_and_ndarray_views() {
    let ctx = ctx();
    let mut rng = Rng::new(10);
    let n = 3000;
    // In from a slice of a Vec, InOut into an ndarray view.
    let x = rng.vec_f32(n + 10);
    let mut y = ndarray::Array1::from_vec(rng.vec_f32(n));
    let y0 = y.clone();
    axpy(
        &ctx,
        (n as u32).div_ceil(256),
        256,
        0.5,
        &x[10..],
        &mut y.view_mut(),
        n as i32,
    )
    .unwrap();
    let want: Vec<f32> = (0..n).map(|i| 0.5 * x[10 + i] + y0[i]).collect();
    assert_close(y.as_slice().unwrap(), &want, 1e-6);

    // Out into a fixed-size array; In from an ndarray.
    let m = Array2::from_shape_fn((64, 8), |_| rng.f32());
    let mut sums = [0f32; 64];
    pair::sum_rows(&ctx, 1, 64, &m, &mut sums, 64, 8).unwrap();
    let want: Vec<f32> = m.rows().into_iter().map(|r| r.sum()).collect();
    assert_close(&sums, &want, 1e-5);

    // A view contiguous in neither C nor Fortran order is refused before anything is launched.
    let cols = m.slice(gpu_runtime::ndarray::s![.., 1..3]);
    let err = pair::sum_rows(&ctx, 1, 64, &cols, &mut sums, 64, 2).unwrap_err();
    assert!(
        matches!(err, Error::Copy(CopyError::HostArrayLayout { ref strides, .. }) if strides == &[8, 1]),
        "{err}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn two_kernels_from_one_module() {
    let ctx = ctx();
    let mut rng = Rng::new(11);
    let x = rng.vec_f32(1000);
    let mut y = vec![0f32; 1000];
    pair::squares(&ctx, 4, 256, &x, &mut y, 1000).unwrap();
    let want: Vec<f32> = x.iter().map(|v| v * v).collect();
    assert_close(&y, &want, 1e-6);
    let sq = pair::squares::prepare(&ctx).unwrap();
    let rows = pair::sum_rows::prepare(&ctx).unwrap();
    assert_ne!(sq.function().raw(), rows.function().raw());
    // Preparing again is a cache hit: the same loaded function.
    assert_eq!(
        pair::squares::prepare(&ctx).unwrap().function().raw(),
        sq.function().raw()
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn struct_by_value_and_source_from_a_file() {
    let ctx = ctx();
    let mut rng = Rng::new(12);
    let x = rng.vec_f32(2000);
    let mut y = vec![0f32; 1000];
    let p = Affine {
        scale: rng.f32(),
        offset: rng.f32(),
        stride: 2,
    };
    apply_affine(&ctx, 4, 256, p, &x, &mut y, 2000).unwrap();
    let want: Vec<f32> = (0..1000).map(|i| p.scale * x[2 * i] + p.offset).collect();
    assert_close(&y, &want, 1e-6);

    let v: Vec<f64> = (0..777).map(|_| rng.f64()).collect();
    let mut vd = ctx.to_device(&v).unwrap();
    scale::prepare(&ctx)
        .unwrap()
        .prepared_call(4, 256, &mut vd, -3.0, 777)
        .unwrap();
    let got = vd.to_vec().unwrap();
    for i in 0..777 {
        assert_eq!(got[i], v[i] * -3.0);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_launch_configurations_are_rejected_before_launching() {
    let ctx = ctx();
    let x = Rng::new(13).vec_f32(256);
    let k = axpy::prepare(&ctx).unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.to_device(&x).unwrap();
    let cases: Vec<(gpu_runtime::Dim3, gpu_runtime::Dim3)> = vec![
        ((1, 1, 1).into(), (2048, 1, 1).into()),
        ((1, 1, 1).into(), (32, 32, 2).into()),
        ((1, 1, 1).into(), (1, 1, 128).into()),
        ((0, 1, 1).into(), (256, 1, 1).into()),
        ((1, 70000, 1).into(), (1, 1, 1).into()),
        ((1, 1, 1).into(), (0, 1, 1).into()),
    ];
    for (grid, block) in cases {
        let err = k.prepared_call(grid, block, 1.0, &xd, &mut yd, 256).unwrap_err();
        assert!(
            matches!(err, Error::InvalidLaunch(_)),
            "{grid:?} {block:?}: {err}"
        );
    }
    let err = k.prepared_call(1, 2048, 1.0, &xd, &mut yd, 256).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidLaunch(LaunchConfigError::BlockDimTooLarge { limit: 1024, .. })
        ),
        "{err}"
    );
    // Nothing ran: y is unchanged, and the context still works.
    ctx.synchronize().unwrap();
    assert_eq!(yd.to_vec().unwrap(), x);
    let err = block_reverse::prepare(&ctx)
        .unwrap()
        .with_shared_mem(10 << 20)
        .prepared_call(1, 32, &xd, &mut yd, 32)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidLaunch(LaunchConfigError::SharedMemoryTooLarge { .. })
        ),
        "{err}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_kernel_that_fails_to_compile_returns_the_nvrtc_log() {
    use gpu_runtime::kernel;
    #[kernel(
        r#"
__global__ void broken(float *x) {
    x[threadIdx.x] = not_declared;
}"#,
        // The build-time check would reject it; this test is about the run-time error.
        check = false
    )]
    fn broken(x: &mut [f32]);
    let ctx = ctx();
    match broken::prepare(&ctx) {
        Err(Error::Compile(e)) => {
            assert!(e.log.contains("not_declared"), "{}", e.log);
            assert_eq!(e.reported_lines(), vec![3]);
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn size_mismatches_in_copies_are_typed_errors() {
    let ctx = ctx();
    let mut d = ctx.alloc_zeros::<f32>(10).unwrap();
    assert_eq!(d.to_vec().unwrap(), vec![0.0; 10]);
    let err = d.copy_from_host(&[1.0f32; 9][..]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Copy(CopyError::HostDeviceLength {
                host: 9,
                device: 10,
                ..
            })
        ),
        "{err}"
    );
    // The message names both sizes and the side each belongs to (a message test).
    assert!(
        err.to_string()
            .contains("the host side has 9 elements but the device buffer has 10"),
        "{err}"
    );
    let mut small = [0f32; 11];
    assert!(matches!(
        d.copy_to_host(&mut small),
        Err(Error::Copy(CopyError::HostDeviceLength {
            host: 11,
            device: 10,
            ..
        }))
    ));
    assert!(matches!(
        d.slice(5..11),
        Err(Error::Shape(ArrayShapeError::RangeOutOfBounds {
            start: 5,
            end: 11,
            len: 10
        }))
    ));
}
