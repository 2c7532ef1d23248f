//! The bytes of an entry: a magic number, the lengths of the key's material and of the payload,
//! the payload's XXH3-128 checksum, the material the entry was stored under, then the payload
//! (target, lowered kernel names, compiler log, image).

use crate::compiler::cache::key::KeyMaterial;
use crate::compiler::nvrtc::{CompiledModule, Target};

const MAGIC: &[u8; 8] = b"GPURTC\x04\n";
/// Magic, the material's length, the payload's length and checksum.
pub(super) const HEADER: usize = 8 + 8 + 8 + 16;

pub(super) fn encode(m: &CompiledModule, material: &KeyMaterial) -> Vec<u8> {
    let mut p = Vec::with_capacity(m.image.len() + 256);
    let (tag, major, minor) = match m.target {
        Target::Cubin { major, minor } => (0u8, major, minor),
        Target::Ptx { major, minor } => (1u8, major, minor),
    };
    p.push(tag);
    p.extend_from_slice(&major.to_le_bytes());
    p.extend_from_slice(&minor.to_le_bytes());
    p.extend_from_slice(&(m.lowered_names.len() as u32).to_le_bytes());
    for n in &m.lowered_names {
        put_bytes(&mut p, n.as_bytes());
    }
    put_bytes(&mut p, m.log.as_bytes());
    put_bytes(&mut p, &m.image);
    let material = material.as_bytes();
    let mut out = Vec::with_capacity(HEADER + material.len() + p.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(material.len() as u64).to_le_bytes());
    out.extend_from_slice(&(p.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(&p));
    out.extend_from_slice(material);
    out.extend_from_slice(&p);
    out
}

fn put_bytes(p: &mut Vec<u8>, b: &[u8]) {
    p.extend_from_slice(&(b.len() as u64).to_le_bytes());
    p.extend_from_slice(b);
}

fn checksum(payload: &[u8]) -> [u8; 16] {
    xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes()
}

/// Verifies (magic, material, lengths, checksum) and parses the entry stored under
/// `material`; `None` for anything malformed, and for an entry stored under other material
/// (renamed or copied into place, by accident or by someone who may write the directory, or
/// another compile whose key has the same name).
pub(super) fn decode(bytes: &[u8], material: &KeyMaterial) -> Option<CompiledModule> {
    let material = material.as_bytes();
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return None;
    }
    let material_len = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
    let len = u64::from_le_bytes(bytes[16..24].try_into().ok()?);
    if material_len != material.len() as u64 {
        return None;
    }
    let (stored, payload) = bytes[HEADER..].split_at_checked(material.len())?;
    if stored != material || payload.len() as u64 != len || checksum(payload)[..] != bytes[24..HEADER] {
        return None;
    }
    let mut r = Reader(payload);
    let tag = r.take(1)?[0];
    let major = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
    let minor = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
    let target = match tag {
        0 => Target::Cubin { major, minor },
        1 => Target::Ptx { major, minor },
        _ => return None,
    };
    let n = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
    let mut lowered_names = Vec::with_capacity(n.min(4096));
    for _ in 0..n {
        lowered_names.push(String::from_utf8(r.bytes()?.to_vec()).ok()?);
    }
    let log = String::from_utf8(r.bytes()?.to_vec()).ok()?;
    let image = r.bytes()?.to_vec();
    if !r.0.is_empty() {
        return None;
    }
    Some(CompiledModule {
        image,
        target,
        lowered_names,
        log,
    })
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        self.take(usize::try_from(n).ok()?)
    }
}
