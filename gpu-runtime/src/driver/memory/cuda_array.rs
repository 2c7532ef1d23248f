//! CUDA arrays: opaque 1D, 2D and 3D memory laid out for texture and surface access
//! (PyCUDA's `Array`, `ArrayDescriptor`, `ArrayDescriptor3D` and `np_to_array`).

use cudarc::driver::sys::{self, CUarray_format as Fmt};
#[cfg(feature = "gpuarray")]
use ndarray::Order;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::ordering::{Release, StreamUses};
use crate::error::{CopyError, Result, TextureError};
use crate::types::complex::Complex;
use crate::types::repr::DeviceRepr;

/// The type of each channel of an array element (PyCUDA's `array_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayFormat {
    /// `unsigned char`.
    U8,
    /// `unsigned short`.
    U16,
    /// `unsigned int`.
    U32,
    /// `signed char`.
    I8,
    /// `short`.
    I16,
    /// `int`.
    I32,
    /// `__half`.
    F16,
    /// `float`.
    F32,
}

impl ArrayFormat {
    /// The driver's enum value.
    pub const fn raw(self) -> Fmt {
        match self {
            ArrayFormat::U8 => Fmt::CU_AD_FORMAT_UNSIGNED_INT8,
            ArrayFormat::U16 => Fmt::CU_AD_FORMAT_UNSIGNED_INT16,
            ArrayFormat::U32 => Fmt::CU_AD_FORMAT_UNSIGNED_INT32,
            ArrayFormat::I8 => Fmt::CU_AD_FORMAT_SIGNED_INT8,
            ArrayFormat::I16 => Fmt::CU_AD_FORMAT_SIGNED_INT16,
            ArrayFormat::I32 => Fmt::CU_AD_FORMAT_SIGNED_INT32,
            ArrayFormat::F16 => Fmt::CU_AD_FORMAT_HALF,
            ArrayFormat::F32 => Fmt::CU_AD_FORMAT_FLOAT,
        }
    }

    /// Bytes per channel.
    pub const fn bytes(self) -> usize {
        match self {
            ArrayFormat::U8 | ArrayFormat::I8 => 1,
            ArrayFormat::U16 | ArrayFormat::I16 | ArrayFormat::F16 => 2,
            ArrayFormat::U32 | ArrayFormat::I32 | ArrayFormat::F32 => 4,
        }
    }
}

/// A Rust type that is one element of a CUDA array: its channel format and channel count.
///
/// Implemented for the 8-, 16- and 32-bit integers, `f32`, and arrays `[T; 2]` and `[T; 4]`
/// of them (two- and four-channel elements, `float2`/`float4` in C); for
/// [`Complex32`](crate::types::Complex32), as two `f32` channels (a `float2` texel); and, by
/// PyCUDA's "double hack" (texture units cannot fetch doubles), for `f64` as two `i32`
/// channels (`int2`) and [`Complex64`](crate::types::Complex64) as four (`int4`), which
/// kernels decode with the helpers of `<gpu_runtime/texture_fetch.h>`:
/// `fp_tex2D<double>(tex, x, y)`, `fp_surf2Dwrite(v, surf, x, y)`, … (see
/// [`compiler`](crate::compiler)).
pub trait ArrayElement: DeviceRepr {
    /// The channel format.
    const FORMAT: ArrayFormat;
    /// Channels per element: 1, 2 or 4.
    const CHANNELS: u32;
    /// True when the element's bits are kept in integer channels that do not hold its value
    /// (`f64`, `Complex64`): a texture must read them unfiltered ([`FilterMode::Point`]) and as
    /// integers ([`TextureDesc::read_as_integer`]), or the kernel gets other bits.
    ///
    /// [`FilterMode::Point`]: crate::driver::FilterMode::Point
    /// [`TextureDesc::read_as_integer`]: crate::driver::TextureDesc::read_as_integer
    const BIT_CAST: bool = false;
}

macro_rules! array_element {
    ($($t:ty => $f:ident),*) => {$(
        impl ArrayElement for $t {
            const FORMAT: ArrayFormat = ArrayFormat::$f;
            const CHANNELS: u32 = 1;
        }
        impl ArrayElement for [$t; 2] {
            const FORMAT: ArrayFormat = ArrayFormat::$f;
            const CHANNELS: u32 = 2;
        }
        impl ArrayElement for [$t; 4] {
            const FORMAT: ArrayFormat = ArrayFormat::$f;
            const CHANNELS: u32 = 4;
        }
    )*};
}
array_element!(u8 => U8, u16 => U16, u32 => U32, i8 => I8, i16 => I16, i32 => I32, f32 => F32);

impl ArrayElement for f64 {
    const FORMAT: ArrayFormat = ArrayFormat::I32;
    const CHANNELS: u32 = 2;
    const BIT_CAST: bool = true;
}

