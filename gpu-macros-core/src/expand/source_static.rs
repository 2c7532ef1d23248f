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
    /// The name NVRTC reports lines against, e.g. `axpy.cu` (`<inline:axpy>` for a source in
    /// the attribute).
    pub file_name: String,
    pub options: Vec<LitStr>,
    /// False for `prelude = false`: the run time compiles the source without the prelude.
    pub prelude: bool,
    /// The headers the source includes from its folder and `include_dirs`, embedded.
    pub headers: Vec<HeaderTokens>,
    /// `file = …` as written (relative to the crate's root), for `GPU_RUNTIME_SOURCE_DIR`.
    pub file: Option<String>,
    /// `include_dirs` as written.
    pub include_dirs: Vec<String>,
}

/// One header embedded with the source.
pub struct HeaderTokens {
    /// The name its `#include` gives it.
    pub name: String,
    /// Where `include_bytes!` reads it: `concat!(env!("CARGO_MANIFEST_DIR"), "/…")`.
    pub at: TokenStream,
    /// Its bytes, read by the macro (for the build-time check).
    pub contents: Vec<u8>,
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
    // include_bytes! embeds each header and makes cargo build again when one changes.
    let with_headers = if src.headers.is_empty() {
        quote!()
    } else {
        let headers = src.headers.iter().map(|h| {
            let (name, at) = (&h.name, &h.at);
            quote!(#rt::__private_v0_1::SourceHeader::new(#name, ::core::include_bytes!(#at)))
        });
        quote!(.with_headers(&[#(#headers),*]))
    };
    let file = match &src.file {
        Some(f) => quote!(::core::option::Option::Some(#f)),
        None => quote!(::core::option::Option::None),
    };
    let dirs = &src.include_dirs;
    // Relative to the crate's root, with the crate's name: where GPU_RUNTIME_SOURCE_DIR finds
    // the files again (no path of the build machine).
    let on_disk = quote!(.with_disk_paths(&#rt::__private_v0_1::SourceOnDisk::new(::core::env!("CARGO_PKG_NAME"), #file, &[#(#dirs),*])));
    quote! {
        #[doc(hidden)]
        pub static #ident: #rt::__private_v0_1::ModuleSource = #rt::__private_v0_1::ModuleSource::new(#file_name, #text, &[#(#kernels),*], &[#(#options),*])#with_images #without_prelude #with_headers #on_disk;
    }
}

/// A span-carrying identifier for the hidden source static.
pub fn source_ident(span: Span) -> Ident {
    Ident::new("__GPU_RUNTIME_SOURCE", span)
}
