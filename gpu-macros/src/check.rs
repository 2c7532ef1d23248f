//! Checking a Rust signature against the C declaration of its `__global__` function.
//!
//! Every mismatch becomes a `syn::Error` spanned at the offending Rust token and quoting the C
//! parameter; all of them are reported at once.

use gpu_cdecl::{CParam, CType, KernelDecl, Scalar};
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
    crate::vector::rust_name(c_name).map_or_else(|| c_name.to_owned(), |r| format!("gpu_runtime::{r}"))
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
                CType::Scalar(s) => s.rust_type().to_owned(),
                CType::Named(n) => named_rust(n),
                CType::Void => "T".to_owned(),
                other => c_type_text(other),
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

/// Checks `kernel`'s Rust arguments against the C declaration `decl`.
pub fn check_kernel(kernel: &RustKernel, decl: &KernelDecl) -> syn::Result<()> {
    let mut errors = Errors::default();
    let c_list = decl
        .params
        .iter()
        .map(|p| p.text.as_str())
        .collect::<Vec<_>>()
        .join(", ");
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
                        expected_rust(&param.ty)
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
                        expected_rust(&param.ty),
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
                        expected_rust(&param.ty),
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
