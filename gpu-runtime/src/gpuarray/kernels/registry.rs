//! The registry of generated kernels, and running them. A generated kernel is found in two
//! steps, each kept here: its definition, once per process ([`Definitions`]: what the crate's
//! operations generate, by the operation and its element types, to the kernel that writes its
//! text, or the hash of that text), and what a context compiled from it, once per context
//! ([`prepared`]: found by a key computed when the kernel was defined, never by its text).
//! Then the grid size (enough blocks for a few waves of the device's multiprocessors), and the
//! launch itself, through the crate's checked path ([`PreparedFunction`]: every argument
//! checked against the C declaration, every array's use ordered on the stream).

use std::any::Any;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::compiler::source_module::SourceModule;
use crate::driver::attributes::DeviceAttribute;
use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::launch::{Arg, PreparedFunction};
use crate::sync::{LockRank, Mutex};
use crate::tools::memoize::ContextCache;

/// Threads per block of every generated kernel: the reduction generator's, whose sources are
/// written for this many.
pub(crate) const BLOCK: u32 = gpu_cuda_source::reduction::BLOCK;

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

/// The definitions of one kind of generated kernel, made once per process and kept for it: a
/// small key (the operation and its element types) to the definition (an `ElementwiseKernel`,
/// a `ReductionKernel`, ..., or the hash of a source), so that a launch finds its kernel
/// without writing or parsing its text again. Each kind is a `static` of the module that
/// generates it; what each context compiles from a definition is kept by [`prepared`].
pub(crate) struct Definitions<K, V> {
    map: Mutex<Option<HashMap<K, V>>>,
}

impl<K, V> Definitions<K, V> {
    /// No definitions yet.
    pub(crate) const fn new() -> Self {
        Definitions {
            map: Mutex::new(LockRank::KernelDefinitions, None),
        }
    }
}

impl<K: Hash + Eq, V: Clone> Definitions<K, V> {
    /// The definition of `key`: kept, or made by `make` and kept (an error is returned and
    /// nothing kept). `make` runs with this kind's definitions locked, so a definition is made
    /// once however many threads ask; it writes text and compiles nothing, and must take no
    /// lock of the crate (the definitions' rank is a leaf's: crate::sync::LockRank).
    pub(crate) fn get_or_try_insert_with(&self, key: K, make: impl FnOnce() -> Result<V>) -> Result<V> {
        let mut map = self.map.lock();
        let map = map.get_or_insert_with(HashMap::new);
        if let Some(v) = map.get(&key) {
            return Ok(v.clone());
        }
        let v = make()?;
        map.insert(key, v.clone());
        Ok(v)
    }
}

/// A definition of any type, for a kind whose definitions differ in type by their key (a
/// reduction of `T` to `R`, a scan of `T`).
pub(crate) type AnyDefinition = Arc<dyn Any + Send + Sync>;

