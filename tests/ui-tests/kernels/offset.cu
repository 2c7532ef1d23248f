// The second source of a linked module (ui-tests/fail/linked_signature_mismatch.rs).
__device__ float shifted(float v, float b) { return v + b; }

extern "C" __global__ void offset(float *x, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = shifted(x[i], b);
}
