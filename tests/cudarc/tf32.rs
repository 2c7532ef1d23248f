//! `set_tf32`: cuBLAS's `f32` math mode, TF32 tensor cores or exact FP32.

use gpu_runtime::cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
use gpu_runtime::cudarc::cublas::GemmConfig;
use gpu_runtime::driver::cublas::{cublas_on, gemm, set_tf32};
use gpu_runtime::Stream;

use crate::common::ctx;

#[test]
#[ignore = "needs a CUDA GPU"]
fn tf32_drops_the_bits_fp32_keeps_and_turning_it_off_restores_them() {
    let ctx = ctx();
    let stream = Stream::new(&ctx).unwrap();
    let blas = cublas_on(&stream).unwrap();
    let n = 256usize;
    // 1 + 2^-12 needs 12 mantissa bits: exact in FP32, 1.0 in TF32 (10 bits).
    let x = 1.0f32 + 1.0 / 4096.0;
    let a = ctx.to_device(&vec![x; n * n]).unwrap();
    let b = ctx.to_device(&vec![1.0f32; n * n]).unwrap();
    let mut c = ctx.alloc_zeros::<f32>(n * n).unwrap();
    let cfg = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: n as i32,
        n: n as i32,
        k: n as i32,
        alpha: 1.0f32,
        lda: n as i32,
        ldb: n as i32,
        beta: 0.0f32,
        ldc: n as i32,
    };
    let exact = n as f32 * x; // 256.0625, a float
    let cc = ctx.device().compute_capability().unwrap();
    set_tf32(&blas, true).unwrap();
    gemm(&blas, cfg, &a, &b, &mut c).unwrap();
    let on = c.to_vec().unwrap();
    if cc.0 >= 8 {
        // Ampere and later have TF32 tensor cores, which cuBLAS picks for this size.
        assert!(
            on.iter().all(|&v| v == n as f32),
            "TF32 on: {} (want {})",
            on[0],
            n
        );
    }
    set_tf32(&blas, false).unwrap();
    gemm(&blas, cfg, &a, &b, &mut c).unwrap();
    let off = c.to_vec().unwrap();
    assert!(
        off.iter().all(|&v| v == exact),
        "TF32 off: {} (want {exact})",
        off[0]
    );
}
