//! `GPU_RUNTIME_NVRTC=/dir/libnvrtc.so.13` works on its own at build time: with nothing of
//! NVRTC's on the loader's path, the macro loads NVRTC from that path and its
//! `libnvrtc-builtins` from the same directory, and the build-time check reports NVRTC's own
//! diagnostics (checked with trybuild, like `tests/ui.rs`).

use std::path::PathBuf;

mod ui_support;

/// The NVRTC library on this process's loader path (where `scripts/nvrtc-env.sh` puts the
/// PyPI wheel's), and that path without its directory.
fn nvrtc_and_the_path_without_it() -> (PathBuf, String) {
    let path = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    let has_nvrtc = |dir: &str| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("libnvrtc"))
        })
    };
    let lib = path
        .split(':')
        .filter(|d| has_nvrtc(d))
        .find_map(|d| {
            std::fs::read_dir(d).ok()?.flatten().map(|e| e.path()).find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("libnvrtc.so."))
            })
        })
        .expect("this test needs NVRTC on LD_LIBRARY_PATH (source scripts/nvrtc-env.sh)");
    let rest: Vec<&str> = path
        .split(':')
        .filter(|d| !d.is_empty() && !has_nvrtc(d))
        .collect();
    (lib, rest.join(":"))
}

#[test]
fn nvrtc_named_by_path_alone_checks_kernels_at_build_time() {
    let (current, rest) = nvrtc_and_the_path_without_it();
    // NVRTC 13.0 (installed by scripts/nvrtc-env.sh) finds its builtins only through the
    // loader's path; later ones also beside themselves, so 13.0 is the case that matters.
    let old = std::env::var("GPU_SUITE_NVRTC_13_0")
        .expect("GPU_SUITE_NVRTC_13_0 is unset: source scripts/nvrtc-env.sh, which installs NVRTC 13.0");
    // Set before trybuild starts cargo, and this binary runs no other test: the compiler and
    // the macro inherit exactly this environment.
    std::env::set_var("LD_LIBRARY_PATH", rest);
    std::env::remove_var("GPU_RUNTIME_BUILD_CHECK");
    for lib in [PathBuf::from(old), current] {
        eprintln!("GPU_RUNTIME_NVRTC={}", lib.display());
        std::env::set_var("GPU_RUNTIME_NVRTC", &lib);
        ui_support::compile_fail("ui-tests/nvrtc-by-path/*.rs");
    }
}
