//! Parsing what the user wrote: the attribute's arguments and the Rust declarations it sits on.

use proc_macro2::Span;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, Ident, Lit, LitStr, Meta, Pat, ReturnType, Token, Type, Visibility,
};

/// Where the CUDA source comes from.
#[derive(Clone)]
pub enum SourceSpec {
    /// A string literal in the attribute.
    Inline(LitStr),
    /// `file = "path"`, relative to the crate's manifest directory.
    File(LitStr),
}

/// The attribute's arguments: `#[kernel("src")]`, `#[kernel(file = "k.cu", name = "k")]`, ...
pub struct KernelArgs {
    pub source: SourceSpec,
    /// `name = "…"`: the C function's name when it differs from the Rust one.
    pub name: Option<LitStr>,
    /// `options = ["-use_fast_math", ...]`: extra NVRTC options.
    pub options: Vec<LitStr>,
    /// `include_dirs = ["kernels/include", ...]`: directories, relative to the crate's manifest
    /// directory, searched for `#include "…"` and `#include <…>` (after the directory of a
    /// `file = …`).
    pub include_dirs: Vec<LitStr>,
    /// `sources = ["…", "…"]` or `files = ["a.cu", "b.cu"]`: several sources linked into one
    /// module (then `source` is the first of them).
    pub parts: Vec<SourceSpec>,
    /// `check = false`: skip the build-time NVRTC compile of the whole source.
    pub check: bool,
    /// `embed = ["sm_90", "compute_75"]`: images to compile at build time and embed.
    pub embed: Option<Vec<LitStr>>,
    /// `instantiate = [f32, f64]`, `[1024]`, `[(f32, 256)]`: the instances of a kernel template
    /// to bind, each its template arguments in order (types and values).
    pub instantiate: Option<(Span, Vec<Instance>)>,
    /// `prelude = false`: compile without the NVRTC prelude (`uint`, `ushort`, ... as nvcc's
    /// host headers declare them).
    pub prelude: bool,
    /// `cluster = (x, y, z)` and `cooperative`: how every kernel of the item launches.
    pub launch: LaunchAttrs,
}

/// `cluster = (x, y, z)` (thread-block clusters) and `cooperative` (grid-wide sync): launched
/// with `cuLaunchKernelEx`, checked by the run time at `prepare`.
#[derive(Clone, Default)]
pub struct LaunchAttrs {
    /// The cluster's extents in blocks.
    pub cluster: Option<(i64, i64, i64)>,
    pub cooperative: bool,
}

/// `(2, 1, 1)`, `(2, 2)`, `(4,)` or `4`: a cluster shape of integer literals.
fn cluster_dims(e: &Expr) -> syn::Result<(i64, i64, i64)> {
    let bad = || {
        syn::Error::new_spanned(
            e,
            "`cluster` takes one to three integers, the cluster's extents in blocks: `cluster = (2, 1, 1)`",
        )
    };
    let int = |e: &Expr| match e {
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<i64>().map_err(|_| bad()),
        _ => Err(bad()),
    };
    let elems: Vec<i64> = match e {
        Expr::Tuple(t) => t.elems.iter().map(int).collect::<syn::Result<_>>()?,
        Expr::Paren(p) => vec![int(&p.expr)?],
        other => vec![int(other)?],
    };
    match elems[..] {
        [x] => Ok((x, 1, 1)),
        [x, y] => Ok((x, y, 1)),
        [x, y, z] => Ok((x, y, z)),
        _ => Err(bad()),
    }
}

