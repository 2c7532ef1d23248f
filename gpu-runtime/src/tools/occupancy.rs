//! Device metadata and occupancy (PyCUDA's `DeviceData` and `OccupancyRecord`): how many
//! blocks of a kernel fit on one multiprocessor, and what limits them.
//!
//! The arithmetic is the CUDA occupancy calculator's (`cuda_occupancy.h`) for compute
//! capability 7.0 and later: registers are allocated per warp in units of 256, in each of the
//! four sub-partitions of a multiprocessor; shared memory per block includes the 1 KiB the
//! system reserves on 8.0 and later, rounded up to the allocation granularity, and the
//! multiprocessor's whole configurable shared memory is available. It is pure arithmetic over
//! a [`DeviceData`], so it runs (and is tested) without a GPU.

use std::fmt;

use cudarc::driver::sys::{CUdevice_attribute as Attr, CUfunction_attribute as FuncAttr};

use crate::driver::context::core::Context;
use crate::driver::module::function::Function;
use crate::driver::module::loaded::KernelLimits;
use crate::error::{OccupancyError, Result};

/// What a device offers per multiprocessor and per block, for occupancy and alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceData {
    /// The compute capability, e.g. `(9, 0)`.
    pub compute_capability: (u32, u32),
    /// Most threads in a block.
    pub max_threads: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// Most resident warps per multiprocessor.
    pub warps_per_mp: u32,
    /// Most resident blocks per multiprocessor.
    pub thread_blocks_per_mp: u32,
    /// 32-bit registers per multiprocessor.
    pub registers: u32,
    /// Most 32-bit registers one block may use.
    pub max_registers_per_block: u32,
    /// Shared memory per multiprocessor, in bytes (the largest carveout).
    pub shared_memory: u32,
    /// Shared memory the system reserves for each block, in bytes.
    pub reserved_shared_memory_per_block: u32,
    /// Threads that take part in one banked shared-memory access.
    pub smem_granularity: u32,
    /// The smallest (non-empty) shared memory allocation of a block, in bytes.
    pub smem_alloc_granularity: u32,
    /// Registers are allocated to warps in multiples of this.
    pub reg_alloc_granularity: u32,
    /// Register-file partitions per multiprocessor.
    pub sub_partitions: u32,
}

impl DeviceData {
    /// The published figures of a compute capability (7.0 up to 12.x), for planning without a
    /// GPU; [`DeviceData::new`] reads a real device.
    pub fn for_compute_capability(major: u32, minor: u32) -> Result<DeviceData> {
        // (threads per MP, blocks per MP, shared memory per MP in KiB)
        let (threads, blocks, smem_kib) = match (major, minor) {
            (7, 0) | (7, 2) => (2048, 32, 96),
            (7, 5) => (1024, 16, 64),
            (8, 0) => (2048, 32, 164),
            (8, 6) => (1536, 16, 100),
            (8, 7) => (2048, 16, 164),
            (8, 9) => (1536, 24, 100),
            (9, 0) | (10, _) => (2048, 32, 228),
            (11, 0) => (1536, 24, 228),
            (12, _) => (1536, 32, 100),
            _ => return Err(OccupancyError::UnknownComputeCapability { major, minor }.into()),
        };
        Ok(DeviceData {
            compute_capability: (major, minor),
            max_threads: 1024,
            warp_size: 32,
            warps_per_mp: threads / 32,
            thread_blocks_per_mp: blocks,
            registers: 65536,
            max_registers_per_block: 65536,
            shared_memory: smem_kib * 1024,
            reserved_shared_memory_per_block: if major >= 8 { 1024 } else { 0 },
            smem_granularity: 32,
            smem_alloc_granularity: smem_alloc_granularity(major),
            reg_alloc_granularity: 256,
            sub_partitions: 4,
        })
    }

    /// The figures of the device of `ctx`, from the driver's attributes (the granularities,
    /// which the driver does not report, from the compute capability).
    pub fn new(ctx: &Context) -> Result<DeviceData> {
        let dev = ctx.device();
        let a = |attr| dev.attribute(attr).map(|v| v.max(0) as u32);
        let (major, minor) = ctx.compute_capability();
        let warp_size = a(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?.max(1);
        Ok(DeviceData {
            compute_capability: (major, minor),
            max_threads: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            warp_size,
            warps_per_mp: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? / warp_size,
            thread_blocks_per_mp: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
            registers: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
            max_registers_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
            shared_memory: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            reserved_shared_memory_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)?,
            smem_granularity: warp_size,
            smem_alloc_granularity: smem_alloc_granularity(major),
            reg_alloc_granularity: 256,
            sub_partitions: if major >= 7 { 4 } else { 2 },
        })
    }

