//! Uniform and normal fills through cuRAND (`libcurand`), seeded and reproducible.
//!
//! [`CurandGenerator`] owns a cuRAND Philox4x32-10 generator of one context. The same seed
//! and the same sequence of calls give the same values; the values are cuRAND's, not those of
//! the library-free [`fill_uniform`](crate::gpuarray::DeviceArrayBase::fill_uniform) of this
//! module's sibling (which also fills views with steps and needs no library).
//!
//! cudarc binds cuRAND dynamically and *panics* on the first call when the library cannot be
//! opened, so [`CurandGenerator::new`] and [`curand_version`] first open it here under the
//! names cudarc tries, and return [`Error::Unsupported`] (in [`CurandError::Cuda`]) when none opens.

use std::sync::{Arc, OnceLock};

use cudarc::curand::sys as rsys;
use cudarc::curand::sys::{
    curandGenerateNormal, curandGenerateNormalDouble, curandGenerateUniform, curandGenerateUniformDouble,
};

use crate::driver::calls;
use crate::driver::context::core::Context;
use crate::driver::library::{open_checked, Unusable};
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::driver::ordering::StreamInner;
use crate::driver::stream::Stream;
use crate::error::Error;
use crate::gpuarray::array::core::{DeviceArrayBase, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::random::curand_error::{CurandError, CurandResult};

/// How to install cuRAND, for the error.
const INSTALL: &str = "install the CUDA toolkit, or `pip install nvidia-curand` and put its lib/ directory (the one holding libcurand.so.10) on LD_LIBRARY_PATH before starting the program";

/// Every cuRAND function this module calls.
const SYMBOLS: &[&str] = &[
    "curandGetVersion",
    "curandCreateGenerator",
    "curandSetPseudoRandomGeneratorSeed",
    "curandSetStream",
    "curandGenerateUniform",
    "curandGenerateUniformDouble",
    "curandGenerateNormal",
    "curandGenerateNormalDouble",
    "curandDestroyGenerator",
];

/// The outcome of the one search of the process: the error's text on failure.
static FOUND: OnceLock<std::result::Result<(), String>> = OnceLock::new();

/// Ok once libcurand opens under one of the names cudarc tries (searched once per process).
fn ensure_loaded() -> CurandResult<()> {
    FOUND
        .get_or_init(|| find(&cudarc::get_lib_name_candidates("curand")))
        .clone()
        .map_err(|needs| {
            Error::Unsupported {
                what: "filling an array through cuRAND",
                needs,
            }
            .into()
        })
}

/// Opens the first of `names` that the loader finds, with every function this module calls
/// ([`open_checked`]). On failure, the `needs` of [`Error::Unsupported`].
fn find(names: &[String]) -> std::result::Result<(), String> {
    match open_checked(names, SYMBOLS) {
        Ok(()) => Ok(()),
        Err(Unusable::Lacks { name, missing }) => Err(format!(
            "a cuRAND with {}, which {name} lacks; {INSTALL}",
            missing.join(", ")
        )),
        Err(Unusable::NotFound { tried }) => Err(format!(
            "libcurand, which could not be loaded (tried {} through the loader's search: LD_LIBRARY_PATH as the program started, the ld.so cache, /lib and /usr/lib); {INSTALL}",
            tried.join(", ")
        )),
    }
}

/// Maps a `curandStatus_t` to `Ok` or [`CurandError::Status`].
fn curand_check(call: &'static str, status: rsys::curandStatus_t) -> CurandResult<()> {
    match status {
        rsys::curandStatus_t::CURAND_STATUS_SUCCESS => Ok(()),
        other => Err(CurandError::Status {
            call,
            code: other as i32,
        }),
    }
}

/// The version of the cuRAND library, e.g. `10402` for cuRAND 10.4.2, or
/// [`CurandError::Cuda`]`(`[`Error::Unsupported`]`)` when it cannot be loaded. Needs no GPU.
pub fn curand_version() -> CurandResult<i32> {
    ensure_loaded()?;
    let mut version = 0;
    // SAFETY: the library is loaded with this symbol (checked above); a valid out-pointer.
    curand_check("curandGetVersion", unsafe {
        rsys::curandGetVersion(&mut version)
    })?;
    Ok(version)
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The element types cuRAND fills: `f32` and `f64`.
pub trait CurandFloat: Element + sealed::Sealed {
    /// Queues `n` uniform values in `(0, 1]` at `ptr` on the generator's stream.
    ///
    /// # Safety
    /// `ptr` holds `n` values of `Self` in the generator's context, and stays allocated until
    /// the generation has run.
    #[doc(hidden)]
    unsafe fn generate_uniform(gen: rsys::curandGenerator_t, ptr: u64, n: usize) -> CurandResult<()>;
    /// Queues `n` (even) normal values of `mean` and `std` at `ptr`.
    ///
    /// # Safety
    /// As [`generate_uniform`](Self::generate_uniform).
    #[doc(hidden)]
    unsafe fn generate_normal(
        gen: rsys::curandGenerator_t,
        ptr: u64,
        n: usize,
        mean: Self,
        std: Self,
    ) -> CurandResult<()>;
}

/// `CurandFloat` for `$t` through cuRAND's functions of that type (named in errors by their C
/// names).
macro_rules! curand_float {
    ($t:ty, $uniform:ident, $normal:ident) => {
        impl CurandFloat for $t {
            unsafe fn generate_uniform(gen: rsys::curandGenerator_t, ptr: u64, n: usize) -> CurandResult<()> {
                // SAFETY: the caller's promise.
                curand_check(stringify!($uniform), unsafe {
                    $uniform(gen, ptr as *mut $t, n)
                })
            }
            unsafe fn generate_normal(
                gen: rsys::curandGenerator_t,
                ptr: u64,
                n: usize,
                mean: $t,
                std: $t,
            ) -> CurandResult<()> {
                // SAFETY: the caller's promise.
                curand_check(stringify!($normal), unsafe {
                    $normal(gen, ptr as *mut $t, n, mean, std)
                })
            }
        }
    };
}

curand_float!(f32, curandGenerateUniform, curandGenerateNormal);
curand_float!(f64, curandGenerateUniformDouble, curandGenerateNormalDouble);

/// A cuRAND pseudo-random generator (Philox4x32-10) of one context, seeded at creation.
///
/// Fills C- or Fortran-contiguous arrays of `f32` or `f64` ([`CurandFloat`]) in memory order.
/// Each fill continues the generator's sequence, so the same seed and the same calls give the
/// same values. Fills are stream-ordered like every operation of this crate: they wait for
/// earlier work on the array, and later uses (or freeing it) wait for them. The generator may
/// move between threads but not be shared; it is destroyed on drop.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{CurandGenerator, DeviceArray};
/// use gpu_runtime::Context;
/// let ctx = Context::default()?;
/// let mut gen = CurandGenerator::new(&ctx, 42)?;
/// let mut a = DeviceArray::<f32, _>::empty(&ctx, 1000)?;
/// gen.fill_normal(&mut a, 0.0, 1.0)?;
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct CurandGenerator {
    gen: rsys::curandGenerator_t,
    ctx: Context,
}

// SAFETY: a cuRAND generator may be used from any thread, one at a time (`&mut self` on every
// call; not `Sync`, which the raw handle already rules out); each call binds the context.
unsafe impl Send for CurandGenerator {}

impl std::fmt::Debug for CurandGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurandGenerator")
            .field("gen", &self.gen)
            .finish_non_exhaustive()
    }
}

