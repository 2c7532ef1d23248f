// gpu_runtime::complex<T>: complex numbers for device code, shipped with the gpu-runtime crate
// (NVRTC finds this header built in; for nvcc, add gpu-runtime/src/compiler/include to -I).
//
// The layout is the real part followed by the imaginary part, aligned to the whole size (as
// float2/double2, cuFloatComplex and cuda::std::complex are): a buffer of
// gpu_runtime::complex<float> is a Rust buffer of num_complex::Complex32 (gpu_runtime::Complex32),
// and a kernel parameter `gpu_runtime::complex<double> z` is a Rust `z: Complex64`.
// The default constructor is trivial, so the type may be used for __shared__ arrays.
#pragma once

extern "C++" {
namespace gpu_runtime {

namespace detail {
__host__ __device__ inline float fabs_(float x) { return ::fabsf(x); }
__host__ __device__ inline double fabs_(double x) { return ::fabs(x); }
__host__ __device__ inline float sqrt_(float x) { return ::sqrtf(x); }
__host__ __device__ inline double sqrt_(double x) { return ::sqrt(x); }
__host__ __device__ inline float hypot_(float x, float y) { return ::hypotf(x, y); }
__host__ __device__ inline double hypot_(double x, double y) { return ::hypot(x, y); }
__host__ __device__ inline float atan2_(float y, float x) { return ::atan2f(y, x); }
__host__ __device__ inline double atan2_(double y, double x) { return ::atan2(y, x); }
__host__ __device__ inline float exp_(float x) { return ::expf(x); }
__host__ __device__ inline double exp_(double x) { return ::exp(x); }
__host__ __device__ inline float log_(float x) { return ::logf(x); }
__host__ __device__ inline double log_(double x) { return ::log(x); }
__host__ __device__ inline float sin_(float x) { return ::sinf(x); }
__host__ __device__ inline double sin_(double x) { return ::sin(x); }
__host__ __device__ inline float cos_(float x) { return ::cosf(x); }
__host__ __device__ inline double cos_(double x) { return ::cos(x); }
__host__ __device__ inline float copysign_(float x, float y) { return ::copysignf(x, y); }
__host__ __device__ inline double copysign_(double x, double y) { return ::copysign(x, y); }
__host__ __device__ inline bool isnan_(float x) { return isnan(x); }
__host__ __device__ inline bool isnan_(double x) { return isnan(x); }
__host__ __device__ inline bool isinf_(float x) { return isinf(x); }
__host__ __device__ inline bool isinf_(double x) { return isinf(x); }
__host__ __device__ inline float sinh_(float x) { return ::sinhf(x); }
__host__ __device__ inline double sinh_(double x) { return ::sinh(x); }
__host__ __device__ inline float cosh_(float x) { return ::coshf(x); }
__host__ __device__ inline double cosh_(double x) { return ::cosh(x); }
__host__ __device__ inline float tanh_(float x) { return ::tanhf(x); }
__host__ __device__ inline double tanh_(double x) { return ::tanh(x); }
__host__ __device__ inline float expm1_(float x) { return ::expm1f(x); }
__host__ __device__ inline double expm1_(double x) { return ::expm1(x); }
__host__ __device__ inline float log1p_(float x) { return ::log1pf(x); }
__host__ __device__ inline double log1p_(double x) { return ::log1p(x); }
}  // namespace detail

template <typename T>
struct alignas(2 * sizeof(T)) complex {
    typedef T value_type;
    T re;
    T im;

    complex() = default;
    __host__ __device__ constexpr complex(T re_, T im_ = T()) : re(re_), im(im_) {}
    template <typename U>
    __host__ __device__ explicit constexpr complex(const complex<U> &z) : re(T(z.re)), im(T(z.im)) {}

    __host__ __device__ constexpr T real() const { return re; }
    __host__ __device__ constexpr T imag() const { return im; }
    __host__ __device__ void real(T v) { re = v; }
    __host__ __device__ void imag(T v) { im = v; }

    __host__ __device__ complex &operator=(T v) { re = v; im = T(); return *this; }
    __host__ __device__ complex &operator+=(const complex &z) { re += z.re; im += z.im; return *this; }
    __host__ __device__ complex &operator-=(const complex &z) { re -= z.re; im -= z.im; return *this; }
    __host__ __device__ complex &operator*=(const complex &z) {
        T r = re * z.re - im * z.im;
        im = re * z.im + im * z.re;
        re = r;
        return *this;
    }
    // Smith's algorithm as NumPy's loops write it: no overflow or underflow in |z|^2 where the
    // quotient is representable, and NumPy's results at the edges (a number over zero is an
    // infinity or NaN part by part, a finite one over an infinite one a signed zero).
    __host__ __device__ complex &operator/=(const complex &z) {
        const T ar = detail::fabs_(z.re), ai = detail::fabs_(z.im);
        if (ar >= ai) {
            if (ar == T(0) && ai == T(0)) {
                re = re / ar;
                im = im / ar;
                return *this;
            }
            const T rat = z.im / z.re;
            const T scl = T(1) / (z.re + z.im * rat);
            const T nr = (re + im * rat) * scl;
            im = (im - re * rat) * scl;
            re = nr;
        } else {
            const T rat = z.re / z.im;
            const T scl = T(1) / (z.im + z.re * rat);
            const T nr = (re * rat + im) * scl;
            im = (im * rat - re) * scl;
            re = nr;
        }
        return *this;
    }
    __host__ __device__ complex &operator+=(T v) { re += v; return *this; }
    __host__ __device__ complex &operator-=(T v) { re -= v; return *this; }
    __host__ __device__ complex &operator*=(T v) { re *= v; im *= v; return *this; }
    __host__ __device__ complex &operator/=(T v) { re /= v; im /= v; return *this; }
};

#define GPU_RUNTIME_COMPLEX_BINARY(OP)                                                          \
    template <typename T>                                                                       \
    __host__ __device__ inline complex<T> operator OP(complex<T> a, const complex<T> &b) {      \
        return a OP##= b;                                                                       \
    }                                                                                           \
    template <typename T>                                                                       \
    __host__ __device__ inline complex<T> operator OP(complex<T> a, const T &b) {               \
        return a OP##= b;                                                                       \
    }                                                                                           \
    template <typename T>                                                                       \
    __host__ __device__ inline complex<T> operator OP(const T &a, const complex<T> &b) {        \
        return complex<T>(a) OP##= b;                                                           \
    }
GPU_RUNTIME_COMPLEX_BINARY(+)
GPU_RUNTIME_COMPLEX_BINARY(-)
GPU_RUNTIME_COMPLEX_BINARY(*)
GPU_RUNTIME_COMPLEX_BINARY(/)
#undef GPU_RUNTIME_COMPLEX_BINARY

template <typename T>
__host__ __device__ inline complex<T> operator+(const complex<T> &z) { return z; }
template <typename T>
__host__ __device__ inline complex<T> operator-(const complex<T> &z) { return complex<T>(-z.re, -z.im); }
template <typename T>
__host__ __device__ inline bool operator==(const complex<T> &a, const complex<T> &b) {
    return a.re == b.re && a.im == b.im;
}
template <typename T>
__host__ __device__ inline bool operator!=(const complex<T> &a, const complex<T> &b) { return !(a == b); }

template <typename T>
__host__ __device__ inline T real(const complex<T> &z) { return z.re; }
template <typename T>
__host__ __device__ inline T imag(const complex<T> &z) { return z.im; }
template <typename T>
__host__ __device__ inline complex<T> conj(const complex<T> &z) { return complex<T>(z.re, -z.im); }
// The squared magnitude, as std::norm (num_complex's norm_sqr).
template <typename T>
__host__ __device__ inline T norm(const complex<T> &z) { return z.re * z.re + z.im * z.im; }
template <typename T>
__host__ __device__ inline T abs(const complex<T> &z) { return detail::hypot_(z.re, z.im); }
template <typename T>
__host__ __device__ inline T arg(const complex<T> &z) { return detail::atan2_(z.im, z.re); }
template <typename T>
__host__ __device__ inline complex<T> polar(const T &r, const T &theta = T()) {
    return complex<T>(r * detail::cos_(theta), r * detail::sin_(theta));
}
// exp(x) * (cos y, sin y); a zero imaginary part stays exact (exp(inf + 0i) = inf + 0i, not
// inf * sin 0 = NaN), as C99's cexp and NumPy.
template <typename T>
__host__ __device__ inline complex<T> exp(const complex<T> &z) {
    if (z.im == T()) return complex<T>(detail::exp_(z.re), z.im);
    return polar(detail::exp_(z.re), z.im);
}
template <typename T>
__host__ __device__ inline complex<T> log(const complex<T> &z) {
    return complex<T>(detail::log_(abs(z)), arg(z));
}
// The principal square root (the branch cut along the negative real axis, as std::sqrt).
template <typename T>
__host__ __device__ inline complex<T> sqrt(const complex<T> &z) {
    if (z.re == T() && z.im == T()) return complex<T>(T(), z.im);
    T r = detail::sqrt_((abs(z) + detail::fabs_(z.re)) / T(2));
    if (z.re >= T()) return complex<T>(r, z.im / (T(2) * r));
    return complex<T>(detail::fabs_(z.im) / (T(2) * r), detail::copysign_(r, z.im));
}

// log(z) / ln(10).
template <typename T>
__host__ __device__ inline complex<T> log10(const complex<T> &z) {
    complex<T> l = log(z);
    const T inv_ln10 = T(0.43429448190325182765);
    return complex<T>(l.re * inv_ln10, l.im * inv_ln10);
}

// log(z) / ln(2) (NumPy's complex log2).
template <typename T>
__host__ __device__ inline complex<T> log2(const complex<T> &z) {
    complex<T> l = log(z);
    const T inv_ln2 = T(1.44269504088896340736);
    return complex<T>(l.re * inv_ln2, l.im * inv_ln2);
}
// 2^z = exp(z ln 2) (NumPy's complex exp2).
template <typename T>
__host__ __device__ inline complex<T> exp2(const complex<T> &z) {
    const T ln2 = T(0.69314718055994530942);
    return exp(complex<T>(z.re * ln2, z.im * ln2));
}
// e^z - 1 without cancellation near 0: (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y
// (cos y - 1 = -2 sin^2(y/2)); a zero imaginary part stays exact, as exp's.
template <typename T>
__host__ __device__ inline complex<T> expm1(const complex<T> &z) {
    if (z.im == T()) return complex<T>(detail::expm1_(z.re), z.im);
    T s = detail::sin_(z.im / T(2));
    return complex<T>(detail::expm1_(z.re) * detail::cos_(z.im) - T(2) * s * s,
                      detail::exp_(z.re) * detail::sin_(z.im));
}
// ln(1 + z) without cancellation near 0: Re = ln|1 + z| = log1p(2x + x^2 + y^2) / 2 while
// |x|, |y| < 1/2 (no overflow there), else ln(hypot(1 + x, y)); Im = atan2(y, 1 + x).
template <typename T>
__host__ __device__ inline complex<T> log1p(const complex<T> &z) {
    T im = detail::atan2_(z.im, T(1) + z.re);
    if (detail::fabs_(z.re) < T(0.5) && detail::fabs_(z.im) < T(0.5)) {
        return complex<T>(detail::log1p_(z.re * (T(2) + z.re) + z.im * z.im) / T(2), im);
    }
    return complex<T>(detail::log_(detail::hypot_(T(1) + z.re, z.im)), im);
}

// sinh(x + iy) = sinh x cos y + i cosh x sin y (a zero imaginary part stays exact).
template <typename T>
__host__ __device__ inline complex<T> sinh(const complex<T> &z) {
    if (z.im == T()) return complex<T>(detail::sinh_(z.re), z.im);
    return complex<T>(detail::sinh_(z.re) * detail::cos_(z.im), detail::cosh_(z.re) * detail::sin_(z.im));
}
// cosh(x + iy) = cosh x cos y + i sinh x sin y.
template <typename T>
__host__ __device__ inline complex<T> cosh(const complex<T> &z) {
    if (z.im == T()) return complex<T>(detail::cosh_(z.re), z.re < T() ? -z.im : z.im);
    return complex<T>(detail::cosh_(z.re) * detail::cos_(z.im), detail::sinh_(z.re) * detail::sin_(z.im));
}
// tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); for |x| > 20 (where tanh x is 1
// in double and cosh 2x would overflow float) the limit: sign(x) + i 4 sin y cos y e^(-2|x|).
template <typename T>
__host__ __device__ inline complex<T> tanh(const complex<T> &z) {
    if (z.im == T()) return complex<T>(detail::tanh_(z.re), z.im);
    if (detail::fabs_(z.re) > T(20)) {
        T e = detail::exp_(T(-2) * detail::fabs_(z.re));
        return complex<T>(detail::copysign_(T(1), z.re),
                          T(4) * detail::sin_(z.im) * detail::cos_(z.im) * e);
    }
    T d = detail::cosh_(T(2) * z.re) + detail::cos_(T(2) * z.im);
    return complex<T>(detail::sinh_(T(2) * z.re) / d, detail::sin_(T(2) * z.im) / d);
}
// sin z = -i sinh(iz) = sin x cosh y + i cos x sinh y.
template <typename T>
__host__ __device__ inline complex<T> sin(const complex<T> &z) {
    complex<T> s = sinh(complex<T>(-z.im, z.re));
    return complex<T>(s.im, -s.re);
}
// cos z = cosh(iz).
template <typename T>
__host__ __device__ inline complex<T> cos(const complex<T> &z) { return cosh(complex<T>(-z.im, z.re)); }
// tan z = -i tanh(iz).
template <typename T>
__host__ __device__ inline complex<T> tan(const complex<T> &z) {
    complex<T> t = tanh(complex<T>(-z.im, z.re));
    return complex<T>(t.im, -t.re);
}
// a^b = exp(b log a); 0^b is 1 for b = 0, 0 for Re b > 0 with Im b = 0 (NumPy's
// values), and exp(b log 0) (infinities or NaN) otherwise.
template <typename T>
__host__ __device__ inline complex<T> pow(const complex<T> &a, const complex<T> &b) {
    if (b.re == T() && b.im == T()) return complex<T>(T(1), T());
    if (a.re == T() && a.im == T() && b.im == T() && b.re > T()) return complex<T>(T(), T());
    return exp(b * log(a));
}

// NumPy's (and C99's) classification of a complex number: NaN or infinite when either part
// is (an infinite part makes the number infinite even with a NaN other part), finite when both
// parts are.
template <typename T>
__host__ __device__ inline bool isinf(const complex<T> &z) { return detail::isinf_(z.re) || detail::isinf_(z.im); }
template <typename T>
__host__ __device__ inline bool isnan(const complex<T> &z) { return detail::isnan_(z.re) || detail::isnan_(z.im); }
template <typename T>
__host__ __device__ inline bool isfinite(const complex<T> &z) { return !isnan(z) && !isinf(z); }

// CUDA's own complex types (cuComplex.h's cuFloatComplex is float2) hold the same bytes.
__host__ __device__ inline complex<float> from_vector(float2 v) { return complex<float>(v.x, v.y); }
__host__ __device__ inline complex<double> from_vector(double2 v) { return complex<double>(v.x, v.y); }
__host__ __device__ inline float2 to_vector(const complex<float> &z) { return make_float2(z.re, z.im); }
__host__ __device__ inline double2 to_vector(const complex<double> &z) { return make_double2(z.re, z.im); }

}  // namespace gpu_runtime
}  // extern "C++"
