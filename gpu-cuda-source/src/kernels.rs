//! Finding `__global__` declarations in a token stream.

use std::collections::HashMap;

use crate::aliases::collect_aliases;
use crate::decl::{is_builtin_word, is_reserved, match_angle, skip_attribute, walk, Aliases, Ctx};
use crate::lexer::{join, lex, Kind, Tok};
use crate::types::CType;
use crate::{CParam, DeclError, KernelDecl, TemplateParam, TemplateParamKind};

/// One `__global__` occurrence: its name when it could be found, and either the
/// parsed declaration (with whether it is a definition) or why it failed.
#[derive(Clone)]
pub(crate) struct Entry {
    pub name: Option<String>,
    pub result: Result<(KernelDecl, bool), DeclError>,
}

fn syntax(line: usize, message: impl Into<String>) -> DeclError {
    DeclError::Syntax {
        line,
        message: message.into(),
    }
}

fn unnamed(err: DeclError) -> Option<Entry> {
    Some(Entry {
        name: None,
        result: Err(err),
    })
}

const UNTERMINATED: &str = "unterminated string or character literal";

/// Every `__global__` occurrence in the source, in order. Err only when the
/// source cannot be tokenized at all.
pub(crate) fn scan(source: &str) -> Result<Vec<Entry>, DeclError> {
    let lexed = lex(source);
    if let Some((line, message)) = lexed.error {
        return Err(syntax(line, message));
    }
    Ok(scan_toks(&lexed.toks))
}

/// Every `__global__` occurrence in the tokens, in order.
pub(crate) fn scan_toks(toks: &[Tok<'_>]) -> Vec<Entry> {
    let aliases = collect_aliases(toks);
    let mut entries = Vec::new();
    // For each open brace, whether `extern "C"` linkage is in effect inside it.
    let mut linkage: Vec<bool> = Vec::new();
    let mut prev_global = None;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "{" => {
                let parent = linkage.last().copied().unwrap_or(false);
                let this = match i.checked_sub(2).map(|k| (&toks[k], &toks[k + 1])) {
                    Some((e, lit)) if e.is("extern") && lit.kind == Kind::Str => lit.text == "\"C\"",
                    _ => parent,
                };
                linkage.push(this);
            }
            "}" => {
                linkage.pop();
            }
            "__global__" => {
                let in_c = linkage.last().copied().unwrap_or(false);
                if let Some(e) = parse_kernel(toks, i, prev_global, in_c, &aliases) {
                    entries.push(e);
                }
                prev_global = Some(i);
            }
            _ => {}
        }
    }
    entries
}

/// What the tokens before `__global__` say about the declaration.
struct Prefix {
    is_template: bool,
    template_params: Vec<String>,
    /// The parameters of the (last) `template <...>`.
    params: Vec<TemplateParam>,
    extern_c: bool,
    error: Option<DeclError>,
}

