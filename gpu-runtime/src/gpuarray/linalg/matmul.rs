//! `matmul` and `dot` of device arrays through cuBLAS (the `cublas` feature; libcublas is
//! loaded at run time, and its absence is an [`Error::Unsupported`](crate::Error::Unsupported)
//! saying so).
//!
//! - [`matmul`]: NumPy's `a @ b` of 1-D to 3-D arrays: `(m, k) @ (k, n)`,
//!   batched `(b, m, k) @ (b, k, n)`, a 2-D operand (or a batch of one) broadcast over the
//!   other's batch, a 1-D `a` as a row and a 1-D `b` as a column (that axis dropped from the
//!   result). The result is a new C-order array.
//! - [`matmul_into`]: into an existing C-contiguous array of the product's shape.
//! - [`dot`]: NumPy's `dot` for 1-D and 2-D arrays (two vectors give a 0-d array).
//!
//! Each on the legacy default stream, or on a stream of yours as
//! `gpuarray::on(&stream).matmul(&a, &b)` ([`OnStream`]).
//!
//! Shapes that do not multiply, 0-d arrays and arrays of more than 3 axes (NumPy broadcasts
//! their batch axes; not offered here) are a [`GemmError::ShapesDoNotMultiply`].
//!
//! Elements: `f32`, `f64` (`cublasSgemm`, `cublasDgemm`), `half::f16` and `half::bf16`
//! (`cublasGemmEx` with `f32` compute and `f32` `alpha`/`beta`), `Complex32` and `Complex64`
//! (`cublasGemmEx` with `CUDA_C_32F`/`CUDA_C_64F`; a transposed view is a transpose, not a
//! conjugate, as in NumPy): [`MatmulElement`]. Batches
//! go through the strided-batched forms of the same calls.
//!
//! **Layouts.** Transposed views (`.t()`), Fortran-order arrays, row and column slices are
//! handed to cuBLAS as they lie (as `CUBLAS_OP_T` or with a leading dimension); an operand is
//! copied to C order first only when it is stepped on both axes, reversed or broadcast
//! (the table is in `matmul_plan.rs`'s docs). An empty `k` gives zeros.
//!
//! **Ordering.** The call is queued on the stream given (the legacy default stream for the
//! plain forms), and the arrays' stream records get a read of `a` and `b` and a write
//! of `c` on it exactly as a kernel launch of this crate records them (cudarc's
//! `device_ptr`, see [`driver::cudarc_interop`](crate::driver::cudarc_interop)): no host wait.
//!
//! **Handles.** One cuBLAS handle per context and thread, created on the thread's first
//! `matmul` in that context and kept for the thread's life; each call sets its stream
//! (`cublasSetStream`) before queuing. Per thread because a cuBLAS handle's stream is state
//! that two threads must not change under each other.

use std::cell::RefCell;
use std::sync::Arc;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, StridedBatchedConfig};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::cudarc_interop::{
    cublas_on, gemm, gemm_complex, gemm_strided_batched, gemm_strided_batched_complex,
};
use crate::driver::stream::Stream;
use crate::error::{Error, GemmError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage, StorageMut};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::linalg::matmul_plan::{gemm_call, product, Matrices, Op, OperandLayout, Product};
use crate::types::{Complex32, Complex64};

/// An [`Element`] cuBLAS multiplies: `f32`, `f64`, `half::f16`, `half::bf16`, `Complex32`,
/// `Complex64`.
pub trait MatmulElement: Element {
    /// One, the `alpha` of `C = alpha A B + beta C`.
    fn one() -> Self;
    /// [`gemm`](crate::driver::cudarc_interop::gemm) of this type, on `stream` (the stream
    /// `blas` queues on).
    fn gemm<A: DevicePtr<Self>, B: DevicePtr<Self>, C: DevicePtrMut<Self>>(
        blas: &CudaBlas,
        stream: &Arc<CudaStream>,
        cfg: GemmConfig<Self>,
        a: &A,
        b: &B,
        c: &mut C,
    ) -> Result<()>;
    /// [`gemm_strided_batched`](crate::driver::cudarc_interop::gemm_strided_batched) of this
    /// type, on `stream`.
    fn gemm_strided_batched<A: DevicePtr<Self>, B: DevicePtr<Self>, C: DevicePtrMut<Self>>(
        blas: &CudaBlas,
        stream: &Arc<CudaStream>,
        cfg: StridedBatchedConfig<Self>,
        a: &A,
        b: &B,
        c: &mut C,
    ) -> Result<()>;
}

