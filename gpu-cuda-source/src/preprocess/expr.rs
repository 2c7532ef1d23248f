//! The integer constant expression of an `#if` or `#elif`, after `defined` and the macros are
//! replaced: C's operators on `intmax_t`/`uintmax_t` (64 bits), names left over are 0 (`true`
//! is 1 in C++), as the C and C++ standards say.

use super::token::{Interner, PKind, PTok};

/// A value and whether it is unsigned (the usual arithmetic conversions make a result unsigned
/// when an operand is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Val {
    bits: u64,
    unsigned: bool,
}

impl Val {
    fn signed(v: i64) -> Val {
        Val {
            bits: v as u64,
            unsigned: false,
        }
    }
    fn bool(b: bool) -> Val {
        Val::signed(i64::from(b))
    }
    fn truthy(self) -> bool {
        self.bits != 0
    }
}

/// Parentheses and conditionals nested deeper than this make the expression an error, so that
/// the recursive parser cannot run out of stack.
const MAX_DEPTH: u32 = 256;

struct Parser<'t> {
    toks: &'t [PTok],
    syms: &'t Interner,
    i: usize,
    depth: u32,
}

/// The value of the expression, or `None` when it is not one (a syntax error, a division by
/// zero, a floating-point number), which the caller treats as false.
pub(super) fn evaluate(toks: &[PTok], syms: &Interner) -> Option<bool> {
    let mut p = Parser {
        toks,
        syms,
        i: 0,
        depth: 0,
    };
    let v = p.conditional()?;
    (p.i == toks.len()).then_some(v.truthy())
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks
            .get(self.i)
            .filter(|t| t.kind == PKind::Punct)
            .map(|t| self.syms.text(t.sym))
    }

    fn eat(&mut self, op: &str) -> bool {
        if self.peek() == Some(op) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// `a ? b : c`, and the comma operator (allowed in C++ inside parentheses).
    fn conditional(&mut self) -> Option<Val> {
        self.enter()?;
        let c = self.binary(0)?;
        let v = if self.eat("?") {
            let a = self.conditional()?;
            if !self.eat(":") {
                return None;
            }
            let b = self.conditional()?;
            let unsigned = a.unsigned || b.unsigned;
            let picked = if c.truthy() { a } else { b };
            Val {
                bits: picked.bits,
                unsigned,
            }
        } else {
            c
        };
        self.depth -= 1;
        Some(v)
    }

    /// Binary operators by precedence climbing (one loop per level, no recursion per
    /// operator).
    fn binary(&mut self, min: u8) -> Option<Val> {
        let mut lhs = self.unary()?;
        loop {
            let Some((prec, op)) = self
                .peek()
                .and_then(|op| binary_op(op).map(|p| (p, op.to_owned())))
            else {
                return Some(lhs);
            };
            if prec < min {
                return Some(lhs);
            }
            self.i += 1;
            self.enter()?;
            let rhs = self.binary(prec + 1)?;
            self.depth -= 1;
            lhs = apply(&op, lhs, rhs)?;
        }
    }

    fn unary(&mut self) -> Option<Val> {
        let mut ops = Vec::new();
        while let Some(op @ ("-" | "+" | "!" | "~")) = self.peek() {
            ops.push(op.to_owned());
            self.i += 1;
        }
        let mut v = self.primary()?;
        for op in ops.iter().rev() {
            v = match op.as_str() {
                "-" => Val {
                    bits: v.bits.wrapping_neg(),
                    unsigned: v.unsigned,
                },
                "!" => Val::bool(!v.truthy()),
                "~" => Val {
                    bits: !v.bits,
                    unsigned: v.unsigned,
                },
                _ => v,
            };
        }
        Some(v)
    }

    fn primary(&mut self) -> Option<Val> {
        let t = self.toks.get(self.i)?;
        self.i += 1;
        let text = self.syms.text(t.sym);
        match t.kind {
            PKind::Number => number(text),
            PKind::Char => char_value(text),
            // A name no macro replaced: `true` is 1 (C++), any other is 0.
            PKind::Ident => Some(Val::bool(text == "true")),
            PKind::Punct if text == "(" => {
                let v = self.conditional_or_comma()?;
                self.eat(")").then_some(v)
            }
            _ => None,
        }
    }

    fn conditional_or_comma(&mut self) -> Option<Val> {
        let mut v = self.conditional()?;
        while self.eat(",") {
            v = self.conditional()?;
        }
        Some(v)
    }
}

