//! Kernel templates: `#[kernel(SRC, instantiate = [f32, f64])] fn scale<T>(…);` binds the C++
//! `template <typename T> __global__ void scale(…)` once per listed type, through NVRTC name
//! expressions (`scale<float>`), each instantiation checked like a plain kernel. A template over
//! values (`template <int block_size>`) takes them in `instantiate` too: a plain `fn` binds one
//! instance (`instantiate = [1024]`), a generic one an instance per type (`[(f32, 256)]`).

use gpu_cuda_source::{CParam, CType, KernelDecl, Scalar, TemplateParam, TemplateParamKind};
use proc_macro2::Span;
use quote::ToTokens;
use syn::{Ident, Type};

use crate::check::{check_kernel, Errors};
use crate::input::{last_ident, Instance, RustKernel, RustType, TemplateArg};

/// A kernel bound: the NVRTC name expression of each instance (the C name alone for a plain
/// kernel), and for a generic `fn` the Rust type of each.
pub struct Bound {
    pub names: Vec<String>,
    pub types: Vec<Type>,
}

/// `template <typename T, int block_size>`, as a message quotes a template's parameters.
fn header(params: &[TemplateParam]) -> String {
    let one = |p: &TemplateParam| {
        let name = p.name.as_deref().unwrap_or("");
        let text = match &p.kind {
            TemplateParamKind::Type => format!("typename {name}"),
            TemplateParamKind::Value(ty) => format!("{ty} {name}"),
            TemplateParamKind::Template => format!("template <…> class {name}"),
        };
        let text = text.trim_end().to_owned();
        match &p.default {
            Some(d) => format!("{text} = {d}"),
            None => text,
        }
    };
    format!(
        "template <{}>",
        params.iter().map(one).collect::<Vec<_>>().join(", ")
    )
}

/// An example value for a message: `32` for an integer, `true` for a `bool`.
fn example_value(p: &TemplateParam) -> &'static str {
    match &p.kind {
        TemplateParamKind::Value(ty)
            if gpu_cuda_source::parse_type(ty) == Ok(CType::Scalar(Scalar::Bool)) =>
        {
            "true"
        }
        _ => "32",
    }
}

/// Whether `ty` is, or points to, the type named `name`.
fn mentions(ty: &CType, name: &str) -> bool {
    match ty {
        CType::Named(n) => n == name,
        CType::Pointer { pointee, .. } => mentions(pointee, name),
        CType::Scalar(_) | CType::Void => false,
    }
}

