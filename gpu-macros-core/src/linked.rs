//! `#[kernel(sources = […])]` / `#[kernel(files = […])]`: one module linked from several
//! sources, checked like a single source. Each kernel's signature is checked against its
//! `__global__` declaration in whichever source holds it (and every source that declares it
//! must agree); each source is compiled with NVRTC at build time as relocatable device code;
//! the `__constant__`/`__device__` variables of all sources get typed accessors. Compiling and
//! linking happen in `gpu_runtime`, when a context first loads the module.

use gpu_cuda_source::{DeclError, KernelDecl};
use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::check::{param_list, Errors};
use crate::deep;
use crate::expand::{self, SourceTokens};
use crate::input::{Item, KernelArgs, RustKernel};

struct Part {
    text: String,
    tokens: SourceTokens,
    span: Span,
    /// Where it is written, as messages name it.
    origin: crate::place::Origin,
    /// Its kernels, read after preprocessing.
    decls: gpu_cuda_source::Declarations,
}

impl Part {
    fn name(&self) -> &str {
        &self.tokens.file_name
    }

    fn declares(&self, kernel: &str) -> bool {
        self.decls.find_kernel(kernel).is_ok()
    }
}

/// A part's index and what reading the declaration from it gave.
type Found = (usize, Result<KernelDecl, DeclError>);

/// The declarations of `c_name`: for every part that names it, its index and the declaration
/// (or why it cannot be read); else the kernels all the parts declare, for the error.
fn declarations(parts: &[Part], c_name: &str) -> Result<Vec<Found>, Vec<String>> {
    let mut found = Vec::new();
    let mut available: Vec<String> = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        match p.decls.find_kernel(c_name) {
            Err(DeclError::NotFound { available: a, .. }) => {
                for k in a {
                    if !available.contains(&k) {
                        available.push(k);
                    }
                }
            }
            r => found.push((i, r)),
        }
    }
    if found.is_empty() {
        Err(available)
    } else {
        Ok(found)
    }
}

/// Checks `kernel` against the first part that declares `c_name`, and that every other part
/// declaring it gives the same parameter types: kernels are linked by name alone, so a
/// disagreement would pass the defining source parameters it does not expect.
fn check(
    parts: &[Part],
    kernel: &RustKernel,
    c_name: &str,
    args: &KernelArgs,
    in_module: bool,
) -> syn::Result<()> {
    if let Some(t) = &kernel.generic {
        return Err(syn::Error::new_spanned(
            t,
            "a linked module binds plain kernels: declare a C++ kernel template in a single-source \
             #[kernel] with `instantiate = […]`",
        ));
    }
    let found = declarations(parts, c_name).map_err(|available| {
        let hint = Box::new(gpu_cuda_source::NotFoundHint {
            near: gpu_cuda_source::near_names(c_name, &available),
            ..Default::default()
        });
        let e = DeclError::NotFound {
            name: c_name.to_owned(),
            available,
            hint,
        };
        let e = crate::decl_error(&e, &parts[0].origin, kernel, args.name.as_ref(), in_module);
        let msg = e.to_string().replace(
            "in the CUDA source; it declares",
            "in any of the linked sources; they declare",
        );
        syn::Error::new(e.span(), msg)
    })?;
    let (first, primary) = &found[0];
    let part = &parts[*first];
    crate::find_and_check(
        &part.decls,
        &part.origin,
        kernel,
        c_name,
        args.name.as_ref(),
        in_module,
        None,
    )?;
    let Ok(primary) = primary else {
        return Ok(());
    };
    let mut errors = Errors::default();
    for (i, other) in &found[1..] {
        let p = &parts[*i];
        match other {
            Err(e) => errors.push(syn::Error::new(p.span, format!("in `{}`: {e}", p.name()))),
            Ok(d)
                if !d
                    .params
                    .iter()
                    .map(|p| &p.ty)
                    .eq(primary.params.iter().map(|p| &p.ty)) =>
            {
                errors.push(syn::Error::new(
                    p.span,
                    format!(
                        "the CUDA kernel `{c_name}` is declared as `{c_name}({})` in `{}` (line {}) but as \
                         `{c_name}({})` in `{}` (line {}): kernels are linked by name alone, so every \
                         source that declares one must give it the same parameters",
                        param_list(primary),
                        part.name(),
                        primary.line,
                        param_list(d),
                        p.name(),
                        d.line
                    ),
                ))
            }
            Ok(_) => {}
        }
    }
    errors.finish()
}

