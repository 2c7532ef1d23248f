//! The attributes end to end, on tokens: what `#[kernel]` and `#[gpu_test]` generate, and where
//! their errors point. `check = false` keeps NVRTC out: these tests need no CUDA.

use proc_macro2::TokenStream;
use quote::quote;

use super::{c_param_name, gpu_test, kernel, try_gpu_test, try_kernel};

const AXPY: &str = "__global__ void axpy(float a, const float *x, float *y, int n) { }";

/// The expansion of `#[kernel(attr)] item`, parsed back as a file.
fn expand(attr: TokenStream, item: TokenStream) -> syn::File {
    match try_kernel(attr, item) {
        Ok(out) => syn::parse2(out).expect("the expansion parses as items"),
        Err(e) => panic!("expansion failed: {e}"),
    }
}

/// The message of the expansion's (first) error and the text it points at.
fn expand_error(attr: &str, item: &str) -> (String, String) {
    // Parsed from text, not built by `quote!`, so that spans have source text to compare.
    let attr: TokenStream = attr.parse().expect("tokens");
    let item: TokenStream = item.parse().expect("tokens");
    match try_kernel(attr, item) {
        Ok(_) => panic!("expanded"),
        Err(e) => (e.to_string(), e.span().source_text().unwrap_or_default()),
    }
}

