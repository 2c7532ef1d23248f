//! The logic shared by the device and page-locked memory pools: size classes, held blocks and
//! the accounting, independent of what kind of memory a block is (so it is tested without a GPU).
//!
//! A held block keeps the record of the streams that used it ([`StreamUses`], boxed once when
//! the block is first allocated, so that only a pointer moves in and out of the pool): the next
//! owner's first use on another stream waits for them, and a use on the same stream is ordered
//! by the stream itself, so a block goes back to the pool at once, whatever work on it is
//! queued.
//!
//! Sizes are rounded up to a class with two bits of mantissa (4, 5, 6, 7, 8, 10, 12, 14, 16,
//! 20, …), as PyCUDA's pools do: a block wastes at most a quarter of its size, and sizes that
//! differ by a little share a class and so reuse each other's blocks.

use crate::driver::ordering::{StreamUses, UseSet};
use crate::error::{MemoryError, Result};
use crate::sync::{LockRank, SpinGuard, SpinLock};

const MANTISSA_BITS: u32 = 2;
const MANTISSA_MASK: usize = (1 << MANTISSA_BITS) - 1;
/// Classes 0..NUM_BINS cover every size up to `MAX_POOLED`.
pub(crate) const NUM_BINS: usize = 64 << MANTISSA_BITS;
/// The largest size a pool rounds; more is refused (no machine has that much memory anyway).
pub(crate) const MAX_POOLED: usize = 1 << 62;

/// The size class of `bytes` (`bytes <= MAX_POOLED`).
#[inline]
pub(crate) fn bin_of(bytes: usize) -> usize {
    if bytes <= MANTISSA_MASK {
        return bytes;
    }
    let top = usize::BITS - 1 - bytes.leading_zeros();
    let shift = top - MANTISSA_BITS;
    let mantissa = (bytes >> shift) & MANTISSA_MASK;
    let bin = (((shift + 1) as usize) << MANTISSA_BITS) | mantissa;
    if bin_size(bin) < bytes {
        bin + 1
    } else {
        bin
    }
}

/// The bytes a block of class `bin` holds: the largest size that maps to it.
#[inline]
pub(crate) fn bin_size(bin: usize) -> usize {
    let exponent = bin >> MANTISSA_BITS;
    let mantissa = bin & MANTISSA_MASK;
    if exponent == 0 {
        mantissa
    } else {
        ((1 << MANTISSA_BITS) | mantissa) << (exponent - 1)
    }
}

/// Where a pool's blocks come from: device memory, page-locked host memory, or (in tests) the
/// host heap. Addresses are `u64` so that device and host addresses share one type.
pub(crate) trait RawAllocator: Send + Sync {
    /// A new block of exactly `bytes` (0 may return 0 without asking anyone).
    fn allocate(&self, bytes: usize) -> Result<u64>;
    /// Frees a block once the uses in `uses` have finished.
    ///
    /// # Safety
    /// `addr` came from `allocate(bytes)` on this allocator, is freed once, and nothing but the
    /// work recorded in `uses` can still use it.
    unsafe fn free_after(&self, addr: u64, bytes: usize, uses: UseSet);
    /// Frees what earlier `free_after`s are still waiting for, once it is free: called on
    /// out-of-memory before the one retry.
    fn reclaim(&self) {}
}

/// A block handed out by a pool: its address and size class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    pub addr: u64,
    pub bin: u16,
}

impl Block {
    /// The bytes the block really holds (at least what was asked for).
    pub fn capacity(&self) -> usize {
        bin_size(self.bin as usize)
    }
}

/// A held block: its address and the record of the streams that used it.
type HeldBlock = (u64, Box<StreamUses>);

struct State {
    /// Held (free) blocks per size class, with the record of the streams that used them. The
    /// vectors keep their capacity, so returning a block to a class that has held one before
    /// allocates nothing.
    bins: Vec<Vec<HeldBlock>>,
    held: usize,
    active: usize,
    held_bytes: usize,
    holding: bool,
}

