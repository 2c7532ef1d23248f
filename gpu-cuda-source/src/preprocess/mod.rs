//! A C preprocessor for reading declarations as NVRTC compiles them: object- and function-like
//! macros (`#`, `##`, `__VA_ARGS__`, `__VA_OPT__`, GNU's `, ## __VA_ARGS__`), `#if`, `#ifdef`,
//! `#ifndef`, `#elif`, `#else` with `defined` and integer expressions, and `#include` of the
//! headers a [`Preprocess`] can read (the local ones; CUDA's and the standard headers are not
//! read, their macros do not declare kernels). Kernels stamped out by macros, as in
//!
//! ```c
//! #define UNARY_OP(TYPENAME, FN_NAME, FUNC) \
//! extern "C" __global__ void FN_NAME(const size_t numel, const TYPENAME *inp, TYPENAME *out) { ... }
//! UNARY_OP(float, uexp_f32, expf(x))
//! ```
//!
//! are then found like any other.
//!
//! It reads as NVRTC does: `__CUDACC__`, `__CUDACC_RTC__` and `__CUDA_ARCH__` are defined (the
//! architecture from an `-arch`/`--gpu-architecture` option, else [`DEFAULT_CUDA_ARCH`], as
//! the build-time check compiles for the newest one), `__cplusplus` is C++17's (or `-std=`'s),
//! and `-D`/`-U` options apply. Like the rest of the crate it never panics, and runs in time
//! linear in the input: every step counts against a budget proportional to the input, past
//! which the source is read without its macros expanded, as before this pass existed.

pub(crate) mod config;
mod engine;
mod expr;
mod token;

#[cfg(test)]
mod tests;

use crate::lexer::{Kind, Tok};
use engine::Engine;
use token::PKind;

// `Header` and `Preprocess` are public at the crate root only (one public path per item,
// scripts/check_public_paths.py).
pub(crate) use config::Preprocess;
pub use config::{HeaderSource, DEFAULT_CUDA_ARCH};
pub(crate) use engine::Report;

/// A source after preprocessing: its text as the declaration reader's tokens see it, and what
/// the preprocessor noticed.
pub(crate) struct Expanded {
    text: String,
    spans: Vec<(Kind, usize, usize, usize)>,
    pub report: Report,
}

impl Expanded {
    /// The tokens, split as [`crate::lexer::lex`] splits (`>>` is two tokens), each on the line
    /// of the main source it comes from.
    pub fn toks(&self) -> Vec<Tok<'_>> {
        self.spans
            .iter()
            .map(|&(kind, start, end, line)| Tok {
                kind,
                text: self.text.get(start..end).unwrap_or(""),
                start,
                end,
                line,
            })
            .collect()
    }
}

/// Preprocesses `source`.
pub(crate) fn expand(source: &str, cfg: &Preprocess<'_>) -> Expanded {
    let mut engine = Engine::new(cfg);
    for (name, value) in [
        ("__CUDACC__", "1"),
        ("__CUDACC_RTC__", "1"),
        ("__CUDACC_VER_MAJOR__", "13"),
        ("__CUDACC_VER_MINOR__", "0"),
        ("__CUDACC_VER_BUILD__", "0"),
        ("__CHAR_BIT__", "8"),
        ("__SIZEOF_INT__", "4"),
        ("__SIZEOF_LONG__", "8"),
        ("__SIZEOF_LONG_LONG__", "8"),
        ("__SIZEOF_POINTER__", "8"),
        ("__SIZEOF_SIZE_T__", "8"),
        ("__LP64__", "1"),
    ] {
        engine.define_option(&format!("{name}={value}"));
    }
    engine.define_option(&format!("__CUDA_ARCH__={}", cfg.cuda_arch));
    engine.define_option(&format!("__cplusplus={}", cfg.cplusplus));
    for (define, d) in &cfg.defines {
        if *define {
            engine.define_option(d);
        } else {
            engine.undefine_option(d);
        }
    }
    let out = engine.run(source);
    let mut text = String::new();
    let mut spans = Vec::with_capacity(out.len());
    let mut prev_word = false;
    for t in &out {
        let s = engine.syms.text(t.sym);
        let word = matches!(t.kind, PKind::Ident | PKind::Number | PKind::Param(_));
        if !text.is_empty() && (t.has(token::SPACE) || (word && prev_word)) {
            text.push(' ');
        }
        prev_word = word;
        let line = t.line as usize;
        let kind = match t.kind {
            PKind::Ident | PKind::Param(_) => Kind::Ident,
            PKind::Number => Kind::Number,
            PKind::Str => Kind::Str,
            PKind::Char => Kind::Char,
            PKind::BadLit => Kind::BadLit,
            PKind::Punct => {
                // Split as the declaration lexer splits: only `::`, `->`, `&&` and `...` are
                // joined.
                let mut rest = s;
                while let Some(c) = rest.chars().next() {
                    let len = if rest.starts_with("...") {
                        3
                    } else if rest.starts_with("::") || rest.starts_with("->") || rest.starts_with("&&") {
                        2
                    } else {
                        c.len_utf8()
                    };
                    let start = text.len();
                    text.push_str(&rest[..len]);
                    spans.push((Kind::Punct, start, text.len(), line));
                    rest = &rest[len..];
                }
                continue;
            }
            PKind::Placemarker | PKind::FileEnd => continue,
        };
        let start = text.len();
        text.push_str(s);
        spans.push((kind, start, text.len(), line));
    }
    Expanded {
        text,
        spans,
        report: std::mem::take(&mut engine.report),
    }
}
