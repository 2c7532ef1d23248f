//! Best-effort scans for device globals and dynamic shared memory. These never
//! fail: on a lexical error they use the tokens before it.

use std::collections::HashSet;

use crate::decl::{is_reserved, match_close, skip_attribute};
use crate::lexer::{lex, Tok};

fn is_boundary(t: &Tok<'_>) -> bool {
    matches!(t.text, ";" | "{" | "}")
}

pub(crate) fn uses_dynamic_shared_memory(source: &str) -> bool {
    let toks = lex(source).toks;
    // For each `__shared__`, look for `extern` in the same declaration, on
    // either side but never past a neighbouring `__shared__`, so each token is
    // looked at a bounded number of times.
    let shared: Vec<usize> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.is("__shared__"))
        .map(|(i, _)| i)
        .collect();
    shared.iter().enumerate().any(|(n, &i)| {
        let lower = if n == 0 { 0 } else { shared[n - 1] + 1 };
        let upper = shared.get(n + 1).copied().unwrap_or(toks.len());
        let before = toks[lower..i]
            .iter()
            .rev()
            .take_while(|t| !is_boundary(t))
            .any(|t| t.is("extern"));
        let after = toks[i + 1..upper]
            .iter()
            .take_while(|t| !is_boundary(t))
            .any(|t| t.is("extern"));
        before || after
    })
}

fn is_space_word(w: &str) -> bool {
    matches!(w, "__device__" | "__constant__" | "__managed__")
}

pub(crate) fn find_globals(source: &str) -> Vec<String> {
    let toks = lex(source).toks;
    let mut names = Vec::new();
    let mut seen = HashSet::new();
    let mut i = 0;
    while i < toks.len() {
        if !is_space_word(toks[i].text) {
            i += 1;
            continue;
        }
        let (found, next) = scan_declaration(&toks, i + 1);
        for n in found {
            if seen.insert(n.clone()) {
                names.push(n);
            }
        }
        i = next.max(i + 1);
    }
    names
}

/// Reads the declaration after a memory-space word at `i`. Returns the
/// variable names it declares (none for a function) and where to resume: at
/// its end, or at the next memory-space word, so scans never overlap.
fn scan_declaration(toks: &[Tok<'_>], mut i: usize) -> (Vec<String>, usize) {
    let mut names = Vec::new();
    let mut last: Option<&str> = None;
    let mut angle = 0usize;
    while let Some(t) = toks.get(i) {
        if let Some(r) = skip_attribute(toks, i) {
            match r {
                Ok(next) => {
                    i = next;
                    continue;
                }
                Err(()) => return (names, i + 1),
            }
        }
        if is_space_word(t.text) || t.is("__global__") {
            // A second memory-space word in the same declaration
            // (`__device__ __constant__ x`) simply continues it.
            if last.is_none() && names.is_empty() && !t.is("__global__") {
                i += 1;
                continue;
            }
            return (names, i);
        }
        match t.text {
            "<" if i > 0 && toks[i - 1].is_ident() => angle += 1,
            ">" if angle > 0 => angle -= 1,
            // A function (or a direct-initialized variable, which is rare
            // enough to miss).
            "(" if angle == 0 => return (names, i + 1),
            "[" | "=" | "," | ";" | "{" if angle == 0 => {
                names.extend(last.take().map(str::to_string));
                let end = match t.text {
                    "[" => match_close(toks, i),
                    ";" => return (names, i + 1),
                    "," => Some(i),
                    "{" => skip_initializer(toks, i),
                    _ => skip_initializer(toks, i + 1),
                };
                let Some(end) = end else {
                    return (names, i + 1);
                };
                i = end + 1;
                // After an array bound or initializer, only `,`/`;`/`[` may follow.
                continue;
            }
            "}" => return (names, i),
            _ => {
                if t.is_ident() && !is_reserved(t.text) {
                    last = Some(t.text);
                }
            }
        }
        i += 1;
    }
    // A declaration cut off by the end of the source still names something.
    names.extend(last.map(str::to_string));
    (names, i)
}

/// From the token after `=` (or the `{` of `x{...}`), the index of the last
/// token of the initializer, just before the `,`, `;` or unmatched `}` that
/// ends it.
fn skip_initializer(toks: &[Tok<'_>], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(start) {
        match t.text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                if depth == 0 {
                    return Some(j - 1);
                }
                depth -= 1;
            }
            "," | ";" if depth == 0 => return Some(j - 1),
            "__device__" | "__constant__" | "__managed__" | "__global__" => return None,
            _ => {}
        }
    }
    None
}

/// Typed scan of device variables, for [`crate::find_global_decls`].
pub(crate) fn find_global_decls(source: &str) -> Vec<crate::GlobalDecl> {
    use crate::aliases::collect_aliases;
    use crate::decl::{walk, Ctx};
    use crate::MemorySpace;
    let toks = lex(source).toks;
    let consts = crate::constants::integer_constants(source);
    let aliases = collect_aliases(&toks);
    let ctx = Ctx {
        aliases: &aliases,
        template_params: &[],
    };
    let mut out: Vec<crate::GlobalDecl> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !is_space_word(toks[i].text) {
            i += 1;
            continue;
        }
        let mut space = MemorySpace::Device;
        let mut j = i;
        // The memory-space words and storage classes before the type.
        while let Some(t) = toks.get(j) {
            match t.text {
                "__constant__" => space = MemorySpace::Constant,
                "__managed__" => space = MemorySpace::Managed,
                "__device__" => {}
                "static" | "extern" | "volatile" => {}
                _ => break,
            }
            j += 1;
        }
        let start = j;
        // The declarator's name: the last identifier before `[`, `=`, `;`, `,` or `{`.
        let mut name_at = None;
        let mut angle = 0usize;
        while let Some(t) = toks.get(j) {
            match t.text {
                "<" => angle += 1,
                ">" if angle > 0 => angle -= 1,
                "(" | "}" | "__global__" => break,
                "[" | "=" | ";" | "," | "{" if angle == 0 => break,
                _ if is_space_word(t.text) => break,
                _ if t.is_ident() && !is_reserved(t.text) => name_at = Some(j),
                _ => {}
            }
            j += 1;
        }
        let end_ok = toks
            .get(j)
            .is_some_and(|t| matches!(t.text, "[" | "=" | ";" | "," | "{"));
        if let (Some(n), true) = (name_at, end_ok) {
            let mut dims = Vec::new();
            let mut unresolved_dim = None;
            let mut complete = true;
            let mut k = j;
            while toks.get(k).is_some_and(|t| t.is("[")) {
                let Some(close) = match_close(&toks, k) else {
                    complete = false;
                    break;
                };
                let inner = &toks[k + 1..close];
                match crate::constants::evaluate(inner, &consts)
                    .and_then(|v| usize::try_from(v).ok())
                    .filter(|&v| v > 0)
                {
                    Some(len) => dims.push(len),
                    None => {
                        unresolved_dim = Some(inner.iter().map(|t| t.text).collect::<Vec<_>>().join(" "));
                        dims.clear();
                        break;
                    }
                }
                k = close + 1;
            }
            let walked = walk(&toks[start..=n], &ctx, None);
            if let (true, Ok((ty, _))) = (complete, walked.ty) {
                let name = toks[n].text.to_string();
                if !out.iter().any(|g| g.name == name) {
                    out.push(crate::GlobalDecl {
                        name,
                        ty,
                        dims,
                        unresolved_dim,
                        space,
                        line: toks[n].line,
                    });
                }
            }
        }
        i = j.max(i + 1);
    }
    out
}
