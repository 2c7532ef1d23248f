//! Launches with thread-block clusters and cooperative launches: `cuLaunchKernelEx` with
//! `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` and `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`, after the
//! checks the driver would otherwise fail obscurely (or, for a cooperative grid that cannot be
//! resident, hang on its grid-wide sync):
//!
//! - when the handle is made (`with_cluster`, `cooperative`, or the `cluster = (x, y, z)` /
//!   `cooperative` keys of `#[kernel]`): compute capability 9.0 for clusters, the kernel's
//!   `__cluster_dims__` (CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_*) against the dimensions asked
//!   for, the cluster size against 8 (portable) or 16 (with
//!   CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED), device support for cooperative
//!   launches;
//! - at each launch, before the driver: the usual grid and block checks (`dims::validate`),
//!   the grid a multiple of the cluster, and occupancy: a cluster shape no SM group can hold
//!   (`cuOccupancyMaxActiveClusters` = 0) and a cooperative grid larger than what can be
//!   resident at once are refused. The occupancy figures depend on the block size and the
//!   shared memory only, so they are asked once per such pair and kept with the handle.
//!
//! A programmatic dependent launch (`LaunchEx::with_dependent_launch`, compute capability 9.0)
//! adds `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`: the kernel may start while the
//! kernel before it on the stream is still running, and must call
//! `cudaGridDependencySynchronize()` before it reads what that kernel wrote (the contract of
//! the `unsafe` method that makes it). Without a cluster or a cooperative grid it needs no
//! occupancy figure, so its launches skip that lookup.
//!
//! A plain kernel handle carries no configuration (`LaunchEx(None)`), so its launches take the
//! `cuLaunchKernel` path of `raw.rs` after one pointer test.

use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUfunction_attribute as FuncAttr};

use crate::driver::calls::launch as calls;
use crate::driver::init::driver_version;
use crate::driver::module::function::Function;
use crate::error::{Error, LaunchConfigError, Result};
use crate::launch::dims::{self, CheckedLaunch, Dim3};
use crate::launch::launch_stream::LaunchStream;
use crate::sync::{LockRank, Mutex};

/// The largest portable cluster, and the largest any current GPU runs (non-portable).
const PORTABLE_CLUSTER: u64 = 8;
const MAX_CLUSTER: u64 = 16;
const GRID: [&str; 3] = ["grid.x", "grid.y", "grid.z"];
const CLUSTER: [&str; 3] = ["cluster.x", "cluster.y", "cluster.z"];
const AXES: [&str; 3] = ["X", "Y", "Z"];

/// How a kernel handle launches: plainly (`cuLaunchKernel`), or with a cluster shape and/or
/// cooperatively (`cuLaunchKernelEx`). Made by the generated `with_cluster` and `cooperative`.
#[doc(hidden)]
#[derive(Clone, Default)]
pub struct LaunchEx(Option<Arc<ExConfig>>);

struct ExConfig {
    cluster: Option<[u32; 3]>,
    /// The cluster shape is the kernel's `__cluster_dims__`: the launch must not set it again.
    compiled: bool,
    cooperative: bool,
    /// A programmatic dependent launch: the kernel may start before its predecessor on the
    /// stream (or, in a graph, the nodes it depends on) has finished.
    dependent: bool,
    sm_count: u32,
    /// Occupancy limits by `(threads per block, dynamic shared bytes)`: clusters resident at
    /// once when there is a cluster, else blocks per SM.
    limits: Mutex<Vec<(u64, u64)>>,
}

impl std::fmt::Debug for LaunchEx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => write!(f, "plain"),
            Some(c) => write!(
                f,
                "cluster {:?}, cooperative {}, dependent launch {}",
                c.cluster, c.cooperative, c.dependent
            ),
        }
    }
}

fn func_attr(f: &Function, attr: FuncAttr) -> Result<u32> {
    f.attribute(attr).map(|v| v.max(0) as u32)
}

