//! CUDA C source, read and written, for gpu-runtime and its macros: the preprocessor
//! ([`preprocess`]), the declarations of kernels and variables, NVRTC's log ([`nvrtc_log`]), the
//! vector types ([`vectors`]), the elementwise and reduction code generators ([`elementwise`],
//! [`reduction`]) and the built-in headers ([`BUILTIN_HEADERS`]).
//!
//! At its core it finds the `__global__` functions in CUDA C/C++ source text and describes
//! their parameters in terms a Rust caller can check against.
//!
//! This is not a C++ parser: it tokenizes the source (dropping comments), preprocesses it as
//! NVRTC would (macros expanded, `#if`s evaluated, local `#include`s read when a
//! [`Preprocess`] says where from: [`Declarations`]), finds each `__global__`, and parses just
//! the declaration around it, resolving simple `typedef`/`using` aliases. It never panics and
//! runs in linear time, whatever the input.
//!
//! ```
//! use gpu_cuda_source::{find_kernel, CType, Scalar};
//!
//! let src = r#"
//!     extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
//!         int i = blockIdx.x * blockDim.x + threadIdx.x;
//!         if (i < n) y[i] += a * x[i];
//!     }
//! "#;
//! let k = find_kernel(src, "axpy").unwrap();
//! assert!(k.extern_c);
//! assert_eq!(k.params[1].ty, CType::pointer(CType::Scalar(Scalar::F32), true));
//! assert_eq!(k.params[3].name.as_deref(), Some("n"));
//! ```
#![deny(missing_docs)]

mod aliases;
mod constants;
pub mod cuda_include;
mod decl;
mod declarations;
mod device_part;
pub mod elementwise;
mod error;
mod globals;
mod headers;
mod host;
pub mod include_scan;
mod kernels;
mod lexer;
pub mod nvrtc_log;
pub mod preprocess;
pub mod reduction;
mod stand_ins;
pub mod tokens;
mod types;
pub mod vectors;

#[cfg(test)]
mod tests;

pub use declarations::{near_names, Declarations};
pub use device_part::{device_part, device_parts, device_parts_with, DeviceParts};
pub use error::{DeclError, LeftOut, NotFoundHint};
pub use headers::BUILTIN_HEADERS;
pub use host::{HOST_TYPEDEFS, NVRTC_PRELUDE, NVRTC_PRELUDE_NAME};
pub use preprocess::config::{Header, Preprocess};
pub use types::{complex_part, fp8_by_c_name, fp8_by_rust_name, CType, Fp8Type, Scalar, FP8_TYPES};

/// One parameter of a __global__ function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CParam {
    /// The parameter exactly as written in the source with whitespace runs collapsed to one space and comments removed, e.g. "const float *__restrict__ x".
    pub text: String,
    /// Its name, if it has one (prototypes may omit names).
    pub name: Option<String>,
    /// Its type, with aliases resolved and arrays turned into pointers.
    pub ty: CType,
}

/// One __global__ function found in a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelDecl {
    /// The function's name (without namespace or template arguments).
    pub name: String,
    /// Its parameters, in order; empty for `()` and `(void)`.
    pub params: Vec<CParam>,
    /// 1-based line of the function name in the source.
    pub line: usize,
    /// True when the function is declared inside `extern "C" { ... }` or with `extern "C"` before it.
    pub extern_c: bool,
    /// True when the function is a template (`template <typename T> __global__ void f(T* x)`); params still parsed, template parameter names come out as Named("T").
    pub is_template: bool,
    /// The template's parameters, in order (`template <typename T, int block_size>`): empty
    /// for a plain kernel and for an explicit specialization (`template <> ... f<float>(...)`).
    pub template_params: Vec<TemplateParam>,
}

/// One parameter of a kernel template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateParam {
    /// Its name, when it has one (`T` of `typename T`, `block_size` of `int block_size`).
    pub name: Option<String>,
    /// A type, a value or a template.
    pub kind: TemplateParamKind,
    /// Its default argument as written, if any (`128` of `int BLOCK = 128`).
    pub default: Option<String>,
}

