//! Errors: one enum for everything that can go wrong, each variant a sentence for the user.
//!
//! The variants mirror PyCUDA's exception classes: [`Error::Driver`] is `pycuda.driver.Error`
//! (with [`Error::is_out_of_memory`] and [`Error::is_launch_failure`] standing in for
//! `MemoryError` and `LaunchError`), [`Error::Compile`] is `CompileError`, and the rest are
//! mistakes caught before the driver is asked anything.

use std::fmt;

use cudarc::driver::sys::CUresult;

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
    /// A CUDA driver call failed.
    #[error("{call} failed: {name} ({code}): {description}")]
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
    /// Host and device sizes disagree in a copy; nothing was copied.
    #[error("size mismatch in {operation}: {detail}")]
    SizeMismatch {
        /// The operation, e.g. `copy_from_host`.
        operation: &'static str,
        /// The sizes involved.
        detail: String,
    },
    /// A host array whose elements are not contiguous in C (row-major) order.
    #[error("the host array for {what} is not contiguous in C order; pass `array.as_standard_layout()` (or a slice) instead")]
    NotContiguous {
        /// Which argument or operation.
        what: &'static str,
    },
    /// Device memory or a kernel from one context used in another.
    #[error("{what} belongs to a different CUDA context than the kernel or buffer it is used with")]
    WrongContext {
        /// What was passed.
        what: &'static str,
    },
    /// A kernel name that the compiled module does not contain.
    #[error("the compiled module has no kernel named `{name}`")]
    KernelNotFound {
        /// The name asked for.
        name: String,
    },
    /// A `__constant__`/`__device__` variable that the loaded module does not contain.
    #[error("the compiled module has no device variable named `{name}` (a variable the kernels never use may be optimised away; declare it `extern` or use it)")]
    GlobalNotFound {
        /// The name asked for.
        name: String,
    },
    /// A device chosen by ordinal that does not exist, or a bad `CUDA_DEVICE` setting.
    #[error("{0}")]
    InvalidDevice(String),
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Error {
    /// Builds [`Error::Driver`] from a failed driver call.
    pub(crate) fn driver(call: &'static str, code: CUresult) -> Self {
        // The enum's variant name is the driver's symbolic name; asking the driver for its
        // description is only possible once the driver library is loaded.
        let name = format!("{code:?}");
        let description = if crate::driver::is_loaded() {
            cudarc::driver::DriverError(code)
                .error_string()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "unknown error".to_owned())
        } else {
            "the CUDA driver is not loaded".to_owned()
        };
        Error::Driver {
            call,
            code: code as u32,
            name,
            description,
        }
    }

    /// True for `CUDA_ERROR_OUT_OF_MEMORY` (PyCUDA's `MemoryError`).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::Driver { code, .. } if *code == CUresult::CUDA_ERROR_OUT_OF_MEMORY as u32)
    }

    /// True for errors raised by a kernel while it ran (PyCUDA's `LaunchError`): an illegal
    /// address, a trap, a timeout. After one of these the context is unusable: the process must
    /// create a new one (in practice, restart).
    pub fn is_launch_failure(&self) -> bool {
        use CUresult::*;
        matches!(self, Error::Driver { code, .. } if [
            CUDA_ERROR_LAUNCH_FAILED,
            CUDA_ERROR_ILLEGAL_ADDRESS,
            CUDA_ERROR_LAUNCH_TIMEOUT,
            CUDA_ERROR_ILLEGAL_INSTRUCTION,
            CUDA_ERROR_MISALIGNED_ADDRESS,
            CUDA_ERROR_HARDWARE_STACK_ERROR,
            CUDA_ERROR_ASSERT,
        ].iter().any(|c| *c as u32 == *code))
    }
}

/// Turns a `CUresult` into `Result<()>`, naming the call that produced it.
#[inline]
pub(crate) fn check(call: &'static str, code: CUresult) -> Result<()> {
    if code == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::driver(call, code))
    }
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
        let mut lines = Vec::new();
        let prefix = format!("{}(", self.source_name);
        for log_line in self.log.lines() {
            if let Some(rest) = log_line.strip_prefix(&prefix) {
                if let Some(end) = rest.find(')') {
                    if let Ok(n) = rest[..end].parse::<usize>() {
                        if !lines.contains(&n) {
                            lines.push(n);
                        }
                    }
                }
            }
        }
        lines
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
        let e = Error::driver("cuMemAlloc", CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert!(e.is_out_of_memory());
        assert!(!e.is_launch_failure());
        let s = e.to_string();
        assert!(s.starts_with("cuMemAlloc failed: "), "{s}");
        assert!(s.contains("CUDA_ERROR_OUT_OF_MEMORY (2)"), "{s}");
    }
}
