//! A server-style program: many concurrent requests share one GPU, each awaiting its own
//! result, on a tokio runtime of 4 threads; every result is checked against the CPU.
//!
//! A request uploads its input, launches a kernel on one of a few streams and awaits the copy
//! of its output into page-locked memory from a pool (`memcpy_dtoh_future`): while the GPU
//! works, the request's task is parked and its thread serves other requests. The futures are
//! woken by CUDA host functions, so this works on any executor; tokio is only the example's.
//!
//! `cargo run --release --features tokio --example async_server` (tokio is optional in this
//! repository's examples, so that the others do not build it; your crate simply depends on
//! it): needs an NVIDIA GPU. On a machine without one
//! it says so in one sentence and exits with status 1.

use std::sync::Arc;
use std::time::Instant;

use gpu_runtime::driver::{memcpy_dtoh_future, HostAllocFlags, StreamFlags};
use gpu_runtime::tools::{PageLockedAllocator, PageLockedMemoryPool};
use gpu_runtime::{kernel, Context, Stream};

#[kernel(
    r#"
__global__ void softplus_scale(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * log1pf(expf(x[i]));
}"#
)]
fn softplus_scale(y: &mut [f32], x: &[f32], a: f32, n: i32);

/// What every request handler shares: the context, the prepared kernel, the streams requests
/// are spread over, and the pool their results are copied into.
struct Server {
    ctx: Context,
    kernel: softplus_scale::Kernel,
    streams: Vec<Stream>,
    results: PageLockedMemoryPool,
}

impl Server {
    fn new() -> gpu_runtime::Result<Server> {
        let ctx = Context::default()?;
        Ok(Server {
            kernel: softplus_scale::prepare(&ctx)?,
            streams: (0..8)
                .map(|_| Stream::with_flags(&ctx, StreamFlags::NonBlocking))
                .collect::<Result<_, _>>()?,
            results: PageLockedMemoryPool::new(&ctx, PageLockedAllocator::new(HostAllocFlags::NONE)),
            ctx,
        })
    }

    /// One request: its input in, `a * softplus(x)` out, awaited without blocking a thread.
    async fn handle(&self, id: usize, x: Vec<f32>, a: f32) -> gpu_runtime::Result<Vec<f32>> {
        let n = x.len();
        let stream = &self.streams[id % self.streams.len()];
        let xd = self.ctx.to_device(&x)?;
        let mut y = self.ctx.alloc::<f32>(n)?;
        self.kernel
            .prepared_async_call(n.div_ceil(256), 256, stream, &mut y, &xd, a, n as i32)?;
        // `xd` and `y` may be dropped before the copy ran: their memory is freed only after
        // the work queued on them, as everywhere in the crate.
        let host = memcpy_dtoh_future(self.results.allocate::<f32, _>(n)?, &y, stream)?.await?;
        Ok(host.as_slice_memory_order().to_vec())
    }
}

fn softplus_scale_cpu(x: &[f32], a: f32) -> Vec<f32> {
    x.iter().map(|&x| a * x.exp().ln_1p()).collect()
}

fn main() -> std::process::ExitCode {
    run_example("async_server", || {
        let server = Arc::new(Server::new()?);
        let requests = 2000;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .build()?;
        let start = Instant::now();
        let handles: Vec<_> = (0..requests)
            .map(|id| {
                let server = server.clone();
                runtime.spawn(async move {
                    // Each request brings its own data, of its own size.
                    let mut rng = Rng::new(id as u64);
                    let n = 4096 + (rng.next_u64() % 200_000) as usize;
                    let x: Vec<f32> = (0..n).map(|_| 8.0 * rng.f32() - 4.0).collect();
                    let a = rng.f32();
                    let got = server.handle(id, x.clone(), a).await?;
                    Ok::<_, gpu_runtime::Error>((id, got, softplus_scale_cpu(&x, a)))
                })
            })
            .collect();
        let checked = runtime.block_on(async {
            let mut checked = 0;
            for h in handles {
                let (id, got, want) = h.await??;
                mismatch_error(&format!("request {id}"), &got, &want, 1e-5)?;
                checked += 1;
            }
            Ok::<_, Box<dyn std::error::Error>>(checked)
        })?;
        let secs = start.elapsed().as_secs_f64();
        println!(
            "async_server: {checked} concurrent requests on {} over 4 threads, each awaiting its own \
             result: all match the CPU ({:.0} requests/s)",
            server.ctx.device().name()?,
            checked as f64 / secs
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
}
