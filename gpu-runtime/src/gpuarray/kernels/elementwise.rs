//! [`ElementwiseKernel`]: a kernel written as one operation on elements (PyCUDA's and CuPy's
//! `ElementwiseKernel`), generated, compiled once per context, and launched over arrays of any
//! layout, broadcast together by NumPy's rules.
//!
//! Two forms of operation are accepted (see [`ElementwiseKernel::new`]):
//! - element-bound (CuPy's): arrays are named in the operation as their elements: with
//!   `float *z, const float *x`, the operation `z = 2 * x` writes each element of `z`;
//! - indexed (PyCUDA's): `z[i] = 2 * x[i]`, every array a pointer to its first element.
//!
//! In both, `i` is the element's flat index in C order and `n` the number of elements.
//!
//! The arrays a kernel reads are broadcast to one shape ([`broadcast_shapes`]: stride 0 on the
//! broadcast axes, no copy); the arrays it writes must have that shape. Then one of the
//! variants generated from the operation runs, each compiled on first use in a context:
//! - contiguous (every array contiguous in C order, or every one in Fortran order when the
//!   operation does not use `i`): a grid-stride loop over four elements at a time with
//!   aligned vector loads and stores (`gpu_vec4`) when every array's first element is
//!   aligned, and a scalar tail;
//! - strided (any other layout: steps, transposes, reversed axes, broadcasts), one per number
//!   of axes after merging the axes every array walks as one (`layout::coalesce`): the
//!   storage index of each array is computed from the shape and its strides, passed as
//!   arguments; when the last axis is long, rows of it are walked in tiles, so that the
//!   index arithmetic of the other axes is paid once per tile;
//! - indexed, for PyCUDA's form: one grid-stride loop over `i`, for arrays contiguous in C
//!   order of one shape (others are an error, not a wrong read).
//!
//! [`broadcast_shapes`]: crate::gpuarray::broadcast_shapes

use gpu_cuda_source::elementwise::{Elementwise, Param as CParam};

use crate::driver::stream::Stream;
use crate::error::{ArgumentError, Error, Result};
use crate::gpuarray::array::layout;
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::cast;
use crate::gpuarray::kernels::args::{check_args, parse_params, ArgKind, KernelArg, Param};
use crate::gpuarray::kernels::broadcast::broadcast_args;
use crate::gpuarray::kernels::codegen;
use crate::gpuarray::kernels::registry::{self, KernelKey, BLOCK};
use crate::launch::Arg;

/// Which kernel of an [`ElementwiseKernel`] runs: see the module documentation. The source of
/// each is written by `gpu_cuda_source::elementwise`.
pub use gpu_cuda_source::elementwise::Variant;

/// The variant's part of a kernel's cache key.
fn variant_code(variant: Variant) -> u32 {
    match variant {
        Variant::Contiguous => 0,
        Variant::Strided(d) => 1 + d as u32,
        Variant::Indexed => 100,
    }
}

/// How a launch passes one parameter, against its declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Launched {
    /// As declared.
    AsDeclared,
    /// An array declared written (`T *`), passed to be read: compiled `const`.
    ReadOnly,
    /// A scalar passed as a 0-d device array: read on the device.
    DeviceScalar,
}

/// The last axis' length from which the strided variant walks rows in tiles: shorter rows
/// would leave most of a block's threads without an element.
const ROWS_FROM: usize = 256;

/// The most elements of a row one tile holds: 8 per thread of a block, enough to pay for the
/// index arithmetic of the other axes, few enough that short rows still fill the device.
const TILE: usize = 8 * BLOCK as usize;

