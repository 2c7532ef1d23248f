//! CUDA graphs by handle: creation, nodes, instantiation, launch and update.

use cudarc::driver::sys;

use crate::driver::result::{result, Failed};

/// `cuGraphCreate`: an empty graph, in the current context (flags 0, the only ones there are).
pub(crate) fn graph_create() -> Result<sys::CUgraph, Failed> {
    let mut graph = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    result("cuGraphCreate", unsafe { sys::cuGraphCreate(&mut graph, 0) })?;
    Ok(graph)
}

/// `cuGraphDestroy`. Executable graphs instantiated from it are independent of it.
///
/// # Safety
/// `graph` is live, owned by the caller, and not used after this call.
pub(crate) unsafe fn graph_destroy(graph: sys::CUgraph) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuGraphDestroy", unsafe { sys::cuGraphDestroy(graph) })
}

/// `cuGraphAddEmptyNode`: a node after `deps` that does nothing.
///
/// # Safety
/// `graph` is live and `deps` are nodes of it.
pub(crate) unsafe fn graph_add_empty_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
) -> Result<sys::CUgraphNode, Failed> {
    let mut node = std::ptr::null_mut();
    // SAFETY: the caller's guarantee; `deps.len()` handles at `deps.as_ptr()`; valid
    // out-pointer.
    result("cuGraphAddEmptyNode", unsafe {
        sys::cuGraphAddEmptyNode(&mut node, graph, deps.as_ptr(), deps.len())
    })?;
    Ok(node)
}

/// `cuGraphAddMemcpyNode`: a copy described by `params`, in `ctx`, after `deps`. The driver
/// copies the description.
///
/// # Safety
/// As [`graph_add_empty_node`]; the copy's ranges lie in allocations that stay allocated as
/// long as the graph (and its executable graphs) may run.
pub(crate) unsafe fn graph_add_memcpy_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    params: &sys::CUDA_MEMCPY3D,
    ctx: sys::CUcontext,
) -> Result<sys::CUgraphNode, Failed> {
    let mut node = std::ptr::null_mut();
    // SAFETY: the caller's guarantees; valid out-pointer.
    result("cuGraphAddMemcpyNode", unsafe {
        sys::cuGraphAddMemcpyNode(&mut node, graph, deps.as_ptr(), deps.len(), params, ctx)
    })?;
    Ok(node)
}

/// `cuGraphAddMemsetNode`: a memset described by `params`, in `ctx`, after `deps`.
///
/// # Safety
/// As [`graph_add_memcpy_node`].
pub(crate) unsafe fn graph_add_memset_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    params: &sys::CUDA_MEMSET_NODE_PARAMS,
    ctx: sys::CUcontext,
) -> Result<sys::CUgraphNode, Failed> {
    let mut node = std::ptr::null_mut();
    // SAFETY: the caller's guarantees; valid out-pointer.
    result("cuGraphAddMemsetNode", unsafe {
        sys::cuGraphAddMemsetNode(&mut node, graph, deps.as_ptr(), deps.len(), params, ctx)
    })?;
    Ok(node)
}

/// `cuGraphAddKernelNode`: a launch described by `params`, after `deps`. The driver copies the
/// parameters.
///
/// # Safety
/// As [`graph_add_empty_node`]; `params` is a launch as `launch_kernel`
/// ([`launch`](super::launch::launch_kernel)) requires, its buffers kept as long as the graph
/// may run.
pub(crate) unsafe fn graph_add_kernel_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    params: &sys::CUDA_KERNEL_NODE_PARAMS,
) -> Result<sys::CUgraphNode, Failed> {
    let mut node = std::ptr::null_mut();
    // SAFETY: the caller's guarantees; valid out-pointer.
    result("cuGraphAddKernelNode", unsafe {
        sys::cuGraphAddKernelNode_v2(&mut node, graph, deps.as_ptr(), deps.len(), params)
    })?;
    Ok(node)
}

/// `cuGraphInstantiateWithFlags` with no flags.
///
/// # Safety
/// `graph` is live, of the current context.
pub(crate) unsafe fn graph_instantiate(graph: sys::CUgraph) -> Result<sys::CUgraphExec, Failed> {
    let mut exec = std::ptr::null_mut();
    // SAFETY: the caller's guarantee; valid out-pointer.
    result("cuGraphInstantiateWithFlags", unsafe {
        sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0)
    })?;
    Ok(exec)
}

/// `cuGraphLaunch`: queues the executable graph on `stream`.
///
/// # Safety
/// `exec` and `stream` are live, and every allocation the graph uses stays allocated until it
/// has run, ordered with other streams' uses.
#[inline]
pub(crate) unsafe fn graph_launch(exec: sys::CUgraphExec, stream: sys::CUstream) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuGraphLaunch", unsafe { sys::cuGraphLaunch(exec, stream) })
}

/// `cuGraphExecKernelNodeSetParams`: new parameters for kernel node `node` of `exec`. The
/// driver copies them.
///
/// # Safety
/// `node` is a kernel node of the graph `exec` was instantiated from, and `params` as
/// [`graph_add_kernel_node`] requires.
pub(crate) unsafe fn graph_exec_kernel_node_set_params(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    params: &sys::CUDA_KERNEL_NODE_PARAMS,
) -> Result<(), Failed> {
    // SAFETY: the caller's guarantees.
    result("cuGraphExecKernelNodeSetParams", unsafe {
        sys::cuGraphExecKernelNodeSetParams_v2(exec, node, params)
    })
}

/// `cuGraphExecDestroy`. A launch still queued completes.
///
/// # Safety
/// `exec` is live, owned by the caller, and not used after this call.
pub(crate) unsafe fn graph_exec_destroy(exec: sys::CUgraphExec) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuGraphExecDestroy", unsafe { sys::cuGraphExecDestroy(exec) })
}
