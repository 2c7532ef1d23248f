// Row-wise softmax with an online maximum, one warp per row; common.h's warp reductions.
#include <float.h>
#include <math.h>
#include "common.h"

extern "C" __global__ void softmax_forward(float* out, const float* inp, int N, int C) {
    int lane = threadIdx.x % WARP_SIZE;
    int row = blockIdx.x * (blockDim.x / WARP_SIZE) + threadIdx.x / WARP_SIZE;
    if (row >= N) {
        return;
    }
    const float* x = inp + (size_t)row * C;
    float maxval = -FLT_MAX;
    for (int i = lane; i < C; i += WARP_SIZE) {
        maxval = fmaxf(maxval, x[i]);
    }
    maxval = warp_reduce_max(maxval);
    float sum = 0.0f;
    for (int i = lane; i < C; i += WARP_SIZE) {
        sum += expf(x[i] - maxval);
    }
    sum = warp_reduce_sum(sum);
    for (int i = lane; i < C; i += WARP_SIZE) {
        out[(size_t)row * C + i] = expf(x[i] - maxval) / sum;
    }
}