/// An operation on the elements of arrays, as a kernel (PyCUDA's `ElementwiseKernel(arguments,
/// operation)`).
///
/// ```no_run
/// use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
/// use gpu_runtime::{ndarray::Array2, Context};
/// let ctx = Context::default()?;
/// let axpy = ElementwiseKernel::new("float a, const float *x, const float *y, float *z", "z = a * x + y")?;
/// let x = DeviceArray::from_ndarray(&ctx, &Array2::<f32>::ones((3, 4)))?;
/// let y = DeviceArray::from_ndarray(&ctx, &Array2::<f32>::ones((4, 3)))?;
/// let mut z = DeviceArray::<f32, _>::zeros(&ctx, (3, 4))?;
/// // `y.t()` is a transposed view: the strided variant runs.
/// axpy.launch([KernelArg::scalar(2.0f32), KernelArg::input(&x), KernelArg::input(&y.t()), KernelArg::output(&mut z)])?;
/// assert_eq!(z.to_ndarray()?[[2, 1]], 3.0);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
///
/// PyCUDA's form, with PyCUDA's `preamble`, `loop_prep` and `after_loop`:
///
/// ```no_run
/// use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
/// use gpu_runtime::{ndarray::Array1, Context};
/// let ctx = Context::default()?;
/// let lin = ElementwiseKernel::with_name(
///     "lin_comb",
///     "float a, const float *x, float b, const float *y, float *z",
///     "z[i] = my_f(a * x[i], b * y[i]) + c",
/// )?
/// .preamble("__device__ float my_f(float p, float q) { return p + q; }")
/// .loop_prep("float c = 0.5f;");
/// let x = DeviceArray::from_ndarray(&ctx, &Array1::<f32>::ones(1000))?;
/// let y = DeviceArray::from_ndarray(&ctx, &Array1::<f32>::ones(1000))?;
/// let mut z = DeviceArray::<f32, _>::zeros(&ctx, 1000)?;
/// lin.launch([2.0f32.into(), KernelArg::input(&x), 3.0f32.into(), KernelArg::input(&y), KernelArg::output(&mut z)])?;
/// assert_eq!(z.to_ndarray()?[7], 5.5);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ElementwiseKernel {
    name: String,
    arguments: String,
    params: Vec<Param>,
    operation: String,
    preamble: String,
    loop_prep: String,
    after_loop: String,
    /// The operation uses `i`, the flat index in C order: Fortran-contiguous arrays then take
    /// the strided path (the contiguous one counts in storage order).
    c_order_index: bool,
    /// PyCUDA's indexed form (`x[i]`): arrays are pointers, only the indexed variant runs.
    indexed: bool,
    /// The compiler options (PyCUDA's `options=`); `None` for the defaults.
    options: Option<Vec<String>>,
    pub(crate) key: u64,
}

impl ElementwiseKernel {
    /// A kernel named `elementwise`; see [`with_name`](Self::with_name).
    pub fn new(arguments: &str, operation: &str) -> Result<Self> {
        Self::with_name("elementwise", arguments, operation)
    }

