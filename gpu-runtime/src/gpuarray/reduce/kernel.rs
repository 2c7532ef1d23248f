//! [`ReductionKernel`]: CuPy's `ReductionKernel` (map, reduce, neutral, post-map) over all axes
//! or along one, generated and cached per context like the elementwise kernels.
//!
//! Over all axes, one launch: a grid-stride pass where each block reduces its share (four
//! elements at a time with aligned vector loads when every array is contiguous) into one
//! partial per block, in scratch memory of the kernel's module, and the last block to finish
//! (counted by an atomic ticket) reduces the partials and applies the post-map: one launch and
//! no allocation per reduction, so that the fixed cost of a small reduction is about a copy's
//! (two launches, a pool allocation and a copy of each kernel's signature per lookup made a
//! sum of 2^20 `f32` take about four times the copy of it). Along one axis, one block per output element
//! (reading four elements per load when every lane is contiguous and starts aligned) or, for
//! short axes, one thread per output element; when the lanes are adjacent in memory (the
//! columns of a C-order matrix), one thread per output element and chunk of the axis, so that
//! a warp reads 32 adjacent elements of a row at a time and there are enough threads to keep
//! the memory busy (four adjacent outputs per thread, one vector load per row, when the
//! lanes' axis has unit stride, a length that is a multiple of four and aligned rows: a warp
//! then reads 512 adjacent bytes of `f32` per row, not 128), then one thread per output over
//! the chunks' partials (in a fixed order: the result does not depend on timing); when there are too
//! few long lanes to fill the GPU with a block each, a block per lane and chunk of the axis,
//! then the same pass over the partials.

use std::marker::PhantomData;

use ndarray::{Dimension, IxDyn};

use crate::driver::stream::Stream;
use crate::error::{ArgumentError, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, StorageMut};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::args::{check_args, parse_params, ArgKind, ArrayArg, KernelArg, Param};
use crate::gpuarray::kernels::codegen;
use crate::gpuarray::kernels::elementwise::first_context;
use crate::gpuarray::kernels::registry::{self, KernelKey, BLOCK};
use crate::launch::Arg;

/// The most blocks (partial results) of a reduction over all axes: the last block reduces them,
/// four per thread, and the module keeps room for this many (the generator's constant).
pub(crate) use gpu_cuda_source::reduction::MAX_PARTS;

/// Axes shorter than this are reduced one thread per output element.
const SHORT_AXIS: usize = 64;

/// The fewest rows of a chunk of a column reduction.
const MIN_CHUNK: usize = 32;

/// The fewest elements of a chunk of a lane split across blocks: 16 per thread.
const SPLIT_CHUNK: usize = 16 * BLOCK as usize;

/// Which kernel of a [`ReductionKernel`] (see the module documentation): `gpu-cuda-source`'s, whose
/// generator writes the source of each, for the run time and for `#[reduction]`'s build-time
/// check alike.
pub use gpu_cuda_source::reduction::ReductionVariant;

/// A reduction written as expressions (CuPy's `ReductionKernel`): each element maps to a value
/// (`map`, over the arguments' elements as in [`ElementwiseKernel`](crate::gpuarray::ElementwiseKernel),
/// with `i` the element's index), values combine pairwise (`reduce`, of `a` and `b`; it must
/// be associative and commutative, as the order is the GPU's), starting from `neutral`, and the
/// result is `post_map` of `a` (the reduced value) and `n` (how many elements), stored as `R`.
/// Declared in Rust with [`#[reduction]`](crate::reduction), the same kernel's expressions are
/// compiled at `cargo build`, and a CUDA error in one is a compile error at its string.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{DeviceArray, KernelArg, ReductionKernel};
/// use gpu_runtime::{ndarray::Array1, Context};
/// let ctx = Context::default()?;
/// let norm2 = ReductionKernel::<f64>::new("const double *x", "x * x", "a + b", "0.0")?.post_map("sqrt(a)");
/// let x = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![3.0f64, 4.0]))?;
/// let r = norm2.reduce([KernelArg::input(&x)])?;
/// assert_eq!(r.to_vec()?, vec![5.0]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReductionKernel<R: Element> {
    pub(crate) name: String,
    pub(crate) params: Vec<Param>,
    pub(crate) map: String,
    pub(crate) reduce: String,
    pub(crate) neutral: String,
    pub(crate) post: String,
    /// The accumulator's C type, its definition (if not a scalar), and its size.
    pub(crate) acc: String,
    pub(crate) acc_def: String,
    pub(crate) acc_size: usize,
    /// `i` must be the flat index in C order: Fortran-contiguous arrays take the strided path.
    pub(crate) c_order_index: bool,
    /// `reduce` of `a` and `b` when every element in `b` comes after every one in `a` (in the
    /// order of `i`) and `a` holds at least one element: cheaper where the order settles ties
    /// (`argmax`'s lowest index), used where a thread walks its elements in order.
    pub(crate) in_order: Option<String>,
    pub(crate) key: u64,
    pub(crate) _out: PhantomData<fn() -> R>,
}

