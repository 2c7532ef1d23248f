//! NVRTC at build time: a hand-written binding of the dozen functions the macro needs, loaded
//! with `libloading` so that the proc-macro neither links CUDA nor pulls in cudarc.
//!
//! The library is found like the run time finds it (cudarc's candidate names, through the
//! dynamic loader's search path: `LD_LIBRARY_PATH`, the ld cache), else at the path in
//! `GPU_RUNTIME_NVRTC`, else in `/usr/local/cuda/lib64`. It is loaded once per compiler process.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

type Prog = *mut c_void;
type R = c_int;

/// The functions used, resolved once.
pub struct Nvrtc {
    _lib: libloading::Library,
    /// `libnvrtc-builtins` loaded from beside a library named by path (see `load`).
    _builtins: Vec<libloading::Library>,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> R,
    num_archs: unsafe extern "C" fn(*mut c_int) -> R,
    archs: unsafe extern "C" fn(*mut c_int) -> R,
    create: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> R,
    destroy: unsafe extern "C" fn(*mut Prog) -> R,
    add_name: unsafe extern "C" fn(Prog, *const c_char) -> R,
    compile: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> R,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> R,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> R,
    lowered: unsafe extern "C" fn(Prog, *const c_char, *mut *const c_char) -> R,
    ptx_size: unsafe extern "C" fn(Prog, *mut usize) -> R,
    ptx: unsafe extern "C" fn(Prog, *mut c_char) -> R,
    cubin_size: unsafe extern "C" fn(Prog, *mut usize) -> R,
    cubin: unsafe extern "C" fn(Prog, *mut c_char) -> R,
}

/// The environment variable naming the NVRTC library to use at build time.
pub const NVRTC_VAR: &str = "GPU_RUNTIME_NVRTC";

fn candidates() -> Vec<String> {
    let mut names = Vec::new();
    if let Some(p) = std::env::var_os(NVRTC_VAR) {
        names.push(p.to_string_lossy().into_owned());
    }
    // The names cudarc tries (see cudarc::get_lib_name_candidates), newest first.
    for v in ["", ".13", ".12", ".11", ".1"] {
        names.push(format!("libnvrtc.so{v}"));
    }
    for v in ["", ".13", ".12"] {
        names.push(format!("/usr/local/cuda/lib64/libnvrtc.so{v}"));
    }
    names
}

/// NVRTC, or why it could not be loaded.
pub fn get() -> Result<&'static Nvrtc, &'static str> {
    static LIB: OnceLock<Result<Nvrtc, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(|e| e.as_str())
}

fn load() -> Result<Nvrtc, String> {
    let mut last = String::from("no candidate");
    for name in candidates() {
        // SAFETY: loading NVRTC runs no initialisers with preconditions of ours.
        match unsafe { libloading::Library::new(&name) } {
            Ok(lib) => {
                let builtins = builtins_beside(&name);
                return bind(lib, builtins).map_err(|e| format!("{name}: {e}"));
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!(
        "NVRTC (libnvrtc.so) was not found on the loader's path, in ${NVRTC_VAR} or in \
         /usr/local/cuda/lib64 (last error: {last})"
    ))
}

/// NVRTC opens `libnvrtc-builtins.so.X.Y` by name when it compiles. For a library named by
/// path (`GPU_RUNTIME_NVRTC=/dir/libnvrtc.so.13`) that name need not be on the loader's path
/// (NVRTC 13.0 has no `$ORIGIN` run path), so the builtins beside it are loaded first: the
/// loader then finds a library of that name already loaded. Nothing is loaded for a bare name.
fn builtins_beside(name: &str) -> Vec<libloading::Library> {
    let path = std::path::Path::new(name);
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("libnvrtc-builtins.so")
        })
        // SAFETY: the builtins library holds data NVRTC reads; loading it runs no initialiser
        // with preconditions of ours.
        .filter_map(|e| unsafe { libloading::Library::new(e.path()) }.ok())
        .collect()
}

fn bind(lib: libloading::Library, builtins: Vec<libloading::Library>) -> Result<Nvrtc, libloading::Error> {
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol has this C signature in every NVRTC since 11.x; the library
            // is kept alive in the same struct as the pointer.
            *unsafe { lib.get(concat!($name, "\0").as_bytes())? }
        };
    }
    Ok(Nvrtc {
        version: sym!("nvrtcVersion"),
        num_archs: sym!("nvrtcGetNumSupportedArchs"),
        archs: sym!("nvrtcGetSupportedArchs"),
        create: sym!("nvrtcCreateProgram"),
        destroy: sym!("nvrtcDestroyProgram"),
        add_name: sym!("nvrtcAddNameExpression"),
        compile: sym!("nvrtcCompileProgram"),
        log_size: sym!("nvrtcGetProgramLogSize"),
        log: sym!("nvrtcGetProgramLog"),
        lowered: sym!("nvrtcGetLoweredName"),
        ptx_size: sym!("nvrtcGetPTXSize"),
        ptx: sym!("nvrtcGetPTX"),
        cubin_size: sym!("nvrtcGetCUBINSize"),
        cubin: sym!("nvrtcGetCUBIN"),
        _lib: lib,
        _builtins: builtins,
    })
}

/// The result of one compile.
pub struct Output {
    /// False when NVRTC reported errors.
    pub ok: bool,
    pub log: String,
    /// The image (PTX with its NUL, or the cubin), when one was asked for and the compile worked.
    pub image: Vec<u8>,
    /// Lowered name of each name expression, when the compile worked.
    pub lowered: Vec<String>,
}

/// What to produce.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Front end only (`-fdevice-syntax-only`): the cheap check.
    Check,
    Ptx,
    Cubin,
}