macro_rules! matmul_element {
    ($t:ty, $one:expr, $gemm:path, $batched:path) => {
        impl MatmulElement for $t {
            fn one() -> Self {
                $one
            }
            fn gemm<A: DevicePtr<Self>, B: DevicePtr<Self>, C: DevicePtrMut<Self>>(
                blas: &CudaBlas,
                stream: &Arc<CudaStream>,
                cfg: GemmConfig<Self>,
                a: &A,
                b: &B,
                c: &mut C,
            ) -> Result<()> {
                $gemm(blas, stream, cfg, a, b, c)
            }
            fn gemm_strided_batched<A: DevicePtr<Self>, B: DevicePtr<Self>, C: DevicePtrMut<Self>>(
                blas: &CudaBlas,
                stream: &Arc<CudaStream>,
                cfg: StridedBatchedConfig<Self>,
                a: &A,
                b: &B,
                c: &mut C,
            ) -> Result<()> {
                $batched(blas, stream, cfg, a, b, c)
            }
        }
    };
}

// The real types through cudarc's `Gemm`, which queues on the handle's stream itself.
matmul_element!(f32, 1.0, real_gemm, real_gemm_batched);
matmul_element!(f64, 1.0, real_gemm, real_gemm_batched);
matmul_element!(half::f16, half::f16::ONE, real_gemm, real_gemm_batched);
matmul_element!(half::bf16, half::bf16::ONE, real_gemm, real_gemm_batched);
// Complex through `cublasGemmEx` (cudarc's `Gemm` has no complex types): transposed views
// are transposes, not conjugates, as NumPy's `matmul`.
matmul_element!(
    Complex32,
    Complex32::new(1.0, 0.0),
    gemm_complex,
    gemm_strided_batched_complex
);
matmul_element!(
    Complex64,
    Complex64::new(1.0, 0.0),
    gemm_complex,
    gemm_strided_batched_complex
);

/// [`gemm`] in the form `matmul_element!` calls (cudarc's `Gemm` knows the handle's stream).
fn real_gemm<T, A: DevicePtr<T>, B: DevicePtr<T>, C: DevicePtrMut<T>>(
    blas: &CudaBlas,
    _stream: &Arc<CudaStream>,
    cfg: GemmConfig<T>,
    a: &A,
    b: &B,
    c: &mut C,
) -> Result<()>
where
    CudaBlas: Gemm<T>,
{
    gemm(blas, cfg, a, b, c)
}

/// [`gemm_strided_batched`] in the form `matmul_element!` calls.
fn real_gemm_batched<T, A: DevicePtr<T>, B: DevicePtr<T>, C: DevicePtrMut<T>>(
    blas: &CudaBlas,
    _stream: &Arc<CudaStream>,
    cfg: StridedBatchedConfig<T>,
    a: &A,
    b: &B,
    c: &mut C,
) -> Result<()>
where
    CudaBlas: Gemm<T>,
{
    gemm_strided_batched(blas, cfg, a, b, c)
}

/// `a @ b` (NumPy's `matmul`) in a new C-order array, on the legacy default stream.
pub fn matmul<T, S1, D1, S2, D2>(
    a: &DeviceArrayBase<S1, D1>,
    b: &DeviceArrayBase<S2, D2>,
) -> Result<DeviceArray<T, IxDyn>>
where
    T: MatmulElement,
    S1: Storage<Elem = T>,
    S2: Storage<Elem = T>,
    D1: Dimension,
    D2: Dimension,
{
    matmul_stream(None, a, b)
}

