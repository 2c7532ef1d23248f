//! PyCUDA's argument format strings (`function.prepare("PPfi")`): the `struct` module's format
//! characters, one per kernel parameter, read into [`ArgType`]s.

use super::arg::{ArgType, MAX_ARGS};
use super::value::{StructType, VectorType};
use crate::error::{Error, Result};
use crate::types::vector::{Double2, Float2};

/// Sizes and alignments as in Python's `struct`: native (`@`, the default) or standard (`=`,
/// `<`), where `l`/`L` are 4 bytes and `n`, `N`, `P` do not exist.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Native,
    Standard,
}

impl ArgType {
    /// The parameter types a PyCUDA format string describes (`"PPfi"`: two pointers, a
    /// `float`, an `int`), one per parameter. What [`Function::prepare_format`](crate::driver::Function::prepare_format)
    /// reads; use this for [`prepare_args_unchecked`](crate::driver::Function::prepare_args_unchecked).
    ///
    /// The characters are those of Python's `struct` module, as PyCUDA takes them:
    ///
    /// | | | | |
    /// |---|---|---|---|
    /// | `b` `B` | `I8` `U8` | `c` | `I8` (`char`) |
    /// | `h` `H` | `I16` `U16` | `?` | `Bool` |
    /// | `i` `I` | `I32` `U32` | `e` | `F16` |
    /// | `l` `L` | `I64` `U64` (`I32` `U32` after `=` or `<`) | `f` `d` | `F32` `F64` |
    /// | `q` `Q` | `I64` `U64` (`Q` also a texture or surface object's handle) | `P` | [`Ptr`](Self::Ptr): a pointer, `const` or not |
    /// | `n` `N` | `I64` `U64` (`ssize_t`, `size_t`) | `F` `D` | `float2` `double2` (`cuFloatComplex`, `cuDoubleComplex`; PyCUDA's complex) |
    ///
    /// `16s` is one 16-byte value by value (a struct, or a vector type of that size: PyCUDA
    /// writes a numpy record type so); any other count repeats the character (`3f` is
    /// `fff`). Whitespace between items is ignored; `@` (native, the default), `=` or `<` may
    /// come first. Characters with no kernel parameter to stand for are refused with an
    /// [`Error::ArgumentFormat`] that names them: pad bytes (`x`), Pascal strings (`p`), `long
    /// double` (`g`), big-endian orders (`>`, `!`).
    ///
    /// ```
    /// use gpu_runtime::launch::{ArgType, StructType};
    /// use gpu_runtime::Error;
    /// assert_eq!(
    ///     ArgType::parse_format("PPfi")?,
    ///     [ArgType::Ptr, ArgType::Ptr, ArgType::F32, ArgType::I32]
    /// );
    /// assert_eq!(
    ///     ArgType::parse_format("2d 16s")?,
    ///     [ArgType::F64, ArgType::F64, ArgType::Struct(StructType::bytes(16))]
    /// );
    /// let Err(Error::ArgumentFormat { position, character, .. }) = ArgType::parse_format("PPz")
    /// else { panic!() };
    /// assert_eq!((position, character), (2, Some('z')));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn parse_format(format: &str) -> Result<Vec<ArgType>> {
        let fail = |position: usize, character: Option<char>, detail: String| Error::ArgumentFormat {
            format: format.to_owned(),
            position,
            character,
            detail,
        };
        let mut chars = format.char_indices().peekable();
        let mut mode = Mode::Native;
        match chars.peek() {
            Some(&(_, '@')) => {
                chars.next();
            }
            Some(&(_, '=' | '<')) => {
                mode = Mode::Standard;
                chars.next();
            }
            Some(&(at, c @ ('>' | '!'))) => {
                return Err(fail(
                    at,
                    Some(c),
                    format!("`{c}` is big-endian byte order, but CUDA devices are little-endian: leave it out, or write `@`, `=` or `<`"),
                ))
            }
            _ => {}
        }
        let mut types = Vec::new();
        while let Some((at, c)) = chars.next() {
            if c.is_whitespace() {
                continue;
            }
            let mut count: Option<usize> = None;
            let (mut at, mut c) = (at, c);
            while let Some(d) = c.to_digit(10) {
                let n = count
                    .unwrap_or(0)
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(d as usize))
                    .ok_or_else(|| fail(at, Some(c), "the count is too large".into()))?;
                count = Some(n);
                match chars.next() {
                    Some((a, next)) => (at, c) = (a, next),
                    None => {
                        return Err(fail(
                            format.len(),
                            None,
                            format!(
                                "the format ends after the count {n}, where a format character was expected"
                            ),
                        ))
                    }
                }
            }
            let ty = item(c, mode).map_err(|detail| fail(at, Some(c), detail))?;
            let Some(ty) = ty else {
                // `Ns`: one value of N bytes.
                let size = count.unwrap_or(1);
                if size == 0 {
                    return Err(fail(
                        at,
                        Some(c),
                        "`0s` is a value of no bytes, which no kernel parameter is".into(),
                    ));
                }
                types.push(ArgType::Struct(StructType::bytes(size)));
                continue;
            };
            let n = count.unwrap_or(1);
            if types.len().saturating_add(n) > MAX_ARGS {
                return Err(fail(
                    at,
                    Some(c),
                    format!("it describes more than {MAX_ARGS} parameters, the most a launch takes"),
                ));
            }
            types.extend(std::iter::repeat_n(ty, n));
        }
        if types.len() > MAX_ARGS {
            return Err(fail(
                format.len(),
                None,
                format!("it describes more than {MAX_ARGS} parameters, the most a launch takes"),
            ));
        }
        Ok(types)
    }
}

