//! Kernels compiled ahead of time and embedded in the binary by `#[kernel(…, embed = […])]`:
//! choosing the image a device can load, so that a program runs where only the driver is
//! installed and pays no compile at first launch.

use crate::error::Error;

/// Public getters of fields, each with its docs: `name: Type;` returns `self.name`.
macro_rules! getters {
    ($($(#[$doc:meta])* $name:ident: $t:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name(&self) -> $t {
            self.$name
        }
    )*};
}
pub(super) use getters;

/// What an embedded image holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// Machine code for `sm_XY`: loads on devices of the same major version and a minor version
    /// at least `Y`.
    Cubin,
    /// PTX for `compute_XY`: the driver compiles it for any device of compute capability `XY`
    /// or newer, provided the driver knows the PTX ISA version, i.e. the NVRTC that built it is
    /// no newer than the driver's CUDA version (PTX from NVRTC 13.5 does not load on a CUDA 13.0
    /// driver; embed a cubin for such machines).
    Ptx,
}

/// A compiled module embedded in the program: the image, what it is for, and the symbol of
/// each kernel of its [`ModuleSource`](crate::compiler::ModuleSource), in order.
#[derive(Debug)]
pub struct EmbeddedImage {
    kind: ImageKind,
    arch: u32,
    bytes: &'static [u8],
    lowered_names: &'static [&'static str],
}

impl EmbeddedImage {
    /// An image of `kind` for architecture `arch` (`XY`, e.g. `90`); PTX must end with a NUL.
    pub const fn new(
        kind: ImageKind,
        arch: u32,
        bytes: &'static [u8],
        lowered_names: &'static [&'static str],
    ) -> EmbeddedImage {
        EmbeddedImage {
            kind,
            arch,
            bytes,
            lowered_names,
        }
    }

    getters! {
        /// Cubin or PTX.
        kind: ImageKind;
        /// The architecture, as `XY` (e.g. `90` for `sm_90` / `compute_90`).
        arch: u32;
        /// The image itself.
        bytes: &'static [u8];
        /// The symbol of each kernel, in the order of the source's kernels.
        lowered_names: &'static [&'static str];
    }
}

/// The best image for a device of compute capability `cc`: the cubin of the newest
/// architecture the device runs (same major, minor not above the device's), else the PTX of
/// the newest architecture not above the device's, else none (the source is compiled).
pub fn pick_embedded(images: &[EmbeddedImage], cc: (u32, u32)) -> Option<&EmbeddedImage> {
    let code = cc.0 * 10 + cc.1;
    let cubin = images
        .iter()
        .filter(|i| i.kind == ImageKind::Cubin && i.arch / 10 == cc.0 && i.arch <= code)
        .max_by_key(|i| i.arch);
    cubin.or_else(|| {
        images
            .iter()
            .filter(|i| i.kind == ImageKind::Ptx && i.arch <= code)
            .max_by_key(|i| i.arch)
    })
}

/// Who made a PTX image and for which PTX ISA, from the comments and `.version` line NVRTC
/// and nvcc write at its top: (`"NVRTC of CUDA 13.1 (V13.1.80)"`, `"9.1"`). Unknown parts are
/// said to be unknown.
pub(crate) fn ptx_producer(ptx: &[u8]) -> (String, String) {
    let head = String::from_utf8_lossy(&ptx[..ptx.len().min(4096)]);
    let mut built_by = String::from("an unknown compiler");
    let mut isa = String::from("unknown");
    for line in head.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("// Cuda compilation tools, release ") {
            // "13.1, V13.1.80"
            let mut parts = rest.split(", ");
            let release = parts.next().unwrap_or("?");
            built_by = match parts.next() {
                Some(v) => format!("the compiler of CUDA {release} ({v})"),
                None => format!("the compiler of CUDA {release}"),
            };
        } else if let Some(v) = line.strip_prefix(".version ") {
            isa = v.trim().to_owned();
            break;
        }
    }
    (built_by, isa)
}

/// [`Error::EmbeddedPtxTooNew`] for the PTX `ptx` of `module`, refused by a driver of CUDA
/// `driver`.
pub(crate) fn ptx_too_new(module: &str, ptx: &[u8], driver: (u32, u32)) -> Error {
    let (built_by, ptx_isa) = ptx_producer(ptx);
    Error::EmbeddedPtxTooNew {
        module: module.to_owned(),
        built_by,
        ptx_isa,
        driver,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMAGES: &[EmbeddedImage] = &[
        EmbeddedImage::new(ImageKind::Ptx, 75, b"a\0", &[]),
        EmbeddedImage::new(ImageKind::Cubin, 80, b"b", &[]),
        EmbeddedImage::new(ImageKind::Ptx, 90, b"c\0", &[]),
        EmbeddedImage::new(ImageKind::Cubin, 90, b"d", &[]),
    ];

    /// On PTX made by this machine's NVRTC: the error names its release (as NVRTC reports its
    /// own version), the PTX ISA, the driver's version and the fix.
    #[test]
    fn ptx_too_new_names_its_compiler_the_driver_and_the_fix() {
        let src = "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }";
        let compiled = match crate::compiler::nvrtc::compile(
            src,
            "k.cu",
            &["k"],
            &[],
            crate::compiler::target::Target::Ptx { major: 7, minor: 5 },
        ) {
            Err(Error::NvrtcNotFound) => return eprintln!("skipped: NVRTC not found"),
            r => r.unwrap(),
        };
        let (major, minor) = crate::compiler::nvrtc::nvrtc_version().unwrap();
        let (built_by, isa) = ptx_producer(&compiled.image);
        assert!(built_by.contains(&format!("CUDA {major}.{minor}")), "{built_by}");
        let text = String::from_utf8_lossy(&compiled.image);
        assert!(text.contains(&format!(".version {isa}\n")), "{isa}");
        let e = ptx_too_new("scale", &compiled.image, (12, 4)).to_string();
        for want in [
            &format!("CUDA {major}.{minor}") as &str,
            &isa,
            "(CUDA 12.4)",
            "no newer than CUDA 12.4",
            "libnvrtc.so.12",
            "scale",
        ] {
            assert!(e.contains(want), "{want:?} missing from: {e}");
        }
        assert_eq!(
            ptx_producer(b"garbage"),
            ("an unknown compiler".into(), "unknown".into())
        );
    }

    #[test]
    fn exact_cubin_first() {
        assert_eq!(pick_embedded(IMAGES, (9, 0)).unwrap().bytes(), b"d");
    }

    #[test]
    fn cubin_of_a_lower_minor_runs() {
        assert_eq!(pick_embedded(IMAGES, (8, 6)).unwrap().bytes(), b"b");
    }

    #[test]
    fn ptx_when_no_cubin_matches() {
        assert_eq!(pick_embedded(IMAGES, (10, 0)).unwrap().bytes(), b"c\0");
        assert_eq!(pick_embedded(IMAGES, (7, 5)).unwrap().bytes(), b"a\0");
        assert_eq!(pick_embedded(&IMAGES[..1], (9, 0)).unwrap().bytes(), b"a\0");
    }

    #[test]
    fn nothing_for_an_older_device() {
        assert!(pick_embedded(IMAGES, (7, 0)).is_none());
        assert!(pick_embedded(&[], (9, 0)).is_none());
    }
}
