//! `#[elementwise("z = a * x + y")]` on `fn axpy(a: f32, x: &DeviceArray<f32>, z: &mut
//! DeviceArray<f32>);`: the run-time `ElementwiseKernel`, declared with Rust types and checked
//! at build time.
//!
//! The macro reads the signature (scalars and arrays of the element types), writes the C
//! argument list (`float a, const float *x, float *z`), checks the operation with a small C
//! tokenizer (every name is an argument, a local, `i`, `n`, a keyword or a called function;
//! read-only arguments are not assigned; every `&mut` array is), compiles at build time, when
//! NVRTC can be loaded (`deep.rs`), every variant of the kernel the run time may compile, as
//! `gpu_cuda_source::elementwise` writes it for the run time too, and emits a `static
//! ElementwiseFn` and the functions that launch it. Building, caching and launching the kernel are
//! `gpu_runtime::gpuarray`'s.
//!
//! One file per job: `args` (the attribute and the item), `params` (the arguments, and the C
//! argument list), `op_tokens` and `c_words` (reading the operation), `op_check` (the checks on
//! it), `check_source` (what the build-time check compiles), `emit` (the generated items);
//! this file runs them in order.

mod args;
mod c_words;
pub(crate) mod check_source;
pub(crate) mod emit;
mod op_check;
mod op_tokens;
pub(crate) mod params;
#[cfg(test)]
mod test_support;

use proc_macro2::TokenStream;

use gpu_cuda_source::elementwise::OPERATION_FILE;

pub(crate) use args::parse_bodiless;
pub use args::{Args, Item};

use crate::check::Errors;
use crate::deep;
use crate::elementwise::check_source::check_source;
use crate::elementwise::emit::{c_name_of, emit};
use crate::elementwise::op_check::check_operation;
use crate::elementwise::params::read_param;

/// Expands the attribute.
pub fn expand(args: Args, item: Item) -> syn::Result<TokenStream> {
    let sig = &item.sig;
    let name = &sig.ident;
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            "an #[elementwise] fn is not generic: its arguments name their element types",
        ));
    }
    if let syn::ReturnType::Type(_, t) = &sig.output {
        return Err(syn::Error::new_spanned(
            t,
            "an #[elementwise] fn returns nothing in its declaration: the generated fn returns `gpu_runtime::Result<()>`",
        ));
    }
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new_spanned(a, "an #[elementwise] fn is not `async`"));
    }
    let mut errors = Errors::default();
    let mut params = Vec::new();
    for a in &sig.inputs {
        match read_param(a) {
            Ok(p) => params.push(p),
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;
    let c_name = c_name_of(name, &params)?;
    check_operation(&args.op, &params, name)?;
    let op_text = args.op.value();
    let source = check_source(&c_name, &params, &op_text);
    let deep = deep::run(&deep::Request {
        source: &source,
        file_name: OPERATION_FILE,
        // NVRTC's lines of `operation` are the operation's own (`#line`): named in the Rust file.
        origin: crate::place::Origin::literal(&args.op, "operation"),
        pieces: Vec::new(),
        names: Vec::new(),
        options: Vec::new(),
        span: args.op.span(),
        name_span: name.span(),
        headers: Vec::new(),
        check: true,
        embed: Some(Vec::new()),
        prelude: true,
    })?;
    let mut expansion = emit(&item, &args.op, &c_name, &params, deep.items);
    expansion.extend(deep.outer);
    Ok(expansion)
}
