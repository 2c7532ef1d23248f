//! `#[kernel(sources = […])]` / `#[kernel(files = […])]`: one module linked from several
//! sources. The macro only checks the signatures and emits a `ModuleSource::linked` static;
//! compiling and linking happen in `gpu_runtime`.

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::check::Errors;
use crate::expand::{self, SourceTokens};
use crate::input::{Item, KernelArgs, RustKernel};

struct Part {
    text: String,
    tokens: SourceTokens,
    span: Span,
}

/// Checks `kernel` against the first part that declares it (else reports it missing from the
/// first part).
fn check(
    parts: &[Part],
    kernel: &RustKernel,
    c_name: &str,
    args: &KernelArgs,
    in_module: bool,
) -> syn::Result<()> {
    let part = parts
        .iter()
        .find(|p| gpu_cdecl::find_kernel(&p.text, c_name).is_ok())
        .unwrap_or(&parts[0]);
    // Templates are not supported across linked sources: `instantiate` is for one source.
    crate::find_and_check(
        &part.text,
        part.span,
        kernel,
        c_name,
        args.name.as_ref(),
        in_module,
        None,
    )
    .map(drop)
}

/// The `ModuleSource::linked` static for `kernels`.
fn source_static(
    ident: &syn::Ident,
    module_name: &str,
    parts: &[Part],
    kernels: &[String],
    options: &[syn::LitStr],
) -> TokenStream {
    let parts = parts.iter().map(|p| {
        let (name, text) = (&p.tokens.file_name, &p.tokens.text);
        let declared: Vec<&String> = kernels
            .iter()
            .filter(|k| gpu_cdecl::find_kernel(&p.text, k).is_ok())
            .collect();
        quote!(::gpu_runtime::__private::SourcePart::new(#name, #text, &[#(#declared),*]))
    });
    let file = format!("{module_name}.cu");
    quote! {
        #[doc(hidden)]
        pub static #ident: ::gpu_runtime::ModuleSource =
            ::gpu_runtime::__private::ModuleSource::linked(#file, &[#(#parts),*], &[#(#kernels),*], &[#(#options),*]);
    }
}

pub fn expand(args: KernelArgs, item: Item) -> syn::Result<TokenStream> {
    let base = match &item {
        Item::Fn(k) => args
            .name
            .as_ref()
            .map(|n| n.value())
            .unwrap_or_else(|| k.name.to_string()),
        Item::Mod { name, .. } => name.to_string(),
    };
    let mut parts = Vec::with_capacity(args.parts.len());
    for (i, spec) in args.parts.iter().enumerate() {
        let (text, tokens, span) = crate::load_source(spec, &format!("{base}_{i}"), Vec::new())?;
        parts.push(Part { text, tokens, span });
    }
    match item {
        Item::Fn(kernel) => {
            check(&parts, &kernel, &base, &args, false)?;
            let ident = expand::source_ident(kernel.name.span());
            let inner = source_static(&ident, &base, &parts, std::slice::from_ref(&base), &args.options);
            Ok(expand::kernel_items(
                &kernel,
                quote!(self::#ident),
                0,
                &base,
                inner,
                &[],
            ))
        }
        Item::Mod {
            attrs,
            vis,
            name,
            mut kernels,
        } => {
            if let Some(n) = &args.name {
                return Err(syn::Error::new(
                    n.span(),
                    "`name = …` is for a single kernel; in a module, name each `fn` like its C function",
                ));
            }
            let mut errors = Errors::default();
            for k in &kernels {
                if let Err(e) = check(&parts, k, &k.name.to_string(), &args, true) {
                    errors.push(e);
                }
            }
            errors.finish()?;
            for k in &mut kernels {
                if matches!(k.vis, syn::Visibility::Inherited) {
                    k.vis = syn::parse_quote!(pub);
                }
            }
            let ident = expand::source_ident(name.span());
            let c_names: Vec<String> = kernels.iter().map(|k| k.name.to_string()).collect();
            let mut body = source_static(&ident, &base, &parts, &c_names, &args.options);
            for (i, k) in kernels.iter().enumerate() {
                body.extend(expand::kernel_items(
                    k,
                    quote!(super::#ident),
                    i,
                    &c_names[i],
                    quote!(),
                    &[],
                ));
            }
            Ok(expand::module(&attrs, &vis, &name, body))
        }
    }
}
