//! [`Memcpy3D`]: boxes, and copies between contexts.

use std::marker::PhantomData;

use cudarc::driver::sys;

use super::ends::*;
use crate::driver::calls;
use crate::driver::memory::cuda_array::CudaArray;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::driver::stream::Stream;
use crate::error::{CopyError, Error, Result};
use crate::types::repr::DeviceRepr;

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
        run(self.prepare(None), self.copies_nothing(), |p| {
            // SAFETY: every end was checked to hold the whole box, and stays borrowed until the
            // copy has finished.
            Ok(unsafe { calls::memcpy_3d(p) }?)
        })
    }

    /// Queues the copy on `stream`, after the other work on its device and array ends (which
    /// stay allocated until it has run).
    ///
    /// # Safety
    /// Host memory at either end must stay alive (and, as a destination, untouched) until the
    /// copy has finished.
    pub unsafe fn call_async(self, stream: &Stream) -> Result<()> {
        run(self.prepare(Some(stream)), self.copies_nothing(), |p| {
            stream.context().bind()?;
            // SAFETY: as in call; the caller keeps host memory alive until the copy completes.
            Ok(unsafe { calls::memcpy_3d_async(p, stream.raw()) }?)
        })
    }

    /// Runs the copy between ends in two contexts, e.g. on two GPUs, and waits for it
    /// (PyCUDA's `Memcpy3DPeer`; each end brings its own context, so there is no
    /// `set_src_context`). Like [`memcpy_peer`](crate::driver::memcpy_peer), it needs no peer access.
    ///
    /// ```no_run
    /// use gpu_runtime::{Context, Device, driver::Memcpy3D};
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
        run(self.peer_params(None), self.copies_nothing(), |p| {
            // SAFETY: every end was checked to hold the whole box, and stays borrowed until the
            // copy has finished; both contexts are alive (the ends hold them).
            Ok(unsafe { calls::memcpy_3d_peer(p) }?)
        })
    }

    /// [`call_peer`](Self::call_peer) queued on `stream`, a stream of the destination's
    /// context.
    ///
    /// # Safety
    /// Host memory at either end must stay alive (and, as a destination, untouched) until the
    /// copy has finished.
    pub unsafe fn call_peer_async(self, stream: &Stream) -> Result<()> {
        run(self.peer_params(Some(stream)), self.copies_nothing(), |p| {
            // SAFETY: as in call_peer; the caller keeps host memory alive until the copy completes.
            Ok(unsafe { calls::memcpy_3d_peer_async(p, stream.raw()) }?)
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
            (None, None) => return Err(CopyError::BothEndsHost { operation: op }.into()),
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
