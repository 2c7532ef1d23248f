//! Scans: [`ScanKernel`](crate::gpuarray::ScanKernel) (`kernel`, its CUDA C in `source`, each stream's
//! tile status in `status`) and `cumsum`/`cumprod` on arrays (`ops`).

pub(crate) mod as_dtype;
pub(crate) mod compact;
pub(crate) mod kernel;
pub(crate) mod ops;
pub(crate) mod source;
pub(crate) mod status;
pub(crate) mod sum_np;
