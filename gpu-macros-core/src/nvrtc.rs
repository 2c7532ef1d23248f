//! NVRTC at build time: a hand-written binding of the dozen functions the macro needs, loaded
//! with `libloading` so that the proc-macro neither links CUDA nor pulls in cudarc.
//!
//! The library is found where users have it (`nvrtc_find`: `GPU_RUNTIME_NVRTC`, the loader's
//! path, a CUDA toolkit, a Python wheel), once per compiler process. Every compile gets what
//! the run time's gets (`gpu_runtime::compiler::headers`): the built-in headers
//! (`gpu_cuda_source::BUILTIN_HEADERS`, the prelude among them) in memory, and `-I` for the CUDA
//! headers of a toolkit or, without one, those NVRTC carries inside itself, installed where the
//! run time installs them (`gpu_cuda_source::cuda_include`).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::OnceLock;

use gpu_cuda_source::cuda_include;

use crate::nvrtc_find;

type Prog = *mut c_void;
type R = c_int;

/// The functions used, resolved once.
pub struct Nvrtc {
    _lib: libloading::Library,
    /// The file the library was loaded from, when it was named by path.
    path: Option<std::path::PathBuf>,
    /// The CUDA headers for this NVRTC, found on first use.
    headers: OnceLock<CudaHeaders>,
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
    /// `nvrtcGetBundledHeadersInfo` and `nvrtcInstallBundledHeaders` (NVRTC 13.1 and later).
    bundled: Option<(BundledInfoFn, InstallBundledFn)>,
}

/// `nvrtcBundledHeadersInfo`, as nvrtc.h (13.1+) declares it.
#[repr(C)]
#[derive(Default)]
struct BundledHeadersInfo {
    available: c_int,
    compressed_size: usize,
    uncompressed_size: usize,
    cuda_version_major: c_int,
    cuda_version_minor: c_int,
    num_files: c_uint,
}

type BundledInfoFn = unsafe extern "C" fn(*mut BundledHeadersInfo, *mut *const c_char) -> R;
type InstallBundledFn = unsafe extern "C" fn(*const c_char, c_uint, *mut *const c_char) -> R;

/// The CUDA header directories every compile is given, found once.
pub struct CudaHeaders {
    /// `-I` options.
    pub options: Vec<String>,
}

impl CudaHeaders {
    /// Whether any CUDA headers were found.
    pub fn found(&self) -> bool {
        !self.options.is_empty()
    }
}

pub use crate::nvrtc_find::NVRTC_VAR;

/// How [`get`]'s error starts when no NVRTC was found at all (rather than one found and not
/// loadable): the warning then says "not found", in a few words.
pub const NOT_FOUND: &str = "NVRTC (libnvrtc.so) was not found";

/// NVRTC, or why it could not be loaded.
pub fn get() -> Result<&'static Nvrtc, &'static str> {
    static LIB: OnceLock<Result<Nvrtc, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(|e| e.as_str())
}

