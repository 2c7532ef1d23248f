//! Reductions over the elements an index array picks (`x[idx].sum()` in NumPy without the
//! gathered copy; PyCUDA's `ReductionKernel` with `map_expr="x[idx[i]]"`): `sum_at`,
//! `prod_at`, `max_at` and `min_at`. One grid-stride pass reads each index and the element it
//! names into per-block partials, then one block combines them; indices outside the array are
//! counted on the device and reported as [`ArrayShapeError::IndicesOutOfRange`] (NumPy's
//! `IndexError`); negative ones count from the end, as in NumPy.

use std::fmt::Write as _;

use ndarray::{Dimension, Ix1};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::element::Element;
use crate::gpuarray::kernel_cache::{self, KernelKey, BLOCK};
use crate::launch::Arg;

/// The combining operation of a gathered reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GatherOp {
    Sum,
    Prod,
    Max,
    Min,
}

impl GatherOp {
    fn name(self) -> &'static str {
        match self {
            GatherOp::Sum => "sum_at",
            GatherOp::Prod => "prod_at",
            GatherOp::Max => "max_at",
            GatherOp::Min => "min_at",
        }
    }

    /// The C expression of `a` and `b` and the neutral element, for `T`.
    fn c<T: Element>(self) -> (&'static str, String) {
        let t = T::c_name();
        // NaN wins max and min, as in NumPy (`a != a` is false for integers).
        match self {
            GatherOp::Sum => ("a + b", format!("({t})0")),
            GatherOp::Prod => ("a * b", format!("({t})1")),
            GatherOp::Max => ("(a != a || a > b) ? a : b", T::C_LOWEST.to_owned()),
            GatherOp::Min => ("(a != a || a < b) ? a : b", T::C_HIGHEST.to_owned()),
        }
    }
}

/// The source of both kernels of `op` over `T`: the gathering pass and the final block.
pub(crate) fn gather_source<T: Element>(op: GatherOp) -> String {
    let t = T::c_name();
    let (expr, neutral) = op.c::<T>();
    let mut s = format!("__device__ __forceinline__ {t} gpu_op({t} a, {t} b) {{ return ({expr}); }}\n");
    let block = format!(
        "s[threadIdx.x] = acc; __syncthreads();\n\
         for (int h = {h}; h > 0; h >>= 1) {{ if (threadIdx.x < h) s[threadIdx.x] = gpu_op(s[threadIdx.x], s[threadIdx.x + h]); __syncthreads(); }}\n",
        h = BLOCK / 2
    );
    let _ = write!(
        s,
        "extern \"C\" __global__ void gpu_gather_reduce(long long n, const long long *idx, long long idx_o, long long idx_s, \
         const {t} *x, long long x_o, long long x_s, long long x_len, {t} *gpu_part, unsigned int *gpu_bad) {{\n\
         __shared__ {t} s[{BLOCK}];\n{t} acc = ({neutral});\nunsigned int bad = 0;\n\
         for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {{\n\
         long long j = idx[idx_o + k * idx_s];\nif (j < 0) j += x_len;\n\
         if (j < 0 || j >= x_len) {{ ++bad; continue; }}\n\
         acc = gpu_op(acc, x[x_o + j * x_s]);\n}}\n\
         if (bad) atomicAdd(gpu_bad, bad);\n{block}\
         if (threadIdx.x == 0) gpu_part[blockIdx.x] = s[0];\n}}\n\
         extern \"C\" __global__ void gpu_gather_final(int parts, const {t} *gpu_part, {t} *out) {{\n\
         __shared__ {t} s[{BLOCK}];\n{t} acc = ({neutral});\n\
         for (int k = threadIdx.x; k < parts; k += blockDim.x) acc = gpu_op(acc, gpu_part[k]);\n{block}\
         if (threadIdx.x == 0) out[0] = s[0];\n}}\n"
    );
    s
}

