//! The array and its storage: [`DeviceArrayBase`](crate::gpuarray::DeviceArrayBase) over device memory with
//! `ndarray`'s shapes and strides (`core`), the arithmetic of views without memory
//! ([`layout`](crate::gpuarray::layout)), arrays in from and out to `ndarray` (`convert`), and the shape
//! changes (`shape_ops`). It launches no generated kernel of its own.

pub(crate) mod convert;
pub(crate) mod core;
pub mod layout;
pub(crate) mod shape_ops;
