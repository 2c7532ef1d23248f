//! `matmul` and `dot` of device arrays through cuBLAS (the `cublas` feature; libcublas is
//! loaded at run time, and its absence is an [`Error::Unsupported`](crate::Error::Unsupported)
//! saying so).
//!
//! - [`matmul`]: NumPy's `a @ b` of arrays of any number of axes (at least one): `(m, k) @ (k,
//!   n)`, batched `(b, m, k) @ (b, k, n)`, batch axes broadcast by NumPy's rules (`(2, 1, m, k)
//!   @ (5, k, n)` is `(2, 5, m, n)`), a 1-D `a` as a row and a 1-D `b` as a column (that axis
//!   dropped from the result). The result is a new C-order array. Beyond 3 axes and for
//!   broadcast batches see the second half of this file (when an operand is copied first).
//! - [`matmul_into`]: into an existing array of the product's shape, of any layout (a
//!   C-contiguous one is written by cuBLAS directly, any other through a temporary).
//! - [`dot`]: NumPy's `dot`: `matmul` for 1-D and 2-D arrays (two vectors give a 0-d array), a
//!   0-d operand multiplies the other, and N-d operands sum over `a`'s last axis and `b`'s
//!   second to last (`a.shape[:-1] + b.shape[:-2] + b.shape[-1:]`).
//! - [`dot_into`]: `dot` into an existing array of the result's shape, of any layout (NumPy
//!   requires a C-contiguous `out`; this accepts any, as `matmul_into`).
//! - [`matmul_mixed`](crate::gpuarray::matmul_mixed): two element types, in NumPy's promoted
//!   type.
//!
//! Each on the legacy default stream, or on a stream of yours as
//! `gpuarray::on(&stream).matmul(&a, &b)` ([`OnStream`]).
//!
//! Shapes that do not multiply (inner sizes that differ, batch axes that do not broadcast, a
//! 0-d operand of `matmul`) are a [`GemmError::ShapesDoNotMultiply`].
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
use cudarc::cublas::{CudaBlas, GemmConfig, StridedBatchedConfig};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::cublas::{
    cublas_error, cublas_on, gemm, gemm_complex, gemm_strided_batched, gemm_strided_batched_complex,
};
use crate::driver::stream::Stream;
use crate::error::{Error, GemmError, Result};
use crate::gpuarray::array::core::{
    DeviceArray, DeviceArrayBase, DeviceArrayView, DeviceArrayViewMut, Storage, StorageMut,
};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::promotion::Promote;
use crate::gpuarray::linalg::matmul_plan::{gemm_call, product, Matrices, Op, OperandLayout, Product};
use crate::gpuarray::linalg::nd_plan::{broadcast_matrices, dot_shape, merge_axes, nd_product};
use crate::types::{Complex32, Complex64};

/// The operands as the steps below take them: views with a dynamic number of axes, so that
/// each step is written (and compiled) once, not for every storage and dimension type.
type View<'a, T> = DeviceArrayView<'a, T, IxDyn>;
type ViewMut<'a, T> = DeviceArrayViewMut<'a, T, IxDyn>;

