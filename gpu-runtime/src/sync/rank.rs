//! The one order in which the crate's locks may be nested.
//!
//! A thread may take a lock only when its rank is greater than the rank of every lock it holds
//! (a rank marked [`LockRank::by_address`] may also follow itself, at a higher address). Two
//! threads that follow one order never wait for each other in a cycle, so no set of the crate's
//! locks can deadlock. Debug builds check it at each acquisition (`held.rs`), as wgpu-core
//! checks its lock ranks; the check is of the crate's own code: user code that runs under one
//! of these locks is named at its rank.
//!
//! Lowest first. A lock's line says what it guards and, where it is not a leaf, what is taken
//! while it is held. A context's state may be dropped, its last handle going, wherever a
//! stream's record is dropped (a stream holds its context weakly, and its drop and
//! `wait_for` briefly upgrade it): so the locks that `ContextInner`'s drop takes
//! ([`PoolState`](LockRank::PoolState), the graveyard's, [`ContextRegistry`](LockRank::ContextRegistry))
//! rank above every lock under which a stream's record can be dropped.

/// A lock's place in the order; declared lowest first, and compared by that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum LockRank {
    /// `launch::staging::copy_workers::test_serial` (unit tests only): one test at a time on
    /// the copy workers, held around everything those tests run.
    #[cfg(test)]
    TestSerial,
    /// `tools::printf` `CAPTURING`: one capture of standard output at a time. Held around the
    /// user's closure, which may do anything, so it ranks below every other lock.
    PrintfCapture,
    /// `driver::future::signal::Signal`: whether the GPU work a future waits for has finished,
    /// and the waker to wake. The executor's waker is cloned and dropped under it (user code).
    FutureSignal,
    /// `tools::memoize::ContextCache`'s map: the values cached per context and key. A value's
    /// `Clone` runs under it, and its drop when another thread's value won a race (user code
    /// for a user's cache; for the crate's, kernels, whose modules' records are dropped).
    ContextCacheValues,
    /// `Context::default`'s context, chosen once; held while it is chosen and opened
    /// ([`ContextsByDevice`](LockRank::ContextsByDevice) and what it takes).
    DefaultContext,
    /// `driver::context::core::per_device`: each device's primary context; held while one is
    /// retained and set up (its block cache's limit, [`ContextRegistry`](LockRank::ContextRegistry),
    /// and its drop on failure).
    ContextsByDevice,
    /// `driver::module::cache::ModuleCache`: a context's loaded modules, by source address and
    /// cache key, and the builds under way. Not held across a compile (racing threads wait
    /// for one build on its own cell instead); held while an image embedded at build time or a
    /// linked module is loaded ([`NvccVersions`](LockRank::NvccVersions) under it). The modules it drops drop their variables' records.
    ModuleCache,
    /// `gpuarray::scan::status`: one stream's tile-status buffer and its count, held from
    /// reading the count to queueing the scan's launch (an allocation, which may reclaim
    /// ([`ScanStatusByStream`](LockRank::ScanStatusByStream), [`PoolState`](LockRank::PoolState),
    /// the graveyard), a memset, the launch: [`ModuleGate`](LockRank::ModuleGate),
    /// [`StreamUses`](LockRank::StreamUses), [`ClusterLimits`](LockRank::ClusterLimits)).
    #[cfg_attr(not(feature = "gpuarray"), allow(dead_code))]
    ScanStatus,
    /// `gpuarray::scan::status::ScanStatus`: a context's tile-status buffers by stream; the
    /// buffers it drops go to the graveyard.
    #[cfg_attr(not(feature = "gpuarray"), allow(dead_code))]
    ScanStatusByStream,
    /// `driver::ordering::module_uses`: a module's gate, held from recording a use of its
    /// variables to queueing it ([`StreamUses`](LockRank::StreamUses), and a launch's
    /// [`ClusterLimits`](LockRank::ClusterLimits)). A graph launch holds the gates of several
    /// modules, taken in address order.
    ModuleGate,
    /// `launch::cluster`: a launch configuration's occupancy limits, asked of the driver once
    /// per block size and shared memory.
    ClusterLimits,
    /// `driver::ordering::lend_group::LendGroups`: a context's groups of lends of cudarc
    /// allocations; a group's lock ([`LendGroup`](LockRank::LendGroup)) is taken under it.
    LendGroups,
    /// `driver::ordering::lend_group::LendGroup`: the streams one allocation's lends used.
    LendGroup,
    /// `driver::cudarc_interop::state`: the streams handed to or taken from cudarc, by handle.
    CudarcStreams,
    /// `driver::ordering::uses::StreamUses`: an allocation's record of the streams that used
    /// it; held while a use waits for other streams (driver calls only).
    StreamUses,
    /// `driver::memory::pool_core`: a memory pool's held blocks and counts (a spin lock; no
    /// call is made under it).
    PoolState,
    /// `driver::ordering::graveyard`: a context's releases waiting for their streams; held
    /// while the due ones are freed ([`GraveyardSpare`](LockRank::GraveyardSpare),
    /// [`GraveyardCache`](LockRank::GraveyardCache)).
    GraveyardPending,
    /// `driver::ordering::graveyard`: a context's spare events.
    GraveyardSpare,
    /// `driver::ordering::graveyard`: a context's cache of freed blocks (`BlockCache`).
    GraveyardCache,
    /// `driver::context::core::registry`: every live context, by handle.
    ContextRegistry,
    // Leaves: nothing is taken under these, so their order among themselves is arbitrary.
    /// `driver::context::core::ContextInner::peers`: the contexts given peer access.
    ContextPeers,
    /// `launch::staging::ContextStaging::events`: a context's spare events for staged copies.
    StagingEvents,
    /// `launch::staging::chunks::run_roles`: the first error of a staged copy's driver thread.
    StagingFailed,
    /// `launch::staging::copy_workers`: the first panic a copy helper raised in a task.
    CopyPoolPanic,
    /// `launch::staging::copy_workers`: where idle copy helpers sleep (with a condvar).
    CopyPoolSleep,
    /// `launch::staging::copy_workers`: where a caller sleeps for its last helper (with a
    /// condvar).
    CopyPoolIdle,
    /// `gpuarray::kernels::registry::Definitions`: one kind's generated kernel definitions;
    /// held while one is written (text only, no other lock).
    #[cfg_attr(not(feature = "gpuarray"), allow(dead_code))]
    KernelDefinitions,
    /// `gpuarray::array::readback::Readback`: a context's spare mapped slots for values read
    /// back (pushed and popped only; a slot is made and dropped outside it).
    #[cfg_attr(not(feature = "gpuarray"), allow(dead_code))]
    ReadbackSlots,
    /// `tools::memoize`: every `ContextCache` used, for `clear_context_caches`.
    ContextCacheRegistry,
    /// `compiler::toolchain::nvcc_version`: `nvcc --version` per path (runs nvcc under it).
    NvccVersions,
    /// `compiler::cache::trust`: the cache directories found trustworthy.
    CacheTrust,
    /// `nccl::rendezvous`: a rank's connection to the store, one request and answer at a time.
    #[cfg_attr(not(feature = "nccl"), allow(dead_code))]
    NcclConnection,
    /// `nccl::rendezvous::server`: the store's contents (with a condvar for waits).
    #[cfg_attr(not(feature = "nccl"), allow(dead_code))]
    NcclStore,
}

impl LockRank {
    /// Locks of this rank may be nested, each at a higher address than the last: the only such
    /// nesting is a graph launch's module gates, which it takes in address order.
    // Read only by the debug-build order check (`held.rs`).
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub(crate) const fn by_address(self) -> bool {
        matches!(self, LockRank::ModuleGate)
    }
}
