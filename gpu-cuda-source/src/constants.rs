//! Integer constants a source defines (`#define N 16`, `constexpr int N = 16;`), and a small
//! evaluator for the integer expressions that size arrays (`taps[2 * RADIUS + 1]`). Best
//! effort and never failing: whatever it cannot work out is `None`.

use std::collections::HashMap;

use crate::lexer::{lex, Kind, Tok};

/// Deeper nesting than this is given up on, so that hostile input cannot overflow the stack.
const MAX_DEPTH: usize = 64;

/// Value of an integer literal: decimal, hex, octal or binary, with `u`/`l` suffixes.
fn literal(text: &str) -> Option<i128> {
    let t = text.trim_end_matches(['u', 'U', 'l', 'L']).replace('\'', "");
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t.as_str(), 10)
    };
    i128::from_str_radix(digits, radix).ok()
}

struct Eval<'a, 'b> {
    toks: &'b [Tok<'a>],
    at: usize,
    consts: &'b HashMap<String, i128>,
}

impl Eval<'_, '_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.at).map(|t| t.text)
    }

    /// The operator at the cursor and how many tokens it takes: the lexer gives `<<` and `>>`
    /// as two adjacent `<` or `>`.
    fn operator(&self) -> Option<(&'static str, usize)> {
        let t = self.toks.get(self.at)?;
        let next = self.toks.get(self.at + 1).filter(|n| n.start == t.end);
        Some(match (t.text, next.map(|n| n.text)) {
            ("<", Some("<")) => ("<<", 2),
            (">", Some(">")) => (">>", 2),
            ("<<", _) => ("<<", 1),
            (">>", _) => (">>", 1),
            ("|", _) => ("|", 1),
            ("^", _) => ("^", 1),
            ("&", _) => ("&", 1),
            ("+", _) => ("+", 1),
            ("-", _) => ("-", 1),
            ("*", _) => ("*", 1),
            ("/", _) => ("/", 1),
            ("%", _) => ("%", 1),
            _ => return None,
        })
    }

    fn binary(&mut self, level: usize, depth: usize) -> Option<i128> {
        // Levels, loosest first: | ^ & << >> + - * / %.
        const LEVELS: [&[&str]; 6] = [
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary(depth);
        }
        let mut value = self.binary(level + 1, depth)?;
        while let Some((op, width)) = self.operator().filter(|(op, _)| LEVELS[level].contains(op)) {
            self.at += width;
            let rhs = self.binary(level + 1, depth)?;
            value = match op {
                "|" => value | rhs,
                "^" => value ^ rhs,
                "&" => value & rhs,
                "<<" => value.checked_shl(u32::try_from(rhs).ok()?)?,
                ">>" => value.checked_shr(u32::try_from(rhs).ok()?)?,
                "+" => value.checked_add(rhs)?,
                "-" => value.checked_sub(rhs)?,
                "*" => value.checked_mul(rhs)?,
                "/" => value.checked_div(rhs)?,
                _ => value.checked_rem(rhs)?,
            };
        }
        Some(value)
    }

    fn unary(&mut self, depth: usize) -> Option<i128> {
        if depth > MAX_DEPTH {
            return None;
        }
        let t = self.toks.get(self.at)?;
        self.at += 1;
        match t.text {
            "(" => {
                let v = self.binary(0, depth + 1)?;
                (self.peek() == Some(")")).then(|| self.at += 1)?;
                Some(v)
            }
            "-" => self.unary(depth + 1)?.checked_neg(),
            "+" => self.unary(depth + 1),
            "~" => Some(!self.unary(depth + 1)?),
            _ if t.kind == Kind::Number => literal(t.text),
            _ if t.kind == Kind::Ident => self.consts.get(t.text).copied(),
            _ => None,
        }
    }
}

