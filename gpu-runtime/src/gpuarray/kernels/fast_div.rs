//! Division by a number known at launch as a multiplication and a shift (Granlund and
//! Montgomery's method, as CUTLASS's `FastDivmod`). A generated kernel that splits each index
//! into coordinates divides once or twice per element; a 64-bit `/` costs tens of instructions
//! and a 32-bit one about twenty, more than a copy has time for at the memory's speed, where
//! `__umulhi` and a shift cost two.

/// Indices below this (31 bits) divide exactly by [`FastDiv`].
pub(crate) const FAST_DIV_LIMIT: u64 = 1 << 31;

/// The multiplier and shift that divide every `x < 2^31` by `d` as
/// `__umulhi(x, mul) >> shr` (`d == 1` is `x` itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FastDiv {
    /// The divisor.
    pub(crate) d: u32,
    /// `ceil(2^(31 + l) / d)` with `l = ceil(log2(d))`: below `2^32` for every `d >= 2`.
    pub(crate) mul: u32,
    /// `l - 1`.
    pub(crate) shr: u32,
}

impl FastDiv {
    /// The constants for `d` (0 is taken as 1: no kernel divides by an empty axis).
    pub(crate) fn new(d: u32) -> FastDiv {
        if d <= 1 {
            return FastDiv { d: 1, mul: 0, shr: 0 };
        }
        let l = 32 - (d - 1).leading_zeros();
        let p = 31 + l;
        // Exact for x < 2^31: mul * d - 2^p is below d <= 2^(p - 31) (Hacker's Delight 10-9).
        let mul = (1u64 << p).div_ceil(u64::from(d));
        FastDiv {
            d,
            mul: mul as u32,
            shr: p - 32,
        }
    }

    /// `x / d` as the kernel computes it (for the tests).
    #[cfg(test)]
    fn div(self, x: u32) -> u32 {
        if self.d == 1 {
            x
        } else {
            (((u64::from(x) * u64::from(self.mul)) >> 32) as u32) >> self.shr
        }
    }
}

/// The C of `gpu_fdiv(x, d, mul, shr)`: [`FastDiv`] on the device.
pub(crate) const FAST_DIV_C: &str =
    "__device__ __forceinline__ unsigned int gpu_fdiv(unsigned int x, unsigned int d, \
     unsigned int mul, unsigned int shr) {\n    return d == 1u ? x : (__umulhi(x, mul) >> shr);\n}\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quotient_is_exact_below_two_to_the_31() {
        let mut divisors: Vec<u32> = (1..=300).collect();
        for k in 1..32 {
            let p = 1u32 << k;
            divisors.extend([p - 1, p, p.saturating_add(1)]);
        }
        divisors.extend([4096, 8192 * 4096, 1_000_003, u32::MAX]);
        let mut dividends: Vec<u32> = (0..2000).collect();
        for k in 1..32 {
            let p = 1u32 << k;
            dividends.extend([p - 1, p.min((1 << 31) - 1)]);
        }
        // A fixed stream of others (an LCG), up to 2^31 - 1.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            dividends.push((state >> 33) as u32);
        }
        for &d in &divisors {
            let f = FastDiv::new(d);
            for &x in dividends.iter().filter(|&&x| u64::from(x) < FAST_DIV_LIMIT) {
                assert_eq!(f.div(x), x / d, "{x} / {d} with {f:?}");
            }
        }
        assert_eq!(FastDiv::new(0), FastDiv::new(1));
    }
}