/// Looks back from `__global__` at `g` to the previous statement boundary (or
/// the previous `__global__`, so that the look-backs never overlap). None for
/// an explicit instantiation (`template __global__ void f<float>(float*);`),
/// which declares no new kernel.
fn parse_prefix(toks: &[Tok<'_>], g: usize, lower: usize, in_c: bool) -> Option<Prefix> {
    let mut j = g;
    while j > lower && !matches!(toks[j - 1].text, ";" | "{" | "}") {
        j -= 1;
    }
    let prefix = &toks[j..g];
    let mut p = Prefix {
        is_template: false,
        template_params: Vec::new(),
        params: Vec::new(),
        extern_c: in_c,
        error: None,
    };
    let mut k = 0;
    while k < prefix.len() {
        let t = &prefix[k];
        match t.text {
            "template" => {
                if !prefix.get(k + 1).is_some_and(|n| n.is("<")) {
                    return None;
                }
                p.is_template = true;
                let close = match_angle(prefix, k + 1).unwrap_or(prefix.len());
                let params = &prefix[k + 2..close.max(k + 2)];
                p.params = read_template_params(params);
                for (m, w) in params.iter().enumerate() {
                    if !(w.is("typename") || w.is("class")) {
                        continue;
                    }
                    if let Some(n) = params.get(m + 1) {
                        let qualified = params.get(m + 2).is_some_and(|x| x.is("::"));
                        if n.is_ident() && !is_reserved(n.text) && !qualified {
                            p.template_params.push(n.text.to_string());
                        }
                    }
                }
                k = close + 1;
                continue;
            }
            "extern" => {
                if let Some(lit) = prefix.get(k + 1).filter(|n| n.kind == Kind::Str) {
                    p.extern_c = lit.text == "\"C\"";
                }
            }
            "__device__" if p.error.is_none() => {
                p.error = Some(syntax(
                    t.line,
                    "a function cannot be both __device__ and __global__",
                ));
            }
            _ => {}
        }
        k += 1;
    }
    Some(p)
}

fn parse_kernel(
    toks: &[Tok<'_>],
    g: usize,
    prev_global: Option<usize>,
    in_c: bool,
    aliases: &Aliases,
) -> Option<Entry> {
    let lower = prev_global.map_or(0, |p| p + 1);
    let prefix = parse_prefix(toks, g, lower, in_c)?;
    let global_line = toks[g].line;
    let mut error = prefix.error.clone();

    // Between `__global__` and `(`: specifiers, the return type and the name.
    let mut middle: Vec<usize> = Vec::new();
    let mut k = g + 1;
    let open = loop {
        let Some(t) = toks.get(k) else {
            return unnamed(syntax(
                global_line,
                "expected a name and a parameter list after __global__",
            ));
        };
        if t.kind == Kind::BadLit {
            return unnamed(syntax(t.line, UNTERMINATED));
        }
        if let Some(r) = skip_attribute(toks, k) {
            match r {
                Ok(next) => {
                    k = next;
                    continue;
                }
                Err(()) => {
                    return unnamed(syntax(
                        t.line,
                        format!("the parentheses after `{}` are not balanced", t.text),
                    ))
                }
            }
        }
        match t.text {
            "(" => break k,
            ";" | "{" | "}" | "__global__" => {
                return unnamed(syntax(
                    t.line,
                    "expected a name and a parameter list after __global__",
                ))
            }
            "__device__" => {
                if error.is_none() {
                    error = Some(syntax(
                        t.line,
                        "a function cannot be both __device__ and __global__",
                    ));
                }
            }
            _ => middle.push(k),
        }
        k += 1;
    };

    // The name is the last word before `(`, or before `<...>` in an explicit
    // specialization `f<float>(...)`.
    let mut name_pos = middle.len().checked_sub(1);
    let mut is_template = prefix.is_template;
    if let Some(last) = name_pos.filter(|&p| toks[middle[p]].is(">")) {
        let mut depth = 0usize;
        let mut found = None;
        for p in (0..=last).rev() {
            match toks[middle[p]].text {
                ">" => depth += 1,
                "<" => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        found = Some(p);
                        break;
                    }
                }
                _ => {}
            }
        }
        name_pos = found.and_then(|p| p.checked_sub(1));
        is_template = true;
    }
    let name_tok = name_pos
        .map(|p| &toks[middle[p]])
        .filter(|t| t.is_ident() && !is_reserved(t.text));
    let (Some(name_pos), Some(name_tok)) = (name_pos, name_tok) else {
        return unnamed(syntax(
            toks[open].line,
            "expected the name of the __global__ function before `(`",
        ));
    };
    let name = name_tok.text.to_string();
    let line = name_tok.line;
    let fail = |e: DeclError| {
        Some(Entry {
            name: Some(name.clone()),
            result: Err(e),
        })
    };
    if let Some(e) = error {
        return fail(e);
    }
    for &m in &middle[..name_pos] {
        let t = &toks[m];
        if (is_builtin_word(t.text) && !t.is("void")) || matches!(t.text, "*" | "&" | "&&") {
            return fail(syntax(
                t.line,
                format!("__global__ function `{name}` must return void"),
            ));
        }
    }

    // The parameter list.
    let mut depth = 0usize;
    let mut braces = 0usize;
    let mut close = open;
    loop {
        close += 1;
        let unbalanced = || {
            fail(syntax(
                toks[open].line,
                format!("the parentheses of __global__ function `{name}` are not balanced"),
            ))
        };
        let Some(t) = toks.get(close) else {
            return unbalanced();
        };
        match t.text {
            "(" => depth += 1,
            ")" if depth == 0 => break,
            ")" => depth -= 1,
            "{" => braces += 1,
            "}" if braces == 0 => return unbalanced(),
            "}" => braces -= 1,
            ";" | "__global__" => return unbalanced(),
            _ if t.kind == Kind::BadLit => return fail(syntax(t.line, UNTERMINATED)),
            _ => {}
        }
    }

    let ctx = Ctx {
        aliases,
        template_params: if prefix.is_template {
            &prefix.template_params
        } else {
            &[]
        },
    };
    let params = match parse_params(toks, open, close, &name, &ctx) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };

    // A body after the parameter list (past attributes, `noexcept`, a
    // trailing return type...) makes this a definition. Bounded look-ahead
    // keeps this linear.
    let mut r = close + 1;
    while r < toks.len() && r <= close + 64 {
        if let Some(Ok(next)) = skip_attribute(toks, r) {
            r = next;
            continue;
        }
        if matches!(toks[r].text, "{" | ";" | "}" | "__global__") {
            break;
        }
        r += 1;
    }
    let is_definition = toks.get(r).is_some_and(|t| t.is("{"));

    Some(Entry {
        name: Some(name.clone()),
        result: Ok((
            KernelDecl {
                name,
                params,
                line,
                extern_c: prefix.extern_c,
                is_template,
                template_params: prefix.params,
            },
            is_definition,
        )),
    })
}