/// Every operation, for the tests.
#[cfg(test)]
pub(crate) const ALL_OPS: [GatherOp; 4] = [GatherOp::Sum, GatherOp::Prod, GatherOp::Max, GatherOp::Min];

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    /// The sum of the elements `idx` names (NumPy's `x[idx].sum()` on a 1-D `x`, or on the
    /// flattened C-order elements of an array of more axes); 0 when `idx` is empty.
    pub fn sum_at<S2: Storage<Elem = i64>, D2: Dimension>(
        &self,
        idx: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        self.gather_reduce(GatherOp::Sum, idx)
    }

    /// The product of the elements `idx` names; 1 when `idx` is empty.
    pub fn prod_at<S2: Storage<Elem = i64>, D2: Dimension>(
        &self,
        idx: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        self.gather_reduce(GatherOp::Prod, idx)
    }

    /// The largest of the elements `idx` names (NaN if one is NaN); an error when `idx` is
    /// empty.
    pub fn max_at<S2: Storage<Elem = i64>, D2: Dimension>(
        &self,
        idx: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        self.gather_reduce(GatherOp::Max, idx)
    }

    /// The smallest of the elements `idx` names (NaN if one is NaN); an error when `idx` is
    /// empty.
    pub fn min_at<S2: Storage<Elem = i64>, D2: Dimension>(
        &self,
        idx: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        self.gather_reduce(GatherOp::Min, idx)
    }

    fn gather_reduce<S2: Storage<Elem = i64>, D2: Dimension>(
        &self,
        op: GatherOp,
        idx: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        if idx.is_empty() && matches!(op, GatherOp::Max | GatherOp::Min) {
            return Err(ArrayShapeError::EmptyReduction { operation: op.name() }.into());
        }
        // Both as runs of elements (first element, step): 1-D or C-contiguous as they are,
        // others copied into C order first.
        let x_copy;
        let (x_store, x_o, x_s): (&S, i64, i64) = match self.shape() {
            [_] => (self.storage(), self.offset() as i64, self.strides()[0] as i64),
            _ if self.is_standard_layout() => (self.storage(), self.offset() as i64, 1),
            _ => {
                x_copy = self.to_contiguous()?;
                return x_copy.gather_reduce(op, idx);
            }
        };
        let i_copy;
        let (i_arg, i_o, i_s) = match idx.shape() {
            [_] => (
                Arg::input::<i64, S2>(idx.storage()),
                idx.offset() as i64,
                idx.strides()[0] as i64,
            ),
            _ if idx.is_standard_layout() => (Arg::input::<i64, S2>(idx.storage()), idx.offset() as i64, 1),
            _ => {
                i_copy = idx.to_contiguous()?;
                (Arg::input(&i_copy.data), 0, 1)
            }
        };
        let ctx = self.context().clone();
        let n = idx.len();
        let key = kernel_cache::hash_parts(&["gather_reduce", op.name(), S::Elem::c_name()]);
        let source = || gather_source::<S::Elem>(op);
        let first = kernel_cache::prepared(
            &ctx,
            KernelKey {
                source: key,
                variant: 0,
            },
            "gpu_gather_reduce",
            source,
        )?;
        let last = kernel_cache::prepared(
            &ctx,
            KernelKey {
                source: key,
                variant: 1,
            },
            "gpu_gather_final",
            source,
        )?;
        let parts = kernel_cache::grid_for(&ctx, n as u64)?;
        let pool = ctx.device_pool()?;
        let mut part = pool.alloc::<S::Elem>(parts as usize)?;
        let mut out = DeviceArray::<S::Elem, Ix1>::empty(&ctx, 1)?;
        let mut bad = DeviceArray::<u32, Ix1>::zeros(&ctx, 1)?;
        let list = [
            Arg::I64(n as i64),
            i_arg,
            Arg::I64(i_o),
            Arg::I64(i_s),
            Arg::input::<S::Elem, S>(x_store),
            Arg::I64(x_o),
            Arg::I64(x_s),
            Arg::I64(self.len() as i64),
            Arg::output(&mut part),
            Arg::output(&mut bad.data),
        ];
        kernel_cache::launch(&first, parts, BLOCK, None, &list)?;
        let list = [
            Arg::I32(parts as i32),
            Arg::input(&part),
            Arg::output(&mut out.data),
        ];
        kernel_cache::launch(&last, 1, BLOCK, None, &list)?;
        let bad = bad.to_vec()?.first().copied().unwrap_or(0);
        if bad > 0 {
            return Err(ArrayShapeError::IndicesOutOfRange {
                operation: op.name(),
                count: bad,
                len: self.len(),
            }
            .into());
        }
        out.to_vec()?
            .first()
            .copied()
            .ok_or_else(|| ArrayShapeError::EmptyReduction { operation: op.name() }.into())
    }
}
