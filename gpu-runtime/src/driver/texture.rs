//! Texture and surface objects: read CUDA arrays or linear memory through the texture units,
//! write arrays through surfaces, from any `#[kernel]` (CUDA 12 removed texture and surface
//! *references*; objects replace them).
//!
//! A [`Texture`] or [`Surface`] owns the driver object and borrows the memory behind it, so
//! the memory cannot be freed (or, for linear memory, written from the host) while the object
//! exists. A kernel takes the object's handle by value: a [`TextureObject`] for a C
//! `cudaTextureObject_t` parameter, a [`SurfaceObject`] for `cudaSurfaceObject_t`. A handle
//! borrows its texture or surface, so it cannot outlive it; and a launch that takes a handle
//! is ordered like a launch that takes the memory behind it (after the writes to it on other
//! streams; a surface's writes after every use), and keeps the object and the memory alive until
//! the kernel has finished: dropping either right after an asynchronous launch is fine.
//!
//! ```no_run
//! use gpu_runtime::{kernel, driver::ArrayDescriptor, Context, driver::CudaArray, driver::Texture, driver::TextureDesc, driver::TextureObject};
//!
//! #[kernel(r#"
//! __global__ void sample(cudaTextureObject_t tex, float *out, int w, int h) {
//!     int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
//!     if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
//! }"#)]
//! fn sample(tex: TextureObject, #[Out] out: &mut [f32], w: i32, h: i32);
//!
//! fn main() -> gpu_runtime::Result<()> {
//!     let ctx = Context::default()?;
//!     let mut array = CudaArray::new(&ctx, ArrayDescriptor::new_2d::<f32>(64, 32))?;
//!     array.copy_from_host(&vec![1.5f32; 64 * 32])?;
//!     let tex = Texture::from_array(&array, &TextureDesc::default())?;
//!     let mut out = vec![0f32; 64 * 32];
//!     sample(&ctx, (1, 32), 64, tex.object(), &mut out, 64, 32)?;
//!     Ok(())
//! }
//! ```

use std::sync::Arc;

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::memory::cuda_array::{ArrayElement, ArrayFlags, CudaArray};
use crate::driver::memory::pitched::PitchedBuffer;
use crate::driver::memory::view::{DeviceRead, DeviceView};
use crate::driver::ordering::{Release, StreamInner, StreamUses};
use crate::error::{Result, TextureError};

/// A texture object's handle, what a kernel's `cudaTextureObject_t` parameter takes: borrowed
/// from a [`Texture`] ([`Texture::object`]).
///
/// The kernel receives the 64-bit handle ([`raw`](Self::raw)); the rest tells the launch what
/// to order it after and keep alive.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct TextureObject<'t> {
    /// First, so that the parameter's bytes are the handle (`cuLaunchKernel` copies the 8
    /// bytes of a `cudaTextureObject_t`).
    raw: u64,
    /// The texture's own record (its destruction waits for launches), and the memory's.
    object: Option<&'t StreamUses>,
    memory: Option<&'t StreamUses>,
}

/// A surface object's handle, what a kernel's `cudaSurfaceObject_t` parameter takes: borrowed
/// from a [`Surface`] ([`Surface::object`]).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct SurfaceObject<'s> {
    /// First, as in [`TextureObject`].
    raw: u64,
    object: Option<&'s StreamUses>,
    memory: Option<&'s StreamUses>,
}

macro_rules! object_common {
    ($ty:ident, $what:literal, $memory_access:ident) => {
        impl $ty<'static> {
            #[doc = concat!("A handle to a ", $what, " object this crate did not make (from raw driver calls or another library), for kernels to take.")]
            ///
            /// # Safety
            #[doc = concat!("`raw` is a live ", $what, " object of the kernel's context, and it and the memory it reads or writes stay alive, and are not written by other work (or, for a surface, used by other work at all) unless the caller orders the two, until every launch given this handle has finished.")]
            pub unsafe fn from_raw(raw: u64) -> $ty<'static> {
                $ty {
                    raw,
                    object: None,
                    memory: None,
                }
            }
        }

        impl $ty<'_> {
            /// The 64-bit handle the kernel receives (e.g. to store in device memory for bindless
            /// access: the crate cannot see such uses, so order and keep them alive yourself).
            pub fn raw(&self) -> u64 {
                self.raw
            }
        }

        impl std::fmt::Debug for $ty<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:#x})", stringify!($ty), self.raw)
            }
        }

        impl $ty<'_> {
            /// Orders a launch on `stream` that takes this handle after the uses of the memory
            /// behind it, and keeps the object (and the memory) alive until the launch ran.
            #[inline]
            pub(crate) fn order_on(&self, stream: &Arc<StreamInner>) -> Result<()> {
                if let Some(o) = self.object {
                    o.read_on(stream)?;
                }
                match self.memory {
                    Some(m) => m.$memory_access(stream),
                    None => Ok(()),
                }
            }
        }
    };
}
object_common!(TextureObject, "texture", read_on);
// A surface object is a shared handle: threads may launch writes through it at once.
object_common!(SurfaceObject, "surface", write_shared_on);

