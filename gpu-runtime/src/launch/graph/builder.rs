//! [`GraphBuilder`]: a graph built node by node with explicit dependencies (a DAG), for
//! programs that know their graph, with every pair of nodes that could run at the same time
//! checked not to share an allocation that one of them writes.

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::calls::Failed;
use crate::driver::context::core::Context;
use crate::error::{Error, Result};
use crate::types::repr::DeviceRepr;

use super::buffers::{GraphRead, GraphWrite};
use super::graph::Graph;
use super::node_args::{KernelNode, NodeArgs};
use super::node_checks;
use super::nodes::{NodeId, NodeKind, Nodes};

/// Builds a [`Graph`] from nodes and their dependencies. Kernels are added by their generated
/// `graph_node(&mut builder, &deps, grid, block, args…)`, typed like `prepared_async_call`.
///
/// A node runs after every node in its `deps`. Two nodes neither of which runs after the other
/// may run at the same time, so a node that writes an allocation another such node uses is
/// refused ([`GraphError::Hazard`](crate::GraphError::Hazard)), as a launch on one stream is ordered after another
/// stream's write; nothing is added then.
///
/// ```no_run
/// use gpu_runtime::{kernel, Context, Stream};
/// use gpu_runtime::launch::{GraphBuffer, GraphBuilder, GraphInput};
///
/// #[kernel(r#"
/// __global__ void scale(float *y, const float *x, float a, int n) {
///     int i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) y[i] = a * x[i];
/// }"#)]
/// fn scale(y: &mut [f32], x: &[f32], a: f32, n: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let k = scale::prepare(&ctx)?;
/// let x = ctx.to_device(&[1.0f32; 1024])?;
/// let (mut a, mut b) = (ctx.alloc_zeros::<f32>(1024)?, ctx.alloc_zeros::<f32>(1024)?);
/// let xg = GraphInput::new(&x);
/// let (mut ag, mut bg) = (GraphBuffer::new(&mut a), GraphBuffer::new(&mut b));
/// let mut g = GraphBuilder::new(&ctx)?;
/// let first = k.graph_node(&mut g, &[], 4, 256, &mut ag, &xg, 2.0, 1024)?; // a = 2x
/// k.graph_node(&mut g, &[first], 4, 256, &mut bg, &ag, 3.0, 1024)?; // b = 3a, after `first`
/// let mut exec = g.build().instantiate()?;
/// let stream = Stream::new(&ctx)?;
/// exec.launch(&stream)?;
/// drop(exec);
/// assert_eq!(b.to_vec()?[0], 6.0);
/// # Ok(()) }
/// ```
pub struct GraphBuilder<'a> {
    pub(super) graph: Graph<'a>,
}

impl std::fmt::Debug for GraphBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphBuilder")
            .field("graph", &self.graph)
            .finish()
    }
}

