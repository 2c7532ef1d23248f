//! Managed (unified) memory, PyCUDA's `doublify`: one allocation that the host and the GPU both
//! address. The array is filled on the host, doubled by a kernel that takes it as its pointer
//! argument, and read again on the host, with no copy written anywhere: the driver migrates the
//! pages on demand, or ahead of time when asked to prefetch them.

use gpu_runtime::driver::{AttachFlags, DeviceAttribute, MemAdvice, MemLocation};
use gpu_runtime::{kernel, Context};

// `float *a` takes any device-writable memory; a ManagedArray is one, so no staging is involved.
#[kernel(
    r#"
__global__ void doublify(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= 2;
}"#
)]
fn doublify(a: &mut [f32], n: i32);

fn main() -> std::process::ExitCode {
    run_example("managed", || {
        let ctx = Context::default()?;
        let n = 1 << 20;
        let host = Rng::new(1).vec_f32(n);

        // GLOBAL: any stream may touch the memory, so the launch below needs no attach call.
        let mut a = ctx.managed_empty::<f32, _>(n, AttachFlags::Global)?;
        a.as_slice_memory_order_mut().copy_from_slice(&host); // written by the CPU

        let doublify = doublify::prepare(&ctx)?;
        let grid = (n as u32).div_ceil(256);
        doublify.prepared_call(grid, 256, &mut a, n as i32)?;
        // The launch returns before the kernel ends, and the host must not touch managed memory
        // while a kernel runs: wait for it (PyCUDA's `context.synchronize()`).
        ctx.synchronize()?;

        // Doubling is exact in floating point, so the CPU reference must match bit for bit.
        let want: Vec<f32> = host.iter().map(|v| v * 2.0).collect();
        mismatch_error("doublify", a.as_slice_memory_order(), &want, 0.0)?;

        // The pages move back to the GPU for a second pass, and to the host for the median.
        // Prefetching moves them ahead of time, in bulk, instead of on demand, page fault by
        // page fault (on devices with concurrent managed access, as data-center GPUs have).
        let concurrent = ctx.device().attribute(DeviceAttribute::ConcurrentManagedAccess)? != 0;
        if concurrent {
            a.advise(MemAdvice::SetPreferredLocation(MemLocation::Device(ctx.device())))?;
            a.prefetch(MemLocation::Device(ctx.device()), None)?;
        }
        doublify.prepared_call(grid, 256, &mut a, n as i32)?;
        if concurrent {
            a.prefetch(MemLocation::Host, None)?;
        }
        ctx.synchronize()?;
        let want: Vec<f32> = host.iter().map(|v| v * 4.0).collect();
        mismatch_error("doublify twice", a.as_slice_memory_order(), &want, 0.0)?;
        let mut sorted = a.as_slice_memory_order().to_vec();
        sorted.sort_by(f32::total_cmp);
        println!(
            "managed: {n} floats doubled twice in managed memory with no copies; match the CPU; median computed on the host: {}",
            sorted[n / 2]
        );
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
