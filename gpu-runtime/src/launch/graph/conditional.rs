//! Loops and branches run on the GPU: conditional graph nodes (CUDA 12.3's `while` and `if`,
//! 12.8's `if`/`else` and `switch`) and the [`ConditionalHandle`] a kernel sets their condition
//! with (`cudaGraphSetConditional`).
//!
//! A body is a [`Graph`] built or captured with the usual API; the conditional node runs a copy
//! of it (a child graph node in the node's body graph, which the driver clones). The node uses
//! every allocation its bodies use, with the strongest access, so the graph's hazard checks and
//! the ordering each launch records treat the loop as one node that may read and write all of
//! them, however many times it runs.

use cudarc::driver::sys::{self, CUgraphConditionalNodeType as CondType};

use crate::driver::calls;
use crate::driver::init::driver_version;
use crate::error::{Error, GraphError, Result};
use crate::launch::launch_stream::LaunchStream;
use crate::launch::params::KernelParam;

use super::builder::GraphBuilder;
use super::graph::Graph;
use super::nodes::{NodeId, NodeKind};

/// A condition of one graph, which a kernel node of that graph sets and a conditional node
/// ([`GraphBuilder::while_loop`], [`if_then`](GraphBuilder::if_then),
/// [`if_else`](GraphBuilder::if_else), [`switch`](GraphBuilder::switch)) reads: what a kernel's
/// `cudaGraphConditionalHandle` parameter takes. Made by
/// [`GraphBuilder::conditional_handle`].
///
/// In the kernel's Rust signature write the C type's name, [`cudaGraphConditionalHandle`] (an
/// alias of this type), which `#[kernel]` matches with the C parameter. The kernel sets the
/// condition with `cudaGraphSetConditional(handle, value)`, declared by
/// `#include <gpu_runtime/graph.h>` for NVRTC (without `-rdc`, where CUDA's own header does
/// not declare it; the call is resolved by the driver, as `printf`'s is, so no device runtime
/// is linked). One thread should set it: concurrent calls are undefined.
///
/// A handle is only meaningful in kernel nodes of the graph it was made for (and of the bodies
/// of that graph's conditional nodes), and every other use is refused: a launch on a stream
/// ([`Error::Unsupported`]), a conditional node of another graph
/// ([`GraphError::ForeignCondition`]), and instantiating (or updating) a graph whose kernel
/// node was given another graph's handle (the same error): the graph methods `#[kernel]`
/// generates (`capture`, `graph_node`, `update_node`) record each node's by-value arguments
/// (the hidden `graph_value` of the macro's interface), and a body's conditions are its
/// conditional node's.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConditionalHandle {
    /// The driver's handle: first, so that the 8 bytes the kernel's parameter receives are it.
    raw: sys::CUgraphConditionalHandle,
    /// The graph it belongs to (`Nodes::id`).
    graph: u64,
}

/// The C name of [`ConditionalHandle`], for `#[kernel]` signatures: a kernel's
/// `cudaGraphConditionalHandle h` parameter is `h: cudaGraphConditionalHandle` in Rust.
#[allow(non_camel_case_types)]
pub type cudaGraphConditionalHandle = ConditionalHandle;

// SAFETY: `repr(C)` with the driver's 64-bit handle first: the kernel's
// `cudaGraphConditionalHandle` (an `unsigned long long`) parameter receives exactly it, and the
// driver copies only the parameter's 8 bytes.
unsafe impl KernelParam for ConditionalHandle {
    /// A condition exists only in its graph: a kernel launched on a stream that set it would
    /// set a value no conditional node reads, or another graph's.
    #[cold]
    fn order_on(&self, _stream: &LaunchStream<'_>) -> Result<()> {
        Err(Error::Unsupported {
            what: "a conditional handle in a launch on a stream",
            needs: "a kernel node of the graph the handle was made for (`capture` or `graph_node` into it)"
                .into(),
        })
    }

    #[inline]
    fn condition_of(&self) -> Option<u64> {
        Some(self.graph)
    }
}

/// The driver version conditional nodes of `what` need, checked before any of their calls
/// (cudarc panics on a symbol the driver lacks).
fn needs_driver(what: &'static str, major: u32, minor: u32) -> Result<()> {
    let version = driver_version()?;
    if version < (major, minor) {
        return Err(Error::Unsupported {
            what,
            needs: format!(
                "CUDA {major}.{minor} or later (the driver is {}.{})",
                version.0, version.1
            ),
        });
    }
    Ok(())
}