/// The precedence of a binary operator, higher binds tighter.
fn binary_op(op: &str) -> Option<u8> {
    Some(match op {
        "*" | "/" | "%" => 10,
        "+" | "-" => 9,
        "<<" | ">>" => 8,
        "<" | "<=" | ">" | ">=" => 7,
        "==" | "!=" => 6,
        "&" => 5,
        "^" => 4,
        "|" => 3,
        "&&" => 2,
        "||" => 1,
        _ => return None,
    })
}

fn apply(op: &str, a: Val, b: Val) -> Option<Val> {
    let unsigned = a.unsigned || b.unsigned;
    let arith = |bits: u64| Val { bits, unsigned };
    let (sa, sb) = (a.bits as i64, b.bits as i64);
    let cmp = |lt: bool, eq: bool| -> Val {
        let ord = if unsigned {
            a.bits.cmp(&b.bits)
        } else {
            sa.cmp(&sb)
        };
        Val::bool(match (lt, eq) {
            (true, false) => ord.is_lt(),
            (true, true) => ord.is_le(),
            (false, false) => ord.is_gt(),
            (false, true) => ord.is_ge(),
        })
    };
    Some(match op {
        "*" => arith(a.bits.wrapping_mul(b.bits)),
        "/" | "%" => {
            if b.bits == 0 {
                return None;
            }
            let bits = match (unsigned, op) {
                (true, "/") => a.bits / b.bits,
                (true, _) => a.bits % b.bits,
                (false, "/") => sa.wrapping_div(sb) as u64,
                (false, _) => sa.wrapping_rem(sb) as u64,
            };
            arith(bits)
        }
        "+" => arith(a.bits.wrapping_add(b.bits)),
        "-" => arith(a.bits.wrapping_sub(b.bits)),
        // The shift keeps the left operand's type.
        "<<" => Val {
            bits: a.bits.wrapping_shl(b.bits.min(63) as u32),
            unsigned: a.unsigned,
        },
        ">>" => Val {
            bits: if a.unsigned {
                a.bits.wrapping_shr(b.bits.min(63) as u32)
            } else {
                sa.wrapping_shr(b.bits.min(63) as u32) as u64
            },
            unsigned: a.unsigned,
        },
        "<" => cmp(true, false),
        "<=" => cmp(true, true),
        ">" => cmp(false, false),
        ">=" => cmp(false, true),
        "==" => Val::bool(a.bits == b.bits),
        "!=" => Val::bool(a.bits != b.bits),
        "&" => arith(a.bits & b.bits),
        "^" => arith(a.bits ^ b.bits),
        "|" => arith(a.bits | b.bits),
        "&&" => Val::bool(a.truthy() && b.truthy()),
        "||" => Val::bool(a.truthy() || b.truthy()),
        _ => return None,
    })
}

