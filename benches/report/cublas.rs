//! cuBLAS sgemm through cudarc on this crate's buffers (their uses recorded on the handle's
//! stream through `DevicePtr`, the checked `gemm`) against the same calls on cudarc's own
//! `CudaSlice`s (cudarc's events, its `unsafe` gemm), on the same stream and handle, in
//! interleaved rounds. Built with the `cublas` feature; skipped, saying why, when libcublas
//! cannot be loaded.

use std::time::{Duration, Instant};

use gpu_runtime::cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
use gpu_runtime::cudarc::cublas::{Gemm, GemmConfig};
use gpu_runtime::driver::cublas::{cublas_on, gemm};
use gpu_runtime::{Context, Stream};

use crate::best;
use crate::table::Row;

const M: usize = 1024;
const CALLS: usize = 20;
const ROUNDS: usize = 9;

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let stream = Stream::new(ctx)?;
    let blas = match cublas_on(&stream) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("bench report: no cuBLAS row: {e}");
            return Ok(Vec::new());
        }
    };
    let c = stream.to_cudarc()?;
    let host: Vec<f32> = (0..M * M).map(|i| (i % 7) as f32 * 0.25).collect();
    let (a, b) = (ctx.to_device(&host)?, ctx.to_device(&host)?);
    let mut out = ctx.alloc_zeros::<f32>(M * M)?;
    let (ta, tb) = (c.clone_htod(&host)?, c.clone_htod(&host)?);
    let mut tout = c.alloc_zeros::<f32>(M * M)?;
    let cfg = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: M as i32,
        n: M as i32,
        k: M as i32,
        alpha: 1.0f32,
        lda: M as i32,
        ldb: M as i32,
        beta: 0.0f32,
        ldc: M as i32,
    };
    let mut ours_t = Vec::new();
    let mut theirs_t = Vec::new();
    let mut ratios = Vec::new();
    for round in 0..=ROUNDS {
        let t0 = Instant::now();
        for _ in 0..CALLS {
            gemm(&blas, cfg, &a, &b, &mut out)?;
        }
        stream.synchronize()?;
        let ours = t0.elapsed();
        let t0 = Instant::now();
        for _ in 0..CALLS {
            // SAFETY: every matrix is M x M with leading dimension M in a buffer of M * M
            // elements; the output is its own slice.
            unsafe { blas.gemm(cfg, &ta, &tb, &mut tout) }?;
        }
        c.synchronize()?;
        let theirs = t0.elapsed();
        // Round 0 warms both up (cuBLAS's kernel selection, the events' first use).
        if round > 0 {
            ours_t.push(ours / CALLS as u32);
            theirs_t.push(theirs / CALLS as u32);
            ratios.push(ours.as_secs_f64() / theirs.as_secs_f64());
        }
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    Ok(vec![Row {
        figure: "cuBLAS sgemm 1024^3 through cudarc on our DeviceBuffers (checked gemm)",
        raw: "the same calls on cudarc's own CudaSlices (cudarc's unsafe gemm)",
        ours: us(best(&ours_t)),
        theirs: us(best(&theirs_t)),
        unit: "us",
        higher_is_better: false,
        target: "<= 1.02x",
        rounds: ratios,
    }])
}
