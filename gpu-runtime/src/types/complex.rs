//! Complex numbers (`num_complex`'s, re-exported) as device data, documented in the
//! [`types`](super) module.

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
