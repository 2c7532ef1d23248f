//! Grid and block dimensions, and the checks a launch configuration passes before the driver
//! sees it.

use crate::driver::device::DeviceLimits;
use crate::driver::module::loaded::KernelLimits;
use crate::error::LaunchConfigError;

/// A grid or block shape: `(x, y, z)`, built from an integer or a 1-, 2- or 3-tuple.
///
/// Components are kept as given (even negative or zero ones) so that a bad shape is reported
/// with the value the user wrote, by the launch check, instead of being silently wrapped.
///
/// ```
/// use gpu_runtime::Dim3;
/// assert_eq!(Dim3::from(256), Dim3::new(256, 1, 1));
/// assert_eq!(Dim3::from((16, 16)), Dim3::new(16, 16, 1));
/// assert_eq!(Dim3::from((4u32, 2u32, 2u32)).threads(), 16);
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

macro_rules! dim3_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Dim3 {
            fn from(x: $t) -> Dim3 {
                Dim3::new(x as i64, 1, 1)
            }
        }
        impl From<($t,)> for Dim3 {
            fn from((x,): ($t,)) -> Dim3 {
                Dim3::new(x as i64, 1, 1)
            }
        }
        impl From<($t, $t)> for Dim3 {
            fn from((x, y): ($t, $t)) -> Dim3 {
                Dim3::new(x as i64, y as i64, 1)
            }
        }
        impl From<($t, $t, $t)> for Dim3 {
            fn from((x, y, z): ($t, $t, $t)) -> Dim3 {
                Dim3::new(x as i64, y as i64, z as i64)
            }
        }
        impl From<[$t; 3]> for Dim3 {
            fn from([x, y, z]: [$t; 3]) -> Dim3 {
                Dim3::new(x as i64, y as i64, z as i64)
            }
        }
    )*};
}
// usize values above i64::MAX do not exist on 64-bit targets' address spaces in practice; the
// `as` conversion keeps them negative, which the launch check then rejects.
dim3_from!(i32, u32, i64, usize);

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
        if g[i] < 1 {
            return Err(LaunchConfigError::ZeroDimension {
                which: GRID[i],
                value: g[i],
            });
        }
        if b[i] < 1 {
            return Err(LaunchConfigError::ZeroDimension {
                which: BLOCK[i],
                value: b[i],
            });
        }
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
