//! The device part of a CUDA source that holds host code beside its kernels, as nvcc's device
//! compile sees it.
//!
//! Real `.cu` files keep their host code (launchers, `main`, op wrappers, globals such as a
//! cuBLAS handle) beside the kernels; nvcc sends it to the host compiler. NVRTC compiles device
//! code only and rejects every host function and host variable, declarations included ("host
//! functions are not allowed in JIT mode"). `-default-device` would make them device code
//! instead, which then fails on what only the host has (`<<<…>>>`, `fprintf`, the CUDA runtime).
//! So the compile leaves them out: [`device_part`] blanks every namespace-scope and class-scope
//! declaration that is host code, in place (spaces for its tokens, newlines kept, so that
//! NVRTC's line and column numbers stay the file's, and preprocessor lines untouched):
//!
//! - functions not marked `__device__` or `__global__` (unmarked, or `__host__` alone), with
//!   their bodies, template heads and `extern "C"`; `= default` and `= delete` ones stay;
//!   `constexpr` ones become `__host__ __device__` instead (as `--expt-relaxed-constexpr` lets
//!   device code call them under nvcc);
//! - variables at namespace scope (and `static` data members) not marked `__device__`,
//!   `__constant__`, `__shared__` or `__managed__`, unless `const` or `constexpr` (NVRTC takes
//!   those as device constants, as device code may use them under nvcc).
//!
//! Markings spelled through a macro (`#define HD __host__ __device__`) count when the macro is
//! defined in the source or in one of the `headers` passed in. Anything it cannot read with
//! certainty it leaves as written: a top-level macro call (`UNARY_OP(float, uexp_f32, …)`,
//! which may stamp out kernels), unbalanced braces (a function whose head is split over
//! `#if` branches), a source that does not tokenize. A source without host code comes back as
//! `None`, unchanged.

use std::collections::HashMap;

use crate::lexer::{lex, Kind, Tok};

/// Execution and memory space markings.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Marks {
    device: bool,
    global: bool,
    host: bool,
    /// `__constant__`, `__shared__`, `__managed__`: a device variable.
    memory: bool,
}

impl Marks {
    fn or(self, o: Marks) -> Marks {
        Marks {
            device: self.device || o.device,
            global: self.global || o.global,
            host: self.host || o.host,
            memory: self.memory || o.memory,
        }
    }

    fn any(self) -> bool {
        self.device || self.global || self.host || self.memory
    }
}

/// The markings of a keyword, or `None`.
fn keyword_marks(word: &str) -> Option<Marks> {
    let m = Marks::default();
    Some(match word {
        "__device__" => Marks { device: true, ..m },
        "__global__" | "__launch_bounds__" | "__cluster_dims__" | "__maxnreg__" => {
            Marks { global: true, ..m }
        }
        "__host__" => Marks { host: true, ..m },
        "__constant__" | "__shared__" | "__managed__" | "__grid_constant__" => Marks { memory: true, ..m },
        // libcu++'s and CUDA's own spellings, which user code borrows.
        "_CCCL_HOST_DEVICE" | "_CCCL_API" | "__CUDA_HOSTDEVICE__" | "_CCCL_TRIVIAL_API" => Marks {
            host: true,
            device: true,
            ..m
        },
        "_CCCL_DEVICE" | "_CCCL_DEVICE_API" => Marks { device: true, ..m },
        _ => return None,
    })
}

