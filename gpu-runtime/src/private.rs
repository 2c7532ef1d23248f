//! What the `#[kernel]` macro's generated code calls, and nothing else does: the one interface
//! between `gpu-macros` and this crate, re-exported as `gpu_runtime::__private_v0_1` and hidden from
//! the documentation. Every item here is named by `gpu-macros-core/src/expand/`, `deep.rs` or
//! `linked.rs`; the logic behind each lives in the layer named on it.
//!
//! A generated `prepared_async_call` is: [`stream_arg`], then per buffer argument a view of it
//! ([`DeviceRead`](crate::DeviceRead)), the `#[len]` checks ([`check_len`]), per
//! argument [`read_arg`] / [`write_arg`] / [`by_value`], then [`launch`] with the parameter
//! array made by [`param`]. The graph methods (`capture`, `graph_node`, `update_node`) take
//! each buffer's [`GraphArg`] from its token ([`graph_read`] / [`graph_write`]), collect the
//! node's uses in a [`NodeArgs`], and end in one [`KernelNode`] handed to the graph's
//! `kernel` / `update_kernel`.
//!
//! `#[elementwise]` (`gpu-macros-core/src/elementwise/`) emits a `static` [`ElementwiseFn`]
//! (the C arguments and operation it wrote and checked) and functions that launch it with one
//! [`KernelArg`] per argument; the kernel is built, compiled and cached in `gpuarray`.
//! `#[reduction]` (`gpu-macros-core/src/reduction.rs`) likewise emits a `static` [`ReductionFn`].

use std::ffi::c_void;
use std::time::Duration;

use cudarc::driver::sys;

use crate::driver::context::core::Context;
use crate::driver::memory::view::{DeviceView, DeviceViewMut};
use crate::driver::module::function::Function;
use crate::driver::module::global::Global;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::launch::dims::Dim3;
use crate::launch::graph::buffers::{GraphRead, GraphWrite};
use crate::launch::params::KernelParam;
use crate::types::repr::DeviceRepr;

pub use crate::compiler::embedded::{EmbeddedImage, ImageKind};
pub use crate::compiler::source::{ModuleSource, SourceHeader, SourceOnDisk, SourcePart};
/// `#[elementwise]`: the assertion that each argument's element type is the C type the macro
/// read from its name (`gpuarray::kernels::elementwise_fn`).
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::kernels::elementwise_fn::c_name_is as element_c_name_is;
/// `#[elementwise]`: the same assertion for CUDA vector element types (`Float3` is `float3`).
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::kernels::elementwise_fn::vector_c_name_is;
/// The `static` `#[reduction]` emits (`gpuarray::reduce::reduction_fn`).
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::ReductionFn;
/// `#[elementwise]`: the static each declared function keeps its kernel in, and the
/// arguments its launch passes (`gpuarray::declared`, `gpuarray::args`).
#[cfg(feature = "gpuarray")]
pub use crate::gpuarray::{ElementwiseFn, KernelArg};
pub use crate::launch::argcheck::LenValue;
pub use crate::launch::cluster::LaunchEx;
pub use crate::launch::graph::buffers::GraphArg;
pub use crate::launch::graph::node_args::{KernelNode, NodeArgs};
pub use crate::launch::launch_stream::LaunchStream;
/// `call_future`'s future (`launch::staged_call`).
pub use crate::launch::staged_call::StagedCall;
pub use crate::launch::staging::Staging;

/// `prepare(&ctx)`: kernel `index` of `source`, compiled and loaded on first use in `ctx`
/// (`driver::module`).
#[inline]
pub fn prepare(ctx: &Context, source: &'static ModuleSource, index: usize) -> Result<Function> {
    Function::prepare(ctx, source, index)
}

/// A typed accessor of `globals`: the variable `name` of `source` in `ctx`.
pub fn global<T: DeviceRepr>(
    ctx: &Context,
    source: &'static ModuleSource,
    name: &'static str,
) -> Result<Global<T>> {
    Global::lookup(ctx, source, name)
}

