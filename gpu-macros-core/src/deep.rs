//! The build-time pass over the whole CUDA source: NVRTC's errors become Rust compile errors,
//! its warnings Rust warnings, and requested images (PTX, cubins) are compiled for embedding.
//!
//! The compile sees what the run time's sees (`nvrtc.rs`: the built-in headers, the CUDA
//! headers, the prelude; the options and `-I` directories of the attribute), so a source that
//! compiles at run time passes and one that does not fails the build with NVRTC's message.
//!
//! A message names the Rust file and line of the CUDA line it is about (`place.rs`).
//!
//! Switched off by `check = false` on the attribute or `GPU_RUNTIME_BUILD_CHECK=0`. When NVRTC
//! cannot be loaded, or the source includes a header NVRTC still cannot open, the build goes on
//! with the signature checks only and says so in a warning (a `#[deprecated]` item used at the
//! source: the one warning a stable proc-macro can give, which IDEs show too): for a missing
//! NVRTC one short line naming the install command, at the first kernel of the crate only (the
//! macro runs in one compiler process per crate); for a missing header, at each source.
//! `GPU_RUNTIME_BUILD_CHECK=require` makes both compile errors, for CI, with the whole story
//! of where NVRTC was looked for. The generated code names every variable the outcome
//! depends on in `option_env!` and every header it read in `include_bytes!`, so cargo builds the
//! crate again, and the check runs again, when one of them changes.
//!
//! Shipping: when the check passed and neither the attribute (`embed = [...]`) nor
//! `GPU_RUNTIME_EMBED` says what to embed, the source is also compiled to PTX for the GPU of the
//! machine that builds (`native_arch.rs`: the lowest compute capability of its devices, as
//! nvcc's `-arch=native`), when this NVRTC can target it and is no newer than that machine's
//! driver, and the PTX is embedded: a cold start then loads it instead of compiling. Best
//! effort: a source that does not compile for that architecture ships nothing and is compiled
//! at run time, as is every source built where there is no GPU and no
//! `GPU_RUNTIME_TARGET_GPU` (`9.0`, `sm_90`: the GPU a binary built elsewhere will run on, as
//! candle's `CUDA_COMPUTE_CAP`; it stands in for the build machine's). `GPU_RUNTIME_EMBED=none`
//! (or `embed = []`) ships nothing.

use std::sync::atomic::{AtomicBool, Ordering};

use gpu_cuda_source::nvrtc_log::{self, Diagnostic};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::check::Errors;
use crate::nvrtc::{self, Want};
use crate::place::Origin;

/// The variable that switches the check off when set to `0`, and makes a check that cannot run
/// an error when set to `require`.
pub const CHECK_VAR: &str = "GPU_RUNTIME_BUILD_CHECK";
/// Crate-wide embedding: a comma-separated list of arches, used by kernels without `embed`.
pub const EMBED_VAR: &str = "GPU_RUNTIME_EMBED";

/// What the attribute asked of the deep pass.
pub struct Request<'a> {
    pub source: &'a str,
    /// The name NVRTC compiles the source under, which its log names.
    pub file_name: &'a str,
    /// Where the source is written: what messages name (a Rust file and line for a literal).
    pub origin: Origin,
    /// Other names NVRTC's messages may give lines of the source (set by `#line`: a
    /// reduction's expressions), each with where those lines are written; their messages point
    /// there.
    pub pieces: Vec<(&'a str, Origin)>,
    /// Name expressions: kernel names, or template instantiations like `scale<float>`.
    pub names: Vec<String>,
    pub options: Vec<String>,
    /// Where diagnostics point: the source literal (or `file = "…"`).
    pub span: Span,
    /// Where a message about the kernel as a whole points: its `fn` (or `mod`) name, one line.
    pub name_span: Span,
    /// `(name, contents)` of the headers given to NVRTC in memory: those the source includes
    /// from its folder and `include_dirs`, which the run time is given too.
    pub headers: Vec<(String, Vec<u8>)>,
    /// `check = false` in the attribute.
    pub check: bool,
    /// `embed = [...]` in the attribute, each with its span.
    pub embed: Option<Vec<(String, Span)>>,
    /// Include the prelude before the source, as the run time does (`prelude = false` not
    /// given).
    pub prelude: bool,
}