impl CurandGenerator {
    /// A Philox4x32-10 generator in `ctx` seeded with `seed`. [`CurandError::Cuda`]`(`[`Error::Unsupported`]`)` when
    /// libcurand cannot be loaded.
    pub fn new(ctx: &Context, seed: u64) -> CurandResult<Self> {
        ensure_loaded()?;
        ctx.bind()?;
        let mut gen: rsys::curandGenerator_t = std::ptr::null_mut();
        // SAFETY: the library is loaded; a valid out-pointer; the context is current.
        curand_check("curandCreateGenerator", unsafe {
            rsys::curandCreateGenerator(&mut gen, rsys::curandRngType_t::CURAND_RNG_PSEUDO_PHILOX4_32_10)
        })?;
        // Owned from here: dropped (destroyed) if seeding fails.
        let this = CurandGenerator {
            gen,
            ctx: ctx.clone(),
        };
        // SAFETY: a live generator.
        curand_check("curandSetPseudoRandomGeneratorSeed", unsafe {
            rsys::curandSetPseudoRandomGeneratorSeed(this.gen, seed)
        })?;
        Ok(this)
    }

    /// The context the generator belongs to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    on_legacy_stream! {
        /// Fills `a` with uniform values in `(0, 1]`, on the legacy default stream after every use
        /// of `a`. `a` must be C- or Fortran-contiguous (else [`CurandError::NotContiguous`]).
        fn fill_uniform[S, D](&mut self, a: &mut DeviceArrayBase<S, D>) -> CurandResult<()>
            where [S: StorageMut, S::Elem: CurandFloat, D: ndarray::Dimension];

