//! [`ElementwiseKernel`]: a kernel written as one operation on elements (PyCUDA's and CuPy's
//! `ElementwiseKernel`), generated, compiled once per context, and launched over arrays of any
//! layout.
//!
//! Arrays are named in the operation as their elements, CuPy's way: with `float *z, const
//! float *x`, the operation `z = 2 * x` writes each element of `z`. `i` is the element's flat
//! index in C order and `n` the number of elements.
//!
//! Two variants are generated from each operation, each on first use in a context:
//! - contiguous (every array contiguous in C order, or every one in Fortran order when the
//!   operation does not use `i`): a grid-stride loop over four elements at a time with
//!   aligned vector loads and stores (`gpu_vec4`) when every array's first element is
//!   aligned, and a scalar tail;
//! - strided (any other layout: steps, transposes, reversed axes, broadcasts), one per number
//!   of axes: the storage index of each array is computed from the shape and its strides,
//!   passed as arguments.

use gpu_cdecl::elementwise::{Elementwise, Param as CParam};

use crate::driver::stream::Stream;
use crate::error::{ArgumentError, Result};
use crate::gpuarray::cast;
use crate::gpuarray::codegen;
use crate::gpuarray::kernel_args::{check_args, parse_params, ArgKind, ArrayArg, KernelArg, Param};
use crate::gpuarray::kernel_cache::{self, KernelKey, BLOCK};
use crate::gpuarray::layout;
use crate::launch::Arg;

/// Which kernel of an [`ElementwiseKernel`] runs: see the module documentation. The source of
/// each is written by `gpu_cdecl::elementwise`.
pub use gpu_cdecl::elementwise::Variant;

/// The variant's part of a kernel's cache key.
fn variant_code(variant: Variant) -> u32 {
    match variant {
        Variant::Contiguous => 0,
        Variant::Strided(d) => 1 + d as u32,
    }
}

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
#[derive(Debug, Clone)]
pub struct ElementwiseKernel {
    name: String,
    params: Vec<Param>,
    operation: String,
    preamble: String,
    /// The operation uses `i`, the flat index in C order: Fortran-contiguous arrays then take
    /// the strided path (the contiguous one counts in storage order).
    c_order_index: bool,
    key: u64,
}

impl ElementwiseKernel {
    /// A kernel named `elementwise`; see [`with_name`](Self::with_name).
    pub fn new(arguments: &str, operation: &str) -> Result<Self> {
        Self::with_name("elementwise", arguments, operation)
    }

