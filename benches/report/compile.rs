//! Compile and cache costs: a cold compile, a disk-cache hit in a new process, and `prepare`
//! of an already prepared kernel, each next to the raw way.

use std::process::Command;
use std::time::{Duration, Instant};

use gpu_runtime::compiler::{CacheStatus, Target};
use gpu_runtime::cudarc::driver::{sys, CudaContext};
use gpu_runtime::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use gpu_runtime::{Context, SourceModule};

use crate::table::Row;
use crate::{axpy, ok};

/// A kernel text no cache has seen, for a cold compile.
fn source(nonce: u64) -> String {
    format!(
        "extern \"C\" __global__ void saxpy_{nonce}(float a, const float *x, float *y, int n) {{\n\
         int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
         if (i < n) y[i] = a * x[i] + y[i] + {nonce}.0f;\n}}\n"
    )
}

// candle's binary.cu (96 kernels stamped out by macros; tests/realworld/candle/), for the cold
// first `prepare` of one of its kernels. Without `embed`: built on a machine with a GPU, the
// build ships PTX for it by default (the figure measured); built without one, nothing (the row
// says so and is left out). The prototype names a macro-made kernel for the declaration reader.
#[gpu_runtime::kernel(
    r#"#include "binary.cu"
extern "C" __global__ void badd_f32(const size_t numel, const size_t num_dims, const size_t *dims_and_strides, const float *lhs, const float *rhs, float *out);
"#,
    include_dirs = ["realworld/candle"]
)]
mod candle_binary {
    fn badd_f32(numel: usize, num_dims: usize, info: &[usize], lhs: &[f32], rhs: &[f32], out: &mut [f32]);
}

/// Rounds of the cold first `prepare` of candle's `badd_f32`, each side in a new process: a
/// run-time compile of the file takes seconds.
const COLD_ROUNDS: usize = 3;

const HIT_NONCE: u64 = 7;
/// Rounds of the disk-cache hit, each a new process of ours and of the raw way: a new process's
/// timing spreads widely (0.8x to 2.4x within one run of nine rounds on an H100), so the
/// median needs more rounds than an in-process figure to settle.
const HIT_ROUNDS: usize = 21;
/// Set in a child process: `ours:DIR`, `key:ARCH:DIR` (the compile side of a hit only: key
/// and entry, no context), `steps:ARCH:DIR` (the same step by step, after creating a context
/// as a hit does, then all of it once more), `raw:CUBIN_FILE`, `read:CUBIN_FILE` (the file
/// read only, then once more) or `ctxread:CUBIN_FILE` (the same after creating a context).
pub const CHILD_ENV: &str = "GPU_BENCH_REPORT_CHILD";

