//! Template arguments are given in the template's order, a type where it takes a type and a
//! value of its type where it takes a value.
use gpu_runtime::kernel;

#[kernel(r#"
template <typename T, int block_size, bool fast = false>
__global__ void scale(T *x, T a, int n) {}
"#, instantiate = [(256, f32), (f64, true), (f32, 256, 2), f32])]
fn scale<T>(x: &mut [T], a: T, n: i32);

fn main() {}
