//! [`ScanKernel`]: prefix scans, inclusive and exclusive, with any associative operator and its
//! neutral (PyCUDA's `InclusiveScanKernel` and `ExclusiveScanKernel`; `cumsum` and `cumprod`
//! on arrays), of the flattened array (NumPy's `axis=None`) or along one axis.
//!
//! A long run of elements is scanned in one pass with decoupled look-back (see
//! [`scan_source`](crate::gpuarray::scan::source)): every element read once and written once, no second
//! pass over the output. Scans along an axis with many lanes run one thread per lane down the
//! axis (adjacent lanes read adjacent memory when the axis is not the innermost one); a few
//! long lanes are each scanned by the one-pass kernel. Every step is queued on one stream:
//! nothing waits on the host.

use std::marker::PhantomData;

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::context::core::Context;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::driver::stream::Stream;
use crate::error::{ArgumentError, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::{self, KernelKey, BLOCK};
use crate::gpuarray::scan::status::{self, HEADER_WORDS};
use crate::launch::{Arg, PreparedFunction};

/// Bytes of elements each thread of a look-back scan scans in registers (and its tile stages in
/// shared memory): 32 `f32`. On an H100 (2^26 `f32`, a tile per block of 256 threads) 16
/// elements a thread ran at 0.755x the copy floor, 32 at 0.825x, 24 or 40 at 0.74-0.76x, and
/// blocks of 128 or 512 threads no better (measured with the kernels this module generates,
/// 2026-11-26). More would not fit the 48 KiB of static shared memory.
const BYTES_PER_THREAD: usize = 128;

/// Elements per thread of a look-back tile of `T`: [`BYTES_PER_THREAD`] of them, at most 32
/// (so that 1- and 2-byte elements keep the same tile as `f32`, and the registers of a
/// thread's 16-byte loads stay few): 32 for elements of up to 4 bytes, 16 for 8, 8 for 16.
pub(crate) fn per_thread_of<T>() -> u32 {
    (BYTES_PER_THREAD / std::mem::size_of::<T>().max(1)).clamp(1, 32) as u32
}

/// Elements of a look-back tile of `T`: a block of 256 threads of `per_thread_of` each.
pub fn tile_of<T>() -> u32 {
    BLOCK * per_thread_of::<T>()
}

/// Scans along an axis with at least this many lanes run one thread per lane; fewer lanes are
/// each scanned by the one-pass kernel (when they are long).
const MANY_LANES: usize = 2048;

/// A scan (prefix reduction) over the elements of `T` with an associative operator of `a` and
/// `b` (`a` the earlier elements: it need not be commutative) and its neutral element.
///
/// A one-pass scan is one kernel launch. It works through its stream's tile-status buffer,
/// which the context keeps for every later scan on that stream (8 bytes a tile; see the
/// [arrays chapter](crate::guide::arrays)).
///
/// ```no_run
/// use gpu_runtime::gpuarray::{DeviceArray, ScanKernel};
/// use gpu_runtime::{ndarray::Array1, Context};
/// let ctx = Context::default()?;
/// let running_max = ScanKernel::<i32>::new("a > b ? a : b", "(-2147483647 - 1)")?;
/// let x = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![3, 1, 4, 1, 5]))?;
/// assert_eq!(running_max.inclusive(&x)?.to_vec()?, vec![3, 3, 4, 4, 5]);
/// let sums = ScanKernel::<i32>::new("a + b", "0")?;
/// assert_eq!(sums.exclusive(&x)?.to_vec()?, vec![0, 3, 4, 8, 9]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ScanKernel<T: Element> {
    pub(crate) op: String,
    pub(crate) neutral: String,
    key: u64,
    _t: PhantomData<fn() -> T>,
}

/// Which kernel of a [`ScanKernel`]: see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanVariant {
    /// One pass over a run of elements (any stride), tiles chained by decoupled look-back.
    LookBack,
    /// Independent lanes along one axis, one thread per lane, the lanes indexed over this many
    /// other axes.
    Lanes(usize),
}

impl ScanVariant {
    fn code(self) -> u32 {
        match self {
            ScanVariant::LookBack => 0,
            ScanVariant::Lanes(d) => 10 + d as u32,
        }
    }
}

impl<T: Element> ScanKernel<T> {
    /// A scan with the C expression `op` of `a` and `b` (of type `T`) and `neutral`, the C
    /// expression of its neutral element: an identity on both sides, `op(neutral, x) ==
    /// op(x, neutral) == x` (the exclusive scan and the carries between tiles rely on both).
    /// Both are compiled on the first scan in each context (or, with no GPU, by compiling
    /// [`source`](Self::source) with a [`SourceModule`](crate::SourceModule)).
    pub fn new(op: &str, neutral: &str) -> Result<Self> {
        if op.trim().is_empty() || neutral.trim().is_empty() {
            return Err(ArgumentError::EmptyScanExpression {
                kernel: "gpu_scan".into(),
            }
            .into());
        }
        Ok(ScanKernel {
            key: registry::hash_parts(&["scan", T::c_name(), op, neutral]),
            op: op.to_owned(),
            neutral: neutral.to_owned(),
            _t: PhantomData,
        })
    }

