//! The headers NVRTC compiles against, so that kernels written for nvcc compile unchanged.
//!
//! NVRTC has no C or C++ standard library and, without a CUDA toolkit, no `cuda_fp16.h`. Every
//! compile therefore gets:
//! - the CUDA headers (`cuda_fp16.h`, `cuda_bf16.h`, `cuda/std/…`, `cooperative_groups.h`, …)
//!   from the first of: the directory in `GPU_RUNTIME_CUDA_INCLUDE`, `$CUDA_PATH/include`,
//!   `$CUDA_HOME/include`, `/usr/local/cuda/include` that holds `cuda_fp16.h`; the headers NVRTC
//!   (13.1 and later) carries inside itself, installed once into a cache directory
//!   (`GPU_RUNTIME_HEADER_CACHE`, else `$XDG_CACHE_HOME/gpu-runtime` or `~/.cache/gpu-runtime`);
//!   the `nvidia-cuda-runtime` and `nvidia-cuda-cccl` wheels; the headers another NVRTC of the
//!   same major version installed into the cache. The search is `gpu_cuda_source::cuda_include`'s,
//!   which the `#[kernel]` build-time check uses too;
//! - small built-in C headers for device code: `stdio.h`/`cstdio` (`printf`),
//!   `stdint.h`/`cstdint`, `stddef.h`/`cstddef`, `math.h`/`cmath` (constants such as `M_PI`,
//!   and `std::` names for the device math functions NVRTC already knows), `limits.h`/`climits`,
//!   `float.h`/`cfloat`, `stdlib.h`, `string.h`, `stdbool.h`, `time.h` (declaring what libcu++
//!   declares, as it declares it) and `assert.h`/`cassert` (device `assert`), and stand-ins for
//!   the host headers a file with host code beside its kernels includes (`<vector>`,
//!   `<cublas_v2.h>`, ...: see `gpu_cuda_source::device_parts`);
//! - this crate's device headers (in `gpu-cuda-source/include/`, also usable with nvcc through
//!   `-I`): `<gpu_runtime/complex.h>` (`gpu_runtime::complex<float>` and `<double>`, the device
//!   side of [`crate::types::Complex32`] and [`crate::types::Complex64`]),
//!   `<gpu_runtime/texture_fetch.h>` (`fp_tex2D<double>(tex, x, y)`, `fp_surf2Dwrite(v, surf,
//!   x, y)`, …: PyCUDA's `pycuda-helpers.hpp` for texture and surface objects, fetching doubles
//!   and complex numbers), `<gpu_runtime/graph.h>` (`cudaGraphSetConditional`,
//!   `cudaGridDependencySynchronize`, `cudaTriggerProgrammaticLaunchCompletion`, which CUDA's
//!   headers declare for NVRTC only with `-rdc`) and `<pycuda-complex.hpp>`
//!   (`pycuda::complex<T>`, for ports).
//!
//! - the prelude, [`NVRTC_PRELUDE`], included before the source unless turned off: the typedefs
//!   nvcc's host headers give every kernel (`uint`, `ushort`, `ulong`, `u_int`, ...), and the
//!   names its implicit `cuda_runtime.h` gives (`FILE`, `INT_MAX`, `INFINITY`, `std::min`, ...).
//!
//! The texts of the last three are `gpu_cuda_source::BUILTIN_HEADERS`, which the `#[kernel]`
//! build-time check gives NVRTC too.
//!
//! A header found nowhere makes the compile fail with a [`crate::CompileError`] whose log ends
//! with a note naming the header and the CUDA header directories, or, when there are none, what
//! to install. A message about a line of a built-in header says it is built in.

use std::ffi::{c_char, c_int, c_uint, CString};
use std::path::PathBuf;

use gpu_cuda_source::cuda_include;
use std::sync::OnceLock;