    /// A kernel from its C `arguments` (scalars of the element types, `const T *` for arrays
    /// it reads, `T *` for arrays it writes) and its `operation`. The arguments are read here;
    /// the operation is compiled on the first launch in each context (or by compiling
    /// [`source`](Self::source) with a [`SourceModule`](crate::SourceModule), which needs no
    /// GPU), and a CUDA error in it is an [`Error::Compile`](crate::Error::Compile) then.
    ///
    /// The operation is in one of two forms, told apart by its text:
    /// - **indexed** (PyCUDA's), when some array argument's name is followed by `[`
    ///   (`"z[i] = a*x[i] + b*y[i]"`): each array is a pointer to its first element, which
    ///   the operation indexes itself (pointer arithmetic included), with `i` the index of
    ///   the loop and `n` the number of elements. Every array must be contiguous in C order
    ///   and of one shape (a view that is not is an
    ///   [`ArgumentError::IndexedNotContiguous`], not a wrong read); nothing is broadcast.
    /// - **element-bound** (CuPy's) otherwise (`"z = a*x + b*y"`): each array name is its
    ///   element at the index being computed, and arrays of any layout are broadcast
    ///   together by NumPy's rules ([`launch`](Self::launch)).
    ///
    /// PyCUDA's `ElementwiseKernel(arguments, operation, name, preamble=, loop_prep=,
    /// after_loop=)` is `ElementwiseKernel::with_name(name, arguments, operation)` with
    /// [`preamble`](Self::preamble), [`loop_prep`](Self::loop_prep) and
    /// [`after_loop`](Self::after_loop).
    pub fn with_name(name: &str, arguments: &str, operation: &str) -> Result<Self> {
        if !codegen::is_ident(name) {
            return Err(ArgumentError::NotAnIdentifier { kernel: name.into() }.into());
        }
        let params = parse_params(name, arguments)?;
        if !params.iter().any(|p| p.array) {
            return Err(ArgumentError::NoArray {
                kernel: name.into(),
                needs: "an elementwise kernel",
            }
            .into());
        }
        // CUDA's headers of the 16-bit float types the arguments name.
        let preamble = cast::headers_for(params.iter().filter_map(|p| p.elem.header_dtype()));
        let indexed = gpu_cuda_source::elementwise::is_indexed(&codegen::c_params(&params), operation);
        let mut k = ElementwiseKernel {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            params,
            operation: operation.to_owned(),
            preamble,
            loop_prep: String::new(),
            after_loop: String::new(),
            c_order_index: codegen::mentions(operation, "i"),
            indexed,
            options: None,
            key: 0,
        };
        k.rekey();
        Ok(k)
    }

    /// Compiles with these compiler options (PyCUDA's `ElementwiseKernel(..., options=)`,
    /// e.g. `["-use_fast_math"]`) in place of the defaults (`GPU_RUNTIME_DEFAULT_NVRTC_FLAGS`,
    /// as [`SourceModule::options`](crate::SourceModule::options) says). A kernel with other
    /// options is another kernel: each is compiled and cached on its own.
    pub fn options<S: AsRef<str>>(mut self, options: &[S]) -> Self {
        self.options = Some(options.iter().map(|o| o.as_ref().to_owned()).collect());
        self.rekey();
        self
    }

    /// C code placed before the kernel: helper functions, `#include`s (PyCUDA's `preamble`).
    pub fn preamble(mut self, code: &str) -> Self {
        self.preamble = cast::headers_for(self.params.iter().filter_map(|p| p.elem.header_dtype())) + code;
        self.rekey();
        self
    }

    /// C statements each thread runs once before its loop over elements (PyCUDA's
    /// `loop_prep`): locals declared here are in scope in the operation.
    pub fn loop_prep(mut self, code: &str) -> Self {
        self.loop_prep = code.to_owned();
        self.rekey();
        self
    }

    /// C statements each thread runs once after its loop over elements (PyCUDA's
    /// `after_loop`); in the indexed form `i` is where the thread's loop stopped.
    pub fn after_loop(mut self, code: &str) -> Self {
        self.after_loop = code.to_owned();
        self.rekey();
        self
    }

    /// True when the operation is in PyCUDA's indexed form (see [`with_name`](Self::with_name)).
    pub fn is_indexed(&self) -> bool {
        self.indexed
    }

    fn rekey(&mut self) {
        self.key = registry::hash_parts(&[
            "elementwise",
            &self.name,
            &self.arguments,
            &self.operation,
            &self.preamble,
            &self.loop_prep,
            &self.after_loop,
            &self
                .options
                .as_ref()
                .map_or(String::new(), |o| format!("options {o:?}")),
        ]);
    }

