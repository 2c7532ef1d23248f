//! Compile and cache costs, in one run:
//! - cold compile: `SourceModule::compile_report` of a never-seen source (NVRTC, plus the cache
//!   lookup and store) against a bare NVRTC compile (`gpu_runtime::compile`) of a text of the
//!   same shape, taking turns going first;
//! - disk-cache hit in a fresh process: this binary re-runs itself with `--hit DIR`, and each
//!   child times `SourceModule::load` + `get_function` (module ready to launch) after creating
//!   its context;
//! - in-process `prepare` of an already prepared `#[kernel]`, and `SourceModule::load` of an
//!   already loaded source.
//!
//! Run on a GPU machine: `cargo bench --bench compile`.

use std::process::Command;
use std::time::{Duration, Instant};

use gpu_runtime::{kernel, CacheStatus, Context, SourceModule, Target};

#[kernel(
    r#"
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"#
)]
fn axpy(a: f32, #[In] x: &[f32], #[InOut] y: &mut [f32], n: i32);

fn source(nonce: u64) -> String {
    format!(
        "__global__ void saxpy_{nonce}(float a, const float *x, float *y, int n) {{\n\
         int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
         if (i < n) y[i] = a * x[i] + y[i] + {nonce}.0f;\n}}\n"
    )
}

const HIT_SOURCE_NONCE: u64 = 7;

fn child_hit(dir: &str) -> Result<(), Box<dyn std::error::Error>> {
    let ctx = Context::default()?;
    let start = Instant::now();
    let module = SourceModule::new(source(HIT_SOURCE_NONCE))
        .cache_dir(Some(dir))
        .load(&ctx)?;
    let f = module.get_function(&format!("saxpy_{HIT_SOURCE_NONCE}"))?;
    let t = start.elapsed();
    assert!(f.max_threads_per_block()? > 0);
    println!(
        "hit_us={:.1} status={:?}",
        t.as_secs_f64() * 1e6,
        module.cache_status().unwrap()
    );
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--hit") {
        return child_hit(&args[i + 1]);
    }
    let ctx = match Context::default() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("compile bench skipped: {e}");
            std::process::exit(1);
        }
    };
    let cc = ctx.compute_capability();
    let target = Target::for_device(cc)?;
    let arch = match target {
        Target::Cubin { major, minor } => format!("sm_{major}{minor}"),
        Target::Ptx { major, minor } => format!("compute_{major}{minor}"),
    };
    let dir = std::env::temp_dir().join(format!("gpu-runtime-compile-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let nonce0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos() as u64
        % 1_000_000_000
        + 1000;

    // Cold compiles, interleaved with bare NVRTC compiles of the same text.
    let rounds = 12;
    let (mut ours, mut bare) = (Vec::new(), Vec::new());
    for r in 0..rounds {
        // Each side compiles its own never-seen text of the same shape, and the two take
        // turns going first, so that neither gains from order or from a warm NVRTC.
        let (src_bare, src_ours) = (source(nonce0 + 2 * r), source(nonce0 + 2 * r + 1));
        let m = SourceModule::new(src_ours)
            .arch(arch.clone())
            .cache_dir(Some(&dir));
        let wrapped = format!("extern \"C\" {{\n#line 1 \"kernel.cu\"\n{src_bare}\n}}\n");
        let time_bare = || -> Result<Duration, gpu_runtime::Error> {
            let t = Instant::now();
            gpu_runtime::compile(&wrapped, "kernel.cu", &[], &[], target)?;
            Ok(t.elapsed())
        };
        let time_ours = || -> Result<Duration, gpu_runtime::Error> {
            let t = Instant::now();
            let report = m.compile_report()?;
            let d = t.elapsed();
            assert_eq!(report.status, CacheStatus::Miss);
            Ok(d)
        };
        let (t_bare, t_ours) = if r % 2 == 0 {
            let b = time_bare()?;
            (b, time_ours()?)
        } else {
            let o = time_ours()?;
            (time_bare()?, o)
        };
        if r > 1 {
            ours.push(t_ours);
            bare.push(t_bare);
        }
    }
    let (cold, bare) = (median(ours), median(bare));

    // Warm the entry the children hit, then time fresh processes.
    let warm = SourceModule::new(source(HIT_SOURCE_NONCE))
        .cache_dir(Some(&dir))
        .load(&ctx)?;
    assert!(matches!(
        warm.cache_status(),
        Some(CacheStatus::Miss | CacheStatus::Hit)
    ));
    let exe = std::env::current_exe()?;
    let mut hits = Vec::new();
    for _ in 0..7 {
        let out = Command::new(&exe).arg("--hit").arg(&dir).output()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() || !text.contains("status=Hit") {
            return Err(format!("child failed: {text}{}", String::from_utf8_lossy(&out.stderr)).into());
        }
        let us: f64 = text
            .split_whitespace()
            .find_map(|f| f.strip_prefix("hit_us="))
            .ok_or("no hit_us")?
            .parse()?;
        hits.push(us);
    }
    hits.sort_by(f64::total_cmp);
    let hit_median = hits[hits.len() / 2];

    // In-process: the macro's prepare of a prepared kernel, and a repeated SourceModule load.
    axpy::prepare(&ctx)?;
    let n = 200_000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(axpy::prepare(&ctx)?);
    }
    let prepare_ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
    let loaded = SourceModule::new(source(HIT_SOURCE_NONCE)).cache_dir(Some(&dir));
    let n2 = 20_000;
    let t = Instant::now();
    for _ in 0..n2 {
        std::hint::black_box(loaded.load(&ctx)?);
    }
    let reload_us = t.elapsed().as_secs_f64() * 1e6 / n2 as f64;
    let _ = std::fs::remove_dir_all(&dir);

    println!("GPU: {} ({arch})", ctx.device().name()?);
    println!(
        "cold compile, SourceModule (NVRTC + cache store), median of {}: {:9.3} ms",
        rounds - 2,
        cold.as_secs_f64() * 1e3
    );
    println!(
        "cold compile, bare NVRTC (same-shape text),       median of {}: {:9.3} ms",
        rounds - 2,
        bare.as_secs_f64() * 1e3
    );
    println!(
        "ratio cold SourceModule / bare NVRTC: {:.3} (target <= 1.2)",
        cold.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "disk-cache hit in a fresh process (load + get_function), median of {}: {:.1} us (all: {:?}) (target <= 500 us)",
        hits.len(),
        hit_median,
        hits
    );
    println!("in-process #[kernel] prepare of a prepared kernel: {prepare_ns:.1} ns (target <= 1000 ns)");
    println!("in-process SourceModule::load of a loaded source: {reload_us:.2} us");
    Ok(())
}