/// Where the CUDA headers came from, and the in-memory C headers.
pub(crate) struct Headers {
    /// `-I` options for the CUDA header directories.
    pub(crate) options: Vec<String>,
    /// The directories searched, for the missing-header note.
    searched: Vec<String>,
    names: Vec<CString>,
    // Owns the texts `content_ptrs` points into.
    _contents: Vec<CString>,
    /// Pointers into `names` and `contents`, as nvrtcCreateProgram takes them.
    name_ptrs: Vec<usize>,
    content_ptrs: Vec<usize>,
}

impl Headers {
    /// The number of in-memory headers.
    pub(crate) fn count(&self) -> usize {
        self.names.len()
    }

    /// The headers' contents, for nvrtcCreateProgram.
    pub(crate) fn contents(&self) -> *const *const c_char {
        self.content_ptrs.as_ptr().cast()
    }

    /// The headers' include names, for nvrtcCreateProgram.
    pub(crate) fn names(&self) -> *const *const c_char {
        self.name_ptrs.as_ptr().cast()
    }

    /// A note for a log that reports a header it could not open, naming the header and where
    /// it was looked for; `None` when the log reports no missing header.
    pub(crate) fn missing_note(&self, log: &str) -> Option<String> {
        // NVRTC says "could not open" with no include directory, "cannot open" with some.
        const MARK: &str = "open source file \"";
        let start = log.find(MARK)? + MARK.len();
        let name = &log[start..start + log[start..].find('"')?];
        let hint = if self.options.is_empty() {
            // No CUDA headers at all: what to install.
            format!(
                "no CUDA headers were found (searched {}); install {}",
                self.searched.join(", "),
                cuda_include::INSTALL_HINT
            )
        } else {
            format!(
                "it is in none of the CUDA header directories ({}) nor gpu-runtime's built-in \
                 headers; add its directory to the kernel's options as `-I<dir>` \
                 (`include_dirs = [..]` on a #[kernel])",
                self.options.join(" ")
            )
        };
        Some(format!(
            "note (gpu-runtime): the header `{name}` was not found: {hint}"
        ))
    }
}

/// The header NVRTC includes before every source of this crate unless told not to
/// ([`SourceModule::prelude`](crate::SourceModule::prelude), `#[kernel(…, prelude = false)]`):
/// what nvcc's host headers declare for every kernel and NVRTC does not, glibc's
/// `<sys/types.h>` integer names (`uint`, `ushort`, `ulong`, `u_int`, `u_char`, `u_int32_t`,
/// ...) with glibc's types. Only typedefs, so a source that declares them again the same way
/// compiles either way. The `#[kernel]` type check knows the same names (`uint n` is `n: u32`).
pub const NVRTC_PRELUDE: &str = gpu_cuda_source::NVRTC_PRELUDE;

/// The option that makes NVRTC include the prelude (an in-memory header) before the source,
/// leaving the source's own line numbers as they are.
pub(crate) fn prelude_option() -> String {
    format!("--pre-include={}", gpu_cuda_source::NVRTC_PRELUDE_NAME)
}

/// A note for a log that cites the prelude, e.g. "invalid redeclaration of type name "uint"
/// (declared at line 9 of gpu_runtime_prelude.h)": what it is and how to turn it off.
pub(crate) fn prelude_note(log: &str) -> Option<String> {
    log.contains(gpu_cuda_source::NVRTC_PRELUDE_NAME).then(|| {
        format!(
            "note (gpu-runtime): `{}` is the prelude included before every NVRTC compile: the \
             typedefs nvcc's host headers declare for every kernel (`uint`, `ushort`, `ulong`, \
             `u_int`, ...); a source that declares one of these names as another type compiles \
             with `SourceModule::prelude(false)` or `#[kernel(…, prelude = false)]`",
            gpu_cuda_source::NVRTC_PRELUDE_NAME
        )
    })
}

// SAFETY: the raw pointers point into the CStrings owned by the same struct, never mutated.
unsafe impl Send for Headers {}
// SAFETY: as above.
unsafe impl Sync for Headers {}

