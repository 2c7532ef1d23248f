//! Tiled matrix multiply with shared memory: C = A·B for row-major `ndarray` matrices.
//!
//! Each 16×16 block of threads computes one 16×16 tile of C, staging tiles of A and B through
//! `__shared__` memory so every element is read from global memory once per tile.

use gpu_runtime::{kernel, ndarray::Array2, Context};

#[kernel(
    r#"
#define TILE 16
__global__ void matmul(const float *a, const float *b, float *c, int m, int k, int n) {
    __shared__ float ta[TILE][TILE];
    __shared__ float tb[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; ++t) {
        int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
        ta[threadIdx.y][threadIdx.x] = (row < m && ac < k) ? a[row * k + ac] : 0.0f;
        tb[threadIdx.y][threadIdx.x] = (br < k && col < n) ? b[br * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) acc += ta[threadIdx.y][i] * tb[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}"#
)]
fn matmul(#[In] a: &[f32], #[In] b: &[f32], #[Out] c: &mut [f32], m: i32, k: i32, n: i32);

fn main() -> std::process::ExitCode {
    run_example("matmul", || {
        let ctx = Context::default()?;
        let (m, k, n) = (300, 257, 411);
        let mut rng = Rng::new(42);
        let a = Array2::from_shape_fn((m, k), |_| rng.f32());
        let b = Array2::from_shape_fn((k, n), |_| rng.f32());
        let mut c = Array2::<f32>::zeros((m, n));

        let grid = ((n as u32).div_ceil(16), (m as u32).div_ceil(16));
        matmul(&ctx, grid, (16, 16), &a, &b, &mut c, m as i32, k as i32, n as i32)?;

        let want = a.dot(&b);
        mismatch_error("matmul", c.as_slice().unwrap(), want.as_slice().unwrap(), 1e-4)?;
        println!("matmul: {m}x{k} times {k}x{n} matches the CPU");
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
