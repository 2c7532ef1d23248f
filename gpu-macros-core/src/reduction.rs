//! `#[reduction(map = "x * x", reduce = "a + b", neutral = "0.0", post_map = "sqrt(a)")]` on
//! `fn norm2(x: &DeviceArray<f64>) -> f64;`: the run-time `ReductionKernel`, declared with Rust
//! types and checked at build time, as `#[elementwise]` is for `ElementwiseKernel`.
//!
//! The macro reads the signature as `#[elementwise]` does (its `params`: scalars and arrays of
//! the element types; here arrays are only read) and the result type, writes the C argument
//! list, compiles at build time, when NVRTC can be loaded (`deep.rs`), every variant of the
//! kernel the run time may compile, as `gpu_cuda_source::reduction` writes it for the run time too
//! (one module: the shared functions once, each variant's kernel), and emits a `static
//! ReductionFn` and the functions that reduce with it. The generator numbers each expression's
//! lines under its own name (`#line 1 "map"`), so NVRTC's messages about an expression point at
//! its string literal in the Rust file. Building, caching and launching are
//! `gpu_runtime::gpuarray`'s.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};

use gpu_cuda_source::elementwise::Role;
use gpu_cuda_source::reduction::{self as generator, Reduction, ReductionVariant};

use crate::check::Errors;
use crate::deep;
use crate::elementwise::check_source::with_generator_params;
use crate::elementwise::emit::{c_name_of, element_check, params_and_args};
use crate::elementwise::params::{c_arguments, element_type, read_param_of, Param, ReadElement};
use crate::place::Origin;

/// The attribute's arguments: the expressions, each a string literal.
pub struct Args {
    map: syn::LitStr,
    reduce: syn::LitStr,
    neutral: syn::LitStr,
    post_map: Option<syn::LitStr>,
}

const USAGE: &str = "#[reduction] takes `map = \"…\", reduce = \"…\", neutral = \"…\"` and optionally \
                     `post_map = \"…\"`, each a string literal, e.g. #[reduction(map = \"x * x\", \
                     reduce = \"a + b\", neutral = \"0.0f\")]";

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (mut map, mut reduce, mut neutral, mut post_map) = (None, None, None, None);
        while !input.is_empty() {
            let key: syn::Ident = input.parse().map_err(|e| syn::Error::new(e.span(), USAGE))?;
            input
                .parse::<syn::Token![=]>()
                .map_err(|e| syn::Error::new(e.span(), USAGE))?;
            let value: syn::LitStr = input.parse().map_err(|e| syn::Error::new(e.span(), USAGE))?;
            let slot = match key.to_string().as_str() {
                "map" => &mut map,
                "reduce" => &mut reduce,
                "neutral" => &mut neutral,
                "post_map" => &mut post_map,
                other => {
                    return Err(syn::Error::new_spanned(
                        &key,
                        format!("`{other}` is not an argument of #[reduction]: {USAGE}"),
                    ))
                }
            };
            if slot.replace(value).is_some() {
                return Err(syn::Error::new_spanned(&key, format!("`{key}` is given twice")));
            }
            if !input.is_empty() {
                input.parse::<syn::Token![,]>()?;
            }
        }
        let need = |v: Option<syn::LitStr>, what: &str| {
            v.ok_or_else(|| {
                syn::Error::new(
                    proc_macro2::Span::call_site(),
                    format!("#[reduction] needs `{what} = \"…\"`: {USAGE}"),
                )
            })
        };
        Ok(Args {
            map: need(map, "map")?,
            reduce: need(reduce, "reduce")?,
            neutral: need(neutral, "neutral")?,
            post_map,
        })
    }
}

/// The item: a signature without a body.
pub struct Item {
    attrs: Vec<syn::Attribute>,
    vis: syn::Visibility,
    sig: syn::Signature,
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (attrs, vis, sig) = crate::elementwise::parse_bodiless(
            input,
            "a #[reduction] fn has no body: the expressions in the attribute are its body; end the signature with `;`",
        )?;
        Ok(Item { attrs, vis, sig })
    }
}

/// The result type (`-> f64`): a number type, read by its name as the arguments' are.
fn read_result(sig: &syn::Signature) -> syn::Result<(syn::Type, ReadElement)> {
    let syn::ReturnType::Type(_, ty) = &sig.output else {
        return Err(syn::Error::new_spanned(
            &sig.ident,
            "a #[reduction] fn declares the element type of its result: `fn name(…) -> f32;` (the \
             generated fn returns `gpu_runtime::Result<DeviceArray<f32>>`, a 0-d array)",
        ));
    };
    let read = element_type(ty, "reduction")?;
    if read.vector {
        return Err(syn::Error::new_spanned(
            ty,
            "the result of a #[reduction] is a number type (f32, f64, the integers, f16, bf16, \
             Bool, Complex32, Complex64), not a CUDA vector type",
        ));
    }
    Ok(((**ty).clone(), read))
}