/// Page faults this process has taken so far, minor (a page already in memory, mapped at its
/// first touch) and major (read from disk).
fn faults() -> f64 {
    // SAFETY: an all-zero `rusage` is a valid value; getrusage only writes it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer; RUSAGE_SELF cannot fail.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    (usage.ru_minflt + usage.ru_majflt) as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The child's side: times one module load ready to launch, after creating its context.
pub fn child(mode: &str) -> Result<(), Box<dyn std::error::Error>> {
    let name = format!("saxpy_{HIT_NONCE}");
    // The source text is the program's (a literal, usually): made before the timer starts, as
    // the raw side's cubin file is, so that the harness's formatting is not timed as the hit's.
    let text = source(HIT_NONCE);
    if mode == "shipped" || mode == "nvrtc" {
        // The cold first `prepare` of one kernel of a 96-kernel file, ready to launch (its
        // attributes read: CUDA's lazy loading defers loading a kernel until then): from the
        // PTX shipped in the binary, or compiled at run time (the run-time path of `prepare`,
        // without the cache). The parent turned the driver's JIT cache off.
        let ctx = Context::default()?;
        let source = candle_binary::badd_f32::source();
        let t = Instant::now();
        let threads = if mode == "shipped" {
            if gpu_runtime::compiler::pick_embedded(source.images(), ctx.compute_capability()).is_none() {
                return Err("no PTX shipped for this device".into());
            }
            candle_binary::badd_f32::prepare(&ctx)?
                .function()
                .max_threads_per_block()?
        } else {
            SourceModule::from_static(source)
                .no_cache()
                .load(&ctx)?
                .get_function("badd_f32")?
                .max_threads_per_block()?
        };
        let us = t.elapsed().as_secs_f64() * 1e6;
        if threads == 0 {
            return Err("the kernel did not load".into());
        }
        println!("us={us}");
    } else if let Some(dir) = mode.strip_prefix("ours:") {
        let ctx = Context::default()?;
        let faults_before = faults();
        let t = Instant::now();
        let module = SourceModule::new(text).cache_dir(Some(dir)).load(&ctx)?;
        let loaded = t.elapsed();
        let f = module.get_function(&name)?;
        let all = t.elapsed();
        let faults = faults() - faults_before;
        if module.cache_status() != Some(CacheStatus::Hit) || f.max_threads_per_block()? == 0 {
            return Err("the child missed the cache".into());
        }
        // The whole hit, its part up to the module loaded (the rest is the lookup), and the
        // page faults it took.
        println!(
            "us={},{},{faults}",
            all.as_secs_f64() * 1e6,
            loaded.as_secs_f64() * 1e6
        );
    } else if let Some((arch, dir)) = mode.strip_prefix("key:").and_then(|m| m.split_once(':')) {
        let t = Instant::now();
        let report = SourceModule::new(text)
            .arch(arch)
            .cache_dir(Some(dir))
            .compile_report()?;
        let us = t.elapsed().as_secs_f64() * 1e6;
        if report.status != CacheStatus::Hit {
            return Err("the child missed the cache".into());
        }
        println!("us={us}");
    } else if let Some((arch, dir)) = mode.strip_prefix("steps:").and_then(|m| m.split_once(':')) {
        // A hit follows its context's creation, which has run (and so mapped and cached) much
        // of the code and heap a process uses: without it, each step costs more.
        let _ctx = Context::default()?;
        let module = SourceModule::new(text.clone()).arch(arch);
        let steps = gpu_runtime::__testing::hit_steps(&module, std::path::Path::new(dir))?;
        // Once more, warm: what the steps cost besides their code's and data's first use.
        let module = SourceModule::new(text).arch(arch);
        let again = gpu_runtime::__testing::hit_steps(&module, std::path::Path::new(dir))?;
        if !steps.hit || !again.hit {
            return Err("the child missed the cache".into());
        }
        // In the order of a hit, which is the order of the report's step rows; then the four
        // again, all told.
        println!(
            "us={},{},{},{},{}",
            steps.key_us,
            steps.read_us,
            steps.checks_us,
            steps.identity_us,
            again.key_us + again.read_us + again.checks_us + again.identity_us
        );
    } else if let Some((with_context, file)) = mode
        .strip_prefix("read:")
        .map(|f| (false, f))
        .or_else(|| mode.strip_prefix("ctxread:").map(|f| (true, f)))
    {
        let _ctx = if with_context {
            let cctx = CudaContext::new(0)?;
            cctx.bind_to_thread()?;
            Some(cctx)
        } else {
            None
        };
        let t = Instant::now();
        let image = std::hint::black_box(std::fs::read(file)?);
        let first = t.elapsed();
        drop(image);
        let t = Instant::now();
        let image = std::hint::black_box(std::fs::read(file)?);
        let again = t.elapsed();
        drop(image);
        println!("us={},{}", first.as_secs_f64() * 1e6, again.as_secs_f64() * 1e6);
    } else if let Some(file) = mode.strip_prefix("raw:") {
        // What a hand-made cache does: read the cubin file, load it, look the kernel up.
        let cctx = CudaContext::new(0)?;
        cctx.bind_to_thread()?;
        let faults_before = faults();
        let t = Instant::now();
        let image = std::fs::read(file)?;
        let mut module = std::ptr::null_mut();
        let mut f = std::ptr::null_mut();
        let c_name = std::ffi::CString::new(name)?;
        // SAFETY: a complete cubin; valid out-pointers; the context is current.
        ok(unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr().cast()) });
        let loaded = t.elapsed();
        // SAFETY: as above; `module` was just loaded.
        ok(unsafe { sys::cuModuleGetFunction(&mut f, module, c_name.as_ptr()) });
        let all = t.elapsed();
        let faults = faults() - faults_before;
        println!(
            "us={},{},{faults}",
            all.as_secs_f64() * 1e6,
            loaded.as_secs_f64() * 1e6
        );
    }
    Ok(())
}

