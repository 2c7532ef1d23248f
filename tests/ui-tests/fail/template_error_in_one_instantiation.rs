//! The template body is valid for `int` but not for `float` (`^` on floats): each
//! instantiation is compiled at build time, and the error names the one that fails.
use gpu_runtime::kernel;

#[kernel(r#"
template <typename T>
__global__ void mix(T *x, T m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] ^ m;
}
"#, instantiate = [i32, f32])]
fn mix<T>(x: &mut [T], m: T, n: i32);

fn main() {}
