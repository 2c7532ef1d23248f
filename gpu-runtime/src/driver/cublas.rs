//! cuBLAS (the `cublas` feature) through cudarc on any memory cudarc's wrappers take (this
//! crate's included), with no `unsafe` in the caller: cudarc's `Gemm::gemm` is `unsafe`
//! because nothing checks that the matrices fit their buffers; [`gemm`] checks that first.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublas::result::{gemm_ex, gemm_strided_batched_ex, CublasError};
use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cublasStatus_t, cudaDataType,
};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, StridedBatchedConfig};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};

use crate::driver::stream::Stream;
use crate::error::{Error, GemmError, Result};
use crate::types::repr::DeviceRepr;
use crate::types::{Complex32, Complex64};

/// A cuBLAS handle whose calls run on `stream` (cudarc's [`CudaBlas`] on
/// [`Stream::to_cudarc`]), so that its uses of this crate's memory are recorded on `stream`
/// with no host wait. libcublas is loaded at run time; its absence is
/// [`Error::Unsupported`], not cudarc's panic.
pub fn cublas_on(stream: &Stream) -> Result<CudaBlas> {
    cublas_present()?;
    CudaBlas::new(stream.to_cudarc()?).map_err(cublas_error("cublasCreate"))
}

/// [`Error::Unsupported`] unless libcublas can be loaded: cudarc panics at its first call
/// otherwise.
pub(crate) fn cublas_present() -> Result<()> {
    // SAFETY: loading libcublas by the names cudarc would load it by runs only its
    // initialisers, as cudarc's own first call does.
    if !unsafe { cudarc::cublas::sys::is_culib_present() } {
        return Err(Error::Unsupported {
            what: "cuBLAS",
            needs: "libcublas loadable by the dynamic loader (a CUDA toolkit's lib64, or the pip package \
                    nvidia-cublas, on LD_LIBRARY_PATH)"
                .to_owned(),
        });
    }
    Ok(())
}

/// cudarc's error of cuBLAS's `call` as [`Error::Cublas`].
pub(crate) fn cublas_error(call: &'static str) -> impl FnOnce(CublasError) -> Error {
    move |e| Error::Cublas {
        call,
        code: e.0 as i32,
    }
}

/// `status`, returned by cuBLAS's `call`, as a result: [`Error::Cublas`] unless it is success.
pub(crate) fn cublas_status(call: &'static str, status: cublasStatus_t) -> Result<()> {
    if status == cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Ok(());
    }
    Err(Error::Cublas {
        call,
        code: status as i32,
    })
}

/// Sets whether `blas`'s `f32` matrix products may use TF32 tensor cores
/// (`cublasSetMathMode`: `CUBLAS_TF32_TENSOR_OP_MATH` when `tf32`, else
/// `CUBLAS_DEFAULT_MATH`, exact FP32 products, cuBLAS's default). TF32 rounds the inputs to
/// 10-bit mantissas: faster on Ampere and later, about 1e-3 relative error per product; llm.c's
/// `train_gpt2_fp32.cu` turns it on for compute capability 8.0 and above.
pub fn set_tf32(blas: &CudaBlas, tf32: bool) -> Result<()> {
    use cudarc::cublas::sys::cublasMath_t;
    let mode = if tf32 {
        cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH
    } else {
        cublasMath_t::CUBLAS_DEFAULT_MATH
    };
    // SAFETY: `blas` holds a live handle (cudarc's `CudaBlas` destroys it only on drop), and a
    // math mode is a plain setting of that handle: no memory is touched.
    let status = unsafe { cudarc::cublas::sys::cublasSetMathMode(*blas.handle(), mode) };
    cublas_status("cublasSetMathMode", status)
}

/// Elements a column-major `rows` x `cols` matrix with leading dimension `ld` spans, after
/// checking `ld >= max(1, rows)`; `what` names it in errors.
fn span(what: &'static str, rows: i32, cols: i32, ld: i32) -> Result<usize> {
    if rows < 0 || cols < 0 {
        return Err(GemmError::NegativeDimension {
            matrix: what,
            rows,
            cols,
        }
        .into());
    }
    if ld < rows.max(1) {
        return Err(GemmError::LeadingDimension {
            matrix: what,
            rows,
            ld,
        }
        .into());
    }
    if rows == 0 || cols == 0 {
        return Ok(0);
    }
    Ok(ld as usize * (cols as usize - 1) + rows as usize)
}

