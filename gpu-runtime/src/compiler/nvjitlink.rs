//! nvJitLink, the device linker of CUDA 12 and later, loaded at run time: it links relocatable
//! device code (cubins, PTX, fatbins, objects, `.a` libraries) into one cubin on the CPU,
//! without a GPU or driver.

use std::ffi::{c_char, c_uint, c_void, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::error::{Error, Result};

type Handle = *mut c_void;
type CreateFn = unsafe extern "C" fn(*mut Handle, u32, *const *const c_char) -> c_uint;
type DestroyFn = unsafe extern "C" fn(*mut Handle) -> c_uint;
type AddDataFn = unsafe extern "C" fn(Handle, c_uint, *const c_void, usize, *const c_char) -> c_uint;
type CompleteFn = unsafe extern "C" fn(Handle) -> c_uint;
type SizeFn = unsafe extern "C" fn(Handle, *mut usize) -> c_uint;
type GetFn = unsafe extern "C" fn(Handle, *mut c_void) -> c_uint;
type LogFn = unsafe extern "C" fn(Handle, *mut c_char) -> c_uint;

/// The entry points, by their versioned names (the header maps `nvJitLinkCreate` to
/// `__nvJitLinkCreate_13_0`, which every 13.x library keeps).
struct Api {
    _lib: libloading::Library,
    create: CreateFn,
    destroy: DestroyFn,
    add_data: AddDataFn,
    complete: CompleteFn,
    cubin_size: SizeFn,
    cubin: GetFn,
    error_log_size: SizeFn,
    error_log: LogFn,
}

/// The toolkit's library folders: where libnvJitLink.so.13 is looked for after the loader's own
/// search path, and a static library for the linker (`link::find_library`).
pub(super) fn candidates() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(d) = std::env::var_os(var) {
            dirs.push(PathBuf::from(d).join("lib64"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    dirs.push("/usr/local/cuda/targets/x86_64-linux/lib".into());
    dirs
}

/// `dirs`, for a message saying where something was looked for.
pub(super) fn listed(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

const LIB: &str = "libnvJitLink.so.13";

fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(load)
        .as_ref()
        .map_err(|searched| Error::LinkerNotFound {
            searched: searched.clone(),
        })
}

fn load() -> std::result::Result<Api, String> {
    let mut paths = vec![PathBuf::from(LIB)];
    paths.extend(candidates().into_iter().map(|d| d.join(LIB)));
    // SAFETY: loading nvJitLink runs no initialisation with preconditions.
    let lib = paths
        .iter()
        .find_map(|p| unsafe { libloading::Library::new(p) }.ok())
        .ok_or_else(|| format!("LD_LIBRARY_PATH, {}", listed(&candidates())))?;
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the signature is nvJitLink.h's for this versioned entry point; the library
            // is kept alive in `_lib` for as long as the pointer is used.
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .map_err(|e| format!("{LIB} (it lacks {}: {e})", $name))?
        };
    }
    Ok(Api {
        create: sym!("__nvJitLinkCreate_13_0"),
        destroy: sym!("__nvJitLinkDestroy_13_0"),
        add_data: sym!("__nvJitLinkAddData_13_0"),
        complete: sym!("__nvJitLinkComplete_13_0"),
        cubin_size: sym!("__nvJitLinkGetLinkedCubinSize_13_0"),
        cubin: sym!("__nvJitLinkGetLinkedCubin_13_0"),
        error_log_size: sym!("__nvJitLinkGetErrorLogSize_13_0"),
        error_log: sym!("__nvJitLinkGetErrorLog_13_0"),
        _lib: lib,
    })
}

/// Whether nvJitLink can be loaded here.
pub(crate) fn is_available() -> bool {
    api().is_ok()
}

/// One input to the linker: nvJitLink's input type code, the bytes and a name for messages.
pub(crate) struct Input<'a> {
    pub(crate) kind: c_uint,
    pub(crate) data: &'a [u8],
    pub(crate) name: &'a str,
}

struct Linker<'a> {
    api: &'a Api,
    handle: Handle,
}

impl Drop for Linker<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle was created by nvJitLinkCreate and is destroyed once.
        unsafe {
            (self.api.destroy)(&mut self.handle);
        }
    }
}

impl Linker<'_> {
    fn check(&self, call: &'static str, r: c_uint) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        let mut size = 0;
        // SAFETY: live handle, valid out-pointer.
        unsafe { (self.api.error_log_size)(self.handle, &mut size) };
        let mut log = vec![0u8; size.max(1)];
        // SAFETY: the buffer has the size nvJitLink reported.
        unsafe { (self.api.error_log)(self.handle, log.as_mut_ptr().cast()) };
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let text = String::from_utf8_lossy(&log[..end]).trim_end().to_owned();
        Err(Error::Link {
            linker: "nvJitLink",
            call,
            log: if text.is_empty() {
                format!("nvJitLink error code {r}")
            } else {
                text
            },
        })
    }
}

/// Links `inputs` into one cubin for `sm_{major}{minor}`.
pub(crate) fn link(arch: (u32, u32), inputs: &[Input<'_>]) -> Result<Vec<u8>> {
    let api = api()?;
    let arch_opt = CString::new(format!("-arch=sm_{}{}", arch.0, arch.1)).unwrap_or_default();
    let options = [arch_opt.as_ptr()];
    let mut handle: Handle = std::ptr::null_mut();
    // SAFETY: valid out-pointer and one NUL-terminated option.
    let r = unsafe { (api.create)(&mut handle, options.len() as u32, options.as_ptr()) };
    if r != 0 {
        return Err(Error::Link {
            linker: "nvJitLink",
            call: "nvJitLinkCreate",
            log: format!("error code {r} for {}", arch_opt.to_string_lossy()),
        });
    }
    let linker = Linker { api, handle };
    // nvJitLink may keep the names until the link completes.
    let names: Vec<CString> = inputs
        .iter()
        .map(|i| CString::new(i.name.replace('\0', "")).unwrap_or_default())
        .collect();
    for (input, name) in inputs.iter().zip(&names) {
        // SAFETY: live handle; the data and the name outlive the link.
        let r = unsafe {
            (api.add_data)(
                linker.handle,
                input.kind,
                input.data.as_ptr().cast(),
                input.data.len(),
                name.as_ptr(),
            )
        };
        linker.check("nvJitLinkAddData", r)?;
    }
    // SAFETY: live handle.
    linker.check("nvJitLinkComplete", unsafe { (api.complete)(linker.handle) })?;
    let mut size = 0;
    // SAFETY: live, completed handle; valid out-pointer.
    linker.check("nvJitLinkGetLinkedCubinSize", unsafe {
        (api.cubin_size)(linker.handle, &mut size)
    })?;
    let mut cubin = vec![0u8; size];
    // SAFETY: the buffer has the size nvJitLink reported.
    linker.check("nvJitLinkGetLinkedCubin", unsafe {
        (api.cubin)(linker.handle, cubin.as_mut_ptr().cast())
    })?;
    Ok(cubin)
}