    /// The generator's description of this kernel, over `params` (its parameters as
    /// [`codegen::c_params`] gives them).
    fn generator<'a>(&'a self, params: &'a [CParam<'a>]) -> Elementwise<'a> {
        Elementwise {
            name: &self.name,
            params,
            operation: &self.operation,
            preamble: &self.preamble,
            loop_prep: &self.loop_prep,
            after_loop: &self.after_loop,
        }
    }

    /// The C name of the kernel of `variant`.
    fn c_name(&self, variant: Variant) -> String {
        self.generator(&[]).kernel_name(variant)
    }

    /// Every variant a launch of this kernel may compile: [`Variant::Indexed`] alone for the
    /// indexed form, else the contiguous and the strided ones.
    pub fn variants(&self) -> Vec<Variant> {
        if self.indexed {
            vec![Variant::Indexed]
        } else {
            Variant::all().collect()
        }
    }

    /// The CUDA C source of one variant, as it is compiled (with `no_extern_c`): the text
    /// `gpu_cuda_source::elementwise` writes, which the `#[elementwise]` macro checks at build time.
    pub fn source(&self, variant: Variant) -> String {
        let params = codegen::c_params(&self.params);
        self.generator(&params).source(&[variant])
    }

    /// Runs the operation on every element, on the legacy default stream. `args` are one per
    /// declared argument, in order: [`KernelArg::scalar`] (or a plain number, through `From`),
    /// [`KernelArg::input`], [`KernelArg::output`]. Empty arrays launch nothing.
    ///
    /// The arrays are broadcast together by NumPy's rules (0-d arrays, `(n, 1)` with `(1, m)`,
    /// fewer axes on one side): the arrays read are seen in the broadcast shape with stride 0
    /// on the broadcast axes; the arrays written must have it (an
    /// [`ArrayShapeError::OutputShape`](crate::ArrayShapeError::OutputShape) otherwise, as
    /// NumPy's `out=`), and must not overlap themselves. Shapes that do not broadcast are an
    /// [`ArrayShapeError::Broadcast`](crate::ArrayShapeError::Broadcast) naming them. In the
    /// indexed form nothing is broadcast: every array has one shape, contiguous in C order.
    ///
    /// As PyCUDA's users write them: an array declared `T *` may be passed with
    /// [`KernelArg::input`], and is then declared `const T *` in the kernel compiled for the
    /// launch (an operation that writes it does not compile:
    /// [`ArgumentError::WrittenThroughInput`]); in the indexed form a scalar parameter may be
    /// given a 0-d device array of its type, read on the device before the loop.
    pub fn launch<'a>(&self, args: impl IntoIterator<Item = KernelArg<'a>>) -> Result<()> {
        self.run(None, args.into_iter().collect())
    }

    /// This kernel's launches queued on `stream`: `kernel.on(&stream).launch(args)` returns
    /// without waiting; arrays used on other streams are ordered with it as every launch of
    /// this crate orders them. See [`OnStream`].
    pub fn on<'a>(&'a self, stream: &'a Stream) -> OnStream<'a, &'a Self> {
        OnStream::new(self, Some(stream))
    }

    /// How the launch's `args` differ from the declaration in one of PyCUDA's ways, one
    /// [`Launched`] per parameter, or `None` when they match it (the common case: a loop over
    /// the arguments, nothing allocated):
    /// - an array declared `T *` passed with [`KernelArg::input`]: declared `const T *` in
    ///   the kernel compiled for this launch, so that it cannot write memory it was only lent
    ///   to read (an operation that writes it fails to compile:
    ///   [`ArgumentError::WrittenThroughInput`]);
    /// - in the indexed form, a scalar given a 0-d device array of its type: the kernel takes
    ///   a pointer in its place and reads the value on the device before its loop, into a
    ///   local of the scalar's name (no host round trip).
    fn launched_as(&self, args: &[KernelArg<'_>]) -> Option<Vec<Launched>> {
        if args.len() != self.params.len() {
            return None;
        }
        let each = |p: &Param, a: &KernelArg<'_>| match &a.0 {
            ArgKind::Array(x) if x.elem == p.elem && p.array && p.mutable && !x.mutable => Launched::ReadOnly,
            ArgKind::Array(x) if x.elem == p.elem && !p.array && self.indexed && x.ndim == 0 => {
                Launched::DeviceScalar
            }
            _ => Launched::AsDeclared,
        };
        if self
            .params
            .iter()
            .zip(args)
            .all(|(p, a)| each(p, a) == Launched::AsDeclared)
        {
            return None;
        }
        Some(self.params.iter().zip(args).map(|(p, a)| each(p, a)).collect())
    }

    /// This kernel with its parameters launched as `how` says ([`launched_as`](Self::launched_as)):
    /// a kernel of its own in the cache (keyed by this one's key and `how`), and the names of
    /// the arrays made read-only.
    fn adjusted(&self, how: &[Launched]) -> (ElementwiseKernel, Vec<String>) {
        let mut k = self.clone();
        let (mut marks, mut read_only, mut reads) = (String::new(), Vec::new(), String::new());
        for (p, how) in k.params.iter_mut().zip(how) {
            match how {
                Launched::AsDeclared => marks.push('.'),
                Launched::ReadOnly => {
                    marks.push('c');
                    p.mutable = false;
                    read_only.push(p.name.clone());
                }
                Launched::DeviceScalar => {
                    marks.push('s');
                    // The scalar's value, read through the pointer before the loop, under its
                    // own name (a local the operation may change, as the by-value parameter).
                    let pointer = format!("gpu_scalar_{}", p.name);
                    reads.push_str(&format!(
                        "{t} {n} = {pointer}__p[{pointer}__o];\n",
                        t = p.elem.c_name(),
                        n = p.name
                    ));
                    p.name = pointer;
                    p.array = true;
                    p.mutable = false;
                    p.device_scalar = true;
                }
            }
        }
        k.loop_prep = reads + &self.loop_prep;
        k.key = registry::hash_parts(&["elementwise launched as", &self.key.to_string(), &marks]);
        (k, read_only)
    }

    fn run(&self, stream: Option<&Stream>, args: Vec<KernelArg<'_>>) -> Result<()> {
        let Some(how) = self.launched_as(&args) else {
            return self.run_declared(stream, args);
        };
        let (k, read_only) = self.adjusted(&how);
        k.run_declared(stream, args).map_err(|e| match e {
            Error::Compile(_) if !read_only.is_empty() => ArgumentError::WrittenThroughInput {
                kernel: self.name.as_str().into(),
                names: read_only
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                source: Box::new(e),
            }
            .into(),
            e => e,
        })
    }

    fn run_declared(&self, stream: Option<&Stream>, mut args: Vec<KernelArg<'_>>) -> Result<()> {
        if self.indexed {
            return self.run_indexed(stream, args);
        }
        let shape = broadcast_args(&self.name, &self.params, &mut args)?;
        let n = shape.iter().product::<usize>();
        if n == 0 {
            return Ok(());
        }
        let arrays = || {
            args.iter().filter_map(|a| match &a.0 {
                ArgKind::Array(x) => Some(x),
                ArgKind::Scalar(..) => None,
            })
        };
        let all_c = arrays().all(|x| layout::is_c_contiguous(x.shape(), x.strides()));
        let all_f = arrays().all(|x| layout::is_f_contiguous(x.shape(), x.strides()));
        let contiguous = all_c || (all_f && !self.c_order_index);
        let vec = contiguous && arrays().all(|x| x.addr % codegen::vec4_align(x.elem.size()) == 0);
        // The strided variant's layout: the fewest axes that every array walks in C order.
        let (dims, strides) = if contiguous {
            (Vec::new(), Vec::new())
        } else {
            let each: Vec<&[isize]> = arrays().map(|x| x.strides()).collect();
            layout::coalesce(&shape, &each)
        };
        let variant = if contiguous {
            Variant::Contiguous
        } else {
            Variant::Strided(dims.len())
        };
        let Some(ctx) = first_context(&args) else {
            return Ok(());
        };
        let key = KernelKey {
            source: self.key,
            variant: variant_code(variant),
        };
        // Named and written only when compiled; the kernel shared, not copied, per launch.
        let f = registry::prepared_shared_with(&ctx, key, self.options.as_deref(), || {
            (self.c_name(variant), self.source(variant))
        })?;
        let mut list: Vec<Arg<'_>> = Vec::with_capacity(2 + 2 * args.len() + 9 * dims.len());
        list.push(Arg::I64(n as i64));
        let work = match variant {
            Variant::Contiguous => {
                list.push(Arg::I32(vec as i32));
                if vec {
                    n / 4
                } else {
                    n
                }
            }
            _ => {
                let (chunk, tiles) = row_tiles(&dims);
                let aligned: Vec<bool> = arrays()
                    .map(|x| x.addr.is_multiple_of(codegen::vec4_align(x.elem.size())))
                    .collect();
                let row_vec = chunk != 0 && vector_rows(&dims, &strides, &aligned);
                // Vectors of four never straddle a tile: its length is a multiple of four
                // (at most the row's, itself one); fewer tiles than `tiles` may result, which
                // the kernel's loop over tiles allows.
                let chunk = if row_vec { chunk.next_multiple_of(4) } else { chunk };
                list.push(Arg::I64(chunk as i64));
                list.push(Arg::I32(row_vec as i32));
                // Rows: one block per tile at a time, so as many "items" as tiles of a block.
                if chunk == 0 {
                    n
                } else {
                    tiles * BLOCK as usize
                }
            }
        };
        push_args(&mut list, args);
        if let Variant::Strided(_) = variant {
            list.extend(dims.iter().map(|&d| Arg::I64(d as i64)));
            list.extend(strides.iter().flatten().map(|&s| Arg::I64(s as i64)));
        }
        let grid = registry::grid_for(&ctx, work as u64)?;
        registry::launch(&f, grid, BLOCK, stream, &list)
    }

    /// PyCUDA's indexed form: arrays of one shape, each contiguous in C order, as pointers.
    fn run_indexed(&self, stream: Option<&Stream>, args: Vec<KernelArg<'_>>) -> Result<()> {
        let n = check_args(&self.name, &self.params, &args)?
            .iter()
            .product::<usize>();
        for (p, a) in self.params.iter().zip(&args) {
            if let ArgKind::Array(x) = &a.0 {
                if !layout::is_c_contiguous(x.shape(), x.strides()) {
                    return Err(ArgumentError::IndexedNotContiguous {
                        kernel: self.name.as_str().into(),
                        name: p.name.clone(),
                        shape: x.shape().to_vec(),
                        strides: x.strides().to_vec(),
                    }
                    .into());
                }
            }
        }
        if n == 0 {
            return Ok(());
        }
        let Some(ctx) = first_context(&args) else {
            return Ok(());
        };
        let key = KernelKey {
            source: self.key,
            variant: variant_code(Variant::Indexed),
        };
        let f = registry::prepared_shared_with(&ctx, key, self.options.as_deref(), || {
            (self.c_name(Variant::Indexed), self.source(Variant::Indexed))
        })?;
        let mut list: Vec<Arg<'_>> = Vec::with_capacity(1 + 2 * args.len());
        list.push(Arg::I64(n as i64));
        push_args(&mut list, args);
        let grid = registry::grid_for(&ctx, n as u64)?;
        registry::launch(&f, grid, BLOCK, stream, &list)
    }
}

