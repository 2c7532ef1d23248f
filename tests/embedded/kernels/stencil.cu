// A kernel file whose headers are found as a C preprocessor finds them: one beside it, one
// beside that header (in a subfolder), one in an include directory (`include_dirs`). All of
// them travel inside the binary (tests/embedded_sources.rs).
#include "stencil_ops.cuh"
#include <embedded/consts.h>

extern "C" __global__ void stencil(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = SCALE * weighted(x, i, n) + OFFSET;
}
