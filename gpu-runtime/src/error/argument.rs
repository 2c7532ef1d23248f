//! [`ArgumentError`]: run-time kernel arguments, or declared argument types, that do not match
//! the kernel.

use gpu_cuda_source::{DeclError, Scalar};

/// Kernel arguments, or declared argument types, refused before anything was launched or
/// copied, with the kernel, the parameter and what was given. Wrapped by
/// [`Error::Argument`](super::Error::Argument).
///
/// The runtime-typed launches (`launch::Arg` against the kernel's C declaration) and the
/// generated kernels of `gpuarray` (`ElementwiseKernel`, `ReductionKernel`, expressions, scans,
/// random numbers) return it. Every message starts "kernel `{kernel}`: " and says the fix where
/// there is one. Names are `Box<str>` (compare `&*kernel`) and parser errors boxed, which keeps
/// [`Error`](super::Error) small. C types are kept as they are written in the declaration (`parameter`), and
/// run-time types as the words the messages use for them (`declared`, `given`), since their
/// Rust types live in the launch layer above this one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentError {
    /// A kernel loaded from an image, whose C declaration is not known.
    #[error("kernel `{kernel}`: no CUDA C declaration is known for this kernel (it was loaded from an image); use the unsafe `prepare_args_unchecked`")]
    NoDeclaration {
        /// The kernel.
        kernel: Box<str>,
    },
    /// The kernel's C declaration could not be read.
    #[error("kernel `{kernel}`: its declaration could not be read: {source}")]
    UnreadableDeclaration {
        /// The kernel.
        kernel: Box<str>,
        /// What the declaration parser found.
        #[source]
        source: Box<DeclError>,
    },
    /// Another number of argument types than the kernel has parameters.
    #[error("kernel `{kernel}`: {given} argument types were given but the kernel takes {expected} parameter{} ({})", if *.expected == 1 { "" } else { "s" }, .parameters.join(", "))]
    TypeCount {
        /// The kernel.
        kernel: Box<str>,
        /// Argument types given.
        given: usize,
        /// Parameters declared.
        expected: usize,
        /// The declared parameters, as written in C.
        parameters: Vec<String>,
    },
    /// More parameters than a launch takes.
    #[error("kernel `{kernel}`: it has more than {limit} parameters")]
    TooManyParameters {
        /// The kernel.
        kernel: Box<str>,
        /// The most a launch takes.
        limit: usize,
    },
    /// A parameter of a C type that runtime-typed launches cannot pass.
    #[error("kernel `{kernel}`: parameter {index} (`{parameter}`) has a type that runtime-typed launches do not support; use the #[kernel] macro")]
    UnsupportedType {
        /// The kernel.
        kernel: Box<str>,
        /// The parameter's index.
        index: usize,
        /// The parameter, as written in C.
        parameter: Box<str>,
    },
    /// An argument type other than the declared one.
    #[error("kernel `{kernel}`: parameter {index} (`{parameter}`) is {declared}, but {given} was given{}", vector_hint(*.vector_rust_type))]
    TypeDiffers {
        /// The kernel.
        kernel: Box<str>,
        /// The parameter's index.
        index: usize,
        /// The parameter, as written in C.
        parameter: Box<str>,
        /// The type the declaration stands for, e.g. `f32 (ArgType::F32)`.
        declared: String,
        /// The type given, in the same words.
        given: String,
        /// For a CUDA vector parameter given as a struct: the Rust type to pass instead.
        vector_rust_type: Option<&'static str>,
    },
    /// A struct by value given as another type.
    #[error("kernel `{kernel}`: parameter {index} (`{parameter}`) is the struct `{c_struct}` by value, but {given} was given: pass ArgType::Struct(StructType::of::<T>()) for the #[repr(C)] Rust type T that matches it")]
    StructExpected {
        /// The kernel.
        kernel: Box<str>,
        /// The parameter's index.
        index: usize,
        /// The parameter, as written in C.
        parameter: Box<str>,
        /// The C struct's name.
        c_struct: Box<str>,
        /// The type given.
        given: String,
    },
    /// The layout of a struct parameter could not be worked out.
    #[error("kernel `{kernel}`: parameter {index} (`{parameter}`): the layout of the C type `{c_struct}` could not be found ({}compiling `sizeof({c_struct})` in the module's source with NVRTC failed): {source}", if *.driver_too_old { "the driver does not report parameter sizes before CUDA 12.4, and " } else { "" })]
    StructLayoutUnknown {
        /// The kernel.
        kernel: Box<str>,
        /// The parameter's index.
        index: usize,
        /// The parameter, as written in C.
        parameter: Box<str>,
        /// The C struct's name.
        c_struct: Box<str>,
        /// Whether the driver was asked for the size first and could not say (before CUDA 12.4).
        driver_too_old: bool,
        /// Why NVRTC could not tell: the crate's `Error` (a compile error, an unreadable field
        /// name), boxed as `dyn Error` since this family sits below it; `downcast_ref` gets it.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A struct by value of another size than the C struct.
    #[error("kernel `{kernel}`: parameter {index} (`{parameter}`): the C struct `{c_struct}` is {c_bytes} bytes, but {} is {rust_bytes}", rust_words(*.rust_type))]
    StructSize {
        /// The kernel.
        kernel: Box<str>,
        /// The parameter's index.
        index: usize,
        /// The parameter, as written in C.
        parameter: Box<str>,
        /// The C struct's name.
        c_struct: Box<str>,
        /// Its size in C.
        c_bytes: usize,
        /// The Rust type given, when known.
        rust_type: Option<&'static str>,
        /// Its size.
        rust_bytes: usize,
    },
    /// A struct by value of another alignment than the C struct.
    #[error("kernel `{kernel}`: parameter {index} (`{parameter}`): the C struct `{c_struct}` is aligned to {c_align} bytes, but {} to {rust_align}", rust_words(*.rust_type))]
    StructAlign {
        /// The kernel.
        kernel: Box<str>,
        /// The parameter's index.
        index: usize,
        /// The parameter, as written in C.
        parameter: Box<str>,
        /// The C struct's name.
        c_struct: Box<str>,
        /// Its alignment in C.
        c_align: usize,
        /// The Rust type given, when known.
        rust_type: Option<&'static str>,
        /// Its alignment.
        rust_align: usize,
    },
    /// A field at another offset in the Rust type than in the C struct.
    #[error("kernel `{kernel}`: parameter {index} (`{parameter}`): field `{field}` of `{c_struct}` is at byte {c_offset} in C but at byte {rust_offset} in {}", rust_words(*.rust_type))]
    FieldOffset {
        /// The kernel.
        kernel: Box<str>,
        /// The parameter's index.
        index: usize,
        /// The parameter, as written in C.
        parameter: Box<str>,
        /// The C struct's name.
        c_struct: Box<str>,
        /// The field, as named in `StructType::with_fields`.
        field: &'static str,
        /// Its offset in C.
        c_offset: usize,
        /// The Rust type given, when known.
        rust_type: Option<&'static str>,
        /// Its offset in the Rust type.
        rust_offset: usize,
    },
    /// Another number of arguments than the kernel was prepared with.
    #[error("kernel `{kernel}`: {given} arguments were passed but it was prepared with {prepared}")]
    ArgCount {
        /// The kernel.
        kernel: Box<str>,
        /// Arguments passed.
        given: usize,
        /// Parameters prepared.
        prepared: usize,
    },
    /// An argument of a kind the parameter does not take.
    #[error("kernel `{kernel}`: {} is {given} but the parameter is {expected}{}", argument_words(*.index, .parameter), arg_hint(*.hint))]
    ArgDiffers {
        /// The kernel.
        kernel: Box<str>,
        /// The argument's index.
        index: usize,
        /// The parameter, as written in C (empty when prepared without a declaration).
        parameter: Box<str>,
        /// The parameter's type, e.g. `f32 (ArgType::F32)`.
        expected: String,
        /// What was passed, e.g. `an i32` or `an input buffer (Arg::input)`.
        given: String,
        /// What the mismatch most likely is.
        hint: ArgHint,
    },
    /// A host array passed to a launch that does not copy.
    #[error("kernel `{kernel}`: {} is {given}, which only `call` takes (it copies host arrays in and out); pass device memory (Arg::input/Arg::output) to prepared_call", argument_words(*.index, .parameter))]
    HostArgument {
        /// The kernel.
        kernel: Box<str>,
        /// The argument's index.
        index: usize,
        /// The parameter, as written in C (empty when prepared without a declaration).
        parameter: Box<str>,
        /// What was passed.
        given: String,
    },
    /// A buffer of elements of another size than the parameter points to.
    #[error("kernel `{kernel}`: {} is a buffer of {given_bytes}-byte elements but the parameter points to {expected_bytes}-byte elements", argument_words(*.index, .parameter))]
    ElementSize {
        /// The kernel.
        kernel: Box<str>,
        /// The argument's index.
        index: usize,
        /// The parameter, as written in C.
        parameter: Box<str>,
        /// Bytes per element of the buffer.
        given_bytes: usize,
        /// Bytes per element the parameter points to.
        expected_bytes: usize,
    },
    /// A generated kernel's name that is not a C identifier.
    #[error("kernel `{kernel}`: the kernel name is not a C identifier")]
    NotAnIdentifier {
        /// The name given.
        kernel: Box<str>,
    },
    /// A generated kernel's argument list that could not be read.
    #[error("kernel `{kernel}`: the arguments `{arguments}` cannot be read: {source}")]
    UnreadableArguments {
        /// The kernel.
        kernel: Box<str>,
        /// The argument list given.
        arguments: String,
        /// What the declaration parser found.
        #[source]
        source: Box<DeclError>,
    },
    /// A generated kernel's argument without a name.
    #[error("kernel `{kernel}`: the argument `{parameter}` has no name")]
    Unnamed {
        /// The kernel.
        kernel: Box<str>,
        /// The argument, as written.
        parameter: Box<str>,
    },
    /// A generated kernel's argument name that is taken.
    #[error("kernel `{kernel}`: the argument name `{name}` is taken (twice, `i`, `n`, or containing `__`)")]
    NameTaken {
        /// The kernel.
        kernel: Box<str>,
        /// The name.
        name: String,
    },
    /// A generated kernel's pointer argument to something other than a scalar or a CUDA
    /// vector type.
    #[error("kernel `{kernel}`: `{parameter}`: arrays hold scalars and CUDA vector types")]
    ArrayOfNonScalars {
        /// The kernel.
        kernel: Box<str>,
        /// The argument, as written.
        parameter: Box<str>,
    },
    /// A generated kernel's argument that is neither a scalar (or CUDA vector type) nor a
    /// pointer to one.
    #[error("kernel `{kernel}`: `{parameter}`: only scalars, CUDA vector types and arrays of them")]
    NotScalarOrArray {
        /// The kernel.
        kernel: Box<str>,
        /// The argument, as written.
        parameter: Box<str>,
    },
    /// A generated kernel's argument of a scalar type arrays do not hold.
    #[error("kernel `{kernel}`: `{parameter}`: `{}` is not an array element type", .scalar.c_name())]
    NotAnElementType {
        /// The kernel.
        kernel: Box<str>,
        /// The argument, as written.
        parameter: Box<str>,
        /// Its scalar type.
        scalar: Scalar,
    },
    /// A reduction's array argument declared without `const`.
    #[error("kernel `{kernel}`: `{name}`: a reduction's arrays are inputs (`const`)")]
    ReductionOutput {
        /// The kernel.
        kernel: Box<str>,
        /// The argument's name.
        name: String,
    },
    /// A generated kernel, or an expression, without an array argument.
    #[error("kernel `{kernel}`: {needs} needs at least one array argument")]
    NoArray {
        /// The kernel.
        kernel: Box<str>,
        /// What needs one: `a reduction`, `an elementwise kernel`, `a generated kernel`,
        /// `an expression`.
        needs: &'static str,
    },
    /// Another number of arguments than a generated kernel has parameters.
    #[error("kernel `{kernel}`: {given} arguments were given for {expected} parameters")]
    GeneratedArgCount {
        /// The kernel.
        kernel: Box<str>,
        /// Arguments given.
        given: usize,
        /// Parameters declared.
        expected: usize,
    },
    /// An array a generated kernel writes, passed as an input.
    #[error("kernel `{kernel}`: `{name}` is written: pass it with `KernelArg::output`")]
    NotOutput {
        /// The kernel.
        kernel: Box<str>,
        /// The argument's name.
        name: String,
    },
    /// Arrays an `ElementwiseKernel` declares `T *` (not `const`), passed with
    /// [`KernelArg::input`](crate::gpuarray::KernelArg::input): the kernel is compiled with them
    /// declared `const`, so that it cannot write memory only lent for reading, and that
    /// compile failed (the operation writes them, or has another error: the compiler's
    /// message is the source).
    #[error("kernel `{kernel}`: {names} passed with `KernelArg::input` (read-only) but declared `T *`; the kernel does not compile with them `const`: if the operation writes them, pass them with `KernelArg::output`")]
    WrittenThroughInput {
        /// The kernel.
        kernel: Box<str>,
        /// The arguments' names, quoted and comma-separated.
        names: String,
        /// The compile error with them `const`.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An array of more axes than generated kernels index.
    #[error("kernel `{kernel}`: `{name}` has {ndim} axes; at most {limit}")]
    TooManyAxes {
        /// The kernel.
        kernel: Box<str>,
        /// The argument's name.
        name: String,
        /// Its axes.
        ndim: usize,
        /// The most a generated kernel takes.
        limit: usize,
    },
    /// A scalar for an array argument, an array for a scalar one, or another element type.
    #[error("kernel `{kernel}`: `{name}` takes {} {}, but {} {} was given", if *.expected_array { "an array of" } else { "a scalar" }, .expected.rust_type(), if *.given_array { "an array of" } else { "a" }, given_words(.given, *.given_array))]
    KindDiffers {
        /// The kernel.
        kernel: Box<str>,
        /// The argument's name.
        name: String,
        /// The declared element type.
        expected: Scalar,
        /// Whether the declaration takes an array.
        expected_array: bool,
        /// The element type given.
        given: Scalar,
        /// Whether an array was given.
        given_array: bool,
    },
    /// [`KindDiffers`](Self::KindDiffers) where a complex or CUDA vector type is declared or
    /// given (not a `gpu-cuda-source` scalar): the types by their C names
    /// (`gpu_runtime::complex<float>`, `float3`).
    #[error("kernel `{kernel}`: `{name}` takes {} `{expected}`, but {} `{given}` was given", if *.expected_array { "an array of" } else { "a scalar" }, if *.given_array { "an array of" } else { "a scalar" })]
    ElementTypeDiffers {
        /// The kernel.
        kernel: Box<str>,
        /// The argument's name.
        name: String,
        /// The declared element type's C name.
        expected: &'static str,
        /// Whether the declaration takes an array.
        expected_array: bool,
        /// The given element type's C name.
        given: &'static str,
        /// Whether an array was given.
        given_array: bool,
    },
    /// A function or operator an expression applies to a complex element, on which it is
    /// not defined (`<`, `max`, `%`, `floor`, ...: complex numbers have no order).
    #[error("kernel `{kernel}`: `{function}` is not defined on `{element}`")]
    UndefinedOnElement {
        /// The kernel (`gpu_expr`).
        kernel: Box<str>,
        /// The function or operator, as the expression names it (`Compare(Lt)`, `Rem`).
        function: Box<str>,
        /// The element type's C name (`gpu_runtime::complex<float>`).
        element: &'static str,
    },
    /// An in-place operation whose result type cannot be stored into the array by NumPy's
    /// `same_kind` casting rule (`i32 /= i32` gives `f64`; `i16 += f32` gives `f32`), which
    /// NumPy refuses with a `UFuncTypeError`.
    #[error("kernel `{kernel}`: `{operation}` gives `{result}`, which `same_kind` casting does not store into `{target}`")]
    CastingRule {
        /// The kernel (`gpu_expr`).
        kernel: Box<str>,
        /// The operator (`Div`, `Add`).
        operation: Box<str>,
        /// The type the operation computes (NumPy's short name: `f64`).
        result: &'static str,
        /// The element type of the array stored into (`i32`).
        target: &'static str,
    },
    /// An expression of more arrays or scalars than one kernel takes.
    #[error("kernel `{kernel}`: the expression reads {arrays} arrays and {scalars} scalars; at most {limit} of each")]
    TooManyOperands {
        /// The kernel (`gpu_expr`).
        kernel: Box<str>,
        /// Arrays read.
        arrays: usize,
        /// Scalars read.
        scalars: usize,
        /// The most of each.
        limit: usize,
    },
    /// A scan whose operator or neutral element is empty.
    #[error("kernel `{kernel}`: the operator and the neutral element must be C expressions")]
    EmptyScanExpression {
        /// The kernel (`gpu_scan`).
        kernel: Box<str>,
    },
    /// A random distribution that does not apply to the element type.
    #[error("kernel `{kernel}`: no {distribution} distribution of {element}")]
    NoDistribution {
        /// The kernel (`gpu_philox`).
        kernel: Box<str>,
        /// The distribution, e.g. `Normal`.
        distribution: String,
        /// The element type asked for.
        element: &'static str,
    },
    /// An array of an elementwise kernel in PyCUDA's indexed form (`x[i]`) that is not
    /// contiguous in C order: the operation indexes memory, which only such an array lays out
    /// as its indices.
    #[error("kernel `{kernel}`: `{name}` (shape {shape:?}, strides {strides:?}) is not contiguous in C order, and the operation indexes it as memory (`{name}[i]`); pass `to_contiguous()` of it, or write the operation on elements (`{name}` for `{name}[i]`)")]
    IndexedNotContiguous {
        /// The kernel.
        kernel: Box<str>,
        /// The array's parameter.
        name: String,
        /// The array's shape.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<isize>,
    },
}

/// What an [`ArgumentError::ArgDiffers`] most likely is, for its message's hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgHint {
    /// Nothing more to say.
    None,
    /// A struct by value of the prepared size but another Rust type.
    OtherRustType,
    /// A struct by value for a CUDA vector parameter.
    VectorAsStruct,
}

