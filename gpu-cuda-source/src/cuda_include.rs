//! Where the CUDA headers (`cuda_fp16.h`, `cuda_bf16.h`, `cooperative_groups.h`, and libcu++'s
//! `cuda/std/…`) are looked for: one search, shared by the run-time compile
//! (`gpu_runtime::compiler`) and the `#[kernel]` build-time check, so that both see the same
//! headers wherever NVRTC runs.
//!
//! The CUDA headers are the first directory holding `cuda_fp16.h` of:
//! 1. `GPU_RUNTIME_CUDA_INCLUDE`;
//! 2. a toolkit: `$CUDA_PATH/include`, `$CUDA_HOME/include`, `/usr/local/cuda/include`;
//! 3. the headers the NVRTC in use carries inside itself (13.1 and later), installed by the
//!    caller into [`bundled_headers_dir`];
//! 4. the PyPI wheels `nvidia-cuda-runtime` (and `nvidia-cuda-cccl`): their `include/` beside
//!    the NVRTC library and beside each directory of `LD_LIBRARY_PATH` (a wheel's `lib/`), and
//!    in the `site-packages` of the usual Python prefixes (`$VIRTUAL_ENV`, `$CONDA_PREFIX`,
//!    `~/.local`, `/usr/local`, `/usr`);
//! 5. the headers another NVRTC of the same major version installed into the cache (an NVRTC
//!    13.0, which carries none, uses those a 13.2 installed), newest first.
//!
//! libcu++ is looked for in the same places (as `cuda/std/version`, directly or in `cccl/`): in
//! the directory found first, else in the first that has it (the `nvidia-cuda-cccl` wheel
//! beside a runtime wheel of another installation, a toolkit, ...).

use std::path::{Path, PathBuf};

/// The variable naming a CUDA include directory to use before any other.
pub const CUDA_INCLUDE_VAR: &str = "GPU_RUNTIME_CUDA_INCLUDE";
/// The variable naming the directory NVRTC's bundled headers are installed into.
pub const HEADER_CACHE_VAR: &str = "GPU_RUNTIME_HEADER_CACHE";

/// Every environment variable the search reads that cargo can track, so that a build that
/// depends on the result can be redone when one of them changes. (`LD_LIBRARY_PATH`, read too,
/// cargo sets for rustc itself.)
pub const CUDA_INCLUDE_ENV: &[&str] = &[
    CUDA_INCLUDE_VAR,
    "CUDA_PATH",
    "CUDA_HOME",
    HEADER_CACHE_VAR,
    "XDG_CACHE_HOME",
    "HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
];

/// What to install when no CUDA headers are found: the shortest way to get them.
pub const INSTALL_HINT: &str = "`pip install nvidia-cuda-runtime nvidia-cuda-cccl` (the CUDA \
                                headers and libcu++), a CUDA toolkit, or \
                                GPU_RUNTIME_CUDA_INCLUDE=<dir>";

/// Where the search looks, read from the environment by [`SearchEnv::from_env`]; a test makes
/// its own.
#[derive(Debug, Clone, Default)]
pub struct SearchEnv {
    /// `GPU_RUNTIME_CUDA_INCLUDE`.
    pub cuda_include: Option<PathBuf>,
    /// Toolkit include directories: `$CUDA_PATH/include`, `$CUDA_HOME/include`,
    /// `/usr/local/cuda/include`.
    pub toolkits: Vec<PathBuf>,
    /// Directories of libraries whose `../include` may hold a wheel's headers: the NVRTC
    /// library's own directory first, then those of `LD_LIBRARY_PATH`.
    pub library_dirs: Vec<PathBuf>,
    /// `site-packages` directories of the usual Python prefixes.
    pub site_packages: Vec<PathBuf>,
    /// Where NVRTC's bundled headers are installed ([`bundled_headers_dir`]'s parent).
    pub header_cache: PathBuf,
}

