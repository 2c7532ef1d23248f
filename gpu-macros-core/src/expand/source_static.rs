//! The module's `static` source (`ModuleSource`: the text or embedded images, the file name,
//! the options, the kernels' names), and the identifier it is named by.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, LitStr};

use crate::expand::runtime_path::rt;

/// Everything the generated module needs about its source.
pub struct SourceTokens {
    /// An expression of type `&'static str` holding the source (a literal or `include_str!`).
    pub text: TokenStream,
    /// The name NVRTC reports lines against, e.g. `axpy.cu`.
    pub file_name: String,
    pub options: Vec<LitStr>,
    /// False for `prelude = false`: the run time compiles the source without the prelude.
    pub prelude: bool,
}

/// `static NAME: ModuleSource = …;`
pub fn source_static(
    ident: &Ident,
    src: &SourceTokens,
    kernels: &[String],
    images: &[TokenStream],
) -> TokenStream {
    let rt = rt();
    let text = &src.text;
    let file_name = &src.file_name;
    let options = &src.options;
    let with_images = if images.is_empty() {
        quote!()
    } else {
        quote!(.with_images(&[#(#images),*]))
    };
    let without_prelude = if src.prelude {
        quote!()
    } else {
        quote!(.without_prelude())
    };
    quote! {
        #[doc(hidden)]
        pub static #ident: #rt::__private_v0_1::ModuleSource = #rt::__private_v0_1::ModuleSource::new(#file_name, #text, &[#(#kernels),*], &[#(#options),*])#with_images #without_prelude;
    }
}

/// A span-carrying identifier for the hidden source static.
pub fn source_ident(span: Span) -> Ident {
    Ident::new("__GPU_RUNTIME_SOURCE", span)
}
