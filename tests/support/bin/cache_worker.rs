//! Helper for tests/suite/compile_cache.rs, run as a process of its own.
//!
//! `cache_worker DIR`: compiles one fixed kernel through the compile cache and prints
//! `status=… key=… bytes=… nvrtc_loaded=… nvrtc_asked=…` (whether NVRTC's library is mapped into
//! the process afterwards, on Linux, and whether gpu-runtime asked it for its version: with
//! NVRTC preloaded, it is mapped either way). `DIR` is the cache directory (`-` for the default
//! one); the cache's environment variables are read as any program would.
//!
//! `cache_worker DIR steps`: times the steps of a hit of that kernel in `DIR` (`hit_steps`, as the
//! bench report does) and prints `steps_hit=… nvrtc_asked=…`.
//!
//! `cache_worker DIR hammer ID ROUNDS`: compiles, ROUNDS times, a mix of kernels whose cache
//! entries other workers share (hot keys) and kernels only this worker asks for (cold keys),
//! and checks every image it gets against an uncached compile of the same source. Prints
//! `hammer ok hits=… misses=… replaced=…`, or exits 1 on the first wrong image.

use gpu_runtime::{compiler::CacheStatus, SourceModule};
use gpu_suite::Rng;

pub const SOURCE: &str = "__global__ void twice(float *x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= 2.0f;\n}\n";

/// The `nonce`-th kernel of the hammer: a different source, and so a different key, per nonce.
pub fn hammer_source(nonce: u64) -> String {
    format!(
        "__global__ void scale_{nonce}(float *x, int n) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] *= {nonce}.5f;\n}}\n"
    )
}

/// Hot keys every worker compiles.
pub const HOT_KEYS: u64 = 4;

fn hammer(dir: &str, id: u64, rounds: u64) -> Result<String, String> {
    let mut rng = Rng::new(1000 + id);
    let (mut hits, mut misses, mut replaced) = (0, 0, 0);
    for round in 0..rounds {
        // Three in four compiles go to a shared hot key; the rest to a key of this worker's own.
        let nonce = if !rng.next_u64().is_multiple_of(4) {
            rng.next_u64() % HOT_KEYS
        } else {
            1_000 + id * 1_000 + round
        };
        let src = hammer_source(nonce);
        let cached = SourceModule::new(src.clone())
            .arch("sm_90")
            .cache_dir(Some(dir))
            .compile_report()
            .map_err(|e| format!("nonce {nonce}: {e}"))?;
        match cached.status {
            CacheStatus::Hit => hits += 1,
            CacheStatus::Miss => misses += 1,
            CacheStatus::Replaced => replaced += 1,
            other => return Err(format!("nonce {nonce}: the cache was {other:?}")),
        }
        let fresh = SourceModule::new(src)
            .arch("sm_90")
            .cache_dir(None::<&str>)
            .compile()
            .map_err(|e| format!("nonce {nonce}, uncached: {e}"))?;
        if cached.module.image != fresh.image || cached.module.lowered_names != fresh.lowered_names {
            return Err(format!(
                "nonce {nonce}: the cache returned a different image ({:?})",
                cached.status
            ));
        }
    }
    Ok(format!(
        "hammer ok hits={hits} misses={misses} replaced={replaced}"
    ))
}

/// Whether a `libnvrtc` (not its builtins) is mapped into this process.
fn nvrtc_loaded() -> bool {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .any(|p| {
            let file = p.rsplit('/').next().unwrap_or(p);
            file.starts_with("libnvrtc") && !file.starts_with("libnvrtc-builtins")
        })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .expect("usage: cache_worker DIR|- [steps | hammer ID ROUNDS]");
    if args.get(2).map(String::as_str) == Some("hammer") {
        let id = args[3].parse().expect("ID");
        let rounds = args[4].parse().expect("ROUNDS");
        match hammer(dir, id, rounds) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        return;
    }
    if args.get(2).map(String::as_str) == Some("steps") {
        let m = SourceModule::new(SOURCE).arch("sm_90");
        match gpu_runtime::__testing::hit_steps(&m, std::path::Path::new(dir)) {
            Ok(steps) => println!(
                "steps_hit={} nvrtc_asked={}",
                steps.hit,
                gpu_runtime::__testing::nvrtc_was_asked()
            ),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let mut m = SourceModule::new(SOURCE).arch("sm_90");
    if dir != "-" {
        m = m.cache_dir(Some(dir));
    }
    match m.compile_report() {
        Ok(r) => println!(
            "status={:?} key={} bytes={} nvrtc_loaded={} nvrtc_asked={}",
            r.status,
            r.key.to_hex(),
            r.module.image.len(),
            nvrtc_loaded(),
            gpu_runtime::__testing::nvrtc_was_asked()
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
