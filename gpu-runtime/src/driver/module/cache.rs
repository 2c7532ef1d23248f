//! Each context's modules: compiled and loaded once, whichever path asks (a `#[kernel]`'s
//! `prepare`, [`SourceModule::load`](crate::SourceModule), a typed global), and found
//! again by the source's address or the compile cache key.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::CUresult;

use crate::compiler::cache::{CacheKey, KeyMaterial};
use crate::compiler::plan::Plan;
use crate::compiler::source::ModuleSource;
use crate::compiler::source_module::SourceModule;
use crate::driver::context::core::Context;
use crate::driver::context::ext::{Extension, Slot};
use crate::driver::module::image::JitOptions;
use crate::driver::module::loaded::{LoadInfo, LoadedModule};
use crate::error::{Error, Result};
use crate::sync::{LockRank, Mutex, MutexGuard};

/// The modules of one context: by `static` source address in front (so that the macro's
/// `prepare` never hashes a string), by compile cache key behind.
pub(crate) struct ModuleCache(Mutex<Modules>);

impl Default for ModuleCache {
    fn default() -> Self {
        ModuleCache(Mutex::new(LockRank::ModuleCache, Modules::default()))
    }
}

#[derive(Default)]
pub(crate) struct Modules {
    by_addr: HashMap<usize, Arc<LoadedModule>, BuildHasherDefault<KeyHasher>>,
    /// With the key's material, which a lookup compares: a key is a name, not a proof.
    by_key: HashMap<CacheKey, (KeyMaterial, Arc<LoadedModule>), BuildHasherDefault<KeyHasher>>,
    /// Builds under way, by key: a thread that asks for a module being built waits for that
    /// build instead of compiling the same source again, and the map's lock is not held across
    /// a compile, so that different sources compile at once (NVRTC is thread-safe; a program
    /// that warms up its kernels from several threads, or the array functions' generated
    /// kernels asked for by several threads, would otherwise compile one at a time).
    building: HashMap<CacheKey, (KeyMaterial, Arc<Flight>), BuildHasherDefault<KeyHasher>>,
}

/// One build of a module: set once by the thread that builds it, waited on by the others.
/// `None` when that build failed: a waiter then builds for itself, to return its own error.
type Flight = OnceLock<Option<Arc<LoadedModule>>>;

impl Modules {
    /// The module of `plan` already loaded, when its key's material is the plan's.
    fn loaded(&self, plan: &Plan<'_>) -> Option<Arc<LoadedModule>> {
        self.by_key
            .get(&plan.key)
            .filter(|(material, _)| *material == plan.material)
            .map(|(_, m)| m.clone())
    }
}

/// Hashes the maps' keys, which are already well spread (XXH3 digests; addresses of
/// statics, mixed by one multiply) and chosen by the program, not by an adversary. std's
/// default hasher would ask the system for random seeds on a thread's first map: a system
/// call on the path of a disk-cache hit in a new process.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

impl Extension for ModuleCache {
    const SLOT: Slot = Slot::Modules;
}

impl ModuleCache {
    fn lock(&self) -> MutexGuard<'_, Modules> {
        self.0.lock()
    }
}

