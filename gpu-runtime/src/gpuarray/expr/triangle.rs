//! NumPy's `tril` and `triu`: the lower or upper triangle of the last two axes, the rest zero,
//! as one elementwise kernel over the array and two index ranges that broadcast to its
//! shape (`where(j - i <= k, a, 0)`).

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::OnStream;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::Expr;

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
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
    pub fn tril(&self, k: isize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        OnStream::legacy(self).tril(k)
    }

    /// A copy with the elements below diagonal `k` of the last two axes zero (NumPy's
    /// `triu(a, k)`), as [`tril`](Self::tril).
    pub fn triu(&self, k: isize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        OnStream::legacy(self).triu(k)
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
