//! The arguments of generated kernels: the declared parameters (`"float a, const float *x,
//! float *z"`, read with `gpu-cuda-source`), and what a launch passes ([`KernelArg`]: a scalar, or
//! an array with its layout), checked against each other before anything launches.

use gpu_cuda_source::{CType, Scalar};
use ndarray::Dimension;

use crate::driver::context::core::Context;
use crate::error::{ArgumentError, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::elements::array_element::{ArrayElement, ElementType};
use crate::gpuarray::elements::dtype::DType;
use crate::launch::Arg;

/// The most axes an array passed to a generated kernel may have (the kernels take one shape
/// and stride argument per axis).
pub const MAX_DIMS: usize = gpu_cuda_source::elementwise::MAX_DIMS;

/// One declared parameter of a generated kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Param {
    pub name: String,
    /// The element type: a number, or a CUDA vector type (`float3 *a`).
    pub elem: ElementType,
    /// An array (declared as a pointer) rather than a scalar.
    pub array: bool,
    /// For an array: written (declared `T *`, not `const T *`).
    pub mutable: bool,
    /// A scalar the launch gave as a 0-d device array, read on the device (the array
    /// parameter an indexed `ElementwiseKernel` takes for it): not shaped like the others.
    pub device_scalar: bool,
}

/// The scalars arrays hold; others (`size_t`, `ptrdiff_t`) are refused when declared.
fn element_scalar(s: Scalar) -> bool {
    !matches!(s, Scalar::Isize | Scalar::Usize)
}

/// The element type of a declared scalar or pointee type: a `gpu-cuda-source` scalar, a complex
/// number (`gpu_runtime::complex<float>`, ...) or a CUDA vector type (`float3`, ...); `None`
/// for any other type.
fn declared_dtype(ty: &CType) -> Option<Result<ElementType, Scalar>> {
    match ty {
        CType::Scalar(s) => Some(DType::from_scalar(*s).map(ElementType::Number).ok_or(*s)),
        CType::Named(n) => ElementType::of_named(n).map(Ok),
        _ => None,
    }
}

/// Reads a C parameter list: scalars of the [`ArrayElement`] types (numbers and CUDA vector
/// types), and pointers to them (arrays;
/// `const` for read-only ones). Names must be C identifiers that do not end in `__` forms
/// the generated code uses (`x__p`, `x__o`, ...).
pub(crate) fn parse_params(kernel: &str, arguments: &str) -> Result<Vec<Param>> {
    let decl = gpu_cuda_source::find_kernel(
        &format!("__global__ void gpu_params({arguments}) {{}}"),
        "gpu_params",
    )
    .map_err(|source| ArgumentError::UnreadableArguments {
        kernel: kernel.into(),
        arguments: arguments.to_owned(),
        source: Box::new(source),
    })?;
    let mut out: Vec<Param> = Vec::with_capacity(decl.params.len());
    for p in decl.params {
        let name = p.name.clone().ok_or_else(|| ArgumentError::Unnamed {
            kernel: kernel.into(),
            parameter: p.text.as_str().into(),
        })?;
        if name.contains("__") || out.iter().any(|q| q.name == name) || name == "i" || name == "n" {
            return Err(ArgumentError::NameTaken {
                kernel: kernel.into(),
                name,
            }
            .into());
        }
        let (dtype, array, mutable) = match &p.ty {
            CType::Pointer {
                pointee,
                pointee_const,
            } => match declared_dtype(pointee) {
                Some(d) => (d, true, !pointee_const),
                None => {
                    return Err(ArgumentError::ArrayOfNonScalars {
                        kernel: kernel.into(),
                        parameter: p.text.into(),
                    }
                    .into())
                }
            },
            ty => match declared_dtype(ty) {
                Some(d) => (d, false, false),
                None => {
                    return Err(ArgumentError::NotScalarOrArray {
                        kernel: kernel.into(),
                        parameter: p.text.into(),
                    }
                    .into())
                }
            },
        };
        let elem = match dtype {
            Ok(d) => d,
            Err(scalar) => {
                debug_assert!(!element_scalar(scalar));
                return Err(ArgumentError::NotAnElementType {
                    kernel: kernel.into(),
                    parameter: p.text.into(),
                    scalar,
                }
                .into());
            }
        };
        out.push(Param {
            name,
            elem,
            array,
            mutable,
            device_scalar: false,
        });
    }
    Ok(out)
}