    pub(crate) fn c_name(v: ScanVariant) -> &'static str {
        match v {
            ScanVariant::LookBack => "gpu_scan_lookback",
            ScanVariant::Lanes(_) => "gpu_scan_lanes",
        }
    }

    fn prepared(&self, ctx: &Context, v: ScanVariant) -> Result<PreparedFunction> {
        let key = KernelKey {
            source: self.key,
            variant: v.code(),
        };
        registry::prepared(ctx, key, Self::c_name(v), || self.source(v))
    }

    /// This kernel's scans queued on `stream`: `kernel.on(&stream).inclusive(&x)` (and every
    /// other scan method) returns without waiting. See [`OnStream`].
    pub fn on<'a>(&'a self, stream: &'a Stream) -> OnStream<'a, &'a Self> {
        OnStream::new(self, Some(stream))
    }

    fn scan_stream<S: Storage<Elem = T>, D: Dimension>(
        &self,
        stream: Option<&Stream>,
        x: &DeviceArrayBase<S, D>,
        exclusive: bool,
    ) -> Result<DeviceArray<T, Ix1>> {
        let mut out = DeviceArray::<T, Ix1>::empty(x.context(), x.len())?;
        self.scan_into_stream(stream, x, &mut out, exclusive)?;
        Ok(out)
    }

    fn scan_into_stream<S: Storage<Elem = T>, D: Dimension, O: StorageMut<Elem = T>>(
        &self,
        stream: Option<&Stream>,
        x: &DeviceArrayBase<S, D>,
        out: &mut DeviceArrayBase<O, Ix1>,
        exclusive: bool,
    ) -> Result<()> {
        let n = x.len();
        if out.len() != n {
            return Err(ArrayShapeError::ElementCounts {
                operation: "ScanKernel::scan_into",
                first: n,
                second: out.len(),
            }
            .into());
        }
        let out_step = out.strides()[0] as i64;
        if n > 1 && out_step == 0 {
            return Err(ArrayShapeError::OutputOverlapsItself {
                param: "out".to_owned(),
                shape: out.shape().to_vec(),
                strides: out.strides().to_vec(),
            }
            .into());
        }
        if n == 0 {
            return Ok(());
        }
        let ctx = x.context().clone();
        let out_offset = out.offset() as i64;
        let target = (&mut out.data, out_offset, out_step);
        // A 1-d input is read at its own step; another one in C order, through a copy if it
        // is not in C order.
        if x.ndim() == 1 || x.is_standard_layout() {
            let step = if x.ndim() == 1 { x.strides()[0] as i64 } else { 1 };
            let input = (x.storage(), x.offset() as i64, step);
            return self.run(&ctx, stream, n, input, target, exclusive);
        }
        let c = OnStream::new(x, stream).to_contiguous()?;
        let input = (c.storage(), c.offset() as i64, 1);
        self.run(&ctx, stream, n, input, target, exclusive)
    }

    fn scan_axis_stream<S: Storage<Elem = T>, D: Dimension>(
        &self,
        stream: Option<&Stream>,
        x: &DeviceArrayBase<S, D>,
        axis: usize,
        exclusive: bool,
    ) -> Result<DeviceArray<T, IxDyn>> {
        let shape = x.shape().to_vec();
        if axis >= shape.len() {
            return Err(ArrayShapeError::AxisOutOfRange {
                axis,
                axes: shape.len(),
            }
            .into());
        }
        let ctx = x.context().clone();
        let mut out = DeviceArray::<T, IxDyn>::empty(&ctx, IxDyn(&shape))?;
        let n = x.len();
        if n == 0 {
            return Ok(out);
        }
        let m = shape[axis];
        let lanes = n / m;
        // The output is C-contiguous: its strides are the products of the later axes.
        let mut out_strides = vec![1i64; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            out_strides[k] = out_strides[k + 1] * shape[k + 1] as i64;
        }
        let x_sa = x.strides()[axis] as i64;
        let others: Vec<(usize, i64, i64)> = (0..shape.len())
            .filter(|&k| k != axis)
            .map(|k| (shape[k], x.strides()[k] as i64, out_strides[k]))
            .collect();
        // One lane is one run, as each of a few long lanes below.
        if lanes > 1 && (lanes >= MANY_LANES || m < tile_of::<T>() as usize) {
            let v = ScanVariant::Lanes(others.len());
            let f = self.prepared(&ctx, v)?;
            let mut list = vec![
                Arg::I64(m as i64),
                Arg::I64(lanes as i64),
                Arg::input::<T, S>(x.storage()),
                Arg::I64(x.offset() as i64),
                Arg::I64(x_sa),
                Arg::output(&mut out.data),
                Arg::I64(out_strides[axis]),
                Arg::I32(exclusive as i32),
            ];
            for &(d, xs, os) in &others {
                list.extend([Arg::I64(d as i64), Arg::I64(xs), Arg::I64(os)]);
            }
            let grid = registry::grid_for(&ctx, lanes as u64)?;
            return registry::launch(&f, grid, BLOCK, stream, &list).map(|()| out);
        }
        // One or a few long lanes: each is one run for the one-pass kernel.
        for lane in 0..lanes {
            let (mut r, mut xo, mut oo) = (lane, x.offset() as i64, 0i64);
            for &(d, xs, os) in others.iter().rev() {
                let c = (r % d) as i64;
                r /= d;
                xo += c * xs;
                oo += c * os;
            }
            let input = (x.storage(), xo, x_sa);
            self.run(
                &ctx,
                stream,
                m,
                input,
                (&mut out.data, oo, out_strides[axis]),
                exclusive,
            )?;
        }
        Ok(out)
    }

    /// Scans `n` elements of `input` (the memory, the first element, the step) into `out`
    /// (the same), in one pass.
    fn run<I: DeviceRead<T>, O: DeviceWrite<T>>(
        &self,
        ctx: &Context,
        stream: Option<&Stream>,
        n: usize,
        input: (&I, i64, i64),
        out: (&mut O, i64, i64),
        exclusive: bool,
    ) -> Result<()> {
        let tiles = n.div_ceil(tile_of::<T>() as usize);
        let grid = u32::try_from(tiles).map_err(|_| ArrayShapeError::ScanTooLong { elements: n })?;
        let f = self.prepared(ctx, ScanVariant::LookBack)?;
        let vec = vectorizable::<T>(input.0.device_view().device_ptr(), input.1, input.2)
            && vectorizable::<T>(out.0.device_view().device_ptr(), out.1, out.2);
        // The stream's status buffer (see `scan::status`): the header, then each tile's status
        // (two 32-bit words: a packed 64-bit word, or a flag and an unused word).
        let words = HEADER_WORDS + 2 * tiles;
        // The one launch, with `sides` (see below) between the status and the tickets.
        macro_rules! launch {
            ($($sides:expr),*) => {
                status::with_status(ctx, stream, words, grid, |l| {
                    let list = [
                        Arg::I64(n as i64),
                        Arg::input::<T, I>(input.0),
                        Arg::I64(input.1),
                        Arg::I64(input.2),
                        Arg::output::<T, O>(out.0),
                        Arg::I64(out.1),
                        Arg::I64(out.2),
                        Arg::output(l.status),
                        $($sides,)*
                        Arg::U32(l.first_ticket),
                        Arg::U32(l.tag),
                        Arg::I32(exclusive as i32),
                        Arg::I32(vec as i32),
                    ];
                    registry::launch(&f, grid, BLOCK, stream, &list)
                })
            };
        }
        if packs_status::<T>() {
            // The status words carry the values too.
            launch!()
        } else {
            // Each tile's total and inclusive prefix, written before its flag says so: never
            // read unwritten, so never cleared.
            let pool = ctx.device_pool()?;
            let mut aggregates = pool.alloc::<T>(tiles)?;
            let mut inclusive = pool.alloc::<T>(tiles)?;
            launch!(Arg::output(&mut aggregates), Arg::output(&mut inclusive))
        }
    }
}

