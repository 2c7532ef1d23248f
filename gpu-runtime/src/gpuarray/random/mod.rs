//! Random fills: the counter-based Philox generator written as a generated kernel (`philox`),
//! and cuRAND's generator (`curand`, its errors in `curand_error`).

pub(crate) mod curand;
pub(crate) mod curand_error;
pub(crate) mod integers;
pub(crate) mod philox;
