//! The Rust types of a kernel's parameters in each generated method (device buffers for the
//! `prepared_*` calls, host data for `call`, graph tokens for the graph methods), and the
//! compile-time assertions that each by-value type is the size the C parameter takes.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::check::direction_of;
use crate::expand::runtime_path::{rt, rt_at};
use crate::input::{Direction, RustArg, RustType};

/// `name: &(impl DeviceRead<T> + ?Sized)` and friends, as taken by the `prepared_*` calls.
///
/// The bound is spanned at the parameter's name in the user's signature: when an argument does
/// not satisfy it (host data passed where device memory is expected), rustc's "required by this
/// bound" note points there, next to the `#[In]`/`#[Out]` marks the trait's message suggests,
/// rather than over the whole kernel attribute.
pub(super) fn device_param(arg: &RustArg) -> TokenStream {
    let rt = rt_at(arg.name.span());
    let name = &arg.name;
    // A pointer that may be null: a trait object, so that `None` needs no type named.
    match (&arg.kind, arg.nullable) {
        (RustType::Slice { elem, mutable: false }, true) => quote_spanned! {arg.name.span()=>
            #name: ::core::option::Option<&dyn #rt::DeviceRead<#elem>>
        },
        (RustType::Slice { elem, mutable: true }, true) => quote_spanned! {arg.name.span()=>
            #name: ::core::option::Option<&mut dyn #rt::DeviceWrite<#elem>>
        },
        (RustType::Slice { elem, mutable: false }, false) => quote_spanned! {arg.name.span()=>
            #name: &(impl #rt::DeviceRead<#elem> + ?::core::marker::Sized)
        },
        (RustType::Slice { elem, mutable: true }, false) => quote_spanned! {arg.name.span()=>
            #name: &mut (impl #rt::DeviceWrite<#elem> + ?::core::marker::Sized)
        },
        (RustType::Value(ty), _) => quote!(#name: #ty),
    }
}

/// The parameter as the convenience call takes it: host data for In/Out/InOut, the bound
/// spanned at the parameter's name as in [`device_param`].
pub(super) fn host_param(arg: &RustArg) -> TokenStream {
    let rt = rt_at(arg.name.span());
    let name = &arg.name;
    match (&arg.kind, direction_of(arg)) {
        // Host data that may be absent: a slice, so that `None` needs no type named.
        (RustType::Slice { elem, .. }, Some(Direction::In)) if arg.nullable => {
            quote_spanned! {arg.name.span()=>
                #name: ::core::option::Option<&[#elem]>
            }
        }
        (RustType::Slice { elem, .. }, Some(_)) if arg.nullable => quote_spanned! {arg.name.span()=>
            #name: ::core::option::Option<&mut [#elem]>
        },
        (RustType::Slice { elem, .. }, Some(Direction::In)) => quote_spanned! {arg.name.span()=>
            #name: &(impl #rt::HostSlice<#elem> + ?::core::marker::Sized)
        },
        (RustType::Slice { elem, .. }, Some(_)) => quote_spanned! {arg.name.span()=>
            #name: &mut (impl #rt::HostSliceMut<#elem> + ?::core::marker::Sized)
        },
        _ => device_param(arg),
    }
}

/// Compile-time checks on the Rust types, spanned at them so errors point at the user's code.
pub(super) fn type_assertions(args: &[RustArg]) -> TokenStream {
    let rt = rt();
    args.iter()
        .map(|arg| match &arg.kind {
            RustType::Slice { elem, .. } => quote_spanned! {elem.span()=>
                const _: () = #rt::__private_v0_1::assert_device_repr::<#elem>();
            },
            // The launch body names the same function at the same span, so a type that is not a
            // KernelParam gets one error, not two.
            RustType::Value(ty) => quote_spanned! {ty.span()=>
                const _: () = {
                    let _ = #rt::__private_v0_1::by_value::<#ty>;
                };
            },
        })
        .collect()
}

/// True for a texture or surface object argument (the types `check.rs` matches with
/// `cudaTextureObject_t` and `cudaSurfaceObject_t`): a graph cannot keep its resource alive,
/// since the handle's borrow is not the graph's, so the graph methods of such a kernel refuse.
pub(super) fn takes_resource_handle(arg: &RustArg) -> bool {
    matches!(&arg.kind, RustType::Value(ty)
        if matches!(crate::input::last_ident(ty).as_deref(), Some("TextureObject" | "SurfaceObject")))
}

/// A buffer or value parameter of the graph methods: tokens valid for the graph's `'a`, the
/// bound spanned at the parameter's name as in [`device_param`].
pub(super) fn graph_param(arg: &RustArg) -> TokenStream {
    let rt = rt_at(arg.name.span());
    let name = &arg.name;
    // The graph's lifetime as the method declares it (at the call site), whatever the span of
    // the bound around it.
    let lifetime = quote!('a);
    match (&arg.kind, arg.nullable) {
        (RustType::Slice { elem, mutable: false }, true) => quote_spanned! {arg.name.span()=>
            #name: ::core::option::Option<&dyn #rt::launch::GraphRead<#lifetime, #elem>>
        },
        (RustType::Slice { elem, mutable: true }, true) => quote_spanned! {arg.name.span()=>
            #name: ::core::option::Option<&mut dyn #rt::launch::GraphWrite<#lifetime, #elem>>
        },
        (RustType::Slice { elem, mutable: false }, false) => quote_spanned! {arg.name.span()=>
            #name: &impl #rt::launch::GraphRead<#lifetime, #elem>
        },
        (RustType::Slice { elem, mutable: true }, false) => quote_spanned! {arg.name.span()=>
            #name: &mut impl #rt::launch::GraphWrite<#lifetime, #elem>
        },
        (RustType::Value(ty), _) => quote!(#name: #ty),
    }
}
