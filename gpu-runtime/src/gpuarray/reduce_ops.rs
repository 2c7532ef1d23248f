//! `sum`, `dot`, `max`, `min` and `argmax` on arrays, over all axes or along one, built on
//! [`ReductionKernel`]. Each kernel is defined once per operation and element type for the
//! process, and found again by that small key.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gpu_cdecl::Scalar;
use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Error, Result};
use crate::gpuarray::array::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::cast;
use crate::gpuarray::element::Element;
use crate::gpuarray::kernel_args::KernelArg;
use crate::gpuarray::reduction::ReductionKernel;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    Sum,
    Dot,
    Max,
    Min,
    ArgMax,
}

type Cached = Arc<dyn Any + Send + Sync>;
static KERNELS: Mutex<Option<HashMap<(Op, Scalar), Cached>>> = Mutex::new(None);

/// The kernel of `op` on elements of `T`, producing `R`.
fn kernel<T: Element, R: Element>(op: Op) -> Result<Arc<ReductionKernel<R>>> {
    let mut map = KERNELS.lock().unwrap_or_else(|p| p.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    if let Some(k) = map
        .get(&(op, T::SCALAR))
        .and_then(|k| k.clone().downcast::<ReductionKernel<R>>().ok())
    {
        return Ok(k);
    }
    let t = T::c_name();
    // The 16-bit floats are summed in `f32`, as NumPy sums `float16`, and rounded once.
    let sixteen_bit = matches!(T::SCALAR, Scalar::F16 | Scalar::Bf16);
    let wide = |x: &str| cast::cast_c(T::SCALAR, Scalar::F32, x);
    let sum_in_f32 = |arguments: String, map: String| -> Result<ReductionKernel<R>> {
        let k = ReductionKernel::with_accumulator(
            "reduction",
            &arguments,
            &map,
            "a + b",
            "0.0f",
            ("float", "", 4),
        )?;
        Ok(k.post_map(&cast::cast_c(Scalar::F32, R::SCALAR, "a")))
    };
    // NaN wins max and min, as in numpy (`a != a` is false for integers).
    let k = match op {
        Op::Sum if sixteen_bit => sum_in_f32(format!("const {t} *x"), wide("x"))?,
        Op::Dot if sixteen_bit => sum_in_f32(
            format!("const {t} *x, const {t} *y"),
            format!("{} * {}", wide("x"), wide("y")),
        )?,
        Op::Sum => ReductionKernel::new(&format!("const {t} *x"), "x", "a + b", &format!("({t})0"))?,
        Op::Dot => ReductionKernel::new(
            &format!("const {t} *x, const {t} *y"),
            "x * y",
            "a + b",
            &format!("({t})0"),
        )?,
        Op::Max => ReductionKernel::new(
            &format!("const {t} *x"),
            "x",
            "(a != a || a > b) ? a : b",
            T::C_LOWEST,
        )?,
        Op::Min => ReductionKernel::new(
            &format!("const {t} *x"),
            "x",
            "(a != a || a < b) ? a : b",
            T::C_HIGHEST,
        )?,
        Op::ArgMax => {
            let def = format!(
                "struct gpu_arg {{ {t} v; long long i; }};\n\
                 __device__ __forceinline__ gpu_arg gpu_mk({t} v, long long i) {{ gpu_arg r; r.v = v; r.i = i; return r; }}\n\
                 __device__ __forceinline__ bool gpu_first(gpu_arg b, gpu_arg a) {{\n\
                 bool bn = b.v != b.v, an = a.v != a.v;\n\
                 if (bn != an) return bn;\n\
                 if (!bn && b.v != a.v) return b.v > a.v;\n\
                 return b.i < a.i; }}\n"
            );
            let mut k = ReductionKernel::with_accumulator(
                "argmax",
                &format!("const {t} *x"),
                "gpu_mk(x, i)",
                "gpu_first(b, a) ? b : a",
                &format!("gpu_mk({}, 9223372036854775807ll)", T::C_LOWEST),
                ("gpu_arg", &def, 16),
            )?
            .post_map("a.i");
            k.c_order_index = true;
            k
        }
    };
    let k = Arc::new(k);
    map.insert((op, T::SCALAR), k.clone() as Cached);
    Ok(k)
}

fn empty_error(operation: &'static str) -> Error {
    ArrayShapeError::EmptyReduction { operation }.into()
}

/// One element of a 0-d device array, read back.
fn scalar<R: Element>(a: DeviceArray<R, IxDyn>) -> Result<R> {
    a.to_vec()?.first().copied().ok_or_else(|| empty_error("reduce"))
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// The sum of every element (0 for an empty array), accumulated in the element type
    /// (`f16` and `bf16` in `f32`, rounded once at the end).
    pub fn sum(&self) -> Result<S::Elem> {
        scalar(kernel::<S::Elem, S::Elem>(Op::Sum)?.reduce([KernelArg::input(self)])?)
    }

    /// The sums along `axis`, as an array of the other axes.
    pub fn sum_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        kernel::<S::Elem, S::Elem>(Op::Sum)?.reduce_axis([KernelArg::input(self)], axis)
    }

    /// The sum of the products of the elements of two arrays of the same shape (any
    /// layouts): the dot product of vectors, `(a * b).sum()` of any arrays.
    pub fn dot<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &self,
        other: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        scalar(
            kernel::<S::Elem, S::Elem>(Op::Dot)?.reduce([KernelArg::input(self), KernelArg::input(other)])?,
        )
    }

    /// The largest element (NaN if there is one); an error for an empty array.
    pub fn max(&self) -> Result<S::Elem> {
        if self.is_empty() {
            return Err(empty_error("max"));
        }
        scalar(kernel::<S::Elem, S::Elem>(Op::Max)?.reduce([KernelArg::input(self)])?)
    }

    /// The smallest element (NaN if there is one); an error for an empty array.
    pub fn min(&self) -> Result<S::Elem> {
        if self.is_empty() {
            return Err(empty_error("min"));
        }
        scalar(kernel::<S::Elem, S::Elem>(Op::Min)?.reduce([KernelArg::input(self)])?)
    }

    /// The largest elements along `axis`; an error when that axis is empty.
    pub fn max_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        self.nonempty_axis("max_axis", axis)?;
        kernel::<S::Elem, S::Elem>(Op::Max)?.reduce_axis([KernelArg::input(self)], axis)
    }

    /// The smallest elements along `axis`; an error when that axis is empty.
    pub fn min_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        self.nonempty_axis("min_axis", axis)?;
        kernel::<S::Elem, S::Elem>(Op::Min)?.reduce_axis([KernelArg::input(self)], axis)
    }

    /// The flat index (in C order) of the largest element, the first one on a tie (a NaN
    /// counts as largest, as in numpy); an error for an empty array.
    pub fn argmax(&self) -> Result<usize> {
        if self.is_empty() {
            return Err(empty_error("argmax"));
        }
        Ok(scalar(kernel::<S::Elem, i64>(Op::ArgMax)?.reduce([KernelArg::input(self)])?)? as usize)
    }

    /// The index along `axis` of the largest element of each lane.
    pub fn argmax_axis(&self, axis: usize) -> Result<DeviceArray<i64, IxDyn>> {
        self.nonempty_axis("argmax_axis", axis)?;
        kernel::<S::Elem, i64>(Op::ArgMax)?.reduce_axis([KernelArg::input(self)], axis)
    }

    fn nonempty_axis(&self, operation: &'static str, axis: usize) -> Result<()> {
        let lanes: usize = self
            .shape()
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != axis)
            .map(|(_, &d)| d)
            .product();
        match self.shape().get(axis) {
            // Lanes with no element and no neutral to give them.
            Some(0) if lanes > 0 => Err(empty_error(operation)),
            _ => Ok(()),
        }
    }
}

