//! A discrete Fourier transform in complex doubles, written as a PyCUDA program would be and
//! ported line for line: the kernel uses `uint` as nvcc code does (no `#include` for it), complex
//! numbers are `gpu_runtime::complex<double>` on the device and `num_complex::Complex64` on the
//! host, the signal is a Fortran-ordered `ndarray` (a batch of signals stored column by
//! column), and the In/Out call runs on a stream of ours (PyCUDA's `stream=`) with the shared
//! memory of that call (`shared=`). Checked against the same sums on the CPU.
//!
//! `cargo run --release --example dft`: needs an NVIDIA GPU.

use gpu_runtime::driver::memory_order;
use gpu_runtime::ndarray::{Array2, Order, ShapeBuilder};
use gpu_runtime::types::Complex64;
use gpu_runtime::{kernel, Context, Stream};

// One block per output frequency of one signal; each thread sums a strided part of the input,
// then the block adds the parts in shared memory (its size given per call).
#[kernel(
    r#"
#include <gpu_runtime/complex.h>
typedef gpu_runtime::complex<double> cplx;
__global__ void dft(const cplx *x, cplx *out, uint n, uint signals) {
    extern __shared__ cplx part[];
    uint k = blockIdx.x, s = blockIdx.y;
    const cplx *sig = x + (size_t)s * n;  // column s of the Fortran-ordered n x signals batch
    cplx acc(0.0, 0.0);
    for (uint t = threadIdx.x; t < n; t += blockDim.x) {
        double angle = -2.0 * 3.14159265358979323846 * (double)((unsigned long long)k * t % n) / n;
        acc += sig[t] * cplx(cos(angle), sin(angle));
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (uint half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[(size_t)s * n + k] = part[0];
}"#
)]
fn dft(#[In] x: &[Complex64], #[Out] out: &mut [Complex64], n: u32, signals: u32);

fn main() -> std::process::ExitCode {
    run_example("dft", || {
        let ctx = Context::default()?;
        let (n, signals) = (1000usize, 6usize);
        let mut rng = Rng::new(2026);
        // n samples of `signals` signals, stored signal after signal: Fortran order.
        let x = Array2::from_shape_fn((n, signals).f(), |_| {
            Complex64::new(rng.f64() - 0.5, rng.f64() - 0.5)
        });
        assert_eq!(memory_order(&x), Some(Order::F));
        let mut spectrum = Array2::from_elem((n, signals).f(), Complex64::new(0.0, 0.0));

        let stream = Stream::new(&ctx)?;
        let block = 128u32;
        let shared = block * std::mem::size_of::<Complex64>() as u32;
        dft::prepare(&ctx)?.with_shared_mem(shared).call_on(
            (n as u32, signals as u32),
            block,
            &stream,
            &x,
            &mut spectrum,
            n as u32,
            signals as u32,
        )?;

        let mut worst = 0f64;
        for s in 0..signals {
            for k in 0..n {
                let want: Complex64 = (0..n)
                    .map(|t| {
                        let angle = -2.0 * std::f64::consts::PI * ((k * t) % n) as f64 / n as f64;
                        x[[t, s]] * Complex64::new(angle.cos(), angle.sin())
                    })
                    .sum();
                worst = worst.max((spectrum[[k, s]] - want).norm());
            }
        }
        if worst > 1e-9 * n as f64 {
            return Err(format!("dft: the GPU's spectrum is off by {worst:e} at worst").into());
        }
        println!("dft: {signals} signals of {n} complex doubles, largest error {worst:.2e}");
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

    /// A double uniform in `[-1, 1)`.
    fn f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}
