//! `DeviceView::cast` / `DeviceViewMut::cast_mut` (C's `(float4 *) p` on a `float` buffer) and
//! `DeviceViewMut::split_at_mut` (two writable parts of one allocation in one launch).

use gpu_runtime::types::Float4;
use gpu_runtime::{kernel, ArrayShapeError, Error};
use gpu_suite::{assert_close, Rng};

use crate::common::ctx;

#[kernel(
    r#"
__global__ void add4(float4 *out, const float4 *a, const float4 *b, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = make_float4(a[i].x + b[i].x, a[i].y + b[i].y, a[i].z + b[i].z, a[i].w + b[i].w);
}"#
)]
fn add4(out: &mut [Float4], a: &[Float4], b: &[Float4], n4: i32);

#[kernel(
    r#"
__global__ void two_outputs(float *lo, float *hi, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { lo[i] = 2.0f * x[i]; hi[i] = x[i] - 1.0f; }
}"#
)]
fn two_outputs(lo: &mut [f32], hi: &mut [f32], x: &[f32], n: i32);

#[test]
#[ignore = "needs a CUDA GPU"]
fn float_buffers_cast_to_float4_views_are_added_by_a_float4_kernel() {
    let ctx = ctx();
    let mut rng = Rng::new(45);
    let n = 4 * 1000 + 8;
    let (a, b) = (rng.vec_f32(n), rng.vec_f32(n));
    let (da, db) = (ctx.to_device(&a).unwrap(), ctx.to_device(&b).unwrap());
    let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
    let k = add4::prepare(&ctx).unwrap();
    // Elements 4.. of each: a sub-view starting 16 bytes in, still aligned for float4.
    let va = da.slice(4..).unwrap().cast::<Float4>().unwrap();
    let vb = db.slice(4..).unwrap().cast::<Float4>().unwrap();
    assert_eq!(va.len(), (n - 4) / 4);
    let mut vo = out.slice_mut(4..).unwrap().cast_mut::<Float4>().unwrap();
    let n4 = (n - 4) / 4;
    k.prepared_call((n4 as u32).div_ceil(128), 128u32, &mut vo, &va, &vb, n4 as i32)
        .unwrap();
    let got = out.to_vec().unwrap();
    let want: Vec<f32> = (0..n).map(|i| if i < 4 { 0.0 } else { a[i] + b[i] }).collect();
    assert_close(&got, &want, 1e-6);
    // Back to f32: the same memory, four times the elements.
    assert_eq!(va.cast::<f32>().unwrap().len(), n - 4);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn casts_that_do_not_fit_are_typed_errors() {
    let ctx = ctx();
    let buf = ctx.alloc_zeros::<f32>(10).unwrap();
    // 10 floats are 40 bytes: not a whole number of 16-byte float4s.
    let e = buf.slice(..).unwrap().cast::<Float4>().unwrap_err();
    assert!(
        matches!(
            e,
            Error::Shape(ArrayShapeError::ViewCast {
                bytes: 40,
                size: 16,
                ..
            })
        ),
        "{e:?}"
    );
    // 8 floats starting one float in: whole, but 4 bytes off float4's alignment.
    let e = buf.slice(1..9).unwrap().cast::<Float4>().unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::ViewCast { align: 16, .. })),
        "{e:?}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_two_halves_of_a_split_view_are_written_by_one_launch() {
    let ctx = ctx();
    let mut rng = Rng::new(46);
    let n = 777;
    let x = rng.vec_f32(n);
    let dx = ctx.to_device(&x).unwrap();
    let mut both = ctx.alloc_zeros::<f32>(2 * n + 3).unwrap();
    let (mut lo, rest) = both.slice_mut(..).unwrap().split_at_mut(n).unwrap();
    let (mut hi, tail) = rest.split_at_mut(n).unwrap();
    assert_eq!((lo.len(), hi.len(), tail.len()), (n, n, 3));
    two_outputs(
        &ctx,
        (n as u32).div_ceil(128),
        128u32,
        &mut lo,
        &mut hi,
        &dx,
        n as i32,
    )
    .unwrap();
    let got = both.to_vec().unwrap();
    let mut want: Vec<f32> = x.iter().map(|v| 2.0 * v).collect();
    want.extend(x.iter().map(|v| v - 1.0));
    want.extend([0.0; 3]);
    assert_close(&got, &want, 1e-6);
    let e = both.slice_mut(..).unwrap().split_at_mut(2 * n + 4).unwrap_err();
    assert!(
        matches!(e, Error::Shape(ArrayShapeError::RangeOutOfBounds { len, .. }) if len == 2 * n + 3),
        "{e:?}"
    );
}