    /// The distance between base addresses that lets accesses of `word_size` bytes coalesce:
    /// 64 for 4-byte words, 128 for 8 and 16.
    pub fn align_bytes(&self, word_size: usize) -> Result<usize> {
        match word_size {
            4 => Ok(64),
            8 | 16 => Ok(128),
            _ => Err(OccupancyError::WordSize { word_size }.into()),
        }
    }

    /// `bytes` rounded up to the alignment for `word_size`-byte words.
    pub fn align(&self, bytes: usize, word_size: usize) -> Result<usize> {
        Ok(bytes.next_multiple_of(self.align_bytes(word_size)?))
    }

    /// The alignment for `word_size`-byte words, counted in words.
    pub fn align_words(&self, word_size: usize) -> Result<usize> {
        Ok(self.align_bytes(word_size)? / word_size)
    }

    /// `elements` rounded up so that an array of `dtype_size`-byte elements ends on an
    /// alignment boundary.
    pub fn align_dtype(&self, elements: usize, dtype_size: usize) -> Result<usize> {
        Ok(elements.next_multiple_of(self.align_words(dtype_size)?))
    }

    /// `size` rounded up to a valid texture channel count: 1, 2 or 4.
    pub fn make_valid_tex_channel_count(size: usize) -> Result<usize> {
        [1, 2, 4]
            .into_iter()
            .find(|&v| size <= v)
            .ok_or_else(|| OccupancyError::TextureChannels { channels: size }.into())
    }
}

fn smem_alloc_granularity(major: u32) -> u32 {
    if major >= 8 {
        128
    } else {
        256
    }
}

/// What limits the blocks per multiprocessor (PyCUDA's `limited_by` strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LimitedBy {
    /// The device's most resident blocks, or a block larger than the device allows.
    Device,
    /// The most resident warps.
    Warps,
    /// Registers.
    Regs,
    /// Shared memory.
    Smem,
}

impl LimitedBy {
    /// `"device"`, `"warps"`, `"regs"` or `"smem"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitedBy::Device => "device",
            LimitedBy::Warps => "warps",
            LimitedBy::Regs => "regs",
            LimitedBy::Smem => "smem",
        }
    }
}

impl fmt::Display for LimitedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The occupancy of a kernel workload on a device (PyCUDA's `OccupancyRecord`).
///
/// ```no_run
/// use gpu_runtime::{kernel, Context, tools::DeviceData, tools::LimitedBy, tools::OccupancyRecord};
///
/// #[kernel(r#"
/// __global__ void axpy(float a, const float *x, float *y, int n) {
///     int i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) y[i] = a * x[i] + y[i];
/// }"#)]
/// fn axpy(a: f32, x: &[f32], y: &mut [f32], n: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// // Planning needs no GPU: blocks of 256 threads at 64 registers each, on compute 9.0.
/// let h100 = DeviceData::for_compute_capability(9, 0)?;
/// let plan = OccupancyRecord::new(&h100, 256, 0, 64);
/// assert_eq!((plan.tb_per_mp, plan.limited_by, plan.occupancy), (4, LimitedBy::Regs, 0.5));
///
/// // A compiled kernel on the real device, with the registers the compiler gave it.
/// let ctx = Context::default()?;
/// let k = axpy::prepare(&ctx)?;
/// let f = k.function();
/// let block = f.suggested_block_size()?;
/// let occ = f.occupancy(block)?;
/// println!("{block} threads: {:.0}% occupancy ({})", occ.occupancy * 100.0, occ.limited_by);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OccupancyRecord {
    /// Blocks resident on each multiprocessor.
    pub tb_per_mp: u32,
    /// What limits `tb_per_mp` (the first of device, warps, regs, smem on a tie).
    pub limited_by: LimitedBy,
    /// Warps resident on each multiprocessor.
    pub warps_per_mp: u32,
    /// `warps_per_mp` over the most the multiprocessor can hold, from 0 to 1.
    pub occupancy: f64,
}