/// `a @ b` written into `c`, which must be C-contiguous and of the product's shape
/// ([`GemmError::OutputShape`], [`GemmError::OutputLayout`] otherwise), on the legacy default
/// stream.
pub fn matmul_into<T, S1, D1, S2, D2, S3, D3>(
    a: &DeviceArrayBase<S1, D1>,
    b: &DeviceArrayBase<S2, D2>,
    c: &mut DeviceArrayBase<S3, D3>,
) -> Result<()>
where
    T: MatmulElement,
    S1: Storage<Elem = T>,
    S2: Storage<Elem = T>,
    S3: StorageMut<Elem = T>,
    D1: Dimension,
    D2: Dimension,
    D3: Dimension,
{
    matmul_into_stream(None, a, b, c)
}

/// NumPy's `dot` of 1-D and 2-D arrays (the same as [`matmul`] for them; two vectors give a
/// 0-d array); an operand of more axes is [`GemmError::ShapesDoNotMultiply`].
pub fn dot<T, S1, D1, S2, D2>(
    a: &DeviceArrayBase<S1, D1>,
    b: &DeviceArrayBase<S2, D2>,
) -> Result<DeviceArray<T, IxDyn>>
where
    T: MatmulElement,
    S1: Storage<Elem = T>,
    S2: Storage<Elem = T>,
    D1: Dimension,
    D2: Dimension,
{
    dot_stream(None, a, b)
}

/// The products on a stream: `gpuarray::on(&stream).matmul(&a, &b)`.
impl OnStream<'_, &Context> {
    /// [`matmul`] on this stream; returns without waiting.
    pub fn matmul<T, S1, D1, S2, D2>(
        &self,
        a: &DeviceArrayBase<S1, D1>,
        b: &DeviceArrayBase<S2, D2>,
    ) -> Result<DeviceArray<T, IxDyn>>
    where
        T: MatmulElement,
        S1: Storage<Elem = T>,
        S2: Storage<Elem = T>,
        D1: Dimension,
        D2: Dimension,
    {
        matmul_stream(self.stream, a, b)
    }

    /// [`matmul_into`] on this stream; returns without waiting.
    pub fn matmul_into<T, S1, D1, S2, D2, S3, D3>(
        &self,
        a: &DeviceArrayBase<S1, D1>,
        b: &DeviceArrayBase<S2, D2>,
        c: &mut DeviceArrayBase<S3, D3>,
    ) -> Result<()>
    where
        T: MatmulElement,
        S1: Storage<Elem = T>,
        S2: Storage<Elem = T>,
        S3: StorageMut<Elem = T>,
        D1: Dimension,
        D2: Dimension,
        D3: Dimension,
    {
        matmul_into_stream(self.stream, a, b, c)
    }

    /// [`dot`] on this stream; returns without waiting.
    pub fn dot<T, S1, D1, S2, D2>(
        &self,
        a: &DeviceArrayBase<S1, D1>,
        b: &DeviceArrayBase<S2, D2>,
    ) -> Result<DeviceArray<T, IxDyn>>
    where
        T: MatmulElement,
        S1: Storage<Elem = T>,
        S2: Storage<Elem = T>,
        D1: Dimension,
        D2: Dimension,
    {
        dot_stream(self.stream, a, b)
    }
}

fn matmul_into_stream<T, S1, D1, S2, D2, S3, D3>(
    stream: Option<&Stream>,
    a: &DeviceArrayBase<S1, D1>,
    b: &DeviceArrayBase<S2, D2>,
    c: &mut DeviceArrayBase<S3, D3>,
) -> Result<()>
where
    T: MatmulElement,
    S1: Storage<Elem = T>,
    S2: Storage<Elem = T>,
    S3: StorageMut<Elem = T>,
    D1: Dimension,
    D2: Dimension,
    D3: Dimension,
{
    let p = plan(a.shape(), b.shape())?;
    into_stream(stream, a, b, c, &p)
}

