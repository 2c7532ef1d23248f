//! Declarator parsing: turns the tokens of one parameter (or one typedef) into
//! a type and an optional name, resolving typedef/using aliases on the way.

use std::collections::HashMap;

use crate::lexer::{join, Kind, Tok};
use crate::types::{CType, Scalar};

/// What a typedef/using name stands for.
#[derive(Debug, Clone)]
pub(crate) enum Alias {
    /// A type, and whether it carries a top-level `const` (`typedef const float cf;`).
    Type { ty: CType, top_const: bool },
    /// A type that could never be passed (function pointers, `long double`...),
    /// remembered so that a parameter using the alias gets the real reason.
    Unsupported(String),
}

pub(crate) type Aliases = HashMap<String, Alias>;

/// What names mean while parsing one declaration.
pub(crate) struct Ctx<'a> {
    pub aliases: &'a Aliases,
    /// Template type parameters in scope; they shadow aliases of the same name.
    pub template_params: &'a [String],
}

pub(crate) const UNRECOGNIZED: &str = "the parser does not understand this parameter";

/// Words that attach to a function or declaration like attributes, each
/// optionally followed by a parenthesized argument list.
const ATTRIBUTE_WORDS: &[&str] = &[
    "__launch_bounds__",
    "__attribute__",
    "__declspec",
    "alignas",
    "_Alignas",
    "__align__",
    "__maxnreg__",
    "__cluster_dims__",
    "__noinline__",
    "__forceinline__",
    "__inline__",
    "__nv_pure__",
];

/// Qualifiers that change nothing about how a value is passed.
const IGNORED_WORDS: &[&str] = &[
    "volatile",
    "restrict",
    "__restrict",
    "__restrict__",
    "register",
    "__grid_constant__",
    "typename",
];

const BUILTIN_WORDS: &[&str] = &[
    "void", "char", "short", "int", "long", "signed", "unsigned", "float", "double", "bool", "_Bool",
    "wchar_t", "char8_t", "char16_t", "char32_t", "__int128",
];

pub(crate) fn is_builtin_word(w: &str) -> bool {
    BUILTIN_WORDS.contains(&w)
}

/// Words that can never be the name of a type or of a parameter.
pub(crate) fn is_reserved(w: &str) -> bool {
    is_builtin_word(w)
        || IGNORED_WORDS.contains(&w)
        || ATTRIBUTE_WORDS.contains(&w)
        || matches!(
            w,
            "const"
                | "struct"
                | "class"
                | "union"
                | "enum"
                | "template"
                | "auto"
                | "decltype"
                | "operator"
                | "sizeof"
                | "static"
                | "extern"
                | "inline"
                | "typedef"
                | "using"
                | "namespace"
                | "return"
                | "__global__"
                | "__device__"
                | "__host__"
                | "__shared__"
                | "__constant__"
                | "__managed__"
        )
}

/// Tokens that cannot occur inside a bracketed group of a declaration. Every
/// bracket scan gives up at them, and since the callers' own scans also stop
/// there, no token is scanned more than a bounded number of times.
fn is_hard_stop(w: &str) -> bool {
    matches!(
        w,
        ";" | "{" | "}" | "__global__" | "__device__" | "__constant__" | "__managed__" | "__shared__"
    )
}

/// If the token at `i` opens a closed group of the same bracket kind, returns
/// the index of its closing token. Gives up at statement boundaries and at
/// CUDA declaration words, which keeps every scan local and the parse linear.
pub(crate) fn match_close(toks: &[Tok<'_>], i: usize) -> Option<usize> {
    let (open, close) = match toks.get(i)?.text {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        _ => return None,
    };
    let mut depth = 0usize;
    for (j, t) in toks.iter().enumerate().skip(i) {
        if t.text == open {
            depth += 1;
        } else if t.text == close {
            depth -= 1;
            if depth == 0 {
                return Some(j);
            }
        } else if is_hard_stop(t.text) {
            return None;
        }
    }
    None
}

/// Index of the `>` closing the `<` at `i`, counting nesting and ignoring
/// angle brackets inside parentheses (`Foo<(a > b)>`).
pub(crate) fn match_angle(toks: &[Tok<'_>], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut parens = 0usize;
    for (j, t) in toks.iter().enumerate().skip(i) {
        match t.text {
            "(" | "[" => parens += 1,
            ")" | "]" => parens = parens.saturating_sub(1),
            "<" if parens == 0 => depth += 1,
            ">" if parens == 0 => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(j);
                }
            }
            w if is_hard_stop(w) => return None,
            _ => {}
        }
    }
    None
}

