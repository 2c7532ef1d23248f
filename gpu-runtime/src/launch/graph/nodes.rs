//! What a graph knows of its nodes: each node's driver handle, kind and the memory it uses;
//! the order between nodes (a chain for a capture, a DAG for a built graph); the refusal of two
//! unordered nodes that use one allocation with a write between them; and the deduplicated
//! list of allocations, and of modules with variables, a launch of the graph orders on its
//! stream.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cudarc::driver::sys;

use crate::driver::module::function::Function;
use crate::driver::module::loaded::LoadedModule;
use crate::driver::ordering::{ModuleVars, StreamInner, StreamUses};
use crate::error::{GraphError, Result};

/// A node of a graph, as [`Capture`](super::capture::Capture) and
/// [`GraphBuilder`](super::builder::GraphBuilder) hand it out: what later nodes name as their
/// dependencies, and what a typed `update_node` names. Valid only with the graph it came from
/// (checked: another graph's node is a typed error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId {
    pub(crate) graph: u64,
    pub(crate) index: u32,
}

impl NodeId {
    /// The node's position in its graph, in the order nodes were added (0 first).
    pub fn index(&self) -> usize {
        self.index as usize
    }
}

/// How a node touches an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Access {
    Read,
    Write,
}

/// One allocation a node uses.
#[derive(Clone, Copy)]
pub(crate) struct Use<'a> {
    pub(crate) uses: &'a StreamUses,
    pub(crate) access: Access,
    /// The address the node was given, for messages.
    pub(crate) ptr: sys::CUdeviceptr,
}

impl Use<'_> {
    /// The allocation's identity: the address of its record, which lives as long as the
    /// allocation (and `'a` outlives the graph).
    pub(crate) fn key(&self) -> usize {
        self.uses as *const StreamUses as usize
    }
}

/// What a node does.
pub(crate) enum NodeKind {
    /// A kernel: the function (kept, so its module outlives the graph) and whether it was
    /// launched without cluster or cooperative attributes (only those are updated by
    /// `update_node`, whose parameter update keeps no launch attributes).
    Kernel { function: Function, plain: bool },
    /// A conditional node (a loop or branch run on the GPU): the kernels of its bodies, kept so
    /// that their modules outlive the graph. Its uses are those of every body node.
    Conditional { functions: Vec<Function> },
    /// A copy, memset, event wait or record, or an empty node.
    Other,
}

pub(crate) struct Node<'a> {
    pub(crate) raw: sys::CUgraphNode,
    pub(crate) kind: NodeKind,
    pub(crate) uses: Vec<Use<'a>>,
    /// The nodes this one runs after, directly or not, as a bit set over earlier indices.
    /// Unused in a chain.
    ancestors: Vec<u64>,
}

/// The nodes of one graph, and the allocations its launches order.
pub(crate) struct Nodes<'a> {
    pub(crate) id: u64,
    /// Every node runs after every earlier one (a single-stream capture): no two nodes can
    /// overlap, so nothing needs checking.
    chain: bool,
    pub(crate) nodes: Vec<Node<'a>>,
    /// The graphs whose conditions its kernels set (this one's, or, in a body, the graph it
    /// will be a body of): all must be this graph's when it is instantiated.
    pub(crate) conditions: Vec<u64>,
    /// Each allocation the graph uses once, with the strongest access of any node: what
    /// [`Nodes::order_on`] records on the launch stream. Rebuilt when a node changes.
    launch: Vec<(&'a StreamUses, Access)>,
    /// The modules of the graph's kernels (bodies' included) that have `__device__` or
    /// `__constant__` variables, each once, in address order: every launch of the graph is a
    /// use of their variables ([`Nodes::launch_ordered`]).
    modules: Vec<Arc<LoadedModule>>,
}

static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

