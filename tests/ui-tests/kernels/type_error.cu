// The kernel of ui-tests/fail/nvrtc_type_error.rs: an int* initialised from a float*.
__global__ void scale(float *v, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int *w = v;
    if (i < n) w[i] *= factor;
}
