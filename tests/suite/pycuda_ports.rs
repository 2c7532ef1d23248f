//! PyCUDA idioms that used to need a detour, written the Rust way and checked against a host
//! reference on random data: linked modules with checked launches and typed globals, the
//! In/Out call on a stream with shared memory given per call (`stream=`, `shared_size=`), and
//! a read-only parameter the C source leaves non-`const`. Run on a GPU machine:
//! `cargo test --test suite -- --ignored pycuda_ports::`.

use gpu_runtime::compiler::DynamicModule;
use gpu_runtime::driver::Global;
use gpu_runtime::launch::{Arg, ArgType};
use gpu_runtime::{kernel, ArgumentError, Error, Stream};
use gpu_suite::{assert_close, Rng};

use crate::common::ctx;

#[kernel(sources = [r#"
__constant__ float gain[2];
__device__ float shaped(float v);
extern "C" __global__ void shape(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = gain[0] * shaped(x[i]) + gain[1];
}
"#, r#"
__device__ unsigned int above;
__device__ float shaped(float v) { return v * v - 0.25f; }
extern "C" __global__ void count_above(const float *x, float limit, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > limit) atomicAdd(&above, 1u);
}
"#])]
mod filters {
    fn shape(#[Out] y: &mut [f32], #[In] x: &[f32], n: i32);
    fn count_above(x: &[f32], limit: f32, n: i32);
}

/// `#[kernel(sources = [...])]`: each kernel is checked against the source that declares it,
/// the globals of both sources are typed, and the In/Out call runs on the caller's stream.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_linked_module_has_typed_globals_and_checked_calls_on_a_stream() {
    let ctx = ctx();
    let stream = Stream::new(&ctx).unwrap();
    let mut rng = Rng::new(1501);
    let n = 70_001usize;
    let x: Vec<f32> = (0..n).map(|_| 2.0 * rng.f32() - 1.0).collect();
    let (g0, g1) = (0.5 + rng.f32(), rng.f32() - 0.5);

    let gain: Global<[f32; 2]> = filters::globals::gain(&ctx).unwrap();
    gain.set([g0, g1]).unwrap();
    assert_eq!(gain.get().unwrap(), [g0, g1]);
    let above: Global<u32> = filters::globals::above(&ctx).unwrap();
    above.set(0).unwrap();

    let mut y = vec![f32::NAN; n];
    let grid = (n as u32).div_ceil(256);
    filters::shape::prepare(&ctx)
        .unwrap()
        .call_on(grid, 256, &stream, &mut y, &x, n as i32)
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| g0.mul_add(v * v - 0.25, g1)).collect();
    assert_close(&y, &want, 1e-5);

    let limit = 0.3f32;
    let xd = ctx.to_device(&x).unwrap();
    filters::count_above::prepare(&ctx)
        .unwrap()
        .prepared_async_call(grid, 256, &stream, &xd, limit, n as i32)
        .unwrap();
    stream.synchronize().unwrap();
    let count = x.iter().filter(|v| **v > limit).count() as u32;
    assert!(count > 0 && count < n as u32);
    assert_eq!(above.get().unwrap(), count);
}

/// A `DynamicModule` (built at run time) keeps its sources, so its kernels prepare from their
/// declarations and refuse arguments that do not match them, with no `unsafe`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_dynamic_module_checks_launches_against_the_declaring_source() {
    let ctx = ctx();
    let mut m = DynamicModule::new();
    m.add_source(
        "__device__ float affine(float v, float k) { return v * k + 1.0f; }",
        "lib.cu",
        &[],
        &[],
    )
    .add_source(
        r#"__device__ float affine(float v, float k);
extern "C" __global__ void apply(float *y, const float *x, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = affine(x[i], k);
}"#,
        "apply.cu",
        &["apply"],
        &[],
    );
    let linked = m.load(&ctx).unwrap();
    let f = linked.function("apply").unwrap();
    let prepared = f.prepare_declared().unwrap();
    assert_eq!(
        prepared.arg_types(),
        [ArgType::MutPtr, ArgType::ConstPtr, ArgType::F32, ArgType::I32]
    );

    let mut rng = Rng::new(1502);
    let n = 33_333usize;
    let x = rng.vec_f32(n);
    let k = 1.0 + rng.f32();
    let xd = ctx.to_device(&x).unwrap();
    let mut yd = ctx.alloc_zeros::<f32>(n).unwrap();
    let grid = (n as u32).div_ceil(128);
    prepared
        .prepared_call(
            grid,
            128,
            &[
                Arg::output(&mut yd),
                Arg::input(&xd),
                Arg::F32(k),
                Arg::I32(n as i32),
            ],
        )
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| v.mul_add(k, 1.0)).collect();
    assert_close(&yd.to_vec().unwrap(), &want, 1e-6);

    // A read-only view where the kernel writes, and a double for `float k`: refused before
    // anything is launched.
    let e = prepared
        .prepared_call(
            grid,
            128,
            &[Arg::input(&xd), Arg::input(&xd), Arg::F32(k), Arg::I32(n as i32)],
        )
        .unwrap_err();
    assert!(
        matches!(e, Error::Argument(ArgumentError::ArgDiffers { index: 0, .. })),
        "{e}"
    );
    let e = f
        .prepare_args(&[ArgType::MutPtr, ArgType::ConstPtr, ArgType::F64, ArgType::I32])
        .unwrap_err();
    assert!(
        matches!(&e, Error::Argument(ArgumentError::TypeDiffers { index: 2, parameter, .. }) if &**parameter == "float k"),
        "{e}"
    );
    // Host arrays through the same declaration (PyCUDA's `func(drv.Out(y), drv.In(x), ...)`).
    let mut y = vec![0.0f32; n];
    f.call(
        grid,
        128,
        &mut [
            Arg::host_out(&mut y),
            Arg::host_in(&x),
            Arg::F32(k),
            Arg::I32(n as i32),
        ],
    )
    .unwrap();
    assert_close(&y, &want, 1e-6);
}

