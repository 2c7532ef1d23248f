// LayerNorm forward over rows of C channels, one warp per row, with cooperative groups;
// activations stored as bf16 (common.h's floatX), statistics in float.
#include <assert.h>
#include <float.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "common.h"

namespace cg = cooperative_groups;

extern "C" __global__ void layernorm_forward(float* out, float* mean, float* rstd,
                                             const float* inp, const float* weight,
                                             const float* bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    assert(blockDim.x % WARP_SIZE == 0);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= N) {
        return;
    }
    const float* x = inp + (size_t)row * C;
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        // Round through the storage type, as the activations are stored.
        sum += __bfloat162float(__float2bfloat16(x[i]));
    }
    sum = cg::reduce(warp, sum, cg::plus<float>{});
    float m = sum / C;
    float var = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float d = x[i] - m;
        var += d * d;
    }
    var = cg::reduce(warp, var, cg::plus<float>{});
    float s = rsqrtf(var / C + 1e-5f);
    assert(s < FLT_MAX);
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        out[(size_t)row * C + i] = (x[i] - m) * s * weight[i] + bias[i];
    }
    if (warp.thread_rank() == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}
