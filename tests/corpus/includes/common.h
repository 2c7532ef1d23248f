// Shared by the kernel files of this directory, as a training codebase's `common.cuh` is:
// included with `#include "common.h"` from beside them.
#pragma once
#include <stdio.h>
#include <cuda_bf16.h>

#define WARP_SIZE 32
#define CEIL_DIV(m, n) (((m) + (n) - 1) / (n))

// Storage type of activations: bf16, computed in float.
typedef __nv_bfloat16 floatX;

__device__ inline float warp_reduce_sum(float val) {
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        val += __shfl_xor_sync(0xffffffff, val, offset);
    }
    return val;
}

__device__ inline float warp_reduce_max(float val) {
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        val = fmaxf(val, __shfl_xor_sync(0xffffffff, val, offset));
    }
    return val;
}
