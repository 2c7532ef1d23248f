//! The context's cache of device memory that arrays gave up (CuPy's memory pool): what it
//! holds, its limit, and giving it back. The design and its safety argument are in
//! `ordering::block_cache`.

use crate::driver::context::core::Context;

impl Context {
    /// Frees every block of device memory the context keeps for reuse, and returns how many
    /// bytes that gave back (CuPy's `MemoryPool.free_all_blocks`). Arrays
    /// (`gpuarray::DeviceArray`) that are dropped leave their memory
    /// here once the work queued on it has finished, so that the next array of the same
    /// byte size is allocated without `cuMemAlloc`; [`mem_get_info`](Self::mem_get_info)
    /// counts those blocks as used until this is called. An allocation that runs out of
    /// memory calls it by itself before trying again. Plain buffers
    /// ([`alloc`](Self::alloc), [`DeviceBuffer`](crate::DeviceBuffer)) are freed when dropped,
    /// as PyCUDA's are.
    pub fn free_cached_memory(&self) -> usize {
        self.inner.collect_garbage();
        self.inner.graveyard.free_cached(self.inner.raw)
    }

    /// Bytes of device memory the context keeps for reuse by arrays (see
    /// [`free_cached_memory`](Self::free_cached_memory)).
    pub fn cached_memory(&self) -> usize {
        self.inner.collect_garbage();
        self.inner.graveyard.cached_bytes()
    }

    /// The most bytes of device memory the context keeps for reuse by arrays (a quarter of the
    /// device's memory unless set); blocks beyond it are freed now, and an array's block that
    /// would pass it is freed when the array goes. 0 turns the reuse off: every array's memory
    /// is then freed as a buffer's is.
    pub fn set_memory_cache_limit(&self, bytes: usize) {
        self.inner.graveyard.set_cache_limit(self.inner.raw, bytes);
    }
}
