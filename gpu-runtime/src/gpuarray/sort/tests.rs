//! The sorts' tests that need no GPU: every kernel they generate, for every real element type,
//! compiled with NVRTC for sm_90 on the host.

use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::kernels::registry::compile_check;
use crate::gpuarray::sort::source::all_sources;

#[test]
fn every_sort_kernel_compiles_for_every_real_type() {
    // Types of one size share most sources: each distinct one is compiled once.
    let mut seen = std::collections::HashSet::new();
    for dtype in DType::ALL.into_iter().filter(|d| !d.is_complex()) {
        for src in all_sources(dtype) {
            if !seen.insert(src.clone()) {
                continue;
            }
            if let Err(e) = compile_check(&src, "sm_90") {
                panic!("a sort kernel of {dtype:?} does not compile: {e}\n{src}");
            }
        }
    }
}
