//! `#[gpu_test]`: a test that needs a CUDA GPU, given the default context.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, ItemFn};

/// Expands `#[gpu_test] fn name(ctx: &Context) -> R { body }` (the parameter is optional) to a
/// `#[test]` ignored with "needs a CUDA GPU" that creates the default context and runs the body.
pub fn expand(attr: TokenStream, item: ItemFn) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new_spanned(attr, "#[gpu_test] takes no arguments"));
    }
    if item.sig.inputs.len() > 1 || item.sig.inputs.iter().any(|a| matches!(a, FnArg::Receiver(_))) {
        return Err(syn::Error::new_spanned(
            &item.sig.inputs,
            "a #[gpu_test] function takes no parameters or one, the context: `fn name(ctx: &gpu_runtime::Context)`",
        ));
    }
    if item.sig.asyncness.is_some() || !item.sig.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &item.sig,
            "a #[gpu_test] function cannot be async or generic",
        ));
    }
    let attrs = &item.attrs;
    let vis = &item.vis;
    let name = &item.sig.ident;
    let output = &item.sig.output;
    let mut inner = item.clone();
    inner.attrs.clear();
    inner.vis = syn::Visibility::Inherited;
    inner.sig.ident = syn::Ident::new("__gpu_test_body", name.span());
    let call = if item.sig.inputs.is_empty() {
        quote!(__gpu_test_body())
    } else {
        quote!(__gpu_test_body(&__ctx))
    };
    Ok(quote! {
        #[test]
        #[ignore = "needs a CUDA GPU"]
        #(#attrs)*
        #vis fn #name() #output {
            #inner
            let __ctx = match ::gpu_runtime::Context::default() {
                ::core::result::Result::Ok(ctx) => ctx,
                ::core::result::Result::Err(e) => ::core::panic!("this test needs a CUDA GPU: {}", e),
            };
            let _ = &__ctx;
            #call
        }
    })
}