impl OnStream<'_, &ElementwiseKernel> {
    /// [`launch`](ElementwiseKernel::launch) on this stream; returns without waiting.
    pub fn launch<'a>(&self, args: impl IntoIterator<Item = KernelArg<'a>>) -> Result<()> {
        self.target.run(self.stream, args.into_iter().collect())
    }
}

/// How the strided variant walks a layout of `dims` (coalesced): `(chunk, tiles)`, the
/// elements of a row per tile and the number of tiles, or `(0, 0)` for the flat loop (one
/// axis, or a last axis too short for rows).
fn row_tiles(dims: &[usize]) -> (usize, usize) {
    let Some((&inner, outer)) = dims.split_last() else {
        return (0, 0);
    };
    if outer.is_empty() || inner < ROWS_FROM {
        return (0, 0);
    }
    let per_row = inner.div_ceil(TILE);
    let chunk = inner.div_ceil(per_row);
    (chunk, outer.iter().product::<usize>() * per_row)
}

/// True when the strided variant's row tiles may move four elements at a time as vectors
/// (its `gpu_vec`): the rows' length is a multiple of four, and each array either is
/// broadcast along the last axis (stride 0) or walks it with stride 1 from rows that start
/// aligned for `gpu_vec4` (its first element aligned, `aligned`, and its other strides
/// multiples of four elements). `strides` holds each array's strides over `dims`.
fn vector_rows(dims: &[usize], strides: &[Vec<isize>], aligned: &[bool]) -> bool {
    let Some((&inner, _)) = dims.split_last() else {
        return false;
    };
    inner.is_multiple_of(4)
        && strides
            .iter()
            .zip(aligned)
            .all(|(s, &aligned)| match s.split_last() {
                Some((0, _)) => true,
                Some((1, outer)) => aligned && outer.iter().all(|o| o % 4 == 0),
                _ => false,
            })
}