/// Checks `kernel` against `decl` and binds the instances `instantiate` lists, as the module
/// docs say; every mismatch is an error at the Rust token that causes it.
pub fn bind(
    kernel: &RustKernel,
    decl: &KernelDecl,
    c_name: &str,
    instantiate: Option<&(Span, Vec<Instance>)>,
) -> syn::Result<Bound> {
    let params = &decl.template_params;
    let required = |p: &&TemplateParam| p.default.is_none();
    let type_param = params.iter().position(|p| p.kind == TemplateParamKind::Type);
    // A type parameter that a kernel parameter's type names, defaulted or not: a plain `fn`
    // cannot stand for it (else the check would compare `f32` with a C type `T` and speak of
    // structs).
    let used_type_param = params.iter().any(|p| {
        p.kind == TemplateParamKind::Type
            && p.name
                .as_deref()
                .is_some_and(|n| decl.params.iter().any(|c| mentions(&c.ty, n)))
    });
    match (&kernel.generic, instantiate) {
        (None, None) => {
            if decl.is_template && (params.iter().any(|p| required(&p)) || used_type_param) {
                let msg = if used_type_param
                    || params
                        .iter()
                        .filter(required)
                        .any(|p| p.kind == TemplateParamKind::Type)
                {
                    format!(
                        "the CUDA kernel `{c_name}` is a template (`{}`): declare the Rust function \
                         generic, `fn {}<T>(…)`, with `T` where the template has its type parameter, \
                         and list the types to make it for, `instantiate = [f32, f64]`",
                        header(params),
                        kernel.name
                    )
                } else {
                    let values: Vec<&str> = params.iter().filter(required).map(example_value).collect();
                    let example = match &values[..] {
                        [one] => (*one).to_owned(),
                        many => format!("({})", many.join(", ")),
                    };
                    format!(
                        "the CUDA kernel `{c_name}` is a template over values (`{}`): say which \
                         instance this `fn` binds, e.g. `#[kernel(…, instantiate = [{example}])]`",
                        header(params)
                    )
                };
                return Err(syn::Error::new(kernel.name.span(), msg));
            }
            check_kernel(kernel, decl)?;
            Ok(Bound {
                names: vec![c_name.to_owned()],
                types: Vec::new(),
            })
        }
        (Some(t), None) => Err(syn::Error::new_spanned(
            t,
            format!(
                "a generic #[kernel] binds a C++ kernel template: list the types to make it for, \
                 e.g. `#[kernel(…, instantiate = [f32, f64])] fn {}<{t}>(…);`",
                kernel.name
            ),
        )),
        (generic, Some((span, list))) => {
            if !decl.is_template {
                return Err(syn::Error::new(
                    *span,
                    format!("the CUDA kernel `{c_name}` is not a template, so it cannot be instantiated"),
                ));
            }
            if let Some(p) = params.iter().find(|p| p.kind == TemplateParamKind::Template) {
                return Err(syn::Error::new(
                    *span,
                    format!(
                        "the CUDA kernel `{c_name}` takes a template as a template argument (`{}`), \
                         which cannot be given from Rust",
                        p.name.as_deref().unwrap_or("template <…> class")
                    ),
                ));
            }
            let required_types = params
                .iter()
                .filter(|p| p.kind == TemplateParamKind::Type && p.default.is_none())
                .count();
            match generic {
                None if required_types > 0 || used_type_param => {
                    return Err(syn::Error::new(
                        *span,
                        format!(
                            "`instantiate` makes the template `{c_name}` (`{}`) for types: declare the \
                             Rust function generic, `fn {}<T>(…)`, with `T` where the C++ template has \
                             its type parameter",
                            header(params),
                            kernel.name
                        ),
                    ))
                }
                None if list.len() > 1 => {
                    return Err(syn::Error::new_spanned(
                        &list[1].expr,
                        format!(
                            "a plain `fn` binds one instance of the template `{c_name}`: declare one \
                             `fn` per instance, each with `name = \"{c_name}\"` and its own `instantiate`"
                        ),
                    ))
                }
                Some(t) if !params.is_empty() && type_param.is_none() => {
                    return Err(syn::Error::new_spanned(
                        t,
                        format!(
                            "the CUDA kernel `{c_name}` is a template over values only (`{}`): declare \
                             the Rust function without `<{t}>` and bind one instance, e.g. \
                             `instantiate = [{}]`",
                            header(params),
                            example_value(&params[0])
                        ),
                    ))
                }
                Some(t) if required_types > 1 => {
                    return Err(syn::Error::new_spanned(
                        t,
                        format!(
                            "a generic #[kernel] binds a template of one type parameter, and `{c_name}` \
                             has {required_types} (`{}`)",
                            header(params)
                        ),
                    ))
                }
                _ => {}
            }
            let mut errors = Errors::default();
            let mut bound = Bound {
                names: Vec::new(),
                types: Vec::new(),
            };
            let mut seen = Vec::new();
            for inst in list {
                let Some(args) =
                    instance_args(inst, params, generic.is_some(), type_param, c_name, &mut errors)
                else {
                    continue;
                };
                let spelled = args.spelled.join(", ");
                match (generic, &args.rust_type) {
                    (Some(t), Some((rust, c_ty, c_text))) => {
                        if seen.contains(c_text) {
                            errors.push(syn::Error::new_spanned(
                                rust,
                                format!("`{c_text}` is instantiated twice"),
                            ));
                            continue;
                        }
                        seen.push(c_text.clone());
                        // The Rust `T` stands for the template's type parameter, whatever its C
                        // name; a template read without its parameters (a specialization) is
                        // taken to name it like the Rust one.
                        let c_param = type_param
                            .and_then(|i| params[i].name.clone())
                            .unwrap_or_else(|| t.to_string());
                        let k = substitute(kernel, t, rust);
                        let d = instantiate_decl(decl, &c_param, c_ty);
                        if let Err(e) = check_kernel(&k, &d) {
                            errors.push(syn::Error::new(
                                e.span(),
                                format!("in the instantiation for `{spelled}`: {e}"),
                            ));
                        }
                        bound.types.push(rust.clone());
                    }
                    (Some(t), None) => {
                        errors.push(syn::Error::new_spanned(
                            &inst.expr,
                            format!(
                                "this instance gives no type for `{t}`: a generic `fn` takes the type of \
                                 each instance, in the template's order (`{}`)",
                                header(params)
                            ),
                        ));
                        continue;
                    }
                    (None, _) => {
                        if let Err(e) = check_kernel(kernel, decl) {
                            errors.push(e);
                        }
                    }
                }
                bound.names.push(format!("{c_name}<{spelled}>"));
            }
            errors.finish()?;
            Ok(bound)
        }
    }
}