/// The headers for every compile of this process, found once, for the NVRTC loaded, of major
/// version `nvrtc_major`.
pub(crate) fn headers(nvrtc_major: i32) -> &'static Headers {
    static HEADERS: OnceLock<Headers> = OnceLock::new();
    HEADERS.get_or_init(|| {
        let library = cuda_include::loaded_nvrtc();
        let env = cuda_include::SearchEnv::from_env(library.as_deref());
        let found = cuda_include::find(&env, nvrtc_major, &mut bundled_include);
        let options = found.options();
        let searched = found.searched;
        let (names, contents): (Vec<CString>, Vec<CString>) = gpu_cuda_source::BUILTIN_HEADERS
            .iter()
            .map(|(n, c)| {
                // The built-in texts are constants without NUL bytes.
                (
                    CString::new(*n).unwrap_or_default(),
                    CString::new(*c).unwrap_or_default(),
                )
            })
            .unzip();
        let name_ptrs = names.iter().map(|n| n.as_ptr() as usize).collect();
        let content_ptrs = contents.iter().map(|c| c.as_ptr() as usize).collect();
        Headers {
            options,
            searched,
            names,
            _contents: contents,
            name_ptrs,
            content_ptrs,
        }
    })
}

/// `nvrtcBundledHeadersInfo` (NVRTC 13.1 and later; cudarc's `cuda-13000` bindings lack it).
#[repr(C)]
struct BundledHeadersInfo {
    available: c_int,
    compressed_size: usize,
    uncompressed_size: usize,
    cuda_version_major: c_int,
    cuda_version_minor: c_int,
    num_files: c_uint,
}

type GetInfoFn = unsafe extern "C" fn(*mut BundledHeadersInfo, *mut *const c_char) -> c_int;
type InstallFn = unsafe extern "C" fn(*const c_char, c_uint, *mut *const c_char) -> c_int;

/// NVRTC's own copy of the CUDA headers, installed into the cache directory on first use;
/// `None` for an NVRTC without one (before 13.1).
fn bundled_include() -> Option<PathBuf> {
    let lib = nvrtc_library()?;
    // SAFETY: the signatures are those of nvrtc.h (13.1+); the library stays loaded in `lib`
    // for as long as the functions are used below.
    let (get_info, install) = unsafe {
        (
            lib.get::<GetInfoFn>(b"nvrtcGetBundledHeadersInfo").ok()?,
            lib.get::<InstallFn>(b"nvrtcInstallBundledHeaders").ok()?,
        )
    };
    let mut info = BundledHeadersInfo {
        available: 0,
        compressed_size: 0,
        uncompressed_size: 0,
        cuda_version_major: 0,
        cuda_version_minor: 0,
        num_files: 0,
    };
    let mut log: *const c_char = std::ptr::null();
    // SAFETY: valid out-pointers.
    let r = unsafe { get_info(&mut info, &mut log) };
    if r != 0 || info.available == 0 || info.num_files == 0 {
        return None;
    }
    let dir = cuda_include::bundled_headers_dir(info.cuda_version_major, info.cuda_version_minor);
    if cuda_include::holds_cuda_headers(&dir) {
        return Some(dir);
    }
    std::fs::create_dir_all(&dir).ok()?;
    let c_dir = CString::new(dir.to_string_lossy().as_bytes()).ok()?;
    // SAFETY: NUL-terminated path and valid out-pointer; NVRTC locks the directory itself.
    let r = unsafe { install(c_dir.as_ptr(), 0, &mut log) };
    (r == 0 && cuda_include::holds_cuda_headers(&dir)).then_some(dir)
}

/// The NVRTC library cudarc loads, opened again to reach entry points newer than its bindings.
fn nvrtc_library() -> Option<libloading::Library> {
    ["libnvrtc.so.13", "libnvrtc.so", "nvrtc64_130_0.dll"]
        .iter()
        // SAFETY: loading NVRTC runs no initialisation with preconditions; cudarc loads the
        // same library.
        .find_map(|name| unsafe { libloading::Library::new(*name) }.ok())
}