impl<R: Element> ReductionKernel<R> {
    /// A reduction accumulating in `R`: `arguments` as for an elementwise kernel (arrays
    /// `const`: a reduction writes only its result), `map` an expression of their elements,
    /// `reduce` one of `a` and `b`, `neutral` the value that changes nothing (the result of an
    /// empty reduction).
    pub fn new(arguments: &str, map: &str, reduce: &str, neutral: &str) -> Result<Self> {
        Self::with_accumulator(
            "reduction",
            arguments,
            map,
            reduce,
            neutral,
            (R::c_name(), "", std::mem::size_of::<R>()),
        )
    }

    /// A reduction whose accumulator is the user's `#[repr(C)]` struct `A`, declared to the
    /// device as the C type `c_type` by `preamble` (PyCUDA's and CuPy's `preamble`): `map`
    /// makes an `A` of the elements, `reduce` combines two (`a` and `b`), `neutral` is the
    /// empty one, and [`post_map`](Self::post_map) turns the reduced `a` into the result `R`
    /// (by default the accumulator must convert to `R`). The generated source asserts
    /// (`static_assert`) that the C type has `A`'s size and alignment, so a layout mismatch
    /// is a compile error, not wrong results. Welford's mean and variance in one pass:
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{DeviceArray, KernelArg, ReductionKernel};
    /// use gpu_runtime::{ndarray::Array1, Context, DeviceRepr};
    /// #[derive(Clone, Copy)]
    /// #[repr(C)]
    /// struct Welford { n: f64, mean: f64, m2: f64 }
    /// // SAFETY: repr(C), three f64 fields, every bit pattern is valid, and the preamble
    /// // declares the same struct.
    /// unsafe impl DeviceRepr for Welford {}
    /// let preamble = "struct welford { double n, mean, m2; };
    /// __device__ welford mk(double n, double mean, double m2) { welford w; w.n = n; w.mean = mean; w.m2 = m2; return w; }
    /// __device__ welford merge(welford a, welford b) {
    ///   if (a.n == 0) return b; if (b.n == 0) return a;
    ///   double n = a.n + b.n, d = b.mean - a.mean;
    ///   return mk(n, a.mean + d * b.n / n, a.m2 + b.m2 + d * d * a.n * b.n / n); }";
    /// let var = ReductionKernel::<f64>::with_struct_accumulator::<Welford>(
    ///     "const float *x", "mk(1.0, x, 0.0)", "merge(a, b)", "mk(0.0, 0.0, 0.0)", "welford", preamble,
    /// )?
    /// .post_map("a.m2 / a.n");
    /// let ctx = Context::default()?;
    /// let x = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![1.0f32, 2.0, 3.0, 4.0]))?;
    /// assert_eq!(var.reduce([KernelArg::input(&x)])?.to_vec()?, vec![1.25]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn with_struct_accumulator<A: crate::types::repr::DeviceRepr>(
        arguments: &str,
        map: &str,
        reduce: &str,
        neutral: &str,
        c_type: &str,
        preamble: &str,
    ) -> Result<Self> {
        let (size, align) = (std::mem::size_of::<A>(), std::mem::align_of::<A>());
        let def = format!(
            "{preamble}\nstatic_assert(sizeof({c_type}) == {size} && alignof({c_type}) == {align}, \
             \"the accumulator's C type must have the size and alignment of the Rust type ({size}, {align})\");\n"
        );
        Self::with_accumulator("reduction", arguments, map, reduce, neutral, (c_type, &def, size))
    }

    /// A reduction whose accumulator is a C type of its own (defined by `acc.1`, `acc.2`
    /// bytes), as `argmax` accumulates a value and its index.
    pub(crate) fn with_accumulator(
        name: &str,
        arguments: &str,
        map: &str,
        reduce: &str,
        neutral: &str,
        acc: (&str, &str, usize),
    ) -> Result<Self> {
        let params = parse_params(name, arguments)?;
        if let Some(p) = params.iter().find(|p| p.array && p.mutable) {
            return Err(ArgumentError::ReductionOutput {
                kernel: name.into(),
                name: p.name.to_string(),
            }
            .into());
        }
        if !params.iter().any(|p| p.array) {
            return Err(no_array(name));
        }
        // CUDA's headers of the 16-bit float types the arguments and the result name.
        let acc_def = cast::headers_for(
            params
                .iter()
                .filter_map(|p| p.elem.header_dtype())
                .chain([R::DTYPE]),
        ) + acc.1;
        let mut k = ReductionKernel {
            name: name.to_owned(),
            params,
            map: map.to_owned(),
            reduce: reduce.to_owned(),
            neutral: neutral.to_owned(),
            post: "a".to_owned(),
            acc: acc.0.to_owned(),
            acc_def,
            acc_size: acc.2,
            c_order_index: codegen::mentions(map, "i"),
            in_order: None,
            key: 0,
            _out: PhantomData,
        };
        k.rekey(Some(arguments));
        Ok(k)
    }

    /// The result computed from the reduced value `a` and the count `n` (default `a`); e.g.
    /// `a / n` for a mean.
    pub fn post_map(mut self, expr: &str) -> Self {
        self.post = expr.to_owned();
        self.rekey(None);
        self
    }

    /// The combination of `a` and `b` when `b`'s elements all come after `a`'s (see the field).
    pub(crate) fn in_order(mut self, expr: &str) -> Self {
        self.in_order = Some(expr.to_owned());
        self.rekey(None);
        self
    }

    /// Hashes the definition into `key`, with `arguments` as written (`None`: the parsed
    /// parameters, once the kernel is built).
    fn rekey(&mut self, arguments: Option<&str>) {
        // The parsed parameters are formatted only when the written arguments are not given.
        let params = match arguments {
            Some(written) => std::borrow::Cow::Borrowed(written),
            None => std::borrow::Cow::Owned(format!("{:?}", self.params)),
        };
        self.key = registry::hash_parts(&[
            "reduction",
            &self.name,
            &params,
            &self.map,
            &self.reduce,
            &self.neutral,
            &self.post,
            &self.acc,
            &self.acc_def,
            self.in_order.as_deref().unwrap_or(""),
            R::c_name(),
        ]);
    }

    pub(crate) fn c_name(&self, v: ReductionVariant) -> String {
        self.with_generator(|g| g.kernel_name(v))
    }

    /// The kernel of variant `v`, from the context's cache: found by its key alone, shared
    /// (no copy of its signature) and named only when it is compiled.
    fn prepared(
        &self,
        ctx: &crate::driver::context::core::Context,
        v: ReductionVariant,
    ) -> Result<std::sync::Arc<crate::launch::PreparedFunction>> {
        let key = KernelKey {
            source: self.key,
            variant: v.code(),
        };
        registry::prepared_shared(ctx, key, || (self.c_name(v), self.source(v)))
    }

    on_legacy_stream! {
        /// Reduces over every axis into a new 0-dimensional array, on the legacy default stream.
        fn reduce['a](&self, args: impl IntoIterator<Item = KernelArg<'a>>) -> Result<DeviceArray<R, IxDyn>>;

        /// Reduces over every axis into `out`, an array of one element (of any shape), on the
        /// legacy default stream.
        fn reduce_into['a, S: StorageMut<Elem = R>, D: Dimension](
            &self,
            args: impl IntoIterator<Item = KernelArg<'a>>,
            out: &mut DeviceArrayBase<S, D>,
        ) -> Result<()>;

        /// Reduces along `axis` into a new C-order array of the other axes' shape, on the legacy
        /// default stream.
        fn reduce_axis['a](&self, args: impl IntoIterator<Item = KernelArg<'a>>, axis: usize)
            -> Result<DeviceArray<R, IxDyn>>;
    }

    /// This kernel's reductions queued on `stream`: `kernel.on(&stream).reduce(args)` (and
    /// `reduce_into`, `reduce_axis`) returns without waiting. See [`OnStream`].
    pub fn on<'a>(&'a self, stream: &'a Stream) -> OnStream<'a, &'a Self> {
        OnStream::new(self, Some(stream))
    }
}

