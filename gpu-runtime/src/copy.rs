//! Structured copies: rectangles and boxes between host memory, device memory and CUDA arrays
//! (PyCUDA's `Memcpy2D` and `Memcpy3D`).
//!
//! A copy is built, checked, then run. Every end is borrowed for the builder's lifetime, and
//! every extent is checked against the memory it touches before the driver is called:
//!
//! ```no_run
//! use gpu_runtime::{Context, Memcpy2D};
//! let ctx = Context::default()?;
//! let host: Vec<f32> = (0..64 * 48).map(|i| i as f32).collect(); // 48 rows of 64
//! let mut dev = ctx.alloc_pitch::<f32>(16, 8)?;
//! let pitch = dev.pitch();
//! // The 16 x 8 block whose top-left corner is column 10, row 20 of the host image.
//! Memcpy2D::new(16 * 4, 8)
//!     .src_host(&host, 64 * 4)
//!     .src_pos(10 * 4, 20)
//!     .dst_device(&mut dev, pitch)
//!     .call()?;
//! # Ok::<(), gpu_runtime::Error>(())
//! ```

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::array::CudaArray;
use crate::context::Context;
use crate::error::{check, Error, Result};
use crate::memory::{DeviceRead, DeviceView, DeviceWrite};
use crate::ordering::{StreamInner, StreamUses};
use crate::repr::DeviceRepr;
use crate::stream::Stream;

enum End<'a> {
    Unset,
    Host {
        ptr: *mut c_void,
        bytes: usize,
    },
    Device {
        ptr: sys::CUdeviceptr,
        bytes: usize,
        ctx: Context,
        uses: Option<&'a StreamUses>,
    },
    Array {
        raw: sys::CUarray,
        width_bytes: usize,
        height: usize,
        depth: usize,
        ctx: Context,
        uses: &'a StreamUses,
    },
}

struct Side<'a> {
    end: End<'a>,
    x: usize,
    y: usize,
    z: usize,
    pitch: usize,
    /// Rows per slice (3D linear memory only).
    rows: usize,
}

impl<'a> Side<'a> {
    const fn new() -> Side<'a> {
        Side {
            end: End::Unset,
            x: 0,
            y: 0,
            z: 0,
            pitch: 0,
            rows: 0,
        }
    }

    fn context(&self) -> Option<&Context> {
        match &self.end {
            End::Device { ctx, .. } | End::Array { ctx, .. } => Some(ctx),
            _ => None,
        }
    }

    /// The record of the streams that use this end's memory, when this crate tracks it.
    fn uses(&self) -> Option<&'a StreamUses> {
        match self.end {
            End::Device { uses, .. } => uses,
            End::Array { uses, .. } => Some(uses),
            _ => None,
        }
    }

    fn check(&self, which: &'static str, op: &'static str, w: usize, h: usize, d: usize) -> Result<()> {
        let bad = |detail: String| {
            Err(Error::SizeMismatch {
                operation: op,
                detail,
            })
        };
        match &self.end {
            End::Unset => Err(Error::InvalidArgument {
                operation: op,
                detail: format!("no {which} was given"),
            }),
            End::Host { bytes, .. } | End::Device { bytes, .. } => {
                if w == 0 || h == 0 || d == 0 {
                    return Ok(());
                }
                let row_end = self.x.saturating_add(w);
                if (h > 1 || d > 1) && row_end > self.pitch {
                    return bad(format!(
                        "the {which}'s rows are {} bytes apart but the copy reads bytes {}..{row_end} of each row",
                        self.pitch, self.x
                    ));
                }
                let rows = if d > 1 { self.rows } else { usize::MAX };
                if d > 1 && self.y + h > rows {
                    return bad(format!(
                        "the {which} has {rows} rows per slice but the copy covers rows {}..{}",
                        self.y,
                        self.y + h
                    ));
                }
                let slice_rows = if d > 1 { self.rows } else { 0 };
                let last_row = (self.z + d - 1)
                    .checked_mul(slice_rows)
                    .and_then(|r| r.checked_add(self.y + h - 1));
                let need = last_row
                    .and_then(|r| r.checked_mul(self.pitch))
                    .and_then(|b| b.checked_add(row_end))
                    .unwrap_or(usize::MAX);
                if need > *bytes {
                    return bad(format!(
                        "the copy of {d} x {h} rows of {w} bytes at ({}, {}, {}) with a pitch of {} bytes reaches byte {need} but the {which} holds {bytes} bytes",
                        self.x, self.y, self.z, self.pitch
                    ));
                }
                Ok(())
            }
            End::Array {
                width_bytes,
                height,
                depth,
                ..
            } => {
                let (ah, ad) = ((*height).max(1), (*depth).max(1));
                if self.x + w > *width_bytes || self.y + h > ah || self.z + d > ad {
                    return bad(format!(
                        "the copy of {w} bytes x {h} rows x {d} slices at ({}, {}, {}) does not fit the {which} array of {width_bytes} bytes x {ah} rows x {ad} slices",
                        self.x, self.y, self.z
                    ));
                }
                Ok(())
            }
        }
    }

    fn kind(&self) -> (sys::CUmemorytype, *mut c_void, sys::CUdeviceptr, sys::CUarray) {
        use sys::CUmemorytype::*;
        match &self.end {
            End::Host { ptr, .. } => (CU_MEMORYTYPE_HOST, *ptr, 0, std::ptr::null_mut()),
            End::Device { ptr, .. } => (
                CU_MEMORYTYPE_DEVICE,
                std::ptr::null_mut(),
                *ptr,
                std::ptr::null_mut(),
            ),
            End::Array { raw, .. } => (CU_MEMORYTYPE_ARRAY, std::ptr::null_mut(), 0, *raw),
            End::Unset => (CU_MEMORYTYPE_HOST, std::ptr::null_mut(), 0, std::ptr::null_mut()),
        }
    }
}

