//! The `__global__` functions of a source as the compiler sees them: read once, after the
//! preprocessor, then looked up by name with hints that fit when a name is not there.

use std::collections::HashSet;

use crate::error::{LeftOut, NotFoundHint};
use crate::kernels::{self, Entry};
use crate::preprocess::{self, Preprocess};
use crate::{DeclError, KernelDecl};

/// The kernels declared by a source, read after preprocessing it ([`Preprocess`]): a kernel a
/// macro stamps out (`UNARY_OP(float, uexp_f32, expg(x))`) is found as nvcc would find it, one
/// in a group of an `#if` not taken is not. Read once, looked up for any number of names.
///
/// Never panics, and takes time linear in the source and the headers it includes; where the
/// preprocessor cannot finish (an expansion beyond the budget linear time allows), the source is
/// read as written, macros unexpanded.
#[derive(Clone)]
pub struct Declarations {
    entries: Result<Vec<Entry>, DeclError>,
    kernel_macros: Vec<String>,
    left_out: std::collections::HashMap<String, (usize, usize)>,
    unopened: Vec<String>,
    arch: u32,
    complete: bool,
}

impl std::fmt::Debug for Declarations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Declarations")
            .field("kernels", &self.entries.as_ref().map(|e| e.len()))
            .field("kernel_macros", &self.kernel_macros)
            .field("complete", &self.complete)
            .finish()
    }
}

impl Declarations {
    /// Reads the declarations of `source`, preprocessed as `pp` says.
    pub fn read(source: &str, pp: &Preprocess<'_>) -> Declarations {
        if !source.contains('#') && !pp.has_defines() {
            // No directive and no macro but NVRTC's own, which no declaration names: the
            // source as written is what the compiler sees.
            return Declarations {
                entries: kernels::scan(source),
                kernel_macros: Vec::new(),
                left_out: Default::default(),
                unopened: Vec::new(),
                arch: pp.arch(),
                complete: true,
            };
        }
        let expanded = preprocess::expand(source, pp);
        let report = &expanded.report;
        let entries = if let Some((line, message)) = &report.error {
            Err(DeclError::Syntax {
                line: *line,
                message: message.clone(),
            })
        } else if report.over_budget {
            // Past the budget the expansion is not whole: the source as written, as before.
            kernels::scan(source)
        } else {
            Ok(kernels::scan_toks(&expanded.toks()))
        };
        Declarations {
            entries,
            kernel_macros: report.kernel_macros.clone(),
            left_out: report.left_out.clone(),
            unopened: report.unopened.clone(),
            arch: pp.arch(),
            complete: !report.over_budget && !report.incomplete,
        }
    }

    /// Every `__global__` function, in order; prototypes folded into definitions as
    /// [`crate::find_kernels`] does. Fails on the first declaration that cannot be parsed or
    /// has a parameter that cannot be passed from Rust.
    pub fn find_kernels(&self) -> Result<Vec<KernelDecl>, DeclError> {
        let entries = self.entries.as_ref().map_err(Clone::clone)?;
        let mut ok = Vec::with_capacity(entries.len());
        for e in entries {
            ok.push(e.result.clone()?);
        }
        Ok(kernels::dedupe(ok.iter()))
    }

    /// The `__global__` function named `name`, as [`crate::find_kernel`] finds it; when it is
    /// not there, [`DeclError::NotFound`] with the kernels there are and hints: names close to
    /// it, the macros that declare kernels, a group of an `#if` not taken that holds it.
    pub fn find_kernel(&self, name: &str) -> Result<KernelDecl, DeclError> {
        let entries = self.entries.as_ref().map_err(Clone::clone)?;
        let mut matching = Vec::new();
        for e in entries {
            if e.name.as_deref() == Some(name) {
                match &e.result {
                    Ok(d) => matching.push(d),
                    Err(err) => return Err(err.clone()),
                }
            }
        }
        let mut found = kernels::dedupe(matching.into_iter());
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => {
                if let Some(Err(err)) = entries
                    .iter()
                    .find(|e| e.name.is_none() && e.result.is_err())
                    .map(|e| &e.result)
                {
                    return Err(err.clone());
                }
                let mut seen = HashSet::new();
                let available: Vec<String> = entries
                    .iter()
                    .filter_map(|e| e.name.clone())
                    .filter(|n| seen.insert(n.clone()))
                    .collect();
                let hint = NotFoundHint {
                    near: near_names(name, &available),
                    macros: self.kernel_macros.clone(),
                    left_out: self.left_out.get(name).map(|&(line, directive_line)| LeftOut {
                        line,
                        directive_line,
                        arch: self.arch,
                    }),
                    unopened: self.unopened.clone(),
                };
                Err(DeclError::NotFound {
                    name: name.to_string(),
                    available,
                    hint: Box::new(hint),
                })
            }
            _ => Err(DeclError::Ambiguous {
                name: name.to_string(),
                lines: found.iter().map(|k| k.line).collect(),
            }),
        }
    }

    /// The names of the macros whose expansions declare kernels (`UNARY_OP`), in the order
    /// they are first used.
    pub fn kernel_macros(&self) -> &[String] {
        &self.kernel_macros
    }

    /// Headers included with `#include "…"` that could not be read: kernels they declare are
    /// not found.
    pub fn unopened_headers(&self) -> &[String] {
        &self.unopened
    }

    /// False when the preprocessor stopped short (an expansion past its budget, macros nested
    /// past its limit): some macros may then be unexpanded.
    pub fn is_complete(&self) -> bool {
        self.complete
    }
}

/// The most names a "did you mean" lists.
const MAX_NEAR: usize = 5;

/// The names in `available` close to `name`, for a "did you mean": within a few edits (one per
/// four characters, at least one, at most three), or one containing the other; closest first,
/// at most five.
pub fn near_names(name: &str, available: &[String]) -> Vec<String> {
    // Long names are compared on a prefix: a bound on the work per name.
    const MAX_LEN: usize = 64;
    if name.is_empty() || name.len() > MAX_LEN {
        return Vec::new();
    }
    let limit = (name.len() / 4).clamp(1, 3);
    let mut scored: Vec<(usize, &String)> = available
        .iter()
        .filter(|a| a.len() <= MAX_LEN && a.as_str() != name)
        .filter_map(|a| {
            let d = edit_distance(name, a);
            let contains =
                name.len() >= 3 && (a.contains(name) || (a.len() >= 3 && name.contains(a.as_str())));
            if d <= limit {
                Some((d, a))
            } else if contains {
                Some((limit + 1, a))
            } else {
                None
            }
        })
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    scored
        .into_iter()
        .take(MAX_NEAR)
        .map(|(_, a)| a.clone())
        .collect()
}

/// Levenshtein distance, by bytes.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_close_edits_or_containing() {
        let avail: Vec<String> = ["uexp_f32", "uexp_f64", "ulog_f32", "add", "sub", "badd_f32"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(near_names("uexp_f3", &avail), ["uexp_f32"]);
        assert_eq!(near_names("uexp_f62", &avail), ["uexp_f32", "uexp_f64"]);
        assert_eq!(near_names("exp_f32", &avail), ["uexp_f32"]);
        assert_eq!(near_names("mul", &avail), Vec::<String>::new());
        assert_eq!(near_names("add_f32", &avail), ["badd_f32", "add"]);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
