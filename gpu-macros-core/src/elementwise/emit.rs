//! The expansion: the fn and its `_on` form, which launch the kernel, the module holding
//! the `static ElementwiseFn` (and the build-time check's warnings), and one constant per
//! argument asserting that its element type is the C type the macro read from its name.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use gpu_cuda_source::elementwise::Role;

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
    let (rust_params, launch_args) = params_and_args(params);
    // The element types were read by their names (`f16`, `Bool`): that each is the C type
    // the kernel is declared with is asserted where the type is resolved, so that an alias
    // is a compile error at the argument, not an error at the first launch.
    let element_checks: Vec<TokenStream> = params
        .iter()
        .map(|p| element_check("elementwise", &p.elem, p.c_type, p.vector, &p.c_name()))
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
        #(#element_checks)*

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

/// Each parameter as the Rust fn takes it (a scalar by value, an input array by reference to
/// any array of its element type, an output by mutable reference) and as the launch passes it
/// (`KernelArg::scalar`/`input`/`output`): shared by `#[elementwise]` and `#[reduction]`.
pub(crate) fn params_and_args(params: &[Param]) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let rt = quote!(::gpu_runtime);
    params
        .iter()
        .map(|p| {
            let (n, elem) = (&p.name, &p.elem);
            let span = p.ty.span();
            match p.role {
                Role::Scalar => (
                    quote_spanned!(span=> #n: #elem),
                    quote!(#rt::__private_v0_1::KernelArg::scalar::<#elem>(#n)),
                ),
                Role::Input => (
                    quote_spanned! {span=>
                        #n: &#rt::gpuarray::DeviceArrayBase<impl #rt::gpuarray::Storage<Elem = #elem>, impl #rt::ndarray::Dimension>
                    },
                    quote!(#rt::__private_v0_1::KernelArg::input(#n)),
                ),
                Role::Output => (
                    quote_spanned! {span=>
                        #n: &mut #rt::gpuarray::DeviceArrayBase<impl #rt::gpuarray::StorageMut<Elem = #elem>, impl #rt::ndarray::Dimension>
                    },
                    quote!(#rt::__private_v0_1::KernelArg::output(#n)),
                ),
            }
        })
        .unzip()
}

/// The kernel's C name: the fn's name without `r#`, refused unless ASCII; and each parameter
/// name taken once. Shared by `#[elementwise]` and `#[reduction]`.
pub(crate) fn c_name_of(name: &syn::Ident, params: &[Param]) -> syn::Result<String> {
    for (k, p) in params.iter().enumerate() {
        if params[..k].iter().any(|q| q.name == p.name) {
            return Err(syn::Error::new_spanned(
                &p.name,
                format!("`{}` is taken twice", p.name),
            ));
        }
    }
    let c_name = name.to_string();
    let c_name = c_name.strip_prefix("r#").unwrap_or(&c_name).to_owned();
    if !c_name.is_ascii() {
        return Err(syn::Error::new_spanned(
            name,
            "the fn name is the kernel's C name: use ASCII",
        ));
    }
    Ok(c_name)
}

/// The constant asserting that the element type `elem`, read by its name, is the C type
/// `c_type` the kernel is declared with (`of` names what has it in the message: an argument, or
/// the result), so that an alias is a compile error at the type, not an error at the first
/// launch. A vector type is asserted through its `CudaVector` impl, a number through its
/// `Element` impl: each names the C type the run time declares it as.
pub(crate) fn element_check(
    macro_name: &str,
    elem: &syn::Type,
    c_type: &str,
    vector: bool,
    of: &str,
) -> TokenStream {
    let rt = quote!(::gpu_runtime);
    let message = format!(
        "#[{macro_name}]: the element type `{}` of `{of}` is not gpu_runtime's element type \
         of that name (C `{c_type}`): name it without an alias",
        quote!(#elem).to_string().replace(' ', ""),
    );
    let check = if vector {
        quote!(vector_c_name_is)
    } else {
        quote!(element_c_name_is)
    };
    quote_spanned! {elem.span()=>
        const _: () = ::core::assert!(
            #rt::__private_v0_1::#check::<#elem>(#c_type),
            #message
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::test_support::{params, sig};

    #[test]
    fn each_element_type_is_asserted_to_be_its_c_type() {
        let item = "fn f(a: f16, x: &DeviceArray<gpu_runtime::gpuarray::Bool>, z: &mut DeviceArray<f32>);";
        let op: syn::LitStr = syn::parse_quote!("z = x ? (float)a : 0.0f");
        let out = emit(&sig(item), &op, "f", &params(item), TokenStream::new()).to_string();
        for (elem, c_type) in [
            ("f16", "__half"),
            ("gpu_runtime :: gpuarray :: Bool", "bool"),
            ("f32", "float"),
        ] {
            let check = format!("element_c_name_is :: < {elem} > (\"{c_type}\")");
            assert!(out.contains(&check), "{check} in {out}");
        }
        assert!(out.contains("the element type `f16` of `a` is not gpu_runtime's element type"));
        // A vector type is asserted through its own check (`CudaVector`, not `Element`).
        let item = "fn f(x: &DeviceArray<Float3>, z: &mut DeviceArray<f32>);";
        let op: syn::LitStr = syn::parse_quote!("z = x.x");
        let out = emit(&sig(item), &op, "f", &params(item), TokenStream::new()).to_string();
        assert!(
            out.contains("vector_c_name_is :: < Float3 > (\"float3\")"),
            "{out}"
        );
        assert!(out.contains("element_c_name_is :: < f32 > (\"float\")"), "{out}");
    }
}