/// A pool over one allocator. Thread-safe: one lock guards the held blocks and the counts; the
/// allocator is called outside it.
pub(crate) struct PoolCore<A: RawAllocator> {
    pub(crate) allocator: A,
    /// A spin lock: its critical sections are a few instructions (a push or a pop and three
    /// counters), taken twice per allocate + free, the pool's whole cost.
    state: SpinLock<State>,
}

impl<A: RawAllocator> PoolCore<A> {
    pub fn new(allocator: A) -> Self {
        PoolCore {
            allocator,
            state: SpinLock::new(
                LockRank::PoolState,
                State {
                    bins: (0..NUM_BINS).map(|_| Vec::new()).collect(),
                    held: 0,
                    active: 0,
                    held_bytes: 0,
                    holding: true,
                },
            ),
        }
    }

    #[inline]
    fn lock(&self) -> SpinGuard<'_, State> {
        // Every critical section leaves the state consistent; a panic in one (none is
        // expected: pushes, pops and counters) still releases the lock through the guard.
        self.state.lock()
    }

    /// A block of at least `bytes`, with the uses its previous owners left outstanding: a held
    /// one of the same class if there is one, else a new one. When the allocator reports
    /// out-of-memory, the held blocks are freed and the allocation retried once; a second
    /// failure is returned.
    #[inline]
    pub fn allocate(&self, bytes: usize, what: &'static str) -> Result<(Block, Box<StreamUses>)> {
        if bytes > MAX_POOLED {
            return Err(MemoryError::PoolBlockTooLarge {
                operation: what,
                bytes,
                max: MAX_POOLED,
            }
            .into());
        }
        let bin = bin_of(bytes);
        {
            let mut st = self.lock();
            if let Some((addr, uses)) = st.bins[bin].pop() {
                st.held -= 1;
                st.held_bytes -= bin_size(bin);
                st.active += 1;
                let block = Block {
                    addr,
                    bin: bin as u16,
                };
                return Ok((block, uses));
            }
        }
        self.allocate_new(bin)
    }

    #[cold]
    fn allocate_new(&self, bin: usize) -> Result<(Block, Box<StreamUses>)> {
        let size = bin_size(bin);
        let addr = match self.allocator.allocate(size) {
            Ok(addr) => addr,
            Err(e) if e.is_out_of_memory() => {
                self.free_held();
                self.allocator.reclaim();
                self.allocator.allocate(size)?
            }
            Err(e) => return Err(e),
        };
        self.lock().active += 1;
        let block = Block {
            addr,
            bin: bin as u16,
        };
        Ok((block, Box::new(StreamUses::new())))
    }

    /// Returns a block to the pool with the uses still outstanding on it: held for reuse, or
    /// freed once they finish if the pool stopped holding.
    ///
    /// # Safety
    /// `block` came from `allocate` on this pool, is returned once, and nothing but the work
    /// recorded in `uses` can still use it.
    #[inline]
    pub unsafe fn release(&self, block: Block, mut uses: Box<StreamUses>) {
        let bin = block.bin as usize;
        let mut st = self.lock();
        st.active -= 1;
        if st.holding {
            st.bins[bin].push((block.addr, uses));
            st.held += 1;
            st.held_bytes += bin_size(bin);
            return;
        }
        drop(st);
        // SAFETY: the caller's guarantee; the block is no longer referenced by the pool.
        unsafe { self.allocator.free_after(block.addr, bin_size(bin), uses.take()) };
    }

    /// Frees every held block (once the work queued on it has finished).
    pub fn free_held(&self) {
        let held: Vec<(usize, Vec<HeldBlock>)> = {
            let mut st = self.lock();
            st.held = 0;
            st.held_bytes = 0;
            st.bins
                .iter_mut()
                .enumerate()
                .filter(|(_, b)| !b.is_empty())
                .map(|(bin, b)| (bin, std::mem::take(b)))
                .collect()
        };
        // Freed outside the lock: a free may wait for the driver.
        for (bin, blocks) in held {
            for (addr, mut uses) in blocks {
                // SAFETY: held blocks came from this allocator and nobody holds them; the work
                // recorded in `uses` is all that can still touch them.
                unsafe { self.allocator.free_after(addr, bin_size(bin), uses.take()) };
            }
        }
    }

    /// Frees every held block and, from now on, frees blocks as they come back.
    pub fn stop_holding(&self) {
        self.lock().holding = false;
        self.free_held();
    }

    /// `(held blocks, active blocks, held bytes)`.
    pub fn counts(&self) -> (usize, usize, usize) {
        let st = self.lock();
        (st.held, st.active, st.held_bytes)
    }
}

