//! Errors: one enum for everything that can go wrong, each variant a sentence for the user.
//!
//! The variants mirror PyCUDA's exception classes: [`Error::Driver`] is `pycuda.driver.Error`
//! (with [`Error::is_out_of_memory`] and [`Error::is_launch_failure`] standing in for
//! `MemoryError` and `LaunchError`), [`Error::Compile`] is `CompileError`, and the rest are
//! mistakes caught before the driver is asked anything.
//!
//! Mistakes of one kind form a family with its own enum, whose variants carry the sizes,
//! names and values involved as fields, wrapped by one variant of [`Error`]: [`CopyError`]
//! (`Error::Copy`), [`ArgumentError`] (`Error::Argument`), [`MemoryError`], [`ArrayShapeError`], [`TextureError`], [`FlagsError`],
//! [`OccupancyError`], [`GraphError`], [`BorderError`] (`Error::Border`), [`LaunchConfigError`] (`Error::InvalidLaunch`), and
//! behind their features `GemmError` and `DlpackError`. Match the variant and its fields, e.g.
//! `Err(Error::Copy(CopyError::HostDeviceLength { host, device, .. }))`; the messages are for
//! people. A family of a higher layer, which this lowest one cannot name, has its own `Result`
//! type in its layer (cuRAND's `gpuarray::CurandResult`, NCCL's `nccl::Result`), and `?` turns
//! its errors into the [`Error`] they wrap or [`Error::Other`].

use std::fmt;

use cudarc::driver::sys::CUresult;

mod argument;
mod border;
mod copy;
mod flags;
#[cfg(feature = "cublas")]
mod gemm;
mod memory;
mod occupancy;
pub(crate) mod panic;
mod shape;
mod texture;

pub use argument::{ArgHint, ArgumentError};
pub use border::BorderError;
pub use copy::CopyError;
pub use flags::FlagsError;
#[cfg(feature = "cublas")]
pub use gemm::GemmError;
pub use memory::MemoryError;
pub use occupancy::OccupancyError;
pub use shape::ArrayShapeError;
pub use texture::TextureError;

