//! Array methods that run a kernel: `fill`, `assign`, `to_contiguous`, `copy`, `astype`, each
//! on the legacy default stream or, through [`OnStream`], on a stream; and one element read or
//! written by index (`item`, `set_item`). `fill` and `to_contiguous` take arrays of any [`ArrayElement`] (CUDA's
//! vector types too: copied by one kernel of their own type, as vector types have no C
//! conversion); `astype` and `assign` convert numbers.

use ndarray::{Dimension, IxDyn, SliceInfo, SliceInfoElem};

use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::copy::builtin::{kernel, Builtin};
use crate::gpuarray::copy::convert_contig;
use crate::gpuarray::copy::transpose;
use crate::gpuarray::elements::array_element::{ArrayElement, ElementType};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::args::KernelArg;

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// A copy in C order, in new memory (the layout of a view is gone: use it before
        /// [`reshape`](Self::reshape), or to hand a kernel plain memory).
        fn to_contiguous(&self) -> Result<DeviceArray<S::Elem, D>>;

        /// A copy in new memory that keeps this array's order (PyCUDA's `a.copy()`, NumPy's
        /// `a.copy(order="K")`): Fortran order when this array is Fortran- and not C-contiguous,
        /// else C order, as [`empty_like`](DeviceArray::empty_like) chooses (so the transpose of a
        /// C array is copied in Fortran order, and a view with steps in C order).
        fn copy(&self) -> Result<DeviceArray<S::Elem, D>>;

        /// Copies the elements of `src` (of the same shape and element type, any layout) into
        /// this array: the device-to-device copy of arrays of any element type, CUDA's vector types
        /// too ([`assign`](Self::assign) converts numbers between types).
        fn copy_from[S2: Storage<Elem = S::Elem>, D2: Dimension](&mut self, src: &DeviceArrayBase<S2, D2>)
            -> Result<()> where [S: StorageMut];

        /// Sets every element to `value`.
        fn fill(&mut self, value: S::Elem) -> Result<()> where [S: StorageMut];
    }

    /// The element at `index` (one index per axis; a negative one counts from the end), copied
    /// to the host: NumPy's and CuPy's `a.item(i, j)`, `a[i, j].item()`, PyCUDA's
    /// `a[i, j].get()`. A wrong number of indices or one out of its axis is an
    /// [`ArrayShapeError`](crate::ArrayShapeError) (`SliceAxes`, `SliceIndex`); nothing is
    /// copied then. Ordered after the work queued on the legacy default stream, like
    /// [`to_vec`](Self::to_vec).
    pub fn item(&self, index: &[isize]) -> Result<S::Elem> {
        let one = self.view().into_dyn().slice_move(element_at(index)?)?;
        let mut v = one.to_vec()?;
        // A 0-d view holds exactly one element.
        v.pop().ok_or_else(|| {
            crate::error::ArrayShapeError::SliceAxes {
                taken: index.len(),
                axes: self.ndim(),
            }
            .into()
        })
    }

    /// Sets the element at `index` to `value` (NumPy's `a[i, j] = value`), checked as
    /// [`item`](Self::item) checks `index`; on the legacy default stream.
    pub fn set_item(&mut self, index: &[isize], value: S::Elem) -> Result<()>
    where
        S: StorageMut,
    {
        let mut one = self.view_mut().into_dyn().slice_move(element_at(index)?)?;
        one.fill(value)
    }
}

/// The slice of one element: an index per axis, each taking its axis away.
fn element_at(index: &[isize]) -> Result<SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn>> {
    let elems: Vec<SliceInfoElem> = index.iter().map(|&i| SliceInfoElem::Index(i)).collect();
    // Indices only: the input has one axis per index and the output none, which is what
    // `try_from` checks.
    SliceInfo::try_from(elems).map_err(|_| {
        crate::error::ArrayShapeError::SliceAxes {
            taken: index.len(),
            axes: index.len(),
        }
        .into()
    })
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D>
where
    S::Elem: Element,
{
    on_legacy_stream! {
        /// A copy with each element converted to `U` as C converts it (`(U)x`), in C order
        /// (numpy's `astype`).
        fn astype[U: Element](&self) -> Result<DeviceArray<U, D>>;

        /// Copies the elements of `src` (of the same shape, any layout, any element type: each
        /// converted as C converts it) into this array.
        fn assign[S2: Storage, D2: Dimension](&mut self, src: &DeviceArrayBase<S2, D2>) -> Result<()>
            where [S: StorageMut];
    }
}

/// An array's elements in C order, for a kernel that reads plain memory: the array itself
/// when it is C-contiguous, else a C-order copy, kept while the kernel's arguments borrow it.
pub(crate) enum COrder<'a, T: ArrayElement> {
    Same(DeviceArrayView<'a, T>),
    Copied(DeviceArray<T, IxDyn>),
}

impl<T: ArrayElement> COrder<'_, T> {
    /// The elements, C-contiguous.
    pub(crate) fn view(&self) -> DeviceArrayView<'_, T> {
        match self {
            COrder::Same(v) => v.view(),
            COrder::Copied(c) => c.view(),
        }
    }
}