impl Request<'_> {
    /// NVRTC's compile of the source, for `want`, with `options` (the request's and the
    /// architecture's).
    fn compile(&self, lib: &nvrtc::Nvrtc, options: &[String], want: Want) -> Result<nvrtc::Output, String> {
        lib.compile(
            self.source,
            self.file_name,
            &self.names,
            options,
            want,
            self.prelude,
            &self.headers,
        )
    }
}

/// What the pass adds to the expansion.
#[derive(Default)]
pub struct Outcome {
    /// Warning items and env-tracking constants.
    pub items: TokenStream,
    /// Items for beside the kernel's module, not in it: the warning that the check could not
    /// run, whose path then reads `_::CUDA_NOT_CHECKED`, not `name::_::…`.
    pub outer: TokenStream,
    /// `EmbeddedImage` expressions for `ModuleSource::with_images`.
    pub images: Vec<TokenStream>,
}

/// The message for one of NVRTC's diagnostics: where (the Rust file and line of the CUDA line
/// for a source in a literal, `place.rs`), what, and the line quoted under it, numbered as the
/// place names it.
fn render(d: &Diagnostic, origin: &Origin) -> String {
    let what = if d.is_error() { "error" } else { "warning" };
    let at = origin.at(d.line, d.column);
    let mut s = format!("CUDA {what} at {}: {}", at.text, d.message);
    if let Some(q) = &d.quoted {
        let n = at.gutter.to_string();
        s.push_str(&format!("\n {n} | {q}"));
        if let Some(c) = d.column {
            s.push_str(&format!("\n {} | {}^", " ".repeat(n.len()), " ".repeat(c - 1)));
        }
    }
    for note in &d.notes {
        s.push_str(&format!("\n = note: {note}"));
    }
    if d.message.contains(gpu_cuda_source::NVRTC_PRELUDE_NAME) {
        s.push_str(&format!(
            "\n = note: `{}` is the prelude NVRTC includes first: the typedefs nvcc's host headers \
             declare for every kernel (`uint`, `ushort`, `ulong`, `u_int`, …); to declare one of \
             these names as another type, add `prelude = false` to #[kernel]",
            gpu_cuda_source::NVRTC_PRELUDE_NAME
        ));
    }
    s
}

/// What `GPU_RUNTIME_BUILD_CHECK` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `0`, `false`, `off`, `no`: no check.
    Off,
    /// Unset or anything else: check when NVRTC and the headers are there, else warn.
    Check,
    /// `require`: a check that cannot run is a compile error.
    Require,
}

fn mode() -> Mode {
    match std::env::var(CHECK_VAR).as_deref().map(str::trim) {
        Ok("0" | "false" | "off" | "no") => Mode::Off,
        Ok("require") => Mode::Require,
        _ => Mode::Check,
    }
}

/// Makes cargo rebuild the crate when one of the variables the macro reads changes (rustc
/// records the variables that `option_env!` reads as dependencies), and when one of the headers
/// the source includes from its `-I` directories changes (`include_bytes!` makes rustc record
/// the file).
fn track_inputs(req: &Request<'_>) -> TokenStream {
    let mut vars = vec![CHECK_VAR, EMBED_VAR, crate::native_arch::TARGET_GPU_VAR];
    vars.extend(crate::nvrtc_find::NVRTC_ENV);
    vars.extend(gpu_cuda_source::cuda_include::CUDA_INCLUDE_ENV);
    // Once each: both searches read CUDA_PATH and CUDA_HOME.
    let mut seen = std::collections::HashSet::new();
    vars.retain(|v| seen.insert(*v));
    let headers: Vec<String> = gpu_cuda_source::include_scan::included_headers(
        req.source,
        &gpu_cuda_source::include_scan::include_dirs_of(&req.options),
    )
    .into_iter()
    .map(|(path, _)| path)
    .collect();
    quote! {
        #(const _: ::core::option::Option<&str> = ::core::option_env!(#vars);)*
        #(const _: &[u8] = ::core::include_bytes!(#headers);)*
    }
}

