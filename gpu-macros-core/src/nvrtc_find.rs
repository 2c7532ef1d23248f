//! Where the build-time check looks for NVRTC: where users have it, without set-up.
//!
//! In order: `GPU_RUNTIME_NVRTC` (a path); the names cudarc tries, through the dynamic loader's
//! search (`LD_LIBRARY_PATH`, the ld cache); a CUDA toolkit's library directory
//! (`$CUDA_PATH`, `$CUDA_HOME`, `/usr/local/cuda`, `/opt/cuda`); the PyPI wheel
//! `nvidia-cuda-nvrtc` in a Python environment (`$VIRTUAL_ENV`, `$CONDA_PREFIX`, `~/.local`,
//! `/usr/local`, `/usr`), and last, only when all of those fail, wherever `python3` itself
//! imports the `nvidia` package from. The search runs once per compiler process (see
//! `nvrtc::get`).

use std::path::{Path, PathBuf};

/// The environment variable naming the NVRTC library to use at build time.
pub const NVRTC_VAR: &str = "GPU_RUNTIME_NVRTC";

/// The environment variables the search reads that cargo can track: the generated code names
/// them in `option_env!`, so that rustc records them and cargo builds the crate again (and the
/// check runs again) when one changes. Not `LD_LIBRARY_PATH`, which the search reads too:
/// cargo sets it for rustc itself and does not rebuild when the user's changes (tried with
/// cargo 1.95).
pub const NVRTC_ENV: &[&str] = &[NVRTC_VAR, "CUDA_PATH", "CUDA_HOME", "VIRTUAL_ENV", "CONDA_PREFIX"];

/// The library file names of NVRTC, newest first (cudarc's candidates).
const SONAMES: &[&str] = &[
    "libnvrtc.so",
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11",
    "libnvrtc.so.1",
];

/// Where a wheel puts the library, under a `site-packages` directory: CUDA 13's `cu13`
/// layout, then CUDA 12's.
const WHEEL_LIBS: &[&str] = &[
    "nvidia/cu13/lib/libnvrtc.so.13",
    "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
    "nvidia/cu12/lib/libnvrtc.so.12",
];

/// The names and paths to try, in order, without asking Python.
pub fn candidates() -> Vec<String> {
    let mut names = Vec::new();
    if let Some(p) = std::env::var_os(NVRTC_VAR) {
        names.push(p.to_string_lossy().into_owned());
    }
    names.extend(SONAMES.iter().map(|s| (*s).to_owned()));
    let mut toolkits: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    toolkits.extend(["/usr/local/cuda", "/opt/cuda"].map(PathBuf::from));
    for root in toolkits {
        for lib in ["lib64", "lib", "targets/x86_64-linux/lib"] {
            existing(&root.join(lib), SONAMES, &mut names);
        }
    }
    for sp in site_packages() {
        existing(&sp, WHEEL_LIBS, &mut names);
    }
    names
}

/// The wheel libraries under the directories of the `nvidia` package `python3` imports, for
/// when [`candidates`] found nothing: one Python start (tens of milliseconds), once per
/// process.
pub fn python_candidates() -> Vec<String> {
    let Ok(out) = std::process::Command::new("python3")
        .args(["-c", "import nvidia\nfor p in nvidia.__path__: print(p)"])
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for dir in String::from_utf8_lossy(&out.stdout).lines() {
        // `dir` is the `nvidia` directory; the wheel paths start with it.
        if let Some(sp) = Path::new(dir.trim()).parent() {
            existing(sp, WHEEL_LIBS, &mut names);
        }
    }
    names
}

/// Pushes `dir/name` for each name that exists.
fn existing(dir: &Path, files: &[&str], names: &mut Vec<String>) {
    for f in files {
        let p = dir.join(f);
        if p.is_file() {
            names.push(p.to_string_lossy().into_owned());
        }
    }
}

/// The `site-packages` and `dist-packages` directories of the usual Python prefixes.
fn site_packages() -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    if let Some(home) = std::env::var_os("HOME") {
        prefixes.push(Path::new(&home).join(".local"));
    }
    prefixes.extend(["/usr/local", "/usr"].map(PathBuf::from));
    site_packages_under(&prefixes)
}

/// `<prefix>/lib/python3*/{site,dist}-packages` for each prefix.
fn site_packages_under(prefixes: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for prefix in prefixes {
        let lib = prefix.join("lib");
        let Ok(entries) = std::fs::read_dir(&lib) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        // Newest Python first, for a deterministic order.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wheel_in_a_virtual_environment_is_a_candidate() {
        let root = std::env::temp_dir().join(format!("gpu-nvrtc-find-{}", std::process::id()));
        let lib = root.join("lib/python3.12/site-packages/nvidia/cu13/lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(lib.join("libnvrtc.so.13"), b"").unwrap();
        std::fs::create_dir_all(root.join("lib/python2.7/site-packages/nvidia/cu13/lib")).unwrap();
        let sp = site_packages_under(std::slice::from_ref(&root));
        assert_eq!(sp, [root.join("lib/python3.12/site-packages")]);
        let mut names = Vec::new();
        existing(&sp[0], WHEEL_LIBS, &mut names);
        assert_eq!(names, [lib.join("libnvrtc.so.13").to_string_lossy()]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_variable_comes_first() {
        // The process's own environment decides the rest; the bare names are always there.
        let c = candidates();
        let first_bare = c.iter().position(|n| n == "libnvrtc.so").unwrap();
        match std::env::var(NVRTC_VAR) {
            Ok(v) => assert_eq!((c[0].as_str(), first_bare), (v.as_str(), 1)),
            Err(_) => assert_eq!(first_bare, 0),
        }
    }
}
