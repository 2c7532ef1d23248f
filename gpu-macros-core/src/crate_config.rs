//! Crate-wide defaults for `#[kernel]`: the `options` and `include-dirs` of every kernel of a
//! crate, written once in its Cargo.toml rather than on each attribute, as docs.rs and other
//! tools read their settings:
//!
//! ```toml
//! [package.metadata.gpu-runtime]
//! include-dirs = ["kernels/include"]   # relative to the Cargo.toml, like `include_dirs`
//! options = ["-use_fast_math", "-DBLOCK=256"]
//! ```
//!
//! The macro reads the table of the crate being compiled (`CARGO_MANIFEST_DIR`); each
//! attribute's own `options` come after the crate's (so a later `-D` wins) and its own
//! `include_dirs` before the crate's (searched first). A linked module (`sources`/`files`)
//! takes the options, not the directories. The generated code names Cargo.toml in
//! `include_bytes!`, so cargo builds the crate again when the table changes. The table is read
//! with a small reader of the TOML it takes (string arrays, comments, basic and literal
//! strings): anything else in it is an error that says so, never ignored.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// The table's name under `[package.metadata]`.
pub const TABLE: &str = "gpu-runtime";

/// The crate's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Defaults {
    /// NVRTC options for every kernel.
    pub options: Vec<String>,
    /// Include directories, relative to the Cargo.toml's directory.
    pub include_dirs: Vec<String>,
    /// The Cargo.toml read (absolute), for `include_bytes!`.
    pub manifest: Option<PathBuf>,
}

impl Defaults {
    /// `options` as the attribute's own are held, spanned at the attribute.
    pub fn option_lits(&self) -> Vec<syn::LitStr> {
        lits(&self.options)
    }

    /// `include-dirs` as the attribute's own are held.
    pub fn include_dir_lits(&self) -> Vec<syn::LitStr> {
        lits(&self.include_dirs)
    }

    /// The item that makes cargo rebuild the crate when its Cargo.toml changes.
    pub fn tracking(&self) -> TokenStream {
        // Named relative to the crate's root, as the embedded sources are: no path of the
        // build machine in the generated code (the defaults are read from that Cargo.toml).
        match &self.manifest {
            Some(_) => quote!(
                const _: &[u8] = ::core::include_bytes!(::core::concat!(
                    ::core::env!("CARGO_MANIFEST_DIR"),
                    "/Cargo.toml"
                ));
            ),
            None => quote!(),
        }
    }
}

fn lits(v: &[String]) -> Vec<syn::LitStr> {
    v.iter().map(|s| syn::LitStr::new(s, Span::call_site())).collect()
}

/// The defaults of the crate being compiled, read once per Cargo.toml in this compiler process.
/// `Err` when the table is there and malformed: a compile error at the attribute.
pub fn defaults() -> syn::Result<Defaults> {
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        return Ok(Defaults::default());
    };
    static READ: Mutex<Option<HashMap<PathBuf, Result<Defaults, String>>>> = Mutex::new(None);
    let manifest = dir.join("Cargo.toml");
    let mut cache = READ.lock().unwrap_or_else(|e| e.into_inner());
    let result = cache
        .get_or_insert_with(HashMap::new)
        .entry(manifest.clone())
        .or_insert_with(|| read(&manifest))
        .clone();
    result.map_err(|e| syn::Error::new(Span::call_site(), e))
}

/// Reads `manifest`'s table; no file or no table is no defaults.
pub fn read(manifest: &Path) -> Result<Defaults, String> {
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return Ok(Defaults::default());
    };
    let mut d = parse(&text).map_err(|e| {
        format!(
            "`[package.metadata.{TABLE}]` in {}: {e}; it takes `options = [\"-use_fast_math\"]` and \
             `include-dirs = [\"kernels/include\"]`, arrays of strings",
            manifest.display()
        )
    })?;
    let dir = manifest.parent().unwrap_or(Path::new(""));
    for inc in &d.include_dirs {
        if !dir.join(inc).is_dir() {
            return Err(format!(
                "`{inc}` in `include-dirs` of `[package.metadata.{TABLE}]` in {} is not a directory: \
                 the directories are relative to that Cargo.toml, so it was looked for at `{}`",
                manifest.display(),
                dir.join(inc).display()
            ));
        }
    }
    d.manifest = Some(manifest.to_path_buf());
    Ok(d)
}

/// The defaults in a Cargo.toml's text: the keys of `[package.metadata.gpu-runtime]`.
pub fn parse(text: &str) -> Result<Defaults, String> {
    let mut d = Defaults::default();
    let mut in_table = false;
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, raw)) = lines.next() {
        let line = strip_comment(raw).trim();
        if line.starts_with('[') {
            in_table = is_our_table(line);
            continue;
        }
        if !in_table || line.is_empty() {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected `key = value`", n + 1));
        };
        let key = key.trim().trim_matches('"');
        // An array may run over several lines: up to the line that closes it.
        let mut value = value.trim().to_owned();
        while value.starts_with('[') && !array_closed(&value) {
            let Some((_, more)) = lines.next() else {
                return Err(format!("line {}: the array of `{key}` is never closed", n + 1));
            };
            value.push(' ');
            value.push_str(strip_comment(more).trim());
        }
        let strings = string_array(&value).map_err(|e| format!("line {}: `{key}`: {e}", n + 1))?;
        match key {
            "options" => d.options.extend(strings),
            "include-dirs" | "include_dirs" => d.include_dirs.extend(strings),
            other => {
                return Err(format!(
                    "line {}: unknown key `{other}` (the table takes `options` and `include-dirs`)",
                    n + 1
                ))
            }
        }
    }
    Ok(d)
}

