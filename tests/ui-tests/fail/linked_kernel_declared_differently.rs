//! Kernels are linked by name alone: a prototype in one source that disagrees with the
//! definition in another would pass the kernel parameters it does not expect.
use gpu_runtime::kernel;

#[kernel(sources = [r#"
extern "C" __global__ void child(float *x, int n);
extern "C" __global__ void parent(float *x, int n) { child<<<1, 32>>>(x, n); }
"#, r#"
extern "C" __global__ void child(float *x, float k, int n) {
    if (threadIdx.x < n) x[threadIdx.x] *= k;
}
"#])]
mod linked {
    fn parent(x: &mut [f32], n: i32);
    fn child(x: &mut [f32], n: i32);
}

fn main() {}