/// The reductions on a stream: `kernel.on(&stream).reduce(args)`.
impl<R: Element> OnStream<'_, &ReductionKernel<R>> {
    /// [`reduce`](ReductionKernel::reduce) on this stream; returns without waiting.
    pub fn reduce<'a>(&self, args: impl IntoIterator<Item = KernelArg<'a>>) -> Result<DeviceArray<R, IxDyn>> {
        let (k, args) = (self.target, args.into_iter().collect::<Vec<_>>());
        let ctx = first_context(&args).ok_or_else(|| no_array(&k.name))?;
        let mut out = DeviceArray::<R, IxDyn>::empty(&ctx, IxDyn(&[]))?;
        self.reduce_into(args, &mut out)?;
        Ok(out)
    }

    /// [`reduce_into`](ReductionKernel::reduce_into) on this stream; returns without waiting.
    pub fn reduce_into<'a, S: StorageMut<Elem = R>, D: Dimension>(
        &self,
        args: impl IntoIterator<Item = KernelArg<'a>>,
        out: &mut DeviceArrayBase<S, D>,
    ) -> Result<()> {
        let (k, stream, args) = (self.target, self.stream, args.into_iter().collect::<Vec<_>>());
        if out.len() != 1 {
            return Err(ArrayShapeError::ResultNotScalar {
                shape: out.shape().to_vec(),
            }
            .into());
        }
        let shape = check_args(&k.name, &k.params, &args)?.to_vec();
        let n = shape.iter().product::<usize>();
        let ctx = first_context(&args).ok_or_else(|| no_array(&k.name))?;
        let arrays: Vec<(bool, bool, bool)> = arrays(&args)
            .map(|x| {
                (
                    layout::is_c_contiguous(x.shape(), x.strides()),
                    layout::is_f_contiguous(x.shape(), x.strides()),
                    x.addr % codegen::vec4_align(x.elem.size()) == 0,
                )
            })
            .collect();
        let contiguous = arrays.iter().all(|a| a.0) || (!k.c_order_index && arrays.iter().all(|a| a.1));
        let vec = contiguous && arrays.iter().all(|a| a.2);
        let v = if contiguous {
            ReductionVariant::Contiguous
        } else {
            ReductionVariant::Strided(shape.len())
        };
        let work = if vec { n / 4 } else { n };
        // One launch: the last block to finish reduces the blocks' partials (see `source`),
        // so there is no second kernel, no scratch allocation and no second lookup; an empty
        // reduction is one block that stores the neutral's `post_map`.
        let parts = if n == 0 {
            1
        } else {
            one_pass_grid(&ctx, work as u64)?
        };
        let f = k.prepared(&ctx, v)?;
        let out_o = out.offset() as i64;
        let mut list: Vec<Arg<'_>> = Vec::with_capacity(4 + 2 * args.len() + 3 * shape.len() * args.len());
        list.push(Arg::I64(n as i64));
        if contiguous {
            list.push(Arg::I32(vec as i32));
        }
        list.push(Arg::output(&mut out.data));
        list.push(Arg::I64(out_o));
        push_args(&mut list, args, (!contiguous).then_some((&shape[..], None)));
        registry::launch(&f, parts, BLOCK, stream, &list)
    }

    /// [`reduce_axis`](ReductionKernel::reduce_axis) on this stream; returns without waiting.
    pub fn reduce_axis<'a>(
        &self,
        args: impl IntoIterator<Item = KernelArg<'a>>,
        axis: usize,
    ) -> Result<DeviceArray<R, IxDyn>> {
        let (k, stream, args) = (self.target, self.stream, args.into_iter().collect::<Vec<_>>());
        let shape = check_args(&k.name, &k.params, &args)?.to_vec();
        if axis >= shape.len() {
            return Err(ArrayShapeError::AxisOutOfRange {
                axis,
                axes: shape.len(),
            }
            .into());
        }
        let ctx = first_context(&args).ok_or_else(|| no_array(&k.name))?;
        let m = shape[axis];
        let outer: Vec<usize> = shape
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != axis)
            .map(|(_, &d)| d)
            .collect();
        let nout: usize = outer.iter().product();
        let mut out = DeviceArray::<R, IxDyn>::empty(&ctx, IxDyn(&outer))?;
        if nout == 0 {
            return Ok(out);
        }
        let d = shape.len();
        // Columns: enough chunks of the axis for four waves of blocks of one lane per thread
        // (so that the last, partial wave is a small share of the time), each chunk at least
        // `MIN_CHUNK` rows, and the partials (written, then read again) at most 1/32 of the
        // bytes read: a wide accumulator (argmax's 16 bytes for 4-byte elements) gets fewer,
        // longer chunks. With four adjacent lanes per thread where the layout allows it (see
        // `columns_vectorizable`) the chunks are the same, in a quarter of the blocks, each
        // thread with four times the bytes in flight: more chunks would only add partials.
        let col_vec = m >= SHORT_AXIS && lanes_adjacent(&args, axis) && columns_vectorizable(&args, axis);
        let lane_blocks = nout.div_ceil(BLOCK as usize);
        let cblocks = if col_vec {
            nout.div_ceil(4 * BLOCK as usize)
        } else {
            lane_blocks
        };
        let wave = registry::sm_count(&ctx)? as usize * 8;
        let element_bytes: usize = arrays(&args).map(|x| x.elem.size()).sum();
        let partial_cap = (m * element_bytes) / (32 * k.acc_size.max(1));
        // With four lanes a thread, about three blocks a multiprocessor (eight rows of 16-byte
        // loads in flight per thread): on an H100, 8192x8192 `f32`, the column sums and
        // maxima ran at 0.92-0.94x the copy floor with 32 to 64 chunks against 0.90-0.91x with
        // 96 and 0.86-0.87x with 24, and argmax (by `in_order`) at 0.82-0.83x with 32 to 48,
        // 0.73x with 96 (2026-11-26, the kernels this module generates).
        let target = if col_vec {
            (3 * wave / 8).div_ceil(cblocks)
        } else {
            (4 * wave).div_ceil(lane_blocks)
        };
        let chunks = target.clamp(1, m.div_ceil(MIN_CHUNK).min(partial_cap).max(1));
        let chunk = m.div_ceil(chunks.max(1)).max(1);
        let chunks = m.div_ceil(chunk);
        let columns = m >= SHORT_AXIS
            && lanes_adjacent(&args, axis)
            && u32::try_from(cblocks * chunks).is_ok()
            && i32::try_from(chunks).is_ok();
        // Fewer long lanes than two waves of blocks (and not columns): each lane split into
        // chunks of at least `SPLIT_CHUNK` elements, a block per lane and chunk, so that every
        // multiprocessor has work.
        let split_chunks = if columns || m < SHORT_AXIS {
            1
        } else {
            (2 * wave).div_ceil(nout).clamp(1, m.div_ceil(SPLIT_CHUNK).max(1))
        };
        let split_chunk = m.div_ceil(split_chunks).max(1);
        let split_chunks = m.div_ceil(split_chunk);
        let split = split_chunks > 1
            && u32::try_from(nout * split_chunks).is_ok()
            && i32::try_from(split_chunks).is_ok();
        let (chunk, chunks) = if split {
            (split_chunk, split_chunks)
        } else {
            (chunk, chunks)
        };
        let partials = columns || split;
        let v = if columns {
            ReductionVariant::AxisColumns(d)
        } else if split {
            ReductionVariant::AxisBlockSplit(d)
        } else if m < SHORT_AXIS {
            ReductionVariant::AxisThread(d)
        } else {
            ReductionVariant::AxisBlock(d)
        };
        let f = k.prepared(&ctx, v)?;
        let mut part =
            ctx.device_pool()?
                .alloc::<u8>(if partials { chunks * nout * k.acc_size } else { 1 })?;
        let mut list: Vec<Arg<'_>> = vec![Arg::I64(m as i64), Arg::I64(nout as i64)];
        if columns {
            list.extend([
                Arg::I64(chunk as i64),
                Arg::I64(cblocks as i64),
                Arg::output(&mut part),
                Arg::I32(col_vec as i32),
            ]);
        } else if split {
            list.extend([Arg::I64(chunk as i64), Arg::output(&mut part)]);
        } else {
            list.push(Arg::output(&mut out.data));
            if let ReductionVariant::AxisBlock(_) = v {
                list.push(Arg::I32(lanes_vectorizable(&args, axis) as i32));
            }
        }
        push_args(&mut list, args, Some((&outer[..], Some(axis))));
        let grid = match v {
            ReductionVariant::AxisThread(_) => registry::grid_for(&ctx, nout as u64)?,
            // Fits: checked when the variant was chosen.
            ReductionVariant::AxisColumns(_) => (cblocks * chunks) as u32,
            ReductionVariant::AxisBlockSplit(_) => (nout * chunks) as u32,
            _ => nout.min(1 << 20) as u32,
        };
        registry::launch(&f, grid, BLOCK, stream, &list)?;
        if partials {
            drop(list);
            let f = k.prepared(&ctx, ReductionVariant::AxisPartials)?;
            let list = [
                Arg::I64(m as i64),
                Arg::I64(nout as i64),
                Arg::I32(chunks as i32),
                Arg::input(&part),
                Arg::output(&mut out.data),
            ];
            let grid = registry::grid_for(&ctx, nout as u64)?;
            registry::launch(&f, grid, BLOCK, stream, &list)?;
        }
        Ok(out)
    }
}