fn dot_stream<T, S1, D1, S2, D2>(
    stream: Option<&Stream>,
    a: &DeviceArrayBase<S1, D1>,
    b: &DeviceArrayBase<S2, D2>,
) -> Result<DeviceArray<T, IxDyn>>
where
    T: MatmulElement,
    S1: Storage<Elem = T>,
    S2: Storage<Elem = T>,
    D1: Dimension,
    D2: Dimension,
{
    // NumPy's `dot` of N-D arrays sums over other axes than `matmul`'s: not offered.
    if a.ndim() > 2 || b.ndim() > 2 {
        return Err(shapes_error(a.shape(), b.shape()));
    }
    matmul_stream(stream, a, b)
}

fn shapes_error(a: &[usize], b: &[usize]) -> Error {
    GemmError::ShapesDoNotMultiply {
        a: a.to_vec(),
        b: b.to_vec(),
    }
    .into()
}

fn plan(a: &[usize], b: &[usize]) -> Result<Product> {
    product(a, b).ok_or_else(|| shapes_error(a, b))
}

fn matmul_stream<T, S1, D1, S2, D2>(
    stream: Option<&Stream>,
    a: &DeviceArrayBase<S1, D1>,
    b: &DeviceArrayBase<S2, D2>,
) -> Result<DeviceArray<T, IxDyn>>
where
    T: MatmulElement,
    S1: Storage<Elem = T>,
    S2: Storage<Elem = T>,
    D1: Dimension,
    D2: Dimension,
{
    let p = plan(a.shape(), b.shape())?;
    let mut c = DeviceArray::<T, IxDyn>::empty(a.context(), IxDyn(&p.shape))?;
    into_stream(stream, a, b, &mut c, &p)?;
    Ok(c)
}

/// `value` as a 32-bit cuBLAS argument.
fn int(what: &'static str, value: usize) -> Result<i32> {
    i32::try_from(value).map_err(|_| GemmError::TooLarge { what, value }.into())
}

fn op(op: Op) -> cublasOperation_t {
    match op {
        Op::N => cublasOperation_t::CUBLAS_OP_N,
        Op::T => cublasOperation_t::CUBLAS_OP_T,
    }
}

/// An operand as cuBLAS reads it: the array itself when its layout allows, else a C-order
/// copy (queued on `stream`, so ordered before the product).
enum Operand<'a, T: Element> {
    AsIs(DeviceArrayView<'a, T, IxDyn>, OperandLayout),
    Copied(DeviceArray<T, IxDyn>, OperandLayout),
}

impl<'a, T: Element> Operand<'a, T> {
    fn of<S: Storage<Elem = T>, D: Dimension>(
        x: &'a DeviceArrayBase<S, D>,
        is_left: bool,
        stream: &Stream,
    ) -> Result<Self> {
        let layout = |shape: &[usize], strides: &[isize]| {
            Matrices::of(shape, strides, is_left).and_then(|m| m.layout())
        };
        if let Some(l) = layout(x.shape(), x.strides()) {
            return Ok(Operand::AsIs(x.view().into_dyn(), l));
        }
        let copy = x.on(stream).to_contiguous()?.into_dyn();
        // A C-order copy always has a layout cuBLAS reads; `None` cannot happen, and is
        // reported as the shapes it came from all the same rather than a panic.
        let l = layout(copy.shape(), copy.strides()).ok_or_else(|| shapes_error(x.shape(), x.shape()))?;
        Ok(Operand::Copied(copy, l))
    }

    fn layout(&self) -> OperandLayout {
        match self {
            Operand::AsIs(_, l) | Operand::Copied(_, l) => *l,
        }
    }
}

thread_local! {
    /// This thread's cuBLAS handle of each context, by cudarc's context handle.
    static HANDLES: RefCell<Vec<(usize, CudaBlas)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's cuBLAS handle of `stream`'s context, set to queue on `stream`.
fn with_handle<R>(stream: &Stream, f: impl FnOnce(&CudaBlas, &Arc<CudaStream>) -> Result<R>) -> Result<R> {
    let cudarc_stream = stream.to_cudarc()?;
    let key = cudarc_stream.context().cu_ctx() as usize;
    HANDLES.with(|handles| {
        let mut handles = handles.borrow_mut();
        let at = match handles.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                handles.push((key, cublas_on(stream)?));
                handles.len() - 1
            }
        };
        let blas = &mut handles[at].1;
        // SAFETY: cudarc marks this `unsafe` because work queued on the new stream could race
        // with work on the old one over the same memory. Every use of this crate's memory by
        // the handle is ordered on the stream it queues on by `device_ptr(_mut)` (the memory's
        // stream record), so the stream it queues on next may be any.
        unsafe { blas.set_stream(cudarc_stream.clone()) }.map_err(|e| Error::Cublas {
            call: "cublasSetStream",
            code: e.0 as i32,
        })?;
        f(blas, &cudarc_stream)
    })
}

