//! The compile side of a disk-cache hit, step by step, for the bench report (reached through the
//! hidden `gpu_runtime::__testing`): where a hit in a new process spends its time.

use std::path::Path;
use std::time::Instant;

use crate::compiler::cache::{self, Lookup};
use crate::compiler::cached_compile::compiler_is_current;
use crate::compiler::source_module::SourceModule;
use crate::error::Result;

/// Microseconds spent by each step of a hit, in the order a hit takes them.
#[derive(Debug, Clone, Copy)]
pub struct HitSteps {
    /// The key's material (source, options, headers, search path, target) and its hash.
    pub key_us: f64,
    /// Opening, checking and decoding the entry.
    pub entry_us: f64,
    /// Checking that the NVRTC file the entry names is still there, unchanged.
    pub identity_us: f64,
    /// Whether the entry was there, valid, and made by the NVRTC file the search finds.
    pub hit: bool,
}

/// Times the steps of looking `module` up in `dir`, for an `arch` given to `module` (so that
/// no device is needed). Meaningful once per process: the first call pays what a new process
/// pays.
pub fn hit_steps(module: &SourceModule, dir: &Path) -> Result<HitSteps> {
    let t0 = Instant::now();
    let plan = module.plan(None)?;
    let t1 = Instant::now();
    let found = cache::load(dir, &plan.material);
    let t2 = Instant::now();
    let current = match &found {
        Lookup::Found(_, compiler) => compiler_is_current(compiler),
        _ => false,
    };
    let t3 = Instant::now();
    let us = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e6;
    Ok(HitSteps {
        key_us: us(t0, t1),
        entry_us: us(t1, t2),
        identity_us: us(t2, t3),
        hit: current,
    })
}
