//! The Rust types that cross to the device: plain data a buffer may hold or a kernel may take
//! by value ([`DeviceRepr`]), the CUDA vector types (`float4` is [`Float4`]), and complex
//! numbers ([`Complex32`], [`Complex64`]; see [`complex`]).

pub mod complex;
pub(crate) mod repr;
pub mod vector;

pub use complex::{Complex, Complex32, Complex64, COMPLEX_TYPES};
pub use repr::DeviceRepr;
pub use vector::*;
