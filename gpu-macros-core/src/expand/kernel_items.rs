//! The items of one kernel: `mod name { Kernel, prepare, source }` with `Kernel`'s methods,
//! one function per group of them (configuration, graph, device-argument launches, host calls),
//! and the free convenience function.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use crate::expand::arg_types::{device_param, graph_param, host_param, type_assertions};
use crate::expand::future_call::call_future_methods;
use crate::expand::graph_body::graph_body;
use crate::expand::host_call::convenience_body;
use crate::expand::launch_body::launch_body;
use crate::expand::runtime_path::{parent_module, rt};
use crate::input::{LaunchAttrs, RustArg, RustKernel};

/// What a kernel template adds to the generated items: `Kernel<T: Instance>`, with the module
/// index carried by the type; all empty for a plain kernel.
struct Generics {
    decl: TokenStream,
    usage: TokenStream,
    free: TokenStream,
    phantom_field: TokenStream,
    phantom_init: TokenStream,
    index_expr: TokenStream,
    instance_trait: TokenStream,
}

fn generics(
    kernel: &RustKernel,
    generic: Option<&Ident>,
    index: usize,
    c_name: &str,
    instantiations: &[syn::Type],
) -> Generics {
    let rt = rt();
    match generic {
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
            Generics {
                decl: quote!(<#t: Instance>),
                usage: quote!(<#t>),
                free: quote!(<#t: #kname::Instance>),
                phantom_field: quote!(_t: ::core::marker::PhantomData<fn() -> #t>,),
                phantom_init: quote!(_t: ::core::marker::PhantomData,),
                index_expr: quote!(<#t as Instance>::INDEX),
                instance_trait: quote! {
                    /// The types this kernel template is instantiated for.
                    #[diagnostic::on_unimplemented(message = #message, label = "not instantiated", note = #note)]
                    pub trait Instance: #rt::DeviceRepr {
                        #[doc(hidden)]
                        const INDEX: usize;
                    }
                    #(#impls)*
                },
            }
        }
        None => Generics {
            decl: quote!(),
            usage: quote!(),
            free: quote!(),
            phantom_field: quote!(),
            phantom_init: quote!(),
            index_expr: quote!(#index),
            instance_trait: quote!(),
        },
    }
}

/// The `.map`/`.and_then` that makes a `Kernel` of the prepared function: with a cluster
/// shape or `cooperative` in `#[kernel]`, checked against the device and kernel.
fn make_kernel(launch_attrs: &LaunchAttrs, phantom_init: &TokenStream) -> TokenStream {
    let rt = rt();
    match (launch_attrs.cluster, launch_attrs.cooperative) {
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
    }
}

/// `with_shared_mem`, `with_cluster`, `cooperative`: the same kernel, launching another way.
fn config_methods(g: &Generics) -> TokenStream {
    let rt = rt();
    let (gen_use, phantom_init) = (&g.usage, &g.phantom_init);
    quote! {
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
    }
}

/// `dependent_launch`: the same kernel as a programmatic dependent launch, beside
/// `cooperative` and `with_cluster` (`unsafe`: the kernel's `cudaGridDependencySynchronize()`
/// is its contract, which the macro cannot check).
fn dependent_launch_method(g: &Generics) -> TokenStream {
    let rt = rt();
    let (gen_use, phantom_init) = (&g.usage, &g.phantom_init);
    quote! {
                /// The same kernel, launched as a programmatic dependent launch
                /// (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`; in a built graph,
                /// programmatic edges from the node's dependencies): it may start while the
                /// kernel before it on the stream is still running, so that its launch and
                /// prologue overlap that kernel's tail. Keeps the kernel's cluster shape and
                /// cooperative launch. Refused on devices older than compute capability 9.0,
                /// with a typed error
                /// ([`LaunchConfigError::DependentLaunchUnsupported`](#rt::LaunchConfigError::DependentLaunchUnsupported)).
                ///
                /// # Safety
                /// The kernel calls `cudaGridDependencySynchronize()` (declared for NVRTC by
                /// `#include <gpu_runtime/graph.h>`) in every thread, before an early `return`
                /// too, and before the thread touches any memory that earlier work (on its
                /// stream; in a graph, the nodes it depends on) reads or writes: until then it
                /// runs beside the kernel before it, outside the ordering this crate keeps for
                /// every buffer.
                pub unsafe fn dependent_launch(&self) -> #rt::Result<Kernel #gen_use> {
                    ::core::result::Result::Ok(Kernel {
                        // SAFETY: the caller's guarantee, passed on as it is.
                        ex: unsafe { #rt::__private_v0_1::dependent_launch(&self.function, &self.ex) }?,
                        function: self.function.clone(),
                        #phantom_init
                    })
                }
    }
}

/// `capture`, `graph_node`, `update_node`: the kernel as a node of a CUDA graph.
fn graph_methods(args: &[RustArg], names: &[&Ident]) -> TokenStream {
    let rt = rt();
    let graph_params: Vec<TokenStream> = args.iter().map(graph_param).collect();
    // Hygienic names, so that they cannot clash with the kernel's own argument names.
    let cap = Ident::new("capture", Span::mixed_site());
    let builder = Ident::new("builder", Span::mixed_site());
    let deps = Ident::new("deps", Span::mixed_site());
    let exec = Ident::new("exec", Span::mixed_site());
    let node = Ident::new("node", Span::mixed_site());
    let capture_body = graph_body(
        args,
        quote!(#cap.kernel(__kernel_node)),
        quote!(#cap, #(#names),*),
    );
    let graph_node_body = graph_body(
        args,
        quote!(#builder.kernel(#deps, __kernel_node)),
        quote!(#builder, #deps, #(#names),*),
    );
    let update_body = graph_body(
        args,
        quote!(#exec.update_kernel(#node, __kernel_node)),
        quote!(#exec, #node, #(#names),*),
    );
    quote! {
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
    }
}

/// `function` and the `prepared_*` calls: launches with device arguments.
fn prepared_methods(dev_params: &[TokenStream], names: &[&Ident]) -> TokenStream {
    let rt = rt();
    quote! {
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

                /// `prepared_call` with `shared_bytes` of dynamic shared memory (`extern
                /// __shared__`) for this launch only, PyCUDA's `prepared_call(…, shared_size=)`;
                /// the handle keeps its own size (`with_shared_mem`). More than 48 KiB opts the
                /// kernel in (once per size, shared by every handle of the function), up to the
                /// device's limit; past it (with the kernel's static shared memory) the launch is
                /// refused with `LaunchConfigError::SharedMemoryTooLarge`.
                pub fn prepared_call_shared(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, shared_bytes: u32, #(#dev_params),*) -> #rt::Result<()> {
                    self.with_shared_mem(shared_bytes).prepared_call(grid, block, #(#names),*)
                }

                /// `prepared_async_call` with `shared_bytes` of dynamic shared memory for this
                /// launch only, PyCUDA's `prepared_async_call(…, shared_size=)`; checked as in
                /// `prepared_call_shared`.
                pub fn prepared_async_call_shared(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, stream: &#rt::Stream, shared_bytes: u32, #(#dev_params),*) -> #rt::Result<()> {
                    self.with_shared_mem(shared_bytes).prepared_async_call(grid, block, stream, #(#names),*)
                }

                /// Launches on the legacy default stream, waits, and returns the GPU time the
                /// kernel took, measured with events.
                pub fn prepared_timed_call(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#dev_params),*) -> #rt::Result<::std::time::Duration> {
                    let (grid, block) = (grid.into(), block.into());
                    #rt::__private_v0_1::timed(&self.function, || self.launch_on(grid, block, #rt::__private_v0_1::legacy_stream(&self.function), #(#names),*))
                }
    }
}

/// `call` and `call_on`: launches with host data, staged when arguments are marked.
fn call_methods(args: &[RustArg], host_params: &[TokenStream]) -> TokenStream {
    let rt = rt();
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
    quote! {
                #[doc = #call_doc]
                pub fn call(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #(#host_params),*) -> #rt::Result<()> {
                    #convenience
                }

                #[doc = #call_on_doc]
                pub fn call_on(&self, grid: impl ::core::convert::Into<#rt::Dim3>, block: impl ::core::convert::Into<#rt::Dim3>, #stream_ident: &#rt::Stream, #(#host_params),*) -> #rt::Result<()> {
                    #convenience_on
                }
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
    let parent = parent_module();
    let generic = kernel.generic.as_ref().filter(|_| !instantiations.is_empty());
    let g = generics(kernel, generic, index, c_name, instantiations);
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
    let make_kernel = make_kernel(launch_attrs, &g.phantom_init);
    let config = config_methods(&g);
    let dependent = dependent_launch_method(&g);
    let graph = graph_methods(args, &names);
    let prepared = prepared_methods(&dev_params, &names);
    let calls = call_methods(args, &host_params);
    let future_calls = call_future_methods(args);
    let Generics {
        decl: gen_decl,
        usage: gen_use,
        free: gen_free,
        phantom_field,
        index_expr,
        instance_trait,
        ..
    } = &g;
    let mod_doc = format!("The CUDA kernel `{c_name}`: `prepare` it once per context, then launch it with the typed calls of [`Kernel`].");
    let kernel_doc =
        format!("`{c_name}`, compiled and loaded in one context: launch it with no further lookups.");
    quote! {
        #[doc = #mod_doc]
        #[allow(non_snake_case, unused_imports, clippy::too_many_arguments)]
        #vis mod #name {
            use #parent::*;

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
                #config

                #dependent

                #graph

                #prepared

                #calls

                #future_calls

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
