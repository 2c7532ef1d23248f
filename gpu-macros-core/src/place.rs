//! Where a line of a CUDA source is written, for messages: a build-time CUDA error names the
//! Rust file and line of the offending CUDA line (`src/main.rs:15:9 (line 3 of the kernel
//! string)`) for a source written in a string literal, and the path `file = "…"` gives (relative
//! to the crate's root) for a source in a file.
//!
//! The Rust line is where the literal starts (`Span::start`, from proc-macro2's `span-locations`,
//! which a stable compiler answers from Rust 1.88, the workspace's MSRV) plus the lines of the
//! literal as written before the CUDA line: a raw string holds its lines as they are, a cooked
//! one may spell a line break `\n`, so the literal's text is walked. A span inside a literal
//! (`Literal::subspan`) needs a nightly compiler: there the error points at the CUDA line itself;
//! on stable it points at the whole literal and the text names the line.

use proc_macro2::{LineColumn, Literal, Span};

/// Where a CUDA source is written.
#[derive(Clone)]
pub enum Origin {
    /// A string literal in a Rust file; `what` names it in messages ("kernel string").
    Literal { lit: Literal, what: &'static str },
    /// A file, by the path messages name it by (`file = "…"` as written), and the span of
    /// what names it.
    File { path: String, span: Span },
}

/// A CUDA line and column, as a message names it.
#[derive(Debug, PartialEq, Eq)]
pub struct At {
    /// `src/main.rs:7:5 (line 4 of the kernel string)`, `kernels/k.cu:4:14`.
    pub text: String,
    /// The number a quoted line is shown under: the Rust line when `text` names one.
    pub gutter: usize,
}

impl Origin {
    /// A source in the string literal `lit` (`what` says what it holds: "kernel string",
    /// "operation").
    pub fn literal(lit: &syn::LitStr, what: &'static str) -> Self {
        Origin::Literal {
            lit: lit.token(),
            what,
        }
    }

    /// Where messages about the source as a whole point: the literal, or the file's path.
    pub fn span(&self) -> Span {
        match self {
            Origin::Literal { lit, .. } => lit.span(),
            Origin::File { span, .. } => *span,
        }
    }

    /// Where the CUDA `line` (1-based) and `column` (1-based, when known) are.
    pub fn at(&self, line: usize, column: Option<usize>) -> At {
        match self {
            Origin::File { path, .. } => At {
                text: match column {
                    Some(c) => format!("{path}:{line}:{c}"),
                    None => format!("{path}:{line}"),
                },
                gutter: line,
            },
            Origin::Literal { lit, what } => {
                let span = lit.span();
                let file = span.file();
                // No file (outside a compiler, or a span the compiler made up): the line in the
                // string alone.
                let file = (!file.is_empty() && !file.starts_with('<')).then_some(file);
                at_in_literal(
                    &lit.to_string(),
                    span.start(),
                    file.as_deref(),
                    what,
                    line,
                    column,
                )
            }
        }
    }

