//! NVRTC's compile log, read into typed diagnostics.
//!
//! The build-time check (`gpu-macros-core`, which turns each diagnostic into a Rust error or
//! warning) and the run-time `CompileError` (`gpu-runtime`, which shows the source lines the log
//! points at) read the same log, so they read it with this one parser: a format change in a new
//! NVRTC is then fixed once, and both agree on which lines a log reports.
//!
//! The format, per message (the quoted line and the caret are absent when NVRTC has no
//! position, e.g. for a missing header):
//!
//! ```text
//! k.cu(3): error: identifier "y" is undefined
//!     out[i] = y;
//!              ^
//!           detected during instantiation of "void f<T>() [with T=float]"
//! ```
//!
//! Like the rest of this crate it never panics and runs in linear time on any input: a log is
//! compiler output, but one passed in by a user's `CompileError` is still user input.

use std::collections::HashSet;

/// How serious a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// `error`, `catastrophic error`: the source did not compile.
    Error,
    /// `warning #177-D` and anything else NVRTC reports without failing.
    Warning,
}

/// One message of an NVRTC log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// 1-based line in the source, as NVRTC counts it (after `#line`, the user's line).
    pub line: usize,
    /// 1-based column, from the caret under the quoted line; `None` without a caret.
    pub column: Option<usize>,
    /// The message, without the file, line and kind (`identifier "y" is undefined`).
    pub message: String,
    /// The source line NVRTC quotes, without NVRTC's two-space indent.
    pub quoted: Option<String>,
    /// Further lines, e.g. `detected during instantiation of ...`.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// True for [`Severity::Error`].
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The messages of `log` about the source compiled under `file_name`, in order. Lines about
/// other files (an included header) and the summary (`1 error detected in ...`) are skipped.
pub fn parse(log: &str, file_name: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut lines = log.lines().peekable();
    // Whether the lines read since the last message's header are still about that message of
    // ours: a message about another file (a header, or another `#line` name) ends it, so that
    // its quoted line and caret are not taken for notes.
    let mut ours = false;
    while let Some(l) = lines.next() {
        let Some((line, tail)) = header(l, file_name) else {
            ours &= !is_position(l);
            // Notes are indented by four or more; anything else between messages (blank lines,
            // the summary, messages about other files) belongs to no message of ours.
            if let Some(d) = out.last_mut().filter(|_| ours) {
                let t = l.trim();
                if l.starts_with("    ") && !t.is_empty() {
                    d.notes.push(t.to_owned());
                }
            }
            continue;
        };
        ours = true;
        let (kind, message) = tail.split_once(": ").unwrap_or(("error", tail));
        let severity = if kind.contains("error") {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut d = Diagnostic {
            severity,
            line,
            column: None,
            message: message.trim().to_owned(),
            quoted: None,
            notes: Vec::new(),
        };
        if let Some(q) = lines.next_if(|n| n.starts_with("  ") && !n.trim().is_empty()) {
            d.quoted = Some(q.get(2..).unwrap_or("").to_owned());
            if let Some(c) = lines.next_if(|n| n.trim() == "^") {
                d.column = c.find('^').map(|i| i.saturating_sub(2) + 1);
            }
        }
        out.push(d);
    }
    out
}

/// Whether `l` begins with a message's position in some file: `NAME(LINE): `.
fn is_position(l: &str) -> bool {
    l.split_once('(').is_some_and(|(name, rest)| {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        !name.is_empty() && !name.starts_with(' ') && digits > 0 && rest[digits..].starts_with("): ")
    })
}

/// The lines (1-based) that `log` reports a message on for `file_name`, each once, in the order
/// first reported.
pub fn reported_lines(log: &str, file_name: &str) -> Vec<usize> {
    let mut seen = HashSet::new();
    log.lines()
        .filter_map(|l| header(l, file_name))
        .map(|(line, _)| line)
        .filter(|line| seen.insert(*line))
        .collect()
}

/// `log` with every mention of one of the built-in headers ([`crate::BUILTIN_HEADERS`]) marked
/// as built in: a message at `stdint.h(12): error: …` reads `stdint.h(12) (gpu-runtime's
/// built-in stdint.h): error: …`, and `declared at line 5 of stdint.h` reads `declared at line
/// 5 of gpu-runtime's built-in stdint.h`, so that nobody looks for the file on disk. Borrowed
/// when nothing is marked.
pub fn mark_builtin_headers(log: &str) -> std::borrow::Cow<'_, str> {
    const OF: &str = " of ";
    let is_builtin = |name: &str| crate::BUILTIN_HEADERS.iter().any(|(n, _)| *n == name);
    let mut out = String::new();
    let mut changed = false;
    for line in log.split_inclusive('\n') {
        let mut line = std::borrow::Cow::Borrowed(line);
        // A message's position: `NAME(LINE):` at the start.
        if let Some(open) = line.find('(') {
            let name = &line[..open];
            let rest = &line[open + 1..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && rest[digits..].starts_with("):") && is_builtin(name) {
                let at = open + 1 + digits + 1;
                line = format!("{} (gpu-runtime's built-in {name}){}", &line[..at], &line[at..]).into();
            }
        }
        // A reference to a line of one: `declared at line 5 of NAME)`.
        let mut marked = String::new();
        let mut rest: &str = &line;
        while let Some(i) = rest.find(OF) {
            let after = &rest[i + OF.len()..];
            let end = after.find([')', ' ', '\n', ',']).unwrap_or(after.len());
            let name = &after[..end];
            marked.push_str(&rest[..i + OF.len()]);
            if rest[..i].ends_with(|c: char| c.is_ascii_digit()) && is_builtin(name) {
                marked.push_str("gpu-runtime's built-in ");
            }
            marked.push_str(name);
            rest = &after[end..];
        }
        marked.push_str(rest);
        changed |= marked != *line;
        out.push_str(&marked);
    }
    if changed {
        out.into()
    } else {
        log.into()
    }
}

/// `file(LINE): rest` -> (LINE, rest), for our file only.
fn header<'a>(l: &'a str, file_name: &str) -> Option<(usize, &'a str)> {
    let rest = l.strip_prefix(file_name)?.strip_prefix('(')?;
    let (num, tail) = rest.split_once("): ")?;
    let line = num.parse::<usize>().ok()?;
    Some((line, tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVRTC's log for `tests/ui-tests/fail/template_error_in_one_instantiation.rs` (the `.stderr`
    /// shows what the macro made of it): two errors with carets and an instantiation note each.
    const TEMPLATE_LOG: &str = "mix.cu(5): error: expression must have integral or unscoped enum type\n\
\x20     if (i < n) x[i] = x[i] ^ m;\n\
\x20                       ^\n\
\x20         detected during instantiation of \"void mix(T *, T, int) [with T=float]\" at line 14 of mix.cu\n\
\n\
mix.cu(5): error: expression must have integral or unscoped enum type\n\
\x20     if (i < n) x[i] = x[i] ^ m;\n\
\x20                              ^\n\
\x20         detected during instantiation of \"void mix(T *, T, int) [with T=float]\" at line 14 of mix.cu\n\
\n\
2 errors detected in the compilation of \"mix.cu\".\n";

    /// `tests/ui-tests/fail/nvrtc_warning.rs`: a warning with its number, and no error.
    const WARNING_LOG: &str =
        "scale.cu(3): warning #177-D: variable \"unused\" was declared but never referenced\n\
\x20     int unused = 3;\n\
\x20         ^\n\
\n\
Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\
\n";

    /// `tests/ui-tests/fail/nvrtc_syntax_error.rs`, and a missing header (no quoted line) in a
    /// header of another name, which is not ours.
    const SYNTAX_LOG: &str = "scale.cu(4): error: expected a \";\"\n\
\x20     if (i < n) v[i] *= factor;\n\
\x20     ^\n\
\n\
helper.cuh(1): error: cannot open source file \"missing.h\"\n\
scale.cu(2): catastrophic error: cannot open source file \"x.h\"\n\
\n\
2 errors detected in the compilation of \"scale.cu\".\n";

    #[test]
    fn a_template_log_gives_each_error_its_column_and_note() {
        let d = parse(TEMPLATE_LOG, "mix.cu");
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            d[0],
            Diagnostic {
                severity: Severity::Error,
                line: 5,
                column: Some(23),
                message: "expression must have integral or unscoped enum type".to_owned(),
                quoted: Some("    if (i < n) x[i] = x[i] ^ m;".to_owned()),
                notes: vec![
                    "detected during instantiation of \"void mix(T *, T, int) [with T=float]\" at line 14 of mix.cu"
                        .to_owned()
                ],
            }
        );
        assert_eq!(d[1].column, Some(30));
        assert_eq!(reported_lines(TEMPLATE_LOG, "mix.cu"), [5]);
    }

    #[test]
    fn a_warning_is_not_an_error_and_the_remark_is_no_note() {
        let d = parse(WARNING_LOG, "scale.cu");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].severity, Severity::Warning);
        assert!(!d[0].is_error());
        assert_eq!((d[0].line, d[0].column), (3, Some(9)));
        assert_eq!(
            d[0].message,
            "variable \"unused\" was declared but never referenced"
        );
        assert!(d[0].notes.is_empty(), "{:?}", d[0].notes);
    }

    #[test]
    fn other_files_and_positionless_errors() {
        let d = parse(SYNTAX_LOG, "scale.cu");
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!((d[0].line, d[0].column), (4, Some(5)));
        assert_eq!(d[0].message, "expected a \";\"");
        // `catastrophic error` is an error; it quotes nothing, so it has no column.
        assert!(d[1].is_error());
        assert_eq!((d[1].line, d[1].column, d[1].quoted.as_deref()), (2, None, None));
        assert_eq!(reported_lines(SYNTAX_LOG, "scale.cu"), [4, 2]);
        // A file whose name only begins like ours is another file.
        assert!(parse(SYNTAX_LOG, "scale").is_empty());
        assert_eq!(reported_lines(SYNTAX_LOG, "helper.cuh"), [1]);
    }

    /// A reduction's expression (`#line 1 "map"`) among messages about the generated text:
    /// the other messages' quoted lines and carets are not the expression's notes.
    #[test]
    fn another_files_lines_are_no_notes() {
        let log = "map(1): error: identifier \"y\" is undefined\n\
\x20 x * y\n\
\x20     ^\n\
\n\
k.cu(40): warning #177-D: variable \"gpu_r\" was declared but never referenced\n\
\x20 long long gpu_r = gpu_o; long long x__i = x__o;\n\
\x20           ^\n\
\n";
        let d = parse(log, "map");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].line, d[0].column), (1, Some(5)));
        assert!(d[0].notes.is_empty(), "{:?}", d[0].notes);
        assert_eq!(parse(log, "k.cu").len(), 1);
    }

    #[test]
    fn built_in_headers_are_named_as_built_in() {
        let log = "stdint.h(5): error: invalid redeclaration of type name \"int64_t\" (declared at line 34 of /cuda/cccl/cuda/std/cstdint)\n\
                   \x20 typedef long int64_t;\n\
                   k.cu(3): error: invalid redeclaration of type name \"uint\" (declared at line 9 of gpu_runtime_prelude.h)\n\
                   mystdint.h(2): error: x (declared at line 1 of stdint.hpp)\n";
        let marked = mark_builtin_headers(log);
        assert_eq!(
            marked,
            "stdint.h(5) (gpu-runtime's built-in stdint.h): error: invalid redeclaration of type name \"int64_t\" (declared at line 34 of /cuda/cccl/cuda/std/cstdint)\n\
             \x20 typedef long int64_t;\n\
             k.cu(3): error: invalid redeclaration of type name \"uint\" (declared at line 9 of gpu-runtime's built-in gpu_runtime_prelude.h)\n\
             mystdint.h(2): error: x (declared at line 1 of stdint.hpp)\n"
        );
        // The user's own lines are still found under the file's name.
        assert_eq!(reported_lines(&marked, "k.cu"), [3]);
        // Nothing to mark: the log itself, borrowed.
        let plain = "k.cu(3): error: identifier \"y\" is undefined\n";
        assert!(matches!(
            mark_builtin_headers(plain),
            std::borrow::Cow::Borrowed(_)
        ));
        for bad in ["(", "stdint.h(", "stdint.h(1)", " of ", "x of ", "1 of stdint.h"] {
            let _ = mark_builtin_headers(bad);
        }
        assert_eq!(
            mark_builtin_headers("1 of stdint.h"),
            "1 of gpu-runtime's built-in stdint.h"
        );
    }

    #[test]
    fn malformed_logs_give_what_can_be_read_and_never_panic() {
        for log in [
            "",
            "k.cu(",
            "k.cu(x): error: y",
            "k.cu(99999999999999999999999): error: y",
            "k.cu(3)",
            "k.cu(3): ",
            "k.cu(3): error: e\n  ^",
            "k.cu(3): error: e\n  q\n^",
            "\u{e9}k.cu(1): error: \u{e9}\n  \u{e9}\n  ^",
        ] {
            let d = parse(log, "k.cu");
            assert!(d.len() <= 1, "{log:?}: {d:?}");
            assert_eq!(reported_lines(log, "k.cu").len(), d.len(), "{log:?}");
        }
        let d = parse("k.cu(3): error: e\n  ^", "k.cu");
        // The caret alone is taken as the quoted line: NVRTC quotes before it marks.
        assert_eq!((d[0].quoted.as_deref(), d[0].column), (Some("^"), None));
    }
}