/// A `float2` texel: filtering interpolates the real and imaginary parts, as it should.
impl ArrayElement for Complex<f32> {
    const FORMAT: ArrayFormat = ArrayFormat::F32;
    const CHANNELS: u32 = 2;
}

impl ArrayElement for Complex<f64> {
    const FORMAT: ArrayFormat = ArrayFormat::I32;
    const CHANNELS: u32 = 4;
    const BIT_CAST: bool = true;
}

/// Flags of a CUDA array, combined with `|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ArrayFlags(u32);

impl ArrayFlags {
    /// No flags.
    pub const NONE: ArrayFlags = ArrayFlags(0);
    /// A layered array: `depth` is the number of 1D or 2D layers.
    pub const LAYERED: ArrayFlags = ArrayFlags(sys::CUDA_ARRAY3D_LAYERED);
    /// The array may be bound to a [`Surface`](crate::driver::Surface) (needed for writes from kernels).
    pub const SURFACE_LDST: ArrayFlags = ArrayFlags(sys::CUDA_ARRAY3D_SURFACE_LDST);
    /// The array may be read with `tex2Dgather`.
    pub const TEXTURE_GATHER: ArrayFlags = ArrayFlags(sys::CUDA_ARRAY3D_TEXTURE_GATHER);
    /// A cube map: six square faces (`width == height`, `depth` 6, or a multiple of 6 with
    /// [`LAYERED`](Self::LAYERED)), read with `texCubemap`.
    pub const CUBEMAP: ArrayFlags = ArrayFlags(sys::CUDA_ARRAY3D_CUBEMAP);

    /// The raw `CUDA_ARRAY3D_*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// True when every flag in `other` is set in `self`.
    pub const fn contains(self, other: ArrayFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for ArrayFlags {
    type Output = ArrayFlags;
    fn bitor(self, rhs: ArrayFlags) -> ArrayFlags {
        ArrayFlags(self.0 | rhs.0)
    }
}

/// The shape and element type of a CUDA array (PyCUDA's `ArrayDescriptor3D`; a 2D array has
/// `depth == 0`, a 1D array also `height == 0`, as in the driver).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrayDescriptor {
    /// Elements per row.
    pub width: usize,
    /// Rows (0 for a 1D array).
    pub height: usize,
    /// Slices (0 for a 1D or 2D array).
    pub depth: usize,
    /// Channel format.
    pub format: ArrayFormat,
    /// Channels per element: 1, 2 or 4.
    pub channels: u32,
    /// Flags.
    pub flags: ArrayFlags,
}

impl ArrayDescriptor {
    /// A 2D array of `width x height` elements of `T`.
    pub fn new_2d<T: ArrayElement>(width: usize, height: usize) -> Self {
        Self::new_3d::<T>(width, height, 0)
    }

    /// A 3D array of `width x height x depth` elements of `T`.
    pub fn new_3d<T: ArrayElement>(width: usize, height: usize, depth: usize) -> Self {
        ArrayDescriptor {
            width,
            height,
            depth,
            format: T::FORMAT,
            channels: T::CHANNELS,
            flags: ArrayFlags::NONE,
        }
    }

    /// The same descriptor with `flags`.
    pub fn with_flags(mut self, flags: ArrayFlags) -> Self {
        self.flags = flags;
        self
    }

    /// Bytes per element (all channels).
    pub const fn element_bytes(&self) -> usize {
        self.format.bytes() * self.channels as usize
    }

    /// Elements in the whole array.
    pub fn len(&self) -> usize {
        self.width * self.height.max(1) * self.depth.max(1)
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.width == 0
    }

    fn validate(&self) -> Result<()> {
        if !matches!(self.channels, 1 | 2 | 4) {
            return Err(TextureError::Channels {
                operation: "CudaArray::new",
                channels: self.channels,
            }
            .into());
        }
        if self.width == 0 {
            return Err(TextureError::ZeroWidth.into());
        }
        if self.height == 0 && self.depth != 0 && !self.flags.contains(ArrayFlags::LAYERED) {
            return Err(TextureError::DepthWithoutHeight { depth: self.depth }.into());
        }
        if self.flags.contains(ArrayFlags::CUBEMAP) {
            let layered = self.flags.contains(ArrayFlags::LAYERED);
            let faces_ok = if layered {
                self.depth > 0 && self.depth.is_multiple_of(6)
            } else {
                self.depth == 6
            };
            if self.width != self.height || !faces_ok {
                return Err(TextureError::CubeMap {
                    layered,
                    width: self.width,
                    height: self.height,
                    depth: self.depth,
                }
                .into());
            }
        }
        Ok(())
    }

