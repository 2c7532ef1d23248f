//! The sorts' tests that need no GPU: every kernel they generate, for every real element type,
//! compiled with NVRTC for sm_90 on the host.

use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::kernels::registry::compile_check;
use crate::gpuarray::sort::source::all_sources;

#[test]
fn every_sort_kernel_compiles_for_every_real_type() {
    // Every pass variant for a type of each size (and `bool`); for the others, whose keys
    // differ only in the transform, the pass that applies it both ways. Each distinct source
    // is compiled once.
    let mut seen = std::collections::HashSet::new();
    for dtype in DType::ALL.into_iter().filter(|d| !d.is_complex()) {
        let every_pass = matches!(dtype, DType::Bool | DType::F16 | DType::F32 | DType::F64);
        for src in all_sources(dtype, every_pass) {
            if !seen.insert(src.clone()) {
                continue;
            }
            if let Err(e) = compile_check(&src, "sm_90") {
                panic!("a sort kernel of {dtype:?} does not compile: {e}\n{src}");
            }
        }
    }
}

/// The launch checks every argument against the kernel's C declaration, read from its source:
/// every parameter of every sort kernel must read as a scalar or a pointer to one (the `KEY`
/// typedef resolved, `__launch_bounds__` of a macro skipped).
#[test]
fn every_sort_kernel_declares_scalars_and_pointers_to_scalars() {
    use gpu_cuda_source::CType;
    for dtype in DType::ALL.into_iter().filter(|d| !d.is_complex()) {
        for src in all_sources(dtype, true) {
            let kernels = gpu_cuda_source::find_kernels(&src).expect("the kernels' declarations read");
            assert!(!kernels.is_empty(), "no kernel in\n{src}");
            for k in kernels {
                for p in &k.params {
                    let ok = match &p.ty {
                        CType::Scalar(_) => true,
                        CType::Pointer { pointee, .. } => matches!(**pointee, CType::Scalar(_)),
                        _ => false,
                    };
                    assert!(ok, "{dtype:?}: `{}` of {} reads as {:?}", p.text, k.name, p.ty);
                }
            }
        }
    }
}