/// What happens to coordinates outside the texture (PyCUDA's `address_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AddressMode {
    /// Wrap around (normalised coordinates only).
    Wrap,
    /// Clamp to the edge.
    #[default]
    Clamp,
    /// Mirror (normalised coordinates only).
    Mirror,
    /// Return the border colour.
    Border,
}

/// How texels are filtered (PyCUDA's `filter_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FilterMode {
    /// The nearest texel.
    #[default]
    Point,
    /// Linear interpolation between neighbouring texels (float results only).
    Linear,
}

/// How a texture is sampled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextureDesc {
    /// Address mode for x, y and z.
    pub address_mode: [AddressMode; 3],
    /// Filtering.
    pub filter_mode: FilterMode,
    /// Coordinates in `[0, 1)` instead of `[0, width)`.
    pub normalized_coords: bool,
    /// Integer formats are read as integers (true) or as floats normalised to `[0, 1]` /
    /// `[-1, 1]` (false).
    pub read_as_integer: bool,
    /// The colour returned outside the texture with [`AddressMode::Border`].
    pub border_color: [f32; 4],
}

impl Default for TextureDesc {
    /// Clamped, point-sampled, unnormalised coordinates, integers read as integers.
    fn default() -> Self {
        TextureDesc {
            address_mode: [AddressMode::Clamp; 3],
            filter_mode: FilterMode::Point,
            normalized_coords: false,
            read_as_integer: true,
            border_color: [0.0; 4],
        }
    }
}

impl TextureDesc {
    fn raw(&self) -> sys::CUDA_TEXTURE_DESC {
        let mut d = sys::CUDA_TEXTURE_DESC {
            addressMode: [sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3],
            filterMode: sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT,
            flags: 0,
            maxAnisotropy: 0,
            mipmapFilterMode: sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT,
            mipmapLevelBias: 0.0,
            minMipmapLevelClamp: 0.0,
            maxMipmapLevelClamp: 0.0,
            borderColor: [0.0; 4],
            reserved: [0; 12],
        };
        for (raw, mode) in d.addressMode.iter_mut().zip(self.address_mode) {
            *raw = match mode {
                AddressMode::Wrap => sys::CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP,
                AddressMode::Clamp => sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP,
                AddressMode::Mirror => sys::CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR,
                AddressMode::Border => sys::CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER,
            };
        }
        d.filterMode = match self.filter_mode {
            FilterMode::Point => sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT,
            FilterMode::Linear => sys::CUfilter_mode::CU_TR_FILTER_MODE_LINEAR,
        };
        d.flags = if self.normalized_coords {
            sys::CU_TRSF_NORMALIZED_COORDINATES
        } else {
            0
        } | if self.read_as_integer {
            sys::CU_TRSF_READ_AS_INTEGER
        } else {
            0
        };
        d.borderColor = self.border_color;
        d
    }
}

/// A texture object over memory borrowed for `'a`; destroyed when dropped, once the launches
/// given its handle have finished.
pub struct Texture<'a> {
    raw: sys::CUtexObject,
    ctx: Context,
    /// The launches given the handle.
    uses: StreamUses,
    /// The record of the memory it reads, when this crate tracks it.
    memory: Option<&'a StreamUses>,
}

impl std::fmt::Debug for Texture<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Texture({:#x})", self.raw)
    }
}

fn resource_desc(res_type: sys::CUresourcetype) -> sys::CUDA_RESOURCE_DESC {
    sys::CUDA_RESOURCE_DESC {
        resType: res_type,
        res: sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1 {
            reserved: sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_5 { reserved: [0; 32] },
        },
        flags: 0,
    }
}

/// The device's texture alignment in bytes: where linear textures must start.
fn texture_alignment(ctx: &Context) -> Result<u64> {
    Ok(ctx
        .device()
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)?
        .max(1) as u64)
}

