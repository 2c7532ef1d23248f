//! [`OnStream`]: what an operation acts on, with the stream it is queued on. Every operation
//! of `gpuarray` that queues work is written once, taking the stream (or none, the legacy
//! default stream); its plain form (`a.fill(v)`, `matmul(&a, &b)`) is the legacy default
//! stream's case, its stream form the same call on `.on(&stream)` of the same receiver
//! (`a.on_mut(&stream).fill(v)`, `gpuarray::on(&stream).matmul(&a, &b)`), as NCCL's
//! `comm.on(&stream)` is for a communicator. The operations themselves are implemented beside
//! their plain forms, in the folders of their families.

use ndarray::{Dimension, ShapeBuilder};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::elements::array_element::ArrayElement;

/// An array, an expression, a kernel or a generator (or, from [`on`], a stream's context)
/// with the stream its operations are queued on: the stream form of each operation of
/// [`gpuarray`](crate::gpuarray) is the same call on it. Each call queues its work after the
/// work queued on the stream before and returns without waiting (the ones that return a value
/// to the host wait for it), and records its uses of each array on the stream, so that work on
/// other streams that shares an array is ordered with it as every launch of this crate is.
///
/// | made by | holds | its operations |
/// |---|---|---|
/// | [`a.on(&stream)`](DeviceArrayBase::on) | `&DeviceArrayBase` | the reads: `to_contiguous`, `copy`, `ravel`, `astype`, `take`, `any`, `all`, the reductions (`sum`, `mean`, `max`, `argmax`, ..., along an axis too), `cumsum`/`cumprod`, the sorts, `roll`, `repeat`, `tile`, `tril`, `isin`, `compress`, `pad`, `delete`, `ediff1d`, `diag`, `diagflat`, `trapezoid`, `gradient`, `unwrap`, `vander`, `sort_complex` |
/// | [`a.on_mut(&stream)`](DeviceArrayBase::on_mut) | `&mut DeviceArrayBase` | the writes: `fill`, `copy_from`, `assign`, `put`, `put_along_axis`, `fill_diagonal`, `copyto`, `copyto_where`, `assign_expr`, `op_assign` and `add_assign` ..., the Philox `fill_uniform`/`fill_normal` |
/// | [`expr.on(&stream)`](crate::gpuarray::Expr::on) | [`Expr`](crate::gpuarray::Expr) | `eval`, `eval_into` (and so every math function of one result: `a.expr().sin().on(&stream).eval()`) |
/// | [`kernel.on(&stream)`](crate::gpuarray::ElementwiseKernel::on) | `&ElementwiseKernel`, `&ReductionKernel`, `&ScanKernel` | `launch`; `reduce`, `reduce_into`, `reduce_axis`; `scan`, `scan_into`, `scan_axis`, `inclusive` ... |
/// | [`generator.on(&stream)`](crate::gpuarray::CurandGenerator::on) | `&mut CurandGenerator` | `fill_uniform`, `fill_normal` |
/// | [`gpuarray::on(&stream)`](on) | the stream's `&Context` | the constructors (`full`, `ones`, `arange`, `linspace`, `logspace`, `eye`, `tri`, `random_uniform`, `random_normal`, made in that context; `full_like`/`ones_like` in their model's) and the free functions (`concatenate`, `stack`, `if_positive`, `linear_combination`, `math`'s `frexp` and `modf`, `matmul`, `matmul_into`, `dot`, `dot_into`, `select`, `piecewise`, `extract`, `intersect1d`, `intersect1d_indices`, `union1d`, `setdiff1d`, `setxor1d`, `hstack`, `vstack`, `dstack`, `column_stack`, `append`, `resize`, `meshgrid`, `indices`, `interp`, `convolve`, `correlate`, `putmask`, `place`, `math::real_if_close`, `cov`, `cov_xy`, `corrcoef`, `corrcoef_xy`, `unravel_index`, `ravel_multi_index`, `histogramdd`, `histogramdd_weighted`, `histogram2d`, `histogram2d_weighted`, `einsum`, `tensordot`, `tensordot_axes`, `kron`, `inner`, `outer`, `cross`, `cross_axes`, `polyval`, `polyadd`, `polysub`, `polymul`, `poly`, `roots`, `polyfit`, `polyfit_weighted`, `polyfit_full`) |
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::{Context, Stream};
/// let ctx = Context::default()?;
/// let stream = Stream::new(&ctx)?;
/// let mut a: DeviceArray<f32, _> = gpuarray::on(&stream).arange(0.0, 1000.0, 1.0)?;
/// a.on_mut(&stream).fill(2.0)?;
/// let b = a.on(&stream).astype::<f64>()?;
/// let c = (&b * 3.0).on(&stream).eval()?;
/// assert_eq!(c.on(&stream).sum()?, 6000.0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct OnStream<'a, T> {
    /// What the operations act on.
    pub(crate) target: T,
    /// The stream they are queued on; `None`: the legacy default stream (the plain forms).
    pub(crate) stream: Option<&'a Stream>,
}

