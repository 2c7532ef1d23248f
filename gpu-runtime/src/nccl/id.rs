//! [`UniqueId`]: the 128 bytes every rank of a new communicator must be given, and ways to
//! hand them from one process to the others whatever launches them.

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use cudarc::nccl::sys;

use crate::error::Error;
use crate::nccl::error::{NcclError, Result};
use crate::nccl::library::ensure_loaded;
use crate::nccl::result::check;

/// The size of an NCCL unique id in bytes (`NCCL_UNIQUE_ID_BYTES`).
pub const UNIQUE_ID_BYTES: usize = 128;

/// An NCCL unique id (`ncclUniqueId`): made by one rank, handed to every other, and passed by
/// all of them to [`Comm::init_rank`](crate::nccl::Comm::init_rank).
///
/// It holds the address of the first rank's bootstrap socket, nothing secret, so any channel
/// works: a shared file ([`write_to_file`](Self::write_to_file) and
/// [`read_from_file`](Self::read_from_file)), an environment variable set by the launcher
/// ([`from_env`](Self::from_env)), a command-line argument, or a message, as text
/// ([`to_hex`](Self::to_hex), [`Display`](fmt::Display), [`from_hex`](Self::from_hex),
/// [`FromStr`]). See the module documentation for launching across hosts.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UniqueId {
    bytes: [u8; UNIQUE_ID_BYTES],
}

impl fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The first bytes tell ids apart in logs; all 256 digits would drown them.
        write!(f, "UniqueId({}...)", &self.to_hex()[..16])
    }
}

impl fmt::Display for UniqueId {
    /// The id as [`to_hex`](Self::to_hex) writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl FromStr for UniqueId {
    type Err = NcclError;
    /// The id from [`to_hex`](Self::to_hex)'s text, as [`from_hex`](Self::from_hex).
    fn from_str(s: &str) -> Result<UniqueId> {
        UniqueId::from_hex(s)
    }
}

impl UniqueId {
    /// A new id (`ncclGetUniqueId`), made by the one rank that starts a communicator; it
    /// opens the bootstrap socket the other ranks connect to. Needs no GPU.
    pub fn new() -> Result<UniqueId> {
        ensure_loaded()?;
        let mut raw = sys::ncclUniqueId {
            internal: [0; UNIQUE_ID_BYTES],
        };
        // SAFETY: NCCL is loaded; `raw` is a valid out-pointer.
        check("ncclGetUniqueId", unsafe { sys::ncclGetUniqueId(&mut raw) })?;
        Ok(UniqueId::from_raw(&raw))
    }

    /// An id from its bytes, as another rank's [`as_bytes`](Self::as_bytes) gave them.
    pub fn from_bytes(bytes: [u8; UNIQUE_ID_BYTES]) -> UniqueId {
        UniqueId { bytes }
    }

    /// The id's bytes.
    pub fn as_bytes(&self) -> &[u8; UNIQUE_ID_BYTES] {
        &self.bytes
    }

    pub(crate) fn from_raw(raw: &sys::ncclUniqueId) -> UniqueId {
        UniqueId {
            // `c_char` is i8 or u8 by platform: the bytes are the same either way.
            bytes: raw.internal.map(|c| c as u8),
        }
    }

    pub(crate) fn to_raw(self) -> sys::ncclUniqueId {
        sys::ncclUniqueId {
            internal: self.bytes.map(|b| b as std::ffi::c_char),
        }
    }

