//! The mod form: two kernels compiled into one module, sharing a `__device__` helper.
use gpu_runtime::kernel;

#[kernel(r#"
__device__ float square(float v) { return v * v; }
__global__ void squares(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = square(x[i]);
}
extern "C" __global__ void sum_rows(const float *m, float *sums, int rows, int cols) {}
"#)]
mod pair {
    fn squares(#[In] x: &[f32], #[Out] y: &mut [f32], n: i32);
    pub fn sum_rows(#[In] m: &[f32], #[InOut] sums: &mut [f32], rows: i32, cols: i32);
}

fn main() {
    let _ = pair::squares::prepare;
    let _ = pair::sum_rows::prepare;
    let _: &'static gpu_runtime::compiler::ModuleSource = pair::squares::source();
}