/// An integer literal: decimal, octal, hex or binary, with digit separators and a `u`/`l`/`z`
/// suffix; `None` for a floating-point number or anything else.
fn number(text: &str) -> Option<Val> {
    let lower = text.to_ascii_lowercase().replace('\'', "");
    let digits_end = lower
        .find(|c: char| matches!(c, 'u' | 'l' | 'z') && !lower.starts_with("0x"))
        .or_else(|| {
            // In hex, only a trailing run of suffix letters is a suffix.
            lower.starts_with("0x").then(|| {
                lower.len()
                    - lower
                        .chars()
                        .rev()
                        .take_while(|c| matches!(c, 'u' | 'l' | 'z'))
                        .count()
            })
        })
        .unwrap_or(lower.len());
    let (digits, suffix) = lower.split_at(digits_end);
    if !suffix.chars().all(|c| matches!(c, 'u' | 'l' | 'z')) || suffix.len() > 3 {
        return None;
    }
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = digits.strip_prefix("0b") {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() {
        return None;
    }
    let bits = u64::from_str_radix(body, radix).ok()?;
    // A decimal literal too large for `intmax_t` is unsigned, as is one with a `u`.
    let unsigned = suffix.contains('u') || (bits > i64::MAX as u64);
    Some(Val { bits, unsigned })
}

/// A character literal's value: its one character (escapes read), or several packed as a
/// multi-character constant is.
fn char_value(text: &str) -> Option<Val> {
    let start = text.find('\'')?;
    let inner = text.get(start + 1..text.len().checked_sub(1)?)?;
    let b = inner.as_bytes();
    let mut i = 0;
    let mut v: u64 = 0;
    let mut n = 0;
    while i < b.len() && n < 8 {
        let c = if b[i] == b'\\' {
            i += 1;
            let e = *b.get(i)?;
            i += 1;
            match e {
                b'n' => 10,
                b't' => 9,
                b'r' => 13,
                b'0'..=b'7' => {
                    let mut x = u64::from(e - b'0');
                    let mut k = 0;
                    while k < 2 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                        x = x * 8 + u64::from(b[i] - b'0');
                        i += 1;
                        k += 1;
                    }
                    x
                }
                b'x' => {
                    let mut x = 0u64;
                    while i < b.len() && b[i].is_ascii_hexdigit() {
                        x = x.wrapping_mul(16) + u64::from((b[i] as char).to_digit(16)?);
                        i += 1;
                    }
                    x
                }
                b'a' => 7,
                b'b' => 8,
                b'f' => 12,
                b'v' => 11,
                other => u64::from(other),
            }
        } else {
            i += 1;
            u64::from(b[i - 1])
        };
        v = (v << 8) | (c & 0xff);
        n += 1;
    }
    // A plain `char` is signed: one character above 127 is negative.
    if n == 1 && text.starts_with('\'') {
        return Some(Val::signed(i64::from(v as u8 as i8)));
    }
    Some(Val {
        bits: v,
        unsigned: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preprocess::token::lex_file;

    fn eval(src: &str) -> Option<bool> {
        let mut syms = Interner::default();
        let (toks, _) = lex_file(src, &mut syms, None);
        evaluate(&toks, &syms)
    }

    #[test]
    fn integer_arithmetic_as_the_standard_says() {
        for (e, want) in [
            ("1", Some(true)),
            ("0", Some(false)),
            ("1 + 2 * 3 == 7", Some(true)),
            ("(1 + 2) * 3 == 9", Some(true)),
            ("800 >= 530 && 890 < 800", Some(false)),
            ("-1 < 0", Some(true)),
            // The usual arithmetic conversions: -1 is converted to a large unsigned value.
            ("-1 < 0u", Some(false)),
            ("0x10 == 16 && 010 == 8 && 0b11 == 3 && 1'000 == 1000", Some(true)),
            ("201703L >= 201402L", Some(true)),
            ("18446744073709551615u == -1", Some(true)),
            ("1 ? 2 : 0", Some(true)),
            ("0 ? 1 : 0 ? 1 : 0", Some(false)),
            ("~0 == -1 && !0 && !!5", Some(true)),
            ("1 << 4 == 16 && -16 >> 2 == -4", Some(true)),
            ("7 % 3 == 1 && 7 / 2 == 3", Some(true)),
            (
                "'a' == 97 && '\\n' == 10 && '\\x41' == 65 && '\\0' == 0",
                Some(true),
            ),
            ("true && !false", Some(true)),
            ("UNDEFINED_NAME", Some(false)),
            ("(1, 0)", Some(false)),
            // Not expressions: an error, which the caller takes as false.
            ("1 / 0", None),
            ("1 % 0", None),
            ("1.5", None),
            ("(1", None),
            ("1 +", None),
            ("", None),
            ("1 2", None),
            ("\"s\"", None),
        ] {
            assert_eq!(eval(e), want, "{e}");
        }
    }

    #[test]
    fn no_overflow_panics_and_no_deep_recursion() {
        for e in [
            "9223372036854775807 + 1",
            "-9223372036854775807 - 1 == 0",
            "(-9223372036854775807 - 1) / -1",
            "(-9223372036854775807 - 1) % -1",
            "1 << 100",
            "1 >> -1",
            "99999999999999999999999",
            "'\\777777777'",
            "'abcdefghijkl'",
            "''",
            "'",
        ] {
            let _ = eval(e);
        }
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(eval(&deep), None);
        let unary = format!("{}1", "- ".repeat(100_000));
        assert_eq!(eval(&unary), Some(true));
        let chain = format!("1{}", " ? 1 : 1".repeat(50_000));
        assert_eq!(eval(&chain), None);
    }
}
