//! Stand-ins for the host headers a `.cu` file written for nvcc includes beside its kernels: the
//! C++ standard library (`<vector>`, `<memory>`, `<string>`, `<array>`, `<algorithm>`, ...), the
//! CUDA runtime and library headers (`<cuda_runtime.h>`, `<cublas_v2.h>`, ...) and POSIX ones
//! (`<unistd.h>`, ...), which NVRTC does not have. With nvcc, such a file's host code goes to the
//! host compiler; under NVRTC the compile leaves the host functions and variables out
//! ([`crate::device_part`]), so what is left of the host side are type names: in class members,
//! typedefs, template arguments. The stand-ins declare those types (with the members a type
//! needs to be complete, no host functions: NVRTC rejects a declaration of one), and what device
//! code may use of them as `__host__ __device__` (`std::min`, `std::max`, `std::swap`,
//! `std::numeric_limits`, `std::array`, `<type_traits>`, `<utility>`).
//!
//! They live in `namespace std`, which libcu++ (`cuda::std`) does not touch under NVRTC, and are
//! tested against it (`tests/builtin_headers.rs` of `gpu-macros-core`).

/// `<type_traits>`: the traits device code commonly uses, as the standard defines them.
pub(crate) const TYPE_TRAITS: &str = r#"#pragma once
// gpu-runtime's built-in <type_traits>: a subset, for device code.
namespace std {
template <class T, T v> struct integral_constant {
  static constexpr T value = v;
  typedef T value_type;
  typedef integral_constant type;
  __host__ __device__ constexpr operator value_type() const noexcept { return value; }
  __host__ __device__ constexpr value_type operator()() const noexcept { return value; }
};
template <bool B> using bool_constant = integral_constant<bool, B>;
typedef integral_constant<bool, true> true_type;
typedef integral_constant<bool, false> false_type;
template <class T, class U> struct is_same : false_type {};
template <class T> struct is_same<T, T> : true_type {};
template <class T, class U> inline constexpr bool is_same_v = is_same<T, U>::value;
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <bool B, class T = void> using enable_if_t = typename enable_if<B, T>::type;
template <bool B, class T, class F> struct conditional { typedef T type; };
template <class T, class F> struct conditional<false, T, F> { typedef F type; };
template <bool B, class T, class F> using conditional_t = typename conditional<B, T, F>::type;
template <class T> struct remove_const { typedef T type; };
template <class T> struct remove_const<const T> { typedef T type; };
template <class T> struct remove_volatile { typedef T type; };
template <class T> struct remove_volatile<volatile T> { typedef T type; };
template <class T> struct remove_cv { typedef typename remove_volatile<typename remove_const<T>::type>::type type; };
template <class T> struct remove_reference { typedef T type; };
template <class T> struct remove_reference<T &> { typedef T type; };
template <class T> struct remove_reference<T &&> { typedef T type; };
template <class T> struct remove_pointer { typedef T type; };
template <class T> struct remove_pointer<T *> { typedef T type; };
template <class T> struct remove_pointer<T *const> { typedef T type; };
template <class T> using remove_const_t = typename remove_const<T>::type;
template <class T> using remove_cv_t = typename remove_cv<T>::type;
template <class T> using remove_reference_t = typename remove_reference<T>::type;
template <class T> using remove_pointer_t = typename remove_pointer<T>::type;
template <class T> struct remove_cvref { typedef remove_cv_t<remove_reference_t<T>> type; };
template <class T> using remove_cvref_t = typename remove_cvref<T>::type;
template <class T> struct decay { typedef remove_cv_t<remove_reference_t<T>> type; };
template <class T> struct decay<T[]> { typedef T *type; };
template <class T, unsigned long N> struct decay<T[N]> { typedef T *type; };
template <class T> using decay_t = typename decay<T>::type;
template <class T> struct is_const : false_type {};
template <class T> struct is_const<const T> : true_type {};
template <class T> struct is_pointer : false_type {};
template <class T> struct is_pointer<T *> : true_type {};
template <class T> struct is_pointer<T *const> : true_type {};
template <class T> struct is_reference : false_type {};
template <class T> struct is_reference<T &> : true_type {};
template <class T> struct is_reference<T &&> : true_type {};
template <class T> struct is_void : is_same<remove_cv_t<T>, void> {};
template <class T> struct __gpu_rt_integral : false_type {};
template <> struct __gpu_rt_integral<bool> : true_type {};
template <> struct __gpu_rt_integral<char> : true_type {};
template <> struct __gpu_rt_integral<signed char> : true_type {};
template <> struct __gpu_rt_integral<unsigned char> : true_type {};
template <> struct __gpu_rt_integral<short> : true_type {};
template <> struct __gpu_rt_integral<unsigned short> : true_type {};
template <> struct __gpu_rt_integral<int> : true_type {};
template <> struct __gpu_rt_integral<unsigned int> : true_type {};
template <> struct __gpu_rt_integral<long> : true_type {};
template <> struct __gpu_rt_integral<unsigned long> : true_type {};
template <> struct __gpu_rt_integral<long long> : true_type {};
template <> struct __gpu_rt_integral<unsigned long long> : true_type {};
template <class T> struct is_integral : __gpu_rt_integral<remove_cv_t<T>> {};
template <class T> struct is_floating_point : bool_constant<is_same<remove_cv_t<T>, float>::value || is_same<remove_cv_t<T>, double>::value || is_same<remove_cv_t<T>, long double>::value> {};
template <class T> struct is_arithmetic : bool_constant<is_integral<T>::value || is_floating_point<T>::value> {};
template <class T> struct is_signed : bool_constant<is_arithmetic<T>::value && (remove_cv_t<T>(-1) < remove_cv_t<T>(0))> {};
template <class T> struct is_unsigned : bool_constant<is_arithmetic<T>::value && !(remove_cv_t<T>(-1) < remove_cv_t<T>(0))> {};
template <class T> inline constexpr bool is_integral_v = is_integral<T>::value;
template <class T> inline constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T> inline constexpr bool is_arithmetic_v = is_arithmetic<T>::value;
template <class T> inline constexpr bool is_pointer_v = is_pointer<T>::value;
template <class T> inline constexpr bool is_const_v = is_const<T>::value;
template <class T> inline constexpr bool is_void_v = is_void<T>::value;
template <class T> inline constexpr bool is_signed_v = is_signed<T>::value;
template <class T> inline constexpr bool is_unsigned_v = is_unsigned<T>::value;
}
"#;

