//! The two ends of a structured copy (host, device or array memory, each with its extent) and
//! the checks every copy makes before the driver is called.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::driver::context::core::Context;
use crate::driver::memory::cuda_array::CudaArray;
use crate::driver::memory::view::DeviceView;
use crate::driver::ordering::{StreamInner, StreamUses};
use crate::driver::stream::Stream;
use crate::error::{CopyError, Error, Result};
use crate::types::repr::DeviceRepr;

/// Runs `copy` with the copy's description, unless the copy moves nothing (an empty copy is
/// only checked, by what made `params`): the tail every `call` shares.
pub(super) fn run<P>(params: Result<P>, nothing: bool, copy: impl FnOnce(&P) -> Result<()>) -> Result<()> {
    let p = params?;
    if nothing {
        return Ok(());
    }
    copy(&p)
}

pub(super) enum End<'a> {
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

pub(super) struct Side<'a> {
    pub(super) end: End<'a>,
    pub(super) x: usize,
    pub(super) y: usize,
    pub(super) z: usize,
    pub(super) pitch: usize,
    /// Rows per slice (3D linear memory only).
    pub(super) rows: usize,
}

impl<'a> Side<'a> {
    pub(super) const fn new() -> Side<'a> {
        Side {
            end: End::Unset,
            x: 0,
            y: 0,
            z: 0,
            pitch: 0,
            rows: 0,
        }
    }

    pub(super) fn context(&self) -> Option<&Context> {
        match &self.end {
            End::Device { ctx, .. } | End::Array { ctx, .. } => Some(ctx),
            _ => None,
        }
    }

    /// The record of the streams that use this end's memory, when this crate tracks it.
    pub(super) fn uses(&self) -> Option<&'a StreamUses> {
        match self.end {
            End::Device { uses, .. } => uses,
            End::Array { uses, .. } => Some(uses),
            _ => None,
        }
    }

    pub(super) fn check(
        &self,
        which: &'static str,
        op: &'static str,
        w: usize,
        h: usize,
        d: usize,
    ) -> Result<()> {
        match &self.end {
            End::Unset => Err(CopyError::EndMissing { operation: op, which }.into()),
            End::Host { bytes, .. } | End::Device { bytes, .. } => {
                if w == 0 || h == 0 || d == 0 {
                    return Ok(());
                }
                let row_end = self.x.saturating_add(w);
                if (h > 1 || d > 1) && row_end > self.pitch {
                    return Err(CopyError::RowsOverlap {
                        operation: op,
                        which,
                        pitch: self.pitch,
                        start: self.x,
                        end: row_end,
                    }
                    .into());
                }
                let rows = if d > 1 { self.rows } else { usize::MAX };
                if d > 1 && self.y + h > rows {
                    return Err(CopyError::RowsPerSlice {
                        operation: op,
                        which,
                        rows,
                        start: self.y,
                        end: self.y + h,
                    }
                    .into());
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
                    return Err(CopyError::EndTooSmall {
                        operation: op,
                        which,
                        depth: d,
                        height: h,
                        width_bytes: w,
                        origin: (self.x, self.y, self.z),
                        pitch: self.pitch,
                        need,
                        bytes: *bytes,
                    }
                    .into());
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
                    return Err(CopyError::ArrayEndTooSmall {
                        operation: op,
                        which,
                        extent: (w, h, d),
                        origin: (self.x, self.y, self.z),
                        array: (*width_bytes, ah, ad),
                    }
                    .into());
                }
                Ok(())
            }
        }
    }

    pub(super) fn kind(&self) -> (sys::CUmemorytype, *mut c_void, sys::CUdeviceptr, sys::CUarray) {
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

pub(super) fn host_end<'a, T>(host: *const T, len: usize) -> End<'a> {
    End::Host {
        ptr: host as *mut c_void,
        bytes: len * std::mem::size_of::<T>(),
    }
}

pub(super) fn device_end<T: DeviceRepr>(d: DeviceView<'_, T>) -> End<'_> {
    End::Device {
        ptr: d.device_ptr(),
        bytes: d.len() * std::mem::size_of::<T>(),
        ctx: d.context().clone(),
        uses: d.uses(),
    }
}

pub(super) fn array_end(a: &CudaArray) -> End<'_> {
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
pub(super) fn order_on(src: &Side<'_>, dst: &Side<'_>, stream: &Arc<StreamInner>) -> Result<()> {
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
pub(super) fn bind_common<'s>(op: &'static str, src: &'s Side<'_>, dst: &'s Side<'_>) -> Result<&'s Context> {
    let ctx = match (src.context(), dst.context()) {
        (Some(a), Some(b)) if a != b => {
            return Err(Error::WrongContext {
                what: "one end of the structured copy",
            });
        }
        (Some(c), _) | (None, Some(c)) => c,
        (None, None) => {
            return Err(CopyError::BothEndsHost { operation: op }.into());
        }
    };
    ctx.bind()?;
    Ok(ctx)
}

/// `stream` after checking it belongs to `ctx`, or `ctx`'s legacy default stream.
pub(super) fn ordered_stream<'s>(
    ctx: &'s Context,
    stream: Option<&'s Stream>,
) -> Result<&'s Arc<StreamInner>> {
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

pub(super) use ends;
