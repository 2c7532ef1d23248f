//! `#[elementwise("z = a * x + y")]` on `fn axpy(a: f32, x: &DeviceArray<f32>, z: &mut
//! DeviceArray<f32>);`: the run-time `ElementwiseKernel`, declared with Rust types and checked
//! at build time.
//!
//! The macro reads the signature (scalars and arrays of the element types), writes the C
//! argument list (`float a, const float *x, float *z`), checks the operation with a small C
//! tokenizer (every name is an argument, a local, `i`, `n`, a keyword or a called function;
//! read-only arguments are not assigned; every `&mut` array is), compiles a kernel with the
//! operation at build time when NVRTC can be loaded (`deep.rs`), and emits a `static
//! ElementwiseFn` and the functions that launch it. Building, caching and launching the kernel
//! are `gpu_runtime::gpuarray`'s.

use std::collections::HashSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;

use gpu_cdecl::elementwise::{self as generator, Elementwise, Role, Variant, OPERATION_FILE};

use crate::check::Errors;
use crate::deep;

/// The attribute's argument: the operation.
pub struct Args {
    op: syn::LitStr,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let op: syn::LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "#[elementwise] takes the operation as a string literal, e.g. #[elementwise(\"z = a * x + y\")]",
            )
        })?;
        if !input.is_empty() {
            return Err(input.error("#[elementwise] takes one string literal: the operation"));
        }
        Ok(Args { op })
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
        let attrs = input.call(syn::Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig: syn::Signature = input.parse()?;
        if input.peek(syn::token::Brace) {
            return Err(input.error(
                "an #[elementwise] fn has no body: the operation in the attribute is its body; end the signature with `;`",
            ));
        }
        input.parse::<syn::Token![;]>()?;
        Ok(Item { attrs, vis, sig })
    }
}

struct Param {
    name: syn::Ident,
    /// The element type as written (`f32`), and its C name.
    elem: syn::Type,
    c_type: &'static str,
    role: Role,
    /// The argument's type, where errors about how it is taken point.
    ty: syn::Type,
}

impl Param {
    /// The name in C: a raw identifier (`r#type`) without its `r#`.
    fn c_name(&self) -> String {
        let n = self.name.to_string();
        n.strip_prefix("r#").map_or_else(|| n.clone(), str::to_owned)
    }
}

/// The element types of `gpu_runtime::gpuarray::Element`, Rust name and C name.
const ELEMENTS: [(&str, &str); 10] = [
    ("f32", "float"),
    ("f64", "double"),
    ("i8", "signed char"),
    ("u8", "unsigned char"),
    ("i16", "short"),
    ("u16", "unsigned short"),
    ("i32", "int"),
    ("u32", "unsigned int"),
    ("i64", "long long"),
    ("u64", "unsigned long long"),
];

/// The array types an argument may be written as; the element type is their first type
/// argument. Every one means the same: any array or view of that element type.
const ARRAY_TYPES: [&str; 4] = [
    "DeviceArray",
    "DeviceArrayView",
    "DeviceArrayViewMut",
    "PooledArray",
];

const ELEMENT_LIST: &str = "f32, f64, i8, u8, i16, u16, i32, u32, i64 or u64";

fn element_c_type(ty: &syn::Type) -> syn::Result<&'static str> {
    let name = match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    };
    name.and_then(|n| ELEMENTS.iter().find(|(r, _)| *r == n).map(|(_, c)| *c))
        .ok_or_else(|| {
            syn::Error::new_spanned(
                ty,
                format!(
                    "`{}` is not an element type of device arrays: #[elementwise] scalars and array \
                     elements are {ELEMENT_LIST}, written as such (not through an alias)",
                    quote!(#ty).to_string().replace(' ', "")
                ),
            )
        })
}

/// `&DeviceArray<T>` (and the other array names, with or without a dimension) → `T`.
fn array_elem(path: &syn::TypePath) -> Option<syn::Type> {
    let last = path.path.segments.last()?;
    if !ARRAY_TYPES.iter().any(|n| last.ident == n) {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
            syn::GenericArgument::Type(t) => Some(t.clone()),
            _ => None,
        }),
        _ => None,
    }
}

