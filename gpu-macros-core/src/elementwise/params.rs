//! The fn's arguments: each one's name, element type (Rust and C) and role (a scalar, an
//! array read, an array written), read from the signature; and the C argument list the
//! run-time kernel is declared with.

use quote::quote;

use gpu_cuda_source::elementwise::Role;
use gpu_cuda_source::Scalar;

use crate::elementwise::c_words::is_c_word;

/// One argument of the fn, as the macro read it.
pub(crate) struct Param {
    pub(crate) name: syn::Ident,
    /// The element type as written (`f32`, `half::f16`, `Float3`), its scalar (a vector
    /// type's component type: what decides the CUDA headers the kernel includes), and its C
    /// name (`float`, `float3`).
    pub(crate) elem: syn::Type,
    pub(crate) scalar: Scalar,
    pub(crate) c_type: &'static str,
    /// A CUDA vector type (`Float3`), read by the name of `gpu_runtime::types`' struct.
    pub(crate) vector: bool,
    /// A complex type (`Complex32`, `Complex64`): its scalar is its parts' type, and the
    /// kernel includes `<gpu_runtime/complex.h>`.
    pub(crate) complex: bool,
    pub(crate) role: Role,
    /// The argument's type, where errors about how it is taken point.
    pub(crate) ty: syn::Type,
}

impl Param {
    /// The name in C: a raw identifier (`r#type`) without its `r#`.
    pub(crate) fn c_name(&self) -> String {
        let n = self.name.to_string();
        n.strip_prefix("r#").map_or_else(|| n.clone(), str::to_owned)
    }
}

/// The array types an argument may be written as; the element type is their first type
/// argument. Every one means the same: any array or view of that element type.
const ARRAY_TYPES: [&str; 4] = [
    "DeviceArray",
    "DeviceArrayView",
    "DeviceArrayViewMut",
    "PooledArray",
];

/// The complex element types by the last segment of their path (`types::Complex32`), with
/// their parts' scalar and their C name (`<gpu_runtime/complex.h>`'s, as the run time
/// declares them).
const COMPLEX: [(&str, Scalar, &str); 2] = [
    ("Complex32", Scalar::F32, "gpu_runtime::complex<float>"),
    ("Complex64", Scalar::F64, "gpu_runtime::complex<double>"),
];

const ELEMENT_LIST: &str =
    "f32, f64, i8, u8, i16, u16, i32, u32, i64, u64, half::f16, half::bf16, gpuarray::Bool, \
     types::Complex32, types::Complex64 or a CUDA vector type of gpu_runtime::types (Float3, \
     UChar4, ...)";

/// An element type as the macro read it: its scalar (a vector's component type, a complex
/// type's parts' type), its C name, and whether it is a CUDA vector type or a complex one.
pub(crate) struct ReadElement {
    pub(crate) scalar: Scalar,
    pub(crate) c_type: &'static str,
    pub(crate) vector: bool,
    pub(crate) complex: bool,
}

