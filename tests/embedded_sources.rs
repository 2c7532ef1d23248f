//! A `#[kernel]`'s source and its local headers travel inside the binary (issue 42, parts 1, 5
//! and 8): the program compiles its kernels from what the build read, wherever it runs, and
//! names no directory of the machine that built it.
//!
//! The tests that prove it run this test binary again as a child, copied into a temporary
//! directory, started there, with the kernel folders of the source tree moved away for the
//! child's run (`Hidden`), without `CARGO_MANIFEST_DIR`, and with the compile cache off: a
//! kernel that compiles in the child compiled from the bytes in the binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use gpu_runtime::compiler::Target;
use gpu_runtime::{kernel, Context, SourceModule};
use gpu_suite::{assert_close, Rng};

mod common;
use common::ctx;

// Headers beside the file, beside that header (in a subfolder) and in an include directory.
// `embed = []`: compiled at run time even where the build ships PTX by default, since that is
// what these tests are about.
#[kernel(
    file = "embedded/kernels/stencil.cu",
    include_dirs = ["embedded/include"],
    embed = []
)]
fn stencil(#[In] x: &[f32], #[Out] y: &mut [f32], n: i32);

// candle's binary.cu, included by an inline source named like it (`mod binary`, the file
// `binary.cu`): the inline source is `<inline:binary>`, so the include does not reach itself.
// The prototypes name kernels that candle's macros stamp out (a declaration reader that does
// not expand macros finds them here; one that does finds them either way).
#[kernel(
    r#"#include "binary.cu"
extern "C" __global__ void badd_f32(const size_t numel, const size_t num_dims, const size_t *dims_and_strides, const float *lhs, const float *rhs, float *out);
extern "C" __global__ void bmul_f64(const size_t numel, const size_t num_dims, const size_t *dims_and_strides, const double *lhs, const double *rhs, double *out);
"#,
    include_dirs = ["realworld/candle"],
    embed = []
)]
mod binary {
    fn badd_f32(
        numel: usize,
        num_dims: usize,
        #[In] info: &[usize],
        #[In] lhs: &[f32],
        #[In] rhs: &[f32],
        #[Out] out: &mut [f32],
    );
    fn bmul_f64(
        numel: usize,
        num_dims: usize,
        #[In] info: &[usize],
        #[In] lhs: &[f64],
        #[In] rhs: &[f64],
        #[Out] out: &mut [f64],
    );
}

/// Set in a child: the test it is to run.
const CHILD: &str = "GPU_SUITE_EMBEDDED_CHILD";
/// Set in a child: the folders the parent moved away, `:`-separated (checked to be gone).
const HIDDEN: &str = "GPU_SUITE_HIDDEN_DIRS";
/// Set in a child: the `SCALE` the stencil is to compute with.
const EXPECT_SCALE: &str = "GPU_SUITE_EXPECT_SCALE";

/// The suite's folder (tests/, the gpu-suite package's root, which the kernel paths are relative
/// to): `CARGO_MANIFEST_DIR` as cargo sets it for a test's run (read at run time: `env!` would
/// write the path into this binary, which one test looks for), else `tests/` of the folder above
/// this executable that holds `tests/Cargo.toml`.
fn source_root() -> PathBuf {
    if let Some(d) = std::env::var_os("CARGO_MANIFEST_DIR") {
        return d.into();
    }
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .find(|d| d.join("tests/Cargo.toml").is_file())
        .expect("run through cargo, or from the target directory of the source tree")
        .join("tests")
}

