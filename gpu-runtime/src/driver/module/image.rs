//! Loading an image (PTX, cubin or fatbin) into the current context with the driver's JIT
//! options, and telling which kind an image is.

use std::ffi::c_void;

use cudarc::driver::sys::{self, CUjit_option};

use crate::driver::calls::{self, Failed};
use crate::error::{Error, Result};

/// Options for the driver's JIT when loading PTX (PyCUDA's `jit_options`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JitOptions {
    /// `CU_JIT_MAX_REGISTERS`: the most registers a thread may use.
    pub max_registers: Option<u32>,
    /// `CU_JIT_OPTIMIZATION_LEVEL`, 0 to 4.
    pub optimization_level: Option<u32>,
    /// `CU_JIT_GENERATE_LINE_INFO`.
    pub generate_line_info: bool,
    /// `CU_JIT_GENERATE_DEBUG_INFO`.
    pub generate_debug_info: bool,
    /// `CU_JIT_LOG_VERBOSE`.
    pub log_verbose: bool,
    /// Room for each of the info and error logs, in bytes.
    pub log_size: u32,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            max_registers: None,
            optimization_level: None,
            generate_line_info: false,
            generate_debug_info: false,
            log_verbose: false,
            log_size: 8192,
        }
    }
}

impl JitOptions {
    /// Sets `max_registers`.
    pub fn max_registers(mut self, n: u32) -> Self {
        self.max_registers = Some(n);
        self
    }

    /// Sets `optimization_level`.
    pub fn optimization_level(mut self, level: u32) -> Self {
        self.optimization_level = Some(level);
        self
    }

    /// Sets `log_verbose`.
    pub fn log_verbose(mut self, yes: bool) -> Self {
        self.log_verbose = yes;
        self
    }
}

/// Loads an image with `cuModuleLoadDataEx`, returning the module and the JIT's info and
/// error logs. The context must be current.
pub(crate) fn load_image(
    image: &[u8],
    what: &str,
    jit: &JitOptions,
) -> Result<(sys::CUmodule, String, String)> {
    let ptx_without_nul = image_kind(image) == Kind::Ptx && image.last() != Some(&0);
    let owned;
    let image = if ptx_without_nul {
        owned = [image, &[0]].concat();
        &owned[..]
    } else {
        image
    };
    if image.is_empty() || image == [0] {
        return Err(Error::ModuleLoad {
            what: what.to_owned(),
            code: sys::CUresult::CUDA_ERROR_INVALID_IMAGE as u32,
            name: "CUDA_ERROR_INVALID_IMAGE".into(),
            log: "the image is empty".into(),
        });
    }
    if let Some(level) = jit.optimization_level.filter(|&l| l > 4) {
        return Err(Error::InvalidCompileOption {
            option: "optimization_level",
            detail: format!("{level} is not a JIT optimization level: use 0 to 4"),
        });
    }
    if image_kind(image) == Kind::Elf {
        // A cubin is machine code: no JIT step reads the options or writes a log, so it loads
        // as a hand-written loader would, without the log buffers' allocations.
        // SAFETY: a non-empty image.
        return match unsafe { calls::module_load_data(image.as_ptr().cast()) } {
            Ok(raw) => Ok((raw, String::new(), String::new())),
            Err(Failed { code: r, .. }) => Err(Error::ModuleLoad {
                what: what.to_owned(),
                code: r as u32,
                name: format!("{r:?}"),
                log: String::new(),
            }),
        };
    }
    let size = jit.log_size.max(1) as usize;
    let mut info = vec![0u8; size];
    let mut error = vec![0u8; size];
    // The driver reads each option's value from the pointer-sized slot itself.
    let mut opts: Vec<CUjit_option> = vec![
        CUjit_option::CU_JIT_INFO_LOG_BUFFER,
        CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut vals: Vec<*mut c_void> = vec![
        info.as_mut_ptr().cast(),
        size as *mut c_void,
        error.as_mut_ptr().cast(),
        size as *mut c_void,
    ];
    let mut push = |o, v: usize| {
        opts.push(o);
        vals.push(v as *mut c_void);
    };
    if let Some(n) = jit.max_registers {
        push(CUjit_option::CU_JIT_MAX_REGISTERS, n as usize);
    }
    if let Some(l) = jit.optimization_level {
        push(CUjit_option::CU_JIT_OPTIMIZATION_LEVEL, l as usize);
    }
    if jit.generate_line_info {
        push(CUjit_option::CU_JIT_GENERATE_LINE_INFO, 1);
    }
    if jit.generate_debug_info {
        push(CUjit_option::CU_JIT_GENERATE_DEBUG_INFO, 1);
    }
    if jit.log_verbose {
        push(CUjit_option::CU_JIT_LOG_VERBOSE, 1);
    }
    // SAFETY: the image is non-empty and, for PTX, NUL-terminated; opts and vals have the same
    // length and the log buffers have the sizes passed and outlive the call.
    let loaded = unsafe { calls::module_load_data_ex(image.as_ptr().cast(), &mut opts, &mut vals) };
    let text = |b: &[u8]| {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).trim_end().to_owned()
    };
    match loaded {
        Ok(raw) => Ok((raw, text(&info), text(&error))),
        Err(Failed { code: r, .. }) => Err(Error::ModuleLoad {
            what: what.to_owned(),
            code: r as u32,
            name: format!("{r:?}"),
            log: text(&error),
        }),
    }
}

/// What an image holds, from its first bytes.
#[derive(PartialEq, Eq)]
pub(super) enum Kind {
    Elf,
    Fatbin,
    Ptx,
}

pub(super) fn image_kind(image: &[u8]) -> Kind {
    if image.starts_with(b"\x7fELF") {
        Kind::Elf
    } else if image.starts_with(&0xBA55_ED50u32.to_le_bytes())
        || image.starts_with(&0x466243B1u32.to_le_bytes())
    {
        Kind::Fatbin
    } else {
        Kind::Ptx
    }
}
