#pragma once
#include "detail/clamp.cuh"

// A three-point average with the ends clamped.
__device__ float weighted(const float *x, int i, int n) {
    return 0.25f * x[clamp_index(i - 1, n)] + 0.5f * x[i] + 0.25f * x[clamp_index(i + 1, n)];
}
