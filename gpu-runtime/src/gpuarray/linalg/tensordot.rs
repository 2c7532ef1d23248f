//! NumPy's `tensordot` and `kron`, written as the [`einsum`] they are: a letter per axis, the
//! summed pairs sharing theirs (`tensordot`), or each output axis the pair of an axis of `a`
//! and the same axis of `b`, reshaped to their products (`kron`).

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::layout::checked_size;
use crate::gpuarray::array::on_stream::context_fns;
use crate::gpuarray::elements::element::Element;

/// The letters of `einsum` subscripts, one per axis.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

fn letter(i: usize) -> char {
    LETTERS[i] as char
}

context_fns! {
    /// NumPy's `tensordot(a, b, axes=n)`: the sum over the last `n` axes of `a` and the first `n`
    /// of `b` of their products, an array of `a`'s other axes then `b`'s. Axes of different
    /// lengths, or `n` past either array's axes, are [`ArrayShapeError::Einsum`]. The kernel is
    /// [`einsum`](crate::gpuarray::einsum)'s.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::{arr1, arr2};
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr2(&[[1.0f32, 2.0], [3.0, 4.0]]))?;
    /// let v = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32, 1.0]))?;
    /// assert_eq!(gpuarray::tensordot(&a, &v, 1)?.to_vec()?, [3.0, 7.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn tensordot[
        T: Element, S: Storage<Elem = T>, D: Dimension, SB: Storage<Elem = T>, DB: Dimension
    ](
        &self, a: &DeviceArrayBase<S, D>, b: &DeviceArrayBase<SB, DB>, n: usize
    ) -> Result<DeviceArray<T, IxDyn>> {
        if n > a.ndim() || n > b.ndim() {
            return Err(ArrayShapeError::Einsum {
                subscripts: format!("tensordot of {n} axes"),
                problem: format!("the arrays have {} and {} axes", a.ndim(), b.ndim()),
            }
            .into());
        }
        let axes_a: Vec<isize> = (a.ndim() - n..a.ndim()).map(|k| k as isize).collect();
        let axes_b: Vec<isize> = (0..n).map(|k| k as isize).collect();
        self.tensordot_axes(a, b, &axes_a, &axes_b)
    }

    /// NumPy's `tensordot(a, b, axes=(axes_a, axes_b))`: the sum over the pairs of axes
    /// `axes_a[i]` of `a` and `axes_b[i]` of `b` (negative from the end), as [`tensordot`].
    fn tensordot_axes[
        T: Element, S: Storage<Elem = T>, D: Dimension, SB: Storage<Elem = T>, DB: Dimension
    ](
        &self, a: &DeviceArrayBase<S, D>, b: &DeviceArrayBase<SB, DB>, axes_a: &[isize],
        axes_b: &[isize]
    ) -> Result<DeviceArray<T, IxDyn>> {
        let refuse = |problem: String| -> crate::error::Error {
            ArrayShapeError::Einsum {
                subscripts: format!("tensordot over axes {axes_a:?} and {axes_b:?}"),
                problem,
            }
            .into()
        };
        if axes_a.len() != axes_b.len() {
            return Err(refuse("a different count of axes of each".into()));
        }
        if a.ndim() + b.ndim() > LETTERS.len() {
            return Err(refuse(format!(
                "{} axes in all, at most {}",
                a.ndim() + b.ndim(),
                LETTERS.len()
            )));
        }
        // `a`'s axes are letters 0.., `b`'s letters ndim(a).., a summed axis of `b` taking its
        // pair's letter.
        let mut sub_b: Vec<char> = (0..b.ndim()).map(|k| letter(a.ndim() + k)).collect();
        let mut summed_a = Vec::new();
        for (&xa, &xb) in axes_a.iter().zip(axes_b) {
            let (ka, kb) = (
                normalize_axis("tensordot", xa, a.ndim())?,
                normalize_axis("tensordot", xb, b.ndim())?,
            );
            if a.shape()[ka] != b.shape()[kb] {
                return Err(refuse(format!(
                    "axis {ka} of a has {} elements, axis {kb} of b {}",
                    a.shape()[ka],
                    b.shape()[kb]
                )));
            }
            if summed_a.contains(&ka) || sub_b[kb] != letter(a.ndim() + kb) {
                return Err(refuse("an axis summed twice".into()));
            }
            summed_a.push(ka);
            sub_b[kb] = letter(ka);
        }
        let sub_a: String = (0..a.ndim()).map(letter).collect();
        let out: String = (0..a.ndim())
            .filter(|k| !summed_a.contains(k))
            .map(letter)
            .chain(
                (0..b.ndim())
                    .filter(|&k| sub_b[k] == letter(a.ndim() + k))
                    .map(|k| sub_b[k]),
            )
            .collect();
        let sub_b: String = sub_b.into_iter().collect();
        let (va, vb) = (a.view().into_dyn(), b.view().into_dyn());
        self.einsum(&format!("{sub_a},{sub_b}->{out}"), &[&va, &vb])
    }

    /// NumPy's `kron(a, b)`: the Kronecker product, blocks of `b` scaled by each element of `a`,
    /// of shape `a.shape[i] * b.shape[i]` (the array of fewer axes given leading axes of 1).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 10]))?;
    /// let b = DeviceArray::from_ndarray(&ctx, &arr1(&[1, 2, 3]))?;
    /// assert_eq!(gpuarray::kron(&a, &b)?.to_vec()?, [1, 2, 3, 10, 20, 30]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn kron[T: Element, S: Storage<Elem = T>, D: Dimension, SB: Storage<Elem = T>, DB: Dimension](
        &self, a: &DeviceArrayBase<S, D>, b: &DeviceArrayBase<SB, DB>
    ) -> Result<DeviceArray<T, IxDyn>> {
        let nd = a.ndim().max(b.ndim());
        if 2 * nd > LETTERS.len() {
            return Err(ArrayShapeError::TooManyAxes {
                operation: "kron",
                axes: nd,
                most: LETTERS.len() / 2,
            }
            .into());
        }
        let (va, vb) = (padded(a.view().into_dyn(), nd)?, padded(b.view().into_dyn(), nd)?);
        let sub_a: String = (0..nd).map(letter).collect();
        let sub_b: String = (0..nd).map(|k| letter(nd + k)).collect();
        let out: String = (0..nd).flat_map(|k| [letter(k), letter(nd + k)]).collect();
        let shape = va
            .shape()
            .iter()
            .zip(vb.shape())
            .map(|(&x, &y)| checked_size("kron", &[x, y]))
            .collect::<Result<Vec<usize>>>()?;
        checked_size("kron", &shape)?;
        let product = self.einsum(&format!("{sub_a},{sub_b}->{out}"), &[&va, &vb])?;
        product.reshape(IxDyn(&shape))
    }
}

/// `v` with leading axes of length 1 up to `nd` axes.
fn padded<T: Element>(
    mut v: DeviceArrayView<'_, T, IxDyn>,
    nd: usize,
) -> Result<DeviceArrayView<'_, T, IxDyn>> {
    while v.ndim() < nd {
        v = v.expand_dims(0)?;
    }
    Ok(v)
}