        /// Fills `a` with normal values of `mean` and standard deviation `std`, on the legacy
        /// default stream after every use of `a`. Any length: cuRAND makes values in pairs, and
        /// the last value of an odd length comes from a pair made in scratch memory. `a` must be
        /// C- or Fortran-contiguous (else [`CurandError::NotContiguous`]).
        fn fill_normal[S, D](&mut self, a: &mut DeviceArrayBase<S, D>, mean: S::Elem, std: S::Elem)
            -> CurandResult<()>
            where [S: StorageMut, S::Elem: CurandFloat, D: ndarray::Dimension];
    }

    /// This generator's fills queued on `stream`, which must belong to its context
    /// ([`Error::WrongContext`] otherwise, checked by each fill):
    /// `generator.on(&stream).fill_normal(&mut a, 0.0, 1.0)`. See [`OnStream`].
    pub fn on<'a>(&'a mut self, stream: &'a Stream) -> OnStream<'a, &'a mut Self> {
        OnStream::new(self, Some(stream))
    }

    /// `stream`'s ordering record, after checking it belongs to the generator's context, or
    /// (`None`) the context's legacy default stream's.
    fn stream(&self, stream: Option<&Stream>) -> CurandResult<Arc<StreamInner>> {
        let Some(stream) = stream else {
            return Ok(self.ctx.legacy().clone());
        };
        if stream.context() != &self.ctx {
            return Err(Error::WrongContext {
                what: "the stream of a cuRAND fill",
            }
            .into());
        }
        Ok(stream.inner().clone())
    }

    /// Fills `a` on `s`: uniform, or normal of `(mean, std)`.
    fn fill<S, D>(
        &mut self,
        operation: &'static str,
        a: &mut DeviceArrayBase<S, D>,
        s: &Arc<StreamInner>,
        normal: Option<(S::Elem, S::Elem)>,
    ) -> CurandResult<()>
    where
        S: StorageMut,
        S::Elem: CurandFloat,
        D: ndarray::Dimension,
    {
        if a.context() != &self.ctx {
            return Err(Error::WrongContext {
                what: "the array filled by a cuRAND generator of another context",
            }
            .into());
        }
        if !(a.is_standard_layout() || a.is_fortran_layout()) {
            return Err(CurandError::NotContiguous {
                operation,
                shape: a.shape().to_vec(),
                strides: a.strides().to_vec(),
            });
        }
        let n = a.len();
        if n == 0 {
            return Ok(());
        }
        let size = std::mem::size_of::<S::Elem>();
        // Odd normal fills: the last value comes from a pair made in scratch memory.
        let mut scratch = match normal {
            Some(_) if n % 2 == 1 => Some(self.ctx.alloc::<S::Elem>(2)?),
            _ => None,
        };
        let dst = a.device_view_mut();
        debug_assert_eq!(dst.len(), n);
        dst.write_on(s)?;
        if let Some(scratch) = &mut scratch {
            scratch.device_view_mut().write_on(s)?;
        }
        self.ctx.bind()?;
        // SAFETY: a live generator of the current context; cuRAND's stream type is the driver's
        // CUstream under another name.
        curand_check("curandSetStream", unsafe {
            rsys::curandSetStream(self.gen, s.raw as rsys::cudaStream_t)
        })?;
        let ptr = dst.device_ptr();
        match normal {
            None => {
                // SAFETY: `dst` holds the `n` elements of `a` in memory order (it is contiguous),
                // allocated until the generation on `s` has run (the write is recorded on `s`).
                unsafe { S::Elem::generate_uniform(self.gen, ptr, n) }
            }
            Some((mean, std)) => {
                let even = n - n % 2;
                if even > 0 {
                    // SAFETY: as for the uniform fill; `even <= n`.
                    unsafe { S::Elem::generate_normal(self.gen, ptr, even, mean, std)? };
                }
                let Some(scratch) = &scratch else {
                    return Ok(());
                };
                let src = scratch.device_view();
                // SAFETY: the scratch holds two elements, kept allocated until its uses on `s`
                // have run (its write is recorded on `s`).
                unsafe { S::Elem::generate_normal(self.gen, src.device_ptr(), 2, mean, std)? };
                src.read_on(s)?;
                // SAFETY: one element from the scratch to the last element of `dst`, both live
                // allocations of this context, ordered on `s` after the generation (same
                // stream) and recorded there.
                unsafe { calls::memcpy_dtod_async(ptr + (even * size) as u64, src.device_ptr(), size, s.raw) }
                    .map_err(|e| CurandError::Cuda(e.into()))
            }
        }
    }
}