/// The module the build-time check compiles: every variant the run time may compile, written
/// by the generator the run time uses (`gpu_cuda_source::reduction`), from the same name, argument
/// list, expressions and preamble (`<gpu_runtime/complex.h>` when a type is complex, then
/// CUDA's headers of the 16-bit float types the arguments and the result name, as
/// `ReductionKernel::new` makes it).
fn check_source(name: &str, params: &[Param], result: &ReadElement, args: &Args) -> String {
    let (map, reduce, neutral) = (args.map.value(), args.reduce.value(), args.neutral.value());
    let post_map = args
        .post_map
        .as_ref()
        .map_or_else(|| "a".to_owned(), syn::LitStr::value);
    with_generator_params(params, Some(result), |c_params, preamble| {
        let kernel = Reduction {
            name,
            params: c_params,
            map: &map,
            reduce: &reduce,
            neutral: &neutral,
            post_map: &post_map,
            in_order: None,
            acc: result.c_type,
            preamble,
            out: result.c_type,
        };
        let all: Vec<ReductionVariant> = ReductionVariant::all().collect();
        kernel.source(&all)
    })
}

/// Expands the attribute.
pub fn expand(args: Args, item: Item) -> syn::Result<TokenStream> {
    let sig = &item.sig;
    let name = &sig.ident;
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            "a #[reduction] fn is not generic: its arguments name their element types",
        ));
    }
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new_spanned(a, "a #[reduction] fn is not `async`"));
    }
    let (result_ty, result) = read_result(sig)?;
    let mut errors = Errors::default();
    let mut params = Vec::new();
    for a in &sig.inputs {
        match read_param_of(a, "reduction") {
            Ok(p) if p.role == Role::Output => errors.push(syn::Error::new_spanned(
                &p.ty,
                format!(
                    "a #[reduction] only reads its arrays: take `{}` as `&DeviceArray<…>`; the \
                     result is the return value",
                    p.name
                ),
            )),
            Ok(p) => params.push(p),
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;
    if !params.iter().any(|p| p.role == Role::Input) {
        return Err(syn::Error::new_spanned(
            name,
            "a #[reduction] fn reduces arrays: take at least one as `x: &DeviceArray<T>`",
        ));
    }
    let c_name = c_name_of(name, &params)?;
    let source = check_source(&c_name, &params, &result, &args);
    let file_name = Reduction {
        name: &c_name,
        ..Reduction::default()
    }
    .file_name();
    let mut expressions = vec![
        (generator::MAP_FILE, Origin::literal(&args.map, "map")),
        (generator::REDUCE_FILE, Origin::literal(&args.reduce, "reduce")),
        (generator::NEUTRAL_FILE, Origin::literal(&args.neutral, "neutral")),
    ];
    if let Some(p) = &args.post_map {
        expressions.push((generator::POST_MAP_FILE, Origin::literal(p, "post_map")));
    }
    let deep = deep::run(&deep::Request {
        source: &source,
        file_name: &file_name,
        // The generated text's own lines: a message there is about the code around the
        // expressions (which compiles clean for valid ones), named as the run time names it.
        origin: Origin::File {
            path: format!("the generated {file_name}"),
            span: name.span(),
        },
        pieces: expressions,
        names: Vec::new(),
        options: Vec::new(),
        span: name.span(),
        name_span: name.span(),
        headers: Vec::new(),
        check: true,
        embed: Some(Vec::new()),
        prelude: true,
    })?;
    let mut expansion = emit(&item, &args, &c_name, &params, &result_ty, &result, deep.items);
    expansion.extend(deep.outer);
    Ok(expansion)
}

/// The expansion: the fn and its `_on` form, which reduce over every axis, the module holding
/// the `static ReductionFn` and `kernel()`, and the constants asserting each element type.
fn emit(
    item: &Item,
    args: &Args,
    c_name: &str,
    params: &[Param],
    result_ty: &syn::Type,
    result: &ReadElement,
    deep_items: TokenStream,
) -> TokenStream {
    let rt = quote!(::gpu_runtime);
    let (attrs, vis, name) = (&item.attrs, &item.vis, &item.sig.ident);
    let on = format_ident!("{}_on", name);
    let arguments = c_arguments(params);
    // A reduction's parameters are scalars and inputs (outputs were refused above).
    let (rust_params, launch_args) = params_and_args(params);
    let mut element_checks: Vec<TokenStream> = params
        .iter()
        .map(|p| element_check("reduction", &p.elem, p.c_type, p.vector, &p.c_name()))
        .collect();
    element_checks.push(element_check(
        "reduction",
        result_ty,
        result.c_type,
        false,
        "the result",
    ));
    let (map, reduce, neutral) = (&args.map, &args.reduce, &args.neutral);
    let post_map = args
        .post_map
        .clone()
        .unwrap_or_else(|| syn::LitStr::new("a", name.span()));
    let out = quote!(#rt::gpuarray::DeviceArray<#result_ty, #rt::ndarray::IxDyn>);
    let doc_fn = format!(
        "Reduces over every element (the C arguments `{arguments}`): each maps to `{}`, values \
         combine by `{}` from `{}`, and the result is `{}` (a 0-d array), on the legacy default \
         stream. Every array must have the shape of the first; each may be any array or view of \
         its element type, in any layout. Compiled on the first call in each context.",
        map.value(),
        reduce.value(),
        neutral.value(),
        post_map.value()
    );
    let doc_on = format!(
        "[`{name}`] on `stream`: queued after the work queued there before; returns without waiting. \
         Arrays used on other streams are ordered with it as every launch of `gpu_runtime` orders them."
    );
    let doc_mod = format!(
        "The kernel of [`{name}()`]; `kernel()` is the `ReductionKernel`, for its other forms \
         (`reduce_axis`, `reduce_into`)."
    );
    quote! {
        #(#element_checks)*

        #(#attrs)*
        #[doc = ""]
        #[doc = #doc_fn]
        #vis fn #name(#(#rust_params),*) -> #rt::Result<#out> {
            #name::KERNEL.reduce(::core::option::Option::None, [#(#launch_args),*])
        }

        #[doc = #doc_on]
        #vis fn #on(stream: &#rt::Stream, #(#rust_params),*) -> #rt::Result<#out> {
            #name::KERNEL.reduce(::core::option::Option::Some(stream), [#(#launch_args),*])
        }

        #[doc = #doc_mod]
        #[allow(non_snake_case)]
        #vis mod #name {
            // The result type as written, named where the fn is.
            #[allow(unused_imports)]
            use super::*;
            #deep_items
            /// The kernel, built on first use (once per process) and compiled once per context.
            pub static KERNEL: #rt::__private_v0_1::ReductionFn<#result_ty> =
                #rt::__private_v0_1::ReductionFn::new(#c_name, #arguments, #map, #reduce, #neutral, #post_map);

            /// The run-time kernel: [`ReductionKernel`](::gpu_runtime::gpuarray::ReductionKernel).
            pub fn kernel() -> #rt::Result<&'static #rt::gpuarray::ReductionKernel<#result_ty>> {
                KERNEL.kernel()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(s: &str) -> Item {
        syn::parse_str(s).expect("an item")
    }

    fn args(s: &str) -> Args {
        syn::parse_str(s).expect("arguments")
    }

    fn source_of(attr: &str, fn_item: &str) -> String {
        let it = item(fn_item);
        let (_, result) = read_result(&it.sig).expect("a result");
        let params: Vec<Param> = it
            .sig
            .inputs
            .iter()
            .map(|a| read_param_of(a, "reduction").expect("a parameter"))
            .collect();
        check_source(&it.sig.ident.to_string(), &params, &result, &args(attr))
    }

    #[test]
    fn arguments_and_signature_errors() {
        let e = |s: &str| syn::parse_str::<Args>(s).err().map(|e| e.to_string());
        assert!(e(r#"map = "x", reduce = "a + b", neutral = "0", post_map = "a""#).is_none());
        assert!(e(r#"map = "x", reduce = "a + b", neutral = "0","#).is_none());
        assert!(
            e(r#"map = "x", reduce = "a + b""#).is_some_and(|m| m.starts_with("#[reduction] needs `neutral"))
        );
        assert!(e(r#"map = "x", reduce = "a", neutral = "0", mep = "y""#)
            .is_some_and(|m| m.starts_with("`mep` is not an argument of #[reduction]")));
        assert_eq!(
            e(r#"map = "x", map = "y""#).as_deref(),
            Some("`map` is given twice")
        );
        assert!(e(r#""x * x""#).is_some_and(|m| m.starts_with("#[reduction] takes `map")));
        let expand_err = |fn_item: &str| match expand(
            args(r#"map = "x", reduce = "a + b", neutral = "0""#),
            item(fn_item),
        ) {
            Ok(_) => panic!("`{fn_item}` expanded"),
            Err(e) => e.to_string(),
        };
        assert!(expand_err("fn f(x: &DeviceArray<f32>);")
            .starts_with("a #[reduction] fn declares the element type"));
        assert!(expand_err("fn f(x: &mut DeviceArray<f32>) -> f32;")
            .starts_with("a #[reduction] only reads its arrays: take `x`"));
        assert!(expand_err("fn f(s: f32) -> f32;").starts_with("a #[reduction] fn reduces arrays"));
        assert!(expand_err("fn f(x: &DeviceArray<f32>) -> Float3;")
            .starts_with("the result of a #[reduction] is a number"));
        assert!(expand_err("fn f(x: &DeviceArray<f32>) -> String;")
            .starts_with("`String` is not an element type"));
        assert!(expand_err("fn f<T>(x: &DeviceArray<f32>) -> f32;")
            .starts_with("a #[reduction] fn is not generic"));
        assert!(expand_err("fn f(x: &DeviceArray<f32>, x: f32) -> f32;").starts_with("`x` is taken twice"));
        assert!(syn::parse_str::<Item>("fn f(x: &DeviceArray<f32>) -> f32 {}").is_err());
    }

    #[test]
    fn the_check_compiles_every_variant_of_the_run_times_text() {
        let src = source_of(
            r#"map = "x * s", reduce = "a + b", neutral = "0.0", post_map = "a / n""#,
            "fn norm(s: f32, x: &DeviceArray<half::f16>, y: &DeviceArray<Complex32>) -> f64;",
        );
        // The run time's preamble: the complex header, then the 16-bit floats'.
        assert!(src.contains("#include <gpu_runtime/complex.h>\n#include <cuda_fp16.h>\n"));
        for v in ReductionVariant::all() {
            assert!(src.contains(&format!("void norm_r{}(", v.code())), "{v:?}");
        }
        assert!(src.contains(
            "extern \"C\" __global__ void norm_r0(long long n, int gpu_vec, double *gpu_out, long long gpu_out_o, float s, const __half *__restrict__ x__p"
        ));
        assert!(src.contains("(\n#line 1 \"map\"\nx * s\n#line "));
        assert!(src.contains("(\n#line 1 \"post_map\"\na / n\n#line "));
        // Without a post-map, the result is the reduced value, as `ReductionKernel::new`'s.
        let plain = source_of(
            r#"map = "x", reduce = "a + b", neutral = "0""#,
            "fn s(x: &DeviceArray<i32>) -> i64;",
        );
        assert!(plain.contains("(\n#line 1 \"post_map\"\na\n#line ") && !plain.contains("#include"));
    }

    /// The check's module of a valid reduction compiles with NVRTC without a message, and an
    /// error in an expression is reported in that expression's own lines.
    #[test]
    fn the_check_module_compiles_and_errors_name_the_expression() {
        let lib = crate::nvrtc::get()
            .unwrap_or_else(|e| panic!("NVRTC must be loadable (source scripts/nvrtc-env.sh): {e}"));
        let arch = lib.archs().last().copied().expect("an architecture");
        let compile = |src: &str| {
            lib.compile(
                src,
                "norm.cu",
                &[],
                &[format!("--gpu-architecture=compute_{arch}")],
                crate::nvrtc::Want::Check,
                true,
                &[],
            )
            .expect("NVRTC runs")
        };
        let good = source_of(
            r#"map = "(double)__half2float(x) * s + y.real() + i", reduce = "a + b", neutral = "0.0", post_map = "sqrt(a) / n""#,
            "fn norm(s: f32, x: &DeviceArray<half::f16>, y: &DeviceArray<Complex32>) -> f64;",
        );
        let r = compile(&good);
        // No error, and no message about the expressions (the generated text's own warnings,
        // such as an index unused over no outer axis, are not reported: `deep::report`).
        assert!(r.ok, "{}\n{good}", r.log);
        for file in [
            generator::MAP_FILE,
            generator::REDUCE_FILE,
            generator::NEUTRAL_FILE,
            generator::POST_MAP_FILE,
        ] {
            assert!(
                gpu_cuda_source::nvrtc_log::parse(&r.log, file).is_empty(),
                "{}",
                r.log
            );
        }
        let bad = source_of(
            r#"map = "x % 2.5f", reduce = "a + b", neutral = "0.0f""#,
            "fn norm(x: &DeviceArray<f32>) -> f32;",
        );
        let r = compile(&bad);
        assert!(!r.ok);
        let diags = gpu_cuda_source::nvrtc_log::parse(&r.log, generator::MAP_FILE);
        assert!(
            diags
                .iter()
                .any(|d| d.is_error() && d.line == 1 && d.column == Some(5)),
            "{}",
            r.log
        );
        // Every error is the expression's: none in the generated text around it.
        let generated = gpu_cuda_source::nvrtc_log::parse(&r.log, "norm.cu");
        assert!(generated.iter().all(|d| !d.is_error()), "{}", r.log);
    }
}