/// An element type as written: a primitive by its one word, a library type (and a CUDA vector
/// type, `Float3`: `gpu_cuda_source::vectors`' Rust names) by its path's last segment. Rust's
/// `bool` is refused with a pointer to `Bool`: the device may write any byte into an array, and
/// only 0 and 1 are valid `bool`s.
/// `macro_name` (`elementwise`, `reduction`) is the attribute messages name.
pub(crate) fn element_type(ty: &syn::Type, macro_name: &str) -> syn::Result<ReadElement> {
    let path = match ty {
        syn::Type::Path(p) if p.qself.is_none() => Some(&p.path),
        _ => None,
    };
    let plain = path.filter(|p| p.segments.iter().all(|s| s.arguments.is_none()));
    let last = plain.and_then(|p| p.segments.last()).map(|s| s.ident.to_string());
    let one_word = plain.is_some_and(|p| p.segments.len() == 1 && p.leading_colon.is_none());
    // The element types of `gpu_runtime::gpuarray::Element`: the primitives Rust names with one
    // word (`isize`, `usize` and `bool` are none), and the library types by the last segment of
    // their path (`half::f16`, `gpu_runtime::half::f16` or `f16` after a `use`; `gpuarray::Bool`,
    // `Bool`): `__half` and `__nv_bfloat16` (the run time implements `Element` for them with its
    // `half` feature, which its `gpuarray` feature, the one `#[elementwise]` needs, turns on), and
    // C's `bool`. Each is declared in C by its scalar's C name.
    let found = last
        .as_deref()
        .and_then(|last| match Scalar::from_rust_name(last) {
            Some(s @ (Scalar::F16 | Scalar::Bf16)) => Some(s),
            Some(Scalar::Isize | Scalar::Usize | Scalar::Bool) => None,
            Some(s) => one_word.then_some(s),
            None => (last == "Bool").then_some(Scalar::Bool),
        });
    if let Some(scalar) = found {
        return Ok(ReadElement {
            scalar,
            c_type: scalar.c_name(),
            vector: false,
            complex: false,
        });
    }
    if let Some(&(_, scalar, c_type)) = last
        .as_deref()
        .and_then(|l| COMPLEX.iter().find(|(r, _, _)| *r == l))
    {
        return Ok(ReadElement {
            scalar,
            c_type,
            vector: false,
            complex: true,
        });
    }
    if let Some(v) = last.as_deref().and_then(gpu_cuda_source::vectors::by_rust_name) {
        return Ok(ReadElement {
            scalar: v.scalar,
            c_type: v.c_name,
            vector: true,
            complex: false,
        });
    }
    let written = quote!(#ty).to_string().replace(' ', "");
    if one_word && last.as_deref() == Some("bool") {
        return Err(syn::Error::new_spanned(
            ty,
            "`bool` is not an element type of device arrays: the device may write any byte into \
             an array, and only 0 and 1 are valid Rust `bool`s; truth values are \
             `gpu_runtime::gpuarray::Bool` (C's `bool`, one byte, any nonzero byte true), as \
             arrays and as scalars",
        ));
    }
    Err(syn::Error::new_spanned(
        ty,
        format!(
            "`{written}` is not an element type of device arrays: #[{macro_name}] scalars and array \
             elements are {ELEMENT_LIST}, written as such (not through an alias)"
        ),
    ))
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
    read_param_of(arg, "elementwise")
}

/// [`read_param`] for the attribute `macro_name` (`elementwise`, `reduction`), which messages
/// name.
pub(crate) fn read_param_of(arg: &syn::FnArg, macro_name: &str) -> syn::Result<Param> {
    let what = if macro_name.starts_with('e') {
        format!("an #[{macro_name}]")
    } else {
        format!("a #[{macro_name}]")
    };
    let syn::FnArg::Typed(pt) = arg else {
        return Err(syn::Error::new_spanned(arg, format!("{what} fn takes no `self`")));
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
                "{what} argument is a scalar (`{name}: f32`), an array it reads \
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
    let read = element_type(&elem, macro_name)?;
    let n = name.to_string();
    let n = n.strip_prefix("r#").unwrap_or(&n);
    if n == "i" || n == "n" || n.contains("__") || n.starts_with("gpu_") || is_c_word(n) || !n.is_ascii() {
        return Err(syn::Error::new_spanned(
            &name,
            format!(
                "`{n}` cannot name {what} argument: `i` (the element's index), `n` (the \
                 number of elements), C keywords and type names, names with `__` or starting with \
                 `gpu_` (the generated code's) and non-ASCII names are taken"
            ),
        ));
    }
    Ok(Param {
        name,
        elem,
        scalar: read.scalar,
        c_type: read.c_type,
        vector: read.vector,
        complex: read.complex,
        role,
        ty,
    })
}

/// The C argument list the run-time kernel is declared with.
pub(crate) fn c_arguments(params: &[Param]) -> String {
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
    fn half_floats_and_bool_are_elements() {
        let ps = params(
            "fn f(a: half::f16, x: &DeviceArray<gpu_runtime::half::bf16>, m: &DeviceArray<Bool>, \
             z: &mut DeviceArray<f16>, b: &mut PooledArray<::gpu_runtime::gpuarray::Bool>, s: bf16);",
        );
        let scalars: Vec<Scalar> = ps.iter().map(|p| p.scalar).collect();
        assert_eq!(
            scalars,
            [
                Scalar::F16,
                Scalar::Bf16,
                Scalar::Bool,
                Scalar::F16,
                Scalar::Bool,
                Scalar::Bf16
            ]
        );
        assert_eq!(
            c_arguments(&ps),
            "__half a, const __nv_bfloat16 *x, const bool *m, __half *z, bool *b, __nv_bfloat16 s"
        );
        // The type is emitted as written, for the generated signature.
        let elem = &ps[1].elem;
        assert_eq!(
            quote!(#elem).to_string().replace(' ', ""),
            "gpu_runtime::half::bf16"
        );
    }

    #[test]
    fn complex_types_are_elements() {
        let ps = params(
            "fn f(a: Complex32, x: &DeviceArray<gpu_runtime::types::Complex64>, z: &mut DeviceArray<Complex32>);",
        );
        let read: Vec<(bool, Scalar, &str)> = ps.iter().map(|p| (p.complex, p.scalar, p.c_type)).collect();
        assert_eq!(
            read,
            [
                (true, Scalar::F32, "gpu_runtime::complex<float>"),
                (true, Scalar::F64, "gpu_runtime::complex<double>"),
                (true, Scalar::F32, "gpu_runtime::complex<float>"),
            ]
        );
        assert_eq!(
            c_arguments(&ps),
            "gpu_runtime::complex<float> a, const gpu_runtime::complex<double> *x, gpu_runtime::complex<float> *z"
        );
    }

    #[test]
    fn cuda_vector_types_are_elements() {
        let ps = params(
            "fn f(v: Float4, x: &DeviceArray<gpu_runtime::types::Float3>, h: &DeviceArray<Half2>, \
             z: &mut DeviceArray<UChar4>, s: f32);",
        );
        assert_eq!(
            c_arguments(&ps),
            "float4 v, const float3 *x, const __half2 *h, uchar4 *z, float s"
        );
        let read: Vec<(bool, Scalar)> = ps.iter().map(|p| (p.vector, p.scalar)).collect();
        // A vector's scalar is its component type: what decides the headers (`__half2`).
        assert_eq!(
            read,
            [
                (true, Scalar::F32),
                (true, Scalar::F32),
                (true, Scalar::F16),
                (true, Scalar::U8),
                (false, Scalar::F32)
            ]
        );
        // CUDA's C names are not Rust's: `float3` is no element type in a signature.
        assert!(read_param(&sig("fn f(x: &DeviceArray<float3>);").sig.inputs[0]).is_err());
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
        // Rust's `bool` is pointed at `Bool`, as an array and as a scalar.
        for item in ["fn f(x: &DeviceArray<bool>);", "fn f(x: bool);"] {
            let (msg, at) = err(item);
            assert!(
                msg.starts_with("`bool` is not an element type of device arrays"),
                "{msg}"
            );
            assert!(msg.contains("`gpu_runtime::gpuarray::Bool`"), "{msg}");
            assert_eq!(at, "bool");
        }
        // A primitive through a path, a generic named type, another crate's `f16`-less path.
        for (item, ty) in [
            (
                "fn f(x: &DeviceArray<std::primitive::f32>);",
                "std::primitive::f32",
            ),
            ("fn f(x: &DeviceArray<Wrapper<f16>>);", "Wrapper<f16>"),
            ("fn f(x: &DeviceArray<half::f32>);", "half::f32"),
            ("fn f(x: &DeviceArray<::bool>);", "::bool"),
        ] {
            let (msg, at) = err(item);
            assert!(
                msg.starts_with(&format!("`{ty}` is not an element type")),
                "{msg}"
            );
            assert!(
                msg.contains("half::f16, half::bf16, gpuarray::Bool, types::Complex32, types::Complex64 or a CUDA vector type"),
                "{msg}"
            );
            assert_eq!(at, ty);
        }
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
