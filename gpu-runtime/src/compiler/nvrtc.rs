//! Compiling CUDA C with NVRTC: to a cubin for the device's own architecture when NVRTC knows
//! it, else to PTX that the driver compiles when it loads the module.
//!
//! Kernels are found through NVRTC *name expressions*, so a kernel works whether or not the
//! source wraps it in `extern "C"`, and C++ name mangling never leaks to the user.

use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::OnceLock;

use cudarc::nvrtc::sys::{self, nvrtcResult};

use crate::error::{CompileError, Error, Result};

pub use crate::compiler::target::Target;

impl Target {
    /// The best target for a device of compute capability `cc`: a cubin for its exact
    /// architecture when this NVRTC can produce one, else PTX for the newest architecture NVRTC
    /// supports that the device can run.
    pub fn for_device(cc: (u32, u32)) -> Result<Target> {
        crate::compiler::target::choose_target(cc, &supported_archs()?)
    }
}

/// The product of a compile: a loadable image and each requested kernel's symbol name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledModule {
    /// The cubin, or the PTX text with a trailing NUL.
    pub image: Vec<u8>,
    /// What `image` holds.
    pub target: Target,
    /// For each requested kernel name, the symbol to look up in the loaded module.
    pub lowered_names: Vec<String>,
    /// NVRTC's log (warnings), empty when there were none.
    pub log: String,
}

fn nvrtc_loaded() -> Result<()> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: is_culib_present only tries to dlopen the library by name.
    if *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() }) {
        Ok(())
    } else {
        Err(Error::NvrtcNotFound)
    }
}

fn nvrtc_check(call: &'static str, r: nvrtcResult) -> Result<()> {
    if r == nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: nvrtcGetErrorString returns a static string for any result code.
    let message = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(r)) }
        .to_string_lossy()
        .into_owned();
    Err(Error::Nvrtc { call, message })
}

/// NVRTC's version as `(major, minor)`.
pub fn nvrtc_version() -> Result<(u32, u32)> {
    nvrtc_loaded()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: valid out-pointers.
    nvrtc_check("nvrtcVersion", unsafe {
        sys::nvrtcVersion(&mut major, &mut minor)
    })?;
    Ok((major as u32, minor as u32))
}

/// The `sm_XY` architectures this NVRTC can compile for, as `XY` numbers (e.g. `90`).
pub fn supported_archs() -> Result<Vec<u32>> {
    nvrtc_loaded()?;
    let mut n: c_int = 0;
    // SAFETY: valid out-pointer.
    nvrtc_check("nvrtcGetNumSupportedArchs", unsafe {
        sys::nvrtcGetNumSupportedArchs(&mut n)
    })?;
    let mut archs = vec![0 as c_int; n.max(0) as usize];
    // SAFETY: archs has room for the n entries NVRTC reported.
    nvrtc_check("nvrtcGetSupportedArchs", unsafe {
        sys::nvrtcGetSupportedArchs(archs.as_mut_ptr())
    })?;
    Ok(archs.into_iter().map(|a| a as u32).collect())
}

/// Owns an `nvrtcProgram` so that every exit path destroys it.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
        unsafe {
            sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

fn cstring(what: &'static str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Nvrtc {
        call: what,
        message: format!("{what} contains a NUL byte"),
    })
}

/// Compiles `source` for `target` with NVRTC and resolves the symbol of each kernel in
/// `kernels`. `source_name` is the file name the log reports lines against (e.g. `axpy.cu`).
///
/// Every compile sees the CUDA headers (a toolkit's from `GPU_RUNTIME_CUDA_INCLUDE`,
/// `$CUDA_PATH/include`, `$CUDA_HOME/include` or `/usr/local/cuda/include`, else the copy
/// NVRTC carries, installed once under `~/.cache/gpu-runtime`) and built-in `stdio.h`/`cstdio`,
/// `stdint.h`/`cstdint`, `stddef.h`/`cstddef` and `math.h`/`cmath`. A header found nowhere is
/// a [`CompileError`] whose log names it and the directories searched. The
/// [`NVRTC_PRELUDE`](crate::compiler::NVRTC_PRELUDE) (`uint`, `ushort`, ... as nvcc's host headers declare
/// them) is included before the source; [`SourceModule::prelude`](crate::SourceModule::prelude)
/// compiles without it.
///
/// Needs NVRTC but no GPU.
pub fn compile(
    source: &str,
    source_name: &str,
    kernels: &[&str],
    options: &[&str],
    target: Target,
) -> Result<CompiledModule> {
    compile_with(source, source_name, kernels, options, target, true, &[])
}

