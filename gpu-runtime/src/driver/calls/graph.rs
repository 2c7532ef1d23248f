//! CUDA graphs by handle: creation, nodes, instantiation, launch and update.

use cudarc::driver::sys;

use super::failed::{out, result, Failed};

/// `cuGraphCreate`: an empty graph, in the current context (flags 0, the only ones there are).
pub(crate) fn graph_create() -> Result<sys::CUgraph, Failed> {
    // SAFETY: valid out-pointer.
    out("cuGraphCreate", std::ptr::null_mut(), |graph| unsafe {
        sys::cuGraphCreate(graph, 0)
    })
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
    // SAFETY: the caller's guarantee; `deps.len()` handles at `deps.as_ptr()`; valid
    // out-pointer.
    out("cuGraphAddEmptyNode", std::ptr::null_mut(), |node| unsafe {
        sys::cuGraphAddEmptyNode(node, graph, deps.as_ptr(), deps.len())
    })
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
    // SAFETY: the caller's guarantees; valid out-pointer.
    out("cuGraphAddMemcpyNode", std::ptr::null_mut(), |node| unsafe {
        sys::cuGraphAddMemcpyNode(node, graph, deps.as_ptr(), deps.len(), params, ctx)
    })
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
    // SAFETY: the caller's guarantees; valid out-pointer.
    out("cuGraphAddMemsetNode", std::ptr::null_mut(), |node| unsafe {
        sys::cuGraphAddMemsetNode(node, graph, deps.as_ptr(), deps.len(), params, ctx)
    })
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
    // SAFETY: the caller's guarantees; valid out-pointer.
    out("cuGraphAddKernelNode", std::ptr::null_mut(), |node| unsafe {
        sys::cuGraphAddKernelNode_v2(node, graph, deps.as_ptr(), deps.len(), params)
    })
}

/// `cuGraphInstantiateWithFlags` with no flags.
///
/// # Safety
/// `graph` is live, of the current context.
pub(crate) unsafe fn graph_instantiate(graph: sys::CUgraph) -> Result<sys::CUgraphExec, Failed> {
    // SAFETY: the caller's guarantee; valid out-pointer.
    out(
        "cuGraphInstantiateWithFlags",
        std::ptr::null_mut(),
        |exec| unsafe { sys::cuGraphInstantiateWithFlags(exec, graph, 0) },
    )
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

/// `cuGraphConditionalHandleCreate` (CUDA 12.3): a condition of `graph`, in `ctx`, set to
/// `default` at the start of every launch when it is `Some` (`CU_GRAPH_COND_ASSIGN_DEFAULT`),
/// else left as the last launch left it.
///
/// # Safety
/// `graph` is live and `ctx` its context; the driver has the symbol (check its version first:
/// cudarc panics on a missing one).
pub(crate) unsafe fn graph_conditional_handle_create(
    graph: sys::CUgraph,
    ctx: sys::CUcontext,
    default: Option<u32>,
) -> Result<sys::CUgraphConditionalHandle, Failed> {
    let mut handle = 0;
    let (value, flags) = match default {
        Some(v) => (v, sys::CU_GRAPH_COND_ASSIGN_DEFAULT),
        None => (0, 0),
    };
    // SAFETY: the caller's guarantees; valid out-pointer.
    result("cuGraphConditionalHandleCreate", unsafe {
        sys::cuGraphConditionalHandleCreate(&mut handle, graph, ctx, value, flags)
    })?;
    Ok(handle)
}

/// `cuGraphAddNode_v2` with a conditional node (CUDA 12.3): a node of `kind` on `handle`, with
/// `bodies` body graphs (1 for a while loop and an `if`, 2 for an `if`/`else`, one per case
/// for a `switch`), after `deps`. Returns the node and its body graphs, which the node owns.
///
/// # Safety
/// As [`graph_add_empty_node`]; `handle` was made for `graph` in `ctx`; the driver has the
/// symbol.
pub(crate) unsafe fn graph_add_conditional_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    handle: sys::CUgraphConditionalHandle,
    kind: sys::CUgraphConditionalNodeType,
    bodies: u32,
    ctx: sys::CUcontext,
) -> Result<(sys::CUgraphNode, Vec<sys::CUgraph>), Failed> {
    // SAFETY: a zeroed node description is valid plain data (null pointers, zero fields); the
    // fields the conditional node reads are set below.
    let mut params: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
    params.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.__bindgen_anon_1.conditional = sys::CUDA_CONDITIONAL_NODE_PARAMS {
        handle,
        type_: kind,
        size: bodies,
        phGraph_out: std::ptr::null_mut(),
        ctx,
    };
    let mut node = std::ptr::null_mut();
    // SAFETY: the caller's guarantees; no edge data (default edges); valid out-pointers.
    result("cuGraphAddNode", unsafe {
        sys::cuGraphAddNode_v2(
            &mut node,
            graph,
            deps.as_ptr(),
            std::ptr::null(),
            deps.len(),
            &mut params,
        )
    })?;
    // SAFETY: the driver filled `conditional.phGraph_out` with an array of `bodies` graphs,
    // valid for the node's lifetime.
    let out = unsafe { params.__bindgen_anon_1.conditional.phGraph_out };
    let bodies = if out.is_null() {
        Vec::new()
    } else {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(out, bodies as usize) }.to_vec()
    };
    Ok((node, bodies))
}

