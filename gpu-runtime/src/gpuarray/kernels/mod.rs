//! Kernel generation and the registry of generated kernels: the arguments a generated kernel
//! declares and takes (`args`), broadcasting at launch (`broadcast`), the C text its kinds share
//! (`codegen`), [`ElementwiseKernel`](crate::gpuarray::ElementwiseKernel) and its compile-time form
//! (`elementwise`, `elementwise_fn`), and `registry`: where every generated kernel is found (its
//! definition once per process, what a context compiled from it once per context) and launched.

pub(crate) mod args;
pub(crate) mod broadcast;
pub(crate) mod codegen;
pub(crate) mod elementwise;
pub(crate) mod elementwise_fn;
pub(crate) mod fast_div;
pub(crate) mod registry;
pub(crate) mod source_kernels;
