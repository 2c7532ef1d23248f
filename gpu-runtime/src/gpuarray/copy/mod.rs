//! Copies, fills and gathers: the array methods that run a kernel (`fill`, `assign`, `astype`,
//! `to_contiguous`: `methods`, with their kernels in `builtin`, and the fast paths
//! `convert_contig` and `transpose`), arrays made filled (`construct`: `full`, `arange`, ...),
//! and gathers and scatters through index arrays (`gather`).

pub(crate) mod builtin;
pub(crate) mod construct;
pub(crate) mod convert_contig;
pub(crate) mod gather;
pub(crate) mod methods;
pub(crate) mod order;
pub(crate) mod take_along;
pub(crate) mod transpose;
