//! The checks and driver parameters shared by captured and explicitly built nodes: a kernel
//! node's configuration (validated as every launch is, before the driver sees it), and the
//! lengths, contexts and alignment of copies and memsets.

use std::ffi::c_void;

use cudarc::driver::sys;

use crate::driver::context::core::Context;
use crate::driver::module::function::Function;
use crate::error::{CopyError, Error, GraphError, Result};
use crate::launch::dims::{self, CheckedLaunch, Dim3};

use super::buffers::GraphArg;
use super::node_args::{KernelNode, NodeArgs};
use super::nodes::Access;

/// A kernel node's configuration, checked against the device's and the kernel's limits, with
/// large dynamic shared memory opted in to.
fn checked(f: &Function, grid: Dim3, block: Dim3) -> Result<CheckedLaunch> {
    let limits = f.kernel_limits()?;
    let cfg = dims::validate(grid, block, f.shared_mem_bytes, f.context().limits(), limits)?;
    f.context().bind()?;
    f.opt_in_for(&cfg)?;
    Ok(cfg)
}

/// The driver's description of a kernel node. The driver copies `params` and the values they
/// point to when the node is added or updated (`cuGraphKernelNodeGetParams`: "the argument
/// values it points to are owned by the node"), so they need to live only for that call.
fn kernel_params(
    f: &Function,
    cfg: &CheckedLaunch,
    params: &mut [*mut c_void],
) -> sys::CUDA_KERNEL_NODE_PARAMS {
    sys::CUDA_KERNEL_NODE_PARAMS {
        func: f.raw(),
        gridDimX: cfg.grid[0],
        gridDimY: cfg.grid[1],
        gridDimZ: cfg.grid[2],
        blockDimX: cfg.block[0],
        blockDimY: cfg.block[1],
        blockDimZ: cfg.block[2],
        sharedMemBytes: cfg.shared_mem_bytes,
        kernelParams: params.as_mut_ptr(),
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: f.context().raw(),
    }
}

/// The driver's description of kernel node `k`, its configuration checked as every launch's
/// is. It points into `k`'s parameters, which must outlive the driver call it is given to.
pub(crate) fn kernel_node(k: &mut KernelNode<'_, '_>) -> Result<sys::CUDA_KERNEL_NODE_PARAMS> {
    let cfg = checked(k.f, k.grid, k.block)?;
    Ok(kernel_params(k.f, &cfg, k.params()))
}

fn in_context(ctx: &Context, arg: &GraphArg<'_>) -> Result<()> {
    if arg.ctx.is(ctx.raw()) {
        Ok(())
    } else {
        Err(Error::WrongContext {
            what: "a buffer of a graph copy or memset",
        })
    }
}

/// A device-to-device copy of `src` into `dst` (of one length), in `ctx`: the uses it records
/// and its size in bytes.
pub(crate) fn copy<'a>(
    ctx: &Context,
    dst: &GraphArg<'a>,
    src: &GraphArg<'a>,
) -> Result<(NodeArgs<'a>, usize)> {
    in_context(ctx, dst)?;
    in_context(ctx, src)?;
    if dst.len != src.len {
        return Err(CopyError::DestinationSource {
            operation: "a graph's memcpy_dtod",
            dst: dst.len,
            src: src.len,
            unit: "elements",
        }
        .into());
    }
    let mut args = NodeArgs::new();
    args.record(src, Access::Read);
    args.record(dst, Access::Write);
    Ok((args, dst.bytes()))
}

/// A memset of `count` values of `unit` bytes (1 or 4) at the start of `dst`, in `ctx`.
pub(crate) fn memset<'a>(
    ctx: &Context,
    dst: &GraphArg<'a>,
    unit: usize,
    count: usize,
) -> Result<NodeArgs<'a>> {
    in_context(ctx, dst)?;
    let bytes = count.saturating_mul(unit);
    if bytes > dst.bytes() {
        return Err(GraphError::MemsetTooLarge {
            count,
            unit,
            bytes: dst.bytes(),
        }
        .into());
    }
    if !dst.ptr.is_multiple_of(unit as u64) {
        return Err(GraphError::MemsetMisaligned {
            address: dst.ptr,
            unit,
        }
        .into());
    }
    let mut args = NodeArgs::new();
    args.record(dst, Access::Write);
    Ok(args)
}
