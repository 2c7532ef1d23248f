//! What a [`DeviceArray`](crate::gpuarray::DeviceArray) may hold ([`ArrayElement`]): every number type
//! ([`Element`]) and CUDA's vector types (`Float3`, `UChar4`, ..., PyCUDA's
//! `gpuarray.vec.float3`), and the element type by name ([`ElementType`]) that generated kernels
//! are keyed and declared parameters are checked by.
//!
//! The split is the compiler's check of what applies to an array: layouts, copies, fills and
//! elementwise kernels take any [`ArrayElement`]; arithmetic, math, comparisons, reductions,
//! random fills, `astype` and matmul ask for an [`Element`], so that `sum()` or `+` on an array
//! of `Float3` is a compile error rather than a refusal at run time.

use std::fmt;

use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::launch::{Arg, CudaVector, VectorType};
use crate::types::repr::DeviceRepr;
use crate::types::vector::*;

/// The element type of an array or of a generated kernel's parameter: a number ([`DType`]) or
/// one of CUDA's vector types ([`VectorType`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// A number: what [`Element`] types are.
    Number(DType),
    /// A CUDA vector type (`float3`, `uchar4`, ...).
    Vector(VectorType),
}

impl ElementType {
    /// The C name generated kernels use (`float`, `gpu_runtime::complex<float>`, `float3`).
    pub fn c_name(self) -> &'static str {
        match self {
            ElementType::Number(d) => d.c_name(),
            ElementType::Vector(v) => v.c_name(),
        }
    }

    /// The size of one element in bytes (12 for `float3`).
    pub fn size(self) -> usize {
        match self {
            ElementType::Number(d) => d.size(),
            ElementType::Vector(v) => v.size(),
        }
    }

    /// The number type, when this is one.
    pub fn number(self) -> Option<DType> {
        match self {
            ElementType::Number(d) => Some(d),
            ElementType::Vector(_) => None,
        }
    }

    /// Whether this is a complex number type.
    pub fn is_complex(self) -> bool {
        self.number().is_some_and(DType::is_complex)
    }

    /// The number type whose headers a kernel over this type includes: its own, or a vector's
    /// component type (`__half2` needs `<cuda_fp16.h>`).
    pub(crate) fn header_dtype(self) -> Option<DType> {
        match self {
            ElementType::Number(d) => Some(d),
            ElementType::Vector(v) => {
                gpu_cuda_source::vectors::by_c_name(v.c_name()).and_then(|t| DType::from_scalar(t.scalar))
            }
        }
    }

    /// The element type a declared C type name stands for, besides `gpu-cuda-source`'s scalars: a
    /// complex number (`gpu_runtime::complex<float>`) or a vector type (`float3`, `uchar4`,
    /// and CUDA's aliases).
    pub(crate) fn of_named(name: &str) -> Option<ElementType> {
        DType::of_named(name)
            .map(ElementType::Number)
            .or_else(|| VectorType::from_c_name(name).map(ElementType::Vector))
    }
}

impl fmt::Debug for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementType::Number(d) => write!(f, "{d:?}"),
            ElementType::Vector(v) => write!(f, "{v:?}"),
        }
    }
}

impl From<DType> for ElementType {
    fn from(d: DType) -> Self {
        ElementType::Number(d)
    }
}

impl From<VectorType> for ElementType {
    fn from(v: VectorType) -> Self {
        ElementType::Vector(v)
    }
}

/// A type a [`DeviceArray`](crate::gpuarray::DeviceArray) may hold: every [`Element`] (the numbers) and
/// every CUDA vector type of [`crate::types`] ([`Float3`], [`Int2`], [`UChar4`],
/// [`Double4`], ..., and `Half2`/`BFloat162`): arrays of them are made, copied, viewed,
/// sliced, transposed, filled and passed to elementwise kernels like numeric ones, while the
/// arithmetic, math, reductions, comparisons, random fills, `astype` and matmul ask for an
/// [`Element`].
///
/// ```no_run
/// use gpu_runtime::gpuarray::DeviceArray;
/// use gpu_runtime::ndarray::{s, Array1};
/// use gpu_runtime::types::Float3;
/// use gpu_runtime::Context;
/// let ctx = Context::default()?;
/// let host = Array1::from_shape_fn(8, |i| Float3::new(i as f32, 0.0, 1.0));
/// let a = DeviceArray::from_ndarray(&ctx, &host.into_dyn())?;
/// let reversed = a.slice(s![..;-1])?.to_contiguous()?;
/// assert_eq!(reversed.to_vec()?[0], Float3::new(7.0, 0.0, 1.0));
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
///
/// Sealed: the generated kernels spell each type in C, and a wrong spelling would make them
/// read garbage.
pub trait ArrayElement:
    DeviceRepr + Copy + Send + Sync + PartialEq + fmt::Debug + 'static + sealed::Sealed
{
    /// The element type: what declared C parameters are compared with, and what generated
    /// copies and fills are keyed by.
    const ELEMENT_TYPE: ElementType;
    /// The value as a kernel argument by value.
    fn by_value(self) -> Arg<'static>;
}

pub(super) mod sealed {
    /// Implemented only in this crate: see [`ArrayElement`](crate::gpuarray::ArrayElement).
    pub trait Sealed {}
}

impl<T: Element> sealed::Sealed for T {}
impl<T: Element> ArrayElement for T {
    const ELEMENT_TYPE: ElementType = ElementType::Number(T::DTYPE);
    fn by_value(self) -> Arg<'static> {
        self.to_arg()
    }
}

macro_rules! vector_elements {
    ($($t:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl ArrayElement for $t {
            const ELEMENT_TYPE: ElementType = ElementType::Vector(<$t as CudaVector>::TYPE);
            fn by_value(self) -> Arg<'static> {
                Arg::vector(self)
            }
        }
    )*};
}
for_each_vector_type!(vector_elements);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_element_types() {
        let f3 = <Float3 as ArrayElement>::ELEMENT_TYPE;
        assert_eq!((f3.c_name(), f3.size(), f3.number()), ("float3", 12, None));
        assert_eq!(
            <f32 as ArrayElement>::ELEMENT_TYPE,
            ElementType::Number(DType::F32)
        );
        assert_eq!(ElementType::of_named("float3"), Some(f3));
        assert_eq!(
            ElementType::of_named("gpu_runtime::complex<double>"),
            Some(ElementType::Number(DType::Complex64))
        );
        assert_eq!(ElementType::of_named("float5"), None);
        assert_eq!(<Double4 as ArrayElement>::ELEMENT_TYPE.size(), 32);
        assert_eq!(
            <UChar4 as ArrayElement>::ELEMENT_TYPE.header_dtype(),
            Some(DType::U8)
        );
        assert!(!f3.is_complex());
        assert_eq!(format!("{f3:?}"), "float3");
    }
}