    /// The span of the CUDA `line` inside the literal, where the compiler can give one (a
    /// nightly compiler); else `None`, and messages point at the whole literal.
    pub fn line_span(&self, line: usize) -> Option<Span> {
        let Origin::Literal { lit, .. } = self else {
            return None;
        };
        let (start, end) = line_bytes(&lit.to_string(), line)?;
        lit.subspan(start..end)
    }
}

/// [`Origin::at`] for a literal whose text as written is `token`, starting at `start` in
/// `file`.
fn at_in_literal(
    token: &str,
    start: LineColumn,
    file: Option<&str>,
    what: &str,
    line: usize,
    column: Option<usize>,
) -> At {
    let in_string = match column {
        Some(c) => format!("line {line}:{c} of the {what}"),
        None => format!("line {line} of the {what}"),
    };
    let rust = (start.line > 0)
        .then(|| rust_position(token, line, column.unwrap_or(1)))
        .flatten();
    match (file, rust) {
        (Some(file), Some((l, c))) => {
            let rust_line = start.line + l;
            let text = match column {
                // Columns count from the literal's own on its first line.
                Some(_) => {
                    let col = if l == 0 { start.column + c } else { c };
                    format!("{file}:{rust_line}:{} (line {line} of the {what})", col + 1)
                }
                None => format!("{file}:{rust_line} (line {line} of the {what})"),
            };
            At {
                text,
                gutter: rust_line,
            }
        }
        _ => At {
            text: in_string,
            gutter: line,
        },
    }
}

/// Each character of a string literal's value, with where it is written: its line and column
/// (both 0-based, counted from the literal's first character) and its byte offset in `token`,
/// the literal as written; and last, where the closing quote is. `None` for what is no string
/// literal (a byte or C string, a suffix).
fn value_chars(token: &str) -> Option<Vec<(char, usize, usize, usize)>> {
    let (open, hashes) = if let Some(rest) = token.strip_prefix('r') {
        let hashes = rest.len() - rest.trim_start_matches('#').len();
        (1 + hashes + 1, hashes)
    } else {
        (1, 0)
    };
    let raw = token.starts_with('r');
    let close = token.len().checked_sub(1 + hashes)?;
    if token.as_bytes().get(open - 1) != Some(&b'"')
        || token.as_bytes().get(close) != Some(&b'"')
        || close < open
    {
        return None;
    }
    let (mut line, mut col) = (0, open);
    let mut out = Vec::new();
    let mut chars = token[open..close].char_indices().peekable();
    let advance = |ch: char, line: &mut usize, col: &mut usize| {
        if ch == '\n' {
            *line += 1;
            *col = 0;
        } else {
            *col += 1;
        }
    };
    while let Some((i, ch)) = chars.next() {
        let byte = open + i;
        if raw || ch != '\\' {
            out.push((ch, line, col, byte));
            advance(ch, &mut line, &mut col);
            continue;
        }
        let (here_line, here_col) = (line, col);
        advance(ch, &mut line, &mut col);
        let Some((_, next)) = chars.next() else { break };
        advance(next, &mut line, &mut col);
        let value = match next {
            // A line continuation: the line break and the whitespace after it are no part of
            // the value.
            '\n' => {
                while let Some(&(_, w)) = chars.peek() {
                    if !w.is_whitespace() {
                        break;
                    }
                    advance(w, &mut line, &mut col);
                    chars.next();
                }
                continue;
            }
            'n' => '\n',
            'x' => {
                for _ in 0..2 {
                    if let Some((_, h)) = chars.next() {
                        advance(h, &mut line, &mut col);
                    }
                }
                '?'
            }
            'u' => {
                for (_, h) in chars.by_ref() {
                    advance(h, &mut line, &mut col);
                    if h == '}' {
                        break;
                    }
                }
                '?'
            }
            other => other,
        };
        out.push((value, here_line, here_col, byte));
    }
    out.push(('"', line, col, close));
    Some(out)
}

/// Where the CUDA `line`:`column` (1-based) is written in the literal `token`: its line (0-based,
/// from the literal's first) and column (0-based; on the literal's first line, from the
/// literal's first character). A column past the line's end is taken as its end.
fn rust_position(token: &str, line: usize, column: usize) -> Option<(usize, usize)> {
    let chars = value_chars(token)?;
    let first = line_start(&chars, line)?;
    let mut i = first;
    for _ in 1..column.max(1) {
        if chars[i].0 == '\n' || i + 1 == chars.len() {
            break;
        }
        i += 1;
    }
    Some((chars[i].1, chars[i].2))
}

/// The index in `chars` of the first character of the value's `line` (1-based).
fn line_start(chars: &[(char, usize, usize, usize)], line: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let mut seen = 1;
    if line == 1 {
        return Some(0);
    }
    for (i, c) in chars.iter().enumerate() {
        if c.0 == '\n' && i + 1 < chars.len() {
            seen += 1;
            if seen == line {
                return Some(i + 1);
            }
        }
    }
    None
}

/// The bytes of `token` that hold the value's `line` (1-based), without its line break.
fn line_bytes(token: &str, line: usize) -> Option<(usize, usize)> {
    let chars = value_chars(token)?;
    let first = line_start(&chars, line)?;
    let end = chars[first..]
        .iter()
        .find(|c| c.0 == '\n')
        .unwrap_or(&chars[chars.len() - 1]);
    Some((chars[first].3, end.3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(line: usize, column: usize) -> LineColumn {
        LineColumn { line, column }
    }

    #[test]
    fn a_raw_string_holds_its_lines_as_they_are() {
        // `#[kernel(r#"` on line 4, the literal from column 9 (0-based).
        let token = "r#\"\n__global__ void k(float *v) {\n    v[0] = y;\n}\n\"#";
        let at = at_in_literal(
            token,
            start(4, 9),
            Some("src/main.rs"),
            "kernel string",
            3,
            Some(12),
        );
        assert_eq!(
            at,
            At {
                text: "src/main.rs:6:12 (line 3 of the kernel string)".into(),
                gutter: 6
            }
        );
        // On the literal's first line, columns count from where it starts.
        let token = "r\"__global__ void k() { x; }\"";
        let at = at_in_literal(
            token,
            start(7, 20),
            Some("src/lib.rs"),
            "kernel string",
            1,
            Some(24),
        );
        assert_eq!(at.text, "src/lib.rs:7:46 (line 1 of the kernel string)");
        assert_eq!(at.gutter, 7);
    }

    #[test]
    fn a_cooked_string_may_spell_its_line_breaks() {
        // Three CUDA lines on one Rust line, then a continuation to the next Rust line.
        let token = "\"int a;\\nint b;\\n  c = 1;\\\n      int d;\"";
        assert_eq!(rust_position(token, 3, 3), Some((0, 19)));
        assert_eq!(rust_position(token, 3, 8), Some((0, 24)));
        // After `\` and the line break, the whitespace is skipped: `int d;` is on line 3 still
        // (no line break in the value), written on the literal's second line.
        assert_eq!(rust_position(token, 3, 9), Some((1, 6)));
        let at = at_in_literal(token, start(2, 10), Some("src/main.rs"), "operation", 2, Some(5));
        assert_eq!(at.text, "src/main.rs:2:24 (line 2 of the operation)");
    }

    #[test]
    fn a_column_past_the_line_is_its_end() {
        let token = "r\"ab\ncd\"";
        assert_eq!(rust_position(token, 1, 9), Some((0, 4)));
        assert_eq!(rust_position(token, 2, 9), Some((1, 2)));
        assert_eq!(rust_position(token, 3, 1), None);
    }

    #[test]
    fn without_a_file_the_line_in_the_string_alone() {
        let token = "r\"a\nb\"";
        let at = at_in_literal(token, start(3, 0), None, "kernel string", 2, Some(1));
        assert_eq!(at.text, "line 2:1 of the kernel string");
        assert_eq!(at.gutter, 2);
        let at = at_in_literal(token, start(3, 0), None, "kernel string", 2, None);
        assert_eq!(at.text, "line 2 of the kernel string");
    }

    #[test]
    fn a_file_is_named_as_written() {
        let file = Origin::File {
            path: "kernels/scale.cu".into(),
            span: Span::call_site(),
        };
        let at = file.at(4, Some(14));
        assert_eq!(at.text, "kernels/scale.cu:4:14");
        assert_eq!(at.gutter, 4);
        assert_eq!(file.at(4, None).text, "kernels/scale.cu:4");
        assert!(file.line_span(4).is_none());
    }

    #[test]
    fn a_literal_outside_a_compiler_names_the_line_in_the_string() {
        // proc-macro2's own spans (a unit test) name no file.
        let lit: syn::LitStr = syn::parse_str("r#\"\n__global__ void k() {}\n\"#").unwrap();
        let at = Origin::literal(&lit, "kernel string").at(2, Some(3));
        assert_eq!(at.text, "line 2:3 of the kernel string");
    }

    #[test]
    fn the_bytes_of_a_line() {
        let token = "r#\"\nab\ncd\n\"#";
        assert_eq!(line_bytes(token, 2), Some((4, 6)));
        assert_eq!(&token[4..6], "ab");
        assert_eq!(line_bytes(token, 4), Some((10, 10)));
        let token = "\"ab\\ncd\"";
        assert_eq!(line_bytes(token, 1), Some((1, 3)));
        assert_eq!(line_bytes(token, 2), Some((5, 7)));
    }
}