impl<'a> GraphBuilder<'a> {
    /// A new condition of this graph (`cuGraphConditionalHandleCreate`, CUDA 12.3), for one or
    /// more conditional nodes of it. With `default` `Some(v)` the condition is `v` at the start
    /// of every launch of the graph; with `None` it keeps what the last launch left (0 at the
    /// first). A handle that no conditional node of the graph uses makes the driver refuse to
    /// instantiate the graph.
    ///
    /// Safe because every path that hands a handle to a kernel records it, so that a kernel of
    /// another graph never sets it (which CUDA leaves undefined): the typed graph nodes
    /// `#[kernel]` generates (`graph_node`, `capture`, `update_node`) record their by-value
    /// arguments, and instantiation and node updates refuse another graph's condition
    /// ([`GraphError::ForeignCondition`]); a capture's stream is its own, so nothing else is
    /// captured into it; a body's conditions are checked as its conditional node's; a launch on
    /// a stream refuses a handle ([`Error::Unsupported`]); and the run-time typed launches
    /// ([`PreparedFunction`](crate::launch::PreparedFunction)) take no handle, which is not a
    /// [`DeviceRepr`](crate::DeviceRepr), and add no graph nodes.
    pub fn conditional_handle(&mut self, default: Option<u32>) -> Result<ConditionalHandle> {
        needs_driver("a conditional graph node", 12, 3)?;
        self.graph.ctx.bind()?;
        // SAFETY: the graph is live and of this context; the driver's version was checked.
        let raw =
            unsafe { calls::graph_conditional_handle_create(self.graph.raw, self.graph.ctx.raw(), default) }?;
        Ok(ConditionalHandle {
            raw,
            graph: self.graph.nodes.id,
        })
    }

    /// A loop run on the GPU (a `while` conditional node, CUDA 12.3), after `deps`: while the
    /// condition `handle` is non-zero, `body` runs, again and again, with no host involved. A
    /// kernel in `body` sets the condition (`cudaGraphSetConditional`); the condition is
    /// tested before the first run too, so start it at 1 (`conditional_handle(Some(1))`) or
    /// set it in a node before the loop.
    ///
    /// `body` is any graph of this context, built or captured; its nodes' buffers stay
    /// borrowed for `'a`. Refused: another graph's handle, a body of another context.
    pub fn while_loop(
        &mut self,
        deps: &[NodeId],
        handle: ConditionalHandle,
        body: Graph<'a>,
    ) -> Result<NodeId> {
        needs_driver("a conditional graph node", 12, 3)?;
        self.conditional(deps, handle, CondType::CU_GRAPH_COND_TYPE_WHILE, vec![body])
    }

    /// A branch run on the GPU (an `if` conditional node, CUDA 12.3), after `deps`: `then`
    /// runs once when the condition `handle` is non-zero, else nothing. As
    /// [`while_loop`](Self::while_loop) otherwise.
    pub fn if_then(&mut self, deps: &[NodeId], handle: ConditionalHandle, then: Graph<'a>) -> Result<NodeId> {
        needs_driver("a conditional graph node", 12, 3)?;
        self.conditional(deps, handle, CondType::CU_GRAPH_COND_TYPE_IF, vec![then])
    }

    /// A two-way branch run on the GPU (an `if` node with an `else` body, CUDA 12.8), after
    /// `deps`: `then` when the condition is non-zero, `otherwise` when it is zero.
    pub fn if_else(
        &mut self,
        deps: &[NodeId],
        handle: ConditionalHandle,
        then: Graph<'a>,
        otherwise: Graph<'a>,
    ) -> Result<NodeId> {
        needs_driver("an if/else conditional graph node", 12, 8)?;
        self.conditional(
            deps,
            handle,
            CondType::CU_GRAPH_COND_TYPE_IF,
            vec![then, otherwise],
        )
    }

