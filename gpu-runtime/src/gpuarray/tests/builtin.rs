//! Every kernel this module generates, compiled with NVRTC for sm_90 on the host (no GPU):
//! the builtin operations for every element type, and every variant for the common ones.

use gpu_cuda_source::Scalar;

use super::{builtin_source, compiles, scalars};
use crate::gpuarray::copy::builtin::{kernel, Builtin};
use crate::gpuarray::kernels::elementwise::Variant;
use crate::gpuarray::reduce::kernel::ReductionVariant;
use crate::gpuarray::reduce::ops::test_kernels;

#[test]
fn builtin_elementwise_kernels_compile() {
    for s in scalars(false, false) {
        compiles("fill", &builtin_source(Builtin::Fill, s, s, Variant::Contiguous));
        compiles(
            "convert",
            &builtin_source(Builtin::Convert, s, Scalar::F64, Variant::Contiguous),
        );
    }
    for d in [1, 2, 3, 8] {
        compiles(
            "convert strided",
            &builtin_source(Builtin::Convert, Scalar::F32, Scalar::I32, Variant::Strided(d)),
        );
    }
}

#[test]
fn builtin_reduction_kernels_compile() {
    let mut sources = test_kernels(&[ReductionVariant::Contiguous, ReductionVariant::Final]);
    let all = [
        ReductionVariant::Strided(2),
        ReductionVariant::AxisBlock(3),
        ReductionVariant::AxisThread(1),
        ReductionVariant::AxisColumns(2),
        ReductionVariant::AxisColumns(3),
        ReductionVariant::AxisBlockSplit(2),
        ReductionVariant::AxisPartials,
    ];
    sources.extend(
        test_kernels(&all)
            .into_iter()
            .filter(|(n, _)| n.contains("f32") || n.contains("i64")),
    );
    // A source generated twice (operations that share a kernel: about one in eight) compiles
    // once: the same text gives NVRTC the same work. On two threads, as `compile_all` says.
    let mut seen = std::collections::HashSet::new();
    let unique = sources
        .into_iter()
        .flat_map(|(name, sources)| sources.into_iter().map(move |s| (name.clone(), s)))
        .filter(|(_, s)| seen.insert(s.clone()))
        .collect();
    super::compile_all(unique);
}

/// The launch prepares each kernel from its C declaration in the generated source: every
/// variant's declaration must be readable.
#[test]
fn generated_declarations_are_readable() {
    let k = kernel(
        Builtin::Convert,
        crate::gpuarray::tests::dt(Scalar::F32),
        crate::gpuarray::tests::dt(Scalar::F64),
    )
    .unwrap();
    for v in [Variant::Contiguous, Variant::Strided(3)] {
        let src = k.source(v);
        let name = if v == Variant::Contiguous {
            "gpu_convert_contig"
        } else {
            "gpu_convert_strided3"
        };
        let decl = gpu_cuda_source::find_kernel(&src, name).unwrap_or_else(|e| panic!("{e}\n{src}"));
        assert!(decl.extern_c);
    }
    for (name, sources) in test_kernels(&[
        ReductionVariant::Contiguous,
        ReductionVariant::Final,
        ReductionVariant::AxisBlock(2),
        ReductionVariant::AxisColumns(2),
        ReductionVariant::AxisPartials,
        ReductionVariant::AxisBlockSplit(1),
    ]) {
        for (s, code) in sources.iter().zip([0, 20, 32, 52, 21, 61]) {
            let base = if name.starts_with("ArgMax") {
                "argmax"
            } else if name.starts_with("ArgMin") {
                "argmin"
            } else if name.starts_with("Var") {
                "var"
            } else if name.starts_with("Ptp") {
                "ptp"
            } else {
                "reduction"
            };
            gpu_cuda_source::find_kernel(s, &format!("{base}_r{code}"))
                .unwrap_or_else(|e| panic!("{name}: {e}\n{s}"));
        }
    }
}