/// The parameters of `template < params >`: each a type (`typename T`, `class U = int`), a
/// value (`int block_size`, `unsigned N = 4`) or a template template parameter.
fn read_template_params(params: &[Tok<'_>]) -> Vec<TemplateParam> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for i in 0..=params.len() {
        let at_end = i == params.len();
        if !at_end {
            match params[i].text {
                "<" | "(" | "[" | "{" => depth += 1,
                ">" | ")" | "]" | "}" => depth = depth.saturating_sub(1),
                _ => {}
            }
            if !(params[i].is(",") && depth == 0) {
                continue;
            }
        }
        let chunk = &params[start..i];
        start = i + 1;
        if chunk.is_empty() {
            continue;
        }
        // The declaration, and the default after a top-level `=`.
        let mut d = 0usize;
        let eq = chunk
            .iter()
            .position(|t| {
                match t.text {
                    "<" | "(" | "[" => d += 1,
                    ">" | ")" | "]" => d = d.saturating_sub(1),
                    _ => {}
                }
                t.is("=") && d == 0
            })
            .unwrap_or(chunk.len());
        let (decl, default) = (&chunk[..eq], chunk.get(eq + 1..).filter(|d| !d.is_empty()));
        let default = default.map(join);
        let last_name = decl
            .last()
            .filter(|t| t.is_ident() && !is_reserved(t.text) && !is_builtin_word(t.text));
        let kind = match decl.first().map(|t| t.text) {
            Some("typename" | "class") => {
                let name = decl
                    .get(1)
                    .filter(|n| n.is("..."))
                    .map_or(decl.get(1), |_| decl.get(2))
                    .filter(|n| {
                        n.is_ident() && !is_reserved(n.text) && !decl.get(2).is_some_and(|x| x.is("::"))
                    });
                out.push(TemplateParam {
                    name: name.map(|n| n.text.to_string()),
                    kind: TemplateParamKind::Type,
                    default,
                });
                continue;
            }
            Some("template") => TemplateParamKind::Template,
            _ => {
                let ty_end = if last_name.is_some() && decl.len() > 1 {
                    decl.len() - 1
                } else {
                    decl.len()
                };
                TemplateParamKind::Value(join(&decl[..ty_end]))
            }
        };
        let name = match kind {
            TemplateParamKind::Value(_) if decl.len() == 1 => None,
            _ => last_name.map(|n| n.text.to_string()),
        };
        out.push(TemplateParam { name, kind, default });
    }
    out
}

