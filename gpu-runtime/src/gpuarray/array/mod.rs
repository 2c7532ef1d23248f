//! The array and its storage: [`DeviceArrayBase`](crate::gpuarray::DeviceArrayBase) over
//! device memory with `ndarray`'s shapes and strides (`core`), the arithmetic of views without
//! memory ([`layout`](crate::gpuarray::layout)), arrays in from and out to `ndarray`
//! (`convert`), the shape changes (`shape_ops`), the views that move or reverse axes (`axes`,
//! `flip`: `flip`, `rot90`) or take a diagonal (`diagonal`), single values read back through
//! mapped host memory (`readback`), and [`OnStream`](crate::gpuarray::OnStream), an array (or
//! anything else with operations) with the stream they are queued on (`on_stream`). It
//! launches no generated kernel of its own.

pub(crate) mod axes;
pub(crate) mod buffer_view;
pub(crate) mod convert;
pub(crate) mod core;
pub(crate) mod debug_fmt;
pub(crate) mod diagonal;
pub(crate) mod flip;
pub(crate) mod join;
pub mod layout;
pub(crate) mod on_stream;
pub(crate) mod overlap;
pub(crate) mod readback;
pub(crate) mod shape_ops;
pub(crate) mod split;
