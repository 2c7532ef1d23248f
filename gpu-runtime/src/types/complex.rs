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
//! use gpu_runtime::types::{Complex32, DeviceRepr};
//! fn plain_data<T: DeviceRepr>() {}
//! plain_data::<Complex32>();
//! let z = Complex32::new(1.0, 2.0) * Complex32::new(0.0, 1.0);
//! assert_eq!(z, Complex32::new(-2.0, 1.0));
//! ```
//!
//! A kernel template takes them too (`instantiate = [Complex32, Complex64]` names
//! `gpu_runtime::complex<float>` and `<double>`), and CUDA arrays, textures and surfaces hold
//! them (see [`ArrayElement`](crate::driver::ArrayElement)).

pub use num_complex::{Complex, Complex32, Complex64};

use crate::types::repr::DeviceRepr;

// SAFETY: `Complex<T>` is `#[repr(C)] struct { re: T, im: T }`: two fields of the same plain
// type, so no padding and no pointer, and every bit pattern is valid when it is for `T`; its
// layout is C's `struct { T re, im; }`, which gpu_runtime::complex<T> is (up to alignment,
// which buffers and the driver's parameter copies do not see; see the module docs).
unsafe impl<T: DeviceRepr> DeviceRepr for Complex<T> {}

/// The C++ spellings of the complex types a kernel may declare, with the Rust type each maps
/// to, its size and its device alignment (the test suite compares them with NVRTC).
pub const COMPLEX_TYPES: &[(&str, &str, usize, usize)] = &[
    ("gpu_runtime::complex<float>", "Complex32", 8, 8),
    ("gpu_runtime::complex<double>", "Complex64", 16, 16),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_numbers_are_their_parts_in_order() {
        for (_, rust, size, _) in COMPLEX_TYPES {
            let (got, part) = match *rust {
                "Complex32" => (std::mem::size_of::<Complex32>(), std::mem::size_of::<f32>()),
                "Complex64" => (std::mem::size_of::<Complex64>(), std::mem::size_of::<f64>()),
                other => panic!("unknown Rust complex type {other}"),
            };
            assert_eq!((got, 2 * part), (*size, *size), "{rust}");
        }
        let z = Complex64::new(1.5, -2.25);
        // SAFETY: Complex64 is two f64s, repr(C).
        let parts: [f64; 2] = unsafe { std::mem::transmute(z) };
        assert_eq!(parts, [1.5, -2.25]);
    }
}
