//! NumPy's `packbits` and `unpackbits`: the truth of eight elements as the bits of one `u8`,
//! and back, along an axis or over the flattened array, in either bit order. The axis is
//! moved last (a copy unless it already is), one thread writes each output element, and the
//! axis is moved back.

use ndarray::{Dimension, Ix1, IxDyn};

use crate::driver::stream::Stream;
use crate::error::{counts_error, ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, DeviceArrayView, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::bitwise::Bitwise;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;

/// Which bit of a byte holds the first of its eight elements (NumPy's `bitorder=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BitOrder {
    /// The most significant bit first (`'big'`, NumPy's default): `[1, 0, 0, 0, 0, 0, 0, 1]`
    /// packs to 129, `[1]` to 128.
    #[default]
    Big,
    /// The least significant bit first (`'little'`): `[1]` packs to 1.
    Little,
}

/// The two kernels, by the element type packed (`u8` for unpacking).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    Pack(DType),
    Unpack,
}

static KERNELS: SourceKernels<Part> = SourceKernels::new();

/// `gpu_packbits`: byte `j` of row `r` holds the truth of elements `8 j ..` of the row (a
/// row of `n`, its bytes `nb`), the first in bit 7 or (`little`) bit 0; a row's last byte
/// is padded with zeros. `gpu_unpackbits`: element `i` of a row of `m` is bit `i % 8` (in
/// that order) of byte `i / 8`, 0 past the row's `nb` bytes (NumPy's `count` beyond them).
fn source(part: Part) -> String {
    let grid_loop = "for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < total; \
                     o += (long long)gridDim.x * blockDim.x) {";
    match part {
        Part::Pack(t) => {
            let t = t.c_name();
            format!(
                "extern \"C\" __global__ void gpu_packbits(const {t} *__restrict__ x, long long x_o, \
                 unsigned char *__restrict__ out, long long total, long long n, long long nb, int little) {{\n\
                 {grid_loop}\n\
                 const long long r = o / nb, j = o - r * nb;\n\
                 const {t} *row = x + x_o + r * n;\n\
                 unsigned int byte = 0u;\n\
                 #pragma unroll\n\
                 for (int b = 0; b < 8; ++b) {{ const long long i = 8 * j + b; \
                 if (i < n && row[i] != ({t})0) byte |= 1u << (little ? b : 7 - b); }}\n\
                 out[o] = (unsigned char)byte;\n}}\n}}\n"
            )
        }
        Part::Unpack => format!(
            "extern \"C\" __global__ void gpu_unpackbits(const unsigned char *__restrict__ x, long long x_o, \
             unsigned char *__restrict__ out, long long total, long long nb, long long m, int little) {{\n\
             {grid_loop}\n\
             const long long r = o / m, i = o - r * m;\n\
             const int b = (int)(i & 7);\n\
             out[o] = i < 8 * nb ? (unsigned char)((x[x_o + r * nb + (i >> 3)] >> (little ? b : 7 - b)) & 1u) : (unsigned char)0;\n\
             }}\n}}\n"
        ),
    }
}

/// `a` as rows along `axis` (`None`: the flattened array, one row): the C-contiguous
/// elements with the axis last (`a`'s own when they already are, else a copy), and the order
/// of the axes that put it there.
struct Rows<'a, T: Element> {
    elements: Elements<'a, T>,
    /// The axes of the array in the rows' order (the chosen axis last).
    order: Vec<usize>,
    /// The length of the axis.
    len: usize,
}

enum Elements<'a, T: Element> {
    Borrowed(DeviceArrayView<'a, T, IxDyn>),
    Copied(DeviceArray<T, IxDyn>),
}

impl<'a, T: Element> Rows<'a, T> {
    fn new<S: Storage<Elem = T>, D: Dimension>(
        a: &'a DeviceArrayBase<S, D>,
        stream: Option<&Stream>,
        op: &'static str,
        axis: Option<isize>,
    ) -> Result<Self> {
        let nd = a.ndim();
        let (moved, order, len) = match axis {
            None => {
                let flat = a.len();
                let elements = if a.is_standard_layout() {
                    Elements::Borrowed(a.view().into_dyn().reshape(IxDyn(&[flat]))?)
                } else {
                    let c = OnStream::new(a, stream).to_contiguous()?.into_dyn();
                    Elements::Copied(c.reshape(IxDyn(&[flat]))?)
                };
                return Ok(Rows {
                    elements,
                    order: vec![0],
                    len: flat,
                });
            }
            Some(axis) => {
                let k = if axis < 0 { axis + nd as isize } else { axis };
                if k < 0 || k as usize >= nd {
                    return Err(ArrayShapeError::AxisOutOfBounds {
                        operation: op,
                        axis,
                        axes: nd,
                    }
                    .into());
                }
                let k = k as usize;
                let order: Vec<usize> = (0..nd).filter(|&j| j != k).chain([k]).collect();
                (a.view().into_dyn().permuted_axes(&order)?, order, a.shape()[k])
            }
        };
        let elements = if moved.is_standard_layout() {
            Elements::Borrowed(moved)
        } else {
            Elements::Copied(OnStream::new(&moved, stream).to_contiguous()?)
        };
        Ok(Rows { elements, order, len })
    }

