// Texture fetches and surface accesses for elements the texture units cannot read as they are
// (PyCUDA's "double hack", pycuda-helpers.hpp, on texture and surface *objects*), shipped with
// the gpu-runtime crate.
//
// A CUDA array, linear or pitched texture of Rust `f64` holds each double as an int2, of
// `Complex64` each complex<double> as an int4, of `Complex32` each complex<float> as a float2:
//
//   double d = fp_tex2D<double>(tex, x, y);
//   gpu_runtime::complex<double> z = fp_tex1Dfetch<gpu_runtime::complex<double>>(tex, i);
//   fp_surf2Dwrite(d, surf, x, y);          // x counts elements, not bytes
//   double back = fp_surf2Dread<double>(surf, x, y);
//
// For any other element type (float, int, float4, ...) each helper is the plain CUDA function,
// so templated code may use them throughout. Textures of doubles must be point-sampled and read
// as integers (gpu-runtime's TextureDesc default); filtering would mix the halves of doubles.
#pragma once
#include <gpu_runtime/complex.h>

extern "C++" {
namespace gpu_runtime {
namespace detail {
// How an element is stored in a texel: `stored` is the type the hardware fetches.
template <typename T>
struct texel {
    typedef T stored;
    __device__ static T decode(const stored &v) { return v; }
    __device__ static stored encode(const T &v) { return v; }
};
template <>
struct texel<double> {
    typedef int2 stored;
    __device__ static double decode(const int2 &v) { return __hiloint2double(v.y, v.x); }
    __device__ static int2 encode(double v) { return make_int2(__double2loint(v), __double2hiint(v)); }
};
template <>
struct texel<complex<float> > {
    typedef float2 stored;
    __device__ static complex<float> decode(const float2 &v) { return complex<float>(v.x, v.y); }
    __device__ static float2 encode(const complex<float> &z) { return make_float2(z.re, z.im); }
};
template <>
struct texel<complex<double> > {
    typedef int4 stored;
    __device__ static complex<double> decode(const int4 &v) {
        return complex<double>(__hiloint2double(v.y, v.x), __hiloint2double(v.w, v.z));
    }
    __device__ static int4 encode(const complex<double> &z) {
        return make_int4(__double2loint(z.re), __double2hiint(z.re), __double2loint(z.im), __double2hiint(z.im));
    }
};
}  // namespace detail
}  // namespace gpu_runtime

#define GPU_RUNTIME_TEXEL(T) gpu_runtime::detail::texel<T>
#define GPU_RUNTIME_STORED(T) typename gpu_runtime::detail::texel<T>::stored

template <typename T>
__device__ inline T fp_tex1Dfetch(cudaTextureObject_t tex, int i) {
    return GPU_RUNTIME_TEXEL(T)::decode(tex1Dfetch<GPU_RUNTIME_STORED(T)>(tex, i));
}
template <typename T>
__device__ inline T fp_tex1D(cudaTextureObject_t tex, float x) {
    return GPU_RUNTIME_TEXEL(T)::decode(tex1D<GPU_RUNTIME_STORED(T)>(tex, x));
}
template <typename T>
__device__ inline T fp_tex2D(cudaTextureObject_t tex, float x, float y) {
    return GPU_RUNTIME_TEXEL(T)::decode(tex2D<GPU_RUNTIME_STORED(T)>(tex, x, y));
}
template <typename T>
__device__ inline T fp_tex3D(cudaTextureObject_t tex, float x, float y, float z) {
    return GPU_RUNTIME_TEXEL(T)::decode(tex3D<GPU_RUNTIME_STORED(T)>(tex, x, y, z));
}
template <typename T>
__device__ inline T fp_tex1DLayered(cudaTextureObject_t tex, float x, int layer) {
    return GPU_RUNTIME_TEXEL(T)::decode(tex1DLayered<GPU_RUNTIME_STORED(T)>(tex, x, layer));
}
template <typename T>
__device__ inline T fp_tex2DLayered(cudaTextureObject_t tex, float x, float y, int layer) {
    return GPU_RUNTIME_TEXEL(T)::decode(tex2DLayered<GPU_RUNTIME_STORED(T)>(tex, x, y, layer));
}

// Surfaces: x counts elements (the plain surf*D functions take bytes).
template <typename T>
__device__ inline void fp_surf1Dwrite(const T &v, cudaSurfaceObject_t surf, int x,
                                      cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    surf1Dwrite(GPU_RUNTIME_TEXEL(T)::encode(v), surf, x * (int)sizeof(GPU_RUNTIME_STORED(T)), mode);
}
template <typename T>
__device__ inline void fp_surf2Dwrite(const T &v, cudaSurfaceObject_t surf, int x, int y,
                                      cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    surf2Dwrite(GPU_RUNTIME_TEXEL(T)::encode(v), surf, x * (int)sizeof(GPU_RUNTIME_STORED(T)), y, mode);
}
template <typename T>
__device__ inline void fp_surf3Dwrite(const T &v, cudaSurfaceObject_t surf, int x, int y, int z,
                                      cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    surf3Dwrite(GPU_RUNTIME_TEXEL(T)::encode(v), surf, x * (int)sizeof(GPU_RUNTIME_STORED(T)), y, z, mode);
}
template <typename T>
__device__ inline void fp_surf2DLayeredwrite(const T &v, cudaSurfaceObject_t surf, int x, int y, int layer,
                                             cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    surf2DLayeredwrite(GPU_RUNTIME_TEXEL(T)::encode(v), surf, x * (int)sizeof(GPU_RUNTIME_STORED(T)), y, layer,
                       mode);
}
template <typename T>
__device__ inline T fp_surf1Dread(cudaSurfaceObject_t surf, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    return GPU_RUNTIME_TEXEL(T)::decode(
        surf1Dread<GPU_RUNTIME_STORED(T)>(surf, x * (int)sizeof(GPU_RUNTIME_STORED(T)), mode));
}
template <typename T>
__device__ inline T fp_surf2Dread(cudaSurfaceObject_t surf, int x, int y,
                                  cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    return GPU_RUNTIME_TEXEL(T)::decode(
        surf2Dread<GPU_RUNTIME_STORED(T)>(surf, x * (int)sizeof(GPU_RUNTIME_STORED(T)), y, mode));
}
template <typename T>
__device__ inline T fp_surf3Dread(cudaSurfaceObject_t surf, int x, int y, int z,
                                  cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    return GPU_RUNTIME_TEXEL(T)::decode(
        surf3Dread<GPU_RUNTIME_STORED(T)>(surf, x * (int)sizeof(GPU_RUNTIME_STORED(T)), y, z, mode));
}
template <typename T>
__device__ inline T fp_surf2DLayeredread(cudaSurfaceObject_t surf, int x, int y, int layer,
                                         cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    return GPU_RUNTIME_TEXEL(T)::decode(
        surf2DLayeredread<GPU_RUNTIME_STORED(T)>(surf, x * (int)sizeof(GPU_RUNTIME_STORED(T)), y, layer, mode));
}
// PyCUDA's form, which reads into a pointer.
template <typename T>
__device__ inline void fp_surf2Dread(T *out, cudaSurfaceObject_t surf, int x, int y,
                                     cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    *out = fp_surf2Dread<T>(surf, x, y, mode);
}
template <typename T>
__device__ inline void fp_surf3Dread(T *out, cudaSurfaceObject_t surf, int x, int y, int z,
                                     cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
    *out = fp_surf3Dread<T>(surf, x, y, z, mode);
}

#undef GPU_RUNTIME_TEXEL
#undef GPU_RUNTIME_STORED
}  // extern "C++"
