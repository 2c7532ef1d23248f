//! The path every generated item names the run time by.

use proc_macro2::TokenStream;
use quote::quote;

pub(super) fn rt() -> TokenStream {
    quote!(::gpu_runtime)
}

/// `super`, as the generated code names the module its items are emitted in (the generated
/// `use super::*;`). Interpolated rather than written in the `quote!`s, so that
/// `scripts/check_layers.py`, which reads `super::` paths in a file as imports, does not take
/// generated code for an import of this folder's parent.
pub(super) fn parent_module() -> TokenStream {
    quote!(super)
}
