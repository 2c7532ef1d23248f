//! The headers a CUDA source pulls in from include directories: what the run time hashes into
//! its cache key (so that editing a header compiles again) and what the `#[kernel]` build-time
//! check asks cargo to track (so that editing a header rebuilds the crate). One scan for both.
//!
//! [`local_headers`] is the scan `#[kernel]` embeds by: every header a kernel file pulls in from
//! its own folder and its `include_dirs`, under the name its `#include` gives it, which is how
//! NVRTC finds a header given to it in memory.

use std::path::{Path, PathBuf};

/// The most header files [`included_headers`] reads for one key: far more than real code
/// includes, and a bound on the work an include directory like a whole toolkit's can cause.
const MAX_HASHED_HEADERS: usize = 4096;

/// The directories of the `-I` (or `--include-path=`) options in `options`, in order: where
/// `#include "..."` looks besides the source's own directory.
pub fn include_dirs_of(options: &[String]) -> Vec<PathBuf> {
    options
        .iter()
        .filter_map(|o| {
            o.strip_prefix("-I")
                .or_else(|| o.strip_prefix("--include-path="))
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
        })
        .collect()
}

/// `(path, contents)` of every header `source` pulls in from `dirs`, directly or through other
/// such headers, in a deterministic order, so that editing any of them changes the cache key.
/// A quoted include is also looked for beside the header that includes it, as the compiler
/// does. It over-approximates (an `#include` in `#if 0` counts too) and cannot follow an
/// include whose name is a macro.
pub fn included_headers(source: &str, dirs: &[PathBuf]) -> Vec<(String, Vec<u8>)> {
    if dirs.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(String, Vec<u8>)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Files still to scan: their text and the directory they are in (none for the source).
    let mut pending: Vec<(String, Option<PathBuf>)> = vec![(source.to_owned(), None)];
    while let Some((text, here)) = pending.pop() {
        let mut next = Vec::new();
        for (name, quoted) in include_names(&text) {
            let beside = here.as_ref().filter(|_| quoted).map(|h| h.join(name));
            for path in beside.into_iter().chain(dirs.iter().map(|d| d.join(name))) {
                let Ok(contents) = std::fs::read(&path) else {
                    continue;
                };
                let id = path.canonicalize().unwrap_or_else(|_| path.clone());
                if found.len() >= MAX_HASHED_HEADERS || !seen.insert(id) {
                    continue;
                }
                next.push((
                    String::from_utf8_lossy(&contents).into_owned(),
                    path.parent().map(Path::to_path_buf),
                ));
                found.push((path.display().to_string(), contents));
            }
        }
        // Scanned depth first, in the order the includes appear.
        pending.extend(next.into_iter().rev());
    }
    found
}

/// A header found by [`local_headers`]: the name an `#include` gives it (what NVRTC looks an
/// in-memory header up by), where it was found, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalHeader {
    /// The name as written between the quotes or brackets, e.g. `cuda_utils.cuh` or
    /// `sub/common.h`.
    pub name: String,
    /// The file it was found at: `dir.join(name)` for one of the directories searched (so it
    /// starts with that directory as given), or beside the header that includes it.
    pub path: PathBuf,
    /// The file's bytes.
    pub contents: Vec<u8>,
}

/// Two `#include`s of one name that reach two different files: NVRTC finds an in-memory
/// header by its name alone, so it cannot be given both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameClash {
    /// The name both `#include`s give.
    pub name: String,
    /// The file the first one reaches.
    pub first: PathBuf,
    /// The file another one reaches, whose contents differ.
    pub second: PathBuf,
}

impl std::fmt::Display for NameClash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "two different headers are included as `{}`: `{}` and `{}`; NVRTC is given the \
             headers in memory and finds them by the name in the `#include` alone, so one name \
             must mean one file: rename one, or include it by a longer path",
            self.name,
            self.first.display(),
            self.second.display()
        )
    }
}

