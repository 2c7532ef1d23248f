//! Grid and block dimensions, and the checks a launch configuration passes before the driver
//! sees it.

use crate::driver::device::DeviceLimits;
use crate::driver::module::loaded::KernelLimits;
use crate::error::LaunchConfigError;

/// A grid or block shape: `(x, y, z)`, built from an integer or a 1-, 2- or 3-tuple (or a 2-
/// or 3-array) of integers of any primitive type, mixed freely ([`DimExtent`]).
///
/// Components are kept as given (even negative or zero ones) so that a bad shape is reported
/// with the value the user wrote, by the launch check, instead of being silently wrapped.
///
/// ```
/// use gpu_runtime::Dim3;
/// assert_eq!(Dim3::from(256), Dim3::new(256, 1, 1));
/// assert_eq!(Dim3::from((16, 16)), Dim3::new(16, 16, 1));
/// assert_eq!(Dim3::from((4u32, 2u32, 2u32)).threads(), 16);
/// assert_eq!(Dim3::from((1usize << 20, 4u8)), Dim3::new(1 << 20, 4, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent along x.
    pub x: i64,
    /// Extent along y.
    pub y: i64,
    /// Extent along z.
    pub z: i64,
}

impl Dim3 {
    /// A shape from its three extents.
    pub const fn new(x: i64, y: i64, z: i64) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// `x * y * z` (0 when any extent is below 1).
    pub fn threads(&self) -> u64 {
        if self.x < 1 || self.y < 1 || self.z < 1 {
            return 0;
        }
        (self.x as u64)
            .saturating_mul(self.y as u64)
            .saturating_mul(self.z as u64)
    }
}

/// An integer a grid or block extent can be given as: every primitive integer type, so that
/// `(n.div_ceil(256), 1u32)` or a `u64` count needs no cast.
///
/// A value no `i64` holds (a `u64` or `usize` above `i64::MAX`, an `i128` outside `i64`) is
/// saturated to `i64::MAX` or `i64::MIN`, which the launch check then refuses with its usual
/// typed error ([`LaunchConfigError::GridDimTooLarge`], [`LaunchConfigError::ZeroDimension`], ...)
/// instead of a wrapped value. Sealed: [`Dim3`]'s conversions rely on it being an integer.
pub trait DimExtent: Copy + sealed::Sealed {
    /// The extent as a [`Dim3`] component.
    fn extent(self) -> i64;
}

mod sealed {
    /// Keeps [`DimExtent`](super::DimExtent) to the integer types below.
    pub trait Sealed {}
}

macro_rules! dim_extent {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl DimExtent for $t {
            #[inline]
            fn extent(self) -> i64 {
                // Saturating: a value out of i64's range stays out of every device's range.
                i64::try_from(self).unwrap_or(if self > 0 { i64::MAX } else { i64::MIN })
            }
        }
    )*};
}
dim_extent!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

impl<X: DimExtent> From<X> for Dim3 {
    fn from(x: X) -> Dim3 {
        Dim3::new(x.extent(), 1, 1)
    }
}

impl<X: DimExtent> From<(X,)> for Dim3 {
    fn from((x,): (X,)) -> Dim3 {
        Dim3::new(x.extent(), 1, 1)
    }
}

impl<X: DimExtent, Y: DimExtent> From<(X, Y)> for Dim3 {
    fn from((x, y): (X, Y)) -> Dim3 {
        Dim3::new(x.extent(), y.extent(), 1)
    }
}

impl<X: DimExtent, Y: DimExtent, Z: DimExtent> From<(X, Y, Z)> for Dim3 {
    fn from((x, y, z): (X, Y, Z)) -> Dim3 {
        Dim3::new(x.extent(), y.extent(), z.extent())
    }
}

impl<T: DimExtent> From<[T; 2]> for Dim3 {
    fn from([x, y]: [T; 2]) -> Dim3 {
        Dim3::new(x.extent(), y.extent(), 1)
    }
}

impl<T: DimExtent> From<[T; 3]> for Dim3 {
    fn from([x, y, z]: [T; 3]) -> Dim3 {
        Dim3::new(x.extent(), y.extent(), z.extent())
    }
}

/// A launch configuration that passed [`validate`]: the exact numbers handed to the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckedLaunch {
    /// Grid extents.
    pub grid: [u32; 3],
    /// Block extents.
    pub block: [u32; 3],
    /// Dynamic shared memory in bytes.
    pub shared_mem_bytes: u32,
}

