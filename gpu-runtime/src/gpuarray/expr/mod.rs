//! Elementwise arithmetic and math: [`Expr`](crate::gpuarray::Expr), lazy arithmetic fused into one
//! elementwise kernel (`core`, its functions in `func`, its operators in `ops`), the public
//! [`math`](crate::gpuarray::math) (with `math_complex`, `compare` and `bitwise`: the bitwise
//! operators, shifts, `gcd`, `lcm`) and
//! [`promote`](crate::gpuarray::promote) modules, `if_positive`/`vdot` (`select`),
//! [`linear_combination`](crate::gpuarray::linear_combination), and the NumPy functions written
//! as expressions over the lower rooms: `diff` (`diff`), `digitize` and `histogram_density`
//! (`binning`: values and bins), `histogramdd` and `histogram2d` (`histogramdd`), `isclose`, `array_equal`, `nan_to_num` (`close`), the set
//! routines `isin`, `intersect1d`, `union1d`, `setdiff1d`, `setxor1d` (`sets`), `tril`/`triu`
//! (`triangle`), `select`, `compress`, `extract`, `putmask` and `place` (`conditions`), `choose` (`choose`), the
//! weighted `average` (`average`), `gradient` (`gradient`), `unwrap` (`unwrap`), `convolve` and
//! `correlate` (`convolve`), `vander` (`vander`), the polynomial routines `polyval`, `polyadd`,
//! `polysub`, `polymul`, `poly`, `roots` (`polynomial`), `Poly1d` (`poly1d`) and `polyfit`
//! (`polyfit`), `cov` and `corrcoef` (`covariance`), `pad` (`pad`: the modes that copy
//! elements; `pad_fill`: those that compute the border), `inner`, `outer` and `cross`
//! (`products`), `unique` along an axis (`unique_axis`), `nancumsum` and `nancumprod` (`nan_scans`),
//! and the window functions `bartlett`,
//! `blackman`, `hamming`, `hanning`, `kaiser` (`windows`).

pub(crate) mod add_remove;
pub(crate) mod apply_along_axis;
pub(crate) mod average;
pub(crate) mod binning;
pub(crate) mod bitwise;
pub(crate) mod choose;
pub(crate) mod close;
pub(crate) mod compare;
pub(crate) mod conditions;
pub(crate) mod convolve;
pub(crate) mod core;
pub(crate) mod covariance;
pub(crate) mod diff;
pub(crate) mod flat_index;
pub(crate) mod func;
pub(crate) mod gradient;
pub(crate) mod histogramdd;
pub(crate) mod interp;
pub(crate) mod least_squares;
pub(crate) mod linear_combination;
pub(crate) mod logspace;
pub mod math;
pub(crate) mod math_complex;
pub(crate) mod nan_scans;
pub(crate) mod norm;
pub(crate) mod ops;
pub(crate) mod pad;
pub(crate) mod pad_fill;
pub(crate) mod poly1d;
pub(crate) mod polyfit;
pub(crate) mod polynomial;
pub(crate) mod products;
pub mod promote;
pub(crate) mod rounding;
pub(crate) mod select;
pub(crate) mod sets;
pub(crate) mod trapezoid;
pub(crate) mod triangle;
pub(crate) mod unique_axis;
pub(crate) mod unwrap;
pub(crate) mod vander;
pub(crate) mod windows;