fn load() -> Result<Nvrtc, String> {
    let mut last = String::from("no candidate");
    let mut candidates = nvrtc_find::candidates();
    let mut asked_python = false;
    while let Some(name) = (!candidates.is_empty()).then(|| candidates.remove(0)) {
        // SAFETY: loading NVRTC runs no initialisers with preconditions of ours.
        match unsafe { libloading::Library::new(&name) } {
            Ok(lib) => {
                let builtins = builtins_beside(&name);
                let path = name.contains('/').then(|| std::path::PathBuf::from(&name));
                return bind(lib, builtins, path).map_err(|e| format!("{name}: {e}"));
            }
            Err(e) => last = e.to_string(),
        }
        if candidates.is_empty() && !std::mem::replace(&mut asked_python, true) {
            candidates = nvrtc_find::python_candidates();
        }
    }
    Err(format!(
        "{NOT_FOUND}: not in ${NVRTC_VAR}, not on the loader's path \
         (LD_LIBRARY_PATH, the ld cache), not in a CUDA toolkit ($CUDA_PATH, $CUDA_HOME, \
         /usr/local/cuda, /opt/cuda) and not in a Python environment's nvidia-cuda-nvrtc wheel \
         (last error: {last})"
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

/// NVRTC loaded from the file `path`, apart from the one [`get`] finds: a test compiles with
/// another version (NVRTC 13.0, which carries no CUDA headers) this way.
#[cfg(test)]
pub fn load_path(path: &std::path::Path) -> Result<Nvrtc, String> {
    let name = path.to_string_lossy().into_owned();
    // SAFETY: loading NVRTC runs no initialisers with preconditions of ours.
    let lib = unsafe { libloading::Library::new(&name) }.map_err(|e| format!("{name}: {e}"))?;
    bind(lib, builtins_beside(&name), Some(path.to_path_buf())).map_err(|e| format!("{name}: {e}"))
}

fn bind(
    lib: libloading::Library,
    builtins: Vec<libloading::Library>,
    path: Option<std::path::PathBuf>,
) -> Result<Nvrtc, libloading::Error> {
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
        // SAFETY: as in `sym!`; these two are optional (NVRTC 13.1 and later).
        bundled: unsafe {
            lib.get::<BundledInfoFn>(b"nvrtcGetBundledHeadersInfo\0")
                .and_then(|i| Ok((*i, *lib.get::<InstallBundledFn>(b"nvrtcInstallBundledHeaders\0")?)))
                .ok()
        },
        _lib: lib,
        path,
        headers: OnceLock::new(),
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

    /// The CUDA headers, as the run time finds them (`gpu_cuda_source::cuda_include::find`): a
    /// toolkit's, else the headers this NVRTC carries (installed once into the directory the
    /// run time uses for them), else the wheels' or those another NVRTC installed.
    pub fn cuda_headers(&self) -> &CudaHeaders {
        self.headers.get_or_init(|| {
            let env = cuda_include::SearchEnv::from_env(self.path.as_deref());
            let found = cuda_include::find(&env, self.version().0, &mut || self.bundled_include());
            CudaHeaders {
                options: found.options(),
            }
        })
    }

    /// NVRTC's own copy of the CUDA headers, installed on first use (as
    /// `gpu_runtime::compiler::headers` does, into the same directory); `None` for an NVRTC
    /// without them (before 13.1).
    fn bundled_include(&self) -> Option<std::path::PathBuf> {
        self.install_bundled_into(&cuda_include::header_cache_dir())
    }

    /// Installs the CUDA headers this NVRTC carries (13.1 and later) into its
    /// `nvrtc-headers-X.Y` of `cache`, unless there already, and returns that directory.
    pub fn install_bundled_into(&self, cache: &std::path::Path) -> Option<std::path::PathBuf> {
        let (get_info, install) = self.bundled?;
        let mut info = BundledHeadersInfo::default();
        let mut log: *const c_char = std::ptr::null();
        // SAFETY: valid out-pointers; the library is loaded for as long as `self` lives.
        let r = unsafe { get_info(&mut info, &mut log) };
        if r != 0 || info.available == 0 || info.num_files == 0 {
            return None;
        }
        let dir = cuda_include::bundled_headers_in(cache, info.cuda_version_major, info.cuda_version_minor);
        if cuda_include::holds_cuda_headers(&dir) {
            return Some(dir);
        }
        std::fs::create_dir_all(&dir).ok()?;
        let c_dir = CString::new(dir.to_string_lossy().as_bytes()).ok()?;
        // SAFETY: NUL-terminated path and valid out-pointer; NVRTC locks the directory itself.
        let r = unsafe { install(c_dir.as_ptr(), 0, &mut log) };
        (r == 0 && cuda_include::holds_cuda_headers(&dir)).then_some(dir)
    }

    /// Gives this NVRTC's compiles these CUDA header options instead of searching: a test
    /// compiles with headers found in an environment of its making.
    #[cfg(test)]
    pub fn set_cuda_headers(&self, options: Vec<String>) {
        assert!(
            self.headers.set(CudaHeaders { options }).is_ok(),
            "headers set twice"
        );
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
    /// expressions; with `prelude`, `gpu_cuda_source::NVRTC_PRELUDE` is included first, as the run
    /// time does. `headers` (`(name, contents)`) are given in memory before the built-in ones, as
    /// the run time gives a source's own headers. `Err` only when NVRTC itself fails (not for
    /// compile errors).
    #[allow(clippy::too_many_arguments)]
    pub fn compile(
        &self,
        source: &str,
        file_name: &str,
        names: &[String],
        options: &[String],
        want: Want,
        prelude: bool,
        headers: &[(String, Vec<u8>)],
    ) -> Result<Output, String> {
        let cstr = |s: &str| CString::new(s).map_err(|_| format!("`{s}` contains a NUL byte"));
        // Host code beside the kernels is left out, as at run time
        // (`gpu_cuda_source::device_parts_with`), in the source and in its headers (given in
        // memory, as the run time gets them).
        let given_text: Vec<(String, String)> = headers
            .iter()
            .map(|(n, t)| (n.clone(), String::from_utf8_lossy(t).into_owned()))
            .collect();
        let given: Vec<(&str, &str)> = given_text.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
        let parts = gpu_cuda_source::device_parts_with(source, options, &given);
        let (src, file) = (cstr(parts.source.as_deref().unwrap_or(source))?, cstr(file_name)?);
        // The source's headers (their device parts), then the device parts of headers found
        // through `-I`, then the run time's in-memory headers, the prelude among them: NVRTC
        // includes the prelude by name (`--pre-include`), so the source's line numbers stay its
        // own.
        let part_of = |name: &str| {
            parts
                .headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t.as_str())
        };
        let all = given
            .iter()
            .map(|(n, t)| (*n, part_of(n).unwrap_or(t)))
            .chain(
                parts
                    .headers
                    .iter()
                    .filter(|(n, _)| !given.iter().any(|(g, _)| g == n))
                    .map(|(n, t)| (n.as_str(), t.as_str())),
            )
            .chain(gpu_cuda_source::BUILTIN_HEADERS.iter().copied());
        let (header_names, header_texts): (Vec<_>, Vec<_>) = all.map(|(n, t)| (cstr(n), cstr(t))).unzip();
        let header_names = header_names.into_iter().collect::<Result<Vec<_>, _>>()?;
        let header_texts = header_texts.into_iter().collect::<Result<Vec<_>, _>>()?;
        let name_ptrs: Vec<*const c_char> = header_names.iter().map(|n| n.as_ptr()).collect();
        let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|t| t.as_ptr()).collect();
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid out-pointer and NUL-terminated strings; as many header names as texts,
        // all outliving the call.
        let r = unsafe {
            (self.create)(
                &mut raw,
                src.as_ptr(),
                file.as_ptr(),
                name_ptrs.len() as c_int,
                text_ptrs.as_ptr(),
                name_ptrs.as_ptr(),
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
                cstr(&format!("--pre-include={}", gpu_cuda_source::NVRTC_PRELUDE_NAME))?,
            );
        }
        // After the user's options, as at run time: their `-I` directories come first.
        for o in &self.cuda_headers().options {
            opts.push(cstr(o)?);
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
