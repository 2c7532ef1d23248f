//! `pub mod globals`: a typed accessor for each `__constant__`/`__device__` variable.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use crate::expand::runtime_path::{parent_module, rt};

/// The Rust type of a device variable, or None when it has none (pointers, `void`).
/// The Rust type of a global, and whether it is the accessor's type parameter `T`: a C struct
/// has no Rust name the macro can know, so its accessor is generic over the caller's
/// `#[repr(C)]` type, whose size is checked against the variable's when it is looked up.
fn global_type(g: &gpu_cuda_source::GlobalDecl) -> Option<(TokenStream, bool)> {
    let rt = rt();
    let (mut ty, generic) = match &g.ty {
        // No accessor where the type would not be plain data, or would need the `half` crate.
        gpu_cuda_source::CType::Scalar(
            gpu_cuda_source::Scalar::Bool | gpu_cuda_source::Scalar::F16 | gpu_cuda_source::Scalar::Bf16,
        ) => return None,
        gpu_cuda_source::CType::Scalar(s) => {
            let t: syn::Type = syn::parse_str(s.rust_type()).ok()?;
            (quote!(#t), false)
        }
        gpu_cuda_source::CType::Named(n) => match crate::vector::rust_name(n) {
            Some(v) => {
                let t: Ident = syn::parse_str(&v).ok()?;
                (quote!(#rt::types::#t), false)
            }
            None => (quote!(T), true),
        },
        _ => return None,
    };
    for d in g.dims.iter().rev() {
        ty = quote!([#ty; #d]);
    }
    Some((ty, generic))
}

/// `pub mod globals { pub fn coeffs(ctx) -> Result<Global<[f32; 16]>> }`: a typed accessor for
/// each `__constant__`/`__device__` variable of the source whose type has a Rust counterpart,
/// the type taken from its C declaration. Emitted next to the source static.
pub fn globals(source: &str) -> TokenStream {
    globals_of(&[(source, None)])
}

/// [`globals`] for a module linked from several sources, each with its file name (for the
/// docs): one accessor per variable name. A variable declared in several sources (`extern` in
/// one, defined in another) is described by a declaration whose bounds are known, if any.
pub fn globals_of(sources: &[(&str, Option<&str>)]) -> TokenStream {
    let rt = rt();
    let parent = parent_module();
    let mut decls: Vec<(gpu_cuda_source::GlobalDecl, Option<&str>)> = Vec::new();
    for (text, file) in sources {
        for g in gpu_cuda_source::find_global_decls(text) {
            match decls.iter_mut().find(|(d, _)| d.name == g.name) {
                Some(seen) if seen.0.unresolved_dim.is_some() && g.unresolved_dim.is_none() => {
                    *seen = (g, *file)
                }
                Some(_) => {}
                None => decls.push((g, *file)),
            }
        }
    }
    let mut fns = Vec::new();
    for (g, file) in decls {
        let (Some((ty, generic)), Ok(ident)) = (global_type(&g), syn::parse_str::<Ident>(&g.name)) else {
            continue;
        };
        let name = &g.name;
        let at = match file {
            Some(f) => format!("`{f}` line {}", g.line),
            None => format!("line {}", g.line),
        };
        if let Some(dim) = &g.unresolved_dim {
            // No type can be given without the bound: an accessor that says why, with a
            // warning where it is used, rather than a bare "cannot find" error.
            let why = format!(
                "`{name}[{dim}]` ({at}) has a bound the macro cannot work out from the source; define it there (`#define`, `constexpr int`) or write a number, to get a typed accessor"
            );
            fns.push(quote! {
                #[doc = #why]
                #[deprecated(note = #why)]
                pub fn #ident(_ctx: &#rt::Context) -> #rt::Result<#rt::driver::Global<()>> {
                    ::core::result::Result::Err(#rt::Error::GlobalBoundUnknown { name: #name, bound: #dim, location: #at })
                }
            });
            continue;
        }
        let dims: String = g.dims.iter().map(|d| format!("[{d}]")).collect();
        let space = match g.space {
            gpu_cuda_source::MemorySpace::Constant => "__constant__",
            gpu_cuda_source::MemorySpace::Device => "__device__",
            gpu_cuda_source::MemorySpace::Managed => "__managed__",
        };
        let doc =
            format!("The {space} variable `{name}{dims}` ({at}) in `ctx`: `set` writes it, `get` reads it.");
        let generics = if generic {
            let c_type = match &g.ty {
                gpu_cuda_source::CType::Named(n) => n.as_str(),
                _ => "",
            };
            let note = format!(
                " `T` is your `#[repr(C)]` counterpart of the C type `{c_type}`; its size is checked against the variable's."
            );
            quote!(#[doc = #note] pub fn #ident<T: #rt::DeviceRepr>)
        } else {
            quote!(pub fn #ident)
        };
        fns.push(quote! {
            #[doc = #doc]
            #generics(ctx: &#rt::Context) -> #rt::Result<#rt::driver::Global<#ty>> {
                #rt::__private_v0_1::global(ctx, &#parent::__GPU_RUNTIME_SOURCE, #name)
            }
        });
    }
    if fns.is_empty() {
        return quote!();
    }
    quote! {
        /// Typed accessors for the source's `__constant__` and `__device__` variables.
        #[allow(non_snake_case, unused_imports)]
        pub mod globals {
            use #parent::*;
            #(#fns)*
        }
    }
}