/// Where a linear texture over memory starting at `ptr` starts (the highest multiple of
/// `align` at or below it), and the index of the memory's first element in the texture.
fn aligned_start<T>(ptr: u64, align: u64) -> Result<(u64, usize)> {
    let start = ptr - ptr % align;
    let size = std::mem::size_of::<T>() as u64;
    let gap = ptr - start;
    if size == 0 || !gap.is_multiple_of(size) {
        return Err(TextureError::LinearOffset {
            address: ptr,
            gap,
            align,
            element_bytes: size,
        }
        .into());
    }
    Ok((start, (gap / size) as usize))
}

/// Refuses a sampler that would not give back the bits of a [`ArrayElement::BIT_CAST`] element.
fn check_bit_cast<T: ArrayElement>(desc: &TextureDesc, operation: &'static str) -> Result<()> {
    if T::BIT_CAST && (desc.filter_mode != FilterMode::Point || !desc.read_as_integer) {
        return Err(TextureError::BitCastSampling {
            operation,
            rust_type: std::any::type_name::<T>(),
        }
        .into());
    }
    Ok(())
}

impl<'a> Texture<'a> {
    fn create(
        ctx: &Context,
        res: &sys::CUDA_RESOURCE_DESC,
        desc: &TextureDesc,
        memory: Option<&'a StreamUses>,
    ) -> Result<Texture<'a>> {
        let tex = desc.raw();
        ctx.bind()?;
        // SAFETY: the memory the descriptors name is borrowed for 'a.
        let raw = unsafe { calls::tex_object_create(res, &tex) }?;
        Ok(Texture {
            raw,
            ctx: ctx.clone(),
            uses: StreamUses::new(),
            memory,
        })
    }

    /// A texture reading a CUDA array (`tex1D`, `tex2D`, `tex3D` in the kernel). An array of
    /// `f64` or [`Complex64`](crate::types::Complex64) elements keeps their bits in `int2` or
    /// `int4` texels: read it with the default point sampling and integer reads, through
    /// `fp_tex2D<double>(tex, x, y)` and the like from `<gpu_runtime/texture_fetch.h>`.
    pub fn from_array(array: &'a CudaArray, desc: &TextureDesc) -> Result<Texture<'a>> {
        let mut res = resource_desc(sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY);
        res.res.array.hArray = array.raw();
        Self::create(array.context(), &res, desc, Some(&array.uses))
    }

    /// A texture reading linear device memory (`tex1Dfetch` in the kernel). The memory must start
    /// at a multiple of the device's texture alignment ([`crate::driver::DeviceAttribute::TextureAlignment`],
    /// 512 bytes on current GPUs), as a whole allocation does; a misaligned start (a view at an
    /// offset) is [`TextureError::LinearMisaligned`](crate::error::TextureError::LinearMisaligned): bind such a view with
    /// [`from_linear_offset`](Self::from_linear_offset).
    pub fn from_linear<T: ArrayElement>(
        memory: &'a (impl DeviceRead<T> + ?Sized),
        desc: &TextureDesc,
    ) -> Result<Texture<'a>> {
        let memory = memory.device_view();
        let align = texture_alignment(memory.context())?;
        if memory.device_ptr() % align != 0 {
            // The driver refuses a misaligned start with a bare CUDA_ERROR_INVALID_VALUE; say why.
            return Err(TextureError::LinearMisaligned {
                address: memory.device_ptr(),
                align,
            }
            .into());
        }
        Self::linear::<T>(&memory, memory.device_ptr(), desc, "Texture::from_linear")
    }

    /// A texture reading linear device memory that may start anywhere (PyCUDA's
    /// `TextureReference.set_address(ptr, bytes, allow_offset=True)`): the texture starts at the
    /// highest multiple of the texture alignment at or below the memory's first element, and
    /// the call returns that element's index in the texture, so that the kernel reads element
    /// `i` of the memory at `tex1Dfetch<T>(tex, i + offset)`.
    ///
    /// This reads a view at any offset of a buffer (one row of a matrix, a window into a larger
    /// array) in place, without a copy into a fresh allocation; the texels before `offset`
    /// are not the memory's, and a kernel must not fetch them.
    ///
    /// ```no_run
    /// use gpu_runtime::{kernel, Context, driver::Texture, driver::TextureDesc, driver::TextureObject};
    ///
    /// #[kernel(r#"
    /// __global__ void gather(cudaTextureObject_t tex, int offset, float *out, int n) {
    ///     int i = blockIdx.x * blockDim.x + threadIdx.x;
    ///     if (i < n) out[i] = tex1Dfetch<float>(tex, i + offset);
    /// }"#)]
    /// fn gather(tex: TextureObject, offset: i32, #[Out] out: &mut [f32], n: i32);
    ///
    /// # fn main() -> gpu_runtime::Result<()> {
    /// let ctx = Context::default()?;
    /// let all: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    /// let buf = ctx.to_device(&all)?;
    /// let window = buf.slice(3..903)?; // 12 bytes in: not texture-aligned
    /// let (tex, offset) = Texture::from_linear_offset(&window, &TextureDesc::default())?;
    /// let mut out = vec![0f32; 900];
    /// gather(&ctx, 4, 256, tex.object(), offset as i32, &mut out, 900)?;
    /// assert_eq!(out, &all[3..903]);
    /// # Ok(()) }
    /// ```
    pub fn from_linear_offset<T: ArrayElement>(
        memory: &'a (impl DeviceRead<T> + ?Sized),
        desc: &TextureDesc,
    ) -> Result<(Texture<'a>, usize)> {
        let memory = memory.device_view();
        let (start, offset) = aligned_start::<T>(memory.device_ptr(), texture_alignment(memory.context())?)?;
        let texture = Self::linear::<T>(&memory, start, desc, "Texture::from_linear_offset")?;
        Ok((texture, offset))
    }

    /// A linear texture from `start` (at or below the memory's first element) to the memory's
    /// end.
    fn linear<T: ArrayElement>(
        memory: &DeviceView<'a, T>,
        start: sys::CUdeviceptr,
        desc: &TextureDesc,
        operation: &'static str,
    ) -> Result<Texture<'a>> {
        check_bit_cast::<T>(desc, operation)?;
        let mut res = resource_desc(sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR);
        res.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
            devPtr: start,
            format: T::FORMAT.raw(),
            numChannels: T::CHANNELS,
            sizeInBytes: (memory.device_ptr() - start) as usize + memory.len() * std::mem::size_of::<T>(),
        };
        Self::create(memory.context(), &res, desc, memory.uses())
    }

    /// A 2D texture reading pitched device memory (`tex2D` in the kernel).
    pub fn from_pitched<T: ArrayElement>(
        memory: &'a PitchedBuffer<T>,
        desc: &TextureDesc,
    ) -> Result<Texture<'a>> {
        check_bit_cast::<T>(desc, "Texture::from_pitched")?;
        let mut res = resource_desc(sys::CUresourcetype::CU_RESOURCE_TYPE_PITCH2D);
        res.res.pitch2D = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4 {
            devPtr: memory.device_ptr(),
            format: T::FORMAT.raw(),
            numChannels: T::CHANNELS,
            width: memory.width(),
            height: memory.height(),
            pitchInBytes: memory.pitch(),
        };
        Self::create(memory.context(), &res, desc, memory.device_view().uses())
    }

    /// The handle to pass to a kernel's `cudaTextureObject_t` parameter.
    pub fn object(&self) -> TextureObject<'_> {
        TextureObject {
            raw: self.raw,
            object: Some(&self.uses),
            memory: self.memory,
        }
    }
}

