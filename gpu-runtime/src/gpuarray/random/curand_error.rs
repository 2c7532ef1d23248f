//! [`CurandError`]: why a cuRAND fill failed, in the `gpuarray` layer that calls cuRAND.
//!
//! [`Error`] lives in the lowest layer and cannot name a `gpuarray` type, so cuRAND's errors
//! are not one of its variants. Instead [`CurandGenerator`](crate::gpuarray::CurandGenerator)
//! returns [`CurandResult`], whose error is either cuRAND's own ([`CurandError::Status`],
//! [`CurandError::NotContiguous`]) or an [`Error`] of the layers below, kept whole in
//! [`CurandError::Cuda`]. `?` turns a `CurandError` into an [`Error`]: `Cuda(e)` becomes `e`,
//! and cuRAND's own errors become [`Error::Other`], from which
//! [`Error::downcast_ref`] gets the `CurandError` back.

use crate::error::Error;

/// `Result<T, CurandError>`: what the cuRAND API returns.
pub type CurandResult<T> = std::result::Result<T, CurandError>;

/// Why a cuRAND fill (`gpuarray::CurandGenerator`) or [`curand_version`](crate::gpuarray::curand_version)
/// failed.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum CurandError {
    /// A cuRAND function returned a status other than `CURAND_STATUS_SUCCESS`.
    #[error("cuRAND: {call} failed: {} ({code})", curand_status_name(*.code))]
    Status {
        /// The cuRAND function that failed, e.g. `curandGenerateNormal`.
        call: &'static str,
        /// The numeric `curandStatus_t`, e.g. 105 for `CURAND_STATUS_LENGTH_NOT_MULTIPLE`.
        code: i32,
    },
    /// An array view that is contiguous in neither C nor Fortran order, which cuRAND cannot
    /// fill; nothing was written.
    #[error("invalid argument to {operation}: the array (shape {shape:?}, strides {strides:?}) is not contiguous in C or Fortran order; fill a contiguous array and assign it to this view (`view.assign(&filled)`), or use the array's own `fill_uniform` / `fill_normal` (Philox, no library), which fill any view")]
    NotContiguous {
        /// The operation, e.g. `CurandGenerator::fill_uniform`.
        operation: &'static str,
        /// The array's shape.
        shape: Vec<usize>,
        /// Its strides, in elements.
        strides: Vec<isize>,
    },
    /// An error of the layers below (the driver, a context or stream of another context,
    /// cuRAND not loadable: [`Error::Unsupported`]), kept whole.
    #[error(transparent)]
    Cuda(#[from] Error),
}

/// `Debug` prints the same sentence as `Display`, as [`Error`]'s does.
impl std::fmt::Debug for CurandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// `?` from the cuRAND API into a function returning [`crate::Result`]: an error of the
/// layers below comes back as itself, and cuRAND's own as [`Error::Other`] (match it with
/// `e.downcast_ref::<CurandError>()`).
impl From<CurandError> for Error {
    fn from(e: CurandError) -> Error {
        match e {
            CurandError::Cuda(e) => e,
            own => Error::Other(Box::new(own)),
        }
    }
}

/// The name and meaning of a `curandStatus_t`, for [`CurandError::Status`].
fn curand_status_name(code: i32) -> &'static str {
    match code {
        100 => "CURAND_STATUS_VERSION_MISMATCH: the header and the library versions differ",
        101 => "CURAND_STATUS_NOT_INITIALIZED: the generator was not created",
        102 => "CURAND_STATUS_ALLOCATION_FAILED: out of memory",
        103 => "CURAND_STATUS_TYPE_ERROR: wrong generator type",
        104 => "CURAND_STATUS_OUT_OF_RANGE: an argument is out of range",
        105 => "CURAND_STATUS_LENGTH_NOT_MULTIPLE: the length is not a multiple required",
        106 => "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: the GPU does not support double precision",
        201 => "CURAND_STATUS_LAUNCH_FAILURE: a kernel launch failed",
        202 => "CURAND_STATUS_PREEXISTING_FAILURE: an earlier kernel failed",
        203 => "CURAND_STATUS_INITIALIZATION_FAILED: CUDA could not be initialised",
        204 => "CURAND_STATUS_ARCH_MISMATCH: the GPU does not support this",
        999 => "CURAND_STATUS_INTERNAL_ERROR",
        _ => "an unknown curandStatus_t",
    }
}
