//! The C headers NVRTC lacks and `gpu-runtime` gives every compile, held here, in the lowest
//! crate, so that the run-time compile (`gpu_runtime::compiler`) and the `#[kernel]` build-time
//! check (`gpu-macros-core`) compile against the very same texts.
//!
//! Small device-code versions of `stdio.h`/`cstdio` (`printf`), `stdint.h`/`cstdint`,
//! `stddef.h`/`cstddef`, `math.h`/`cmath` (constants such as `M_PI`, and `std::` names for the
//! device math functions NVRTC already knows), `limits.h`/`climits`, `float.h`/`cfloat` (as
//! libcu++ defines them) and `assert.h`/`cassert` (device `assert`); `gpu-runtime`'s own device
//! headers (`include/` of this crate: `<gpu_runtime/complex.h>`, `<gpu_runtime/texture_fetch.h>`,
//! `<pycuda-complex.hpp>`, also usable with nvcc through `-I`); and the prelude.

// The fixed-width integers as libcu++'s <cuda/std/cstdint> declares them under NVRTC (and as
// CUDA's own headers do, e.g. `cuda_pipeline_helpers.h`'s `typedef unsigned long long
// uint64_t;`): 64-bit types are `long long`, the fast and least types the exact ones. The macros
// are libcu++'s, token for token, so that a source including both sees one definition of each
// name in either order (a macro defined again differently is a warning; a type, an error).
use crate::stand_ins;

const STDINT_H: &str = r#"#pragma once
#include <limits.h>
typedef signed char int8_t;
typedef signed short int16_t;
typedef signed int int32_t;
typedef signed long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int8_t int_fast8_t;
typedef int16_t int_fast16_t;
typedef int32_t int_fast32_t;
typedef int64_t int_fast64_t;
typedef uint8_t uint_fast8_t;
typedef uint16_t uint_fast16_t;
typedef uint32_t uint_fast32_t;
typedef uint64_t uint_fast64_t;
typedef int8_t int_least8_t;
typedef int16_t int_least16_t;
typedef int32_t int_least32_t;
typedef int64_t int_least64_t;
typedef uint8_t uint_least8_t;
typedef uint16_t uint_least16_t;
typedef uint32_t uint_least32_t;
typedef uint64_t uint_least64_t;
typedef int64_t intptr_t;
typedef uint64_t uintptr_t;
typedef int64_t intmax_t;
typedef uint64_t uintmax_t;
#define INT8_MIN   SCHAR_MIN
#define INT16_MIN  SHRT_MIN
#define INT32_MIN  INT_MIN
#define INT64_MIN  LLONG_MIN
#define INT8_MAX   SCHAR_MAX
#define INT16_MAX  SHRT_MAX
#define INT32_MAX  INT_MAX
#define INT64_MAX  LLONG_MAX
#define UINT8_MAX  UCHAR_MAX
#define UINT16_MAX USHRT_MAX
#define UINT32_MAX UINT_MAX
#define UINT64_MAX ULLONG_MAX
#define INT_FAST8_MIN   INT8_MIN
#define INT_FAST16_MIN  INT16_MIN
#define INT_FAST32_MIN  INT32_MIN
#define INT_FAST64_MIN  INT64_MIN
#define INT_FAST8_MAX   INT8_MAX
#define INT_FAST16_MAX  INT16_MAX
#define INT_FAST32_MAX  INT32_MAX
#define INT_FAST64_MAX  INT64_MAX
#define UINT_FAST8_MAX  UINT8_MAX
#define UINT_FAST16_MAX UINT16_MAX
#define UINT_FAST32_MAX UINT32_MAX
#define UINT_FAST64_MAX UINT64_MAX
#define INT_LEAST8_MIN   INT8_MIN
#define INT_LEAST16_MIN  INT16_MIN
#define INT_LEAST32_MIN  INT32_MIN
#define INT_LEAST64_MIN  INT64_MIN
#define INT_LEAST8_MAX   INT8_MAX
#define INT_LEAST16_MAX  INT16_MAX
#define INT_LEAST32_MAX  INT32_MAX
#define INT_LEAST64_MAX  INT64_MAX
#define UINT_LEAST8_MAX  UINT8_MAX
#define UINT_LEAST16_MAX UINT16_MAX
#define UINT_LEAST32_MAX UINT32_MAX
#define UINT_LEAST64_MAX UINT64_MAX
#define INTPTR_MIN  INT64_MIN
#define INTPTR_MAX  INT64_MAX
#define UINTPTR_MAX UINT64_MAX
#define INTMAX_MIN  INT64_MIN
#define INTMAX_MAX  INT64_MAX
#define UINTMAX_MAX UINT64_MAX
#define PTRDIFF_MIN INT64_MIN
#define PTRDIFF_MAX INT64_MAX
#define SIZE_MAX UINT64_MAX
#define INT8_C(X)   ((::int_least8_t) (X))
#define INT16_C(X)  ((::int_least16_t) (X))
#define INT32_C(X)  ((::int_least32_t) (X))
#define INT64_C(X)  ((::int_least64_t) (X))
#define UINT8_C(X)  ((::uint_least8_t) (X))
#define UINT16_C(X) ((::uint_least16_t) (X))
#define UINT32_C(X) ((::uint_least32_t) (X))
#define UINT64_C(X) ((::uint_least64_t) (X))
#define INTMAX_C(X)  ((::intmax_t) (X))
#define UINTMAX_C(X) ((::uintmax_t) (X))
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