impl Function {
    /// The kernel's compile-time cluster shape (`__cluster_dims__`), if it has one.
    pub fn cluster_dims(&self) -> Result<Option<[u32; 3]>> {
        self.context().bind()?;
        let w = func_attr(self, FuncAttr::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH)?;
        if w == 0 {
            return Ok(None);
        }
        let h = func_attr(self, FuncAttr::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT)?;
        let d = func_attr(self, FuncAttr::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH)?;
        Ok(Some([w, h.max(1), d.max(1)]))
    }

    /// Lets this kernel launch clusters of more than 8 blocks (up to 16 on H100), which not
    /// every GPU can run (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED).
    pub fn allow_non_portable_cluster_size(&self) -> Result<()> {
        self.context().bind()?;
        // SAFETY: live function; the attribute takes 0 or 1.
        unsafe {
            calls::func_set_attribute(
                self.raw(),
                FuncAttr::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                1,
            )
        }
        .map_err(Error::from)
    }

    /// How many clusters of `cluster` blocks of `block` threads (with this handle's dynamic
    /// shared memory) can be resident on the device at once (`cuOccupancyMaxActiveClusters`);
    /// 0 when none can.
    pub fn max_active_clusters(&self, cluster: impl Into<Dim3>, block: impl Into<Dim3>) -> Result<u32> {
        let ex = LaunchEx::default().with_cluster(self, cluster.into())?;
        let cfg = dims::validate(
            ex.cluster_or_one(),
            block.into(),
            self.shared_mem_bytes,
            self.context().limits(),
            self.kernel_limits()?,
        )?;
        let c = ex.0.as_deref().and_then(|c| c.cluster.map(|d| (d, c.compiled)));
        self.opt_in_for(&cfg)?;
        occupancy_clusters(self, &cfg, c)
    }

    /// Opts in to the dynamic shared memory of `cfg` when it exceeds the default 48 KiB.
    pub(crate) fn opt_in_for(&self, cfg: &CheckedLaunch) -> Result<()> {
        if cfg.shared_mem_bytes > self.optin_shared.load(Ordering::Relaxed)
            && cfg.shared_mem_bytes + self.kernel_limits()?.static_shared_bytes
                > self.context().limits().max_shared_memory_per_block
        {
            self.opt_in_shared(cfg.shared_mem_bytes)?;
        }
        Ok(())
    }
}

fn cluster_attr(d: [u32; 3]) -> sys::CUlaunchAttribute {
    sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            clusterDim: sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
                x: d[0],
                y: d[1],
                z: d[2],
            },
        },
    }
}

fn cooperative_attr() -> sys::CUlaunchAttribute {
    sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue { cooperative: 1 },
    }
}

fn dependent_attr() -> sys::CUlaunchAttribute {
    sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            programmaticStreamSerializationAllowed: 1,
        },
    }
}

fn config(
    cfg: &CheckedLaunch,
    stream: sys::CUstream,
    attrs: &mut [sys::CUlaunchAttribute],
) -> sys::CUlaunchConfig {
    sys::CUlaunchConfig {
        gridDimX: cfg.grid[0],
        gridDimY: cfg.grid[1],
        gridDimZ: cfg.grid[2],
        blockDimX: cfg.block[0],
        blockDimY: cfg.block[1],
        blockDimZ: cfg.block[2],
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
    }
}

/// `cuOccupancyMaxActiveClusters` for `cfg`'s block and shared memory and the cluster `c`
/// (with whether it is the kernel's compiled shape, which the query must not set again).
fn occupancy_clusters(f: &Function, cfg: &CheckedLaunch, c: Option<([u32; 3], bool)>) -> Result<u32> {
    let Some((d, compiled)) = c else { return Ok(0) };
    // The query's grid must be whole clusters: one cluster is.
    let one = CheckedLaunch { grid: d, ..*cfg };
    let mut attrs = [cluster_attr(d)];
    let n_attrs = if compiled { 0 } else { 1 };
    let lc = config(&one, std::ptr::null_mut(), &mut attrs[..n_attrs]);
    f.context().bind()?;
    // SAFETY: live function; `lc` and its attribute array outlive the call.
    let n = unsafe { calls::occupancy_max_active_clusters(f.raw(), &lc) }?;
    Ok(n.max(0) as u32)
}

