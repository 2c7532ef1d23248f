//! The `#[kernel]` attribute of `gpu-runtime`. Use it through `gpu_runtime::kernel`; its
//! documentation is there.
//!
//! The macro stays thin: it parses the CUDA C declaration (with `gpu-cdecl`), checks the Rust
//! signature against it, and emits calls into `gpu_runtime`, where all run-time logic lives.

mod check;
mod expand;
mod input;
mod linked;
mod test_attr;
mod vector;

use std::path::PathBuf;

use proc_macro::TokenStream;
use quote::quote;
use syn::parse_macro_input;

use crate::check::Errors;
use crate::expand::SourceTokens;
use crate::input::{Item, KernelArgs, RustKernel, SourceSpec};

/// Declares a CUDA C kernel with a typed Rust signature, checked at compile time.
///
/// On `fn name(args…);` it generates `name::prepare`, the typed `name::Kernel` with
/// `prepared_call`, `prepared_async_call`, `prepared_timed_call` and `call`, and a convenience
/// `name(&ctx, grid, block, args…)`. On `mod name { fn a(…); fn b(…); }` it does the same for
/// each kernel, compiled into one module. See the `gpu_runtime` crate documentation.
///
/// Arguments: the source as a string literal (or `source = "…"`), or `file = "path.cu"`
/// relative to the crate's `Cargo.toml`; `name = "c_name"` when the C function is named
/// differently; `options = ["-use_fast_math"]` for extra NVRTC options; `files = ["a.cu",
/// "b.cu"]` or `sources = ["…", "…"]` for one module linked from several sources (relocatable
/// device code, with the device runtime for kernels that launch kernels).
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = parse_macro_input!(attr as KernelArgs);
    let item = parse_macro_input!(item as Item);
    match expand_item(args, item) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// A test that needs a CUDA GPU (PyCUDA's `mark_cuda_test`): `#[gpu_test] fn name(ctx:
/// &gpu_runtime::Context) { … }` becomes a `#[test]` marked `#[ignore = "needs a CUDA GPU"]`
/// (run it with `cargo test -- --ignored` on a machine with a GPU) that opens the default
/// context and passes it in. The parameter may be left out; the body may return a `Result`.
/// Use it through `gpu_runtime::gpu_test`.
#[proc_macro_attribute]
pub fn gpu_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = parse_macro_input!(item as syn::ItemFn);
    match test_attr::expand(attr.into(), item) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The source text, and tokens that embed it in the program.
fn load_source(
    spec: &SourceSpec,
    default_name: &str,
    options: Vec<syn::LitStr>,
) -> syn::Result<(String, SourceTokens, proc_macro2::Span)> {
    match spec {
        SourceSpec::Inline(lit) => Ok((
            lit.value(),
            SourceTokens {
                text: quote!(#lit),
                file_name: format!("{default_name}.cu"),
                options,
            },
            lit.span(),
        )),
        SourceSpec::File(lit) => {
            let dir = std::env::var_os("CARGO_MANIFEST_DIR")
                .map(PathBuf::from)
                .unwrap_or_default();
            let path = dir.join(lit.value());
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
            let abs = path.to_string_lossy().into_owned();
            let file_name = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("{default_name}.cu"));
            // include_str! both embeds the file and makes cargo rebuild when it changes.
            Ok((
                text,
                SourceTokens {
                    text: quote!(::core::include_str!(#abs)),
                    file_name,
                    options,
                },
                lit.span(),
            ))
        }
    }
}

/// Finds the C declaration of `kernel` and checks the Rust signature against it.
///
/// Errors about the source as a whole (syntax, overloads) point at the source; a kernel that is
/// not there points at what named it (`name = "…"`, else the Rust `fn` name); a C parameter
/// that cannot be passed from Rust points at the Rust argument of the same name when there is
/// one.
fn find_and_check(
    source: &str,
    src_span: proc_macro2::Span,
    kernel: &RustKernel,
    c_name: &str,
    name_lit: Option<&syn::LitStr>,
    in_module: bool,
) -> syn::Result<()> {
    let decl = gpu_cdecl::find_kernel(source, c_name).map_err(|e| {
        let msg = e.to_string();
        match &e {
            gpu_cdecl::DeclError::NotFound { .. } => match name_lit {
                Some(lit) => syn::Error::new(lit.span(), msg),
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
            gpu_cdecl::DeclError::UnsupportedParam { param, .. } => {
                match c_param_name(param).and_then(|n| kernel.args.iter().find(|a| a.name == n)) {
                    Some(arg) => syn::Error::new_spanned(&arg.ty, msg),
                    None => syn::Error::new(src_span, msg),
                }
            }
            _ => syn::Error::new(src_span, msg),
        }
    })?;
    check::check_kernel(kernel, &decl)
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

fn expand_item(args: KernelArgs, item: Item) -> syn::Result<proc_macro2::TokenStream> {
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
            let (text, tokens, span) = load_source(&args.source, &c_name, args.options)?;
            find_and_check(&text, span, &kernel, &c_name, args.name.as_ref(), false)?;
            let static_ident = expand::source_ident(kernel.name.span());
            let source_static = expand::source_static(&static_ident, &tokens, std::slice::from_ref(&c_name));
            Ok(expand::kernel_items(
                &kernel,
                quote!(self::#static_ident),
                0,
                &c_name,
                source_static,
            ))
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
            let (text, tokens, span) = load_source(&args.source, &name.to_string(), args.options)?;
            let mut errors = Errors::default();
            for k in &kernels {
                if let Err(e) = find_and_check(&text, span, k, &k.name.to_string(), None, true) {
                    errors.push(e);
                }
            }
            errors.finish()?;
            // A kernel listed in a module is there to be used from outside it.
            let mut kernels = kernels;
            for k in &mut kernels {
                if matches!(k.vis, syn::Visibility::Inherited) {
                    k.vis = syn::parse_quote!(pub);
                }
            }
            let static_ident = expand::source_ident(name.span());
            let c_names: Vec<String> = kernels.iter().map(|k| k.name.to_string()).collect();
            let mut body = expand::source_static(&static_ident, &tokens, &c_names);
            for (i, k) in kernels.iter().enumerate() {
                body.extend(expand::kernel_items(
                    k,
                    quote!(super::#static_ident),
                    i,
                    &c_names[i],
                    quote!(),
                ));
            }
            Ok(expand::module(&attrs, &vis, &name, body))
        }
    }
}
