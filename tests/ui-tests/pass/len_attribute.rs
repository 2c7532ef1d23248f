//! `#[len = …]` on buffer arguments: a scalar argument, an expression of several (of different
//! integer types), the list form, and together with a direction marker.
use gpu_runtime::kernel;

#[kernel(r#"
__global__ void blur(const float *src, float *dst, int width, unsigned int height, const float *taps, long ntaps) {}
"#)]
fn blur(
    #[In]
    #[len = width * height]
    src: &[f32],
    #[len(width as usize * height as usize)] dst: &mut [f32],
    width: i32,
    height: u32,
    #[len = ntaps + 1] taps: &[f32],
    ntaps: i64,
);

fn main() {
    let _ = blur::prepare;
}