fn run_child(mode: String) -> Result<f64, Box<dyn std::error::Error>> {
    Ok(run_child_figures(mode)?[0])
}

/// The figures a hit's child printed: the whole hit, its part up to the module loaded, and the
/// page faults it took.
fn hit_figures(mode: String) -> Result<(f64, f64, f64), Box<dyn std::error::Error>> {
    match run_child_figures(mode)?[..] {
        [all, loaded, faults] => Ok((all, loaded, faults)),
        _ => Err("a hit's child printed other than three figures".into()),
    }
}

/// The figures a child printed (`us=a,b,...`).
fn run_child_figures(mode: String) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    let mut command = Command::new(std::env::current_exe()?);
    if mode == "shipped" || mode == "nvrtc" {
        // The cold first prepare compiles, or JIT-compiles the PTX, every time.
        command.env("CUDA_CACHE_DISABLE", "1");
    }
    let out = command.env(CHILD_ENV, mode).output()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!("child failed: {text}{}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let figures = text.trim().strip_prefix("us=").ok_or("child printed no time")?;
    Ok(figures
        .split(',')
        .map(str::parse)
        .collect::<Result<Vec<f64>, _>>()?)
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let (major, minor) = ctx.compute_capability();
    let dir = std::env::temp_dir().join(format!("gpu-runtime-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let nonce0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos() as u64
        % 1_000_000_000
        + 1000;

    // Cold compiles to PTX, ours (NVRTC + cache lookup and store) and cudarc's, each of its own
    // never-seen text, taking turns going first.
    let ptx_arch = format!("compute_{major}{minor}");
    // cudarc takes the architecture as a &'static str.
    let raw_arch: &'static str = Box::leak(ptx_arch.clone().into_boxed_str());
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for r in 0..12u64 {
        let (src_raw, src_ours) = (source(nonce0 + 2 * r), source(nonce0 + 2 * r + 1));
        let time_ours = || -> Result<Duration, Box<dyn std::error::Error>> {
            let t = Instant::now();
            let report = SourceModule::new(src_ours.clone())
                .no_extern_c(true)
                .arch(ptx_arch.clone())
                .cache_dir(Some(&dir))
                .compile_report()?;
            let d = t.elapsed();
            assert_eq!(report.status, CacheStatus::Miss);
            Ok(d)
        };
        let time_raw = || -> Result<Duration, Box<dyn std::error::Error>> {
            let t = Instant::now();
            let opts = CompileOptions {
                arch: Some(raw_arch),
                ..Default::default()
            };
            compile_ptx_with_opts(src_raw.clone(), opts)?;
            Ok(t.elapsed())
        };
        let (o, w) = if r % 2 == 0 {
            let w = time_raw()?;
            (time_ours()?, w)
        } else {
            let o = time_ours()?;
            (o, time_raw()?)
        };
        if r > 1 {
            ours.push(o.as_secs_f64() * 1e3);
            raw.push(w.as_secs_f64() * 1e3);
        }
    }

    // Disk-cache hits in new processes: ours from the cache directory, raw from a cubin file.
    let warm = SourceModule::new(source(HIT_NONCE)).cache_dir(Some(&dir));
    warm.load(ctx)?;
    let cubin = SourceModule::new(source(HIT_NONCE))
        .no_extern_c(true)
        .arch(format!("sm_{major}{minor}"))
        .cache_dir(None::<&str>)
        .compile()?;
    let file = dir.join("raw.cubin");
    std::fs::write(&file, &cubin.image)?;
    // The same source with the architecture named: the key of a compile with no device.
    let arch = format!("sm_{major}{minor}");
    SourceModule::new(source(HIT_NONCE))
        .arch(arch.clone())
        .cache_dir(Some(&dir))
        .compile()?;
    let (mut ours_hit, mut raw_hit) = (Vec::new(), Vec::new());
    let (mut ours_key, mut raw_read) = (Vec::new(), Vec::new());
    let (mut ours_load, mut raw_load) = (Vec::new(), Vec::new());
    let (mut ours_lookup, mut raw_lookup) = (Vec::new(), Vec::new());
    let (mut ours_faults, mut raw_faults) = (Vec::new(), Vec::new());
    let (mut ctx_read, mut raw_read_again) = (Vec::new(), Vec::new());
    let mut steps: [Vec<f64>; 5] = Default::default();
    for round in 0..HIT_ROUNDS {
        // Each side goes first in every other round: a new process's cost depends on what ran
        // just before it (the previous child's context teardown, the page cache).
        let ours_mode = format!("ours:{}", dir.display());
        let raw_mode = format!("raw:{}", file.display());
        let ((ours_all, ours_loaded, ours_f), (raw_all, raw_loaded, raw_f)) = if round % 2 == 0 {
            let o = hit_figures(ours_mode)?;
            (o, hit_figures(raw_mode)?)
        } else {
            let r = hit_figures(raw_mode)?;
            (hit_figures(ours_mode)?, r)
        };
        ours_faults.push(ours_f);
        raw_faults.push(raw_f);
        ours_hit.push(ours_all);
        raw_hit.push(raw_all);
        ours_load.push(ours_loaded);
        raw_load.push(raw_loaded);
        ours_lookup.push(ours_all - ours_loaded);
        raw_lookup.push(raw_all - raw_loaded);
        ours_key.push(run_child(format!("key:{arch}:{}", dir.display()))?);
        raw_read.push(run_child(format!("read:{}", file.display()))?);
        match run_child_figures(format!("ctxread:{}", file.display()))?[..] {
            [first, again] => {
                ctx_read.push(first);
                raw_read_again.push(again);
            }
            _ => return Err("the read child printed other than two figures".into()),
        }
        let step = run_child_figures(format!("steps:{arch}:{}", dir.display()))?;
        for (all, one) in steps.iter_mut().zip(step) {
            all.push(one);
        }
    }
    let hit_rounds: Vec<f64> = ours_hit.iter().zip(&raw_hit).map(|(o, r)| o / r).collect();
    // The steps run after a context is made, as in a hit: against the read after one too.
    let read = median(ctx_read);

    // In process: preparing an already prepared kernel vs looking a function up by name.
    axpy::prepare(ctx)?;
    let image = axpy::source().compile(Target::for_device(ctx.compute_capability())?)?;
    let cctx = CudaContext::new(ctx.device().ordinal())?;
    let module = cctx.load_module(gpu_runtime::cudarc::nvrtc::Ptx::from_binary(image.image.clone()))?;
    let n = 200_000;
    let (mut ours_prepare, mut raw_prepare) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(axpy::prepare(ctx)?);
        }
        ours_prepare.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(module.load_function(&image.lowered_names[0])?);
        }
        raw_prepare.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    let prepare_rounds: Vec<f64> = ours_prepare
        .iter()
        .zip(&raw_prepare)
        .map(|(o, r)| o / r)
        .collect();
    let _ = std::fs::remove_dir_all(&dir);

    // The cold first prepare of one of candle's 96 binary kernels: the shipped PTX (loaded and
    // JIT-compiled by the driver) against a run-time compile (NVRTC, cache off), each in new
    // processes, taking turns going first.
    let cc = ctx.compute_capability();
    let shipped =
        gpu_runtime::compiler::pick_embedded(candle_binary::badd_f32::source().images(), cc).is_some();
    let mut cold_rows = Vec::new();
    if shipped {
        let (mut ours_cold, mut raw_cold) = (Vec::new(), Vec::new());
        for round in 0..COLD_ROUNDS {
            let (o, r) = if round % 2 == 0 {
                let o = run_child("shipped".into())?;
                (o, run_child("nvrtc".into())?)
            } else {
                let r = run_child("nvrtc".into())?;
                (run_child("shipped".into())?, r)
            };
            ours_cold.push(o / 1e3);
            raw_cold.push(r / 1e3);
        }
        let rounds = ours_cold.iter().zip(&raw_cold).map(|(o, r)| o / r).collect();
        cold_rows.push(Row {
            figure: "cold first prepare, 1 of 96 kernels (candle binary.cu): PTX shipped at build",
            raw: "the same prepare compiling at run time (NVRTC, cache off)",
            ours: median(ours_cold),
            theirs: median(raw_cold),
            unit: "ms",
            higher_is_better: false,
            target: "issue 42: no recompile of a large file",
            rounds,
        });
    } else {
        eprintln!(
            "bench report: no PTX shipped for compute capability {cc:?} (the bench was built where \
             there is no GPU, or for another one): the row of the cold first prepare of candle's \
             binary.cu is left out"
        );
    }

    let mut rows = vec![
        Row {
            figure: "cold compile to PTX (SourceModule, cached)",
            raw: "cudarc::nvrtc::compile_ptx_with_opts",
            ours: median(ours),
            theirs: median(raw),
            unit: "ms",
            higher_is_better: false,
            target: "<= 1.2x bare NVRTC",
            rounds: Vec::new(),
        },
        Row {
            figure: "disk-cache hit in a new process",
            raw: "read cubin + cuModuleLoadData + GetFunction",
            ours: median(ours_hit),
            theirs: median(raw_hit),
            unit: "us",
            higher_is_better: false,
            target: "<= 1.3x",
            rounds: hit_rounds,
        },
        Row {
            figure: "  of which the module loaded (SourceModule::load)",
            raw: "read cubin + cuModuleLoadData",
            ours: median(ours_load),
            theirs: median(raw_load),
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "  of which the kernel looked up (get_function)",
            raw: "cuModuleGetFunction",
            ours: median(ours_lookup),
            theirs: median(raw_lookup),
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "  page faults taken during the hit (minor and major, getrusage)",
            raw: "read cubin + cuModuleLoadData + GetFunction",
            ours: median(ours_faults),
            theirs: median(raw_faults),
            unit: "faults",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "  of which the compile side: key, entry, NVRTC check (new process, no GPU)",
            raw: "read the cubin file",
            ours: median(ours_key),
            theirs: median(raw_read),
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "    step (after the context is made, as in a hit): the key's material and hash",
            raw: "read the cubin file (after the context is made)",
            ours: median(steps[0].clone()),
            theirs: read,
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "    step: the entry's read (open, owner, read)",
            raw: "read the cubin file",
            ours: median(steps[1].clone()),
            theirs: read,
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "    step: the entry's checks and decode",
            raw: "read the cubin file",
            ours: median(steps[2].clone()),
            theirs: read,
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure:
                "    step: NVRTC's file unchanged (one stat; past the search, a stat more per path dir, +1)",
            raw: "read the cubin file",
            ours: median(steps[3].clone()),
            theirs: read,
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "    the four steps again in the same process (warm: no first use)",
            raw: "read the cubin file again",
            ours: median(steps[4].clone()),
            theirs: median(raw_read_again),
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "prepare of a prepared kernel (in process)",
            raw: "cudarc CudaModule::load_function(name)",
            ours: median(ours_prepare),
            theirs: median(raw_prepare),
            unit: "ns",
            higher_is_better: false,
            target: "<= 1000 ns",
            rounds: prepare_rounds,
        },
    ];
    rows.extend(cold_rows);
    Ok(rows)
}
