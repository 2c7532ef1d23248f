//! A kernel template instantiated twice, typed globals, and embedded images.
use gpu_runtime::{kernel, Context, DeviceBuffer, driver::Global, compiler::ImageKind};

#[kernel(r#"
template <typename T>
__global__ void scale(T *x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"#, instantiate = [f32, f64])]
fn scale<T>(#[InOut] x: &mut [T], a: T, n: i32);

#[kernel(r#"
__constant__ float coeffs[4];
__device__ unsigned int hits;
__constant__ double grid[2][3];
__global__ void poly(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { x[i] = coeffs[0] + coeffs[1] * x[i] + grid[1][2]; atomicAdd(&hits, 1u); }
}
"#, embed = ["sm_90", "compute_75"])]
fn poly(x: &mut [f32], n: i32);

fn typed(ctx: &Context) -> gpu_runtime::Result<()> {
    let c: Global<[f32; 4]> = poly::globals::coeffs(ctx)?;
    c.set(&[1.0, 2.0, 3.0, 4.0])?;
    let _: [f32; 4] = c.get()?;
    poly::globals::hits(ctx)?.set(0)?;
    let _: [[f64; 3]; 2] = poly::globals::grid(ctx)?.get()?;
    let k: scale::Kernel<f64> = scale::prepare::<f64>(ctx)?;
    let mut x: DeviceBuffer<f64> = ctx.to_device(&[1.0, 2.0])?;
    k.prepared_call(1, 2, &mut x, 2.0, 2)?;
    scale::<f32>(ctx, 1, 2, &mut [1.0f32, 2.0], 3.0, 2)?;
    Ok(())
}

fn main() {
    let _ = typed;
    let images = poly::source().images();
    assert_eq!(images.len(), 2);
    assert_eq!((images[0].kind(), images[0].arch()), (ImageKind::Cubin, 90));
    assert_eq!((images[1].kind(), images[1].arch()), (ImageKind::Ptx, 75));
    assert_eq!(images[1].bytes().last(), Some(&0));
    assert_eq!(scale::source().kernels(), ["scale<float>", "scale<double>"]);
}