impl Parse for KernelArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut source = None;
        let mut name = None;
        let mut options = Vec::new();
        let mut include_dirs = Vec::new();
        let mut parts = Vec::new();
        let mut check = None;
        let mut embed = None;
        let mut instantiate = None;
        let mut prelude = None;
        let mut launch = LaunchAttrs::default();
        let mut cluster_seen = false;
        let mut cooperative_seen = false;
        let metas = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
        for expr in metas {
            match expr {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
                    set_once(&mut source, SourceSpec::Inline(s.clone()), &s, SOURCE_TWICE)?
                }
                Expr::Path(p) if p.path.is_ident("cooperative") => {
                    if std::mem::replace(&mut cooperative_seen, true) {
                        return Err(syn::Error::new_spanned(p, "`cooperative` is given twice"));
                    }
                    launch.cooperative = true;
                }
                Expr::Assign(assign) => {
                    let key = match &*assign.left {
                        Expr::Path(p) => match p.path.get_ident() {
                            Some(ident) => ident.to_string(),
                            None => return Err(syn::Error::new_spanned(p, EXPECTED_KEYS)),
                        },
                        other => return Err(syn::Error::new_spanned(other, EXPECTED_KEYS)),
                    };
                    match key.as_str() {
                        "source" | "file" => {
                            let lit = lit_str(&assign.right)?;
                            let spec =
                                if key == "file" { SourceSpec::File(lit) } else { SourceSpec::Inline(lit) };
                            set_once(&mut source, spec, &assign, SOURCE_TWICE)?
                        }
                        "name" => set_once(
                            &mut name,
                            lit_str(&assign.right)?,
                            &assign,
                            "`name` is given twice: a #[kernel] binds one C function",
                        )?,
                        "sources" | "files" => {
                            let Expr::Array(a) = &*assign.right else {
                                return Err(syn::Error::new_spanned(
                                    &assign.right,
                                    format!("`{key}` takes an array of strings, e.g. `{key} = [\"a.cu\", \"b.cu\"]`"),
                                ));
                            };
                            if source.is_some() || !parts.is_empty() || a.elems.is_empty() {
                                return Err(syn::Error::new_spanned(&assign, SOURCE_TWICE));
                            }
                            for e in &a.elems {
                                let lit = lit_str(e)?;
                                parts.push(if key == "files" {
                                    SourceSpec::File(lit)
                                } else {
                                    SourceSpec::Inline(lit)
                                });
                            }
                        }
                        "options" => options.extend(str_array(
                            &assign.right,
                            "`options` takes an array of strings, e.g. `options = [\"-use_fast_math\"]`",
                        )?),
                        "include_dirs" => include_dirs.extend(str_array(
                            &assign.right,
                            "`include_dirs` takes an array of directories relative to the crate's Cargo.toml, e.g. `include_dirs = [\"kernels/include\"]`",
                        )?),
                        "check" => {
                            let b = bool_lit(
                                &assign.right,
                                "`check` takes `true` or `false`: `check = false` skips compiling the CUDA source at build time",
                            )?;
                            set_once(&mut check, b, &assign, "`check` is given twice")?
                        }
                        "embed" => {
                            let list = str_array(
                                &assign.right,
                                "`embed` takes an array of architectures, e.g. `embed = [\"sm_90\", \"compute_80\"]`",
                            )?;
                            set_once(&mut embed, list, &assign, "`embed` is given twice")?
                        }
                        "instantiate" => match &*assign.right {
                            Expr::Array(a) if !a.elems.is_empty() => {
                                let list = a.elems.iter().map(instance).collect::<syn::Result<Vec<_>>>()?;
                                set_once(&mut instantiate, (a.span(), list), &assign, "`instantiate` is given twice")?
                            }
                            other => return Err(syn::Error::new_spanned(
                                other,
                                "`instantiate` takes a non-empty array of template arguments, e.g. `instantiate = [f32, f64]`, `[1024]` or `[(f32, 256)]`",
                            )),
                        },
                        "cluster" => {
                            if std::mem::replace(&mut cluster_seen, true) {
                                return Err(syn::Error::new_spanned(&assign, "`cluster` is given twice"));
                            }
                            launch.cluster = Some(cluster_dims(&assign.right)?);
                        }
                        "cooperative" => match &*assign.right {
                            Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) if !cooperative_seen => {
                                cooperative_seen = true;
                                launch.cooperative = b.value;
                            }
                            other => return Err(syn::Error::new_spanned(
                                other,
                                "`cooperative` is given once, alone or as `cooperative = true`",
                            )),
                        },
                        "prelude" => {
                            let b = bool_lit(
                                &assign.right,
                                "`prelude` takes `true` or `false`: `prelude = false` compiles without the typedefs \
                                 nvcc's host headers declare (`uint`, `ushort`, `ulong`, …)",
                            )?;
                            set_once(&mut prelude, (b, assign.span()), &assign, "`prelude` is given twice")?
                        }
                        _ => {
                            return Err(syn::Error::new_spanned(
                                &assign.left,
                                format!(
                                "unknown argument `{key}`: {EXPECTED_KEYS}"
                            ),
                            ))
                        }
                    }
                }
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "expected the CUDA source as a string literal, or `file = \"path/to/kernel.cu\"`",
                    ))
                }
            }
        }
        if source.is_some() && !parts.is_empty() {
            return Err(syn::Error::new(Span::call_site(), SOURCE_TWICE));
        }
        let source = source.or_else(|| parts.first().cloned()).ok_or_else(|| {
            syn::Error::new(
                Span::call_site(),
                "#[kernel] needs the CUDA C source: #[kernel(r#\"__global__ void f(...) {...}\"#)] or #[kernel(file = \"kernels/f.cu\")]",
            )
        })?;
        if let (Some((false, span)), false) = (prelude, parts.is_empty()) {
            return Err(syn::Error::new(
                span,
                "`prelude = false` is for a single source: the sources of a linked module are compiled with the prelude",
            ));
        }
        Ok(KernelArgs {
            source,
            name,
            options,
            include_dirs,
            parts,
            check: check.unwrap_or(true),
            embed,
            instantiate,
            prelude: prelude.is_none_or(|(p, _)| p),
            launch,
        })
    }
}

const EXPECTED_KEYS: &str =
    "expected `source`, `file`, `name`, `options`, `include_dirs`, `check`, `embed`, `instantiate`, `prelude`, `cluster` or `cooperative`";

/// One instance of a kernel template: its arguments, in the template's order.
#[derive(Clone)]
pub struct Instance {
    pub args: Vec<TemplateArg>,
    /// What it was written as, for spans.
    pub expr: Expr,
}

