//! The compile cache and SourceModule::compile with real NVRTC, on any machine (no GPU):
//! hits, misses and keys, damaged entries, racing processes, unusable and disabled caches,
//! and compile errors.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use gpu_runtime::compiler::CacheStatus;
use gpu_runtime::{Error, SourceModule};

const SOURCE: &str = "__global__ void twice(float *x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= 2.0f;\n}\n";

/// A test's own directory, removed with what it holds when the test ends (passed or not), so
/// that test runs leave nothing in the temporary directory.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

/// A fresh, empty directory for one test.
fn temp_dir(tag: &str) -> TempDir {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "gpu-runtime-cache-test-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

fn module(dir: &Path) -> SourceModule {
    SourceModule::new(SOURCE).arch("sm_90").cache_dir(Some(dir))
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "compilers")
        .collect();
    names.sort();
    names
}

#[test]
fn a_second_compile_is_a_hit_with_the_same_image() {
    let dir = temp_dir("hit");
    let first = module(&dir).compile_report().unwrap();
    assert_eq!(first.status, CacheStatus::Miss);
    assert_eq!(&first.module.image[..4], b"\x7fELF");
    let entry = first.entry.clone().unwrap();
    assert!(entry.is_file());
    assert_eq!(entries(&dir), vec![format!("{}.entry", first.key.to_hex())]);
    let second = module(&dir).compile_report().unwrap();
    assert_eq!(second.status, CacheStatus::Hit);
    assert_eq!(second.key, first.key);
    assert_eq!(second.module, first.module);
}

#[test]
fn every_input_changes_the_key() {
    let dir = temp_dir("keys");
    let base = module(&dir);
    let key = |m: &SourceModule| m.cache_key().unwrap();
    let k0 = key(&base);
    assert_eq!(k0, key(&module(&dir)), "the key is deterministic");
    let header_dir = temp_dir("hdr");
    std::fs::write(header_dir.join("consts.h"), "#define K 2.0f\n").unwrap();
    let with_header = SourceModule::new(format!("#include \"consts.h\"\n{SOURCE}"))
        .arch("sm_90")
        .cache_dir(Some(&dir))
        .include_dir(&header_dir);
    let kh = key(&with_header);
    std::fs::write(header_dir.join("consts.h"), "#define K 3.0f\n").unwrap();
    // A header that header includes counts too.
    std::fs::write(
        header_dir.join("consts.h"),
        "#include \"nested.h\"\n#define K 2.0f\n",
    )
    .unwrap();
    std::fs::write(header_dir.join("nested.h"), "#define N 1\n").unwrap();
    let kn = key(&with_header);
    std::fs::write(header_dir.join("nested.h"), "#define N 2\n").unwrap();
    assert_ne!(
        key(&with_header),
        kn,
        "editing a nested header must change the key"
    );
    std::fs::write(header_dir.join("consts.h"), "#define K 3.0f\n").unwrap();
    let variants = [
        (
            "source",
            key(&SourceModule::new(SOURCE.replace("2.0f", "3.0f")).arch("sm_90")),
        ),
        ("an option", key(&base.clone().options(["-use_fast_math"]))),
        ("another option", key(&base.clone().options(["-lineinfo"]))),
        (
            "option order",
            key(&base.clone().options(["-lineinfo", "-use_fast_math"])),
        ),
        (
            "no options vs empty",
            key(&base.clone().options(Vec::<String>::new())),
        ),
        ("arch", key(&base.clone().arch("sm_80"))),
        ("PTX instead of cubin", key(&base.clone().arch("compute_90"))),
        ("code", key(&base.clone().code("sm_89"))),
        ("the source name", key(&base.clone().name("other.cu"))),
        ("no_extern_c", key(&base.clone().no_extern_c(true))),
        ("kernel names", key(&base.clone().kernels(["twice"]))),
        ("an include dir", key(&base.clone().include_dir(&header_dir))),
        ("a header's contents", key(&with_header)),
    ];
    // "no options vs empty" is equal only when GPU_RUNTIME_DEFAULT_NVRTC_FLAGS is unset.
    let defaults_unset = std::env::var_os("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS").is_none();
    for (what, k) in &variants {
        if *what == "no options vs empty" && defaults_unset {
            assert_eq!(*k, k0, "explicit empty options equal the (empty) defaults");
            continue;
        }
        if *what == "a header's contents" {
            assert_ne!(*k, kh, "changing {what} must change the key");
            continue;
        }
        assert_ne!(*k, k0, "changing {what} must change the key");
    }
    let mut all: Vec<_> = variants.iter().map(|(_, k)| *k).collect();
    all.sort_by_key(|k| k.to_hex());
    all.dedup();
    assert!(all.len() >= variants.len() - 1, "keys collide: {variants:?}");
}

