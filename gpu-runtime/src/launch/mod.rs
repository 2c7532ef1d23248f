//! Calling a kernel: grid and block checks, the parameters and the ordering of their uses on
//! the launch's stream, the In/Out/InOut staging of host data, and runtime-typed arguments
//! (PyCUDA's `prepare` and `Function.__call__`); CUDA graphs of typed calls ([`Capture`],
//! [`GraphBuilder`], [`GraphExec`]); thread-block clusters and cooperative launches
//! (`cluster.rs`).

pub(crate) mod argcheck;
pub(crate) mod buffer_args;
pub(crate) mod cluster;
pub(crate) mod dims;
pub(crate) mod dynamic;
pub(crate) mod graph;
pub(crate) mod launch_stream;
pub(crate) mod params;
pub(crate) mod raw;
pub(crate) mod staged_call;
pub(crate) mod staging;

pub use dims::{validate, CheckedLaunch, DimExtent};
pub use dynamic::{
    Arg, ArgType, CallOptions, CudaVector, HostArg, PreparedFunction, PtrArg, StructArg, StructType,
    VectorArg, VectorType, MAX_ARGS,
};
pub use graph::{
    cudaGraphConditionalHandle, Capture, ConditionalHandle, Graph, GraphBuffer, GraphBuilder, GraphExec,
    GraphInput, GraphRead, GraphSlice, GraphSliceMut, GraphWrite, NodeId,
};
pub use params::KernelParam;
pub use staged_call::StagedCall;
