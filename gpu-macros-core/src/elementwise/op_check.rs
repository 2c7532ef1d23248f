//! The checks on the operation's tokens: brackets balance, every name is an argument, a
//! local, `i`, `n`, a C word or a called function, read-only arguments are not assigned, and
//! every `&mut` array is.

use std::collections::HashSet;

use quote::quote;

use gpu_cuda_source::elementwise::Role;

use crate::check::Errors;
use crate::elementwise::c_words::{is_c_word, is_type_word, ASSIGN};
use crate::elementwise::op_tokens::{tokenize, Kind};
use crate::elementwise::params::Param;

/// Why an operation cannot be used with these parameters, one error per problem.
pub(super) fn check_operation(op: &syn::LitStr, params: &[Param], fn_name: &syn::Ident) -> syn::Result<()> {
    let text = op.value();
    let span = op.span();
    let toks =
        tokenize(&text).map_err(|e| syn::Error::new(span, format!("the operation cannot be read: {e}")))?;
    if toks.iter().all(|t| t.text == ";") {
        return Err(syn::Error::new(
            span,
            "the operation is empty: write what each element gets, e.g. \"z = a * x + y\"",
        ));
    }
    let mut errors = Errors::default();
    // Brackets balance, so that the operation stays inside the loop it is pasted into.
    let mut stack = Vec::new();
    for t in toks.iter().filter(|t| t.kind == Kind::Punct) {
        match t.text {
            "(" | "[" | "{" => stack.push(t.text),
            ")" | "]" | "}" => {
                let want = match t.text {
                    ")" => "(",
                    "]" => "[",
                    _ => "{",
                };
                if stack.pop() != Some(want) {
                    return Err(syn::Error::new(
                        span,
                        format!("the operation has an unmatched `{}`", t.text),
                    ));
                }
            }
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(syn::Error::new(
            span,
            format!("the operation has an unclosed `{open}`"),
        ));
    }
    let has_loop = toks
        .iter()
        .any(|t| t.kind == Kind::Ident && matches!(t.text, "for" | "while" | "do" | "switch"));
    let find = |name: &str| {
        params
            .iter()
            .find(|p| p.name == name || p.name == format!("r#{name}").as_str())
    };
    let arg_list = params
        .iter()
        .map(|p| format!("`{}`", p.name))
        .collect::<Vec<_>>()
        .join(", ");
    let mut locals: HashSet<&str> = HashSet::new();
    let mut written: HashSet<String> = HashSet::new();
    let mut reported: HashSet<&str> = HashSet::new();
    // Inside a declaration statement: the bracket depth it started at.
    let mut decl_depth: Option<usize> = None;
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate() {
        let prev = k.checked_sub(1).map(|j| toks[j]);
        let next = toks.get(k + 1).copied();
        if t.kind == Kind::Punct {
            match t.text {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth = depth.saturating_sub(1);
                    if decl_depth.is_some_and(|d| depth < d) {
                        decl_depth = None;
                    }
                }
                ";" => decl_depth = None,
                _ => {}
            }
            continue;
        }
        if t.kind != Kind::Ident {
            continue;
        }
        let w = t.text;
        if prev.is_some_and(|p| matches!(p.text, "." | "->" | "::")) {
            continue; // a member, or a name in a namespace
        }
        if next.is_some_and(|n| n.text == "::") {
            continue; // a namespace or class that names what follows (`gpu_runtime::conj`)
        }
        if matches!(w, "return" | "goto") || (matches!(w, "break" | "continue") && !has_loop) {
            errors.push(syn::Error::new(
                span,
                format!("`{w}` cannot be used in an elementwise operation: it runs once per element inside the generated loop"),
            ));
            continue;
        }
        if is_c_word(w) {
            continue;
        }
        // A declared local: after a type (and `*`/`&`), or after `,` in a declaration.
        let mut j = k;
        while j > 0 && matches!(toks[j - 1].text, "*" | "&") {
            j -= 1;
        }
        let after_type = j > 0 && toks[j - 1].kind == Kind::Ident && is_type_word(toks[j - 1].text);
        let after_comma = j > 0 && toks[j - 1].text == "," && decl_depth == Some(depth);
        if after_type || after_comma {
            if let Some(p) = find(w) {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "the operation declares `{w}`, which is the name of the argument `{}`",
                        p.name
                    ),
                ));
            }
            locals.insert(w);
            decl_depth = Some(depth);
            continue;
        }
        let Some(p) = find(w) else {
            if next.is_some_and(|n| n.text == "(") || locals.contains(w) || w == "i" || w == "n" {
                continue; // a called function (NVRTC checks it), a local, or the index and count
            }
            if reported.insert(w) {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "the operation uses `{w}`, which is not an argument of `{fn_name}` (the arguments \
                         are {arg_list}; `i` is the element's index and `n` the number of elements)"
                    ),
                ));
            }
            continue;
        };
        // PyCUDA's indexed form assigns an element: `z[i] = ...`; the token after the
        // matching `]` says.
        let after = if next.is_some_and(|n| n.text == "[") {
            let mut open = 0usize;
            let mut j = k + 1;
            while let Some(t) = toks.get(j) {
                match t.text {
                    "[" => open += 1,
                    "]" => open -= 1,
                    _ => {}
                }
                j += 1;
                if open == 0 {
                    break;
                }
            }
            toks.get(j).copied()
        } else {
            next
        };
        let assigns = after.is_some_and(|n| ASSIGN.contains(&n.text) || matches!(n.text, "++" | "--"))
            || prev.is_some_and(|p| matches!(p.text, "++" | "--"));
        if !assigns {
            continue;
        }
        match p.role {
            Role::Output => {
                written.insert(p.name.to_string());
            }
            Role::Input => {
                let n = &p.name;
                let elem = &p.elem;
                errors.push(syn::Error::new_spanned(
                    &p.ty,
                    format!(
                        "the operation assigns to `{n}`, which is taken as `&` (read only): take it as \
                         `&mut DeviceArray<{}>` to write it",
                        quote!(#elem)
                    ),
                ));
            }
            Role::Scalar => {
                let n = &p.name;
                errors.push(syn::Error::new_spanned(
                    &p.ty,
                    format!(
                        "the operation assigns to the scalar `{n}`: scalars are the same for every element and \
                         read only; declare a local (`{} t = {n}; …`) or take an array as `&mut`",
                        p.c_type
                    ),
                ));
            }
        }
    }
    let outputs: Vec<&Param> = params.iter().filter(|p| p.role == Role::Output).collect();
    if outputs.is_empty() {
        errors.push(syn::Error::new(
            span,
            format!(
                "`{fn_name}` writes nothing: an #[elementwise] fn needs an array it writes, taken as \
                 `&mut DeviceArray<T>` and assigned in the operation"
            ),
        ));
    }
    for p in outputs {
        if !written.contains(&p.name.to_string()) {
            errors.push(syn::Error::new_spanned(
                &p.ty,
                format!(
                    "`{}` is taken as `&mut` but the operation never assigns it (`{} = …`): take it as `&` \
                     if it is only read",
                    p.name, p.name
                ),
            ));
        }
    }
    errors.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::params::read_param;
    use crate::elementwise::test_support::{sig, AXPY};

    /// The messages of checking `op` against the signature `item`, and the text each points
    /// at: the argument's type, or the operation's literal.
    fn op_errors(op: &str, item: &str) -> Vec<(String, String)> {
        let lit = syn::parse_str::<syn::LitStr>(&format!("{op:?}")).expect("a literal");
        let item = sig(item);
        let ps: Vec<Param> = item
            .sig
            .inputs
            .iter()
            .map(|a| read_param(a).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        match check_operation(&lit, &ps, &item.sig.ident) {
            Ok(()) => Vec::new(),
            Err(e) => e
                .into_iter()
                .map(|e| (e.to_string(), e.span().source_text().unwrap_or_default()))
                .collect(),
        }
    }

    #[test]
    fn a_well_formed_operation_passes() {
        assert_eq!(op_errors("z = a * x + y", AXPY), Vec::new());
        // Locals, loops, members, called functions, `i` and `n`.
        assert_eq!(
            op_errors(
                "float t = 0, *p = &t; for (int k = 0; k < 3; ++k) { t += sinf(x) * k; if (t > n) break; } z = t + y + i + p[0]",
                AXPY
            ),
            Vec::new()
        );
    }

    #[test]
    fn qualified_names_pass() {
        assert_eq!(
            op_errors(
                "z = a * gpu_runtime::conj(x) + std::numeric_limits<float>::epsilon() + y",
                AXPY
            ),
            Vec::new()
        );
    }

    #[test]
    fn names_that_are_not_arguments() {
        let errs = op_errors("z = a * w + w + y", AXPY);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].0.starts_with("the operation uses `w`, which is not an argument of `axpy` (the arguments are `a`, `x`, `y`, `z`;"),
            "{}",
            errs[0].0
        );
        let errs = op_errors("float x = 1; z = x", AXPY);
        assert_eq!(
            errs[0].0,
            "the operation declares `x`, which is the name of the argument `x`"
        );
    }

    #[test]
    fn assignments_must_go_to_outputs() {
        let errs = op_errors("x = 1; a += 2; z = y", AXPY);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs[0]
                .0
                .starts_with("the operation assigns to `x`, which is taken as `&` (read only)"),
            "{}",
            errs[0].0
        );
        assert_eq!(errs[0].1, "&DeviceArray<f32>");
        assert!(
            errs[1].0.starts_with("the operation assigns to the scalar `a`"),
            "{}",
            errs[1].0
        );
        assert_eq!(errs[1].1, "f32");
        // `++x` assigns too.
        assert_eq!(op_errors("++x; z = y", AXPY).len(), 1);
        let errs = op_errors(
            "a = 1",
            "fn f(a: f32, z: &mut DeviceArray<f32>, w: &mut DeviceArray<f32>);",
        );
        let msgs: Vec<&str> = errs.iter().map(|(m, _)| m.as_str()).collect();
        assert!(msgs
            .iter()
            .any(|m| m.starts_with("`z` is taken as `&mut` but the operation never assigns it")));
        assert!(msgs
            .iter()
            .any(|m| m.starts_with("`w` is taken as `&mut` but the operation never assigns it")));
        let errs = op_errors("a + 1", "fn f(a: f32, x: &DeviceArray<f32>);");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].0.starts_with("`f` writes nothing"), "{}", errs[0].0);
    }

    /// PyCUDA's indexed form: `z[i] = ...` assigns `z`; `x[i] = ...` assigns the read-only
    /// `x`; reading `x[n - 1 - i]` is a read.
    #[test]
    fn indexed_assignments_count() {
        assert_eq!(op_errors("z[i] = a * x[i] + y[n - 1 - i]", AXPY), Vec::new());
        assert_eq!(op_errors("z[x[0] > 0 ? i : 0] += 1", AXPY), Vec::new());
        let errs = op_errors("x[i] = 1; z[i] = y[i]", AXPY);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].0.starts_with("the operation assigns to `x`"),
            "{}",
            errs[0].0
        );
        let errs = op_errors("y[i] == z[i]", AXPY);
        assert!(errs
            .iter()
            .any(|(m, _)| m.starts_with("`z` is taken as `&mut` but the operation never assigns it")));
    }

    #[test]
    fn control_flow_and_brackets() {
        let errs = op_errors("return; z = y", AXPY);
        assert!(errs[0]
            .0
            .starts_with("`return` cannot be used in an elementwise operation"));
        assert!(op_errors("break; z = y", AXPY)[0]
            .0
            .starts_with("`break` cannot be used"));
        assert_eq!(
            op_errors("z = (y", AXPY)[0].0,
            "the operation has an unclosed `(`"
        );
        assert_eq!(
            op_errors("z = y)", AXPY)[0].0,
            "the operation has an unmatched `)`"
        );
        assert_eq!(
            op_errors("z = y[0)", AXPY)[0].0,
            "the operation has an unmatched `)`"
        );
        assert!(op_errors(" ; ;", AXPY)[0].0.starts_with("the operation is empty"));
        assert!(op_errors("z = `y`", AXPY)[0]
            .0
            .starts_with("the operation cannot be read: "));
    }
}