impl Drop for Texture<'_> {
    fn drop(&mut self) {
        // Destroyed once the launches given the handle have finished.
        self.ctx.release_after(&mut self.uses, Release::Texture(self.raw));
    }
}

/// A surface object over a CUDA array borrowed for `'a`, exclusively (kernels write it);
/// destroyed when dropped, once the launches given its handle have finished.
///
/// Kernels write the array through it (`surf2Dwrite`), so the array must have been created
/// with [`ArrayFlags::SURFACE_LDST`].
///
/// ```no_run
/// use gpu_runtime::{kernel, driver::ArrayDescriptor, driver::ArrayFlags, Context, driver::CudaArray};
/// use gpu_runtime::{driver::Surface, driver::SurfaceObject};
///
/// #[kernel(r#"
/// __global__ void ramp(cudaSurfaceObject_t surf, int w, int h) {
///     int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
///     // x is a byte offset for surfaces, unlike for textures.
///     if (x < w && y < h) surf2Dwrite((float)(y * w + x), surf, x * (int)sizeof(float), y);
/// }"#)]
/// fn ramp(surf: SurfaceObject, w: i32, h: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let desc = ArrayDescriptor::new_2d::<f32>(64, 32).with_flags(ArrayFlags::SURFACE_LDST);
/// let mut array = CudaArray::new(&ctx, desc)?;
/// let surface = Surface::new(&mut array)?;
/// ramp(&ctx, (1, 32), 64, surface.object(), 64, 32)?;
/// drop(surface);
/// let want: Vec<f32> = (0..64 * 32).map(|i| i as f32).collect();
/// assert_eq!(array.to_vec::<f32>()?, want);
/// # Ok(()) }
/// ```
pub struct Surface<'a> {
    raw: sys::CUsurfObject,
    ctx: Context,
    /// The launches given the handle.
    uses: StreamUses,
    /// The record of the array it writes.
    array: &'a StreamUses,
}