/// `<utility>`: `swap`, `declval`, `pair` (NVRTC declares `std::move` and `std::forward`
/// itself).
pub(crate) const UTILITY: &str = r#"#pragma once
// gpu-runtime's built-in <utility>: a subset, for device code.
#include <type_traits>
namespace std {
template <class T> __host__ __device__ constexpr void swap(T &a, T &b) noexcept { T t = static_cast<T &&>(a); a = static_cast<T &&>(b); b = static_cast<T &&>(t); }
template <class T> __host__ __device__ T &&declval() noexcept;
template <class T1, class T2> struct pair {
  typedef T1 first_type;
  typedef T2 second_type;
  T1 first;
  T2 second;
};
template <class T1, class T2> __host__ __device__ constexpr pair<T1, T2> make_pair(T1 a, T2 b) { return pair<T1, T2>{a, b}; }
}
"#;

/// `<algorithm>`: `min`, `max` (which nvcc's implicit host headers give every kernel) and
/// `clamp`.
pub(crate) const ALGORITHM: &str = r#"#pragma once
// gpu-runtime's built-in <algorithm>: a subset, for device code.
#include <utility>
namespace std {
template <class T> __host__ __device__ constexpr const T &min(const T &a, const T &b) { return b < a ? b : a; }
template <class T> __host__ __device__ constexpr const T &max(const T &a, const T &b) { return a < b ? b : a; }
template <class T, class C> __host__ __device__ constexpr const T &min(const T &a, const T &b, C less) { return less(b, a) ? b : a; }
template <class T, class C> __host__ __device__ constexpr const T &max(const T &a, const T &b, C less) { return less(a, b) ? b : a; }
template <class T> __host__ __device__ constexpr const T &clamp(const T &v, const T &lo, const T &hi) { return v < lo ? lo : hi < v ? hi : v; }
}
"#;

