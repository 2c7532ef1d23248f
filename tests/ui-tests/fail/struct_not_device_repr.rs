use gpu_runtime::kernel;

/// Laid out like the C struct, but nobody promised that with `unsafe impl DeviceRepr`.
#[derive(Clone, Copy)]
#[repr(C)]
struct Affine {
    scale: f32,
    offset: f32,
}

#[kernel(r#"
struct Affine { float scale; float offset; };
__global__ void apply(Affine p, const float *x, float *y, int n) {}
"#)]
fn apply(p: Affine, x: &[f32], y: &mut [f32], n: i32);

fn main() {}