    /// The rows' elements.
    fn elements(&self) -> DeviceArrayView<'_, T, IxDyn> {
        match &self.elements {
            Elements::Borrowed(v) => v.view(),
            Elements::Copied(c) => c.view(),
        }
    }

    /// The result's shape in the rows' order, with `last` elements in place of the axis.
    fn shape_with(&self, last: usize) -> Vec<usize> {
        let e = self.elements();
        let mut shape = e.shape().to_vec();
        *shape.last_mut().expect("rows have an axis") = last;
        shape
    }

    /// `out` (in the rows' order) with the axes put back where they were.
    fn put_back<D: Dimension>(&self, out: DeviceArray<u8, IxDyn>) -> Result<DeviceArray<u8, D>> {
        let mut inverse = vec![0; self.order.len()];
        for (i, &p) in self.order.iter().enumerate() {
            inverse[p] = i;
        }
        out.permuted_axes(&inverse)?.into_dimensionality()
    }
}

/// One thread per output element of `total`: the kernel of `part` over `rows`' elements.
fn launch<T: Element>(
    rows: &Rows<'_, T>,
    stream: Option<&Stream>,
    part: Part,
    out: &mut DeviceArray<u8, IxDyn>,
    row_in: usize,
    row_out: usize,
    little: bool,
) -> Result<()> {
    let total = out.len();
    if total == 0 {
        return Ok(());
    }
    let e = rows.elements();
    let ctx = e.context();
    let name = match part {
        Part::Pack(_) => "gpu_packbits",
        Part::Unpack => "gpu_unpackbits",
    };
    let f = KERNELS.prepared(ctx, part, name, || source(part))?;
    registry::launch(
        &f,
        registry::grid_for(ctx, total as u64)?,
        BLOCK,
        stream,
        &[
            Arg::input::<T, _>(e.storage()),
            Arg::I64(e.offset() as i64),
            Arg::output::<u8, _>(&mut out.data),
            Arg::I64(total as i64),
            Arg::I64(row_in as i64),
            Arg::I64(row_out as i64),
            Arg::I32((little) as i32),
        ],
    )
}

impl<S: Storage<Elem: Bitwise>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The truth of each element (nonzero), eight to a byte, of the flattened array in C
        /// order (NumPy's `packbits(a, axis=None, bitorder=)`): `ceil(len / 8)` bytes, the last
        /// padded with zeros. `bool` and integer arrays ([`Bitwise`]), as NumPy.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{BitOrder, DeviceArray};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[1u8, 0, 1, 1, 0, 1, 1, 1, 1]))?;
        /// assert_eq!(a.packbits(BitOrder::Big)?.to_vec()?, [183, 128]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn packbits(&self, order: BitOrder) -> Result<DeviceArray<u8, Ix1>>;

        /// [`packbits`](Self::packbits) along `axis` (negative: from the end; NumPy's
        /// `packbits(a, axis)`): that axis becomes `ceil(len / 8)` bytes, the others stay.
        fn packbits_axis(&self, axis: isize, order: BitOrder) -> Result<DeviceArray<u8, D>>;
    }
}

impl<S: Storage<Elem: Bitwise>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`packbits`](DeviceArrayBase::packbits) on this stream.
    pub fn packbits(&self, order: BitOrder) -> Result<DeviceArray<u8, Ix1>> {
        self.pack("DeviceArray::packbits", None, order)
    }

    /// [`packbits_axis`](DeviceArrayBase::packbits_axis) on this stream.
    pub fn packbits_axis(&self, axis: isize, order: BitOrder) -> Result<DeviceArray<u8, D>> {
        self.pack("DeviceArray::packbits_axis", Some(axis), order)
    }

    fn pack<R: Dimension>(
        &self,
        op: &'static str,
        axis: Option<isize>,
        order: BitOrder,
    ) -> Result<DeviceArray<u8, R>> {
        let rows = Rows::new(self.target, self.stream, op, axis)?;
        let nb = rows.len.div_ceil(8);
        let mut out = DeviceArray::<u8, IxDyn>::empty(self.target.context(), IxDyn(&rows.shape_with(nb)))?;
        let part = Part::Pack(S::Elem::DTYPE);
        launch(
            &rows,
            self.stream,
            part,
            &mut out,
            rows.len,
            nb,
            order == BitOrder::Little,
        )?;
        rows.put_back(out)
    }
}

