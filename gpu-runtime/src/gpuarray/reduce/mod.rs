//! Reductions: [`ReductionKernel`](crate::gpuarray::ReductionKernel) (`kernel`, its CUDA C in `source`) and what
//! arrays compute with it: `sum` ... `argmin` (`ops`, along an axis with `axis`), over
//! the elements an index array picks (`at`), and `any`/`all` (`logic`).

pub(crate) mod at;
pub(crate) mod axes;
pub(crate) mod axis;
pub(crate) mod complex;
pub(crate) mod complex_kernels;
pub(crate) mod histogram;
pub(crate) mod into;
pub(crate) mod kernel;
pub(crate) mod logic;
pub(crate) mod nan;
pub(crate) mod ops;
pub(crate) mod reduction_fn;
pub(crate) mod source;
pub(crate) mod sum_np;
pub(crate) mod trace;