fn read_param(arg: &syn::FnArg) -> syn::Result<Param> {
    let syn::FnArg::Typed(pt) = arg else {
        return Err(syn::Error::new_spanned(
            arg,
            "an #[elementwise] fn takes no `self`",
        ));
    };
    let name = match &*pt.pat {
        syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "name each argument with a plain identifier: it is the name the operation uses",
            ))
        }
    };
    let ty = (*pt.ty).clone();
    let bad_type = || {
        syn::Error::new_spanned(
            &ty,
            format!(
                "an #[elementwise] argument is a scalar (`{name}: f32`), an array it reads \
                 (`{name}: &DeviceArray<f32>`) or an array it writes (`{name}: &mut DeviceArray<f32>`); \
                 element types are {ELEMENT_LIST}"
            ),
        )
    };
    let (elem, role) = match &ty {
        syn::Type::Reference(r) => {
            let syn::Type::Path(p) = &*r.elem else {
                return Err(bad_type());
            };
            let elem = array_elem(p).ok_or_else(bad_type)?;
            let role = if r.mutability.is_some() {
                Role::Output
            } else {
                Role::Input
            };
            (elem, role)
        }
        syn::Type::Path(_) => (ty.clone(), Role::Scalar),
        _ => return Err(bad_type()),
    };
    let c_type = element_c_type(&elem)?;
    let n = name.to_string();
    let n = n.strip_prefix("r#").unwrap_or(&n);
    if n == "i" || n == "n" || n.contains("__") || n.starts_with("gpu_") || is_c_word(n) || !n.is_ascii() {
        return Err(syn::Error::new_spanned(
            &name,
            format!(
                "`{n}` cannot name an #[elementwise] argument: `i` (the element's index), `n` (the \
                 number of elements), C keywords and type names, names with `__` or starting with \
                 `gpu_` (the generated code's) and non-ASCII names are taken"
            ),
        ));
    }
    Ok(Param {
        name,
        elem,
        c_type,
        role,
        ty,
    })
}

// ---------------------------------------------------------------------------------------------
// The operation: tokens, and the checks on them.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    /// A string or character literal.
    Literal,
    Punct,
}

#[derive(Debug, Clone, Copy)]
struct Tok<'a> {
    kind: Kind,
    text: &'a str,
}

/// Splits a C operation into tokens, without comments, with gpu-cdecl's lexer (the one that
/// reads declarations, fuzzed). Errors name what cannot be C, or cannot be in an operation:
/// the lexer takes `$` and non-ASCII letters in names and any character as punctuation, which
/// the run-time kernel would hand to NVRTC as they are.
fn tokenize(src: &str) -> Result<Vec<Tok<'_>>, String> {
    use gpu_cdecl::tokens::{TokenError, TokenKind};
    let toks = gpu_cdecl::tokens::tokenize(src).map_err(|e| match e {
        TokenError::Directive { .. } => {
            "a preprocessor line (`#...`) cannot appear in a C operation".to_owned()
        }
        e => e.to_string(),
    })?;
    let not_c = |ch: char| format!("`{ch}` cannot appear in a C operation");
    toks.into_iter()
        .map(|t| {
            let kind = match t.kind {
                TokenKind::Ident => {
                    if let Some(ch) = t.text.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_')) {
                        return Err(not_c(ch));
                    }
                    Kind::Ident
                }
                TokenKind::Number => Kind::Number,
                TokenKind::Str | TokenKind::Char => Kind::Literal,
                // Joined operators are C's; a single character must be one of C's.
                TokenKind::Punct if t.text.len() > 1 => Kind::Punct,
                TokenKind::Punct => match t.text.chars().next() {
                    Some(ch) if "+-*/%=<>!&|^~?:;,.()[]{}".contains(ch) => Kind::Punct,
                    ch => return Err(not_c(ch.unwrap_or('?'))),
                },
            };
            Ok(Tok { kind, text: t.text })
        })
        .collect()
}

/// C and CUDA keywords, and names of types, that an operation may use.
const C_WORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "nullptr",
    "NULL",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "constexpr",
    "decltype",
    "template",
    "typename",
    "class",
    "namespace",
    "using",
    "new",
    "delete",
    "this",
    "operator",
    "asm",
    "__restrict__",
    "size_t",
    "ptrdiff_t",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "uint",
    "ushort",
    "ulong",
    "uchar",
    "half",
    "__half",
    "INFINITY",
    "NAN",
    "HUGE_VAL",
    "HUGE_VALF",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
];

