//! Reductions over the elements an index array picks (`x[idx].sum()` in NumPy without the
//! gathered copy; PyCUDA's `ReductionKernel` with `map_expr="x[idx[i]]"`): `sum_at`,
//! `prod_at`, `max_at`, `min_at`, and `dot_at` of two arrays (PyCUDA's `subset_dot`). One
//! grid-stride pass reads each index and the element it names into per-block partials, then
//! one block combines them; indices outside the array are counted on the device and reported
//! as [`ArrayShapeError::IndicesOutOfRange`] (NumPy's `IndexError`); negative ones count from
//! the end, as in NumPy.

use std::fmt::Write as _;

use ndarray::{Dimension, Ix1};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::{self, KernelKey, BLOCK};
use crate::launch::Arg;

/// The combining operation of a gathered reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GatherOp {
    Sum,
    Prod,
    Max,
    Min,
    /// The sum of `x[j] * y[j]`.
    Dot,
}

impl GatherOp {
    fn name(self) -> &'static str {
        match self {
            GatherOp::Sum => "sum_at",
            GatherOp::Prod => "prod_at",
            GatherOp::Max => "max_at",
            GatherOp::Min => "min_at",
            GatherOp::Dot => "dot_at",
        }
    }

    /// The C expression of `a` and `b` and the neutral element, for `T`.
    fn c<T: Element>(self) -> (&'static str, String) {
        let t = T::c_name();
        // NaN wins max and min, as in NumPy (`a != a` is false for integers).
        match self {
            GatherOp::Sum | GatherOp::Dot => ("a + b", format!("({t})0")),
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
    // `y` is read by `dot_at` only (the other operations pass `x` again).
    let element = match op {
        GatherOp::Dot => "x[x_o + j * x_s] * y[y_o + j * y_s]",
        _ => "x[x_o + j * x_s]",
    };
    let mut s = format!("__device__ __forceinline__ {t} gpu_op({t} a, {t} b) {{ return ({expr}); }}\n");
    let block = format!(
        "s[threadIdx.x] = acc; __syncthreads();\n\
         for (int h = {h}; h > 0; h >>= 1) {{ if (threadIdx.x < h) s[threadIdx.x] = gpu_op(s[threadIdx.x], s[threadIdx.x + h]); __syncthreads(); }}\n",
        h = BLOCK / 2
    );
    let _ = write!(
        s,
        "extern \"C\" __global__ void gpu_gather_reduce(long long n, const long long *idx, long long idx_o, long long idx_s, \
         const {t} *x, long long x_o, long long x_s, const {t} *y, long long y_o, long long y_s, long long x_len, {t} *gpu_part, unsigned int *gpu_bad) {{\n\
         __shared__ {t} s[{BLOCK}];\n{t} acc = ({neutral});\nunsigned int bad = 0;\n\
         for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {{\n\
         long long j = idx[idx_o + k * idx_s];\nif (j < 0) j += x_len;\n\
         if (j < 0 || j >= x_len) {{ ++bad; continue; }}\n\
         acc = gpu_op(acc, {element});\n}}\n\
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
pub(crate) const ALL_OPS: [GatherOp; 5] = [
    GatherOp::Sum,
    GatherOp::Prod,
    GatherOp::Max,
    GatherOp::Min,
    GatherOp::Dot,
];

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

    /// The sum of `self[j] * y[j]` over the indices `j` of `idx` (PyCUDA's
    /// `subset_dot(idx, x, y)`; NumPy's `x[idx] @ y[idx]`, with no conjugate), both arrays read
    /// as their flattened C-order elements; 0 when `idx` is empty. The arrays must hold as many
    /// elements as each other ([`ArrayShapeError::ElementCounts`] otherwise).
    pub fn dot_at<S2: Storage<Elem = i64>, D2: Dimension, S3: Storage<Elem = S::Elem>, D3: Dimension>(
        &self,
        y: &DeviceArrayBase<S3, D3>,
        idx: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        if y.len() != self.len() {
            return Err(ArrayShapeError::ElementCounts {
                operation: "dot_at",
                first: self.len(),
                second: y.len(),
            }
            .into());
        }
        self.gather_reduce_with(GatherOp::Dot, idx, Some(y))
    }

    fn gather_reduce<S2: Storage<Elem = i64>, D2: Dimension>(
        &self,
        op: GatherOp,
        idx: &DeviceArrayBase<S2, D2>,
    ) -> Result<S::Elem> {
        self.gather_reduce_with(op, idx, None::<&DeviceArray<S::Elem, Ix1>>)
    }

    /// `op` over the elements `idx` names, of `self` (and of `y`, for `dot_at`).
    fn gather_reduce_with<
        S2: Storage<Elem = i64>,
        D2: Dimension,
        S3: Storage<Elem = S::Elem>,
        D3: Dimension,
    >(
        &self,
        op: GatherOp,
        idx: &DeviceArrayBase<S2, D2>,
        y: Option<&DeviceArrayBase<S3, D3>>,
    ) -> Result<S::Elem> {
        if idx.is_empty() && matches!(op, GatherOp::Max | GatherOp::Min) {
            return Err(ArrayShapeError::EmptyReduction { operation: op.name() }.into());
        }
        // Each array as a run of elements (first element, step): 1-D or C-contiguous as it
        // is, others copied into C order first (`x` and `y` here, once each).
        if !is_run(self) {
            return self.to_contiguous()?.gather_reduce_with(op, idx, y);
        }
        if let Some(y) = y.filter(|y| !is_run(y)) {
            return self.gather_reduce_with(op, idx, Some(&y.to_contiguous()?));
        }
        let (mut x_copy, mut y_copy, mut x_again, mut i_copy) = (None, None, None, None);
        let (x_arg, x_o, x_s) = as_run(self, &mut x_copy)?;
        // Without `y` (every operation but `dot_at`), `x` again (a run: no copy); the kernel
        // does not read it.
        let (y_arg, y_o, y_s) = match y {
            Some(y) => as_run(y, &mut y_copy)?,
            None => as_run(self, &mut x_again)?,
        };
        let (i_arg, i_o, i_s) = as_run(idx, &mut i_copy)?;
        let ctx = self.context().clone();
        let n = idx.len();
        let key = registry::hash_parts(&["gather_reduce", op.name(), S::Elem::c_name()]);
        let source = || gather_source::<S::Elem>(op);
        let first = registry::prepared(
            &ctx,
            KernelKey {
                source: key,
                variant: 0,
            },
            "gpu_gather_reduce",
            source,
        )?;
        let last = registry::prepared(
            &ctx,
            KernelKey {
                source: key,
                variant: 1,
            },
            "gpu_gather_final",
            source,
        )?;
        let parts = registry::grid_for(&ctx, n as u64)?;
        let pool = ctx.device_pool()?;
        let mut part = pool.alloc::<S::Elem>(parts as usize)?;
        let mut out = DeviceArray::<S::Elem, Ix1>::empty(&ctx, 1)?;
        let mut bad = DeviceArray::<u32, Ix1>::zeros(&ctx, 1)?;
        let list = [
            Arg::I64(n as i64),
            i_arg,
            Arg::I64(i_o),
            Arg::I64(i_s),
            x_arg,
            Arg::I64(x_o),
            Arg::I64(x_s),
            y_arg,
            Arg::I64(y_o),
            Arg::I64(y_s),
            Arg::I64(self.len() as i64),
            Arg::output(&mut part),
            Arg::output(&mut bad.data),
        ];
        registry::launch(&first, parts, BLOCK, None, &list)?;
        let list = [
            Arg::I32(parts as i32),
            Arg::input(&part),
            Arg::output(&mut out.data),
        ];
        registry::launch(&last, 1, BLOCK, None, &list)?;
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

/// Whether `a`'s elements in C order are one run of its memory (1-D, or C-contiguous).
fn is_run<S: Storage, D: Dimension>(a: &DeviceArrayBase<S, D>) -> bool {
    a.ndim() == 1 || a.is_standard_layout()
}

/// `a` as one run of elements for a kernel: its memory, the index of its first element and
/// the step between elements. A 1-D or C-contiguous array is used as it is; any other is
/// first copied into C order, into `copy`, which holds the copy as long as the argument.
fn as_run<'a, S: Storage, D: Dimension>(
    a: &'a DeviceArrayBase<S, D>,
    copy: &'a mut Option<DeviceArray<S::Elem, D>>,
) -> Result<(Arg<'a>, i64, i64)> {
    Ok(match a.shape() {
        [_] => (
            Arg::input::<S::Elem, S>(a.storage()),
            a.offset() as i64,
            a.strides()[0] as i64,
        ),
        _ if a.is_standard_layout() => (Arg::input::<S::Elem, S>(a.storage()), a.offset() as i64, 1),
        _ => {
            let c = copy.insert(a.to_contiguous()?);
            (Arg::input(&c.data), 0, 1)
        }
    })
}
