//! The bytes of an entry: a magic number, the lengths of the key's material, of the compiler's
//! identity and of the payload, the XXH3-128 checksum of identity and payload, the material
//! the entry was stored under, the identity of the compiler that made it (the NVRTC library
//! file, for a key that names the loader's search instead; else empty), then the payload
//! (target, lowered kernel names, compiler log, image).

use crate::compiler::cache::key::KeyMaterial;
use crate::compiler::nvrtc::{CompiledModule, Target};

const MAGIC: &[u8; 8] = b"GPURTC\x04\n";
/// Magic, the material's, the identity's and the payload's lengths, the checksum.
pub(super) const HEADER: usize = 8 + 8 + 8 + 8 + 16;

pub(super) fn encode(m: &CompiledModule, material: &KeyMaterial, compiler: &[u8]) -> Vec<u8> {
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
    let mut out = Vec::with_capacity(HEADER + material.len() + compiler.len() + p.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(material.len() as u64).to_le_bytes());
    out.extend_from_slice(&(compiler.len() as u64).to_le_bytes());
    out.extend_from_slice(&(p.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(compiler, &p));
    out.extend_from_slice(material);
    out.extend_from_slice(compiler);
    out.extend_from_slice(&p);
    out
}

fn put_bytes(p: &mut Vec<u8>, b: &[u8]) {
    p.extend_from_slice(&(b.len() as u64).to_le_bytes());
    p.extend_from_slice(b);
}

/// The XXH3-128 of the identity followed by the payload, as they lie in the entry.
fn checksum(compiler: &[u8], payload: &[u8]) -> [u8; 16] {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(compiler);
    h.update(payload);
    h.digest128().to_le_bytes()
}

/// Verifies (magic, material, lengths, checksum) and parses the entry stored under
/// `material`; `None` for anything malformed, and for an entry stored under other material
/// (renamed or copied into place, by accident or by someone who may write the directory, or
/// another compile whose key has the same name). With the module comes the identity of the
/// compiler that made it, as stored. The image is moved to the front of `bytes`, which becomes
/// the module's: a copy would touch new memory, which a new process pays for by the page.
pub(super) fn decode(mut bytes: Vec<u8>, material: &KeyMaterial) -> Option<(CompiledModule, Vec<u8>)> {
    let material = material.as_bytes();
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return None;
    }
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[8 + 8 * i..16 + 8 * i]);
        u64::from_le_bytes(w)
    };
    let (material_len, compiler_len, len) = (word(0), word(1), word(2));
    if material_len != material.len() as u64 {
        return None;
    }
    let (stored, rest) = bytes[HEADER..].split_at_checked(material.len())?;
    let (compiler, payload) = rest.split_at_checked(usize::try_from(compiler_len).ok()?)?;
    // The identity and the payload lie together, so they are hashed in one call: the same
    // digest as `checksum`'s two updates, by the one-shot code the key's hash has just run
    // (the streaming hasher is more code to fault in, in a new process).
    if stored != material
        || payload.len() as u64 != len
        || xxhash_rust::xxh3::xxh3_128(rest).to_le_bytes()[..] != bytes[32..HEADER]
    {
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
    let image_len = r.bytes()?.len();
    if !r.0.is_empty() {
        return None;
    }
    let compiler = compiler.to_vec();
    // The image is the entry's last field: it ends where the entry does.
    let image_start = bytes.len() - image_len;
    bytes.copy_within(image_start.., 0);
    bytes.truncate(image_len);
    let module = CompiledModule {
        image: bytes,
        target,
        lowered_names,
        log,
    };
    Some((module, compiler))
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