/// Words after which an identifier is being declared (`float t = …`).
const TYPE_WORDS: &[&str] = &[
    "auto",
    "char",
    "const",
    "double",
    "float",
    "int",
    "long",
    "short",
    "signed",
    "unsigned",
    "bool",
    "size_t",
    "ptrdiff_t",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "uint",
    "ushort",
    "ulong",
    "uchar",
    "half",
    "__half",
    "volatile",
    "register",
    "static",
];

/// CUDA's vector types (`float2`, `uchar4`, …), usable as types in an operation. Not the
/// 16-bit float pairs (`__half2`): 16-bit floats are no element type of `#[elementwise]`.
fn is_vector_type(w: &str) -> bool {
    gpu_cdecl::vectors::by_c_name(w)
        .is_some_and(|t| !matches!(t.scalar, gpu_cdecl::Scalar::F16 | gpu_cdecl::Scalar::Bf16))
}

fn is_c_word(w: &str) -> bool {
    C_WORDS.contains(&w) || is_vector_type(w)
}

fn is_type_word(w: &str) -> bool {
    TYPE_WORDS.contains(&w) || is_vector_type(w)
}

const ASSIGN: [&str; 11] = ["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="];

/// Why an operation cannot be used with these parameters, one error per problem.
fn check_operation(op: &syn::LitStr, params: &[Param], fn_name: &syn::Ident) -> syn::Result<()> {
    let text = op.value();
    let span = op.span();
    let toks =
        tokenize(&text).map_err(|e| syn::Error::new(span, format!("the operation cannot be read: {e}")))?;
    if toks.iter().all(|t| t.text == ";") {
        return Err(syn::Error::new(
            span,
            "the operation is empty: write what each element gets, e.g. \"z = a * x + y\"",
        ));
    }
    let mut errors = Errors::default();
    // Brackets balance, so that the operation stays inside the loop it is pasted into.
    let mut stack = Vec::new();
    for t in toks.iter().filter(|t| t.kind == Kind::Punct) {
        match t.text {
            "(" | "[" | "{" => stack.push(t.text),
            ")" | "]" | "}" => {
                let want = match t.text {
                    ")" => "(",
                    "]" => "[",
                    _ => "{",
                };
                if stack.pop() != Some(want) {
                    return Err(syn::Error::new(
                        span,
                        format!("the operation has an unmatched `{}`", t.text),
                    ));
                }
            }
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(syn::Error::new(
            span,
            format!("the operation has an unclosed `{open}`"),
        ));
    }
    let has_loop = toks
        .iter()
        .any(|t| t.kind == Kind::Ident && matches!(t.text, "for" | "while" | "do" | "switch"));
    let find = |name: &str| {
        params
            .iter()
            .find(|p| p.name == name || p.name == format!("r#{name}").as_str())
    };
    let arg_list = params
        .iter()
        .map(|p| format!("`{}`", p.name))
        .collect::<Vec<_>>()
        .join(", ");
    let mut locals: HashSet<&str> = HashSet::new();
    let mut written: HashSet<String> = HashSet::new();
    let mut reported: HashSet<&str> = HashSet::new();
    // Inside a declaration statement: the bracket depth it started at.
    let mut decl_depth: Option<usize> = None;
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate() {
        let prev = k.checked_sub(1).map(|j| toks[j]);
        let next = toks.get(k + 1).copied();
        if t.kind == Kind::Punct {
            match t.text {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth = depth.saturating_sub(1);
                    if decl_depth.is_some_and(|d| depth < d) {
                        decl_depth = None;
                    }
                }
                ";" => decl_depth = None,
                _ => {}
            }
            continue;
        }
        if t.kind != Kind::Ident {
            continue;
        }
        let w = t.text;
        if prev.is_some_and(|p| matches!(p.text, "." | "->" | "::")) {
            continue; // a member, or a name in a namespace
        }
        if matches!(w, "return" | "goto") || (matches!(w, "break" | "continue") && !has_loop) {
            errors.push(syn::Error::new(
                span,
                format!("`{w}` cannot be used in an elementwise operation: it runs once per element inside the generated loop"),
            ));
            continue;
        }
        if is_c_word(w) {
            continue;
        }
        // A declared local: after a type (and `*`/`&`), or after `,` in a declaration.
        let mut j = k;
        while j > 0 && matches!(toks[j - 1].text, "*" | "&") {
            j -= 1;
        }
        let after_type = j > 0 && toks[j - 1].kind == Kind::Ident && is_type_word(toks[j - 1].text);
        let after_comma = j > 0 && toks[j - 1].text == "," && decl_depth == Some(depth);
        if after_type || after_comma {
            if let Some(p) = find(w) {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "the operation declares `{w}`, which is the name of the argument `{}`",
                        p.name
                    ),
                ));
            }
            locals.insert(w);
            decl_depth = Some(depth);
            continue;
        }
        let Some(p) = find(w) else {
            if next.is_some_and(|n| n.text == "(") || locals.contains(w) || w == "i" || w == "n" {
                continue; // a called function (NVRTC checks it), a local, or the index and count
            }
            if reported.insert(w) {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "the operation uses `{w}`, which is not an argument of `{fn_name}` (the arguments \
                         are {arg_list}; `i` is the element's index and `n` the number of elements)"
                    ),
                ));
            }
            continue;
        };
        let assigns = next.is_some_and(|n| ASSIGN.contains(&n.text) || matches!(n.text, "++" | "--"))
            || prev.is_some_and(|p| matches!(p.text, "++" | "--"));
        if !assigns {
            continue;
        }
        match p.role {
            Role::Output => {
                written.insert(p.name.to_string());
            }
            Role::Input => {
                let n = &p.name;
                let elem = &p.elem;
                errors.push(syn::Error::new_spanned(
                    &p.ty,
                    format!(
                        "the operation assigns to `{n}`, which is taken as `&` (read only): take it as \
                         `&mut DeviceArray<{}>` to write it",
                        quote!(#elem)
                    ),
                ));
            }
            Role::Scalar => {
                let n = &p.name;
                errors.push(syn::Error::new_spanned(
                    &p.ty,
                    format!(
                        "the operation assigns to the scalar `{n}`: scalars are the same for every element and \
                         read only; declare a local (`{} t = {n}; …`) or take an array as `&mut`",
                        p.c_type
                    ),
                ));
            }
        }
    }
    let outputs: Vec<&Param> = params.iter().filter(|p| p.role == Role::Output).collect();
    if outputs.is_empty() {
        errors.push(syn::Error::new(
            span,
            format!(
                "`{fn_name}` writes nothing: an #[elementwise] fn needs an array it writes, taken as \
                 `&mut DeviceArray<T>` and assigned in the operation"
            ),
        ));
    }
    for p in outputs {
        if !written.contains(&p.name.to_string()) {
            errors.push(syn::Error::new_spanned(
                &p.ty,
                format!(
                    "`{}` is taken as `&mut` but the operation never assigns it (`{} = …`): take it as `&` \
                     if it is only read",
                    p.name, p.name
                ),
            ));
        }
    }
    errors.finish()
}

