//! # gpu-runtime: CUDA C kernels with typed Rust signatures
//!
//! Write a CUDA C kernel as a string, give it a Rust signature, and call it. The
//! [`kernel`] attribute checks at compile time that the Rust signature matches the C
//! declaration (argument count, order, scalar width and signedness, pointer constness) and
//! generates typed launch functions; this crate does the rest at run time on top of
//! [`cudarc`]: devices and contexts, streams and events, device memory, NVRTC compilation,
//! modules and launches.
//!
//! ```no_run
//! use gpu_runtime::{kernel, Context};
//!
//! #[kernel(r#"
//! __global__ void axpy(float a, const float *x, float *y, int n) {
//!     int i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) y[i] = a * x[i] + y[i];
//! }"#)]
//! fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);
//!
//! fn main() -> gpu_runtime::Result<()> {
//!     let ctx = Context::default()?;
//!     let n = 1 << 20;
//!     let x = vec![1.0f32; n];
//!     let mut y = vec![2.0f32; n];
//!     // Host data in, host data out: `x` is copied in, `y` in and back out.
//!     axpy(&ctx, (n as u32 / 256,), (256,), 3.0, &x, &mut y, n as i32)?;
//!     assert_eq!(y[0], 5.0);
//!
//!     // Or keep the data on the device and launch with no copies.
//!     let k = axpy::prepare(&ctx)?;
//!     let (xd, mut yd) = (ctx.to_device(&x)?, ctx.to_device(&y)?);
//!     k.prepared_call((n as u32 / 256,), (256,), 3.0, &xd, &mut yd, n as i32)?;
//!     assert_eq!(yd.to_vec()?[0], 8.0);
//!     Ok(())
//! }
//! ```
//!
//! ## The type table
//!
//! | C parameter | Rust parameter |
//! |---|---|
//! | `char`, `signed char`, `int8_t` | `i8` |
//! | `unsigned char`, `uint8_t` | `u8` |
//! | `short`, `int16_t` / `unsigned short`, `uint16_t` | `i16` / `u16` |
//! | `int`, `int32_t` / `unsigned int`, `uint32_t` | `i32` / `u32` |
//! | `long`, `long long`, `int64_t` / `unsigned long`, `unsigned long long`, `uint64_t` | `i64` / `u64` |
//! | `size_t`, `uintptr_t` / `ptrdiff_t`, `ssize_t`, `intptr_t` | `usize` / `isize` |
//! | `float` / `double` / `bool` | `f32` / `f64` / `bool` |
//! | `const T *p` (or `T const *`, `const T p[]`) | `p: &[T]` |
//! | `T *p` | `p: &mut [T]` |
//! | `half`, `__half` / `__nv_bfloat16` | [`half::f16`] / [`half::bf16`] |
//! | `float4`, `uchar2`, `int3`, `longlong2`, `__half2`, … | [`Float4`], [`UChar2`], [`Int3`], [`LongLong2`], [`Half2`], … ([`vector`]) |
//! | `struct S s` / `S s` | `s: S` where `S:` [`DeviceRepr`] (check it with [`layout::check_layout`]) |
//!
//! In the generated `prepared_*` calls a `&[T]` parameter takes any [`DeviceRead<T>`] (a
//! [`DeviceBuffer`] or a view of one) and `&mut [T]` any [`DeviceWrite<T>`]. In the
//! convenience call, parameters marked `#[In]`, `#[Out]` or `#[InOut]` take host data instead:
//! slices, `Vec`s, arrays and contiguous `ndarray` arrays ([`HostSlice`], [`HostSliceMut`]).
//!
//! ## What the macro generates
//!
//! For `#[kernel(SOURCE)] fn name(args…);`:
//! - `name::prepare(&ctx) -> Result<name::Kernel>`: compiles the source (NVRTC) and loads it once
//!   per context, then returns a cached handle;
//! - `name::Kernel::prepared_call(grid, block, args…)`, `prepared_async_call(grid, block,
//!   &stream, args…)`, `prepared_timed_call(grid, block, args…) -> Duration` and `call(grid,
//!   block, args…)` (with In/Out copies); `with_shared_mem(bytes)` for `extern __shared__`;
//! - `name(&ctx, grid, block, args…)`: prepare + `call` in one.
//!
//! Grid and block take an integer or a 1-, 2- or 3-tuple ([`Dim3`]). Every launch is checked
//! against the device's limits first ([`LaunchConfigError`]); nothing bad reaches the driver.
//!
//! On `mod name { fn a(…); fn b(…); }` the attribute compiles one module for all the kernels
//! declared inside.
//!
//! The generated `name` module sees its parent's items through `use super::*`, so declare
//! kernels at module level: a `#[kernel]` inside a function body cannot see the types and
//! imports of that body (name them by full path, e.g. `gpu_runtime::TextureObject`).
//!
//! Standard headers (`<cstdio>` for device `printf`, `<cmath>`, `<cstdint>`, `<cuda_fp16.h>`,
//! `<cuda_bf16.h>`, …) compile as under nvcc: see the module docs of `headers` in the source,
//! summarised in [`compile`]. Several sources form one module with
//! `#[kernel(files = ["a.cu", "b.cu"])]` (or `sources = [...]`) or [`DynamicModule`], linked as
//! relocatable device code, so kernels may launch kernels.
//!
//! ## Streams and events
//!
//! `prepared_call` and `call` run on the legacy default stream; `prepared_async_call` takes a
//! [`Stream`]. Work on one stream runs in order, work on different streams may overlap, and
//! where two streams use the same memory this crate orders them (see "Safety model" below): a
//! launch reading a buffer that another stream writes waits for that write on the GPU, without
//! an event in your code. An [`Event`] recorded on a stream orders other streams after it by
//! hand ([`Stream::wait_for_event`]) and times GPU work ([`Event::time_since`];
//! `prepared_timed_call` does this for one launch). [`Stream::with_priority`] makes a stream
//! whose work is scheduled first, and [`Stream::add_callback`] runs a Rust closure once the work
//! queued before it is done. Asynchronous copies take page-locked memory this crate tracks
//! ([`memcpy_htod_async`] from a [`PinnedArray`], [`RegisteredArray`] or [`RegisteredSlice`]);
//! from any other host memory they are `unsafe` ([`memcpy_htod_async_unchecked`]).
//!
//! ## Memory kinds
//!
//! - Device memory: [`DeviceBuffer<T>`] (`ctx.alloc`, `ctx.alloc_zeros`, `ctx.to_device`,
//!   `ctx.from_device` into an `ndarray` of any shape and order), views of it
//!   ([`DeviceBuffer::slice`]), pitched 2D memory ([`PitchedBuffer`]), CUDA arrays
//!   ([`CudaArray`]) read through [`Texture`]s and written through [`Surface`]s, and memory from
//!   another process ([`IpcMemHandle`]).
//! - Host memory: ordinary slices, `Vec`s and `ndarray`s; page-locked [`PinnedArray`]
//!   (`ctx.pagelocked_empty`, optionally mapped into the device's address space), unified
//!   [`ManagedArray`] (`ctx.managed_empty`, passed to kernels with no copies; attached to a
//!   stream, prefetched and advised with [`MemAdvice`]), [`AlignedArray`],
//!   and existing arrays or slices page-locked in place ([`RegisteredArray`],
//!   [`RegisteredSlice`]).
//! - Pools: [`DeviceMemoryPool`] and [`PageLockedMemoryPool`] reuse freed blocks (PyCUDA's
//!   pools); on out-of-memory they give back what they hold and retry once. The convenience
//!   call stages `#[In]`/`#[Out]` arguments through the context's own pools of pinned and device
//!   memory, so a plain `Vec` gets close to pinned bandwidth.
//!
//! Every allocation frees itself when dropped (once the work queued on it has run) and keeps
//! its context alive; `free` consumes it, waits for that work, and reports the driver's error. [`DeviceData`] and [`OccupancyRecord`] compute occupancy
//! ([`Function::occupancy`], [`Function::suggested_block_size`]); [`ContextCache`] memoizes
//! values per context.
//!
//! ## Compiling, and the compile cache
//!
//! Kernels are compiled with NVRTC (loaded at run time: `libnvrtc.so.13` from the CUDA toolkit
//! or the PyPI wheel `nvidia-cuda-nvrtc`) to a cubin for the device's own architecture, or to
//! PTX when NVRTC does not know it. [`SourceModule`] does the same for sources built at run time
//! (with nvcc on request), and [`Module`] loads PTX, cubins and fatbins. Their kernels launch
//! with argument types checked against the C declaration at run time ([`Function::call`] with
//! host arrays copied in and out, PyCUDA's `func(drv.Out(dest), drv.In(a), …)`; or
//! [`Function::prepare_args`] and device memory). Compiled images are
//! kept in an on-disk cache keyed by the source, every option, the architecture, the compiler
//! and its version, and this crate's version ([`cache`]): `GPU_RUNTIME_CACHE_DIR` moves it (the
//! default follows `$XDG_CACHE_HOME`, else `~/.cache/gpu-runtime`), `GPU_RUNTIME_DISABLE_CACHE`
//! turns it off, and `GPU_RUNTIME_DEFAULT_NVRTC_FLAGS` gives default compiler options. In a
//! process each module is compiled and loaded once per context, whichever path asks for it;
//! [`clear_context_caches`] forgets them.
//!
//! ## Testing your own kernels
//!
//! Without a GPU: the build itself compiles every kernel with NVRTC when it can be loaded (see
//! below), and `name::source().compile(Target::Cubin { major: 9, minor: 0 })` compiles it in a
//! test, so syntax and type errors in CUDA C fail `cargo test` on any machine. With a GPU:
//! `#[gpu_runtime::gpu_test]` on `fn name(ctx: &Context) { … }` makes a `#[test]` that is
//! ignored unless asked for (`#[ignore = "needs a CUDA GPU"]`; run `cargo test -- --ignored` on
//! a machine with a GPU) and that receives the default context:
//!
//! ```ignore
//! #[gpu_runtime::gpu_test]
//! fn doubles(ctx: &gpu_runtime::Context) {
//!     let mut v = vec![1.0f32, 2.0];
//!     twice(ctx, 1, 2, &mut v, 2).unwrap();
//!     assert_eq!(v, [2.0, 4.0]);
//! }
//! ```
//!
//! ## At build time: the whole source checked, kernels embedded
//!
//! When NVRTC can be loaded while `cargo build` runs (found like at run time, through the
//! loader's path; or named by `GPU_RUNTIME_NVRTC=/path/to/libnvrtc.so`; or in
//! `/usr/local/cuda/lib64`), the macro compiles the whole source for the newest virtual
//! architecture NVRTC knows (front end only, a few tens of milliseconds): NVRTC's errors become
//! compile errors at the kernel's source string, each with the CUDA line and column and the
//! line quoted; its warnings become Rust warnings (reported as the use of a deprecated item, the
//! one warning a proc-macro can raise on stable Rust; silence one in CUDA with
//! `options = ["-diag-suppress=177"]`). A source whose `#include` NVRTC cannot resolve at build
//! time is not checked. Without NVRTC the build goes on with the signature checks, and the
//! compiler prints one note saying why. `check = false` in the attribute, or
//! `GPU_RUNTIME_BUILD_CHECK=0`, switches the check off.
//!
//! `embed = ["sm_90", "compute_75"]` compiles cubins (`sm_XY`) and PTX (`compute_XY`) at build
//! time and embeds them in the binary ([`EmbeddedImage`]); `GPU_RUNTIME_EMBED="sm_90,compute_80"`
//! does so for every kernel of the crate that has no `embed` of its own. At run time the best
//! image for the device is loaded ([`pick_embedded`]: a cubin of the device's architecture, else
//! the newest PTX not above it, which the driver compiles): no NVRTC is needed, and no compile
//! happens at first launch. When no image fits, the source is compiled with NVRTC as usual.
//!
//! ## Device variables and kernel templates
//!
//! For each `__constant__`/`__device__` variable of the source the macro generates a typed
//! accessor, its Rust type taken from the C declaration: `__constant__ float coeffs[16];` gives
//! `name::globals::coeffs(&ctx)? : Global<[f32; 16]>` with `set(&[…])` and `get()` ([`Global`]).
//! Array bounds may use the source's own integer constants (`#define RADIUS 4`,
//! `constexpr int N = 2 * RADIUS + 1;`); a bound the macro cannot work out (one from a header,
//! a `sizeof`) gives an accessor that is deprecated, so using it warns, and returns an error
//! saying why. A CUDA vector type is its Rust type (`__constant__ float4 c;` gives
//! `Global<Float4>`); a C struct's accessor is generic over your `#[repr(C)]` counterpart
//! (`params::<Params>(&ctx)`), whose size is checked against the variable's.
//!
//! A generic declaration binds a C++ kernel template, instantiated for the listed types (NVRTC
//! name expressions, `scale<float>`), each instantiation checked like a plain kernel:
//!
//! ```no_run
//! use gpu_runtime::{kernel, Context};
//!
//! #[kernel(r#"
//! template <typename T>
//! __global__ void scale(T *x, T a, int n) {
//!     int i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) x[i] *= a;
//! }"#, instantiate = [f32, f64])]
//! fn scale<T>(#[InOut] x: &mut [T], a: T, n: i32);
//!
//! # fn main() -> gpu_runtime::Result<()> {
//! let ctx = Context::default()?;
//! let mut x = vec![1.0f64; 256];
//! scale::<f64>(&ctx, 1, 256, &mut x, 2.0, 256)?;
//! let k = scale::prepare::<f32>(&ctx)?; // scale::Kernel<f32>
//! # Ok(()) }
//! ```
//!
//! ## Errors
//!
//! Everything returns [`Result`]; [`Error`] says what went wrong in a sentence, including the
//! compiler's log with the offending source lines for a [`CompileError`].
//!
//! A buffer argument may state the least length the kernel needs with `#[len = expr]`, where
//! `expr` uses the kernel's integer arguments (computed in `i128`, so `width * height` cannot
//! overflow): `fn blur(#[In] #[len = width * height] src: &[f32], …, width: i32, height: i32)`.
//! A shorter buffer is refused with [`Error::ArgumentTooShort`] before anything is launched.
//!
//! ## Faults
//!
//! A kernel that writes to a bad address, traps or fails an `assert` breaks CUDA for the whole
//! process: the driver reports the error ([`Error::is_launch_failure`]; its message says so) at
//! the next synchronizing call, and then fails every later call the same way, in every context
//! and on every device (tested on CUDA 13 / driver 580: another context of the same H100, and
//! the context of a second, NVLinked H200). This crate records the first such error, and from
//! then on refuses every call in every context before it reaches the driver, with
//! [`Error::ContextPoisoned`] naming the original error and the device that reported it
//! ([`Context::is_poisoned`] tells). Other processes are not affected.
//!
//! Recovery means a new process: with every handle dropped, even creating a device's context
//! anew fails with the same error. A program that must survive faulty kernels runs them in a
//! child process, as `tests/reliability.rs` does; the parent's contexts are unaffected.
//!
//! ## Threads
//!
//! Every handle may be sent to and shared between threads (`Send + Sync`):
//!
//! - [`Context`]: a reference-counted handle. The driver API is thread-safe; the "current
//!   context" is per thread, so every call that needs it makes it current first
//!   ([`Context::bind`]). The module cache is behind a mutex; the fault record is set once.
//! - [`Function`] and the `Kernel` types the macro generates: immutable driver handles, plus an
//!   atomic for the shared memory opted in to. Launching one kernel from many threads at once,
//!   on the same or different streams, is fine.
//! - [`Stream`] and [`Event`]: the driver serialises work enqueued from several threads.
//! - [`DeviceBuffer<T>`], [`DeviceView`], [`DeviceViewMut`]: `Send`/`Sync` when `T` is. The
//!   borrow checker keeps `&mut` exclusive while a call runs; the record of the streams that use
//!   each allocation (behind a mutex, read with one atomic load on the usual path) orders the
//!   work those calls queue, whichever thread queued it.
//! - [`Device`], [`DeviceLimits`], [`Dim3`], [`ModuleSource`]: plain data.
//!
//! `tests/reliability.rs` launches, allocates and prepares from 8 threads at once for 10 seconds
//! and checks every result against the CPU; `tests/soundness.rs` churns one pool from four
//! threads on four streams.
//!
//! ## Safety model
//!
//! Safe code cannot make the GPU read or write memory it must not: memory that was freed,
//! memory a pool handed to someone else, or memory that work on another stream writes at the
//! same time (or, for a write, uses at all). A mistake is a compile error or a typed error,
//! never a corrupted result. What guarantees it:
//!
//! - **Only real memory reaches a kernel.** [`DeviceRead`] and [`DeviceWrite`] hand out a
//!   [`DeviceView`]/[`DeviceViewMut`], and only this crate's allocations make views, so a safe
//!   trait implementation cannot invent an address or a length. Memory of another library
//!   enters through the `unsafe` [`DeviceView::from_raw_parts`].
//! - **Every allocation records the streams that use it**: the last writer, and the readers
//!   since. Each launch, asynchronous copy and memset (and each synchronous one, which runs on
//!   the legacy default stream) checks the memory it touches before it is queued: on the stream
//!   of the previous use, nothing to do (one atomic load); on another stream, the new work
//!   waits on the GPU for the old (`cuEventRecord` on the old stream's fence event,
//!   `cuStreamWaitEvent` on the new one). A read waits for the last write; a write for every use
//!   since. The host does not wait.
//! - **Frees and reuse are stream-ordered.** An allocation dropped with work queued on it is
//!   freed once events recorded on its streams have completed (checked at the context's next
//!   allocation, synchronize, out-of-memory retry, or destruction). A pool takes a block back
//!   at once with its record, and the next owner's first use on another stream waits for the
//!   previous owner's work; on the same stream the stream's order suffices, so a pooled
//!   allocate + free costs no driver call. Texture and surface objects, CUDA arrays, pinned
//!   and managed memory, and mapped IPC memory are released the same way.
//! - **Handles kernels hold are borrowed.** A [`TextureObject`] borrows its [`Texture`], which
//!   borrows its memory; a launch taking the handle records a use of both, so dropping them
//!   right after an asynchronous launch is fine. A [`Surface`] borrows its array mutably.
//! - **The host waits for the GPU before it touches host memory the GPU uses.** Page-locked
//!   arrays, registered memory and managed memory record the asynchronous copies and kernels
//!   that use them; reading one from the host waits for the GPU writes, writing it (or freeing
//!   or unlocking it) waits for every use. [`Context::register_host_slice`] is scoped, like
//!   `std::thread::scope`, so the borrow of your slice cannot end before that wait.
//! - **Drops with work pending lose nothing**: a [`Stream`] lives on in the records that name
//!   it, an [`Event`] is released by the driver when it completes, a [`Context`] waits for its
//!   work before it is destroyed, and pools free held blocks after the work on them.
//!
//! The design, and why: cudarc records an event at every use of every argument, which costs
//! driver calls on every launch; CuPy's pool keeps blocks per stream. Here a record costs
//! nothing until a stream boundary is crossed, so a launch on one stream costs what a bare
//! `cuLaunchKernel` costs (the benchmark report measures it), and a pooled block is reused on
//! any stream. The granularity is the allocation, as in cudarc: two streams writing two halves
//! of one buffer wait for each other; give each stream its own buffer to overlap them.
//!
//! Outside the model, and yours to order: what a kernel's C code does (it may turn any integer
//! into a pointer), device addresses passed as integers (`device_ptr()`, a handle's `raw()`,
//! pointers stored in structs or device memory), other libraries' and other processes' uses of
//! the same memory, and work on a stream you opted out with [`Stream::order_manually`].
//!
//! The `unsafe` items, each with its contract in its documentation:
//!
//! | item | the caller promises |
//! |---|---|
//! | [`DeviceView::from_raw_parts`], [`DeviceViewMut::from_raw_parts`] | the memory is valid for the view's length and lifetime and until the work queued with it has run, and other writers are ordered with it |
//! | [`TextureObject::from_raw`], [`SurfaceObject::from_raw`] | the object and its memory stay alive, and are ordered with other work, until the launches given it have run |
//! | [`memcpy_htod_async_unchecked`], [`memcpy_dtoh_async_unchecked`] | the host slice stays allocated and untouched until the copy has run |
//! | [`Memcpy2D::call_async`], [`Memcpy3D::call_async`], [`Memcpy3D::call_peer_async`] | the same, for host memory at either end |
//! | [`Stream::order_manually`] | uses on that stream are ordered with other streams' uses by the caller |
//! | [`IpcMemHandle::open`] | the exporting process keeps the memory alive and does not use it concurrently with this process |
//! | [`Function::prepare_args_unchecked`] | the argument types are the kernel's parameter types |
//! | [`DeviceRepr`] (trait) | the type is plain data, valid for every bit pattern, laid out as the C type |
//! | [`KernelParam`] (trait) | the value's bytes are what the kernel's parameter expects |
//!
//! (`Function::launch_raw`, hidden, is what the macro's generated code calls after its checks.)
#![deny(missing_docs)]