fn arg_hint(hint: ArgHint) -> &'static str {
    match hint {
        ArgHint::None => "",
        ArgHint::OtherRustType => " (it was prepared for another Rust type of the same size)",
        ArgHint::VectorAsStruct => ": pass a CUDA vector with Arg::vector (or Arg::from) of its Rust type",
    }
}

fn vector_hint(rust_type: Option<&str>) -> String {
    rust_type.map_or_else(String::new, |r| {
        format!(": a CUDA vector type takes ArgType::Vector and Arg::vector of its Rust type, `{r}`")
    })
}

/// "the Rust type `T`", or "the value given" when the type is not known.
fn rust_words(rust_type: Option<&str>) -> String {
    rust_type.map_or_else(
        || "the value given".to_owned(),
        |r| format!("the Rust type `{r}`"),
    )
}

/// "argument 2 (`float *x`)", or "argument 2" with no declaration.
fn argument_words(index: usize, parameter: &str) -> String {
    if parameter.is_empty() {
        format!("argument {index}")
    } else {
        format!("argument {index} (`{parameter}`)")
    }
}

fn given_words(scalar: &Scalar, array: bool) -> String {
    if array {
        scalar.rust_type().to_owned()
    } else {
        format!("{} scalar", scalar.rust_type())
    }
}