/// The C argument list the run-time kernel is declared with.
fn c_arguments(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| match p.role {
            Role::Scalar => format!("{} {}", p.c_type, p.c_name()),
            Role::Input => format!("const {} *{}", p.c_type, p.c_name()),
            Role::Output => format!("{} *{}", p.c_type, p.c_name()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The module the build-time check compiles: every variant the run time may compile for
/// this fn, written by the generator the run time uses (`gpu_cdecl::elementwise`), from the
/// same name, argument list and operation, so that the check compiles the text that runs.
fn check_source(name: &str, params: &[Param], op: &str) -> String {
    let names: Vec<String> = params.iter().map(Param::c_name).collect();
    let c_params: Vec<generator::Param<'_>> = params
        .iter()
        .zip(&names)
        .map(|(p, n)| generator::Param::new(n, p.c_type, p.role))
        .collect();
    let variants: Vec<Variant> = Variant::all().collect();
    Elementwise {
        name,
        params: &c_params,
        operation: op,
        preamble: "",
    }
    .source(&variants)
}

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
    for (k, p) in params.iter().enumerate() {
        if params[..k].iter().any(|q| q.name == p.name) {
            return Err(syn::Error::new_spanned(
                &p.name,
                format!("`{}` is taken twice", p.name),
            ));
        }
    }
    let c_name = name.to_string();
    let c_name = c_name.strip_prefix("r#").unwrap_or(&c_name).to_owned();
    if !c_name.is_ascii() {
        return Err(syn::Error::new_spanned(
            name,
            "the fn name is the kernel's C name: use ASCII",
        ));
    }
    check_operation(&args.op, &params, name)?;
    let op_text = args.op.value();
    let source = check_source(&c_name, &params, &op_text);
    let deep = deep::run(&deep::Request {
        source: &source,
        file_name: OPERATION_FILE,
        names: Vec::new(),
        options: Vec::new(),
        span: args.op.span(),
        check: true,
        embed: Some(Vec::new()),
        prelude: true,
    })?;
    Ok(emit(&item, &args.op, &c_name, &params, deep.items))
}

fn emit(
    item: &Item,
    op: &syn::LitStr,
    c_name: &str,
    params: &[Param],
    deep_items: TokenStream,
) -> TokenStream {
    let rt = quote!(::gpu_runtime);
    let (attrs, vis, name) = (&item.attrs, &item.vis, &item.sig.ident);
    let on = format_ident!("{}_on", name);
    let arguments = c_arguments(params);
    let rust_params: Vec<TokenStream> = params
        .iter()
        .map(|p| {
            let (n, elem) = (&p.name, &p.elem);
            let span = p.ty.span();
            match p.role {
                Role::Scalar => quote_spanned!(span=> #n: #elem),
                Role::Input => quote_spanned! {span=>
                    #n: &#rt::gpuarray::DeviceArrayBase<impl #rt::gpuarray::Storage<Elem = #elem>, impl #rt::ndarray::Dimension>
                },
                Role::Output => quote_spanned! {span=>
                    #n: &mut #rt::gpuarray::DeviceArrayBase<impl #rt::gpuarray::StorageMut<Elem = #elem>, impl #rt::ndarray::Dimension>
                },
            }
        })
        .collect();
    let launch_args: Vec<TokenStream> = params
        .iter()
        .map(|p| {
            let (n, elem) = (&p.name, &p.elem);
            match p.role {
                Role::Scalar => quote!(#rt::__private_v0_1::KernelArg::scalar::<#elem>(#n)),
                Role::Input => quote!(#rt::__private_v0_1::KernelArg::input(#n)),
                Role::Output => quote!(#rt::__private_v0_1::KernelArg::output(#n)),
            }
        })
        .collect();
    let doc_on = format!(
        "[`{name}`] on `stream`: queued after the work queued there before; returns without waiting. \
         Arrays used on other streams are ordered with it as every launch of `gpu_runtime` orders them."
    );
    let doc_fn = format!(
        "Runs `{}` on every element (the C arguments `{arguments}`), on the legacy default stream. \
         Every array must have the shape of the first; each may be any array or view of its element \
         type, in any layout. Compiled on the first call in each context.",
        op.value()
    );
    let doc_mod = format!("The kernel of [`{name}()`]: `{}`.", op.value());
    quote! {
        #(#attrs)*
        #[doc = ""]
        #[doc = #doc_fn]
        #vis fn #name(#(#rust_params),*) -> #rt::Result<()> {
            #name::KERNEL.launch(::core::option::Option::None, [#(#launch_args),*])
        }

        #[doc = #doc_on]
        #vis fn #on(stream: &#rt::Stream, #(#rust_params),*) -> #rt::Result<()> {
            #name::KERNEL.launch(::core::option::Option::Some(stream), [#(#launch_args),*])
        }

        #[doc = #doc_mod]
        #[allow(non_snake_case)]
        #vis mod #name {
            #deep_items
            /// The kernel, built on first use (once per process) and compiled once per context.
            pub static KERNEL: #rt::__private_v0_1::ElementwiseFn =
                #rt::__private_v0_1::ElementwiseFn::new(#c_name, #arguments, #op);

            /// The run-time kernel, e.g. for its generated [`source`](::gpu_runtime::gpuarray::ElementwiseKernel::source).
            pub fn kernel() -> #rt::Result<&'static #rt::gpuarray::ElementwiseKernel> {
                KERNEL.kernel()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(item: &str) -> Item {
        match syn::parse_str::<Item>(item) {
            Ok(i) => i,
            Err(e) => panic!("`{item}` does not parse: {e}"),
        }
    }

    fn params(item: &str) -> Vec<Param> {
        sig(item)
            .sig
            .inputs
            .iter()
            .map(|a| read_param(a).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    /// The messages of checking `op` against the signature `item`, and the text each points
    /// at: the argument's type, or the operation's literal.
    fn op_errors(op: &str, item: &str) -> Vec<(String, String)> {
        let lit = syn::parse_str::<syn::LitStr>(&format!("{op:?}")).expect("a literal");
        let item = sig(item);
        let ps: Vec<Param> = item
            .sig
            .inputs
            .iter()
            .map(|a| read_param(a).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        match check_operation(&lit, &ps, &item.sig.ident) {
            Ok(()) => Vec::new(),
            Err(e) => e
                .into_iter()
                .map(|e| (e.to_string(), e.span().source_text().unwrap_or_default()))
                .collect(),
        }
    }

    const AXPY: &str =
        "fn axpy(a: f32, x: &DeviceArray<f32>, y: &DeviceArrayView<f32, Ix2>, z: &mut DeviceArray<f32>);";

    #[test]
    fn operations_are_tokenized_without_comments() {
        let toks = tokenize("z[i] += 1.5e-3f * x /* c */ >>= 'a' // tail").expect("tokens");
        let texts: Vec<&str> = toks.iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            ["z", "[", "i", "]", "+=", "1.5e-3f", "*", "x", ">>=", "'a'"]
        );
        let kinds: Vec<Kind> = toks.iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds[..6],
            [
                Kind::Ident,
                Kind::Punct,
                Kind::Ident,
                Kind::Punct,
                Kind::Punct,
                Kind::Number
            ]
        );
        assert_eq!(kinds[9], Kind::Literal);
        // Non-ASCII text inside a literal is read past, not cut.
        assert_eq!(tokenize("s = \"é\\\"\"").expect("tokens").len(), 3);
    }

    #[test]
    fn what_cannot_be_tokenized() {
        assert_eq!(
            tokenize("a /* b").map(|_| ()),
            Err("a `/*` comment is not closed".to_owned())
        );
        assert_eq!(
            tokenize("s = \"ab").map(|_| ()),
            Err("a string or character literal is not closed".to_owned())
        );
        assert_eq!(
            tokenize("s = \"\\").map(|_| ()),
            Err("a string or character literal is not closed".to_owned())
        );
        assert_eq!(
            tokenize("a = b @ c").map(|_| ()),
            Err("`@` cannot appear in a C operation".to_owned())
        );
        assert_eq!(
            tokenize("a = é").map(|_| ()),
            Err("`é` cannot appear in a C operation".to_owned())
        );
        // gpu-cdecl's lexer takes these into names, or as punctuation.
        assert_eq!(
            tokenize("a = b$c").map(|_| ()),
            Err("`$` cannot appear in a C operation".to_owned())
        );
        assert_eq!(
            tokenize("a = b # c").map(|_| ()),
            Err("`#` cannot appear in a C operation".to_owned())
        );
        assert_eq!(
            tokenize("a = b\n#define c d").map(|_| ()),
            Err("a preprocessor line (`#...`) cannot appear in a C operation".to_owned())
        );
    }

    #[test]
    fn parameters_become_scalars_inputs_and_outputs() {
        let ps = params(AXPY);
        let roles: Vec<Role> = ps.iter().map(|p| p.role).collect();
        assert_eq!(roles, [Role::Scalar, Role::Input, Role::Input, Role::Output]);
        assert!(ps.iter().all(|p| p.c_type == "float"));
        assert_eq!(
            c_arguments(&ps),
            "float a, const float *x, const float *y, float *z"
        );
        let ps = params("fn f(k: u64, b: &mut PooledArray<i8>);");
        assert_eq!(c_arguments(&ps), "unsigned long long k, signed char *b");
    }

    /// The run time's reading of the C argument list the macro emits
    /// (`gpu_runtime::gpuarray::kernel_args::parse_params`, through gpu-cdecl): names, element
    /// C types and roles.
    fn as_the_run_time_reads(arguments: &str) -> Vec<(String, &'static str, Role)> {
        let decl = gpu_cdecl::find_kernel(
            &format!("__global__ void gpu_params({arguments}) {{}}"),
            "gpu_params",
        )
        .expect("the arguments read");
        decl.params
            .into_iter()
            .map(|p| {
                let name = p.name.expect("a name");
                match p.ty {
                    gpu_cdecl::CType::Scalar(s) => (name, s.c_name(), Role::Scalar),
                    gpu_cdecl::CType::Pointer {
                        pointee,
                        pointee_const,
                    } => match *pointee {
                        gpu_cdecl::CType::Scalar(s) if pointee_const => (name, s.c_name(), Role::Input),
                        gpu_cdecl::CType::Scalar(s) => (name, s.c_name(), Role::Output),
                        other => panic!("an array of {other:?}"),
                    },
                    other => panic!("an argument of type {other:?}"),
                }
            })
            .collect()
    }

    #[test]
    fn the_check_compiles_what_the_run_time_generates() {
        let items = [
            AXPY,
            "fn f(k: u64, b: &mut PooledArray<i8>, c: &DeviceArray<u16>, r#type: i64);",
        ];
        for item in items {
            let ps = params(item);
            let op = "b = k; z = a * x + y // either";
            let check = check_source("f", &ps, op);
            // The run time builds its kernel from the C arguments the macro emits.
            let read = as_the_run_time_reads(&c_arguments(&ps));
            let run_time_params: Vec<generator::Param<'_>> = read
                .iter()
                .map(|(n, t, r)| generator::Param::new(n, t, *r))
                .collect();
            let run_time = Elementwise {
                name: "f",
                params: &run_time_params,
                operation: op,
                preamble: "",
            };
            // Every variant the run time may compile is in the check's module, as it is
            // generated at run time.
            let prefix = run_time.source(&[]);
            assert!(check.starts_with(&prefix));
            let mut kernels = String::new();
            for v in Variant::all() {
                let one = run_time.source(&[v]);
                kernels.push_str(one.strip_prefix(&prefix).expect("the shared prefix"));
            }
            assert_eq!(check, prefix + &kernels, "{item}");
        }
        let src = check_source("axpy", &params(AXPY), "z = a * x + y");
        assert!(src.contains(
            "extern \"C\" __global__ void axpy_contig(long long n, int gpu_vec, float a, const float *__restrict__ x__p, long long x__o"
        ));
        assert!(src.contains("void axpy_strided8("));
        assert_eq!(
            src.matches("{\n#line 1 \"operation\"\nz = a * x + y\n;}").count(),
            2 + 8
        );
    }

    /// The check's module for valid operations compiles with NVRTC (as the build-time check
    /// runs it) without a message: the generated code around the operation is clean, so every
    /// message the check reports is about the operation.
    #[test]
    fn the_check_module_compiles_without_messages() {
        let lib = crate::nvrtc::get()
            .unwrap_or_else(|e| panic!("NVRTC must be loadable (source scripts/nvrtc-env.sh): {e}"));
        let arch = lib.archs().last().copied().expect("an architecture");
        let cases = [
            (AXPY, "z = a * x + y"),
            (AXPY, "z += i * a + x - y; // uses the index"),
            (
                "fn f(k: u64, b: &mut PooledArray<i8>, c: &DeviceArray<u16>);",
                "b = c > k ? 1 : 0",
            ),
        ];
        for (item, op) in cases {
            let src = check_source("f", &params(item), op);
            let r = lib
                .compile(
                    &src,
                    OPERATION_FILE,
                    &[],
                    &[format!("--gpu-architecture=compute_{arch}")],
                    crate::nvrtc::Want::Check,
                    true,
                )
                .expect("NVRTC runs");
            assert!(r.ok && r.log.trim().is_empty(), "{op}:\n{}\n{src}", r.log);
        }
    }

    #[test]
    fn bad_parameters() {
        let err = |item: &str| match read_param(&sig(item).sig.inputs[0]) {
            Ok(_) => panic!("`{item}` was accepted"),
            Err(e) => (e.to_string(), e.span().source_text().unwrap_or_default()),
        };
        let (msg, at) = err("fn f(a: usize);");
        assert!(
            msg.starts_with("`usize` is not an element type of device arrays"),
            "{msg}"
        );
        assert_eq!(at, "usize");
        let (msg, at) = err("fn f(x: &Vec<f32>);");
        assert!(
            msg.starts_with("an #[elementwise] argument is a scalar (`x: f32`)"),
            "{msg}"
        );
        assert_eq!(at, "&Vec<f32>");
        let (msg, at) = err("fn f(x: &DeviceArray<half::f16>);");
        assert!(msg.starts_with("`half::f16` is not an element type"), "{msg}");
        assert_eq!(at, "half::f16");
        for taken in ["i", "n", "int", "gpu_x", "a__b"] {
            let (msg, at) = err(&format!("fn f({taken}: f32);"));
            assert!(
                msg.starts_with(&format!("`{taken}` cannot name an #[elementwise] argument")),
                "{msg}"
            );
            assert_eq!(at, taken);
        }
    }

    #[test]
    fn a_well_formed_operation_passes() {
        assert_eq!(op_errors("z = a * x + y", AXPY), Vec::new());
        // Locals, loops, members, called functions, `i` and `n`.
        assert_eq!(
            op_errors(
                "float t = 0, *p = &t; for (int k = 0; k < 3; ++k) { t += sinf(x) * k; if (t > n) break; } z = t + y + i + p[0]",
                AXPY
            ),
            Vec::new()
        );
    }

    #[test]
    fn names_that_are_not_arguments() {
        let errs = op_errors("z = a * w + w + y", AXPY);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].0.starts_with("the operation uses `w`, which is not an argument of `axpy` (the arguments are `a`, `x`, `y`, `z`;"),
            "{}",
            errs[0].0
        );
        let errs = op_errors("float x = 1; z = x", AXPY);
        assert_eq!(
            errs[0].0,
            "the operation declares `x`, which is the name of the argument `x`"
        );
    }

    #[test]
    fn assignments_must_go_to_outputs() {
        let errs = op_errors("x = 1; a += 2; z = y", AXPY);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs[0]
                .0
                .starts_with("the operation assigns to `x`, which is taken as `&` (read only)"),
            "{}",
            errs[0].0
        );
        assert_eq!(errs[0].1, "&DeviceArray<f32>");
        assert!(
            errs[1].0.starts_with("the operation assigns to the scalar `a`"),
            "{}",
            errs[1].0
        );
        assert_eq!(errs[1].1, "f32");
        // `++x` assigns too.
        assert_eq!(op_errors("++x; z = y", AXPY).len(), 1);
        let errs = op_errors(
            "a = 1",
            "fn f(a: f32, z: &mut DeviceArray<f32>, w: &mut DeviceArray<f32>);",
        );
        let msgs: Vec<&str> = errs.iter().map(|(m, _)| m.as_str()).collect();
        assert!(msgs
            .iter()
            .any(|m| m.starts_with("`z` is taken as `&mut` but the operation never assigns it")));
        assert!(msgs
            .iter()
            .any(|m| m.starts_with("`w` is taken as `&mut` but the operation never assigns it")));
        let errs = op_errors("a + 1", "fn f(a: f32, x: &DeviceArray<f32>);");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].0.starts_with("`f` writes nothing"), "{}", errs[0].0);
    }

    #[test]
    fn control_flow_and_brackets() {
        let errs = op_errors("return; z = y", AXPY);
        assert!(errs[0]
            .0
            .starts_with("`return` cannot be used in an elementwise operation"));
        assert!(op_errors("break; z = y", AXPY)[0]
            .0
            .starts_with("`break` cannot be used"));
        assert_eq!(
            op_errors("z = (y", AXPY)[0].0,
            "the operation has an unclosed `(`"
        );
        assert_eq!(
            op_errors("z = y)", AXPY)[0].0,
            "the operation has an unmatched `)`"
        );
        assert_eq!(
            op_errors("z = y[0)", AXPY)[0].0,
            "the operation has an unmatched `)`"
        );
        assert!(op_errors(" ; ;", AXPY)[0].0.starts_with("the operation is empty"));
        assert!(op_errors("z = `y`", AXPY)[0]
            .0
            .starts_with("the operation cannot be read: "));
    }

    #[test]
    fn attribute_and_signature_errors() {
        let e = |s: &str| syn::parse_str::<Args>(s).err().map(|e| e.to_string());
        assert!(e(r#""z = x""#).is_none());
        assert!(e("z = x")
            .is_some_and(|m| m.starts_with("#[elementwise] takes the operation as a string literal")));
        assert_eq!(
            e(r#""z = x", "y""#).as_deref(),
            Some("#[elementwise] takes one string literal: the operation")
        );
        let Err(body) = syn::parse_str::<Item>("fn f(z: &mut DeviceArray<f32>) {}") else {
            panic!("a body was accepted");
        };
        assert!(body.to_string().starts_with("an #[elementwise] fn has no body"));
        let expand_err = |item: &str| match expand(syn::parse_str(r#""z = 1""#).expect("args"), sig(item)) {
            Ok(_) => panic!("`{item}` expanded"),
            Err(e) => e.to_string(),
        };
        assert!(expand_err("fn f<T>(z: &mut DeviceArray<f32>);")
            .starts_with("an #[elementwise] fn is not generic"));
        assert!(expand_err("fn f(z: &mut DeviceArray<f32>) -> i32;")
            .starts_with("an #[elementwise] fn returns nothing"));
        assert_eq!(
            expand_err("async fn f(z: &mut DeviceArray<f32>);"),
            "an #[elementwise] fn is not `async`"
        );
        assert_eq!(
            expand_err("fn f(z: &mut DeviceArray<f32>, z: f32);"),
            "`z` is taken twice"
        );
    }
}