/// `prepared_async_call`'s stream, checked to belong to the kernel's context (`launch::args`).
#[inline]
pub fn stream_arg<'s>(f: &Function, stream: &'s Stream) -> Result<LaunchStream<'s>> {
    crate::launch::buffer_args::stream_arg(f, stream)
}

/// `call_on`'s staging: the In/Out copies and the launch on `stream`, checked to belong to the
/// kernel's context (`launch::staging`).
#[inline]
pub fn staging_on<'a>(f: &'a Function, stream: &'a Stream) -> Result<Staging<'a>> {
    Staging::on_stream(f, crate::launch::buffer_args::stream_arg(f, stream)?)
}

/// The legacy default stream of the kernel's context, where `prepared_call` launches.
#[inline(always)]
pub fn legacy_stream(f: &Function) -> LaunchStream<'_> {
    crate::launch::buffer_args::legacy_stream(f)
}

/// A buffer the kernel reads: its address, after checking its context and ordering the read
/// on the stream (`launch::args`, `driver::ordering`).
#[inline(always)]
pub fn read_arg<T>(
    f: &Function,
    arg: &DeviceView<'_, T>,
    stream: LaunchStream<'_>,
) -> Result<sys::CUdeviceptr> {
    crate::launch::buffer_args::read_arg(f, arg, stream)
}

/// A buffer the kernel may write: as [`read_arg`], ordered after every use of the buffer.
#[inline(always)]
pub fn write_arg<T>(
    f: &Function,
    arg: &DeviceViewMut<'_, T>,
    stream: LaunchStream<'_>,
) -> Result<sys::CUdeviceptr> {
    crate::launch::buffer_args::write_arg(f, arg, stream)
}

/// [`read_arg`] for a pointer that may be null (`Option<&[T]>` in the signature): `None` is
/// the null pointer, which is no memory, so nothing is checked or ordered for it.
#[inline(always)]
pub fn read_arg_opt<T>(
    f: &Function,
    arg: Option<&DeviceView<'_, T>>,
    stream: LaunchStream<'_>,
) -> Result<sys::CUdeviceptr> {
    match arg {
        Some(a) => read_arg(f, a, stream),
        None => Ok(0),
    }
}

/// [`write_arg`] for a pointer that may be null (`Option<&mut [T]>`): `None` is the null
/// pointer.
#[inline(always)]
pub fn write_arg_opt<T>(
    f: &Function,
    arg: Option<&DeviceViewMut<'_, T>>,
    stream: LaunchStream<'_>,
) -> Result<sys::CUdeviceptr> {
    match arg {
        Some(a) => write_arg(f, a, stream),
        None => Ok(0),
    }
}

/// A by-value argument, after ordering the launch after what it depends on (texture and
/// surface objects). Naming it (`by_value::<T>`) is also the compile-time proof that `T` may be
/// passed by value.
#[inline(always)]
pub fn by_value<T: KernelParam>(value: T, stream: LaunchStream<'_>) -> Result<T> {
    crate::launch::params::by_value(value, stream)
}

/// A `#[len = expr]` check: `actual` elements, at least `needed` (`launch::argcheck`).
#[inline]
pub fn check_len(
    f: &Function,
    name: &'static str,
    actual: usize,
    expr: &'static str,
    needed: i128,
) -> Result<()> {
    f.check_len(name, actual, expr, needed)
}

/// A kernel parameter's address, as `cuLaunchKernel` takes it.
#[inline(always)]
pub fn param<T>(value: &T) -> *mut c_void {
    value as *const T as *mut c_void
}

/// The launch: `cuLaunchKernel` for a plain handle (`launch::raw`), `cuLaunchKernelEx` for a
/// cluster or cooperative one (`launch::cluster`), ordered with the other uses of the module's
/// variables (`driver::ordering::ModuleUses`).
///
/// # Safety
/// As [`Function::launch_raw`]: `params` holds one pointer per parameter, each to a value of
/// the C parameter's type, and every buffer among them was passed through [`read_arg`] or
/// [`write_arg`] for this `stream` and stays borrowed until this returns.
#[inline(always)]
pub unsafe fn launch(
    f: &Function,
    ex: &LaunchEx,
    grid: Dim3,
    block: Dim3,
    stream: LaunchStream<'_>,
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller's guarantee.
    unsafe { ex.launch_on(f, grid, block, stream, params) }
}