/// `<limits>`: `std::numeric_limits` of the arithmetic types, from the built-in `<limits.h>` and
/// `<float.h>`.
pub(crate) const LIMITS: &str = r#"#pragma once
// gpu-runtime's built-in <limits>: std::numeric_limits, for device code.
#include <limits.h>
#include <float.h>
namespace std {
template <class T> struct numeric_limits { static constexpr bool is_specialized = false; };
#define __GPU_RT_INT_LIMITS(T, LO, HI, SIGNED, DIGITS) \
  template <> struct numeric_limits<T> { \
    static constexpr bool is_specialized = true; \
    static constexpr bool is_signed = SIGNED; \
    static constexpr bool is_integer = true; \
    static constexpr bool is_exact = true; \
    static constexpr bool has_infinity = false; \
    static constexpr bool has_quiet_NaN = false; \
    static constexpr int digits = DIGITS; \
    __host__ __device__ static constexpr T min() noexcept { return LO; } \
    __host__ __device__ static constexpr T max() noexcept { return HI; } \
    __host__ __device__ static constexpr T lowest() noexcept { return LO; } \
  };
__GPU_RT_INT_LIMITS(bool, false, true, false, 1)
__GPU_RT_INT_LIMITS(char, CHAR_MIN, CHAR_MAX, true, 7)
__GPU_RT_INT_LIMITS(signed char, SCHAR_MIN, SCHAR_MAX, true, 7)
__GPU_RT_INT_LIMITS(unsigned char, 0, UCHAR_MAX, false, 8)
__GPU_RT_INT_LIMITS(short, SHRT_MIN, SHRT_MAX, true, 15)
__GPU_RT_INT_LIMITS(unsigned short, 0, USHRT_MAX, false, 16)
__GPU_RT_INT_LIMITS(int, INT_MIN, INT_MAX, true, 31)
__GPU_RT_INT_LIMITS(unsigned int, 0, UINT_MAX, false, 32)
__GPU_RT_INT_LIMITS(long, LONG_MIN, LONG_MAX, true, 63)
__GPU_RT_INT_LIMITS(unsigned long, 0, ULONG_MAX, false, 64)
__GPU_RT_INT_LIMITS(long long, LLONG_MIN, LLONG_MAX, true, 63)
__GPU_RT_INT_LIMITS(unsigned long long, 0, ULLONG_MAX, false, 64)
#undef __GPU_RT_INT_LIMITS
#define __GPU_RT_FLOAT_LIMITS(T, P, BITS, INF, NAN_BITS) \
  template <> struct numeric_limits<T> { \
    static constexpr bool is_specialized = true; \
    static constexpr bool is_signed = true; \
    static constexpr bool is_integer = false; \
    static constexpr bool is_exact = false; \
    static constexpr bool has_infinity = true; \
    static constexpr bool has_quiet_NaN = true; \
    static constexpr int digits = P##_MANT_DIG; \
    __host__ __device__ static constexpr T min() noexcept { return P##_MIN; } \
    __host__ __device__ static constexpr T max() noexcept { return P##_MAX; } \
    __host__ __device__ static constexpr T lowest() noexcept { return -P##_MAX; } \
    __host__ __device__ static constexpr T epsilon() noexcept { return P##_EPSILON; } \
    __host__ __device__ static constexpr T denorm_min() noexcept { return P##_TRUE_MIN; } \
    __host__ __device__ static constexpr T infinity() noexcept { return __builtin_bit_cast(T, (BITS)INF); } \
    __host__ __device__ static constexpr T quiet_NaN() noexcept { return __builtin_bit_cast(T, (BITS)NAN_BITS); } \
  };
__GPU_RT_FLOAT_LIMITS(float, FLT, unsigned int, 0x7f800000U, 0x7fc00000U)
__GPU_RT_FLOAT_LIMITS(double, DBL, unsigned long long, 0x7ff0000000000000ULL, 0x7ff8000000000000ULL)
#undef __GPU_RT_FLOAT_LIMITS
}
"#;

/// `<array>`: `std::array`, usable in device code.
pub(crate) const ARRAY: &str = r#"#pragma once
// gpu-runtime's built-in <array>: std::array, for device code.
#include <stddef.h>
namespace std {
template <class T, size_t N> struct array {
  T __elems[N > 0 ? N : 1];
  typedef T value_type;
  typedef size_t size_type;
  __host__ __device__ constexpr T &operator[](size_t i) { return __elems[i]; }
  __host__ __device__ constexpr const T &operator[](size_t i) const { return __elems[i]; }
  __host__ __device__ constexpr T *data() noexcept { return __elems; }
  __host__ __device__ constexpr const T *data() const noexcept { return __elems; }
  __host__ __device__ constexpr T *begin() noexcept { return __elems; }
  __host__ __device__ constexpr T *end() noexcept { return __elems + N; }
  __host__ __device__ constexpr const T *begin() const noexcept { return __elems; }
  __host__ __device__ constexpr const T *end() const noexcept { return __elems + N; }
  __host__ __device__ constexpr size_t size() const noexcept { return N; }
  __host__ __device__ constexpr bool empty() const noexcept { return N == 0; }
};
}
"#;

/// The host-only containers and classes: complete types (so that a class member of one
/// compiles) without member functions. Only host code, which the compile leaves out, uses them.
pub(crate) const VECTOR: &str = r#"#pragma once
// gpu-runtime's built-in <vector>: the type, for host code that NVRTC leaves out.
#include <memory>
namespace std {
template <class T, class A = allocator<T>> class vector { T *__begin, *__end, *__cap; };
}
"#;

pub(crate) const MEMORY: &str = r#"#pragma once
// gpu-runtime's built-in <memory>: the types, for host code that NVRTC leaves out.
#include <stddef.h>
#include <utility>
namespace std {
template <class T> class allocator {};
template <class T> struct default_delete {};
template <class T, class D = default_delete<T>> class unique_ptr { T *__ptr; };
template <class T> class shared_ptr { T *__ptr; void *__ctrl; };
template <class T> class weak_ptr { T *__ptr; void *__ctrl; };
}
"#;

pub(crate) const STRING: &str = r#"#pragma once
// gpu-runtime's built-in <string>: the type, for host code that NVRTC leaves out.
#include <memory>
namespace std {
template <class C> struct char_traits {};
template <class C, class T = char_traits<C>, class A = allocator<C>> class basic_string { C *__ptr; size_t __size; size_t __cap; };
typedef basic_string<char> string;
}
"#;

pub(crate) const STRING_VIEW: &str = r#"#pragma once
// gpu-runtime's built-in <string_view>: the type, for host code that NVRTC leaves out.
#include <stddef.h>
namespace std {
template <class C> class basic_string_view { const C *__ptr; size_t __size; };
typedef basic_string_view<char> string_view;
}
"#;

pub(crate) const MAP: &str = r#"#pragma once
// gpu-runtime's built-in <map>: the type, for host code that NVRTC leaves out.
#include <memory>
namespace std {
template <class T> struct less {};
template <class K, class V, class C = less<K>, class A = allocator<pair<const K, V>>> class map { void *__tree; size_t __size; };
}
"#;

pub(crate) const UNORDERED_MAP: &str = r#"#pragma once
// gpu-runtime's built-in <unordered_map>: the type, for host code that NVRTC leaves out.
#include <memory>
#include <functional>
namespace std {
template <class T> struct equal_to {};
template <class K, class V, class H = hash<K>, class E = equal_to<K>, class A = allocator<pair<const K, V>>> class unordered_map { void *__table; size_t __size; };
}
"#;

pub(crate) const SET: &str = r#"#pragma once
// gpu-runtime's built-in <set>: the type, for host code that NVRTC leaves out.
#include <map>
namespace std {
template <class K, class C = less<K>, class A = allocator<K>> class set { void *__tree; size_t __size; };
}
"#;

pub(crate) const UNORDERED_SET: &str = r#"#pragma once
// gpu-runtime's built-in <unordered_set>: the type, for host code that NVRTC leaves out.
#include <unordered_map>
namespace std {
template <class K, class H = hash<K>, class E = equal_to<K>, class A = allocator<K>> class unordered_set { void *__table; size_t __size; };
}
"#;

pub(crate) const FUNCTIONAL: &str = r#"#pragma once
// gpu-runtime's built-in <functional>: the types, for host code that NVRTC leaves out.
#include <stddef.h>
namespace std {
template <class T> struct hash {};
template <class F> class function;
template <class R, class... A> class function<R(A...)> { void *__impl[4]; };
}
"#;

pub(crate) const IOSTREAM: &str = r#"#pragma once
// gpu-runtime's built-in <iostream>: the types, for host code that NVRTC leaves out.
#include <string>
namespace std {
class ios_base {};
class ostream {};
class istream {};
class stringstream {};
class ostringstream {};
class istringstream {};
class ofstream {};
class ifstream {};
class fstream {};
}
"#;

/// `<sstream>`, `<fstream>`: the types of `<iostream>`.
pub(crate) const STREAMS: &str = "#pragma once\n#include <iostream>\n";

pub(crate) const STDEXCEPT: &str = r#"#pragma once
// gpu-runtime's built-in <stdexcept>: the types, for host code that NVRTC leaves out.
namespace std {
class exception { void *__what; };
class runtime_error : public exception {};
class logic_error : public exception {};
class invalid_argument : public logic_error {};
class out_of_range : public logic_error {};
}
"#;

/// `<cuda_runtime.h>` and `<cuda_runtime_api.h>`: NVRTC declares the runtime's types itself
/// (`cudaStream_t`, `cudaError_t`, `dim3`, ...); the functions are host code.
pub(crate) const CUDA_RUNTIME_H: &str = "#pragma once\n// gpu-runtime's built-in cuda_runtime.h: NVRTC declares the CUDA runtime's types itself.\n";

/// `<cublas_api.h>`: `<cublas_v2.h>`'s types.
pub(crate) const CUBLAS_API_H: &str = "#pragma once\n#include <cublas_v2.h>\n";

/// `<cuda.h>`: the driver API's handle types, for host code that NVRTC leaves out.
pub(crate) const CUDA_H: &str = r#"#pragma once
// gpu-runtime's built-in cuda.h: the driver API's types, for host code that NVRTC leaves out.
#include <stdint.h>
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
#ifndef CUDA_SUCCESS
#define CUDA_SUCCESS 0
#endif
"#;

/// `<cublas_v2.h>`: cuBLAS's handle and enum types, for host code that NVRTC leaves out, and
/// the half and bfloat16 types, which the real one includes (a file that includes it may use
/// `__nv_bfloat16` without including `<cuda_bf16.h>`).
pub(crate) const CUBLAS_H: &str = r#"#pragma once
// gpu-runtime's built-in cuBLAS header: the types, for host code that NVRTC leaves out.
#include <stdint.h>
#if __has_include(<cuda_fp16.h>)
#include <cuda_fp16.h>
#endif
#if __has_include(<cuda_bf16.h>)
#include <cuda_bf16.h>
#endif
typedef struct cublasContext *cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3, CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_ARCH_MISMATCH = 8, CUBLAS_STATUS_MAPPING_ERROR = 11, CUBLAS_STATUS_EXECUTION_FAILED = 13, CUBLAS_STATUS_INTERNAL_ERROR = 14, CUBLAS_STATUS_NOT_SUPPORTED = 15, CUBLAS_STATUS_LICENSE_ERROR = 16 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1, CUBLAS_FILL_MODE_FULL = 2 } cublasFillMode_t;
typedef enum { CUBLAS_SIDE_LEFT = 0, CUBLAS_SIDE_RIGHT = 1 } cublasSideMode_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1, CUBLAS_PEDANTIC_MATH = 2, CUBLAS_TF32_TENSOR_OP_MATH = 3 } cublasMath_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99 } cublasGemmAlgo_t;
typedef enum { CUBLAS_COMPUTE_16F = 64, CUBLAS_COMPUTE_16F_PEDANTIC = 65, CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_PEDANTIC = 69, CUBLAS_COMPUTE_32F_FAST_16F = 74, CUBLAS_COMPUTE_32F_FAST_16BF = 75, CUBLAS_COMPUTE_32F_FAST_TF32 = 77, CUBLAS_COMPUTE_64F = 70, CUBLAS_COMPUTE_64F_PEDANTIC = 71, CUBLAS_COMPUTE_32I = 72, CUBLAS_COMPUTE_32I_PEDANTIC = 73 } cublasComputeType_t;
"#;

pub(crate) const CUBLAS_LT_H: &str = r#"#pragma once
// gpu-runtime's built-in cublasLt.h: the types, for host code that NVRTC leaves out.
#include <cublas_v2.h>
typedef struct cublasLtContext *cublasLtHandle_t;
typedef struct cublasLtMatmulDescOpaque_t *cublasLtMatmulDesc_t;
typedef struct cublasLtMatrixLayoutOpaque_t *cublasLtMatrixLayout_t;
typedef struct cublasLtMatmulPreferenceOpaque_t *cublasLtMatmulPreference_t;
typedef struct { unsigned long long data[8]; } cublasLtMatmulAlgo_t;
typedef struct { cublasLtMatmulAlgo_t algo; unsigned long workspaceSize; cublasStatus_t state; float wavesCount; int reserved[4]; } cublasLtMatmulHeuristicResult_t;
"#;

/// What nvcc gives every kernel without an `#include`: its implicit `cuda_runtime.h` brings in
/// `<stdio.h>`, `<stdlib.h>`, `<string.h>`, `<math.h>`, `<cmath>` and, through them, `<limits.h>`,
/// `<float.h>` and `std::min`/`std::max`. Included by the prelude, so that a kernel file written
/// for nvcc that uses `FILE`, `INT_MAX`, `FLT_MAX`, `INFINITY` or `std::min` compiles unchanged.
pub(crate) const NVCC_IMPLICIT: &str = r#"#pragma once
// gpu-runtime's built-in gpu_runtime/nvcc_implicit.h: what nvcc's implicit host headers give
// every kernel.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmath>
#include <limits.h>
#include <float.h>
#include <algorithm>
"#;

/// `<nvtx3/nvToolsExt.h>`, `<nvtx3/nvToolsExtCudaRt.h>`: host code only; the real ones include
/// `<stdint.h>`, which files that include them rely on.
pub(crate) const NVTX_H: &str =
    "#pragma once\n// gpu-runtime's built-in NVTX header: host code only.\n#include <stdint.h>\n";

/// `<glob.h>`: `glob_t`, a member of host-side structs.
pub(crate) const GLOB_H: &str = r#"#pragma once
// gpu-runtime's built-in glob.h: the type, for host code that NVRTC leaves out.
#include <stddef.h>
typedef struct { size_t gl_pathc; char **gl_pathv; size_t gl_offs; int gl_flags; void *__pad[5]; } glob_t;
"#;

/// `<dirent.h>`: `DIR` and `struct dirent`.
pub(crate) const DIRENT_H: &str = r#"#pragma once
// gpu-runtime's built-in dirent.h: the types, for host code that NVRTC leaves out.
typedef struct __dirstream DIR;
struct dirent { unsigned long d_ino; long d_off; unsigned short d_reclen; unsigned char d_type; char d_name[256]; };
"#;

/// `<pthread.h>`: the types of members of host-side structs.
pub(crate) const PTHREAD_H: &str = r#"#pragma once
// gpu-runtime's built-in pthread.h: the types, for host code that NVRTC leaves out.
typedef unsigned long pthread_t;
typedef union { char __size[40]; long __align; } pthread_mutex_t;
typedef union { char __size[48]; long long __align; } pthread_cond_t;
"#;

/// Headers of host code only (POSIX, OpenMP, profiling): nothing device code can use.
pub(crate) const HOST_ONLY: &str =
    "#pragma once\n// gpu-runtime's built-in stand-in for a header of host code only.\n";