/// If an attribute starts at `i`, the index just past it: `Some(Ok(next))`,
/// or `Some(Err(()))` when its brackets never close.
pub(crate) fn skip_attribute(toks: &[Tok<'_>], i: usize) -> Option<Result<usize, ()>> {
    let t = toks.get(i)?;
    if ATTRIBUTE_WORDS.contains(&t.text) {
        if toks.get(i + 1).is_some_and(|n| n.is("(")) {
            return Some(match_close(toks, i + 1).map(|c| c + 1).ok_or(()));
        }
        return Some(Ok(i + 1));
    }
    if t.is("[") && toks.get(i + 1).is_some_and(|n| n.is("[")) {
        return Some(match_close(toks, i).map(|c| c + 1).ok_or(()));
    }
    None
}

/// Counts of the builtin type words seen in one declaration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Words {
    void: u8,
    char: u8,
    short: u8,
    int: u8,
    long: u8,
    signed: u8,
    unsigned: u8,
    float: u8,
    double: u8,
    bool: u8,
    wchar: u8,
    char8: u8,
    char16: u8,
    char32: u8,
    int128: u8,
}

impl Words {
    fn add(&mut self, w: &str) {
        let slot = match w {
            "void" => &mut self.void,
            "char" => &mut self.char,
            "short" => &mut self.short,
            "int" => &mut self.int,
            "long" => &mut self.long,
            "signed" => &mut self.signed,
            "unsigned" => &mut self.unsigned,
            "float" => &mut self.float,
            "double" => &mut self.double,
            "bool" | "_Bool" => &mut self.bool,
            "wchar_t" => &mut self.wchar,
            "char8_t" => &mut self.char8,
            "char16_t" => &mut self.char16,
            "char32_t" => &mut self.char32,
            _ => &mut self.int128,
        };
        *slot = slot.saturating_add(1);
    }

    fn to_type(&self) -> Result<CType, String> {
        let invalid = || Err("its type is not a valid combination of C type words".to_string());
        if self.int128 > 0 {
            return Err("128-bit integers are not supported".to_string());
        }
        // The words that make a type alone (with no sign or size word), and their types.
        let alone_words = [
            (self.void, CType::Void),
            (self.bool, CType::Scalar(Scalar::Bool)),
            (self.float, CType::Scalar(Scalar::F32)),
            (self.double, CType::Scalar(Scalar::F64)),
            (self.wchar, CType::Scalar(Scalar::I32)),
            (self.char8, CType::Scalar(Scalar::U8)),
            (self.char16, CType::Scalar(Scalar::U16)),
            (self.char32, CType::Scalar(Scalar::U32)),
        ];
        let kinds = u32::from(self.char) + alone_words.iter().map(|(n, _)| u32::from(*n)).sum::<u32>();
        if kinds > 1
            || self.int > 1
            || self.short > 1
            || self.signed > 1
            || self.unsigned > 1
            || (self.signed > 0 && self.unsigned > 0)
            || (self.short > 0 && self.long > 0)
        {
            return invalid();
        }
        let sign = self.signed + self.unsigned;
        let size = self.short + self.long + self.int;
        if self.double > 0 && self.long > 0 && sign == 0 && self.int == 0 {
            return Err("`long double` has no Rust equivalent".to_string());
        }
        // At most one of them is there (`kinds`).
        if let Some((n, ty)) = alone_words.into_iter().find(|(n, _)| *n > 0) {
            return if n == 1 && sign == 0 && size == 0 {
                Ok(ty)
            } else {
                invalid()
            };
        }
        let unsigned = self.unsigned > 0;
        let pick = |s: Scalar, u: Scalar| Ok(CType::Scalar(if unsigned { u } else { s }));
        if self.char > 0 {
            if size > 0 {
                return invalid();
            }
            // Plain char is signed in device code on x86-64 and aarch64 Linux
            // hosts as nvcc/nvrtc compile it.
            return pick(Scalar::I8, Scalar::U8);
        }
        if self.short > 0 {
            return pick(Scalar::I16, Scalar::U16);
        }
        match self.long {
            0 => pick(Scalar::I32, Scalar::U32),
            // LP64: long is 64-bit.
            1 | 2 => pick(Scalar::I64, Scalar::U64),
            _ => invalid(),
        }
    }
}

