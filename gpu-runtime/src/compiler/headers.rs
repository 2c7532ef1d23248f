//! The headers NVRTC compiles against, so that kernels written for nvcc compile unchanged.
//!
//! NVRTC has no C or C++ standard library and, without a CUDA toolkit, no `cuda_fp16.h`. Every
//! compile therefore gets:
//! - the CUDA headers (`cuda_fp16.h`, `cuda_bf16.h`, `cuda/std/…`, `cooperative_groups.h`, …)
//!   from the first of: the directory in `GPU_RUNTIME_CUDA_INCLUDE`, `$CUDA_PATH/include`,
//!   `$CUDA_HOME/include`, `/usr/local/cuda/include` that holds `cuda_fp16.h`; else the headers
//!   NVRTC (12.8 and later) carries inside itself, installed once into a cache directory
//!   (`GPU_RUNTIME_HEADER_CACHE`, else `$XDG_CACHE_HOME/gpu-runtime` or
//!   `~/.cache/gpu-runtime`);
//! - small built-in C headers for device code: `stdio.h`/`cstdio` (`printf`),
//!   `stdint.h`/`cstdint`, `stddef.h`/`cstddef`, `math.h`/`cmath` (constants such as `M_PI`,
//!   and `std::` names for the device math functions NVRTC already knows), `limits.h`/`climits`,
//!   `float.h`/`cfloat` (as libcu++ defines them) and `assert.h`/`cassert` (device `assert`);
//! - this crate's device headers (in `compiler/include/`, also usable with nvcc through `-I`):
//!   `<gpu_runtime/complex.h>` (`gpu_runtime::complex<float>` and `<double>`, the device side
//!   of [`crate::types::Complex32`] and [`crate::types::Complex64`]),
//!   `<gpu_runtime/texture_fetch.h>` (`fp_tex2D<double>(tex, x, y)`, `fp_surf2Dwrite(v, surf,
//!   x, y)`, …: PyCUDA's `pycuda-helpers.hpp` for texture and surface objects, fetching doubles
//!   and complex numbers), `<gpu_runtime/graph.h>` (`cudaGraphSetConditional`,
//!   `cudaGridDependencySynchronize`, `cudaTriggerProgrammaticLaunchCompletion`, which CUDA's
//!   headers declare for NVRTC only with `-rdc`) and `<pycuda-complex.hpp>`
//!   (`pycuda::complex<T>`, for ports).
//!
//! - the prelude, [`NVRTC_PRELUDE`], included before the source unless turned off: the typedefs
//!   nvcc's host headers give every kernel (`uint`, `ushort`, `ulong`, `u_int`, ...).
//!
//! A header found nowhere makes the compile fail with a [`crate::CompileError`] whose log ends
//! with a note naming the header and every directory searched.

