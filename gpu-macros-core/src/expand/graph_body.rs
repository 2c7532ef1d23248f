//! The bodies of the graph methods (`capture`, `graph_node`, `update_node`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::expand::arg_types::takes_resource_handle;
use crate::expand::launch_body::{len_checks, view_slot};
use crate::expand::runtime_path::rt;
use crate::input::{RustArg, RustType};

/// The body of a graph method (`capture`, `graph_node`, `update_node`): each buffer's
/// `GraphArg` from its token, the `#[len]` checks, each argument recorded in the node's
/// `NodeArgs` (buffers with their context checked; by-value arguments through `graph_value`,
/// which records a graph's condition), the parameter array, the `KernelNode` made of them
/// (`__kernel_node`), then `finish` (the graph method that takes it).
pub(super) fn graph_body(args: &[RustArg], finish: TokenStream, finish_args: TokenStream) -> TokenStream {
    let rt = rt();
    let mut views = Vec::new();
    let mut packs = Vec::new();
    let mut params = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let slot = format_ident!("__p{}", i);
        let view = view_slot(i);
        let name = &arg.name;
        match (&arg.kind, arg.nullable) {
            // `None`: a null pointer, recorded as no buffer.
            (RustType::Slice { elem, mutable: false }, true) => {
                views.push(quote!(let #view = #rt::__private_v0_1::graph_read_opt::<#elem>(#name);));
                packs.push(quote!(let #slot = __node.read_opt(&self.function, #view.as_ref())?;));
            }
            (RustType::Slice { elem, mutable: true }, true) => {
                views.push(quote!(let #view = #rt::__private_v0_1::graph_write_opt::<#elem>(#name);));
                packs.push(quote!(let #slot = __node.write_opt(&self.function, #view.as_ref())?;));
            }
            (RustType::Slice { elem, mutable: false }, false) => {
                views.push(quote!(let #view = #rt::__private_v0_1::graph_read::<#elem, _>(&*#name);));
                packs.push(quote!(let #slot = __node.read(&self.function, &#view)?;));
            }
            (RustType::Slice { elem, mutable: true }, false) => {
                views.push(quote!(let #view = #rt::__private_v0_1::graph_write::<#elem, _>(&mut *#name);));
                packs.push(quote!(let #slot = __node.write(&self.function, &#view)?;));
            }
            // Recorded in the node, so that the graph refuses another graph's condition
            // (`ConditionalHandle`) when it is instantiated. `by_value::<T>` is named first, as
            // `launch_on` names it: a type that is not a `KernelParam` then fails that bound
            // (the error the other methods report, shown once), and `graph_value`'s, the same
            // bound at the same span, is not reported again.
            (RustType::Value(ty), _) => packs.push(quote! {
                let _ = #rt::__private_v0_1::by_value::<#ty>;
                let #slot: #ty = #rt::__private_v0_1::graph_value::<#ty>(&mut __node, #name);
            }),
        }
        params.push(quote!(#rt::__private_v0_1::param(&#slot)));
    }
    if args.iter().any(takes_resource_handle) {
        return quote! {
            let _ = (grid, block, #finish_args);
            ::core::result::Result::Err(#rt::__private_v0_1::graph_refused_handles(&self.function))
        };
    }
    let checks = len_checks(args);
    let n = args.len();
    quote! {
        let (grid, block): (#rt::Dim3, #rt::Dim3) = (grid.into(), block.into());
        #(#views)*
        #checks
        let mut __node = #rt::__private_v0_1::NodeArgs::new();
        #(#packs)*
        let mut __params: [*mut ::core::ffi::c_void; #n] = [#(#params),*];
        // SAFETY: the #[kernel] macro checked at compile time that these arguments match the C
        // declaration one for one; each slot lives until the call returns (the driver copies
        // the values), and every buffer is a token borrowed for the graph's 'a and recorded in
        // `__node`, whose uses the graph orders at each launch.
        let __kernel_node = unsafe {
            #rt::__private_v0_1::KernelNode::new(&self.function, &self.ex, grid, block, __node, &mut __params)
        };
        #finish
    }
}
