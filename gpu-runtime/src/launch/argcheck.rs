//! Buffer arguments checked against the lengths their `#[len = …]` attributes require, before
//! the launch: a kernel told `n` never reads past a buffer shorter than `n`.

use crate::driver::module::function::Function;
use crate::error::{Error, Result};

impl Function {
    /// Fails with [`Error::ArgumentTooShort`] when `len`, a buffer argument's element count,
    /// is below `required`, the value of its `#[len = expr]` attribute.
    #[doc(hidden)]
    #[inline]
    pub fn check_len(&self, arg: &'static str, len: usize, expr: &'static str, required: i128) -> Result<()> {
        if (len as i128) < required {
            return Err(Error::ArgumentTooShort {
                kernel: self.name().to_owned(),
                arg,
                len,
                expr,
                required: i64::try_from(required).unwrap_or(i64::MAX),
            });
        }
        Ok(())
    }
}

/// An integer argument used in a `#[len = …]` expression, widened so that `width * height`
/// cannot overflow (the macro rewrites each argument name in the expression to this).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`#[len = …]` can only compute with integer arguments, and `{Self}` is not an integer",
    label = "not an integer"
)]
pub trait LenValue {
    /// The value as an `i128`.
    fn len_value(&self) -> i128;
}

macro_rules! len_value {
    ($($t:ty),*) => {$(
        impl LenValue for $t {
            #[inline(always)]
            fn len_value(&self) -> i128 {
                *self as i128
            }
        }
    )*};
}
len_value!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, usize);

impl LenValue for u128 {
    #[inline(always)]
    fn len_value(&self) -> i128 {
        i128::try_from(*self).unwrap_or(i128::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::LenValue;

    #[test]
    fn integers_widen_without_overflow() {
        assert_eq!(u64::MAX.len_value(), u64::MAX as i128);
        assert_eq!((-3i32).len_value(), -3);
        assert_eq!(u128::MAX.len_value(), i128::MAX);
        assert_eq!(65536i32.len_value() * 65536i32.len_value(), 1i128 << 32);
    }
}
