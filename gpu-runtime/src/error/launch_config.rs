//! [`LaunchConfigError`]: a launch configuration refused before the launch.

/// A launch configuration rejected before the launch, with the limit it broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchConfigError {
    /// A grid or block dimension below 1.
    #[error("invalid launch: {which} is {value}, but every grid and block dimension must be at least 1")]
    ZeroDimension {
        /// `grid.x`, `block.z`, ...
        which: &'static str,
        /// The value given.
        value: i64,
    },
    /// A block dimension above the device's maximum for that axis.
    #[error("invalid launch: {which} is {value}, but this device allows at most {limit} (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{axis})")]
    BlockDimTooLarge {
        /// `block.x`, `block.y` or `block.z`.
        which: &'static str,
        /// `X`, `Y` or `Z`.
        axis: &'static str,
        /// The value given.
        value: i64,
        /// The device's maximum.
        limit: u32,
    },
    /// A grid dimension above the device's maximum for that axis.
    #[error("invalid launch: {which} is {value}, but this device allows at most {limit} (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{axis})")]
    GridDimTooLarge {
        /// `grid.x`, `grid.y` or `grid.z`.
        which: &'static str,
        /// `X`, `Y` or `Z`.
        axis: &'static str,
        /// The value given.
        value: i64,
        /// The device's maximum.
        limit: u32,
    },
    /// More threads per block than the device, or this compiled kernel, can run.
    #[error(
        "invalid launch: a block of {threads} threads is more than {limit}, the most {by} can run per block"
    )]
    TooManyThreads {
        /// `block.x * block.y * block.z`.
        threads: u64,
        /// The maximum.
        limit: u32,
        /// "this device" or "this kernel (limited by its registers)".
        by: &'static str,
    },
    /// More dynamic shared memory than a block may have.
    #[error("invalid launch: {requested} bytes of dynamic shared memory plus {static_bytes} bytes of static shared memory is more than {limit} bytes, the most a block may use on this device")]
    SharedMemoryTooLarge {
        /// Dynamic bytes asked for.
        requested: u64,
        /// The kernel's static shared memory.
        static_bytes: u32,
        /// The device's per-block maximum.
        limit: u32,
    },
    /// A grid extent that is not a multiple of the cluster's extent along that axis.
    #[error("invalid launch: {which} is {grid}, which is not a multiple of the cluster's {cluster} along {axis}; every cluster must be whole")]
    ClusterNotDivisible {
        /// `grid.x`, `grid.y` or `grid.z`.
        which: &'static str,
        /// `X`, `Y` or `Z`.
        axis: &'static str,
        /// The grid extent.
        grid: u32,
        /// The cluster extent.
        cluster: u32,
    },
    /// A cluster of more blocks than this kernel may have.
    #[error("invalid launch: a cluster of {size} blocks is more than {limit}, the most {why}")]
    ClusterTooLarge {
        /// Blocks per cluster.
        size: u64,
        /// The maximum.
        limit: u32,
        /// Which limit, and how to raise it where it can be.
        why: &'static str,
    },
    /// Cluster dimensions that differ from the kernel's `__cluster_dims__`.
    #[error("invalid launch: cluster dimensions {requested:?} differ from {compiled:?}, the kernel's `__cluster_dims__` (CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_*); launch it with those, or remove `__cluster_dims__` from the source")]
    ClusterConflict {
        /// What the launch asked for.
        requested: [u32; 3],
        /// What the kernel was compiled with.
        compiled: [u32; 3],
    },
    /// No cluster of this shape can be resident on the device (cuOccupancyMaxActiveClusters
    /// is 0), e.g. because its blocks together need more shared memory than a GPC has.
    #[error("invalid launch: no cluster of {cluster:?} blocks of {threads} threads with {shared_mem_bytes} bytes of dynamic shared memory can be resident on this device (cuOccupancyMaxActiveClusters is 0); use smaller clusters, blocks or shared memory")]
    ClusterNotResident {
        /// The cluster's extents in blocks.
        cluster: [u32; 3],
        /// Threads per block.
        threads: u64,
        /// Dynamic shared memory per block.
        shared_mem_bytes: u32,
    },
    /// A cooperative launch whose blocks cannot all be resident at once, so a grid-wide sync
    /// would never return.
    #[error("invalid cooperative launch: {units} {unit} cannot all be resident at once; this kernel fits at most {limit} with this block size and shared memory ({how})")]
    NotCoResident {
        /// Blocks (or clusters) in the grid.
        units: u64,
        /// `blocks` or `clusters`.
        unit: &'static str,
        /// The most that can be resident at once.
        limit: u64,
        /// How the limit was computed, e.g. `2 blocks per SM x 132 SMs`.
        how: String,
    },
    /// A thread-block cluster on a device older than compute capability 9.0.
    #[error("invalid launch: thread-block clusters need compute capability 9.0 or later, and this device is {}.{}", .compute_capability.0, .compute_capability.1)]
    ClustersUnsupported {
        /// The device's compute capability.
        compute_capability: (u32, u32),
    },
    /// A cooperative launch on a device without CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH.
    #[error("invalid launch: this device does not support cooperative launches (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)")]
    CooperativeUnsupported,
    /// A programmatic dependent launch on a device older than compute capability 9.0.
    #[error("invalid launch: programmatic dependent launches need compute capability 9.0 or later, and this device is {}.{}", .compute_capability.0, .compute_capability.1)]
    DependentLaunchUnsupported {
        /// The device's compute capability.
        compute_capability: (u32, u32),
    },
}