impl<'a, S: Storage, D: Dimension> OnStream<'_, &'a DeviceArrayBase<S, D>> {
    /// The array in C order: itself, or a copy queued on this stream.
    pub(crate) fn c_order(&self) -> Result<COrder<'a, S::Elem>> {
        let a = self.target;
        if a.is_standard_layout() {
            return Ok(COrder::Same(a.view().into_dyn()));
        }
        Ok(COrder::Copied(self.to_contiguous()?.into_dyn()))
    }
}

impl<S: Storage, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`to_contiguous`](DeviceArrayBase::to_contiguous) on this stream.
    pub fn to_contiguous(&self) -> Result<DeviceArray<S::Elem, D>> {
        self.copied_into(DeviceArray::empty(self.target.context(), self.target.raw_dim())?)
    }

    /// [`copy`](DeviceArrayBase::copy) on this stream.
    pub fn copy(&self) -> Result<DeviceArray<S::Elem, D>> {
        self.copied_into(DeviceArray::empty_like(self.target)?)
    }

    /// This array's elements copied into `out`, new memory of its shape in either order.
    fn copied_into(&self, mut out: DeviceArray<S::Elem, D>) -> Result<DeviceArray<S::Elem, D>> {
        convert_into(&mut out, self.target, self.stream)?;
        Ok(out)
    }
}

impl<S: Storage, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>>
where
    S::Elem: Element,
{
    /// [`astype`](DeviceArrayBase::astype) on this stream.
    pub fn astype<U: Element>(&self) -> Result<DeviceArray<U, D>> {
        let mut out = DeviceArray::<U, D>::empty(self.target.context(), self.target.raw_dim())?;
        convert_into(&mut out, self.target, self.stream)?;
        Ok(out)
    }
}

impl<S: StorageMut, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`fill`](DeviceArrayBase::fill) on this stream.
    pub fn fill(&mut self, value: S::Elem) -> Result<()> {
        let t = S::Elem::ELEMENT_TYPE;
        let k = kernel(Builtin::Fill, t, t)?;
        let args = [KernelArg::scalar(value), KernelArg::output(self.target)];
        OnStream::new(&*k, self.stream).launch(args)
    }

    /// [`copy_from`](DeviceArrayBase::copy_from) on this stream.
    pub fn copy_from<S2: Storage<Elem = S::Elem>, D2: Dimension>(
        &mut self,
        src: &DeviceArrayBase<S2, D2>,
    ) -> Result<()> {
        // One element type (the signature's check): a copy of vector elements is no conversion.
        convert_into(self.target, src, self.stream)
    }

    /// [`assign`](DeviceArrayBase::assign) on this stream.
    pub fn assign<S2: Storage, D2: Dimension>(&mut self, src: &DeviceArrayBase<S2, D2>) -> Result<()>
    where
        S::Elem: Element,
    {
        convert_into(self.target, src, self.stream)
    }
}

/// Copies `src` into `dst`, converting numbers as C does; elements that are no numbers (the
/// callers see to it that both are of one type then) are copied by the kernel of their type.
fn convert_into<S: StorageMut, D: Dimension, S2: Storage, D2: Dimension>(
    dst: &mut DeviceArrayBase<S, D>,
    src: &DeviceArrayBase<S2, D2>,
    stream: Option<&Stream>,
) -> Result<()> {
    let (from, to) = (S2::Elem::ELEMENT_TYPE, S::Elem::ELEMENT_TYPE);
    let numbers = matches!((from, to), (ElementType::Number(_), ElementType::Number(_)));
    // A transpose (a.t() into C order) goes through tiles in shared memory, which holds a
    // tile of elements of up to 8 bytes (not `Complex64`, `float3`, `float4`): numbers
    // converted, or a vector type copied to itself.
    let tile_fits = (numbers || from == to) && from.size().max(to.size()) <= transpose::MAX_ELEMENT;
    if let Some(plan) =
        transpose::plan(src.shape(), src.strides(), dst.shape(), dst.strides()).filter(|_| tile_fits)
    {
        return transpose::run(&plan, stream, [KernelArg::input(src), KernelArg::output(dst)]);
    }
    let args = [KernelArg::input(src), KernelArg::output(dst)];
    // Plain memory in one order: a flat loop with several vector loads in flight per thread.
    if convert_contig::applies(&args) {
        return convert_contig::run(stream, args);
    }
    let op = if numbers { Builtin::Convert } else { Builtin::Copy };
    let k = kernel(op, from, to)?;
    OnStream::new(&*k, stream).launch(args)
}
