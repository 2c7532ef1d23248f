//! The expansion: the fn and its `_on` form, which launch the kernel, and the module holding
//! the `static ElementwiseFn` (and the build-time check's warnings).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use gpu_cdecl::elementwise::Role;

use crate::elementwise::args::Item;
use crate::elementwise::params::{c_arguments, Param};

pub(super) fn emit(
    item: &Item,
    op: &syn::LitStr,
    c_name: &str,
    params: &[Param],
    deep_items: TokenStream,
) -> TokenStream {
    let rt = quote!(::gpu_runtime);
    let (attrs, vis, name) = (&item.attrs, &item.vis, &item.sig.ident);
    let on = format_ident!("{}_on", name);
    let arguments = c_arguments(params);
    let rust_params: Vec<TokenStream> = params
        .iter()
        .map(|p| {
            let (n, elem) = (&p.name, &p.elem);
            let span = p.ty.span();
            match p.role {
                Role::Scalar => quote_spanned!(span=> #n: #elem),
                Role::Input => quote_spanned! {span=>
                    #n: &#rt::gpuarray::DeviceArrayBase<impl #rt::gpuarray::Storage<Elem = #elem>, impl #rt::ndarray::Dimension>
                },
                Role::Output => quote_spanned! {span=>
                    #n: &mut #rt::gpuarray::DeviceArrayBase<impl #rt::gpuarray::StorageMut<Elem = #elem>, impl #rt::ndarray::Dimension>
                },
            }
        })
        .collect();
    let launch_args: Vec<TokenStream> = params
        .iter()
        .map(|p| {
            let (n, elem) = (&p.name, &p.elem);
            match p.role {
                Role::Scalar => quote!(#rt::__private_v0_1::KernelArg::scalar::<#elem>(#n)),
                Role::Input => quote!(#rt::__private_v0_1::KernelArg::input(#n)),
                Role::Output => quote!(#rt::__private_v0_1::KernelArg::output(#n)),
            }
        })
        .collect();
    let doc_on = format!(
        "[`{name}`] on `stream`: queued after the work queued there before; returns without waiting. \
         Arrays used on other streams are ordered with it as every launch of `gpu_runtime` orders them."
    );
    let doc_fn = format!(
        "Runs `{}` on every element (the C arguments `{arguments}`), on the legacy default stream. \
         Every array must have the shape of the first; each may be any array or view of its element \
         type, in any layout. Compiled on the first call in each context.",
        op.value()
    );
    let doc_mod = format!("The kernel of [`{name}()`]: `{}`.", op.value());
    quote! {
        #(#attrs)*
        #[doc = ""]
        #[doc = #doc_fn]
        #vis fn #name(#(#rust_params),*) -> #rt::Result<()> {
            #name::KERNEL.launch(::core::option::Option::None, [#(#launch_args),*])
        }

        #[doc = #doc_on]
        #vis fn #on(stream: &#rt::Stream, #(#rust_params),*) -> #rt::Result<()> {
            #name::KERNEL.launch(::core::option::Option::Some(stream), [#(#launch_args),*])
        }

        #[doc = #doc_mod]
        #[allow(non_snake_case)]
        #vis mod #name {
            #deep_items
            /// The kernel, built on first use (once per process) and compiled once per context.
            pub static KERNEL: #rt::__private_v0_1::ElementwiseFn =
                #rt::__private_v0_1::ElementwiseFn::new(#c_name, #arguments, #op);

            /// The run-time kernel, e.g. for its generated [`source`](::gpu_runtime::gpuarray::ElementwiseKernel::source).
            pub fn kernel() -> #rt::Result<&'static #rt::gpuarray::ElementwiseKernel> {
                KERNEL.kernel()
            }
        }
    }
}