#[test]
fn the_default_flags_variable_changes_options_and_key() {
    let dir = temp_dir("flags");
    let run = |flags: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cache_worker"));
        c.arg(&dir).env_remove("GPU_RUNTIME_DISABLE_CACHE");
        match flags {
            Some(f) => c.env("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS", f),
            None => c.env_remove("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS"),
        };
        worker_output(c)
    };
    let plain = run(None);
    let fast = run(Some("-use_fast_math -lineinfo"));
    assert_ne!(field(&plain, "key"), field(&fast, "key"));
    assert_eq!(field(&plain, "status"), "Miss");
    assert_eq!(field(&fast, "status"), "Miss");
    assert_eq!(field(&run(Some("-use_fast_math   -lineinfo")), "status"), "Hit");
}

/// A cache hit in a new process does not load NVRTC: the key names NVRTC's library file, found
/// on `LD_LIBRARY_PATH` as `dlopen` would find it. When the library loaded turns out to be
/// another file (here a `libnvrtc.so` that is no library comes first, which `dlopen` skips),
/// the entry is stored under NVRTC's version instead, where the next such process finds it,
/// after loading NVRTC to learn the version.
#[test]
#[cfg(target_os = "linux")]
fn a_hit_loads_no_nvrtc_unless_its_file_was_mispredicted() {
    let dir = temp_dir("predicted");
    let decoy = dir.join("decoy");
    std::fs::create_dir_all(&decoy).unwrap();
    std::fs::write(decoy.join("libnvrtc.so"), "not a library").unwrap();
    let cache = dir.join("cache");
    let usual = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    let run = |lib_path: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cache_worker"));
        c.arg(&cache)
            .env("LD_LIBRARY_PATH", lib_path)
            .env_remove("GPU_RUNTIME_DISABLE_CACHE")
            .env_remove("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS");
        worker_output(c)
    };

    let first = run(&usual);
    assert_eq!(field(&first, "status"), "Miss");
    let again = run(&usual);
    assert_eq!(field(&again, "status"), "Hit");
    assert_eq!(field(&again, "key"), field(&first, "key"));
    assert_eq!(
        field(&again, "nvrtc_loaded"),
        "false",
        "a hit needs no NVRTC: {again}"
    );

    let with_decoy = format!("{}:{usual}", decoy.display());
    let mispredicted = run(&with_decoy);
    assert_eq!(field(&mispredicted, "status"), "Miss", "{mispredicted}");
    assert_ne!(field(&mispredicted, "key"), field(&first, "key"));
    let again = run(&with_decoy);
    assert_eq!(field(&again, "status"), "Hit");
    assert_eq!(field(&again, "key"), field(&mispredicted, "key"));
    assert_eq!(field(&again, "nvrtc_loaded"), "true", "{again}");
    assert_eq!(field(&again, "bytes"), field(&first, "bytes"));
}

