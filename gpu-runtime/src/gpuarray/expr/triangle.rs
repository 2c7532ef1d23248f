//! NumPy's `tril` and `triu`: the lower or upper triangle of the last two axes, the rest zero,
//! as one elementwise kernel over the array and two index ranges that broadcast to its
//! shape (`where(j - i <= k, a, 0)`); `tri`, a triangle of ones; `tril_indices` /
//! `triu_indices`, the indices of a triangle (made on the host); and `mask_indices`, those of
//! any mask a closure makes of a square of ones.

use ndarray::{Array1, Dimension, Ix1, Ix2, IxDyn};

use crate::driver::context::core::Context;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{dimension_error, Expr};

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A copy with the elements above diagonal `k` of the last two axes zero (NumPy's
        /// `tril(a, k)`: `k = 0` the main diagonal, positive above it, negative below). Fewer
        /// than two axes is [`ArrayShapeError::NoSuchAxis`].
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::<i32, _>::ones(&ctx, (3, 3))?;
        /// assert_eq!(a.tril(0)?.to_vec()?, [1, 0, 0, 1, 1, 0, 1, 1, 1]);
        /// assert_eq!(a.triu(1)?.to_vec()?, [0, 1, 1, 0, 0, 1, 0, 0, 0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn tril(&self, k: isize) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// A copy with the elements below diagonal `k` of the last two axes zero (NumPy's
        /// `triu(a, k)`), as [`tril`](Self::tril).
        fn triu(&self, k: isize) -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`tril`](DeviceArrayBase::tril) on this stream.
    pub fn tril(&self, k: isize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        self.triangle(k, true)
    }

    /// [`triu`](DeviceArrayBase::triu) on this stream.
    pub fn triu(&self, k: isize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        self.triangle(k, false)
    }

    /// The elements on and below (`lower`) or on and above diagonal `k`, the others zero.
    fn triangle(&self, k: isize, lower: bool) -> Result<DeviceArray<S::Elem, IxDyn>> {
        let a = self.target;
        let nd = a.ndim();
        if nd < 2 {
            return Err(ArrayShapeError::NoSuchAxis {
                operation: if lower {
                    "DeviceArray::tril"
                } else {
                    "DeviceArray::triu"
                },
                axis: 1,
                axes: nd,
            }
            .into());
        }
        let (n, m) = (a.shape()[nd - 2], a.shape()[nd - 1]);
        let ctx = OnStream::new(a.context(), self.stream);
        // Row and column numbers, (n, 1) and (m,): `j - i` broadcasts to each matrix.
        let rows = ctx.arange::<i64>(0.0, n as f64, 1.0)?.reshape((n, 1))?;
        let cols = ctx.arange::<i64>(0.0, m as f64, 1.0)?;
        let above = cols.expr() - &rows;
        let keep = if lower {
            above.le(k as i64)
        } else {
            above.ge(k as i64)
        };
        let e = Expr::where_(keep, a, Expr::scalar(S::Elem::zero()));
        e.eval_stream(self.stream)
    }
}

impl<T: Element> DeviceArray<T, Ix2> {
    /// An `n` x `m` matrix of ones on and below diagonal `k` and zeros above it (NumPy's
    /// `tri(n, m, k)`: `k = 0` the main diagonal, positive above it, negative below).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let t = DeviceArray::<f32, _>::tri(&ctx, 2, 3, 0)?;
    /// assert_eq!(t.to_vec()?, [1.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn tri(ctx: &Context, n: usize, m: usize, k: isize) -> Result<Self> {
        OnStream::legacy(ctx).tri(n, m, k)
    }
}

impl OnStream<'_, &Context> {
    /// [`DeviceArray::tri`] on this stream.
    pub fn tri<T: Element>(&self, n: usize, m: usize, k: isize) -> Result<DeviceArray<T, Ix2>> {
        let ones: DeviceArray<T, Ix2> = self.ones((n, m))?;
        OnStream::new(&ones, self.stream).tril(k)?.into_dimensionality()
    }
}

/// The row and column of each element of an `n` x `m` matrix on and below (`lower`) or on
/// and above diagonal `k`, in C order.
pub(crate) fn triangle_indices(n: usize, m: usize, k: isize, lower: bool) -> (Vec<i64>, Vec<i64>) {
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..n as i64 {
        for j in 0..m as i64 {
            if (lower && j - i <= k as i64) || (!lower && j - i >= k as i64) {
                rows.push(i);
                cols.push(j);
            }
        }
    }
    (rows, cols)
}

/// The rows and the columns of a matrix's elements, as the functions here return them.
type Indices = (DeviceArray<i64, Ix1>, DeviceArray<i64, Ix1>);