/// `cuGraphAddChildGraphNode`: a node that runs a copy of `child` after `deps` (the driver
/// clones `child`, which stays the caller's).
///
/// # Safety
/// As [`graph_add_empty_node`]; `child` is live, and every allocation its nodes use stays
/// allocated as long as `graph` (and its executable graphs) may run.
pub(crate) unsafe fn graph_add_child_graph_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    child: sys::CUgraph,
) -> Result<sys::CUgraphNode, Failed> {
    // SAFETY: the caller's guarantees; valid out-pointer.
    out("cuGraphAddChildGraphNode", std::ptr::null_mut(), |node| unsafe {
        sys::cuGraphAddChildGraphNode(node, graph, deps.as_ptr(), deps.len(), child)
    })
}

/// `cuGraphDestroyNode`: removes `node` (and its edges) from its graph.
///
/// # Safety
/// `node` is a live node of a live graph and is not used after this call.
pub(crate) unsafe fn graph_destroy_node(node: sys::CUgraphNode) -> Result<(), Failed> {
    // SAFETY: the caller's guarantee.
    result("cuGraphDestroyNode", unsafe { sys::cuGraphDestroyNode(node) })
}

/// `cuGraphAddDependencies_v2` (CUDA 12.3) with programmatic edges: `to` runs after each of
/// `from`, and may start once each has triggered (`cudaTriggerProgrammaticLaunchCompletion`)
/// or finished, before its memory operations are visible (`CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC`
/// from the kernel's programmatic port).
///
/// # Safety
/// `graph` is live; `from` are kernel nodes of it and `to` a kernel node of it; the driver has
/// the symbol.
pub(crate) unsafe fn graph_add_programmatic_dependencies(
    graph: sys::CUgraph,
    from: &[sys::CUgraphNode],
    to: sys::CUgraphNode,
) -> Result<(), Failed> {
    let edge = sys::CUgraphEdgeData {
        from_port: sys::CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC as u8,
        to_port: 0,
        type_: sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC as u8,
        reserved: [0; 5],
    };
    let tos = vec![to; from.len()];
    let edges = vec![edge; from.len()];
    // SAFETY: the caller's guarantees; three arrays of `from.len()` entries.
    result("cuGraphAddDependencies", unsafe {
        sys::cuGraphAddDependencies_v2(graph, from.as_ptr(), tos.as_ptr(), edges.as_ptr(), from.len())
    })
}