impl<S: Storage<Elem = u8>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// Each bit of the flattened bytes as an element 0 or 1 (NumPy's `unpackbits(a,
        /// axis=None, count, bitorder=)`): `8 len` elements, or `count` of them (`Some(c)`: the
        /// first `c`, zeros past the bytes' bits; negative: all but the last `-c`, which must
        /// not exceed them, else [`ArrayShapeError::ElementCounts`], NumPy's `ValueError`).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{BitOrder, DeviceArray};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[1u8, 200]))?;
        /// assert_eq!(a.unpackbits(Some(-3), BitOrder::Big)?.to_vec()?, [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn unpackbits(&self, count: Option<isize>, order: BitOrder) -> Result<DeviceArray<u8, Ix1>>;

        /// [`unpackbits`](Self::unpackbits) along `axis` (negative: from the end; NumPy's
        /// `unpackbits(a, axis, count)`): that axis becomes `8 len` elements or `count` of them.
        fn unpackbits_axis(&self, axis: isize, count: Option<isize>, order: BitOrder)
            -> Result<DeviceArray<u8, D>>;
    }
}

impl<S: Storage<Elem = u8>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`unpackbits`](DeviceArrayBase::unpackbits) on this stream.
    pub fn unpackbits(&self, count: Option<isize>, order: BitOrder) -> Result<DeviceArray<u8, Ix1>> {
        self.unpack("DeviceArray::unpackbits", None, count, order)
    }

    /// [`unpackbits_axis`](DeviceArrayBase::unpackbits_axis) on this stream.
    pub fn unpackbits_axis(
        &self,
        axis: isize,
        count: Option<isize>,
        order: BitOrder,
    ) -> Result<DeviceArray<u8, D>> {
        self.unpack("DeviceArray::unpackbits_axis", Some(axis), count, order)
    }

    fn unpack<R: Dimension>(
        &self,
        op: &'static str,
        axis: Option<isize>,
        count: Option<isize>,
        order: BitOrder,
    ) -> Result<DeviceArray<u8, R>> {
        let rows = Rows::new(self.target, self.stream, op, axis)?;
        let bits = 8 * rows.len;
        let m = unpacked_len(op, bits, count)?;
        let mut out = DeviceArray::<u8, IxDyn>::empty(self.target.context(), IxDyn(&rows.shape_with(m)))?;
        launch(
            &rows,
            self.stream,
            Part::Unpack,
            &mut out,
            rows.len,
            m,
            order == BitOrder::Little,
        )?;
        rows.put_back(out)
    }
}

/// The elements `unpackbits` gives of `bits` bits with NumPy's `count`.
fn unpacked_len(op: &'static str, bits: usize, count: Option<isize>) -> Result<usize> {
    match count {
        None => Ok(bits),
        Some(c) if c >= 0 => Ok(c as usize),
        Some(c) => bits
            .checked_sub(c.unsigned_abs())
            .ok_or_else(|| counts_error(op, bits, c.unsigned_abs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_compile_for_every_element_type_they_take() {
        use crate::gpuarray::kernels::registry::compile_check;
        // `bool` and the integers (`Bitwise`): `DType::ALL` up to `U64`.
        let packed = DType::ALL[..=8].iter().copied().map(Part::Pack);
        assert_eq!(DType::ALL[8], DType::U64);
        for part in packed.chain([Part::Unpack]) {
            let src = source(part);
            if let Err(e) = compile_check(&src, "sm_90") {
                panic!("{part:?} does not compile: {e}\n{src}");
            }
            let kernels = gpu_cuda_source::find_kernels(&src).expect("the declaration reads");
            assert_eq!(kernels[0].params.len(), 7, "{part:?}");
        }
    }

    #[test]
    fn count_is_numpys() {
        assert_eq!(unpacked_len("t", 16, None).unwrap(), 16);
        assert_eq!(unpacked_len("t", 16, Some(20)).unwrap(), 20);
        assert_eq!(unpacked_len("t", 16, Some(-3)).unwrap(), 13);
        assert_eq!(unpacked_len("t", 16, Some(-16)).unwrap(), 0);
        assert!(unpacked_len("t", 16, Some(-17)).is_err());
    }
}
