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
    while let Some(l) = lines.next() {
        let Some((line, tail)) = header(l, file_name) else {
            // Notes are indented by four or more; anything else between messages (blank lines,
            // the summary, messages about other files) belongs to no message of ours.
            if let Some(d) = out.last_mut() {
                let t = l.trim();
                if l.starts_with("    ") && !t.is_empty() {
                    d.notes.push(t.to_owned());
                }
            }
            continue;
        };
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

    /// NVRTC's log for `ui-tests/fail/template_error_in_one_instantiation.rs` (the `.stderr`
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

    /// `ui-tests/fail/nvrtc_warning.rs`: a warning with its number, and no error.
    const WARNING_LOG: &str =
        "scale.cu(3): warning #177-D: variable \"unused\" was declared but never referenced\n\
\x20     int unused = 3;\n\
\x20         ^\n\
\n\
Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\
\n";

    /// `ui-tests/fail/nvrtc_syntax_error.rs`, and a missing header (no quoted line) in a
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
