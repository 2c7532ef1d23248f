//! Cache keys: the SHA-256 of everything that determines a compiled image, hashed field by
//! field.

use crate::compiler::sha256::Sha256;

/// A cache key: the SHA-256 of everything that determines a compiled image.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey(pub(crate) [u8; 32]);

impl CacheKey {
    /// The key as 64 lowercase hex digits (the entry's file name without extension).
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CacheKey({})", self.to_hex())
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Feeds length-prefixed fields to SHA-256, so that no two field lists hash alike by
/// concatenation (`["ab", "c"]` vs `["a", "bc"]`).
pub(crate) struct KeyHasher(Sha256);

impl KeyHasher {
    pub(crate) fn new() -> KeyHasher {
        let mut h = KeyHasher(Sha256::new());
        h.field(b"gpu-runtime compile cache v2");
        h.field(env!("CARGO_PKG_VERSION").as_bytes());
        h
    }

    pub(crate) fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    pub(crate) fn list<S: AsRef<str>>(&mut self, items: &[S]) -> &mut Self {
        self.field(&(items.len() as u64).to_le_bytes());
        for i in items {
            self.field(i.as_ref().as_bytes());
        }
        self
    }

    pub(crate) fn finish(self) -> CacheKey {
        CacheKey(self.0.finish())
    }
}
