//! [`GraphExec`]: an instantiated graph (`CUgraphExec`), launched with `cuGraphLaunch` after
//! ordering its memory on the launch stream, and updated node by node with
//! `cuGraphExecKernelNodeSetParams` through the typed, generated `update_node`.

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::stream::Stream;
use crate::error::{Error, GraphError, Result};

use super::graph::Graph;
use super::node_args::KernelNode;
use super::node_checks;
use super::nodes::{NodeId, NodeKind};

/// An executable graph: what [`Graph::instantiate`] makes. Each [`launch`](Self::launch)
/// queues the whole graph on a stream with one driver call.
///
/// It keeps the [`Graph`] it was made from (node handles name nodes of that graph) and its
/// borrows, `'a`, of every buffer the graph uses.
pub struct GraphExec<'a> {
    graph: Graph<'a>,
    raw: sys::CUgraphExec,
}

// SAFETY: as for Graph: one thread at a time (`launch` and updates take `&mut self`).
unsafe impl Send for GraphExec<'_> {}

impl std::fmt::Debug for GraphExec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphExec").field("graph", &self.graph).finish()
    }
}

impl<'a> Graph<'a> {
    /// Instantiates the graph (`cuGraphInstantiateWithFlags`): the driver checks and prepares
    /// it once, so that each launch is one call.
    ///
    /// Refused before the driver: a graph whose kernels set another graph's condition
    /// ([`GraphError::ForeignCondition`]).
    pub fn instantiate(self) -> Result<GraphExec<'a>> {
        self.nodes.check_conditions(&self.nodes.conditions)?;
        self.ctx.bind()?;
        // SAFETY: the graph is live and its context current.
        let raw = unsafe { calls::graph_instantiate(self.raw) }?;
        Ok(GraphExec { graph: self, raw })
    }
}

impl<'a> GraphExec<'a> {
    /// Queues the graph on `stream` (`cuGraphLaunch`) and returns without waiting.
    ///
    /// First, as for every launch of this crate, each allocation the graph uses is ordered on
    /// `stream`: the graph waits, on the GPU, for other streams' work on it, and the launch is
    /// recorded in the allocation's record, so that other streams' later uses wait for it and
    /// the memory is not freed before it has run. The `__device__` and `__constant__`
    /// variables of its kernels' modules are ordered the same way, as a launch of one of those
    /// kernels orders them. No allocation, no lookup.
    pub fn launch(&mut self, stream: &Stream) -> Result<()> {
        if !stream.context().is(self.graph.ctx.raw()) {
            return Err(Error::WrongContext { what: "the stream" });
        }
        self.graph.nodes.order_on(stream.inner())?;
        self.graph.ctx.bind()?;
        let raw = self.raw;
        self.graph.nodes.launch_ordered(stream.inner(), &mut || {
            // SAFETY: the executable graph is live; every buffer it uses is borrowed for 'a and
            // was ordered on `stream` above, and the variables of its kernels' modules are
            // ordered around this call.
            unsafe { calls::graph_launch(raw, stream.raw()) }.map_err(Error::from)
        })
    }

    /// The graph it was made from.
    pub fn graph(&self) -> &Graph<'a> {
        &self.graph
    }

    /// The driver's handle; it stays owned by this value.
    pub fn raw(&self) -> sys::CUgraphExec {
        self.raw
    }

    /// Sets new parameters of kernel node `node` (the generated `update_node` calls this after
    /// its compile-time-typed argument checks). Refused, with nothing changed: a node of
    /// another graph, a node that is not a launch of `f`, a cluster or cooperative launch, a
    /// configuration over the limits, and new arguments that a node running at the same time
    /// also uses with a write on either side.
    #[doc(hidden)]
    pub fn update_kernel(&mut self, node: NodeId, mut k: KernelNode<'a, '_>) -> Result<()> {
        let f = k.f;
        let nodes = &mut self.graph.nodes;
        let i = nodes.index_of(node)?;
        let n = &nodes.nodes[i];
        match &n.kind {
            NodeKind::Kernel { function, .. } if function.raw() != f.raw() => {
                return Err(GraphError::OtherKernel {
                    node: i,
                    launches: function.name().to_string(),
                    given: f.name().to_string(),
                }
                .into())
            }
            NodeKind::Kernel { plain: true, .. } if k.ex.is_plain() && !n.raw.is_null() => {}
            NodeKind::Kernel { .. } => return Err(GraphError::NotUpdatable { node: i }.into()),
            NodeKind::Other | NodeKind::Conditional { .. } => {
                return Err(GraphError::NotAKernel { node: i }.into())
            }
        }
        let p = node_checks::kernel_node(&mut k)?;
        nodes.check(i, &[], &k.args.uses)?;
        nodes.check_conditions(&k.args.conditions)?;
        self.graph.ctx.bind()?;
        // SAFETY: the node belongs to the graph this was instantiated from (kept alive by
        // self); the configuration was validated and the parameters are `KernelNode::new`'s
        // promise. The driver copies them.
        unsafe { calls::graph_exec_kernel_node_set_params(self.raw, n.raw, &p) }?;
        nodes.replace_uses(i, k.args.uses);
        Ok(())
    }
}

impl Drop for GraphExec<'_> {
    fn drop(&mut self) {
        if self.graph.ctx.bind().is_err() {
            return;
        }
        // SAFETY: made for this value, destroyed once. A launch still queued completes: the
        // driver frees an executable graph in flight once it has run. The memory it uses is
        // kept allocated by the records each launch made (see `launch`). A drop cannot report
        // a failure.
        let _ = unsafe { calls::graph_exec_destroy(self.raw) };
    }
}
