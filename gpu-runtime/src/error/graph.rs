//! [`GraphError`]: a graph node refused, with the nodes and values involved.

/// Why a graph node was refused (`launch::GraphBuilder`, `GraphExec::update_node`), with the
/// node indices and values involved. It lives here, not in `launch`, because [`Error`](crate::Error) wraps
/// it and `error` is the lowest layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// Two nodes of a graph use one allocation, at least one of them writing it, and neither
    /// depends on the other: they could run at the same time.
    #[error("graph node {node} and node {other} both use the allocation at {address:#x} ({}), and neither depends on the other, so they could run at the same time; make one depend on the other", if *both_write { "written by both" } else { "written by one and read by the other" })]
    Hazard {
        /// The node being added or updated.
        node: usize,
        /// The earlier node it conflicts with.
        other: usize,
        /// The device address of the allocation both use.
        address: u64,
        /// True when both write it; false when one writes and the other reads.
        both_write: bool,
    },
    /// A node handle used with a graph it does not belong to.
    #[error("graph node {node}: the node belongs to another graph")]
    ForeignNode {
        /// The node's index in its own graph.
        node: usize,
    },
    /// A kernel node updated with another kernel than the one it launches.
    #[error("graph node {node}: the node launches kernel `{launches}`, not `{given}`")]
    OtherKernel {
        /// The node's index in its graph.
        node: usize,
        /// The kernel the node launches.
        launches: String,
        /// The kernel the update was given.
        given: String,
    },
    /// A cluster or cooperative launch node, or a plain node updated with such a launch: its
    /// launch attributes would be lost by the update.
    #[error("graph node {node}: a cluster or cooperative launch cannot be updated (its launch attributes would be lost); capture it again")]
    NotUpdatable {
        /// The node's index in its graph.
        node: usize,
    },
    /// A node updated as a kernel launch that is not one (a copy, a memset, ...).
    #[error("graph node {node}: the node is not a kernel launch")]
    NotAKernel {
        /// The node's index in its graph.
        node: usize,
    },
    /// A conditional node given the condition of another graph
    /// (`launch::ConditionalHandle`): a condition exists only in the graph it was made for.
    #[error("a conditional node's handle belongs to another graph; make it with this graph's `conditional_handle`")]
    ForeignCondition,
    /// A `switch` conditional node without cases.
    #[error("a switch conditional node needs at least one case")]
    NoCases,
    /// A memset node of more values than its buffer holds.
    #[error("size mismatch in a graph's memset: {count} values of {unit} bytes do not fit in {bytes} bytes")]
    MemsetTooLarge {
        /// Values to set.
        count: usize,
        /// Bytes per value (1 or 4).
        unit: usize,
        /// Bytes the buffer holds.
        bytes: usize,
    },
    /// A memset node whose buffer does not start at a multiple of the value's size.
    #[error("invalid argument to a graph's memset: the address {address:#x} is not aligned to {unit} bytes")]
    MemsetMisaligned {
        /// The buffer's device address.
        address: u64,
        /// Bytes per value (4).
        unit: usize,
    },
}