/// The part of a declaration before its declarator: builtin words or a type
/// name, plus `const`. Kept so that `typedef int a, *b;` can reuse it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Base {
    kind: BaseKind,
    is_const: bool,
}

#[derive(Debug, Clone, Default)]
enum BaseKind {
    #[default]
    None,
    Words(Words),
    Named {
        text: String,
        /// Written with `struct`/`class`/`union`/`enum`: never an alias.
        elaborated: bool,
    },
}

impl Base {
    /// A struct/union/enum named `name`, for `typedef struct { ... } name;`.
    pub(crate) fn named(name: String, is_const: bool) -> Base {
        Base {
            kind: BaseKind::Named {
                text: name,
                elaborated: true,
            },
            is_const,
        }
    }
}

/// The outcome of parsing one declaration.
pub(crate) struct Walked {
    pub base: Base,
    pub name: Option<String>,
    /// The type and whether it is itself `const` at top level; Err holds the
    /// reason it cannot be passed.
    pub ty: Result<(CType, bool), String>,
}

#[derive(Default)]
struct State {
    base: Base,
    name: Option<String>,
    ptr_depth: usize,
    top_const: bool,
    dims: usize,
}

/// Parses `toks` as `decl-specifiers declarator` with no initializer.
/// `preset` supplies the specifiers when only a declarator is left, as after
/// the first comma of `typedef int a, *b;`.
pub(crate) fn walk(toks: &[Tok<'_>], ctx: &Ctx<'_>, preset: Option<&Base>) -> Walked {
    let mut st = State {
        base: preset.cloned().unwrap_or_default(),
        ..State::default()
    };
    let ty = walk_tokens(toks, &mut st).and_then(|()| resolve(&st, ctx));
    Walked {
        base: st.base,
        name: st.name,
        ty,
    }
}

fn walk_tokens(toks: &[Tok<'_>], st: &mut State) -> Result<(), String> {
    let unrecognized = || Err(UNRECOGNIZED.to_string());
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if let Some(r) = skip_attribute(toks, i) {
            i = r.map_err(|()| "an attribute's brackets are not balanced".to_string())?;
            continue;
        }
        if t.kind != Kind::Ident && t.kind != Kind::Punct {
            return unrecognized();
        }
        let has_base = !matches!(st.base.kind, BaseKind::None);
        match t.text {
            "const" => {
                if st.name.is_some() || st.dims > 0 {
                    return unrecognized();
                }
                if st.ptr_depth == 0 {
                    st.base.is_const = true;
                } else {
                    st.top_const = true;
                }
            }
            w if IGNORED_WORDS.contains(&w) => {}
            "struct" | "class" | "union" | "enum" => {
                if has_base || st.ptr_depth > 0 || st.name.is_some() {
                    return unrecognized();
                }
                let mut j = i + 1;
                if t.is("enum") && toks.get(j).is_some_and(|n| n.is("class") || n.is("struct")) {
                    j += 1;
                }
                while let Some(r) = skip_attribute(toks, j) {
                    j = r.map_err(|()| "an attribute's brackets are not balanced".to_string())?;
                }
                let next = qualified_name(toks, j)
                    .ok_or_else(|| format!("expected a type name after `{}`", t.text))?;
                st.base.kind = BaseKind::Named {
                    text: join(&toks[j..next]),
                    elaborated: true,
                };
                i = next;
                continue;
            }
            "auto" | "decltype" => {
                return Err("deduced types (`auto`, `decltype`) are not supported".to_string())
            }
            "..." => return Err("variadic parameters (`...`) are not supported".to_string()),
            "&" | "&&" => return Err("references are not supported".to_string()),
            "(" => {
                // Only to name the typedef in `typedef void (*fn)(int);`.
                if st.name.is_none() {
                    let end = match_close(toks, i).unwrap_or(toks.len());
                    st.name = toks[i..end]
                        .iter()
                        .find(|t| t.is_ident() && !is_reserved(t.text))
                        .map(|t| t.text.to_string());
                }
                let inner = toks.get(i + 1).map(|t| t.text);
                let after = match_close(toks, i).and_then(|c| toks.get(c + 1)).map(|t| t.text);
                return Err(match (inner, after) {
                    (Some("*" | "^" | "&"), Some("(")) => "function pointers are not supported".to_string(),
                    (Some("*"), Some("[")) => "pointers to arrays are not supported".to_string(),
                    (Some("&" | "&&"), _) => "references are not supported".to_string(),
                    _ => UNRECOGNIZED.to_string(),
                });
            }
            "*" => {
                if !has_base {
                    return Err("it has no type".to_string());
                }
                if st.name.is_some() || st.dims > 0 {
                    return unrecognized();
                }
                st.ptr_depth += 1;
                st.top_const = false;
            }
            "[" => {
                if !has_base {
                    return Err("it has no type".to_string());
                }
                let close = match_close(toks, i).ok_or_else(|| "its `[` is never closed".to_string())?;
                st.dims += 1;
                i = close + 1;
                continue;
            }
            w if is_builtin_word(w) => {
                if st.name.is_some() || st.ptr_depth > 0 || st.dims > 0 {
                    return unrecognized();
                }
                match &mut st.base.kind {
                    BaseKind::None => {
                        let mut words = Words::default();
                        words.add(w);
                        st.base.kind = BaseKind::Words(words);
                    }
                    BaseKind::Words(words) => words.add(w),
                    BaseKind::Named { text, .. } => {
                        return Err(format!("`{text}` cannot be combined with `{w}`"))
                    }
                }
            }
            _ if t.is_ident() || t.is("::") => {
                if !has_base && !is_reserved(t.text) {
                    let next = qualified_name(toks, i).ok_or_else(|| UNRECOGNIZED.to_string())?;
                    st.base.kind = BaseKind::Named {
                        text: join(&toks[i..next]),
                        elaborated: false,
                    };
                    i = next;
                    continue;
                }
                if has_base && st.name.is_none() && st.dims == 0 && t.is_ident() && !is_reserved(t.text) {
                    st.name = Some(t.text.to_string());
                } else {
                    return unrecognized();
                }
            }
            _ => return unrecognized(),
        }
        i += 1;
    }
    if matches!(st.base.kind, BaseKind::None) {
        return Err("it has no type".to_string());
    }
    Ok(())
}

/// Parses `::a::b<...>::c` starting at `i`; the index after it, or None if
/// there is no name there.
fn qualified_name(toks: &[Tok<'_>], mut i: usize) -> Option<usize> {
    if toks.get(i).is_some_and(|t| t.is("::")) {
        i += 1;
    }
    loop {
        let t = toks.get(i)?;
        if !t.is_ident() || is_reserved(t.text) {
            return None;
        }
        i += 1;
        if toks.get(i).is_some_and(|t| t.is("<")) {
            i = match_angle(toks, i)? + 1;
        }
        let more = toks.get(i).is_some_and(|t| t.is("::")) && toks.get(i + 1).is_some_and(|t| t.is_ident());
        if !more {
            return Some(i);
        }
        i += 1;
    }
}

/// The scalar behind a well-known typedef name from the C, C++ or CUDA headers, or from the
/// host headers nvcc includes in every kernel (`uint`, see [`crate::HOST_TYPEDEFS`]).
pub(crate) fn builtin_typedef(name: &str) -> Option<Scalar> {
    Some(match name {
        "size_t" | "uintptr_t" => Scalar::Usize,
        "ptrdiff_t" | "ssize_t" | "intptr_t" => Scalar::Isize,
        "int8_t" => Scalar::I8,
        "int16_t" => Scalar::I16,
        "int32_t" => Scalar::I32,
        "int64_t" => Scalar::I64,
        "uint8_t" => Scalar::U8,
        "uint16_t" => Scalar::U16,
        "uint32_t" => Scalar::U32,
        "uint64_t" => Scalar::U64,
        "half" | "__half" => Scalar::F16,
        "__nv_bfloat16" | "nv_bfloat16" => Scalar::Bf16,
        // `<cuda_fp8.h>`'s raw storage: the bits of one, two and four 8-bit floats.
        "__nv_fp8_storage_t" => Scalar::U8,
        "__nv_fp8x2_storage_t" => Scalar::U16,
        "__nv_fp8x4_storage_t" => Scalar::U32,
        _ => return crate::host::host_typedef(name),
    })
}

fn lookup_named(text: &str, ctx: &Ctx<'_>) -> Result<(CType, bool), String> {
    if ctx.template_params.iter().any(|p| p == text) {
        return Ok((CType::Named(text.to_string()), false));
    }
    let last = text.rsplit("::").next().unwrap_or(text);
    let alias = ctx.aliases.get(text).or_else(|| {
        // Aliases are recorded without their namespace, so `ns::real` finds
        // `real`; std names are left to the builtin table below.
        if last != text && !text.trim_start_matches("::").starts_with("std::") {
            ctx.aliases.get(last)
        } else {
            None
        }
    });
    match alias {
        Some(Alias::Type { ty, top_const }) => return Ok((ty.clone(), *top_const)),
        Some(Alias::Unsupported(reason)) => return Err(reason.clone()),
        None => {}
    }
    let bare = text.strip_prefix("::").unwrap_or(text);
    let bare = bare.strip_prefix("std::").unwrap_or(bare);
    Ok(match builtin_typedef(bare) {
        Some(s) => (CType::Scalar(s), false),
        None => match crate::host::vector_typedef(bare) {
            Some(v) => (CType::Named(v.to_string()), false),
            None => (CType::Named(text.to_string()), false),
        },
    })
}

fn resolve(st: &State, ctx: &Ctx<'_>) -> Result<(CType, bool), String> {
    let (ty, alias_const) = match &st.base.kind {
        BaseKind::None => return Err("it has no type".to_string()),
        BaseKind::Words(w) => (w.to_type()?, false),
        BaseKind::Named {
            text,
            elaborated: true,
        } => (CType::Named(text.clone()), false),
        BaseKind::Named {
            text,
            elaborated: false,
        } => lookup_named(text, ctx)?,
    };
    let is_const = st.base.is_const || alias_const;
    if st.dims > 1 {
        return Err("multi-dimensional arrays are not supported".to_string());
    }
    let own_depth = st.ptr_depth + st.dims;
    match (ty, own_depth) {
        (ty, 0) => Ok((ty, is_const)),
        (CType::Pointer { .. }, _) => Err("pointers to pointers are not supported".to_string()),
        (ty, 1) => {
            // A parameter declared as an array is a pointer, as in C.
            let top = st.ptr_depth == 1 && st.top_const;
            Ok((CType::pointer(ty, is_const), top))
        }
        _ => Err("pointers to pointers are not supported".to_string()),
    }
}

/// A C type name, resolved as a kernel parameter of that type would be: `unsigned int`, `uint`
/// and `u_int32_t` are [`Scalar::U32`], `float2` and `cuFloatComplex` are `Named("float2")`,
/// `const float *` is a pointer. `Err` holds why it is not a type a kernel can take, as a
/// sentence fragment ("pointers to pointers are not supported").
pub(crate) fn parse_type(text: &str) -> Result<CType, String> {
    let lexed = crate::lexer::lex(text);
    if let Some((_, message)) = lexed.error {
        return Err(message);
    }
    let aliases = Aliases::new();
    let ctx = Ctx {
        aliases: &aliases,
        template_params: &[],
    };
    let walked = walk(&lexed.toks, &ctx, None);
    if let Some(name) = walked.name {
        return Err(format!("`{name}` is not part of a type name"));
    }
    walked.ty.map(|(ty, _)| ty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn parse(src: &str) -> (Option<String>, Result<CType, String>) {
        let l = lex(src);
        let aliases = Aliases::new();
        let ctx = Ctx {
            aliases: &aliases,
            template_params: &[],
        };
        let w = walk(&l.toks, &ctx, None);
        (w.name, w.ty.map(|(t, _)| t))
    }

    fn s(x: Scalar) -> CType {
        CType::Scalar(x)
    }

    #[test]
    fn words() {
        assert_eq!(parse("unsigned long long k").1, Ok(s(Scalar::U64)));
        assert_eq!(parse("long int").1, Ok(s(Scalar::I64)));
        assert_eq!(parse("signed").1, Ok(s(Scalar::I32)));
        assert_eq!(parse("char16_t c").1, Ok(s(Scalar::U16)));
        assert!(parse("long long long x").1.is_err());
        assert!(parse("unsigned float x").1.is_err());
        assert!(parse("short long x").1.is_err());
        assert!(parse("int int x").1.is_err());
        assert!(parse("signed unsigned x").1.is_err());
        assert!(parse("__int128 x").1.is_err());
        assert!(parse("void int").1.is_err());
    }

    #[test]
    fn declarators() {
        assert_eq!(parse("const float * const x").0.as_deref(), Some("x"));
        assert_eq!(
            parse("ns::Foo<int, 3> *p").1,
            Ok(CType::pointer(CType::Named("ns::Foo<int, 3>".into()), false))
        );
        assert!(parse("float x y").1.is_err());
        assert!(parse("float * x *").1.is_err());
        assert!(parse("const").1.is_err());
        assert!(parse("*x").1.is_err());
        assert!(parse("Foo int").1.is_err());
        assert!(parse("float x[4").1.is_err());
        assert_eq!(parse("void (*fn)(int)").0.as_deref(), Some("fn"));
        assert_eq!(
            parse("float (*a)[4]").1,
            Err("pointers to arrays are not supported".to_string())
        );
    }

    #[test]
    fn type_names_parse_as_parameters_would() {
        use crate::types::Scalar::*;
        for (text, want) in [
            ("unsigned int", CType::Scalar(U32)),
            ("uint", CType::Scalar(U32)),
            ("u_char", CType::Scalar(U8)),
            ("ulong", CType::Scalar(U64)),
            ("float", CType::Scalar(F32)),
            ("float2", CType::Named("float2".into())),
            ("cuFloatComplex", CType::Named("float2".into())),
            ("cuDoubleComplex", CType::Named("double2".into())),
            ("const float *", CType::pointer(CType::Scalar(F32), true)),
        ] {
            assert_eq!(parse_type(text), Ok(want), "{text}");
        }
        assert!(parse_type("float x").is_err());
        assert!(parse_type("unsigned float").is_err());
        assert!(parse_type("int **").is_err());
        assert!(parse_type("").is_err());
        assert!(parse_type("/* never closed").is_err());
    }
}
