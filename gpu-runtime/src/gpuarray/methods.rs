//! Array methods that run a kernel: `fill`, `assign`, `to_contiguous`, `astype`, each on the
//! legacy default stream or (`*_on`) on a stream.

use ndarray::Dimension;

use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::builtin::{kernel, Builtin};
use crate::gpuarray::convert_contig;
use crate::gpuarray::element::Element;
use crate::gpuarray::kernel_args::KernelArg;
use crate::gpuarray::transpose;

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// A copy in C order, in new memory (the layout of a view is gone: use it before
    /// [`reshape`](Self::reshape), or to hand a kernel plain memory).
    pub fn to_contiguous(&self) -> Result<DeviceArray<S::Elem, D>> {
        self.astype_stream(None)
    }

    /// [`to_contiguous`](Self::to_contiguous) on `stream`.
    pub fn to_contiguous_on(&self, stream: &Stream) -> Result<DeviceArray<S::Elem, D>> {
        self.astype_stream(Some(stream))
    }

    /// A copy with each element converted to `U` as C converts it (`(U)x`), in C order
    /// (numpy's `astype`).
    pub fn astype<U: Element>(&self) -> Result<DeviceArray<U, D>> {
        self.astype_stream(None)
    }

    /// [`astype`](Self::astype) on `stream`.
    pub fn astype_on<U: Element>(&self, stream: &Stream) -> Result<DeviceArray<U, D>> {
        self.astype_stream(Some(stream))
    }

    fn astype_stream<U: Element>(&self, stream: Option<&Stream>) -> Result<DeviceArray<U, D>> {
        let mut out = DeviceArray::<U, D>::empty(self.context(), self.raw_dim())?;
        convert_into(&mut out, self, stream)?;
        Ok(out)
    }

    /// Sets every element to `value`.
    pub fn fill(&mut self, value: S::Elem) -> Result<()>
    where
        S: StorageMut,
    {
        self.fill_stream(None, value)
    }

    /// [`fill`](Self::fill) on `stream`.
    pub fn fill_on(&mut self, stream: &Stream, value: S::Elem) -> Result<()>
    where
        S: StorageMut,
    {
        self.fill_stream(Some(stream), value)
    }

    fn fill_stream(&mut self, stream: Option<&Stream>, value: S::Elem) -> Result<()>
    where
        S: StorageMut,
    {
        let k = kernel(Builtin::Fill, S::Elem::DTYPE, S::Elem::DTYPE)?;
        let args = [KernelArg::scalar(value), KernelArg::output(self)];
        match stream {
            Some(s) => k.launch_on(s, args),
            None => k.launch(args),
        }
    }

    /// Copies the elements of `src` (of the same shape, any layout, any element type: each
    /// converted as C converts it) into this array.
    pub fn assign<S2: Storage, D2: Dimension>(&mut self, src: &DeviceArrayBase<S2, D2>) -> Result<()>
    where
        S: StorageMut,
    {
        convert_into(self, src, None)
    }

    /// [`assign`](Self::assign) on `stream`.
    pub fn assign_on<S2: Storage, D2: Dimension>(
        &mut self,
        stream: &Stream,
        src: &DeviceArrayBase<S2, D2>,
    ) -> Result<()>
    where
        S: StorageMut,
    {
        convert_into(self, src, Some(stream))
    }
}

fn convert_into<S: StorageMut, D: Dimension, S2: Storage, D2: Dimension>(
    dst: &mut DeviceArrayBase<S, D>,
    src: &DeviceArrayBase<S2, D2>,
    stream: Option<&Stream>,
) -> Result<()> {
    // A transpose (a.t() into C order) goes through tiles in shared memory, which holds a
    // tile of elements of up to 8 bytes (not `Complex64`).
    let tile_fits = S::Elem::DTYPE.size() <= 8 && S2::Elem::DTYPE.size() <= 8;
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
    let k = kernel(Builtin::Convert, S2::Elem::DTYPE, S::Elem::DTYPE)?;
    match stream {
        Some(s) => k.launch_on(s, args),
        None => k.launch(args),
    }
}
