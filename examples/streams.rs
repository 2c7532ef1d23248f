//! Two streams overlapping copies and kernels: the data is cut into chunks, and each chunk's
//! copy in, kernel and copy out are queued on one of two streams, so that while one chunk
//! computes, the next is copied in and the previous one copied out. Events time the whole run
//! against the same work queued serially on one stream.

use std::time::Duration;

use gpu_runtime::driver::{memcpy_dtoh_async, memcpy_htod_async, HostAllocFlags, PinnedArray};
use gpu_runtime::ndarray::Ix1;
use gpu_runtime::{kernel, Context, DeviceBuffer, Event, Result, Stream};

// Enough arithmetic per element that the kernel takes about as long as the copies.
#[kernel(
    r#"
__global__ void leaky(const float *x, float *y, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float xi = x[i], v = xi;
    for (int k = 0; k < iters; ++k) v = 0.99f * v + xi;
    y[i] = v;
}"#
)]
fn leaky(x: &[f32], y: &mut [f32], n: i32, iters: i32);

const ITERS: i32 = 1024;

/// One chunk's buffers. Each chunk has its own: the crate orders work per allocation, so two
/// streams writing two parts of one buffer would wait for each other.
struct Chunk {
    // Page-locked: only copies from and to pinned memory run asynchronously, by DMA.
    host_in: PinnedArray<f32, Ix1>,
    host_out: PinnedArray<f32, Ix1>,
    dev_in: DeviceBuffer<f32>,
    dev_out: DeviceBuffer<f32>,
}

impl Chunk {
    fn new(ctx: &Context, x: &[f32]) -> Result<Chunk> {
        let mut host_in = ctx.pagelocked_empty::<f32, _>(x.len(), HostAllocFlags::NONE)?;
        host_in.as_slice_memory_order_mut().copy_from_slice(x);
        Ok(Chunk {
            host_in,
            host_out: ctx.pagelocked_zeros::<f32, _>(x.len(), HostAllocFlags::NONE)?,
            dev_in: ctx.alloc::<f32>(x.len())?,
            dev_out: ctx.alloc::<f32>(x.len())?,
        })
    }
}

/// Queues each chunk's copy in, kernel and copy out, round-robin over `streams`; returns the
/// GPU time from the first copy to the last.
fn pipeline(k: &leaky::Kernel, chunks: &mut [Chunk], streams: &[Stream]) -> Result<Duration> {
    let ctx = streams[0].context();
    let (start, end) = (Event::new(ctx)?, Event::new(ctx)?);
    // Recorded on the legacy default stream, which waits for all work queued before on the
    // ordinary streams (and they for it): the two events bracket the work of both streams.
    start.record(None)?;
    for (c, b) in chunks.iter_mut().enumerate() {
        let s = &streams[c % streams.len()];
        let len = b.host_in.len();
        // Safe: the pinned arrays record the copies, and the host's next access waits for them.
        memcpy_htod_async(&mut b.dev_in, &b.host_in, s)?;
        let grid = (len as u32).div_ceil(256);
        k.prepared_async_call(grid, 256, s, &b.dev_in, &mut b.dev_out, len as i32, ITERS)?;
        memcpy_dtoh_async(&mut b.host_out, &b.dev_out, s)?;
    }
    end.record(None)?;
    end.synchronize()?;
    end.time_since(&start)
}

/// The chunks' outputs, in order (each read waits for its chunk's copy back).
fn gather(chunks: &[Chunk]) -> Vec<f32> {
    chunks
        .iter()
        .flat_map(|c| c.host_out.as_slice_memory_order().iter().copied())
        .collect()
}

fn main() -> std::process::ExitCode {
    run_example("streams", || {
        let ctx = Context::default()?;
        let n = 1 << 22;
        let x = Rng::new(2).vec_f32(n);

        // The CPU runs the same recurrence in blocks that stay in cache. The GPU may fuse
        // `0.99f * v + xi` into one FMA (one rounding instead of two), hence the tolerance.
        let mut want = x.clone();
        for (w, x) in want.chunks_mut(1024).zip(x.chunks(1024)) {
            for _ in 0..ITERS {
                w.iter_mut().zip(x).for_each(|(v, x)| *v = 0.99 * *v + x);
            }
        }

        let k = leaky::prepare(&ctx)?;
        let streams = [Stream::new(&ctx)?, Stream::new(&ctx)?];
        let split = |parts: usize| -> Result<Vec<Chunk>> {
            x.chunks(n / parts).map(|c| Chunk::new(&ctx, c)).collect()
        };
        pipeline(&k, &mut split(8)?, &streams)?; // warm-up: first-touch costs stay out of the timings
        let mut times = Vec::new();
        for (what, streams, parts) in [("serial", &streams[..1], 1), ("overlapped", &streams[..], 16)] {
            let mut chunks = split(parts)?;
            for c in &mut chunks {
                c.host_out.as_slice_memory_order_mut().fill(f32::NAN); // each run must write every element
            }
            times.push(pipeline(&k, &mut chunks, streams)?);
            mismatch_error(what, &gather(&chunks), &want, 1e-4)?;
        }
        println!(
            "streams: {n} floats in, {ITERS} steps each, out: serial on one stream {:.3} ms, overlapped on two streams in 16 chunks {:.3} ms ({:.2}x); both match the CPU",
            times[0].as_secs_f64() * 1e3,
            times[1].as_secs_f64() * 1e3,
            times[0].as_secs_f64() / times[1].as_secs_f64(),
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
