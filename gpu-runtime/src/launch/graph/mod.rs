//! CUDA graphs from typed calls: record kernels, copies, memsets and event waits once
//! ([`Capture`], by stream capture) or build them with explicit dependencies
//! ([`GraphBuilder`]), instantiate once ([`Graph::instantiate`]), and launch the whole graph
//! with one driver call per launch ([`GraphExec::launch`]); change one kernel node's arguments
//! in place with the generated, typed `update_node`.
//!
//! # Lifetimes: why a graph borrows its buffers
//!
//! A graph holds device addresses that every launch uses again, so the memory behind them must
//! stay allocated, and not be written by anyone the graph does not know of, for as long as the
//! graph can be launched. Here that is a borrow: a [`Graph<'a>`](Graph) and its
//! [`GraphExec<'a>`](GraphExec) hold, for `'a`, a shared borrow of each buffer the graph only
//! reads ([`GraphInput`]) and an exclusive borrow of each buffer it writes ([`GraphBuffer`]).
//! So the compiler refuses a buffer dropped, or written by the host or another launch, while a
//! graph that uses it exists (`tests/ui-tests/fail/graph_outlives_buffer.rs`).
//!
//! The alternative, a graph owning reference-counted buffers, would need every buffer to be
//! shareable and still leave host writes to them unordered; a borrow costs nothing at run time.
//!
//! # Ordering: recorded at each launch, never during capture
//!
//! Every allocation carries a record of the streams that use it (see the guide's
//! [Safety model](crate::guide::threads_and_safety#safety-model)). A capture does not touch those records: its private stream never enters a record,
//! so nothing can later wait for an event recorded inside the capture (cudarc issue #590).
//! Each node instead notes the allocations it reads and writes; the graph keeps them, one
//! entry per allocation with its strongest access, and [`GraphExec::launch`] records them on
//! the launch stream like any launch does: the graph waits for other streams' work on its
//! memory, later work on other streams waits for the graph, and a buffer dropped once the
//! graph is gone is freed only after the graph's last launch has run.
//!
//! # Concurrency inside a graph
//!
//! A capture on one stream is a chain: no two of its nodes run at the same time. A built graph
//! is a DAG, whose unordered nodes may; [`GraphBuilder`] refuses a node that writes an
//! allocation an unordered node uses, or uses one an unordered node writes
//! ([`GraphError::Hazard`](crate::GraphError::Hazard)), and `update_node` checks the same.
//! The granularity is the allocation, as for streams.
//!
//! # What a graph does not take
//!
//! Texture and surface objects (their borrow is not the graph's), host memory (no host copies
//! yet), and kernels of other contexts. Cluster and cooperative launches are captured with
//! their attributes, but cannot be added to a built graph nor updated. Programmatic dependent
//! launches are captured (as programmatic edges) and added to built graphs (with programmatic
//! edges from the kernels they depend on), but not updated.
//!
//! # Loops and branches
//!
//! [`GraphBuilder::while_loop`], [`if_then`](GraphBuilder::if_then),
//! [`if_else`](GraphBuilder::if_else) and [`switch`](GraphBuilder::switch) add conditional
//! nodes whose bodies are graphs built or captured as above, and whose condition a kernel of
//! the graph sets through a [`ConditionalHandle`] (`conditional.rs`).

#[cfg(feature = "cublas")]
pub(crate) mod blas_handle;
pub(crate) mod buffers;
pub(crate) mod builder;
pub(crate) mod capture;
pub(crate) mod conditional;
pub(crate) mod exec;
#[allow(clippy::module_inception)]
pub(crate) mod graph;
pub(crate) mod node_args;
pub(crate) mod node_checks;
pub(crate) mod nodes;

pub use buffers::{GraphBuffer, GraphInput, GraphRead, GraphSlice, GraphSliceMut, GraphWrite};
pub use builder::GraphBuilder;
pub use capture::Capture;
pub use conditional::{cudaGraphConditionalHandle, ConditionalHandle};
pub use exec::GraphExec;
pub use graph::Graph;
pub use nodes::NodeId;