fn module<'a>(items: &'a [syn::Item], name: &str) -> &'a [syn::Item] {
    items
        .iter()
        .find_map(|i| match i {
            syn::Item::Mod(m) if m.ident == name => m.content.as_ref().map(|(_, c)| c.as_slice()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no module `{name}`"))
}

fn free_fn<'a>(items: &'a [syn::Item], name: &str) -> &'a syn::Signature {
    items
        .iter()
        .find_map(|i| match i {
            syn::Item::Fn(f) if f.sig.ident == name => Some(&f.sig),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no fn `{name}`"))
}

/// A method of `Kernel`, in any of its `impl` blocks.
fn method<'a>(items: &'a [syn::Item], name: &str) -> &'a syn::Signature {
    items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Impl(im) if im.trait_.is_none() => Some(&im.items),
            _ => None,
        })
        .flatten()
        .find_map(|i| match i {
            syn::ImplItem::Fn(f) if f.sig.ident == name => Some(&f.sig),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no method `Kernel::{name}`"))
}

/// The names of a signature's parameters, `self` left out.
fn params(sig: &syn::Signature) -> Vec<String> {
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(pt) => {
                let pat = &pt.pat;
                Some(quote!(#pat).to_string())
            }
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

#[test]
fn a_kernel_gets_prepare_and_the_typed_calls() {
    let f = expand(
        quote!(#AXPY, check = false),
        quote!(
            pub fn axpy(a: f32, #[In] x: &[f32], #[Out] y: &mut [f32], n: i32);
        ),
    );
    let m = module(&f.items, "axpy");
    assert!(m
        .iter()
        .any(|i| matches!(i, syn::Item::Struct(s) if s.ident == "Kernel")));
    assert_eq!(params(free_fn(m, "prepare")), ["ctx"]);
    let args = ["a", "x", "y", "n"];
    let with = |head: &[&str]| {
        head.iter()
            .chain(&args)
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    // The Rust argument order is the C parameter order, after the launch geometry.
    assert_eq!(params(method(m, "prepared_call")), with(&["grid", "block"]));
    assert_eq!(
        params(method(m, "prepared_async_call")),
        with(&["grid", "block", "stream"])
    );
    // Per-launch dynamic shared memory (PyCUDA's `shared_size=`) after the geometry and stream.
    assert_eq!(
        params(method(m, "prepared_call_shared")),
        with(&["grid", "block", "shared_bytes"])
    );
    assert_eq!(
        params(method(m, "prepared_async_call_shared")),
        with(&["grid", "block", "stream", "shared_bytes"])
    );
    assert_eq!(params(method(m, "prepared_timed_call")), with(&["grid", "block"]));
    assert_eq!(params(method(m, "call")), with(&["grid", "block"]));
    // The convenience function beside the module, with the kernel's visibility.
    let free = free_fn(&f.items, "axpy");
    assert_eq!(params(free), with(&["ctx", "grid", "block"]));
    assert!(f
        .items
        .iter()
        .any(|i| matches!(i, syn::Item::Fn(g) if g.sig.ident == "axpy" && matches!(g.vis, syn::Visibility::Public(_)))));
}

#[test]
fn the_source_static_names_the_source_file_and_kernel() {
    let out = try_kernel(
        quote!(#AXPY, name = "axpy", check = false),
        quote!(
            fn saxpy(a: f32, x: &[f32], y: &mut [f32], n: i32);
        ),
    )
    .expect("expands")
    .to_string();
    // `name = "axpy"` binds the Rust `saxpy` to the C `axpy`, the source named after the C name,
    // as no file can be (`<inline:…>`: an `#include` of a file never reaches the source itself).
    let source = format!(
        "ModuleSource :: new (\"<inline:axpy>\" , {} , & [\"axpy\"] , & [])",
        quote!(#AXPY)
    );
    assert!(out.contains(&source), "{out}");
    assert!(out.contains("mod saxpy"), "{out}");
    // Every argument's type is asserted to be one the device can take.
    assert!(
        out.contains("by_value :: < f32 >") && out.contains("by_value :: < i32 >"),
        "{out}"
    );
}

#[test]
fn a_module_of_kernels_is_one_source_with_an_index_each() {
    let src = "__global__ void a(int *x) { }\n__global__ void b(const int *x, int n) { }";
    let f = expand(
        quote!(#src, check = false),
        quote!(
            mod ops {
                fn a(x: &mut [i32]);
                fn b(x: &[i32], n: i32);
            }
        ),
    );
    let ops = module(&f.items, "ops");
    for (name, index) in [("a", "0usize"), ("b", "1usize")] {
        let m = module(ops, name);
        let prepare = m
            .iter()
            .find_map(|i| match i {
                syn::Item::Fn(p) if p.sig.ident == "prepare" => Some(quote!(#p).to_string()),
                _ => None,
            })
            .expect("prepare");
        assert!(
            prepare.contains(&format!("super :: __GPU_RUNTIME_SOURCE , {index})")),
            "{prepare}"
        );
        // Listed kernels are public in the module even when declared without `pub`.
        assert!(ops
            .iter()
            .any(|i| matches!(i, syn::Item::Fn(g) if g.sig.ident == name && matches!(g.vis, syn::Visibility::Public(_)))));
    }
    assert!(quote!(#f).to_string().contains("& [\"a\" , \"b\"]"));
}

#[test]
fn a_template_is_instantiated_for_each_type() {
    let src = "template <typename T> __global__ void scale(T *x, T a) { }";
    let out = try_kernel(
        quote!(#src, check = false, instantiate = [f32, double]),
        quote!(
            fn scale<T>(x: &mut [T], a: T);
        ),
    )
    .expect("expands")
    .to_string();
    // `double` (the CUDA name) is instantiated as `f64`.
    assert!(out.contains("& [\"scale<float>\" , \"scale<double>\"]"), "{out}");
    assert!(out.contains("by_value :: < f64 >"), "{out}");
}

#[test]
fn template_errors() {
    let src = "template <typename T> __global__ void scale(T *x, T a) { }";
    let (msg, at) = expand_error(
        &format!("{src:?}, check = false"),
        "fn scale<T>(x: &mut [T], a: T);",
    );
    assert!(
        msg.starts_with("a generic #[kernel] binds a C++ kernel template: list the types"),
        "{msg}"
    );
    assert_eq!(at, "T");
    let (msg, at) = expand_error(
        &format!("{src:?}, check = false, instantiate = [f32, float]"),
        "fn scale<T>(x: &mut [T], a: T);",
    );
    assert_eq!(msg, "`float` is instantiated twice");
    assert_eq!(at, "float");
    let (msg, _) = expand_error(
        &format!("{src:?}, check = false, instantiate = [f32]"),
        "fn scale<T>(x: &mut [f64], a: T);",
    );
    assert!(msg.starts_with("in the instantiation for `float`: "), "{msg}");
    let (msg, _) = expand_error(
        &format!("{AXPY:?}, check = false, instantiate = [f32]"),
        "fn axpy<T>(a: T, x: &[T], y: &mut [T], n: i32);",
    );
    assert_eq!(
        msg,
        "the CUDA kernel `axpy` is not a template, so it cannot be instantiated"
    );
    let (msg, at) = expand_error(
        &format!("{AXPY:?}, check = false, instantiate = [f32]"),
        "fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32);",
    );
    assert_eq!(
        msg,
        "the CUDA kernel `axpy` is not a template, so it cannot be instantiated"
    );
    assert_eq!(at, "[f32]");
    // A type template under a plain `fn`: the message names the template and `instantiate`
    // (not "a C struct is passed as the Rust type of the same name, `T`", issue 44).
    let (msg, at) = expand_error(
        &format!("{src:?}, check = false"),
        "fn scale(x: &mut [f32], a: f32);",
    );
    assert_eq!(
        msg,
        "the CUDA kernel `scale` is a template (`template <typename T>`): declare the Rust function \
         generic, `fn scale<T>(…)`, with `T` where the template has its type parameter, and list the \
         types to make it for, `instantiate = [f32, f64]`"
    );
    assert_eq!(at, "scale");
    let (msg, at) = expand_error(
        &format!("{src:?}, check = false, instantiate = [f32]"),
        "fn scale(x: &mut [f32], a: f32);",
    );
    assert!(
        msg.starts_with("`instantiate` makes the template `scale` (`template <typename T>`) for types: declare the Rust function generic"),
        "{msg}"
    );
    assert_eq!(at, "[f32]");
    // A defaulted type parameter the parameters use is still the template's, not a C struct
    // named `T` (issue 44).
    let src = "template <typename T = float> __global__ void scale(T *x, T a) { }";
    let (msg, at) = expand_error(
        &format!("{src:?}, check = false"),
        "fn scale(x: &mut [f32], a: f32);",
    );
    assert!(
        msg.starts_with("the CUDA kernel `scale` is a template (`template <typename T = float>`): declare the Rust function generic, `fn scale<T>(…)`"),
        "{msg}"
    );
    assert!(!msg.contains("C struct"), "{msg}");
    assert_eq!(at, "scale");
    let (msg, at) = expand_error(
        &format!("{src:?}, check = false, instantiate = [f32]"),
        "fn scale(x: &mut [f32], a: f32);",
    );
    assert!(
        msg.starts_with(
            "`instantiate` makes the template `scale` (`template <typename T = float>`) for types"
        ),
        "{msg}"
    );
    assert_eq!(at, "[f32]");
    // One the parameters do not use leaves a plain `fn` alone (`fast` is for the body).
    let src = "template <bool fast = false> __global__ void scale(float *x, float a) { }";
    try_kernel(
        format!("{src:?}, check = false").parse().unwrap(),
        "fn scale(x: &mut [f32], a: f32);".parse().unwrap(),
    )
    .expect("a plain fn binds the template's defaults");
}

/// `template <int block_size>`, as llama.cpp's CUDA backend writes its norms.
const NORM: &str = "template <int block_size>\n\
    __global__ void norm_f32(const float *x, float *dst, const int ncols, const float eps) { }\n\
    template <typename T, int block_size, bool fast = false>\n\
    __global__ void scale_t(T *x, T a, int n) { }";

#[test]
fn a_template_over_values_is_bound_to_the_instance_listed() {
    let out = try_kernel(
        quote!(#NORM, check = false, instantiate = [1024]),
        quote!(
            fn norm_f32(x: &[f32], dst: &mut [f32], ncols: i32, eps: f32);
        ),
    )
    .expect("expands")
    .to_string();
    assert!(out.contains("& [\"norm_f32<1024>\"]"), "{out}");
    // Types and values, in the template's order, one instance per type.
    let out = try_kernel(
        quote!(#NORM, check = false, instantiate = [(f32, 256), (double, 128, true)]),
        quote!(
            fn scale_t<T>(x: &mut [T], a: T, n: i32);
        ),
    )
    .expect("expands")
    .to_string();
    assert!(
        out.contains("& [\"scale_t<float, 256>\" , \"scale_t<double, 128, true>\"]"),
        "{out}"
    );
    assert!(out.contains("impl Instance for f64"), "{out}");
}

#[test]
fn a_template_over_values_without_an_instance_is_an_error_at_the_declaration() {
    let (msg, at) = expand_error(
        &format!("{NORM:?}, check = false"),
        "fn norm_f32(x: &[f32], dst: &mut [f32], ncols: i32, eps: f32);",
    );
    assert_eq!(
        msg,
        "the CUDA kernel `norm_f32` is a template over values (`template <int block_size>`): say which \
         instance this `fn` binds, e.g. `#[kernel(…, instantiate = [32])]`"
    );
    assert_eq!(at, "norm_f32");
    let (msg, at) = expand_error(
        &format!("{NORM:?}, check = false, instantiate = [32, 1024]"),
        "fn norm_f32(x: &[f32], dst: &mut [f32], ncols: i32, eps: f32);",
    );
    assert!(
        msg.starts_with("a plain `fn` binds one instance of the template `norm_f32`"),
        "{msg}"
    );
    assert_eq!(at, "1024");
    for (list, want, at_text) in [
        ("[f32]", "`f32` is a type, where the template `norm_f32` takes a value, `int block_size`", "f32"),
        ("[true]", "`true` cannot be the template argument `int block_size`: it takes an integer", "true"),
        (
            "[4294967296]",
            "`4294967296` cannot be the template argument `int block_size`: it takes an integer from -2147483648 to 2147483647",
            "4294967296",
        ),
        ("[(32, 1)]", "the template `norm_f32` takes 1 argument (`template <int block_size>`), and this instance gives 2", "(32, 1)"),
    ] {
        let (msg, at) = expand_error(
            &format!("{NORM:?}, check = false, instantiate = {list}"),
            "fn norm_f32(x: &[f32], dst: &mut [f32], ncols: i32, eps: f32);",
        );
        assert_eq!(msg, want, "{list}");
        assert_eq!(at, at_text, "{list}");
    }
    // A generic `fn`: the type first, then the values the template has no default for.
    for (list, want) in [
        ("[f32]", "this instance of the template `scale_t` (`template <typename T, int block_size, bool fast = false>`) gives nothing for `int block_size`"),
        ("[(256, f32)]", "`256` is a value, where the template `scale_t` takes a type, `typename T`"),
        ("[(f32, 256), (f32, 128)]", "`float` is instantiated twice"),
    ] {
        let (msg, _) = expand_error(
            &format!("{NORM:?}, check = false, instantiate = {list}"),
            "fn scale_t<T>(x: &mut [T], a: T, n: i32);",
        );
        assert!(msg.starts_with(want), "{list}: {msg}");
    }
    let (msg, at) = expand_error(
        &format!("{NORM:?}, check = false, instantiate = [32]"),
        "fn norm_f32<T>(x: &[f32], dst: &mut [f32], ncols: i32, eps: f32);",
    );
    assert!(
        msg.starts_with("the CUDA kernel `norm_f32` is a template over values only"),
        "{msg}"
    );
    assert_eq!(at, "T");
}

#[test]
fn the_rust_type_parameter_stands_for_the_templates_whatever_its_name() {
    let src = "template <typename Real> __global__ void axpy(Real a, const Real *x, Real *y) { }";
    let out = try_kernel(
        quote!(#src, check = false, instantiate = [f32]),
        quote!(
            fn axpy<T>(a: T, x: &[T], y: &mut [T]);
        ),
    );
    assert!(
        out.is_ok(),
        "{}",
        out.err().map(|e| e.to_string()).unwrap_or_default()
    );
}

#[test]
fn a_missing_kernel_points_at_what_named_it() {
    let (msg, at) = expand_error(&format!("{AXPY:?}, check = false"), "fn scale(a: f32);");
    assert!(
        msg.ends_with("(the C function is looked up by the Rust name; if it differs, add `name = \"c_name\"` to #[kernel])"),
        "{msg}"
    );
    assert_eq!(at, "scale");
    // A name one edit away: the message says which, and not that the names may differ.
    let (msg, at) = expand_error(&format!("{AXPY:?}, check = false"), "fn axpz(a: f32);");
    assert!(
        msg.ends_with("it declares: `axpy`; did you mean `axpy`?"),
        "{msg}"
    );
    assert_eq!(at, "axpz");
    let (msg, at) = expand_error(
        &format!("{AXPY:?}, name = \"nope\", check = false"),
        "fn axpy(a: f32);",
    );
    assert!(!msg.contains("looked up by the Rust name"), "{msg}");
    assert_eq!(at, "\"nope\"");
    let (msg, at) = expand_error(&format!("{AXPY:?}, check = false"), "mod m { fn scale(a: f32); }");
    assert!(
        msg.ends_with("(each `fn` in the module is named like its C function)"),
        "{msg}"
    );
    assert_eq!(at, "scale");
}

#[test]
fn a_syntax_error_names_its_line_in_the_kernel_string_and_points_at_it() {
    // Outside a compiler proc-macro2's spans name no file, so the line in the string alone
    // (with a file: `src/main.rs:4 (line 2 of the kernel string)`, place.rs's tests).
    let src = "r#\"\n__global__ void scale(float *v, int n {\n}\n\"#";
    let (msg, at) = expand_error(
        &format!("{src}, check = false"),
        "fn scale(v: &mut [f32], n: i32);",
    );
    assert_eq!(
        msg,
        "CUDA source at line 2 of the kernel string: the parentheses of __global__ function `scale` are not balanced"
    );
    // The span is the CUDA line where the compiler can point inside a literal (a nightly one,
    // or proc-macro2 outside a compiler, as here); a stable one points at the whole literal.
    assert_eq!(at, "__global__ void scale(float *v, int n {");
}

#[test]
fn a_parameter_rust_cannot_pass_points_at_the_rust_argument() {
    let src = "__global__ void k(float **rows, int n) { }";
    let (msg, at) = expand_error(
        &format!("{src:?}, check = false"),
        "fn k(rows: &mut [f32], n: i32);",
    );
    assert!(msg.contains("float **rows"), "{msg}");
    assert_eq!(at, "&mut [f32]");
}

#[test]
fn single_kernel_arguments_are_refused_on_a_module() {
    let (msg, _) = expand_error(
        &format!("{AXPY:?}, name = \"axpy\", check = false"),
        "mod m { fn axpy(a: f32); }",
    );
    assert!(msg.starts_with("`name = …` is for a single kernel"), "{msg}");
}

#[test]
fn instantiate_on_a_module_makes_each_template_for_each_type() {
    let src = "template <typename T> __global__ void scale(T *x, T a) { }\n\
               __global__ void count(int *c) { }\n\
               template <typename T> __global__ void add(const T *x, T *y) { }";
    let f = expand(
        quote!(#src, check = false, instantiate = [f32, double]),
        quote!(
            mod ops {
                fn scale<T>(x: &mut [T], a: T);
                fn count(c: &mut [i32]);
                fn add<T>(x: &[T], y: &mut [T]);
            }
        ),
    );
    let text = quote!(#f).to_string();
    // One source, the name expressions in the order of the `fn`s: each template's
    // instantiations in the order listed, the plain kernel by its C name.
    assert!(
        text.contains(
            "& [\"scale<float>\" , \"scale<double>\" , \"count\" , \"add<float>\" , \"add<double>\"]"
        ),
        "{text}"
    );
    let ops = module(&f.items, "ops");
    // Each instance's index into that list: scale 0 and 1, count 2, add 3 and 4.
    let scale = quote!(#(#ops)*).to_string();
    for (name, want) in [
        (
            "scale",
            &[
                "impl Instance for f32 { const INDEX : usize = 0usize ; }",
                "impl Instance for f64 { const INDEX : usize = 1usize ; }",
            ][..],
        ),
        (
            "add",
            &[
                "impl Instance for f32 { const INDEX : usize = 3usize ; }",
                "impl Instance for f64 { const INDEX : usize = 4usize ; }",
            ][..],
        ),
    ] {
        let m = module(ops, name);
        let items = quote!(#(#m)*).to_string();
        for w in want {
            assert!(items.contains(w), "{name}: {w} in {items}");
        }
    }
    let count = module(ops, "count");
    let items = quote!(#(#count)*).to_string();
    assert!(!items.contains("Instance"), "a plain kernel stays plain: {items}");
    assert!(
        items.contains("super :: __GPU_RUNTIME_SOURCE , 2usize)"),
        "{items}"
    );
    assert!(
        scale.contains("pub fn scale < T : scale :: Instance >"),
        "{scale}"
    );
}

#[test]
fn instantiate_on_a_module_errors() {
    // A list no `fn` can use, said where it is written.
    let (msg, at) = expand_error(
        &format!("{AXPY:?}, instantiate = [f32], check = false"),
        "mod m { fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32); }",
    );
    assert!(
        msg.starts_with("`instantiate` is for kernel templates, and no `fn` in this module is generic"),
        "{msg}"
    );
    assert_eq!(at, "[f32]");
    // A generic `fn` in a module with no list, as for one kernel.
    let src = "template <typename T> __global__ void scale(T *x, T a) { }";
    let (msg, at) = expand_error(
        &format!("{src:?}, check = false"),
        "mod m { fn scale<T>(x: &mut [T], a: T); }",
    );
    assert!(
        msg.starts_with("a generic #[kernel] binds a C++ kernel template"),
        "{msg}"
    );
    assert_eq!(at, "T");
    // A mismatch in one instantiation names it, as for one kernel.
    let (msg, _) = expand_error(
        &format!("{src:?}, check = false, instantiate = [f32, f64]"),
        "mod m { fn scale<T>(x: &mut [f32], a: T); }",
    );
    assert!(msg.starts_with("in the instantiation for `double`: "), "{msg}");
}

#[test]
fn a_source_file_is_read_and_included() {
    let path = std::env::temp_dir().join(format!("gpu-macros-core-test-{}.cu", std::process::id()));
    std::fs::write(&path, AXPY).expect("a temporary file");
    let abs = path.to_string_lossy().into_owned();
    let out = try_kernel(
        quote!(file = #abs, check = false),
        quote!(
            fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32);
        ),
    );
    let _ = std::fs::remove_file(&path);
    let out = out.expect("expands").to_string();
    // Included, so that cargo rebuilds when it changes; named by its file name for NVRTC.
    assert!(
        out.contains(&format!(":: core :: include_str ! ({})", quote!(#abs))),
        "{out}"
    );
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    assert!(
        out.contains(&format!("ModuleSource :: new ({}", quote!(#file_name))),
        "{out}"
    );
}

#[test]
fn headers_of_the_file_directory_and_include_dirs_are_embedded_by_name_without_absolute_paths() {
    // Under the crate's root (where `file` and `include_dirs` are relative to): the workspace's
    // target directory, beside this crate.
    let rel = format!("../target/tmp/gpu-macros-core-inc-{}", std::process::id());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join(&rel);
    std::fs::create_dir_all(dir.join("include/sub")).expect("a temporary directory");
    let src = format!("#include \"common.h\"\n#include <sub/more.h>\n#include <stdint.h>\n{AXPY}");
    std::fs::write(dir.join("k.cu"), &src).expect("a temporary file");
    std::fs::write(dir.join("common.h"), "#define A 1\n").unwrap();
    std::fs::write(dir.join("include/sub/more.h"), "#include \"deeper.h\"\n").unwrap();
    std::fs::write(dir.join("include/sub/deeper.h"), "#define B 2\n").unwrap();
    let (file, inc) = (format!("{rel}/k.cu"), format!("{rel}/include"));
    let out = try_kernel(
        quote!(file = #file, include_dirs = [#inc], options = ["-G"], check = false),
        quote!(
            fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32);
        ),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.expect("expands").to_string();
    // The options are the user's alone: no `-I` with a directory of this machine.
    assert!(
        out.contains(&format!("{} , & [\"-G\"])", quote!(&["axpy"]))),
        "{out}"
    );
    // The file and each header (by the name its `#include` gives, beside the header that
    // includes it too; the built-in <stdint.h> is not one) are read through paths relative to
    // the crate's root.
    let at = |p: &str| {
        let p = format!("/{rel}/{p}");
        quote!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), #p)).to_string()
    };
    assert!(out.contains(&format!("include_str ! ({})", at("k.cu"))), "{out}");
    for (name, path) in [
        ("common.h", "common.h"),
        ("sub/more.h", "include/sub/more.h"),
        ("deeper.h", "include/sub/deeper.h"),
    ] {
        let want = format!(
            "SourceHeader :: new ({} , :: core :: include_bytes ! ({}))",
            quote!(#name),
            at(path)
        );
        assert!(out.contains(&want), "{out}\nwanted {want}");
    }
    assert_eq!(out.matches("SourceHeader :: new").count(), 3, "{out}");
    // Where GPU_RUNTIME_SOURCE_DIR finds them again: relative paths and the crate's name.
    let on_disk = format!(
        "SourceOnDisk :: new (:: core :: env ! (\"CARGO_PKG_NAME\") , :: core :: option :: Option :: Some ({}) , & [{}])",
        quote!(#file),
        quote!(#inc)
    );
    assert!(out.contains(&on_disk), "{out}\nwanted {on_disk}");
    // No absolute path of this machine anywhere in the expansion.
    let abs = root.to_string_lossy().into_owned();
    assert!(!out.contains(&abs), "{abs} in {out}");
}

#[test]
fn two_headers_of_one_name_are_refused() {
    let rel = format!("../target/tmp/gpu-macros-core-clash-{}", std::process::id());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&rel);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("k.cu"),
        format!("#include \"c.h\"\n#include \"sub/b.h\"\n{AXPY}"),
    )
    .unwrap();
    std::fs::write(dir.join("c.h"), "#define C 1\n").unwrap();
    std::fs::write(dir.join("sub/b.h"), "#include \"c.h\"\n").unwrap();
    std::fs::write(dir.join("sub/c.h"), "#define C 2\n").unwrap();
    let file = format!("{rel}/k.cu");
    let (msg, at) = expand_error(
        &format!("file = {file:?}, check = false"),
        "fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32);",
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        msg.starts_with("#[kernel]: two different headers are included as `c.h`: "),
        "{msg}"
    );
    assert_eq!(at, format!("{file:?}"));
}

#[test]
fn an_include_dir_that_is_not_there_says_where_it_was_looked_for() {
    let (msg, at) = expand_error(
        r#"r"__global__ void k() {}", include_dirs = ["no/such/dir"]"#,
        "fn k();",
    );
    assert!(msg.starts_with("`no/such/dir` is not a directory: "), "{msg}");
    assert_eq!(at, "\"no/such/dir\"");
}

#[test]
fn include_dirs_on_a_linked_module_is_refused() {
    let (msg, at) = expand_error(
        r#"sources = ["__global__ void a() {}", "__global__ void b() {}"], include_dirs = ["x"]"#,
        "mod m { fn a(); fn b(); }",
    );
    assert!(msg.starts_with("`include_dirs` is for a single source"), "{msg}");
    assert_eq!(at, "\"x\"");
}

#[test]
fn a_missing_source_file_says_where_it_was_looked_for() {
    let (msg, at) = expand_error(r#"file = "no/such/kernel.cu""#, "fn k();");
    assert!(
        msg.starts_with("cannot read the CUDA source file `no/such/kernel.cu`: "),
        "{msg}"
    );
    assert!(msg.contains("no/such/kernel.cu`"), "{msg}");
    assert_eq!(at, "\"no/such/kernel.cu\"");
}

#[test]
fn errors_become_compile_errors() {
    let out = kernel(
        quote!(#AXPY, check = false),
        quote!(
            fn axpy(a: f64, x: &[f32], y: &mut [f32], n: i32);
        ),
    )
    .to_string();
    assert!(out.starts_with(":: core :: compile_error !"), "{out}");
    assert!(
        out.contains("expected `f32` for C `float a`, found `f64`"),
        "{out}"
    );
    // An attribute that does not parse is a compile error too, not a panic.
    let out = kernel(
        quote!(#AXPY, check = "no"),
        quote!(
            fn axpy();
        ),
    )
    .to_string();
    assert!(out.contains("`check` takes `true` or `false`"), "{out}");
    let out = kernel(
        quote!(#AXPY),
        quote!(
            struct S;
        ),
    )
    .to_string();
    assert!(out.contains("compile_error"), "{out}");
}

#[test]
fn c_parameter_names() {
    assert_eq!(c_param_name("float **rows"), Some("rows"));
    assert_eq!(c_param_name("const float *__restrict__ x"), Some("x"));
    assert_eq!(c_param_name("int a[4]"), None);
    assert_eq!(c_param_name("int n_2"), Some("n_2"));
    assert_eq!(c_param_name("float *x  "), Some("x"));
    assert_eq!(c_param_name(""), None);
}

#[test]
fn gpu_test_opens_the_default_context() {
    let out = try_gpu_test(
        quote!(),
        quote!(
            fn adds(ctx: &gpu_runtime::Context) {
                let _ = ctx;
            }
        ),
    )
    .expect("expands")
    .to_string();
    assert!(
        out.starts_with("# [test] # [ignore = \"needs a CUDA GPU\"] fn adds ()"),
        "{out}"
    );
    assert!(out.contains(":: gpu_runtime :: Context :: default ()"), "{out}");
    assert!(out.contains("__gpu_test_body (& __ctx)"), "{out}");
    let out = try_gpu_test(
        quote!(),
        quote!(
            fn plain() -> Result<(), String> {
                Ok(())
            }
        ),
    )
    .expect("expands")
    .to_string();
    assert!(
        out.contains("fn plain () -> Result < () , String >") && out.contains("__gpu_test_body ()"),
        "{out}"
    );
}

#[test]
fn gpu_test_errors() {
    let out = gpu_test(
        quote!(gpus = 2),
        quote!(
            fn t() {}
        ),
    )
    .to_string();
    assert!(out.contains("#[gpu_test] takes no arguments"), "{out}");
    let Err(e) = try_gpu_test(
        quote!(),
        quote!(
            fn t(a: i32, b: i32) {}
        ),
    ) else {
        panic!("two parameters accepted");
    };
    assert!(e
        .to_string()
        .starts_with("a #[gpu_test] function takes no parameters or one"));
    let Err(e) = try_gpu_test(
        quote!(),
        quote!(
            async fn t() {}
        ),
    ) else {
        panic!("async accepted");
    };
    assert_eq!(e.to_string(), "a #[gpu_test] function cannot be async or generic");
}

#[test]
fn elementwise_generates_the_function_its_stream_form_and_the_kernel() {
    // A valid operation: whether or not NVRTC can be loaded here, it expands.
    let out = super::try_elementwise(
        quote!("z = a * x + y"),
        quote!(
            pub fn axpy(a: f32, x: &DeviceArray<f32>, y: &DeviceArray<f32>, z: &mut DeviceArray<f32>);
        ),
    )
    .expect("expands");
    let f: syn::File = syn::parse2(out).expect("items");
    assert_eq!(params(free_fn(&f.items, "axpy")), ["a", "x", "y", "z"]);
    assert_eq!(
        params(free_fn(&f.items, "axpy_on")),
        ["stream", "a", "x", "y", "z"]
    );
    let m = quote!(#f).to_string();
    assert!(
        m.contains("\"float a, const float *x, const float *y, float *z\""),
        "{m}"
    );
    assert!(m.contains("\"z = a * x + y\""), "{m}");
    let out = super::elementwise(
        quote!("z = w"),
        quote!(
            fn f(z: &mut DeviceArray<f32>);
        ),
    )
    .to_string();
    assert!(
        out.contains("compile_error") && out.contains("the operation uses `w`"),
        "{out}"
    );
}

const CALLER: &str =
    "__device__ float twice(float v);\n__global__ void run(float *x) { x[0] = twice(x[0]); }";
const CALLEE: &str = "__device__ float twice(float v) { return 2 * v; }";

#[test]
fn linked_sources_are_parts_of_one_module() {
    let out = try_kernel(
        quote!(sources = [#CALLER, #CALLEE], check = false),
        quote!(
            fn run(x: &mut [f32]);
        ),
    )
    .expect("expands")
    .to_string();
    // Each part is named for the kernel and its place, and lists the kernels it declares.
    let first = format!(
        "SourcePart :: new (\"<inline:run_0>\" , {} , & [\"run\"])",
        quote!(#CALLER)
    );
    let second = format!(
        "SourcePart :: new (\"<inline:run_1>\" , {} , & [])",
        quote!(#CALLEE)
    );
    assert!(out.contains(&first) && out.contains(&second), "{out}");
    assert!(out.contains("ModuleSource :: linked (\"run.cu\""), "{out}");
}

#[test]
fn linked_sources_errors() {
    let attr = format!("sources = [{CALLER:?}, {CALLEE:?}], check = false");
    let (msg, at) = expand_error(&attr, "fn walk(x: &mut [f32]);");
    assert!(
        msg.contains("in any of the linked sources; they declare"),
        "{msg}"
    );
    assert_eq!(at, "walk");
    let other = "__global__ void run(int *x);";
    let (msg, _) = expand_error(
        &format!("sources = [{CALLER:?}, {other:?}], check = false"),
        "fn run(x: &mut [f32]);",
    );
    assert!(
        msg.starts_with(
            "the CUDA kernel `run` is declared as `run(float *x)` in `<inline:run_0>` (line 2) but as `run(int *x)` in `<inline:run_1>` (line 1)"
        ),
        "{msg}"
    );
    let (msg, _) = expand_error(&format!("{attr}, embed = [\"sm_90\"]"), "fn run(x: &mut [f32]);");
    assert!(msg.starts_with("`embed` is for a single source"), "{msg}");
}

/// A method of `Kernel` with its body, as text (`quote!`'s spacing).
fn method_text(items: &[syn::Item], name: &str) -> String {
    items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Impl(im) if im.trait_.is_none() => Some(&im.items),
            _ => None,
        })
        .flatten()
        .find_map(|i| match i {
            syn::ImplItem::Fn(f) if f.sig.ident == name => Some(quote!(#f).to_string()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no method `Kernel::{name}`"))
}

#[test]
fn dependent_launch_is_an_unsafe_method_beside_cooperative() {
    let f = expand(
        quote!(#AXPY, check = false),
        quote!(
            fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32);
        ),
    );
    let m = module(&f.items, "axpy");
    let sig = method(m, "dependent_launch");
    assert!(
        matches!(sig.safety, syn::Safety::Unsafe(_)),
        "the kernel's cudaGridDependencySynchronize() is its contract"
    );
    assert!(params(sig).is_empty());
    let text = method_text(m, "dependent_launch");
    assert!(text.contains("-> :: gpu_runtime :: Result < Kernel >"), "{text}");
    assert!(
        text.contains(
            "unsafe { :: gpu_runtime :: __private_v0_1 :: dependent_launch (& self . function , & self . ex) } ?"
        ),
        "{text}"
    );
    assert!(text.contains("# Safety"), "{text}");
    // A template's handle keeps its type.
    let f = expand(
        quote!(
            "template <typename T> __global__ void scale(T *x, T a) { }",
            instantiate = [f32],
            check = false
        ),
        quote!(
            fn scale<T>(x: &mut [T], a: T);
        ),
    );
    let text = method_text(module(&f.items, "scale"), "dependent_launch");
    assert!(text.contains("Result < Kernel < T > >"), "{text}");
    assert!(text.contains("_t : :: core :: marker :: PhantomData"), "{text}");
}

#[test]
fn call_future_stages_like_call_and_returns_a_future_that_keeps_the_device_copies() {
    let f = expand(
        quote!(#AXPY, check = false),
        quote!(
            fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);
        ),
    );
    let m = module(&f.items, "axpy");
    for (name, call) in [("call_future", "call"), ("call_future_on", "call_on")] {
        // Typed as `call`: the same parameters, host arrays where `call` takes them.
        assert_eq!(params(method(m, name)), params(method(m, call)), "{name}");
        let text = method_text(m, name);
        // A future borrowing the kernel and the host arrays, not the by-value arguments.
        assert!(
            text.contains(
                "-> impl :: core :: future :: Future < Output = :: gpu_runtime :: Result < () > > + '__call"
            ),
            "{text}"
        );
        assert!(text.contains("(& '__call self"), "{text}");
        assert!(
            text.contains("x : & '__call (impl :: gpu_runtime :: HostSlice < f32 >"),
            "{text}"
        );
        assert!(
            text.contains("y : & '__call mut (impl :: gpu_runtime :: HostSliceMut < f32 >"),
            "{text}"
        );
        assert!(text.contains("a : f32 ,"), "{text}");
        // Staged and launched at once, as `call` does.
        assert!(text.contains("__staging . input (& * x) ?"), "{text}");
        assert!(text.contains("__staging . input_output (& mut * y) ?"), "{text}");
        assert!(text.contains("__staging . upload () ?"), "{text}");
        // Both staged buffers are kept until the queued work has finished; the future awaits
        // the StagedCall, or returns the staging's error.
        assert!(
            text.contains("__staging . finish_future ((__d_x , __d_y ,))"),
            "{text}"
        );
        assert!(text.contains("async move { __call ? . await }"), "{text}");
        assert!(!text.contains("__staging . finish ()"), "{text}");
    }
    let text = method_text(m, "call_future");
    assert!(text.contains("Staging :: new (& self . function)"), "{text}");
    let text = method_text(m, "call_future_on");
    assert!(text.contains("staging_on (& self . function , stream)"), "{text}");
    assert!(
        text.contains("stream : & '__call :: gpu_runtime :: Stream"),
        "{text}"
    );
    // One staged argument: still a tuple, so that `keep` is one value.
    let f = expand(
        quote!("__global__ void fill(float *y, int n) { }", check = false),
        quote!(
            fn fill(#[Out] y: &mut [f32], n: i32);
        ),
    );
    let text = method_text(module(&f.items, "fill"), "call_future");
    assert!(text.contains("__staging . output (& mut * y) ?"), "{text}");
    assert!(text.contains("finish_future ((__d_y ,))"), "{text}");
    // Nothing marked: the prepared calls' results, as `call`'s.
    let f = expand(
        quote!(#AXPY, check = false),
        quote!(
            fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32);
        ),
    );
    let m = module(&f.items, "axpy");
    let text = method_text(m, "call_future");
    assert!(
        text.contains(":: core :: future :: ready (self . prepared_call (grid , block , a , x , y , n))"),
        "{text}"
    );
    assert!(!text.contains("Staging"), "{text}");
    let text = method_text(m, "call_future_on");
    assert!(
        text.contains("ready (self . prepared_async_call (grid , block , stream , a , x , y , n))"),
        "{text}"
    );
}

#[test]
fn graph_methods_record_by_value_arguments_in_the_node() {
    let f = expand(
        quote!(
            "__global__ void set(cudaGraphConditionalHandle h, float v, float *x) { }",
            check = false
        ),
        quote!(
            fn set(h: cudaGraphConditionalHandle, v: f32, x: &mut [f32]);
        ),
    );
    let m = module(&f.items, "set");
    for name in ["capture", "graph_node", "update_node"] {
        let text = method_text(m, name);
        // Each by-value slot through `graph_value`, which records a graph's condition; the
        // bound named first as `launch_on` names it, so that a bad type is one error.
        for (slot, ty, arg) in [("__p0", "cudaGraphConditionalHandle", "h"), ("__p1", "f32", "v")] {
            let made = format!(
                "let _ = :: gpu_runtime :: __private_v0_1 :: by_value :: < {ty} > ; \
                 let {slot} : {ty} = :: gpu_runtime :: __private_v0_1 :: graph_value :: < {ty} > (& mut __node , {arg}) ;"
            );
            assert!(text.contains(&made), "{name}: {text}");
        }
        // After the node exists, before its parameters are taken.
        let node = text.find("NodeArgs :: new ()").expect("the node");
        let value = text.find("graph_value").expect("graph_value");
        let params = text.find("let mut __params").expect("the parameters");
        assert!(node < value && value < params, "{name}: {text}");
    }
}

/// Every token in `tokens`, groups' delimiters and contents included: its text (a group's
/// delimiter for a group) and the source text its span points at.
fn token_texts(tokens: TokenStream) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for tree in tokens {
        let at = tree.span().source_text().unwrap_or_default();
        match tree {
            proc_macro2::TokenTree::Group(g) => {
                found.push((format!("{:?}", g.delimiter()), at));
                found.extend(token_texts(g.stream()));
            }
            other => found.push((other.to_string(), at)),
        }
    }
    found
}

/// The parameters of `sig` named `names`, each with its type's tokens.
fn param_types(sig: &syn::Signature, names: &[&str]) -> Vec<(String, TokenStream)> {
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(pt) => {
                let (pat, ty) = (&pt.pat, &pt.ty);
                let name = quote!(#pat).to_string();
                names.contains(&name.as_str()).then(|| (name, quote!(#ty)))
            }
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

#[test]
fn memory_bounds_point_at_the_parameter_types() {
    // Host data where device memory is expected (and the reverse) fails one of these bounds:
    // rustc's "required by this bound" note must point at the user's parameter, not at the
    // kernel string.
    let attr: TokenStream = "check = false, r#\"__global__ void k(const float *a, float *b, const float *c, float *d, float *e) { }\"#"
        .parse()
        .expect("tokens");
    let item: TokenStream =
        "fn k(a: &[f32], b: &mut [f32], #[In] c: &[f32], #[Out] d: &mut [f32], #[InOut] e: &mut [f32]);"
            .parse()
            .expect("tokens");
    let f: syn::File = syn::parse2(try_kernel(attr, item).expect("expands")).expect("items");
    let m = module(&f.items, "k");
    let mut sigs: Vec<(&str, &syn::Signature)> = [
        "prepared_call",
        "prepared_async_call",
        "prepared_call_shared",
        "call",
        "call_on",
    ]
    .into_iter()
    .map(|name| (name, method(m, name)))
    .collect();
    sigs.push(("the free function", free_fn(&f.items, "k")));
    // The graph methods' token bounds (GraphRead, GraphWrite) too.
    for name in ["capture", "graph_node", "update_node"] {
        sigs.push((name, method(m, name)));
    }
    for (what, sig) in sigs {
        let params = param_types(sig, &["a", "b", "c", "d", "e"]);
        assert_eq!(params.len(), 5, "{what}");
        for (name, ty) in params {
            // Every token of the bound (`&`, `impl`, `::gpu_runtime::DeviceRead`, `?Sized`, ...)
            // at the parameter's name; the element type at itself; the graph methods' lifetime
            // `'a`, the method's own, at the call site.
            for (token, at) in token_texts(ty) {
                let lifetime = at.is_empty() && (token == "'" || token == "a");
                assert!(
                    at == name || at == "f32" || lifetime,
                    "{what}, {name}: `{token}` at `{at}`"
                );
            }
        }
    }
}

#[test]
fn crate_wide_options_and_include_dirs_come_from_the_cargo_toml() {
    let dir = std::env::temp_dir().join(format!("gpu-macros-core-crate-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inc")).expect("a temporary directory");
    let inc = dir.join("inc");
    // The declaration needs both: `REAL` from the option, `KERNEL` from the header.
    std::fs::write(
        inc.join("common.cuh"),
        "#define KERNEL(name) extern \"C\" __global__ void name\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "#include \"common.cuh\"\nKERNEL(scale)(REAL *x, REAL a, int n) {}\n",
    )
    .unwrap();
    let manifest = dir.join("Cargo.toml");
    std::fs::write(
        &manifest,
        format!(
            "[package.metadata.gpu-runtime]\noptions = [\"-DREAL=double\"]\ninclude-dirs = [{:?}]\n",
            inc.display().to_string()
        ),
    )
    .unwrap();
    let defaults = crate::crate_config::read(&manifest).expect("the table");
    let file = dir.join("k.cu").display().to_string();
    let expand = |attr: TokenStream, item: TokenStream| {
        let args: crate::input::KernelArgs = syn::parse2(attr).expect("arguments");
        crate::with_defaults(args, defaults.clone(), syn::parse2(item).expect("an item"))
    };
    let out = expand(
        quote!(file = #file, options = ["-G"], check = false),
        quote!(
            fn scale(x: &mut [f64], a: f64, n: i32);
        ),
    );
    // Without the defaults the declaration is not the same (`REAL` unknown, `KERNEL` unread).
    let args: crate::input::KernelArgs = syn::parse2(quote!(file = #file, check = false)).expect("arguments");
    let bare = crate::with_defaults(
        args,
        crate::crate_config::Defaults::default(),
        syn::parse2(quote!(
            fn scale(x: &mut [f64], a: f64, n: i32);
        ))
        .expect("an item"),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.expect("expands with the defaults").to_string();
    // The crate's options first, then the attribute's; the header found through the crate's
    // include directory is embedded by the name the `#include` gives it (no `-I` of this
    // machine).
    let want = quote!(&["-DREAL=double", "-G"]).to_string();
    assert!(out.contains(&want), "{out}\nwanted {want}");
    assert!(out.contains("\"common.cuh\""), "{out}");
    assert!(!out.contains(&format!("-I{}", inc.display())), "{out}");
    // Cargo rebuilds the crate when its Cargo.toml changes (named relative to the crate).
    assert!(
        out.contains(
            &quote!(::core::include_bytes!(::core::concat!(
                ::core::env!("CARGO_MANIFEST_DIR"),
                "/Cargo.toml"
            )))
            .to_string()
        ),
        "{out}"
    );
    assert!(bare.is_err());
}
