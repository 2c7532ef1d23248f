// AdamW update of fp32 master weights, writing an fp16 copy; reports a non-finite gradient
// with device printf.
#include <stdio.h>
#include <stdint.h>
#include <assert.h>
#include <cuda_fp16.h>
#include "common.h"

__device__ inline float lerp(float start, float end, float weight) {
    return fma(weight, end, fma(-weight, start, start));
}

extern "C" __global__ void adamw_update(float* params, __half* params_half, const float* grads,
                                        float* m, float* v, int64_t n, float lr, float beta1,
                                        float beta2, float beta1_correction,
                                        float beta2_correction, float eps, float weight_decay) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float grad = grads[i];
    if (!isfinite(grad)) {
        printf("adamw_update: gradient %lld is %f\n", (long long)i, grad);
    }
    float mi = lerp(grad, m[i], beta1);
    float vi = lerp(grad * grad, v[i], beta2);
    m[i] = mi;
    v[i] = vi;
    mi /= beta1_correction;
    vi /= beta2_correction;
    float p = params[i] - lr * (mi / (sqrtf(vi) + eps) + weight_decay * params[i]);
    params[i] = p;
    params_half[i] = __float2half(p);
}
