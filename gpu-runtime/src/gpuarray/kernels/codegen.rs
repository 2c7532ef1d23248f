//! The run time's side of the kernel text that generated kernels share: its parameters
//! ([`Param`], read from a C argument list) as `gpu_cdecl::elementwise`'s, which the generators
//! of `gpu-cdecl` (elementwise kernels, reductions) write their text from: the one copy the
//! macros' build-time checks use too.

use gpu_cdecl::elementwise::{Param as CParam, Role};

use crate::gpuarray::kernels::args::Param;

pub(crate) use gpu_cdecl::elementwise::{is_ident, mentions, vec4_align};

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