// `printf`, and for host code beside the kernels (whose functions the compile leaves out, see
// `device_part`) the type `FILE` and `EOF`, as glibc declares them.
const STDIO_H: &str = r#"#pragma once
#include <stddef.h>
extern "C" __device__ int printf(const char *format, ...);
typedef struct _IO_FILE FILE;
#ifndef EOF
#define EOF (-1)
#endif
"#;

const CSTDIO: &str = r#"#pragma once
#include <stdio.h>
namespace std { using ::printf; using ::size_t; using ::FILE; }
"#;

// NVRTC declares `malloc`, `free`, `abs`, `labs` and `llabs` for device code itself; the rest
// of <stdlib.h> is host code.
const STDLIB_H: &str = r#"#pragma once
#include <stddef.h>
#ifndef EXIT_SUCCESS
#define EXIT_SUCCESS 0
#endif
#ifndef EXIT_FAILURE
#define EXIT_FAILURE 1
#endif
#ifndef RAND_MAX
#define RAND_MAX 2147483647
#endif
"#;

const CSTDLIB: &str = r#"#pragma once
#include <stdlib.h>
namespace std { using ::size_t; using ::malloc; using ::free; using ::abs; using ::labs; using ::llabs; }
"#;

// NVRTC declares `memcpy` and `memset` for device code itself.
const STRING_H: &str = "#pragma once\n#include <stddef.h>\n";

const CSTRING: &str = r#"#pragma once
#include <string.h>
namespace std { using ::size_t; using ::memcpy; using ::memset; }
"#;

// In C++, `bool`, `true` and `false` are keywords; the header only says so.
const STDBOOL_H: &str =
    "#pragma once\n#ifndef __bool_true_false_are_defined\n#define __bool_true_false_are_defined 1\n#endif\n";

const CSTDBOOL: &str = "#pragma once\n#include <stdbool.h>\n";

// NVRTC declares `clock_t` and `clock()` for device code; the rest is host code. `time_t` and
// `TIME_UTC` as libcu++'s <cuda/std/ctime> declares them under NVRTC, which also defines
// `struct timespec` (so this header does not).
const TIME_H: &str = r#"#pragma once
#include <stddef.h>
typedef long long time_t;
#define TIME_UTC 1
struct tm { int tm_sec, tm_min, tm_hour, tm_mday, tm_mon, tm_year, tm_wday, tm_yday, tm_isdst; long tm_gmtoff; const char *tm_zone; };
#ifndef CLOCKS_PER_SEC
#define CLOCKS_PER_SEC 1000000L
#endif
"#;

const CTIME: &str = r#"#pragma once
#include <time.h>
namespace std { using ::clock_t; using ::time_t; using ::tm; using ::clock; }
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

// libcu++'s <cuda/std/cmath> defines INFINITY and NAN under NVRTC without asking whether they are
// defined (as `::cuda::std::numeric_limits<float>::infinity()`, ...), so after the built-in
// <math.h> (which every compile with the prelude has) it would redefine them, a warning in every
// source that includes it. This header, found before the include directories, takes the
// built-in ones away first and includes libcu++'s own by another spelling of its path. Once
// libcu++'s is in (its guard `_CUDA_STD_CMATH`), its definitions stay.
const CUDA_STD_CMATH: &str = r#"// gpu-runtime's built-in cuda/std/cmath: libcu++'s, after the built-in <math.h>'s
// INFINITY and NAN are undefined for libcu++ to define them its way.
#if !defined(_CUDA_STD_CMATH)
#  ifdef INFINITY
#    undef INFINITY
#  endif
#  ifdef NAN
#    undef NAN
#  endif
#endif
#if __has_include(<cuda/std/../std/cmath>)
#  include <cuda/std/../std/cmath>
#else
#  error cannot open source file "cuda/std/cmath" (libcu++, of the CUDA headers)
#endif
"#;