/// The context of the first array (every array's context is checked by the launch).
pub(crate) fn first_context(args: &[KernelArg<'_>]) -> Option<crate::driver::context::core::Context> {
    args.iter().find_map(|a| match &a.0 {
        ArgKind::Array(x) => Some(x.ctx.clone()),
        ArgKind::Scalar(..) => None,
    })
}

/// Appends the kernel's arguments: each scalar as itself, each array as its pointer and its
/// offset in elements (the generated kernels take both).
fn push_args<'a>(list: &mut Vec<Arg<'a>>, args: Vec<KernelArg<'a>>) {
    for a in args {
        match a.0 {
            ArgKind::Scalar(v, _) => list.push(v),
            ArgKind::Array(x) => {
                list.push(x.arg);
                list.push(Arg::I64(x.offset as i64));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_rows_are_walked_in_tiles() {
        assert_eq!(row_tiles(&[]), (0, 0));
        assert_eq!(row_tiles(&[1 << 20]), (0, 0));
        assert_eq!(row_tiles(&[1000, 100]), (0, 0));
        assert_eq!(row_tiles(&[8192, 8192]), (2048, 8192 * 4));
        assert_eq!(row_tiles(&[3, 5, 300]), (300, 15));
        // 2049 elements: two tiles of 1025, not 2048 and 1.
        assert_eq!(row_tiles(&[2, 2049]), (1025, 4));
    }

    #[test]
    fn broadcast_rows_and_columns_move_as_vectors() {
        // (n, m) + (m,) into (n, m): the row vector has stride 0 on the rows.
        let row = [vec![8192, 1], vec![0, 1], vec![8192, 1]];
        assert!(vector_rows(&[8192, 8192], &row, &[true; 3]));
        // (n, m) + (n, 1): the column has stride 0 along the row.
        let column = [vec![8192, 1], vec![1, 0], vec![8192, 1]];
        assert!(vector_rows(&[8192, 8192], &column, &[true; 3]));
        // Not: a row length not a multiple of four, an unaligned first element, rows that
        // start off a vector boundary, a stepped or reversed last axis.
        let odd = [vec![1001, 1], vec![0, 1], vec![1001, 1]];
        assert!(!vector_rows(&[8, 1001], &odd, &[true; 3]));
        assert!(!vector_rows(&[8192, 8192], &row, &[true, false, true]));
        let shifted = [vec![1002, 1], vec![0, 1], vec![1002, 1]];
        assert!(!vector_rows(&[8, 1000], &shifted, &[true; 3]));
        let stepped = [vec![8192, 2], vec![0, 1], vec![8192, 1]];
        assert!(!vector_rows(&[8192, 4096], &stepped, &[true; 3]));
        let reversed = [vec![8192, -1], vec![0, 1], vec![8192, 1]];
        assert!(!vector_rows(&[8192, 8192], &reversed, &[true; 3]));
        assert!(!vector_rows(&[], &[], &[]));
    }

    #[test]
    fn the_form_is_read_from_the_operation() {
        let args = "float a, const float *x, float *z";
        let bound = ElementwiseKernel::new(args, "z = a * x").expect("reads");
        let indexed = ElementwiseKernel::new(args, "z[i] = a * x[i]").expect("reads");
        assert!(!bound.is_indexed() && indexed.is_indexed());
        assert_eq!(bound.variants().len(), 1 + MAX_DIMS_FOR_TEST);
        assert_eq!(indexed.variants(), vec![Variant::Indexed]);
        assert!(indexed.source(Variant::Indexed).contains("z[i] = a * x[i]"));
        // `loop_prep` and `after_loop` are part of the kernel's identity.
        let prep = indexed.clone().loop_prep("float two = 2;");
        assert_ne!(prep.key, indexed.key);
        assert!(prep.source(Variant::Indexed).contains("float two = 2;"));
        assert_ne!(prep.clone().after_loop("(void)two;").key, prep.key);
    }

    const MAX_DIMS_FOR_TEST: usize = crate::gpuarray::MAX_DIMS;

    /// PyCUDA's `float *x` passed to be read: the kernel compiled for it declares `x` const,
    /// compiles when the operation only reads it and fails when it writes it (both forms);
    /// a scalar given as a 0-d device array becomes a pointer read before the loop.
    #[test]
    fn read_only_arrays_are_const_and_device_scalars_are_read_on_the_device() {
        use crate::gpuarray::kernels::registry::compile_check;
        use Launched::{AsDeclared, DeviceScalar, ReadOnly};
        let k = ElementwiseKernel::new("float a, float *x, float *z", "z[i] = a * x[i]").unwrap();
        let (both, names) = k.adjusted(&[DeviceScalar, ReadOnly, AsDeclared]);
        assert_eq!(names, ["x"]);
        assert_ne!(both.key, k.key);
        assert_ne!(both.key, k.adjusted(&[AsDeclared, ReadOnly, AsDeclared]).0.key);
        let src = both.source(Variant::Indexed);
        assert!(src.contains("const float *__restrict__ x "), "{src}");
        assert!(
            src.contains("float a = gpu_scalar_a__p[gpu_scalar_a__o];"),
            "{src}"
        );
        compile_check(&src, "sm_90").unwrap();
        // The declaration as it was: `x` writable, `a` by value.
        assert!(!k
            .source(Variant::Indexed)
            .contains("const float *__restrict__ x "));
        let writes = ElementwiseKernel::new("float *x, float *z", "x[i] = 1; z[i] = 2").unwrap();
        let (w, _) = writes.adjusted(&[ReadOnly, AsDeclared]);
        assert!(compile_check(&w.source(Variant::Indexed), "sm_90").is_err());
        compile_check(&writes.source(Variant::Indexed), "sm_90").unwrap();
        // The element-bound form: every variant.
        let reads = ElementwiseKernel::new("float *x, float *z", "z = 2 * x").unwrap();
        let (r, _) = reads.adjusted(&[ReadOnly, AsDeclared]);
        for v in r.variants() {
            compile_check(&r.source(v), "sm_90").unwrap();
        }
        let writes = ElementwiseKernel::new("float *x, float *z", "x = 1; z = 2").unwrap();
        let (w, _) = writes.adjusted(&[ReadOnly, AsDeclared]);
        assert!(compile_check(&w.source(Variant::Contiguous), "sm_90").is_err());
        // A device scalar of a 16-bit type, used with `loop_prep` after its read.
        let h = ElementwiseKernel::new("__half a, const __half *x, __half *z", "z[i] = x[i] * b")
            .unwrap()
            .loop_prep("__half b = a;");
        let (d, _) = h.adjusted(&[DeviceScalar, AsDeclared, AsDeclared]);
        compile_check(&d.source(Variant::Indexed), "sm_90").unwrap();
    }
}
