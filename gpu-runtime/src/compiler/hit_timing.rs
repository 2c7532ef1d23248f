//! The compile side of a disk-cache hit, step by step, for the bench report (reached through the
//! hidden `gpu_runtime::__testing`): where a hit in a new process spends its time.

use std::path::Path;
use std::time::Instant;

use crate::compiler::cache::{self, Lookup};
use crate::compiler::source_module::SourceModule;
use crate::compiler::toolchain;
use crate::error::Result;

/// Microseconds spent by each step of a hit, in the order a hit takes them.
#[derive(Debug, Clone, Copy)]
pub struct HitSteps {
    /// Naming the NVRTC library `dlopen` would load (the search along `LD_LIBRARY_PATH`).
    pub identity_us: f64,
    /// The key's material (source, options, headers, compiler, target) and its hash.
    pub key_us: f64,
    /// Opening, checking and decoding the entry.
    pub entry_us: f64,
    /// Whether the entry was there and valid.
    pub hit: bool,
}

/// Times the steps of looking `module` up in `dir`, for an `arch` given to `module` (so that
/// no device is needed). Meaningful once per process: the first call pays what a new process
/// pays.
pub fn hit_steps(module: &SourceModule, dir: &Path) -> Result<HitSteps> {
    let t0 = Instant::now();
    std::hint::black_box(toolchain::predicted_nvrtc());
    let t1 = Instant::now();
    let plan = module.plan(None)?;
    let t2 = Instant::now();
    let found = cache::load(dir, &plan.material);
    let t3 = Instant::now();
    let us = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e6;
    Ok(HitSteps {
        identity_us: us(t0, t1),
        key_us: us(t1, t2),
        entry_us: us(t2, t3),
        hit: matches!(found, Lookup::Found(_)),
    })
}
