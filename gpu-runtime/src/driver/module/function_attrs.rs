//! A kernel's attributes (registers, memory sizes, limits) and its cache preferences.

use cudarc::driver::sys::CUfunction_attribute as FuncAttr;

use crate::driver::context::config::{CacheConfig, SharedConfig};

use crate::driver::calls;
use crate::driver::module::function::Function;
use crate::error::{Error, Result};

impl Function {
    /// Any `CUfunction_attribute` of the kernel.
    ///
    /// The common ones have their own methods:
    ///
    /// ```no_run
    /// use gpu_runtime::cudarc::driver::sys::CUfunction_attribute as Attr;
    /// use gpu_runtime::{kernel, driver::CacheConfig, Context};
    ///
    /// #[kernel(r#"
    /// __global__ void reverse(float *x) {
    ///     __shared__ float tile[256];
    ///     tile[threadIdx.x] = x[threadIdx.x];
    ///     __syncthreads();
    ///     x[threadIdx.x] = tile[255 - threadIdx.x];
    /// }"#)]
    /// fn reverse(x: &mut [f32]);
    ///
    /// # fn main() -> gpu_runtime::Result<()> {
    /// let ctx = Context::default()?;
    /// let k = reverse::prepare(&ctx)?;
    /// let f = k.function();
    /// assert_eq!(f.shared_size_bytes()?, 256 * 4);
    /// println!("{} registers, {} bytes of local memory", f.num_regs()?, f.local_size_bytes()?);
    /// let dynamic = f.attribute(Attr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
    /// println!("up to {dynamic} bytes of dynamic shared memory without opting in");
    /// // The kernel lives on shared memory, so give it the larger share of the L1.
    /// f.set_cache_config(CacheConfig::PreferShared)?;
    /// # Ok(()) }
    /// ```
    pub fn attribute(&self, attr: FuncAttr) -> Result<i32> {
        // SAFETY: the function lives as long as self.
        Ok(unsafe { calls::func_get_attribute(self.func, attr) }?)
    }

    pub(crate) fn attr_u32(&self, attr: FuncAttr) -> Result<u32> {
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
        let c = config.raw();
        self.ctx.bind()?;
        // SAFETY: live function, valid enum value.
        unsafe { calls::func_set_cache_config(self.func, c) }.map_err(Error::from)
    }

    /// Sets the kernel's shared memory bank width.
    pub fn set_shared_config(&self, config: SharedConfig) -> Result<()> {
        let c = config.raw();
        self.ctx.bind()?;
        // SAFETY: live function, valid enum value.
        unsafe { calls::func_set_shared_mem_config(self.func, c) }.map_err(Error::from)
    }
}
