//! Two streams overlapping copies and kernels: the data is cut into chunks, and each chunk's
//! copy in, kernel and copy out are queued on one of two streams, so that while one chunk
//! computes, the next is copied in and the previous one copied out. Events time the whole run
//! against the same work queued serially on one stream.

use std::time::Duration;

use gpu_runtime::ndarray::Ix1;
use gpu_runtime::{
    kernel, memcpy_dtoh_async, memcpy_htod_async, Context, DeviceBuffer, Event, HostAllocFlags, PinnedArray,
    Result, Stream,
};
use gpu_suite::{mismatch_error, run_example, Rng};

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

struct Buffers {
    // Page-locked: only copies from and to pinned memory run asynchronously, by DMA.
    host_in: PinnedArray<f32, Ix1>,
    host_out: PinnedArray<f32, Ix1>,
    dev_in: DeviceBuffer<f32>,
    dev_out: DeviceBuffer<f32>,
}

/// Queues `chunks` rounds of copy in, kernel, copy out, round-robin over `streams`; returns
/// the GPU time from the first copy to the last.
fn pipeline(k: &leaky::Kernel, b: &mut Buffers, streams: &[Stream], chunks: usize) -> Result<Duration> {
    let ctx = streams[0].context();
    let (start, end) = (Event::new(ctx)?, Event::new(ctx)?);
    let len = b.host_in.len() / chunks;
    // Recorded on the legacy default stream, which waits for all work queued before on the
    // ordinary streams (and they for it): the two events bracket the work of both streams.
    start.record(None)?;
    for c in 0..chunks {
        let (r, s) = (c * len..(c + 1) * len, &streams[c % streams.len()]);
        let src = &b.host_in.as_slice_memory_order()[r.clone()];
        let dst = &mut b.host_out.as_slice_memory_order_mut()[r.clone()];
        let (mut din, mut dout) = (b.dev_in.slice_mut(r.clone())?, b.dev_out.slice_mut(r)?);
        // SAFETY: the host arrays are neither read nor written until `end` has completed.
        unsafe { memcpy_htod_async(&mut din, src, s)? };
        let grid = (len as u32).div_ceil(256);
        k.prepared_async_call(grid, 256, s, &din, &mut dout, len as i32, ITERS)?;
        // SAFETY: as above.
        unsafe { memcpy_dtoh_async(dst, &dout, s)? };
    }
    end.record(None)?;
    end.synchronize()?;
    end.time_since(&start)
}

fn main() -> std::process::ExitCode {
    run_example("streams", || {
        let ctx = Context::default()?;
        let n = 1 << 22;
        let x = Rng::new(2).vec_f32(n);
        let mut host_in = ctx.pagelocked_empty::<f32, _>(n, HostAllocFlags::NONE)?;
        host_in.as_slice_memory_order_mut().copy_from_slice(&x);
        let host_out = ctx.pagelocked_zeros::<f32, _>(n, HostAllocFlags::NONE)?;
        let (dev_in, dev_out) = (ctx.alloc::<f32>(n)?, ctx.alloc::<f32>(n)?);
        let mut b = Buffers {
            host_in,
            host_out,
            dev_in,
            dev_out,
        };

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
        pipeline(&k, &mut b, &streams, 8)?; // warm-up: first-touch costs stay out of the timings
        let mut times = Vec::new();
        for (what, streams, chunks) in [("serial", &streams[..1], 1), ("overlapped", &streams[..], 16)] {
            b.host_out.as_slice_memory_order_mut().fill(f32::NAN); // each run must write every element
            times.push(pipeline(&k, &mut b, streams, chunks)?);
            mismatch_error(what, b.host_out.as_slice_memory_order(), &want, 1e-4)?;
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
