//! `GPU_RUNTIME_SOURCE_DIR`: compiling a `#[kernel]`'s source and headers as they are on disk
//! now rather than as the binary holds them, to edit kernels without building again.
//!
//! The binary keeps no path of the machine that built it: a [`SourceOnDisk`] names its files
//! relative to the root of their crate, and the variable says where that root is here:
//! `GPU_RUNTIME_SOURCE_DIR=/path/to/crate` for every crate, or `name=/path/to/crate` entries
//! separated by commas for some (a crate's `Cargo.toml` name). The headers are found again by
//! the scan the macro used (`gpu_cuda_source::include_scan::local_headers`), so the compile sees
//! the files the build would see now. Images embedded at build time are not loaded for such a
//! source: they were compiled from the old text.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::compiler::source::{ModuleSource, SourceOnDisk};
use crate::compiler::source_module::{MemoryHeader, SourceModule};
use crate::error::{Error, Result};

/// The variable naming the crate roots to read kernel sources from.
pub const SOURCE_DIR_VAR: &str = "GPU_RUNTIME_SOURCE_DIR";

/// The root `value` (the variable's text) gives for `package`, if any: the first `package=dir`
/// entry, else the first bare `dir` (an entry without `name=` in front, for every crate).
fn root_in(value: &str, package: &str) -> Option<PathBuf> {
    let mut any = None;
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        // A package name is letters, digits, `-` and `_`: `name=dir` only then.
        match entry.split_once('=') {
            Some((name, dir))
                if !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
            {
                if name == package {
                    return Some(PathBuf::from(dir));
                }
            }
            _ => {
                if any.is_none() {
                    any = Some(PathBuf::from(entry));
                }
            }
        }
    }
    any
}

/// The crate root `GPU_RUNTIME_SOURCE_DIR` gives for `source`, when it names one.
pub(crate) fn root_for(source: &ModuleSource) -> Option<PathBuf> {
    let on_disk = source.on_disk()?;
    let value = std::env::var(SOURCE_DIR_VAR).ok()?;
    root_in(&value, on_disk.package())
}

/// `source` as it is under `root` now: its file (when it came from one) read again, and its
/// headers found again in its folder and include directories.
pub(crate) fn module_from_disk(source: &'static ModuleSource, root: &Path) -> Result<SourceModule> {
    let Some(on_disk) = source.on_disk() else {
        return Ok(SourceModule::from_static(source));
    };
    let (text, beside): (Cow<'static, str>, Option<PathBuf>) = match on_disk.file() {
        Some(file) => {
            let path = root.join(file);
            let text = std::fs::read_to_string(&path).map_err(|e| Error::Io {
                action: "read the kernel source (GPU_RUNTIME_SOURCE_DIR)",
                path: path.display().to_string(),
                source: e,
            })?;
            (Cow::Owned(text), path.parent().map(Path::to_path_buf))
        }
        None => (Cow::Borrowed(source.source()), None),
    };
    let headers = headers_under(source, on_disk, root, &text, beside.as_deref())?;
    let mut m = SourceModule::from_static(source);
    m.source = text;
    m.headers = headers;
    Ok(m)
}

fn headers_under(
    source: &ModuleSource,
    on_disk: &SourceOnDisk,
    root: &Path,
    text: &str,
    beside: Option<&Path>,
) -> Result<Vec<MemoryHeader>> {
    let dirs: Vec<PathBuf> = on_disk.include_dirs().iter().map(|d| root.join(d)).collect();
    let builtin: Vec<&str> = gpu_cuda_source::BUILTIN_HEADERS.iter().map(|(n, _)| *n).collect();
    let found = gpu_cuda_source::include_scan::local_headers(text, beside, &dirs, &builtin).map_err(|c| {
        Error::IncludeNameClash {
            module: source.name().to_owned(),
            name: c.name,
            first: c.first.display().to_string(),
            second: c.second.display().to_string(),
        }
    })?;
    Ok(found
        .into_iter()
        .map(|h| (Cow::Owned(h.name), Cow::Owned(h.contents)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::source::SourceHeader;

    #[test]
    fn the_variable_names_a_root_for_every_crate_or_for_some() {
        assert_eq!(root_in("/src/app", "app"), Some(PathBuf::from("/src/app")));
        assert_eq!(root_in("/src/app", "other"), Some(PathBuf::from("/src/app")));
        let v = "kernels=/src/kernels, app=/src/app";
        assert_eq!(root_in(v, "app"), Some(PathBuf::from("/src/app")));
        assert_eq!(root_in(v, "kernels"), Some(PathBuf::from("/src/kernels")));
        assert_eq!(root_in(v, "third"), None);
        // A named entry wins over a bare one, wherever it is.
        assert_eq!(root_in("/any,app=/mine", "app"), Some(PathBuf::from("/mine")));
        // `=` inside a path is not a name.
        assert_eq!(root_in("/a=b/c", "x"), Some(PathBuf::from("/a=b/c")));
        assert_eq!(root_in(" , ", "x"), None);
    }

    static ON_DISK: SourceOnDisk = SourceOnDisk::new("app", Some("kernels/k.cu"), &["include"]);
    static HEADERS: [SourceHeader; 1] = [SourceHeader::new("common.h", b"#define SCALE 1\n")];
    static SOURCE: ModuleSource = ModuleSource::new(
        "k.cu",
        "#include \"common.h\"\n__global__ void k(float *x) { x[0] = SCALE; }\n",
        &["k"],
        &[],
    )
    .with_headers(&HEADERS)
    .with_disk_paths(&ON_DISK);

    /// The file and its headers are read from the root given, as they are now; the key
    /// follows them.
    #[test]
    fn a_source_read_from_disk_is_the_files_as_they_are_now() {
        let root = std::env::temp_dir().join(format!("gpu-rt-disk-{}", std::process::id()));
        std::fs::create_dir_all(root.join("kernels")).unwrap();
        std::fs::create_dir_all(root.join("include")).unwrap();
        let text = "#include \"common.h\"\n#include <more.h>\n__global__ void k(float *x) { x[0] = SCALE + MORE; }\n";
        std::fs::write(root.join("kernels/k.cu"), text).unwrap();
        std::fs::write(root.join("kernels/common.h"), "#define SCALE 2\n").unwrap();
        std::fs::write(root.join("include/more.h"), "#define MORE 3\n").unwrap();
        let m = module_from_disk(&SOURCE, &root).unwrap();
        assert_eq!(m.source(), text);
        let names: Vec<(&str, &[u8])> = m.headers.iter().map(|(n, c)| (n.as_ref(), c.as_ref())).collect();
        assert_eq!(
            names,
            [
                ("common.h", &b"#define SCALE 2\n"[..]),
                ("more.h", &b"#define MORE 3\n"[..])
            ]
        );
        let embedded = SourceModule::from_static(&SOURCE);
        assert_eq!(embedded.headers.len(), 1);
        let (a, b) = (
            m.clone().arch("sm_90").plan(None).unwrap().key,
            embedded.arch("sm_90").plan(None).unwrap().key,
        );
        assert_ne!(a, b, "the files on disk are another compile");
        // A file that is not there is an error naming it.
        std::fs::remove_file(root.join("kernels/k.cu")).unwrap();
        match module_from_disk(&SOURCE, &root) {
            Err(Error::Io { path, .. }) => assert!(path.ends_with("kernels/k.cu"), "{path}"),
            other => panic!("expected Error::Io, got {other:?}"),
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
