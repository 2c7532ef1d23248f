//! Cache keys: everything that determines a compiled image, written out as length-prefixed
//! fields (the key's *material*), and the 128-bit XXH3 of that material as the entry's name.
//!
//! The material is stored in the entry and a hit compares it byte for byte, so the name only
//! has to spread entries over files: two materials with one name (by accident, or made so on
//! purpose, which XXH3 does not resist) are a miss, never one module's image served for another.
//! That is why the name need not be a cryptographic digest: hashing a key's kilobyte with
//! SHA-256 in software cost a hit in a new process more than reading its entry.

/// A cache key: the 128-bit XXH3 of everything that determines a compiled image (the entry's
/// file name). An entry also holds what was hashed, and is used only when that matches.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey(pub(crate) [u8; 16]);

impl CacheKey {
    /// The key as 32 lowercase hex digits (the entry's file name without extension).
    pub fn to_hex(&self) -> String {
        self.hex_digits().iter().map(|&d| d as char).collect()
    }

    /// The 32 lowercase hex digits, as ASCII bytes, without allocating.
    pub(crate) fn hex_digits(&self) -> [u8; 32] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut hex = [0u8; 32];
        for (pair, b) in hex.chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[(b >> 4) as usize];
            pair[1] = DIGITS[(b & 15) as usize];
        }
        hex
    }
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CacheKey({})", self.to_hex())
    }
}

/// What a key is made of: length-prefixed fields, so that no two field lists give the same
/// bytes by concatenation (`["ab", "c"]` vs `["a", "bc"]`). `default()` is empty: a part of
/// a key's material, put into one as a field.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyMaterial(Vec<u8>);

impl KeyMaterial {
    /// Material that starts with the format's and this crate's version, so that neither an
    /// older layout nor another version's compile ever matches, with room for `bytes` in all:
    /// a key built in one buffer of the right size touches no memory twice, and a new process
    /// pays for each page it touches first (a page fault, a few microseconds on a virtual
    /// machine).
    pub(crate) fn with_capacity(bytes: usize) -> KeyMaterial {
        let mut m = KeyMaterial(Vec::with_capacity(bytes));
        // v4: the content's fields follow the compiler's in the key, no longer nested in one.
        m.field(b"gpu-runtime compile cache v4");
        m.field(env!("CARGO_PKG_VERSION").as_bytes());
        m
    }

    /// The bytes from `start` on: a tail of the material, such as its content's fields.
    pub(crate) fn tail(&self, start: usize) -> &[u8] {
        self.0.get(start..).unwrap_or_default()
    }

    /// Appends `bytes`, already made of fields (a tail of other material), as they are.
    pub(crate) fn fields(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.extend_from_slice(bytes);
        self
    }

    /// The material's length so far: where the next field starts.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.0.extend_from_slice(bytes);
        self
    }

    pub(crate) fn list<S: AsRef<str>>(&mut self, items: &[S]) -> &mut Self {
        self.field(&(items.len() as u64).to_le_bytes());
        for i in items {
            self.field(i.as_ref().as_bytes());
        }
        self
    }

    /// The material, as stored in an entry.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The key this material is stored under.
    pub(crate) fn key(&self) -> CacheKey {
        CacheKey(xxhash_rust::xxh3::xxh3_128(&self.0).to_le_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_length_prefixed() {
        let mut a = KeyMaterial::with_capacity(64);
        a.list(&["ab", "c"]);
        let mut b = KeyMaterial::with_capacity(64);
        b.list(&["a", "bc"]);
        assert_ne!(a.as_bytes(), b.as_bytes());
        assert_ne!(a.key(), b.key());
        assert_eq!(a.key().to_hex().len(), 32);
        assert_eq!(a.clone().key(), a.key(), "a key is a function of its material");
    }
}
