//! The Rust types that cross to the device: plain data a buffer may hold or a kernel may take
//! by value ([`DeviceRepr`]), the CUDA vector types (`float4` is [`Float4`]), complex numbers
//! ([`Complex32`], [`Complex64`]; see [`complex`]) and CUDA's 8-bit floats (`__nv_fp8_e4m3` is
//! [`Fp8E4M3`]; see [`fp8`]).

pub mod complex;
pub mod fp8;
pub(crate) mod repr;
pub mod vector;

pub use complex::{Complex, Complex32, Complex64, COMPLEX_TYPES};
pub use fp8::{Fp8E4M3, Fp8E5M2, Fp8x2E4M3, Fp8x2E5M2, Fp8x4E4M3, Fp8x4E5M2};
pub use repr::DeviceRepr;
pub use vector::*;