/// One parameter's tokens: [start, eq) is the declaration, [eq, end) the
/// default argument if any.
struct Chunk {
    start: usize,
    eq: usize,
    end: usize,
}

/// Splits the tokens strictly between `open` and `close` at top-level commas.
/// Angle brackets count as nesting only in the declaration part, since a
/// default argument may contain `a < b`.
fn split_params(toks: &[Tok<'_>], open: usize, close: usize) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut angle = 0usize;
    let mut start = open + 1;
    let mut eq = None;
    for i in open + 1..close {
        let t = &toks[i];
        match t.text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            "<" if eq.is_none() && depth == 0 && toks[i - 1].is_ident() => angle += 1,
            ">" if eq.is_none() && depth == 0 => angle = angle.saturating_sub(1),
            "=" if eq.is_none() && depth == 0 && angle == 0 => eq = Some(i),
            "," if depth == 0 && (angle == 0 || eq.is_some()) => {
                out.push(Chunk {
                    start,
                    eq: eq.unwrap_or(i),
                    end: i,
                });
                start = i + 1;
                eq = None;
                angle = 0;
            }
            _ => {}
        }
    }
    out.push(Chunk {
        start,
        eq: eq.unwrap_or(close),
        end: close,
    });
    out
}

fn parse_params(
    toks: &[Tok<'_>],
    open: usize,
    close: usize,
    kernel: &str,
    ctx: &Ctx<'_>,
) -> Result<Vec<CParam>, DeclError> {
    if close == open + 1 {
        return Ok(Vec::new());
    }
    let chunks = split_params(toks, open, close);
    let count = chunks.len();
    let mut params = Vec::with_capacity(count);
    for c in chunks {
        if c.start == c.end || c.start == c.eq {
            return Err(syntax(
                toks[c.start - 1].line,
                format!("a parameter of __global__ function `{kernel}` is empty"),
            ));
        }
        let all = &toks[c.start..c.end];
        let text = join(all);
        let line = all[0].line;
        let unsupported = |reason: String| DeclError::UnsupportedParam {
            kernel: kernel.to_string(),
            param: text.clone(),
            line,
            reason,
        };
        let walked = walk(&toks[c.start..c.eq], ctx, None);
        let ty = walked.ty.map_err(unsupported)?.0;
        if ty == CType::Void {
            if count == 1 && walked.name.is_none() && c.eq == c.end {
                return Ok(Vec::new());
            }
            return Err(unsupported("a parameter cannot have type `void`".to_string()));
        }
        params.push(CParam {
            text,
            name: walked.name,
            ty,
        });
    }
    Ok(params)
}

/// Source-order kernels with prototypes folded into their definitions:
/// declarations of one name with equal parameter types are one kernel.
pub(crate) fn dedupe<'e>(entries: impl Iterator<Item = &'e (KernelDecl, bool)>) -> Vec<KernelDecl> {
    let mut out: Vec<(KernelDecl, bool)> = Vec::new();
    let mut seen: HashMap<(String, Vec<CType>), usize> = HashMap::new();
    for (decl, is_def) in entries {
        let key = (
            decl.name.clone(),
            decl.params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>(),
        );
        match seen.get(&key) {
            Some(&s) => {
                let (kept, kept_def) = &mut out[s];
                // Linkage and templateness given on any declaration carry
                // over to the others, as in C++.
                let extern_c = kept.extern_c || decl.extern_c;
                let is_template = kept.is_template || decl.is_template;
                if *is_def && !*kept_def {
                    *kept = decl.clone();
                    *kept_def = true;
                }
                kept.extern_c = extern_c;
                kept.is_template = is_template;
            }
            None => {
                seen.insert(key, out.len());
                out.push((decl.clone(), *is_def));
            }
        }
    }
    out.into_iter().map(|(d, _)| d).collect()
}