impl<'a, T> OnStream<'a, T> {
    /// `target` with `stream`, or (`None`) the legacy default stream: how the plain forms and
    /// the crate's own callers with a stream or none reach an operation.
    pub(crate) fn new(target: T, stream: Option<&'a Stream>) -> Self {
        OnStream { target, stream }
    }

    /// `target` on the legacy default stream: the plain form of each operation.
    pub(crate) fn legacy(target: T) -> Self {
        OnStream { target, stream: None }
    }
}

/// The plain forms of operations: each item, written as its signature with the generics and
/// the `where` bounds in brackets (`fn sum_as[A: Element](&self) -> Result<A>;`), becomes a
/// `pub fn` that runs the stream form of the same name on the legacy default stream, so that
/// this rule is written once rather than once per operation.
macro_rules! on_legacy_stream {
    () => {};
    (
        $(#[$attr:meta])*
        fn $name:ident $([$($generics:tt)*])? (&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty
        $(where [$($bounds:tt)*])?;
        $($rest:tt)*
    ) => {
        $(#[$attr])*
        pub fn $name $(<$($generics)*>)? (&self $(, $arg: $ty)*) -> $ret $(where $($bounds)*)? {
            $crate::gpuarray::array::on_stream::OnStream::legacy(self).$name($($arg),*)
        }
        $crate::gpuarray::array::on_stream::on_legacy_stream! { $($rest)* }
    };
    (
        $(#[$attr:meta])*
        fn $name:ident $([$($generics:tt)*])? (&mut self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty
        $(where [$($bounds:tt)*])?;
        $($rest:tt)*
    ) => {
        $(#[$attr])*
        pub fn $name $(<$($generics)*>)? (&mut self $(, $arg: $ty)*) -> $ret $(where $($bounds)*)? {
            $crate::gpuarray::array::on_stream::OnStream::legacy(self).$name($($arg),*)
        }
        $crate::gpuarray::array::on_stream::on_legacy_stream! { $($rest)* }
    };
}
pub(crate) use on_legacy_stream;

/// The stream forms on an array (`a.on(&stream).sum()`) that are one call each, one line per
/// operation: `fn name[generics](args) -> R where [bounds] = body(arguments);` becomes
/// `pub fn name(&self, args) -> Result<R>` calling `self.body("name", arguments)` (the name
/// for its errors), documented as the plain form on this stream. So a family of operations
/// over one body reads as a table.
macro_rules! stream_forms {
    () => {};
    (
        fn $name:ident $([$($generics:tt)*])? ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
        $(where [$($bounds:tt)*])? = $body:ident($($call:expr),* $(,)?);
        $($rest:tt)*
    ) => {
        #[doc = concat!(
            "[`", stringify!($name), "`](DeviceArrayBase::", stringify!($name), ") on this stream."
        )]
        pub fn $name $(<$($generics)*>)? (&self $(, $arg: $ty)*) -> $crate::error::Result<$ret>
        $(where $($bounds)*)? {
            self.$body(stringify!($name) $(, $call)*)
        }
        $crate::gpuarray::array::on_stream::stream_forms! { $($rest)* }
    };
}
pub(crate) use stream_forms;

/// The free functions of `gpuarray` over arrays, each written once as its stream form on
/// [`gpuarray::on(&stream)`](on): an item written as that method, with the generics and the
/// `where` bounds in brackets and the function's documentation above it
/// (`fn inner[T: Element, ..](&self, a: &DeviceArrayBase<S, D>, ..) -> Result<..> where [..]
/// { body }`), becomes that method on `OnStream<&Context>` and the plain `pub fn` of the same
/// name, which runs it on the legacy default stream of its first argument's context. So the
/// signature and its bounds are written once rather than once per form.
macro_rules! context_fns {
    () => {};
    (
        $(#[$attr:meta])*
        fn $name:ident $([$($generics:tt)*])?
        (&$self:ident, $first:ident: $fty:ty $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty
        $(where [$($bounds:tt)*])? $body:block
        $($rest:tt)*
    ) => {
        $(#[$attr])*
        pub fn $name $(<$($generics)*>)? ($first: $fty $(, $arg: $ty)*) -> $ret $(where $($bounds)*)? {
            // A `&mut` first argument is borrowed again by the call: the context is held apart.
            let ctx = $first.context().clone();
            $crate::gpuarray::array::on_stream::OnStream::legacy(&ctx).$name($first $(, $arg)*)
        }

        impl $crate::gpuarray::array::on_stream::OnStream<'_, &$crate::driver::context::core::Context> {
            #[doc = concat!("[`", stringify!($name), "`] on this stream.")]
            pub fn $name $(<$($generics)*>)? (&$self, $first: $fty $(, $arg: $ty)*) -> $ret
            $(where $($bounds)*)? $body
        }

        $crate::gpuarray::array::on_stream::context_fns! { $($rest)* }
    };
}
pub(crate) use context_fns;

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// This array's reads (`astype`, `copy`, `sum`, ...) queued on `stream`, which must belong
    /// to the array's context: see [`OnStream`].
    pub fn on<'a>(&'a self, stream: &'a Stream) -> OnStream<'a, &'a Self> {
        OnStream::new(self, Some(stream))
    }

    /// This array's writes (`fill`, `assign`, `put`, ...) queued on `stream`, which must belong
    /// to the array's context: see [`OnStream`].
    pub fn on_mut<'a>(&'a mut self, stream: &'a Stream) -> OnStream<'a, &'a mut Self>
    where
        S: StorageMut,
    {
        OnStream::new(self, Some(stream))
    }
}

/// The constructors and free functions of `gpuarray` queued on `stream`, new arrays made in its
/// context: `gpuarray::on(&stream).full(shape, value)`, `.arange(..)`, `.matmul(&a, &b)`. See
/// [`OnStream`].
pub fn on(stream: &Stream) -> OnStream<'_, &Context> {
    OnStream::new(stream.context(), Some(stream))
}

impl OnStream<'_, &Context> {
    /// A new array of `shape` in this context, its elements written by `fill` on this stream:
    /// the one body of the constructors that fill (`full`, `randint`, `random_uniform`, ...).
    pub(crate) fn filled<T: ArrayElement, D: Dimension, Sh: ShapeBuilder<Dim = D>>(
        &self,
        shape: Sh,
        fill: impl FnOnce(OnStream<'_, &mut DeviceArray<T, D>>) -> Result<()>,
    ) -> Result<DeviceArray<T, D>> {
        let mut a = DeviceArray::empty(self.target, shape)?;
        fill(OnStream::new(&mut a, self.stream))?;
        Ok(a)
    }
}
