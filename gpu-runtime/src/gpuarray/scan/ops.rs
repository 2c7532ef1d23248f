//! `cumsum` and `cumprod` on arrays (NumPy's), flattened in C order or along one axis, built on
//! [`ScanKernel`]. Each scan is defined once per operation and element type for the process.
//!
//! They accumulate in the element type, as NumPy does for floats; NumPy widens integers
//! narrower than the platform integer to `int64`, which this does not: integer sums here wrap
//! in their own type (`astype::<i64>()` first for NumPy's result).

use std::sync::Arc;

use crate::gpuarray::elements::dtype::DType;
use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::{AnyDefinition, Definitions};
use crate::gpuarray::scan::kernel::ScanKernel;

/// The associative operators of the builtin scans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ScanOp {
    Sum,
    Prod,
}

static SCANS: Definitions<(ScanOp, DType), AnyDefinition> = Definitions::new();

/// The scan of `op` over `T`, defined once per process.
fn scan_kernel<T: Element>(op: ScanOp) -> Result<Arc<ScanKernel<T>>> {
    SCANS.get_or_try_insert_typed((op, T::DTYPE), || {
        let t = T::c_name();
        match op {
            ScanOp::Sum => ScanKernel::<T>::new("a + b", &format!("({t})0")),
            ScanOp::Prod => ScanKernel::<T>::new("a * b", &format!("({t})1")),
        }
    })
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    /// The running sums of the elements in C order (NumPy's `cumsum()`, `axis=None`: `out[i] =
    /// x[0] + ... + x[i]`), of any layout, as a 1-D array, accumulated in the element type
    /// (integers wrap).
    pub fn cumsum(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        scan_kernel::<S::Elem>(ScanOp::Sum)?.inclusive(self)
    }

    /// [`cumsum`](Self::cumsum) into `out`, an existing 1-D array of as many elements, of any
    /// step (NumPy's `cumsum(out=...)`): nothing is allocated for the result. `exclusive`
    /// gives [`cumsum_exclusive`](Self::cumsum_exclusive)'s values; `stream` (or `None`, the
    /// legacy default stream) orders it.
    pub fn cumsum_into<O: StorageMut<Elem = S::Elem>>(
        &self,
        stream: Option<&Stream>,
        out: &mut DeviceArrayBase<O, Ix1>,
        exclusive: bool,
    ) -> Result<()> {
        scan_kernel::<S::Elem>(ScanOp::Sum)?.scan_into(stream, self, out, exclusive)
    }

    /// The exclusive running sums (`out[0] = 0`, `out[i] = x[0] + ... + x[i - 1]`).
    pub fn cumsum_exclusive(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        scan_kernel::<S::Elem>(ScanOp::Sum)?.exclusive(self)
    }

    /// The running sums along `axis` (NumPy's `cumsum(axis=axis)`), a C-order array of this
    /// shape; an axis the array does not have is an error.
    pub fn cumsum_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        scan_kernel::<S::Elem>(ScanOp::Sum)?.inclusive_axis(self, axis)
    }

    /// The exclusive running sums along `axis` (each lane starts at 0).
    pub fn cumsum_axis_exclusive(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        scan_kernel::<S::Elem>(ScanOp::Sum)?.exclusive_axis(self, axis)
    }

    /// The running products of the elements in C order (NumPy's `cumprod()`), as a 1-D array.
    pub fn cumprod(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        scan_kernel::<S::Elem>(ScanOp::Prod)?.inclusive(self)
    }

    /// [`cumprod`](Self::cumprod) into `out`; as [`cumsum_into`](Self::cumsum_into) otherwise.
    pub fn cumprod_into<O: StorageMut<Elem = S::Elem>>(
        &self,
        stream: Option<&Stream>,
        out: &mut DeviceArrayBase<O, Ix1>,
        exclusive: bool,
    ) -> Result<()> {
        scan_kernel::<S::Elem>(ScanOp::Prod)?.scan_into(stream, self, out, exclusive)
    }

    /// The exclusive running products (`out[0] = 1`).
    pub fn cumprod_exclusive(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        scan_kernel::<S::Elem>(ScanOp::Prod)?.exclusive(self)
    }

    /// The running products along `axis` (NumPy's `cumprod(axis=axis)`).
    pub fn cumprod_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        scan_kernel::<S::Elem>(ScanOp::Prod)?.inclusive_axis(self, axis)
    }

    /// The exclusive running products along `axis` (each lane starts at 1).
    pub fn cumprod_axis_exclusive(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
        scan_kernel::<S::Elem>(ScanOp::Prod)?.exclusive_axis(self, axis)
    }
}

/// The sources of the sum and product scans of `T`, in every variant the tests compile.
#[cfg(test)]
pub(crate) fn test_sources<T: Element>() -> Vec<String> {
    use crate::gpuarray::scan::kernel::ScanVariant;
    let mut out = Vec::new();
    for op in [ScanOp::Sum, ScanOp::Prod] {
        let k = scan_kernel::<T>(op).unwrap();
        for v in [
            ScanVariant::LookBack,
            ScanVariant::Lanes(1),
            ScanVariant::Lanes(3),
        ] {
            out.push(k.source(v));
        }
    }
    out
}