impl LaunchEx {
    /// True for a plain launch.
    #[inline(always)]
    pub fn is_plain(&self) -> bool {
        self.0.is_none()
    }

    /// True for a launch without a cluster shape and not cooperative (plain or only a
    /// dependent launch): what a built graph's kernel node and a node update can express.
    #[inline]
    pub(crate) fn is_plain_shape(&self) -> bool {
        self.0
            .as_deref()
            .is_none_or(|c| c.cluster.is_none() && !c.cooperative)
    }

    /// True for a programmatic dependent launch ([`LaunchEx::with_dependent_launch`]).
    #[inline]
    pub(crate) fn is_dependent(&self) -> bool {
        self.0.as_deref().is_some_and(|c| c.dependent)
    }

    fn get(&self) -> (Option<[u32; 3]>, bool, bool) {
        match &self.0 {
            None => (None, false, false),
            Some(c) => (c.cluster, c.compiled, c.cooperative),
        }
    }

    fn cluster_or_one(&self) -> Dim3 {
        match self.get().0 {
            Some([x, y, z]) => Dim3::new(x as i64, y as i64, z as i64),
            None => Dim3::new(1, 1, 1),
        }
    }

    fn make(
        f: &Function,
        cluster: Option<([u32; 3], bool)>,
        cooperative: bool,
        dependent: bool,
    ) -> Result<LaunchEx> {
        let device = f.context().device();
        let sm_count = device
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?
            .max(1) as u32;
        Ok(LaunchEx(Some(Arc::new(ExConfig {
            cluster: cluster.map(|c| c.0),
            compiled: cluster.is_some_and(|c| c.1),
            cooperative,
            dependent,
            sm_count,
            limits: Mutex::new(LockRank::ClusterLimits, Vec::new()),
        }))))
    }

    /// This configuration with clusters of `dims` blocks, checked against the device and the
    /// kernel `f` (see the module docs).
    pub fn with_cluster(&self, f: &Function, dims: Dim3) -> Result<LaunchEx> {
        let d = [dims.x, dims.y, dims.z];
        let mut c = [0u32; 3];
        for i in 0..3 {
            dims::at_least_one(CLUSTER[i], d[i])?;
            if d[i] > MAX_CLUSTER as i64 {
                return Err(too_large(d[i] as u64, MAX_CLUSTER as u32).into());
            }
            c[i] = d[i] as u32;
        }
        let cc = f.context().compute_capability();
        if cc.0 < 9 {
            return Err(LaunchConfigError::ClustersUnsupported {
                compute_capability: cc,
            }
            .into());
        }
        let compiled = f.cluster_dims()?;
        if let Some(compiled) = compiled {
            if compiled != c {
                return Err(LaunchConfigError::ClusterConflict {
                    requested: c,
                    compiled,
                }
                .into());
            }
        }
        let size = dims.threads();
        if size > MAX_CLUSTER {
            return Err(too_large(size, MAX_CLUSTER as u32).into());
        }
        if size > PORTABLE_CLUSTER
            && func_attr(f, FuncAttr::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)? == 0
        {
            return Err(LaunchConfigError::ClusterTooLarge {
                size,
                limit: PORTABLE_CLUSTER as u32,
                why: "a portable cluster may have; `function().allow_non_portable_cluster_size()` allows up to 16 on GPUs that run them",
            }
            .into());
        }
        LaunchEx::make(
            f,
            Some((c, compiled.is_some())),
            self.get().2,
            self.is_dependent(),
        )
    }

    /// This configuration, launched cooperatively (grid-wide sync allowed), after checking the
    /// device supports it.
    pub fn with_cooperative(&self, f: &Function) -> Result<LaunchEx> {
        let device = f.context().device();
        if device.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? == 0 {
            return Err(LaunchConfigError::CooperativeUnsupported.into());
        }
        let (cluster, compiled, _) = self.get();
        LaunchEx::make(f, cluster.map(|c| (c, compiled)), true, self.is_dependent())
    }