/// The blocks of a one-pass reduction over all axes of `work` items (a thread's loads):
/// `registry::grid_for`'s grid, up to [`MAX_PARTS`], for large arrays; for small ones, fewer
/// blocks, each thread taking at least `LOADS_PER_THREAD` items, but never fewer than two a
/// multiprocessor. A block per 256 items (one load a thread) put a block reduction and a
/// ticket behind every 4 KiB: in a CUDA C model of this kernel on an H200, a sum of 2^20 f32
/// took 9.0 us alone (6.2 us a sum queued back to back) that way, 7.7 us (4.8) with 264 blocks,
/// warp shuffles and the acquire-release ticket.
fn one_pass_grid(ctx: &crate::driver::context::core::Context, work: u64) -> Result<u32> {
    const LOADS_PER_THREAD: u64 = 8;
    // One lookup of the multiprocessor count per launch.
    let sms = registry::sm_count(ctx)?;
    let usual = registry::grid_for_sms(sms, work).min(MAX_PARTS);
    let floor = 2 * sms;
    let small = work
        .div_ceil(u64::from(BLOCK) * LOADS_PER_THREAD)
        .max(u64::from(floor));
    Ok(usual.min(small.min(u64::from(u32::MAX)) as u32).max(1))
}

/// Pushes `args` onto `list`, an array as its memory and the index of its first element; then,
/// with a `layout` (a shape, and an axis or none), the shape, the arrays' strides but those of
/// the axis, and the arrays' strides along the axis.
fn push_args<'a>(
    list: &mut Vec<Arg<'a>>,
    args: Vec<KernelArg<'a>>,
    layout: Option<(&[usize], Option<usize>)>,
) {
    let (mut strides, mut along) = (Vec::new(), Vec::new());
    for a in args {
        match a.0 {
            ArgKind::Scalar(x, _) => list.push(x),
            ArgKind::Array(x) => {
                if let Some((_, axis)) = layout {
                    for (k, &s) in x.strides().iter().enumerate() {
                        let to = if Some(k) == axis { &mut along } else { &mut strides };
                        to.push(Arg::I64(s as i64));
                    }
                }
                list.extend([x.arg, Arg::I64(x.offset as i64)]);
            }
        }
    }
    if let Some((shape, _)) = layout {
        list.extend(shape.iter().map(|&d| Arg::I64(d as i64)));
        list.append(&mut strides);
        list.append(&mut along);
    }
}

