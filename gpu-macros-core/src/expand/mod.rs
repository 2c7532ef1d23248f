//! Generating the typed wrappers. All logic lives in `gpu_runtime`; these files only emit
//! calls into it with the argument types spelled out.
//!
//! One file per job: `kernel_items` (one kernel's module, `Kernel` and its methods, the free
//! function), `arg_types` (the parameters' Rust types per method, the size assertions),
//! `launch_body` (the `#[len]` checks and the checked argument list), `host_call` (`call`'s
//! staging), `future_call` (`call_future`: `call` whose end is awaited), `graph_body` (the graph
//! methods), `source_static` (the `ModuleSource` static), `globals` (the device variables'
//! accessors), `runtime_path` (`::gpu_runtime`).

mod arg_types;
mod future_call;
mod globals;
mod graph_body;
mod host_call;
mod kernel_items;
mod launch_body;
mod runtime_path;
mod source_static;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, Visibility};

pub use globals::{globals, globals_of};
pub use kernel_items::kernel_items;
pub use source_static::{source_ident, source_static, HeaderTokens, SourceTokens};

/// Wraps generated items for a `mod` of several kernels.
pub fn module(attrs: &[syn::Attribute], vis: &Visibility, name: &Ident, body: TokenStream) -> TokenStream {
    quote! {
        #(#attrs)*
        #[allow(unused_imports)]
        #vis mod #name {
            use super::*;
            #body
        }
    }
}