/// `Result<T, gpu_runtime::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in this crate.
///
/// `Debug` prints the same sentence as `Display`, so that `fn main() -> gpu_runtime::Result<()>`
/// ends with a readable message instead of a struct dump.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library (`libcuda.so`) could not be loaded: no NVIDIA driver here.
    #[error("no NVIDIA CUDA driver was found on this machine (libcuda.so could not be loaded); running kernels needs an NVIDIA GPU and its driver")]
    DriverNotFound,
    /// The driver loaded but reports no CUDA device.
    #[error("the CUDA driver is installed but reports no CUDA device")]
    NoDevice,
    /// NVRTC (`libnvrtc.so`) could not be loaded, so CUDA C cannot be compiled at run time.
    #[error("NVRTC, the CUDA runtime compiler (libnvrtc.so.13), could not be loaded: install the CUDA toolkit or `pip install nvidia-cuda-nvrtc` and put its lib/ directory on LD_LIBRARY_PATH")]
    NvrtcNotFound,
    /// The PTX embedded at build time is newer than this driver accepts
    /// (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`), and no NVRTC could be loaded at run time to
    /// compile the kernel's source instead.
    #[error("the PTX embedded at build time in {module} was made by {built_by} (PTX ISA {ptx_isa}), which this driver (CUDA {}.{}) cannot load, and NVRTC is not available at run time to compile the source instead. Fix: build with an NVRTC no newer than CUDA {}.{} (put its lib/ first on LD_LIBRARY_PATH, or set GPU_RUNTIME_NVRTC=/path/to/libnvrtc.so.{} when building), or embed a cubin as well (`embed = [\"sm_XY\", ...]`), or make NVRTC available at run time, or update the driver", .driver.0, .driver.1, .driver.0, .driver.1, .driver.0)]
    EmbeddedPtxTooNew {
        /// The module's name (its kernel or source file).
        module: String,
        /// Who made the PTX, from its header, e.g. `NVRTC of CUDA 13.1 (V13.1.80)`.
        built_by: String,
        /// The PTX ISA version of the image (its `.version`), e.g. `9.1`.
        ptx_isa: String,
        /// The driver's CUDA version.
        driver: (u32, u32),
    },
    /// A CUDA driver call failed. When the code is one of the sticky ones of a kernel that
    /// faulted ([`Error::is_launch_failure`]), the message also says that the context is now
    /// unusable and how to recover.
    #[error("{call} failed: {name} ({code}): {description}{}", sticky_note(*.code))]
    Driver {
        /// The driver function that failed, e.g. `cuMemAlloc`.
        call: &'static str,
        /// The numeric `CUresult`.
        code: u32,
        /// The symbolic name, e.g. `CUDA_ERROR_OUT_OF_MEMORY`.
        name: String,
        /// The driver's description of the error.
        description: String,
    },
    /// CUDA C source failed to compile.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// NVRTC itself failed (not a compile error in the source).
    #[error("NVRTC: {call} failed: {message}")]
    Nvrtc {
        /// The NVRTC function that failed.
        call: &'static str,
        /// NVRTC's message.
        message: String,
    },
    /// A launch configuration that the device or kernel cannot run; nothing was launched.
    #[error(transparent)]
    InvalidLaunch(#[from] LaunchConfigError),
    /// A copy or memset whose sizes, extents or alignment do not fit; nothing was copied.
    #[error(transparent)]
    Copy(#[from] CopyError),
    /// An allocation refused before the driver was asked (a size that overflows, more
    /// managed memory than is free, an empty buffer shared by IPC); nothing was allocated.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A `gpuarray::DeviceArray` shape, axis or slice that does not fit the operation.
    #[error(transparent)]
    Shape(#[from] ArrayShapeError),
    /// A CUDA array, texture or surface that the driver would refuse; nothing was created.
    #[error(transparent)]
    Texture(#[from] TextureError),
    /// Flags or a setting of a context, stream or event that the driver would refuse;
    /// nothing was created.
    #[error(transparent)]
    Flags(#[from] FlagsError),
    /// A stream handle or state at the border with another library (cudarc) that stream
    /// ordering cannot keep its promise on; nothing was queued that can run.
    #[error(transparent)]
    Border(#[from] BorderError),
    /// A question the occupancy calculator (`tools::DeviceData`) has no figures for.
    #[error(transparent)]
    Occupancy(#[from] OccupancyError),
    /// A host array whose elements are contiguous in neither C (row-major) nor Fortran
    /// (column-major) order.
    #[error("the host array for {what} is contiguous in neither C nor Fortran order; pass `array.as_standard_layout()` (or a slice) instead")]
    NotContiguous {
        /// Which argument or operation.
        what: &'static str,
    },
    /// Device memory or a kernel from one context used in another. (A kernel may use a buffer
    /// of another device's context once its own context was given peer access to it.)
    #[error("{what} belongs to a different CUDA context than the kernel or buffer it is used with ; use each context's own streams and kernels, copy between contexts with `memcpy_peer`, and let a kernel use another device's memory by giving its context access first (`Context::enable_peer_access`)")]
    WrongContext {
        /// What was passed.
        what: &'static str,
    },
    /// Two `#include`s of one name reach two different header files, among the headers a
    /// `#[kernel]` source read from disk under `GPU_RUNTIME_SOURCE_DIR`: NVRTC is given them in
    /// memory and finds them by name alone. (At build time the same is a compile error.)
    #[error("{module}: two different headers are included as `{name}`: `{first}` and `{second}`; NVRTC is given the headers in memory and finds them by the name in the `#include` alone, so one name must mean one file: rename one, or include it by a longer path")]
    IncludeNameClash {
        /// The source's name, e.g. `binary.cu`.
        module: String,
        /// The name both `#include`s give.
        name: String,
        /// The file the first one reaches.
        first: String,
        /// The file another one reaches.
        second: String,
    },
    /// A kernel name that the compiled module does not contain.
    #[error("the compiled module has no kernel named `{name}`")]
    KernelNotFound {
        /// The name asked for.
        name: String,
    },
    /// A device address was asked of page-locked memory that is not mapped into the device.
    #[error("this page-locked memory is not mapped into the device's address space: allocate it with HostAllocFlags::DEVICE_MAP (or register it with HostRegisterFlags::DEVICE_MAP) to pass it to kernels")]
    NotMapped,
    /// A `__constant__`/`__device__` variable that the loaded module does not contain.
    #[error("the compiled module has no device variable named `{name}` (a variable the kernels never use may be optimised away; declare it `extern` or use it)")]
    GlobalNotFound {
        /// The name asked for.
        name: String,
    },
    /// A `__constant__`/`__device__` array whose bound the `#[kernel]` macro could not work out
    /// from the source, so that its accessor has no type: the accessor returns this, and is
    /// deprecated so that its use warns at build time.
    #[error("invalid argument to globals::{name}: `{name}[{bound}]` ({location}) has a bound the macro cannot work out from the source; define it there (`#define`, `constexpr int`) or write a number, to get a typed accessor")]
    GlobalBoundUnknown {
        /// The variable.
        name: &'static str,
        /// Its bound, as the source writes it.
        bound: &'static str,
        /// Where it is declared, e.g. `line 4` or `` `kernels.cu` line 4 ``.
        location: &'static str,
    },
    /// A device chosen by ordinal that does not exist, or a bad `CUDA_DEVICE` setting.
    #[error("{0}")]
    InvalidDevice(String),
    /// A Rust type whose layout differs from the C type it stands for.
    #[error("the Rust type `{rust_type}` does not have the layout of the C type `{c_type}`: {detail}")]
    LayoutMismatch {
        /// The Rust type.
        rust_type: &'static str,
        /// The C type, as named in the source.
        c_type: String,
        /// What differs, with both values.
        detail: String,
    },
    /// No device linker could be loaded: nvJitLink (`libnvJitLink.so.13`) is missing and no
    /// CUDA driver is available for its JIT linker.
    #[error("no device linker found: libnvJitLink.so.13 could not be loaded from {searched} and no CUDA driver is available for its JIT linker; install the CUDA toolkit or `pip install nvidia-nvjitlink` and put its lib/ directory on LD_LIBRARY_PATH")]
    LinkerNotFound {
        /// Where nvJitLink was looked for.
        searched: String,
    },
    /// A device library named in `add_stdlib` that is not in any directory searched.
    #[error("the device library `lib{name}.a` was not found in {searched}; set CUDA_PATH to a CUDA toolkit, or `pip install nvidia-cuda-runtime` and put its lib/ directory on LD_LIBRARY_PATH")]
    LibraryNotFound {
        /// The library, as passed to `add_stdlib` (e.g. `cudadevrt`).
        name: String,
        /// The directories searched, comma-separated.
        searched: String,
    },
    /// The device linker failed, e.g. on an undefined symbol.
    #[error("linking the device code failed ({linker}: {call}): {log}")]
    Link {
        /// `nvJitLink` or `the driver's JIT linker`.
        linker: &'static str,
        /// The call that failed.
        call: &'static str,
        /// The linker's error log.
        log: String,
    },
    /// An external compiler (`nvcc`) that could not be found or run.
    #[error("the CUDA compiler `{compiler}` could not be run: {reason}")]
    CompilerNotFound {
        /// The compiler asked for.
        compiler: String,
        /// Why it could not be run.
        reason: String,
    },
    /// A compile option that cannot be used as given; nothing was compiled.
    #[error("invalid compile option {option}: {detail}")]
    InvalidCompileOption {
        /// The option, e.g. `arch`.
        option: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// The driver refused a module image (bad PTX, cubin for another GPU, ...).
    #[error("the CUDA driver could not load {what}: {name} ({code}){}", if log.is_empty() { String::new() } else { format!("; JIT log:\n{log}") })]
    ModuleLoad {
        /// What was being loaded.
        what: String,
        /// The numeric `CUresult`.
        code: u32,
        /// Its symbolic name.
        name: String,
        /// The JIT compiler's error log, if it wrote one.
        log: String,
    },
    /// A file (or standard output) that could not be read, written or created. The operating
    /// system's error is kept as the source, so that its [`kind`](std::io::Error::kind) can be
    /// matched (e.g. `NotFound`, `PermissionDenied`).
    #[error("could not {action} {path}: {source}")]
    Io {
        /// What was being done, e.g. `read` or `create the build directory`; the message reads
        /// "could not {action} {path}".
        action: &'static str,
        /// The file or directory (or `standard output`).
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Kernel arguments, or declared argument types, that do not match the kernel; nothing was
    /// launched.
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// A PyCUDA argument format string (`"PPfi"`, for
    /// [`Function::prepare_format`](crate::driver::Function::prepare_format)) that cannot be read;
    /// nothing was prepared.
    #[error("argument format {format:?}, at byte {position}: {detail}")]
    ArgumentFormat {
        /// The format string.
        format: String,
        /// The byte offset of the character that could not be read.
        position: usize,
        /// That character; `None` when the format ended where one was expected.
        character: Option<char>,
        /// What is wrong with it, and what to write instead.
        detail: String,
    },
    /// A field name given to `launch::StructType::with_fields` that is not a C field name (a
    /// field, or a member path such as `a.b[2]`); nothing was prepared.
    #[error("invalid argument to StructType::with_fields: `{field}` is not a C field name")]
    InvalidFieldName {
        /// The name given.
        field: String,
    },
    /// A future (`HostCopy`, `StagedCall`) polled again after it returned `Ready`, which the
    /// `Future` contract leaves to the implementation: this one refuses instead of panicking.
    #[error("invalid argument to {future}::poll: polled again after it completed")]
    PolledAfterCompletion {
        /// The future's type, e.g. `HostCopy`.
        future: &'static str,
    },
    /// A state this crate's own code should never reach (a broken invariant, not a mistake of
    /// the caller); returned instead of a panic. Please report it.
    #[error("internal error in {operation}: {broken}; please report this as a bug of gpu-runtime")]
    Internal {
        /// Where, e.g. `Staging::finish_future`.
        operation: &'static str,
        /// The invariant that did not hold.
        broken: &'static str,
    },
    /// A call refused because a kernel faulted earlier in this process (an illegal address, a
    /// trap, an assert), in this context or any other: CUDA keeps every context of the process
    /// failing after that, on every device, so the call was refused before reaching the driver.
    /// The `first_*` fields are the error that first reported the fault, and `device` is where.
    #[error("every CUDA context of this process is unusable since {first_call} on device {device} failed with {first_name} ({first_code}): {first_description}; {RECOVERY}")]
    ContextPoisoned {
        /// The ordinal of the device whose context first reported the fault.
        device: usize,
        /// The driver call that first reported the fault, e.g. `cuCtxSynchronize`.
        first_call: &'static str,
        /// The numeric `CUresult` it returned.
        first_code: u32,
        /// Its symbolic name, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
        first_name: String,
        /// The driver's description of it.
        first_description: String,
    },
    /// A buffer argument shorter than its `#[len = …]` attribute requires; nothing was launched.
    #[error("kernel `{kernel}`: argument `{arg}` holds {len} elements, but `#[len = {expr}]` requires at least {required}")]
    ArgumentTooShort {
        /// The kernel's name.
        kernel: String,
        /// The argument's name in the Rust signature.
        arg: &'static str,
        /// The elements it holds.
        len: usize,
        /// The length expression as written, e.g. `width * height`.
        expr: &'static str,
        /// What the expression evaluated to (saturated to the `i64` range).
        required: i64,
    },
    /// A graph node that cannot be added or updated as asked (a hazard between nodes, a node
    /// of another graph, a memset that does not fit); nothing was added or changed.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// A stream capture that failed in the driver: the capture was ended and the partial graph
    /// destroyed, so the capture cannot go on; the rest of the context is unaffected.
    #[error(
        "the graph capture failed and was ended: {call} failed with {name} ({code}); start a new capture"
    )]
    CaptureFailed {
        /// The driver call that failed, e.g. `cuLaunchKernel`.
        call: &'static str,
        /// Its symbolic name, e.g. `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`.
        name: String,
        /// The numeric `CUresult`.
        code: u32,
    },
    /// Something this device, driver or build cannot do.
    #[error("{what} needs {needs}")]
    Unsupported {
        /// What was asked for, e.g. `a graph capture`.
        what: &'static str,
        /// What it needs, with what there is, e.g. `CUDA 12.3 or later (the driver is 12.0)`.
        needs: String,
    },
    /// A cuBLAS call failed (the `cublas` feature, `driver::cudarc_interop`): `code` is its
    /// `cublasStatus_t`.
    #[error("cuBLAS: {call} failed (cublasStatus_t {code})")]
    Cublas {
        /// The cuBLAS function that failed, e.g. `cublasGemm`.
        call: &'static str,
        /// The numeric `cublasStatus_t`.
        code: i32,
    },
    /// A GEMM whose matrices do not fit their buffers (the `cublas` feature); nothing was
    /// computed.
    #[cfg(feature = "cublas")]
    #[error(transparent)]
    Gemm(#[from] GemmError),
    /// An error of a layer above this one, which [`Error`] cannot name (a lower layer cannot
    /// import a higher one): cuRAND's `gpuarray::CurandError` and NCCL's `nccl::NcclError`, put
    /// here by `?`. Get it
    /// back with [`Error::downcast_ref`].
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// A DLPack tensor that cannot be imported or exported as asked (the `dlpack` feature);
    /// nothing was imported, and an export that fails gives the buffer back by dropping it.
    #[cfg(feature = "dlpack")]
    #[error(transparent)]
    Dlpack(#[from] DlpackError),
}

/// How to get out of a context broken by a kernel fault; shared by both messages that report one.
const RECOVERY: &str = "CUDA fails every later call of this process the same way, on every device and \
in new contexts too: restart the process; to survive such faults, run risky kernels in a child process";

fn sticky_note(code: u32) -> String {
    if is_sticky(code) {
        format!("; the kernel fault made this process's CUDA contexts unusable: {RECOVERY}")
    } else {
        String::new()
    }
}

/// The codes after which CUDA keeps the context failing ("sticky" errors of a faulting kernel).
pub(crate) fn is_sticky(code: u32) -> bool {
    use CUresult::*;
    [
        CUDA_ERROR_LAUNCH_FAILED,
        CUDA_ERROR_ILLEGAL_ADDRESS,
        CUDA_ERROR_LAUNCH_TIMEOUT,
        CUDA_ERROR_ILLEGAL_INSTRUCTION,
        CUDA_ERROR_MISALIGNED_ADDRESS,
        CUDA_ERROR_INVALID_ADDRESS_SPACE,
        CUDA_ERROR_INVALID_PC,
        CUDA_ERROR_HARDWARE_STACK_ERROR,
        CUDA_ERROR_ASSERT,
    ]
    .iter()
    .any(|c| *c as u32 == code)
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Error {
    /// The error of a higher layer held by [`Error::Other`], if it is an `E`: e.g.
    /// `e.downcast_ref::<gpu_runtime::gpuarray::CurandError>()`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            Error::Other(e) => e.downcast_ref::<E>(),
            _ => None,
        }
    }

    /// True for `CUDA_ERROR_OUT_OF_MEMORY` (PyCUDA's `MemoryError`).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::Driver { code, .. } if *code == CUresult::CUDA_ERROR_OUT_OF_MEMORY as u32)
    }

    /// True for errors raised by a kernel while it ran (PyCUDA's `LaunchError`): an illegal
    /// address, a trap, an assert, a timeout; and for [`Error::ContextPoisoned`], the refusal of
    /// every later call in that context. See [`Error::ContextPoisoned`] for how to recover.
    pub fn is_launch_failure(&self) -> bool {
        match self {
            Error::Driver { code, .. } => is_sticky(*code),
            Error::ContextPoisoned { .. } => true,
            _ => false,
        }
    }
}

/// Why a DLPack tensor was refused (the `dlpack` feature): each variant names the field of the
/// tensor that does not fit, and what was expected.
#[cfg(feature = "dlpack")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DlpackError {
    /// The tensor is not in CUDA device memory (`kDLCUDA`): host, managed or another vendor's
    /// memory is not imported.
    #[error("the DLPack tensor is on device type {device_type} (DLDeviceType), but only CUDA device memory (kDLCUDA = 2) is imported")]
    DeviceType {
        /// The tensor's `device.device_type`.
        device_type: u32,
    },
    /// The tensor is on another CUDA device than the context that would use it.
    #[error("the DLPack tensor is on CUDA device {device_id}, but the context that would use it is on device {expected}; import it with a stream of a context of device {device_id}")]
    Device {
        /// The tensor's `device.device_id`.
        device_id: i32,
        /// The ordinal of the context's device.
        expected: i32,
    },
    /// The tensor's element type is not the Rust type it is imported as.
    #[error("the DLPack tensor holds elements of type code {code}, {bits} bits, {lanes} lane(s), but is imported as `{rust_type}` (code {expected_code}, {expected_bits} bits, 1 lane)")]
    Dtype {
        /// The tensor's `dtype.code`.
        code: u8,
        /// The tensor's `dtype.bits`.
        bits: u8,
        /// The tensor's `dtype.lanes`.
        lanes: u16,
        /// The Rust element type asked for.
        rust_type: &'static str,
        /// The DLPack code of `rust_type`.
        expected_code: u8,
        /// The DLPack bits of `rust_type`.
        expected_bits: u8,
    },
    /// The tensor's elements do not lie one after another in C or Fortran order, which a
    /// contiguous buffer needs (its gaps may be someone else's data).
    #[error("the DLPack tensor of shape {shape:?} has strides {strides:?} (in elements), contiguous in neither C nor Fortran order; make it contiguous before exporting it")]
    Strides {
        /// The tensor's shape.
        shape: Vec<i64>,
        /// The tensor's strides in elements.
        strides: Vec<i64>,
    },
    /// The tensor's first element (`data + byte_offset`) is not aligned for the element type.
    #[error("the DLPack tensor's first element is at {address:#x}, which is not a multiple of {align}, the alignment of `{rust_type}`")]
    Misaligned {
        /// `data + byte_offset`.
        address: u64,
        /// The alignment the element type needs.
        align: usize,
        /// The Rust element type.
        rust_type: &'static str,
    },
    /// The tensor is flagged `READ_ONLY` but was imported for writing.
    #[error("the DLPack tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY), but was imported for writing; import it read-only (DlpackTensor)")]
    ReadOnly,
    /// A safe import was given a tensor this crate did not export, whose producer's pending
    /// work and lifetime it cannot know.
    #[error("the DLPack tensor was not exported by gpu-runtime, so its producer's pending work is unknown here; import it with the unsafe `from_foreign`, naming the producer's stream")]
    NotExportedHere,
    /// An export's consumer stream is `CU_STREAM_PER_THREAD`, which names the default stream
    /// of whichever thread uses the handle: the end of the export (the tensor's deleter, or
    /// the end of a lend), which may run on another thread, could not name the consumer's.
    #[error("the consumer stream of a DLPack export is CU_STREAM_PER_THREAD, which names another stream on each thread, so the end of the export (its deleter, maybe on another thread) could not wait for the consumer's work; name the stream itself: a stream of gpu-runtime, a cudarc stream, or another handle")]
    PerThreadConsumer,
    /// The tensor's description is malformed (a negative or overflowing shape, a null data
    /// pointer with elements, an unsupported version), or cannot be described in DLPack.
    #[error("invalid DLPack tensor: {detail}")]
    Invalid {
        /// What is wrong.
        detail: String,
    },
}

/// Why a graph node was refused (`launch::GraphBuilder`, `GraphExec::update_node`), with the
/// node indices and values involved. It lives here, not in `launch`, because [`Error`] wraps
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

/// A launch configuration rejected before the launch, with the limit it broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchConfigError {
    /// A grid or block dimension below 1.
    #[error("invalid launch: {which} is {value}, but every grid and block dimension must be at least 1")]
    ZeroDimension {
        /// `grid.x`, `block.z`, ...
        which: &'static str,
        /// The value given.
        value: i64,
    },
    /// A block dimension above the device's maximum for that axis.
    #[error("invalid launch: {which} is {value}, but this device allows at most {limit} (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{axis})")]
    BlockDimTooLarge {
        /// `block.x`, `block.y` or `block.z`.
        which: &'static str,
        /// `X`, `Y` or `Z`.
        axis: &'static str,
        /// The value given.
        value: i64,
        /// The device's maximum.
        limit: u32,
    },
    /// A grid dimension above the device's maximum for that axis.
    #[error("invalid launch: {which} is {value}, but this device allows at most {limit} (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{axis})")]
    GridDimTooLarge {
        /// `grid.x`, `grid.y` or `grid.z`.
        which: &'static str,
        /// `X`, `Y` or `Z`.
        axis: &'static str,
        /// The value given.
        value: i64,
        /// The device's maximum.
        limit: u32,
    },
    /// More threads per block than the device, or this compiled kernel, can run.
    #[error(
        "invalid launch: a block of {threads} threads is more than {limit}, the most {by} can run per block"
    )]
    TooManyThreads {
        /// `block.x * block.y * block.z`.
        threads: u64,
        /// The maximum.
        limit: u32,
        /// "this device" or "this kernel (limited by its registers)".
        by: &'static str,
    },
    /// More dynamic shared memory than a block may have.
    #[error("invalid launch: {requested} bytes of dynamic shared memory plus {static_bytes} bytes of static shared memory is more than {limit} bytes, the most a block may use on this device")]
    SharedMemoryTooLarge {
        /// Dynamic bytes asked for.
        requested: u64,
        /// The kernel's static shared memory.
        static_bytes: u32,
        /// The device's per-block maximum.
        limit: u32,
    },
    /// A grid extent that is not a multiple of the cluster's extent along that axis.
    #[error("invalid launch: {which} is {grid}, which is not a multiple of the cluster's {cluster} along {axis}; every cluster must be whole")]
    ClusterNotDivisible {
        /// `grid.x`, `grid.y` or `grid.z`.
        which: &'static str,
        /// `X`, `Y` or `Z`.
        axis: &'static str,
        /// The grid extent.
        grid: u32,
        /// The cluster extent.
        cluster: u32,
    },
    /// A cluster of more blocks than this kernel may have.
    #[error("invalid launch: a cluster of {size} blocks is more than {limit}, the most {why}")]
    ClusterTooLarge {
        /// Blocks per cluster.
        size: u64,
        /// The maximum.
        limit: u32,
        /// Which limit, and how to raise it where it can be.
        why: &'static str,
    },
    /// Cluster dimensions that differ from the kernel's `__cluster_dims__`.
    #[error("invalid launch: cluster dimensions {requested:?} differ from {compiled:?}, the kernel's `__cluster_dims__` (CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_*); launch it with those, or remove `__cluster_dims__` from the source")]
    ClusterConflict {
        /// What the launch asked for.
        requested: [u32; 3],
        /// What the kernel was compiled with.
        compiled: [u32; 3],
    },
    /// No cluster of this shape can be resident on the device (cuOccupancyMaxActiveClusters
    /// is 0), e.g. because its blocks together need more shared memory than a GPC has.
    #[error("invalid launch: no cluster of {cluster:?} blocks of {threads} threads with {shared_mem_bytes} bytes of dynamic shared memory can be resident on this device (cuOccupancyMaxActiveClusters is 0); use smaller clusters, blocks or shared memory")]
    ClusterNotResident {
        /// The cluster's extents in blocks.
        cluster: [u32; 3],
        /// Threads per block.
        threads: u64,
        /// Dynamic shared memory per block.
        shared_mem_bytes: u32,
    },
    /// A cooperative launch whose blocks cannot all be resident at once, so a grid-wide sync
    /// would never return.
    #[error("invalid cooperative launch: {units} {unit} cannot all be resident at once; this kernel fits at most {limit} with this block size and shared memory ({how})")]
    NotCoResident {
        /// Blocks (or clusters) in the grid.
        units: u64,
        /// `blocks` or `clusters`.
        unit: &'static str,
        /// The most that can be resident at once.
        limit: u64,
        /// How the limit was computed, e.g. `2 blocks per SM x 132 SMs`.
        how: String,
    },
    /// A thread-block cluster on a device older than compute capability 9.0.
    #[error("invalid launch: thread-block clusters need compute capability 9.0 or later, and this device is {}.{}", .compute_capability.0, .compute_capability.1)]
    ClustersUnsupported {
        /// The device's compute capability.
        compute_capability: (u32, u32),
    },
    /// A cooperative launch on a device without CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH.
    #[error("invalid launch: this device does not support cooperative launches (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)")]
    CooperativeUnsupported,
    /// A programmatic dependent launch on a device older than compute capability 9.0.
    #[error("invalid launch: programmatic dependent launches need compute capability 9.0 or later, and this device is {}.{}", .compute_capability.0, .compute_capability.1)]
    DependentLaunchUnsupported {
        /// The device's compute capability.
        compute_capability: (u32, u32),
    },
}

/// CUDA C that failed to compile, with the compiler's log and the source lines it points at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct CompileError {
    /// The compiler and its version, e.g. `NVRTC 13.5`.
    pub compiler: String,
    /// The options the compiler was called with.
    pub options: Vec<String>,
    /// The name the source was compiled under (appears in the log, e.g. `axpy.cu(3): error`).
    pub source_name: String,
    /// The compiler's log, unchanged.
    pub log: String,
    /// The source, kept to show the lines the log refers to.
    pub source_code: String,
}

impl CompileError {
    /// Line numbers (1-based) that the log reports errors or warnings on.
    pub fn reported_lines(&self) -> Vec<usize> {
        // The macro's build-time check reads logs with the same parser, so the lines it
        // reports at build time are the ones shown here at run time.
        gpu_cdecl::nvrtc_log::reported_lines(&self.log, &self.source_name)
    }

    /// The source with line numbers, two lines either side of each reported line.
    pub fn source_excerpt(&self) -> String {
        let src: Vec<&str> = self.source_code.lines().collect();
        let mut shown = vec![false; src.len()];
        for line in self.reported_lines() {
            let lo = line.saturating_sub(3);
            let hi = (line + 2).min(src.len());
            for s in shown.iter_mut().take(hi).skip(lo) {
                *s = true;
            }
        }
        let reported = self.reported_lines();
        let mut out = String::new();
        let mut last = None;
        for (i, text) in src.iter().enumerate() {
            if !shown[i] {
                continue;
            }
            if last.is_some_and(|l: usize| l + 1 != i) {
                out.push_str("      ...\n");
            }
            let marker = if reported.contains(&(i + 1)) { '>' } else { ' ' };
            out.push_str(&format!("{marker}{:>4} | {text}\n", i + 1));
            last = Some(i);
        }
        out
    }

    fn render(&self) -> String {
        let mut s = format!(
            "CUDA C compilation of `{}` failed ({} with options {:?}):\n{}",
            self.source_name,
            self.compiler,
            self.options,
            self.log.trim_end()
        );
        let excerpt = self.source_excerpt();
        if !excerpt.is_empty() {
            s.push_str("\nsource:\n");
            s.push_str(excerpt.trim_end());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CompileError {
        CompileError {
            compiler: "NVRTC 13.0".into(),
            options: vec!["--gpu-architecture=sm_90".into()],
            source_name: "k.cu".into(),
            log: "k.cu(4): error: identifier \"q\" is undefined\n\n1 error detected\n".into(),
            source_code: "a\nb\nc\nd q\ne\nf\ng\nh\n".into(),
        }
    }

    #[test]
    fn compile_error_points_at_reported_lines() {
        let e = sample();
        assert_eq!(e.reported_lines(), vec![4]);
        let excerpt = e.source_excerpt();
        assert!(excerpt.contains(">   4 | d q"), "{excerpt}");
        assert!(excerpt.contains("    2 | b"));
        assert!(!excerpt.contains("    1 | a"));
        assert!(!excerpt.contains("| h"));
        let msg = e.to_string();
        assert!(msg.contains("identifier \"q\" is undefined"));
        assert!(msg.contains("sm_90"));
    }

    #[test]
    fn debug_is_the_user_sentence() {
        let e = Error::DriverNotFound;
        assert_eq!(format!("{e:?}"), e.to_string());
    }

    #[test]
    fn driver_error_names_the_call_and_code() {
        let e = crate::driver::result::driver_error("cuMemAlloc", CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert!(e.is_out_of_memory());
        assert!(!e.is_launch_failure());
        let s = e.to_string();
        assert!(s.starts_with("cuMemAlloc failed: "), "{s}");
        assert!(s.contains("CUDA_ERROR_OUT_OF_MEMORY (2)"), "{s}");
        assert!(!s.contains("unusable"), "{s}");
    }

    #[test]
    fn a_fault_says_the_context_is_unusable_and_how_to_recover() {
        let e = Error::Driver {
            call: "cuCtxSynchronize",
            code: CUresult::CUDA_ERROR_ILLEGAL_ADDRESS as u32,
            name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
            description: "an illegal memory access was encountered".into(),
        };
        assert!(e.is_launch_failure());
        let s = e.to_string();
        assert!(s.contains("CUDA contexts unusable"), "{s}");
        assert!(s.contains("restart the process"), "{s}");
        let p = Error::ContextPoisoned {
            device: 0,
            first_call: "cuCtxSynchronize",
            first_code: 700,
            first_name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
            first_description: "an illegal memory access was encountered".into(),
        };
        assert!(p.is_launch_failure());
        let s = p.to_string();
        assert!(s.starts_with("every CUDA context of this process is unusable since cuCtxSynchronize on device 0 failed with CUDA_ERROR_ILLEGAL_ADDRESS (700)"), "{s}");
        assert!(s.contains("restart the process"), "{s}");
    }

    /// The families keep the wording of the stringly errors they replace, and `Debug` of the
    /// wrapping `Error` is still the sentence (message tests).
    #[test]
    fn family_messages_read_as_before() {
        let e = Error::from(CopyError::HostDeviceLength {
            operation: "copy_from_host",
            host: 9,
            device: 10,
        });
        assert_eq!(
            e.to_string(),
            "size mismatch in copy_from_host: the host side has 9 elements but the device buffer has 10"
        );
        assert_eq!(format!("{e:?}"), e.to_string());
        let e = Error::from(FlagsError::StreamPriority {
            priority: -6,
            highest: -5,
            lowest: 0,
        });
        assert_eq!(
            e.to_string(),
            "invalid argument to Stream::with_priority: priority -6 is outside the device's range, -5 (highest) to 0 (lowest)"
        );
        let e = Error::from(MemoryError::BytesOverflow {
            operation: "alloc",
            len: usize::MAX,
            element_bytes: 4,
        });
        assert_eq!(
            e.to_string(),
            format!(
                "size mismatch in alloc: {} elements of 4 bytes overflow usize",
                usize::MAX
            )
        );
        // A source error is kept as the source, not only as text.
        #[cfg(feature = "gpuarray")]
        kept_as_source();
    }

    #[cfg(feature = "gpuarray")]
    fn kept_as_source() {
        let shape_error = ndarray::Array2::<f32>::from_shape_vec((2, 2), vec![0.0; 3]).unwrap_err();
        let e = Error::from(ArrayShapeError::Ndarray {
            operation: "to_ndarray",
            source: shape_error.clone(),
        });
        let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<ndarray::ShapeError>());
        assert_eq!(source, Some(&shape_error));
    }

    /// Families are wrapped by value so that one pattern matches through them; their names
    /// and parser errors are boxed instead, so that an `Error` (and cuRAND's and NCCL's errors,
    /// which wrap one) stays under clippy's `result_large_err` limit of 128 bytes.
    #[test]
    fn error_stays_small() {
        let size = std::mem::size_of::<Error>();
        assert!(size <= 120, "Error is {size} bytes");
    }

    #[test]
    fn a_short_argument_names_everything() {
        let e = Error::ArgumentTooShort {
            kernel: "axpy".into(),
            arg: "x",
            len: 10,
            expr: "n",
            required: 12,
        };
        assert_eq!(
            e.to_string(),
            "kernel `axpy`: argument `x` holds 10 elements, but `#[len = n]` requires at least 12"
        );
    }
}
