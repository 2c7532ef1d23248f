//! A plain `fn` over a type template is told about templates and `instantiate` (not that "a C
//! struct is passed as the Rust type of the same name, `T`").
use gpu_runtime::kernel;

#[kernel(r#"
template <typename T> __global__ void fill(T *x, T v, int n) {}
"#)]
fn fill(x: &mut [f32], v: f32, n: i32);

fn main() {}