/// What a launch passes for one declared parameter: [`KernelArg::scalar`],
/// [`KernelArg::input`] or [`KernelArg::output`].
#[derive(Debug)]
pub struct KernelArg<'a>(pub(crate) ArgKind<'a>);

#[derive(Debug)]
pub(crate) enum ArgKind<'a> {
    Scalar(Arg<'a>, ElementType),
    Array(ArrayArg<'a>),
}

/// An array argument: the storage (ordered as a read or a write by the launch) and the layout.
#[derive(Debug)]
pub(crate) struct ArrayArg<'a> {
    pub arg: Arg<'a>,
    pub elem: ElementType,
    pub mutable: bool,
    /// More axes than [`MAX_DIMS`]; refused at launch.
    pub ndim: usize,
    pub shape: [usize; MAX_DIMS],
    pub strides: [isize; MAX_DIMS],
    /// The element at index zero, in elements from the start of the storage.
    pub offset: usize,
    /// Its device address, for the alignment of vector loads.
    pub addr: u64,
    /// The memory's context: the launch finds its kernel in this context's cache.
    pub ctx: Context,
}

impl ArrayArg<'_> {
    pub fn shape(&self) -> &[usize] {
        &self.shape[..self.ndim.min(MAX_DIMS)]
    }
    pub fn strides(&self) -> &[isize] {
        &self.strides[..self.ndim.min(MAX_DIMS)]
    }
}

fn layout_of<S: Storage, D: Dimension>(
    a: &DeviceArrayBase<S, D>,
) -> ([usize; MAX_DIMS], [isize; MAX_DIMS], u64) {
    let (mut shape, mut strides) = ([0usize; MAX_DIMS], [0isize; MAX_DIMS]);
    for (k, (&d, &s)) in a.shape().iter().zip(a.strides()).take(MAX_DIMS).enumerate() {
        shape[k] = d;
        strides[k] = s;
    }
    let base = a.storage().device_view().device_ptr();
    (
        shape,
        strides,
        base + (a.offset() * std::mem::size_of::<S::Elem>()) as u64,
    )
}

impl<'a> KernelArg<'a> {
    /// A scalar, passed by value.
    pub fn scalar<T: ArrayElement>(value: T) -> KernelArg<'a> {
        KernelArg(ArgKind::Scalar(value.by_value(), T::ELEMENT_TYPE))
    }

    /// An array the kernel reads (a `const T *` argument). An
    /// [`ElementwiseKernel`](crate::gpuarray::ElementwiseKernel) also takes it for a `T *`
    /// argument (compiled `const` for the launch) and, in the indexed form, a 0-d array for a
    /// scalar argument (read on the device).
    pub fn input<S: Storage, D: Dimension>(array: &'a DeviceArrayBase<S, D>) -> KernelArg<'a> {
        let (shape, strides, addr) = layout_of(array);
        let ctx = array.context().clone();
        KernelArg(ArgKind::Array(ArrayArg {
            ctx,
            arg: Arg::input::<S::Elem, S>(array.storage()),
            elem: S::Elem::ELEMENT_TYPE,
            mutable: false,
            ndim: array.ndim(),
            shape,
            strides,
            offset: array.offset(),
            addr,
        }))
    }

    /// An array the kernel writes (a `T *` argument; fits a `const T *` one too).
    pub fn output<S: StorageMut, D: Dimension>(array: &'a mut DeviceArrayBase<S, D>) -> KernelArg<'a> {
        let (shape, strides, addr) = layout_of(array);
        let (ndim, offset) = (array.ndim(), array.offset());
        let ctx = array.context().clone();
        KernelArg(ArgKind::Array(ArrayArg {
            ctx,
            arg: Arg::output::<S::Elem, S>(&mut array.data),
            elem: S::Elem::ELEMENT_TYPE,
            mutable: true,
            ndim,
            shape,
            strides,
            offset,
            addr,
        }))
    }
}

impl<T: ArrayElement> From<T> for KernelArg<'_> {
    fn from(value: T) -> Self {
        KernelArg::scalar(value)
    }
}