    /// A kernel from its C `arguments` (scalars of the element types, `const T *` for arrays
    /// it reads, `T *` for arrays it writes) and its `operation` on elements. The arguments
    /// are read here; the operation is compiled on the first launch in each context (or by
    /// compiling [`source`](Self::source) with a [`SourceModule`](crate::SourceModule), which needs no GPU),
    /// and a CUDA error in it is an [`Error::Compile`](crate::Error::Compile) then.
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
        let preamble = cast::headers_for(params.iter().map(|p| p.scalar));
        let mut k = ElementwiseKernel {
            name: name.to_owned(),
            params,
            operation: operation.to_owned(),
            preamble,
            c_order_index: codegen::mentions(operation, "i"),
            key: 0,
        };
        k.rekey(arguments);
        Ok(k)
    }

    /// C code placed before the kernel: helper functions, `#include`s.
    pub fn preamble(mut self, code: &str) -> Self {
        self.preamble = cast::headers_for(self.params.iter().map(|p| p.scalar)) + code;
        let args = self.params.iter().map(|p| format!("{p:?}")).collect::<String>();
        self.rekey(&args);
        self
    }

    fn rekey(&mut self, arguments: &str) {
        self.key = kernel_cache::hash_parts(&[
            "elementwise",
            &self.name,
            arguments,
            &self.operation,
            &self.preamble,
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
        }
    }

    /// The C name of the kernel of `variant`.
    fn c_name(&self, variant: Variant) -> String {
        self.generator(&[]).kernel_name(variant)
    }

    /// The CUDA C source of one variant, as it is compiled (with `no_extern_c`): the text
    /// `gpu_cdecl::elementwise` writes, which the `#[elementwise]` macro checks at build time.
    pub fn source(&self, variant: Variant) -> String {
        let params = codegen::c_params(&self.params);
        self.generator(&params).source(&[variant])
    }

    /// Runs the operation on every element, on the legacy default stream. `args` are one per
    /// declared argument, in order: [`KernelArg::scalar`] (or a plain number, through `From`),
    /// [`KernelArg::input`], [`KernelArg::output`]. Every array must have the shape of the
    /// first; empty arrays launch nothing.
    pub fn launch<'a>(&self, args: impl IntoIterator<Item = KernelArg<'a>>) -> Result<()> {
        self.run(None, args.into_iter().collect())
    }

    /// [`launch`](Self::launch) on `stream`; returns without waiting. Arrays used on other
    /// streams are ordered with it as every launch of this crate orders them.
    pub fn launch_on<'a>(
        &self,
        stream: &Stream,
        args: impl IntoIterator<Item = KernelArg<'a>>,
    ) -> Result<()> {
        self.run(Some(stream), args.into_iter().collect())
    }

    fn run(&self, stream: Option<&Stream>, args: Vec<KernelArg<'_>>) -> Result<()> {
        let shape = check_args(&self.name, &self.params, &args)?.to_vec();
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
        let variant = if all_c || (all_f && !self.c_order_index) {
            Variant::Contiguous
        } else {
            Variant::Strided(shape.len())
        };
        let vec = variant == Variant::Contiguous
            && arrays().all(|x| x.addr % codegen::vec4_align(x.scalar.size()) == 0);
        let ctx = first_context(&args);
        let Some(ctx) = ctx else { return Ok(()) };
        let key = KernelKey {
            source: self.key,
            variant: variant_code(variant),
        };
        let name = self.c_name(variant);
        let f = kernel_cache::prepared(&ctx, key, &name, || self.source(variant))?;
        let mut list: Vec<Arg<'_>> = Vec::with_capacity(2 + 2 * args.len() + 9 * shape.len());
        list.push(Arg::I64(n as i64));
        if variant == Variant::Contiguous {
            list.push(Arg::I32(vec as i32));
        }
        let mut strides: Vec<Arg<'_>> = Vec::new();
        for a in args {
            match a.0 {
                ArgKind::Scalar(v, _) => list.push(v),
                ArgKind::Array(x) => push_array(&mut list, &mut strides, x, variant),
            }
        }
        if let Variant::Strided(_) = variant {
            list.extend(shape.iter().map(|&d| Arg::I64(d as i64)));
            list.append(&mut strides);
        }
        let work = if vec { n / 4 } else { n };
        let grid = kernel_cache::grid_for(&ctx, work as u64)?;
        kernel_cache::launch(&f, grid, BLOCK, stream, &list)
    }
}

/// The context of the first array (every array's context is checked by the launch).
pub(crate) fn first_context(args: &[KernelArg<'_>]) -> Option<crate::driver::context::core::Context> {
    args.iter().find_map(|a| match &a.0 {
        ArgKind::Array(x) => Some(x.ctx.clone()),
        ArgKind::Scalar(..) => None,
    })
}

/// An array's kernel arguments: the pointer and first element, and for the strided variant
/// its strides (kept apart, to go after the shape).
fn push_array<'a>(list: &mut Vec<Arg<'a>>, strides: &mut Vec<Arg<'a>>, x: ArrayArg<'a>, variant: Variant) {
    if let Variant::Strided(_) = variant {
        strides.extend(x.strides().iter().map(|&s| Arg::I64(s as i64)));
    }
    list.push(x.arg);
    list.push(Arg::I64(x.offset as i64));
}