/// One template argument.
#[derive(Clone)]
pub enum TemplateArg {
    /// A type: `f32`, `Float2`, `"gpu_runtime::types::Float4"`.
    Type(Type),
    /// A value (`256`, `-1`, `true`): its C spelling, and the literal for spans.
    Value { c: String, is_bool: bool, expr: Expr },
}

const TEMPLATE_ARGUMENTS: &str =
    "a kernel template is instantiated for types (scalars such as `f32`, `i32`, `u64`, or \
     `#[repr(C)]` structs named like their C types) and values (`256`, `-1`, `true`), or a tuple of \
     them in the template's order, `(f32, 256)`";

/// `f32`, `1024` or `(f32, 256)`.
fn instance(e: &Expr) -> syn::Result<Instance> {
    let args = match e {
        Expr::Tuple(t) => t.elems.iter().map(template_arg).collect::<syn::Result<_>>()?,
        Expr::Paren(p) => vec![template_arg(&p.expr)?],
        other => vec![template_arg(other)?],
    };
    Ok(Instance {
        args,
        expr: e.clone(),
    })
}

fn template_arg(e: &Expr) -> syn::Result<TemplateArg> {
    let value = |c: String, is_bool: bool| {
        Ok(TemplateArg::Value {
            c,
            is_bool,
            expr: e.clone(),
        })
    };
    match e {
        Expr::Path(p) => Ok(TemplateArg::Type(Type::Path(syn::TypePath {
            attrs: Vec::new(),
            qself: None,
            path: p.path.clone(),
        }))),
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => s.parse::<Type>().map(TemplateArg::Type),
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => value(i.base10_digits().to_owned(), false),
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => value(b.value.to_string(), true),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => value(format!("-{}", i.base10_digits()), false),
            _ => Err(syn::Error::new_spanned(e, TEMPLATE_ARGUMENTS)),
        },
        Expr::Group(g) => template_arg(&g.expr),
        other => Err(syn::Error::new_spanned(other, TEMPLATE_ARGUMENTS)),
    }
}

const SOURCE_TWICE: &str =
    "the CUDA source is given twice: give either a string literal (or `source = …`) or `file = …`, once";

/// Fills `slot`, or fails with `message` spanned at `tokens` if it is already filled.
fn set_once<T>(slot: &mut Option<T>, value: T, tokens: &dyn ToTokens, message: &str) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new_spanned(tokens, message));
    }
    *slot = Some(value);
    Ok(())
}

/// The strings of an array of string literals; anything but an array is the error `message`.
fn str_array(e: &Expr, message: &str) -> syn::Result<Vec<LitStr>> {
    match e {
        Expr::Array(a) => a.elems.iter().map(lit_str).collect(),
        other => Err(syn::Error::new_spanned(other, message)),
    }
}

/// The value of a `true` or `false` literal; anything else is the error `message`.
fn bool_lit(e: &Expr, message: &str) -> syn::Result<bool> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.value),
        other => Err(syn::Error::new_spanned(other, message)),
    }
}

fn lit_str(e: &Expr) -> syn::Result<LitStr> {
    match e {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Ok(s.clone()),
        other => Err(syn::Error::new_spanned(other, "expected a string literal")),
    }
}

/// How an argument's data moves in the convenience call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Direction {
    In,
    Out,
    InOut,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::In => "In",
            Direction::Out => "Out",
            Direction::InOut => "InOut",
        }
    }
    pub fn copies_in(self) -> bool {
        matches!(self, Direction::In | Direction::InOut)
    }
    pub fn copies_out(self) -> bool {
        matches!(self, Direction::Out | Direction::InOut)
    }
}

/// The Rust type of one argument, as far as the check cares.
#[derive(Clone)]
pub enum RustType {
    /// `&[T]` (`mutable: false`) or `&mut [T]`.
    Slice { elem: Type, mutable: bool },
    /// Any other type, passed by value: a scalar or a `#[repr(C)]` struct.
    Value(Type),
}

/// One Rust argument.
#[derive(Clone)]
pub struct RustArg {
    pub name: Ident,
    pub ty: Type,
    pub kind: RustType,
    /// The `#[In]`/`#[Out]`/`#[InOut]` marker and its attribute (for spans).
    pub direction: Option<(Direction, Attribute)>,
    /// `#[len = expr]` (or `#[len(expr)]`) on a slice: the least number of elements it must hold.
    pub len: Option<Expr>,
    /// `#[read_only]` on a `&[T]` whose C pointer is not `const`: the user's word that the
    /// kernel only reads through it.
    pub read_only: Option<Attribute>,
    /// `Option<&[T]>` or `Option<&mut [T]>`: a pointer that may be null (`None`).
    pub nullable: bool,
}

/// One declared kernel: `fn name(args);`.
#[derive(Clone)]
pub struct RustKernel {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    pub args: Vec<RustArg>,
    /// Span of the parameter list, for "too few arguments".
    pub paren_span: Span,
    /// `fn name<T>(…)`: the one type parameter of a kernel template.
    pub generic: Option<Ident>,
}

