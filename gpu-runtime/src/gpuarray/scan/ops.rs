//! `cumsum` and `cumprod` on arrays (NumPy's), flattened in C order or along one axis, built on
//! [`ScanKernel`]. Each scan is defined once per operation and element type for the process.
//!
//! They accumulate in the element type, as NumPy does for floats; NumPy widens integers
//! narrower than the platform integer to `int64`, which this does not: integer sums here wrap
//! in their own type ([`cumsum_np`](DeviceArrayBase::cumsum_np) and
//! [`cumprod_np`](DeviceArrayBase::cumprod_np) give NumPy 2's result: `scan::sum_np`).

use std::sync::Arc;

use crate::gpuarray::elements::dtype::DType;
use ndarray::{Dimension, Ix1, IxDyn};

use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
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
    on_legacy_stream! {
        /// The running sums of the elements in C order (NumPy's `cumsum()`, `axis=None`: `out[i] =
        /// x[0] + ... + x[i]`), of any layout, as a 1-D array, accumulated in the element type
        /// (integers wrap).
        fn cumsum(&self) -> Result<DeviceArray<S::Elem, Ix1>>;

        /// [`cumsum`](Self::cumsum) into `out`, an existing 1-D array of as many elements, of any
        /// step (NumPy's `cumsum(out=...)`): nothing is allocated for the result. `exclusive`
        /// gives [`cumsum_exclusive`](Self::cumsum_exclusive)'s values.
        fn cumsum_into[O: StorageMut<Elem = S::Elem>](
            &self,
            out: &mut DeviceArrayBase<O, Ix1>,
            exclusive: bool,
        ) -> Result<()>;

        /// The exclusive running sums (`out[0] = 0`, `out[i] = x[0] + ... + x[i - 1]`).
        fn cumsum_exclusive(&self) -> Result<DeviceArray<S::Elem, Ix1>>;

        /// The running sums along `axis` (NumPy's `cumsum(axis=axis)`), a C-order array of this
        /// shape; an axis the array does not have is an error.
        fn cumsum_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The exclusive running sums along `axis` (each lane starts at 0).
        fn cumsum_axis_exclusive(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The running products of the elements in C order (NumPy's `cumprod()`), as a 1-D array.
        fn cumprod(&self) -> Result<DeviceArray<S::Elem, Ix1>>;

        /// [`cumprod`](Self::cumprod) into `out`; as [`cumsum_into`](Self::cumsum_into) otherwise.
        fn cumprod_into[O: StorageMut<Elem = S::Elem>](
            &self,
            out: &mut DeviceArrayBase<O, Ix1>,
            exclusive: bool,
        ) -> Result<()>;

        /// The exclusive running products (`out[0] = 1`).
        fn cumprod_exclusive(&self) -> Result<DeviceArray<S::Elem, Ix1>>;

        /// The running products along `axis` (NumPy's `cumprod(axis=axis)`).
        fn cumprod_axis(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>>;

        /// The exclusive running products along `axis` (each lane starts at 1).
        fn cumprod_axis_exclusive(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>>;
    }
}

/// The five scans of one [`ScanOp`] on a stream, by the names of its inclusive scan, `_into`,
/// `_exclusive`, `_axis` and `_axis_exclusive` forms: each the operator's kernel on this stream
/// applied to the array.
macro_rules! on_stream_scans {
    ($op:ident: $i:ident, $o:ident, $e:ident, $a:ident, $ae:ident) => {
        #[doc = concat!("[`", stringify!($i), "`](DeviceArrayBase::", stringify!($i), ") on this stream.")]
        pub fn $i(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
            let k = scan_kernel::<S::Elem>(ScanOp::$op)?;
            OnStream::new(&*k, self.stream).inclusive(self.target)
        }

        #[doc = concat!("[`", stringify!($o), "`](DeviceArrayBase::", stringify!($o), ") on this stream.")]
        pub fn $o<O: StorageMut<Elem = S::Elem>>(
            &self,
            out: &mut DeviceArrayBase<O, Ix1>,
            exclusive: bool,
        ) -> Result<()> {
            let k = scan_kernel::<S::Elem>(ScanOp::$op)?;
            OnStream::new(&*k, self.stream).scan_into(self.target, out, exclusive)
        }

        #[doc = concat!("[`", stringify!($e), "`](DeviceArrayBase::", stringify!($e), ") on this stream.")]
        pub fn $e(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
            let k = scan_kernel::<S::Elem>(ScanOp::$op)?;
            OnStream::new(&*k, self.stream).exclusive(self.target)
        }

        #[doc = concat!("[`", stringify!($a), "`](DeviceArrayBase::", stringify!($a), ") on this stream.")]
        pub fn $a(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
            let k = scan_kernel::<S::Elem>(ScanOp::$op)?;
            OnStream::new(&*k, self.stream).inclusive_axis(self.target, axis)
        }

        #[doc = concat!("[`", stringify!($ae), "`](DeviceArrayBase::", stringify!($ae), ") on this stream.")]
        pub fn $ae(&self, axis: usize) -> Result<DeviceArray<S::Elem, IxDyn>> {
            let k = scan_kernel::<S::Elem>(ScanOp::$op)?;
            OnStream::new(&*k, self.stream).exclusive_axis(self.target, axis)
        }
    };
}

/// The scans on a stream (`a.on(&stream).cumsum()`): the one body of each; each returns without
/// waiting.
impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    on_stream_scans!(Sum: cumsum, cumsum_into, cumsum_exclusive, cumsum_axis, cumsum_axis_exclusive);
    on_stream_scans!(Prod: cumprod, cumprod_into, cumprod_exclusive, cumprod_axis, cumprod_axis_exclusive);
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