    /// The id as 256 lowercase hexadecimal digits: for an environment variable, a command
    /// line or a file.
    pub fn to_hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(2 * UNIQUE_ID_BYTES);
        for b in self.bytes {
            s.push(DIGITS[usize::from(b >> 4)] as char);
            s.push(DIGITS[usize::from(b & 15)] as char);
        }
        s
    }

    /// The id from [`to_hex`](Self::to_hex)'s 256 hexadecimal digits (either case;
    /// surrounding whitespace is ignored).
    pub fn from_hex(text: &str) -> Result<UniqueId> {
        let digits = text.trim().as_bytes();
        if digits.len() != 2 * UNIQUE_ID_BYTES {
            return Err(NcclError::UniqueIdLength {
                expected: 2 * UNIQUE_ID_BYTES,
                len: digits.len(),
            });
        }
        let value = |i: usize| {
            (digits[i] as char)
                .to_digit(16)
                .map(|d| d as u8)
                .ok_or_else(|| NcclError::UniqueIdDigit {
                    position: i,
                    character: digits[i] as char,
                })
        };
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (k, b) in bytes.iter_mut().enumerate() {
            *b = (value(2 * k)? << 4) | value(2 * k + 1)?;
        }
        Ok(UniqueId { bytes })
    }

    /// The id from the environment variable `var`, in [`to_hex`](Self::to_hex)'s form: for
    /// launchers that set one variable for every process.
    pub fn from_env(var: &str) -> Result<UniqueId> {
        let value = std::env::var(var).map_err(|source| NcclError::UniqueIdVariable {
            var: var.to_owned(),
            source,
        })?;
        UniqueId::from_hex(&value)
    }

    /// Writes the id to `path` in [`to_hex`](Self::to_hex)'s form, atomically: to a temporary
    /// file in the same directory, then renamed into place, so that a reader sees the whole id
    /// or no file. An older file at `path` is replaced.
    pub fn write_to_file(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let name = path.file_name().ok_or_else(|| NcclError::PathNamesNoFile {
            path: path.to_path_buf(),
        })?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}.tmp", std::process::id()));
        let temp = path.with_file_name(temp_name);
        std::fs::write(&temp, self.to_hex() + "\n").map_err(|source| Error::Io {
            action: "write",
            path: temp.display().to_string(),
            source,
        })?;
        std::fs::rename(&temp, path).map_err(|source| {
            let _ = std::fs::remove_file(&temp);
            Error::Io {
                action: "rename the written temporary file to",
                path: path.display().to_string(),
                source,
            }
            .into()
        })
    }

    /// Reads the id that [`write_to_file`](Self::write_to_file) wrote to `path`, waiting up to
    /// `timeout` for the file to appear (the ranks start in any order). A file that exists but
    /// holds no id is an error at once.
    ///
    /// A file left from an earlier run is read like a new one: remove it, or use a new path
    /// per run, before starting the ranks.
    pub fn read_from_file(path: impl AsRef<Path>, timeout: Duration) -> Result<UniqueId> {
        let path = path.as_ref();
        let start = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match std::fs::read_to_string(path) {
                Ok(text) => return UniqueId::from_hex(&text),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(Error::Io {
                        action: "read",
                        path: path.display().to_string(),
                        source,
                    }
                    .into())
                }
            }
            if start.elapsed() >= timeout {
                return Err(NcclError::Timeout {
                    operation: format!("waiting for the unique id file {}", path.display()),
                    timeout,
                    aborted: false,
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> UniqueId {
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 37 + 11) as u8;
        }
        UniqueId::from_bytes(bytes)
    }

    #[test]
    fn hex_round_trips() {
        let id = sample();
        let hex = id.to_hex();
        assert_eq!(hex.len(), 256);
        assert_eq!(UniqueId::from_hex(&hex).unwrap(), id);
        assert_eq!(
            UniqueId::from_hex(&format!("  {}\n", hex.to_uppercase())).unwrap(),
            id
        );
        assert_eq!(hex.parse::<UniqueId>().unwrap(), id);
        assert_eq!(id.to_string(), hex);
        assert_eq!(UniqueId::from_raw(&id.to_raw()), id);
    }

    #[test]
    fn bad_hex_is_a_typed_error() {
        let e = UniqueId::from_hex("abc").unwrap_err();
        assert!(
            matches!(
                e,
                NcclError::UniqueIdLength {
                    expected: 256,
                    len: 3
                }
            ),
            "{e}"
        );
        let mut hex = sample().to_hex();
        hex.replace_range(10..11, "g");
        let e = UniqueId::from_hex(&hex).unwrap_err();
        assert!(
            matches!(
                e,
                NcclError::UniqueIdDigit {
                    position: 10,
                    character: 'g'
                }
            ),
            "{e}"
        );
        // Multi-byte characters count as bytes, and are not digits: no panic on a char boundary.
        let e = UniqueId::from_hex(&"é".repeat(128)).unwrap_err();
        assert!(matches!(e, NcclError::UniqueIdDigit { position: 0, .. }), "{e}");
    }
}
