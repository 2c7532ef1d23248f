//! A `#[repr(C)]` struct passed by value, promised to be plain data with `unsafe impl DeviceRepr`,
//! and also used as a buffer element.
use gpu_runtime::{kernel, DeviceRepr};

#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Affine {
    pub scale: f32,
    pub offset: f32,
    pub stride: i32,
}
// SAFETY: repr(C) with the same fields as the C struct; any bit pattern is a valid Affine.
unsafe impl DeviceRepr for Affine {}

#[kernel(r#"
struct Affine { float scale; float offset; int stride; };
__global__ void apply_affine(struct Affine p, const float *x, float *y, const Affine *all, int n) {}
"#)]
fn apply_affine(p: Affine, #[In] x: &[f32], #[Out] y: &mut [f32], all: &[Affine], n: i32);

fn main() {
    let _ = apply_affine::prepare;
}
