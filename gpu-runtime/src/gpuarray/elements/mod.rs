//! Element types and promotion, the ground floor of `gpuarray`: what an array may hold
//! ([`ArrayElement`](crate::gpuarray::ArrayElement), [`Element`](crate::gpuarray::Element), [`Bool`](crate::gpuarray::Bool), the 16-bit floats, the complex numbers),
//! the element types by name ([`DType`](crate::gpuarray::DType)) and their C spelling and conversions (`cast`), and
//! the type NumPy 2 gives an operation on two of them (`promotion`, `mean_type`). Nothing here
//! knows arrays or kernels.

pub(crate) mod array_element;
pub(crate) mod bitwise;
pub(crate) mod boolean;
pub(crate) mod cast;
pub(crate) mod complex;
pub(crate) mod dtype;
pub(crate) mod element;
pub(crate) mod half;
pub(crate) mod index_element;
pub(crate) mod inexact;
pub(crate) mod linalg_type;
pub(crate) mod mean_type;
pub(crate) mod promotion;
pub(crate) mod sum_type;
