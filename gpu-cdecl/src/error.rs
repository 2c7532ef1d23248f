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
            DeclError::NotFound { name, available } => {
                write!(f, "no __global__ function named `{name}` in the CUDA source; ")?;
                if available.is_empty() {
                    write!(f, "it declares no __global__ function")
                } else {
                    write!(f, "it declares: {}", list(available))
                }
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