/// A hit does not search `LD_LIBRARY_PATH` for NVRTC: its key names the search path, and the
/// entry names the library file the search found when it was stored, which the hit checks is
/// still there unchanged (one `stat`). An NVRTC replaced in place (here a link to the library
/// becomes a copy of it: another size or time) makes the entry's next lookup a compile that
/// replaces it, under the same key.
#[test]
#[cfg(target_os = "linux")]
fn a_hit_checks_that_the_nvrtc_file_it_was_made_by_is_unchanged() {
    let usual = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    let Some(real) = std::env::split_paths(&usual)
        .flat_map(|d| ["libnvrtc.so", "libnvrtc.so.13"].map(|n| d.join(n)))
        .find(|p| p.exists())
    else {
        panic!("NVRTC is not on LD_LIBRARY_PATH ({usual}): source scripts/nvrtc-env.sh");
    };
    let dir = temp_dir("identity");
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    // The first name cudarc tries, so that the search and the loader both take it first.
    let ours = lib.join("libnvrtc.so");
    std::os::unix::fs::symlink(&real, &ours).unwrap();
    let cache = dir.join("cache");
    // `lib` first: the search finds the link, and the loader loads it (and finds NVRTC's
    // builtins library where it usually does).
    let lib_path = format!("{}:{usual}", lib.display());
    let run = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cache_worker"));
        c.arg(&cache)
            .env("LD_LIBRARY_PATH", &lib_path)
            .env_remove("GPU_RUNTIME_DISABLE_CACHE")
            .env_remove("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS");
        worker_output(c)
    };
    let first = run();
    assert_eq!(field(&first, "status"), "Miss", "{first}");
    let hit = run();
    assert_eq!(field(&hit, "status"), "Hit", "{hit}");
    assert_eq!(field(&hit, "nvrtc_loaded"), "false", "{hit}");

    // The library replaced: a copy has the bytes but not the time of the file it copies.
    std::fs::remove_file(&ours).unwrap();
    std::fs::copy(&real, &ours).unwrap();
    let replaced = run();
    assert_eq!(field(&replaced, "status"), "Replaced", "{replaced}");
    assert_eq!(
        field(&replaced, "key"),
        field(&first, "key"),
        "the key names the search, not the file"
    );
    assert_eq!(field(&replaced, "nvrtc_loaded"), "true", "{replaced}");
    let again = run();
    assert_eq!(field(&again, "status"), "Hit", "{again}");
    assert_eq!(field(&again, "nvrtc_loaded"), "false", "{again}");
    assert_eq!(field(&again, "bytes"), field(&first, "bytes"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn worker_output(mut c: Command) -> String {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name} in {line:?}"))
}

#[test]
fn a_truncated_or_garbage_entry_is_detected_and_replaced() {
    let dir = temp_dir("damaged");
    let good = module(&dir).compile_report().unwrap();
    let entry = good.entry.clone().unwrap();
    let bytes = std::fs::read(&entry).unwrap();
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    for (what, damaged) in [
        ("truncated", bytes[..bytes.len() / 2].to_vec()),
        ("empty", Vec::new()),
        (
            "garbage",
            b"this is not a cache entry at all, just text".repeat(10),
        ),
        ("one bit flipped", flipped),
    ] {
        std::fs::write(&entry, &damaged).unwrap();
        let r = module(&dir).compile_report().unwrap();
        assert_eq!(r.status, CacheStatus::Replaced, "{what}");
        assert_eq!(r.module, good.module, "{what}: recompiled to the same image");
        assert_eq!(
            std::fs::read(&entry).unwrap(),
            bytes,
            "{what}: the entry was rewritten"
        );
        assert_eq!(
            module(&dir).compile_report().unwrap().status,
            CacheStatus::Hit,
            "{what}"
        );
    }
    assert_eq!(entries(&dir).len(), 1, "{:?}", entries(&dir));
}

#[test]
fn eight_processes_racing_on_one_cold_key_leave_one_valid_entry() {
    let dir = temp_dir("race");
    let children: Vec<_> = (0..8)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_cache_worker"))
                .arg(&dir)
                .env_remove("GPU_RUNTIME_DISABLE_CACHE")
                .env_remove("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<String> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            assert!(
                out.stderr.is_empty(),
                "no warnings: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        })
        .collect();
    let key = field(&outputs[0], "key").to_owned();
    for o in &outputs {
        assert_eq!(field(o, "key"), key);
        assert!(["Miss", "Hit"].contains(&field(o, "status")), "{o}");
    }
    assert_eq!(
        entries(&dir),
        vec![format!("{key}.entry")],
        "one entry, no temporary files"
    );
    let r = module(&dir).compile_report().unwrap();
    assert_eq!(r.status, CacheStatus::Hit, "the entry left behind is valid");
    assert_eq!(r.key.to_hex(), key);
    let tmp_in_compilers = std::fs::read_dir(dir.join("compilers"))
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count()
        })
        .unwrap_or(0);
    assert_eq!(tmp_in_compilers, 0);
}

