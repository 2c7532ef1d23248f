// Kernels stamped out per dtype by macros, over strided layouts described by an `info` array
// (the dims, then the strides), in the manner of candle's candle-kernels: see ops.cu.
#pragma once
#include <stdint.h>

// Whether `strides` is the row-major layout of `dims`.
__device__ __forceinline__ bool is_contiguous(const size_t num_dims, const size_t *dims, const size_t *strides) {
    size_t acc = 1;
    for (unsigned int d = 0; d < num_dims; d++) {
        unsigned int dim_idx = num_dims - 1 - d;
        if (dims[dim_idx] > 1 && acc != strides[dim_idx]) {
            return false;
        }
        acc *= dims[dim_idx];
    }
    return true;
}

// The offset of the `idx`-th element (in row-major order of `dims`) in a layout of `strides`.
__device__ __forceinline__ unsigned int strided_index(unsigned int idx, const size_t num_dims, const size_t *dims, const size_t *strides) {
    unsigned int strided_i = 0;
    for (unsigned int d = 0; d < num_dims; d++) {
        unsigned int dim_idx = num_dims - 1 - d;
        strided_i += (idx % dims[dim_idx]) * strides[dim_idx];
        idx /= dims[dim_idx];
    }
    return strided_i;
}

// out[i] = FUNC(x) for x the i-th element of `inp` in its layout; `out` is contiguous.
#define UNARY_OP(TYPENAME, FN_NAME, FUNC) \
extern "C" __global__ void FN_NAME( \
    const size_t numel, \
    const size_t num_dims, \
    const size_t *info, \
    const TYPENAME *inp, \
    TYPENAME *out \
) { \
    const size_t *dims = info; \
    const size_t *strides = info + num_dims; \
    if (is_contiguous(num_dims, dims, strides)) { \
        for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) { \
            TYPENAME x = inp[i]; \
            out[i] = FUNC; \
        } \
    } else { \
        for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) { \
            TYPENAME x = inp[strided_index(i, num_dims, dims, strides)]; \
            out[i] = FUNC; \
        } \
    } \
}

// out[i] = x * mul + add, over a strided `inp`.
#define AFFINE_OP(TYPENAME, FN_NAME) \
extern "C" __global__ void FN_NAME( \
    const size_t numel, \
    const size_t num_dims, \
    const size_t *info, \
    const TYPENAME *inp, \
    TYPENAME *out, \
    const TYPENAME mul, \
    const TYPENAME add \
) { \
    const size_t *dims = info; \
    const size_t *strides = info + num_dims; \
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < numel; i += blockDim.x * gridDim.x) { \
        TYPENAME x = inp[strided_index(i, num_dims, dims, strides)]; \
        out[i] = x * mul + add; \
    } \
}
