//! Checking a Rust signature against the C declaration of its `__global__` function.
//!
//! Every mismatch becomes a `syn::Error` spanned at the offending Rust token and quoting the C
//! parameter; all of them are reported at once.

use gpu_cuda_source::{CParam, CType, KernelDecl, Scalar};
use quote::ToTokens;

use crate::input::{last_ident, Direction, RustArg, RustKernel, RustType};

/// Collects errors so that one build reports every mismatch.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }
    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

fn rust_text(ty: &syn::Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" :: ", "::")
        .replace("& ", "&")
        .replace("[ ", "[")
        .replace(" ]", "]")
        .replace(" < ", "<")
        .replace(" >", ">")
}

fn c_type_text(ty: &CType) -> String {
    match ty {
        CType::Scalar(s) => s.rust_type().to_owned(),
        CType::Named(n) => n.clone(),
        CType::Void => "void".to_owned(),
        CType::Pointer {
            pointee,
            pointee_const,
        } => {
            format!(
                "{}{}*",
                if *pointee_const { "const " } else { "" },
                c_type_text(pointee)
            )
        }
    }
}

/// The Rust spelling that matches a C parameter type, for "expected …" hints.
/// The Rust name for a named C type: `gpu_runtime::types::Float4` for `float4`, else the same name.
fn named_rust(c_name: &str) -> String {
    crate::vector::rust_name(c_name).map_or_else(|| c_name.to_owned(), |r| format!("gpu_runtime::types::{r}"))
}

fn expected_rust(ty: &CType) -> String {
    match ty {
        CType::Scalar(s) => s.rust_type().to_owned(),
        CType::Named(n) => named_rust(n),
        CType::Void => "()".to_owned(),
        CType::Pointer {
            pointee,
            pointee_const,
        } => {
            let elem = match &**pointee {
                CType::Void => "T".to_owned(),
                CType::Pointer { .. } => c_type_text(pointee),
                elem => expected_rust(elem),
            };
            if *pointee_const {
                format!("&[{elem}]")
            } else {
                format!("&mut [{elem}]")
            }
        }
    }
}

/// Why the one Rust type for a C type is not the one the user wrote, where that is not obvious:
/// appended to "expected `…` for C `…`, found `…`".
fn mismatch_note(c: &CType, param: &CParam, found: &syn::Type) -> String {
    let words: Vec<&str> = param
        .text
        .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    let found = last_ident(found).unwrap_or_default();
    match c {
        // A vector or complex type has one Rust type, named in the message already.
        CType::Named(n) if crate::vector::rust_name(n).is_some() => String::new(),
        CType::Named(n) => format!(
            ": a C struct is passed as the Rust type of the same name, `{n}`, which must be \
             `#[repr(C)]` with the same fields and implement `gpu_runtime::DeviceRepr`"
        ),
        CType::Scalar(s) => {
            let Some(found) = Scalar::from_rust_name(&found) else {
                return String::new();
            };
            match s {
                Scalar::I8 if has("char") && !has("signed") && !has("unsigned") => {
                    "; plain C `char` is signed in CUDA device code (use `unsigned char` in C for `u8`)"
                        .to_owned()
                }
                Scalar::I64 | Scalar::U64
                    if has("long") && words.iter().filter(|w| **w == "long").count() == 1 =>
                {
                    "; C `long` is 64 bits wide in CUDA device code (LP64)".to_owned()
                }
                Scalar::Usize if found.size() == s.size() => {
                    "; C `size_t` and `uintptr_t` map to `usize`, not to a fixed-width integer".to_owned()
                }
                Scalar::Isize if found.size() == s.size() => {
                    "; C `ptrdiff_t`, `ssize_t` and `intptr_t` map to `isize`, not to a fixed-width integer"
                        .to_owned()
                }
                _ if found.size() != s.size() => format!(
                    " (`{}` is {} byte{}, `{}` is {})",
                    s.rust_type(),
                    s.size(),
                    if s.size() == 1 { "" } else { "s" },
                    found.rust_type(),
                    found.size()
                ),
                _ => String::new(),
            }
        }
        _ => String::new(),
    }
}