    pub(super) fn check_element<T: ArrayElement>(&self, operation: &'static str) -> Result<()> {
        if T::FORMAT != self.format || T::CHANNELS != self.channels {
            return Err(TextureError::ElementFormat {
                operation,
                array_format: format!("{:?}", self.format),
                array_channels: self.channels,
                rust_type: std::any::type_name::<T>(),
                rust_format: format!("{:?}", T::FORMAT),
                rust_channels: T::CHANNELS,
            }
            .into());
        }
        Ok(())
    }
}

/// A CUDA array, freed when dropped; it keeps its context alive.
///
/// Kernels read it through a [`Texture`](crate::driver::Texture) and write it through a
/// [`Surface`](crate::driver::Surface); the host fills and reads it by copies:
///
/// ```no_run
/// use gpu_runtime::ndarray::Array2;
/// use gpu_runtime::{driver::ArrayFlags, Context, driver::CudaArray};
/// let ctx = Context::default()?;
/// let image = Array2::from_shape_fn((48, 64), |(y, x)| (y * 64 + x) as f32);
/// // C order: the last axis is the array's width, as `tex2D(tex, x, y)` expects.
/// let mut array = CudaArray::from_ndarray(&ctx, &image, ArrayFlags::NONE)?;
/// assert_eq!((array.descriptor().width, array.descriptor().height), (64, 48));
/// assert_eq!(array.to_vec::<f32>()?, image.as_slice().unwrap());
///
/// array.copy_from_host(&vec![0.5f32; 64 * 48])?;
/// let mut back = vec![0f32; 64 * 48];
/// array.copy_to_host(&mut back)?;
/// assert!(back.iter().all(|&v| v == 0.5));
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct CudaArray {
    raw: sys::CUarray,
    pub(super) desc: ArrayDescriptor,
    ctx: Context,
    /// Copies, and kernels through textures and surfaces, that use the array.
    pub(crate) uses: StreamUses,
}

// SAFETY: a CUarray is a driver handle usable from any thread.
unsafe impl Send for CudaArray {}
// SAFETY: shared references only read the handle and descriptor or copy out of the array.
unsafe impl Sync for CudaArray {}

impl std::fmt::Debug for CudaArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaArray({:p}, {:?})", self.raw, self.desc)
    }
}

impl CudaArray {
    /// Allocates an array (contents unspecified).
    pub fn new(ctx: &Context, desc: ArrayDescriptor) -> Result<CudaArray> {
        desc.validate()?;
        let d = sys::CUDA_ARRAY3D_DESCRIPTOR {
            Width: desc.width,
            Height: desc.height,
            Depth: desc.depth,
            Format: desc.format.raw(),
            NumChannels: desc.channels,
            Flags: desc.flags.bits(),
        };
        let raw = crate::driver::context::core::alloc_or_reclaim(&ctx.inner, || {
            ctx.bound(|| calls::array_3d_create(&d))
        })?;
        Ok(CudaArray {
            raw,
            desc,
            ctx: ctx.clone(),
            uses: StreamUses::new(),
        })
    }

    /// The driver's handle.
    pub fn raw(&self) -> sys::CUarray {
        self.raw
    }

    /// The array's shape and element type.
    pub fn descriptor(&self) -> ArrayDescriptor {
        self.desc
    }

    /// The context the array belongs to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The descriptor the driver reports (a second opinion on [`descriptor`](Self::descriptor)).
    pub fn query_descriptor(&self) -> Result<(usize, usize, usize, u32)> {
        self.ctx.bind()?;
        // SAFETY: the array is live.
        let d = unsafe { calls::array_3d_get_descriptor(self.raw) }?;
        Ok((d.Width, d.Height, d.Depth, d.NumChannels))
    }

    pub(super) fn whole(&self) -> (usize, usize, usize) {
        let d = &self.desc;
        (d.width * d.element_bytes(), d.height.max(1), d.depth.max(1))
    }

    pub(super) fn check_len(&self, operation: &'static str, len: usize) -> Result<()> {
        if len != self.desc.len() {
            let d = &self.desc;
            return Err(CopyError::ArrayLength {
                operation,
                len,
                extent: (d.width, d.height.max(1), d.depth.max(1)),
                array_len: d.len(),
            }
            .into());
        }
        Ok(())
    }
}

#[cfg(feature = "gpuarray")]
/// The array extents `(width, height, depth)` of an `ndarray` shape read in `order` (PyCUDA's
/// `matrix_to_array`): in C order the last axis is the width (`[d, h, w]`), in Fortran order
/// the first (`[w, h, d]`); missing axes are 0, as in [`ArrayDescriptor`].
pub(super) fn extents(
    shape: &[usize],
    order: Order,
    operation: &'static str,
) -> Result<(usize, usize, usize)> {
    let mut axes = [0usize; 3];
    if shape.is_empty() || shape.len() > 3 {
        return Err(TextureError::Dimensions {
            operation,
            shape: shape.to_vec(),
        }
        .into());
    }
    for (k, &n) in shape.iter().enumerate() {
        // axes[0] is the width, [1] the height, [2] the depth.
        let axis = if order.is_column_major() {
            k
        } else {
            shape.len() - 1 - k
        };
        axes[axis] = n;
    }
    Ok((axes[0], axes[1], axes[2]))
}

