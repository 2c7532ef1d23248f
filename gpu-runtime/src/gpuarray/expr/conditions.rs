//! Selections by condition, NumPy's indexing routines: `select` (the first true condition's
//! choice, fused into one elementwise kernel per few conditions), `compress` (the positions
//! along an axis where a condition holds) and `extract` (the elements where it holds, in C
//! order), these two a `flatnonzero` and a `take`; and their inverses `place` and
//! `putmask` (writes where a mask holds: a `flatnonzero` and a `put`).

use ndarray::{Dimension, IxDyn};

use crate::driver::context::core::Context;
use crate::error::{check_counts, counts_error, ArrayShapeError, Result};
use crate::gpuarray::array::axes::normalize_axis;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::{context_fns, on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::expr::core::{dimension_error, empty_error, Expr, MAX_OPERANDS};
use crate::launch::MAX_ARGS;

/// The condition-choice pairs one fused `select` kernel takes over arrays of `ndim` axes: its
/// strided form passes each array as a pointer, an offset and `ndim` strides, beside three
/// counts, `ndim` lengths and the default (a scalar), within a launch's [`MAX_ARGS`]
/// parameters; two arrays a pair, one more for what the later pairs chose and one for the
/// result (so one pair a kernel at 8 axes, 6 at 2).
fn pairs_per_kernel(ndim: usize) -> usize {
    let arrays = MAX_ARGS.saturating_sub(4 + ndim) / (2 + ndim);
    (arrays.saturating_sub(2) / 2).clamp(1, (MAX_OPERANDS - 1) / 2)
}

/// Each element from the choice of the first condition true there, `default` where none is
/// (NumPy's `select(condlist, choicelist, default)`); the conditions and choices broadcast to
/// one shape. Lists of different lengths are [`ArrayShapeError::ElementCounts`], empty ones
/// [`ArrayShapeError::NoArrays`].
///
/// ```no_run
/// use gpu_runtime::gpuarray::{self, DeviceArray};
/// use gpu_runtime::ndarray::Ix1;
/// let ctx = gpu_runtime::Context::default()?;
/// let x = DeviceArray::<i32, Ix1>::arange(&ctx, 0.0, 6.0, 1.0)?;
/// let small = x.expr().lt(3).eval()?;
/// let big = x.expr().gt(4).eval()?;
/// let squares = (&x * &x).eval()?;
/// let picked = gpuarray::select(&[&small, &big], &[&x.view().into_dyn(), &squares.view()], 0)?;
/// assert_eq!(picked.to_vec()?, [0, 1, 2, 0, 0, 25]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn select<T, SC, DC, S, D>(
    conditions: &[&DeviceArrayBase<SC, DC>],
    choices: &[&DeviceArrayBase<S, D>],
    default: T,
) -> Result<DeviceArray<T, IxDyn>>
where
    T: Element,
    SC: Storage<Elem = Bool>,
    DC: Dimension,
    S: Storage<Elem = T>,
    D: Dimension,
{
    let ctx = match (conditions.first(), choices.first()) {
        (Some(c), _) => c.context(),
        (None, Some(x)) => x.context(),
        (None, None) => return Err(ArrayShapeError::NoArrays { operation: "select" }.into()),
    };
    OnStream::legacy(ctx).select(conditions, choices, default)
}