fn has(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

impl<'a> Nodes<'a> {
    /// No nodes yet; `chain` for a capture, where every node follows the one before.
    pub(crate) fn new(chain: bool) -> Nodes<'a> {
        Nodes {
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            chain,
            nodes: Vec::new(),
            conditions: Vec::new(),
            launch: Vec::new(),
            modules: Vec::new(),
        }
    }

    /// Records that nodes of this graph set the conditions of the graphs `ids`.
    pub(crate) fn note_conditions(&mut self, ids: &[u64]) {
        for &id in ids {
            if !self.conditions.contains(&id) {
                self.conditions.push(id);
            }
        }
    }

    /// Refuses conditions of other graphs than this one (a handle given to a kernel of a
    /// graph it was not made for).
    pub(crate) fn check_conditions(&self, ids: &[u64]) -> Result<()> {
        if ids.iter().any(|&c| c != self.id) {
            return Err(GraphError::ForeignCondition.into());
        }
        Ok(())
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The index of `node`, after checking it is a node of this graph.
    pub(crate) fn index_of(&self, node: NodeId) -> Result<usize> {
        let i = node.index as usize;
        if node.graph != self.id || i >= self.nodes.len() {
            return Err(GraphError::ForeignNode { node: i }.into());
        }
        Ok(i)
    }

    /// The driver handles of `deps` and the ancestor set of a node that depends on them.
    pub(crate) fn dependencies(&self, deps: &[NodeId]) -> Result<(Vec<sys::CUgraphNode>, Vec<u64>)> {
        let mut ancestors = vec![0u64; self.nodes.len().div_ceil(64)];
        let mut raw = Vec::with_capacity(deps.len());
        for &d in deps {
            let i = self.index_of(d)?;
            raw.push(self.nodes[i].raw);
            ancestors[i / 64] |= 1 << (i % 64);
            for (a, b) in ancestors.iter_mut().zip(&self.nodes[i].ancestors) {
                *a |= b;
            }
        }
        Ok((raw, ancestors))
    }

    /// True when nodes `i` and `j` cannot run at the same time.
    fn ordered(&self, i: usize, j: usize) -> bool {
        self.chain || i == j || has(&self.nodes[i].ancestors, j) || has(&self.nodes[j].ancestors, i)
    }

    /// Refuses `uses` for a node (the new node `node`, with `ancestors`, when `node` is the
    /// node count; else an update of node `node`) when a node not ordered with it uses one
    /// of the same allocations with a write on either side.
    pub(crate) fn check(&self, node: usize, ancestors: &[u64], uses: &[Use<'_>]) -> Result<()> {
        if self.chain {
            return Ok(());
        }
        for (j, other) in self.nodes.iter().enumerate() {
            let ordered = if node == self.nodes.len() {
                has(ancestors, j)
            } else {
                self.ordered(node, j)
            };
            if ordered {
                continue;
            }
            for u in uses {
                for v in &other.uses {
                    if u.key() == v.key() && (u.access == Access::Write || v.access == Access::Write) {
                        return Err(GraphError::Hazard {
                            node,
                            other: j,
                            address: u.ptr,
                            both_write: u.access == v.access,
                        }
                        .into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Adds a node (checked with [`Nodes::check`] by the caller) and returns its id.
    pub(crate) fn push(
        &mut self,
        raw: sys::CUgraphNode,
        kind: NodeKind,
        uses: Vec<Use<'a>>,
        ancestors: Vec<u64>,
    ) -> NodeId {
        let index = self.nodes.len() as u32;
        self.launch.extend(uses.iter().map(|u| (u.uses, u.access)));
        match &kind {
            NodeKind::Kernel { function, .. } => self.note_module(function),
            NodeKind::Conditional { functions } => functions.iter().for_each(|f| self.note_module(f)),
            NodeKind::Other => {}
        }
        self.nodes.push(Node {
            raw,
            kind,
            uses,
            ancestors,
        });
        self.dedup();
        NodeId {
            graph: self.id,
            index,
        }
    }

    /// Adds the module of `f` to [`Nodes::modules`] when it has variables.
    fn note_module(&mut self, f: &Function) {
        if f.module_vars().vars() == ModuleVars::None {
            return;
        }
        let key = |m: &Arc<LoadedModule>| Arc::as_ptr(m) as usize;
        if let Err(i) = self.modules.binary_search_by_key(&key(&f._module), key) {
            self.modules.insert(i, f._module.clone());
        }
    }

    /// Runs `queue`, which queues a launch of the graph on `s`, ordered with the other uses of
    /// the variables of every module of its kernels that has some, and recorded in their
    /// records (as a launch of one of their kernels is: `driver::ordering::ModuleUses`). Holds
    /// their gates, taken in address order, until `queue` returns: the one place that holds
    /// several, all in the same order, so that no two launches wait for each other. For a
    /// graph without such modules, `queue` alone.
    #[inline]
    pub(crate) fn launch_ordered(
        &self,
        s: &Arc<StreamInner>,
        queue: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        fn nest(
            modules: &[Arc<LoadedModule>],
            s: &Arc<StreamInner>,
            queue: &mut dyn FnMut() -> Result<()>,
        ) -> Result<()> {
            match modules.split_first() {
                None => queue(),
                Some((m, rest)) => m.vars.launch(s, || nest(rest, s, queue)),
            }
        }
        nest(&self.modules, s, queue)
    }

    /// Replaces the memory node `i` uses (after an update of its parameters).
    pub(crate) fn replace_uses(&mut self, i: usize, uses: Vec<Use<'a>>) {
        self.nodes[i].uses = uses;
        self.launch.clear();
        for n in &self.nodes {
            self.launch.extend(n.uses.iter().map(|u| (u.uses, u.access)));
        }
        self.dedup();
    }

    /// The graph as the body of a conditional node: every allocation its nodes use, once, with
    /// the strongest access (the body may run any number of times, so the node uses them all),
    /// and every kernel it launches, nested bodies included.
    pub(crate) fn into_body(self) -> (Vec<Use<'a>>, Vec<Function>) {
        let mut uses: Vec<Use<'a>> = Vec::new();
        let mut functions = Vec::new();
        for n in self.nodes {
            for u in n.uses {
                match uses.iter_mut().find(|k| k.key() == u.key()) {
                    Some(k) => k.access = k.access.max(u.access),
                    None => uses.push(u),
                }
            }
            match n.kind {
                NodeKind::Kernel { function, .. } => functions.push(function),
                NodeKind::Conditional { functions: f } => functions.extend(f),
                NodeKind::Other => {}
            }
        }
        (uses, functions)
    }

    /// Keeps one entry per allocation, with the strongest access (a write orders after every
    /// use, so it covers a read).
    fn dedup(&mut self) {
        self.launch
            .sort_unstable_by_key(|(u, _)| *u as *const StreamUses as usize);
        self.launch.dedup_by(|later, kept| {
            if std::ptr::eq(later.0, kept.0) {
                kept.1 = kept.1.max(later.1);
                true
            } else {
                false
            }
        });
    }

    /// Orders a launch of the graph on `s` after the other streams' uses of every allocation
    /// the graph uses, and records the launch in each allocation's record (so that a free, or
    /// a use on another stream, waits for it). Allocation-free.
    #[inline]
    pub(crate) fn order_on(&self, s: &Arc<StreamInner>) -> Result<()> {
        for (uses, access) in &self.launch {
            match access {
                Access::Read => uses.read_on(s)?,
                Access::Write => uses.write_on(s)?,
            }
        }
        Ok(())
    }

    /// The number of distinct allocations a launch orders.
    pub(crate) fn allocations(&self) -> usize {
        self.launch.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(uses: &StreamUses, access: Access) -> Use<'_> {
        Use {
            uses,
            access,
            ptr: 0x1000,
        }
    }

    #[test]
    fn unordered_writers_of_one_allocation_are_refused() {
        let (a, b) = (StreamUses::new(), StreamUses::new());
        let mut g = Nodes::new(false);
        let n0 = g.push(
            std::ptr::null_mut(),
            NodeKind::Other,
            vec![u(&a, Access::Write)],
            vec![],
        );
        // A reader of `b` with no dependency: fine (another allocation).
        let (_, anc) = g.dependencies(&[]).unwrap();
        g.check(1, &anc, &[u(&b, Access::Read)]).unwrap();
        // A reader of `a` without depending on its writer: refused.
        let e = g.check(1, &anc, &[u(&a, Access::Read)]).unwrap_err();
        assert!(
            matches!(
                e,
                crate::Error::Graph(GraphError::Hazard {
                    node: 1,
                    other: 0,
                    both_write: false,
                    ..
                })
            ),
            "{e}"
        );
        // With the dependency: fine.
        let (_, anc) = g.dependencies(&[n0]).unwrap();
        g.check(1, &anc, &[u(&a, Access::Write)]).unwrap();
        let n1 = g.push(
            std::ptr::null_mut(),
            NodeKind::Other,
            vec![u(&a, Access::Read)],
            anc,
        );
        // Two readers need no order between them; a node after n1 is after n0 too.
        let (_, anc) = g.dependencies(&[n0]).unwrap();
        g.check(2, &anc, &[u(&a, Access::Read)]).unwrap();
        let (_, anc) = g.dependencies(&[n1]).unwrap();
        g.check(2, &anc, &[u(&a, Access::Write)]).unwrap();
    }

    #[test]
    fn updates_are_checked_against_unordered_nodes() {
        let (a, b) = (StreamUses::new(), StreamUses::new());
        let mut g = Nodes::new(false);
        g.push(
            std::ptr::null_mut(),
            NodeKind::Other,
            vec![u(&a, Access::Write)],
            vec![],
        );
        g.push(
            std::ptr::null_mut(),
            NodeKind::Other,
            vec![u(&b, Access::Write)],
            vec![0],
        );
        // Node 1 does not depend on node 0: pointing it at `a` is refused.
        assert!(g.check(1, &[], &[u(&a, Access::Read)]).is_err());
        g.check(1, &[], &[u(&b, Access::Read)]).unwrap();
        g.replace_uses(1, vec![u(&b, Access::Read)]);
        assert_eq!(g.allocations(), 2);
    }

    #[test]
    fn a_chain_needs_no_checks_and_launch_uses_are_deduplicated() {
        let a = StreamUses::new();
        let mut g = Nodes::new(true);
        g.push(
            std::ptr::null_mut(),
            NodeKind::Other,
            vec![u(&a, Access::Read)],
            vec![],
        );
        g.check(1, &[], &[u(&a, Access::Write)]).unwrap();
        g.push(
            std::ptr::null_mut(),
            NodeKind::Other,
            vec![u(&a, Access::Write)],
            vec![],
        );
        assert_eq!(g.allocations(), 1);
        assert_eq!(g.launch[0].1, Access::Write);
    }

    #[test]
    fn a_body_uses_each_allocation_once_with_its_strongest_access() {
        let (a, b) = (StreamUses::new(), StreamUses::new());
        let mut g = Nodes::new(true);
        g.push(
            std::ptr::null_mut(),
            NodeKind::Other,
            vec![u(&a, Access::Read), u(&b, Access::Read)],
            vec![],
        );
        g.push(
            std::ptr::null_mut(),
            NodeKind::Other,
            vec![u(&a, Access::Write)],
            vec![],
        );
        let (uses, functions) = g.into_body();
        assert!(functions.is_empty());
        assert_eq!(uses.len(), 2);
        let access = |s: &StreamUses| uses.iter().find(|x| std::ptr::eq(x.uses, s)).map(|x| x.access);
        assert_eq!(access(&a), Some(Access::Write));
        assert_eq!(access(&b), Some(Access::Read));
    }

    #[test]
    fn another_graphs_node_is_refused() {
        let g = Nodes::new(false);
        let other = NodeId {
            graph: g.id + 1_000_000,
            index: 0,
        };
        assert!(matches!(
            g.index_of(other),
            Err(crate::Error::Graph(GraphError::ForeignNode { .. }))
        ));
    }
}
