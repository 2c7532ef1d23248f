//! The logic of `gpu-macros`: the `#[kernel]`, `#[elementwise]`, `#[reduction]` and `#[gpu_test]` attributes
//! of `gpu-runtime`, on `proc_macro2` tokens. `gpu-macros` is a thin shim over this crate (as
//! `sqlx-macros` is over `sqlx-macros-core`): a proc-macro crate's own unit tests cannot run, so
//! the parsers, checks and generators live here, where they are ordinary functions with unit
//! tests. Not a public interface: its version is pinned by `gpu-macros`, and it may change in
//! any release.
//!
//! The macro stays thin: it parses the CUDA C declaration (with `gpu-cuda-source`), checks the Rust
//! signature against it, and emits calls into `gpu_runtime`, where all run-time logic lives.

#[cfg(test)]
mod candle_tests;
mod check;
#[cfg(test)]
mod corpus_check;
mod crate_config;
mod deep;
mod elementwise;
mod expand;
#[cfg(test)]
mod header_agreement;
#[cfg(test)]
mod host_code_check;
mod input;
mod linked;
mod native_arch;
mod nvrtc;
mod nvrtc_find;
mod place;
mod reduction;
mod template;
mod test_attr;
mod vector;

// The generated code calls `gpu_runtime::__private_v0_1`, the runtime's interface named for
// the version pair (see gpu-runtime's lib.rs): this crate's version must be the same
// major.minor, and a bump renames the module on both sides.
const _: () = assert!(
    matches!(env!("CARGO_PKG_VERSION").as_bytes(), [b'0', b'.', b'1', b'.', ..]),
    "rename __private_v0_1 (here and in gpu-runtime) for this version"
);

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

use crate::check::Errors;
use crate::expand::{HeaderTokens, SourceTokens};
use crate::input::{Item, KernelArgs, RustKernel, SourceSpec};

/// `#[kernel(attr)] item`: the expansion, or the `compile_error!` that says why there is none.
/// `gpu_macros::kernel` documents the attribute.
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    try_kernel(attr, item).unwrap_or_else(|e| e.to_compile_error())
}

/// [`kernel`], with the error as a value (the tests look at its message and span).
fn try_kernel(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args: KernelArgs = syn::parse2(attr)?;
    let item: Item = syn::parse2(item)?;
    with_defaults(args, crate_config::defaults()?, item)
}

