//! Device memory that arrays gave up, kept for the next array of the same byte size (CuPy's
//! memory pool, PyTorch's caching allocator): a `cuMemAlloc` plus a `cuMemFree` of a large
//! block cost tens of microseconds (59 us for 256 MiB on an H100), as much as the kernel that
//! fills it at the memory's bandwidth.
//!
//! A block enters the cache exactly when it would otherwise be freed: its owner dropped it and
//! every stream that used it has finished (the [`Graveyard`](super::Graveyard) decides that,
//! as for any deferred free). So a block taken from the cache has no work queued on it, and
//! handing it to a new owner with an empty use record is as safe as a fresh allocation. The
//! cache holds at most its limit in bytes (a block that would pass it is freed instead), and
//! gives everything back on out-of-memory before the allocation is retried, on
//! [`Context::free_cached_memory`](crate::Context::free_cached_memory), and when the context
//! goes.

use std::collections::HashMap;

use cudarc::driver::sys;

/// The cached blocks of one context, by their size in bytes.
#[derive(Debug, Default)]
pub(crate) struct BlockCache {
    blocks: HashMap<usize, Vec<sys::CUdeviceptr>>,
    held: usize,
    limit: usize,
}

impl BlockCache {
    /// Keeps `ptr` (a `cuMemAlloc` block of exactly `bytes`, unused by any stream) for reuse,
    /// or returns false when that would pass the limit: the caller frees it then.
    pub(crate) fn put(&mut self, ptr: sys::CUdeviceptr, bytes: usize) -> bool {
        match self.held.checked_add(bytes) {
            Some(held) if held <= self.limit && bytes > 0 => {
                self.held = held;
                self.blocks.entry(bytes).or_default().push(ptr);
                true
            }
            _ => false,
        }
    }

    /// A cached block of exactly `bytes`, now the caller's.
    pub(crate) fn take(&mut self, bytes: usize) -> Option<sys::CUdeviceptr> {
        let list = self.blocks.get_mut(&bytes)?;
        let ptr = list.pop()?;
        if list.is_empty() {
            self.blocks.remove(&bytes);
        }
        self.held -= bytes;
        Some(ptr)
    }

    /// Every cached block, now the caller's to free; the cache is empty after.
    pub(crate) fn drain(&mut self) -> Vec<sys::CUdeviceptr> {
        self.held = 0;
        self.blocks.drain().flat_map(|(_, v)| v).collect()
    }

    /// Bytes held.
    pub(crate) fn held(&self) -> usize {
        self.held
    }

    /// The most bytes the cache holds; blocks beyond it are the caller's to free (returned).
    pub(crate) fn set_limit(&mut self, limit: usize) -> Vec<sys::CUdeviceptr> {
        self.limit = limit;
        let mut over = Vec::new();
        // Largest first, so that few blocks go.
        let mut sizes: Vec<usize> = self.blocks.keys().copied().collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        for size in sizes {
            while self.held > self.limit {
                match self.take(size) {
                    Some(p) => over.push(p),
                    None => break,
                }
            }
        }
        over
    }
}

#[cfg(test)]
mod tests {
    use super::BlockCache;

    #[test]
    fn blocks_come_back_by_exact_size_within_the_limit() {
        let mut c = BlockCache::default();
        assert!(!c.put(0x1000, 256), "a zero limit keeps nothing");
        assert!(c.set_limit(1024).is_empty());
        assert!(c.put(0x1000, 256) && c.put(0x2000, 256) && c.put(0x3000, 512));
        assert!(!c.put(0x4000, 1), "past the limit");
        assert!(!c.put(0x5000, 0), "an empty block is never kept");
        assert_eq!(c.held(), 1024);
        assert_eq!(c.take(128), None, "no block of another size is handed out");
        let a = c.take(256).unwrap();
        let b = c.take(256).unwrap();
        assert_ne!(a, b);
        assert_eq!(c.take(256), None);
        assert_eq!(c.held(), 512);
        assert!(c.put(0x6000, 256));
        assert_eq!(c.set_limit(300), vec![0x3000], "the largest block goes first");
        assert_eq!(c.held(), 256);
        let mut all = c.drain();
        all.sort_unstable();
        assert_eq!(all, vec![0x6000]);
        assert_eq!((c.held(), c.take(256)), (0, None));
    }
}