/// The sources of every builtin reduction for every element type, in `variants`, named.
#[cfg(test)]
pub(crate) fn test_kernels(
    variants: &[crate::gpuarray::reduction::ReductionVariant],
) -> Vec<(String, Vec<String>)> {
    fn of<T: Element>(
        variants: &[crate::gpuarray::reduction::ReductionVariant],
        out: &mut Vec<(String, Vec<String>)>,
    ) {
        let name = std::any::type_name::<T>();
        for op in [Op::Sum, Op::Dot, Op::Max, Op::Min] {
            let k = kernel::<T, T>(op).unwrap();
            out.push((
                format!("{op:?} {name}"),
                variants.iter().map(|&v| k.source(v)).collect(),
            ));
        }
        let k = kernel::<T, i64>(Op::ArgMax).unwrap();
        out.push((
            format!("ArgMax {name}"),
            variants.iter().map(|&v| k.source(v)).collect(),
        ));
    }
    let mut out = Vec::new();
    of::<i8>(variants, &mut out);
    of::<u8>(variants, &mut out);
    of::<i16>(variants, &mut out);
    of::<u16>(variants, &mut out);
    of::<half::f16>(variants, &mut out);
    of::<half::bf16>(variants, &mut out);
    of::<i32>(variants, &mut out);
    of::<u32>(variants, &mut out);
    of::<i64>(variants, &mut out);
    of::<u64>(variants, &mut out);
    of::<f32>(variants, &mut out);
    of::<f64>(variants, &mut out);
    out
}
