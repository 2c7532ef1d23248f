//! [`Memcpy2D`]: rectangles.

use std::marker::PhantomData;

use cudarc::driver::sys;

use super::ends::*;
use crate::driver::calls;
use crate::driver::memory::cuda_array::CudaArray;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::types::repr::DeviceRepr;

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
        run(self.prepare(None), self.copies_nothing(), |p| {
            // SAFETY: every end was checked to hold the whole rectangle, and stays borrowed until
            // the copy has finished.
            Ok(unsafe { calls::memcpy_2d(p) }?)
        })
    }

    /// [`call`](Self::call) for a device-to-device copy whose pitches or offsets the driver's
    /// aligned copy refuses (PyCUDA's `Memcpy2D(aligned=False)`; `cuMemcpy2DUnaligned`): slower,
    /// but any alignment goes.
    pub fn call_unaligned(self) -> Result<()> {
        run(self.prepare(None), self.copies_nothing(), |p| {
            // SAFETY: as in call.
            Ok(unsafe { calls::memcpy_2d_unaligned(p) }?)
        })
    }

    /// Queues the copy on `stream`, after the other work on its device and array ends (which
    /// stay allocated until it has run).
    ///
    /// # Safety
    /// Host memory at either end must stay alive (and, as a destination, untouched) until the
    /// copy has finished: the borrows end when this function returns, the copy may not.
    pub unsafe fn call_async(self, stream: &Stream) -> Result<()> {
        run(self.prepare(Some(stream)), self.copies_nothing(), |p| {
            stream.context().bind()?;
            // SAFETY: as in call; the caller keeps host memory alive until the copy completes.
            Ok(unsafe { calls::memcpy_2d_async(p, stream.raw()) }?)
        })
    }
}