/// What the attribute is on.
pub enum Item {
    /// `fn name(args);`
    Fn(RustKernel),
    /// `mod name { fn a(args); fn b(args); }`: several kernels from one source.
    Mod {
        attrs: Vec<Attribute>,
        vis: Visibility,
        name: Ident,
        kernels: Vec<RustKernel>,
    },
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        if input.peek(Token![mod]) {
            input.parse::<Token![mod]>()?;
            let name: Ident = input.parse()?;
            let content;
            syn::braced!(content in input);
            let mut kernels = Vec::new();
            while !content.is_empty() {
                let attrs = content.call(Attribute::parse_outer)?;
                let vis: Visibility = content.parse()?;
                kernels.push(parse_kernel_fn(&content, attrs, vis)?);
            }
            if kernels.is_empty() {
                return Err(syn::Error::new(
                    name.span(),
                    "declare at least one kernel in the module: `fn name(args);`",
                ));
            }
            Ok(Item::Mod {
                attrs,
                vis,
                name,
                kernels,
            })
        } else {
            Ok(Item::Fn(parse_kernel_fn(input, attrs, vis)?))
        }
    }
}

fn parse_kernel_fn(input: ParseStream, attrs: Vec<Attribute>, vis: Visibility) -> syn::Result<RustKernel> {
    let sig: syn::Signature = input.parse().map_err(|e| {
        syn::Error::new(e.span(), "#[kernel] goes on a function declaration without a body, `fn name(args);`, or on a `mod` of them")
    })?;
    if input.peek(syn::token::Brace) {
        return Err(syn::Error::new(
            input.span(),
            "a #[kernel] function has no body: end the declaration with `;`",
        ));
    }
    input.parse::<Token![;]>()?;
    let mut generic = None;
    for (i, p) in sig.generics.params.iter().enumerate() {
        match p {
            syn::GenericParam::Type(t) if i == 0 && t.bounds.is_empty() && t.default.is_none() => {
                generic = Some(t.ident.clone())
            }
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "a #[kernel] function takes at most one type parameter, without bounds, for a C++ \
                     kernel template: `fn scale<T>(x: &mut [T], a: T)` with `instantiate = [f32, f64]`",
                ))
            }
        }
    }
    if let Some(w) = &sig.generics.where_clause {
        return Err(syn::Error::new_spanned(
            w,
            "a #[kernel] function takes no `where` clause",
        ));
    }
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new_spanned(a, "a #[kernel] function cannot be async"));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        let unit = matches!(&**ty, Type::Tuple(t) if t.elems.is_empty());
        if !unit {
            return Err(syn::Error::new_spanned(ty, "CUDA kernels return `void`: remove the return type (the generated functions return `gpu_runtime::Result<()>`)"));
        }
    }
    let mut args = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                return Err(syn::Error::new_spanned(r, "a #[kernel] function takes no `self`"))
            }
            FnArg::Typed(pt) => args.push(parse_arg(pt)?),
        }
    }
    Ok(RustKernel {
        attrs,
        vis,
        name: sig.ident,
        args,
        paren_span: sig.paren_token.span.join(),
        generic,
    })
}

