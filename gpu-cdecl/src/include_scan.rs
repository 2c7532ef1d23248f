//! The headers a CUDA source pulls in from include directories: what the run time hashes into
//! its cache key (so that editing a header compiles again) and what the `#[kernel]` build-time
//! check asks cargo to track (so that editing a header rebuilds the crate). One scan for both.

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
