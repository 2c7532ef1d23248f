//! Which image to build: an architecture named in an option (`sm_90`, `compute_80`), or the
//! best one a compiler supports for a device.

use crate::error::{Error, Result};

/// What a compile produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Machine code for `sm_XY` (loads without a JIT step).
    Cubin {
        /// Compute capability major.
        major: u32,
        /// Compute capability minor.
        minor: u32,
    },
    /// PTX for `compute_XY`, compiled by the driver when loaded.
    Ptx {
        /// Compute capability major.
        major: u32,
        /// Compute capability minor.
        minor: u32,
    },
}

impl Target {
    pub(crate) fn arch_option(&self) -> String {
        match *self {
            Target::Cubin { major, minor } => format!("--gpu-architecture=sm_{major}{minor}"),
            Target::Ptx { major, minor } => format!("--gpu-architecture=compute_{major}{minor}"),
        }
    }
}

/// The error of a compile that names no architecture where there is no device to take one
/// from.
pub(crate) fn no_arch() -> Error {
    Error::InvalidCompileOption {
        option: "arch",
        detail: "no architecture was given and there is no device to take it from; set \
                 `.arch(\"sm_90\")` (or `compute_90` for PTX) to compile without a GPU"
            .into(),
    }
}

/// `sm_XY` → a cubin, `compute_XY` → PTX.
pub(crate) fn parse_target(arch: &str) -> Result<Target> {
    let bad = || Error::InvalidCompileOption {
        option: "arch",
        detail: format!(
            "{arch:?} is not an architecture NVRTC takes: use sm_XY (a cubin) or compute_XY (PTX), e.g. sm_90"
        ),
    };
    let (digits, cubin) = if let Some(d) = arch.strip_prefix("sm_") {
        (d, true)
    } else if let Some(d) = arch.strip_prefix("compute_") {
        (d, false)
    } else {
        return Err(bad());
    };
    let digits = digits.trim_end_matches(['a', 'f']);
    let n: u32 = digits.parse().map_err(|_| bad())?;
    if !(10..=999).contains(&n) {
        return Err(bad());
    }
    let (major, minor) = (n / 10, n % 10);
    Ok(if cubin {
        Target::Cubin { major, minor }
    } else {
        Target::Ptx { major, minor }
    })
}

/// [`Target::for_device`] from a known architecture list.
pub(crate) fn choose_target(cc: (u32, u32), supported: &[u32]) -> Result<Target> {
    let code = cc.0 * 10 + cc.1;
    if supported.contains(&code) {
        return Ok(Target::Cubin {
            major: cc.0,
            minor: cc.1,
        });
    }
    match supported.iter().copied().filter(|&a| a <= code).max() {
        Some(a) => Ok(Target::Ptx {
            major: a / 10,
            minor: a % 10,
        }),
        None => Err(Error::InvalidCompileOption {
            option: "arch",
            detail: format!(
                "this NVRTC cannot compile for compute capability {}.{} (it supports {supported:?})",
                cc.0, cc.1
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_parse_to_targets() {
        assert_eq!(
            parse_target("sm_90").unwrap(),
            Target::Cubin { major: 9, minor: 0 }
        );
        assert_eq!(
            parse_target("compute_75").unwrap(),
            Target::Ptx { major: 7, minor: 5 }
        );
        assert_eq!(
            parse_target("sm_90a").unwrap(),
            Target::Cubin { major: 9, minor: 0 }
        );
        for bad in ["90", "sm_", "sm_x", "gfx90a", "compute_1"] {
            assert!(
                matches!(parse_target(bad), Err(Error::InvalidCompileOption { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_target_falls_back_to_ptx_for_unknown_devices() {
        assert_eq!(
            choose_target((9, 0), &[80, 90]).unwrap(),
            Target::Cubin { major: 9, minor: 0 }
        );
        assert_eq!(
            choose_target((8, 9), &[80, 90]).unwrap(),
            Target::Ptx { major: 8, minor: 0 }
        );
        assert!(choose_target((5, 0), &[80, 90]).is_err());
    }
}
