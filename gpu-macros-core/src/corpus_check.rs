//! The build-time check on real kernel files (the workspace's `tests/corpus/`: NVIDIA's CUDA
//! samples, and files that include standard headers, CUDA headers and a `"common.h"` beside
//! them): each passes as written, and the same file with a planted error fails with NVRTC's
//! message at the planted line. Needs NVRTC (`scripts/nvrtc-env.sh`), as CI has it; without it
//! the planted errors are not found and the test fails.

use std::path::{Path, PathBuf};

use proc_macro2::Span;

use crate::deep::{run, Request};

/// Every `.cu` file under `tests/corpus/`.
fn corpus_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e} (the workspace's corpus)", dir.display()));
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "cu") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The check as `#[kernel(file = …)]` runs it: the headers beside the file in memory, no `-I`.
fn check(path: &Path, source: &str) -> syn::Result<crate::deep::Outcome> {
    let dir = path.parent().expect("a file in a directory");
    let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
    let builtin: Vec<&str> = gpu_cuda_source::BUILTIN_HEADERS.iter().map(|(n, _)| *n).collect();
    let headers = gpu_cuda_source::include_scan::local_headers(source, Some(dir), &[], &builtin)
        .expect("no two headers of one name")
        .into_iter()
        .map(|h| (h.name, h.contents))
        .collect();
    run(&Request {
        source,
        file_name: &file_name,
        pieces: Vec::new(),
        origin: crate::place::Origin::File {
            path: file_name.clone(),
            span: Span::call_site(),
        },
        names: Vec::new(),
        options: Vec::new(),
        span: Span::call_site(),
        name_span: Span::call_site(),
        headers,
        check: true,
        embed: Some(Vec::new()),
        prelude: true,
    })
}

#[test]
fn every_corpus_file_is_checked_and_a_planted_error_fails_it() {
    let files = corpus_files();
    assert!(files.len() >= 19, "{files:?}");
    let mut with_headers = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(path).unwrap();
        let out = check(path, &source).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Not a check that stopped short: no header left unopened, no check skipped (NVRTC's
        // own warnings, such as an unused variable, are fine).
        let items = format!("{} {}", out.items, out.outer);
        for skipped in ["CUDA_HEADER_NOT_FOUND_AT_BUILD_TIME", "CUDA_NOT_CHECKED"] {
            assert!(!items.contains(skipped), "{name}: {items}");
        }
        with_headers += usize::from(source.contains("#include <"));

        // The planted error goes after the last include (the headers are read by then), else
        // first.
        let lines: Vec<&str> = source.lines().collect();
        let at = lines
            .iter()
            .rposition(|l| l.starts_with("#include"))
            .map_or(0, |i| i + 1);
        let mut planted = lines.clone();
        planted.insert(
            at,
            "__device__ int planted_error() { return not_declared_anywhere; }",
        );
        let planted = planted.join("\n");
        let Err(e) = check(path, &planted) else {
            panic!("{name}: the planted error passed the build-time check");
        };
        let e = e.to_string();
        let want = format!("CUDA error at {name}:{}:", at + 1);
        assert!(e.contains(&want), "{name}: {e}\nwanted {want}");
        assert!(
            e.contains("identifier \"not_declared_anywhere\" is undefined"),
            "{name}: {e}"
        );
    }
    // The samples had their host includes removed; the files of includes/ keep theirs.
    assert!(with_headers >= 3, "{with_headers}");
}

#[test]
fn a_header_nvrtc_cannot_open_is_a_warning_naming_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/includes/k.cu");
    let out = check(&path, "#include \"no_such_header.h\"\n__global__ void k() {}\n")
        .expect("a warning, not an error (GPU_RUNTIME_BUILD_CHECK is not `require`)");
    let items = out.items.to_string();
    assert!(items.contains("CUDA_HEADER_NOT_FOUND_AT_BUILD_TIME"), "{items}");
    assert!(
        items.contains("`no_such_header.h`, included at k.cu:1, was not found"),
        "{items}"
    );
}