impl<A: RawAllocator> Drop for PoolCore<A> {
    fn drop(&mut self) {
        // Active blocks each hold an Arc to the pool, so none are left; free what is held.
        self.free_held();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn size_classes_round_up_by_at_most_a_quarter() {
        for bytes in (0..5000).chain([1 << 20, (1 << 20) + 1, 3 << 29, MAX_POOLED]) {
            let bin = bin_of(bytes);
            let size = bin_size(bin);
            assert!(size >= bytes, "{bytes} -> bin {bin} of {size}");
            assert!(bin < NUM_BINS);
            if bytes >= 4 {
                assert!(size - bytes <= bytes / 4, "{bytes} -> {size}");
            }
            assert_eq!(bin_of(size), bin, "a class's own size maps back to it");
            if bin > 0 {
                assert!(
                    bin_size(bin - 1) < bytes,
                    "{bytes}: the class below would have fit"
                );
            }
        }
        // Hand-computed: 9 -> 10, 1 MiB stays, 1 MiB + 1 -> 1.25 MiB.
        assert_eq!(bin_size(bin_of(9)), 10);
        assert_eq!(bin_size(bin_of(1 << 20)), 1 << 20);
        assert_eq!(bin_size(bin_of((1 << 20) + 1)), 5 << 18);
        assert_eq!(bin_size(bin_of(1_000_000)), 1 << 20);
    }

    /// The host heap as a pool's memory, counting live allocations, and failing with a driver
    /// out-of-memory error once `limit` bytes are live.
    pub(crate) struct HeapAllocator {
        pub live: AtomicUsize,
        pub live_bytes: AtomicUsize,
        pub limit: usize,
    }

    impl HeapAllocator {
        pub fn new(limit: usize) -> Self {
            HeapAllocator {
                live: AtomicUsize::new(0),
                live_bytes: AtomicUsize::new(0),
                limit,
            }
        }
    }

    impl RawAllocator for HeapAllocator {
        fn allocate(&self, bytes: usize) -> Result<u64> {
            if self.live_bytes.load(Ordering::SeqCst) + bytes > self.limit {
                return Err(crate::driver::result::driver_error(
                    "malloc",
                    cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                ));
            }
            self.live.fetch_add(1, Ordering::SeqCst);
            self.live_bytes.fetch_add(bytes, Ordering::SeqCst);
            let layout = std::alloc::Layout::from_size_align(bytes.max(1), 8).unwrap();
            // SAFETY: the layout has a non-zero size.
            Ok(unsafe { std::alloc::alloc(layout) } as u64)
        }
        unsafe fn free_after(&self, addr: u64, bytes: usize, _uses: UseSet) {
            self.live.fetch_sub(1, Ordering::SeqCst);
            self.live_bytes.fetch_sub(bytes, Ordering::SeqCst);
            let layout = std::alloc::Layout::from_size_align(bytes.max(1), 8).unwrap();
            // SAFETY: allocated above with the same layout.
            unsafe { std::alloc::dealloc(addr as *mut u8, layout) };
        }
    }

    #[test]
    fn blocks_are_reused_within_a_class_and_counted() {
        let pool = PoolCore::new(HeapAllocator::new(usize::MAX));
        let a = pool.allocate(1000, "t").unwrap().0;
        let b = pool.allocate(1000, "t").unwrap().0;
        assert_ne!(a.addr, b.addr);
        assert_eq!(pool.counts(), (0, 2, 0));
        // SAFETY: each block is returned once.
        unsafe { pool.release(a, Box::default()) };
        assert_eq!(pool.counts(), (1, 1, 1024));
        // 1000 and 1020 share the 1024 class, so the held block comes back.
        let c = pool.allocate(1020, "t").unwrap().0;
        assert_eq!(c.addr, a.addr);
        assert_eq!(pool.allocator.live.load(Ordering::SeqCst), 2);
        // A different class gets a new block.
        let d = pool.allocate(5000, "t").unwrap().0;
        assert_eq!(pool.allocator.live.load(Ordering::SeqCst), 3);
        // SAFETY: each block is returned once.
        unsafe {
            pool.release(b, Box::default());
            pool.release(c, Box::default());
            pool.release(d, Box::default());
        }
        assert_eq!(pool.counts().0, 3);
        pool.free_held();
        assert_eq!(pool.counts(), (0, 0, 0));
        assert_eq!(pool.allocator.live.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn stop_holding_frees_returned_blocks_at_once() {
        let pool = PoolCore::new(HeapAllocator::new(usize::MAX));
        let a = pool.allocate(64, "t").unwrap().0;
        let b = pool.allocate(64, "t").unwrap().0;
        // SAFETY: returned once.
        unsafe { pool.release(a, Box::default()) };
        pool.stop_holding();
        assert_eq!(pool.counts(), (0, 1, 0));
        // SAFETY: returned once.
        unsafe { pool.release(b, Box::default()) };
        assert_eq!(pool.counts(), (0, 0, 0));
        assert_eq!(pool.allocator.live.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn out_of_memory_frees_held_blocks_and_retries_once() {
        let pool = PoolCore::new(HeapAllocator::new(4096));
        let a = pool.allocate(2048, "t").unwrap().0;
        let b = pool.allocate(2048, "t").unwrap().0;
        // SAFETY: returned once.
        unsafe { pool.release(a, Box::default()) };
        // 1500 is another class: the allocator is full until the held 2048 block is freed.
        let c = pool.allocate(1500, "t").unwrap().0;
        assert_eq!(pool.counts(), (0, 2, 0), "the held block was given up");
        // Now really full: the error comes back typed, and the pool still works.
        let e = pool.allocate(4096, "t").unwrap_err();
        assert!(e.is_out_of_memory(), "{e}");
        assert_eq!(pool.counts(), (0, 2, 0));
        // SAFETY: returned once.
        unsafe {
            pool.release(b, Box::default());
            pool.release(c, Box::default());
        }
        assert_eq!(pool.counts().1, 0);
        assert!(pool.allocate(MAX_POOLED + 1, "t").is_err());
    }

    #[test]
    fn random_workload_from_threads_keeps_counts_exact_and_blocks_disjoint() {
        let pool = Arc::new(PoolCore::new(HeapAllocator::new(usize::MAX)));
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let pool = pool.clone();
                s.spawn(move || {
                    let mut rng = t * 7919 + 1;
                    let mut mine: Vec<(Block, usize, u8)> = Vec::new();
                    for _ in 0..2000 {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        if mine.len() < 20 && (!rng.is_multiple_of(3) || mine.is_empty()) {
                            let bytes = 1 + (rng >> 8) as usize % 3000;
                            let blk = pool.allocate(bytes, "t").unwrap().0;
                            let tag = (rng >> 40) as u8;
                            // SAFETY: the block holds at least `bytes` and is ours alone.
                            unsafe { std::ptr::write_bytes(blk.addr as *mut u8, tag, bytes) };
                            mine.push((blk, bytes, tag));
                        } else {
                            let (blk, bytes, tag) = mine.swap_remove((rng >> 20) as usize % mine.len());
                            // SAFETY: as above; a block handed to two owners would show here.
                            let got = unsafe { std::slice::from_raw_parts(blk.addr as *const u8, bytes) };
                            assert!(got.iter().all(|&b| b == tag), "a block was shared");
                            // SAFETY: returned once.
                            unsafe { pool.release(blk, Box::default()) };
                        }
                    }
                    for (blk, ..) in mine {
                        // SAFETY: returned once.
                        unsafe { pool.release(blk, Box::default()) };
                    }
                });
            }
        });
        let (held, active, _) = pool.counts();
        assert_eq!(active, 0);
        assert_eq!(held, pool.allocator.live.load(Ordering::SeqCst));
    }
}