impl Context {
    /// The module compiled from `source`, compiling and loading it on first use in this context.
    pub(crate) fn module(&self, source: &'static ModuleSource) -> Result<Arc<LoadedModule>> {
        let key = source as *const ModuleSource as usize;
        let mut modules = self.module_cache()?.lock();
        if let Some(m) = modules.by_addr.get(&key) {
            return Ok(m.clone());
        }
        // `GPU_RUNTIME_SOURCE_DIR`: the files as they are on disk now, which the images
        // embedded at build time were not compiled from.
        let from_disk = crate::compiler::disk::root_for(source);
        let mut embedded_ptx_error: Option<(Error, &'static [u8])> = None;
        let embedded = crate::compiler::embedded::pick_embedded(source.images(), self.compute_capability())
            .filter(|_| from_disk.is_none());
        if let Some(image) = embedded {
            match self.load_embedded(source, image) {
                Ok(module) => {
                    let module = Arc::new(module);
                    modules.by_addr.insert(key, module.clone());
                    return Ok(module);
                }
                // PTX the driver refuses, e.g. of an ISA newer than the driver (built with a
                // newer NVRTC): compile the source instead, and say so (a cold start then pays
                // for the compile the PTX was there to save).
                Err(e) if image.kind() == crate::compiler::embedded::ImageKind::Ptx => {
                    eprintln!(
                        "gpu-runtime: note: the driver refused the PTX embedded at build time in {} \
                         ({e}); compiling its source at run time instead",
                        source.name()
                    );
                    embedded_ptx_error = Some((e, image.bytes()))
                }
                Err(e) => return Err(e),
            }
        }
        if source.is_linked() {
            // Linked modules are compiled and linked each time a context first asks; the disk
            // cache covers single sources.
            let compiled = source.compile(crate::compiler::nvrtc::Target::for_device(
                self.compute_capability(),
            )?)?;
            let kernels = source
                .kernels()
                .iter()
                .map(|k| k.to_string())
                .zip(compiled.lowered_names.iter().cloned())
                .collect();
            let module = Arc::new(LoadedModule::load(
                self,
                &compiled.image,
                "the linked module",
                kernels,
                &JitOptions::default(),
                LoadInfo::default(),
            )?);
            modules.by_addr.insert(key, module.clone());
            return Ok(module);
        }
        // A single source compiles with the map unlocked, so that other sources build
        // meanwhile; racing threads share one build of it (`module_for_plan`). (A linked
        // module, above, is rare enough to build under the lock.)
        drop(modules);
        let spec = match &from_disk {
            Some(root) => crate::compiler::disk::module_from_disk(source, root)?,
            None => SourceModule::from_static(source),
        };
        let built = spec
            .plan(Some(self.compute_capability()))
            .and_then(|plan| self.module_for_plan(&plan));
        let module = match (built, embedded_ptx_error) {
            // Without NVRTC, why the embedded PTX did not load says more than "no NVRTC".
            (Err(Error::NvrtcNotFound), Some((e, ptx))) => return Err(ptx_too_new(source, e, ptx)),
            (built, _) => built?,
        };
        let mut modules = self.module_cache()?.lock();
        Ok(modules.by_addr.entry(key).or_insert(module).clone())
    }

    /// Loads an image embedded at build time, looking up the source's kernels by the lowered
    /// names stored with it.
    fn load_embedded(
        &self,
        source: &'static ModuleSource,
        image: &crate::compiler::embedded::EmbeddedImage,
    ) -> Result<LoadedModule> {
        // The driver reads cubins as ELF, which wants 8-byte alignment; an embedded byte string
        // has none, so it is copied (once per context) when misaligned.
        let bytes = image.bytes();
        let aligned: Vec<u64>;
        let image_bytes: &[u8] = if bytes.as_ptr().align_offset(8) == 0 {
            bytes
        } else {
            let mut words = vec![0u64; bytes.len().div_ceil(8)];
            // SAFETY: `words` holds at least bytes.len() bytes; the regions do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), words.as_mut_ptr().cast(), bytes.len()) };
            aligned = words;
            // SAFETY: the first bytes.len() bytes of `aligned` were just initialised.
            unsafe { std::slice::from_raw_parts(aligned.as_ptr().cast(), bytes.len()) }
        };
        let kernels = source
            .kernels()
            .iter()
            .map(|k| k.to_string())
            .zip(image.lowered_names().iter().map(|n| n.to_string()))
            .collect();
        let mut module = LoadedModule::load(
            self,
            image_bytes,
            "the image embedded at build time",
            kernels,
            &JitOptions::default(),
            LoadInfo::default(),
        )?;
        // The image was compiled from this text: its kernels' declarations are read from it, as
        // for a module compiled at run time (`prepare_declared`, run-time typed launches).
        module.source = Some(std::sync::Arc::from(source.source()));
        Ok(module)
    }

    /// The module a [`SourceModule`] plan builds, from this context's cache when its key is
    /// there. Threads asking for one key at once share one build; the map is unlocked while
    /// it runs.
    pub(crate) fn module_for_plan(&self, plan: &Plan<'_>) -> Result<Arc<LoadedModule>> {
        let cache = self.module_cache()?;
        let flight = {
            let mut modules = cache.lock();
            if let Some(m) = modules.loaded(plan) {
                return Ok(m);
            }
            match modules.building.get(&plan.key) {
                Some((material, flight)) if *material == plan.material => flight.clone(),
                // Another material under the same key (a collision): built alone.
                Some(_) => Arc::new(Flight::new()),
                None => {
                    let flight = Arc::new(Flight::new());
                    modules
                        .building
                        .insert(plan.key, (plan.material.clone(), flight.clone()));
                    flight
                }
            }
        };
        let mut error = None;
        let shared = flight
            .get_or_init(|| match self.build_plan(plan) {
                Ok(m) => Some(m),
                Err(e) => {
                    error = Some(e);
                    None
                }
            })
            .clone();
        let built = match (shared, error) {
            (Some(m), _) => Ok(m),
            (None, Some(e)) => Err(e),
            // The build this thread waited for failed: its error went to the thread that
            // built; this one builds again for its own.
            (None, None) => self.build_plan(plan),
        };
        let mut modules = cache.lock();
        if modules
            .building
            .get(&plan.key)
            .is_some_and(|(_, f)| Arc::ptr_eq(f, &flight))
        {
            modules.building.remove(&plan.key);
        }
        let module = built?;
        if let Some(kept) = modules.loaded(plan) {
            return Ok(kept);
        }
        modules
            .by_key
            .insert(plan.key, (plan.material.clone(), module.clone()));
        Ok(module)
    }

    /// Builds (compiles, or reads from the disk cache) and loads `plan`'s module; no lock held.
    fn build_plan(&self, plan: &Plan<'_>) -> Result<Arc<LoadedModule>> {
        let report = plan.build()?;
        let kernels = plan
            .spec
            .kernel_names()
            .iter()
            .map(|k| k.to_string())
            .zip(report.module.lowered_names.iter().cloned())
            .collect();
        let info = LoadInfo {
            cache_status: Some(report.status),
            build_dir: report.build_dir,
            compile_log: report.module.log.clone(),
            ..LoadInfo::default()
        };
        let what = format!("the module compiled from `{}`", plan.spec_name());
        let mut loaded = LoadedModule::load(
            self,
            &report.module.image,
            &what,
            kernels,
            &JitOptions::default(),
            info,
        )?;
        loaded.source = Some(Arc::from(plan.declarations()));
        Ok(Arc::new(loaded))
    }

    /// Forgets every module loaded in this context through [`SourceModule::load`] or a
    /// `#[kernel]` `prepare` (PyCUDA's `context_dependent_memoize` cache), so that the next
    /// request builds again (from the disk cache when it can). Kernels and modules already
    /// handed out keep their module alive until they are dropped.
    pub fn clear_module_cache(&self) {
        let Some(cache) = self.inner.ext.get::<ModuleCache>() else {
            return;
        };
        let mut m = cache.lock();
        m.by_addr.clear();
        m.by_key.clear();
        // Builds under way finish and are handed to the threads waiting for them; they are
        // then kept, as if asked for after the clear.
    }

    fn module_cache(&self) -> Result<&ModuleCache> {
        self.inner.ext.get_or_try_init(|| Ok(ModuleCache::default()))
    }
}

/// The error of embedded PTX the driver refused when there is no NVRTC to fall back on: for a
/// PTX ISA newer than the driver, one that names who built it, the driver's version and the
/// fixes; any other refusal as the driver said it.
pub(crate) fn ptx_too_new(source: &ModuleSource, refused: Error, ptx: &[u8]) -> Error {
    let unsupported = CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION as u32;
    match (&refused, crate::driver::init::driver_version()) {
        (Error::ModuleLoad { code, .. } | Error::Driver { code, .. }, Ok(driver)) if *code == unsupported => {
            crate::compiler::embedded::ptx_too_new(source.name(), ptx, driver)
        }
        _ => refused,
    }
}