/// Whether every lane along `axis` of every array is contiguous and starts aligned for
/// `gpu_vec4` loads: unit stride along the axis, the first element aligned, and the other
/// strides multiples of the alignment, so that the start of every lane is aligned too.
fn lanes_vectorizable(args: &[KernelArg<'_>], axis: usize) -> bool {
    arrays(args).all(|x| x.strides()[axis] == 1 && vec4_aligned_but(x, axis))
}

/// Whether `x`'s first element is aligned for `gpu_vec4` loads and every stride but that of
/// axis `unit` (of length above 1) keeps it aligned.
fn vec4_aligned_but(x: &ArrayArg<'_>, unit: usize) -> bool {
    let (size, align) = (x.elem.size() as u64, codegen::vec4_align(x.elem.size()));
    let mut others = x.strides().iter().zip(x.shape()).enumerate();
    x.addr.is_multiple_of(align)
        && others.all(|(k, (&s, &d))| {
            k == unit || d <= 1 || (s.unsigned_abs() as u64 * size).is_multiple_of(align)
        })
}

/// The array arguments of `args`.
fn arrays<'b>(args: &'b [KernelArg<'_>]) -> impl Iterator<Item = &'b ArrayArg<'b>> {
    args.iter().filter_map(|a| match &a.0 {
        ArgKind::Array(x) => Some(x),
        ArgKind::Scalar(..) => None,
    })
}

/// Whether a column reduction along `axis` (lanes adjacent: see [`lanes_adjacent`]) may give
/// each thread four adjacent lanes read with one `gpu_vec4` load per row: in every array the
/// last axis other than `axis` has unit stride and a length that is a multiple of four (so four
/// adjacent outputs, starting at a multiple of four, are four adjacent elements of one row),
/// the first element is aligned for `gpu_vec4`, and every other stride keeps it aligned.
fn columns_vectorizable(args: &[KernelArg<'_>], axis: usize) -> bool {
    arrays(args).all(|x| {
        // Complex elements keep the one-lane path (the 4-lane loads are of real types).
        if x.elem.is_complex() {
            return false;
        }
        let Some(inner) = (0..x.strides().len()).rev().find(|&k| k != axis) else {
            return false;
        };
        x.strides()[inner] == 1 && x.shape()[inner].is_multiple_of(4) && vec4_aligned_but(x, inner)
    })
}

/// Whether the lanes of a reduction along `axis` are adjacent in memory: the last other axis
/// has unit stride in every array (a column reduction of a C-order matrix, a row reduction of
/// a Fortran one), so that adjacent threads, one per lane, read adjacent elements.
fn lanes_adjacent(args: &[KernelArg<'_>], axis: usize) -> bool {
    arrays(args).all(|x| {
        let st = x.strides();
        match (0..st.len()).rev().find(|&k| k != axis) {
            Some(k) => st[k].unsigned_abs() == 1 && st[axis].unsigned_abs() != 1,
            None => false,
        }
    })
}

/// Arguments without an array: `check_args` refuses them first, so this is for the paths that
/// look for the context before checking.
fn no_array(kernel: &str) -> crate::error::Error {
    ArgumentError::NoArray {
        kernel: kernel.into(),
        needs: "a reduction",
    }
    .into()
}