fn parse_arg(pt: &syn::PatType) -> syn::Result<RustArg> {
    let name = match &*pt.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "kernel arguments must be plain names",
            ))
        }
    };
    let mut direction: Option<(Direction, Attribute)> = None;
    let mut len: Option<Expr> = None;
    let mut read_only: Option<Attribute> = None;
    for attr in &pt.attrs {
        if attr.path().is_ident("read_only") {
            parse_read_only(attr, &name, &pt.ty)?;
            set_once(
                &mut read_only,
                attr.clone(),
                attr,
                &format!("`{name}` has two `#[read_only]` attributes: give one"),
            )?;
            continue;
        }
        if attr.path().is_ident("len") {
            let expr = match &attr.meta {
                Meta::NameValue(nv) => nv.value.clone(),
                Meta::List(l) => l.parse_args::<Expr>()?,
                Meta::Path(_) => {
                    return Err(syn::Error::new_spanned(
                        attr,
                        format!("`#[len]` needs the length `{name}` must have at least, e.g. `#[len = n]` or `#[len = width * height]`"),
                    ))
                }
            };
            let buffer = nullable_inner(&pt.ty).unwrap_or(&pt.ty);
            if !matches!(buffer, Type::Reference(r) if matches!(&*r.elem, Type::Slice(_))) {
                return Err(syn::Error::new_spanned(
                    attr,
                    format!("`#[len = …]` goes on a buffer argument (`&[T]` or `&mut [T]`), and `{name}` is not one"),
                ));
            }
            set_once(
                &mut len,
                expr,
                attr,
                &format!("`{name}` has two `#[len = …]` attributes: give one"),
            )?;
            continue;
        }
        let dir = match &attr.meta {
            Meta::Path(p) if p.is_ident("In") => Direction::In,
            Meta::Path(p) if p.is_ident("Out") => Direction::Out,
            Meta::Path(p) if p.is_ident("InOut") => Direction::InOut,
            _ => {
                return Err(syn::Error::new_spanned(
                    attr,
                    format!(
                        "unknown attribute `{}` on kernel argument `{name}`: kernel arguments take `#[In]`, `#[Out]`, `#[InOut]`, `#[len = …]` or `#[read_only]`",
                        attr.meta.path().to_token_stream().to_string().replace(' ', ""),
                    ),
                ))
            }
        };
        if let Some((first, _)) = &direction {
            return Err(syn::Error::new_spanned(
                attr,
                format!(
                    "`{}` has both #[{}] and #[{}]: use one of #[In], #[Out] or #[InOut]",
                    name,
                    first.name(),
                    dir.name()
                ),
            ));
        }
        direction = Some((dir, attr.clone()));
    }
    if let (Some(ro), Some((dir, _))) = (&read_only, &direction) {
        if dir.copies_out() {
            return Err(syn::Error::new_spanned(
                ro,
                format!(
                    "`{name}` is #[read_only] and #[{}]: the kernel only reads it, so nothing comes back; use #[In]",
                    dir.name()
                ),
            ));
        }
    }
    let ty = (*pt.ty).clone();
    let inner = nullable_inner(&ty);
    let nullable = inner.is_some();
    let kind = match inner.unwrap_or(&ty) {
        Type::Reference(r) => match &*r.elem {
            Type::Slice(s) => RustType::Slice { elem: (*s.elem).clone(), mutable: r.mutability.is_some() },
            _ => {
                return Err(syn::Error::new_spanned(
                    &ty,
                    "pointer arguments are written as slices: `&[T]` for `const T*`, `&mut [T]` for `T*`",
                ))
            }
        },
        _ if nullable => {
            return Err(syn::Error::new_spanned(
                &ty,
                "`Option` is for pointers that may be null: `Option<&[T]>` for `const T*`, \
                 `Option<&mut [T]>` for `T*` (`None` passes a null pointer)",
            ))
        }
        Type::Path(_) => RustType::Value(ty.clone()),
        Type::Paren(p) => RustType::Value((*p.elem).clone()),
        _ => {
            return Err(syn::Error::new_spanned(
                &ty,
                "unsupported argument type: use a scalar (`i32`, `f32`, ...), `&[T]`, `&mut [T]` or a `#[repr(C)]` struct",
            ))
        }
    };
    Ok(RustArg {
        name,
        ty,
        kind,
        direction,
        len,
        read_only,
        nullable,
    })
}