fn host_end<'a, T>(host: *const T, len: usize) -> End<'a> {
    End::Host {
        ptr: host as *mut c_void,
        bytes: len * std::mem::size_of::<T>(),
    }
}

fn device_end<T: DeviceRepr>(d: DeviceView<'_, T>) -> End<'_> {
    End::Device {
        ptr: d.device_ptr(),
        bytes: d.len() * std::mem::size_of::<T>(),
        ctx: d.context().clone(),
        uses: d.uses(),
    }
}

fn array_end(a: &CudaArray) -> End<'_> {
    let desc = a.descriptor();
    End::Array {
        raw: a.raw(),
        width_bytes: desc.width * desc.element_bytes(),
        height: desc.height,
        depth: desc.depth,
        ctx: a.context().clone(),
        uses: &a.uses,
    }
}

/// Orders a copy on `stream` after the uses of both ends: it reads the source and writes the
/// destination.
fn order_on(src: &Side<'_>, dst: &Side<'_>, stream: &Arc<StreamInner>) -> Result<()> {
    if let Some(u) = src.uses() {
        u.read_on(stream)?;
    }
    if let Some(u) = dst.uses() {
        u.write_on(stream)?;
    }
    Ok(())
}

/// The context both ends' device memory lives in, bound; an error when they differ or when
/// neither end is on the device.
fn bind_common<'s>(op: &'static str, src: &'s Side<'_>, dst: &'s Side<'_>) -> Result<&'s Context> {
    let ctx = match (src.context(), dst.context()) {
        (Some(a), Some(b)) if a != b => {
            return Err(Error::WrongContext {
                what: "one end of the structured copy",
            });
        }
        (Some(c), _) | (None, Some(c)) => c,
        (None, None) => {
            return Err(Error::InvalidArgument {
                operation: op,
                detail: "both ends are host memory; copy the slices on the host instead".to_owned(),
            });
        }
    };
    ctx.bind()?;
    Ok(ctx)
}

/// `stream` after checking it belongs to `ctx`, or `ctx`'s legacy default stream.
fn ordered_stream<'s>(ctx: &'s Context, stream: Option<&'s Stream>) -> Result<&'s Arc<StreamInner>> {
    match stream {
        None => Ok(ctx.legacy()),
        Some(s) if s.context() == ctx => Ok(s.inner()),
        Some(_) => Err(Error::WrongContext { what: "the stream" }),
    }
}