/// The fills on a stream: `generator.on(&stream).fill_uniform(&mut a)`.
impl OnStream<'_, &mut CurandGenerator> {
    /// [`fill_uniform`](CurandGenerator::fill_uniform) on this stream.
    pub fn fill_uniform<S, D>(&mut self, a: &mut DeviceArrayBase<S, D>) -> CurandResult<()>
    where
        S: StorageMut,
        S::Elem: CurandFloat,
        D: ndarray::Dimension,
    {
        let s = self.target.stream(self.stream)?;
        self.target.fill("CurandGenerator::fill_uniform", a, &s, None)
    }

    /// [`fill_normal`](CurandGenerator::fill_normal) on this stream.
    pub fn fill_normal<S, D>(
        &mut self,
        a: &mut DeviceArrayBase<S, D>,
        mean: S::Elem,
        std: S::Elem,
    ) -> CurandResult<()>
    where
        S: StorageMut,
        S::Elem: CurandFloat,
        D: ndarray::Dimension,
    {
        let s = self.target.stream(self.stream)?;
        self.target
            .fill("CurandGenerator::fill_normal", a, &s, Some((mean, std)))
    }
}

impl Drop for CurandGenerator {
    fn drop(&mut self) {
        // The generator is destroyed with its context current; a failure here (a context
        // broken by a fault) leaves nothing to do but leak it.
        if self.ctx.bind().is_ok() {
            // SAFETY: a live generator, destroyed once; cuRAND waits for its own work.
            let _ = unsafe { rsys::curandDestroyGenerator(self.gen) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing library is an error that says what was tried and how to install cuRAND.
    #[test]
    fn missing_library_is_an_error() {
        let needs = find(&["libcurand_missing_for_a_test.so".to_owned()]).unwrap_err();
        assert!(needs.contains("libcurand_missing_for_a_test.so"), "{needs}");
        assert!(needs.contains("pip install nvidia-curand"), "{needs}");
        let e = Error::Unsupported {
            what: "filling an array through cuRAND",
            needs,
        };
        assert!(
            e.to_string()
                .starts_with("filling an array through cuRAND needs libcurand"),
            "{e}"
        );
    }

    #[test]
    fn curand_errors_name_the_call_and_the_status() {
        let e = CurandError::Status {
            call: "curandGenerateNormal",
            code: 105,
        };
        // The message names the call and the status (a message test).
        assert_eq!(
            e.to_string(),
            "cuRAND: curandGenerateNormal failed: CURAND_STATUS_LENGTH_NOT_MULTIPLE: the length is not a multiple required (105)"
        );
        assert!(matches!(
            curand_check(
                "curandGenerateNormal",
                rsys::curandStatus_t::CURAND_STATUS_LENGTH_NOT_MULTIPLE
            ),
            Err(CurandError::Status { code: 105, .. })
        ));
        // `?` into the crate's Error keeps cuRAND's error, found again by downcast_ref; an
        // error of the layers below comes back as itself.
        let e = Error::from(e);
        assert!(matches!(
            e.downcast_ref::<CurandError>(),
            Some(CurandError::Status {
                call: "curandGenerateNormal",
                code: 105
            })
        ));
        assert!(matches!(
            Error::from(CurandError::Cuda(Error::NoDevice)),
            Error::NoDevice
        ));
    }
}