    /// A multi-way branch run on the GPU (a `switch` node, CUDA 12.8), after `deps`:
    /// `cases[v]` runs when the condition is `v`; nothing runs when it is `cases.len()` or more.
    /// Refused without cases ([`GraphError::NoCases`]).
    pub fn switch(
        &mut self,
        deps: &[NodeId],
        handle: ConditionalHandle,
        cases: Vec<Graph<'a>>,
    ) -> Result<NodeId> {
        if cases.is_empty() {
            return Err(GraphError::NoCases.into());
        }
        needs_driver("a switch conditional graph node", 12, 8)?;
        self.conditional(deps, handle, CondType::CU_GRAPH_COND_TYPE_SWITCH, cases)
    }

    /// Adds a conditional node of `kind` with `bodies` after `deps`, checked as any node is
    /// (the union of its bodies' uses against the nodes it is not ordered with).
    fn conditional(
        &mut self,
        deps: &[NodeId],
        handle: ConditionalHandle,
        kind: CondType,
        bodies: Vec<Graph<'a>>,
    ) -> Result<NodeId> {
        let id = self.graph.nodes.id;
        if handle.graph != id {
            return Err(GraphError::ForeignCondition.into());
        }
        if bodies.iter().any(|b| !b.ctx.is(self.graph.ctx.raw())) {
            return Err(Error::WrongContext {
                what: "the body of a conditional node",
            });
        }
        let (raw_deps, ancestors) = self.graph.nodes.dependencies(deps)?;
        // The node's uses: every body's, merged (one allocation once, its strongest access).
        let mut uses = Vec::new();
        let mut functions = Vec::new();
        let mut raw_bodies = Vec::with_capacity(bodies.len());
        let mut kept = Vec::with_capacity(bodies.len());
        // Conditions the bodies' kernels set that are neither theirs (their own conditional
        // nodes read those) nor this graph's: checked where this graph ends up.
        let mut conditions = Vec::new();
        for mut b in bodies {
            let nodes = std::mem::replace(&mut b.nodes, super::nodes::Nodes::new(true));
            conditions.extend(nodes.conditions.iter().filter(|&&c| c != nodes.id && c != id));
            let (u, f) = nodes.into_body();
            for u in u {
                match uses
                    .iter_mut()
                    .find(|k: &&mut super::nodes::Use<'a>| k.key() == u.key())
                {
                    Some(k) => k.access = k.access.max(u.access),
                    None => uses.push(u),
                }
            }
            functions.extend(f);
            raw_bodies.push(b.raw);
            // The bodies' copies hold their captured cuBLAS kernels: the handles those were
            // recorded with live as long as this graph, not as the bodies.
            #[cfg(feature = "cublas")]
            self.graph.blas.append(&mut b.blas);
            // The body graphs stay alive until their copies are made below.
            kept.push(b);
        }
        self.graph
            .nodes
            .check(self.graph.nodes.len(), &ancestors, &uses)?;
        self.graph.ctx.bind()?;
        let ctx = self.graph.ctx.raw();
        let n = raw_bodies.len() as u32;
        // SAFETY: live graph of this context; `raw_deps` are nodes of it; the handle was made
        // for it (checked above); the driver's version was checked by the caller.
        let (node, slots) = unsafe {
            calls::graph_add_conditional_node(self.graph.raw, &raw_deps, handle.raw, kind, n, ctx)
        }?;
        if slots.len() != raw_bodies.len() {
            // SAFETY: the node was just added and nothing refers to it.
            let _ = unsafe { calls::graph_destroy_node(node) };
            return Err(Error::Unsupported {
                what: "a conditional graph node",
                needs: format!(
                    "a driver that makes its {} body graphs (it made {})",
                    raw_bodies.len(),
                    slots.len()
                ),
            });
        }
        for (slot, body) in slots.iter().zip(&raw_bodies) {
            // SAFETY: `slot` is a body graph of the node just added; `body` is live (kept) and
            // every buffer its nodes use is borrowed for 'a, which outlives this graph.
            let added = unsafe { calls::graph_add_child_graph_node(*slot, &[], *body) };
            if let Err(failed) = added {
                // SAFETY: the node was just added and nothing refers to it; the copy's error
                // is the one to report.
                let _ = unsafe { calls::graph_destroy_node(node) };
                return Err(failed.into());
            }
        }
        drop(kept);
        self.graph.nodes.note_conditions(&conditions);
        Ok(self
            .graph
            .nodes
            .push(node, NodeKind::Conditional { functions }, uses, ancestors))
    }
}
