//! The path every generated item names the run time by.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

pub(super) fn rt() -> TokenStream {
    quote!(::gpu_runtime)
}

/// [`rt`] spanned at `span`: for a bound whose unmet-bound note should point at the user's
/// code. rustc spans a path from its first token, so the crate's name must carry the span too,
/// not only the trait's. An absolute path resolves the same wherever it is spanned.
pub(super) fn rt_at(span: Span) -> TokenStream {
    quote_spanned!(span=> ::gpu_runtime)
}

/// `super`, as the generated code names the module its items are emitted in (the generated
/// `use super::*;`). Interpolated rather than written in the `quote!`s, so that
/// `scripts/check_layers.py`, which reads `super::` paths in a file as imports, does not take
/// generated code for an import of this folder's parent.
pub(super) fn parent_module() -> TokenStream {
    quote!(super)
}