/// The type of format character `c` (`None` for `s`, whose count is a size), or why it is not
/// one.
fn item(c: char, mode: Mode) -> std::result::Result<Option<ArgType>, String> {
    let native_only = |t: ArgType| match mode {
        Mode::Native => Ok(Some(t)),
        Mode::Standard => Err(format!(
            "`{c}` exists only in native mode (no prefix, or `@`), as in Python's struct module"
        )),
    };
    let long = |native: ArgType, standard: ArgType| {
        Ok(Some(match mode {
            // CUDA's `long` is 64-bit on the LP64 platforms it runs on (as gpu-cuda-source reads it).
            Mode::Native => native,
            Mode::Standard => standard,
        }))
    };
    Ok(Some(match c {
        'c' | 'b' => ArgType::I8,
        'B' => ArgType::U8,
        '?' => ArgType::Bool,
        'h' => ArgType::I16,
        'H' => ArgType::U16,
        'i' => ArgType::I32,
        'I' => ArgType::U32,
        'l' => return long(ArgType::I64, ArgType::I32),
        'L' => return long(ArgType::U64, ArgType::U32),
        'q' => ArgType::I64,
        'Q' => ArgType::U64,
        'n' => return native_only(ArgType::I64),
        'N' => return native_only(ArgType::U64),
        'e' => ArgType::F16,
        'f' => ArgType::F32,
        'd' => ArgType::F64,
        'F' => ArgType::Vector(VectorType::of::<Float2>()),
        'D' => ArgType::Vector(VectorType::of::<Double2>()),
        'P' => return native_only(ArgType::Ptr),
        's' => return Ok(None),
        'x' => {
            return Err("`x` is a pad byte, which no kernel parameter stands for: the driver places each parameter at its own alignment, so leave pads out".into())
        }
        'p' => {
            return Err("`p` is a Pascal string, not a kernel parameter; for a value of N bytes by value write `Ns`".into())
        }
        'g' | 'G' => return Err(format!("`{c}` is a long double, which CUDA device code does not have")),
        '@' | '=' | '<' | '>' | '!' => {
            return Err(format!("`{c}` is a byte order, which may only come first"))
        }
        _ => {
            return Err(format!(
                "`{c}` is not a format character: write one of bBchHiIlLqQnN?efdFDPs per parameter (P for a pointer)"
            ))
        }
    }))
}