macro_rules! ends {
    ($ty:ident) => {
        impl<'a> $ty<'a> {
            /// Copies from host memory whose rows are `pitch` bytes apart.
            pub fn src_host<T: DeviceRepr>(mut self, host: &'a [T], pitch: usize) -> Self {
                self.src.end = host_end(host.as_ptr(), host.len());
                self.src.pitch = pitch;
                self
            }

            /// Copies into host memory whose rows are `pitch` bytes apart.
            pub fn dst_host<T: DeviceRepr>(mut self, host: &'a mut [T], pitch: usize) -> Self {
                self.dst.end = host_end(host.as_mut_ptr(), host.len());
                self.dst.pitch = pitch;
                self
            }

            /// Copies from device memory whose rows are `pitch` bytes apart.
            pub fn src_device<T: DeviceRepr>(
                mut self,
                dev: &'a (impl DeviceRead<T> + ?Sized),
                pitch: usize,
            ) -> Self {
                self.src.end = device_end(dev.device_view());
                self.src.pitch = pitch;
                self
            }

            /// Copies into device memory whose rows are `pitch` bytes apart.
            pub fn dst_device<T: DeviceRepr>(
                mut self,
                dev: &'a mut (impl DeviceWrite<T> + ?Sized),
                pitch: usize,
            ) -> Self {
                self.dst.end = device_end(dev.device_view());
                self.dst.pitch = pitch;
                self
            }

            /// Copies from a CUDA array.
            pub fn src_array(mut self, array: &'a CudaArray) -> Self {
                self.src.end = array_end(array);
                self
            }

            /// Copies into a CUDA array.
            pub fn dst_array(mut self, array: &'a mut CudaArray) -> Self {
                self.dst.end = array_end(array);
                self
            }
        }
    };
}

/// A 2D copy of `height` rows of `width_bytes` bytes (PyCUDA's `Memcpy2D`).
pub struct Memcpy2D<'a> {
    src: Side<'a>,
    dst: Side<'a>,
    width: usize,
    height: usize,
    _ends: PhantomData<&'a mut ()>,
}

ends!(Memcpy2D);

impl<'a> Memcpy2D<'a> {
    /// A copy of `height` rows of `width_bytes` bytes; set a source and a destination next.
    pub fn new(width_bytes: usize, height: usize) -> Self {
        Memcpy2D {
            src: Side::new(),
            dst: Side::new(),
            width: width_bytes,
            height,
            _ends: PhantomData,
        }
    }

    /// Where the copy starts in the source: byte `x_bytes` of row `y`.
    pub fn src_pos(mut self, x_bytes: usize, y: usize) -> Self {
        (self.src.x, self.src.y) = (x_bytes, y);
        self
    }

    /// Where the copy starts in the destination: byte `x_bytes` of row `y`.
    pub fn dst_pos(mut self, x_bytes: usize, y: usize) -> Self {
        (self.dst.x, self.dst.y) = (x_bytes, y);
        self
    }