/// Expands with the crate's defaults (`[package.metadata.gpu-runtime]` in its Cargo.toml):
/// their options before the attribute's, their directories after (a linked module takes no
/// directories).
fn with_defaults(
    mut args: KernelArgs,
    defaults: crate_config::Defaults,
    item: Item,
) -> syn::Result<TokenStream> {
    let mut options = defaults.option_lits();
    options.append(&mut args.options);
    args.options = options;
    if args.parts.is_empty() {
        args.include_dirs.extend(defaults.include_dir_lits());
    }
    let expansion = expand_item(args, item)?;
    let tracking = defaults.tracking();
    Ok(quote!(#expansion #tracking))
}

/// `#[elementwise(attr)] item`: the expansion, or the `compile_error!` that says why there is
/// none. `gpu_macros::elementwise` documents the attribute.
pub fn elementwise(attr: TokenStream, item: TokenStream) -> TokenStream {
    try_elementwise(attr, item).unwrap_or_else(|e| e.to_compile_error())
}

fn try_elementwise(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args: elementwise::Args = syn::parse2(attr)?;
    let item: elementwise::Item = syn::parse2(item)?;
    elementwise::expand(args, item)
}

/// `#[reduction(attr)] item`: the expansion, or the `compile_error!` that says why there is
/// none. `gpu_macros::reduction` documents the attribute.
pub fn reduction(attr: TokenStream, item: TokenStream) -> TokenStream {
    try_reduction(attr, item).unwrap_or_else(|e| e.to_compile_error())
}

fn try_reduction(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args: reduction::Args = syn::parse2(attr)?;
    let item: reduction::Item = syn::parse2(item)?;
    reduction::expand(args, item)
}

/// `#[gpu_test(attr)] item`: the expansion, or the `compile_error!` that says why there is
/// none. `gpu_macros::gpu_test` documents the attribute.
pub fn gpu_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    try_gpu_test(attr, item).unwrap_or_else(|e| e.to_compile_error())
}

fn try_gpu_test(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let item: syn::ItemFn = syn::parse2(item)?;
    test_attr::expand(attr, item)
}

/// The name an inline source is compiled under: not a file name, so that no `#include` reaches
/// it (an inline `mod unary` whose text includes `"unary.cu"` must not include itself), and
/// plainly not a file in messages.
pub(crate) fn inline_name(default_name: &str) -> String {
    format!("<inline:{default_name}>")
}

/// Where the source `spec` is written, as messages name it: a literal by the Rust file and line
/// of each CUDA line, a file by `file = "…"` as written (relative to the crate's root).
pub(crate) fn origin_of(spec: &SourceSpec) -> place::Origin {
    match spec {
        SourceSpec::Inline(lit) => place::Origin::literal(lit, "kernel string"),
        SourceSpec::File(lit) => place::Origin::File {
            path: lit.value(),
            span: lit.span(),
        },
    }
}

/// `path`, a path under the crate's root that starts with `manifest_dir`, as the tokens
/// `concat!(env!("CARGO_MANIFEST_DIR"), "/rel/path")`: what `include_str!` / `include_bytes!`
/// read at build time, with no path of the build machine written into the generated code (nor,
/// so, into anything built from it).
fn crate_path(manifest_dir: &std::path::Path, path: &std::path::Path) -> proc_macro2::TokenStream {
    match path.strip_prefix(manifest_dir) {
        Ok(rel) => {
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let rel = format!("/{}", rel.join("/"));
            quote!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), #rel))
        }
        // Not under the root (a test without CARGO_MANIFEST_DIR): the path as it is.
        Err(_) => {
            let abs = path.to_string_lossy().into_owned();
            quote!(#abs)
        }
    }
}

/// The source text, and tokens that embed it in the program with every header it includes
/// from the folder of a `file = …` and from `include_dirs` (relative to the directory of the
/// crate's Cargo.toml): found as a C preprocessor finds them (`gpu_cuda_source::include_scan::
/// local_headers`), read now, and given to NVRTC in memory by the name each `#include` gives,
/// by the build-time check and by the run time alike. So the run time compiles exactly what the
/// build checked, needs none of these files, and the binary names no directory of the machine
/// that built it. `options` are the attribute's own, passed on as they are.
fn load_source(
    spec: &SourceSpec,
    default_name: &str,
    options: Vec<syn::LitStr>,
    include_dirs: &[syn::LitStr],
) -> syn::Result<(String, SourceTokens, proc_macro2::Span)> {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut dirs = Vec::with_capacity(include_dirs.len());
    for lit in include_dirs {
        let dir = manifest_dir.join(lit.value());
        if !dir.is_dir() {
            return Err(syn::Error::new(
                lit.span(),
                format!(
                    "`{}` is not a directory: `include_dirs` are relative to the directory of the \
                     crate's Cargo.toml, so it was looked for at `{}`",
                    lit.value(),
                    dir.display()
                ),
            ));
        }
        dirs.push(dir);
    }
    let (text, text_tokens, file_name, beside, file_rel, span) = match spec {
        SourceSpec::Inline(lit) => (
            lit.value(),
            quote!(#lit),
            inline_name(default_name),
            None,
            None,
            lit.span(),
        ),
        SourceSpec::File(lit) => {
            let path = manifest_dir.join(lit.value());
            let text = std::fs::read_to_string(&path).map_err(|e| {
                syn::Error::new(
                    lit.span(),
                    format!(
                        "cannot read the CUDA source file `{}`: {e}; `file` paths are relative to the \
                         directory of the crate's Cargo.toml, so it was looked for at `{}`",
                        lit.value(),
                        path.display()
                    ),
                )
            })?;
            let file_name = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("{default_name}.cu"));
            // include_str! both embeds the file and makes cargo rebuild when it changes.
            let at = crate_path(&manifest_dir, &path);
            (
                text,
                quote!(::core::include_str!(#at)),
                file_name,
                path.parent().map(PathBuf::from),
                Some(lit.value()),
                lit.span(),
            )
        }
    };
    let builtin: Vec<&str> = gpu_cuda_source::BUILTIN_HEADERS.iter().map(|(n, _)| *n).collect();
    let found = gpu_cuda_source::include_scan::local_headers(&text, beside.as_deref(), &dirs, &builtin)
        .map_err(|clash| syn::Error::new(span, format!("#[kernel]: {clash}")))?;
    let mut headers = Vec::with_capacity(found.len());
    for h in found {
        if h.contents.contains(&0) {
            return Err(syn::Error::new(
                span,
                format!(
                    "#[kernel]: the header `{}` (at `{}`) contains a NUL byte, which NVRTC cannot take",
                    h.name,
                    h.path.display()
                ),
            ));
        }
        headers.push(HeaderTokens {
            at: crate_path(&manifest_dir, &h.path),
            name: h.name,
            contents: h.contents,
        });
    }
    Ok((
        text,
        SourceTokens {
            text: text_tokens,
            file_name,
            options,
            prelude: true,
            headers,
            file: file_rel,
            include_dirs: include_dirs.iter().map(syn::LitStr::value).collect(),
        },
        span,
    ))
}

/// The declarations of a source as NVRTC will compile it: preprocessed with the `-D`, `-U`
/// and architecture options among `options`, its `#include "…"`s read from beside it and from
/// its `-I` directories, so that kernels stamped out by macros (`UNARY_OP(float, uexp_f32, …)`)
/// are found and checked like any other.
fn read_declarations(
    text: &str,
    options: &[syn::LitStr],
    headers: &[expand::HeaderTokens],
) -> gpu_cuda_source::Declarations {
    let options: Vec<String> = options.iter().map(syn::LitStr::value).collect();
    let dirs = gpu_cuda_source::include_scan::include_dirs_of(&options);
    // The source's local headers are the ones `load_source` read (NVRTC gets them in memory by
    // the name the `#include` gives, as here); others through the `-I` options left.
    let find = |name: &str, quoted: bool, from: Option<&str>| {
        headers
            .iter()
            .find(|h| h.name == name)
            .map(|h| gpu_cuda_source::Header {
                id: h.name.clone(),
                text: String::from_utf8_lossy(&h.contents).into_owned(),
            })
            .or_else(|| gpu_cuda_source::include_scan::find_header(name, quoted, from, &dirs))
    };
    gpu_cuda_source::Declarations::read(
        text,
        &gpu_cuda_source::Preprocess::from_options(&options).headers(&find),
    )
}

/// Finds the C declaration of `kernel` and checks the Rust signature against it; for a
/// kernel template, once per instance in `instantiate` ([`template::bind`]). Returns the NVRTC
/// name expression of each instance (just the C name for a plain kernel).
///
/// Errors about the source as a whole (syntax, overloads) point at the source; a kernel that is
/// not there points at what named it (`name = "…"`, else the Rust `fn` name); a C parameter
/// that cannot be passed from Rust points at the Rust argument of the same name when there is
/// one.
fn find_and_check(
    decls: &gpu_cuda_source::Declarations,
    origin: &place::Origin,
    kernel: &RustKernel,
    c_name: &str,
    name_lit: Option<&syn::LitStr>,
    in_module: bool,
    instantiate: Option<&(proc_macro2::Span, Vec<input::Instance>)>,
) -> syn::Result<template::Bound> {
    let decl = decls
        .find_kernel(c_name)
        .map_err(|e| decl_error(&e, origin, kernel, name_lit, in_module))?;
    template::bind(kernel, &decl, c_name, instantiate)
}

/// Why the declaration of `kernel` could not be had, spanned as [`find_and_check`] says.
fn decl_error(
    e: &gpu_cuda_source::DeclError,
    origin: &place::Origin,
    kernel: &RustKernel,
    name_lit: Option<&syn::LitStr>,
    in_module: bool,
) -> syn::Error {
    let src_span = origin.span();
    let msg = e.to_string();
    match e {
        gpu_cuda_source::DeclError::NotFound { hint, .. } => match name_lit {
            Some(lit) => syn::Error::new(lit.span(), msg),
            // A close name, a group of an `#if` not taken, a header not read: the message says
            // what fits already; the Rust name is not the likely cause.
            None if !hint.is_empty() => syn::Error::new(kernel.name.span(), msg),
            None if in_module => syn::Error::new(
                kernel.name.span(),
                format!("{msg} (each `fn` in the module is named like its C function)"),
            ),
            None => syn::Error::new(
                kernel.name.span(),
                format!(
                    "{msg} (the C function is looked up by the Rust name; \
                     if it differs, add `name = \"c_name\"` to #[kernel])"
                ),
            ),
        },
        // Where the line is in the Rust file, for a source in a literal (`place.rs`).
        gpu_cuda_source::DeclError::Syntax { line, message } => syn::Error::new(
            origin.line_span(*line).unwrap_or(src_span),
            format!("CUDA source at {}: {message}", origin.at(*line, None).text),
        ),
        gpu_cuda_source::DeclError::UnsupportedParam { param, .. } => {
            match c_param_name(param).and_then(|n| kernel.args.iter().find(|a| a.name == n)) {
                Some(arg) => syn::Error::new_spanned(&arg.ty, msg),
                None => syn::Error::new(src_span, msg),
            }
        }
        _ => syn::Error::new(src_span, msg),
    }
}

/// The name in a C parameter's text: its last identifier, e.g. `rows` in `float **rows`.
fn c_param_name(text: &str) -> Option<&str> {
    let end = text.trim_end_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    let start = end
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &end[start..];
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// One kernel, checked: what the expansion needs about it.
struct Planned {
    kernel: RustKernel,
    c_name: String,
    /// Name expressions, one per instantiation.
    names: Vec<String>,
    /// For a generic `fn`: the Rust type of each instantiation.
    types: Vec<syn::Type>,
}

/// The build-time NVRTC pass over a single source; `name_span` is the `fn` or `mod` name.
fn deep_pass(
    args: &KernelArgs,
    text: &str,
    tokens: &SourceTokens,
    span: proc_macro2::Span,
    name_span: proc_macro2::Span,
    names: Vec<String>,
) -> syn::Result<deep::Outcome> {
    deep::run(&deep::Request {
        source: text,
        file_name: &tokens.file_name,
        origin: origin_of(&args.source),
        pieces: Vec::new(),
        names,
        options: tokens.options.iter().map(|o| o.value()).collect(),
        span,
        name_span,
        headers: tokens
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.contents.clone()))
            .collect(),
        check: args.check,
        embed: args
            .embed
            .as_ref()
            .map(|l| l.iter().map(|a| (a.value(), a.span())).collect()),
        prelude: args.prelude,
    })
}

fn expand_item(mut args: KernelArgs, item: Item) -> syn::Result<TokenStream> {
    if let Some((_, list)) = &mut args.instantiate {
        // `float2` is instantiated as `gpu_runtime::types::Float2`, everywhere after this.
        template::rust_types(list)?;
    }
    if !args.parts.is_empty() {
        return linked::expand(args, item);
    }
    match item {
        Item::Fn(kernel) => {
            let rust_name = kernel.name.to_string();
            let c_name = args
                .name
                .as_ref()
                .map(|n| n.value())
                .unwrap_or_else(|| rust_name.clone());
            let (text, mut tokens, span) =
                load_source(&args.source, &c_name, args.options.clone(), &args.include_dirs)?;
            tokens.prelude = args.prelude;
            let decls = read_declarations(&text, &tokens.options, &tokens.headers);
            let template::Bound { names, types } = find_and_check(
                &decls,
                &origin_of(&args.source),
                &kernel,
                &c_name,
                args.name.as_ref(),
                false,
                args.instantiate.as_ref(),
            )?;
            let deep = deep_pass(&args, &text, &tokens, span, kernel.name.span(), names.clone())?;
            let static_ident = expand::source_ident(kernel.name.span());
            let mut inner = expand::source_static(&static_ident, &tokens, &names, &deep.images);
            inner.extend(deep.items);
            inner.extend(expand::globals(&text));
            let plan = Planned {
                kernel,
                c_name,
                names,
                types,
            };
            let mut expansion = expand::kernel_items(
                &plan.kernel,
                quote!(self::#static_ident),
                0,
                &plan.c_name,
                inner,
                &plan.types,
                &args.launch,
            );
            expansion.extend(deep.outer);
            Ok(expansion)
        }
        Item::Mod {
            attrs,
            vis,
            name,
            kernels,
        } => {
            if let Some(n) = &args.name {
                return Err(syn::Error::new(
                    n.span(),
                    "`name = …` is for a single kernel; in a module, name each `fn` like its C function",
                ));
            }
            // As for one kernel, `instantiate` lists the types the templates are made for: in a
            // module, each generic `fn` is made for every type listed, and the plain ones are
            // left alone. A list no `fn` uses is a mistake, said where it is written.
            if let Some((span, _)) = &args.instantiate {
                if kernels.iter().all(|k| k.generic.is_none()) {
                    return Err(syn::Error::new(
                        *span,
                        "`instantiate` is for kernel templates, and no `fn` in this module is generic: \
                         declare the template's `fn` generic, `fn name<T>(…)`, with `T` where the C++ \
                         template has its type parameter",
                    ));
                }
            }
            let (text, mut tokens, span) = load_source(
                &args.source,
                &name.to_string(),
                args.options.clone(),
                &args.include_dirs,
            )?;
            tokens.prelude = args.prelude;
            let decls = read_declarations(&text, &tokens.options, &tokens.headers);
            let mut errors = Errors::default();
            let mut plans = Vec::new();
            let origin = origin_of(&args.source);
            for k in &kernels {
                let c_name = k.name.to_string();
                let instantiate = args.instantiate.as_ref().filter(|_| k.generic.is_some());
                match find_and_check(&decls, &origin, k, &c_name, None, true, instantiate) {
                    Ok(template::Bound { names, types }) => plans.push(Planned {
                        kernel: k.clone(),
                        c_name,
                        names,
                        types,
                    }),
                    Err(e) => errors.push(e),
                }
            }
            errors.finish()?;
            let all_names: Vec<String> = plans.iter().flat_map(|p| p.names.clone()).collect();
            let deep = deep_pass(&args, &text, &tokens, span, name.span(), all_names.clone())?;
            let static_ident = expand::source_ident(name.span());
            let mut body = expand::source_static(&static_ident, &tokens, &all_names, &deep.images);
            body.extend(deep.items);
            body.extend(expand::globals(&text));
            let mut index = 0;
            for p in &mut plans {
                // A kernel listed in a module is there to be used from outside it.
                if matches!(p.kernel.vis, syn::Visibility::Inherited) {
                    p.kernel.vis = syn::parse_quote!(pub);
                }
                body.extend(expand::kernel_items(
                    &p.kernel,
                    quote!(super::#static_ident),
                    index,
                    &p.c_name,
                    quote!(),
                    &p.types,
                    &args.launch,
                ));
                index += p.names.len();
            }
            let mut expansion = expand::module(&attrs, &vis, &name, body);
            expansion.extend(deep.outer);
            Ok(expansion)
        }
    }
}

#[cfg(test)]
mod tests;