impl<'a> GraphBuilder<'a> {
    /// An empty graph in `ctx` (`cuGraphCreate`).
    pub fn new(ctx: &Context) -> Result<GraphBuilder<'a>> {
        ctx.bind()?;
        // The context is current.
        let raw = calls::graph_create()?;
        Ok(GraphBuilder {
            graph: Graph::from_parts(ctx.clone(), raw, Nodes::new(false)),
        })
    }

    /// The number of nodes so far.
    pub fn len(&self) -> usize {
        self.graph.len()
    }

    /// True before the first node.
    pub fn is_empty(&self) -> bool {
        self.graph.is_empty()
    }

    /// The graph built.
    pub fn build(self) -> Graph<'a> {
        self.graph
    }

    /// Checks a node's dependencies and uses, adds it with `add` (given the graph, the
    /// dependencies' handles and their count) and records it.
    fn add(
        &mut self,
        deps: &[NodeId],
        kind: NodeKind,
        args: NodeArgs<'a>,
        add: impl FnOnce(sys::CUgraph, &[sys::CUgraphNode]) -> std::result::Result<sys::CUgraphNode, Failed>,
    ) -> Result<NodeId> {
        let nodes = &self.graph.nodes;
        let (raw_deps, ancestors) = nodes.dependencies(deps)?;
        nodes.check(nodes.len(), &ancestors, &args.uses)?;
        self.graph.ctx.bind()?;
        let node = add(self.graph.raw, &raw_deps)?;
        self.graph.nodes.note_conditions(&args.conditions);
        Ok(self.graph.nodes.push(node, kind, args.uses, ancestors))
    }

    /// A node that does nothing: a join of `deps` that later nodes can depend on.
    pub fn empty(&mut self, deps: &[NodeId]) -> Result<NodeId> {
        self.add(deps, NodeKind::Other, NodeArgs::new(), |g, d| {
            // SAFETY: live graph; `d` are nodes of it.
            unsafe { calls::graph_add_empty_node(g, d) }
        })
    }

    /// A copy of `src` into `dst` (of one length), after `deps`.
    pub fn memcpy_dtod<T: DeviceRepr>(
        &mut self,
        deps: &[NodeId],
        dst: &mut impl GraphWrite<'a, T>,
        src: &impl GraphRead<'a, T>,
    ) -> Result<NodeId> {
        let (dst, src) = (dst.graph_arg_mut(), src.graph_arg());
        let (args, bytes) = node_checks::copy(&self.graph.ctx, &dst, &src)?;
        let p = sys::CUDA_MEMCPY3D {
            srcXInBytes: 0,
            srcY: 0,
            srcZ: 0,
            srcLOD: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src.ptr,
            srcArray: std::ptr::null_mut(),
            reserved0: std::ptr::null_mut(),
            srcPitch: 0,
            srcHeight: 0,
            dstXInBytes: 0,
            dstY: 0,
            dstZ: 0,
            dstLOD: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dst.ptr,
            dstArray: std::ptr::null_mut(),
            reserved1: std::ptr::null_mut(),
            dstPitch: 0,
            dstHeight: 0,
            WidthInBytes: bytes,
            Height: 1,
            Depth: 1,
        };
        let ctx = self.graph.ctx.raw();
        if bytes == 0 {
            return self.empty(deps);
        }
        self.add(deps, NodeKind::Other, args, |g, d| {
            // SAFETY: both ranges lie in allocations borrowed for 'a (checked lengths); the
            // driver copies the description.
            unsafe { calls::graph_add_memcpy_node(g, d, &p, ctx) }
        })
    }

    /// Sets the first `count` 32-bit values of `dst` to `value`, after `deps`.
    pub fn memset_d32<T>(
        &mut self,
        deps: &[NodeId],
        dst: &mut impl GraphWrite<'a, T>,
        value: u32,
        count: usize,
    ) -> Result<NodeId> {
        let dst = dst.graph_arg_mut();
        let args = node_checks::memset(&self.graph.ctx, &dst, 4, count)?;
        if count == 0 {
            return self.empty(deps);
        }
        let p = sys::CUDA_MEMSET_NODE_PARAMS {
            dst: dst.ptr,
            pitch: 0,
            value,
            elementSize: 4,
            width: count,
            height: 1,
        };
        let ctx = self.graph.ctx.raw();
        self.add(deps, NodeKind::Other, args, |g, d| {
            // SAFETY: `count` values fit in the allocation, borrowed for 'a (checked).
            unsafe { calls::graph_add_memset_node(g, d, &p, ctx) }
        })
    }

    /// Adds a kernel node (the generated `graph_node` calls this after its compile-time typed
    /// argument checks).
    #[doc(hidden)]
    pub fn kernel(&mut self, deps: &[NodeId], mut k: KernelNode<'a, '_>) -> Result<NodeId> {
        if !k.ex.is_plain_shape() {
            return Err(Error::Unsupported {
                what: "a cluster or cooperative kernel in a built graph",
                needs: "a captured graph (`Capture`), which keeps the launch attributes".into(),
            });
        }
        if !k.f.context().is(self.graph.ctx.raw()) {
            return Err(Error::WrongContext { what: "the kernel" });
        }
        let p = node_checks::kernel_node(&mut k)?;
        let (kind, args) = (k.kind(), k.args);
        if !k.ex.is_dependent() {
            return self.add(deps, kind, args, |g, d| {
                // SAFETY: validated configuration; `KernelNode::new`'s contract for the
                // parameters, which the driver copies.
                unsafe { calls::graph_add_kernel_node(g, d, &p) }
            });
        }
        // A dependent launch: programmatic edges from the kernels among `deps` (the only
        // nodes such an edge may leave), ordinary ones from the rest. Its ordering checks are
        // those of any node after `deps`: the kernel's `cudaGridDependencySynchronize()`
        // before it touches their memory is the promise of `with_dependent_launch`.
        let kernels: Vec<bool> = deps
            .iter()
            .map(|d| {
                let i = self.graph.nodes.index_of(*d)?;
                Ok(matches!(self.graph.nodes.nodes[i].kind, NodeKind::Kernel { .. }))
            })
            .collect::<Result<_>>()?;
        let nodes = &self.graph.nodes;
        let raw_kernels: Vec<sys::CUgraphNode> = deps
            .iter()
            .zip(&kernels)
            .filter(|(_, k)| **k)
            .map(|(d, _)| nodes.nodes[d.index()].raw)
            .collect();
        let others: Vec<NodeId> = deps
            .iter()
            .zip(&kernels)
            .filter(|(_, k)| !**k)
            .map(|(d, _)| *d)
            .collect();
        let (_, ancestors) = nodes.dependencies(deps)?;
        nodes.check(nodes.len(), &ancestors, &args.uses)?;
        let (raw_others, _) = nodes.dependencies(&others)?;
        self.graph.ctx.bind()?;
        // SAFETY: validated configuration; `KernelNode::new`'s contract for the parameters,
        // which the driver copies; `raw_others` are nodes of this graph.
        let node = unsafe { calls::graph_add_kernel_node(self.graph.raw, &raw_others, &p) }?;
        if !raw_kernels.is_empty() {
            // SAFETY: live graph; `raw_kernels` are kernel nodes of it and `node` one too; the
            // driver's version was checked when the launch was made dependent (12.3 for
            // these edges is below the 12.x of any Hopper driver that takes the attribute).
            let added =
                unsafe { calls::graph_add_programmatic_dependencies(self.graph.raw, &raw_kernels, node) };
            if let Err(failed) = added {
                // SAFETY: the node was just added and nothing refers to it. The edges' error
                // is the one to report.
                let _ = unsafe { calls::graph_destroy_node(node) };
                return Err(failed.into());
            }
        }
        self.graph.nodes.note_conditions(&args.conditions);
        Ok(self.graph.nodes.push(node, kind, args.uses, ancestors))
    }
}