/// A warning at `span`: the use of a `#[deprecated]` item whose note is `text`.
fn warning(name: &str, text: &str, span: Span) -> TokenStream {
    let ident = format_ident!("{}", name, span = span);
    quote_spanned! {span=>
        const _: () = {
            #[deprecated(note = #text)]
            #[allow(non_camel_case_types)]
            struct #ident;
            let _ = #ident;
        };
    }
}

/// The warning for a check that could not run because NVRTC could not be loaded: one short
/// line naming the install command. The error under `require` says more ([`not_checked`]).
fn not_checked_warning(why: &str) -> String {
    let what = if why.starts_with(nvrtc::NOT_FOUND) {
        "NVRTC not found".to_owned()
    } else {
        format!("NVRTC could not be loaded ({why})")
    };
    format!(
        "{what}, so CUDA errors are not build errors: `pip install nvidia-cuda-nvrtc` or set \
         {}=/path/to/libnvrtc.so",
        crate::nvrtc_find::NVRTC_VAR
    )
}

/// The error, under `require`, for a check that could not run because NVRTC could not be
/// loaded: why, where it was looked for, and what to do.
fn not_checked(why: &str) -> String {
    format!(
        "#[kernel]: the CUDA source was not compiled at build time, only the kernel signatures \
         were checked: {why}. Install NVRTC (a CUDA toolkit, or `pip install nvidia-cuda-nvrtc`) \
         or set {}=/path/to/libnvrtc.so to check it; {CHECK_VAR}=0 skips the check on purpose, \
         {CHECK_VAR}=require makes this an error",
        crate::nvrtc_find::NVRTC_VAR
    )
}

/// The warning (the first time in this compiler process, which compiles one crate: so at the
/// crate's first kernel) or, under `require`, the error for a check that could not run.
fn skipped(why: &str, mode: Mode, req: &Request<'_>, out: &mut Outcome) -> syn::Result<()> {
    static SAID: AtomicBool = AtomicBool::new(false);
    if mode == Mode::Require {
        return Err(syn::Error::new(req.span, not_checked(why)));
    }
    if !SAID.swap(true, Ordering::Relaxed) {
        out.outer.extend(warning(
            "CUDA_NOT_CHECKED",
            &not_checked_warning(why),
            req.name_span,
        ));
    }
    Ok(())
}

/// `sm_90` → (cubin, 90); `compute_75` → (PTX, 75).
fn parse_arch(a: &str) -> Option<(bool, u32)> {
    let (cubin, num) = if let Some(n) = a.strip_prefix("sm_") {
        (true, n)
    } else {
        (false, a.strip_prefix("compute_")?)
    };
    let n: u32 = num.parse().ok()?;
    (10..1000).contains(&n).then_some((cubin, n))
}

/// Images to embed, each `(cubin, arch, where it was asked for)`, and whether nothing was asked
/// (then the default applies: PTX for this machine's GPU).
type EmbedList = (Vec<(bool, u32, Span)>, bool);

/// The images to embed, as `embed = [...]` or `GPU_RUNTIME_EMBED` lists them (`none`: none), and
/// whether neither said anything.
fn embed_list(req: &Request<'_>) -> syn::Result<EmbedList> {
    embed_list_with(req, std::env::var(EMBED_VAR).ok())
}