/// Folders of the source tree moved aside while a child runs, put back when dropped (and, if a
/// run was killed before, at the next start). One at a time in this process.
struct Hidden {
    moved: Vec<(PathBuf, PathBuf)>,
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

static HIDING: Mutex<()> = Mutex::new(());

fn aside(dir: &Path) -> PathBuf {
    let name = dir.file_name().unwrap().to_string_lossy();
    dir.with_file_name(format!("{name}.hidden-by-embedded-sources-test"))
}

impl Hidden {
    fn new(dirs: &[PathBuf]) -> Hidden {
        let guard = HIDING.lock().unwrap_or_else(|p| p.into_inner());
        let mut moved = Vec::new();
        for dir in dirs {
            let to = aside(dir);
            if !dir.exists() && to.exists() {
                // Left aside by a run that was killed: put back first.
                std::fs::rename(&to, dir).unwrap();
            }
            std::fs::rename(dir, &to).unwrap_or_else(|e| panic!("moving {} aside: {e}", dir.display()));
            moved.push((dir.clone(), to));
        }
        Hidden {
            moved,
            _one_at_a_time: guard,
        }
    }
}

impl Drop for Hidden {
    fn drop(&mut self) {
        for (dir, to) in &self.moved {
            let _ = std::fs::rename(to, dir);
        }
    }
}

/// Runs `test` in a child: this executable copied into a fresh temporary directory and
/// started there, without `CARGO_MANIFEST_DIR` or `GPU_RUNTIME_SOURCE_DIR` (unless in `vars`),
/// with the compile cache and the driver's JIT cache off. Panics with its output unless it
/// passed.
fn run_child(test: &str, vars: &[(&str, String)]) {
    let dir = std::env::temp_dir().join(format!("gpu-suite-embedded-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("moved-test-binary");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    let out = Command::new(&exe)
        .args([
            test,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .current_dir(&dir)
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove(gpu_runtime::compiler::SOURCE_DIR_VAR)
        .env("GPU_RUNTIME_DISABLE_CACHE", "1")
        .env("CUDA_CACHE_DISABLE", "1")
        .env(CHILD, test)
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "the child `{test}` failed:\n{text}"
    );
}

/// In the child: the folders the parent moved away are not there.
fn assert_hidden() {
    let dirs = std::env::var(HIDDEN).expect("the parent names the folders it moved");
    for d in dirs.split(':') {
        assert!(
            !Path::new(d).exists(),
            "{d} is still there: the test would prove nothing"
        );
    }
}

fn in_child(test: &str) -> bool {
    std::env::var(CHILD).as_deref() == Ok(test)
}

/// The kernel folders of the source tree this file's kernels read at build time.
fn kernel_dirs() -> Vec<PathBuf> {
    let root = source_root();
    vec![root.join("embedded"), root.join("realworld/candle")]
}

fn hide_and_run(test: &str, vars: &[(&str, String)]) {
    let dirs = kernel_dirs();
    let _hidden = Hidden::new(&dirs);
    let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let mut vars = vars.to_vec();
    vars.push((HIDDEN, names.join(":")));
    run_child(test, &vars);
}

#[test]
fn the_file_and_its_headers_are_in_the_binary_by_include_name() {
    let source = stencil::source();
    assert_eq!(source.name(), "stencil.cu");
    let names: Vec<&str> = source.headers().iter().map(|h| h.name()).collect();
    assert_eq!(
        names,
        ["stencil_ops.cuh", "embedded/consts.h", "detail/clamp.cuh"]
    );
    assert!(source.options().is_empty(), "no -I: {:?}", source.options());
    let on_disk = source.on_disk().unwrap();
    assert_eq!(on_disk.package(), "gpu-suite");
    assert_eq!(on_disk.file(), Some("embedded/kernels/stencil.cu"));
    assert_eq!(on_disk.include_dirs(), ["embedded/include"]);
    // candle's headers, reached through the inline source's include of binary.cu.
    let source = binary::badd_f32::source();
    assert_eq!(source.name(), "<inline:binary>");
    let names: Vec<&str> = source.headers().iter().map(|h| h.name()).collect();
    assert_eq!(
        names,
        [
            "binary.cu",
            "binary_op_macros.cuh",
            "cuda_utils.cuh",
            "compatibility.cuh"
        ]
    );
}

/// NVRTC compiles the source from the binary alone: run in a child started elsewhere, with
/// the kernel folders moved away. Needs NVRTC, not a GPU.
#[test]
fn the_source_compiles_with_its_folders_out_of_reach() {
    const TEST: &str = "the_source_compiles_with_its_folders_out_of_reach";
    if !in_child(TEST) {
        return hide_and_run(TEST, &[]);
    }
    assert_hidden();
    let target = Target::Ptx { major: 8, minor: 0 };
    let compiled = stencil::source().compile(target).unwrap();
    assert_eq!(compiled.lowered_names, ["stencil"]);
    // The same compile as `prepare`'s, through SourceModule (and its cache key).
    SourceModule::from_static(stencil::source())
        .arch("compute_80")
        .no_cache()
        .compile()
        .unwrap();
    // candle's 96 kernels, from the binary's copy of binary.cu and its three headers.
    let compiled = binary::badd_f32::source().compile(target).unwrap();
    assert_eq!(compiled.lowered_names, ["badd_f32", "bmul_f64"]);
}

/// What the program loads holds no path of the source tree: not the kernel file's folder, not
/// an include directory (`-I` options are gone), though it holds their headers' text. (Debug
/// information, which is not loaded, names the directory the build ran in, as in any Rust
/// program built with it; `strip` or `--remap-path-prefix` removes that.)
#[cfg(target_os = "linux")]
#[test]
fn no_path_of_the_source_tree_is_in_what_the_program_loads() {
    // The repository's root, above the suite's folder: no path under it at all.
    let root = source_root();
    let root = root.parent().unwrap_or(&root).to_string_lossy().into_owned();
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let loaded = loaded_sections(&exe);
    assert!(!loaded.is_empty(), "no loaded section found: not an ELF64 file?");
    let find = |needle: &[u8]| {
        loaded
            .iter()
            .any(|s| s.windows(needle.len()).any(|w| w == needle))
    };
    // The scan sees what it must: the text of a header, and of a file name.
    assert!(
        find(b"clamp_index(i - 1, n)"),
        "the header's text is not in the binary"
    );
    assert!(find(b"detail/clamp.cuh"));
    assert!(
        !find(root.as_bytes()),
        "{root} is in a loaded section of this binary"
    );
}

/// The contents of an ELF64 little-endian file's sections that are loaded (`SHF_ALLOC`) and
/// have bytes in the file.
#[cfg(target_os = "linux")]
fn loaded_sections(elf: &[u8]) -> Vec<&[u8]> {
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap()) as usize;
    if elf.len() < 64 || &elf[..4] != b"\x7fELF" || elf[4] != 2 || elf[5] != 1 {
        return Vec::new();
    }
    let (shoff, shentsize, shnum) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c));
    const SHF_ALLOC: usize = 2;
    const SHT_NOBITS: u32 = 8;
    (0..shnum)
        .map(|i| shoff + i * shentsize)
        .filter(|&h| u64_at(h + 8) & SHF_ALLOC != 0 && u32_at(h + 4) != SHT_NOBITS)
        .map(|h| {
            let (off, size) = (u64_at(h + 0x18), u64_at(h + 0x20));
            &elf[off..off + size]
        })
        .collect()
}

/// The stencil on random data against the CPU, with `scale` for the header's `SCALE`.
fn check_stencil(ctx: &Context, scale: f32) {
    let n = 10_007;
    let x = Rng::new(42).vec_f32(n);
    let mut y = vec![0.0f32; n];
    stencil(ctx, (n as u32).div_ceil(256), 256, &x, &mut y, n as i32).unwrap();
    let at = |i: isize| x[i.clamp(0, n as isize - 1) as usize];
    let want: Vec<f32> = (0..n as isize)
        .map(|i| scale * (0.25 * at(i - 1) + 0.5 * at(i) + 0.25 * at(i + 1)) + 0.5)
        .collect();
    assert_close(&y, &want, 1e-5);
}

/// candle's `badd_f32` with a transposed right-hand side and `bmul_f64` with a broadcast one,
/// launched as candle launches them (`info` = dims, then each side's strides).
fn check_candle(ctx: &Context) {
    let (rows, cols) = (37usize, 53usize);
    let n = rows * cols;
    let mut rng = Rng::new(43);
    let lhs = rng.vec_f32(n);
    let rhs_t = rng.vec_f32(n); // stored cols x rows, read transposed
    let info = [rows, cols, cols, 1, 1, rows];
    let mut out = vec![0.0f32; n];
    let k = binary::badd_f32::prepare(ctx).unwrap();
    k.call(n.div_ceil(256) as u32, 256, n, 2, &info, &lhs, &rhs_t, &mut out)
        .unwrap();
    let want: Vec<f32> = (0..n)
        .map(|i| lhs[i] + rhs_t[(i % cols) * rows + i / cols])
        .collect();
    assert_close(&out, &want, 1e-6);

    let lhs: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
    let row: Vec<f64> = (0..cols).map(|_| rng.f64()).collect(); // broadcast over rows
    let info = [rows, cols, cols, 1, 0, 1];
    let mut out = vec![0.0f64; n];
    binary::bmul_f64::prepare(ctx)
        .unwrap()
        .call(n.div_ceil(256) as u32, 256, n, 2, &info, &lhs, &row, &mut out)
        .unwrap();
    for i in 0..n {
        let want = lhs[i] * row[i % cols];
        assert!(
            (out[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{i}: {} vs {want}",
            out[i]
        );
    }
}

/// `prepare` compiles the kernels from the binary's copies and they compute right, in a child
/// started elsewhere with the kernel folders moved away and no cache.
#[test]
#[ignore = "needs a CUDA GPU"]
fn kernels_prepared_with_the_source_tree_out_of_reach_compute_right() {
    const TEST: &str = "kernels_prepared_with_the_source_tree_out_of_reach_compute_right";
    if !in_child(TEST) {
        return hide_and_run(TEST, &[]);
    }
    assert_hidden();
    let ctx = ctx();
    check_stencil(&ctx, 2.0);
    check_candle(&ctx);
}

/// `GPU_RUNTIME_SOURCE_DIR=gpu-suite=<root>` compiles the files under `<root>` as they are now
/// (here a copy whose header says `SCALE 3.0f`), not the copies in the binary.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_source_dir_variable_compiles_the_files_on_disk() {
    const TEST: &str = "the_source_dir_variable_compiles_the_files_on_disk";
    if in_child(TEST) {
        let scale: f32 = std::env::var(EXPECT_SCALE).unwrap().parse().unwrap();
        return check_stencil(&ctx(), scale);
    }
    let copy = std::env::temp_dir().join(format!("gpu-suite-source-dir-{}", std::process::id()));
    let from = source_root().join("embedded");
    for entry in [
        "kernels/stencil.cu",
        "kernels/stencil_ops.cuh",
        "kernels/detail/clamp.cuh",
        "include/embedded/consts.h",
    ] {
        let to = copy.join("embedded").join(entry);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from.join(entry), &to).unwrap();
    }
    let consts = copy.join("embedded/include/embedded/consts.h");
    let text = std::fs::read_to_string(&consts).unwrap();
    std::fs::write(&consts, text.replace("SCALE 2.0f", "SCALE 3.0f")).unwrap();
    run_child(
        TEST,
        &[
            (
                gpu_runtime::compiler::SOURCE_DIR_VAR,
                format!("gpu-suite={}", copy.display()),
            ),
            (EXPECT_SCALE, "3".to_owned()),
        ],
    );
    // Without the variable, the binary's copy: SCALE 2.
    run_child(TEST, &[(EXPECT_SCALE, "2".to_owned())]);
    std::fs::remove_dir_all(&copy).unwrap();
}
