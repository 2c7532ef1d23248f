//! A kernel's attributes (registers, memory sizes, limits) and its cache preferences.

use cudarc::driver::sys::{self, CUfunc_cache, CUfunction_attribute as FuncAttr, CUsharedconfig};

use crate::error::{check, Result};
use crate::module::Function;

/// How a kernel would like the on-chip memory split between L1 and shared memory
/// (`cuFuncSetCacheConfig`, PyCUDA's `func_cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheConfig {
    /// No preference.
    PreferNone,
    /// More shared memory.
    PreferShared,
    /// More L1 cache.
    PreferL1,
    /// Equal parts.
    PreferEqual,
}

/// Shared memory bank width (`cuFuncSetSharedMemConfig`, PyCUDA's `shared_config`). Devices of
/// compute capability 5.0 and later have fixed banks and ignore this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedConfig {
    /// The device's default.
    Default,
    /// Four-byte banks.
    FourByte,
    /// Eight-byte banks.
    EightByte,
}

impl Function {
    /// Any `CUfunction_attribute` of the kernel.
    pub fn attribute(&self, attr: FuncAttr) -> Result<i32> {
        let mut v = 0;
        // SAFETY: valid out-pointer; the function lives as long as self.
        check("cuFuncGetAttribute", unsafe {
            sys::cuFuncGetAttribute(&mut v, attr, self.func)
        })?;
        Ok(v)
    }

    fn attr_u32(&self, attr: FuncAttr) -> Result<u32> {
        self.attribute(attr).map(|v| v.max(0) as u32)
    }

    /// Registers each thread uses.
    pub fn num_regs(&self) -> Result<u32> {
        self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)
    }

    /// Static shared memory per block, in bytes.
    pub fn shared_size_bytes(&self) -> Result<u32> {
        self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
    }

    /// Local memory per thread, in bytes.
    pub fn local_size_bytes(&self) -> Result<u32> {
        self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
    }

    /// Constant memory the kernel uses, in bytes.
    pub fn const_size_bytes(&self) -> Result<u32> {
        self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)
    }

    /// The most threads a block of this kernel may have.
    pub fn max_threads_per_block(&self) -> Result<u32> {
        self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
    }

    /// The PTX version the kernel was compiled from, e.g. 90 for 9.0.
    pub fn ptx_version(&self) -> Result<u32> {
        self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_PTX_VERSION)
    }

    /// The architecture of the machine code, e.g. 90 for sm_90.
    pub fn binary_version(&self) -> Result<u32> {
        self.attr_u32(FuncAttr::CU_FUNC_ATTRIBUTE_BINARY_VERSION)
    }

    /// Sets the kernel's L1/shared memory preference.
    pub fn set_cache_config(&self, config: CacheConfig) -> Result<()> {
        let c = match config {
            CacheConfig::PreferNone => CUfunc_cache::CU_FUNC_CACHE_PREFER_NONE,
            CacheConfig::PreferShared => CUfunc_cache::CU_FUNC_CACHE_PREFER_SHARED,
            CacheConfig::PreferL1 => CUfunc_cache::CU_FUNC_CACHE_PREFER_L1,
            CacheConfig::PreferEqual => CUfunc_cache::CU_FUNC_CACHE_PREFER_EQUAL,
        };
        self.ctx.bind()?;
        // SAFETY: live function, valid enum value.
        check("cuFuncSetCacheConfig", unsafe {
            sys::cuFuncSetCacheConfig(self.func, c)
        })
    }

    /// Sets the kernel's shared memory bank width.
    pub fn set_shared_config(&self, config: SharedConfig) -> Result<()> {
        let c = match config {
            SharedConfig::Default => CUsharedconfig::CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE,
            SharedConfig::FourByte => CUsharedconfig::CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE,
            SharedConfig::EightByte => CUsharedconfig::CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE,
        };
        self.ctx.bind()?;
        // SAFETY: live function, valid enum value.
        check("cuFuncSetSharedMemConfig", unsafe {
            sys::cuFuncSetSharedMemConfig(self.func, c)
        })
    }
}
