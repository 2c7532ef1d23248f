//! cuBLAS products in a captured graph (`Capture::gemm`, `Capture::gemm_strided_batched`):
//! products and kernels recorded in order, the graph launched many times on two streams,
//! against a CPU reference on random data.
//!
//! `cargo test --features cublas --test cudarc -- --ignored graph_gemm::` on a GPU machine.

use gpu_runtime::cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
use gpu_runtime::cudarc::cublas::{GemmConfig, StridedBatchedConfig};
use gpu_runtime::launch::{Capture, GraphBuffer, GraphInput};
use gpu_runtime::{kernel, Error, GemmError, Stream};
use gpu_suite::{assert_close, Rng};

use crate::common::ctx;

#[kernel(
    r#"
// acc = a * acc + x
__global__ void accum(float *acc, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] = a * acc[i] + x[i];
}
"#
)]
mod k {
    fn accum(acc: &mut [f32], #[len = n] x: &[f32], a: f32, n: i32);
}

/// Column-major `C = alpha op(A) op(B) + beta C`, `op` transposing where `ta`/`tb`.
#[allow(clippy::too_many_arguments)]
fn gemm_cpu(
    ta: bool,
    tb: bool,
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    beta: f32,
    c: &mut [f32],
    ldc: usize,
) {
    for j in 0..n {
        for i in 0..m {
            let mut s = 0.0f64;
            for p in 0..k {
                let av = if ta { a[p + i * lda] } else { a[i + p * lda] };
                let bv = if tb { b[j + p * ldb] } else { b[p + j * ldb] };
                s += av as f64 * bv as f64;
            }
            let c = &mut c[i + j * ldc];
            *c = alpha * s as f32 + beta * *c;
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn captured_gemms_and_a_kernel_replayed_on_two_streams_match_the_cpu() {
    let ctx = ctx();
    let kern = k::accum::prepare(&ctx).unwrap();
    let mut rng = Rng::new(45);
    // C (m x n) += A^T B (A stored k x m, B k x n); then C = 0.5 C + D (a kernel); then
    // E_i = 0.25 C G_i^T for each of `batch` G_i (n x n), one C for all (stride 0).
    let (m, n, kk, batch) = (96usize, 80usize, 72usize, 3usize);
    let a = rng.vec_f32(kk * m);
    let b = rng.vec_f32(kk * n);
    let c0 = rng.vec_f32(m * n);
    let d = rng.vec_f32(m * n);
    let g = rng.vec_f32(batch * n * n);
    let (ad, bd, dd, gd) = (
        ctx.to_device(&a).unwrap(),
        ctx.to_device(&b).unwrap(),
        ctx.to_device(&d).unwrap(),
        ctx.to_device(&g).unwrap(),
    );
    let mut cd = ctx.to_device(&c0).unwrap();
    let mut ed = ctx.alloc_zeros::<f32>(batch * m * n).unwrap();
    let mut ws = ctx.alloc_zeros::<u8>(32 << 20).unwrap();
    let (s1, s2) = (Stream::new(&ctx).unwrap(), Stream::new(&ctx).unwrap());
    let launches = 5;
    let gemm = GemmConfig {
        transa: CUBLAS_OP_T,
        transb: CUBLAS_OP_N,
        m: m as i32,
        n: n as i32,
        k: kk as i32,
        alpha: 1.0f32,
        lda: kk as i32,
        ldb: kk as i32,
        beta: 1.0f32,
        ldc: m as i32,
    };
    // E_i (m x n) = C (m x n) G_i^T (G_i n x n).
    let batched = StridedBatchedConfig {
        gemm: GemmConfig {
            transa: CUBLAS_OP_N,
            transb: CUBLAS_OP_T,
            m: m as i32,
            n: n as i32,
            k: n as i32,
            alpha: 0.25f32,
            lda: m as i32,
            ldb: n as i32,
            beta: 0.0f32,
            ldc: m as i32,
        },
        batch_size: batch as i32,
        stride_a: 0,
        stride_b: (n * n) as i64,
        stride_c: (m * n) as i64,
    };
    {
        let (ag, bg, dg, gg) = (
            GraphInput::new(&ad),
            GraphInput::new(&bd),
            GraphInput::new(&dd),
            GraphInput::new(&gd),
        );
        let mut cg = GraphBuffer::new(&mut cd);
        let mut eg = GraphBuffer::new(&mut ed);
        let mut wsg = GraphBuffer::new(&mut ws);
        let mut cap = Capture::begin(&ctx).unwrap();
        cap.set_blas_tf32(false).unwrap();
        cap.gemm(gemm, &ag, &bg, &mut cg, &mut wsg).unwrap();
        let nn = (m * n) as i32;
        kern.capture(&mut cap, (nn as u32).div_ceil(256), 256, &mut cg, &dg, 0.5, nn)
            .unwrap();
        cap.gemm_strided_batched(batched, &cg, &gg, &mut eg, &mut wsg)
            .unwrap();
        // A product whose C does not fit is refused and records nothing.
        let mut bad = gemm;
        bad.m = m as i32 + 1;
        bad.ldc = m as i32 + 1;
        let e = cap.gemm(bad, &ag, &bg, &mut cg, &mut wsg).unwrap_err();
        assert!(
            matches!(e, Error::Gemm(GemmError::BufferTooSmall { matrix: "A", .. })),
            "{e}"
        );
        assert_eq!(cap.len(), 3);
        let graph = cap.end().unwrap();
        // A, B, C, D, G, E and the workspace.
        assert_eq!(graph.allocations(), 7);
        let mut exec = graph.instantiate().unwrap();
        for i in 0..launches {
            exec.launch(if i % 2 == 0 { &s1 } else { &s2 }).unwrap();
        }
    }
    let (mut c, mut e) = (c0, vec![0.0f32; batch * m * n]);
    for _ in 0..launches {
        gemm_cpu(true, false, m, n, kk, 1.0, &a, kk, &b, kk, 1.0, &mut c, m);
        for (c, d) in c.iter_mut().zip(&d) {
            *c = 0.5 * *c + d;
        }
        for i in 0..batch {
            let gi = &g[i * n * n..(i + 1) * n * n];
            let ei = &mut e[i * m * n..(i + 1) * m * n];
            gemm_cpu(false, true, m, n, n, 0.25, &c, m, gi, n, 0.0, ei, m);
        }
    }
    // No synchronize: reading waits for the graph's last launch through the records.
    let scale = c.iter().fold(1.0f32, |s, v| s.max(v.abs()));
    assert_close(&cd.to_vec().unwrap(), &c, 1e-4 * scale);
    let scale = e.iter().fold(1.0f32, |s, v| s.max(v.abs()));
    assert_close(&ed.to_vec().unwrap(), &e, 1e-4 * scale);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_captured_gemm_refuses_a_workspace_off_256_bytes_and_keeps_capturing() {
    let ctx = ctx();
    let (m, n, kk) = (8usize, 8usize, 8usize);
    let mut rng = Rng::new(7);
    let (a, b) = (rng.vec_f32(m * kk), rng.vec_f32(kk * n));
    let (ad, bd) = (ctx.to_device(&a).unwrap(), ctx.to_device(&b).unwrap());
    let mut cd = ctx.alloc_zeros::<f32>(m * n).unwrap();
    let mut ws = ctx.alloc_zeros::<u8>(1 << 20).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    let cfg = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: m as i32,
        n: n as i32,
        k: kk as i32,
        alpha: 1.0f32,
        lda: m as i32,
        ldb: kk as i32,
        beta: 0.0f32,
        ldc: m as i32,
    };
    {
        let (ag, bg) = (GraphInput::new(&ad), GraphInput::new(&bd));
        let mut cg = GraphBuffer::new(&mut cd);
        // The second half starts 128 bytes into a (256-aligned) allocation.
        let (mut lo, mut hi) = ws.slice_mut(..).unwrap().split_at_mut(128).unwrap();
        let mut off = GraphBuffer::new(&mut hi);
        let mut cap = Capture::begin(&ctx).unwrap();
        let e = cap.gemm(cfg, &ag, &bg, &mut cg, &mut off).unwrap_err();
        assert!(
            matches!(e, Error::Gemm(GemmError::WorkspaceMisaligned { .. })),
            "{e}"
        );
        assert_eq!(cap.len(), 0);
        let mut ok = GraphBuffer::new(&mut lo);
        cap.gemm(cfg, &ag, &bg, &mut cg, &mut ok).unwrap();
        let mut exec = cap.end().unwrap().instantiate().unwrap();
        exec.launch(&stream).unwrap();
    }
    let mut want = vec![0.0f32; m * n];
    gemm_cpu(false, false, m, n, kk, 1.0, &a, m, &b, kk, 0.0, &mut want, m);
    assert_close(&cd.to_vec().unwrap(), &want, 1e-4);
}

/// The port's layout (examples/gpt2_train): each layer's weights a range of one parameter
/// buffer, each layer's output a range of one activation buffer, and an update writing the
/// whole parameter buffer in the same graph, through sub-range tokens
/// (`GraphBuffer::slice`, `slice_mut`, `GraphSliceMut::split_at_mut`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn layers_in_ranges_of_one_buffer_captured_with_sub_range_tokens_match_the_cpu() {
    let ctx = ctx();
    let kern = k::accum::prepare(&ctx).unwrap();
    let mut rng = Rng::new(46);
    let (d, rows, layers) = (64usize, 48usize, 2usize);
    let w0 = rng.vec_f32(layers * d * d);
    let x = rng.vec_f32(rows * d);
    let step = rng.vec_f32(layers * d * d);
    let xd = ctx.to_device(&x).unwrap();
    let stepd = ctx.to_device(&step).unwrap();
    let mut wd = ctx.to_device(&w0).unwrap();
    let mut act = ctx.alloc_zeros::<f32>(layers * rows * d).unwrap();
    let mut ws = ctx.alloc_zeros::<u8>(32 << 20).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    // act_l (d x rows, column-major) = W_l (d x d) x_in (d x rows); x_in = x, then act_{l-1}.
    let cfg = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: d as i32,
        n: rows as i32,
        k: d as i32,
        alpha: 1.0f32,
        lda: d as i32,
        ldb: d as i32,
        beta: 0.0f32,
        ldc: d as i32,
    };
    let launches = 3;
    {
        let (xg, stepg) = (GraphInput::new(&xd), GraphInput::new(&stepd));
        let mut wg = GraphBuffer::new(&mut wd);
        let mut actg = GraphBuffer::new(&mut act);
        let mut wsg = GraphBuffer::new(&mut ws);
        let mut cap = Capture::begin(&ctx).unwrap();
        for l in 0..layers {
            let w = wg.slice(l * d * d..(l + 1) * d * d).unwrap();
            if l == 0 {
                let mut out = actg.slice_mut(..rows * d).unwrap();
                cap.gemm(cfg, &w, &xg, &mut out, &mut wsg).unwrap();
            } else {
                // Read layer l-1's range and write layer l's of one buffer in one product.
                let all = actg.slice_mut(..).unwrap();
                let (before, mut out) = all.split_at_mut(l * rows * d).unwrap();
                let (_, prev) = before.split_at_mut((l - 1) * rows * d).unwrap();
                cap.gemm(cfg, &w, &prev, &mut out, &mut wsg).unwrap();
            }
        }
        // The update: W = 1 * W + step, over the whole buffer, after every layer read it.
        let n = (layers * d * d) as i32;
        kern.capture(&mut cap, (n as u32).div_ceil(256), 256, &mut wg, &stepg, 1.0, n)
            .unwrap();
        // Out of range is refused.
        assert!(wg.slice(..layers * d * d + 1).is_err());
        let mut exec = cap.end().unwrap().instantiate().unwrap();
        for _ in 0..launches {
            exec.launch(&stream).unwrap();
        }
    }
    let (mut w, mut want) = (w0, vec![0.0f32; layers * rows * d]);
    for _ in 0..launches {
        for l in 0..layers {
            let input = if l == 0 {
                x.clone()
            } else {
                want[(l - 1) * rows * d..l * rows * d].to_vec()
            };
            let wl = &w[l * d * d..(l + 1) * d * d];
            gemm_cpu(
                false,
                false,
                d,
                rows,
                d,
                1.0,
                wl,
                d,
                &input,
                d,
                0.0,
                &mut want[l * rows * d..(l + 1) * rows * d],
                d,
            );
        }
        for (w, s) in w.iter_mut().zip(&step) {
            *w += s;
        }
    }
    assert_close(&wd.to_vec().unwrap(), &w, 1e-5);
    let scale = want.iter().fold(1.0f32, |s, v| s.max(v.abs()));
    assert_close(&act.to_vec().unwrap(), &want, 1e-4 * scale);
}