impl std::fmt::Debug for Surface<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Surface({:#x})", self.raw)
    }
}

impl<'a> Surface<'a> {
    /// A surface over `array`, which needs [`ArrayFlags::SURFACE_LDST`].
    pub fn new(array: &'a mut CudaArray) -> Result<Surface<'a>> {
        if !array.descriptor().flags.contains(ArrayFlags::SURFACE_LDST) {
            return Err(TextureError::NotSurfaceArray {
                flags: array.descriptor().flags.bits(),
            }
            .into());
        }
        let mut res = resource_desc(sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY);
        res.res.array.hArray = array.raw();
        array.context().bind()?;
        // SAFETY: the array is borrowed for 'a.
        let raw = unsafe { calls::surf_object_create(&res) }?;
        Ok(Surface {
            raw,
            ctx: array.context().clone(),
            uses: StreamUses::new(),
            array: &array.uses,
        })
    }

    /// The handle to pass to a kernel's `cudaSurfaceObject_t` parameter.
    pub fn object(&self) -> SurfaceObject<'_> {
        SurfaceObject {
            raw: self.raw,
            object: Some(&self.uses),
            memory: Some(self.array),
        }
    }
}

impl Drop for Surface<'_> {
    fn drop(&mut self) {
        // Destroyed once the launches given the handle have finished.
        self.ctx.release_after(&mut self.uses, Release::Surface(self.raw));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Complex64;

    #[test]
    fn offsets_count_elements_back_to_the_aligned_address_below() {
        assert_eq!(aligned_start::<f32>(0x7000_0200, 512).unwrap(), (0x7000_0200, 0));
        assert_eq!(aligned_start::<f32>(0x7000_020c, 512).unwrap(), (0x7000_0200, 3));
        assert_eq!(aligned_start::<f64>(0x7000_03f8, 512).unwrap(), (0x7000_0200, 63));
        assert_eq!(
            aligned_start::<Complex64>(0x7000_0410, 512).unwrap(),
            (0x7000_0400, 1)
        );
        // Not a whole number of elements from the aligned address: no offset reaches it.
        let e = aligned_start::<[f32; 4]>(0x7000_0208, 512).unwrap_err();
        assert!(
            matches!(
                e,
                crate::error::Error::Texture(TextureError::LinearOffset {
                    address: 0x7000_0208,
                    gap: 8,
                    align: 512,
                    element_bytes: 16,
                })
            ),
            "{e}"
        );
    }

    #[test]
    fn bit_cast_elements_need_unfiltered_integer_reads() {
        let point = TextureDesc::default();
        let linear = TextureDesc {
            filter_mode: FilterMode::Linear,
            ..point
        };
        let as_float = TextureDesc {
            read_as_integer: false,
            ..point
        };
        assert!(check_bit_cast::<f64>(&point, "t").is_ok());
        assert!(check_bit_cast::<Complex64>(&point, "t").is_ok());
        for bad in [&linear, &as_float] {
            let e = check_bit_cast::<f64>(bad, "t").unwrap_err();
            assert!(
                matches!(
                    e,
                    crate::error::Error::Texture(TextureError::BitCastSampling {
                        operation: "t",
                        rust_type: "f64",
                    })
                ),
                "{e}"
            );
            // The message names the fix (a message test).
            assert!(e.to_string().contains("FilterMode::Point"), "{e}");
            assert!(check_bit_cast::<Complex64>(bad, "t").is_err());
        }
        // Floats and float2 complex numbers filter as they are.
        assert!(check_bit_cast::<f32>(&linear, "t").is_ok());
        assert!(check_bit_cast::<crate::types::Complex32>(&linear, "t").is_ok());
    }
}