const AXES: [&str; 3] = ["X", "Y", "Z"];
const GRID: [&str; 3] = ["grid.x", "grid.y", "grid.z"];
const BLOCK: [&str; 3] = ["block.x", "block.y", "block.z"];

/// Checks a launch against the device's and the kernel's limits.
///
/// Everything the driver would reject with a bare `CUDA_ERROR_INVALID_VALUE` is caught here and
/// reported with the limit it broke. Allocation-free: it runs on every launch.
#[inline]
pub fn validate(
    grid: Dim3,
    block: Dim3,
    shared_mem_bytes: u32,
    device: &DeviceLimits,
    kernel: &KernelLimits,
) -> Result<CheckedLaunch, LaunchConfigError> {
    let g = [grid.x, grid.y, grid.z];
    let b = [block.x, block.y, block.z];
    let mut out = CheckedLaunch {
        grid: [0; 3],
        block: [0; 3],
        shared_mem_bytes,
    };
    for i in 0..3 {
        at_least_one(GRID[i], g[i])?;
        at_least_one(BLOCK[i], b[i])?;
        if b[i] > device.max_block_dim[i] as i64 {
            return Err(LaunchConfigError::BlockDimTooLarge {
                which: BLOCK[i],
                axis: AXES[i],
                value: b[i],
                limit: device.max_block_dim[i],
            });
        }
        if g[i] > device.max_grid_dim[i] as i64 {
            return Err(LaunchConfigError::GridDimTooLarge {
                which: GRID[i],
                axis: AXES[i],
                value: g[i],
                limit: device.max_grid_dim[i],
            });
        }
        out.grid[i] = g[i] as u32;
        out.block[i] = b[i] as u32;
    }
    let threads = block.threads();
    if threads > device.max_threads_per_block as u64 {
        return Err(LaunchConfigError::TooManyThreads {
            threads,
            limit: device.max_threads_per_block,
            by: "this device",
        });
    }
    if threads > kernel.max_threads_per_block as u64 {
        return Err(LaunchConfigError::TooManyThreads {
            threads,
            limit: kernel.max_threads_per_block,
            by: "this kernel (limited by the registers it uses)",
        });
    }
    let shared_limit = device
        .max_shared_memory_per_block_optin
        .max(device.max_shared_memory_per_block);
    if shared_mem_bytes as u64 + kernel.static_shared_bytes as u64 > shared_limit as u64 {
        return Err(LaunchConfigError::SharedMemoryTooLarge {
            requested: shared_mem_bytes as u64,
            static_bytes: kernel.static_shared_bytes,
            limit: shared_limit,
        });
    }
    Ok(out)
}

