//! The run time's side of the kernel text that generated kernels share: its parameters
//! ([`Param`], read from a C argument list) as `gpu_cuda_source::elementwise`'s, which the
//! generators of `gpu-cuda-source` (elementwise kernels, reductions) write their text from: the one
//! copy the macros' build-time checks use too.

use gpu_cuda_source::elementwise::{Param as CParam, Role};

use crate::gpuarray::elements::cast::convert_c;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::kernels::args::Param;

pub(crate) use gpu_cuda_source::elementwise::{is_ident, mentions, vec4_align};

/// How a kernel computes on `t`: the C type of its arithmetic, a read of a `t` into it, the
/// store of a result back into `t`. Integers are computed in 64-bit unsigned arithmetic,
/// which wraps as NumPy's integers do where signed overflow in C++ is undefined (the result
/// cut to the type is the type's own wrapping result); `f16` and `bf16` in `float`, rounded
/// once.
pub(crate) struct Arith {
    t: DType,
    /// The type the floats compute in.
    pub(crate) acc: DType,
    integer: bool,
}

impl Arith {
    /// The arithmetic of `t`.
    pub(crate) fn of(t: DType) -> Self {
        let acc = match t {
            DType::F16 | DType::Bf16 => DType::F32,
            _ => t,
        };
        Arith {
            t,
            acc,
            integer: t.is_bool_or_integer() && t != DType::Bool,
        }
    }

    /// The C type of the arithmetic.
    pub(crate) fn c(&self) -> &'static str {
        if self.integer {
            "unsigned long long"
        } else {
            self.acc.c_name()
        }
    }

    /// `x`, a `t`, in the arithmetic's type.
    pub(crate) fn read(&self, x: &str) -> String {
        if self.integer {
            format!("((unsigned long long)({x}))")
        } else {
            convert_c(self.t, self.acc, x)
        }
    }

    /// `x`, of the arithmetic's type, as a `t`.
    pub(crate) fn store(&self, x: &str) -> String {
        if self.integer {
            format!("(({})({x}))", self.t.c_name())
        } else {
            convert_c(self.acc, self.t, x)
        }
    }

    /// The integer `v` in the arithmetic's type.
    pub(crate) fn literal(&self, v: i32) -> String {
        if self.integer {
            format!("{v}ull")
        } else {
            convert_c(DType::I32, self.acc, &v.to_string())
        }
    }
}

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
