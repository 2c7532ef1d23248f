//! Parameter types checked against a kernel's C declaration, and arguments against the
//! parameter types: everything a runtime-typed launch checks that needs no context, so that it
//! is tested without a GPU.

use gpu_cuda_source::{CParam, CType, KernelDecl};

use super::arg::*;
use super::value::{StructType, VectorType};
use crate::compiler::layout::probe_constants;
use crate::error::{ArgHint, ArgumentError};

/// A kernel's parameters as a prepared launch checks its arguments against them.
#[derive(Debug, Clone)]
pub(super) struct Signature {
    pub(super) types: Vec<ArgType>,
    /// For pointers to a scalar or vector type, the element size the buffer must have.
    pub(super) elem_sizes: Vec<Option<usize>>,
    /// Each parameter as the C source writes it (empty when no declaration is known).
    pub(super) texts: Vec<Box<str>>,
}

/// What a C parameter is, before the argument types given for it are compared.
enum Declared<'d> {
    /// A type runtime-typed launches know exactly, with the element size of a pointer.
    Known(ArgType, Option<usize>),
    /// A struct (or other named type) by value, whose size the C side decides.
    Struct(&'d str),
    Unsupported,
}

fn declared(ty: &CType, is_template: bool) -> Declared<'_> {
    match ty {
        CType::Scalar(s) => scalar_type(*s).map_or(Declared::Unsupported, |t| Declared::Known(t, None)),
        CType::Pointer {
            pointee,
            pointee_const,
        } => {
            let elem = match &**pointee {
                CType::Scalar(s) => Some(scalar_size(*s)),
                CType::Named(n) => VectorType::from_c_name(n).map(VectorType::size),
                _ => None,
            };
            let t = if *pointee_const {
                ArgType::ConstPtr
            } else {
                ArgType::MutPtr
            };
            Declared::Known(t, elem)
        }
        CType::Named(n) => match (VectorType::from_c_name(n), n.as_str()) {
            (Some(v), _) => Declared::Known(ArgType::Vector(v), None),
            (None, "cudaTextureObject_t") => Declared::Known(ArgType::Texture, None),
            (None, "cudaSurfaceObject_t") => Declared::Known(ArgType::Surface, None),
            // In a template, a name may be a template parameter, which is no struct.
            (None, _) if is_template => Declared::Unsupported,
            (None, n) => Declared::Struct(n),
        },
        CType::Void => Declared::Unsupported,
    }
}

/// The Rust type of a complex number type's C name (`gpu_runtime::complex<float>`:
/// `Complex32`), which a parameter declared with it takes by value (or as the vector of its
/// parts); `None` for other names.
pub(super) fn complex_rust_type(c_name: &str) -> Option<(std::any::TypeId, &'static str)> {
    use crate::types::{Complex32, Complex64};
    match gpu_cuda_source::complex_part(c_name)? {
        gpu_cuda_source::Scalar::F32 => StructType::of::<Complex32>().rust,
        gpu_cuda_source::Scalar::F64 => StructType::of::<Complex64>().rust,
        _ => None,
    }
}

/// Where the C layout of a struct passed by value comes from.
pub(super) struct StructLayouts<'s> {
    /// The module's source, for NVRTC to evaluate `sizeof`, `alignof` and `offsetof` in.
    pub(super) source: &'s str,
    /// The size the driver gives parameter `i` (`cuFuncGetParamInfo`), when it can.
    pub(super) param_size: &'s dyn Fn(usize) -> Option<usize>,
}

/// A C struct's size, and its alignment and field offsets when they were compiled.
struct CStruct {
    size: usize,
    align: Option<usize>,
    offsets: Vec<usize>,
}

impl StructLayouts<'_> {
    /// The layout, or why NVRTC could not give it and whether the driver was asked first.
    fn layout(
        &self,
        i: usize,
        c_name: &str,
        fields: &[&str],
    ) -> Result<CStruct, (bool, Box<crate::error::Error>)> {
        // The driver knows the size of the parameter in the loaded kernel, exactly and with no
        // compile; field offsets need the struct's definition compiled.
        if fields.is_empty() {
            if let Some(size) = (self.param_size)(i) {
                return Ok(CStruct {
                    size,
                    align: None,
                    offsets: Vec::new(),
                });
            }
        }
        probe_layout(self.source, c_name, fields).map_err(|e| (fields.is_empty(), Box::new(e)))
    }
}

