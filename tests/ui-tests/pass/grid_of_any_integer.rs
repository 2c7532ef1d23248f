//! Grid and block take any integer type, mixed in a tuple (a `u64` count, `(usize, u32)`), in
//! the macro's calls and in run-time typed launches; a runtime-typed launch passes a pointer C
//! leaves writable as `Arg::read_only` under a shared borrow; vector parameter types have a
//! short name.
use gpu_runtime::launch::{Arg, ArgType, PreparedFunction};
use gpu_runtime::types::Float3;
use gpu_runtime::{kernel, Context, DeviceBuffer, Stream};

#[kernel(r#"
__global__ void scale(float *v, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= a;
}"#)]
fn scale(v: &mut [f32], a: f32, n: i32);

fn uses(ctx: &Context, stream: &Stream, f: &PreparedFunction) -> gpu_runtime::Result<()> {
    let n: u64 = 1 << 20;
    let mut v: DeviceBuffer<f32> = ctx.alloc_zeros(n as usize)?;
    let k = scale::prepare(ctx)?;
    k.prepared_call(n.div_ceil(256), 256u16, &mut v, 2.0, n as i32)?;
    k.prepared_async_call((n.div_ceil(256) as usize, 1u32), (256u64, 1u8, 1i16), stream, &mut v, 2.0, n as i32)?;
    k.prepared_call([4096u32, 1, 1], [256usize, 1, 1], &mut v, 2.0, n as i32)?;
    let x: DeviceBuffer<f32> = ctx.to_device(&[1.0f32; 4])?;
    let also_x = &x;
    f.prepared_call(1u8, 4usize, &[Arg::read_only(&x), Arg::read_only(also_x), Float3::splat(1.0).into()])?;
    Ok(())
}

fn main() {
    let _ = uses;
    let _: [ArgType; 3] = [ArgType::MutPtr, ArgType::MutPtr, ArgType::vector::<Float3>()];
}
