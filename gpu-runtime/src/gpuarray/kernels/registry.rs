//! Running generated kernels: the cache of prepared kernels per context (compiled once, then
//! found by a key computed when the kernel was defined, never by its text), the grid size
//! (enough blocks for a few waves of the device's multiprocessors), and the launch itself,
//! through the crate's checked path ([`PreparedFunction`]: every argument checked against the
//! C declaration, every array's use ordered on the stream).

use std::hash::{Hash, Hasher};

use crate::compiler::source_module::SourceModule;
use crate::driver::attributes::DeviceAttribute;
use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::launch::{Arg, PreparedFunction};
use crate::tools::memoize::ContextCache;

/// Threads per block of every generated kernel.
pub(crate) const BLOCK: u32 = 256;

/// Blocks per multiprocessor a grid-stride kernel is given: with 256 threads, 8 blocks fill an
/// SM of 2048 threads once; more waves buy nothing for a memory-bound loop.
const BLOCKS_PER_SM: u64 = 8;

/// A generated kernel's identity: a hash of everything its source is made from, computed once
/// when the kernel is defined, and the variant (contiguous, or strided with `n` axes, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KernelKey {
    pub source: u64,
    pub variant: u32,
}

/// A 64-bit hash of `parts`, the same for the same parts within a process (the keys of
/// `DefaultHasher::new` are fixed).
pub(crate) fn hash_parts(parts: &[&str]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

static KERNELS: ContextCache<KernelKey, PreparedFunction> = ContextCache::new();
static SM_COUNT: ContextCache<(), u32> = ContextCache::new();

/// The prepared kernel `name` of the source `make` writes, from the cache; on the first use in
/// a context, compiled (or read from the disk cache), loaded and checked against its C
/// declaration.
pub(crate) fn prepared(
    ctx: &Context,
    key: KernelKey,
    name: &str,
    make: impl FnOnce() -> String,
) -> Result<PreparedFunction> {
    KERNELS.get_or_try_insert_with(ctx, key, |ctx| {
        let module = SourceModule::new(make())
            .name(format!("{name}.cu"))
            .no_extern_c(true)
            .load(ctx)?;
        module.get_function(name)?.prepare_declared()
    })
}

/// Compiles a generated source for `arch` on the host, with the options a launch uses: what
/// the tests do for every kernel this module generates, with no GPU.
pub fn compile_check(source: &str, arch: &str) -> Result<()> {
    SourceModule::new(source.to_owned())
        .no_extern_c(true)
        .arch(arch)
        .no_cache()
        .compile()
        .map(drop)
}

/// The device's multiprocessor count, asked once per context.
pub(crate) fn sm_count(ctx: &Context) -> Result<u32> {
    SM_COUNT.get_or_try_insert_with(ctx, (), |ctx| {
        Ok(ctx
            .device()
            .attribute(DeviceAttribute::MultiprocessorCount)?
            .max(1) as u32)
    })
}

/// Blocks for `work` items of a grid-stride loop: one per 256 items, at most a few waves.
pub(crate) fn grid_for(ctx: &Context, work: u64) -> Result<u32> {
    let cap = u64::from(sm_count(ctx)?) * BLOCKS_PER_SM;
    Ok(work.div_ceil(u64::from(BLOCK)).clamp(1, cap) as u32)
}

/// Launches on `stream`, or on the legacy default stream.
pub(crate) fn launch(
    f: &PreparedFunction,
    grid: u32,
    block: u32,
    stream: Option<&Stream>,
    args: &[Arg<'_>],
) -> Result<()> {
    match stream {
        Some(s) => f.prepared_async_call(grid, block, s, args),
        None => f.prepared_call(grid, block, args),
    }
}