#[cfg(feature = "gpuarray")]
/// The `ndarray` shape of an array's extents read in `order` (the inverse of [`extents`]).
pub(super) fn shape_of(desc: &ArrayDescriptor, order: Order) -> Vec<usize> {
    let mut shape = vec![desc.width];
    // A layered 1D array has layers (depth) but no height: its shape is `[layers, width]`.
    shape.extend([desc.height, desc.depth].into_iter().filter(|&n| n > 0));
    if order.is_row_major() {
        shape.reverse();
    }
    shape
}

impl Drop for CudaArray {
    fn drop(&mut self) {
        // Destroyed once the copies and kernels (through textures and surfaces) that use it
        // have finished.
        self.ctx.release_after(&mut self.uses, Release::Array(self.raw));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[cfg(feature = "gpuarray")]
    #[test]
    fn c_order_puts_the_last_axis_on_x_and_fortran_the_first() {
        let c = |s: &[usize]| extents(s, Order::C, "t").unwrap();
        let f = |s: &[usize]| extents(s, Order::F, "t").unwrap();
        assert_eq!(c(&[7]), (7, 0, 0));
        assert_eq!(c(&[3, 7]), (7, 3, 0));
        assert_eq!(c(&[2, 3, 7]), (7, 3, 2));
        assert_eq!(f(&[7]), (7, 0, 0));
        assert_eq!(f(&[7, 3]), (7, 3, 0));
        assert_eq!(f(&[7, 3, 2]), (7, 3, 2));
        for bad in [&[][..], &[1, 2, 3, 4][..]] {
            let e = extents(bad, Order::F, "t").unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Texture(TextureError::Dimensions { operation: "t", ref shape }) if shape == bad
                ),
                "{e}"
            );
        }
        // The shape read back is the shape given, in either order.
        for shape in [&[5][..], &[4, 5][..], &[3, 4, 5][..]] {
            for order in [Order::C, Order::F] {
                let (w, h, d) = extents(shape, order, "t").unwrap();
                let desc = ArrayDescriptor::new_3d::<f32>(w, h, d);
                assert_eq!(shape_of(&desc, order), shape, "{order:?}");
            }
        }
    }

    #[test]
    fn doubles_and_complex_numbers_are_whole_texels() {
        // The double hack keeps every bit: 8 and 16 bytes in int2 and int4 texels.
        for (format, channels, bytes) in [
            (<f64 as ArrayElement>::FORMAT, <f64 as ArrayElement>::CHANNELS, 8),
            (Complex::<f32>::FORMAT, Complex::<f32>::CHANNELS, 8),
            (Complex::<f64>::FORMAT, Complex::<f64>::CHANNELS, 16),
        ] {
            assert_eq!(format.bytes() * channels as usize, bytes);
        }
        assert_eq!(std::mem::size_of::<Complex<f64>>(), 16);
        const { assert!(<f64 as ArrayElement>::BIT_CAST && Complex::<f64>::BIT_CAST) };
        const { assert!(!Complex::<f32>::BIT_CAST && !<f32 as ArrayElement>::BIT_CAST) };
        let desc = ArrayDescriptor::new_2d::<f64>(10, 4);
        assert_eq!(
            (desc.format, desc.channels, desc.element_bytes()),
            (ArrayFormat::I32, 2, 8)
        );
        assert!(desc.check_element::<f64>("t").is_ok());
        assert!(desc.check_element::<Complex<f32>>("t").is_err());
    }

    #[test]
    fn cube_maps_need_square_faces_and_six_of_them() {
        let cube = |w, h, d, flags| {
            ArrayDescriptor::new_3d::<f32>(w, h, d)
                .with_flags(flags)
                .validate()
        };
        assert!(cube(16, 16, 6, ArrayFlags::CUBEMAP).is_ok());
        assert!(cube(16, 16, 12, ArrayFlags::CUBEMAP | ArrayFlags::LAYERED).is_ok());
        for (w, h, d, flags) in [
            (16, 8, 6, ArrayFlags::CUBEMAP),
            (16, 16, 5, ArrayFlags::CUBEMAP),
            (16, 16, 12, ArrayFlags::CUBEMAP),
            (16, 16, 9, ArrayFlags::CUBEMAP | ArrayFlags::LAYERED),
        ] {
            let e = cube(w, h, d, flags).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Texture(TextureError::CubeMap { width, height, depth, .. })
                        if (width, height, depth) == (w, h, d)
                ),
                "{w}x{h}x{d}: {e}"
            );
        }
    }
}
