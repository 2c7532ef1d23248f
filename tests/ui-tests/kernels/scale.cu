// Used by ui-tests/pass/file_source.rs and ui-tests/fail/linked_signature_mismatch.rs.
__global__ void scale_in_place(double *v, double factor, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= factor;
}