#[test]
fn an_unwritable_cache_directory_compiles_without_caching() {
    let dir = temp_dir("unwritable");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    // Root can write anywhere chmod allows nothing, so: a directory under a regular file, and
    // a directory in /proc, which refuses new files whoever asks.
    for bad in [file.join("cache"), PathBuf::from("/proc/self/gpu-runtime-cache")] {
        let m = SourceModule::new(SOURCE).arch("sm_90").cache_dir(Some(&bad));
        let r = m.compile_report().unwrap();
        assert_eq!(r.status, CacheStatus::Unavailable, "{}", bad.display());
        assert_eq!(&r.module.image[..4], b"\x7fELF");
        assert_eq!(r.entry, None);
        assert_eq!(m.compile_report().unwrap().status, CacheStatus::Unavailable);
    }
}

#[test]
fn an_unwritable_directory_warns_once_per_process() {
    let dir = temp_dir("warn");
    let file = dir.join("f");
    std::fs::write(&file, "x").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cache_worker"))
        .arg(file.join("sub"))
        .env_remove("GPU_RUNTIME_DISABLE_CACHE")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("warning").count(), 1, "{stderr}");
    assert!(stderr.contains("compiling without caching"), "{stderr}");
    assert_eq!(
        field(&String::from_utf8_lossy(&out.stdout), "status"),
        "Unavailable"
    );
}

#[test]
fn a_disabled_cache_writes_nothing() {
    let dir = temp_dir("off");
    let r = SourceModule::new(SOURCE)
        .arch("sm_90")
        .cache_dir(None::<PathBuf>)
        .compile_report()
        .unwrap();
    assert_eq!(r.status, CacheStatus::Disabled);
    assert_eq!(r.entry, None);
    // `no_cache()` is the same in one call (PyCUDA's cache_dir=False), and builds the same image.
    let one_call = SourceModule::new(SOURCE)
        .arch("sm_90")
        .no_cache()
        .compile_report()
        .unwrap();
    assert_eq!((one_call.status, one_call.entry), (CacheStatus::Disabled, None));
    assert_eq!(one_call.module.image, r.module.image);
    // The environment variable overrides an explicit directory.
    let out = worker_output({
        let mut c = Command::new(env!("CARGO_BIN_EXE_cache_worker"));
        c.arg(&dir).env("GPU_RUNTIME_DISABLE_CACHE", "");
        c
    });
    assert_eq!(field(&out, "status"), "Disabled");
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
}

#[test]
fn the_cache_dir_variable_is_the_default_directory() {
    let dir = temp_dir("envdir");
    let out = worker_output({
        let mut c = Command::new(env!("CARGO_BIN_EXE_cache_worker"));
        c.arg("-")
            .env("GPU_RUNTIME_CACHE_DIR", &dir)
            .env_remove("GPU_RUNTIME_DISABLE_CACHE");
        c
    });
    assert_eq!(field(&out, "status"), "Miss");
    assert_eq!(entries(&dir), vec![format!("{}.entry", field(&out, "key"))]);
}