/// The size, alignment and field offsets NVRTC gives the C type `c_name` of `source`.
///
/// Offsets are address differences within an object of the type (`extern`, so that nothing is
/// defined or constructed): `offsetof` is `__builtin_offsetof` only from NVRTC 13.1 on, and
/// a cast of a null pointer is no constant initializer.
fn probe_layout(source: &str, c_name: &str, fields: &[&str]) -> crate::error::Result<CStruct> {
    const OBJECT: &str = "__gpu_runtime_layout_object";
    if let Some(f) = fields
        .iter()
        .find(|f| f.is_empty() || !f.chars().all(|c| c.is_ascii_alphanumeric() || "_.[]".contains(c)))
    {
        return Err(crate::error::Error::InvalidFieldName { field: f.to_string() });
    }
    let source = format!(
        "{source}
extern __device__ {c_name} {OBJECT};
"
    );
    let mut exprs = vec![format!("sizeof({c_name})"), format!("alignof({c_name})")];
    exprs.extend(
        fields
            .iter()
            .map(|f| format!("(const char *)&{OBJECT}.{f} - (const char *)&{OBJECT}")),
    );
    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
    let v = probe_constants(&source, &refs)?;
    Ok(CStruct {
        size: v[0] as usize,
        align: Some(v[1] as usize),
        offsets: v[2..].iter().map(|&o| o as usize).collect(),
    })
}

/// The parameter types of `decl`: `given` checked against it (a [`ArgType::Ptr`] becomes the
/// declared pointer), or when `None`, the declaration's own. The error says which parameter
/// differs and how.
pub(super) fn resolve(
    kernel: &str,
    decl: &KernelDecl,
    given: Option<&[ArgType]>,
    layouts: &StructLayouts<'_>,
) -> Result<Signature, ArgumentError> {
    let n = decl.params.len();
    if let Some(g) = given.filter(|g| g.len() != n) {
        return Err(ArgumentError::TypeCount {
            kernel: kernel.into(),
            given: g.len(),
            expected: n,
            parameters: decl.params.iter().map(|p| p.text.clone()).collect(),
        });
    }
    if n > MAX_ARGS {
        return Err(ArgumentError::TooManyParameters {
            kernel: kernel.into(),
            limit: MAX_ARGS,
        });
    }
    let mut sig = Signature {
        types: Vec::with_capacity(n),
        elem_sizes: Vec::with_capacity(n),
        texts: Vec::with_capacity(n),
    };
    for (i, p) in decl.params.iter().enumerate() {
        let (t, elem) = resolve_one(kernel, i, p, decl.is_template, given.map(|g| g[i]), layouts)?;
        sig.types.push(t);
        sig.elem_sizes.push(elem);
        sig.texts.push(p.text.as_str().into());
    }
    Ok(sig)
}

fn resolve_one(
    kernel: &str,
    i: usize,
    p: &CParam,
    is_template: bool,
    given: Option<ArgType>,
    layouts: &StructLayouts<'_>,
) -> Result<(ArgType, Option<usize>), ArgumentError> {
    let text = &p.text;
    let differs =
        |declared: ArgType, g: ArgType, vector_rust_type: Option<&'static str>| ArgumentError::TypeDiffers {
            kernel: kernel.into(),
            index: i,
            parameter: text.as_str().into(),
            declared: declared.to_string(),
            given: g.to_string(),
            vector_rust_type,
        };
    let no_layout = |c_name: &str, (driver_too_old, e): (bool, Box<crate::error::Error>)| {
        ArgumentError::StructLayoutUnknown {
            kernel: kernel.into(),
            index: i,
            parameter: text.as_str().into(),
            c_struct: c_name.into(),
            driver_too_old,
            source: e as Box<dyn std::error::Error + Send + Sync>,
        }
    };
    match (declared(&p.ty, is_template), given) {
        (Declared::Unsupported, _) => Err(ArgumentError::UnsupportedType {
            kernel: kernel.into(),
            index: i,
            parameter: text.as_str().into(),
        }),
        (Declared::Known(d, elem), None) => Ok((d, elem)),
        (Declared::Known(d, elem), Some(g)) => match (d, g) {
            _ if d == g => Ok((d, elem)),
            (ArgType::ConstPtr | ArgType::MutPtr, ArgType::Ptr) => Ok((d, elem)),
            // PyCUDA passes an object's handle as a 64-bit integer (`Q`); the argument must
            // still be the object, so that its memory's uses are ordered.
            (ArgType::Texture | ArgType::Surface, ArgType::U64) => Ok((d, elem)),
            // PyCUDA's `16s` for a numpy record the size of a vector type.
            (ArgType::Vector(v), ArgType::Struct(s)) if s.rust.is_none() && s.size == v.size() => {
                Ok((d, None))
            }
            (ArgType::Vector(v), ArgType::Struct(_)) => Err(differs(d, g, Some(rust_vector_name(v)))),
            _ => Err(differs(d, g, None)),
        },
        (Declared::Struct(c_name), None) => {
            let c = layouts.layout(i, c_name, &[]).map_err(|e| no_layout(c_name, e))?;
            Ok((
                ArgType::Struct(StructType {
                    align: c.align,
                    rust: complex_rust_type(c_name),
                    ..StructType::bytes(c.size)
                }),
                None,
            ))
        }
        (Declared::Struct(c_name), Some(ArgType::Struct(s))) => {
            let names: Vec<&str> = s.fields.iter().map(|f| f.0).collect();
            let c = layouts
                .layout(i, c_name, &names)
                .map_err(|e| no_layout(c_name, e))?;
            let rust_type = s.rust_name();
            if c.size != s.size {
                return Err(ArgumentError::StructSize {
                    kernel: kernel.into(),
                    index: i,
                    parameter: text.as_str().into(),
                    c_struct: c_name.into(),
                    c_bytes: c.size,
                    rust_type,
                    rust_bytes: s.size,
                });
            }
            if let (Some(ca), Some(ra)) = (c.align, s.align) {
                if ca != ra {
                    return Err(ArgumentError::StructAlign {
                        kernel: kernel.into(),
                        index: i,
                        parameter: text.as_str().into(),
                        c_struct: c_name.into(),
                        c_align: ca,
                        rust_type,
                        rust_align: ra,
                    });
                }
            }
            for (&(name, rust_offset), &c_offset) in s.fields.iter().zip(&c.offsets) {
                if rust_offset != c_offset {
                    return Err(ArgumentError::FieldOffset {
                        kernel: kernel.into(),
                        index: i,
                        parameter: text.as_str().into(),
                        c_struct: c_name.into(),
                        field: name,
                        c_offset,
                        rust_type,
                        rust_offset,
                    });
                }
            }
            Ok((ArgType::Struct(s), None))
        }
        (Declared::Struct(c_name), Some(g)) => Err(ArgumentError::StructExpected {
            kernel: kernel.into(),
            index: i,
            parameter: text.as_str().into(),
            c_struct: c_name.into(),
            given: g.to_string(),
        }),
    }
}

