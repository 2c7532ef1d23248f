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
        None => match crate::vector::c_name(&ident) {
            // `Float2` is instantiated as `float2`.
            Some(c) => Ok((c.clone(), CType::Named(c))),
            None => Ok((ident.clone(), CType::Named(ident))),
        },
    }
}

/// Replaces the CUDA C names in an `instantiate` list by their Rust types, in place: `float` is
/// `f32`, `uint` is `u32`, `float2` and `cuFloatComplex` are `gpu_runtime::types::Float2`,
/// `half` is `gpu_runtime::half::f16`. Rust names and struct names are left as they are. A
/// name shaped like a CUDA vector type that CUDA does not have (`float5`) is an error.
pub fn rust_types(list: &mut [Type]) -> syn::Result<()> {
    let mut errors = crate::check::Errors::default();
    for ty in list.iter_mut() {
        match cuda_name_to_rust(ty) {
            Ok(Some(rust)) => *ty = rust,
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    errors.finish()
}

/// The Rust type for `ty` when it is a single CUDA C name, else `None`.
fn cuda_name_to_rust(ty: &Type) -> syn::Result<Option<Type>> {
    let Type::Path(p) = ty else { return Ok(None) };
    let Some(ident) = p.path.get_ident().filter(|_| p.qself.is_none()) else {
        return Ok(None);
    };
    let name = ident.to_string();
    if Scalar::from_rust_name(&name).is_some() || crate::vector::c_name(&name).is_some() {
        return Ok(None);
    }
    let span = ident.span();
    let rust = match gpu_cdecl::parse_type(&name) {
        Ok(CType::Scalar(Scalar::F16)) => quote::quote_spanned!(span=> ::gpu_runtime::half::f16),
        Ok(CType::Scalar(Scalar::Bf16)) => quote::quote_spanned!(span=> ::gpu_runtime::half::bf16),
        Ok(CType::Scalar(s)) => {
            let r = Ident::new(s.rust_type(), span);
            quote::quote_spanned!(span=> #r)
        }
        Ok(CType::Named(c)) => match crate::vector::rust_name(&c) {
            Some(v) => {
                let r = Ident::new(&v, span);
                quote::quote_spanned!(span=> ::gpu_runtime::types::#r)
            }
            None => match crate::vector::misnamed_family(&c) {
                Some(family) => return Err(unknown_vector(ty, &c, family)),
                // A struct: the Rust type of the same name.
                None => return Ok(None),
            },
        },
        _ => return Ok(None),
    };
    syn::parse2(rust).map(Some)
}

fn unknown_vector(ty: &Type, name: &str, family: &str) -> syn::Error {
    let have = match family.trim_start_matches("__") {
        "half" => "`__half2` (`gpu_runtime::types::Half2`)".to_owned(),
        _ => {
            let rust = crate::vector::rust_name(&format!("{family}1")).unwrap_or_default();
            let rust = rust.trim_end_matches('1');
            format!("`{family}1` to `{family}4` (`gpu_runtime::types::{rust}1` to `{rust}4`)")
        }
    };
    syn::Error::new_spanned(
        ty,
        format!("`{name}` is not a CUDA vector type: CUDA's `{family}` vectors are {have}"),
    )
}

fn subst_type(ty: &Type, param: &Ident, with: &Type) -> Type {
    match ty {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident(param) => with.clone(),
        // `Option<&[T]>`: inside the generic arguments.
        Type::Path(p) => {
            let mut p = p.clone();
            for seg in &mut p.path.segments {
                if let syn::PathArguments::AngleBracketed(a) = &mut seg.arguments {
                    for arg in &mut a.args {
                        if let syn::GenericArgument::Type(t) = arg {
                            *t = subst_type(t, param, with);
                        }
                    }
                }
            }
            Type::Path(p)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: &str) -> Type {
        syn::parse_str(s).unwrap_or_else(|e| panic!("`{s}`: {e}"))
    }

    fn text(t: &Type) -> String {
        t.to_token_stream().to_string()
    }

    #[test]
    fn template_arguments_are_spelled_in_cpp() {
        let spell = |s: &str| c_spelling(&ty(s)).map(|(c, _)| c).map_err(|e| e.to_string());
        assert_eq!(spell("f32").as_deref(), Ok("float"));
        assert_eq!(spell("u64").as_deref(), Ok("unsigned long long"));
        assert_eq!(spell("gpu_runtime::types::Float2").as_deref(), Ok("float2"));
        assert_eq!(spell("Params").as_deref(), Ok("Params"));
        assert!(spell("bool").is_err_and(|e| e.starts_with("`bool` cannot instantiate a kernel template")));
        assert!(spell("Vec<f32>").is_err_and(|e| e.starts_with("`Vec<f32>` cannot instantiate")));
        assert!(spell("&f32").is_err());
    }

    #[test]
    fn cuda_names_in_instantiate_become_rust_types() {
        let mut list = vec![
            ty("float"),
            ty("uint"),
            ty("float2"),
            ty("half"),
            ty("f64"),
            ty("Params"),
        ];
        rust_types(&mut list).expect("all are types");
        let texts: Vec<String> = list.iter().map(text).collect();
        assert_eq!(
            texts,
            [
                "f32",
                "u32",
                ":: gpu_runtime :: types :: Float2",
                ":: gpu_runtime :: half :: f16",
                "f64",
                "Params"
            ]
        );
        let mut bad = vec![ty("float5"), ty("int0")];
        let Err(e) = rust_types(&mut bad) else {
            panic!("`float5` was accepted");
        };
        let msgs: Vec<String> = e.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs,
            [
                "`float5` is not a CUDA vector type: CUDA's `float` vectors are `float1` to `float4` \
                 (`gpu_runtime::types::Float1` to `Float4`)",
                "`int0` is not a CUDA vector type: CUDA's `int` vectors are `int1` to `int4` \
                 (`gpu_runtime::types::Int1` to `Int4`)",
            ]
        );
    }

    #[test]
    fn substitution_reaches_slices_and_values_on_both_sides() {
        let Ok(crate::input::Item::Fn(k)) = syn::parse_str("fn scale<T>(x: &mut [T], a: T, n: i32);") else {
            panic!("a kernel");
        };
        let t = k.generic.clone().expect("generic");
        let k = substitute(&k, &t, &ty("f64"));
        assert!(k.generic.is_none());
        let types: Vec<String> = k.args.iter().map(|a| text(&a.ty)).collect();
        assert_eq!(types, ["& mut [f64]", "f64", "i32"]);
        assert!(matches!(&k.args[0].kind, RustType::Slice { elem, mutable: true } if text(elem) == "f64"));
        let decl = gpu_cdecl::find_kernel(
            "template <typename T> __global__ void scale(T *x, T a, int n) { }",
            "scale",
        )
        .expect("the template");
        let d = instantiate_decl(&decl, "T", &CType::Scalar(Scalar::F64));
        assert!(
            matches!(&d.params[0].ty, CType::Pointer { pointee, pointee_const: false } if **pointee == CType::Scalar(Scalar::F64))
        );
        assert_eq!(d.params[1].ty, CType::Scalar(Scalar::F64));
        assert_eq!(d.params[2].ty, CType::Scalar(Scalar::I32));
        // The substituted pair checks.
        crate::check::check_kernel(&k, &d).expect("matches");
    }
}