impl SearchEnv {
    /// The places of this process's environment; `nvrtc_library` is the file NVRTC was loaded
    /// from, when known.
    pub fn from_env(nvrtc_library: Option<&Path>) -> SearchEnv {
        let mut toolkits = Vec::new();
        for var in ["CUDA_PATH", "CUDA_HOME"] {
            if let Some(d) = std::env::var_os(var).filter(|d| !d.is_empty()) {
                toolkits.push(PathBuf::from(d).join("include"));
            }
        }
        toolkits.push("/usr/local/cuda/include".into());
        let mut library_dirs: Vec<PathBuf> = nvrtc_library
            .and_then(Path::parent)
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        if let Some(path) = std::env::var_os("LD_LIBRARY_PATH") {
            library_dirs.extend(std::env::split_paths(&path).filter(|d| !d.as_os_str().is_empty()));
        }
        let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
            .iter()
            .filter_map(std::env::var_os)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .collect();
        if let Some(home) = std::env::var_os("HOME") {
            prefixes.push(Path::new(&home).join(".local"));
        }
        prefixes.extend(["/usr/local", "/usr"].map(PathBuf::from));
        SearchEnv {
            cuda_include: std::env::var_os(CUDA_INCLUDE_VAR)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            toolkits,
            library_dirs,
            site_packages: site_packages_under(&prefixes),
            header_cache: header_cache_dir(),
        }
    }
}

/// The CUDA header directories found, for every compile of a process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CudaHeaders {
    /// The include directories, in `-I` order: the CUDA headers', then libcu++'s when apart.
    pub dirs: Vec<PathBuf>,
    /// Every directory looked at, in order, for a message about a header still missing.
    pub searched: Vec<String>,
}

impl CudaHeaders {
    /// The `-I` options of [`dirs`](Self::dirs).
    pub fn options(&self) -> Vec<String> {
        self.dirs.iter().map(|d| format!("-I{}", d.display())).collect()
    }

    /// Whether any CUDA headers were found.
    pub fn found(&self) -> bool {
        !self.dirs.is_empty()
    }
}

/// Finds the CUDA headers for NVRTC `major` in `env`. `bundled` installs the headers the NVRTC
/// in use carries (13.1 and later) and returns their directory, or `None` for an NVRTC without
/// them; it is called only when neither `GPU_RUNTIME_CUDA_INCLUDE` nor a toolkit has headers.
pub fn find(env: &SearchEnv, major: i32, bundled: &mut dyn FnMut() -> Option<PathBuf>) -> CudaHeaders {
    let mut searched = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    candidates.extend(env.cuda_include.iter().cloned());
    candidates.extend(env.toolkits.iter().cloned());
    let mut primary = first_with(&candidates, &mut searched, holds_cuda_headers);
    if primary.is_none() {
        if let Some(dir) = bundled() {
            searched.push(format!("{} (NVRTC's bundled headers)", dir.display()));
            if holds_cuda_headers(&dir) {
                primary = Some(dir.clone());
            }
            candidates.push(dir);
        }
    }
    let wheels = wheel_includes(env, major);
    let cached = cached_bundles(&env.header_cache, major);
    if primary.is_none() {
        primary = first_with(&wheels, &mut searched, holds_cuda_headers)
            .or_else(|| first_with(&cached, &mut searched, holds_cuda_headers));
    }
    candidates.extend(wheels);
    candidates.extend(cached);
    let Some(primary) = primary else {
        return CudaHeaders {
            dirs: Vec::new(),
            searched,
        };
    };
    let mut dirs = vec![primary.clone()];
    // libcu++: beside the CUDA headers, else the first place that has it.
    let libcudacxx = std::iter::once(&primary)
        .chain(&candidates)
        .find_map(|d| libcudacxx_in(d));
    if let Some(l) = libcudacxx.filter(|l| *l != primary) {
        dirs.push(l);
    }
    CudaHeaders { dirs, searched }
}