use std::ffi::{c_char, c_int, c_uint, CString};
use std::path::{Path, PathBuf};
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
        let dirs = if self.searched.is_empty() {
            "no CUDA header directory was found".to_owned()
        } else {
            format!("searched {}", self.searched.join(", "))
        };
        Some(format!(
            "note (gpu-runtime): the header `{name}` was not found: {dirs}, and the built-in \
             headers {}; set GPU_RUNTIME_CUDA_INCLUDE to a CUDA toolkit's include directory, or \
             add `-I<dir>` to the kernel's options",
            self.names
                .iter()
                .map(|n| n.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// The header NVRTC includes before every source of this crate unless told not to
/// ([`SourceModule::prelude`](crate::SourceModule::prelude), `#[kernel(…, prelude = false)]`):
/// what nvcc's host headers declare for every kernel and NVRTC does not, glibc's
/// `<sys/types.h>` integer names (`uint`, `ushort`, `ulong`, `u_int`, `u_char`, `u_int32_t`,
/// ...) with glibc's types. Only typedefs, so a source that declares them again the same way
/// compiles either way. The `#[kernel]` type check knows the same names (`uint n` is `n: u32`).
pub const NVRTC_PRELUDE: &str = gpu_cdecl::NVRTC_PRELUDE;

/// The option that makes NVRTC include the prelude (an in-memory header) before the source,
/// leaving the source's own line numbers as they are.
pub(crate) fn prelude_option() -> String {
    format!("--pre-include={}", gpu_cdecl::NVRTC_PRELUDE_NAME)
}

/// A note for a log that cites the prelude, e.g. "invalid redeclaration of type name "uint"
/// (declared at line 9 of gpu_runtime_prelude.h)": what it is and how to turn it off.
pub(crate) fn prelude_note(log: &str) -> Option<String> {
    log.contains(gpu_cdecl::NVRTC_PRELUDE_NAME).then(|| {
        format!(
            "note (gpu-runtime): `{}` is the prelude included before every NVRTC compile: the \
             typedefs nvcc's host headers declare for every kernel (`uint`, `ushort`, `ulong`, \
             `u_int`, ...); a source that declares one of these names as another type compiles \
             with `SourceModule::prelude(false)` or `#[kernel(…, prelude = false)]`",
            gpu_cdecl::NVRTC_PRELUDE_NAME
        )
    })
}

// SAFETY: the raw pointers point into the CStrings owned by the same struct, never mutated.
unsafe impl Send for Headers {}
// SAFETY: as above.
unsafe impl Sync for Headers {}

/// The headers for every compile of this process, found once.
pub(crate) fn headers() -> &'static Headers {
    static HEADERS: OnceLock<Headers> = OnceLock::new();
    HEADERS.get_or_init(|| {
        let mut searched = Vec::new();
        let dir = toolkit_include(&mut searched).or_else(|| bundled_include(&mut searched));
        let mut options = Vec::new();
        if let Some(dir) = dir {
            options.push(format!("-I{}", dir.display()));
            // CUDA 13 keeps libcu++ (`cuda/std/…`) in include/cccl.
            let cccl = dir.join("cccl");
            if cccl.is_dir() {
                options.push(format!("-I{}", cccl.display()));
            }
        }
        let (names, contents): (Vec<CString>, Vec<CString>) = BUILTIN
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

/// A CUDA toolkit's include directory, from the environment or the usual place.
fn toolkit_include(searched: &mut Vec<String>) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("GPU_RUNTIME_CUDA_INCLUDE") {
        candidates.push(d.into());
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(d) = std::env::var_os(var) {
            candidates.push(PathBuf::from(d).join("include"));
        }
    }
    candidates.push("/usr/local/cuda/include".into());
    candidates.into_iter().find(|d| {
        searched.push(d.display().to_string());
        d.join("cuda_fp16.h").is_file()
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

/// NVRTC's own copy of the CUDA headers, installed into the cache directory on first use.
fn bundled_include(searched: &mut Vec<String>) -> Option<PathBuf> {
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
    let dir = cache_dir().join(format!(
        "nvrtc-headers-{}.{}",
        info.cuda_version_major, info.cuda_version_minor
    ));
    searched.push(format!("{} (NVRTC's bundled headers)", dir.display()));
    if dir.join("cuda_fp16.h").is_file() {
        return Some(dir);
    }
    std::fs::create_dir_all(&dir).ok()?;
    let c_dir = CString::new(dir.to_string_lossy().as_bytes()).ok()?;
    // SAFETY: NUL-terminated path and valid out-pointer; NVRTC locks the directory itself.
    let r = unsafe { install(c_dir.as_ptr(), 0, &mut log) };
    (r == 0 && dir.join("cuda_fp16.h").is_file()).then_some(dir)
}

fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("GPU_RUNTIME_HEADER_CACHE") {
        return d.into();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("gpu-runtime")
}

/// The NVRTC library cudarc loads, opened again to reach entry points newer than its bindings.
fn nvrtc_library() -> Option<libloading::Library> {
    ["libnvrtc.so.13", "libnvrtc.so", "nvrtc64_130_0.dll"]
        .iter()
        // SAFETY: loading NVRTC runs no initialisation with preconditions; cudarc loads the
        // same library.
        .find_map(|name| unsafe { libloading::Library::new(*name) }.ok())
}

const STDINT_H: &str = r#"#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef signed char int_least8_t;
typedef short int_least16_t;
typedef int int_least32_t;
typedef long int_least64_t;
typedef unsigned char uint_least8_t;
typedef unsigned short uint_least16_t;
typedef unsigned int uint_least32_t;
typedef unsigned long uint_least64_t;
typedef signed char int_fast8_t;
typedef long int_fast16_t;
typedef long int_fast32_t;
typedef long int_fast64_t;
typedef unsigned char uint_fast8_t;
typedef unsigned long uint_fast16_t;
typedef unsigned long uint_fast32_t;
typedef unsigned long uint_fast64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long intmax_t;
typedef unsigned long uintmax_t;
#define INT8_MIN (-128)
#define INT16_MIN (-32767-1)
#define INT32_MIN (-2147483647-1)
#define INT64_MIN (-9223372036854775807L-1)
#define INT8_MAX (127)
#define INT16_MAX (32767)
#define INT32_MAX (2147483647)
#define INT64_MAX (9223372036854775807L)
#define UINT8_MAX (255)
#define UINT16_MAX (65535)
#define UINT32_MAX (4294967295U)
#define UINT64_MAX (18446744073709551615UL)
#define INTPTR_MIN INT64_MIN
#define INTPTR_MAX INT64_MAX
#define UINTPTR_MAX UINT64_MAX
#define SIZE_MAX UINT64_MAX
#define INT8_C(c) c
#define INT16_C(c) c
#define INT32_C(c) c
#define INT64_C(c) c ## L
#define UINT8_C(c) c
#define UINT16_C(c) c
#define UINT32_C(c) c ## U
#define UINT64_C(c) c ## UL
"#;

const CSTDINT: &str = r#"#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::int_least8_t; using ::int_least16_t; using ::int_least32_t; using ::int_least64_t;
using ::uint_least8_t; using ::uint_least16_t; using ::uint_least32_t; using ::uint_least64_t;
using ::int_fast8_t; using ::int_fast16_t; using ::int_fast32_t; using ::int_fast64_t;
using ::uint_fast8_t; using ::uint_fast16_t; using ::uint_fast32_t; using ::uint_fast64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
}
"#;

const STDDEF_H: &str = r#"#pragma once
typedef unsigned long size_t;
typedef long ptrdiff_t;
#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif
"#;

const CSTDDEF: &str = r#"#pragma once
#include <stddef.h>
namespace std { using ::size_t; using ::ptrdiff_t; typedef decltype(nullptr) nullptr_t; }
"#;

const STDIO_H: &str = r#"#pragma once
#include <stddef.h>
extern "C" __device__ int printf(const char *format, ...);
"#;

const CSTDIO: &str = r#"#pragma once
#include <stdio.h>
namespace std { using ::printf; using ::size_t; }
"#;

// NVRTC declares the device math functions itself; the header adds the C constants. NVRTC
// knows none of the `__builtin_huge_valf`/`__builtin_nanf` family that a host <math.h> uses for
// INFINITY, NAN and HUGE_VAL(F), but it knows `__builtin_bit_cast`, which (unlike CUDA's own
// `__int_as_float`) is a constant expression: the constants also initialize `constexpr`,
// `__device__` and `__constant__` variables (from C++11; NVRTC's default is C++17). The bits are
// IEEE 754's: +infinity, and the positive quiet NaN glibc's NAN has.
const MATH_H: &str = r#"#pragma once
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#ifndef INFINITY
#define INFINITY __builtin_bit_cast(float, 0x7f800000U)
#endif
#ifndef NAN
#define NAN __builtin_bit_cast(float, 0x7fc00000U)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __builtin_bit_cast(double, 0x7ff0000000000000ULL)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __builtin_bit_cast(float, 0x7f800000U)
#endif
"#;

const CMATH: &str = r#"#pragma once
#include <math.h>
namespace std {
using ::abs; using ::fabs; using ::fmod; using ::remainder; using ::remquo; using ::fma;
using ::fmax; using ::fmin; using ::fdim; using ::exp; using ::exp2; using ::expm1; using ::log;
using ::log10; using ::log2; using ::log1p; using ::pow; using ::sqrt; using ::cbrt;
using ::hypot; using ::sin; using ::cos; using ::tan; using ::asin; using ::acos; using ::atan;
using ::atan2; using ::sinh; using ::cosh; using ::tanh; using ::asinh; using ::acosh;
using ::atanh; using ::erf; using ::erfc; using ::tgamma; using ::lgamma; using ::ceil;
using ::floor; using ::trunc; using ::round; using ::lround; using ::llround; using ::nearbyint;
using ::rint; using ::lrint; using ::llrint; using ::frexp; using ::ldexp; using ::modf;
using ::scalbn; using ::scalbln; using ::ilogb; using ::logb; using ::nextafter;
using ::copysign; using ::isfinite; using ::isinf; using ::isnan; using ::signbit;
}
"#;

// The C limits, as libcu++'s <cuda/std/climits> defines them under NVRTC (LP64, signed
// `char`), so that a source including both sees identical definitions.
const LIMITS_H: &str = r#"#pragma once
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-SHRT_MAX - 1)
#define SHRT_MAX 0x7fff
#define USHRT_MAX 0xffff
#define INT_MIN (-INT_MAX - 1)
#define INT_MAX 0x7fffffff
#define UINT_MAX 0xffffffff
#define LONG_MIN (-LONG_MAX - 1)
#define LONG_MAX LLONG_MAX
#define ULONG_MAX ULLONG_MAX
#define LLONG_MIN (-LLONG_MAX - 1)
#define LLONG_MAX 0x7fffffffffffffffLL
#define ULLONG_MAX 0xffffffffffffffffUL
"#;

const CLIMITS: &str = "#pragma once\n#include <limits.h>\n";

// As libcu++'s <cuda/std/cfloat> defines them under NVRTC.
const FLOAT_H: &str = r#"#pragma once
#define FLT_RADIX 2
#define DECIMAL_DIG DBL_DECIMAL_DIG
#define FLT_ROUNDS 1
#define FLT_EVAL_METHOD 0
#define FLT_DECIMAL_DIG 9
#define FLT_MIN 1.17549435082228750796873653722224568e-38f
#define FLT_TRUE_MIN 1.40129846432481707092372958328991613e-45f
#define FLT_MAX 3.40282346638528859811704183484516925e+38f
#define FLT_EPSILON 1.19209289550781250000000000000000000e-7f
#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MIN_EXP (-125)
#define FLT_MIN_10_EXP (-37)
#define FLT_MAX_EXP 128
#define FLT_MAX_10_EXP 38
#define FLT_HAS_SUBNORM 1
#define DBL_DECIMAL_DIG 17
#define DBL_MIN 2.22507385850720138309023271733240406e-308
#define DBL_TRUE_MIN 4.94065645841246544176568792868221372e-324
#define DBL_MAX 1.79769313486231570814527423731704357e+308
#define DBL_EPSILON 2.22044604925031308084726333618164062e-16
#define DBL_DIG 15
#define DBL_MANT_DIG 53
#define DBL_MIN_EXP (-1021)
#define DBL_MIN_10_EXP (-307)
#define DBL_MAX_EXP 1024
#define DBL_MAX_10_EXP 308
#define DBL_HAS_SUBNORM 1
"#;

const CFLOAT: &str = "#pragma once\n#include <float.h>\n";

// Device `assert`, as CUDA's own headers define it on Linux: a failed assertion stops the
// kernel with a message naming the expression, file and line. `NDEBUG` turns it off; like the C
// header it may be included again after changing `NDEBUG`.
const ASSERT_H: &str = r#"#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
extern "C" __device__ void __assertfail(const char *, const char *, unsigned int, const char *, unsigned long);
#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))
#endif
"#;

const CASSERT: &str = "#include <assert.h>\n";

/// The in-memory headers, by include name.
const BUILTIN: &[(&str, &str)] = &[
    ("stdint.h", STDINT_H),
    ("cstdint", CSTDINT),
    ("stddef.h", STDDEF_H),
    ("cstddef", CSTDDEF),
    ("stdio.h", STDIO_H),
    ("cstdio", CSTDIO),
    ("math.h", MATH_H),
    ("cmath", CMATH),
    ("limits.h", LIMITS_H),
    ("climits", CLIMITS),
    ("float.h", FLOAT_H),
    ("cfloat", CFLOAT),
    ("assert.h", ASSERT_H),
    ("cassert", CASSERT),
    // This crate's own device headers (compiler/include/): complex numbers and texture fetches
    // of doubles and complex numbers.
    (
        "gpu_runtime/complex.h",
        include_str!("include/gpu_runtime/complex.h"),
    ),
    (
        "gpu_runtime/texture_fetch.h",
        include_str!("include/gpu_runtime/texture_fetch.h"),
    ),
    // Conditional graph nodes and programmatic dependent launches without -rdc.
    ("gpu_runtime/graph.h", include_str!("include/gpu_runtime/graph.h")),
    ("pycuda-complex.hpp", include_str!("include/pycuda-complex.hpp")),
    (gpu_cdecl::NVRTC_PRELUDE_NAME, gpu_cdecl::NVRTC_PRELUDE),
];