mod argcheck;
mod array;
mod attributes;
pub mod cache;
mod compiler;
mod context;
mod context_config;
mod context_ops;
mod copy;
mod copy_workers;
mod device;
mod device_pool;
mod driver;
mod dynamic;
mod embedded;
mod error;
mod function_attrs;
mod global;
mod headers;
mod host;
mod host_array;
mod ipc;
mod launch;
pub mod layout;
mod link;
mod managed;
mod managed_ops;
mod memoize;
mod memops;
mod memory;
mod module;
mod ndcopy;
mod nvcc;
mod nvjitlink;
mod occupancy;
mod ordering;
mod page_locked;
mod pinned;
mod pitched;
mod pool;
pub mod profiler;
mod registered;
mod repr;
mod source_module;
mod staging;
mod stream;
mod stream_ops;
mod texture;
mod toolchain;
mod user_module;
pub mod vector;
mod version;

pub use array::{ArrayDescriptor, ArrayElement, ArrayFlags, ArrayFormat, CudaArray};
pub use attributes::DeviceAttribute;
pub use cache::{CacheKey, CacheStatus};
pub use compiler::{compile, nvrtc_version, supported_archs, CompiledModule, Target};
pub use context::{clear_context_caches, Context};
pub use context_config::{CacheConfig, ContextFlags, Limit, SharedConfig};
pub use copy::{Memcpy2D, Memcpy3D};
pub use device::{ComputeMode, Device, DeviceLimits};
pub use device_pool::{DeviceMemoryPool, PooledBuffer, PooledDeviceAllocation};
pub use driver::{driver_version, is_available};
pub use dynamic::{Arg, ArgType, PreparedFunction};
pub use embedded::{pick_embedded, EmbeddedImage, ImageKind};
pub use error::{CompileError, Error, LaunchConfigError, Result};
pub use global::Global;
pub use host::{HostSlice, HostSliceMut};
pub use host_array::{aligned_empty, aligned_empty_like, aligned_zeros, aligned_zeros_like, AlignedArray};
pub use ipc::{IpcBuffer, IpcEventHandle, IpcMemHandle};
pub use launch::{validate as validate_launch, CheckedLaunch, Dim3, KernelLimits};
pub use link::{linker_available, DynamicModule, LinkInput, LinkedModule};
pub use managed::{AttachFlags, ManagedArray};
pub use managed_ops::{MemAdvice, MemLocation};
pub use memoize::ContextCache;
pub use memops::{
    memcpy_dtod, memcpy_dtod_async, memcpy_dtoh, memcpy_dtoh_async, memcpy_dtoh_async_unchecked, memcpy_htod,
    memcpy_htod_async, memcpy_htod_async_unchecked, memcpy_peer, memcpy_peer_async, memset_d16,
    memset_d16_async, memset_d2d16, memset_d2d16_async, memset_d2d32, memset_d2d32_async, memset_d2d8,
    memset_d2d8_async, memset_d32, memset_d32_async, memset_d8, memset_d8_async,
};
pub use memory::{DeviceBuffer, DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
pub use module::{Function, ModuleSource, SourcePart};
pub use occupancy::{DeviceData, LimitedBy, OccupancyRecord};
pub use page_locked::{PageLocked, PageLockedMut};
pub use pinned::{
    HostAllocFlags, HostRegisterFlags, PageLockedAllocator, PageLockedMemoryPool, PinnedArray,
    RegisteredArray,
};
pub use pitched::PitchedBuffer;
pub use registered::RegisteredSlice;
pub use repr::{DeviceRepr, KernelParam};
pub use source_module::{CompileReport, Compiler, SourceModule};
pub use stream::{Event, EventFlags, Stream, StreamFlags};
pub use texture::{AddressMode, FilterMode, Surface, SurfaceObject, Texture, TextureDesc, TextureObject};
pub use user_module::{JitOptions, Module, ModuleGlobal};
pub use vector::*;
pub use version::{cuda_version, init, version, VERSION};

pub use gpu_macros::{gpu_test, kernel};

// The promises of the "Threads" section, checked at compile time.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Context>();
    send_sync::<Function>();
    send_sync::<Stream>();
    send_sync::<Event>();
    send_sync::<DeviceBuffer<f32>>();
    send_sync::<DeviceView<'static, f32>>();
    send_sync::<DeviceViewMut<'static, f32>>();
    send_sync::<Device>();
    send_sync::<DeviceLimits>();
    send_sync::<ModuleSource>();
    send_sync::<Error>();
};