/// What a template parameter takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateParamKind {
    /// A type: `typename T`, `class T`.
    Type,
    /// A value of the C type written (`int`, `unsigned int`, `bool`): `int block_size`.
    Value(String),
    /// A template: `template <class> class C`.
    Template,
}

/// Every __global__ function in the source, in order. Definitions and prototypes; when a prototype and a definition of the same name have the same parameter types, report it once (the definition's entry).
///
/// The source is read as NVRTC reads it ([`Preprocess::new`]): its macros expanded, the groups
/// of `#if`s not taken left out; `#include`s are not followed ([`Declarations`] reads headers
/// too). Fails on the first declaration that cannot be parsed or has a parameter that cannot
/// be passed from Rust.
pub fn find_kernels(source: &str) -> Result<Vec<KernelDecl>, DeclError> {
    Declarations::read(source, &Preprocess::new()).find_kernels()
}

/// The __global__ function named `name`, read as [`find_kernels`] reads the source.
///
/// Problems in other kernels' declarations do not matter here, except that a
/// declaration too broken to name is reported when `name` is not found.
pub fn find_kernel(source: &str, name: &str) -> Result<KernelDecl, DeclError> {
    Declarations::read(source, &Preprocess::new()).find_kernel(name)
}

/// True when the source declares `extern __shared__` (dynamic shared memory) anywhere (not in comments/strings).
pub fn uses_dynamic_shared_memory(source: &str) -> bool {
    globals::uses_dynamic_shared_memory(source)
}

/// Where a device variable lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySpace {
    /// `__constant__`: read-only in kernels, written from the host.
    Constant,
    /// `__device__`: global memory.
    Device,
    /// `__managed__`: unified memory.
    Managed,
}

/// A `__constant__`, `__device__` or `__managed__` variable declared in a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalDecl {
    /// Its name.
    pub name: String,
    /// Its element type, aliases resolved (`float` for `float coeffs[16]`).
    pub ty: CType,
    /// Array bounds, outermost first; empty for a scalar (`[16]` → `[16]`). Bounds may use
    /// integer constants the source defines (`#define N 16`, `constexpr int N = 16;`).
    pub dims: Vec<usize>,
    /// A bound that could not be worked out (e.g. `N` when `N` comes from a header), as written;
    /// `dims` is then empty.
    pub unresolved_dim: Option<String>,
    /// Its memory space.
    pub space: MemorySpace,
    /// 1-based line of its name.
    pub line: usize,
}

/// The device variables declared in the source, with their types: each one whose type parses,
/// once, in order, with its array bounds evaluated where the source defines them (`__constant__ float c[16];`
/// → `c`, `float`, `[16]`). Best effort, like [`find_globals`]; never fails.
pub fn find_global_decls(source: &str) -> Vec<GlobalDecl> {
    globals::find_global_decls(source)
}

/// Names of `__constant__` and `__device__` global variables (not functions) declared in the source, in order (for later use; simple best effort: `__constant__ float coeffs[16];` → "coeffs").
///
/// `__managed__` variables are included too; each name is listed once.
pub fn find_globals(source: &str) -> Vec<String> {
    globals::find_globals(source)
}

/// A C type name, resolved as a kernel parameter of that type would be (aliases of the CUDA
/// and host headers included): `unsigned int`, `uint` and `u_int32_t` are [`Scalar::U32`];
/// `float2` and `cuFloatComplex` are `Named("float2")`; `const float *` is a pointer. `Err`
/// says why the text is not a type a kernel can take, as a sentence fragment.
///
/// ```
/// use gpu_cuda_source::{parse_type, CType, Scalar};
/// assert_eq!(parse_type("ushort"), Ok(CType::Scalar(Scalar::U16)));
/// assert_eq!(parse_type("cuDoubleComplex"), Ok(CType::Named("double2".into())));
/// assert!(parse_type("float **").is_err());
/// ```
pub fn parse_type(text: &str) -> Result<CType, String> {
    decl::parse_type(text)
}