/// The scans of a [`ScanKernel`], each written once as `fn name[generics](args) -> R =
/// body(arguments);`, `body` one of its private scans (which take the stream first): it becomes
/// `ScanKernel::name`, documented as written, which queues `body` on the legacy default stream,
/// and the same method of `kernel.on(&stream)`, which queues it on that stream. So the
/// signature of each is written once rather than once per form.
macro_rules! scan_forms {
    ($(
        $(#[$attr:meta])*
        fn $name:ident[$($generics:tt)*]($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
            = $body:ident($($call:expr),* $(,)?);
    )*) => {
        impl<T: Element> ScanKernel<T> {
            $(
                $(#[$attr])*
                pub fn $name<$($generics)*>(&self, $($arg: $ty),*) -> Result<$ret> {
                    self.$body(None, $($call),*)
                }
            )*
        }

        /// The scans on a stream: `kernel.on(&stream).inclusive(&x)`; each returns without waiting.
        impl<T: Element> OnStream<'_, &ScanKernel<T>> {
            $(
                #[doc = concat!(
                    "[`", stringify!($name), "`](ScanKernel::", stringify!($name), ") on this stream."
                )]
                pub fn $name<$($generics)*>(&self, $($arg: $ty),*) -> Result<$ret> {
                    self.target.$body(self.stream, $($call),*)
                }
            )*
        }
    };
}

