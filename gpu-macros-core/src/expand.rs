//! Generating the typed wrappers. All logic lives in `gpu_runtime`; this file only emits calls
//! into it with the argument types spelled out.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr, Visibility};

use crate::check::direction_of;
use crate::input::{Direction, LaunchAttrs, RustArg, RustKernel, RustType};

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

fn rt() -> TokenStream {
    quote!(::gpu_runtime)
}

/// `name: &(impl DeviceRead<T> + ?Sized)` and friends, as taken by the `prepared_*` calls.
fn device_param(arg: &RustArg) -> TokenStream {
    let rt = rt();
    let name = &arg.name;
    match &arg.kind {
        RustType::Slice { elem, mutable: false } => {
            quote!(#name: &(impl #rt::DeviceRead<#elem> + ?::core::marker::Sized))
        }
        RustType::Slice { elem, mutable: true } => {
            quote!(#name: &mut (impl #rt::DeviceWrite<#elem> + ?::core::marker::Sized))
        }
        RustType::Value(ty) => quote!(#name: #ty),
    }
}

/// The parameter as the convenience call takes it: host data for In/Out/InOut.
fn host_param(arg: &RustArg) -> TokenStream {
    let rt = rt();
    let name = &arg.name;
    match (&arg.kind, direction_of(arg)) {
        (RustType::Slice { elem, .. }, Some(Direction::In)) => {
            quote!(#name: &(impl #rt::HostSlice<#elem> + ?::core::marker::Sized))
        }
        (RustType::Slice { elem, .. }, Some(_)) => {
            quote!(#name: &mut (impl #rt::HostSliceMut<#elem> + ?::core::marker::Sized))
        }
        _ => device_param(arg),
    }
}

/// Compile-time checks on the Rust types, spanned at them so errors point at the user's code.
fn type_assertions(args: &[RustArg]) -> TokenStream {
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

/// `expr` with every scalar argument name `n` in it replaced by `LenValue::len_value(&n)`, so
/// that it computes in `i128` whatever the arguments' integer types. Field and method names
/// (after a `.`) and path segments (around `::`) are left alone.
fn widen_len_expr(tokens: TokenStream, scalars: &[&Ident]) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    let rt = rt();
    let mut out = Vec::new();
    let toks: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in toks.iter().enumerate() {
        let after_dot =
            i > 0 && matches!(&toks[i - 1], TokenTree::Punct(p) if p.as_char() == '.' || p.as_char() == ':');
        let before_path = matches!(toks.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
        match t {
            TokenTree::Ident(id) if !after_dot && !before_path && scalars.contains(&id) => {
                out.extend(quote_spanned!(id.span()=> (#rt::__private_v0_1::LenValue::len_value(&#id))));
            }
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), widen_len_expr(g.stream(), scalars));
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            other => out.push(other.clone()),
        }
    }
    out.into_iter().collect()
}

/// The name of the view the launch body takes of buffer argument `i`.
fn view_slot(i: usize) -> Ident {
    format_ident!("__v{}", i)
}

/// The `#[len = …]` checks, run before anything is packed or launched.
fn len_checks(args: &[RustArg]) -> TokenStream {
    let rt = rt();
    let scalars: Vec<&Ident> = args
        .iter()
        .filter(|a| matches!(a.kind, RustType::Value(_)))
        .map(|a| &a.name)
        .collect();
    args.iter()
        .enumerate()
        .filter_map(|(i, arg)| {
            let (expr, RustType::Slice { .. }) = (arg.len.as_ref()?, &arg.kind) else {
                return None;
            };
            let view = view_slot(i);
            let name_str = arg.name.to_string();
            let expr_str = quote!(#expr).to_string();
            let widened = widen_len_expr(quote!(#expr), &scalars);
            Some(quote_spanned! {expr.span()=>
                #rt::__private_v0_1::check_len(&self.function,
                    #name_str,
                    #view.len(),
                    #expr_str,
                    #rt::__private_v0_1::LenValue::len_value(&(#widened)),
                )?;
            })
        })
        .collect()
}

/// The body of `launch_on`: view each buffer, check `#[len]`s, pack each argument (checking
/// its context and ordering its use on the stream), build the parameter array, launch.
fn launch_body(args: &[RustArg]) -> TokenStream {
    let rt = rt();
    let mut views = Vec::new();
    let mut packs = Vec::new();
    let mut params = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let slot = format_ident!("__p{}", i);
        let view = view_slot(i);
        let name = &arg.name;
        match &arg.kind {
            RustType::Slice { elem, mutable: false } => {
                views.push(quote!(let #view = #rt::DeviceRead::<#elem>::device_view(&*#name);));
                packs.push(
                    quote!(let #slot = #rt::__private_v0_1::read_arg(&self.function, &#view, __stream)?;),
                );
            }
            RustType::Slice { elem, mutable: true } => {
                views.push(quote!(let #view = #rt::DeviceWrite::<#elem>::device_view_mut(&mut *#name);));
                packs.push(
                    quote!(let #slot = #rt::__private_v0_1::write_arg(&self.function, &#view, __stream)?;),
                );
            }
            RustType::Value(ty) => packs.push(quote! {
                let #slot = #rt::__private_v0_1::by_value::<#ty>(#name, __stream)?;
            }),
        }
        params.push(quote!(#rt::__private_v0_1::param(&#slot)));
    }
    let checks = len_checks(args);
    let n = args.len();
    quote! {
        #(#views)*
        #checks
        #(#packs)*
        let mut __params: [*mut ::core::ffi::c_void; #n] = [#(#params),*];
        // SAFETY: the #[kernel] macro checked at compile time that these arguments match the C
        // declaration one for one (count, order, size and constness); each slot lives until
        // launch_raw returns, the device buffers are borrowed for the whole call, and each use
        // was ordered on the stream (read_arg, write_arg, by_value).
        unsafe { #rt::__private_v0_1::launch(&self.function, &self.ex, grid, block, __stream, &mut __params) }
    }
}

/// True for a texture or surface object argument (the types `check.rs` matches with
/// `cudaTextureObject_t` and `cudaSurfaceObject_t`): a graph cannot keep its resource alive,
/// since the handle's borrow is not the graph's, so the graph methods of such a kernel refuse.
fn takes_resource_handle(arg: &RustArg) -> bool {
    matches!(&arg.kind, RustType::Value(ty)
        if matches!(crate::input::last_ident(ty).as_deref(), Some("TextureObject" | "SurfaceObject")))
}

/// A buffer or value parameter of the graph methods: tokens valid for the graph's `'a`.
fn graph_param(arg: &RustArg) -> TokenStream {
    let rt = rt();
    let name = &arg.name;
    match &arg.kind {
        RustType::Slice { elem, mutable: false } => quote!(#name: &impl #rt::launch::GraphRead<'a, #elem>),
        RustType::Slice { elem, mutable: true } => {
            quote!(#name: &mut impl #rt::launch::GraphWrite<'a, #elem>)
        }
        RustType::Value(ty) => quote!(#name: #ty),
    }
}

/// The body of a graph method (`capture`, `graph_node`, `update_node`): each buffer's
/// `GraphArg` from its token, the `#[len]` checks, each argument recorded in the node's
/// `NodeArgs` (context checked; by-value arguments checked to be plain data), the parameter
/// array, then `finish` (an unsafe call into `__private_v0_1` taking `__node` and `__params`).
fn graph_body(args: &[RustArg], finish: TokenStream, finish_args: TokenStream) -> TokenStream {
    let rt = rt();
    let mut views = Vec::new();
    let mut packs = Vec::new();
    let mut params = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let slot = format_ident!("__p{}", i);
        let view = view_slot(i);
        let name = &arg.name;
        match &arg.kind {
            RustType::Slice { elem, mutable: false } => {
                views.push(quote!(let #view = #rt::__private_v0_1::graph_read::<#elem, _>(&*#name);));
                packs.push(quote!(let #slot = __node.read(&self.function, &#view)?;));
            }
            RustType::Slice { elem, mutable: true } => {
                views.push(quote!(let #view = #rt::__private_v0_1::graph_write::<#elem, _>(&mut *#name);));
                packs.push(quote!(let #slot = __node.write(&self.function, &#view)?;));
            }
            // No bound named here: `launch_on` already requires `KernelParam` of the same
            // type, and naming it again would report a bad type twice.
            RustType::Value(ty) => packs.push(quote! {
                let #slot: #ty = #name;
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
        unsafe { #finish }
    }
}

/// The `call` body (`stream` None) or the `call_on` body (`stream` the name of its `&Stream`):
/// stage the marked arguments, upload, launch on the staging stream or the caller's, finish
/// (copies back and waits once, reporting kernel errors). Without marked arguments, the
/// matching `prepared_*` call.
fn convenience_body(args: &[RustArg], stream: Option<&Ident>) -> TokenStream {
    let rt = rt();
    if !args
        .iter()
        .any(|a| matches!(a.kind, RustType::Slice { .. }) && direction_of(a).is_some())
    {
        let names = args.iter().map(|a| &a.name);
        return match stream {
            Some(s) => quote!(self.prepared_async_call(grid, block, #s, #(#names),*)),
            None => quote!(self.prepared_call(grid, block, #(#names),*)),
        };
    }
    let staging = match stream {
        Some(s) => quote!(#rt::__private_v0_1::staging_on(&self.function, #s)?),
        None => quote!(#rt::__private_v0_1::Staging::new(&self.function)?),
    };
    let mut before = Vec::new();
    let mut call_args = Vec::new();
    for arg in args {
        let name = &arg.name;
        let staged = format_ident!("__d_{}", name);
        match (&arg.kind, direction_of(arg)) {
            (RustType::Slice { mutable, .. }, Some(dir)) => {
                let make = match (dir.copies_in(), dir.copies_out()) {
                    (true, false) => quote!(__staging.input(&*#name)?),
                    (true, true) => quote!(__staging.input_output(&mut *#name)?),
                    _ => quote!(__staging.output(&mut *#name)?),
                };
                before.push(quote!(let mut #staged = #make;));
                call_args.push(if *mutable {
                    quote!(&mut #staged)
                } else {
                    quote!(&#staged)
                });
            }
            _ => call_args.push(quote!(#name)),
        }
    }
    quote! {
        let mut __staging = #staging;
        #(#before)*
        __staging.upload()?;
        __staging.launch(|__stream| self.launch_on(grid.into(), block.into(), __stream, #(#call_args),*))?;
        __staging.finish()
    }
}

/// The `mod name { Kernel, prepare }` for one kernel, plus the free convenience function.
/// `source_path` names the module's `ModuleSource` static as seen from inside the kernel's
/// module; `inner` is emitted inside that module (the static itself, for a lone kernel, so that
/// it resolves even when the kernel is declared inside a function body).
pub fn kernel_items(
    kernel: &RustKernel,
    source_path: TokenStream,
    index: usize,
    c_name: &str,
    inner: TokenStream,
    instantiations: &[syn::Type],
    launch_attrs: &LaunchAttrs,
) -> TokenStream {
    let rt = rt();
    let generic = kernel.generic.as_ref().filter(|_| !instantiations.is_empty());
    // For a template: `Kernel<T: Instance>`, with the module index carried by the type.
    let (gen_decl, gen_use, gen_free, phantom_field, phantom_init, index_expr, instance_trait) = match generic
    {
        Some(t) => {
            let listed = instantiations
                .iter()
                .map(|ty| format!("`{}`", quote!(#ty).to_string().replace(' ', "")))
                .collect::<Vec<_>>()
                .join(", ");
            let message = format!("the kernel template `{c_name}` is not instantiated for `{{Self}}`");
            let note = format!("`#[kernel(…, instantiate = […])]` makes it for {listed}; add the type there");
            let impls = instantiations.iter().enumerate().map(|(i, ty)| {
                let i = index + i;
                quote!(impl Instance for #ty { const INDEX: usize = #i; })
            });
            let kname = &kernel.name;
            (
                quote!(<#t: Instance>),
                quote!(<#t>),
                quote!(<#t: #kname::Instance>),
                quote!(_t: ::core::marker::PhantomData<fn() -> #t>,),
                quote!(_t: ::core::marker::PhantomData,),
                quote!(<#t as Instance>::INDEX),
                quote! {
                    /// The types this kernel template is instantiated for.
                    #[diagnostic::on_unimplemented(message = #message, label = "not instantiated", note = #note)]
                    pub trait Instance: #rt::DeviceRepr {
                        #[doc(hidden)]
                        const INDEX: usize;
                    }
                    #(#impls)*
                },
            )
        }
        None => (
            quote!(),
            quote!(),
            quote!(),
            quote!(),
            quote!(),
            quote!(#index),
            quote!(),
        ),
    };
    let name = &kernel.name;
    let vis = &kernel.vis;
    let attrs = &kernel.attrs;
    let args = &kernel.args;
    let names: Vec<&Ident> = args.iter().map(|a| &a.name).collect();
    let dev_params: Vec<TokenStream> = args.iter().map(device_param).collect();
    let host_params: Vec<TokenStream> = args.iter().map(host_param).collect();
    let gen_turbo = match generic {
        Some(t) => quote!(::<#t>),
        None => quote!(),
    };
    let assertions = match &kernel.generic {
        Some(t) => instantiations
            .iter()
            .map(|ty| type_assertions(&crate::template::substitute(kernel, t, ty).args))
            .collect(),
        None => type_assertions(args),
    };
    let launch = launch_body(args);
    let graph_params: Vec<TokenStream> = args.iter().map(graph_param).collect();
    // Hygienic names, so that they cannot clash with the kernel's own argument names.
    let cap = Ident::new("capture", Span::mixed_site());
    let builder = Ident::new("builder", Span::mixed_site());
    let deps = Ident::new("deps", Span::mixed_site());
    let exec = Ident::new("exec", Span::mixed_site());
    let node = Ident::new("node", Span::mixed_site());
    let capture_body = graph_body(
        args,
        quote!(#rt::__private_v0_1::graph_capture(#cap, &self.function, &self.ex, grid, block, __node, &mut __params)),
        quote!(#cap, #(#names),*),
    );
    let graph_node_body = graph_body(
        args,
        quote!(#rt::__private_v0_1::graph_add(#builder, #deps, &self.function, &self.ex, grid, block, __node, &mut __params)),
        quote!(#builder, #deps, #(#names),*),
    );
    let update_body = graph_body(
        args,
        quote!(#rt::__private_v0_1::graph_update(#exec, #node, &self.function, &self.ex, grid, block, __node, &mut __params)),
        quote!(#exec, #node, #(#names),*),
    );
    let make_kernel = match (launch_attrs.cluster, launch_attrs.cooperative) {
        (None, false) => {
            quote!(.map(|function| Kernel { function, ex: ::core::default::Default::default(), #phantom_init }))
        }
        (cluster, cooperative) => {
            let cluster = match cluster {
                Some((x, y, z)) => quote!(::core::option::Option::Some((#x, #y, #z))),
                None => quote!(::core::option::Option::None),
            };
            quote!(.and_then(|function| {
                let ex = #rt::__private_v0_1::launch_ex(&function, #cluster, #cooperative)?;
                ::core::result::Result::Ok(Kernel { function, ex, #phantom_init })
            }))
        }
    };
    let convenience = convenience_body(args, None);
    let stream_ident = Ident::new("stream", Span::call_site());
    let convenience_on = convenience_body(args, Some(&stream_ident));
    let has_host_args = args.iter().any(|a| a.direction.is_some());
    let (call_doc, call_on_doc) = if has_host_args {
        (
            "Copies the `#[In]`/`#[InOut]` arguments to the device (staged through pooled pinned memory), launches, copies the `#[Out]`/`#[InOut]` ones back and waits, all on the context's staging stream (which also waits for work queued before on the legacy default stream); reports any error the kernel raised. `call_on` runs it on a stream of yours; `with_shared_mem` gives the dynamic shared memory.",
            "`call` on `stream` (PyCUDA's `stream=`): the copies in, the kernel and the copies out are queued on it after the work queued there before, and the call waits for the stream before it returns, since the host data is borrowed only for the call. For the dynamic shared memory of one call (PyCUDA's `shared_size=`), `kernel.with_shared_mem(bytes).call_on(…)`.",
        )
    } else {
        (
            "Launches on the legacy default stream; the same as `prepared_call`, since no argument is marked `#[In]`, `#[Out]` or `#[InOut]`.",
            "Launches on `stream` (PyCUDA's `stream=`); the same as `prepared_async_call`, since no argument is marked `#[In]`, `#[Out]` or `#[InOut]`.",
        )
    };
    let mod_doc = format!("The CUDA kernel `{c_name}`: `prepare` it once per context, then launch it with the typed calls of [`Kernel`].");
    let kernel_doc =
        format!("`{c_name}`, compiled and loaded in one context: launch it with no further lookups.");
    quote! {
        #[doc = #mod_doc]
        #[allow(non_snake_case, unused_imports, clippy::too_many_arguments)]
        #vis mod #name {
            use super::*;

            #inner

            #assertions

            #instance_trait

            #[doc = #kernel_doc]
            #[derive(Clone, Debug)]
            pub struct Kernel #gen_decl {
                function: #rt::driver::Function,
                ex: #rt::__private_v0_1::LaunchEx,
                #phantom_field
            }

            /// The CUDA source this kernel comes from: `source().compile(target)` compiles it
            /// with NVRTC without a GPU, e.g. to test that it builds.
            pub fn source() -> &'static #rt::__private_v0_1::ModuleSource {
                &#source_path
            }

            /// Compiles the source and loads it on the first call in a context; afterwards, a
            /// cache lookup by address. With `cluster = …` or `cooperative` in `#[kernel]`, the
            /// handle launches that way, checked against the device and kernel here.
            pub fn prepare #gen_decl (ctx: &#rt::Context) -> #rt::Result<Kernel #gen_use> {
                #rt::__private_v0_1::prepare(ctx, &#source_path, #index_expr) #make_kernel
            }

            impl #gen_decl Kernel #gen_use {
                /// The same kernel, launching with `bytes` of dynamic shared memory
                /// (`extern __shared__`) in every call form, `call` and `call_on` included.
                /// For one call (PyCUDA's `shared_size=`): `kernel.with_shared_mem(bytes).call(…)`;
                /// the kernel it is made from keeps its own size.
                pub fn with_shared_mem(&self, bytes: u32) -> Kernel #gen_use {
                    Kernel { function: self.function.clone().with_shared_mem(bytes), ex: self.ex.clone(), #phantom_init }
                }

                /// The same kernel, launching in thread-block clusters of `cluster` blocks
                /// (`cuLaunchKernelEx`; compute capability 9.0 and later). Refused here, with
                /// a typed error: a shape other than the kernel's `__cluster_dims__`, more than
                /// 8 blocks (16 with `function().allow_non_portable_cluster_size()`). Refused
                /// at each launch, before the driver: a grid that is not whole clusters, a
                /// cluster shape no part of the GPU can hold (`cuOccupancyMaxActiveClusters`).
                pub fn with_cluster(&self, cluster: impl ::core::convert::Into<#rt::Dim3>) -> #rt::Result<Kernel #gen_use> {
                    ::core::result::Result::Ok(Kernel { ex: self.ex.with_cluster(&self.function, cluster.into())?, function: self.function.clone(), #phantom_init })
                }

                /// The same kernel, launched cooperatively, so that it may synchronize the
                /// whole grid (`cooperative_groups::this_grid().sync()`). Each launch first
                /// checks that every block can be resident at once (occupancy x SM count), and
                /// refuses a larger grid with a typed error rather than let it hang.
                pub fn cooperative(&self) -> #rt::Result<Kernel #gen_use> {
                    ::core::result::Result::Ok(Kernel { ex: self.ex.with_cooperative(&self.function)?, function: self.function.clone(), #phantom_init })
                }

                /// Records a launch into a graph capture ([`Capture`](#rt::launch::Capture)), typed
                /// as `prepared_async_call`, with buffers passed as graph tokens
                /// ([`GraphInput`](#rt::launch::GraphInput), [`GraphBuffer`](#rt::launch::GraphBuffer))
                /// borrowed for the graph's lifetime. Returns the node, for `update_node`.
                pub fn capture<'a>(&self, #cap: &mut #rt::launch::Capture<'a>, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#graph_params),*) -> #rt::Result<#rt::launch::NodeId> {
                    #capture_body
                }

                /// Adds a launch to a graph being built ([`GraphBuilder`](#rt::launch::GraphBuilder)),
                /// running after the nodes `deps`; typed as `capture`.
                pub fn graph_node<'a>(&self, #builder: &mut #rt::launch::GraphBuilder<'a>, #deps: &[#rt::launch::NodeId], grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#graph_params),*) -> #rt::Result<#rt::launch::NodeId> {
                    #graph_node_body
                }

                /// Gives kernel node `node` of an instantiated graph new arguments and
                /// configuration (`cuGraphExecKernelNodeSetParams`), without instantiating
                /// again; typed as `capture`, so a wrong argument type does not compile. The
                /// node must be a plain launch of this kernel.
                pub fn update_node<'a>(&self, #exec: &mut #rt::launch::GraphExec<'a>, #node: #rt::launch::NodeId, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#graph_params),*) -> #rt::Result<()> {
                    #update_body
                }

                /// The untyped function handle underneath.
                pub fn function(&self) -> &#rt::driver::Function {
                    &self.function
                }

                /// Launches on the legacy default stream with device arguments; returns without
                /// waiting for the kernel.
                pub fn prepared_call(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#dev_params),*) -> #rt::Result<()> {
                    self.launch_on(grid.into(), block.into(), #rt::__private_v0_1::legacy_stream(&self.function), #(#names),*)
                }

                /// Launches on `stream` with device arguments; returns without waiting. Buffers
                /// last used on other streams are waited for on the GPU first.
                pub fn prepared_async_call(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, stream: &#rt::Stream, #(#dev_params),*) -> #rt::Result<()> {
                    let stream = #rt::__private_v0_1::stream_arg(&self.function, stream)?;
                    self.launch_on(grid.into(), block.into(), stream, #(#names),*)
                }

                /// Launches on the legacy default stream, waits, and returns the GPU time the
                /// kernel took, measured with events.
                pub fn prepared_timed_call(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#dev_params),*) -> #rt::Result<::std::time::Duration> {
                    let (grid, block) = (grid.into(), block.into());
                    #rt::__private_v0_1::timed(&self.function, || self.launch_on(grid, block, #rt::__private_v0_1::legacy_stream(&self.function), #(#names),*))
                }

                #[doc = #call_doc]
                pub fn call(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#host_params),*) -> #rt::Result<()> {
                    #convenience
                }

                #[doc = #call_on_doc]
                pub fn call_on(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #stream_ident: &#rt::Stream, #(#host_params),*) -> #rt::Result<()> {
                    #convenience_on
                }

                #[inline]
                fn launch_on(&self, grid: #rt::Dim3, block: #rt::Dim3, __stream: #rt::__private_v0_1::LaunchStream<'_>, #(#dev_params),*) -> #rt::Result<()> {
                    #launch
                }
            }
        }

        #(#attrs)*
        #[allow(clippy::too_many_arguments)]
        #vis fn #name #gen_free (ctx: &#rt::Context, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#host_params),*) -> #rt::Result<()> {
            #name::prepare #gen_turbo (ctx)?.call(grid, block, #(#names),*)
        }
    }
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

/// The Rust type of a device variable, or None when it has none (pointers, `void`).
/// The Rust type of a global, and whether it is the accessor's type parameter `T`: a C struct
/// has no Rust name the macro can know, so its accessor is generic over the caller's
/// `#[repr(C)]` type, whose size is checked against the variable's when it is looked up.
fn global_type(g: &gpu_cdecl::GlobalDecl) -> Option<(TokenStream, bool)> {
    let rt = rt();
    let (mut ty, generic) = match &g.ty {
        // No accessor where the type would not be plain data, or would need the `half` crate.
        gpu_cdecl::CType::Scalar(
            gpu_cdecl::Scalar::Bool | gpu_cdecl::Scalar::F16 | gpu_cdecl::Scalar::Bf16,
        ) => return None,
        gpu_cdecl::CType::Scalar(s) => {
            let t: syn::Type = syn::parse_str(s.rust_type()).ok()?;
            (quote!(#t), false)
        }
        gpu_cdecl::CType::Named(n) => match crate::vector::rust_name(n) {
            Some(v) => {
                let t: Ident = syn::parse_str(&v).ok()?;
                (quote!(#rt::types::#t), false)
            }
            None => (quote!(T), true),
        },
        _ => return None,
    };
    for d in g.dims.iter().rev() {
        ty = quote!([#ty; #d]);
    }
    Some((ty, generic))
}

/// `pub mod globals { pub fn coeffs(ctx) -> Result<Global<[f32; 16]>> }`: a typed accessor for
/// each `__constant__`/`__device__` variable of the source whose type has a Rust counterpart,
/// the type taken from its C declaration. Emitted next to the source static.
pub fn globals(source: &str) -> TokenStream {
    globals_of(&[(source, None)])
}

/// [`globals`] for a module linked from several sources, each with its file name (for the
/// docs): one accessor per variable name. A variable declared in several sources (`extern` in
/// one, defined in another) is described by a declaration whose bounds are known, if any.
pub fn globals_of(sources: &[(&str, Option<&str>)]) -> TokenStream {
    let rt = rt();
    let mut decls: Vec<(gpu_cdecl::GlobalDecl, Option<&str>)> = Vec::new();
    for (text, file) in sources {
        for g in gpu_cdecl::find_global_decls(text) {
            match decls.iter_mut().find(|(d, _)| d.name == g.name) {
                Some(seen) if seen.0.unresolved_dim.is_some() && g.unresolved_dim.is_none() => {
                    *seen = (g, *file)
                }
                Some(_) => {}
                None => decls.push((g, *file)),
            }
        }
    }
    let mut fns = Vec::new();
    for (g, file) in decls {
        let (Some((ty, generic)), Ok(ident)) = (global_type(&g), syn::parse_str::<Ident>(&g.name)) else {
            continue;
        };
        let name = &g.name;
        let at = match file {
            Some(f) => format!("`{f}` line {}", g.line),
            None => format!("line {}", g.line),
        };
        if let Some(dim) = &g.unresolved_dim {
            // No type can be given without the bound: an accessor that says why, with a
            // warning where it is used, rather than a bare "cannot find" error.
            let why = format!(
                "`{name}[{dim}]` ({at}) has a bound the macro cannot work out from the source; define it there (`#define`, `constexpr int`) or write a number, to get a typed accessor"
            );
            let operation = format!("globals::{name}");
            fns.push(quote! {
                #[doc = #why]
                #[deprecated(note = #why)]
                pub fn #ident(_ctx: &#rt::Context) -> #rt::Result<#rt::driver::Global<()>> {
                    ::core::result::Result::Err(#rt::Error::InvalidArgument { operation: #operation, detail: #why.into() })
                }
            });
            continue;
        }
        let dims: String = g.dims.iter().map(|d| format!("[{d}]")).collect();
        let space = match g.space {
            gpu_cdecl::MemorySpace::Constant => "__constant__",
            gpu_cdecl::MemorySpace::Device => "__device__",
            gpu_cdecl::MemorySpace::Managed => "__managed__",
        };
        let doc =
            format!("The {space} variable `{name}{dims}` ({at}) in `ctx`: `set` writes it, `get` reads it.");
        let generics = if generic {
            let c_type = match &g.ty {
                gpu_cdecl::CType::Named(n) => n.as_str(),
                _ => "",
            };
            let note = format!(
                " `T` is your `#[repr(C)]` counterpart of the C type `{c_type}`; its size is checked against the variable's."
            );
            quote!(#[doc = #note] pub fn #ident<T: #rt::DeviceRepr>)
        } else {
            quote!(pub fn #ident)
        };
        fns.push(quote! {
            #[doc = #doc]
            #generics(ctx: &#rt::Context) -> #rt::Result<#rt::driver::Global<#ty>> {
                #rt::__private_v0_1::global(ctx, &super::__GPU_RUNTIME_SOURCE, #name)
            }
        });
    }
    if fns.is_empty() {
        return quote!();
    }
    quote! {
        /// Typed accessors for the source's `__constant__` and `__device__` variables.
        #[allow(non_snake_case, unused_imports)]
        pub mod globals {
            use super::*;
            #(#fns)*
        }
    }
}

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

/// A span-carrying identifier for the hidden source static.
pub fn source_ident(span: Span) -> Ident {
    Ident::new("__GPU_RUNTIME_SOURCE", span)
}