/// For `Option<X>` (also spelled `core::option::Option<X>` or `std::option::Option<X>`): `X`.
/// A kernel takes `Option<&[T]>` and `Option<&mut [T]>` for pointers that may be null; any
/// other `Option` is an error here.
fn nullable_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
    let is_option = matches!(
        names.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ["Option"] | ["core" | "std", "option", "Option"]
    );
    if !is_option {
        return None;
    }
    match &p.path.segments.last()?.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first()? {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// `#[read_only]` is a bare marker on a shared slice `&[T]`: the Rust side's promise that the
/// kernel only reads through a pointer its C declaration leaves writable (`float *x`).
fn parse_read_only(attr: &Attribute, name: &Ident, ty: &Type) -> syn::Result<()> {
    if !matches!(attr.meta, Meta::Path(_)) {
        return Err(syn::Error::new_spanned(
            attr,
            "`#[read_only]` takes no arguments: write it alone before the argument",
        ));
    }
    match nullable_inner(ty).unwrap_or(ty) {
        Type::Reference(r) if matches!(&*r.elem, Type::Slice(_)) => match r.mutability {
            None => Ok(()),
            Some(m) => Err(syn::Error::new_spanned(
                m,
                format!(
                    "`{name}` is #[read_only], so the kernel only reads it: take it as a shared slice, `&[T]`, not `&mut [T]`"
                ),
            )),
        },
        _ => Err(syn::Error::new_spanned(
            attr,
            format!(
                "`#[read_only]` goes on a buffer argument (`&[T]`) whose C pointer is not declared `const`; `{name}` is passed by value, which the kernel cannot write anyway"
            ),
        )),
    }
}

/// The last path segment of a type, e.g. `f32` for `f32` and `f16` for `half::f16`.
pub fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Paren(p) => last_ident(&p.elem),
        Type::Group(g) => last_ident(&g.elem),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(attr: &str) -> KernelArgs {
        match syn::parse_str::<KernelArgs>(attr) {
            Ok(a) => a,
            Err(e) => panic!("`{attr}` does not parse: {e}"),
        }
    }

    /// The message of the error that parsing `attr` gives, and the text it points at.
    fn args_error(attr: &str) -> (String, String) {
        match syn::parse_str::<KernelArgs>(attr) {
            Ok(_) => panic!("`{attr}` parses"),
            Err(e) => (e.to_string(), e.span().source_text().unwrap_or_default()),
        }
    }

    fn kernel(item: &str) -> RustKernel {
        match syn::parse_str::<Item>(item) {
            Ok(Item::Fn(k)) => k,
            Ok(Item::Mod { .. }) => panic!("`{item}` is a module"),
            Err(e) => panic!("`{item}` does not parse: {e}"),
        }
    }

    fn item_error(item: &str) -> (String, String) {
        match syn::parse_str::<Item>(item) {
            Ok(_) => panic!("`{item}` parses"),
            Err(e) => (e.to_string(), e.span().source_text().unwrap_or_default()),
        }
    }

    fn values(list: &[LitStr]) -> Vec<String> {
        list.iter().map(LitStr::value).collect()
    }

    #[test]
    fn the_source_is_a_literal_source_or_file() {
        assert!(
            matches!(args(r#""__global__ void f() {}""#).source, SourceSpec::Inline(l) if l.value() == "__global__ void f() {}")
        );
        assert!(matches!(args(r#"source = "src""#).source, SourceSpec::Inline(l) if l.value() == "src"));
        assert!(matches!(args(r#"file = "k.cu""#).source, SourceSpec::File(l) if l.value() == "k.cu"));
    }

    #[test]
    fn defaults_when_only_the_source_is_given() {
        let a = args(r#""src""#);
        assert!(a.name.is_none() && a.options.is_empty() && a.parts.is_empty());
        assert!(a.check && a.prelude);
        assert!(a.embed.is_none() && a.instantiate.is_none());
        assert!(a.launch.cluster.is_none() && !a.launch.cooperative);
    }

    #[test]
    fn every_argument_is_read() {
        let a = args(
            r#"file = "k.cu", name = "k_c", options = ["-use_fast_math", "-G"], check = false,
               embed = ["sm_90", "compute_75"], prelude = false, cluster = (2, 2), cooperative"#,
        );
        assert_eq!(a.name.map(|n| n.value()).as_deref(), Some("k_c"));
        assert_eq!(values(&a.options), ["-use_fast_math", "-G"]);
        assert!(!a.check && !a.prelude);
        assert_eq!(values(&a.embed.unwrap_or_default()), ["sm_90", "compute_75"]);
        assert_eq!(a.launch.cluster, Some((2, 2, 1)));
        assert!(a.launch.cooperative);
        let a = args(r#"file = "k.cu", include_dirs = ["kernels/include", "third_party"]"#);
        assert_eq!(values(&a.include_dirs), ["kernels/include", "third_party"]);
        let (msg, at) = args_error(r#""s", include_dirs = "kernels""#);
        assert!(
            msg.starts_with("`include_dirs` takes an array of directories"),
            "{msg}"
        );
        assert_eq!(at, "\"kernels\"");
    }

    #[test]
    fn cluster_shapes() {
        assert_eq!(args(r#""s", cluster = 4"#).launch.cluster, Some((4, 1, 1)));
        assert_eq!(args(r#""s", cluster = (4)"#).launch.cluster, Some((4, 1, 1)));
        assert_eq!(
            args(r#""s", cluster = (1, 2, 3)"#).launch.cluster,
            Some((1, 2, 3))
        );
        for bad in ["(1, 2, 3, 4)", "()", "x", "(1.5, 2)"] {
            let (msg, _) = args_error(&format!(r#""s", cluster = {bad}"#));
            assert!(
                msg.starts_with("`cluster` takes one to three integers"),
                "{bad}: {msg}"
            );
        }
        assert!(!args(r#""s", cooperative = false"#).launch.cooperative);
        assert_eq!(
            args_error(r#""s", cooperative, cooperative"#).0,
            "`cooperative` is given twice"
        );
    }

    #[test]
    fn linked_sources_and_files_become_parts() {
        let a = args(r#"files = ["a.cu", "b.cu"]"#);
        assert_eq!(a.parts.len(), 2);
        assert!(matches!(&a.parts[1], SourceSpec::File(l) if l.value() == "b.cu"));
        // The first part stands for the source where one is needed.
        assert!(matches!(&a.source, SourceSpec::File(l) if l.value() == "a.cu"));
        let a = args(r#"sources = ["x", "y"]"#);
        assert!(matches!(&a.parts[0], SourceSpec::Inline(l) if l.value() == "x"));
        let (msg, _) = args_error(r#"sources = ["x"], prelude = false"#);
        assert!(
            msg.starts_with("`prelude = false` is for a single source"),
            "{msg}"
        );
    }

    #[test]
    fn instantiate_takes_paths_and_strings() {
        let a = args(r#""s", instantiate = [f32, Float2, "gpu_runtime::Float4"]"#);
        let (_, list) = a.instantiate.expect("instantiate");
        let texts: Vec<String> = list
            .iter()
            .map(|i| match &i.args[..] {
                [TemplateArg::Type(t)] => quote::quote!(#t).to_string(),
                _ => panic!("one type"),
            })
            .collect();
        assert_eq!(texts, ["f32", "Float2", "gpu_runtime :: Float4"]);
        // Values, and tuples of the template's arguments in order.
        let (_, list) = args(r#""s", instantiate = [1024, -1, true, (f32, 256u32), (7)]"#)
            .instantiate
            .expect("instantiate");
        let spelled: Vec<Vec<String>> = list
            .iter()
            .map(|i| {
                i.args
                    .iter()
                    .map(|a| match a {
                        TemplateArg::Type(t) => quote::quote!(#t).to_string(),
                        TemplateArg::Value { c, .. } => c.clone(),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            spelled,
            [
                vec!["1024"],
                vec!["-1"],
                vec!["true"],
                vec!["f32", "256"],
                vec!["7"]
            ]
        );
        let (msg, at) = args_error(r#""s", instantiate = []"#);
        assert!(
            msg.starts_with("`instantiate` takes a non-empty array of template arguments"),
            "{msg}"
        );
        assert_eq!(at, "[]");
        for bad in ["1.5", "x + 1", "((f32, 1), 2)"] {
            let (msg, _) = args_error(&format!(r#""s", instantiate = [{bad}]"#));
            assert!(
                msg.starts_with("a kernel template is instantiated for types"),
                "{bad}: {msg}"
            );
        }
    }

    #[test]
    fn argument_errors_point_at_what_is_wrong() {
        let (msg, at) = args_error(r#""s", nmae = "k""#);
        assert_eq!(msg, format!("unknown argument `nmae`: {EXPECTED_KEYS}"));
        assert_eq!(at, "nmae");
        assert_eq!(
            args_error(r#""s", file = "k.cu""#),
            (SOURCE_TWICE.to_owned(), r#"file = "k.cu""#.to_owned())
        );
        let (msg, at) = args_error(r#""s", check = 1"#);
        assert!(msg.starts_with("`check` takes `true` or `false`"), "{msg}");
        assert_eq!(at, "1");
        let (msg, at) = args_error(r#""s", options = "-G""#);
        assert!(msg.starts_with("`options` takes an array of strings"), "{msg}");
        assert_eq!(at, r#""-G""#);
        let (msg, at) = args_error(r#""s", name = "a", name = "b""#);
        assert_eq!(msg, "`name` is given twice: a #[kernel] binds one C function");
        assert_eq!(at, r#"name = "b""#);
        assert_eq!(
            args_error(r#""s", a::b = 1"#),
            (EXPECTED_KEYS.to_owned(), "a::b".to_owned())
        );
        assert_eq!(
            args_error(r#""s", embed = [sm_90]"#).0,
            "expected a string literal"
        );
        assert_eq!(args_error("42").1, "42");
    }

    #[test]
    fn no_source_is_an_error() {
        let (msg, _) = args_error("");
        assert!(msg.starts_with("#[kernel] needs the CUDA C source"), "{msg}");
        assert!(args_error(r#"name = "k""#)
            .0
            .starts_with("#[kernel] needs the CUDA C source"));
    }

    #[test]
    fn arguments_are_read_with_their_kinds_and_markers() {
        let k = kernel("pub fn k(a: f32, #[In] x: &[f32], #[InOut] #[len = n * 2] y: &mut [f32], n: (i32));");
        assert_eq!(k.name, "k");
        assert!(matches!(k.vis, Visibility::Public(_)));
        let names: Vec<String> = k.args.iter().map(|a| a.name.to_string()).collect();
        assert_eq!(names, ["a", "x", "y", "n"]);
        assert!(matches!(&k.args[0].kind, RustType::Value(t) if last_ident(t).as_deref() == Some("f32")));
        assert!(matches!(&k.args[1].kind, RustType::Slice { mutable: false, .. }));
        assert!(matches!(&k.args[2].kind, RustType::Slice { mutable: true, .. }));
        // `(i32)` is an `i32` by value.
        assert!(matches!(&k.args[3].kind, RustType::Value(t) if last_ident(t).as_deref() == Some("i32")));
        assert_eq!(k.args[1].direction.as_ref().map(|d| d.0), Some(Direction::In));
        assert_eq!(k.args[2].direction.as_ref().map(|d| d.0), Some(Direction::InOut));
        let len = k.args[2].len.as_ref().expect("#[len]");
        assert_eq!(quote::quote!(#len).to_string(), "n * 2");
        assert!(k.generic.is_none());
        let k = kernel("fn k(#[len(4)] x: &[u8], #[read_only] y: &[u8]);");
        assert!(k.args[0].len.is_some() && k.args[1].read_only.is_some());
    }

    #[test]
    fn options_of_slices_are_nullable_pointers() {
        let k = kernel("fn k(#[len = 4] a: Option<&[f32]>, #[read_only] b: std::option::Option<&[u8]>, #[Out] c: Option<&mut [i32]>);");
        assert!(k.args.iter().all(|a| a.nullable));
        assert!(
            matches!(&k.args[0].kind, RustType::Slice { mutable: false, elem } if last_ident(elem).as_deref() == Some("f32"))
        );
        assert!(matches!(&k.args[2].kind, RustType::Slice { mutable: true, .. }));
        assert!(!kernel("fn k(a: &[f32], n: i32);").args.iter().any(|a| a.nullable));
        for bad in ["Option<f32>", "Option<Params>"] {
            let (msg, at) = item_error(&format!("fn k(a: {bad});"));
            assert!(
                msg.starts_with("`Option` is for pointers that may be null"),
                "{msg}"
            );
            assert_eq!(at.replace(' ', ""), bad);
        }
        let (msg, _) = item_error("fn k(#[read_only] a: Option<&mut [f32]>);");
        assert!(
            msg.starts_with("`a` is #[read_only], so the kernel only reads it"),
            "{msg}"
        );
    }

    #[test]
    fn len_errors() {
        let (msg, at) = item_error("fn k(#[len = 4] n: i32);");
        assert_eq!(
            msg,
            "`#[len = …]` goes on a buffer argument (`&[T]` or `&mut [T]`), and `n` is not one"
        );
        assert_eq!(at, "#[len = 4]");
        let (msg, at) = item_error("fn k(#[len] x: &[f32]);");
        assert!(
            msg.starts_with("`#[len]` needs the length `x` must have at least"),
            "{msg}"
        );
        assert_eq!(at, "#[len]");
        let (msg, at) = item_error("fn k(#[len = 1] #[len = 2] x: &[f32]);");
        assert_eq!(msg, "`x` has two `#[len = …]` attributes: give one");
        assert_eq!(at, "#[len = 2]");
    }

    #[test]
    fn marker_errors() {
        let (msg, at) = item_error("fn k(#[In] #[Out] x: &mut [f32]);");
        assert_eq!(
            msg,
            "`x` has both #[In] and #[Out]: use one of #[In], #[Out] or #[InOut]"
        );
        assert_eq!(at, "#[Out]");
        let (msg, at) = item_error("fn k(#[Inn] x: &mut [f32]);");
        assert!(
            msg.starts_with("unknown attribute `Inn` on kernel argument `x`"),
            "{msg}"
        );
        assert_eq!(at, "#[Inn]");
        let (msg, at) = item_error("fn k(#[read_only] x: &mut [f32]);");
        assert!(
            msg.starts_with("`x` is #[read_only], so the kernel only reads it"),
            "{msg}"
        );
        assert_eq!(at, "mut");
        let (msg, _) = item_error("fn k(#[read_only] #[InOut] x: &[f32]);");
        assert!(msg.starts_with("`x` is #[read_only] and #[InOut]"), "{msg}");
        let (msg, at) = item_error("fn k(#[read_only(x)] x: &[f32]);");
        assert!(msg.starts_with("`#[read_only]` takes no arguments"), "{msg}");
        assert_eq!(at, "#[read_only(x)]");
    }

    #[test]
    fn declaration_errors() {
        let (msg, _) = item_error("fn k(x: &[f32]) {}");
        assert_eq!(
            msg,
            "a #[kernel] function has no body: end the declaration with `;`"
        );
        let (msg, at) = item_error("fn k(x: &[f32]) -> i32;");
        assert!(msg.starts_with("CUDA kernels return `void`"), "{msg}");
        assert_eq!(at, "i32");
        // `-> ()` is `void`.
        assert!(kernel("fn k() -> ();").args.is_empty());
        let (msg, at) = item_error("fn k(x: &f32);");
        assert!(
            msg.starts_with("pointer arguments are written as slices"),
            "{msg}"
        );
        assert_eq!(at, "&f32");
        let (msg, at) = item_error("fn k((a, b): (i32, i32));");
        assert_eq!(msg, "kernel arguments must be plain names");
        assert_eq!(at, "(a, b)");
        let (msg, _) = item_error("fn k<T: Copy>(x: T);");
        assert!(
            msg.starts_with("a #[kernel] function takes at most one type parameter"),
            "{msg}"
        );
        let (msg, _) = item_error("async fn k();");
        assert_eq!(msg, "a #[kernel] function cannot be async");
        let (msg, at) = item_error("mod m {}");
        assert_eq!(msg, "declare at least one kernel in the module: `fn name(args);`");
        assert_eq!(at, "m");
        let (msg, _) = item_error("struct S;");
        assert!(
            msg.starts_with("#[kernel] goes on a function declaration without a body"),
            "{msg}"
        );
    }

    #[test]
    fn generics_and_modules() {
        let k = kernel("fn scale<T>(x: &mut [T], a: T);");
        assert_eq!(k.generic.map(|g| g.to_string()).as_deref(), Some("T"));
        let Ok(Item::Mod { name, kernels, .. }) =
            syn::parse_str::<Item>("pub mod m { fn a(x: i32); pub fn b(); }")
        else {
            panic!("a module of kernels");
        };
        assert_eq!(name, "m");
        let names: Vec<String> = kernels.iter().map(|k| k.name.to_string()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(matches!(kernels[1].vis, Visibility::Public(_)));
    }

    #[test]
    fn last_ident_looks_through_paths_and_parens() {
        let t = |s: &str| last_ident(&syn::parse_str::<Type>(s).expect("a type"));
        assert_eq!(t("half::f16").as_deref(), Some("f16"));
        assert_eq!(t("(u8)").as_deref(), Some("u8"));
        assert_eq!(t("&[u8]"), None);
        assert_eq!(t("<T as X>::Y"), None);
    }
}