scan_forms! {
    /// The inclusive scan (`out[i] = x[0] op ... op x[i]`) of the elements of `x` in C order
    /// (any layout: NumPy's `axis=None`), into a new 1-D array, on the legacy default stream.
    fn inclusive[S: Storage<Elem = T>, D: Dimension](x: &DeviceArrayBase<S, D>) -> DeviceArray<T, Ix1>
        = scan_stream(x, false);

    /// The exclusive scan (`out[0] = neutral`, `out[i] = x[0] op ... op x[i - 1]`); as
    /// [`inclusive`](Self::inclusive) otherwise.
    fn exclusive[S: Storage<Elem = T>, D: Dimension](x: &DeviceArrayBase<S, D>) -> DeviceArray<T, Ix1>
        = scan_stream(x, true);

    /// [`inclusive`](Self::inclusive) (or, with `exclusive`, [`exclusive`](Self::exclusive))
    /// on the legacy default stream. An array of two or more axes that is not C-contiguous is
    /// first copied into C order.
    fn scan[S: Storage<Elem = T>, D: Dimension](x: &DeviceArrayBase<S, D>, exclusive: bool)
        -> DeviceArray<T, Ix1> = scan_stream(x, exclusive);

    /// [`scan`](Self::scan) into `out`, an existing 1-D array of `x.len()` elements of any
    /// step (NumPy's `out=`): no allocation for the result, so a loop of scans into one array
    /// costs the kernel alone. `out` may hold a single element at several indices only when it
    /// has at most one element ([`ArrayShapeError::OutputOverlapsItself`] otherwise); another
    /// length is [`ArrayShapeError::ElementCounts`].
    fn scan_into[S: Storage<Elem = T>, D: Dimension, O: StorageMut<Elem = T>](
        x: &DeviceArrayBase<S, D>, out: &mut DeviceArrayBase<O, Ix1>, exclusive: bool,
    ) -> () = scan_into_stream(x, out, exclusive);

    /// The inclusive scan along `axis` (NumPy's `cumsum(axis=...)` for `a + b`), into a new
    /// C-order array of `x`'s shape, on the legacy default stream.
    fn inclusive_axis[S: Storage<Elem = T>, D: Dimension](x: &DeviceArrayBase<S, D>, axis: usize)
        -> DeviceArray<T, IxDyn> = scan_axis_stream(x, axis, false);

    /// The exclusive scan along `axis`; as [`inclusive_axis`](Self::inclusive_axis) otherwise.
    fn exclusive_axis[S: Storage<Elem = T>, D: Dimension](x: &DeviceArrayBase<S, D>, axis: usize)
        -> DeviceArray<T, IxDyn> = scan_axis_stream(x, axis, true);

    /// The scan along `axis` of an array of any layout, inclusive or `exclusive`, on the
    /// legacy default stream. An axis the array does not have is
    /// [`ArrayShapeError::AxisOutOfRange`].
    fn scan_axis[S: Storage<Elem = T>, D: Dimension](x: &DeviceArrayBase<S, D>, axis: usize, exclusive: bool)
        -> DeviceArray<T, IxDyn> = scan_axis_stream(x, axis, exclusive);
}

/// Whether a scan of `T` keeps each tile's flag and value in one 64-bit word (status in the high
/// 32 bits, the value's bytes in the low ones; CUB's `ScanTileState` for small types): one load
/// then sees both, where separate arrays take a load of the flag, a fence and a load of the
/// value on the look-back's critical path. Elements of up to 4 bytes fit.
pub(crate) fn packs_status<T: Element>() -> bool {
    std::mem::size_of::<T>() <= 4
}

/// Whether a run of elements of `T` at `base` (the memory's device address), first element
/// `offset`, step `step`, may be read or written by the look-back kernel in 16-byte vectors:
/// contiguous, 16 bytes holding a whole number of elements, and its first element 16-byte
/// aligned (full tiles then are too: a tile is a multiple of 16 bytes).
fn vectorizable<T>(base: u64, offset: i64, step: i64) -> bool {
    let size = std::mem::size_of::<T>();
    if step != 1 || size == 0 || size > 16 || 16 % size != 0 {
        return false;
    }
    let first = base.wrapping_add((offset as u64).wrapping_mul(size as u64));
    first.is_multiple_of(16)
}