/// The rows and columns of a matrix stored for `op(X)` of `rows` x `cols`.
fn stored(op: cublasOperation_t, rows: i32, cols: i32) -> (i32, i32) {
    match op {
        cublasOperation_t::CUBLAS_OP_N => (rows, cols),
        _ => (cols, rows),
    }
}

/// Checks that the matrices of `cfg` fit buffers of `a`, `b` and `c` elements.
pub(crate) fn check_gemm<T>(cfg: &GemmConfig<T>, a: usize, b: usize, c: usize) -> Result<()> {
    let (ar, ac) = stored(cfg.transa, cfg.m, cfg.k);
    let (br, bc) = stored(cfg.transb, cfg.k, cfg.n);
    fits([
        ("A", span("A", ar, ac, cfg.lda)?, a),
        ("B", span("B", br, bc, cfg.ldb)?, b),
        ("C", span("C", cfg.m, cfg.n, cfg.ldc)?, c),
    ])
}

/// [`GemmError::BufferTooSmall`] for the first of the matrices `(name, elements needed, buffer
/// length)` whose buffer is too small.
fn fits(need: [(&'static str, usize, usize); 3]) -> Result<()> {
    for (matrix, needed, len) in need {
        if needed > len {
            return Err(GemmError::BufferTooSmall { matrix, needed, len }.into());
        }
    }
    Ok(())
}

/// `C = alpha op(A) op(B) + beta C` through cuBLAS (`cublas<t>gemm`, column-major, as
/// cudarc's `Gemm::gemm` takes `cfg`), after checking that each matrix fits its buffer, so no
/// `unsafe` is needed: a `cfg` that does not fit is an [`Error::Gemm`] before cuBLAS is called.
///
/// `a`, `b` and `c` are anything cudarc's wrappers take: this crate's buffers, views, pooled
/// buffers and arrays (their uses recorded on `blas`'s stream, see the guide's
/// [cudarc and its libraries](crate::guide::other_libraries#cudarc-and-its-libraries)), or
/// cudarc's slices. `c` is written, so it is taken by `&mut`.
pub fn gemm<T, A, B, C>(blas: &CudaBlas, cfg: GemmConfig<T>, a: &A, b: &B, c: &mut C) -> Result<()>
where
    CudaBlas: Gemm<T>,
    A: DevicePtr<T>,
    B: DevicePtr<T>,
    C: DevicePtrMut<T>,
{
    Product::Single(cfg).real(blas, a, b, c)
}

/// Checks that the `cfg.batch_size` matrices of `cfg`, each `stride_*` elements after the one
/// before, fit buffers of `a`, `b` and `c` elements, and that the results do not overlap.
pub(crate) fn check_gemm_strided_batched<T>(
    cfg: &StridedBatchedConfig<T>,
    a: usize,
    b: usize,
    c: usize,
) -> Result<()> {
    let g = &cfg.gemm;
    let batches = [
        ("batch", cfg.batch_size as i64),
        ("the stride of A", cfg.stride_a),
        ("the stride of B", cfg.stride_b),
        ("the stride of C", cfg.stride_c),
    ];
    for (what, value) in batches {
        if value < 0 {
            return Err(GemmError::NegativeBatch { what, value }.into());
        }
    }
    let (ar, ac) = stored(g.transa, g.m, g.k);
    let (br, bc) = stored(g.transb, g.k, g.n);
    let c_span = span("C", g.m, g.n, g.ldc)?;
    if cfg.batch_size > 1 && (cfg.stride_c as u64) < c_span as u64 {
        return Err(GemmError::OverlappingResults {
            stride: cfg.stride_c,
            span: c_span,
        }
        .into());
    }
    let more = cfg.batch_size.max(1) as usize - 1;
    // The last matrix of `batch_size` starts `more` strides after the first.
    let batch_span = |one: usize, stride: i64| {
        if one == 0 || cfg.batch_size == 0 {
            0
        } else {
            one.saturating_add((stride as usize).saturating_mul(more))
        }
    };
    fits([
        ("A", batch_span(span("A", ar, ac, g.lda)?, cfg.stride_a), a),
        ("B", batch_span(span("B", br, bc, g.ldb)?, cfg.stride_b), b),
        ("C", batch_span(c_span, cfg.stride_c), c),
    ])
}

/// `C_i = alpha op(A_i) op(B_i) + beta C_i` for `i < cfg.batch_size` through cuBLAS
/// (`cublas<t>gemmStridedBatched`, or `cublasGemmStridedBatchedEx` with `f32` compute for
/// `f16` and `bf16`), the matrices of each operand `stride_*` elements apart (0: the same one for
/// every `i`), after checking that every matrix fits its buffer and that no two `C_i` overlap, so
/// no `unsafe` is needed. `a`, `b` and `c` are taken as by [`gemm`].
pub fn gemm_strided_batched<T, A, B, C>(
    blas: &CudaBlas,
    cfg: StridedBatchedConfig<T>,
    a: &A,
    b: &B,
    c: &mut C,
) -> Result<()>
where
    CudaBlas: Gemm<T>,
    A: DevicePtr<T>,
    B: DevicePtr<T>,
    C: DevicePtrMut<T>,
{
    Product::StridedBatched(cfg).real(blas, a, b, c)
}

/// A complex element [`gemm_complex`] multiplies, with its cuBLAS data and compute types:
/// [`Complex32`] (`CUDA_C_32F`, computed in `f32`) and [`Complex64`] (`CUDA_C_64F`, in `f64`).
/// cudarc's [`Gemm`] has no complex types, and its trait and `CudaBlas` are both cudarc's, so
/// this is a function.
pub trait ComplexGemmElement: DeviceRepr + Copy + sealed::Sealed {
    /// `cudaDataType` of the matrices.
    const DATA: cudaDataType;
    /// The compute type.
    const COMPUTE: cublasComputeType_t;
}

mod sealed {
    /// Implemented for the two complex types only.
    pub trait Sealed {}
}

impl sealed::Sealed for Complex32 {}
impl ComplexGemmElement for Complex32 {
    const DATA: cudaDataType = cudaDataType::CUDA_C_32F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32F;
}
impl sealed::Sealed for Complex64 {}
impl ComplexGemmElement for Complex64 {
    const DATA: cudaDataType = cudaDataType::CUDA_C_64F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_64F;
}

/// `alpha` or `beta` as cuBLAS reads it from the host (`CUBLAS_POINTER_MODE_HOST`, cudarc's
/// default): at 16-byte alignment, the alignment of CUDA's `cuDoubleComplex` (`double2`,
/// `__align__(16)`), which cuBLAS's host code may load with aligned 16-byte instructions.
/// `num_complex::Complex64` is aligned to 8 only: passing a pointer to one where it happened to
/// lie 8 bytes off a 16-byte boundary crashed the process with SIGSEGV inside
/// `cublasGemmStridedBatchedEx` (issue 41: `[5, 3, 2] @ [2]` of `Complex64`, which cuBLAS
/// runs as a batched matrix-vector product). Aligned to 16 for every type, which is at least
/// each one's C alignment.
#[repr(C, align(16))]
pub(crate) struct HostScalar<T>(pub(crate) T);

impl<T> HostScalar<T> {
    /// The pointer cuBLAS takes: the value, 16-byte aligned.
    pub(crate) fn ptr(&self) -> *const std::ffi::c_void {
        (&self.0) as *const T as *const std::ffi::c_void
    }
}

// cuBLAS's complex scalars: `cuDoubleComplex` is `__align__(16)`, `cuFloatComplex` 8.
const _: () = assert!(std::mem::align_of::<HostScalar<Complex64>>() >= 16);
const _: () = assert!(std::mem::align_of::<HostScalar<Complex32>>() >= 8);

/// [`gemm`] of complex matrices (`cublasGemmEx`), on `stream`, the stream `blas` queues on
/// (set with `set_stream`): the matrices' uses are recorded on it as `gemm` records them.
/// `transa`/`transb` transpose without conjugating (`CUBLAS_OP_C` conjugates).
pub fn gemm_complex<T, A, B, C>(
    blas: &CudaBlas,
    stream: &Arc<CudaStream>,
    cfg: GemmConfig<T>,
    a: &A,
    b: &B,
    c: &mut C,
) -> Result<()>
where
    T: ComplexGemmElement,
    A: DevicePtr<T>,
    B: DevicePtr<T>,
    C: DevicePtrMut<T>,
{
    Product::Single(cfg).complex(blas, stream, a, b, c)
}

/// [`gemm_strided_batched`] of complex matrices (`cublasGemmStridedBatchedEx`); as
/// [`gemm_complex`] otherwise.
pub fn gemm_strided_batched_complex<T, A, B, C>(
    blas: &CudaBlas,
    stream: &Arc<CudaStream>,
    cfg: StridedBatchedConfig<T>,
    a: &A,
    b: &B,
    c: &mut C,
) -> Result<()>
where
    T: ComplexGemmElement,
    A: DevicePtr<T>,
    B: DevicePtr<T>,
    C: DevicePtrMut<T>,
{
    Product::StridedBatched(cfg).complex(blas, stream, a, b, c)
}

/// A product as cudarc configures it: one matrix each, or strided batches. The four public
/// products hand theirs to [`Product::real`] or [`Product::complex`], so that the rule each of
/// them keeps (every matrix checked against its buffer before cuBLAS is called, which is what
/// makes the call sound; its error named after the call) is written once for real and once for
/// complex elements, whichever the form.
enum Product<T> {
    Single(GemmConfig<T>),
    StridedBatched(StridedBatchedConfig<T>),
}

impl<T> Product<T> {
    /// The configuration of the product (of each one, for a batch).
    fn gemm(&self) -> &GemmConfig<T> {
        match self {
            Product::Single(cfg) => cfg,
            Product::StridedBatched(cfg) => &cfg.gemm,
        }
    }

    /// Checks that every matrix fits buffers of `a`, `b` and `c` elements (and, for a batch,
    /// that the results do not overlap).
    fn check(&self, a: usize, b: usize, c: usize) -> Result<()> {
        match self {
            Product::Single(cfg) => check_gemm(cfg, a, b, c),
            Product::StridedBatched(cfg) => check_gemm_strided_batched(cfg, a, b, c),
        }
    }

    /// The product of real matrices through cudarc's `Gemm` (`cublas<t>gemm` or
    /// `cublas<t>gemmStridedBatched`), which queues on `blas`'s stream.
    fn real<A, B, C>(self, blas: &CudaBlas, a: &A, b: &B, c: &mut C) -> Result<()>
    where
        CudaBlas: Gemm<T>,
        A: DevicePtr<T>,
        B: DevicePtr<T>,
        C: DevicePtrMut<T>,
    {
        self.check(a.len(), b.len(), c.len())?;
        // SAFETY: every matrix (of every batch) lies inside its buffer, and a batch's results
        // do not overlap one another (checked above: dimensions not negative, leading
        // dimensions at least the rows, spans within the lengths); `c` is borrowed exclusively,
        // so it overlaps neither `a` nor `b`; each pointer is ordered on cuBLAS's stream by its
        // `device_ptr(_mut)`.
        let (call, result) = unsafe {
            match self {
                Product::Single(cfg) => ("cublasGemm", blas.gemm(cfg, a, b, c)),
                Product::StridedBatched(cfg) => (
                    "cublasGemmStridedBatched",
                    blas.gemm_strided_batched(cfg, a, b, c),
                ),
            }
        };
        result.map_err(cublas_error(call))
    }

    /// The product of complex matrices through `cublasGemmEx` or `cublasGemmStridedBatchedEx`
    /// (cudarc's `Gemm` has no complex types), on the stream `on`, the one `blas` queues on.
    fn complex<A, B, C>(self, blas: &CudaBlas, on: &Arc<CudaStream>, a: &A, b: &B, c: &mut C) -> Result<()>
    where
        T: ComplexGemmElement,
        A: DevicePtr<T>,
        B: DevicePtr<T>,
        C: DevicePtrMut<T>,
    {
        self.check(a.len(), b.len(), c.len())?;
        let g = self.gemm();
        // cuBLAS reads `alpha` and `beta` during the call, so they live until it returns; the
        // records of the matrices' uses on `on` are kept until the product has been queued.
        let (alpha, beta) = (HostScalar(g.alpha), HostScalar(g.beta));
        let (pa, _record_a) = a.device_ptr(on);
        let (pb, _record_b) = b.device_ptr(on);
        let (pc, _record_c) = c.device_ptr_mut(on);
        let (pa, pb, pc) = (pa as *const c_void, pb as *const c_void, pc as *mut c_void);
        let (handle, algo) = (*blas.handle(), cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT);
        // One row of arguments a matrix (pointer, type, leading dimension and, batched,
        // stride), as cuBLAS lists them: the two calls differ in the strides and the batch
        // count only.
        #[rustfmt::skip]
        // SAFETY: every matrix (of every batch) lies inside its buffer, and a batch's results
        // do not overlap one another (checked above); `c` is borrowed exclusively, so it
        // overlaps neither `a` nor `b`; each pointer's use is recorded on `on`, which `blas`
        // queues on, and the records live until the call has been queued; `alpha` and
        // `beta` are host values of the matrices' type at the alignment of CUDA's complex types
        // (`HostScalar`), as CUBLAS_POINTER_MODE_HOST (cudarc's default) reads them, and live
        // until the call returns.
        let (call, result) = unsafe {
            match &self {
                Product::Single(_) => ("cublasGemmEx", gemm_ex(
                    handle, g.transa, g.transb, g.m, g.n, g.k, alpha.ptr(),
                    pa, T::DATA, g.lda,
                    pb, T::DATA, g.ldb,
                    beta.ptr(),
                    pc, T::DATA, g.ldc,
                    T::COMPUTE, algo,
                )),
                Product::StridedBatched(batch) => ("cublasGemmStridedBatchedEx", gemm_strided_batched_ex(
                    handle, g.transa, g.transb, g.m, g.n, g.k, alpha.ptr(),
                    pa, T::DATA, g.lda, batch.stride_a,
                    pb, T::DATA, g.ldb, batch.stride_b,
                    beta.ptr(),
                    pc, T::DATA, g.ldc, batch.stride_c,
                    batch.batch_size, T::COMPUTE, algo,
                )),
            }
        };
        result.map_err(cublas_error(call))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};

    fn cfg(
        transa: cublasOperation_t,
        m: i32,
        n: i32,
        k: i32,
        lda: i32,
        ldb: i32,
        ldc: i32,
    ) -> GemmConfig<f32> {
        GemmConfig {
            transa,
            transb: CUBLAS_OP_N,
            m,
            n,
            k,
            alpha: 1.0,
            lda,
            ldb,
            beta: 0.0,
            ldc,
        }
    }

    /// The matrix, the elements it needs and its buffer's length, where `checked` is a
    /// [`GemmError::BufferTooSmall`]; `None` for any other outcome.
    fn too_small(checked: Result<()>) -> Option<(&'static str, usize, usize)> {
        match checked {
            Err(Error::Gemm(GemmError::BufferTooSmall { matrix, needed, len })) => {
                Some((matrix, needed, len))
            }
            _ => None,
        }
    }

    #[test]
    fn gemm_checks_each_matrix_against_its_buffer() {
        // 4x3 times 3x2 into 4x2.
        let packed = cfg(CUBLAS_OP_N, 4, 2, 3, 4, 3, 4);
        assert!(check_gemm(&packed, 12, 6, 8).is_ok());
        assert_eq!(too_small(check_gemm(&packed, 11, 6, 8)), Some(("A", 12, 11)));
        assert_eq!(too_small(check_gemm(&packed, 12, 6, 7)), Some(("C", 8, 7)));
        // A transposed is stored 3x4: lda >= 3, 12 elements.
        assert!(check_gemm(&cfg(CUBLAS_OP_T, 4, 2, 3, 3, 3, 4), 12, 6, 8).is_ok());
        assert!(matches!(
            check_gemm(&cfg(CUBLAS_OP_N, 4, 2, 3, 3, 3, 4), 100, 100, 100),
            Err(Error::Gemm(GemmError::LeadingDimension {
                matrix: "A",
                rows: 4,
                ld: 3
            }))
        ));
        // A padded leading dimension: the last column need not be padded.
        assert!(check_gemm(&cfg(CUBLAS_OP_N, 4, 2, 3, 6, 3, 4), 16, 6, 8).is_ok());
        assert!(check_gemm(&cfg(CUBLAS_OP_N, 4, 2, 3, 6, 3, 4), 15, 6, 8).is_err());
        assert!(matches!(
            check_gemm(&cfg(CUBLAS_OP_N, -1, 2, 3, 4, 3, 4), 100, 100, 100),
            Err(Error::Gemm(GemmError::NegativeDimension {
                matrix: "A",
                rows: -1,
                cols: 3
            }))
        ));
        // Empty products touch nothing.
        assert!(check_gemm(&cfg(CUBLAS_OP_N, 0, 2, 3, 1, 3, 1), 0, 6, 0).is_ok());
    }

    fn batched(batch: i32, stride_a: i64, stride_b: i64, stride_c: i64) -> StridedBatchedConfig<f32> {
        // A 4x3, B 3x2, C 4x2, packed.
        StridedBatchedConfig {
            gemm: cfg(CUBLAS_OP_N, 4, 2, 3, 4, 3, 4),
            batch_size: batch,
            stride_a,
            stride_b,
            stride_c,
        }
    }

    #[test]
    fn batched_gemm_checks_every_matrix_and_the_results_apart() {
        assert!(check_gemm_strided_batched(&batched(5, 12, 6, 8), 60, 30, 40).is_ok());
        assert_eq!(
            too_small(check_gemm_strided_batched(&batched(5, 12, 6, 8), 59, 30, 40)),
            Some(("A", 60, 59))
        );
        // B broadcast over the batch (stride 0) needs one B.
        assert!(check_gemm_strided_batched(&batched(5, 12, 0, 8), 60, 6, 40).is_ok());
        assert!(matches!(
            check_gemm_strided_batched(&batched(5, 12, 6, 7), 60, 30, 100),
            Err(Error::Gemm(GemmError::OverlappingResults { stride: 7, span: 8 }))
        ));
        assert!(matches!(
            check_gemm_strided_batched(&batched(2, -12, 6, 8), 60, 30, 40),
            Err(Error::Gemm(GemmError::NegativeBatch {
                what: "the stride of A",
                value: -12
            }))
        ));
        // A batch of none touches nothing; one C may be written over itself.
        assert!(check_gemm_strided_batched(&batched(0, 12, 6, 8), 0, 0, 0).is_ok());
        assert!(check_gemm_strided_batched(&batched(1, 12, 6, 0), 12, 6, 8).is_ok());
    }

    /// Issue 41: cuBLAS read a `Complex64` `alpha` lying 8 bytes off a 16-byte boundary with
    /// an aligned load and the process died of SIGSEGV. `num_complex`'s `Complex64` is aligned
    /// to 8 only, so where one lies is luck; a `HostScalar` lies on 16 wherever it is put.
    #[test]
    fn complex_scalars_are_passed_at_the_alignment_of_cuda_complex_types() {
        assert_eq!(std::mem::align_of::<Complex64>(), 8);
        #[repr(C)]
        struct Bare {
            pad: u64,
            z: Complex64,
        }
        #[repr(C)]
        struct Held {
            pad: u64,
            z: HostScalar<Complex64>,
        }
        // A bare one follows an 8-byte field directly; a held one is moved to 16.
        assert_eq!(std::mem::offset_of!(Bare, z), 8);
        assert_eq!(std::mem::offset_of!(Held, z), 16);
        let held: Vec<Held> = (0..5)
            .map(|i| Held {
                pad: i,
                z: HostScalar(Complex64::new(i as f64, 0.0)),
            })
            .collect();
        for h in &held {
            assert_eq!(h.z.ptr() as usize % 16, 0);
            assert_eq!(h.pad as f64, h.z.0.re);
        }
        let one = HostScalar(Complex32::new(1.0, 0.0));
        assert_eq!(one.ptr() as usize % 8, 0);
        // SAFETY: `ptr` points at the `Complex32` `one` holds, which lives through the read.
        let read = unsafe { *(one.ptr() as *const Complex32) };
        assert_eq!(read, Complex32::new(1.0, 0.0));
    }
}
