//! The settings of a context: creation flags, limits, cache and shared-memory preferences
//! (PyCUDA's `ctx_flags`, `limit`, `func_cache` and `shared_config`).

use std::ops::BitOr;

use cudarc::driver::sys;

/// Flags for [`Context::create`](crate::Context::create), combined with `|`.
///
/// At most one `SCHED_*` flag may be given; [`Context::create`](crate::Context::create)
/// refuses more before asking the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ContextFlags(u32);

impl ContextFlags {
    /// Let the driver choose how the host thread waits for the GPU (the default).
    pub const SCHED_AUTO: ContextFlags = ContextFlags(0);
    /// Spin while waiting: lowest latency, one busy CPU core.
    pub const SCHED_SPIN: ContextFlags = ContextFlags(1);
    /// Yield the CPU while waiting.
    pub const SCHED_YIELD: ContextFlags = ContextFlags(2);
    /// Block on a synchronisation primitive while waiting.
    pub const SCHED_BLOCKING_SYNC: ContextFlags = ContextFlags(4);
    /// Allow mapped pinned host memory (always on since CUDA 3.2; kept for PyCUDA parity).
    pub const MAP_HOST: ContextFlags = ContextFlags(8);
    /// Keep local memory allocated after a kernel that needed a lot of it.
    pub const LMEM_RESIZE_TO_MAX: ContextFlags = ContextFlags(16);
    /// Write a GPU core dump when an exception occurs in this context.
    pub const COREDUMP_ENABLE: ContextFlags = ContextFlags(32);
    /// Synchronous memory operations on this context are fully synchronous.
    pub const SYNC_MEMOPS: ContextFlags = ContextFlags(128);

    pub(crate) const SCHED_MASK: u32 = 7;
    pub(crate) const ALL: u32 = 255;

    /// The raw `CU_CTX_*` bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Flags from raw `CU_CTX_*` bits (as `cuCtxGetFlags` reports them).
    pub const fn from_bits(bits: u32) -> ContextFlags {
        ContextFlags(bits)
    }

    /// True when every flag in `other` is set in `self`.
    pub const fn contains(self, other: ContextFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for ContextFlags {
    type Output = ContextFlags;
    fn bitor(self, rhs: ContextFlags) -> ContextFlags {
        ContextFlags(self.0 | rhs.0)
    }
}

/// A context limit, read with [`Context::get_limit`](crate::Context::get_limit) and set with
/// [`Context::set_limit`](crate::Context::set_limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Stack size in bytes of each GPU thread.
    StackSize,
    /// Size in bytes of the FIFO that device-side `printf` writes to.
    PrintfFifoSize,
    /// Size in bytes of the heap that device-side `malloc` uses.
    MallocHeapSize,
    /// Maximum nesting depth of a grid at which a thread may synchronise (dynamic parallelism).
    DevRuntimeSyncDepth,
    /// Maximum number of outstanding device-runtime launches.
    DevRuntimePendingLaunchCount,
    /// L2 cache fetch granularity in bytes (a hint).
    MaxL2FetchGranularity,
    /// Persisting L2 cache size in bytes.
    PersistingL2CacheSize,
}

impl Limit {
    /// The driver's enum value.
    pub const fn raw(self) -> sys::CUlimit {
        use sys::CUlimit::*;
        match self {
            Limit::StackSize => CU_LIMIT_STACK_SIZE,
            Limit::PrintfFifoSize => CU_LIMIT_PRINTF_FIFO_SIZE,
            Limit::MallocHeapSize => CU_LIMIT_MALLOC_HEAP_SIZE,
            Limit::DevRuntimeSyncDepth => CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH,
            Limit::DevRuntimePendingLaunchCount => CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
            Limit::MaxL2FetchGranularity => CU_LIMIT_MAX_L2_FETCH_GRANULARITY,
            Limit::PersistingL2CacheSize => CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
        }
    }
}

/// Whether kernels prefer more shared memory or more L1 cache (PyCUDA's `func_cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheConfig {
    /// No preference.
    PreferNone,
    /// Prefer a larger shared memory.
    PreferShared,
    /// Prefer a larger L1 cache.
    PreferL1,
    /// Prefer equal sizes.
    PreferEqual,
}

impl CacheConfig {
    /// The driver's enum value.
    pub const fn raw(self) -> sys::CUfunc_cache {
        use sys::CUfunc_cache::*;
        match self {
            CacheConfig::PreferNone => CU_FUNC_CACHE_PREFER_NONE,
            CacheConfig::PreferShared => CU_FUNC_CACHE_PREFER_SHARED,
            CacheConfig::PreferL1 => CU_FUNC_CACHE_PREFER_L1,
            CacheConfig::PreferEqual => CU_FUNC_CACHE_PREFER_EQUAL,
        }
    }

    pub(crate) fn from_raw(raw: sys::CUfunc_cache) -> CacheConfig {
        use sys::CUfunc_cache::*;
        match raw {
            CU_FUNC_CACHE_PREFER_SHARED => CacheConfig::PreferShared,
            CU_FUNC_CACHE_PREFER_L1 => CacheConfig::PreferL1,
            CU_FUNC_CACHE_PREFER_EQUAL => CacheConfig::PreferEqual,
            _ => CacheConfig::PreferNone,
        }
    }
}

/// Shared-memory bank width (PyCUDA's `shared_config`). Since Volta the bank width is fixed
/// and the driver accepts and ignores the setting; it is kept for parity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SharedConfig {
    /// The device's default bank size.
    DefaultBankSize,
    /// Four-byte banks.
    FourByteBankSize,
    /// Eight-byte banks.
    EightByteBankSize,
}

impl SharedConfig {
    /// The driver's enum value.
    pub const fn raw(self) -> sys::CUsharedconfig {
        use sys::CUsharedconfig::*;
        match self {
            SharedConfig::DefaultBankSize => CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE,
            SharedConfig::FourByteBankSize => CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE,
            SharedConfig::EightByteBankSize => CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE,
        }
    }

    pub(crate) fn from_raw(raw: sys::CUsharedconfig) -> SharedConfig {
        use sys::CUsharedconfig::*;
        match raw {
            CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE => SharedConfig::FourByteBankSize,
            CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE => SharedConfig::EightByteBankSize,
            _ => SharedConfig::DefaultBankSize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_combine_and_match_the_driver_values() {
        let f = ContextFlags::SCHED_BLOCKING_SYNC | ContextFlags::LMEM_RESIZE_TO_MAX;
        assert_eq!(f.bits(), sys::CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC as u32 | 16);
        assert!(f.contains(ContextFlags::LMEM_RESIZE_TO_MAX));
        assert!(!f.contains(ContextFlags::SCHED_SPIN));
        assert_eq!(
            ContextFlags::SCHED_MASK,
            sys::CUctx_flags::CU_CTX_SCHED_MASK as u32
        );
        assert_eq!(ContextFlags::ALL, sys::CUctx_flags::CU_CTX_FLAGS_MASK as u32);
        for c in [
            CacheConfig::PreferNone,
            CacheConfig::PreferShared,
            CacheConfig::PreferL1,
            CacheConfig::PreferEqual,
        ] {
            assert_eq!(CacheConfig::from_raw(c.raw()), c);
        }
        for s in [
            SharedConfig::DefaultBankSize,
            SharedConfig::FourByteBankSize,
            SharedConfig::EightByteBankSize,
        ] {
            assert_eq!(SharedConfig::from_raw(s.raw()), s);
        }
    }
}
