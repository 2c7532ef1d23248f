//! [`Graph`]: a recorded or built CUDA graph (`CUgraph`), with what it knows of its nodes and
//! the borrows of every buffer they use.

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::context::core::Context;

use super::nodes::Nodes;

/// A CUDA graph: kernels, copies and memsets with the order between them, recorded by a
/// [`Capture`](super::capture::Capture) or built by a
/// [`GraphBuilder`](super::builder::GraphBuilder). [`instantiate`](Graph::instantiate) it
/// once, then launch the [`GraphExec`](super::exec::GraphExec) as often as needed.
///
/// `'a` is the borrow of every buffer its nodes use ([`GraphInput`](super::buffers::GraphInput),
/// [`GraphBuffer`](super::buffers::GraphBuffer)): none can be dropped, or used against the
/// graph's access, while the graph exists.
pub struct Graph<'a> {
    pub(crate) ctx: Context,
    pub(crate) raw: sys::CUgraph,
    pub(crate) nodes: Nodes<'a>,
    /// The cuBLAS handles of the captures whose products it holds (its own, and those of the
    /// bodies a conditional node copied in), kept while the graph exists (dropped after the
    /// graph is destroyed: fields drop after `Drop::drop`).
    #[cfg(feature = "cublas")]
    pub(crate) blas: Vec<super::blas_handle::BlasHandle>,
}

// SAFETY: a graph's handle may be used from any thread, one at a time (graphs are not
// internally synchronized, so `Graph` is not `Sync`); the records it borrows are `Sync`.
unsafe impl Send for Graph<'_> {}

impl std::fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("nodes", &self.nodes.len())
            .field("allocations", &self.nodes.allocations())
            .finish()
    }
}

impl<'a> Graph<'a> {
    /// Takes ownership of `raw`, a graph of `ctx` whose nodes `nodes` describes.
    pub(crate) fn from_parts(ctx: Context, raw: sys::CUgraph, nodes: Nodes<'a>) -> Graph<'a> {
        Graph {
            ctx,
            raw,
            nodes,
            #[cfg(feature = "cublas")]
            blas: Vec::new(),
        }
    }

    /// The number of nodes (kernels, copies, memsets, event waits and records).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True for a graph without nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 0
    }

    /// The number of distinct allocations its nodes use, which each launch orders on its
    /// stream.
    pub fn allocations(&self) -> usize {
        self.nodes.allocations()
    }

    /// The context the graph belongs to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The driver's handle (for inspection, e.g. `cuGraphDebugDotPrint`); it stays owned by
    /// this value.
    pub fn raw(&self) -> sys::CUgraph {
        self.raw
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        if self.raw.is_null() || self.ctx.bind().is_err() {
            return;
        }
        // SAFETY: the graph was made for this value and is destroyed once. An executable graph
        // instantiated from it is independent of it. A drop cannot report a failure.
        let _ = unsafe { calls::graph_destroy(self.raw) };
    }
}
