use gpu_runtime::kernel;

mod shapes {
    /// Laid out like the C struct, but not promised to be plain data with `unsafe impl DeviceRepr`.
    #[derive(Clone, Copy)]
    #[repr(C)]
    pub struct Particle {
        pub x: f32,
        pub y: f32,
        pub mass: f32,
    }
}

#[kernel(r#"
struct Particle { float x, y, mass; };
__global__ void total_mass(const Particle *ps, float *out, int n) {}
"#)]
fn total_mass(ps: &[shapes::Particle], out: &mut [f32], n: i32);

fn main() {}