context_fns! {
    /// The values of a function defined piece by piece on `x` (NumPy's and CuPy's
    /// `piecewise(x, condlist, funclist)` with values for functions, which is what CuPy takes):
    /// an array of `x`'s shape and type, `values[i]` where `conditions[i]` (broadcast to `x`'s
    /// shape) holds, the last true condition winning as NumPy assigns them in order; elsewhere 0,
    /// or `values[conditions.len()]` when one more value than conditions is given (NumPy's
    /// "otherwise" function). Another count of values is [`ArrayShapeError::ElementCounts`].
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::Ix1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let x = DeviceArray::<f32, Ix1>::arange(&ctx, -2.0, 3.0, 1.0)?;
    /// let (neg, pos) = (x.expr().lt(0.0).eval()?, x.expr().gt(0.0).eval()?);
    /// let sign = gpuarray::piecewise(&x, &[&neg, &pos], &[-1.0, 1.0])?;
    /// assert_eq!(sign.to_vec()?, [-1.0, -1.0, 0.0, 1.0, 1.0]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn piecewise[
        T: Element, S: Storage<Elem = T>, D: Dimension, SC: Storage<Elem = Bool>, DC: Dimension
    ](
        &self, x: &DeviceArrayBase<S, D>, conditions: &[&DeviceArrayBase<SC, DC>], values: &[T]
    ) -> Result<DeviceArray<T, IxDyn>> {
        let otherwise = if values.len() == conditions.len() {
            T::zero()
        } else if values.len() == conditions.len() + 1 {
            values[conditions.len()]
        } else {
            return Err(counts_error("piecewise", conditions.len(), values.len()));
        };
        let ctx = x.context();
        let shape = IxDyn(x.shape());
        if conditions.is_empty() {
            return self.full(shape, otherwise);
        }
        // NumPy assigns the values in order, so the last true condition wins: `select`'s
        // first true one, of the lists reversed.
        let picks = values[..conditions.len()]
            .iter()
            .rev()
            .map(|&v| self.full((), v))
            .collect::<Result<Vec<_>>>()?;
        let picks: Vec<_> = picks.iter().collect();
        let conditions: Vec<_> = conditions.iter().rev().copied().collect();
        let chosen = self.select(&conditions, &picks, otherwise)?;
        if chosen.shape() == x.shape() {
            return Ok(chosen);
        }
        let mut out = DeviceArray::<T, IxDyn>::empty(ctx, shape)?;
        OnStream::new(&mut out, self.stream).copyto(&chosen)?;
        Ok(out)
    }

    /// Writes `values` where `mask` holds (NumPy's `putmask(a, mask, values)`): each element
    /// `a.flat[i]` whose `mask.flat[i]` is nonzero (both in C order; `mask` of any element type,
    /// as many elements as `a`, else [`ArrayShapeError::ElementCounts`]) becomes
    /// `values.flat[i % values.len()]`, so `values` of `a`'s shape writes element for element and
    /// a shorter one repeats. No values write nothing. `a` is written in place and must be
    /// contiguous in C order ([`Error::NotContiguous`](crate::Error::NotContiguous)). Waits for the
    /// mask's count.
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::{self, DeviceArray};
    /// use gpu_runtime::ndarray::arr1;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let mut a = DeviceArray::from_ndarray(&ctx, &arr1(&[0, 1, 2, 3, 4, 5]))?;
    /// let mask = a.gt(2)?;
    /// let values = DeviceArray::from_ndarray(&ctx, &arr1(&[-1, -2]))?;
    /// gpuarray::putmask(&mut a, &mask, &values)?;
    /// assert_eq!(a.to_vec()?, [0, 1, 2, -2, -1, -2]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    fn putmask[
        S: StorageMut<Elem: Element>, D: Dimension, SM: Storage<Elem: Element>, DM: Dimension,
        SV: Storage<Elem = S::Elem>, DV: Dimension
    ](
        &self, a: &mut DeviceArrayBase<S, D>, mask: &DeviceArrayBase<SM, DM>,
        values: &DeviceArrayBase<SV, DV>
    ) -> Result<()> {
        let at = self.mask_positions("putmask", a.len(), mask)?;
        if at.is_empty() || values.is_empty() {
            return Ok(());
        }
        // `values.flat[i % len]` at each position `i`: a take that wraps.
        let flat = OnStream::new(values, self.stream).ravel()?;
        let chosen = OnStream::new(&flat, self.stream).take(&at, 0, IndexMode::Wrap)?;
        OnStream::new(a, self.stream).put(&at, &chosen, IndexMode::Raise)
    }

    /// Writes `vals` in order, repeated as needed, into the elements of `a` where `mask` holds
    /// (NumPy's `place(arr, mask, vals)`, the inverse of [`extract`]): the `k`-th element whose
    /// mask is nonzero, in C order, becomes `vals.flat[k % vals.len()]`. `mask` has as many
    /// elements as `a` ([`ArrayShapeError::ElementCounts`]); empty `vals` where the mask holds
    /// somewhere is [`ArrayShapeError::EmptyOperand`], as NumPy refuses it. `a` must be
    /// contiguous in C order. Waits for the mask's count.
    fn place[
        S: StorageMut<Elem: Element>, D: Dimension, SM: Storage<Elem: Element>, DM: Dimension,
        SV: Storage<Elem = S::Elem>, DV: Dimension
    ](
        &self, a: &mut DeviceArrayBase<S, D>, mask: &DeviceArrayBase<SM, DM>,
        vals: &DeviceArrayBase<SV, DV>
    ) -> Result<()> {
        let at = self.mask_positions("place", a.len(), mask)?;
        if at.is_empty() {
            return Ok(());
        }
        if vals.is_empty() {
            return Err(empty_error("place", "vals"));
        }
        // `put` repeats its values as `place` does.
        OnStream::new(a, self.stream).put(&at, vals, IndexMode::Raise)
    }
}

context_fns! {
    /// The elements of `a` where `condition` (of any element type; nonzero is true, of as many
    /// elements as `a`) holds, both read in C order, as a 1-d array (NumPy's `extract(condition,
    /// a)`). Waits for the count, which sizes the result.
    fn extract[SC: Storage<Elem: Element>, DC: Dimension, S: Storage<Elem: Element>, D: Dimension](
        &self, condition: &DeviceArrayBase<SC, DC>, a: &DeviceArrayBase<S, D>
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        check_counts("extract", condition.len(), a.len())?;
        let at = OnStream::new(condition, self.stream).flatnonzero()?;
        let flat = OnStream::new(a, self.stream).ravel()?;
        OnStream::new(&flat, self.stream).take(&at, 0, IndexMode::Raise)
    }
}

