//! `call_future` and `call_future_on`: `call` and `call_on` whose end is awaited (the run time's
//! `Staging::finish_future`, a `StagedCall`) instead of waited for on a blocked thread.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use crate::check::direction_of;
use crate::expand::arg_types::device_param;
use crate::expand::host_call::{staged_args, Staged};
use crate::expand::runtime_path::rt;
use crate::input::{Direction, RustArg, RustType};

/// The lifetime of `call_future`'s borrows (the kernel, the stream, the host arrays), which
/// its future holds: named, since the edition's `impl Future` captures no elided lifetime.
fn call_lifetime() -> syn::Lifetime {
    syn::Lifetime::new("'__call", Span::call_site())
}

/// A parameter of `call_future`: as `call` takes it, with the host arrays borrowed for the
/// call's lifetime. Other arguments keep their own (elided) lifetimes: they are used before the
/// future is returned.
fn async_host_param(arg: &RustArg) -> TokenStream {
    let rt = rt();
    let lt = call_lifetime();
    let name = &arg.name;
    match (&arg.kind, direction_of(arg)) {
        (RustType::Slice { elem, .. }, Some(Direction::In)) if arg.nullable => {
            quote!(#name: ::core::option::Option<&#lt [#elem]>)
        }
        (RustType::Slice { elem, .. }, Some(_)) if arg.nullable => {
            quote!(#name: ::core::option::Option<&#lt mut [#elem]>)
        }
        (RustType::Slice { elem, .. }, Some(Direction::In)) => {
            quote!(#name: &#lt (impl #rt::HostSlice<#elem> + ?::core::marker::Sized))
        }
        (RustType::Slice { elem, .. }, Some(_)) => {
            quote!(#name: &#lt mut (impl #rt::HostSliceMut<#elem> + ?::core::marker::Sized))
        }
        _ => device_param(arg),
    }
}

/// Whether any argument is staged through host memory (`#[In]`, `#[Out]`, `#[InOut]`).
fn has_staged_args(args: &[RustArg]) -> bool {
    args.iter()
        .any(|a| matches!(a.kind, RustType::Slice { .. }) && direction_of(a).is_some())
}

/// The body of `call_future` (`stream` None) or `call_future_on` (`stream` the name of its
/// `&Stream`): `call`'s staging, upload and launch, at once, then `finish_future` given the
/// staged device buffers to keep until the queued work has finished; the future returned
/// awaits its `StagedCall`. Without marked arguments, the matching `prepared_*` call, whose
/// result the future returns.
pub(super) fn call_future_body(args: &[RustArg], stream: Option<&Ident>) -> TokenStream {
    let rt = rt();
    if !has_staged_args(args) {
        let names = args.iter().map(|a| &a.name);
        let call = match stream {
            Some(s) => quote!(self.prepared_async_call(grid, block, #s, #(#names),*)),
            None => quote!(self.prepared_call(grid, block, #(#names),*)),
        };
        return quote!(::core::future::ready(#call));
    }
    let staging = match stream {
        Some(s) => quote!(#rt::__private_v0_1::staging_on(&self.function, #s)?),
        None => quote!(#rt::__private_v0_1::Staging::new(&self.function)?),
    };
    let Staged {
        before,
        call_args,
        staged: keep,
        hosts: keep_names,
    } = staged_args(args);
    let lt = call_lifetime();
    quote! {
        // Staged and launched now, as `call` does; only the end is awaited. An error here is
        // the future's output.
        // `move`, and each host array moved out of the capture, so that the closure is
        // `FnOnce` and may lend them for the future's whole lifetime.
        let __call = (move || -> #rt::Result<#rt::__private_v0_1::StagedCall<#lt>> {
            #(let #keep_names = #keep_names;)*
            let mut __staging = #staging;
            #(#before)*
            __staging.upload()?;
            __staging.launch(|__stream| self.launch_on(grid.into(), block.into(), __stream, #(#call_args),*))?;
            // The staged device buffers are what the queued copies and kernel use: the
            // `StagedCall` drops them only once that work has finished, whether it completes
            // or is dropped.
            __staging.finish_future((#(#keep,)*))
        })();
        async move { __call?.await }
    }
}

/// `call_future` and `call_future_on`, typed as `call` and `call_on`.
pub(super) fn call_future_methods(args: &[RustArg]) -> TokenStream {
    let rt = rt();
    let lt = call_lifetime();
    let params: Vec<TokenStream> = args.iter().map(async_host_param).collect();
    let names: Vec<&Ident> = args.iter().map(|a| &a.name).collect();
    let body = call_future_body(args, None);
    let stream_ident = Ident::new("stream", Span::call_site());
    let body_on = call_future_body(args, Some(&stream_ident));
    let (doc, doc_on) = if has_staged_args(args) {
        (
            "`call` for async code, awaited (`k.call_future(grid, block, …).await?`) with any executor: stages the `#[In]`/`#[InOut]` arguments and launches at once, as `call` does, on the context's staging stream; the future then waits for the kernel and the copies back without blocking a thread (a CUDA host function wakes it), and completes once the `#[Out]`/`#[InOut]` arguments hold the results, with the first error the call or the GPU work raised. The future is `Send` when its arguments are.\n\nCancel-safe: dropped before it completes, it blocks until the work already queued has finished, then gives the staging memory back; the copies back land in that memory, never in your arrays, so those are yours again at once, unchanged.",
            "`call_future` on `stream` (PyCUDA's `stream=`): the copies in, the kernel and the copies back are queued on it after the work queued there before, and the future completes once they have finished.",
        )
    } else {
        (
            "Launches on the legacy default stream at once, and returns a future that is ready with the launch's result, without waiting for the kernel: `prepared_call`, since no argument is marked `#[In]`, `#[Out]` or `#[InOut]`.",
            "Launches on `stream` at once, and returns a future that is ready with the launch's result: `prepared_async_call`, since no argument is marked `#[In]`, `#[Out]` or `#[InOut]`.",
        )
    };
    quote! {
                #[doc = #doc]
                #[allow(clippy::redundant_closure_call)]
                pub fn call_future<#lt>(&#lt self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#params),*) -> impl ::core::future::Future<Output = #rt::Result<()>> + #lt {
                    #body
                }

                #[doc = #doc_on]
                #[allow(clippy::redundant_closure_call)]
                pub fn call_future_on<#lt>(&#lt self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #stream_ident: &#lt #rt::Stream, #(#params),*) -> impl ::core::future::Future<Output = #rt::Result<()>> + #lt {
                    #body_on
                }

                // The names these had before `_async` was kept for PyCUDA's "queued on a
                // stream" alone: code written against them still builds, and no warning is
                // given (a deprecation would fail the builds that deny warnings).
                #[doc(hidden)]
                pub fn call_async<#lt>(&#lt self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#params),*) -> impl ::core::future::Future<Output = #rt::Result<()>> + #lt {
                    self.call_future(grid, block, #(#names),*)
                }

                #[doc(hidden)]
                pub fn call_async_on<#lt>(&#lt self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #stream_ident: &#lt #rt::Stream, #(#params),*) -> impl ::core::future::Future<Output = #rt::Result<()>> + #lt {
                    self.call_future_on(grid, block, #stream_ident, #(#names),*)
                }
    }
}
