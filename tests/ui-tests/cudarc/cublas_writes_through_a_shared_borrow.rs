// cuBLAS writes C: through cudarc, our memory is writable only through `&mut`, so a `&`
// borrow of the output buffer does not compile (here while a kernel could be reading it).
use gpu_runtime::cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
use gpu_runtime::cudarc::cublas::GemmConfig;
use gpu_runtime::driver::cublas::{cublas_on, gemm};
use gpu_runtime::{Context, Stream};

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let blas = cublas_on(&stream)?;
    let a = ctx.alloc_zeros::<f32>(16)?;
    let b = ctx.alloc_zeros::<f32>(16)?;
    let c = ctx.alloc_zeros::<f32>(16)?;
    let cfg = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: 4,
        n: 4,
        k: 4,
        alpha: 1.0f32,
        lda: 4,
        ldb: 4,
        beta: 0.0f32,
        ldc: 4,
    };
    let shared = &c;
    gemm(&blas, cfg, &a, &b, &mut &c)?;
    // And cudarc's own `unsafe` call is refused the same way.
    unsafe {
        use gpu_runtime::cudarc::cublas::Gemm;
        blas.gemm(cfg, &a, &b, &mut shared).unwrap();
    }
    Ok(())
}