/// Refuses an extent below 1 (a grid, block or cluster dimension, named `which`): [`Dim3`]
/// keeps zero and negative values as written so that this error can name them.
#[inline]
pub(crate) fn at_least_one(which: &'static str, value: i64) -> Result<(), LaunchConfigError> {
    if value < 1 {
        return Err(LaunchConfigError::ZeroDimension { which, value });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: DeviceLimits = DeviceLimits::typical(227 * 1024);
    const K: KernelLimits = KernelLimits {
        max_threads_per_block: 1024,
        static_shared_bytes: 0,
    };

    fn check(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Result<CheckedLaunch, LaunchConfigError> {
        validate(grid.into(), block.into(), 0, &DEV, &K)
    }

    #[test]
    fn tuples_of_every_arity_become_dims() {
        assert_eq!(Dim3::from((7,)), Dim3::new(7, 1, 1));
        assert_eq!(Dim3::from((7, 3)), Dim3::new(7, 3, 1));
        assert_eq!(Dim3::from((7usize, 3, 2)), Dim3::new(7, 3, 2));
        assert_eq!(Dim3::from([2u32, 3, 4]).threads(), 24);
        assert_eq!(Dim3::from((0, 3)).threads(), 0);
    }

    #[test]
    fn every_integer_type_and_mixed_tuples_become_dims() {
        assert_eq!(Dim3::from(7u64), Dim3::new(7, 1, 1));
        assert_eq!(Dim3::from(7u8), Dim3::from(7i16));
        assert_eq!(Dim3::from((7usize, 3u32)), Dim3::new(7, 3, 1));
        assert_eq!(Dim3::from((7u64, 3i8, 2u16)), Dim3::new(7, 3, 2));
        assert_eq!(Dim3::from([5isize, 6]), Dim3::new(5, 6, 1));
        assert_eq!(Dim3::from((1u128, -2i128)), Dim3::new(1, -2, 1));
        assert_eq!(check((64u64, 2usize), (32u16, 4u8)).unwrap().grid, [64, 2, 1]);
    }

    #[test]
    fn an_extent_no_i64_holds_is_the_usual_typed_error_not_a_wrapped_value() {
        // `as i64` would make u64::MAX a -1, reported as a zero dimension it is not.
        assert_eq!(Dim3::from(u64::MAX).x, i64::MAX);
        assert_eq!(Dim3::from(u128::MAX).x, i64::MAX);
        assert_eq!(Dim3::from(i128::MIN).x, i64::MIN);
        assert!(matches!(
            check((1u32, u64::MAX), 32),
            Err(LaunchConfigError::GridDimTooLarge {
                which: "grid.y",
                value: i64::MAX,
                ..
            })
        ));
        assert!(matches!(
            check(1, (usize::MAX, 1u8)),
            Err(LaunchConfigError::BlockDimTooLarge {
                which: "block.x",
                value: i64::MAX,
                ..
            })
        ));
        assert!(matches!(
            check(i128::MIN, 32),
            Err(LaunchConfigError::ZeroDimension {
                which: "grid.x",
                value: i64::MIN
            })
        ));
    }

    #[test]
    fn a_valid_launch_passes_through_unchanged() {
        let c = check((4096, 2), (256,)).unwrap();
        assert_eq!(c.grid, [4096, 2, 1]);
        assert_eq!(c.block, [256, 1, 1]);
    }

    #[test]
    fn zero_and_negative_dimensions_are_named() {
        assert_eq!(
            check(0, 256),
            Err(LaunchConfigError::ZeroDimension {
                which: "grid.x",
                value: 0
            })
        );
        assert_eq!(
            check((1, 1, 1), (32, -2, 1)),
            Err(LaunchConfigError::ZeroDimension {
                which: "block.y",
                value: -2
            })
        );
    }

    #[test]
    fn block_limits_name_the_axis_and_limit() {
        let e = check(1, (1, 1, 65)).unwrap_err();
        assert_eq!(
            e,
            LaunchConfigError::BlockDimTooLarge {
                which: "block.z",
                axis: "Z",
                value: 65,
                limit: 64
            }
        );
        // The message gives the limit (a message test).
        assert!(e.to_string().contains("at most 64"));
        let e = check(1, (2048,)).unwrap_err();
        assert!(matches!(
            e,
            LaunchConfigError::BlockDimTooLarge {
                which: "block.x",
                limit: 1024,
                ..
            }
        ));
        let e = check(1, (64, 32)).unwrap_err();
        assert_eq!(
            e,
            LaunchConfigError::TooManyThreads {
                threads: 2048,
                limit: 1024,
                by: "this device"
            }
        );
    }

    #[test]
    fn grid_limits_name_the_axis_and_limit() {
        let e = check((1, 65536), 32).unwrap_err();
        assert!(matches!(
            e,
            LaunchConfigError::GridDimTooLarge {
                which: "grid.y",
                limit: 65535,
                ..
            }
        ));
        let e = check(3_000_000_000i64, 32).unwrap_err();
        assert!(
            matches!(
                e,
                LaunchConfigError::GridDimTooLarge {
                    which: "grid.x",
                    value: 3_000_000_000,
                    limit: 2147483647,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn kernel_register_limit_is_enforced() {
        let k = KernelLimits {
            max_threads_per_block: 640,
            static_shared_bytes: 0,
        };
        let e = validate(Dim3::from(1), Dim3::from(768), 0, &DEV, &k).unwrap_err();
        assert!(
            matches!(
                e,
                LaunchConfigError::TooManyThreads {
                    threads: 768,
                    limit: 640,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn shared_memory_counts_static_and_dynamic() {
        let k = KernelLimits {
            max_threads_per_block: 1024,
            static_shared_bytes: 16 * 1024,
        };
        assert!(validate(1.into(), 32.into(), 200 * 1024, &DEV, &k).is_ok());
        let e = validate(1.into(), 32.into(), 220 * 1024, &DEV, &k).unwrap_err();
        assert!(matches!(e, LaunchConfigError::SharedMemoryTooLarge { limit, .. } if limit == 227 * 1024));
    }
}
