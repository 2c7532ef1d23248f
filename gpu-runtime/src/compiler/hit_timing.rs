//! The compile side of a disk-cache hit, step by step, for the bench report (reached through the
//! hidden `gpu_runtime::__testing`): where a hit in a new process spends its time.
//!
//! The steps are those of a hit, in its order: the key (its material and its hash), the
//! entry's read (an open, a `stat` of the open file and its owner, one read), the entry's
//! checks (the stored material compared, the checksum, the fields parsed, the image moved to
//! the front of the buffer read), and the NVRTC file's identity (one `stat`). In a new process
//! most of what each costs is first use: the pages of code and heap it touches first (each a
//! page fault, one to three microseconds on a virtual machine), not the work itself, which
//! costs a fifth of that once warm. Measured on the 2-core development VM, no GPU, in the bench
//! report's own children (`GPU_BENCH_REPORT_CHILD=steps:sm_90:DIR` and `key:`, `read:`;
//! release build, medians of 41 new processes, two runs):
//!
//! | step | before (2026-11-26) | after |
//! |---|---|---|
//! | key: material and hash | 10.7-11.0 us | 9.6-9.7 us |
//! | entry: read (open, owner, read) | 14.1-14.2 us (with the checks) | 8.1-8.3 us |
//! | entry: checks and decode | | 1.3 us |
//! | NVRTC's file (one `stat`) | 3.3 us | 2.3 us |
//! | `compile_report` of a hit, all told | 30.7-31.9 us | 21.6-22.0 us |
//! | `fs::read` of the cubin (the floor's read) | 7.3-7.8 us | 7.3-7.5 us |
//!
//! In a small binary (a scratch example) the key costs half as much (5.8-6.2 us after,
//! 9.9-10.7 before): in the report's 3 MB binary the code a hit runs lies on more pages.
//! What went: the key's material was built twice (the content, then copied into the key),
//! growing its buffer as it went; the entry's image was copied out of the buffer read; the
//! entry's path took three allocations; the checksum ran the streaming XXH3 (more code to
//! fault in than the one-shot hash the key has just run); the NVRTC check copied the stored
//! path twice before its `stat`; the include scan ran without include directories; the cache
//! directory given was copied. The entry's read is now the floor's read (an open, a `stat`, a
//! read) and one `geteuid`; what is left above the floor is mostly first-use page faults.

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
    /// Opening the entry, checking its owner and mode on the open file, reading it.
    pub read_us: f64,
    /// Checking the entry (stored material, lengths, checksum) and decoding it.
    pub checks_us: f64,
    /// Checking that the NVRTC file the entry names is still there, unchanged (one `stat`);
    /// for a file the loader loaded past the search, also that the loader's cache and the
    /// directories of the search path are unchanged (a `stat` each).
    pub identity_us: f64,
    /// Whether the entry was there, valid, and (for a key that names the loader's search) made
    /// by the NVRTC file this process would load.
    pub hit: bool,
}

/// Times the steps of looking `module` up in `dir`, for an `arch` given to `module` (so that
/// no device is needed). Meaningful once per process: the first call pays what a new process
/// pays.
pub fn hit_steps(module: &SourceModule, dir: &Path) -> Result<HitSteps> {
    let t0 = Instant::now();
    let plan = module.plan(None)?;
    let t1 = Instant::now();
    let read = cache::read_entry(dir, &plan.key);
    let t2 = Instant::now();
    let found = match read {
        Ok(bytes) => cache::check_entry(bytes, &plan.material),
        Err(not_read) => not_read,
    };
    let t3 = Instant::now();
    // A key that names NVRTC's version (no `LD_LIBRARY_PATH`) has no file to check.
    let current = match &found {
        Lookup::Found(_, compiler) => !plan.by_search() || compiler_is_current(compiler),
        _ => false,
    };
    let t4 = Instant::now();
    let us = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e6;
    Ok(HitSteps {
        key_us: us(t0, t1),
        read_us: us(t1, t2),
        checks_us: us(t2, t3),
        identity_us: us(t3, t4),
        hit: current,
    })
}
