//! What the `#[kernel]` macro's generated code calls, and nothing else does: the one interface
//! between `gpu-macros` and this crate, re-exported as `gpu_runtime::__private` and hidden from
//! the documentation. Every item here is named by `gpu-macros/src/expand.rs`, `deep.rs` or
//! `linked.rs`; the logic behind each lives in the layer named on it.
//!
//! A generated `prepared_async_call` is: [`stream_arg`], then per buffer argument a view of it
//! ([`DeviceRead`](crate::driver::DeviceRead)), the `#[len]` checks ([`check_len`]), per
//! argument [`read_arg`] / [`write_arg`] / [`by_value`], then [`launch`] with the parameter
//! array made by [`param`].

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
use crate::launch::params::KernelParam;
use crate::types::repr::DeviceRepr;

pub use crate::compiler::embedded::{EmbeddedImage, ImageKind};
pub use crate::compiler::source::{ModuleSource, SourcePart};
pub use crate::launch::argcheck::LenValue;
pub use crate::launch::staging::{set_tuning as set_staging_tuning, Staging};
pub use crate::launch::stream::LaunchStream;

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
    crate::launch::args::stream_arg(f, stream)
}

/// `call_on`'s staging: the In/Out copies and the launch on `stream`, checked to belong to the
/// kernel's context (`launch::staging`).
#[inline]
pub fn staging_on<'a>(f: &'a Function, stream: &'a Stream) -> Result<Staging<'a>> {
    Staging::on_stream(f, crate::launch::args::stream_arg(f, stream)?)
}

/// The legacy default stream of the kernel's context, where `prepared_call` launches.
#[inline(always)]
pub fn legacy_stream(f: &Function) -> LaunchStream<'_> {
    crate::launch::args::legacy_stream(f)
}

/// A buffer the kernel reads: its address, after checking its context and ordering the read
/// on the stream (`launch::args`, `driver::ordering`).
#[inline(always)]
pub fn read_arg<T>(
    f: &Function,
    arg: &DeviceView<'_, T>,
    stream: LaunchStream<'_>,
) -> Result<sys::CUdeviceptr> {
    crate::launch::args::read_arg(f, arg, stream)
}

/// A buffer the kernel may write: as [`read_arg`], ordered after every use of the buffer.
#[inline(always)]
pub fn write_arg<T>(
    f: &Function,
    arg: &DeviceViewMut<'_, T>,
    stream: LaunchStream<'_>,
) -> Result<sys::CUdeviceptr> {
    crate::launch::args::write_arg(f, arg, stream)
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

/// The launch (`launch::raw`).
///
/// # Safety
/// As [`Function::launch_raw`]: `params` holds one pointer per parameter, each to a value of
/// the C parameter's type, and every buffer among them was passed through [`read_arg`] or
/// [`write_arg`] for this `stream` and stays borrowed until this returns.
#[inline(always)]
pub unsafe fn launch(
    f: &Function,
    grid: Dim3,
    block: Dim3,
    stream: LaunchStream<'_>,
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller's guarantee.
    unsafe { f.launch_raw(grid, block, stream.raw(), params) }
}

/// `prepared_timed_call`: `launch` between two events, waited for (`launch::raw`).
pub fn timed(f: &Function, launch: impl FnOnce() -> Result<()>) -> Result<Duration> {
    crate::launch::raw::timed(f, launch)
}

/// Compile-time proof that a buffer element type may live in device memory.
pub const fn assert_device_repr<T: DeviceRepr>() {}