/// The Rust type of a vector type, for messages: `float4` is `Float4`.
fn rust_vector_name(v: VectorType) -> &'static str {
    // Every runtime vector type is in gpu-cuda-source's table (checked when `types` compiles); the
    // C name stands in should that ever not hold, rather than a panic in a message.
    gpu_cuda_source::vectors::by_c_name(v.c_name()).map_or_else(|| v.c_name(), |t| t.rust_name)
}

impl Signature {
    /// The signature `prepare_args_unchecked` trusts: the types as given, nothing known of C.
    pub(super) fn unchecked(kernel: &str, types: &[ArgType]) -> Result<Signature, ArgumentError> {
        if types.len() > MAX_ARGS {
            return Err(ArgumentError::TooManyParameters {
                kernel: kernel.into(),
                limit: MAX_ARGS,
            });
        }
        Ok(Signature {
            types: types.to_vec(),
            elem_sizes: vec![None; types.len()],
            texts: vec![Box::from(""); types.len()],
        })
    }

    /// Checks `args` against the parameters: one per parameter, each of a kind the parameter
    /// takes, buffers of the element size it points to; host arrays only when `host_allowed`.
    /// (The context of each buffer is checked by the caller.)
    pub(super) fn check(
        &self,
        kernel: &str,
        args: &[Arg<'_>],
        host_allowed: bool,
    ) -> Result<(), ArgumentError> {
        if args.len() != self.types.len() {
            return Err(ArgumentError::ArgCount {
                kernel: kernel.into(),
                given: args.len(),
                prepared: self.types.len(),
            });
        }
        for (i, ((a, &t), elem)) in args.iter().zip(&self.types).zip(&self.elem_sizes).enumerate() {
            let parameter = || self.texts.get(i).cloned().unwrap_or_default();
            if !a.fits(t) {
                let hint = match (a, t) {
                    (Arg::Struct(s), ArgType::Struct(p)) if s.size == p.size => ArgHint::OtherRustType,
                    (Arg::Struct(_), ArgType::Vector(_)) => ArgHint::VectorAsStruct,
                    _ => ArgHint::None,
                };
                return Err(ArgumentError::ArgDiffers {
                    kernel: kernel.into(),
                    index: i,
                    parameter: parameter(),
                    expected: t.to_string(),
                    given: a.describe(),
                    hint,
                });
            }
            if let (Arg::Host(_), false) = (a, host_allowed) {
                return Err(ArgumentError::HostArgument {
                    kernel: kernel.into(),
                    index: i,
                    parameter: parameter(),
                    given: a.describe(),
                });
            }
            if let (Some(size), Some(e)) = (a.elem_size(), *elem) {
                if size != e {
                    return Err(ArgumentError::ElementSize {
                        kernel: kernel.into(),
                        index: i,
                        parameter: parameter(),
                        given_bytes: size,
                        expected_bytes: e,
                    });
                }
            }
        }
        Ok(())
    }
}