    fn copies_nothing(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    /// The driver's description of the copy, after checking both ends hold the whole
    /// rectangle; orders it on `stream` (the common context's legacy stream when `None`).
    /// Empty copies are only checked.
    fn prepare(&self, stream: Option<&Stream>) -> Result<sys::CUDA_MEMCPY2D> {
        let op = "Memcpy2D";
        self.src.check("source", op, self.width, self.height, 1)?;
        self.dst.check("destination", op, self.width, self.height, 1)?;
        let ctx = bind_common(op, &self.src, &self.dst)?;
        if !self.copies_nothing() {
            order_on(&self.src, &self.dst, ordered_stream(ctx, stream)?)?;
            ctx.bind()?;
        }
        let (st, sh, sd, sa) = self.src.kind();
        let (dt, dh, dd, da) = self.dst.kind();
        Ok(sys::CUDA_MEMCPY2D {
            srcXInBytes: self.src.x,
            srcY: self.src.y,
            srcMemoryType: st,
            srcHost: sh,
            srcDevice: sd,
            srcArray: sa,
            srcPitch: self.src.pitch,
            dstXInBytes: self.dst.x,
            dstY: self.dst.y,
            dstMemoryType: dt,
            dstHost: dh,
            dstDevice: dd,
            dstArray: da,
            dstPitch: self.dst.pitch,
            WidthInBytes: self.width,
            Height: self.height,
        })
    }

    /// Runs the copy (on the legacy default stream, after the other work on its ends) and
    /// waits for it.
    pub fn call(self) -> Result<()> {
        let p = self.prepare(None)?;
        if self.copies_nothing() {
            return Ok(());
        }
        // SAFETY: every end was checked to hold the whole rectangle, and stays borrowed until
        // the copy has finished.
        check("cuMemcpy2D", unsafe { sys::cuMemcpy2D_v2(&p) })
    }

    /// [`call`](Self::call) for a device-to-device copy whose pitches or offsets the driver's
    /// aligned copy refuses (PyCUDA's `Memcpy2D(aligned=False)`; `cuMemcpy2DUnaligned`): slower,
    /// but any alignment goes.
    pub fn call_unaligned(self) -> Result<()> {
        let p = self.prepare(None)?;
        if self.copies_nothing() {
            return Ok(());
        }
        // SAFETY: as in call.
        check("cuMemcpy2DUnaligned", unsafe { sys::cuMemcpy2DUnaligned_v2(&p) })
    }

    /// Queues the copy on `stream`, after the other work on its device and array ends (which
    /// stay allocated until it has run).
    ///
    /// # Safety
    /// Host memory at either end must stay alive (and, as a destination, untouched) until the
    /// copy has finished: the borrows end when this function returns, the copy may not.
    pub unsafe fn call_async(self, stream: &Stream) -> Result<()> {
        let p = self.prepare(Some(stream))?;
        if self.copies_nothing() {
            return Ok(());
        }
        stream.context().bind()?;
        // SAFETY: as in call; the caller keeps host memory alive until the copy completes.
        check("cuMemcpy2DAsync", unsafe {
            sys::cuMemcpy2DAsync_v2(&p, stream.raw())
        })
    }
}

/// A 3D copy of `depth` slices of `height` rows of `width_bytes` bytes (PyCUDA's `Memcpy3D`,
/// and with [`call_peer`](Self::call_peer) its `Memcpy3DPeer`).
///
/// Linear memory at either end is described by its pitch (bytes per row) and its rows per
/// slice ([`src_height`](Self::src_height), [`dst_height`](Self::dst_height)).
pub struct Memcpy3D<'a> {
    src: Side<'a>,
    dst: Side<'a>,
    width: usize,
    height: usize,
    depth: usize,
    _ends: PhantomData<&'a mut ()>,
}

ends!(Memcpy3D);

impl<'a> Memcpy3D<'a> {
    /// A copy of `depth` slices of `height` rows of `width_bytes` bytes.
    pub fn new(width_bytes: usize, height: usize, depth: usize) -> Self {
        Memcpy3D {
            src: Side::new(),
            dst: Side::new(),
            width: width_bytes,
            height,
            depth,
            _ends: PhantomData,
        }
    }

    /// Rows per slice of linear source memory.
    pub fn src_height(mut self, rows: usize) -> Self {
        self.src.rows = rows;
        self
    }

    /// Rows per slice of linear destination memory.
    pub fn dst_height(mut self, rows: usize) -> Self {
        self.dst.rows = rows;
        self
    }

    /// Where the copy starts in the source: byte `x_bytes` of row `y` of slice `z`.
    pub fn src_pos(mut self, x_bytes: usize, y: usize, z: usize) -> Self {
        (self.src.x, self.src.y, self.src.z) = (x_bytes, y, z);
        self
    }

    /// Where the copy starts in the destination: byte `x_bytes` of row `y` of slice `z`.
    pub fn dst_pos(mut self, x_bytes: usize, y: usize, z: usize) -> Self {
        (self.dst.x, self.dst.y, self.dst.z) = (x_bytes, y, z);
        self
    }

    fn copies_nothing(&self) -> bool {
        self.width == 0 || self.height == 0 || self.depth == 0
    }

    /// The copy's description, ordered on `stream` (the common context's legacy stream when
    /// `None`); empty copies are only checked.
    fn prepare(&self, stream: Option<&Stream>) -> Result<sys::CUDA_MEMCPY3D> {
        let p = self.params("Memcpy3D")?;
        let ctx = bind_common("Memcpy3D", &self.src, &self.dst)?;
        if !self.copies_nothing() {
            order_on(&self.src, &self.dst, ordered_stream(ctx, stream)?)?;
            ctx.bind()?;
        }
        Ok(p)
    }