/// The in-memory headers every NVRTC compile of `gpu-runtime` and of the `#[kernel]` build-time
/// check gets, by include name: `(name, text)`. The last is the prelude
/// ([`NVRTC_PRELUDE_NAME`](crate::NVRTC_PRELUDE_NAME)), included by name with `--pre-include`.
pub const BUILTIN_HEADERS: &[(&str, &str)] = &[
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
    ("stdlib.h", STDLIB_H),
    ("cstdlib", CSTDLIB),
    ("string.h", STRING_H),
    ("cstring", CSTRING),
    ("stdbool.h", STDBOOL_H),
    ("cstdbool", CSTDBOOL),
    ("time.h", TIME_H),
    ("ctime", CTIME),
    ("cuda/std/cmath", CUDA_STD_CMATH),
    // Stand-ins for the host headers of files that hold host code beside their kernels.
    ("type_traits", stand_ins::TYPE_TRAITS),
    ("utility", stand_ins::UTILITY),
    ("algorithm", stand_ins::ALGORITHM),
    ("limits", stand_ins::LIMITS),
    ("array", stand_ins::ARRAY),
    ("vector", stand_ins::VECTOR),
    ("memory", stand_ins::MEMORY),
    ("string", stand_ins::STRING),
    ("string_view", stand_ins::STRING_VIEW),
    ("map", stand_ins::MAP),
    ("unordered_map", stand_ins::UNORDERED_MAP),
    ("set", stand_ins::SET),
    ("unordered_set", stand_ins::UNORDERED_SET),
    ("functional", stand_ins::FUNCTIONAL),
    ("iostream", stand_ins::IOSTREAM),
    ("sstream", stand_ins::STREAMS),
    ("fstream", stand_ins::STREAMS),
    ("stdexcept", stand_ins::STDEXCEPT),
    ("new", stand_ins::HOST_ONLY),
    ("cuda_runtime.h", stand_ins::CUDA_RUNTIME_H),
    ("cuda_runtime_api.h", stand_ins::CUDA_RUNTIME_H),
    ("cuda.h", stand_ins::CUDA_H),
    ("cublas_v2.h", stand_ins::CUBLAS_H),
    ("cublas_api.h", stand_ins::CUBLAS_API_H),
    ("cublasLt.h", stand_ins::CUBLAS_LT_H),
    ("cuda_profiler_api.h", stand_ins::HOST_ONLY),
    ("nvtx3/nvToolsExt.h", stand_ins::NVTX_H),
    ("nvtx3/nvToolsExtCudaRt.h", stand_ins::NVTX_H),
    ("unistd.h", stand_ins::HOST_ONLY),
    ("sys/types.h", stand_ins::HOST_ONLY),
    ("sys/stat.h", stand_ins::HOST_ONLY),
    ("sys/time.h", stand_ins::HOST_ONLY),
    ("ctype.h", stand_ins::HOST_ONLY),
    ("cctype", stand_ins::HOST_ONLY),
    ("errno.h", stand_ins::HOST_ONLY),
    ("cerrno", stand_ins::HOST_ONLY),
    ("omp.h", stand_ins::HOST_ONLY),
    ("dirent.h", stand_ins::DIRENT_H),
    ("fcntl.h", stand_ins::HOST_ONLY),
    ("glob.h", stand_ins::GLOB_H),
    ("signal.h", stand_ins::HOST_ONLY),
    ("pthread.h", stand_ins::PTHREAD_H),
    ("sys/mman.h", stand_ins::HOST_ONLY),
    ("arpa/inet.h", stand_ins::HOST_ONLY),
    ("gpu_runtime/nvcc_implicit.h", stand_ins::NVCC_IMPLICIT),
    // gpu-runtime's own device headers (gpu-cuda-source/include/): complex numbers and texture
    // fetches of doubles and complex numbers.
    (
        "gpu_runtime/complex.h",
        include_str!("../include/gpu_runtime/complex.h"),
    ),
    (
        "gpu_runtime/texture_fetch.h",
        include_str!("../include/gpu_runtime/texture_fetch.h"),
    ),
    // Conditional graph nodes and programmatic dependent launches without -rdc.
    (
        "gpu_runtime/graph.h",
        include_str!("../include/gpu_runtime/graph.h"),
    ),
    (
        "pycuda-complex.hpp",
        include_str!("../include/pycuda-complex.hpp"),
    ),
    (crate::NVRTC_PRELUDE_NAME, crate::NVRTC_PRELUDE),
];