/// One instance's arguments, checked against the template's parameters: their C spellings,
/// and the type the Rust `T` stands for (its Rust type, C type and C spelling).
struct Args {
    spelled: Vec<String>,
    rust_type: Option<(Type, CType, String)>,
}

fn instance_args(
    inst: &Instance,
    params: &[TemplateParam],
    generic: bool,
    type_param: Option<usize>,
    c_name: &str,
    errors: &mut Errors,
) -> Option<Args> {
    let mut out = Args {
        spelled: Vec::new(),
        rust_type: None,
    };
    if params.is_empty() {
        // An explicit specialization, or a template whose parameters could not be read: the
        // types as they are, as before template parameters were read.
        for a in &inst.args {
            match a {
                TemplateArg::Type(t) => match c_spelling(t) {
                    Ok((c, cty)) => {
                        out.rust_type = out.rust_type.or(Some((t.clone(), cty, c.clone())));
                        out.spelled.push(c);
                    }
                    Err(e) => {
                        errors.push(e);
                        return None;
                    }
                },
                TemplateArg::Value { c, .. } => out.spelled.push(c.clone()),
            }
        }
        return Some(out);
    }
    if inst.args.len() > params.len() {
        errors.push(syn::Error::new_spanned(
            &inst.expr,
            format!(
                "the template `{c_name}` takes {} argument{} (`{}`), and this instance gives {}",
                params.len(),
                if params.len() == 1 { "" } else { "s" },
                header(params),
                inst.args.len()
            ),
        ));
        return None;
    }
    if let Some(p) = params[inst.args.len()..].iter().find(|p| p.default.is_none()) {
        let what = match &p.kind {
            TemplateParamKind::Value(ty) => format!("`{ty} {}`", p.name.as_deref().unwrap_or("")),
            _ => format!("`typename {}`", p.name.as_deref().unwrap_or("")),
        };
        errors.push(syn::Error::new_spanned(
            &inst.expr,
            format!(
                "this instance of the template `{c_name}` (`{}`) gives nothing for {what}: give the \
                 template's arguments in order, as a tuple when there are several",
                header(params)
            ),
        ));
        return None;
    }
    let mut ok = true;
    for (i, (arg, p)) in inst.args.iter().zip(params).enumerate() {
        let pname = p.name.as_deref().unwrap_or("");
        match (arg, &p.kind) {
            (TemplateArg::Type(t), TemplateParamKind::Type) => match c_spelling(t) {
                Ok((c, cty)) => {
                    if generic && Some(i) == type_param {
                        out.rust_type = Some((t.clone(), cty, c.clone()));
                    }
                    out.spelled.push(c);
                }
                Err(e) => {
                    errors.push(e);
                    ok = false;
                }
            },
            (TemplateArg::Type(t), TemplateParamKind::Value(ty)) => {
                errors.push(syn::Error::new_spanned(
                    t,
                    format!(
                        "`{}` is a type, where the template `{c_name}` takes a value, `{ty} {pname}`",
                        t.to_token_stream().to_string().replace(' ', "")
                    ),
                ));
                ok = false;
            }
            (TemplateArg::Value { c, expr, .. }, TemplateParamKind::Type) => {
                errors.push(syn::Error::new_spanned(
                    expr,
                    format!(
                        "`{c}` is a value, where the template `{c_name}` takes a type, `typename {pname}`: \
                         give its arguments in order (`{}`)",
                        header(params)
                    ),
                ));
                ok = false;
            }
            (TemplateArg::Value { c, is_bool, expr }, TemplateParamKind::Value(ty)) => {
                if let Err(why) = value_fits(c, *is_bool, ty) {
                    errors.push(syn::Error::new_spanned(
                        expr,
                        format!("`{c}` cannot be the template argument `{ty} {pname}`: {why}"),
                    ));
                    ok = false;
                } else {
                    out.spelled.push(c.clone());
                }
            }
            (_, TemplateParamKind::Template) => ok = false,
        }
    }
    ok.then_some(out)
}

