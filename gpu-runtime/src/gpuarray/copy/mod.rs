//! Copies, fills and gathers: the array methods that run a kernel (`fill`, `assign`, `astype`,
//! `to_contiguous`: `methods`, with their kernels in `builtin`, and the fast paths
//! `convert_contig` and `transpose`; NumPy's `copyto` with its mask: `copyto`), arrays made filled (`construct`: `full`, `arange`, ...),
//! gathers and scatters through index arrays (`gather`), and the copies that rearrange or
//! repeat elements (`tiling`: `roll`, `repeat`, `tile`, with their kernels in `word_moves`),
//! the copies into or out of a diagonal (`diag`) or a grid (`grids`: `meshgrid`), and the
//! elements' truth packed into bits and back (`packing`: `packbits`, `unpackbits`).

pub(crate) mod builtin;
pub(crate) mod construct;
pub(crate) mod convert_contig;
pub(crate) mod copyto;
pub(crate) mod diag;
pub(crate) mod gather;
pub(crate) mod grids;
pub(crate) mod methods;
pub(crate) mod order;
pub(crate) mod packing;
pub(crate) mod take_along;
pub(crate) mod tiling;
pub(crate) mod transpose;
pub(crate) mod word_moves;
