//! The instantiated signature is checked like a plain one: `n` is `int` in C.
use gpu_runtime::kernel;

#[kernel(r#"
template <typename T> __global__ void fill(T *x, T v, int n) {}
"#, instantiate = [f32])]
fn fill<T>(x: &mut [T], v: T, n: T);

fn main() {}
