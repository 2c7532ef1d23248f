use std::fmt;

/// Why a source could not be parsed, or a kernel not found. Display gives one clear English sentence for the user; include the line number where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeclError {
    /// No __global__ function with that name; `available` lists the kernels that are there.
    NotFound {
        /// The name that was looked for.
        name: String,
        /// The __global__ functions the source does declare, in order.
        available: Vec<String>,
        /// What may explain it: close names, macros, a group of an `#if` not taken (boxed: the
        /// error stays small).
        hint: Box<NotFoundHint>,
    },
    /// Several __global__ functions (overloads) with that name and different parameter lists.
    Ambiguous {
        /// The overloaded name.
        name: String,
        /// 1-based lines of each overload's name.
        lines: Vec<usize>,
    },
    /// A parameter type that cannot be passed to a kernel from Rust or that the parser does not understand
    /// (`float**`, a reference `float&`, a function pointer, `...` varargs). `param` is the parameter's text.
    UnsupportedParam {
        /// The kernel's name.
        kernel: String,
        /// The parameter as written (whitespace collapsed, comments removed).
        param: String,
        /// 1-based line where the parameter starts.
        line: usize,
        /// Why it is not supported, e.g. "pointers to pointers are not supported".
        reason: String,
    },
    /// Malformed source around a __global__ declaration (unbalanced parentheses, unterminated comment/string...).
    Syntax {
        /// 1-based line where the problem was found.
        line: usize,
        /// What is wrong, as a sentence fragment.
        message: String,
    },
}

/// What may explain a kernel that is not found, beside the list of those that are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotFoundHint {
    /// Declared names close to the one looked for (a few edits away, or containing it).
    pub near: Vec<String>,
    /// The macros whose expansions declare kernels (`UNARY_OP`): the source was read with them
    /// expanded, so a name they make is found.
    pub macros: Vec<String>,
    /// The name appears in a group of an `#if` (or `#ifdef`, `#elif`, ...) not taken.
    pub left_out: Option<LeftOut>,
    /// Headers included with `#include "…"` that could not be read.
    pub unopened: Vec<String>,
}

/// Where a name appears in a part of the source the preprocessor leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftOut {
    /// 1-based line of the name.
    pub line: usize,
    /// 1-based line of the conditional directive whose group holds it.
    pub directive_line: usize,
    /// The `__CUDA_ARCH__` the source was read for.
    pub arch: u32,
}

/// A list of more names than this is cut short in messages.
const MAX_LISTED: usize = 12;

fn list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for DeclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclError::NotFound {
                name,
                available,
                hint,
            } => {
                write!(f, "no __global__ function named `{name}` in the CUDA source; ")?;
                if available.is_empty() {
                    write!(f, "it declares no __global__ function")?;
                } else if available.len() <= MAX_LISTED {
                    write!(f, "it declares: {}", list(available))?;
                } else {
                    write!(
                        f,
                        "it declares {} kernels: {}, … ({} more)",
                        available.len(),
                        list(&available[..MAX_LISTED]),
                        available.len() - MAX_LISTED
                    )?;
                }
                hint.fmt(name, f)
            }
            DeclError::Ambiguous { name, lines } => {
                let lines = lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", ");
                write!(
                    f,
                    "the CUDA source declares several __global__ functions named `{name}` \
                     with different parameter lists (lines {lines}); give each kernel its own name"
                )
            }
            DeclError::UnsupportedParam {
                kernel,
                param,
                line,
                reason,
            } => write!(
                f,
                "kernel `{kernel}`, line {line}: parameter `{param}` cannot be passed from Rust: {reason}"
            ),
            DeclError::Syntax { line, message } => {
                write!(f, "CUDA source, line {line}: {message}")
            }
        }
    }
}

impl std::error::Error for DeclError {}

impl NotFoundHint {
    fn fmt(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = &self.left_out {
            write!(
                f,
                "; `{name}` appears at line {}, in a part of the source the preprocessor leaves out: \
                 the conditional at line {} is false when compiling with `__CUDA_ARCH__` {} (the \
                 architecture of `-arch=…` in `options`, else the newest) and the `-D` options given",
                l.line, l.directive_line, l.arch
            )?;
        }
        if !self.macros.is_empty() {
            write!(
                f,
                "; the macros {} declare kernels, and were read expanded, as NVRTC expands them",
                list(&self.macros)
            )?;
        }
        if !self.unopened.is_empty() {
            write!(
                f,
                "; the included header{} {} could not be read, so what {} declare{} is not known",
                if self.unopened.len() == 1 { "" } else { "s" },
                list(&self.unopened),
                if self.unopened.len() == 1 { "it" } else { "they" },
                if self.unopened.len() == 1 { "s" } else { "" },
            )?;
        }
        if !self.near.is_empty() {
            write!(f, "; did you mean {}?", or_list(&self.near))?;
        }
        Ok(())
    }

    /// True when nothing here explains the name: the Rust name may just differ from the C one.
    pub fn is_empty(&self) -> bool {
        self.near.is_empty() && self.left_out.is_none() && self.unopened.is_empty()
    }
}

/// `` `a` ``, `` `a` or `b` ``, `` `a`, `b` or `c` ``.
fn or_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [init @ .., last] => format!("{} or `{last}`", list(init)),
    }
}
