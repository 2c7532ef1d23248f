//! Checking that a Rust type has the layout of the C type it stands for, by asking NVRTC.
//!
//! A `#[repr(C)]` struct passed to a kernel (by value or in a buffer) must have the size,
//! alignment and field offsets of the C struct in the kernel source. Rust cannot see the C
//! struct at compile time, so the check runs at run time (NVRTC, no GPU needed): call
//! [`check_layout`] once, in a test or before first use. It compiles a small probe that stores
//! `sizeof`, `alignof` and `offsetof` in a `__device__` array and reads them back from the PTX.

use crate::compiler::nvrtc::{self, Target};
use crate::error::{Error, Result};

/// The layout NVRTC gives a C type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CLayout {
    /// `sizeof`, in bytes.
    pub size: usize,
    /// `alignof`, in bytes.
    pub align: usize,
    /// `offsetof` of each field asked for, in order.
    pub offsets: Vec<usize>,
}

const PROBE: &str = "__gpu_runtime_probe";

/// Evaluates integer constant expressions (`sizeof(float4)`, `alignof(S)`,
/// `offsetof(S, x)`, …) in the context of `source` with NVRTC, and returns their values.
///
/// Needs NVRTC but no GPU.
///
/// ```
/// let v = gpu_runtime::compiler::layout::probe_constants("struct S { char c; double d; };",
///     &["sizeof(S)", "alignof(S)", "offsetof(S, d)"])?;
/// assert_eq!(v, [16, 8, 8]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn probe_constants(source: &str, exprs: &[&str]) -> Result<Vec<u64>> {
    if exprs.is_empty() {
        return Ok(Vec::new());
    }
    let mut probe = String::with_capacity(source.len() + 64 * exprs.len());
    probe.push_str(source);
    probe.push_str("\n#ifndef offsetof\n#define offsetof(t, m) __builtin_offsetof(t, m)\n#endif\n");
    probe.push_str(&format!("__device__ unsigned long long {PROBE}[] = {{\n"));
    for e in exprs {
        probe.push_str(&format!("    (unsigned long long)({e}),\n"));
    }
    probe.push_str("};\n");
    let arch = nvrtc::supported_archs()?.into_iter().min().unwrap_or(75);
    let target = Target::Ptx {
        major: arch / 10,
        minor: arch % 10,
    };
    let compiled = nvrtc::compile(&probe, "layout_probe.cu", &[], &[], target)?;
    let ptx = String::from_utf8_lossy(&compiled.image);
    parse_probe(&ptx, exprs.len()).ok_or_else(|| Error::Nvrtc {
        call: "nvrtcGetPTX",
        message: format!("the layout probe's constants were not found in the PTX NVRTC produced:\n{ptx}"),
    })
}

/// Reads the probe array from PTX, where NVVM writes it either as 64-bit words
/// (`.u64 __gpu_runtime_probe[3] = {12, 4, 8};`) or as bytes with trailing zeros left out
/// (`.b8 __gpu_runtime_probe[24] = {12, 0, …, 8};`).
fn parse_probe(ptx: &str, n: usize) -> Option<Vec<u64>> {
    let at = ptx.find(&format!("{PROBE}["))?;
    let line_start = ptx[..at].rfind('\n').map_or(0, |i| i + 1);
    let bytes = ptx[line_start..at].contains(".b8");
    let rest = &ptx[at..];
    let (open, close) = (rest.find('{')?, rest.find('}')?);
    let items = rest[open + 1..close]
        .split(',')
        .map(|v| v.trim().parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()?;
    let values = if bytes {
        let mut raw = vec![0u8; n * 8];
        if items.len() > raw.len() {
            return None;
        }
        for (dst, &b) in raw.iter_mut().zip(&items) {
            *dst = u8::try_from(b).ok()?;
        }
        raw.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect()
    } else {
        items
    };
    (values.len() == n).then_some(values)
}

/// The size, alignment and field offsets NVRTC gives the C type `c_type` defined in `source`.
pub fn c_layout(source: &str, c_type: &str, fields: &[&str]) -> Result<CLayout> {
    let mut exprs = vec![format!("sizeof({c_type})"), format!("alignof({c_type})")];
    exprs.extend(fields.iter().map(|f| format!("offsetof({c_type}, {f})")));
    let refs: Vec<&str> = exprs.iter().map(String::as_str).collect();
    let v = probe_constants(source, &refs)?;
    Ok(CLayout {
        size: v[0] as usize,
        align: v[1] as usize,
        offsets: v[2..].iter().map(|&o| o as usize).collect(),
    })
}

/// Checks that `T` has the size and alignment of the C type `c_type` defined in `source`, and
/// that each field given as `(C field name, Rust offset)` sits at the same offset (use
/// `std::mem::offset_of!` for the Rust side).
///
/// Fails with [`Error::LayoutMismatch`] naming what differs. Needs NVRTC but no GPU.
///
/// ```
/// use std::mem::offset_of;
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Particle { pos: gpu_runtime::types::Float3, mass: f32 }
/// const SRC: &str = "struct Particle { float3 pos; float mass; };";
/// gpu_runtime::compiler::layout::check_layout::<Particle>(SRC, "Particle",
///     &[("pos", offset_of!(Particle, pos)), ("mass", offset_of!(Particle, mass))])?;
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn check_layout<T>(source: &str, c_type: &str, fields: &[(&str, usize)]) -> Result<()> {
    let names: Vec<&str> = fields.iter().map(|f| f.0).collect();
    let c = c_layout(source, c_type, &names)?;
    let rust_type = std::any::type_name::<T>();
    let mismatch = |detail: String| Error::LayoutMismatch {
        rust_type,
        c_type: c_type.to_owned(),
        detail,
    };
    let (size, align) = (std::mem::size_of::<T>(), std::mem::align_of::<T>());
    if size != c.size {
        return Err(mismatch(format!(
            "C `sizeof` is {} bytes, Rust `size_of` is {size}",
            c.size
        )));
    }
    if align != c.align {
        return Err(mismatch(format!(
            "C `alignof` is {} bytes, Rust `align_of` is {align}",
            c.align
        )));
    }
    for ((name, rust_offset), c_offset) in fields.iter().zip(&c.offsets) {
        if rust_offset != c_offset {
            return Err(mismatch(format!(
                "field `{name}` is at byte {c_offset} in C but at byte {rust_offset} in Rust"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_probe;

    #[test]
    fn reads_the_probe_array_from_ptx() {
        let ptx = ".visible .global .align 8 .u64 __gpu_runtime_probe[3] = {12, 4, 8};\n";
        assert_eq!(parse_probe(ptx, 3), Some(vec![12, 4, 8]));
        assert_eq!(parse_probe(ptx, 2), None);
        assert_eq!(parse_probe(".global .u64 other[1] = {1};", 1), None);
        let bytes = ".global .align 8 .b8 __gpu_runtime_probe[24] = {16, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 8};";
        assert_eq!(parse_probe(bytes, 3), Some(vec![16, 8, 8]));
    }
}
