//! Kernels nobody here wrote: the CUDA samples' device code of `tests/corpus/` (NVIDIA's, BSD
//! licensed; see its README), written for nvcc, declared through `#[kernel]` and compiled by
//! real NVRTC (no GPU). They use `uint`, `uint4`, `cooperative_groups`, `__constant__` tables,
//! texture objects and templates as nvcc code does: declaring them is the check that the macro
//! reads their types as nvcc would, compiling them that NVRTC accepts them.

use crate::corpus_kernels as kernels;

use gpu_runtime::compiler::{ModuleSource, Target};
use kernels::*;

/// One source per sample, and its declared kernels.
fn corpus() -> Vec<(&'static str, &'static ModuleSource)> {
    vec![
        ("BlackScholes", black_scholes::BlackScholesGPU::source()),
        ("dwtHaar1D", dwt_haar_1d::dwtHaar1D::source()),
        (
            "fastWalshTransform",
            fast_walsh_transform::modulateKernel::source(),
        ),
        ("histogram256", histogram256::histogram256Kernel::source()),
        ("histogram64", histogram64::histogram64Kernel::source()),
        ("mergeSort", merge_sort::mergeRanksAndIndicesKernel::source()),
        // The templates over a value, one instance each. (Named apart from their samples: NVRTC
        // 13 crashes compiling the name expression `k<1>` of a template whose parameter's type
        // is undefined, as `uint` is without the prelude, which the test below compiles.)
        ("mergeSort<sortDir>", merge_sort_shared_up::source()),
        ("mergeSort<sortDir>", generate_sample_ranks_up::source()),
        ("mergeSort<sortDir>", merge_elementary_intervals_down::source()),
        (
            "mergeSort_bitonic<sortDir>",
            bitonic_merge_elementary_intervals_up::source(),
        ),
        (
            "mergeSort_bitonic",
            merge_sort_bitonic::bitonicSortSharedKernel::source(),
        ),
        (
            "quasirandomGenerator",
            quasirandom_generator::inverseCNDKernel::source(),
        ),
        ("scalarProd", scalar_prod::scalarProdGPU::source()),
        ("scan", scan::uniformUpdate::source()),
        ("segmentationTree", segmentation_tree::addScalar::source()),
        ("simpleTexture3D", simple_texture_3d::d_render::source()),
        (
            "sortingNetworks_bitonicSort",
            bitonic_sort::bitonicSortShared::source(),
        ),
        (
            "sortingNetworks_oddEvenMergeSort",
            odd_even_merge_sort::oddEvenMergeGlobal::source(),
        ),
        ("transpose", transpose::copy::source()),
        ("vectorAdd", vector_add::vectorAdd::source()),
    ]
}

#[test]
fn every_corpus_kernel_compiles_with_nvrtc() {
    let target = Target::Cubin { major: 9, minor: 0 };
    let mut compiled = 0;
    for (name, source) in corpus() {
        assert!(source.prelude(), "{name}");
        let out = source.compile(target).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out.image.starts_with(b"\x7fELF"), "{name}");
        assert_eq!(out.lowered_names.len(), source.kernels().len(), "{name}");
        compiled += source.kernels().len();
    }
    eprintln!("corpus: {compiled} kernels declared and compiled");
    assert_eq!(compiled, 47);
    // The templates over a value are their instances.
    let names: Vec<&str> = corpus()
        .iter()
        .flat_map(|(_, s)| s.kernels().iter().copied())
        .collect();
    for k in [
        "mergeSortSharedKernel<1>",
        "generateSampleRanksKernel<1>",
        "mergeElementaryIntervalsKernel<0>",
        "bitonicMergeElementaryIntervalsKernel<1>",
    ] {
        assert!(names.contains(&k), "{k}: {names:?}");
    }
}

/// The files carry NVIDIA's license and say where they come from.
#[test]
fn every_corpus_file_keeps_its_license_and_provenance() {
    for (name, source) in corpus() {
        let text = source.source();
        assert!(text.starts_with("/* Copyright (c) 20"), "{name}");
        for needle in [
            "NVIDIA CORPORATION",
            "Redistributions of source code must retain the above copyright",
            "c94ff366aed1",
            "// Samples/",
        ] {
            assert!(text.contains(needle), "{name}: no {needle:?}");
        }
    }
}

/// The prelude is what makes these compile: the samples whose `uint` came from a header they
/// include under nvcc (and <sys/types.h> too) fail without it, on `uint`.
#[test]
fn without_the_prelude_the_samples_using_uint_undeclared_fail() {
    let undeclared = [
        "histogram256",
        "histogram64",
        "mergeSort",
        "mergeSort_bitonic",
        "scan",
        "sortingNetworks_bitonicSort",
        "sortingNetworks_oddEvenMergeSort",
    ];
    for (name, source) in corpus().into_iter().filter(|(n, _)| undeclared.contains(n)) {
        let e = gpu_runtime::SourceModule::from_static(source)
            .prelude(false)
            .arch("sm_90")
            .cache_dir(None::<&str>)
            .compile_report()
            .expect_err(name)
            .to_string();
        assert!(e.contains("identifier \"uint\" is undefined"), "{name}: {e}");
    }
}

#[path = "../corpus/includes/kernels.rs"]
mod include_kernels;

/// The files that include standard headers, CUDA headers and `"common.h"` from beside them
/// (the build-time check compiled each while this test was built): the run time compiles
/// them too, finding `common.h` through the directory the macro passes.
#[test]
fn kernel_files_including_headers_compile_at_run_time() {
    let sources = [
        include_kernels::layernorm_forward::source(),
        include_kernels::softmax_forward::source(),
        include_kernels::adamw_update::source(),
    ];
    for source in sources {
        assert!(
            source.source().contains("#include \"common.h\""),
            "{}",
            source.name()
        );
        gpu_runtime::SourceModule::from_static(source)
            .arch("sm_90")
            .cache_dir(None::<&str>)
            .compile_report()
            .unwrap_or_else(|e| panic!("{}: {e}", source.name()));
    }
}
