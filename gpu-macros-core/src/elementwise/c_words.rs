//! The words of C an operation may use that are not its names: keywords, type names (CUDA's
//! vector types among them), and the assignment operators.

/// The sized and CUDA number type names (`size_t`, `uint32_t`, `__half`): both C words and type
/// words.
const NUMBER_TYPES: &[&str] = &[
    "size_t",
    "ptrdiff_t",
    "int8_t",
    "uint8_t",
    "int16_t",
    "uint16_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "uint",
    "ushort",
    "ulong",
    "uchar",
    "half",
    "__half",
    "nv_bfloat16",
    "__nv_bfloat16",
];

/// C and CUDA keywords, and names of types, that an operation may use (with [`NUMBER_TYPES`]).
pub(super) const C_WORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "nullptr",
    "NULL",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "constexpr",
    "decltype",
    "template",
    "typename",
    "class",
    "namespace",
    "using",
    "new",
    "delete",
    "this",
    "operator",
    "asm",
    "__restrict__",
    "INFINITY",
    "NAN",
    "HUGE_VAL",
    "HUGE_VALF",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
];

/// Words after which an identifier is being declared (`float t = …`), with [`NUMBER_TYPES`].
pub(super) const TYPE_WORDS: &[&str] = &[
    "auto", "char", "const", "double", "float", "int", "long", "short", "signed", "unsigned", "bool",
    "volatile", "register", "static",
];

/// CUDA's vector types (`float2`, `uchar4`, `__half2`, …), usable as types in an operation.
fn is_vector_type(w: &str) -> bool {
    gpu_cuda_source::vectors::by_c_name(w).is_some()
}

pub(super) fn is_c_word(w: &str) -> bool {
    C_WORDS.contains(&w) || NUMBER_TYPES.contains(&w) || is_vector_type(w)
}

pub(super) fn is_type_word(w: &str) -> bool {
    TYPE_WORDS.contains(&w) || NUMBER_TYPES.contains(&w) || is_vector_type(w)
}

pub(super) const ASSIGN: [&str; 11] = ["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="];
