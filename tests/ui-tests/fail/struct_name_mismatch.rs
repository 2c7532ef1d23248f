use gpu_runtime::kernel;

#[derive(Clone, Copy)]
#[repr(C)]
struct Params {
    scale: f32,
    offset: f32,
}
unsafe impl gpu_runtime::DeviceRepr for Params {}

#[kernel(r#"
struct Affine { float scale; float offset; };
__global__ void apply(Affine p, const float *x, float *y, int n) {}
"#)]
fn apply(p: Params, x: &[f32], y: &mut [f32], n: i32);

fn main() {}