/// Checks `args` against `params` (count, scalar or array, types, writability, axes) and that
/// every array has the shape of the first; returns that shape.
pub(crate) fn check_args<'s>(
    kernel: &str,
    params: &[Param],
    args: &'s [KernelArg<'_>],
) -> Result<&'s [usize]> {
    check_kinds(kernel, params, args)?;
    let mut shape: Option<&[usize]> = None;
    for (p, a) in params.iter().zip(args) {
        let ArgKind::Array(x) = &a.0 else { continue };
        if p.device_scalar {
            continue;
        }
        match shape {
            None => shape = Some(x.shape()),
            Some(s) if s == x.shape() => {}
            Some(s) => {
                return Err(ArrayShapeError::ShapesDiffer {
                    param: p.name.to_string(),
                    shape: x.shape().to_vec(),
                    expected: s.to_vec(),
                }
                .into())
            }
        }
    }
    shape.ok_or_else(|| no_array(kernel))
}

/// The error of a launch without an array.
pub(crate) fn no_array(kernel: &str) -> crate::error::Error {
    ArgumentError::NoArray {
        kernel: kernel.into(),
        needs: "a generated kernel",
    }
    .into()
}

/// The error of an argument of another type, or an array for a scalar or the reverse.
fn kind_differs(kernel: &str, p: &Param, given: ElementType, given_array: bool) -> crate::error::Error {
    let scalar = |e: ElementType| e.number().and_then(DType::scalar);
    match (scalar(p.elem), scalar(given)) {
        (Some(expected), Some(given)) => ArgumentError::KindDiffers {
            kernel: kernel.into(),
            name: p.name.to_string(),
            expected,
            expected_array: p.array,
            given,
            given_array,
        },
        // A complex or vector type on either side: named in C, as `gpu-cuda-source` has no such
        // scalar.
        _ => ArgumentError::ElementTypeDiffers {
            kernel: kernel.into(),
            name: p.name.to_string(),
            expected: p.elem.c_name(),
            expected_array: p.array,
            given: given.c_name(),
            given_array,
        },
    }
    .into()
}

/// Checks `args` against `params`: count, scalar or array, types, writability, axes; not
/// shapes.
pub(crate) fn check_kinds(kernel: &str, params: &[Param], args: &[KernelArg<'_>]) -> Result<()> {
    if args.len() != params.len() {
        return Err(ArgumentError::GeneratedArgCount {
            kernel: kernel.into(),
            given: args.len(),
            expected: params.len(),
        }
        .into());
    }
    for (p, a) in params.iter().zip(args) {
        match (&a.0, p.array) {
            (ArgKind::Scalar(_, s), false) if *s == p.elem => {}
            (ArgKind::Array(x), true) if x.elem == p.elem => {
                if p.mutable && !x.mutable {
                    return Err(ArgumentError::NotOutput {
                        kernel: kernel.into(),
                        name: p.name.to_string(),
                    }
                    .into());
                }
                if x.ndim > MAX_DIMS {
                    return Err(ArgumentError::TooManyAxes {
                        kernel: kernel.into(),
                        name: p.name.to_string(),
                        ndim: x.ndim,
                        limit: MAX_DIMS,
                    }
                    .into());
                }
            }
            (given, _) => {
                let (given, given_array) = match given {
                    ArgKind::Scalar(_, s) => (*s, false),
                    ArgKind::Array(x) => (x.elem, true),
                };
                return Err(kind_differs(kernel, p, given, given_array));
            }
        }
    }
    Ok(())
}