impl OccupancyRecord {
    /// Blocks of `threads` threads, each using `shared_mem` bytes of shared memory (static
    /// plus dynamic) and `registers` 32-bit registers per thread.
    pub fn new(devdata: &DeviceData, threads: u32, shared_mem: u32, registers: u32) -> OccupancyRecord {
        let d = devdata;
        let warps = threads.div_ceil(d.warp_size.max(1));
        let mut limits = [
            (d.thread_blocks_per_mp, LimitedBy::Device),
            (u32::MAX, LimitedBy::Warps),
            (u32::MAX, LimitedBy::Regs),
            (u32::MAX, LimitedBy::Smem),
        ];
        if threads == 0 || threads > d.max_threads {
            limits[0].0 = 0;
        } else {
            limits[1].0 = d.warps_per_mp / warps;
        }
        if registers > 0 && warps > 0 {
            let gran = d.reg_alloc_granularity.max(1);
            let parts = d.sub_partitions.max(1);
            let per_warp = (u64::from(registers) * u64::from(d.warp_size)).next_multiple_of(u64::from(gran));
            let per_block = per_warp * u64::from(warps);
            // The hardware checks the per-block limit as if warps filled every partition.
            let assumed = per_warp * u64::from(warps.next_multiple_of(parts));
            let max_block = u64::from(d.max_registers_per_block);
            limits[2].0 = if per_block > max_block || assumed > max_block {
                0
            } else {
                let warps_per_part = u64::from(d.registers / parts) / per_warp;
                ((warps_per_part * u64::from(parts)) / u64::from(warps)) as u32
            };
        }
        let smem = u64::from(shared_mem) + u64::from(d.reserved_shared_memory_per_block);
        if smem > 0 {
            let per_block = smem.next_multiple_of(u64::from(d.smem_alloc_granularity.max(1)));
            limits[3].0 = (u64::from(d.shared_memory) / per_block).min(u64::from(u32::MAX)) as u32;
        }
        let (tb_per_mp, limited_by) = limits
            .into_iter()
            .fold(limits[0], |best, l| if l.0 < best.0 { l } else { best });
        let warps_per_mp = tb_per_mp * warps;
        OccupancyRecord {
            tb_per_mp,
            limited_by,
            warps_per_mp,
            occupancy: if d.warps_per_mp == 0 {
                0.0
            } else {
                f64::from(warps_per_mp) / f64::from(d.warps_per_mp)
            },
        }
    }
}

impl Function {
    /// The registers per thread and static shared memory of this compiled kernel, as the
    /// driver reports them.
    pub fn resource_usage(&self) -> Result<(u32, u32)> {
        Ok((
            self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        ))
    }

    /// The occupancy of this kernel launched with blocks of `block_size` threads and its
    /// current dynamic shared memory ([`Function::with_shared_mem`]). Dynamic shared memory
    /// beyond what the kernel is currently allowed (48 KiB less its static shared memory,
    /// until a launch opts it in to more) gives no blocks, as the driver's calculator says.
    pub fn occupancy(&self, block_size: u32) -> Result<OccupancyRecord> {
        let data = DeviceData::new(self.context())?;
        let (regs, static_smem) = self.resource_usage()?;
        let max_dynamic = self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
        let limits = *self.kernel_limits()?;
        Ok(self.occupancy_with(&data, &limits, block_size, regs, static_smem, max_dynamic))
    }

    fn occupancy_with(
        &self,
        data: &DeviceData,
        limits: &KernelLimits,
        block_size: u32,
        regs: u32,
        static_smem: u32,
        max_dynamic: u32,
    ) -> OccupancyRecord {
        let none = |limited_by| OccupancyRecord {
            tb_per_mp: 0,
            limited_by,
            warps_per_mp: 0,
            occupancy: 0.0,
        };
        if block_size > limits.max_threads_per_block {
            // More threads than this kernel can run (its registers or launch bounds).
            return none(LimitedBy::Device);
        }
        if self.shared_mem() > max_dynamic {
            return none(LimitedBy::Smem);
        }
        OccupancyRecord::new(data, block_size, static_smem + self.shared_mem(), regs)
    }