fn compile_error(src: &str) -> gpu_runtime::CompileError {
    let dir = temp_dir("err");
    match SourceModule::new(src.to_owned())
        .name("broken.cu")
        .arch("sm_90")
        .options(["-lineinfo"])
        .cache_dir(Some(&dir))
        .compile()
    {
        Err(Error::Compile(e)) => {
            assert!(
                entries(&dir).iter().all(|e| !e.ends_with(".entry")),
                "errors are not cached"
            );
            e
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn a_syntax_error_shows_log_options_and_numbered_source() {
    let e = compile_error("__global__ void k(float *x) {\n    int i = threadIdx.x\n    x[i] = 1.0f;\n}\n");
    assert!(
        e.log.contains("broken.cu(3)"),
        "line numbers are the source's, not the wrapper's: {}",
        e.log
    );
    assert!(e.options.iter().any(|o| o == "-lineinfo"), "{:?}", e.options);
    assert!(
        e.options.iter().any(|o| o == "--gpu-architecture=sm_90"),
        "{:?}",
        e.options
    );
    let msg = e.to_string();
    assert!(msg.contains(">   3 |     x[i] = 1.0f;"), "{msg}");
    assert!(msg.contains("   2 |     int i = threadIdx.x"), "{msg}");
    assert!(!msg.contains("extern \"C\""), "{msg}");
}

#[test]
fn an_undefined_identifier_shows_its_line() {
    let e = compile_error(
        "__global__ void k(float *x) {\n    int i = threadIdx.x;\n\n    x[i] = missing_value;\n}\n",
    );
    assert!(
        e.log.contains("missing_value") && e.log.contains("undefined"),
        "{}",
        e.log
    );
    assert_eq!(e.reported_lines(), vec![4]);
    assert!(e.to_string().contains(">   4 |     x[i] = missing_value;"), "{e}");
}

#[test]
fn a_bad_arch_is_a_typed_error() {
    let err = SourceModule::new(SOURCE).arch("gfx90a").compile().unwrap_err();
    assert!(
        matches!(err, Error::InvalidCompileOption { option: "arch", .. }),
        "{err}"
    );
}

#[test]
fn ptx_output_and_cxx_kernels_by_name_expression() {
    let dir = temp_dir("ptx");
    let src = "template <typename T> __global__ void scale(T *x, T a) { x[threadIdx.x] *= a; }\n";
    let m = SourceModule::new(src)
        .no_extern_c(true)
        .kernels(["scale<float>"])
        .arch("compute_80")
        .cache_dir(Some(&dir));
    let first = m.compile_report().unwrap();
    let ptx = String::from_utf8_lossy(&first.module.image);
    assert!(ptx.contains(".target sm_80"));
    assert!(
        first.module.lowered_names[0].starts_with("_Z"),
        "{:?}",
        first.module.lowered_names
    );
    let hit = m.compile_report().unwrap();
    assert_eq!(hit.status, CacheStatus::Hit);
    assert_eq!(
        hit.module.lowered_names, first.module.lowered_names,
        "lowered names are cached"
    );
}

/// Issue 7's process test: 8 processes hammer one cache directory with hot keys (shared by all)
/// and cold keys (one process each) while this test overwrites hot entries with garbage and
/// truncations midway. Every image any process gets must equal an uncached compile of its
/// source, and the directory must end with only valid entries and no temporary files.
#[test]
fn eight_processes_hammering_one_cache_with_corrupted_entries_planted_midway() {
    let dir = temp_dir("hammer");
    let rounds = 12;
    let children: Vec<_> = (0..8u64)
        .map(|id| {
            Command::new(env!("CARGO_BIN_EXE_cache_worker"))
                .arg(&dir)
                .args(["hammer", &id.to_string(), &rounds.to_string()])
                .env_remove("GPU_RUNTIME_DISABLE_CACHE")
                .env_remove("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Plant damage while they run: every few milliseconds, truncate or scribble over whichever
    // entries exist (hot ones most of all, since every process writes them).
    let mut planted = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut rng = gpu_suite::Rng::new(77);
    while planted < 40 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(15));
        for name in entries(&dir) {
            if !name.ends_with(".entry") || !rng.next_u64().is_multiple_of(3) {
                continue;
            }
            let path = dir.join(&name);
            let Ok(bytes) = std::fs::read(&path) else { continue };
            let damaged: Vec<u8> = if rng.next_u64().is_multiple_of(2) {
                bytes[..bytes.len() / 2].to_vec()
            } else {
                bytes.iter().map(|b| b ^ 0x5a).collect()
            };
            if std::fs::write(&path, damaged).is_ok() {
                planted += 1;
            }
        }
    }
    let mut replaced = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "a worker failed: {}{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.starts_with("hammer ok"), "{stdout}");
        replaced += field(&stdout, "replaced").parse::<u32>().unwrap();
    }
    assert!(planted > 0, "no entry was damaged: the test proved nothing");
    // Damage planted after the last worker read an entry is still there; every entry is either
    // valid or, when read now, detected and replaced with a correct image. No temporary files.
    for name in entries(&dir) {
        assert!(
            name.ends_with(".entry"),
            "a temporary file was left behind: {name}"
        );
    }
    // The hot keys' sources, as support/bin/cache_worker.rs writes them.
    for nonce in 0..4 {
        let src = format!(
            "__global__ void scale_{nonce}(float *x, int n) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= {nonce}.5f;\n}}\n"
        );
        let cached = SourceModule::new(src.clone())
            .arch("sm_90")
            .cache_dir(Some(&dir))
            .compile_report()
            .unwrap();
        assert!(
            matches!(cached.status, CacheStatus::Hit | CacheStatus::Replaced),
            "{:?}",
            cached.status
        );
        let fresh = SourceModule::new(src)
            .arch("sm_90")
            .cache_dir(None::<&str>)
            .compile()
            .unwrap();
        assert_eq!(cached.module.image, fresh.image);
    }
    println!("hammer: 8 processes x {rounds} compiles, {planted} entries damaged midway, {replaced} detected and replaced by the workers");
}

/// A cached image is machine code the process runs: the cache takes only entries no other user
/// could have written (as ssh does for its keys). Each test plants, under the key of
/// `SOURCE`, the entry of another kernel of the same name, which a trusting cache would load.
#[cfg(unix)]
mod trust {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    const OTHER: &str = "__global__ void twice(float *x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= 3.0f;\n}\n";

    fn set_mode(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Writes OTHER's entry into `dir` at SOURCE's key, and returns the honest image of SOURCE.
    fn plant(dir: &Path) -> (PathBuf, Vec<u8>) {
        let elsewhere = temp_dir("planter");
        let theirs = SourceModule::new(OTHER)
            .arch("sm_90")
            .cache_dir(Some(&elsewhere))
            .compile_report()
            .unwrap();
        let honest = module(&temp_dir("honest")).compile_report().unwrap();
        assert_ne!(theirs.module.image, honest.module.image);
        let planted = gpu_runtime::compiler::cache::entry_path(dir, &honest.key);
        std::fs::copy(theirs.entry.unwrap(), &planted).unwrap();
        set_mode(&planted, 0o600);
        (planted, honest.module.image)
    }

    #[test]
    fn a_planted_entry_in_a_world_writable_directory_is_not_loaded() {
        let dir = temp_dir("world-writable");
        let (planted, honest) = plant(&dir);
        let planted_bytes = std::fs::read(&planted).unwrap();
        set_mode(&dir, 0o777);
        let r = module(&dir).compile_report().unwrap();
        assert_eq!(r.status, CacheStatus::Untrusted);
        assert_eq!(
            r.module.image, honest,
            "compiled, not loaded from the planted entry"
        );
        assert!(r.entry.is_none());
        assert_eq!(
            std::fs::read(&planted).unwrap(),
            planted_bytes,
            "nothing was stored there"
        );
        // Group-writable is refused too.
        let group = temp_dir("group-writable");
        plant(&group);
        set_mode(&group, 0o770);
        assert_eq!(
            module(&group).compile_report().unwrap().status,
            CacheStatus::Untrusted
        );
    }

    /// A process remembers the directories it found trustworthy, and those above them, so that
    /// a cache hit costs no walk to `/`; a new cache directory is still checked itself, and
    /// upward to the first directory checked before.
    #[test]
    fn remembered_parents_do_not_vouch_for_a_new_directory() {
        let parent = temp_dir("memo-parent");
        set_mode(&parent, 0o700);
        let good = parent.join("good");
        std::fs::create_dir(&good).unwrap();
        set_mode(&good, 0o700);
        assert_eq!(module(&good).compile_report().unwrap().status, CacheStatus::Miss);
        assert_eq!(module(&good).compile_report().unwrap().status, CacheStatus::Hit);
        // A sibling under the remembered parent, writable by others: refused.
        let open = parent.join("open");
        std::fs::create_dir(&open).unwrap();
        set_mode(&open, 0o777);
        assert_eq!(
            module(&open).compile_report().unwrap().status,
            CacheStatus::Untrusted
        );
        // A private directory below one that others may write (and that is not sticky), itself
        // below the remembered parent: refused, as the walk stops only at a checked directory.
        let inner = open.join("inner");
        std::fs::create_dir(&inner).unwrap();
        set_mode(&inner, 0o700);
        assert_eq!(
            module(&inner).compile_report().unwrap().status,
            CacheStatus::Untrusted
        );
    }

    #[test]
    fn a_planted_entry_others_may_write_is_not_loaded_and_the_check_is_what_stops_it() {
        let dir = temp_dir("entry-mode");
        let (planted, honest) = plant(&dir);
        set_mode(&planted, 0o666);
        let r = module(&dir).compile_report().unwrap();
        assert_eq!(r.status, CacheStatus::Untrusted);
        assert_eq!(r.module.image, honest);
        // Writable by its owner alone, it is still not loaded: it names the key it was stored
        // under, not the one it was renamed to, so it is compiled again and replaced.
        set_mode(&planted, 0o600);
        let r = module(&dir).compile_report().unwrap();
        assert_eq!(r.status, CacheStatus::Replaced);
        assert_eq!(r.module.image, honest);
        let r = module(&dir).compile_report().unwrap();
        assert_eq!((r.status, r.module.image), (CacheStatus::Hit, honest));
    }

    #[test]
    fn entries_and_directories_of_another_user_are_not_loaded() {
        let probe = temp_dir("probe");
        if std::fs::metadata(&probe).unwrap().uid() != 0 {
            // Only root can give a file away; as another user this part cannot be set up.
            eprintln!("not root: files of another user cannot be made here");
            return;
        }
        let nobody = 65534;
        let dir = temp_dir("other-owner-entry");
        let (planted, honest) = plant(&dir);
        std::os::unix::fs::chown(&planted, Some(nobody), Some(nobody)).unwrap();
        let r = module(&dir).compile_report().unwrap();
        assert_eq!(
            (r.status, r.module.image),
            (CacheStatus::Untrusted, honest.clone())
        );
        let dir = temp_dir("other-owner-dir");
        plant(&dir);
        std::os::unix::fs::chown(&dir, Some(nobody), Some(nobody)).unwrap();
        let r = module(&dir).compile_report().unwrap();
        assert_eq!((r.status, r.module.image), (CacheStatus::Untrusted, honest));
    }

    #[test]
    fn the_cache_makes_its_directory_and_entries_private() {
        let base = temp_dir("private");
        let dir = base.join("made").join("here");
        let r = module(&dir).compile_report().unwrap();
        assert_eq!(r.status, CacheStatus::Miss);
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(r.entry.unwrap()).unwrap().mode() & 0o777, 0o600);
        assert_eq!(module(&dir).compile_report().unwrap().status, CacheStatus::Hit);
    }
}

/// The steps the bench report times are those of a hit: they find the entry a compile stored,
/// and not once it is damaged.
#[test]
fn the_timed_steps_of_a_hit_find_the_entry_and_not_a_damaged_one() {
    let dir = temp_dir("steps");
    let stored = module(&dir).compile_report().unwrap();
    assert_eq!(stored.status, CacheStatus::Miss);
    let lookup = SourceModule::new(SOURCE).arch("sm_90");
    let steps = gpu_runtime::__testing::hit_steps(&lookup, &dir).unwrap();
    assert!(steps.hit, "{steps:?}");
    for us in [steps.key_us, steps.read_us, steps.checks_us, steps.identity_us] {
        assert!(us.is_finite() && us >= 0.0, "{steps:?}");
    }
    let entry = stored.entry.unwrap();
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&entry, &bytes).unwrap();
    let damaged = gpu_runtime::__testing::hit_steps(&lookup, &dir).unwrap();
    assert!(!damaged.hit, "{damaged:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// NVRTC found by the loader past `LD_LIBRARY_PATH`, as through `/etc/ld.so.cache` on a system
/// install (here preloaded, `LD_PRELOAD`, which `dlopen` finds by its name the same way: not
/// along the path): the search finds no file, so the first process loads NVRTC, and its entry
/// stores the file it loaded with the stamps of what the search saw; a new process with the
/// same `LD_LIBRARY_PATH` then hits without searching or loading NVRTC. Another
/// `LD_LIBRARY_PATH`, or a file added to a directory of the path, loads NVRTC again (and
/// stores again), never serving another entry; an unset `LD_LIBRARY_PATH` hits the same way.
/// (NVRTC is mapped in every process here, preloaded: the worker says whether it was asked.)
#[test]
#[cfg(target_os = "linux")]
fn a_hit_loads_no_nvrtc_when_the_loader_finds_it_past_the_search_path() {
    let usual = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    let Some(real) = std::env::split_paths(&usual)
        .flat_map(|d| ["libnvrtc.so.13", "libnvrtc.so"].map(|n| d.join(n)))
        .find_map(|p| std::fs::canonicalize(p).ok())
    else {
        panic!("NVRTC is not on LD_LIBRARY_PATH ({usual}): source scripts/nvrtc-env.sh");
    };
    let dir = temp_dir("past-path");
    let cache = dir.join("cache");
    let (empty, other) = (dir.join("empty"), dir.join("other"));
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let run = |lib_path: &Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cache_worker"));
        c.arg(&cache)
            .env("LD_LIBRARY_PATH", lib_path)
            .env("LD_PRELOAD", &real)
            .env_remove("GPU_RUNTIME_DISABLE_CACHE")
            .env_remove("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS");
        worker_output(c)
    };
    let first = run(&empty);
    assert_eq!(field(&first, "status"), "Miss", "{first}");
    let hit = run(&empty);
    assert_eq!(field(&hit, "status"), "Hit", "{hit}");
    assert_eq!(field(&hit, "key"), field(&first, "key"));
    assert_eq!(field(&hit, "nvrtc_asked"), "false", "a hit needs no NVRTC: {hit}");
    assert_eq!(field(&hit, "bytes"), field(&first, "bytes"));
    // The bench report's timed steps of a hit take the same way.
    let mut c = Command::new(env!("CARGO_BIN_EXE_cache_worker"));
    c.arg(&cache)
        .arg("steps")
        .env("LD_LIBRARY_PATH", &empty)
        .env("LD_PRELOAD", &real)
        .env_remove("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS");
    let steps = worker_output(c);
    assert_eq!(field(&steps, "steps_hit"), "true", "{steps}");
    assert_eq!(field(&steps, "nvrtc_asked"), "false", "{steps}");

    // Another search path has its own entry: NVRTC is loaded, and stored with it.
    let elsewhere = run(&other);
    assert_eq!(field(&elsewhere, "status"), "Miss", "{elsewhere}");
    assert_eq!(field(&elsewhere, "nvrtc_asked"), "true", "{elsewhere}");
    assert_ne!(field(&elsewhere, "key"), field(&first, "key"));
    let again = run(&other);
    assert_eq!(field(&again, "status"), "Hit", "{again}");
    assert_eq!(field(&again, "nvrtc_asked"), "false", "{again}");

    // A file added to a directory of the path (where a search could now find NVRTC) fails the
    // entry's check: the search runs, finds none, NVRTC is loaded and the entry stored again.
    std::fs::write(empty.join("libother.so"), b"not nvrtc").unwrap();
    let changed = run(&empty);
    assert_eq!(field(&changed, "status"), "Replaced", "{changed}");
    assert_eq!(field(&changed, "key"), field(&first, "key"));
    assert_eq!(field(&changed, "nvrtc_asked"), "true", "{changed}");
    let settled = run(&empty);
    assert_eq!(field(&settled, "status"), "Hit", "{settled}");
    assert_eq!(field(&settled, "nvrtc_asked"), "false", "stored again: {settled}");
    // No LD_LIBRARY_PATH at all is the empty path to the loader: remembered the same way.
    let unset = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cache_worker"));
        c.arg(&cache)
            .env_remove("LD_LIBRARY_PATH")
            .env("LD_PRELOAD", &real)
            .env_remove("GPU_RUNTIME_DISABLE_CACHE")
            .env_remove("GPU_RUNTIME_DEFAULT_NVRTC_FLAGS");
        worker_output(c)
    };
    let unset_first = unset();
    assert_eq!(field(&unset_first, "nvrtc_asked"), "true", "{unset_first}");
    let unset_hit = unset();
    assert_eq!(field(&unset_hit, "status"), "Hit", "{unset_hit}");
    assert_eq!(field(&unset_hit, "key"), field(&unset_first, "key"));
    assert_eq!(field(&unset_hit, "nvrtc_asked"), "false", "{unset_hit}");
    let _ = std::fs::remove_dir_all(&dir);
}