#[kernel(
    r#"
__global__ void reverse_blocks(const float *x, float *y, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
    if (j < n) y[j] = 2.0f * tile[threadIdx.x];
}"#
)]
fn reverse_blocks(#[In] x: &[f32], #[Out] y: &mut [f32], n: i32);

/// PyCUDA's `func(drv.In(x), drv.Out(y), ..., stream=s, shared=bytes)`: `call_on` queues the
/// copies and the kernel after the stream's earlier work, with the shared memory of this call.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_in_out_call_runs_on_a_stream_with_shared_memory_per_call() {
    let ctx = ctx();
    let stream = Stream::new(&ctx).unwrap();
    let k = reverse_blocks::prepare(&ctx).unwrap();
    let mut rng = Rng::new(1503);
    for block in [64u32, 256, 1024] {
        let blocks = 1 + (rng.next_u64() % 50) as u32;
        let n = (blocks * block) as usize;
        let x = rng.vec_f32(n);
        let mut y = vec![f32::NAN; n];
        k.with_shared_mem(block * 4)
            .call_on(blocks, block, &stream, &x, &mut y, n as i32)
            .unwrap();
        let b = block as usize;
        let want: Vec<f32> = (0..n).map(|j| 2.0 * x[(j / b) * b + (b - 1 - j % b)]).collect();
        assert_eq!(y, want, "block {block}");
    }
    // More shared memory than a block may have without opting in is refused before the launch,
    // and the kernel it was made from keeps its own (zero) size.
    let e = k
        .with_shared_mem(1 << 30)
        .call_on(1, 64, &stream, &[0.5f32; 64], &mut [0.0f32; 64], 64)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch(_)), "{e}");
    assert_eq!(k.function().shared_mem(), 0);
}

#[kernel(
    r#"
__global__ void weighted(float *out, float *x, float *w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] * w[i % 32];
}"#
)]
fn weighted(out: &mut [f32], #[read_only] x: &[f32], #[read_only] w: &[f32], n: i32);

/// A parameter the C source leaves writable (`float *x`) but the kernel only reads, taken by
/// shared borrow because the Rust signature says `#[read_only]`: one buffer passed twice,
/// and read by two streams at once.
#[test]
#[ignore = "needs a CUDA GPU"]
fn read_only_parameters_take_shared_borrows() {
    let ctx = ctx();
    let mut rng = Rng::new(1504);
    let n = 4096usize;
    let x = rng.vec_f32(n);
    let xd = ctx.to_device(&x).unwrap();
    let wh = rng.vec_f32(32);
    let w = ctx.to_device(&wh).unwrap();
    let (s1, s2) = (Stream::new(&ctx).unwrap(), Stream::new(&ctx).unwrap());
    let k = weighted::prepare(&ctx).unwrap();
    let mut a = ctx.alloc_zeros::<f32>(n).unwrap();
    let mut b = ctx.alloc_zeros::<f32>(n).unwrap();
    k.prepared_async_call(n as u32 / 256, 256, &s1, &mut a, &xd, &w, n as i32)
        .unwrap();
    // The same buffer as both read-only arguments: two shared borrows.
    k.prepared_async_call(n as u32 / 256, 256, &s2, &mut b, &xd, &xd, n as i32)
        .unwrap();
    let want_a: Vec<f32> = (0..n).map(|i| x[i] * wh[i % 32]).collect();
    assert_eq!(a.to_vec().unwrap(), want_a);
    let want_b: Vec<f32> = (0..n).map(|i| x[i] * x[i % 32]).collect();
    assert_eq!(b.to_vec().unwrap(), want_b);
    assert_eq!(
        xd.to_vec().unwrap(),
        x,
        "read-only arguments are left as they were"
    );
}
