// Used by ui-tests/pass/file_source.rs.
__global__ void scale_in_place(double *v, double factor, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= factor;
}