/// The first of `dirs` for which `holds` is true; each one looked at is pushed to `searched`.
fn first_with(dirs: &[PathBuf], searched: &mut Vec<String>, holds: fn(&Path) -> bool) -> Option<PathBuf> {
    dirs.iter()
        .find(|d| {
            searched.push(d.display().to_string());
            holds(d)
        })
        .cloned()
}

/// The directory to give `-I` for libcu++ under `dir`: `dir` itself or its `cccl/` (CUDA 13
/// keeps libcu++ there).
fn libcudacxx_in(dir: &Path) -> Option<PathBuf> {
    [dir.to_path_buf(), dir.join("cccl")]
        .into_iter()
        .find(|d| d.join("cuda/std/version").is_file())
}

/// The include directories the wheels may have put headers in, for NVRTC `major`: CUDA 13's
/// wheels share `nvidia/cu13/include` (libcu++ in its `cccl/`), CUDA 12's have one directory
/// per wheel.
fn wheel_includes(env: &SearchEnv, major: i32) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = env
        .library_dirs
        .iter()
        .map(|d| {
            d.parent()
                .map_or_else(|| d.join(".."), Path::to_path_buf)
                .join("include")
        })
        .collect();
    for sp in &env.site_packages {
        dirs.push(sp.join(format!("nvidia/cu{major}/include")));
        if major <= 12 {
            dirs.push(sp.join("nvidia/cuda_runtime/include"));
            dirs.push(sp.join("nvidia/cuda_cccl/include"));
        }
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// The headers NVRTCs of major version `major` installed into `cache`, newest first.
fn cached_bundles(cache: &Path, major: i32) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return Vec::new();
    };
    let prefix = format!("nvrtc-headers-{major}.");
    let mut found: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let minor = name.strip_prefix(&prefix)?.parse::<u32>().ok()?;
            Some((minor, e.path()))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, p)| p).collect()
}

/// `<prefix>/lib/python3*/{site,dist}-packages` for each prefix, newest Python first.
pub fn site_packages_under(prefixes: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for prefix in prefixes {
        let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pythons.sort();
        pythons.reverse();
        for py in pythons {
            for sub in ["site-packages", "dist-packages"] {
                let d = py.join(sub);
                if d.is_dir() {
                    dirs.push(d);
                }
            }
        }
    }
    dirs
}

/// Where NVRTC `major.minor`'s bundled headers are installed: `nvrtc-headers-X.Y` in
/// `GPU_RUNTIME_HEADER_CACHE`, else in `$XDG_CACHE_HOME/gpu-runtime` or
/// `~/.cache/gpu-runtime`.
pub fn bundled_headers_dir(major: i32, minor: i32) -> PathBuf {
    bundled_headers_in(&header_cache_dir(), major, minor)
}

/// Where NVRTC `major.minor`'s bundled headers are installed in the cache directory `cache`.
pub fn bundled_headers_in(cache: &Path, major: i32, minor: i32) -> PathBuf {
    cache.join(format!("nvrtc-headers-{major}.{minor}"))
}

/// The directory NVRTCs' bundled headers are installed in, each in its `nvrtc-headers-X.Y`:
/// `GPU_RUNTIME_HEADER_CACHE`, else `$XDG_CACHE_HOME/gpu-runtime` or `~/.cache/gpu-runtime`.
pub fn header_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(HEADER_CACHE_VAR).filter(|d| !d.is_empty()) {
        return d.into();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("gpu-runtime")
}

/// The file this process loaded NVRTC from, as the loader's map (`/proc/self/maps`) names it;
/// `None` where there is no such map, or where it names no NVRTC or more than one.
pub fn loaded_nvrtc() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut loaded = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| {
            let file = p.rsplit('/').next().unwrap_or(p);
            file.starts_with("libnvrtc") && !file.starts_with("libnvrtc-builtins")
        });
    let first = loaded.next()?;
    loaded.all(|p| p == first).then(|| PathBuf::from(first))
}

