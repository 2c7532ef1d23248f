//! What the preprocessor is told: the options it reads as NVRTC would, and where headers come
//! from.

/// The `__CUDA_ARCH__` declarations are read for when the options name no architecture:
/// compute capability 12.0, newer than any a kernel's `#if __CUDA_ARCH__ >= …` asks for today,
/// as the build-time check compiles for the newest architecture its NVRTC has.
pub const DEFAULT_CUDA_ARCH: u32 = 1200;

/// A header found for an `#include`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// What identifies it (its path): an `#include "…"` inside it is looked for relative to
    /// it, and `#pragma once` and the budget count it once.
    pub id: String,
    /// Its text.
    pub text: String,
}

/// Finds a header: `(name as written, quoted, id of the including header or None for the
/// source)`.
pub type HeaderSource<'a> = &'a dyn Fn(&str, bool, Option<&str>) -> Option<Header>;

/// How a source is preprocessed before its declarations are read: the macros NVRTC defines,
/// the `-D`/`-U` options, the architecture, and where `#include`d headers come from.
///
/// ```
/// use gpu_cuda_source::{Declarations, Preprocess};
/// let src = "#define K(T, N) extern \"C\" __global__ void N(const T *x, T *y) {}\n\
///            K(float, copy_f32)\n\
///            #if __CUDA_ARCH__ >= 800\nK(double, copy_f64)\n#endif\n";
/// let all = Declarations::read(src, &Preprocess::new());
/// assert_eq!(all.find_kernel("copy_f64").unwrap().line, 4);
/// let old = Preprocess::from_options(&["-arch=compute_75".to_owned()]);
/// assert!(Declarations::read(src, &old).find_kernel("copy_f64").is_err());
/// ```
#[derive(Clone)]
pub struct Preprocess<'a> {
    /// `(true, "NAME=VALUE")` for `-D`, `(false, "NAME")` for `-U`, in order.
    pub(crate) defines: Vec<(bool, String)>,
    pub(crate) cuda_arch: u32,
    pub(crate) cplusplus: &'static str,
    headers: Option<HeaderSource<'a>>,
}

impl Default for Preprocess<'_> {
    fn default() -> Self {
        Preprocess::new()
    }
}

impl std::fmt::Debug for Preprocess<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preprocess")
            .field("defines", &self.defines)
            .field("cuda_arch", &self.cuda_arch)
            .field("cplusplus", &self.cplusplus)
            .field("headers", &self.headers.is_some())
            .finish()
    }
}

impl<'a> Preprocess<'a> {
    /// NVRTC's predefined macros for [`DEFAULT_CUDA_ARCH`], no headers.
    pub fn new() -> Preprocess<'a> {
        Preprocess {
            defines: Vec::new(),
            cuda_arch: DEFAULT_CUDA_ARCH,
            cplusplus: "201703L",
            headers: None,
        }
    }

    /// As NVRTC would compile with `options`: their `-D`/`--define-macro`, `-U`/
    /// `--undefine-macro`, `-arch`/`--gpu-architecture` (`sm_90`, `compute_80`, `sm_90a`) and
    /// `-std`; the others do not change what the preprocessor sees.
    pub fn from_options(options: &[String]) -> Preprocess<'a> {
        let mut p = Preprocess::new();
        let mut it = options.iter().map(|o| o.trim()).peekable();
        while let Some(o) = it.next() {
            // An option and its value as one string or as two.
            let mut value = |flags: &[&str]| -> Option<String> {
                for f in flags {
                    if let Some(v) = o.strip_prefix(f) {
                        let v = v.strip_prefix('=').unwrap_or(v);
                        if !v.is_empty() {
                            return Some(v.to_owned());
                        }
                        if o == *f {
                            return it.next().map(str::to_owned);
                        }
                    }
                }
                None
            };
            if let Some(d) = value(&["--define-macro", "-D"]) {
                p.defines.push((true, d));
            } else if let Some(u) = value(&["--undefine-macro", "-U"]) {
                p.defines.push((false, u));
            } else if let Some(a) = value(&["--gpu-architecture", "-arch"]) {
                if let Some(n) = arch_number(&a) {
                    p.cuda_arch = n;
                }
            } else if let Some(s) = value(&["--std", "-std"]) {
                p.cplusplus = match s.trim_start_matches("c++") {
                    "03" | "11" => "201103L",
                    "14" => "201402L",
                    "20" => "202002L",
                    "23" | "2b" => "202302L",
                    _ => "201703L",
                };
            }
        }
        p
    }

    /// Defines a macro as `-D` does: `NAME`, `NAME=VALUE` or `NAME(x)=VALUE`.
    pub fn define(mut self, definition: &str) -> Preprocess<'a> {
        self.defines.push((true, definition.to_owned()));
        self
    }

    /// Reads the sources for `__CUDA_ARCH__` = `arch` (`900` for compute capability 9.0).
    pub fn cuda_arch(mut self, arch: u32) -> Preprocess<'a> {
        self.cuda_arch = arch;
        self
    }

    /// The `__CUDA_ARCH__` the sources are read for.
    pub fn arch(&self) -> u32 {
        self.cuda_arch
    }

    /// Where `#include`d headers come from; without one, `#include`s are not followed (as when
    /// the header is one of CUDA's).
    pub fn headers(mut self, source: HeaderSource<'a>) -> Preprocess<'a> {
        self.headers = Some(source);
        self
    }

    /// Whether `-D` or `-U` options are given.
    pub(crate) fn has_defines(&self) -> bool {
        !self.defines.is_empty()
    }

    pub(crate) fn find_header(&self, name: &str, quoted: bool, includer: Option<&str>) -> Option<Header> {
        self.headers.and_then(|h| h(name, quoted, includer))
    }
}

/// `sm_90`, `compute_90a`, `sm_100f` → `900`, `900`, `1000`.
fn arch_number(arch: &str) -> Option<u32> {
    let digits = arch
        .strip_prefix("sm_")
        .or_else(|| arch.strip_prefix("compute_"))?
        .trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let n: u32 = digits.parse().ok()?;
    (10..10_000).contains(&n).then_some(n * 10)
}
