//! The build-time check on real kernel files that hold host code beside their kernels (the
//! workspace's `tests/realworld/llm.c/`: launchers, `main()`, `std::vector`, cuBLAS handles),
//! as written: they pass, their device part compiled as nvcc's device compile sees it, and an
//! error planted in a kernel still fails them. And the check with NVRTC 13.0, which carries no
//! CUDA headers, finding them in the wheels or in the headers a newer NVRTC installed.

use std::path::{Path, PathBuf};

use proc_macro2::Span;

use crate::deep::{run, Request};
use crate::nvrtc::{self, Want};

fn llm_c(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/realworld/llm.c")
        .join(path)
}

/// The check as `#[kernel(file = …)]` runs it on `path`'s text, or on `source` in its
/// directory.
fn check(path: &Path, source: &str) -> syn::Result<crate::deep::Outcome> {
    let dir = path.parent().expect("a file in a directory");
    let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
    // The file's local headers in memory, as the macro gives them (no `-I` of this machine).
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
        check: true,
        embed: Some(Vec::new()),
        prelude: true,
        headers,
    })
}

#[test]
fn files_with_host_launchers_and_std_vector_pass_the_build_check_as_written() {
    let layernorm = llm_c("dev/cuda/layernorm_forward.cu");
    let encoder = llm_c("llmc/encoder.cuh");
    for path in [&layernorm, &encoder] {
        let source = std::fs::read_to_string(path).unwrap();
        assert!(
            gpu_cuda_source::device_parts(&source, &[format!("-I{}", path.parent().unwrap().display())])
                .source
                .is_some(),
            "{}: has host code",
            path.display()
        );
        let out = check(path, &source).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let items = format!("{} {}", out.items, out.outer);
        // Checked, not skipped: no header left unopened, NVRTC there.
        for skipped in ["CUDA_HEADER_NOT_FOUND_AT_BUILD_TIME", "CUDA_NOT_CHECKED"] {
            assert!(!items.contains(skipped), "{}: {items}", path.display());
        }
    }
    // An error planted in a kernel of the mixed file is still NVRTC's error at its line.
    let source = std::fs::read_to_string(&layernorm).unwrap();
    let planted = source.replacen(
        "int idx = blockIdx.x * blockDim.x + threadIdx.x;",
        "int idx = blockIdx.x * blockDim.x + threadIdx.q;",
        1,
    );
    assert_ne!(planted, source);
    let line = planted.lines().position(|l| l.contains("threadIdx.q")).unwrap() + 1;
    let e = match check(&layernorm, &planted) {
        Err(e) => e.to_string(),
        Ok(out) => panic!("the planted error passed: {}", out.items),
    };
    assert!(e.contains(&format!("layernorm_forward.cu:{line}:")), "{e}");
    assert!(e.contains("class \"uint3\" has no member \"q\""), "{e}");
}

/// NVRTC 13.0 from its wheel (`.nvrtc-13.0/`, installed by `scripts/nvrtc-env.sh`), loaded
/// apart from the NVRTC the build check uses.
fn nvrtc_13_0() -> Option<PathBuf> {
    let path = std::env::var_os("GPU_SUITE_NVRTC_13_0")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../.nvrtc-13.0/nvidia/cu13/lib/libnvrtc.so.13")
        });
    if !path.is_file() {
        eprintln!(
            "note: no NVRTC 13.0 at {} (scripts/nvrtc-env.sh installs it)",
            path.display()
        );
        return None;
    }
    Some(path)
}

/// A source including the CUDA headers and libcu++ that NVRTC 13.0's wheel does not have.
const CUDA_HEADERS_SOURCE: &str = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n\
    #include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n\
    #include <cuda/std/limits>\n#include <cuda/std/cstdint>\n#include <stdint.h>\n\
    namespace cg = cooperative_groups;\n\
    __global__ void k(__nv_bfloat16 *y, const __half *x, int64_t n) {\n\
      cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());\n\
      float v = cg::reduce(warp, __half2float(x[threadIdx.x]), cg::plus<float>());\n\
      if (threadIdx.x < n) y[threadIdx.x] = __float2bfloat16(cuda::std::min(v, cuda::std::numeric_limits<float>::max()));\n\
    }\n";

