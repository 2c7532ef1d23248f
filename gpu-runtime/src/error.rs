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
//! [`OccupancyError`], [`GraphError`], [`LinAlgError`] (`Error::LinAlg`), [`BorderError`] (`Error::Border`), [`LaunchConfigError`] (`Error::InvalidLaunch`), and
//! behind their features `GemmError` and `DlpackError`. Match the variant and its fields, e.g.
//! `Err(Error::Copy(CopyError::HostDeviceLength { host, device, .. }))`; the messages are for
//! people. A family of a higher layer, which this lowest one cannot name, has its own `Result`
//! type in its layer (cuRAND's `gpuarray::CurandResult`, NCCL's `nccl::Result`), and `?` turns
//! its errors into the [`Error`] they wrap or [`Error::Other`].

use std::fmt;

use cudarc::driver::sys::CUresult;

mod argument;
mod border;
mod compile;
mod copy;
#[cfg(feature = "dlpack")]
mod dlpack;
mod flags;
#[cfg(feature = "cublas")]
mod gemm;
mod graph;
mod launch_config;
mod linalg;
mod memory;
mod occupancy;
pub(crate) mod panic;
mod shape;
mod texture;

pub use argument::{ArgHint, ArgumentError};
pub use border::BorderError;
pub use compile::CompileError;
pub use copy::CopyError;
#[cfg(feature = "dlpack")]
pub use dlpack::DlpackError;
pub use flags::FlagsError;
#[cfg(feature = "cublas")]
pub use gemm::GemmError;
pub use graph::GraphError;
pub use launch_config::LaunchConfigError;
pub use linalg::LinAlgError;
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
    /// Matrices that linear algebra (`gpuarray::det`, `solve`, `inv`, ...) refuses or cannot
    /// factor: NumPy's `LinAlgError`.
    #[error(transparent)]
    LinAlg(#[from] LinAlgError),
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
    /// A cuBLAS call failed (the `cublas` feature, `driver::cublas`): `code` is its
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

/// [`ArrayShapeError::ElementCounts`] of `operation`: `first` elements where `second` were
/// given.
#[cfg(feature = "gpuarray")]
pub(crate) fn counts_error(operation: &'static str, first: usize, second: usize) -> Error {
    ArrayShapeError::ElementCounts {
        operation,
        first,
        second,
    }
    .into()
}

/// [`counts_error`] unless `first == second`.
#[cfg(feature = "gpuarray")]
pub(crate) fn check_counts(operation: &'static str, first: usize, second: usize) -> Result<()> {
    if first == second {
        Ok(())
    } else {
        Err(counts_error(operation, first, second))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