    /// The driver's description of the copy, after checking both ends hold the whole box.
    fn params(&self, op: &'static str) -> Result<sys::CUDA_MEMCPY3D> {
        self.src
            .check("source", op, self.width, self.height, self.depth)?;
        self.dst
            .check("destination", op, self.width, self.height, self.depth)?;
        let (st, sh, sd, sa) = self.src.kind();
        let (dt, dh, dd, da) = self.dst.kind();
        Ok(sys::CUDA_MEMCPY3D {
            srcXInBytes: self.src.x,
            srcY: self.src.y,
            srcZ: self.src.z,
            srcLOD: 0,
            srcMemoryType: st,
            srcHost: sh,
            srcDevice: sd,
            srcArray: sa,
            reserved0: std::ptr::null_mut(),
            srcPitch: self.src.pitch,
            srcHeight: self.src.rows,
            dstXInBytes: self.dst.x,
            dstY: self.dst.y,
            dstZ: self.dst.z,
            dstLOD: 0,
            dstMemoryType: dt,
            dstHost: dh,
            dstDevice: dd,
            dstArray: da,
            reserved1: std::ptr::null_mut(),
            dstPitch: self.dst.pitch,
            dstHeight: self.dst.rows,
            WidthInBytes: self.width,
            Height: self.height,
            Depth: self.depth,
        })
    }

    /// Runs the copy (on the legacy default stream, after the other work on its ends) and
    /// waits for it.
    pub fn call(self) -> Result<()> {
        let p = self.prepare(None)?;
        if self.copies_nothing() {
            return Ok(());
        }
        // SAFETY: every end was checked to hold the whole box, and stays borrowed until the
        // copy has finished.
        check("cuMemcpy3D", unsafe { sys::cuMemcpy3D_v2(&p) })
    }

    /// Queues the copy on `stream`, after the other work on its device and array ends (which
    /// stay allocated until it has run).
    ///
    /// # Safety
    /// Host memory at either end must stay alive (and, as a destination, untouched) until the
    /// copy has finished.
    pub unsafe fn call_async(self, stream: &Stream) -> Result<()> {
        let p = self.prepare(Some(stream))?;
        if self.copies_nothing() {
            return Ok(());
        }
        stream.context().bind()?;
        // SAFETY: as in call; the caller keeps host memory alive until the copy completes.
        check("cuMemcpy3DAsync", unsafe {
            sys::cuMemcpy3DAsync_v2(&p, stream.raw())
        })
    }

    /// Runs the copy between ends in two contexts, e.g. on two GPUs, and waits for it
    /// (PyCUDA's `Memcpy3DPeer`; each end brings its own context, so there is no
    /// `set_src_context`). Like [`memcpy_peer`](crate::memcpy_peer), it needs no peer access.
    ///
    /// ```no_run
    /// use gpu_runtime::{Context, Device, Memcpy3D};
    /// let (a, b) = (Context::new(Device::new(0)?)?, Context::new(Device::new(1)?)?);
    /// let src = a.to_device(&vec![1.0f32; 8 * 4 * 2])?; // 2 slices of 4 rows of 8
    /// let mut dst = b.alloc_zeros::<f32>(8 * 4 * 2)?;
    /// Memcpy3D::new(8 * 4, 4, 2)
    ///     .src_device(&src, 8 * 4)
    ///     .src_height(4)
    ///     .dst_device(&mut dst, 8 * 4)
    ///     .dst_height(4)
    ///     .call_peer()?;
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn call_peer(self) -> Result<()> {
        let p = self.peer_params(None)?;
        if self.copies_nothing() {
            return Ok(());
        }
        // SAFETY: every end was checked to hold the whole box, and stays borrowed until the
        // copy has finished; both contexts are alive (the ends hold them).
        check("cuMemcpy3DPeer", unsafe { sys::cuMemcpy3DPeer(&p) })
    }

    /// [`call_peer`](Self::call_peer) queued on `stream`, a stream of the destination's
    /// context.
    ///
    /// # Safety
    /// Host memory at either end must stay alive (and, as a destination, untouched) until the
    /// copy has finished.
    pub unsafe fn call_peer_async(self, stream: &Stream) -> Result<()> {
        let p = self.peer_params(Some(stream))?;
        if self.copies_nothing() {
            return Ok(());
        }
        // SAFETY: as in call_peer; the caller keeps host memory alive until the copy completes.
        check("cuMemcpy3DPeerAsync", unsafe {
            sys::cuMemcpy3DPeerAsync(&p, stream.raw())
        })
    }