impl<K: Hash + Eq> Definitions<K, AnyDefinition> {
    /// [`get_or_try_insert_with`](Self::get_or_try_insert_with) for a definition of type `D`:
    /// one kept under `key` of another type (which the keys, holding the element types, rule
    /// out) is made again and replaced.
    pub(crate) fn get_or_try_insert_typed<D: Any + Send + Sync>(
        &self,
        key: K,
        make: impl FnOnce() -> Result<D>,
    ) -> Result<Arc<D>> {
        let mut map = self.map.lock();
        let map = map.get_or_insert_with(HashMap::new);
        if let Some(d) = map.get(&key).and_then(|d| d.clone().downcast::<D>().ok()) {
            return Ok(d);
        }
        let d = Arc::new(make()?);
        map.insert(key, d.clone() as AnyDefinition);
        Ok(d)
    }
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

static SHARED_KERNELS: ContextCache<KernelKey, Arc<PreparedFunction>> = ContextCache::new();

/// [`prepared`] for a launch path that looks its kernel up at every call: the kernel is kept
/// behind an `Arc`, so a lookup copies no signature (a `PreparedFunction`'s clone allocates its
/// parameter lists), and `make` writes the name and the source only when the kernel is
/// compiled, so a lookup formats nothing.
pub(crate) fn prepared_shared(
    ctx: &Context,
    key: KernelKey,
    make: impl FnOnce() -> (String, String),
) -> Result<Arc<PreparedFunction>> {
    prepared_shared_with(ctx, key, None, make)
}

/// [`prepared_shared`] compiled with the compiler `options` when given (else the default
/// ones, as [`SourceModule::options`] says); `key` must tell apart kernels whose options
/// differ.
pub(crate) fn prepared_shared_with(
    ctx: &Context,
    key: KernelKey,
    options: Option<&[String]>,
    make: impl FnOnce() -> (String, String),
) -> Result<Arc<PreparedFunction>> {
    SHARED_KERNELS.get_or_try_insert_with(ctx, key, |ctx| {
        let (name, source) = make();
        let mut module = SourceModule::new(source)
            .name(format!("{name}.cu"))
            .no_extern_c(true);
        if let Some(options) = options {
            module = module.options(options.iter().cloned());
        }
        let module = module.load(ctx)?;
        Ok(Arc::new(module.get_function(&name)?.prepare_declared()?))
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

/// The architecture the tests compile a generated source for with [`compile_check`]: PTX
/// for `compute_90` (NVRTC's front end and code generator: every C++ and type error), and
/// a cubin for `sm_90` only when the source carries inline PTX (`asm`), which ptxas alone
/// checks (the reductions' `atom.add.acq_rel` ticket, the sort's `%lanemask_lt`). ptxas was
/// most of each compile's time, and it checks nothing else in a generated kernel.
pub fn check_arch(source: &str) -> &'static str {
    if source.contains("asm") {
        "sm_90"
    } else {
        "compute_90"
    }
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
    Ok(grid_for_sms(sm_count(ctx)?, work))
}

/// [`grid_for`] on a device of `sms` multiprocessors, for a caller that has the count already.
pub(crate) fn grid_for_sms(sms: u32, work: u64) -> u32 {
    let cap = u64::from(sms) * BLOCKS_PER_SM;
    work.div_ceil(u64::from(BLOCK)).clamp(1, cap) as u32
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn a_definition_is_made_once_and_an_error_is_not_kept() {
        static KIND: Definitions<u8, Arc<String>> = Definitions::new();
        let mut made = 0;
        let mut get = |key, text: &str| {
            KIND.get_or_try_insert_with(key, || {
                made += 1;
                Ok(Arc::new(text.to_owned()))
            })
        };
        let first = get(1, "one").unwrap();
        let again = get(1, "another").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(*again, "one");
        assert_eq!(made, 1);
        let failed = KIND.get_or_try_insert_with(2, || {
            Err(Error::Internal {
                operation: "test",
                broken: "a definition that fails",
            })
        });
        assert!(matches!(failed, Err(Error::Internal { .. })));
        let made_later = KIND
            .get_or_try_insert_with(2, || Ok(Arc::new("two".to_owned())))
            .unwrap();
        assert_eq!(*made_later, "two");
    }

    #[test]
    fn a_definition_of_any_type_is_found_as_its_type() {
        static KIND: Definitions<u8, AnyDefinition> = Definitions::new();
        let first: Arc<u32> = KIND.get_or_try_insert_typed(1, || Ok(7u32)).unwrap();
        let again: Arc<u32> = KIND.get_or_try_insert_typed(1, || Ok(8u32)).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // A definition of another type under the key is made, and replaces the first.
        let other: Arc<u64> = KIND.get_or_try_insert_typed(1, || Ok(9u64)).unwrap();
        assert_eq!(*other, 9);
        let other_again: Arc<u64> = KIND.get_or_try_insert_typed(1, || Ok(10u64)).unwrap();
        assert!(Arc::ptr_eq(&other, &other_again));
    }
}