    /// This configuration as a programmatic dependent launch
    /// (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`; in a built graph, programmatic
    /// edges from the node's dependencies): the kernel may start while the kernel before it on
    /// the stream is still running, so that its launch and prologue overlap that kernel's
    /// tail. Refused on devices older than compute capability 9.0
    /// ([`LaunchConfigError::DependentLaunchUnsupported`]).
    ///
    /// # Safety
    /// The kernel launched with it calls `cudaGridDependencySynchronize()` in every thread
    /// (before an early `return` too), and before the thread touches any memory that work
    /// queued before the kernel (on its stream; in a graph, the nodes it depends on) reads or
    /// writes. Until that call the kernel runs beside the kernel before it, outside the stream
    /// ordering this crate keeps for every buffer; the call waits until that kernel has
    /// finished and its writes are visible. Every thread, because a kernel that never waits
    /// could finish before the kernel before it, and the kernels after it would then wait for
    /// it alone. `cudaTriggerProgrammaticLaunchCompletion()` in the kernel before only lets
    /// this one start earlier; it makes nothing visible.
    pub unsafe fn with_dependent_launch(&self, f: &Function) -> Result<LaunchEx> {
        // Its graph form, programmatic edges, is CUDA 12.3's (cudarc panics on a symbol the
        // driver lacks, so ask for the version first).
        let version = driver_version()?;
        if version < (12, 3) {
            return Err(Error::Unsupported {
                what: "a programmatic dependent launch",
                needs: format!("CUDA 12.3 or later (the driver is {}.{})", version.0, version.1),
            });
        }
        let cc = f.context().compute_capability();
        if cc.0 < 9 {
            return Err(LaunchConfigError::DependentLaunchUnsupported {
                compute_capability: cc,
            }
            .into());
        }
        let (cluster, compiled, cooperative) = self.get();
        LaunchEx::make(f, cluster.map(|c| (c, compiled)), cooperative, true)
    }

    /// [`launch`](Self::launch) on `stream`, ordered with the other uses of the variables of
    /// `f`'s module (see `driver::ordering::ModuleUses`): how every launch but a captured one
    /// is queued. For a module without variables, `launch` alone.
    ///
    /// # Safety
    /// As [`Function::launch_raw`], but for the module's variables, which this orders.
    #[inline(always)]
    pub(crate) unsafe fn launch_on(
        &self,
        f: &Function,
        grid: Dim3,
        block: Dim3,
        stream: LaunchStream<'_>,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        f.module_vars().launch(stream.inner(), || {
            // SAFETY: the caller's guarantee; the module's variables are ordered around this.
            unsafe { self.launch(f, grid, block, stream.raw(), params) }
        })?;
        // A capture another library began on the stream since `stream_arg` checked it took the
        // launch in: this invalidates that capture, so the launch never runs from its graph.
        stream.inner().refuse_foreign_capture()
    }

    /// Launches `f` as configured: `launch_raw` for a plain handle, else the checks of the
    /// module docs and `cuLaunchKernelEx`. Not ordered with the uses of the module's
    /// variables: [`launch_on`](Self::launch_on) does that; a capture calls this directly, since
    /// what it records runs only when the graph is launched.
    ///
    /// # Safety
    /// As [`Function::launch_raw`].
    #[inline(always)]
    pub(crate) unsafe fn launch(
        &self,
        f: &Function,
        grid: Dim3,
        block: Dim3,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let Some(c) = &self.0 else {
            // SAFETY: the caller's guarantee.
            return unsafe { f.launch_raw(grid, block, stream, params) };
        };
        let cfg = c.check(f, grid, block)?;
        let (mut attrs, n) = c.attributes();
        let lc = config(&cfg, stream, &mut attrs[..n]);
        // SAFETY: the configuration was validated and its attributes outlive the call; the
        // caller guarantees the parameters.
        unsafe { calls::launch_kernel_ex(&lc, f.raw(), params.as_mut_ptr()) }.map_err(Error::from)
    }
}

fn too_large(size: u64, limit: u32) -> LaunchConfigError {
    LaunchConfigError::ClusterTooLarge {
        size,
        limit,
        why: "a cluster may have on any current GPU",
    }
}

