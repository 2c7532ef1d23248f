//! Bilinear resampling through the texture unit: an image in a CUDA array, read by a texture
//! object with linear filtering and clamped edges, enlarged 2× across and 4× down. The kernel
//! takes the texture as a `cudaTextureObject_t`, a `TextureObject` on the Rust side.

use gpu_runtime::driver::{ArrayFlags, CudaArray, FilterMode, Texture, TextureDesc, TextureObject};
use gpu_runtime::ndarray::Array2;
use gpu_runtime::{kernel, Context};

#[kernel(
    r#"
__global__ void resample(cudaTextureObject_t tex, float *out, int w, int h, float sx, float sy) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    // The centre of output pixel (x, y), in source texels: texel i covers [i, i + 1), so its
    // centre is at i + 0.5, where the filter returns texel i exactly.
    out[y * w + x] = tex2D<float>(tex, (x + 0.5f) * sx, (y + 0.5f) * sy);
}"#
)]
fn resample(tex: TextureObject, #[Out] out: &mut [f32], w: i32, h: i32, sx: f32, sy: f32);

/// What the texture unit computes: at `(u, v)`, the four texels around `(u - 0.5, v - 0.5)`
/// weighted by the distances to them, indices clamped to the image.
fn bilinear(img: &Array2<f32>, u: f32, v: f32) -> f32 {
    let (h, w) = img.dim();
    let (xb, yb) = (u - 0.5, v - 0.5);
    let (x0, y0) = (xb.floor(), yb.floor());
    let (a, b) = (xb - x0, yb - y0);
    let at = |x: f32, y: f32| {
        img[[
            (y as isize).clamp(0, h as isize - 1) as usize,
            (x as isize).clamp(0, w as isize - 1) as usize,
        ]]
    };
    (1.0 - a) * (1.0 - b) * at(x0, y0)
        + a * (1.0 - b) * at(x0 + 1.0, y0)
        + (1.0 - a) * b * at(x0, y0 + 1.0)
        + a * b * at(x0 + 1.0, y0 + 1.0)
}

fn main() -> std::process::ExitCode {
    run_example("texture", || {
        let ctx = Context::default()?;
        let (w, h) = (300, 200);
        let img = Array2::from_shape_vec((h, w), Rng::new(4).vec_f32(w * h))?;
        let array = CudaArray::from_ndarray(&ctx, &img, ArrayFlags::NONE)?;
        let desc = TextureDesc {
            filter_mode: FilterMode::Linear,
            ..TextureDesc::default() // clamped edges, coordinates in texels
        };
        let tex = Texture::from_array(&array, &desc)?;

        let (ow, oh) = (2 * w, 4 * h);
        let (sx, sy) = (w as f32 / ow as f32, h as f32 / oh as f32);
        let mut out = vec![0f32; ow * oh];
        let grid = ((ow as u32).div_ceil(16), (oh as u32).div_ceil(16));
        // `tex` (and through it `array`) lives until after this synchronous call returns.
        resample(
            &ctx,
            grid,
            (16, 16),
            tex.object(),
            &mut out,
            ow as i32,
            oh as i32,
            sx,
            sy,
        )?;

        let mut want = Vec::with_capacity(ow * oh);
        for y in 0..oh {
            for x in 0..ow {
                want.push(bilinear(&img, (x as f32 + 0.5) * sx, (y as f32 + 0.5) * sy));
            }
        }
        // The hardware keeps the weights in fixed point with 8 fractional bits. With these
        // scales they are multiples of 1/8 (exact), so only the final rounding differs.
        mismatch_error("bilinear resampling", &out, &want, 1e-3)?;
        println!("texture: a {w}x{h} image resampled bilinearly to {ow}x{oh} through a texture object; matches the CPU");
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

    /// `n` floats uniform in `[-1, 1)`.
    fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}