/// Whether a value literal fits a C value parameter: a `bool` for `bool`, an integer in range
/// for an integer type; any for a type this cannot read (an enum), which NVRTC checks.
fn value_fits(c: &str, is_bool: bool, ty: &str) -> Result<(), String> {
    let Ok(CType::Scalar(s)) = gpu_cuda_source::parse_type(ty) else {
        return Ok(());
    };
    let (lo, hi): (i128, i128) = match s {
        Scalar::Bool => {
            return if is_bool {
                Ok(())
            } else {
                Err("it takes `true` or `false`".to_owned())
            }
        }
        Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::Isize => {
            let bits = 8 * s.size() as u32;
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        }
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 | Scalar::Usize => {
            (0, (1i128 << (8 * s.size() as u32)) - 1)
        }
        Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::Bf16 => {
            return Err("a floating-point template parameter is not supported".to_owned())
        }
    };
    if is_bool {
        return Err("it takes an integer".to_owned());
    }
    match c.parse::<i128>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(()),
        _ => Err(format!("it takes an integer from {lo} to {hi}")),
    }
}

/// The C++ spelling of a Rust type used as a template argument: `float` for `f32`, `Params`
/// for a `#[repr(C)]` struct `Params`.
pub fn c_spelling(ty: &Type) -> syn::Result<(String, CType)> {
    let bad = || {
        syn::Error::new_spanned(
            ty,
            format!(
                "`{}` cannot instantiate a CUDA kernel template: use a scalar (`f32`, `i32`, `u64`, …) \
                 or a `#[repr(C)]` struct named like its C counterpart",
                ty.to_token_stream().to_string().replace(' ', "")
            ),
        )
    };
    let Type::Path(p) = ty else { return Err(bad()) };
    if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_empty()) {
        return Err(bad());
    }
    let ident = last_ident(ty).ok_or_else(bad)?;
    match Scalar::from_rust_name(&ident) {
        Some(Scalar::Bool) => Err(syn::Error::new_spanned(
            ty,
            "`bool` cannot instantiate a kernel template here: buffers of `bool` cannot be read back \
             safely; use `u8`",
        )),
        Some(s) => Ok((s.c_name().to_owned(), CType::Scalar(s))),
        None => match crate::vector::c_name(&ident) {
            // `Float2` is instantiated as `float2`.
            Some(c) => Ok((c.clone(), CType::Named(c))),
            None => Ok((ident.clone(), CType::Named(ident))),
        },
    }
}

