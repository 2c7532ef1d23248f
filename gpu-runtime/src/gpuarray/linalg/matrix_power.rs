//! NumPy's `linalg.matrix_power`: a stack of square matrices raised to a power by repeated
//! squaring, each product one `einsum` kernel over the whole stack.

use ndarray::{Dimension, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{context_fns, OnStream};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::linalg::stack::Stack;

/// The matrix product of two stacks of one shape.
const PRODUCT: &str = "...ij,...jk->...ik";

context_fns! {
    /// Each square matrix of `a` (its last two axes) to the power `n` (NumPy's and CuPy's
    /// `linalg.matrix_power(a, n)` for `n >= 0`): the identity of `a`'s shape and type for
    /// `n = 0`, else products by repeated squaring (about `2 log2 n` of them), in `a`'s own
    /// type as NumPy's (integers multiply as integers, wrapping as NumPy's do). For NumPy's
    /// negative `n`, raise [`inv`](crate::gpuarray::inv)`(a)` to `-n`. Errors:
    /// [`LinAlgError::TooFewAxes`](crate::LinAlgError::TooFewAxes) and
    /// [`LinAlgError::NotSquare`](crate::LinAlgError::NotSquare).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr2;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1i64, 1], [1, 0]]))?;
    /// // Fibonacci numbers: [[F(11), F(10)], [F(10), F(9)]].
    /// assert_eq!(gpuarray::matrix_power(&a, 10)?.to_vec()?, [89, 55, 55, 34]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn matrix_power[T: Element, S: Storage<Elem = T>, D: Dimension](
        &self, a: &DeviceArrayBase<S, D>, n: u32
    ) -> Result<DeviceArray<T, D>> {
        let stack = Stack::square("matrix_power", a.shape())?;
        let m = stack.rows;
        let product = |x: &DeviceArray<T, IxDyn>, y: &DeviceArray<T, IxDyn>| self.einsum(PRODUCT, &[x, y]);
        let result = if n == 0 {
            let eye = DeviceArray::<T, _>::eye(a.context(), m, m, 0)?.into_dyn();
            OnStream::new(&eye.broadcast_to(a.shape())?, self.stream).to_contiguous()?
        } else {
            // Binary powers of `a`, multiplied into the result where `n` has a one bit.
            let mut power = OnStream::new(a, self.stream).to_contiguous()?.into_dyn();
            let mut result: Option<DeviceArray<T, IxDyn>> = None;
            let mut k = n;
            loop {
                if k & 1 == 1 {
                    result = Some(match result {
                        Some(r) => product(&r, &power)?,
                        None => OnStream::new(&power, self.stream).to_contiguous()?,
                    });
                }
                k >>= 1;
                if k == 0 {
                    break;
                }
                power = product(&power, &power)?;
            }
            // `n > 0` has a one bit, so the loop set the result.
            match result {
                Some(r) => r,
                None => OnStream::new(&power, self.stream).to_contiguous()?,
            }
        };
        result.into_dimensionality()
    }
}