impl ExConfig {
    /// The occupancy limit for `cfg` (see `limits`), asked of the driver once per block size
    /// and shared memory.
    fn limit(&self, f: &Function, cfg: &CheckedLaunch) -> Result<u64> {
        let threads = cfg.block.iter().map(|&b| b as u64).product::<u64>();
        let key = (threads << 32) | cfg.shared_mem_bytes as u64;
        let mut limits = self.limits.lock();
        if let Some(&(_, v)) = limits.iter().find(|(k, _)| *k == key) {
            return Ok(v);
        }
        let v = match self.cluster {
            Some(d) => occupancy_clusters(f, cfg, Some((d, self.compiled)))? as u64,
            None => {
                f.context().bind()?;
                // SAFETY: live function.
                let n = unsafe {
                    calls::occupancy_max_active_blocks_per_multiprocessor(
                        f.raw(),
                        threads as i32,
                        cfg.shared_mem_bytes as usize,
                    )
                }?;
                n.max(0) as u64
            }
        };
        if limits.len() >= 8 {
            limits.remove(0);
        }
        limits.push((key, v));
        Ok(v)
    }

    /// The checks of the module docs, made before `cuLaunchKernelEx` sees the launch: its
    /// configuration validated (and its dynamic shared memory opted in to), the grid whole
    /// clusters, and the clusters or the cooperative grid resident at once.
    fn check(&self, f: &Function, grid: Dim3, block: Dim3) -> Result<CheckedLaunch> {
        let ctx = f.context();
        let cfg = dims::validate(grid, block, f.shared_mem_bytes, ctx.limits(), f.kernel_limits()?)?;
        let blocks = cfg.grid.iter().map(|&g| g as u64).product::<u64>();
        if let Some(d) = self.cluster {
            for i in 0..3 {
                if !cfg.grid[i].is_multiple_of(d[i]) {
                    return Err(LaunchConfigError::ClusterNotDivisible {
                        which: GRID[i],
                        axis: AXES[i],
                        grid: cfg.grid[i],
                        cluster: d[i],
                    }
                    .into());
                }
            }
        }
        ctx.bind()?;
        f.opt_in_for(&cfg)?;
        // A dependent launch alone needs no occupancy figure (and no lock).
        let limit = if self.cluster.is_some() || self.cooperative {
            self.limit(f, &cfg)?
        } else {
            0
        };
        match self.cluster {
            Some(d) if limit == 0 => {
                return Err(LaunchConfigError::ClusterNotResident {
                    cluster: d,
                    threads: cfg.block.iter().map(|&b| b as u64).product(),
                    shared_mem_bytes: cfg.shared_mem_bytes,
                }
                .into())
            }
            Some(d) if self.cooperative && blocks / d.iter().map(|&x| x as u64).product::<u64>() > limit => {
                return Err(LaunchConfigError::NotCoResident {
                    units: blocks / d.iter().map(|&x| x as u64).product::<u64>(),
                    unit: "clusters",
                    limit,
                    how: "cuOccupancyMaxActiveClusters".into(),
                }
                .into())
            }
            None if self.cooperative && blocks > limit * self.sm_count as u64 => {
                return Err(LaunchConfigError::NotCoResident {
                    units: blocks,
                    unit: "blocks",
                    limit: limit * self.sm_count as u64,
                    how: format!("{limit} blocks per SM x {} SMs", self.sm_count),
                }
                .into())
            }
            _ => {}
        }
        Ok(cfg)
    }

    /// The launch attributes this configuration sets, the first `n` of the array: the cluster
    /// shape (unless it is the kernel's compiled one, which the launch must not set again),
    /// cooperative, dependent launch.
    fn attributes(&self) -> ([sys::CUlaunchAttribute; 3], usize) {
        let mut attrs = [cluster_attr([1, 1, 1]), cooperative_attr(), dependent_attr()];
        let mut n = 0;
        if let Some(d) = self.cluster.filter(|_| !self.compiled) {
            attrs[n] = cluster_attr(d);
            n += 1;
        }
        if self.cooperative {
            attrs[n] = cooperative_attr();
            n += 1;
        }
        if self.dependent {
            attrs[n] = dependent_attr();
            n += 1;
        }
        (attrs, n)
    }
}