/// Replaces the CUDA C names in an `instantiate` list by their Rust types, in place: `float` is
/// `f32`, `uint` is `u32`, `float2` and `cuFloatComplex` are `gpu_runtime::types::Float2`,
/// `half` is `gpu_runtime::half::f16`. Rust names and struct names are left as they are. A
/// name shaped like a CUDA vector type that CUDA does not have (`float5`) is an error.
pub fn rust_types(list: &mut [Instance]) -> syn::Result<()> {
    let mut errors = crate::check::Errors::default();
    for arg in list.iter_mut().flat_map(|i| i.args.iter_mut()) {
        let TemplateArg::Type(ty) = arg else { continue };
        match cuda_name_to_rust(ty) {
            Ok(Some(rust)) => *ty = rust,
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    errors.finish()
}

/// The Rust type for `ty` when it is a single CUDA C name, else `None`.
fn cuda_name_to_rust(ty: &Type) -> syn::Result<Option<Type>> {
    let Type::Path(p) = ty else { return Ok(None) };
    let Some(ident) = p.path.get_ident().filter(|_| p.qself.is_none()) else {
        return Ok(None);
    };
    let name = ident.to_string();
    if Scalar::from_rust_name(&name).is_some() || crate::vector::c_name(&name).is_some() {
        return Ok(None);
    }
    let span = ident.span();
    let rust = match gpu_cuda_source::parse_type(&name) {
        Ok(CType::Scalar(Scalar::F16)) => quote::quote_spanned!(span=> ::gpu_runtime::half::f16),
        Ok(CType::Scalar(Scalar::Bf16)) => quote::quote_spanned!(span=> ::gpu_runtime::half::bf16),
        Ok(CType::Scalar(s)) => {
            let r = Ident::new(s.rust_type(), span);
            quote::quote_spanned!(span=> #r)
        }
        Ok(CType::Named(c)) => match crate::vector::rust_name(&c) {
            Some(v) => {
                let r = Ident::new(&v, span);
                quote::quote_spanned!(span=> ::gpu_runtime::types::#r)
            }
            None => match crate::vector::misnamed_family(&c) {
                Some(family) => return Err(unknown_vector(ty, &c, family)),
                // A struct: the Rust type of the same name.
                None => return Ok(None),
            },
        },
        _ => return Ok(None),
    };
    syn::parse2(rust).map(Some)
}

fn unknown_vector(ty: &Type, name: &str, family: &str) -> syn::Error {
    let have = match family.trim_start_matches("__") {
        "half" => "`__half2` (`gpu_runtime::types::Half2`)".to_owned(),
        _ => {
            let rust = crate::vector::rust_name(&format!("{family}1")).unwrap_or_default();
            let rust = rust.trim_end_matches('1');
            format!("`{family}1` to `{family}4` (`gpu_runtime::types::{rust}1` to `{rust}4`)")
        }
    };
    syn::Error::new_spanned(
        ty,
        format!("`{name}` is not a CUDA vector type: CUDA's `{family}` vectors are {have}"),
    )
}

fn subst_type(ty: &Type, param: &Ident, with: &Type) -> Type {
    match ty {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident(param) => with.clone(),
        // `Option<&[T]>`: inside the generic arguments.
        Type::Path(p) => {
            let mut p = p.clone();
            for seg in &mut p.path.segments {
                if let syn::PathArguments::AngleBracketed(a) = &mut seg.arguments {
                    for arg in &mut a.args {
                        if let syn::GenericArgument::Type(t) = arg {
                            *t = subst_type(t, param, with);
                        }
                    }
                }
            }
            Type::Path(p)
        }
        Type::Reference(r) => {
            let mut r = r.clone();
            r.elem = Box::new(subst_type(&r.elem, param, with));
            Type::Reference(r)
        }
        Type::Slice(s) => {
            let mut s = s.clone();
            s.elem = Box::new(subst_type(&s.elem, param, with));
            Type::Slice(s)
        }
        Type::Paren(p) => subst_type(&p.elem, param, with),
        Type::Group(g) => subst_type(&g.elem, param, with),
        other => other.clone(),
    }
}

/// The kernel with its type parameter replaced by `with`, spans kept.
pub fn substitute(kernel: &RustKernel, param: &Ident, with: &Type) -> RustKernel {
    let mut k = kernel.clone();
    k.generic = None;
    for a in &mut k.args {
        a.ty = subst_type(&a.ty, param, with);
        a.kind = match &a.kind {
            RustType::Slice { elem, mutable } => RustType::Slice {
                elem: subst_type(elem, param, with),
                mutable: *mutable,
            },
            RustType::Value(t) => RustType::Value(subst_type(t, param, with)),
        };
    }
    k
}

fn subst_c(ty: &CType, param: &str, with: &CType) -> CType {
    match ty {
        CType::Named(n) if n == param => with.clone(),
        CType::Pointer {
            pointee,
            pointee_const,
        } => CType::Pointer {
            pointee: Box::new(subst_c(pointee, param, with)),
            pointee_const: *pointee_const,
        },
        other => other.clone(),
    }
}

/// The C declaration with the template parameter named like the Rust one replaced by `with`.
pub fn instantiate_decl(decl: &KernelDecl, param: &str, with: &CType) -> KernelDecl {
    let mut d = decl.clone();
    d.params = decl
        .params
        .iter()
        .map(|p| CParam {
            ty: subst_c(&p.ty, param, with),
            ..p.clone()
        })
        .collect();
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: &str) -> Type {
        syn::parse_str(s).unwrap_or_else(|e| panic!("`{s}`: {e}"))
    }

    fn text(t: &Type) -> String {
        t.to_token_stream().to_string()
    }

    #[test]
    fn template_arguments_are_spelled_in_cpp() {
        let spell = |s: &str| c_spelling(&ty(s)).map(|(c, _)| c).map_err(|e| e.to_string());
        assert_eq!(spell("f32").as_deref(), Ok("float"));
        assert_eq!(spell("u64").as_deref(), Ok("unsigned long long"));
        assert_eq!(spell("gpu_runtime::types::Float2").as_deref(), Ok("float2"));
        assert_eq!(spell("Params").as_deref(), Ok("Params"));
        assert!(spell("bool").is_err_and(|e| e.starts_with("`bool` cannot instantiate a kernel template")));
        assert!(spell("Vec<f32>").is_err_and(|e| e.starts_with("`Vec<f32>` cannot instantiate")));
        assert!(spell("&f32").is_err());
    }

    /// The `instantiate` list of `attr` (`[…]`).
    fn instances(list: &str) -> Vec<Instance> {
        let args: crate::input::KernelArgs =
            syn::parse_str(&format!("\"s\", instantiate = {list}")).expect("arguments");
        args.instantiate.expect("instantiate").1
    }

    fn types_of(list: &[Instance]) -> Vec<String> {
        list.iter()
            .flat_map(|i| &i.args)
            .filter_map(|a| match a {
                TemplateArg::Type(t) => Some(text(t)),
                TemplateArg::Value { .. } => None,
            })
            .collect()
    }

    #[test]
    fn cuda_names_in_instantiate_become_rust_types() {
        let mut list = instances("[float, uint, float2, half, (f64, 4), Params]");
        rust_types(&mut list).expect("all are types");
        let texts = types_of(&list);
        assert_eq!(
            texts,
            [
                "f32",
                "u32",
                ":: gpu_runtime :: types :: Float2",
                ":: gpu_runtime :: half :: f16",
                "f64",
                "Params"
            ]
        );
        let mut bad = instances("[float5, (int0, 1)]");
        let Err(e) = rust_types(&mut bad) else {
            panic!("`float5` was accepted");
        };
        let msgs: Vec<String> = e.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs,
            [
                "`float5` is not a CUDA vector type: CUDA's `float` vectors are `float1` to `float4` \
                 (`gpu_runtime::types::Float1` to `Float4`)",
                "`int0` is not a CUDA vector type: CUDA's `int` vectors are `int1` to `int4` \
                 (`gpu_runtime::types::Int1` to `Int4`)",
            ]
        );
    }

    #[test]
    fn substitution_reaches_slices_and_values_on_both_sides() {
        let Ok(crate::input::Item::Fn(k)) = syn::parse_str("fn scale<T>(x: &mut [T], a: T, n: i32);") else {
            panic!("a kernel");
        };
        let t = k.generic.clone().expect("generic");
        let k = substitute(&k, &t, &ty("f64"));
        assert!(k.generic.is_none());
        let types: Vec<String> = k.args.iter().map(|a| text(&a.ty)).collect();
        assert_eq!(types, ["& mut [f64]", "f64", "i32"]);
        assert!(matches!(&k.args[0].kind, RustType::Slice { elem, mutable: true } if text(elem) == "f64"));
        let decl = gpu_cuda_source::find_kernel(
            "template <typename T> __global__ void scale(T *x, T a, int n) { }",
            "scale",
        )
        .expect("the template");
        let d = instantiate_decl(&decl, "T", &CType::Scalar(Scalar::F64));
        assert!(
            matches!(&d.params[0].ty, CType::Pointer { pointee, pointee_const: false } if **pointee == CType::Scalar(Scalar::F64))
        );
        assert_eq!(d.params[1].ty, CType::Scalar(Scalar::F64));
        assert_eq!(d.params[2].ty, CType::Scalar(Scalar::I32));
        // The substituted pair checks.
        crate::check::check_kernel(&k, &d).expect("matches");
    }
}