/// Object-like macros whose expansion holds a marking, from the `#define` lines of `texts`
/// (repeated, so that a macro defined through another counts).
fn marking_macros(texts: &[&str]) -> HashMap<String, Marks> {
    let mut defines: Vec<(String, Vec<String>)> = Vec::new();
    for text in texts {
        for rest in crate::constants::define_lines(text) {
            let rest = rest.trim_start();
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (name, body) = rest.split_at(name_len);
            // A function-like macro (its `(` right after the name) is a call, not a marking.
            if name.is_empty() || body.starts_with('(') {
                continue;
            }
            let words = body
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            defines.push((name.to_owned(), words));
        }
    }
    let mut known: HashMap<String, Marks> = HashMap::new();
    // A chain of macros is resolved one link per round; real chains are short.
    for _ in 0..4 {
        let mut grew = false;
        for (name, words) in &defines {
            let marks = words.iter().fold(Marks::default(), |acc, w| {
                acc.or(keyword_marks(w)
                    .or_else(|| known.get(w).copied())
                    .unwrap_or_default())
            });
            if marks.any() && known.get(name) != Some(&marks) {
                known.insert(name.clone(), marks);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    known
}

/// Identifiers followed by a parenthesized argument that is not a declarator's parameter list.
fn takes_parens(word: &str) -> bool {
    matches!(
        word,
        "__attribute__"
            | "__declspec"
            | "alignas"
            | "__align__"
            | "__launch_bounds__"
            | "__cluster_dims__"
            | "__maxnreg__"
            | "decltype"
            | "noexcept"
            | "throw"
            | "__builtin_align__"
            | "_Alignas"
            | "__nv_register_params__"
    )
}

struct Pass<'a> {
    toks: Vec<Tok<'a>>,
    i: usize,
    macros: HashMap<String, Marks>,
    /// Byte ranges of tokens to blank.
    blank: Vec<(usize, usize)>,
    /// Byte offsets where `__host__ __device__ ` goes (a `constexpr` function).
    both: Vec<usize>,
}

/// The source could not be read with certainty: leave it as written.
struct Unsure;

impl<'a> Pass<'a> {
    fn tok(&self, i: usize) -> Option<&Tok<'a>> {
        self.toks.get(i)
    }

    fn is(&self, i: usize, text: &str) -> bool {
        self.tok(i).is_some_and(|t| t.text == text)
    }

    /// The index after the bracket that closes the one at `open` (`(`, `[` or `{`).
    fn skip_balanced(&self, open: usize) -> Result<usize, Unsure> {
        let mut depth = 0usize;
        let mut i = open;
        while let Some(t) = self.tok(i) {
            match t.text {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth = depth.checked_sub(1).ok_or(Unsure)?;
                    if depth == 0 {
                        return Ok(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err(Unsure)
    }

    /// The index after a template head `template <…>` whose `<` is at `open`.
    fn skip_angles(&self, open: usize) -> Result<usize, Unsure> {
        let mut depth = 0usize;
        let mut i = open;
        while let Some(t) = self.tok(i) {
            match t.text {
                "<" => depth += 1,
                ">" => {
                    depth = depth.checked_sub(1).ok_or(Unsure)?;
                    if depth == 0 {
                        return Ok(i + 1);
                    }
                }
                "(" | "[" | "{" => {
                    i = self.skip_balanced(i)?;
                    continue;
                }
                ";" | "}" => return Err(Unsure),
                _ => {}
            }
            i += 1;
        }
        Err(Unsure)
    }

    fn marks_of(&self, t: &Tok<'_>) -> Marks {
        keyword_marks(t.text)
            .or_else(|| self.macros.get(t.text).copied())
            .unwrap_or_default()
    }

    /// Declarations up to the `}` that closes the scope (or the end, for the file).
    fn scope(&mut self, in_class: bool, closed: bool) -> Result<(), Unsure> {
        loop {
            let Some(t) = self.tok(self.i).copied() else {
                return if closed { Err(Unsure) } else { Ok(()) };
            };
            match t.text {
                "}" if closed => {
                    self.i += 1;
                    return Ok(());
                }
                "}" => return Err(Unsure),
                ";" => self.i += 1,
                "public" | "private" | "protected" if in_class && self.is(self.i + 1, ":") => self.i += 2,
                "namespace" => self.namespace()?,
                "inline" if self.is(self.i + 1, "namespace") => {
                    self.i += 1;
                    self.namespace()?;
                }
                "extern"
                    if self.tok(self.i + 1).is_some_and(|s| s.kind == Kind::Str)
                        && self.is(self.i + 2, "{") =>
                {
                    self.i += 3;
                    self.scope(false, true)?;
                }
                _ if !in_class
                    && t.kind == Kind::Ident
                    && self.is(self.i + 1, "(")
                    && keyword_marks(t.text).is_none()
                    && !self.macros.contains_key(t.text)
                    && !takes_parens(t.text) =>
                {
                    // Outside a class (where a constructor does) a declaration never starts
                    // with `name(`, but a macro call does (and `static_assert(…)`): left as
                    // written, whatever it expands to.
                    self.i = self.skip_balanced(self.i + 1)?;
                }
                _ => self.declaration(in_class)?,
            }
        }
    }

    /// `namespace N {`, `namespace {`, `namespace A::B {`, or an alias `namespace N = M;`.
    fn namespace(&mut self) -> Result<(), Unsure> {
        let mut i = self.i + 1;
        while let Some(t) = self.tok(i) {
            match t.text {
                "{" => {
                    self.i = i + 1;
                    return self.scope(false, true);
                }
                ";" => {
                    self.i = i + 1;
                    return Ok(());
                }
                _ => i += 1,
            }
        }
        Err(Unsure)
    }

    /// One declaration from `self.i`: classified, and blanked when it is host code.
    fn declaration(&mut self, in_class: bool) -> Result<(), Unsure> {
        let start = self.i;
        let mut i = start;
        // Template heads: `template <…>` (several for members of class templates).
        while self.is(i, "template") && self.is(i + 1, "<") {
            i = self.skip_angles(i + 1)?;
        }
        let head = i;
        let mut marks = Marks::default();
        let mut words: Vec<&str> = Vec::new();
        // Whether a `(` of a declarator came before any `=`: a function.
        let mut function = false;
        let mut assigned = false;
        let mut class_key = false;
        let mut class_body = false;
        let mut after_params = false;
        let mut init_list = false;
        // The tokens before a body or initializer: where `const` and `*` are read.
        let mut declarator_tokens: Vec<&str> = Vec::new();
        loop {
            let Some(t) = self.tok(i).copied() else {
                return Err(Unsure);
            };
            match t.text {
                ";" => {
                    i += 1;
                    break;
                }
                "}" => return Err(Unsure),
                "{" => {
                    if class_key && !function && !assigned && !class_body {
                        // A class, struct, union or enum body.
                        class_body = true;
                        let is_enum = words.contains(&"enum");
                        if is_enum {
                            i = self.skip_balanced(i)?;
                        } else {
                            self.i = i + 1;
                            self.scope(true, true)?;
                            i = self.i;
                        }
                        continue;
                    }
                    if function && !assigned && (after_params || init_list) {
                        let prev = self.tok(i - 1).map_or("", |p| p.text);
                        let prev_kind = self.tok(i - 1).map(|p| p.kind);
                        if init_list && (prev_kind == Some(Kind::Ident) || prev == ">") {
                            // A member initializer `y{a}`.
                            i = self.skip_balanced(i)?;
                            continue;
                        }
                        // The function's body: the declaration ends after it.
                        i = self.skip_balanced(i)?;
                        break;
                    }
                    // A brace initializer.
                    i = self.skip_balanced(i)?;
                }
                "(" if !function && i > head && self.is(i - 1, "operator") && self.is(i + 1, ")") => {
                    // `operator()`: the name, not the parameters.
                    i += 2;
                }
                "(" => {
                    let prev = self.tok(i - 1).filter(|_| i > head);
                    let attribute =
                        prev.is_some_and(|p| takes_parens(p.text) || keyword_marks(p.text).is_some());
                    if !assigned && !attribute && !function && !class_body {
                        function = prev.is_some_and(|p| {
                            p.kind == Kind::Ident || p.text == ">" || p.text == ")" || p.text == "]"
                        });
                        if function {
                            let close = self.skip_balanced(i)?;
                            i = close;
                            after_params = true;
                            continue;
                        }
                    }
                    i = self.skip_balanced(i)?;
                }
                "[" => i = self.skip_balanced(i)?,
                ":" if function && after_params && !assigned => {
                    init_list = true;
                    i += 1;
                }
                "=" => {
                    if !function {
                        assigned = true;
                    } else if after_params && !init_list {
                        // `= default`, `= delete`, `= 0`: no body follows.
                        let next = self.tok(i + 1).map_or("", |n| n.text);
                        if next == "default" || next == "delete" {
                            // Declared special members are device code too.
                            marks.device = true;
                        }
                        assigned = true;
                    } else {
                        assigned = true;
                    }
                    i += 1;
                }
                _ => {
                    if t.kind == Kind::Ident {
                        marks = marks.or(self.marks_of(&t));
                        if matches!(t.text, "class" | "struct" | "union" | "enum") && !function {
                            class_key = true;
                        }
                        if !function {
                            words.push(t.text);
                        }
                    }
                    if !function && !assigned && !class_body {
                        declarator_tokens.push(t.text);
                    }
                    i += 1;
                }
            }
        }
        self.i = i;
        let first = words.first().copied().unwrap_or("");
        if words.contains(&"typedef") || matches!(first, "using" | "static_assert") {
            return Ok(());
        }
        if class_key && !function && (class_body || !assigned) {
            // A class, struct, union or enum: defined (its members are done) or declared.
            return Ok(());
        }
        let host_code = if function {
            if marks.device || marks.global {
                false
            } else if words.contains(&"constexpr") && !marks.host {
                // Device code may call it under nvcc (with relaxed constexpr): both sides.
                self.both.push(self.tok(head).map_or(0, |t| t.start));
                false
            } else {
                true
            }
        } else if in_class && !words.contains(&"static") {
            // A data member.
            false
        } else {
            !(marks.device || marks.memory || words.contains(&"constexpr") || is_const(&declarator_tokens))
        };
        if host_code {
            for t in &self.toks[start..i] {
                self.blank.push((t.start, t.end));
            }
        }
        Ok(())
    }
}

/// The bodies of the `#define`s of `source` (after the name and any parameters), each with its
/// byte offset: the body's line splices (`\` and the newline after it) made spaces, so that
/// it reads as one line of the same length.
fn macro_bodies(source: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let bytes = source.as_bytes();
    let mut line_start = 0;
    while line_start < bytes.len() {
        // The logical line: up to a newline not preceded by a backslash.
        let mut end = line_start;
        while end < bytes.len() {
            if bytes[end] == b'\n'
                && !(end > 0 && bytes[end - 1] == b'\\')
                && !(end > 1 && bytes[end - 1] == b'\r' && bytes[end - 2] == b'\\')
            {
                break;
            }
            end += 1;
        }
        let line = &source[line_start..end];
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix('#') {
            let rest_trim = rest.trim_start();
            if let Some(after) = rest_trim.strip_prefix("define") {
                if after.starts_with([' ', '\t']) {
                    let name_at = line.len() - after.trim_start().len();
                    let after = &line[name_at..];
                    let name_len = after
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(after.len());
                    let mut body_at = name_at + name_len;
                    if line[body_at..].starts_with('(') {
                        match line[body_at..].find(')') {
                            Some(close) => body_at += close + 1,
                            None => body_at = line.len(),
                        }
                    }
                    let flat: String = line[body_at..]
                        .char_indices()
                        .map(|(i, c)| {
                            let next = line[body_at + i + c.len_utf8()..].chars().next();
                            match c {
                                '\\' if matches!(next, Some('\n') | Some('\r')) => ' ',
                                '\n' | '\r' => ' ',
                                c => c,
                            }
                        })
                        .collect();
                    if flat.contains('{') {
                        out.push((line_start + body_at, flat));
                    }
                }
            }
        }
        line_start = end + 1;
    }
    out
}

/// Whether a variable whose declaration reads `tokens` (up to its initializer) is itself
/// `const`: `const int n`, `static const char *const names[]`, not `const char *p`.
fn is_const(tokens: &[&str]) -> bool {
    match tokens.iter().rposition(|t| *t == "*" || *t == "&" || *t == "&&") {
        Some(p) => tokens.get(p + 1) == Some(&"const"),
        None => tokens.contains(&"const"),
    }
}

/// What a compile of a source with host code gives NVRTC instead: the device part of the source
/// and of each header it includes from its include directories that holds host code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceParts {
    /// The source's device part, when it differs from the source.
    pub source: Option<String>,
    /// `(include name, device part)` of each included header that holds host code: given to
    /// NVRTC as in-memory headers of those names, which it finds before the include
    /// directories.
    pub headers: Vec<(String, String)>,
}

/// The device parts of `source` and of the headers it includes from the `-I` directories of
/// `options` (see [`device_part`]). Nothing with `-default-device` among the options: that
/// asks NVRTC to take unmarked functions as device code instead.
pub fn device_parts(source: &str, options: &[String]) -> DeviceParts {
    device_parts_with(source, options, &[])
}

/// [`device_parts`] of a source whose local headers are also `given` in memory (the kernel
/// file's headers embedded in the binary, by include name): those are taken as they are given,
/// before any found through the `-I` directories of `options`, and their device parts are
/// among the result's `headers` when they hold host code. The caller passes NVRTC each given
/// header as the result's device part where there is one, else as given.
pub fn device_parts_with(source: &str, options: &[String], given: &[(&str, &str)]) -> DeviceParts {
    if options
        .iter()
        .any(|o| o == "-default-device" || o == "--default-device")
    {
        return DeviceParts::default();
    }
    let dirs = crate::include_scan::include_dirs_of(options);
    let local = crate::include_scan::local_headers(source, None, &dirs, &[]).unwrap_or_default();
    let found: Vec<(String, String)> = local
        .iter()
        .filter(|h| !given.iter().any(|(n, _)| *n == h.name))
        .map(|h| (h.name.clone(), String::from_utf8_lossy(&h.contents).into_owned()))
        .collect();
    let all: Vec<(&str, &str)> = given
        .iter()
        .copied()
        .chain(found.iter().map(|(n, t)| (n.as_str(), t.as_str())))
        .collect();
    let refs: Vec<&str> = all.iter().map(|(_, t)| *t).collect();
    let mut headers: Vec<(String, String)> = Vec::new();
    for (name, text) in &all {
        if headers.iter().any(|(n, _)| n == name) {
            continue;
        }
        if let Some(part) = device_part(text, &refs) {
            headers.push((name.to_string(), part));
        }
    }
    DeviceParts {
        source: device_part(source, &refs),
        headers,
    }
}

/// The device part of `source`: its host functions and host variables blanked (see the module
/// documentation), or `None` when it has none (or cannot be read with certainty). `headers` are
/// texts whose `#define`s may spell a marking (`#define HD __host__ __device__`): the headers
/// the source includes.
pub fn device_part(source: &str, headers: &[&str]) -> Option<String> {
    let lexed = lex(source);
    if lexed.error.is_some() {
        return None;
    }
    let mut texts = vec![source];
    texts.extend_from_slice(headers);
    let mut pass = Pass {
        toks: lexed.toks,
        i: 0,
        macros: marking_macros(&texts),
        blank: Vec::new(),
        both: Vec::new(),
    };
    pass.scope(false, false).ok()?;
    // Host functions a macro stamps out (`#define LAUNCHER(tag) void launch_##tag(…) {…}`):
    // blanked in the macro's body, so that its calls expand to the device part only.
    for (offset, body) in macro_bodies(source) {
        let lexed = lex(&body);
        if lexed.error.is_some() {
            continue;
        }
        let mut inner = Pass {
            toks: lexed.toks,
            i: 0,
            macros: std::mem::take(&mut pass.macros),
            blank: Vec::new(),
            both: Vec::new(),
        };
        let read = inner.scope(false, false);
        pass.macros = std::mem::take(&mut inner.macros);
        if read.is_ok() {
            pass.blank
                .extend(inner.blank.iter().map(|(s, e)| (s + offset, e + offset)));
            pass.both.extend(inner.both.iter().map(|p| p + offset));
        }
    }
    if pass.blank.is_empty() && pass.both.is_empty() {
        return None;
    }
    let mut bytes = source.as_bytes().to_vec();
    for (s, e) in &pass.blank {
        for b in &mut bytes[*s..*e] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }
    // Only ASCII bytes were written over whole tokens: still UTF-8.
    let blanked = String::from_utf8(bytes).ok()?;
    let mut out = String::with_capacity(blanked.len() + 20 * pass.both.len());
    let mut at = 0;
    let mut both = pass.both;
    both.sort_unstable();
    for pos in both {
        out.push_str(&blanked[at..pos]);
        out.push_str("__host__ __device__ ");
        at = pos;
    }
    out.push_str(&blanked[at..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source with host code removed, its blank runs squeezed, for comparing.
    fn squeezed(src: &str) -> String {
        device_part(src, &[])
            .unwrap_or_else(|| src.to_owned())
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn host_functions_and_variables_go_kernels_and_device_code_stay() {
        let src = "#include <vector>\n\
                   static cublasHandle_t handle;\n\
                   const int N = 4;\n\
                   static const char *const names[] = {\"a\"};\n\
                   const char *label = \"x\";\n\
                   __device__ float table[N];\n\
                   __constant__ float c[2] = {1, 2};\n\
                   extern __shared__ float smem[];\n\
                   __device__ __forceinline__ float sq(float x) { return x * x; }\n\
                   __host__ __device__ float hd(float x) { return x; }\n\
                   template <typename T> __global__ void k(T *x) { x[0] = sq(1); }\n\
                   template <typename T> void launch(T *x, std::vector<int> &v) { k<<<1, 1>>>(x); }\n\
                   __host__ void host_only() {}\n\
                   int main(int argc, char **argv) { launch<float>(0, v); return 0; }\n";
        let out = device_part(src, &[]).expect("host code removed");
        // Lines stay where they were.
        assert_eq!(out.lines().count(), src.lines().count());
        assert_eq!(out.len(), src.len());
        assert_eq!(
            squeezed(src),
            "#include <vector> const int N = 4; static const char *const names[] = {\"a\"}; \
             __device__ float table[N]; __constant__ float c[2] = {1, 2}; extern __shared__ float smem[]; \
             __device__ __forceinline__ float sq(float x) { return x * x; } \
             __host__ __device__ float hd(float x) { return x; } \
             template <typename T> __global__ void k(T *x) { x[0] = sq(1); }"
        );
    }

    #[test]
    fn class_members_namespaces_and_extern_c() {
        let src = "namespace ops {\n\
                   struct Acc {\n\
                     float v = 0;\n\
                     static int count;\n\
                     static constexpr int K = 3;\n\
                     Acc() = default;\n\
                     Acc(float x) : v(x), w{x} {}\n\
                     __device__ void add(float x) { v += x; }\n\
                     void print() const { printf(\"%f\", v); }\n\
                   public:\n\
                     float w;\n\
                   };\n\
                   extern \"C\" {\n\
                   __global__ void kern(float *y) { y[0] = 1; }\n\
                   void run(float *y) { kern<<<1, 1>>>(y); }\n\
                   }\n\
                   extern \"C\" void declared(int);\n\
                   constexpr int twice(int x) { return 2 * x; }\n\
                   }\n";
        assert_eq!(
            squeezed(src),
            "namespace ops { struct Acc { float v = 0; static constexpr int K = 3; Acc() = default; \
             __device__ void add(float x) { v += x; } public: float w; }; \
             extern \"C\" { __global__ void kern(float *y) { y[0] = 1; } } \
             __host__ __device__ constexpr int twice(int x) { return 2 * x; } }"
        );
    }

    #[test]
    fn markings_through_macros_count_and_macro_calls_stay() {
        let header = "#ifdef __CUDACC__\n#define HD __host__ __device__\n#else\n#define HD\n#endif\n\
                      #define DEV_INLINE static __device__ __forceinline__\n#define INLINE DEV_INLINE\n";
        let src = "#include \"h.h\"\n\
                   HD float both(float x) { return x; }\n\
                   INLINE float dev(float x) { return x; }\n\
                   UNARY_OP(float, uexp_f32, expg(x))\n\
                   UNARY_OP(double, uexp_f64, expg(x))\n\
                   static_assert(sizeof(float) == 4, \"f\");\n\
                   void host(float x) { }\n";
        let out = device_part(src, &[header]).expect("the host function goes");
        let s = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            s,
            "#include \"h.h\" HD float both(float x) { return x; } INLINE float dev(float x) { return x; } \
             UNARY_OP(float, uexp_f32, expg(x)) UNARY_OP(double, uexp_f64, expg(x)) \
             static_assert(sizeof(float) == 4, \"f\");"
        );
    }

    #[test]
    fn device_only_sources_are_left_alone() {
        for src in [
            "__global__ void k(float *x) { x[0] = 1; }\n",
            "#include <cuda_fp16.h>\ntemplate <int N> struct S { int a[N]; };\ntypedef S<3> S3;\nusing F = float;\nenum E { A, B };\n__device__ S3 s;\n",
            "struct P { float x, y; };\nstruct Q;\ntemplate <class T> struct R;\n",
            // A function head split over `#if` branches: unbalanced, left as it is.
            "#ifdef X\n__device__ void f() {\n#else\nvoid f() {\n#endif\n}\n",
            "",
        ] {
            assert_eq!(device_part(src, &[]), None, "{src}");
        }
        // Preprocessor lines inside a removed body stay, for what they define.
        let out = device_part(
            "void f() {\n#define LATER 1\n}\n__global__ void k(int *x) { x[0] = LATER; }\n",
            &[],
        )
        .unwrap();
        assert!(out.contains("#define LATER 1"), "{out}");
        assert!(!out.contains("void f"), "{out}");
    }

    #[test]
    fn host_functions_a_macro_stamps_out_are_blanked_in_its_body() {
        let src = "#define OP(name, ty) \\\n\
                   extern \"C\" __global__ void name##_k(ty *x) { x[0] = 1; } \\\n\
                   extern \"C\" void launch_##name(ty *x, void *s) { \\\n\
                     name##_k<<<1, 1, 0, (cudaStream_t)s>>>(x); \\\n\
                   }\n\
                   OP(f32, float)\n\
                   #define PLAIN 3\n";
        let out = device_part(src, &[]).expect("the launcher goes");
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        let s = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            s,
            "#define OP(name, ty) \\ extern \"C\" __global__ void name##_k(ty *x) { x[0] = 1; } \\ \\ \\ \
             OP(f32, float) #define PLAIN 3"
        );
    }

    #[test]
    fn any_input_is_safe() {
        for src in [
            "}",
            "{",
            "void f(",
            "template <",
            "namespace {",
            "extern \"C\" {",
            "struct S {",
            "int x = {",
            "a(b",
            ")",
            "#define",
            "#define X(",
            "#define X(a) \\",
            "#define X { void f() {} \\\r\n}",
            "\\\n#define é(x) {é}",
        ] {
            let _ = device_part(src, &[]);
        }
    }
}
