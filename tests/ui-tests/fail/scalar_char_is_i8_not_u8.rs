use gpu_runtime::kernel;

#[kernel(r#"__global__ void fill(char *v, char c, int n) {}"#)]
fn fill(v: &mut [i8], c: u8, n: i32);

fn main() {}