fn into_stream<T, S1, D1, S2, D2, S3, D3>(
    stream: Option<&Stream>,
    a: &DeviceArrayBase<S1, D1>,
    b: &DeviceArrayBase<S2, D2>,
    c: &mut DeviceArrayBase<S3, D3>,
    p: &Product,
) -> Result<()>
where
    T: MatmulElement,
    S1: Storage<Elem = T>,
    S2: Storage<Elem = T>,
    S3: StorageMut<Elem = T>,
    D1: Dimension,
    D2: Dimension,
    D3: Dimension,
{
    if c.shape() != p.shape.as_slice() {
        return Err(GemmError::OutputShape {
            expected: p.shape.clone(),
            found: c.shape().to_vec(),
        }
        .into());
    }
    if !c.is_standard_layout() {
        return Err(GemmError::OutputLayout {
            strides: c.strides().to_vec(),
        }
        .into());
    }
    let ctx = a.context().clone();
    if b.context() != &ctx {
        return Err(Error::WrongContext { what: "matmul's b" });
    }
    if c.context() != &ctx {
        return Err(Error::WrongContext {
            what: "matmul's output",
        });
    }
    let legacy;
    let stream = match stream {
        Some(s) => s,
        None => {
            legacy = Stream::from_inner(ctx.legacy().clone(), &ctx);
            &legacy
        }
    };
    if p.batch == 0 || p.m == 0 || p.n == 0 {
        return Ok(());
    }
    if p.k == 0 {
        // cuBLAS would leave C as it was: a sum of nothing is zero.
        return c.on_mut(stream).fill(T::zero());
    }
    let (oa, ob) = (Operand::of(a, true, stream)?, Operand::of(b, false, stream)?);
    let call = gemm_call(p, oa.layout(), ob.layout());
    let cfg = GemmConfig {
        transa: op(call.transa),
        transb: op(call.transb),
        m: int("n", call.m)?,
        n: int("m", call.n)?,
        k: int("k", call.k)?,
        alpha: T::one(),
        lda: int("the leading dimension of b", call.lda)?,
        ldb: int("the leading dimension of a", call.ldb)?,
        beta: T::zero(),
        ldc: int("n", call.ldc)?,
    };
    let batch = int("batch", call.batch)?;
    let stride =
        |what, s: usize| i64::try_from(s).map_err(|_| Error::from(GemmError::TooLarge { what, value: s }));
    let (stride_a, stride_b, stride_c) = (
        stride("the batch stride of b", call.stride_a)?,
        stride("the batch stride of a", call.stride_b)?,
        stride("the batch stride of the result", call.stride_c)?,
    );
    // Row-major C = A B is column-major Cᵀ = Bᵀ Aᵀ: cuBLAS's A is our b (`gemm_call`).
    let (va, vb) = (operand_view(&oa), operand_view(&ob));
    with_handle(stream, |blas, cuda_stream| {
        if call.batch == 1 {
            return T::gemm(blas, cuda_stream, cfg, &vb, &va, c);
        }
        let batched = StridedBatchedConfig {
            gemm: cfg,
            batch_size: batch,
            stride_a,
            stride_b,
            stride_c,
        };
        T::gemm_strided_batched(blas, cuda_stream, batched, &vb, &va, c)
    })
}

/// The view cuBLAS reads of an operand.
fn operand_view<'a, T: Element>(o: &'a Operand<'_, T>) -> DeviceArrayView<'a, T, IxDyn> {
    match o {
        Operand::AsIs(v, _) => v.view(),
        Operand::Copied(c, _) => c.view(),
    }
}
