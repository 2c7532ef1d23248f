//! The body of the private `launch_on` every launch method calls: the `#[len]` checks (each
//! length expression widened to `u64`) and the checked argument list.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use crate::expand::runtime_path::rt;
use crate::input::{RustArg, RustType};

/// `expr` with every scalar argument name `n` in it replaced by `LenValue::len_value(&n)`, so
/// that it computes in `i128` whatever the arguments' integer types. Field and method names
/// (after a `.`) and path segments (around `::`) are left alone.
pub(super) fn widen_len_expr(tokens: TokenStream, scalars: &[&Ident]) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    let rt = rt();
    let mut out = Vec::new();
    let toks: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in toks.iter().enumerate() {
        let after_dot =
            i > 0 && matches!(&toks[i - 1], TokenTree::Punct(p) if p.as_char() == '.' || p.as_char() == ':');
        let before_path = matches!(toks.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
        match t {
            TokenTree::Ident(id) if !after_dot && !before_path && scalars.contains(&id) => {
                out.extend(quote_spanned!(id.span()=> (#rt::__private_v0_1::LenValue::len_value(&#id))));
            }
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), widen_len_expr(g.stream(), scalars));
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            other => out.push(other.clone()),
        }
    }
    out.into_iter().collect()
}

/// The name of the view the launch body takes of buffer argument `i`.
pub(super) fn view_slot(i: usize) -> Ident {
    format_ident!("__v{}", i)
}

/// The `#[len = …]` checks, run before anything is packed or launched.
pub(super) fn len_checks(args: &[RustArg]) -> TokenStream {
    let rt = rt();
    let scalars: Vec<&Ident> = args
        .iter()
        .filter(|a| matches!(a.kind, RustType::Value(_)))
        .map(|a| &a.name)
        .collect();
    args.iter()
        .enumerate()
        .filter_map(|(i, arg)| {
            let (expr, RustType::Slice { .. }) = (arg.len.as_ref()?, &arg.kind) else {
                return None;
            };
            let view = view_slot(i);
            let name_str = arg.name.to_string();
            let expr_str = quote!(#expr).to_string();
            let widened = widen_len_expr(quote!(#expr), &scalars);
            let check = |len: TokenStream| {
                quote_spanned! {expr.span()=>
                    #rt::__private_v0_1::check_len(&self.function,
                        #name_str,
                        #len,
                        #expr_str,
                        #rt::__private_v0_1::LenValue::len_value(&(#widened)),
                    )?;
                }
            };
            // A null pointer (`None`) has no length to check.
            Some(if arg.nullable {
                let c = check(quote!(__v.len()));
                quote!(if let ::core::option::Option::Some(__v) = &#view { #c })
            } else {
                check(quote!(#view.len()))
            })
        })
        .collect()
}

/// The body of `launch_on`: view each buffer, check `#[len]`s, pack each argument (checking
/// its context and ordering its use on the stream), build the parameter array, launch.
pub(super) fn launch_body(args: &[RustArg]) -> TokenStream {
    let rt = rt();
    let mut views = Vec::new();
    let mut packs = Vec::new();
    let mut params = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let slot = format_ident!("__p{}", i);
        let view = view_slot(i);
        let name = &arg.name;
        match (&arg.kind, arg.nullable) {
            // `None`: a null pointer, which nothing orders (it is no memory).
            (RustType::Slice { elem, mutable: false }, true) => {
                views.push(quote!(let #view = #name.map(|__b| #rt::DeviceRead::<#elem>::device_view(__b));));
                packs.push(
                    quote!(let #slot = #rt::__private_v0_1::read_arg_opt(&self.function, #view.as_ref(), __stream)?;),
                );
            }
            (RustType::Slice { elem, mutable: true }, true) => {
                views.push(quote! {
                    let mut #name = #name;
                    let #view = #name.as_mut().map(|__b| #rt::DeviceWrite::<#elem>::device_view_mut(&mut **__b));
                });
                packs.push(
                    quote!(let #slot = #rt::__private_v0_1::write_arg_opt(&self.function, #view.as_ref(), __stream)?;),
                );
            }
            (RustType::Slice { elem, mutable: false }, false) => {
                views.push(quote!(let #view = #rt::DeviceRead::<#elem>::device_view(&*#name);));
                packs.push(
                    quote!(let #slot = #rt::__private_v0_1::read_arg(&self.function, &#view, __stream)?;),
                );
            }
            (RustType::Slice { elem, mutable: true }, false) => {
                views.push(quote!(let #view = #rt::DeviceWrite::<#elem>::device_view_mut(&mut *#name);));
                packs.push(
                    quote!(let #slot = #rt::__private_v0_1::write_arg(&self.function, &#view, __stream)?;),
                );
            }
            (RustType::Value(ty), _) => packs.push(quote! {
                let #slot = #rt::__private_v0_1::by_value::<#ty>(#name, __stream)?;
            }),
        }
        params.push(quote!(#rt::__private_v0_1::param(&#slot)));
    }
    let checks = len_checks(args);
    let n = args.len();
    quote! {
        #(#views)*
        #checks
        #(#packs)*
        let mut __params: [*mut ::core::ffi::c_void; #n] = [#(#params),*];
        // SAFETY: the #[kernel] macro checked at compile time that these arguments match the C
        // declaration one for one (count, order, size and constness); each slot lives until
        // launch_raw returns, the device buffers are borrowed for the whole call, and each use
        // was ordered on the stream (read_arg, write_arg, by_value).
        unsafe { #rt::__private_v0_1::launch(&self.function, &self.ex, grid, block, __stream, &mut __params) }
    }
}