/// `select` and `extract` on a stream (`gpuarray::on(&stream).select(..)`).
impl OnStream<'_, &Context> {
    /// [`select`] on this stream.
    pub fn select<T, SC, DC, S, D>(
        &self,
        conditions: &[&DeviceArrayBase<SC, DC>],
        choices: &[&DeviceArrayBase<S, D>],
        default: T,
    ) -> Result<DeviceArray<T, IxDyn>>
    where
        T: Element,
        SC: Storage<Elem = Bool>,
        DC: Dimension,
        S: Storage<Elem = T>,
        D: Dimension,
    {
        check_counts("select", conditions.len(), choices.len())?;
        if conditions.is_empty() {
            return Err(ArrayShapeError::NoArrays { operation: "select" }.into());
        }
        // From the last pair back: each kernel chooses among its pairs, then what the kernels
        // after it chose (the default, at first).
        let mut chosen: Option<DeviceArray<T, IxDyn>> = None;
        let pairs: Vec<_> = conditions.iter().zip(choices).collect();
        let ndim = pairs
            .iter()
            .map(|(c, x)| c.ndim().max(x.ndim()))
            .max()
            .unwrap_or(0);
        for chunk in pairs.rchunks(pairs_per_kernel(ndim)) {
            let mut e = match &chosen {
                None => Expr::scalar(default),
                Some(c) => c.expr(),
            };
            for &(c, x) in chunk.iter().rev() {
                e = Expr::where_(*c, *x, e);
            }
            chosen = Some(e.eval_stream(self.stream)?);
        }
        chosen.ok_or(crate::error::Error::Internal {
            operation: "select",
            broken: "at least one pair chosen from",
        })
    }

    /// The flat C-order positions where `mask` (of `len` elements) is nonzero.
    fn mask_positions<SM: Storage<Elem: Element>, DM: Dimension>(
        &self,
        operation: &'static str,
        len: usize,
        mask: &DeviceArrayBase<SM, DM>,
    ) -> Result<DeviceArray<i64, ndarray::Ix1>> {
        check_counts(operation, len, mask.len())?;
        OnStream::new(mask, self.stream).flatnonzero()
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The slices along `axis` (negative: from the end) where the 1-d `condition` (of any
        /// element type, nonzero is true) holds; `None`: the elements in C order (NumPy's
        /// `compress(condition, a, axis)`). A condition shorter than the axis leaves the rest
        /// out, as NumPy's; a true one past the axis' end is
        /// [`ArrayShapeError::IndexOutOfRange`]. Waits for the count.
        fn compress[SC: Storage<Elem: Element>, DC: Dimension](
            &self,
            condition: &DeviceArrayBase<SC, DC>,
            axis: Option<isize>,
        ) -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`compress`](DeviceArrayBase::compress) on this stream.
    pub fn compress<SC: Storage<Elem: Element>, DC: Dimension>(
        &self,
        condition: &DeviceArrayBase<SC, DC>,
        axis: Option<isize>,
    ) -> Result<DeviceArray<S::Elem, IxDyn>> {
        const OP: &str = "DeviceArray::compress";
        if condition.ndim() != 1 {
            return Err(dimension_error(condition.ndim(), 1));
        }
        let at = OnStream::new(condition, self.stream).flatnonzero()?;
        match axis {
            None => {
                let flat = self.ravel()?;
                OnStream::new(&flat, self.stream).take(&at, 0, IndexMode::Raise)
            }
            Some(axis) => {
                let k = normalize_axis(OP, axis, self.target.ndim())?;
                self.take(&at, k, IndexMode::Raise)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_select_kernel_stays_within_the_launch_parameters() {
        use gpu_cuda_source::elementwise::{Elementwise, Param, Role, Variant};
        for ndim in 1..=crate::gpuarray::kernels::args::MAX_DIMS {
            let pairs = pairs_per_kernel(ndim);
            assert!(2 * pairs < MAX_OPERANDS && pairs >= 1);
            // The kernel of the largest chunk as gpu-cuda-source writes it: the pairs' arrays, the
            // chosen so far (or the default, a scalar: counted both), the result.
            let names: Vec<String> = (0..2 * pairs + 1).map(|k| format!("a{k}")).collect();
            let mut params: Vec<Param<'_>> = names
                .iter()
                .map(|n| Param::new(n, "float", Role::Input))
                .collect();
            params.push(Param::new("d", "float", Role::Scalar));
            params.push(Param::new("z", "float", Role::Output));
            let k = Elementwise {
                name: "gpu_expr",
                params: &params,
                operation: "z = d",
                ..Elementwise::default()
            };
            let src = k.source(&[Variant::Strided(ndim)]);
            let kernels = gpu_cuda_source::find_kernels(&src).expect("the declaration reads");
            let count = kernels[0].params.len();
            assert!(
                count <= MAX_ARGS,
                "{ndim} axes, {pairs} pairs: {count} parameters"
            );
        }
        assert_eq!(pairs_per_kernel(2), 6);
        assert_eq!(pairs_per_kernel(8), 1);
    }
}
