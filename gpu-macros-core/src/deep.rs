//! The build-time pass over the whole CUDA source: NVRTC's errors become Rust compile errors,
//! its warnings Rust warnings, and requested images (PTX, cubins) are compiled for embedding.
//!
//! Switched off by `check = false` on the attribute or `GPU_RUNTIME_BUILD_CHECK=0`. When NVRTC
//! cannot be loaded the build goes on with the signature checks only, and says so once per
//! compiler process on stderr (cargo shows it with the crate's build output): a proc-macro has
//! no stable way to emit a note, and a warning would break `-D warnings` builds on machines
//! without NVRTC for something that is not a fault in the code.

use std::sync::atomic::{AtomicBool, Ordering};

use gpu_cdecl::nvrtc_log::{self, Diagnostic};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::check::Errors;
use crate::nvrtc::{self, Want};

/// The variable that switches the check off when set to `0`.
pub const CHECK_VAR: &str = "GPU_RUNTIME_BUILD_CHECK";
/// Crate-wide embedding: a comma-separated list of arches, used by kernels without `embed`.
pub const EMBED_VAR: &str = "GPU_RUNTIME_EMBED";

/// What the attribute asked of the deep pass.
pub struct Request<'a> {
    pub source: &'a str,
    pub file_name: &'a str,
    /// Name expressions: kernel names, or template instantiations like `scale<float>`.
    pub names: Vec<String>,
    pub options: Vec<String>,
    /// Where diagnostics point: the source literal.
    pub span: Span,
    /// `check = false` in the attribute.
    pub check: bool,
    /// `embed = [...]` in the attribute, each with its span.
    pub embed: Option<Vec<(String, Span)>>,
    /// Include the prelude before the source, as the run time does (`prelude = false` not
    /// given).
    pub prelude: bool,
}

/// What the pass adds to the expansion.
#[derive(Default)]
pub struct Outcome {
    /// Warning items and env-tracking constants.
    pub items: TokenStream,
    /// `EmbeddedImage` expressions for `ModuleSource::with_images`.
    pub images: Vec<TokenStream>,
}

fn render(d: &Diagnostic, file_name: &str) -> String {
    let what = if d.is_error() { "error" } else { "warning" };
    let at = match d.column {
        Some(c) => format!("{file_name}:{}:{c}", d.line),
        None => format!("{file_name}:{}", d.line),
    };
    let mut s = format!("CUDA {what} at {at}: {}", d.message);
    if let Some(q) = &d.quoted {
        let n = d.line.to_string();
        s.push_str(&format!("\n {n} | {q}"));
        if let Some(c) = d.column {
            s.push_str(&format!("\n {} | {}^", " ".repeat(n.len()), " ".repeat(c - 1)));
        }
    }
    for note in &d.notes {
        s.push_str(&format!("\n = note: {note}"));
    }
    if d.message.contains(gpu_cdecl::NVRTC_PRELUDE_NAME) {
        s.push_str(&format!(
            "\n = note: `{}` is the prelude NVRTC includes first: the typedefs nvcc's host headers \
             declare for every kernel (`uint`, `ushort`, `ulong`, `u_int`, …); to declare one of \
             these names as another type, add `prelude = false` to #[kernel]",
            gpu_cdecl::NVRTC_PRELUDE_NAME
        ));
    }
    s
}

fn env_enabled() -> bool {
    !matches!(
        std::env::var(CHECK_VAR).as_deref().map(str::trim),
        Ok("0" | "false" | "off" | "no")
    )
}

/// Makes cargo rebuild the crate when one of the variables the macro reads changes: rustc
/// records the variables that `option_env!` reads as dependencies.
fn track_env() -> TokenStream {
    let vars = [CHECK_VAR, EMBED_VAR, nvrtc::NVRTC_VAR];
    quote! { #(const _: ::core::option::Option<&str> = ::core::option_env!(#vars);)* }
}

fn skipped_once(why: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "note: #[kernel]: the CUDA sources of this crate were not compiled at build time, only \
             the kernel signatures were checked: {why}. Set {}=/path/to/libnvrtc.so to enable the \
             check, or {CHECK_VAR}=0 to skip it on purpose.",
            nvrtc::NVRTC_VAR
        );
    }
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