/// [`compile`], with the prelude included before the source or not, and `extra_headers` given
/// to NVRTC in memory (`(name, contents)`: found by an `#include` of that name, before any
/// directory is searched) besides the built-in ones.
pub(crate) fn compile_with(
    source: &str,
    source_name: &str,
    kernels: &[&str],
    options: &[&str],
    target: Target,
    prelude: bool,
    extra_headers: &[(&str, &[u8])],
) -> Result<CompiledModule> {
    nvrtc_loaded()?;
    // Host code beside the kernels (launchers, `main`, host globals) is left out, in the source
    // and in the headers it includes from its own directories, as nvcc's device compile leaves
    // it to the host compiler (`gpu_cuda_source::device_parts`).
    let owned_options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    let given_text: Vec<(&str, std::borrow::Cow<'_, str>)> = extra_headers
        .iter()
        .map(|(n, t)| (*n, String::from_utf8_lossy(t)))
        .collect();
    let given: Vec<(&str, &str)> = given_text.iter().map(|(n, t)| (*n, t.as_ref())).collect();
    let parts = gpu_cuda_source::device_parts_with(source, &owned_options, &given);
    let c_source = cstring("the CUDA source", parts.source.as_deref().unwrap_or(source))?;
    let c_name = cstring("the source name", source_name)?;
    let headers = crate::compiler::headers::headers(nvrtc_version()?.0 as i32);
    // The source's own headers first (as given, or their device parts where they hold host
    // code), then the device parts of headers found through `-I`, then the built-in ones (which
    // a source's headers never name: the scan that finds them skips the built-in names).
    let part_of = |name: &str| {
        parts
            .headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_bytes())
    };
    let own = extra_headers
        .iter()
        .map(|(n, t)| (*n, part_of(n).unwrap_or(t)))
        .chain(
            parts
                .headers
                .iter()
                .filter(|(n, _)| !extra_headers.iter().any(|(g, _)| g == n))
                .map(|(n, t)| (n.as_str(), t.as_bytes())),
        );
    let mut extra_names = Vec::with_capacity(extra_headers.len() + parts.headers.len());
    let mut extra_texts = Vec::with_capacity(extra_headers.len() + parts.headers.len());
    for (name, contents) in own {
        extra_names.push(cstring("a header's name", name)?);
        extra_texts.push(CString::new(contents).map_err(|_| Error::Nvrtc {
            call: "nvrtcCreateProgram",
            message: format!("the header `{name}` contains a NUL byte"),
        })?);
    }
    let mut name_ptrs: Vec<*const c_char> = extra_names.iter().map(|n| n.as_ptr()).collect();
    let mut text_ptrs: Vec<*const c_char> = extra_texts.iter().map(|t| t.as_ptr()).collect();
    // SAFETY: the built-in headers' arrays hold `count()` pointers each, to NUL-terminated
    // strings alive for the whole process.
    unsafe {
        name_ptrs.extend_from_slice(std::slice::from_raw_parts(headers.names(), headers.count()));
        text_ptrs.extend_from_slice(std::slice::from_raw_parts(headers.contents(), headers.count()));
    }
    let mut raw = std::ptr::null_mut();
    // SAFETY: valid out-pointer and NUL-terminated strings; `name_ptrs` and `text_ptrs` hold as
    // many pointers each, to NUL-terminated strings that outlive the call (the built-in ones
    // live for the whole process, the others until this function returns).
    nvrtc_check("nvrtcCreateProgram", unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            c_source.as_ptr(),
            c_name.as_ptr(),
            name_ptrs.len() as c_int,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    })?;
    let program = Program(raw);

    let c_kernels = kernels
        .iter()
        .map(|k| cstring("a kernel name", k))
        .collect::<Result<Vec<_>>>()?;
    for k in &c_kernels {
        // SAFETY: the program is live and k is NUL-terminated.
        nvrtc_check("nvrtcAddNameExpression", unsafe {
            sys::nvrtcAddNameExpression(program.0, k.as_ptr())
        })?;
    }

    let mut all_options: Vec<String> = vec![target.arch_option()];
    if prelude {
        all_options.push(crate::compiler::headers::prelude_option());
    }
    all_options.extend(options.iter().map(|o| o.to_string()));
    all_options.extend(headers.options.iter().cloned());
    let c_options = all_options
        .iter()
        .map(|o| cstring("a compiler option", o))
        .collect::<Result<Vec<_>>>()?;
    let option_ptrs: Vec<*const c_char> = c_options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: option_ptrs holds option_ptrs.len() NUL-terminated strings that outlive the call.
    let status =
        unsafe { sys::nvrtcCompileProgram(program.0, option_ptrs.len() as c_int, option_ptrs.as_ptr()) };
    // A message about a line of a built-in header says it is gpu-runtime's.
    let mut log = gpu_cuda_source::nvrtc_log::mark_builtin_headers(&program_log(&program)?).into_owned();
    if status == nvrtcResult::NVRTC_ERROR_COMPILATION {
        if let Some(note) = headers.missing_note(&log) {
            log = format!("{log}\n{note}");
        }
        if let Some(note) = crate::compiler::headers::prelude_note(&log).filter(|_| prelude) {
            log = format!("{log}\n{note}");
        }
        let (major, minor) = nvrtc_version()?;
        return Err(Error::Compile(CompileError {
            compiler: format!("NVRTC {major}.{minor}"),
            options: all_options,
            source_name: source_name.to_owned(),
            log,
            source_code: source.to_owned(),
        }));
    }
    nvrtc_check("nvrtcCompileProgram", status)?;

    let mut lowered_names = Vec::with_capacity(kernels.len());
    for k in &c_kernels {
        let mut lowered: *const c_char = std::ptr::null();
        // SAFETY: the program compiled and k was added as a name expression before compiling.
        nvrtc_check("nvrtcGetLoweredName", unsafe {
            sys::nvrtcGetLoweredName(program.0, k.as_ptr(), &mut lowered)
        })?;
        // SAFETY: NVRTC returns a NUL-terminated string owned by the program, still live here.
        lowered_names.push(unsafe { CStr::from_ptr(lowered) }.to_string_lossy().into_owned());
    }

    let image = match target {
        Target::Cubin { .. } => {
            let mut size = 0;
            // SAFETY: valid out-pointer; the program compiled.
            nvrtc_check("nvrtcGetCUBINSize", unsafe {
                sys::nvrtcGetCUBINSize(program.0, &mut size)
            })?;
            let mut image = vec![0u8; size];
            // SAFETY: image has the size NVRTC reported.
            nvrtc_check("nvrtcGetCUBIN", unsafe {
                sys::nvrtcGetCUBIN(program.0, image.as_mut_ptr().cast())
            })?;
            image
        }
        Target::Ptx { .. } => {
            let mut size = 0;
            // SAFETY: valid out-pointer; the program compiled.
            nvrtc_check("nvrtcGetPTXSize", unsafe {
                sys::nvrtcGetPTXSize(program.0, &mut size)
            })?;
            // The size includes the trailing NUL, which cuModuleLoadData needs for PTX.
            let mut image = vec![0u8; size];
            // SAFETY: image has the size NVRTC reported.
            nvrtc_check("nvrtcGetPTX", unsafe {
                sys::nvrtcGetPTX(program.0, image.as_mut_ptr().cast())
            })?;
            image
        }
    };
    Ok(CompiledModule {
        image,
        target,
        lowered_names,
        log,
    })
}

fn program_log(program: &Program) -> Result<String> {
    let mut size = 0;
    // SAFETY: valid out-pointer; the program is live.
    nvrtc_check("nvrtcGetProgramLogSize", unsafe {
        sys::nvrtcGetProgramLogSize(program.0, &mut size)
    })?;
    let mut log = vec![0u8; size.max(1)];
    // SAFETY: log has the size NVRTC reported (at least one byte for the NUL).
    nvrtc_check("nvrtcGetProgramLog", unsafe {
        sys::nvrtcGetProgramLog(program.0, log.as_mut_ptr().cast())
    })?;
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    log.truncate(end);
    Ok(String::from_utf8_lossy(&log).trim_end().to_owned())
}