fn triangle_arrays(ctx: &Context, (rows, cols): (Vec<i64>, Vec<i64>)) -> Result<Indices> {
    Ok((
        DeviceArray::from_ndarray(ctx, &Array1::from(rows))?,
        DeviceArray::from_ndarray(ctx, &Array1::from(cols))?,
    ))
}

/// The rows and the columns of the elements of an `n` x `m` matrix on and below diagonal `k`,
/// in C order (NumPy's `tril_indices(n, k, m)`; `m = n` for a square one). The elements
/// themselves are the raveled matrix [`take`](DeviceArrayBase::take)n at `rows * m + cols`.
///
/// ```no_run
/// use gpu_runtime::gpuarray;
/// let ctx = gpu_runtime::Context::default()?;
/// let (rows, cols) = gpuarray::tril_indices(&ctx, 3, 1, 4)?;
/// assert_eq!(rows.to_vec()?, [0, 0, 1, 1, 1, 2, 2, 2, 2]);
/// assert_eq!(cols.to_vec()?, [0, 1, 0, 1, 2, 0, 1, 2, 3]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn tril_indices(ctx: &Context, n: usize, k: isize, m: usize) -> Result<Indices> {
    triangle_arrays(ctx, triangle_indices(n, m, k, true))
}

/// The rows and columns on and above diagonal `k` (NumPy's `triu_indices(n, k, m)`).
pub fn triu_indices(ctx: &Context, n: usize, k: isize, m: usize) -> Result<Indices> {
    triangle_arrays(ctx, triangle_indices(n, m, k, false))
}

/// [`tril_indices`] of the shape of the 2-d array `a` (NumPy's `tril_indices_from(a, k)`).
pub fn tril_indices_from<S: Storage>(a: &DeviceArrayBase<S, Ix2>, k: isize) -> Result<Indices> {
    tril_indices(a.context(), a.shape()[0], k, a.shape()[1])
}

/// [`triu_indices`] of the shape of the 2-d array `a` (NumPy's `triu_indices_from(a, k)`).
pub fn triu_indices_from<S: Storage>(a: &DeviceArrayBase<S, Ix2>, k: isize) -> Result<Indices> {
    triu_indices(a.context(), a.shape()[0], k, a.shape()[1])
}

/// The rows and columns of the nonzero elements of what `mask_func` makes of an `n` x `n`
/// matrix of ones (`i64`), in C order (NumPy's `mask_indices(n, mask_func, k)`, `k` in the
/// closure): `mask_indices(&ctx, n, |m| m.triu(1))` is [`triu_indices`]`(&ctx, n, 1, n)`. The
/// closure may return an array of any element type; one of other than two axes is
/// [`ArrayShapeError::Dimension`]. Waits for the count of nonzero elements.
///
/// ```no_run
/// use gpu_runtime::gpuarray;
/// let ctx = gpu_runtime::Context::default()?;
/// let (rows, cols) = gpuarray::mask_indices(&ctx, 3, |m| m.triu(1))?;
/// assert_eq!(rows.to_vec()?, [0, 0, 1]);
/// assert_eq!(cols.to_vec()?, [1, 2, 2]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn mask_indices<F, SM, DM>(ctx: &Context, n: usize, mask_func: F) -> Result<Indices>
where
    F: FnOnce(&DeviceArray<i64, Ix2>) -> Result<DeviceArrayBase<SM, DM>>,
    SM: Storage<Elem: Element>,
    DM: Dimension,
{
    let ones = DeviceArray::<i64, Ix2>::ones(ctx, (n, n))?;
    let mask = mask_func(&ones)?;
    if mask.ndim() != 2 {
        return Err(dimension_error(mask.ndim(), 2));
    }
    let mut ix = mask.nonzero()?.into_iter();
    match (ix.next(), ix.next()) {
        (Some(rows), Some(cols)) => Ok((rows, cols)),
        _ => Err(crate::error::Error::Internal {
            operation: "gpuarray::mask_indices",
            broken: "the indices of two axes",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_indices_are_numpys() {
        // np.tril_indices(3, 1, 4) and np.triu_indices(3, -1, 2).
        assert_eq!(
            triangle_indices(3, 4, 1, true),
            (vec![0, 0, 1, 1, 1, 2, 2, 2, 2], vec![0, 1, 0, 1, 2, 0, 1, 2, 3])
        );
        assert_eq!(
            triangle_indices(3, 2, -1, false),
            (vec![0, 0, 1, 1, 2], vec![0, 1, 0, 1, 1])
        );
        assert_eq!(triangle_indices(0, 3, 0, true), (vec![], vec![]));
    }
}
