//! Requests per second of a server-style program: many concurrent requests sharing one GPU,
//! each uploading its input, launching a kernel on one of a few streams and copying its result
//! back into page-locked memory from a pool. Ours awaits each result on a 4-thread tokio
//! runtime (the futures of `driver::future`, woken by host functions); the other side is the
//! way without async: one thread per request, blocking on its stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gpu_runtime::driver::{memcpy_dtoh_async, memcpy_dtoh_future, HostAllocFlags, StreamFlags};
use gpu_runtime::tools::{PageLockedAllocator, PageLockedMemoryPool};
use gpu_runtime::{Context, Stream};

use crate::axpy;
use crate::table::Row;

/// Requests per round, all in flight at once.
const REQUESTS: usize = 256;
/// Elements per request.
const N: usize = 1 << 16;
/// Rounds, async and blocking back to back; the first warms up and is not counted.
const ROUNDS: usize = 11;

struct Shared {
    ctx: Context,
    kernel: axpy::Kernel,
    streams: Vec<Stream>,
    pool: PageLockedMemoryPool,
    x: Vec<f32>,
}

impl Shared {
    /// Everything of a request up to its wait: the input up, the kernel, and the stream.
    fn start(&self, id: usize) -> gpu_runtime::Result<(gpu_runtime::DeviceBuffer<f32>, &Stream)> {
        let stream = &self.streams[id % self.streams.len()];
        let xd = self.ctx.to_device(&self.x)?;
        let mut y = self.ctx.alloc_zeros::<f32>(N)?;
        self.kernel
            .prepared_async_call(N.div_ceil(256) as u32, 256, stream, 2.0, &xd, &mut y, N as i32)?;
        Ok((y, stream))
    }
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let shared = Arc::new(Shared {
        ctx: ctx.clone(),
        kernel: axpy::prepare(ctx)?,
        streams: (0..8)
            .map(|_| Stream::with_flags(ctx, StreamFlags::NonBlocking))
            .collect::<Result<_, _>>()?,
        pool: PageLockedMemoryPool::new(ctx, PageLockedAllocator::new(HostAllocFlags::NONE)),
        x: vec![0.5f32; N],
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()?;
    let time_async = || -> Result<Duration, Box<dyn std::error::Error>> {
        let t = Instant::now();
        let tasks: Vec<_> = (0..REQUESTS)
            .map(|id| {
                let shared = shared.clone();
                runtime.spawn(async move {
                    let (y, stream) = shared.start(id)?;
                    let host = memcpy_dtoh_future(shared.pool.allocate::<f32, _>(N)?, &y, stream)?.await?;
                    Ok::<f32, gpu_runtime::Error>(host.as_slice_memory_order()[N - 1])
                })
            })
            .collect();
        runtime.block_on(async {
            for task in tasks {
                assert_eq!(task.await??, 1.0, "a request's result");
            }
            Ok::<_, Box<dyn std::error::Error>>(())
        })?;
        Ok(t.elapsed())
    };
    let time_blocking = || -> Result<Duration, Box<dyn std::error::Error>> {
        let t = Instant::now();
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..REQUESTS)
                .map(|id| {
                    let shared = &shared;
                    scope.spawn(move || {
                        let (y, stream) = shared.start(id)?;
                        let mut host = shared.pool.allocate::<f32, _>(N)?;
                        memcpy_dtoh_async(&mut host, &y, stream)?;
                        stream.synchronize()?;
                        Ok::<f32, gpu_runtime::Error>(host.as_slice_memory_order()[N - 1])
                    })
                })
                .collect();
            for thread in threads {
                let got = thread.join().map_err(|_| "a request thread panicked")??;
                assert_eq!(got, 1.0, "a request's result");
            }
            Ok::<_, Box<dyn std::error::Error>>(())
        })?;
        Ok(t.elapsed())
    };
    let (mut ours, mut blocking) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (a, b) = if round % 2 == 0 {
            let a = time_async()?;
            (a, time_blocking()?)
        } else {
            let b = time_blocking()?;
            (time_async()?, b)
        };
        if round > 0 {
            ours.push(a);
            blocking.push(b);
        }
    }
    let rate = |t: &[Duration]| {
        let mut t = t.to_vec();
        t.sort();
        REQUESTS as f64 / t[t.len() / 2].as_secs_f64() / 1e3
    };
    Ok(vec![Row {
        figure: "256 concurrent requests (64K floats up, kernel, back), async on 4 threads, k requests/s",
        raw: "one blocking thread per request",
        ours: rate(&ours),
        theirs: rate(&blocking),
        unit: "k/s",
        higher_is_better: true,
        target: "",
        rounds: ours
            .iter()
            .zip(&blocking)
            .map(|(o, b)| o.as_secs_f64() / b.as_secs_f64())
            .collect(),
    }])
}