    /// The peer copy's description: each end's context is its own, or the other end's for
    /// host memory; the destination's context is made current. The copy is ordered on
    /// `stream`, which must belong to the destination's context (its legacy stream when
    /// `None`).
    fn peer_params(&self, stream: Option<&Stream>) -> Result<sys::CUDA_MEMCPY3D_PEER> {
        let op = "Memcpy3D::call_peer";
        let p = self.params(op)?;
        let (src_ctx, dst_ctx) = match (self.src.context(), self.dst.context()) {
            (Some(s), Some(d)) => (s, d),
            (Some(c), None) | (None, Some(c)) => (c, c),
            (None, None) => {
                return Err(Error::InvalidArgument {
                    operation: op,
                    detail: "both ends are host memory; copy the slices on the host instead".to_owned(),
                })
            }
        };
        if stream.is_some_and(|s| s.context() != dst_ctx) {
            return Err(Error::WrongContext {
                what: "the stream (it must belong to the destination's context)",
            });
        }
        if !self.copies_nothing() {
            order_on(&self.src, &self.dst, ordered_stream(dst_ctx, stream)?)?;
        }
        src_ctx.bind()?;
        dst_ctx.bind()?;
        Ok(sys::CUDA_MEMCPY3D_PEER {
            srcXInBytes: p.srcXInBytes,
            srcY: p.srcY,
            srcZ: p.srcZ,
            srcLOD: 0,
            srcMemoryType: p.srcMemoryType,
            srcHost: p.srcHost,
            srcDevice: p.srcDevice,
            srcArray: p.srcArray,
            srcContext: src_ctx.raw(),
            srcPitch: p.srcPitch,
            srcHeight: p.srcHeight,
            dstXInBytes: p.dstXInBytes,
            dstY: p.dstY,
            dstZ: p.dstZ,
            dstLOD: 0,
            dstMemoryType: p.dstMemoryType,
            dstHost: p.dstHost,
            dstDevice: p.dstDevice,
            dstArray: p.dstArray,
            dstContext: dst_ctx.raw(),
            dstPitch: p.dstPitch,
            dstHeight: p.dstHeight,
            WidthInBytes: p.WidthInBytes,
            Height: p.Height,
            Depth: p.Depth,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_are_checked_before_the_driver() {
        let src = vec![0f32; 16 * 8];
        let mut dst = vec![0f32; 16 * 8];
        // 9 rows of a 8-row image.
        let e = Memcpy2D::new(64, 9)
            .src_host(&src, 64)
            .dst_host(&mut dst, 64)
            .call()
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, Error::SizeMismatch { .. }) && msg.contains("512"),
            "{msg}"
        );
        // Rows wider than the pitch.
        let e = Memcpy2D::new(68, 2)
            .src_host(&src, 64)
            .dst_host(&mut dst, 128)
            .call()
            .unwrap_err();
        assert!(e.to_string().contains("64 bytes apart"), "{e}");
        // No destination.
        let e = Memcpy2D::new(64, 2).src_host(&src, 64).call().unwrap_err();
        assert!(e.to_string().contains("no destination"), "{e}");
        // 3D: the box's last slice runs past the end.
        let e = Memcpy3D::new(64, 8, 2)
            .src_host(&src, 64)
            .src_height(8)
            .dst_host(&mut dst, 64)
            .dst_height(8)
            .call()
            .unwrap_err();
        assert!(matches!(e, Error::SizeMismatch { .. }), "{e}");
        // In bounds, but both ends on the host: refused without a driver call.
        let e = Memcpy2D::new(64, 8)
            .src_host(&src, 64)
            .dst_host(&mut dst, 64)
            .call()
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        // The same for the peer copy, whose extents are checked the same way.
        let e = Memcpy3D::new(64, 8, 1)
            .src_host(&src, 64)
            .src_height(8)
            .dst_host(&mut dst, 64)
            .dst_height(8)
            .call_peer()
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        let e = Memcpy3D::new(64, 8, 2)
            .src_host(&src, 64)
            .src_height(8)
            .dst_host(&mut dst, 64)
            .dst_height(8)
            .call_peer()
            .unwrap_err();
        assert!(matches!(e, Error::SizeMismatch { .. }), "{e}");
    }
}