#[test]
fn nvrtc_13_0_without_a_toolkit_checks_files_including_cuda_headers() {
    let Some(lib) = nvrtc_13_0() else {
        return;
    };
    let lib = &lib;
    // What NVRTC 13.5 (the build check's, from the wheel) has: its own headers, or the runtime
    // and cccl wheels beside it.
    let current = nvrtc::get().expect("NVRTC for the build check");
    assert!(
        current.cuda_headers().found(),
        "the current NVRTC has CUDA headers"
    );
    let root = std::env::temp_dir().join(format!("gpu-nvrtc-13-0-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let lib_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.nvrtc-13.0/nvidia/cu13/lib");
    let no_toolkit = vec![root.join("no-toolkit/include")];

    // 1. The wheels nvidia-cuda-runtime and nvidia-cuda-cccl in the Python environment NVRTC
    //    13.0 came from (`pip install nvidia-cuda-runtime nvidia-cuda-cccl`): here a
    //    site-packages whose `nvidia/cu13/include` is the one of `.nvrtc/`.
    let wheel_include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.nvrtc/nvidia/cu13/include");
    if wheel_include.join("cuda_fp16.h").is_file() && wheel_include.join("cccl/cuda/std/version").is_file() {
        let sp = root.join("venv/lib/python3.12/site-packages");
        std::fs::create_dir_all(sp.join("nvidia/cu13")).unwrap();
        std::os::unix::fs::symlink(&wheel_include, sp.join("nvidia/cu13/include")).unwrap();
        let env = gpu_cuda_source::cuda_include::SearchEnv {
            toolkits: no_toolkit.clone(),
            library_dirs: vec![lib_dir.clone()],
            site_packages: gpu_cuda_source::cuda_include::site_packages_under(&[root.join("venv")]),
            header_cache: root.join("empty-cache"),
            ..Default::default()
        };
        let found = gpu_cuda_source::cuda_include::find(&env, 13, &mut || None);
        assert_eq!(
            found.dirs,
            [
                sp.join("nvidia/cu13/include"),
                sp.join("nvidia/cu13/include/cccl")
            ]
        );
        compiles_with(lib, found.options());
    } else {
        eprintln!("note: no nvidia-cuda-runtime and nvidia-cuda-cccl wheels in .nvrtc/: case 1 skipped");
    }

    // 2. No wheel, but the headers a newer NVRTC installed into the cache (as the build check
    //    and the run time do on first use): NVRTC 13.0 uses those.
    let cache = root.join("cache");
    let newer = current.install_bundled_into(&cache);
    match newer {
        Some(dir) => {
            let env = gpu_cuda_source::cuda_include::SearchEnv {
                toolkits: no_toolkit,
                library_dirs: vec![lib_dir],
                header_cache: cache,
                ..Default::default()
            };
            let found = gpu_cuda_source::cuda_include::find(&env, 13, &mut || None);
            assert_eq!(found.dirs, [dir.clone(), dir.join("cccl")]);
            compiles_with(lib, found.options());
        }
        None => eprintln!("note: the current NVRTC carries no headers (before 13.1): case 2 skipped"),
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Compiles [`CUDA_HEADERS_SOURCE`] with the NVRTC 13.0 at `path` and `options` as the build
/// check does.
fn compiles_with(path: &Path, options: Vec<String>) {
    let lib = nvrtc::load_path(path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lib.version(), (13, 0));
    lib.set_cuda_headers(options.clone());
    let out = lib
        .compile(
            CUDA_HEADERS_SOURCE,
            "k.cu",
            &[],
            &["--gpu-architecture=compute_90".to_owned()],
            Want::Check,
            true,
            &[],
        )
        .unwrap();
    assert!(out.ok, "NVRTC 13.0 with {options:?}:\n{}", out.log);
    assert!(!out.log.contains("cannot open"), "{}", out.log);
}
