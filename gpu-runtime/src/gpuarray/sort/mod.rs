//! Sorting: a stable LSD radix sort of 8-bit digits in one pass per digit (`radix`, its CUDA C
//! in `source`, the element types' keys in `keys`) and the operations on arrays built on it
//! (`ops`: `sort`, `argsort`, `unique`, `searchsorted`; `quantile`: `median`, `quantile`, `percentile`, over one axis or several, for one `q` or a list; `order`: `lexsort`, `partition`; `quantile_method`: NumPy's `method=` of the quantiles).

pub(crate) mod keys;
pub(crate) mod ops;
pub(crate) mod order;
pub(crate) mod quantile;
pub(crate) mod quantile_method;
pub(crate) mod radix;
pub(crate) mod source;

#[cfg(test)]
mod tests;
