//! Kernel templates: `#[kernel(SRC, instantiate = [f32, f64])] fn scale<T>(…);` binds the C++
//! `template <typename T> __global__ void scale(…)` once per listed type, through NVRTC name
//! expressions (`scale<float>`), each instantiation checked like a plain kernel.

use gpu_cdecl::{CParam, CType, KernelDecl, Scalar};
use quote::ToTokens;
use syn::{Ident, Type};

use crate::input::{last_ident, RustKernel, RustType};

/// The C++ spelling of a Rust type used as a template argument: `float` for `f32`, `Params`
/// for a `#[repr(C)]` struct `Params`.
pub fn c_spelling(ty: &Type) -> syn::Result<(String, CType)> {
    let bad = || {
        syn::Error::new_spanned(
            ty,
            format!(
                "`{}` cannot instantiate a CUDA kernel template: use a scalar (`f32`, `i32`, `u64`, …) \
                 or a `#[repr(C)]` struct named like its C counterpart",
                ty.to_token_stream().to_string().replace(' ', "")
            ),
        )
    };
    let Type::Path(p) = ty else { return Err(bad()) };
    if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_empty()) {
        return Err(bad());
    }
    let ident = last_ident(ty).ok_or_else(bad)?;
    match Scalar::from_rust_name(&ident) {
        Some(Scalar::Bool) => Err(syn::Error::new_spanned(
            ty,
            "`bool` cannot instantiate a kernel template here: buffers of `bool` cannot be read back \
             safely; use `u8`",
        )),
        Some(s) => Ok((s.c_name().to_owned(), CType::Scalar(s))),
        None => Ok((ident.clone(), CType::Named(ident))),
    }
}

fn subst_type(ty: &Type, param: &Ident, with: &Type) -> Type {
    match ty {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident(param) => with.clone(),
        Type::Reference(r) => {
            let mut r = r.clone();
            r.elem = Box::new(subst_type(&r.elem, param, with));
            Type::Reference(r)
        }
        Type::Slice(s) => {
            let mut s = s.clone();
            s.elem = Box::new(subst_type(&s.elem, param, with));
            Type::Slice(s)
        }
        Type::Paren(p) => subst_type(&p.elem, param, with),
        Type::Group(g) => subst_type(&g.elem, param, with),
        other => other.clone(),
    }
}

/// The kernel with its type parameter replaced by `with`, spans kept.
pub fn substitute(kernel: &RustKernel, param: &Ident, with: &Type) -> RustKernel {
    let mut k = kernel.clone();
    k.generic = None;
    for a in &mut k.args {
        a.ty = subst_type(&a.ty, param, with);
        a.kind = match &a.kind {
            RustType::Slice { elem, mutable } => RustType::Slice {
                elem: subst_type(elem, param, with),
                mutable: *mutable,
            },
            RustType::Value(t) => RustType::Value(subst_type(t, param, with)),
        };
    }
    k
}

fn subst_c(ty: &CType, param: &str, with: &CType) -> CType {
    match ty {
        CType::Named(n) if n == param => with.clone(),
        CType::Pointer {
            pointee,
            pointee_const,
        } => CType::Pointer {
            pointee: Box::new(subst_c(pointee, param, with)),
            pointee_const: *pointee_const,
        },
        other => other.clone(),
    }
}

/// The C declaration with the template parameter named like the Rust one replaced by `with`.
pub fn instantiate_decl(decl: &KernelDecl, param: &str, with: &CType) -> KernelDecl {
    let mut d = decl.clone();
    d.params = decl
        .params
        .iter()
        .map(|p| CParam {
            ty: subst_c(&p.ty, param, with),
            ..p.clone()
        })
        .collect();
    d
}
