//! NumPy's `choose(a, choices, mode)`: each element of `a` picks the choice it names, at its
//! own place: `out[i] = choices[a[i]][i]`, `a` and each choice broadcast together. A gather
//! along the choices' first axis ([`take_along_axis`](DeviceArrayBase::take_along_axis))
//! after the indices are brought into range by `mode`.

use ndarray::{Dimension, IxDyn};

use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::copy::gather::IndexMode;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::index_element::IndexElement;
use crate::gpuarray::expr::core::{empty_error, Expr};
use crate::gpuarray::kernels::broadcast::broadcast_shapes;

const OP: &str = "DeviceArray::choose";

impl<S: Storage<Elem: IndexElement>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// For each element of this index array, the element at the same place of the choice
        /// it names (NumPy's `a.choose(choices, mode)` and `choose(a, choices, mode)`):
        /// `choices[k]` (along the first axis of `choices`) is choice `k`, and this array and
        /// the choices broadcast together ([`ArrayShapeError::Broadcast`] otherwise). `mode`:
        /// [`IndexMode::Raise`] (NumPy's default) refuses an index outside `0..n` with
        /// [`ArrayShapeError::IndexOutOfRange`] (waiting for the check; negative ones too, as
        /// NumPy's), `Wrap` takes it modulo `n`, `Clip` clamps it to `0..n`.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{DeviceArray, IndexMode};
        /// use gpu_runtime::ndarray::{arr1, arr2};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[0i64, 2, 1, 2]))?;
        /// let c = DeviceArray::from_ndarray(&ctx, &arr2(&[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]))?;
        /// assert_eq!(a.choose(&c, IndexMode::Raise)?.to_vec()?, [0, 9, 6, 11]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn choose[SC: Storage<Elem: Element>, DC: Dimension](
            &self,
            choices: &DeviceArrayBase<SC, DC>,
            mode: IndexMode,
        ) -> Result<DeviceArray<SC::Elem, IxDyn>>;

        /// [`choose`](Self::choose) from a list of arrays (NumPy's `choose(a, [c0, c1, ...],
        /// mode)`, the form NumPy's examples use): `choices[k]` is choice `k`; the choices and
        /// this array broadcast together. The choices are stacked into one array first (one
        /// copy of each). No choices is [`ArrayShapeError::EmptyOperand`].
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{DeviceArray, IndexMode};
        /// use gpu_runtime::ndarray::{arr0, arr1};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &arr1(&[0i64, 1, 0]))?;
        /// let low = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32, 2.0, 3.0]))?.into_dyn();
        /// let high = DeviceArray::from_ndarray(&ctx, &arr0(9.0f32))?.into_dyn();
        /// assert_eq!(a.choose_from(&[&low, &high], IndexMode::Raise)?.to_vec()?, [1.0, 9.0, 3.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn choose_from[SC: Storage<Elem: Element>, DC: Dimension](
            &self,
            choices: &[&DeviceArrayBase<SC, DC>],
            mode: IndexMode,
        ) -> Result<DeviceArray<SC::Elem, IxDyn>>;
    }
}

impl<S: Storage<Elem: IndexElement>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`choose`](DeviceArrayBase::choose) on this stream.
    pub fn choose<SC: Storage<Elem: Element>, DC: Dimension>(
        &self,
        choices: &DeviceArrayBase<SC, DC>,
        mode: IndexMode,
    ) -> Result<DeviceArray<SC::Elem, IxDyn>> {
        let a = self.target;
        let Some((&n, inner)) = choices.shape().split_first() else {
            return Err(ArrayShapeError::ZeroDimensional { operation: OP }.into());
        };
        let shape = broadcast_shapes(&[a.shape(), inner])?;
        // The choices with axes of length 1 after the first, up to the result's axes, then
        // broadcast: `[n, shape...]`.
        let mut c = choices.view().into_dyn();
        while c.ndim() < shape.len() + 1 {
            c = c.expand_dims(1)?;
        }
        let full: Vec<usize> = [n].into_iter().chain(shape.iter().copied()).collect();
        let c = c.broadcast_to(&full)?;
        // The indices as one lane along the first axis, brought into `0..n` by `mode`; `Raise`
        // sends a negative one to `n`, which the gather refuses (it would count it from the
        // end).
        let len = n as i64;
        let index = || a.expr().cast::<i64>();
        let i = match mode {
            IndexMode::Raise => Expr::where_(index().lt(0i64), len, index()),
            IndexMode::Wrap if n > 0 => ((index() % len) + len) % len,
            IndexMode::Clip => index().clip(0i64, (len - 1).max(0)),
            IndexMode::Wrap => index(),
        };
        let lane = [1].into_iter().chain(shape.iter().copied()).collect::<Vec<_>>();
        let i = OnStream::new(i, self.stream).eval()?;
        let i = i.broadcast_to(&lane)?;
        let picked = OnStream::new(&c, self.stream).take_along_axis(&i, 0)?;
        picked.reshape(IxDyn(&shape))
    }

    /// [`choose_from`](DeviceArrayBase::choose_from) on this stream.
    pub fn choose_from<SC: Storage<Elem: Element>, DC: Dimension>(
        &self,
        choices: &[&DeviceArrayBase<SC, DC>],
        mode: IndexMode,
    ) -> Result<DeviceArray<SC::Elem, IxDyn>> {
        let Some(first) = choices.first() else {
            return Err(empty_error("DeviceArray::choose_from", "choices"));
        };
        let shapes: Vec<&[usize]> = choices.iter().map(|c| c.shape()).collect();
        let shape = broadcast_shapes(&shapes)?;
        let views = choices
            .iter()
            .map(|c| c.broadcast_to(&shape))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<_> = views.iter().collect();
        let stacked = OnStream::new(first.context(), self.stream).stack(&refs, 0)?;
        self.choose(&stacked, mode)
    }
}