fn embed_list(req: &Request<'_>) -> syn::Result<Vec<(bool, u32, Span)>> {
    let list: Vec<(String, Span)> = match &req.embed {
        Some(l) => l.clone(),
        None => match std::env::var(EMBED_VAR) {
            Ok(v) if !v.trim().is_empty() => v
                .split(',')
                .map(|s| (s.trim().to_owned(), req.span))
                .filter(|(s, _)| !s.is_empty())
                .collect(),
            _ => Vec::new(),
        },
    };
    list.into_iter()
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
        .collect()
}

/// Runs the deep pass. Errors are NVRTC's compile errors, or an embedding that cannot be done.
pub fn run(req: &Request<'_>) -> syn::Result<Outcome> {
    let mut out = Outcome {
        items: track_env(),
        images: Vec::new(),
    };
    let check = req.check && env_enabled();
    let embed = embed_list(req)?;
    if !check && embed.is_empty() {
        return Ok(out);
    }
    let lib = match nvrtc::get() {
        Ok(lib) => lib,
        Err(why) if embed.is_empty() => {
            skipped_once(why);
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
        let r = lib
            .compile(
                req.source,
                req.file_name,
                &req.names,
                &options,
                Want::Check,
                req.prelude,
            )
            .map_err(|e| syn::Error::new(req.span, format!("NVRTC failed at build time: {e}")))?;
        report(req, &r.log, r.ok, true, &mut out)?;
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
        let r = lib
            .compile(
                req.source,
                req.file_name,
                &req.names,
                &options,
                if cubin { Want::Cubin } else { Want::Ptx },
                req.prelude,
            )
            .map_err(|e| syn::Error::new(span, format!("NVRTC failed at build time: {e}")))?;
        if !r.ok {
            if check {
                // The front end accepted it; the failure is in code generation for this arch.
                return Err(syn::Error::new(
                    span,
                    format!("compiling for `{n}` failed:\n{}", r.log.trim()),
                ));
            }
            report(req, &r.log, false, false, &mut out)?;
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
fn report(req: &Request<'_>, log: &str, ok: bool, warnings: bool, out: &mut Outcome) -> syn::Result<()> {
    let diags = nvrtc_log::parse(log, req.file_name);
    // A header NVRTC cannot find at build time may be found at run time (include paths given
    // to the runtime); everything after it would be noise, so the check says nothing.
    if diags
        .iter()
        .any(|d| d.is_error() && d.message.contains("open source file"))
    {
        return Ok(());
    }
    let mut errors = Errors::default();
    // The same text compiled more than once (an elementwise operation is pasted into every
    // variant's loops) gives the same message once per copy: each is said once.
    let mut said = std::collections::HashSet::new();
    for (i, d) in diags.iter().enumerate() {
        let text = render(d, req.file_name);
        if !said.insert(text.clone()) {
            continue;
        }
        if d.is_error() {
            errors.push(syn::Error::new(req.span, text));
        } else if warnings {
            let ident = format_ident!("CUDA_WARNING_{}", i);
            let span = req.span;
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
    if !ok && diags.iter().all(|d| !d.is_error()) {
        errors.push(syn::Error::new(
            req.span,
            format!("NVRTC rejected the CUDA source:\n{}", log.trim()),
        ));
    }
    errors.finish()
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

    #[test]
    fn diagnostics_render_like_rustc() {
        // The log itself is read by `gpu_cdecl::nvrtc_log`, tested there.
        let d = nvrtc_log::parse(LOG, "k.cu");
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            render(&d[0], "k.cu"),
            "CUDA error at k.cu:3:12: identifier \"y\" is undefined\n 3 |   out[i] = y;\n   |            ^"
        );
        assert!(render(&d[1], "k.cu").starts_with("CUDA warning at k.cu:7:5: "));
        assert!(render(&d[1], "k.cu")
            .ends_with("\n = note: detected during instantiation of \"void f<T>() [with T=float]\""));
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
            names: vec!["k".to_owned()],
            options: Vec::new(),
            span: Span::call_site(),
            check,
            embed,
            prelude: true,
        }
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
        for var in [CHECK_VAR, EMBED_VAR, nvrtc::NVRTC_VAR] {
            assert!(items.contains(&format!("option_env ! (\"{var}\")")), "{items}");
        }
    }
}