/// The build-time NVRTC pass over each source, as the run time compiles it: relocatable device
/// code (`-rdc=true`, so `extern` device functions and kernels of another source are fine),
/// the module's options, the kernels it declares. Nothing is embedded: the module is linked
/// at run time.
/// The items go in the module, but for the warning that the check could not run, which goes
/// into `outer` (beside the module).
fn deep_pass(
    args: &KernelArgs,
    parts: &[Part],
    kernels: &[String],
    name_span: Span,
    outer: &mut TokenStream,
) -> syn::Result<TokenStream> {
    let mut options = vec!["-rdc=true".to_owned()];
    options.extend(args.options.iter().map(|o| o.value()));
    let mut errors = Errors::default();
    let mut items = TokenStream::new();
    for p in parts {
        let request = deep::Request {
            source: &p.text,
            file_name: p.name(),
            origin: p.origin.clone(),
            pieces: Vec::new(),
            names: kernels.iter().filter(|k| p.declares(k)).cloned().collect(),
            options: options.clone(),
            span: p.span,
            name_span,
            // The sources of a linked module are compiled without headers in memory.
            headers: Vec::new(),
            check: args.check,
            // Not `None`, which would take the crate-wide `GPU_RUNTIME_EMBED`.
            embed: Some(Vec::new()),
            prelude: true,
        };
        match deep::run(&request) {
            Ok(out) => {
                items.extend(out.items);
                outer.extend(out.outer);
            }
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;
    Ok(items)
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
        let declared: Vec<&String> = kernels.iter().filter(|k| p.declares(k)).collect();
        quote!(::gpu_runtime::__private_v0_1::SourcePart::new(#name, #text, &[#(#declared),*]))
    });
    let file = format!("{module_name}.cu");
    quote! {
        #[doc(hidden)]
        pub static #ident: ::gpu_runtime::compiler::ModuleSource =
            ::gpu_runtime::__private_v0_1::ModuleSource::linked(#file, &[#(#parts),*], &[#(#kernels),*], &[#(#options),*]);
    }
}

/// The static, the build-time check's items and the typed globals of all the parts; in `outer`,
/// what goes beside the module (`deep_pass`).
fn module_items(
    args: &KernelArgs,
    ident: &syn::Ident,
    base: &str,
    parts: &[Part],
    kernels: &[String],
    name_span: Span,
    outer: &mut TokenStream,
) -> syn::Result<TokenStream> {
    let mut items = source_static(ident, base, parts, kernels, &args.options);
    items.extend(deep_pass(args, parts, kernels, name_span, outer)?);
    let sources: Vec<(&str, Option<&str>)> =
        parts.iter().map(|p| (p.text.as_str(), Some(p.name()))).collect();
    items.extend(expand::globals_of(&sources));
    Ok(items)
}

/// What a single source takes and a linked module does not.
fn refuse_single_source_options(args: &KernelArgs) -> syn::Result<()> {
    if let Some((span, _)) = &args.instantiate {
        return Err(syn::Error::new(
            *span,
            "`instantiate` is for a single source: a linked module binds plain kernels",
        ));
    }
    if let Some(first) = args.embed.as_ref().and_then(|e| e.first()) {
        return Err(syn::Error::new(
            first.span(),
            "`embed` is for a single source: a linked module is compiled and linked when a \
             context first loads it",
        ));
    }
    // Not yet passed to the sources of a linked module (nor their files' directories): refused
    // rather than ignored.
    if let Some(first) = args.include_dirs.first() {
        return Err(syn::Error::new(
            first.span(),
            "`include_dirs` is for a single source: for a linked module, give the directories \
             as `options = [\"-I/abs/dir\"]`",
        ));
    }
    Ok(())
}

pub fn expand(args: KernelArgs, item: Item) -> syn::Result<TokenStream> {
    refuse_single_source_options(&args)?;
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
        let (text, tokens, span) = crate::load_source(spec, &format!("{base}_{i}"), Vec::new(), &[])?;
        let decls = crate::read_declarations(&text, &tokens.options, &tokens.headers);
        parts.push(Part {
            text,
            tokens,
            span,
            origin: crate::origin_of(spec),
            decls,
        });
    }
    match item {
        Item::Fn(kernel) => {
            check(&parts, &kernel, &base, &args, false)?;
            let ident = expand::source_ident(kernel.name.span());
            let mut outer = TokenStream::new();
            let kernels = std::slice::from_ref(&base);
            let inner = module_items(
                &args,
                &ident,
                &base,
                &parts,
                kernels,
                kernel.name.span(),
                &mut outer,
            )?;
            let mut expansion =
                expand::kernel_items(&kernel, quote!(self::#ident), 0, &base, inner, &[], &args.launch);
            expansion.extend(outer);
            Ok(expansion)
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
            let mut outer = TokenStream::new();
            let mut body = module_items(&args, &ident, &base, &parts, &c_names, name.span(), &mut outer)?;
            for (i, k) in kernels.iter().enumerate() {
                body.extend(expand::kernel_items(
                    k,
                    quote!(super::#ident),
                    i,
                    &c_names[i],
                    quote!(),
                    &[],
                    &args.launch,
                ));
            }
            let mut expansion = expand::module(&attrs, &vis, &name, body);
            expansion.extend(outer);
            Ok(expansion)
        }
    }
}
