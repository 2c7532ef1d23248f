// One kernel per operation and dtype, stamped out by the macros of ops.cuh, as candle's
// unary.cu and affine.cu are: no kernel here is written out by hand.
#include "ops.cuh"

UNARY_OP(float, usqr_f32, x * x)
UNARY_OP(double, usqr_f64, x * x)
UNARY_OP(float, uneg_f32, -x)
UNARY_OP(int32_t, uneg_i32, -x)
UNARY_OP(float, uexp_f32, expf(x))

AFFINE_OP(float, affine_f32)
AFFINE_OP(double, affine_f64)