/// `[package.metadata.gpu-runtime]`, spaces and quotes allowed around the parts.
fn is_our_table(header: &str) -> bool {
    let inner = header.trim_start_matches('[').trim_end_matches(']');
    if header.starts_with("[[") {
        return false;
    }
    let parts: Vec<String> = inner
        .split('.')
        .map(|p| p.trim().trim_matches('"').trim_matches('\'').to_owned())
        .collect();
    parts == ["package", "metadata", TABLE]
}

/// The characters of `s` outside TOML strings (the quotes themselves left out), with their
/// byte offsets.
fn outside_strings(s: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut quote = None;
    let mut escaped = false;
    s.char_indices().filter(move |&(_, c)| {
        let outside = match (quote, c) {
            (Some('"'), '\\') if !escaped => {
                escaped = true;
                return false;
            }
            (Some(q), c) if c == q && !escaped => {
                quote = None;
                false
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                false
            }
            (None, _) => true,
            _ => false,
        };
        escaped = false;
        outside
    })
}

/// The line without a `#` comment (one outside a string).
fn strip_comment(line: &str) -> &str {
    outside_strings(line)
        .find(|&(_, c)| c == '#')
        .map_or(line, |(i, _)| &line[..i])
}

/// Whether the `[` that starts `value` is closed (outside strings).
fn array_closed(value: &str) -> bool {
    let mut depth = 0i32;
    for (_, c) in outside_strings(value) {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// `["a", 'b', "c\"d"]`: the strings, or what is wrong.
fn string_array(value: &str) -> Result<Vec<String>, String> {
    let inner = value
        .trim()
        .strip_prefix('[')
        .and_then(|v| v.trim_end().strip_suffix(']'))
        .ok_or("expected an array of strings, `[\"…\", \"…\"]`")?;
    let mut out = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(q) = chars.next() else { break };
        if q != '"' && q != '\'' {
            return Err(format!("expected a string, found `{q}`"));
        }
        let mut s = String::new();
        loop {
            let c = chars.next().ok_or("a string is never closed")?;
            match c {
                c if c == q => break,
                '\\' if q == '"' => match chars.next().ok_or("a string is never closed")? {
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    '"' => s.push('"'),
                    '\\' => s.push('\\'),
                    other => return Err(format!("the escape `\\{other}` is not supported here")),
                },
                c => s.push(c),
            }
        }
        out.push(s);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => break,
            Some(',') => {}
            Some(c) => return Err(format!("expected `,` between strings, found `{c}`")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_read() {
        let toml = r##"
[package]
name = "k" # options = ["not this"]

[package.metadata.docs.rs]
all-features = true

[package.metadata.gpu-runtime]
# Every kernel of the crate.
options = ["-use_fast_math", '-DNAME="x"', "-DQ=\"#\""]  # trailing
include-dirs = [
    "kernels/include",   # one
    "third_party",
]

[dependencies]
options = 1
"##;
        let d = parse(toml).expect("parses");
        assert_eq!(d.options, ["-use_fast_math", "-DNAME=\"x\"", "-DQ=\"#\""]);
        assert_eq!(d.include_dirs, ["kernels/include", "third_party"]);
        assert_eq!(
            parse("[package]\nname = \"k\"\n").expect("no table"),
            Defaults::default()
        );
        assert!(is_our_table("[ package . metadata . \"gpu-runtime\" ]"));
    }

    #[test]
    fn a_malformed_table_says_what_is_wrong() {
        for (toml, want) in [
            (
                "[package.metadata.gpu-runtime]\noptions = \"-G\"\n",
                "expected an array of strings",
            ),
            (
                "[package.metadata.gpu-runtime]\noptions = [1]\n",
                "expected a string, found `1`",
            ),
            (
                "[package.metadata.gpu-runtime]\noptions = [\"a\" \"b\"]\n",
                "expected `,` between strings",
            ),
            (
                "[package.metadata.gpu-runtime]\noptions = [\"a\"\n",
                "the array of `options` is never closed",
            ),
            (
                "[package.metadata.gpu-runtime]\nflags = []\n",
                "unknown key `flags`",
            ),
            ("[package.metadata.gpu-runtime]\njunk\n", "expected `key = value`"),
        ] {
            let e = parse(toml).expect_err(toml);
            assert!(e.contains(want), "{toml}: {e}");
        }
    }

    #[test]
    fn a_missing_include_dir_says_where_it_was_looked_for() {
        let dir = std::env::temp_dir().join(format!("gpu-crate-config-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("inc")).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package.metadata.gpu-runtime]\ninclude-dirs = [\"inc\"]\noptions = [\"-G\"]\n",
        )
        .unwrap();
        let d = read(&manifest).expect("reads");
        assert_eq!(
            (d.options.as_slice(), d.manifest.as_deref()),
            (&["-G".to_owned()][..], Some(manifest.as_path()))
        );
        assert!(d.tracking().to_string().contains("include_bytes"));
        std::fs::write(
            &manifest,
            "[package.metadata.gpu-runtime]\ninclude-dirs = [\"nope\"]\n",
        )
        .unwrap();
        let e = read(&manifest).expect_err("no such directory");
        assert!(
            e.contains("`nope` in `include-dirs` of `[package.metadata.gpu-runtime]`"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
