//! [`QuantileMethod`]: NumPy's `method=` of the quantiles, shared by the array methods
//! (`ops`) and the kernel that computes them (`source`), which takes it as its code.

/// How a quantile falls between the sorted elements (NumPy's `method=` of `quantile`,
/// `percentile` and their `nan` forms; Hyndman and Fan's nine definitions and NumPy's four
/// others). Each names NumPy's method; the continuous ones interpolate between the two
/// elements around a virtual index, the discrete ones (`Lower`, `Higher`, `Nearest`,
/// `InvertedCdf`, `ClosestObservation`) take one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(i32)]
pub enum QuantileMethod {
    /// `'linear'` (the default; Hyndman and Fan's 7): index `(n - 1) q`.
    #[default]
    Linear = 0,
    /// `'midpoint'`: the mean of the `Lower` and `Higher` elements.
    Midpoint = 1,
    /// `'averaged_inverted_cdf'` (H&F 2): index `n q - 1`, the mean of two elements where it
    /// is whole, else the next one.
    AveragedInvertedCdf = 2,
    /// `'interpolated_inverted_cdf'` (H&F 4).
    InterpolatedInvertedCdf = 3,
    /// `'hazen'` (H&F 5).
    Hazen = 4,
    /// `'weibull'` (H&F 6).
    Weibull = 5,
    /// `'median_unbiased'` (H&F 8).
    MedianUnbiased = 6,
    /// `'normal_unbiased'` (H&F 9).
    NormalUnbiased = 7,
    /// `'lower'`: the element at `floor((n - 1) q)`.
    Lower = 8,
    /// `'higher'`: the element at `ceil((n - 1) q)`.
    Higher = 9,
    /// `'nearest'`: the element at `(n - 1) q` rounded, halves to even.
    Nearest = 10,
    /// `'inverted_cdf'` (H&F 1).
    InvertedCdf = 11,
    /// `'closest_observation'` (H&F 3).
    ClosestObservation = 12,
}
