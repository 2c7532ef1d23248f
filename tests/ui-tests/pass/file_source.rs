//! `file = "…"` reads the source at compile time, relative to `CARGO_MANIFEST_DIR`.
//!
//! Under trybuild, that is not this repository's root but the project trybuild generates in
//! `<target dir>/tests/trybuild/gpu-suite/`, so the path climbs four levels back to the
//! repository root. This holds for the default target dir (`target/` next to the workspace
//! `Cargo.toml`); with `CARGO_TARGET_DIR` pointing elsewhere this case fails to find the file.
use gpu_runtime::kernel;

#[kernel(file = "../../../../tests/ui-tests/kernels/scale.cu", name = "scale_in_place")]
fn scale(#[InOut] v: &mut [f64], factor: f64, n: u32);

fn main() {
    let _ = scale::prepare;
    assert_eq!(scale::source().kernels(), ["scale_in_place"]);
}