/// Every header `source` pulls in from `dirs`, directly or through other such headers, once per
/// name, in a deterministic order (a file's `#include`s in order, then those of each header
/// it reached, depth first), with the name
/// the `#include` gives it. As a C preprocessor looks: a quoted name beside the header that
/// includes it first (`beside` for `source` itself: the folder of a kernel file), then in
/// `dirs` in order; a bracketed name in `dirs` only. Names in `skip` are not looked for (the
/// built-in headers, which NVRTC has in memory already). Over-approximates as
/// [`included_headers`] does; a name reaching two files with different contents is a
/// [`NameClash`]. At most a few thousand headers are read.
pub fn local_headers(
    source: &str,
    beside: Option<&Path>,
    dirs: &[PathBuf],
    skip: &[&str],
) -> Result<Vec<LocalHeader>, NameClash> {
    let mut found: Vec<LocalHeader> = Vec::new();
    // Files still to scan: their text and the directory they are in.
    let mut pending: Vec<(String, Option<PathBuf>)> =
        vec![(source.to_owned(), beside.map(Path::to_path_buf))];
    while let Some((text, here)) = pending.pop() {
        let mut next = Vec::new();
        for (name, quoted) in include_names(&text) {
            if skip.contains(&name) {
                continue;
            }
            let beside = here.as_ref().filter(|_| quoted).map(|h| h.join(name));
            let Some((path, contents)) = beside
                .into_iter()
                .chain(dirs.iter().map(|d| d.join(name)))
                .find_map(|p| std::fs::read(&p).ok().map(|c| (p, c)))
            else {
                continue;
            };
            if let Some(seen) = found.iter().find(|h| h.name == name) {
                if seen.contents != contents {
                    return Err(NameClash {
                        name: name.to_owned(),
                        first: seen.path.clone(),
                        second: path,
                    });
                }
                continue;
            }
            if found.len() >= MAX_HASHED_HEADERS {
                break;
            }
            next.push((
                String::from_utf8_lossy(&contents).into_owned(),
                path.parent().map(Path::to_path_buf),
            ));
            found.push(LocalHeader {
                name: name.to_owned(),
                path,
                contents,
            });
        }
        pending.extend(next.into_iter().rev());
    }
    Ok(found)
}

/// The header `#include "name"` (`quoted`) or `#include <name>` names, read from disk as the
/// compiler looks for it: a quoted name beside the header that includes it (`includer`, the
/// path a previous call returned as the [`Header`](crate::Header)'s id) first, then in `dirs`
/// in order. `None` when no such file can be read, as for CUDA's and the standard headers,
/// which NVRTC has built in. For [`Preprocess::headers`](crate::Preprocess::headers).
pub fn find_header(
    name: &str,
    quoted: bool,
    includer: Option<&str>,
    dirs: &[PathBuf],
) -> Option<crate::Header> {
    let beside = includer
        .filter(|_| quoted)
        .and_then(|i| Path::new(i).parent())
        .map(|d| d.join(name));
    beside
        .into_iter()
        .chain(dirs.iter().map(|d| d.join(name)))
        .find_map(|path| {
            let bytes = std::fs::read(&path).ok()?;
            Some(crate::Header {
                id: path.display().to_string(),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            })
        })
}