/// The launch configuration of `#[kernel(cluster = (x, y, z))]` and `#[kernel(cooperative)]`,
/// checked against the device and the kernel once, at `prepare` (`launch::cluster`).
pub fn launch_ex(f: &Function, cluster: Option<(i64, i64, i64)>, cooperative: bool) -> Result<LaunchEx> {
    let mut ex = LaunchEx::default();
    if let Some((x, y, z)) = cluster {
        ex = ex.with_cluster(f, Dim3::new(x, y, z))?;
    }
    if cooperative {
        ex = ex.with_cooperative(f)?;
    }
    Ok(ex)
}

/// The generated `dependent_launch()`: the kernel's launch configuration `ex`, made a
/// programmatic dependent launch (`launch::cluster`, [`LaunchEx::with_dependent_launch`]).
///
/// # Safety
/// As [`LaunchEx::with_dependent_launch`]: the kernel calls `cudaGridDependencySynchronize()`
/// in every thread, before the thread touches memory that earlier work uses.
pub unsafe fn dependent_launch(f: &Function, ex: &LaunchEx) -> Result<LaunchEx> {
    // SAFETY: the caller's guarantee.
    unsafe { ex.with_dependent_launch(f) }
}

/// A graph node's by-value argument, recorded in `node` when it is a graph's condition
/// (`launch::ConditionalHandle`), so that the graph refuses another graph's condition when it
/// is instantiated (or updated). What the graph methods' by-value slots should be made with:
/// `let slot: T = graph_value(&mut node, value);`.
#[inline(always)]
pub fn graph_value<T: KernelParam>(node: &mut NodeArgs<'_>, value: T) -> T {
    node.value(value)
}

/// A graph node's buffer argument, from a [`GraphRead`] token (`launch::graph`).
#[inline(always)]
pub fn graph_read<'a, T, A: GraphRead<'a, T>>(arg: &A) -> GraphArg<'a> {
    arg.graph_arg()
}

/// A graph node's written buffer argument, from a [`GraphWrite`] token.
#[inline(always)]
pub fn graph_write<'a, T, A: GraphWrite<'a, T>>(arg: &mut A) -> GraphArg<'a> {
    arg.graph_arg_mut()
}

/// [`graph_read`] for a pointer that may be null: `None` stays `None` (the null pointer).
#[inline(always)]
pub fn graph_read_opt<'a, T>(arg: Option<&dyn GraphRead<'a, T>>) -> Option<GraphArg<'a>> {
    arg.map(|a| a.graph_arg())
}

/// [`graph_write`] for a pointer that may be null.
#[inline(always)]
pub fn graph_write_opt<'a, T>(arg: Option<&mut dyn GraphWrite<'a, T>>) -> Option<GraphArg<'a>> {
    arg.map(|a| a.graph_arg_mut())
}

/// What the graph methods of a kernel taking a texture or surface object return: a graph
/// cannot keep the object's resource alive (its borrow is not the graph's).
#[cold]
pub fn graph_refused_handles(f: &Function) -> crate::error::Error {
    crate::error::Error::Unsupported {
        what: "a texture or surface object argument in a graph node",
        needs: format!(
            "a plain launch (`prepared_async_call`) of kernel `{}`: graphs take buffers and plain data only",
            f.name()
        ),
    }
}

/// `prepared_timed_call`: `launch` between two events, waited for (`launch::raw`).
pub fn timed(f: &Function, launch: impl FnOnce() -> Result<()>) -> Result<Duration> {
    crate::launch::raw::timed(f, launch)
}

/// Compile-time proof that a buffer element type may live in device memory.
pub const fn assert_device_repr<T: DeviceRepr>() {}
