//! The Rust types that cross to the device: plain data a buffer may hold or a kernel may take
//! by value ([`DeviceRepr`](crate::DeviceRepr)), the CUDA vector types (`float4` is [`Float4`]),
//! complex numbers ([`Complex32`], [`Complex64`]) and CUDA's 8-bit floats (`__nv_fp8_e4m3` is
//! [`Fp8E4M3`]), each described below.
//!
//! # Vector types
//!
//! CUDA's built-in vector types (`float4`, `int2`, `uchar4`, ...) as Rust types with CUDA's exact
//! size and alignment, so that they can be kernel arguments and buffer elements.
//!
//! Each C name maps to the Rust type spelled in `UpperCamelCase` with the signedness prefix kept:
//! `float4` is [`Float4`], `uchar2` is [`UChar2`], `longlong2` is [`LongLong2`], `ulong3` is
//! [`ULong3`]. The `#[kernel]` macro accepts exactly that Rust type for the C name. The fields
//! are CUDA's `x`, `y`, `z`, `w`, of the matching Rust scalar (`char` is `i8`: it is signed in
//! CUDA device code; `long` is `i64`).
//!
//! Alignment follows CUDA's `vector_types.h`: two- and four-element vectors are aligned to their
//! full size (up to 16 bytes: `float4` is 16-byte aligned, `double4` and `longlong4` are 16-byte
//! aligned as CUDA's deprecated-but-default `double4` is), three-element ones to their element
//! (`float3` is 12 bytes, 4-byte aligned).
//!
//! ```
//! use gpu_runtime::{types::Float3, types::Float4, types::UChar4};
//! assert_eq!((std::mem::size_of::<Float3>(), std::mem::align_of::<Float3>()), (12, 4));
//! assert_eq!((std::mem::size_of::<Float4>(), std::mem::align_of::<Float4>()), (16, 16));
//! let v = Float4::new(1.0, 2.0, 3.0, 4.0);
//! assert_eq!(v.w, 4.0);
//! assert_eq!(<[f32; 4]>::from(v), [1.0, 2.0, 3.0, 4.0]);
//! assert_eq!(UChar4::from([1, 2, 3, 4]).z, 3);
//! ```
//!
//! # Complex numbers
//!
//! Complex numbers on both sides of a launch: [`num_complex::Complex`] on the host, the
//! `gpu_runtime::complex<T>` of the header `<gpu_runtime/complex.h>` on the device.
//!
//! | C parameter | Rust parameter |
//! |---|---|
//! | `gpu_runtime::complex<float>` (also libcu++'s `cuda::std::complex<float>`, and `pycuda::complex<float>` of `<pycuda-complex.hpp>`) | [`Complex32`] |
//! | `gpu_runtime::complex<double>` (and the same others) | [`Complex64`] |
//! | `const gpu_runtime::complex<float> *z` | `z: &[Complex32]` (a `DeviceBuffer<Complex32>`, …) |
//!
//! The element is the real part followed by the imaginary part, in both languages: a buffer
//! of `Complex32` is a buffer of `gpu_runtime::complex<float>` (and of CUDA's `cuFloatComplex`
//! or `float2`, byte for byte). The device types are aligned to their whole size (8 bytes for
//! `complex<float>`, 16 for `complex<double>`, as `float2`, `double2` and `cuda::std::complex`
//! are) so that an element loads in one instruction; the Rust types only
//! to their part's. That changes nothing for buffers and by-value arguments, but in a
//! `#[repr(C)]` struct shared with C a complex field must sit at an offset that is a multiple
//! of its size (check it with [`crate::compiler::layout::check_layout`]).
//!
//! ```
//! use gpu_runtime::{types::Complex32, DeviceRepr};
//! fn plain_data<T: DeviceRepr>() {}
//! plain_data::<Complex32>();
//! let z = Complex32::new(1.0, 2.0) * Complex32::new(0.0, 1.0);
//! assert_eq!(z, Complex32::new(-2.0, 1.0));
//! ```
//!
//! A kernel template takes them too (`instantiate = [Complex32, Complex64]` names
//! `gpu_runtime::complex<float>` and `<double>`), and CUDA arrays, textures and surfaces hold
//! them (see [`ArrayElement`](crate::driver::ArrayElement)).
//!
//! # 8-bit floats
//!
//! CUDA's 8-bit floats (`<cuda_fp8.h>`): [`Fp8E4M3`] is `__nv_fp8_e4m3`, [`Fp8E5M2`] is
//! `__nv_fp8_e5m2`, and the two- and four-lane [`Fp8x2E4M3`], [`Fp8x4E4M3`], ... are
//! `__nv_fp8x2_e4m3`, `__nv_fp8x4_e4m3`, .... Each holds its bits: a kernel taking
//! `const __nv_fp8_e4m3 *x` takes `x: &[Fp8E4M3]`, and the conversions to and from `f32`
//! round as CUDA's constructors do (to nearest, ties to even, saturating to the largest finite
//! value, `__NV_SATFINITE`), so a CPU reference computes what the device computes.
//!
//! ```
//! use gpu_runtime::types::{Fp8E4M3, Fp8E5M2};
//! assert_eq!(Fp8E4M3::from_f32(1.0).0, 0x38);
//! assert_eq!(Fp8E4M3::from_f32(1000.0).to_f32(), 448.0); // saturated
//! assert_eq!(Fp8E5M2::from_f32(-2.0).to_f32(), -2.0);
//! assert!(Fp8E4M3(0x7f).to_f32().is_nan());
//! ```

// The families are files of their own, not public: each type is public here only, as
// `types::Float4` (one public path per item, scripts/check_public_paths.py), and the
// families' documentation is this module's. `DeviceRepr` is public at the crate root.
pub(crate) mod complex;
pub(crate) mod fp8;
pub(crate) mod repr;
pub(crate) mod vector;

pub use complex::{Complex, Complex32, Complex64, COMPLEX_TYPES};
pub use fp8::{Fp8E4M3, Fp8E5M2, Fp8x2E4M3, Fp8x2E5M2, Fp8x4E4M3, Fp8x4E5M2};
pub use vector::*;
