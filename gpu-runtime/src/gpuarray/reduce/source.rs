//! The CUDA C of a [`ReductionKernel`]'s variants: written by `gpu_cuda_source::reduction`, the one
//! generator that `#[reduction]`'s build-time check compiles too, from the kernel's name,
//! arguments, expressions and types.

use gpu_cuda_source::reduction::Reduction;

use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::codegen;
use crate::gpuarray::reduce::kernel::{ReductionKernel, ReductionVariant};

impl<R: Element> ReductionKernel<R> {
    /// The CUDA C source of one variant, as it is compiled (with `no_extern_c`).
    pub fn source(&self, v: ReductionVariant) -> String {
        self.with_generator(|g| g.source(&[v]))
    }

    /// `f` of the generator's view of this kernel.
    pub(crate) fn with_generator<T>(&self, f: impl FnOnce(&Reduction<'_>) -> T) -> T {
        let params = codegen::c_params(&self.params);
        f(&Reduction {
            name: &self.name,
            params: &params,
            map: &self.map,
            reduce: &self.reduce,
            neutral: &self.neutral,
            post_map: &self.post,
            in_order: self.in_order.as_deref(),
            acc: &self.acc,
            preamble: &self.acc_def,
            out: R::c_name(),
        })
    }
}
