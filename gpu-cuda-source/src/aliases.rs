//! `typedef` and `using` aliases declared in a source, collected before its kernels are
//! parsed so that a parameter of an aliased type resolves to what the alias names.

use crate::decl::{is_reserved, skip_attribute, walk, Alias, Aliases, Base, Ctx, Walked};
use crate::lexer::Tok;

/// Matching `}` for every `{`, so typedef bodies can be jumped in O(1).
fn brace_matches(toks: &[Tok<'_>]) -> Vec<Option<usize>> {
    let mut out = vec![None; toks.len()];
    let mut stack = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.is("{") {
            stack.push(i);
        } else if t.is("}") {
            if let Some(open) = stack.pop() {
                out[open] = Some(i);
            }
        }
    }
    out
}

fn split_top_level_commas<'t, 'a>(toks: &'t [Tok<'a>]) -> Vec<&'t [Tok<'a>]> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut angle = 0usize;
    let mut start = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            "<" if depth == 0 && i > 0 && toks[i - 1].is_ident() => angle += 1,
            ">" if depth == 0 => angle = angle.saturating_sub(1),
            "," if depth == 0 && angle == 0 => {
                out.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&toks[start..]);
    out
}

fn record(aliases: &mut Aliases, walked: Walked) {
    let Some(name) = walked.name else { return };
    let alias = match walked.ty {
        Ok((ty, top_const)) => Alias::Type { ty, top_const },
        Err(reason) => Alias::Unsupported(reason),
    };
    // First definition wins; redefinitions in valid code are identical anyway.
    aliases.entry(name).or_insert(alias);
}

/// Collects every `typedef` and `using X = ...;` in the source, in order, each
/// resolved through the ones before it.
pub(crate) fn collect_aliases(toks: &[Tok<'_>]) -> Aliases {
    let mut aliases = Aliases::new();
    let braces = brace_matches(toks);
    let mut i = 0;
    while i < toks.len() {
        i = if toks[i].is("typedef") {
            parse_typedef(toks, i, &braces, &mut aliases)
        } else if toks[i].is("using") {
            parse_using(toks, i, &mut aliases)
        } else {
            i + 1
        };
    }
    aliases
}

/// Parses the typedef at `i`; returns where scanning should resume.
fn parse_typedef(toks: &[Tok<'_>], i: usize, braces: &[Option<usize>], aliases: &mut Aliases) -> usize {
    let start = i + 1;
    let mut j = start;
    let mut body = None;
    loop {
        let Some(t) = toks.get(j) else { return j };
        match t.text {
            "{" => match braces.get(j).copied().flatten() {
                Some(close) => {
                    if body.is_none() {
                        body = Some((j, close));
                    }
                    j = close + 1;
                    continue;
                }
                None => return j + 1,
            },
            "}" | "typedef" | "using" => return j,
            ";" => break,
            _ => {}
        }
        j += 1;
    }
    let end = j;
    let no_templates: [String; 0] = [];
    match body {
        Some((open, close)) => {
            let head = &toks[start..open];
            let Some(kw) = head
                .iter()
                .position(|t| matches!(t.text, "struct" | "class" | "union" | "enum"))
            else {
                return end + 1;
            };
            let mut tag_at = kw + 1;
            while let Some(Ok(next)) = skip_attribute(head, tag_at) {
                tag_at = next;
            }
            let tag = head
                .get(tag_at)
                .filter(|t| t.is_ident() && !is_reserved(t.text))
                .map(|t| t.text.to_string());
            let is_const = head.iter().any(|t| t.is("const"));
            let declarators = split_top_level_commas(&toks[close + 1..end]);
            let base_name = tag.or_else(|| {
                declarators
                    .iter()
                    .flat_map(|d| d.iter())
                    .find(|t| t.is_ident() && !is_reserved(t.text))
                    .map(|t| t.text.to_string())
            });
            let Some(base_name) = base_name else {
                return end + 1;
            };
            let base = Base::named(base_name, is_const);
            for d in declarators {
                let ctx = Ctx {
                    aliases,
                    template_params: &no_templates,
                };
                let walked = walk(d, &ctx, Some(&base));
                record(aliases, walked);
            }
        }
        None => {
            let chunks = split_top_level_commas(&toks[start..end]);
            let mut base: Option<Base> = None;
            for d in chunks {
                let ctx = Ctx {
                    aliases,
                    template_params: &no_templates,
                };
                let walked = walk(d, &ctx, base.as_ref());
                if base.is_none() {
                    base = Some(walked.base.clone());
                }
                record(aliases, walked);
            }
        }
    }
    end + 1
}

/// Parses `using Name = type;` at `i`; other uses of `using` are skipped.
fn parse_using(toks: &[Tok<'_>], i: usize, aliases: &mut Aliases) -> usize {
    let Some(name) = toks.get(i + 1).filter(|t| t.is_ident() && !is_reserved(t.text)) else {
        return i + 1;
    };
    let mut eq = i + 2;
    while let Some(Ok(next)) = skip_attribute(toks, eq) {
        eq = next;
    }
    if !toks.get(eq).is_some_and(|t| t.is("=")) {
        return i + 1;
    }
    let start = eq + 1;
    let mut end = start;
    while let Some(t) = toks.get(end) {
        match t.text {
            ";" => break,
            "{" | "}" | "typedef" | "using" => return end,
            _ => end += 1,
        }
    }
    let no_templates: [String; 0] = [];
    let ctx = Ctx {
        aliases,
        template_params: &no_templates,
    };
    let mut walked = walk(&toks[start..end.min(toks.len())], &ctx, None);
    if walked.name.is_some() {
        // `using X = int y;` is not a type; ignore it.
        return end + 1;
    }
    walked.name = Some(name.text.to_string());
    record(aliases, walked);
    end + 1
}