    /// The block size (a multiple of the warp size) that gives this kernel the highest
    /// occupancy; of equals, the largest.
    pub fn suggested_block_size(&self) -> Result<u32> {
        let data = DeviceData::new(self.context())?;
        let (regs, static_smem) = self.resource_usage()?;
        // Launches opt in to the dynamic shared memory they need, so that is no limit here.
        let max_dynamic = u32::MAX;
        let limits = *self.kernel_limits()?;
        let max = limits.max_threads_per_block.min(data.max_threads);
        let mut best = (0.0, data.warp_size);
        let mut size = max - max % data.warp_size;
        while size > 0 {
            let occ = self
                .occupancy_with(&data, &limits, size, regs, static_smem, max_dynamic)
                .occupancy;
            if occ > best.0 {
                best = (occ, size);
            }
            size -= data.warp_size;
        }
        Ok(best.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use LimitedBy::*;

    fn check(cc: (u32, u32), threads: u32, smem: u32, regs: u32, want: (u32, LimitedBy, u32, f64)) {
        let d = DeviceData::for_compute_capability(cc.0, cc.1).unwrap();
        let r = OccupancyRecord::new(&d, threads, smem, regs);
        assert_eq!(
            (r.tb_per_mp, r.limited_by, r.warps_per_mp),
            (want.0, want.1, want.2),
            "cc {cc:?}, {threads} threads, {smem} B smem, {regs} regs"
        );
        assert!((r.occupancy - want.3).abs() < 1e-9, "{r:?}");
    }

    // Each case worked by hand from the figures in for_compute_capability.
    #[test]
    fn cc_9_0() {
        // 8 warps a block: 64/8 = 8 by warps; 32 regs = 1024 per warp, 16 warps per partition,
        // 64 warps = 8 blocks by regs too: warps wins the tie.
        check((9, 0), 256, 0, 32, (8, Warps, 64, 1.0));
        // 64 regs: 2048 per warp, 8 per partition, 32 warps, 4 blocks.
        check((9, 0), 256, 0, 64, (4, Regs, 32, 0.5));
        // 48 KiB + 1 KiB reserved = 50176 per block; 233472 / 50176 = 4.65.
        check((9, 0), 128, 48 * 1024, 0, (4, Smem, 16, 0.25));
        // One warp a block: the 32-block limit.
        check((9, 0), 32, 0, 16, (32, Device, 32, 0.5));
        // 72 regs * 32 threads * 32 warps = 73728 > 65536 registers per block: cannot launch.
        check((9, 0), 1024, 0, 72, (0, Regs, 0, 0.0));
        // 3 warps: 40 regs = 1280 per warp, 12 per partition, 48 warps, 16 blocks.
        check((9, 0), 96, 0, 40, (16, Regs, 48, 0.75));
        // Too many threads for the device.
        check((9, 0), 1025, 0, 0, (0, Device, 0, 0.0));
    }

    #[test]
    fn cc_8_6() {
        // 48 warps per MP: 6 blocks of 8 warps.
        check((8, 6), 256, 0, 32, (6, Warps, 48, 1.0));
        // 2 warps a block: 24 by warps, 16 by the device.
        check((8, 6), 64, 0, 0, (16, Device, 32, 32.0 / 48.0));
        // 20000 + 1024 = 21024, rounded to 128: 21120; 102400 / 21120 = 4.85.
        check((8, 6), 128, 20000, 0, (4, Smem, 16, 16.0 / 48.0));
    }

    #[test]
    fn cc_8_0() {
        // 48 regs: 1536 per warp, 10 per partition = 40 warps, 2 blocks of 16 warps.
        check((8, 0), 512, 0, 48, (2, Regs, 32, 0.5));
        // 40960 + 1024 = 41984 (a multiple of 128); 167936 / 41984 = 4 exactly.
        check((8, 0), 256, 40960, 0, (4, Smem, 32, 0.5));
    }

    #[test]
    fn cc_7_0() {
        // No reserved memory, 256-byte granularity: 10000 -> 10240; 98304 / 10240 = 9.6.
        check((7, 0), 128, 10000, 0, (9, Smem, 36, 0.5625));
        // 255 regs: 8160 -> 8192 per warp, 2 warps per partition = 8 warps: one block of 6.
        check((7, 0), 192, 0, 255, (1, Regs, 6, 6.0 / 64.0));
    }

    #[test]
    fn alignment_helpers() {
        let d = DeviceData::for_compute_capability(9, 0).unwrap();
        assert_eq!(d.align_bytes(4).unwrap(), 64);
        assert_eq!(d.align_bytes(8).unwrap(), 128);
        assert_eq!(d.align(100, 4).unwrap(), 128);
        assert_eq!(d.align_words(8).unwrap(), 16);
        assert_eq!(d.align_dtype(17, 4).unwrap(), 32);
        assert!(matches!(
            d.align_bytes(3),
            Err(Error::Occupancy(OccupancyError::WordSize { word_size: 3 }))
        ));
        assert_eq!(DeviceData::make_valid_tex_channel_count(3).unwrap(), 4);
        assert_eq!(DeviceData::make_valid_tex_channel_count(1).unwrap(), 1);
        assert!(matches!(
            DeviceData::make_valid_tex_channel_count(5),
            Err(Error::Occupancy(OccupancyError::TextureChannels { channels: 5 }))
        ));
        assert!(matches!(
            DeviceData::for_compute_capability(6, 1),
            Err(Error::Occupancy(OccupancyError::UnknownComputeCapability {
                major: 6,
                minor: 1
            }))
        ));
    }
}
