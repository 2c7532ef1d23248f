//! `Option` arguments take `None` with no type named, in every call form; fp8 parameters are
//! `gpu_runtime::types`' 8-bit floats; a template over values binds the instance listed.
use gpu_runtime::launch::{Capture, GraphBuffer, GraphInput};
use gpu_runtime::types::Fp8E4M3;
use gpu_runtime::{kernel, Context, DeviceBuffer};

#[kernel(r#"
#include <cuda_fp8.h>
__global__ void k(const size_t *info, const __nv_fp8_e4m3 *inp, __nv_fp8_e4m3 *out, __nv_fp8_e4m3 s, int n) {}
"#)]
fn k(#[len = n] info: Option<&[usize]>, #[In] inp: Option<&[Fp8E4M3]>, #[Out] out: &mut [Fp8E4M3], s: Fp8E4M3, n: i32);

#[kernel(r#"
template <int block_size, bool fast = true>
__global__ void norm_f32(const float *x, float *dst, const int ncols) {}
"#, instantiate = [(1024, false)])]
fn norm_f32(x: &[f32], dst: &mut [f32], ncols: i32);

#[allow(dead_code)]
fn calls<'a>(
    ctx: &Context,
    info: &'a DeviceBuffer<usize>,
    out: &'a mut DeviceBuffer<Fp8E4M3>,
    host: &mut [Fp8E4M3],
    cap: &mut Capture<'a>,
) -> gpu_runtime::Result<()> {
    let s = Fp8E4M3::from_f32(0.5);
    k(ctx, 1, 32, None, None, host, s, 4)?;
    let kk = k::prepare(ctx)?;
    kk.prepared_call(1, 32, Some(info), None, out, s, 4)?;
    kk.call(1, 32, None, Some(&[s, s][..]), host, s, 2)?;
    let ig = GraphInput::new(info);
    let mut og = GraphBuffer::new(out);
    kk.capture(cap, 1, 32, Some(&ig), None, &mut og, s, 4)?;
    kk.capture(cap, 1, 32, None, None, &mut og, s, 4)?;
    let _ = norm_f32::prepare(ctx)?;
    Ok(())
}

fn main() {
    assert_eq!(norm_f32::source().kernels(), ["norm_f32<1024, false>"]);
}