/// Checks one element or by-value type: `rust` must be the one Rust type for `c`.
fn types_match(c: &CType, rust: &syn::Type) -> bool {
    let Some(ident) = last_ident(rust) else {
        return false;
    };
    match c {
        CType::Scalar(s) => Scalar::from_rust_name(&ident) == Some(*s) && rust_path_is_plain_scalar(rust, *s),
        // A struct matches a Rust type of the same name that is not a scalar (its layout is the
        // user's promise through `DeviceRepr`); a CUDA vector type matches its Rust name
        // (`float4` is `Float4`); CUDA's texture and surface object handles are gpu_runtime's
        // TextureObject and SurfaceObject.
        CType::Named(n) => {
            Scalar::from_rust_name(&ident).is_none()
                && match crate::vector::rust_name(n) {
                    Some(v) => ident == v,
                    None => {
                        ident == *n
                            || (n == "cudaTextureObject_t" && ident == "TextureObject")
                            || (n == "cudaSurfaceObject_t" && ident == "SurfaceObject")
                    }
                }
        }
        // `void*` carries no element type: any element type is accepted.
        CType::Void => true,
        CType::Pointer { .. } => false,
    }
}

/// `f32` must be written `f32` (or `core::primitive::f32`), `half::f16` may be any path ending
/// in `f16`.
fn rust_path_is_plain_scalar(rust: &syn::Type, s: Scalar) -> bool {
    match s {
        Scalar::F16 | Scalar::Bf16 => true,
        _ => match rust {
            syn::Type::Path(p) => {
                p.path.segments.len() == 1
                    || p.path
                        .segments
                        .iter()
                        .rev()
                        .nth(1)
                        .is_some_and(|seg| seg.ident == "primitive")
            }
            _ => true,
        },
    }
}