/// The header names of the `#include` lines in `text`, each with whether it was quoted
/// (`"…"`, not `<…>`).
pub fn include_names(text: &str) -> Vec<(&str, bool)> {
    let mut names = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim();
        if let Some(name) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
            names.push((name, true));
        } else if let Some(name) = rest.strip_prefix('<').and_then(|r| r.split('>').next()) {
            names.push((name, false));
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_dirs_are_the_i_options_in_order() {
        let options: Vec<String> = ["-I/a", "--use_fast_math", "--include-path=/b", "-I", "-Ic"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            include_dirs_of(&options),
            [PathBuf::from("/a"), PathBuf::from("/b"), PathBuf::from("c")]
        );
    }

    #[test]
    fn headers_included_from_include_dirs_are_found() {
        let dir = std::env::temp_dir().join(format!("gpu-rt-hdr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.h"), "#define A 1").unwrap();
        let src = "#include \"a.h\"\n  #  include <missing.h>\nint x;";
        let found = included_headers(src, std::slice::from_ref(&dir));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, b"#define A 1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn local_headers_are_named_as_included_and_found_as_a_preprocessor_finds_them() {
        let dir = std::env::temp_dir().join(format!("gpu-rt-local-{}", std::process::id()));
        let inc = dir.join("inc");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::create_dir_all(&inc).unwrap();
        // k.cu (in `dir`) -> "sub/b.h" -> (beside it) "c.h" -> <d.h> in `inc` -> "sub/b.h" again;
        // <stdint.h> is built in and skipped; "missing.h" is nowhere.
        std::fs::write(dir.join("sub/b.h"), "#pragma once\n#include \"c.h\"\n").unwrap();
        std::fs::write(dir.join("sub/c.h"), "#include <d.h>\n#include <stdint.h>\n").unwrap();
        std::fs::write(inc.join("d.h"), "#include \"sub/b.h\"\n#include \"missing.h\"\n").unwrap();
        std::fs::write(inc.join("stdint.h"), "not this one").unwrap();
        let src = "#include \"sub/b.h\"\n#include <sub/b.h>\n";
        let found = local_headers(src, Some(&dir), std::slice::from_ref(&inc), &["stdint.h"]).unwrap();
        let names: Vec<&str> = found.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["sub/b.h", "c.h", "d.h"]);
        assert_eq!(found[1].path, dir.join("sub").join("c.h"));
        assert_eq!(found[2].path, inc.join("d.h"));
        assert_eq!(
            found[2].contents,
            b"#include \"sub/b.h\"\n#include \"missing.h\"\n"
        );
        // A bracketed name is not looked for beside the includer: without `inc`, <d.h> is not found.
        let found = local_headers(src, Some(&dir), &[], &[]).unwrap();
        assert_eq!(found.len(), 2);
        // One name, two files with different contents: refused, naming both.
        std::fs::write(dir.join("c.h"), "#define OTHER 1\n").unwrap();
        let clash =
            local_headers("#include \"c.h\"\n#include \"sub/b.h\"\n", Some(&dir), &[], &[]).unwrap_err();
        assert_eq!(clash.name, "c.h");
        assert_eq!(
            (clash.first.clone(), clash.second.clone()),
            (dir.join("c.h"), dir.join("sub").join("c.h"))
        );
        assert!(
            clash
                .to_string()
                .contains("finds them by the name in the `#include` alone"),
            "{clash}"
        );
        // The same bytes under one name from two places are one header.
        std::fs::write(dir.join("c.h"), "#include <d.h>\n#include <stdint.h>\n").unwrap();
        assert!(local_headers("#include \"c.h\"\n#include \"sub/b.h\"\n", Some(&dir), &[], &[]).is_ok());
    }

    #[test]
    fn a_header_is_found_beside_its_includer_then_in_the_directories() {
        let dir = std::env::temp_dir().join(format!("gpu-rt-find-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.h"), "top").unwrap();
        std::fs::write(dir.join("sub/a.h"), "beside").unwrap();
        let dirs = [dir.clone()];
        let includer = dir.join("sub/b.h").display().to_string();
        let text = |h: Option<crate::Header>| h.map(|h| h.text);
        assert_eq!(
            text(find_header("a.h", true, None, &dirs)).as_deref(),
            Some("top")
        );
        assert_eq!(
            text(find_header("a.h", true, Some(&includer), &dirs)).as_deref(),
            Some("beside")
        );
        // `<a.h>` is not looked for beside the includer.
        assert_eq!(
            text(find_header("a.h", false, Some(&includer), &dirs)).as_deref(),
            Some("top")
        );
        assert_eq!(find_header("cuda_fp16.h", false, None, &dirs), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn headers_included_by_headers_are_found_once_even_in_a_cycle() {
        let dir = std::env::temp_dir().join(format!("gpu-rt-hdr-nested-{}", std::process::id()));
        let other = dir.with_extension("other");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        // a.h -> sub/b.h -> (beside it) c.h -> <d.h> in the second directory -> a.h again.
        std::fs::write(dir.join("a.h"), "#include \"sub/b.h\"\n").unwrap();
        std::fs::write(dir.join("sub/b.h"), "#pragma once\n#include \"c.h\"\n").unwrap();
        std::fs::write(dir.join("sub/c.h"), "#include <d.h>\n").unwrap();
        std::fs::write(other.join("d.h"), "#include \"a.h\"\n#define D 4\n").unwrap();
        let dirs = [dir.clone(), other.clone()];
        let found = included_headers("#include \"a.h\"\n", &dirs);
        let names: Vec<String> = found
            .iter()
            .map(|(p, _)| Path::new(p).file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.h", "b.h", "c.h", "d.h"]);
        assert_eq!(found[3].1, b"#include \"a.h\"\n#define D 4\n");
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&other).unwrap();
    }
}