/// Re-exported so that users can name driver types without depending on cudarc themselves.
pub use cudarc;
/// Re-exported for `half`/`__half` (`half::f16`) and `__nv_bfloat16` (`half::bf16`) data.
pub use half;
/// Re-exported for host arrays.
pub use ndarray;

/// What the `#[kernel]` macro's generated code calls. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::argcheck::LenValue;
    pub use crate::ordering::LaunchStream;
    pub use crate::staging::{set_tuning as set_staging_tuning, Staging};
    use std::ffi::c_void;

    /// A kernel parameter's address, as `cuLaunchKernel` takes it.
    #[inline(always)]
    pub fn param<T>(value: &T) -> *mut c_void {
        value as *const T as *mut c_void
    }

    /// A by-value argument, as the kernel takes it, after ordering the launch after the work
    /// it depends on (texture and surface objects; nothing for plain data). Naming it
    /// (`by_value::<T>`) is also the compile-time proof that `T` may be passed by value.
    #[inline(always)]
    pub fn by_value<T: crate::KernelParam>(value: T, stream: LaunchStream<'_>) -> crate::Result<T> {
        value.order_on(&stream)?;
        Ok(value)
    }

    /// Compile-time proof that a buffer element type may live in device memory.
    pub const fn assert_device_repr<T: crate::DeviceRepr>() {}
}

/// The README's examples, compiled as doctests so that they stay true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