/// An [`Element`] cuBLAS multiplies: `f32`, `f64`, `half::f16`, `half::bf16`, `Complex32`,
/// `Complex64`.
pub trait MatmulElement: Element {
    /// One, the `alpha` of `C = alpha A B + beta C`.
    fn one() -> Self;
    /// [`gemm`](crate::driver::cublas::gemm) of this type, on `stream` (the stream
    /// `blas` queues on).
    fn gemm<A: DevicePtr<Self>, B: DevicePtr<Self>, C: DevicePtrMut<Self>>(
        blas: &CudaBlas,
        stream: &Arc<CudaStream>,
        cfg: GemmConfig<Self>,
        a: &A,
        b: &B,
        c: &mut C,
    ) -> Result<()>;
    /// [`gemm_strided_batched`](crate::driver::cublas::gemm_strided_batched) of this
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

/// Implements [`MatmulElement`] for each type `$t` (one: `$one`) of a family of types whose two
/// products are the same calls: `|blas, stream, cfg, a, b, c|` names the methods' arguments, and
/// the two expressions after it are the bodies of `gemm` and of `gemm_strided_batched`.
macro_rules! matmul_element {
    (
        $($t:ty = $one:expr),+;
        |$blas:ident, $stream:ident, $cfg:ident, $a:ident, $b:ident, $c:ident| $gemm:expr, $batched:expr
    ) => {$(
        impl MatmulElement for $t {
            fn one() -> Self {
                $one
            }
            fn gemm<A: DevicePtr<Self>, B: DevicePtr<Self>, C: DevicePtrMut<Self>>(
                $blas: &CudaBlas,
                $stream: &Arc<CudaStream>,
                $cfg: GemmConfig<Self>,
                $a: &A,
                $b: &B,
                $c: &mut C,
            ) -> Result<()> {
                $gemm
            }
            fn gemm_strided_batched<A: DevicePtr<Self>, B: DevicePtr<Self>, C: DevicePtrMut<Self>>(
                $blas: &CudaBlas,
                $stream: &Arc<CudaStream>,
                $cfg: StridedBatchedConfig<Self>,
                $a: &A,
                $b: &B,
                $c: &mut C,
            ) -> Result<()> {
                $batched
            }
        }
    )+};
}

// The real types through cudarc's `Gemm`, which queues on the handle's stream itself.
matmul_element! {
    f32 = 1.0, f64 = 1.0, half::f16 = half::f16::ONE, half::bf16 = half::bf16::ONE;
    |blas, _stream, cfg, a, b, c| gemm(blas, cfg, a, b, c), gemm_strided_batched(blas, cfg, a, b, c)
}
// Complex through `cublasGemmEx` (cudarc's `Gemm` has no complex types): transposed views
// are transposes, not conjugates, as NumPy's `matmul`.
matmul_element! {
    Complex32 = Complex32::new(1.0, 0.0), Complex64 = Complex64::new(1.0, 0.0);
    |blas, stream, cfg, a, b, c| gemm_complex(blas, stream, cfg, a, b, c),
        gemm_strided_batched_complex(blas, stream, cfg, a, b, c)
}

/// Declares each product twice: as a free function on the legacy default stream and as the
/// method of the same name of `OnStream`, on its stream. Both hand views of the operands (any
/// storage, any dimension type) to the one implementation `$imp`, so the generic bounds are
/// written once for the ten public forms (`@new`: a new array, `@into`: into `c`, `@mixed`: a
/// new array, of operands of two element types).
macro_rules! products {
    (
        new { $($(#[$doc:meta])* $name:ident => $imp:ident;)* }
        into { $($(#[$idoc:meta])* $iname:ident => $iimp:ident;)* }
        mixed { $($(#[$mdoc:meta])* $mname:ident => $mimp:ident;)* }
    ) => {
        $(products!(@new $(#[$doc])* $name => $imp, [], None);)*
        $(products!(@into $(#[$idoc])* $iname => $iimp, [], None);)*
        $(products!(@mixed $(#[$mdoc])* $mname => $mimp, [], None);)*

        /// The products on a stream: `gpuarray::on(&stream).matmul(&a, &b)`.
        impl OnStream<'_, &Context> {
            $(products!(
                @new #[doc = concat!("[`", stringify!($name), "`] on this stream; returns without waiting.")]
                $name => $imp, [&self,], self.stream
            );)*
            $(products!(
                @into #[doc = concat!("[`", stringify!($iname), "`] on this stream; returns without waiting.")]
                $iname => $iimp, [&self,], self.stream
            );)*
            $(products!(
                @mixed #[doc = concat!("[`", stringify!($mname), "`] on this stream; returns without waiting.")]
                $mname => $mimp, [&self,], self.stream
            );)*
        }
    };
    (@new $(#[$doc:meta])* $name:ident => $imp:ident, [$($recv:tt)*], $stream:expr) => {
        $(#[$doc])*
        pub fn $name<T, S1, D1, S2, D2>(
            $($recv)*
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
            $imp($stream, &a.view().into_dyn(), &b.view().into_dyn())
        }
    };
    (@into $(#[$doc:meta])* $name:ident => $imp:ident, [$($recv:tt)*], $stream:expr) => {
        $(#[$doc])*
        pub fn $name<T, S1, D1, S2, D2, S3, D3>(
            $($recv)*
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
            $imp($stream, &a.view().into_dyn(), &b.view().into_dyn(), &mut c.view_mut().into_dyn())
        }
    };
    (@mixed $(#[$doc:meta])* $name:ident => $imp:ident, [$($recv:tt)*], $stream:expr) => {
        $(#[$doc])*
        pub fn $name<A, B, S1, D1, S2, D2>(
            $($recv)*
            a: &DeviceArrayBase<S1, D1>,
            b: &DeviceArrayBase<S2, D2>,
        ) -> Result<DeviceArray<<A as Promote<B>>::Output, IxDyn>>
        where
            A: Promote<B>,
            B: Element,
            <A as Promote<B>>::Output: MatmulElement,
            S1: Storage<Elem = A>,
            S2: Storage<Elem = B>,
            D1: Dimension,
            D2: Dimension,
        {
            $imp($stream, &a.view().into_dyn(), &b.view().into_dyn())
        }
    };
}

products! {
    new {
    /// `a @ b` (NumPy's `matmul`) in a new C-order array, on the legacy default stream.
    matmul => matmul_stream;
    /// NumPy's `dot`: of 1-D and 2-D arrays the same as [`matmul`] (two vectors give a 0-d
    /// array); a 0-d operand multiplies the other; of N-d arrays the sum product over `a`'s last
    /// axis and `b`'s second to last, of shape `a.shape[:-1] + b.shape[:-2] + b.shape[-1:]`.
    /// Sizes that differ are [`GemmError::ShapesDoNotMultiply`].
    dot => dot_general;
    }
    into {
    /// `a @ b` written into `c`, which must have the product's shape ([`GemmError::OutputShape`]
    /// otherwise), of any layout (NumPy's `matmul(a, b, out=c)`), on the legacy default stream.
    matmul_into => matmul_into_stream;
    /// NumPy's `dot(a, b, out=c)`: [`dot`] written into `c`, which must have exactly the result's
    /// shape ([`GemmError::OutputShape`] otherwise, nothing written) and element type; of any layout
    /// (NumPy requires a C-contiguous `out`; a strided one here goes through one temporary and one
    /// copy, as for the N-d and 0-d operands, whose product [`dot`] computes first). On the legacy
    /// default stream.
    dot_into => dot_into_stream;
    }
    mixed {
    /// NumPy's `matmul` of arrays of two element types, in their promoted type (see the module's
    /// docs), in a new C-order array on the legacy default stream. Shapes as
    /// [`matmul`](crate::gpuarray::matmul).
    matmul_mixed => matmul_mixed_stream;
    }
}

/// Whether NumPy's `dot` of operands of `na` and `nb` axes is their `matmul`: neither is 0-d,
/// and both have at most 2 axes or `b` is a vector.
fn dot_is_matmul(na: usize, nb: usize) -> bool {
    na > 0 && nb > 0 && (na <= 2 && nb <= 2 || nb == 1)
}

fn dot_into_stream<T: MatmulElement>(
    stream: Option<&Stream>,
    a: &View<T>,
    b: &View<T>,
    c: &mut ViewMut<T>,
) -> Result<()> {
    let (sa, sb) = (a.shape(), b.shape());
    let (na, nb) = (sa.len(), sb.len());
    // Where `dot` is `matmul`, `matmul_into` writes `c` directly.
    if dot_is_matmul(na, nb) {
        return matmul_into_stream(stream, a, b, c);
    }
    // The result's shape, checked before anything is queued.
    let expected = if na == 0 {
        sb.to_vec()
    } else if nb == 0 {
        sa.to_vec()
    } else {
        dot_shape(sa, sb).ok_or_else(|| shapes_error(sa, sb))?
    };
    check_out_shape(c, &expected)?;
    let result = dot_general(stream, a, b)?;
    OnStream::new(c, stream).copy_from(&result)
}

fn matmul_into_stream<T: MatmulElement>(
    stream: Option<&Stream>,
    a: &View<T>,
    b: &View<T>,
    c: &mut ViewMut<T>,
) -> Result<()> {
    match product(a.shape(), b.shape()) {
        Some(p) if c.is_standard_layout() || c.shape() != p.shape.as_slice() => {
            into_stream(stream, a, b, c, &p)
        }
        // More than 3 axes, batch axes broadcast, or an `out` of another layout.
        _ => matmul_general(stream, a, b, c),
    }
}

/// [`GemmError::OutputShape`] unless `c` has the shape `expected`.
fn check_out_shape<T: Element>(c: &ViewMut<T>, expected: &[usize]) -> Result<()> {
    if c.shape() != expected {
        return Err(GemmError::OutputShape {
            expected: expected.to_vec(),
            found: c.shape().to_vec(),
        }
        .into());
    }
    Ok(())
}

pub(crate) fn shapes_error(a: &[usize], b: &[usize]) -> Error {
    GemmError::ShapesDoNotMultiply {
        a: a.to_vec(),
        b: b.to_vec(),
    }
    .into()
}

pub(crate) fn matmul_stream<T: MatmulElement>(
    stream: Option<&Stream>,
    a: &View<T>,
    b: &View<T>,
) -> Result<DeviceArray<T, IxDyn>> {
    if let Some(p) = product(a.shape(), b.shape()) {
        let mut c = DeviceArray::<T, IxDyn>::empty(a.context(), IxDyn(&p.shape))?;
        into_stream(stream, a, b, &mut c.view_mut(), &p)?;
        return Ok(c);
    }
    // More than 3 axes, or batch axes broadcast.
    let p = nd_product(a.shape(), b.shape()).ok_or_else(|| shapes_error(a.shape(), b.shape()))?;
    let mut c = DeviceArray::<T, IxDyn>::empty(a.context(), IxDyn(&p.shape))?;
    matmul_general(stream, a, b, &mut c.view_mut())?;
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
/// copy (queued on `stream`, so ordered before the product), with the layout cuBLAS is told.
struct Operand<'a, T: Element> {
    mat: Mat<'a, T>,
    layout: OperandLayout,
}

impl<'a, T: Element> Operand<'a, T> {
    fn of(x: &'a View<T>, is_left: bool, stream: &Stream) -> Result<Self> {
        let layout = |shape: &[usize], strides: &[isize]| {
            Matrices::of(shape, strides, is_left).and_then(|m| m.layout())
        };
        if let Some(layout) = layout(x.shape(), x.strides()) {
            return Ok(Operand {
                mat: Mat::View(x.view()),
                layout,
            });
        }
        let copy = x.on(stream).to_contiguous()?;
        // A C-order copy always has a layout cuBLAS reads; `None` cannot happen, and is
        // reported as the shapes it came from all the same rather than a panic.
        let layout =
            layout(copy.shape(), copy.strides()).ok_or_else(|| shapes_error(x.shape(), x.shape()))?;
        Ok(Operand {
            mat: Mat::Owned(copy),
            layout,
        })
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
        unsafe { blas.set_stream(cudarc_stream.clone()) }.map_err(cublas_error("cublasSetStream"))?;
        f(blas, &cudarc_stream)
    })
}

pub(crate) fn into_stream<T: MatmulElement>(
    stream: Option<&Stream>,
    a: &View<T>,
    b: &View<T>,
    c: &mut ViewMut<T>,
    p: &Product,
) -> Result<()> {
    check_out_shape(c, &p.shape)?;
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
    let call = gemm_call(p, oa.layout, ob.layout);
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
    let (va, vb) = (oa.mat.view(), ob.mat.view());
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

// ---- Beyond 3 axes, `out` of any layout, N-d `dot`, two element types ----
//
// `matmul` beyond 3 axes, `out` of any layout, N-d `dot`, and products of two element types
// (NumPy's), on top of the 1-D to 3-D products of `matmul` (one cuBLAS call, batched or not).
//
// - **Batch axes.** `a` and `b` of any number of axes: the axes before the last two are batch
// axes, broadcast by NumPy's rules (`(2, 1, 3, 4) @ (5, 4, 6)` is `(2, 5, 3, 6)`); a 1-D
// operand is a row (`a`) or a column (`b`), its axis dropped from the result. Each operand
// is handed to cuBLAS as one strided batch when its batch axes step through memory as one
// (C-order batches, a batch broadcast whole is the same matrix for every product: stride
// 0); otherwise (a batch axis broadcast and another not, transposed batch axes) it is copied
// to C order first, broadcast included.
// - **`out`.** [`matmul_into`](crate::gpuarray::matmul_into) takes any layout: a C-contiguous
// `out` is written by cuBLAS directly, any other is written through a C-order temporary
// and a copy.
// - **`dot`.** NumPy's: for 1-D and 2-D operands `matmul`; a 0-d operand multiplies the other
// (a product with `k = 1`); otherwise the sum product over `a`'s last axis and `b`'s second
// to last, `dot(a, b)[i.., j.., n] = sum(a[i.., :] * b[j.., :, n])`, of shape
// `a.shape[:-1] + b.shape[:-2] + b.shape[-1:]`: one matrix product of `a` as `(M, k)` and
// `b` moved to `(k, P)` (copied to C order when its axes do not allow that view).
// - **Two element types.** [`matmul_mixed`] converts each operand to NumPy's promoted type
// ([`Promote`]: `f32` with `f64` is `f64`, `i32` with `f32` is `f64`) and multiplies in it;
// an operand already of that type is read as it is. The promoted type must be a
// [`MatmulElement`] (integers are not: cuBLAS has no integer products).

/// An operand as it is handed on: a view of the caller's array, or a copy of it.
pub(crate) enum Mat<'a, T: Element> {
    View(View<'a, T>),
    Owned(DeviceArray<T, IxDyn>),
}

impl<T: Element> Mat<'_, T> {
    pub(crate) fn view(&self) -> View<'_, T> {
        match self {
            Mat::View(v) => v.view(),
            Mat::Owned(o) => o.view(),
        }
    }
}

/// `v`'s elements under another shape and strides (checked to stay inside its memory).
fn restrided<'a, T: Element>(v: View<'a, T>, shape: &[usize], strides: &[isize]) -> Result<View<'a, T>> {
    DeviceArrayBase::from_parts(v.data, v.offset, shape, strides)
}

/// `x` (shape `shape`, strides `strides` over its elements) as a C-order copy of that shape
/// when it cannot be viewed so: queued on `stream`.
fn contiguous<'a, T: Element>(
    v: View<'a, T>,
    stream: Option<&Stream>,
    new_shape: &[usize],
) -> Result<Mat<'a, T>> {
    let copy = OnStream::new(&v, stream).to_contiguous()?;
    Ok(Mat::Owned(copy.reshape(IxDyn(new_shape))?))
}

/// Operand `x` of the product `p` as cuBLAS takes it: a matrix `(r, c)` when its batch is one
/// matrix for every product, a strided batch `(B, r, c)` when its batch axes merge, else a
/// C-order copy of it broadcast to `(B, r, c)`.
fn as_matrices<'a, T: Element>(
    x: &'a View<T>,
    is_left: bool,
    batch: &[usize],
    stream: Option<&Stream>,
) -> Result<Mat<'a, T>> {
    let (shape, strides) = broadcast_matrices(x.shape(), x.strides(), is_left, batch);
    let nb = batch.len();
    let (r, c) = (shape[nb], shape[nb + 1]);
    let v = x.view();
    match merge_axes(&shape[..nb], &strides[..nb]) {
        Some((_, 0)) => Ok(Mat::View(restrided(v, &[r, c], &strides[nb..])?)),
        Some((len, stride)) => Ok(Mat::View(restrided(
            v,
            &[len, r, c],
            &[stride, strides[nb], strides[nb + 1]],
        )?)),
        None => {
            let len: usize = batch.iter().product();
            contiguous(restrided(v, &shape, &strides)?, stream, &[len, r, c])
        }
    }
}

/// NumPy's `matmul` of any number of axes into `c` of any layout: the general path, taken when
/// [`matmul_plan::product`](crate::gpuarray::linalg::matmul_plan::product) does not cover the
/// shapes or `c` is not C-contiguous.
pub(crate) fn matmul_general<T: MatmulElement>(
    stream: Option<&Stream>,
    a: &View<T>,
    b: &View<T>,
    c: &mut ViewMut<T>,
) -> Result<()> {
    let p = nd_product(a.shape(), b.shape()).ok_or_else(|| shapes_error(a.shape(), b.shape()))?;
    check_out_shape(c, &p.shape)?;
    if c.is_empty() {
        return Ok(());
    }
    if p.k == 0 {
        // A sum of nothing is zero. (An empty operand's strides are all 0, so its batch would
        // look broadcast below and lose its axes.)
        return OnStream::new(c, stream).fill(T::zero());
    }
    let am = as_matrices(a, true, &p.batch, stream)?;
    let bm = as_matrices(b, false, &p.batch, stream)?;
    let (av, bv) = (am.view(), bm.view());
    let pp = product(av.shape(), bv.shape()).ok_or_else(|| shapes_error(a.shape(), b.shape()))?;
    // Both operands broadcast over the whole batch (stride 0 on every batch axis) leave one
    // `(m, n)` product, the same matrix at every batch index of `c`.
    let whole_batch = pp.shape.len() == 2 && p.shape.len() > 2;
    if c.is_standard_layout() && !whole_batch {
        let mut cv = c.view_mut().reshape(IxDyn(&pp.shape))?;
        return into_stream(stream, &av, &bv, &mut cv, &pp);
    }
    let mut tmp = DeviceArray::<T, IxDyn>::empty(c.context(), IxDyn(&pp.shape))?;
    into_stream(stream, &av, &bv, &mut tmp.view_mut(), &pp)?;
    if whole_batch {
        let mut strides = vec![0isize; p.shape.len() - 2];
        strides.extend_from_slice(tmp.strides());
        let every = restrided(tmp.view(), &p.shape, &strides)?;
        return OnStream::new(c, stream).copy_from(&every);
    }
    let tmp = tmp.reshape(IxDyn(&p.shape))?;
    OnStream::new(c, stream).copy_from(&tmp)
}

/// NumPy's `dot`: `matmul` where the two agree ([`dot_is_matmul`]), else the shapes `matmul`
/// does not share: a 0-d operand, or more than 2 axes with a `b` of at least 2.
pub(crate) fn dot_general<T: MatmulElement>(
    stream: Option<&Stream>,
    a: &View<T>,
    b: &View<T>,
) -> Result<DeviceArray<T, IxDyn>> {
    let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
    if sa.is_empty() || sb.is_empty() {
        // A scalar times an array: the array as a column `(P, 1)` times the scalar as `(1, 1)`.
        let (x, s) = if sa.is_empty() {
            (b.view(), a.view())
        } else {
            (a.view(), b.view())
        };
        let shape = x.shape().to_vec();
        let len = x.len();
        let column = match merge_axes(x.shape(), x.strides()) {
            Some((_, stride)) if stride != 0 || len <= 1 => Mat::View(restrided(x, &[len, 1], &[stride, 0])?),
            _ => contiguous(x, stream, &[len, 1])?,
        };
        let scalar = restrided(s, &[1, 1], &[0, 0])?;
        let out = matmul_stream(stream, &column.view(), &scalar)?;
        return out.reshape(IxDyn(&shape));
    }
    if dot_is_matmul(sa.len(), sb.len()) {
        return matmul_stream(stream, a, b);
    }
    let shape = dot_shape(&sa, &sb).ok_or_else(|| shapes_error(&sa, &sb))?;
    let (na, nb) = (sa.len(), sb.len());
    let k = sa[na - 1];
    // `a` as `(M, k)` (a vector stays one).
    let av = a.view();
    let a2 = if na == 1 {
        Mat::View(av)
    } else {
        let m: usize = sa[..na - 1].iter().product();
        let st = av.strides().to_vec();
        match merge_axes(&sa[..na - 1], &st[..na - 1]) {
            Some((_, stride)) => Mat::View(restrided(av, &[m, k], &[stride, st[na - 1]])?),
            None => contiguous(av, stream, &[m, k])?,
        }
    };
    // `b` with its second to last axis first, `(k, b[:-2].., n)`, as `(k, P)`.
    let mut order = vec![nb - 2];
    order.extend(0..nb - 2);
    order.push(nb - 1);
    let moved = b.view().permuted_axes(&order)?;
    let cols: usize = moved.shape()[1..].iter().product();
    let st = moved.strides().to_vec();
    let b2 = match merge_axes(&moved.shape()[1..], &st[1..]) {
        Some((_, stride)) if stride != 0 || cols <= 1 => {
            Mat::View(restrided(moved, &[k, cols], &[st[0], stride])?)
        }
        _ => contiguous(moved, stream, &[k, cols])?,
    };
    let out = matmul_stream(stream, &a2.view(), &b2.view())?;
    out.reshape(IxDyn(&shape))
}

/// `x` as elements of `U`: a view when they are already, else a converted copy (on `stream`).
fn converted<'a, U: Element, E: Element>(x: &'a View<E>, stream: Option<&Stream>) -> Result<Mat<'a, U>> {
    if E::DTYPE == U::DTYPE {
        return Ok(Mat::View(x.view_as::<U>()?));
    }
    Ok(Mat::Owned(OnStream::new(x, stream).astype::<U>()?))
}

fn matmul_mixed_stream<A, B>(
    stream: Option<&Stream>,
    a: &View<A>,
    b: &View<B>,
) -> Result<DeviceArray<<A as Promote<B>>::Output, IxDyn>>
where
    A: Promote<B>,
    B: Element,
    <A as Promote<B>>::Output: MatmulElement,
{
    if b.context() != a.context() {
        return Err(Error::WrongContext { what: "matmul's b" });
    }
    let ac = converted::<<A as Promote<B>>::Output, _>(a, stream)?;
    let bc = converted::<<A as Promote<B>>::Output, _>(b, stream)?;
    matmul_stream(stream, &ac.view(), &bc.view())
}