/// Whether `dir` holds an installed set of CUDA headers.
pub fn holds_cuda_headers(dir: &Path) -> bool {
    dir.join("cuda_fp16.h").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpu-cuda-include-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn without_a_toolkit_the_wheels_beside_the_library_are_found_with_libcudacxx() {
        let root = scratch("wheel");
        // A pip --target install of nvidia-cuda-runtime and nvidia-cuda-cccl (CUDA 13 layout).
        touch(&root.join("nvidia/cu13/include/cuda_fp16.h"));
        touch(&root.join("nvidia/cu13/include/cccl/cuda/std/version"));
        touch(&root.join("nvidia/cu13/lib/libnvrtc.so.13"));
        let env = SearchEnv {
            toolkits: vec![root.join("no-toolkit/include")],
            library_dirs: vec![root.join("nvidia/cu13/lib")],
            header_cache: root.join("cache"),
            ..SearchEnv::default()
        };
        let mut asked = false;
        let found = find(&env, 13, &mut || {
            asked = true;
            None
        });
        assert!(asked, "an NVRTC's own headers come before the wheels");
        let inc = root.join("nvidia/cu13/include");
        assert_eq!(found.dirs, [inc.clone(), inc.join("cccl")]);
        assert_eq!(
            found.searched[0],
            root.join("no-toolkit/include").display().to_string()
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn headers_another_nvrtc_installed_are_used_newest_first_and_libcudacxx_joins_from_elsewhere() {
        let root = scratch("cache");
        // An NVRTC 13.0 (no bundled headers): 13.2's and 13.10's installed headers are in the
        // cache, 12.9's too (another major: not used).
        for v in ["13.2", "13.10", "12.9"] {
            touch(&root.join(format!("cache/nvrtc-headers-{v}/cuda_fp16.h")));
        }
        // The runtime wheel's headers without libcu++ in a Python environment, and the cccl
        // wheel in another.
        let sp = root.join("venv/lib/python3.12/site-packages");
        touch(&sp.join("nvidia/cu13/include/cuda_fp16.h"));
        let other = root.join("other/lib/python3.11/site-packages");
        touch(&other.join("nvidia/cu13/include/cccl/cuda/std/version"));
        let env = SearchEnv {
            site_packages: site_packages_under(&[root.join("venv"), root.join("other")]),
            header_cache: root.join("cache"),
            ..SearchEnv::default()
        };
        assert_eq!(env.site_packages, [sp.clone(), other.clone()]);
        let found = find(&env, 13, &mut || None);
        assert_eq!(
            found.dirs,
            [
                sp.join("nvidia/cu13/include"),
                other.join("nvidia/cu13/include/cccl")
            ]
        );
        // Without the wheel: the newest cached 13.x.
        std::fs::remove_dir_all(sp.join("nvidia")).unwrap();
        let found = find(&env, 13, &mut || None);
        assert_eq!(found.dirs[0], root.join("cache/nvrtc-headers-13.10"));
        // A toolkit comes first, and then the NVRTC's own headers are not installed.
        touch(&root.join("toolkit/include/cuda_fp16.h"));
        let env = SearchEnv {
            toolkits: vec![root.join("toolkit/include")],
            ..env
        };
        let found = find(&env, 13, &mut || panic!("installed with a toolkit there"));
        assert_eq!(found.dirs[0], root.join("toolkit/include"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn nothing_found_says_where_it_looked() {
        let root = scratch("none");
        let env = SearchEnv {
            toolkits: vec![root.join("t/include")],
            library_dirs: vec![root.join("lib")],
            header_cache: root.join("cache"),
            ..SearchEnv::default()
        };
        let found = find(&env, 13, &mut || None);
        assert!(!found.found());
        assert!(found.options().is_empty());
        assert_eq!(
            found.searched,
            [root.join("t/include"), root.join("include")].map(|p| p.display().to_string())
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
