// Compiled with GPU_RUNTIME_NVRTC naming libnvrtc.so by path and nothing of NVRTC's on the
// loader's path (tests/nvrtc_by_path.rs): the error below comes from NVRTC at build time.
use gpu_runtime::kernel;

#[kernel(r#"
__global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * undefined_thing;
}"#, embed = ["sm_90"])]
fn scale(#[InOut] x: &mut [f32], a: f32, n: i32);

fn main() {}