/// [`embed_list`], with `GPU_RUNTIME_EMBED`'s value given.
fn embed_list_with(req: &Request<'_>, var: Option<String>) -> syn::Result<EmbedList> {
    let (list, default): (Vec<(String, Span)>, bool) = match &req.embed {
        Some(l) => (l.clone(), false),
        None => match var {
            Some(v) if v.trim() == "none" => (Vec::new(), false),
            Some(v) if !v.trim().is_empty() => (
                v.split(',')
                    .map(|s| (s.trim().to_owned(), req.span))
                    .filter(|(s, _)| !s.is_empty())
                    .collect(),
                false,
            ),
            _ => (Vec::new(), true),
        },
    };
    let list = list
        .into_iter()
        .map(|(a, span)| {
            parse_arch(&a).map(|(c, n)| (c, n, span)).ok_or_else(|| {
                syn::Error::new(
                    span,
                    format!(
                        "`{a}` is not an architecture to embed: write `sm_XY` for a cubin (e.g. \
                         `sm_90`) or `compute_XY` for PTX (e.g. `compute_75`)"
                    ),
                )
            })
        })
        .collect::<syn::Result<Vec<_>>>()?;
    Ok((list, default))
}

/// The default image: PTX for the GPU of this machine (see the module's doc), when the check
/// passed. `None` when there is no such GPU, NVRTC cannot target it, the PTX would be newer
/// than this machine's driver takes, or the source does not compile for it.
fn default_image(lib: &nvrtc::Nvrtc, req: &Request<'_>, archs: &[u32]) -> Option<TokenStream> {
    let ((major, minor), driver) = crate::native_arch::target()?;
    let n = major * 10 + minor;
    let (v_major, v_minor) = lib.version();
    if !archs.contains(&n) || (v_major as u32, v_minor as u32) > driver {
        return None;
    }
    let mut options = req.options.clone();
    options.insert(0, format!("--gpu-architecture=compute_{n}"));
    let r = req.compile(lib, &options, Want::Ptx).ok().filter(|r| r.ok)?;
    let bytes = Literal::byte_string(&r.image);
    let lowered = &r.lowered;
    Some(quote! {
        ::gpu_runtime::__private_v0_1::EmbeddedImage::new(::gpu_runtime::__private_v0_1::ImageKind::Ptx, #n, #bytes, &[#(#lowered),*])
    })
}

/// Runs the deep pass. Errors are NVRTC's compile errors, or an embedding that cannot be done.
pub fn run(req: &Request<'_>) -> syn::Result<Outcome> {
    let mut out = Outcome {
        items: track_inputs(req),
        ..Outcome::default()
    };
    let mode = mode();
    let check = req.check && mode != Mode::Off;
    let (embed, default) = embed_list(req)?;
    if !check && embed.is_empty() {
        return Ok(out);
    }
    let lib = match nvrtc::get() {
        Ok(lib) => lib,
        Err(why) if embed.is_empty() => {
            skipped(why, mode, req, &mut out)?;
            return Ok(out);
        }
        Err(why) => {
            return Err(syn::Error::new(
                embed[0].2,
                format!(
                    "embedding compiled kernels needs NVRTC at build time, which could not be loaded: {why}"
                ),
            ))
        }
    };
    let archs = lib.archs();
    let user_arch = req
        .options
        .iter()
        .any(|o| o.starts_with("-arch") || o.starts_with("--gpu-architecture"));
    if check {
        // The newest virtual architecture: a kernel valid for the device it will run on is never
        // rejected for using features an older one lacks.
        let mut options = req.options.clone();
        if let (false, Some(a)) = (user_arch, archs.last()) {
            options.insert(0, format!("--gpu-architecture=compute_{a}"));
        }
        let r = req
            .compile(lib, &options, Want::Check)
            .map_err(|e| syn::Error::new(req.span, format!("NVRTC failed at build time: {e}")))?;
        report(req, &r.log, r.ok, true, mode, &mut out)?;
        // What the check passed ships, compiled for this machine's GPU (a `-arch` of the
        // user's own decides the target alone).
        if r.ok && default && !user_arch {
            out.images.extend(default_image(lib, req, &archs));
        }
    }
    for (cubin, n, span) in embed {
        if !archs.contains(&n) {
            return Err(syn::Error::new(
                span,
                format!(
                    "this NVRTC ({}.{}) cannot compile for {}_{n}: it supports {archs:?}",
                    lib.version().0,
                    lib.version().1,
                    if cubin { "sm" } else { "compute" }
                ),
            ));
        }
        let arch = format!("--gpu-architecture={}_{n}", if cubin { "sm" } else { "compute" });
        let mut options = req.options.clone();
        options.insert(0, arch);
        let r = req
            .compile(lib, &options, if cubin { Want::Cubin } else { Want::Ptx })
            .map_err(|e| syn::Error::new(span, format!("NVRTC failed at build time: {e}")))?;
        if !r.ok {
            if check {
                // The front end accepted it; the failure is in code generation for this arch.
                return Err(syn::Error::new(
                    span,
                    format!("compiling for `{n}` failed:\n{}", r.log.trim()),
                ));
            }
            report(req, &r.log, false, false, mode, &mut out)?;
            continue;
        }
        let bytes = Literal::byte_string(&r.image);
        let lowered = &r.lowered;
        let kind = if cubin { quote!(Cubin) } else { quote!(Ptx) };
        out.images.push(quote! {
            ::gpu_runtime::__private_v0_1::EmbeddedImage::new(::gpu_runtime::__private_v0_1::ImageKind::#kind, #n, #bytes, &[#(#lowered),*])
        });
    }
    Ok(out)
}

/// Turns the log into errors (returned) and warnings (items in `out`).
fn report(
    req: &Request<'_>,
    log: &str,
    ok: bool,
    warnings: bool,
    mode: Mode,
    out: &mut Outcome,
) -> syn::Result<()> {
    // A message about a line of a built-in header says it is gpu-runtime's.
    let log = &*nvrtc_log::mark_builtin_headers(log);
    let diags = nvrtc_log::parse(log, req.file_name);
    // A header NVRTC cannot open stops its compile there: everything after it would be noise.
    // The build check has every header the run time has, so the run time would most likely
    // fail the same way; but a header can also come from a directory only the machine that
    // runs the program has, so this is a warning (an error under `require`), not an error.
    if let Some(header) = missing_header(log) {
        // Where the source includes it, when the source itself does (not a header of it).
        let line = diags
            .iter()
            .find(|d| d.message.contains(&format!("open source file \"{header}\"")))
            .map(|d| d.line);
        let text = missing_header_message(&header, line.map(|l| req.origin.at(l, None).text));
        if mode == Mode::Require {
            return Err(syn::Error::new(req.span, text));
        }
        out.items
            .extend(warning("CUDA_HEADER_NOT_FOUND_AT_BUILD_TIME", &text, req.span));
        return Ok(());
    }
    let mut errors = Errors::default();
    // The same text compiled more than once (an elementwise operation is pasted into every
    // variant's loops) gives the same message once per copy: each is said once.
    let mut said = std::collections::HashSet::new();
    let mut any_error = diags.iter().any(Diagnostic::is_error);
    let pieces = req
        .pieces
        .iter()
        .map(|(name, origin)| (nvrtc_log::parse(log, name), origin, origin.span()));
    let sources = std::iter::once((diags, &req.origin, req.span)).chain(pieces);
    // With pieces, the source's own text is generated around them: its warnings (an index a
    // variant leaves unused) are the generator's, not the user's, and are not reported.
    let own_warnings = req.pieces.is_empty();
    for (k, (diags, origin, whole)) in sources.enumerate() {
        any_error |= diags.iter().any(Diagnostic::is_error);
        for (i, d) in diags.iter().enumerate() {
            let text = render(d, origin);
            if !said.insert(text.clone()) {
                continue;
            }
            // The CUDA line itself where the compiler can point inside a literal (nightly),
            // else the whole source; the text names the line either way.
            let span = origin.line_span(d.line).unwrap_or(whole);
            if d.is_error() {
                errors.push(syn::Error::new(span, text));
            } else if warnings && (k > 0 || own_warnings) {
                // Numbered by the message's place in its source's list (the pieces' after).
                let ident = format_ident!("CUDA_WARNING_{}", 1000 * k + i);
                out.items.extend(quote_spanned! {span=>
                    const _: () = {
                        #[deprecated(note = #text)]
                        #[allow(non_camel_case_types)]
                        struct #ident;
                        let _ = #ident;
                    };
                });
            }
        }
    }
    if !ok && !any_error {
        errors.push(syn::Error::new(
            req.span,
            format!("NVRTC rejected the CUDA source:\n{}", log.trim()),
        ));
    }
    errors.finish()
}

/// The header of the first "cannot open source file" in NVRTC's log.
fn missing_header(log: &str) -> Option<String> {
    // NVRTC says "could not open" with no include directory, "cannot open" with some.
    const MARK: &str = "open source file \"";
    let start = log.find(MARK)? + MARK.len();
    Some(log[start..start + log[start..].find('"')?].to_owned())
}

/// The warning for a header NVRTC could not open (`included_at`: where the source includes it):
/// short, and saying what to install when no CUDA headers were found at all.
fn missing_header_message(header: &str, included_at: Option<String>) -> String {
    let found = crate::nvrtc::get().ok().map(|lib| lib.cuda_headers());
    let why = match found {
        Some(h) if h.found() => format!(
            "it is in none of the CUDA headers ({}); put it beside the file or in `include_dirs = [..]`",
            h.options.join(" ")
        ),
        _ => format!(
            "no CUDA headers are installed: {}",
            gpu_cuda_source::cuda_include::INSTALL_HINT
        ),
    };
    let included = included_at
        .map(|at| format!(", included at {at},"))
        .unwrap_or_default();
    format!(
        "#[kernel]: not compiled at build time: `{header}`{included} was not found: {why} \
         ({CHECK_VAR}=require makes this an error)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "k.cu(3): error: identifier \"y\" is undefined\n\
                       \x20   out[i] = y;\n\
                       \x20            ^\n\
                       \n\
                       k.cu(7): warning #177-D: variable \"t\" was declared but never referenced\n\
                       \x20 int t;\n\
                       \x20     ^\n\
                       \x20         detected during instantiation of \"void f<T>() [with T=float]\"\n\
                       other.cu(1): error: not ours\n\
                       1 error detected in the compilation of \"k.cu\".\n";

    fn file(path: &str) -> Origin {
        Origin::File {
            path: path.to_owned(),
            span: Span::call_site(),
        }
    }

    #[test]
    fn diagnostics_render_like_rustc() {
        // The log itself is read by `gpu_cuda_source::nvrtc_log`, tested there.
        let d = nvrtc_log::parse(LOG, "k.cu");
        assert_eq!(d.len(), 2, "{d:?}");
        // A file source: named by its path, as `file = "…"` gives it.
        let k = file("kernels/k.cu");
        assert_eq!(
            render(&d[0], &k),
            "CUDA error at kernels/k.cu:3:12: identifier \"y\" is undefined\n 3 |   out[i] = y;\n   |            ^"
        );
        assert!(render(&d[1], &k).starts_with("CUDA warning at kernels/k.cu:7:5: "));
        assert!(render(&d[1], &k)
            .ends_with("\n = note: detected during instantiation of \"void f<T>() [with T=float]\""));
        // A literal: the line in the string where no file is known (outside a compiler; the Rust
        // file and line are `place.rs`'s tests).
        let lit: syn::LitStr =
            syn::parse_str("r#\"\nint t;\n__global__ void f() {\n  out[i] = y;\n}\"#").unwrap();
        assert!(
            render(&d[0], &Origin::literal(&lit, "kernel string")).starts_with(
                "CUDA error at line 3:12 of the kernel string: identifier \"y\" is undefined\n 3 |"
            ),
            "{}",
            render(&d[0], &Origin::literal(&lit, "kernel string"))
        );
    }

    #[test]
    fn an_error_in_a_literal_names_and_spans_its_line() {
        let lit: syn::LitStr =
            syn::parse_str("r#\"\n__global__ void k(float *out) {\n  out[i] = y;\n}\n\n\n  int t;\n\"#")
                .unwrap();
        let mut req = request(true, None);
        req.origin = Origin::literal(&lit, "kernel string");
        let e =
            report(&req, LOG, false, true, Mode::Check, &mut Outcome::default()).expect_err("NVRTC's error");
        // Outside a compiler no file is known: the line in the string (with a file, the Rust
        // file and line first, place.rs's tests).
        assert!(
            e.to_string()
                .starts_with("CUDA error at line 3:12 of the kernel string: identifier \"y\" is undefined"),
            "{e}"
        );
        // Spanned at the CUDA line where the compiler can point inside a literal (outside a
        // compiler, as here, or on nightly); on stable, at the whole literal.
        assert_eq!(e.span().source_text().as_deref(), Some("  out[i] = y;"));
    }

    #[test]
    fn a_missing_header_warns_and_under_require_fails() {
        let log = "k.cu(1): catastrophic error: cannot open source file \"common.h\"\n\
                   \x20 #include \"common.h\"\n\
                   \x20                    ^\n\n\
                   1 catastrophic error detected in the compilation of \"k.cu\".\n";
        let req = request(true, None);
        let mut out = Outcome::default();
        report(&req, log, false, true, Mode::Check, &mut out).expect("a warning");
        let items = out.items.to_string();
        assert!(items.contains("CUDA_HEADER_NOT_FOUND_AT_BUILD_TIME"), "{items}");
        // Where the source includes it, by the path the source is named by.
        assert!(
            items.contains("`common.h`, included at k.cu:1, was not found"),
            "{items}"
        );
        let e = report(&req, log, false, true, Mode::Require, &mut Outcome::default())
            .expect_err("an error under `require`");
        assert!(
            e.to_string()
                .contains("`common.h`, included at k.cu:1, was not found"),
            "{e}"
        );
        // One short sentence, not a list of every directory and built-in header.
        assert!(
            missing_header_message("common.h", Some("k.cu:1".into())).len() < 400,
            "{e}"
        );
    }

    #[test]
    fn a_missing_nvrtc_warns_once_in_one_short_line_and_under_require_fails() {
        let req = request(true, None);
        let not_found = format!("{}: not in $GPU_RUNTIME_NVRTC, …", nvrtc::NOT_FOUND);
        let e = skipped(&not_found, Mode::Require, &req, &mut Outcome::default())
            .expect_err("an error under `require`");
        // The error under `require` tells the whole story.
        assert!(e.to_string().contains("not compiled at build time"), "{e}");
        assert!(e.to_string().contains("not in $GPU_RUNTIME_NVRTC"), "{e}");
        // The warning: one short line naming the install command, beside the kernel's module.
        let text = not_checked_warning(&not_found);
        assert_eq!(
            text,
            "NVRTC not found, so CUDA errors are not build errors: `pip install nvidia-cuda-nvrtc` \
             or set GPU_RUNTIME_NVRTC=/path/to/libnvrtc.so"
        );
        assert!(!text.contains('\n'));
        // An NVRTC found and not loadable is said so, with why.
        assert!(
            not_checked_warning("/x/libnvrtc.so: undefined symbol nvrtcVersion")
                .starts_with("NVRTC could not be loaded (/x/libnvrtc.so: undefined symbol nvrtcVersion), so")
        );
        // Given once per compiler process (one crate): by the first of these at the latest.
        let (mut first, mut second) = (Outcome::default(), Outcome::default());
        skipped(&not_found, Mode::Check, &req, &mut first).unwrap();
        skipped(&not_found, Mode::Check, &req, &mut second).unwrap();
        assert!(second.outer.is_empty(), "{}", second.outer);
        assert!(first.items.is_empty() && second.items.is_empty());
    }

    #[test]
    fn the_warning_is_a_deprecated_item_and_its_use() {
        let items = warning("CUDA_NOT_CHECKED", "NVRTC not found", Span::call_site()).to_string();
        assert!(
            items.contains("# [deprecated (note = \"NVRTC not found\")]"),
            "{items}"
        );
        assert!(items.contains("struct CUDA_NOT_CHECKED ;"), "{items}");
        assert!(items.contains("let _ = CUDA_NOT_CHECKED ;"), "{items}");
    }

    #[test]
    fn architectures_to_embed() {
        assert_eq!(parse_arch("sm_90"), Some((true, 90)));
        assert_eq!(parse_arch("compute_75"), Some((false, 75)));
        for bad in ["sm90", "sm_", "sm_9", "sm_90a", "compute_1000", "ptx_75"] {
            assert_eq!(parse_arch(bad), None, "{bad}");
        }
    }

    fn request(check: bool, embed: Option<Vec<(String, Span)>>) -> Request<'static> {
        Request {
            source: "__global__ void k() {}",
            file_name: "k.cu",
            origin: file("k.cu"),
            pieces: Vec::new(),
            names: vec!["k".to_owned()],
            options: Vec::new(),
            span: Span::call_site(),
            name_span: Span::call_site(),
            headers: Vec::new(),
            check,
            embed,
            prelude: true,
        }
    }

    #[test]
    fn what_to_embed_and_whether_the_default_applies() {
        let req = request(true, None);
        let list = |var: Option<&str>| {
            let (l, default) = embed_list_with(&req, var.map(str::to_owned)).unwrap();
            (l.into_iter().map(|(c, n, _)| (c, n)).collect::<Vec<_>>(), default)
        };
        // Nothing said: the default (PTX for this machine's GPU, when there is one).
        assert_eq!(list(None), (vec![], true));
        assert_eq!(list(Some(" ")), (vec![], true));
        assert_eq!(list(Some("none")), (vec![], false));
        assert_eq!(
            list(Some("sm_90, compute_80")),
            (vec![(true, 90), (false, 80)], false)
        );
        // The attribute wins over the variable; `embed = []` ships nothing.
        let req = request(true, Some(Vec::new()));
        assert!(!embed_list_with(&req, Some("sm_90".into())).unwrap().1);
        assert!(embed_list_with(&req, Some("sm_90".into())).unwrap().0.is_empty());
    }

    #[test]
    fn a_bad_architecture_is_an_error_before_nvrtc_is_loaded() {
        let embed = Some(vec![
            ("sm_90".to_owned(), Span::call_site()),
            ("sm90".to_owned(), Span::call_site()),
        ]);
        let Err(e) = run(&request(false, embed)) else {
            panic!("`sm90` was accepted");
        };
        assert!(
            e.to_string()
                .starts_with("`sm90` is not an architecture to embed"),
            "{e}"
        );
    }

    #[test]
    fn without_check_or_embed_nvrtc_is_not_needed() {
        // Unless the environment asks for images of every kernel.
        if std::env::var_os(EMBED_VAR).is_some() {
            return;
        }
        let out = run(&request(false, Some(Vec::new()))).expect("nothing to do");
        assert!(out.images.is_empty());
        // Only the constants that make cargo rebuild when the variables change.
        let items = out.items.to_string();
        for var in [
            CHECK_VAR,
            EMBED_VAR,
            crate::native_arch::TARGET_GPU_VAR,
            nvrtc::NVRTC_VAR,
            "CUDA_HOME",
            "VIRTUAL_ENV",
        ] {
            assert!(items.contains(&format!("option_env ! (\"{var}\")")), "{items}");
        }
        // Cargo ignores changes to this one (it sets it for rustc): not named.
        assert!(!items.contains("LD_LIBRARY_PATH"), "{items}");
    }

    #[test]
    fn headers_included_from_include_dirs_are_tracked_by_cargo() {
        let dir = std::env::temp_dir().join(format!("gpu-deep-track-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("common.h"), "#define SCALE 2.0f\n").unwrap();
        let mut req = request(false, Some(Vec::new()));
        req.source = "#include \"common.h\"\n#include <cuda_fp16.h>\n__global__ void k() {}";
        req.options = vec![format!("-I{}", dir.display())];
        let items = run(&req).expect("nothing to compile").items.to_string();
        let header = dir.join("common.h").display().to_string();
        assert!(
            items.contains(&format!("include_bytes ! ({header:?})")),
            "{items}"
        );
        // Only what the source includes from its own directories.
        assert_eq!(items.matches("include_bytes").count(), 1, "{items}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