struct Program<'a>(&'a Nvrtc, Prog);

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram, destroyed once.
        unsafe { (self.0.destroy)(&mut self.1) };
    }
}

impl Nvrtc {
    /// `(major, minor)`.
    pub fn version(&self) -> (i32, i32) {
        let (mut a, mut b) = (0, 0);
        // SAFETY: valid out-pointers.
        unsafe { (self.version)(&mut a, &mut b) };
        (a, b)
    }

    /// The `sm_XY` numbers this NVRTC compiles for, ascending.
    pub fn archs(&self) -> Vec<u32> {
        let mut n = 0;
        // SAFETY: valid out-pointer.
        if unsafe { (self.num_archs)(&mut n) } != 0 || n <= 0 {
            return Vec::new();
        }
        let mut v = vec![0 as c_int; n as usize];
        // SAFETY: v has room for n entries.
        unsafe { (self.archs)(v.as_mut_ptr()) };
        let mut v: Vec<u32> = v.into_iter().map(|a| a as u32).collect();
        v.sort_unstable();
        v
    }

    /// Compiles `source` with `options` (the architecture included), adding `names` as name
    /// expressions; with `prelude`, `gpu_cdecl::NVRTC_PRELUDE` is included first, as the run time
    /// does. `Err` only when NVRTC itself fails (not for compile errors).
    pub fn compile(
        &self,
        source: &str,
        file_name: &str,
        names: &[String],
        options: &[String],
        want: Want,
        prelude: bool,
    ) -> Result<Output, String> {
        let cstr = |s: &str| CString::new(s).map_err(|_| format!("`{s}` contains a NUL byte"));
        let (src, file) = (cstr(source)?, cstr(file_name)?);
        // The prelude is the one in-memory header: NVRTC includes it by name (`--pre-include`),
        // so the source's line numbers stay its own.
        let (header_name, header) = (
            cstr(gpu_cdecl::NVRTC_PRELUDE_NAME)?,
            cstr(gpu_cdecl::NVRTC_PRELUDE)?,
        );
        let (names_ptr, contents_ptr) = (header_name.as_ptr(), header.as_ptr());
        let count = c_int::from(prelude);
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer and NUL-terminated strings; `count` headers (0 or 1) behind
        // the pointers to the two pointers, which outlive the call.
        let r = unsafe {
            (self.create)(
                &mut raw,
                src.as_ptr(),
                file.as_ptr(),
                count,
                &contents_ptr,
                &names_ptr,
            )
        };
        if r != 0 {
            return Err(format!("nvrtcCreateProgram failed ({r})"));
        }
        let prog = Program(self, raw);
        let c_names = names.iter().map(|n| cstr(n)).collect::<Result<Vec<_>, _>>()?;
        for n in &c_names {
            // SAFETY: live program, NUL-terminated name.
            unsafe { (self.add_name)(prog.1, n.as_ptr()) };
        }
        let mut opts = options.iter().map(|o| cstr(o)).collect::<Result<Vec<_>, _>>()?;
        if prelude {
            opts.insert(
                0,
                cstr(&format!("--pre-include={}", gpu_cdecl::NVRTC_PRELUDE_NAME))?,
            );
        }
        if want == Want::Check {
            opts.push(cstr("-fdevice-syntax-only")?);
        }
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: ptrs holds ptrs.len() NUL-terminated strings that outlive the call.
        let status = unsafe { (self.compile)(prog.1, ptrs.len() as c_int, ptrs.as_ptr()) };
        let log = self.read(&prog, self.log_size, self.log).unwrap_or_default();
        let mut out = Output {
            ok: status == 0,
            log: String::from_utf8_lossy(log.split(|&b| b == 0).next().unwrap_or(&[])).into_owned(),
            image: Vec::new(),
            lowered: Vec::new(),
        };
        // NVRTC_ERROR_COMPILATION is 6; anything else is NVRTC failing, e.g. a bad option.
        if status != 0 && status != 6 {
            return Err(format!(
                "nvrtcCompileProgram failed ({status}): {}",
                out.log.trim()
            ));
        }
        if !out.ok {
            return Ok(out);
        }
        if want != Want::Check {
            for n in &c_names {
                let mut p: *const c_char = std::ptr::null();
                // SAFETY: the program compiled with n added before.
                if unsafe { (self.lowered)(prog.1, n.as_ptr(), &mut p) } != 0 || p.is_null() {
                    return Err(format!("NVRTC has no lowered name for `{}`", n.to_string_lossy()));
                }
                // SAFETY: NUL-terminated, owned by the live program.
                out.lowered
                    .push(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
            }
            out.image = match want {
                Want::Ptx => self.read(&prog, self.ptx_size, self.ptx)?,
                _ => self.read(&prog, self.cubin_size, self.cubin)?,
            };
        }
        Ok(out)
    }

    fn read(
        &self,
        prog: &Program<'_>,
        size: unsafe extern "C" fn(Prog, *mut usize) -> R,
        get: unsafe extern "C" fn(Prog, *mut c_char) -> R,
    ) -> Result<Vec<u8>, String> {
        let mut n = 0usize;
        // SAFETY: valid out-pointer; live program.
        if unsafe { size(prog.1, &mut n) } != 0 {
            return Err("NVRTC could not report an output size".into());
        }
        let mut v = vec![0u8; n.max(1)];
        // SAFETY: v has the size NVRTC reported.
        if unsafe { get(prog.1, v.as_mut_ptr().cast()) } != 0 {
            return Err("NVRTC could not return its output".into());
        }
        v.truncate(n);
        Ok(v)
    }
}
