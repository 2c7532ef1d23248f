//! A 2D image operation on an `ndarray`: a 5×5 box blur over a grayscale image, with a 2D grid
//! of 16×16 blocks (one thread per pixel, edges clamped).

use gpu_runtime::{kernel, ndarray::Array2, Context};

#[kernel(
    r#"
__global__ void box_blur(const float *src, float *dst, int width, int height, int radius) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx) {
            int sx = min(max(x + dx, 0), width - 1), sy = min(max(y + dy, 0), height - 1);
            sum += src[sy * width + sx];
        }
    int side = 2 * radius + 1;
    dst[y * width + x] = sum / (side * side);
}"#
)]
fn box_blur(#[In] src: &[f32], #[Out] dst: &mut [f32], width: i32, height: i32, radius: i32);

fn cpu_blur(src: &Array2<f32>, radius: i32) -> Array2<f32> {
    let (h, w) = src.dim();
    Array2::from_shape_fn((h, w), |(y, x)| {
        let mut sum = 0.0;
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                let sy = (y as i32 + dy).clamp(0, h as i32 - 1) as usize;
                let sx = (x as i32 + dx).clamp(0, w as i32 - 1) as usize;
                sum += src[(sy, sx)];
            }
        }
        sum / ((2 * radius + 1) * (2 * radius + 1)) as f32
    })
}

fn main() -> std::process::ExitCode {
    run_example("blur", || {
        let ctx = Context::default()?;
        let (height, width, radius) = (480, 640, 2);
        let mut rng = Rng::new(9);
        let image = Array2::from_shape_fn((height, width), |_| rng.f32());
        let mut blurred = Array2::<f32>::zeros((height, width));

        let grid = ((width as u32).div_ceil(16), (height as u32).div_ceil(16));
        box_blur(
            &ctx,
            grid,
            (16, 16),
            &image,
            &mut blurred,
            width as i32,
            height as i32,
            radius,
        )?;

        let want = cpu_blur(&image, radius);
        mismatch_error(
            "blur",
            blurred.as_slice().unwrap(),
            want.as_slice().unwrap(),
            1e-5,
        )?;
        println!("blur: {width}x{height} image, radius {radius}: matches the CPU");
        Ok(())
    })
}

// The example's own checking helpers (a copy of this file in another crate needs nothing else).

/// Runs the example's body: on failure (no GPU, a compile error, or results that differ from the
/// CPU reference) prints the error in one sentence and exits with status 1.
fn run_example(
    name: &str,
    body: impl FnOnce() -> Result<(), Box<dyn std::error::Error>>,
) -> std::process::ExitCode {
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error naming the first element where the GPU's `got` and the CPU's `want` differ by more
/// than `tol * (1 + |want|)` (a NaN differs from everything).
fn mismatch_error(what: &str, got: &[f32], want: &[f32], tol: f32) -> Result<(), Box<dyn std::error::Error>> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements on the GPU but {} on the CPU",
            got.len(),
            want.len()
        )
        .into());
    }
    let differs = |(g, w): (&f32, &f32)| {
        let d = (g - w).abs();
        g != w && (d.is_nan() || d >= tol * (1.0 + w.abs()))
    };
    match got.iter().zip(want).position(differs) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i} is {} on the GPU but {} on the CPU",
            got[i], want[i]
        )
        .into()),
    }
}

/// A small seeded xorshift generator: reproducible random data without a dependency.
struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A float uniform in `[-1, 1)`.
    fn f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}
