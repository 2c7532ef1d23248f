//! [`Bool`]: the element of boolean arrays (NumPy's `bool_`, C's `bool`: one byte), what
//! comparisons, `isnan` and the logical operations give and what `where_` takes as its
//! condition.
//!
//! Why not Rust's `bool`: device memory reaches the host byte for byte, and a `bool` whose
//! byte is neither 0 nor 1 is undefined behaviour in Rust. Memory from
//! [`DeviceBuffer::uninit`](crate::DeviceBuffer::uninit) (or a kernel writing a `bool *` through
//! another type) can hold any byte, so `bool` cannot be [`DeviceRepr`]. `Bool` holds the byte
//! as it is, every byte is a valid `Bool`, and reading it as a Rust `bool` (`Bool::get`,
//! `bool::from`) takes any nonzero byte as true, as C does. The kernels of this crate store
//! only 0 and 1 (C's conversion to `bool`).

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::types::repr::DeviceRepr;

/// A boolean element of a device array: one byte, C's `bool` on the device; any nonzero byte
/// is true. Made with `Bool::from(true)` (or [`Bool::TRUE`]), read with [`get`](Self::get)
/// or `bool::from`.
///
/// ```
/// use gpu_runtime::gpuarray::Bool;
/// assert!(Bool::from(true).get());
/// assert_eq!(Bool::TRUE, Bool::from(true));
/// assert_eq!(format!("{:?}", Bool::FALSE), "false");
/// ```
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct Bool(u8);

// SAFETY: one byte, `repr(transparent)` over `u8`: plain data, every bit pattern is a valid
// `Bool`, with C's `bool`'s size and alignment (1) on the device.
unsafe impl DeviceRepr for Bool {}

impl Bool {
    /// True (stored as 1).
    pub const TRUE: Bool = Bool(1);
    /// False (stored as 0).
    pub const FALSE: Bool = Bool(0);

    /// The value: true for any nonzero byte, as C reads a `bool`.
    pub const fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for Bool {
    fn from(value: bool) -> Self {
        Bool(u8::from(value))
    }
}

impl From<Bool> for bool {
    fn from(value: Bool) -> Self {
        value.get()
    }
}

/// Equal as truth values: every nonzero byte is the same `true`.
impl PartialEq for Bool {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Bool {}

impl PartialEq<bool> for Bool {
    fn eq(&self, other: &bool) -> bool {
        self.get() == *other
    }
}

impl Hash for Bool {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.get().hash(state);
    }
}

impl fmt::Debug for Bool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl fmt::Display for Bool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.get(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_nonzero_byte_is_true() {
        assert!(!Bool(0).get());
        for b in [1u8, 2, 0x80, 0xff] {
            assert!(Bool(b).get());
            assert_eq!(Bool(b), Bool::TRUE);
        }
        assert_ne!(Bool::TRUE, Bool::FALSE);
        assert_eq!(std::mem::size_of::<Bool>(), 1);
        assert!(bool::from(Bool::from(true)));
        assert_eq!(Bool::from(false), false);
    }
}
