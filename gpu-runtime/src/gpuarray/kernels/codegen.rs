//! The run time's side of the kernel text that generated kernels share: its parameters
//! ([`Param`], read from a C argument list) as `gpu_cdecl::elementwise`'s, and that module's
//! pieces (parameter lists, strided index arithmetic, element references, the aligned vector
//! type) over them. The text itself is written in `gpu-cdecl`, the one copy the macro's
//! build-time check uses too.

use gpu_cdecl::elementwise::{self, Param as CParam, Role};

use crate::gpuarray::kernels::args::Param;

pub(crate) use gpu_cdecl::elementwise::{is_ident, mentions, vec4_align, VEC4};

/// `params` as the generator's parameters: scalars, arrays read (`const T *`), arrays written.
pub(crate) fn c_params(params: &[Param]) -> Vec<CParam<'_>> {
    params
        .iter()
        .map(|p| {
            let role = match (p.array, p.mutable) {
                (false, _) => Role::Scalar,
                (true, false) => Role::Input,
                (true, true) => Role::Output,
            };
            CParam::new(&p.name, c_type(p), role)
        })
        .collect()
}

/// The C type of a parameter's elements.
pub(crate) fn c_type(p: &Param) -> &'static str {
    p.elem.c_name()
}

/// [`elementwise::params_c`] of `params`.
pub(crate) fn params_c(params: &[Param]) -> String {
    elementwise::params_c(&c_params(params))
}

/// [`elementwise::strides_c`] of `params`.
pub(crate) fn strides_c(params: &[Param], ndim: usize) -> String {
    elementwise::strides_c(&c_params(params), ndim)
}

/// [`elementwise::strided_index`] of `params`.
pub(crate) fn strided_index(params: &[Param], ndim: usize, flat: &str) -> String {
    elementwise::strided_index(&c_params(params), ndim, flat)
}

/// [`elementwise::bind_refs`] of `params`.
pub(crate) fn bind_refs(params: &[Param], index: impl Fn(&CParam<'_>) -> String) -> String {
    elementwise::bind_refs(&c_params(params), index)
}
