// PyCUDA's complex header, for kernels ported from PyCUDA: pycuda::complex<T> is
// gpu_runtime::complex<T> (see <gpu_runtime/complex.h>), shipped with the gpu-runtime crate.
#pragma once
#include <gpu_runtime/complex.h>

extern "C++" {
namespace pycuda {
using gpu_runtime::abs;
using gpu_runtime::arg;
using gpu_runtime::complex;
using gpu_runtime::conj;
using gpu_runtime::exp;
using gpu_runtime::imag;
using gpu_runtime::log;
using gpu_runtime::norm;
using gpu_runtime::polar;
using gpu_runtime::real;
using gpu_runtime::sqrt;
}  // namespace pycuda
}  // extern "C++"
