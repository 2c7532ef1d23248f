//! The Rust types that cross to the device: plain data a buffer may hold or a kernel may take
//! by value ([`DeviceRepr`]), and the CUDA vector types (`float4` is [`Float4`]).

pub(crate) mod repr;
pub mod vector;

pub use repr::DeviceRepr;
pub use vector::*;