/// The C parameters of `d` as written, joined by commas.
pub(crate) fn param_list(d: &KernelDecl) -> String {
    d.params
        .iter()
        .map(|p| p.text.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks `kernel`'s Rust arguments against the C declaration `decl`.
pub fn check_kernel(kernel: &RustKernel, decl: &KernelDecl) -> syn::Result<()> {
    let mut errors = Errors::default();
    let c_list = param_list(decl);
    if kernel.args.len() != decl.params.len() {
        let msg = format!(
            "the CUDA kernel `{}` takes {} parameter{} (`{}`) but this signature has {}",
            decl.name,
            decl.params.len(),
            if decl.params.len() == 1 { "" } else { "s" },
            c_list,
            kernel.args.len()
        );
        if kernel.args.len() > decl.params.len() {
            for extra in &kernel.args[decl.params.len()..] {
                // Spanned from the name to the end of the type (`n: i32`); `Span::join` would
                // only do that on nightly.
                let (name, ty) = (&extra.name, &extra.ty);
                errors.push(syn::Error::new_spanned(
                    quote::quote!(#name #ty),
                    format!("{msg}: `{}` has no C parameter", extra.name),
                ));
            }
        } else {
            let missing = decl.params[kernel.args.len()..]
                .iter()
                .map(|p| format!("`{}`", p.text))
                .collect::<Vec<_>>();
            errors.push(syn::Error::new(
                kernel.paren_span,
                format!("{msg}: missing {}", missing.join(", ")),
            ));
        }
    }
    for (arg, param) in kernel.args.iter().zip(&decl.params) {
        if let Err(e) = check_arg(arg, param) {
            errors.push(e);
        }
    }
    errors.finish()
}

fn check_arg(arg: &RustArg, param: &CParam) -> syn::Result<()> {
    let c = &param.text;
    // `Option<&[T]>` for a pointer that may be null: the same checks, said of the Option.
    let expected = |ty: &CType| {
        if arg.nullable {
            format!("Option<{}>", expected_rust(ty))
        } else {
            expected_rust(ty)
        }
    };
    match (&param.ty, &arg.kind) {
        (
            CType::Pointer {
                pointee,
                pointee_const,
            },
            RustType::Slice { elem, mutable },
        ) => {
            if *pointee_const && *mutable {
                return Err(syn::Error::new_spanned(
                    &arg.ty,
                    format!(
                        "C `{c}` points to const data, which the kernel cannot write: expected `{}`",
                        expected(&param.ty)
                    ),
                ));
            }
            if let (true, Some(ro)) = (*pointee_const, &arg.read_only) {
                return Err(syn::Error::new_spanned(
                    ro,
                    format!("C `{c}` already points to const data: remove #[read_only], which is for pointers C leaves writable"),
                ));
            }
            if !*pointee_const && !*mutable && arg.read_only.is_none() {
                return Err(syn::Error::new_spanned(
                    &arg.ty,
                    format!(
                        "C `{c}` points to writable data: expected `{}` (if the kernel only reads it, declare it `const` in C, or mark the argument `#[read_only] {}: {}`)",
                        expected(&param.ty),
                        arg.name,
                        rust_text(&arg.ty)
                    ),
                ));
            }
            if let CType::Pointer { .. } = &**pointee {
                return Err(syn::Error::new_spanned(
                    &arg.ty,
                    format!("C `{c}` is a pointer to a pointer, which cannot be passed from Rust"),
                ));
            }
            if !types_match(pointee, elem) {
                return Err(syn::Error::new_spanned(
                    elem,
                    format!(
                        "expected `{}` for C `{c}`, found `{}`{}",
                        expected(&param.ty),
                        rust_text(&arg.ty),
                        mismatch_note(pointee, param, elem)
                    ),
                ));
            }
            if let CType::Scalar(Scalar::Bool) = &**pointee {
                return Err(syn::Error::new_spanned(
                    elem,
                    format!(
                        "C `{c}` points to `bool`s, which cannot be kept in device memory: the device \
                         may write bytes other than 0 and 1, which are not valid Rust `bool`s \
                         (`bool` is not `gpu_runtime::DeviceRepr`); use `{}` in C and `{}` in Rust",
                        if *pointee_const {
                            "const unsigned char*"
                        } else {
                            "unsigned char*"
                        },
                        if *pointee_const { "&[u8]" } else { "&mut [u8]" },
                    ),
                ));
            }
            if let Some((dir, attr)) = &arg.direction {
                if *pointee_const && dir.copies_out() {
                    return Err(syn::Error::new_spanned(
                        attr,
                        format!(
                            "#[{}] on C `{c}`, which points to const data the kernel cannot write: use #[In]",
                            dir.name()
                        ),
                    ));
                }
            }
            Ok(())
        }
        (CType::Pointer { .. }, RustType::Value(_)) => Err(syn::Error::new_spanned(
            &arg.ty,
            format!(
                "C `{c}` is a pointer: expected `{}`, found `{}`",
                expected_rust(&param.ty),
                rust_text(&arg.ty)
            ),
        )),
        (_, RustType::Slice { .. }) => Err(syn::Error::new_spanned(
            &arg.ty,
            format!(
                "C `{c}` is passed by value: expected `{}`, found `{}`",
                expected_rust(&param.ty),
                rust_text(&arg.ty)
            ),
        )),
        (cty, RustType::Value(ty)) => {
            if let Some((dir, attr)) = &arg.direction {
                return Err(syn::Error::new_spanned(
                    attr,
                    format!(
                        "#[{}] applies to pointer arguments only: C `{c}` is passed by value",
                        dir.name()
                    ),
                ));
            }
            if types_match(cty, ty) {
                Ok(())
            } else {
                Err(syn::Error::new_spanned(
                    ty,
                    format!(
                        "expected `{}` for C `{c}`, found `{}`{}",
                        expected_rust(cty),
                        rust_text(ty),
                        mismatch_note(cty, param, ty)
                    ),
                ))
            }
        }
    }
}

/// True when the argument is a pointer whose convenience-call form takes host data.
pub fn direction_of(arg: &RustArg) -> Option<Direction> {
    arg.direction.as_ref().map(|(d, _)| *d)
}

#[cfg(test)]
mod tests {
    use super::check_kernel;
    use crate::input::Item;

    /// Each error of checking the Rust declaration `rust` against the kernel of the same name
    /// in `c`: its message and the Rust text it points at.
    fn errors(c: &str, rust: &str) -> Vec<(String, String)> {
        let Ok(Item::Fn(kernel)) = syn::parse_str::<Item>(rust) else {
            panic!("not a kernel declaration: {rust}");
        };
        let decl = gpu_cuda_source::find_kernel(c, &kernel.name.to_string()).expect("the C declaration");
        match check_kernel(&kernel, &decl) {
            Ok(()) => Vec::new(),
            Err(e) => e
                .into_iter()
                .map(|e| (e.to_string(), e.span().source_text().unwrap_or_default()))
                .collect(),
        }
    }

    /// The one error of the check: message and target.
    fn error(c: &str, rust: &str) -> (String, String) {
        let mut all = errors(c, rust);
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    const AXPY: &str = "__global__ void axpy(float a, const float *x, float *y, int n) { }";

    #[test]
    fn a_matching_signature_passes() {
        assert_eq!(
            errors(AXPY, "fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32);"),
            Vec::new()
        );
    }

    #[test]
    fn an_extra_rust_argument_points_at_it() {
        let (msg, at) = error(AXPY, "fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32, m: u32);");
        assert_eq!(
            msg,
            "the CUDA kernel `axpy` takes 4 parameters (`float a, const float *x, float *y, int n`) \
             but this signature has 5: `m` has no C parameter"
        );
        assert_eq!(at, "m: u32");
    }

    #[test]
    fn missing_arguments_point_at_the_parameter_list() {
        let (msg, at) = error(AXPY, "fn axpy(a: f32, x: &[f32]);");
        assert!(
            msg.ends_with("but this signature has 2: missing `float *y`, `int n`"),
            "{msg}"
        );
        assert_eq!(at, "(a: f32, x: &[f32])");
    }

    #[test]
    fn a_scalar_of_another_width_says_both_sizes() {
        let (msg, at) = error(AXPY, "fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i64);");
        assert_eq!(
            msg,
            "expected `i32` for C `int n`, found `i64` (`i32` is 4 bytes, `i64` is 8)"
        );
        assert_eq!(at, "i64");
    }

    #[test]
    fn a_scalar_of_the_other_signedness_is_refused() {
        let (msg, at) = error(AXPY, "fn axpy(a: f32, x: &[f32], y: &mut [f32], n: u32);");
        assert_eq!(msg, "expected `i32` for C `int n`, found `u32`");
        assert_eq!(at, "u32");
    }

    #[test]
    fn c_long_and_plain_char_get_a_note() {
        let c = "__global__ void k(long n, char c) { }";
        let all = errors(c, "fn k(n: i32, c: u8);");
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all[0]
            .0
            .ends_with("; C `long` is 64 bits wide in CUDA device code (LP64)"));
        assert!(all[1].0.contains("plain C `char` is signed in CUDA device code"));
        assert_eq!((all[0].1.as_str(), all[1].1.as_str()), ("i32", "u8"));
    }

    #[test]
    fn size_t_wants_usize() {
        let (msg, _) = error("__global__ void k(size_t n) { }", "fn k(n: u64);");
        assert!(msg.contains("C `size_t` and `uintptr_t` map to `usize`"), "{msg}");
        assert_eq!(
            errors("__global__ void k(size_t n) { }", "fn k(n: usize);"),
            Vec::new()
        );
    }

    #[test]
    fn a_value_for_a_pointer_is_refused() {
        let (msg, at) = error(AXPY, "fn axpy(a: f32, x: f32, y: &mut [f32], n: i32);");
        assert_eq!(
            msg,
            "C `const float *x` is a pointer: expected `&[f32]`, found `f32`"
        );
        assert_eq!(at, "f32");
    }

    #[test]
    fn a_slice_for_a_value_is_refused() {
        let (msg, at) = error(AXPY, "fn axpy(a: &[f32], x: &[f32], y: &mut [f32], n: i32);");
        assert_eq!(
            msg,
            "C `float a` is passed by value: expected `f32`, found `&[f32]`"
        );
        assert_eq!(at, "&[f32]");
    }

    #[test]
    fn writing_through_a_const_pointer_is_refused() {
        let (msg, at) = error(AXPY, "fn axpy(a: f32, x: &mut [f32], y: &mut [f32], n: i32);");
        assert_eq!(
            msg,
            "C `const float *x` points to const data, which the kernel cannot write: expected `&[f32]`"
        );
        assert_eq!(at, "&mut [f32]");
    }

    #[test]
    fn a_shared_slice_for_a_writable_pointer_needs_read_only() {
        let (msg, at) = error(AXPY, "fn axpy(a: f32, x: &[f32], y: &[f32], n: i32);");
        assert!(
            msg.starts_with("C `float *y` points to writable data: expected `&mut [f32]`"),
            "{msg}"
        );
        assert!(msg.contains("`#[read_only] y: &[f32]`"), "{msg}");
        assert_eq!(at, "&[f32]");
        assert_eq!(
            errors(
                AXPY,
                "fn axpy(a: f32, x: &[f32], #[read_only] y: &[f32], n: i32);"
            ),
            Vec::new()
        );
    }

    #[test]
    fn read_only_on_a_const_pointer_points_at_the_attribute() {
        let (msg, at) = error(
            AXPY,
            "fn axpy(a: f32, #[read_only] x: &[f32], y: &mut [f32], n: i32);",
        );
        assert!(
            msg.starts_with("C `const float *x` already points to const data"),
            "{msg}"
        );
        assert_eq!(at, "#[read_only]");
    }

    #[test]
    fn an_element_type_mismatch_points_at_the_element() {
        let (msg, at) = error(AXPY, "fn axpy(a: f32, x: &[f64], y: &mut [f32], n: i32);");
        assert_eq!(
            msg,
            "expected `&[f32]` for C `const float *x`, found `&[f64]` (`f32` is 4 bytes, `f64` is 8)"
        );
        assert_eq!(at, "f64");
    }

    #[test]
    fn out_on_a_const_pointer_and_in_on_a_value_point_at_the_attribute() {
        let all = errors(
            AXPY,
            "fn axpy(#[In] a: f32, #[Out] x: &[f32], y: &mut [f32], n: i32);",
        );
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(
            all[0],
            (
                "#[In] applies to pointer arguments only: C `float a` is passed by value".to_owned(),
                "#[In]".to_owned()
            )
        );
        assert_eq!(
            all[1],
            (
                "#[Out] on C `const float *x`, which points to const data the kernel cannot write: use #[In]"
                    .to_owned(),
                "#[Out]".to_owned()
            )
        );
    }

    #[test]
    fn pointers_to_bool_are_refused() {
        // `float **p` is refused earlier, by gpu-cuda-source (see the crate's tests of `decl_error`).
        let (msg, at) = error("__global__ void k(bool *b) { }", "fn k(b: &mut [bool]);");
        assert!(msg.starts_with("C `bool *b` points to `bool`s"), "{msg}");
        assert!(
            msg.ends_with("use `unsigned char*` in C and `&mut [u8]` in Rust"),
            "{msg}"
        );
        assert_eq!(at, "bool");
    }

    #[test]
    fn vector_and_struct_types_match_by_name() {
        let c = "struct Params { float a; };\n__global__ void k(float4 v, Params p, const float2 *w) { }";
        assert_eq!(errors(c, "fn k(v: Float4, p: Params, w: &[Float2]);"), Vec::new());
        let all = errors(c, "fn k(v: Float2, p: Other, w: &[f32]);");
        assert_eq!(all.len(), 3, "{all:?}");
        assert_eq!(
            all[0].0,
            "expected `gpu_runtime::types::Float4` for C `float4 v`, found `Float2`"
        );
        assert!(
            all[1].0.starts_with(
                "expected `Params` for C `Params p`, found `Other`: a C struct is passed as the Rust type of the same name"
            ),
            "{}",
            all[1].0
        );
        assert_eq!(
            all[2].0,
            "expected `&[gpu_runtime::types::Float2]` for C `const float2 *w`, found `&[f32]`"
        );
    }

    #[test]
    fn a_scalar_path_must_be_the_primitive() {
        let c = "__global__ void k(float a) { }";
        assert_eq!(errors(c, "fn k(a: core::primitive::f32);"), Vec::new());
        assert_eq!(error(c, "fn k(a: my::f32);").1, "my::f32");
    }

    #[test]
    fn nullable_pointers_are_options_of_slices() {
        let c = "__global__ void k(const size_t *info, const float *inp, float *out, int n) { }";
        assert_eq!(
            errors(
                c,
                "fn k(info: Option<&[usize]>, inp: core::option::Option<&[f32]>, out: Option<&mut [f32]>, n: i32);"
            ),
            Vec::new()
        );
        let all = errors(
            c,
            "fn k(info: Option<&mut [usize]>, inp: Option<&[f64]>, out: Option<&[f32]>, n: i32);",
        );
        let msgs: Vec<&str> = all.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "C `const size_t *info` points to const data, which the kernel cannot write: expected `Option<&[usize]>`",
                "expected `Option<&[f32]>` for C `const float *inp`, found `Option<&[f64]>` (`f32` is 4 bytes, `f64` is 8)",
                "C `float *out` points to writable data: expected `Option<&mut [f32]>` (if the kernel only reads it, declare it `const` in C, or mark the argument `#[read_only] out: Option<&[f32]>`)",
            ]
        );
        assert_eq!(all[1].1, "f64");
        // A value is no pointer, whether or not it may be absent.
        let (msg, at) = error(
            c,
            "fn k(info: &[usize], inp: &[f32], out: &mut [f32], n: Option<&[i32]>);",
        );
        assert_eq!(
            msg,
            "C `int n` is passed by value: expected `i32`, found `Option<&[i32]>`"
        );
        assert_eq!(at, "Option<&[i32]>");
    }

    #[test]
    fn fp8_types_are_their_rust_types() {
        let c = "__global__ void k(const __nv_fp8_e4m3 *x, __nv_fp8_e5m2 *y, __nv_fp8x2_e4m3 p, __nv_fp8_storage_t raw) { }";
        assert_eq!(
            errors(
                c,
                "fn k(x: &[Fp8E4M3], y: &mut [gpu_runtime::types::Fp8E5M2], p: Fp8x2E4M3, raw: u8);"
            ),
            Vec::new()
        );
        let (msg, at) = error(c, "fn k(x: &[u8], y: &mut [Fp8E5M2], p: Fp8x2E4M3, raw: u8);");
        assert_eq!(
            msg,
            "expected `&[gpu_runtime::types::Fp8E4M3]` for C `const __nv_fp8_e4m3 *x`, found `&[u8]`"
        );
        assert_eq!(at, "u8");
    }

    #[test]
    fn every_mismatch_is_reported_at_once() {
        let all = errors(AXPY, "fn axpy(a: f64, x: &mut [f32], y: &[f32], n: u8);");
        let at: Vec<&str> = all.iter().map(|(_, at)| at.as_str()).collect();
        assert_eq!(at, ["f64", "&mut [f32]", "&[f32]", "u8"]);
    }
}
