//! The DMA floor of the In/InOut axpy call, shared by `benches/report` and `benches/staging`:
//! the same transfers and kernel from pinned memory, with no host copies (2 x HtoDAsync,
//! launch, DtoHAsync, synchronize), all through raw driver calls.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::Context;

fn ok(r: sys::CUresult) {
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
}

/// Pinned copies of `x` and `y`, their device buffers and a stream; freed on drop.
pub struct DmaFloor {
    func: sys::CUfunction,
    grid: u32,
    block: u32,
    n: i32,
    bytes: usize,
    stream: sys::CUstream,
    pinned: [*mut c_void; 2],
    device: [u64; 2],
}

impl DmaFloor {
    /// For the axpy kernel `func` (`a, x, y, n`) over `x` and `y` (of equal length).
    pub fn new(
        ctx: &Context,
        func: sys::CUfunction,
        x: &[f32],
        y: &[f32],
        grid: u32,
        block: u32,
    ) -> Result<DmaFloor, Box<dyn std::error::Error>> {
        assert_eq!(x.len(), y.len());
        let bytes = std::mem::size_of_val(x);
        let mut floor = DmaFloor {
            func,
            grid,
            block,
            n: i32::try_from(x.len())?,
            bytes,
            stream: std::ptr::null_mut(),
            pinned: [std::ptr::null_mut(); 2],
            device: [0; 2],
        };
        ctx.bind()?;
        // SAFETY: valid out-pointers; the context is current; each pinned buffer holds
        // `bytes`, as its source does. Freed by Drop.
        unsafe {
            ok(sys::cuStreamCreate(&mut floor.stream, 0));
            for (h, src) in floor.pinned.iter_mut().zip([x, y]) {
                ok(sys::cuMemHostAlloc(h, bytes, 0));
                std::ptr::copy_nonoverlapping(src.as_ptr().cast::<u8>(), h.cast::<u8>(), bytes);
            }
            for d in &mut floor.device {
                ok(sys::cuMemAlloc_v2(d, bytes));
            }
        }
        Ok(floor)
    }

    /// The pinned copy of `x` (benches/staging times a host copy into it; the report does not
    /// use it).
    #[allow(dead_code)]
    pub fn pinned_x(&self) -> *mut u8 {
        self.pinned[0].cast()
    }

    /// One call: both inputs in, the kernel, `y` back, and a wait for the stream.
    pub fn run(&self) -> Duration {
        let t = Instant::now();
        let [mut xd, mut yd] = self.device;
        let (mut a, mut n) = (0f32, self.n);
        // SAFETY: every buffer holds `bytes`; the parameters match the kernel's signature.
        unsafe {
            ok(sys::cuMemcpyHtoDAsync_v2(
                xd,
                self.pinned[0],
                self.bytes,
                self.stream,
            ));
            ok(sys::cuMemcpyHtoDAsync_v2(
                yd,
                self.pinned[1],
                self.bytes,
                self.stream,
            ));
            let mut params: [*mut c_void; 4] = [
                (&mut a as *mut f32).cast(),
                (&mut xd as *mut u64).cast(),
                (&mut yd as *mut u64).cast(),
                (&mut n as *mut i32).cast(),
            ];
            ok(sys::cuLaunchKernel(
                self.func,
                self.grid,
                1,
                1,
                self.block,
                1,
                1,
                0,
                self.stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            ));
            ok(sys::cuMemcpyDtoHAsync_v2(
                self.pinned[1],
                yd,
                self.bytes,
                self.stream,
            ));
            ok(sys::cuStreamSynchronize(self.stream));
        }
        t.elapsed()
    }
}

impl Drop for DmaFloor {
    fn drop(&mut self) {
        // SAFETY: allocated in `new`, freed once; `run` synchronized the stream.
        unsafe {
            for h in self.pinned {
                ok(sys::cuMemFreeHost(h));
            }
            for d in self.device {
                ok(sys::cuMemFree_v2(d));
            }
            ok(sys::cuStreamDestroy_v2(self.stream));
        }
    }
}