/// The value of the integer expression `toks`, using `consts` for names; `None` when any part
/// of it is not an integer constant this evaluator knows.
pub(crate) fn evaluate(toks: &[Tok<'_>], consts: &HashMap<String, i128>) -> Option<i128> {
    let mut e = Eval { toks, at: 0, consts };
    let v = e.binary(0, 0)?;
    (e.at == toks.len()).then_some(v)
}

/// Words that may stand in an integer constant's declaration before its name.
fn is_int_decl_word(w: &str) -> bool {
    matches!(
        w,
        "const"
            | "constexpr"
            | "static"
            | "int"
            | "unsigned"
            | "signed"
            | "long"
            | "short"
            | "char"
            | "size_t"
            | "std"
            | "::"
            | "int32_t"
            | "uint32_t"
            | "int64_t"
            | "uint64_t"
            | "__device__"
            | "__constant__"
            | "__host__"
            | "inline"
    )
}

/// The text after `#define` of each `#define` line of `source`, its lines joined across
/// backslash continuations.
pub(crate) fn define_lines(source: &str) -> impl Iterator<Item = String> + '_ {
    let mut logical = String::new();
    source.lines().filter_map(move |line| {
        if let Some(stripped) = line.strip_suffix('\\') {
            logical.push_str(stripped);
            logical.push(' ');
            return None;
        }
        logical.push_str(line);
        let text = std::mem::take(&mut logical);
        let rest = text
            .trim_start()
            .strip_prefix('#')?
            .trim_start()
            .strip_prefix("define")?;
        rest.starts_with([' ', '\t']).then(|| rest.to_owned())
    })
}

/// The integer constants of a source, in order of definition: object-like `#define NAME expr`
/// and `const`/`constexpr` integer variables with an initializer, each evaluated with the ones
/// before it.
pub(crate) fn integer_constants(source: &str) -> HashMap<String, i128> {
    let mut consts = HashMap::new();
    for rest in define_lines(source) {
        let toks = lex(&rest).toks;
        // NAME followed directly by `(` is a function-like macro.
        let Some(name) = toks.first().filter(|t| t.kind == Kind::Ident) else {
            continue;
        };
        if toks.get(1).is_some_and(|t| t.is("(") && t.start == name.end) {
            continue;
        }
        if let Some(v) = evaluate(&toks[1..], &consts) {
            consts.insert(name.text.to_owned(), v);
        }
    }
    // const/constexpr integer variables: `constexpr int N = 2 * R + 1;`.
    let toks = lex(source).toks;
    for i in 1..toks.len().saturating_sub(1) {
        if !(toks[i].kind == Kind::Ident && toks[i + 1].is("=")) {
            continue;
        }
        let words = toks[..i].iter().rev().take_while(|t| is_int_decl_word(t.text));
        let (mut constant, mut integer) = (false, false);
        for t in words {
            constant |= matches!(t.text, "const" | "constexpr");
            integer |= !matches!(
                t.text,
                "const"
                    | "constexpr"
                    | "static"
                    | "__device__"
                    | "__constant__"
                    | "__host__"
                    | "inline"
                    | "std"
                    | "::"
            );
        }
        if !(constant && integer) {
            continue;
        }
        let end = toks[i + 2..].iter().take(64).position(|t| t.is(";"));
        if let Some(end) = end {
            if let Some(v) = evaluate(&toks[i + 2..i + 2 + end], &consts) {
                consts.insert(toks[i].text.to_owned(), v);
            }
        }
    }
    consts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_str(expr: &str, consts: &HashMap<String, i128>) -> Option<i128> {
        evaluate(&lex(expr).toks, consts)
    }

    #[test]
    fn arithmetic_follows_c_precedence() {
        let c = HashMap::new();
        assert_eq!(eval_str("2 * 3 + 1", &c), Some(7));
        assert_eq!(eval_str("2 * (3 + 1)", &c), Some(8));
        assert_eq!(eval_str("1 << 4 | 1", &c), Some(17));
        assert_eq!(
            eval_str("-3 + 0x10 + 010 + 0b11 + 5u", &c),
            Some(-3 + 16 + 8 + 3 + 5)
        );
        assert_eq!(eval_str("7 / 0", &c), None);
        assert_eq!(eval_str("2 *", &c), None);
        assert_eq!(eval_str("(1", &c), None);
        assert_eq!(eval_str("UNKNOWN + 1", &c), None);
        assert_eq!(eval_str(&"(".repeat(10_000), &c), None);
    }

    #[test]
    fn defines_and_constexprs_build_on_each_other() {
        let src = "#define RADIUS 4\n#define TAPS (2 * RADIUS + 1)\n#define SQ(x) ((x) * (x))\n\
                   #define LONG 1 + \\\n  2\nconstexpr int W = TAPS * 2;\nstatic const unsigned H = W + 1;\n\
                   int notconst = 5;\n__constant__ float taps[TAPS];";
        let c = integer_constants(src);
        assert_eq!(c.get("RADIUS"), Some(&4));
        assert_eq!(c.get("TAPS"), Some(&9));
        assert_eq!(c.get("LONG"), Some(&3));
        assert_eq!(c.get("W"), Some(&18));
        assert_eq!(c.get("H"), Some(&19));
        assert!(!c.contains_key("SQ"), "function-like macros are not constants");
        assert!(!c.contains_key("notconst"));
    }
}
