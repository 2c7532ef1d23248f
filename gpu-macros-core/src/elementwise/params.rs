//! The fn's arguments: each one's name, element type (Rust and C) and role (a scalar, an
//! array read, an array written), read from the signature; and the C argument list the
//! run-time kernel is declared with.

use quote::quote;

use gpu_cdecl::elementwise::Role;

use crate::elementwise::c_words::is_c_word;

/// One argument of the fn, as the macro read it.
pub(super) struct Param {
    pub(super) name: syn::Ident,
    /// The element type as written (`f32`), and its C name.
    pub(super) elem: syn::Type,
    pub(super) c_type: &'static str,
    pub(super) role: Role,
    /// The argument's type, where errors about how it is taken point.
    pub(super) ty: syn::Type,
}

impl Param {
    /// The name in C: a raw identifier (`r#type`) without its `r#`.
    pub(super) fn c_name(&self) -> String {
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

pub(super) fn read_param(arg: &syn::FnArg) -> syn::Result<Param> {
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

/// The C argument list the run-time kernel is declared with.
pub(super) fn c_arguments(params: &[Param]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::test_support::{params, sig, AXPY};

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
}
