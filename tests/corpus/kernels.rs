//! The CUDA samples' kernels of `tests/corpus/` (see its README), each declared through
//! `#[kernel]` with the Rust signature its C declaration calls for: `uint *` is `&mut [u32]`,
//! `uint4 *` is `&mut [UInt4]`, `cudaTextureObject_t` is `TextureObject`. Shared by
//! the suite's corpus_compile.rs (NVRTC, in CI) and corpus_run.rs.
#![allow(dead_code, non_snake_case)]

use gpu_runtime::driver::TextureObject;
use gpu_runtime::kernel;
use gpu_runtime::types::{Float2, UInt4};

#[kernel(file = "corpus/BlackScholes.cu")]
pub mod black_scholes {
    fn BlackScholesGPU(
        d_CallResult: &mut [Float2],
        d_PutResult: &mut [Float2],
        d_StockPrice: &mut [Float2],
        d_OptionStrike: &mut [Float2],
        d_OptionYears: &mut [Float2],
        Riskfree: f32,
        Volatility: f32,
        optN: i32,
    );
}

// NVIDIA's file declares something it never uses: NVRTC's warning 177, now that the build-time
// check compiles the file (it includes <cooperative_groups.h>), is silenced rather than the
// file edited.
#[kernel(file = "corpus/dwtHaar1D.cu", options = ["-diag-suppress=177"])]
pub mod dwt_haar_1d {
    fn initValue(od: &mut [f32], value: f32);
    fn dwtHaar1D(
        id: &mut [f32],
        od: &mut [f32],
        approx_final: &mut [f32],
        dlevels: u32,
        slength_step_half: u32,
        bdim: i32,
    );
}

#[kernel(file = "corpus/fastWalshTransform.cu")]
pub mod fast_walsh_transform {
    fn fwtBatch1Kernel(d_Output: &mut [f32], d_Input: &mut [f32], log2N: i32);
    fn fwtBatch2Kernel(d_Output: &mut [f32], d_Input: &mut [f32], stride: i32);
    fn modulateKernel(d_A: &mut [f32], d_B: &mut [f32], N: i32);
}

// NVIDIA's file declares something it never uses: NVRTC's warning 177, now that the build-time
// check compiles the file (it includes <cooperative_groups.h>), is silenced rather than the
// file edited.
#[kernel(file = "corpus/histogram256.cu", options = ["-diag-suppress=177"])]
pub mod histogram256 {
    fn histogram256Kernel(d_PartialHistograms: &mut [u32], d_Data: &mut [u32], dataCount: u32);
    fn mergeHistogram256Kernel(d_Histogram: &mut [u32], d_PartialHistograms: &mut [u32], histogramCount: u32);
}

#[kernel(file = "corpus/histogram64.cu")]
pub mod histogram64 {
    fn histogram64Kernel(d_PartialHistograms: &mut [u32], d_Data: &mut [UInt4], dataCount: u32);
    fn mergeHistogram64Kernel(d_Histogram: &mut [u32], d_PartialHistograms: &mut [u32], histogramCount: u32);
}

/// mergeSort.cu's plain kernel; its three templates over a value (`template <uint sortDir>`)
/// are bound below, one instance each.
#[kernel(file = "corpus/mergeSort.cu")]
pub mod merge_sort {
    fn mergeRanksAndIndicesKernel(
        d_Limits: &mut [u32],
        d_Ranks: &mut [u32],
        stride: u32,
        N: u32,
        threadCount: u32,
    );
}

/// `mergeSortSharedKernel<1>`: a template over a value binds the instance `instantiate` names,
/// under the C template's name.
#[kernel(file = "corpus/mergeSort.cu", name = "mergeSortSharedKernel", instantiate = [1])]
pub fn merge_sort_shared_up(
    d_DstKey: &mut [u32],
    d_DstVal: &mut [u32],
    d_SrcKey: &mut [u32],
    d_SrcVal: &mut [u32],
    arrayLength: u32,
);

/// `generateSampleRanksKernel<1>`.
#[kernel(file = "corpus/mergeSort.cu", name = "generateSampleRanksKernel", instantiate = [1])]
pub fn generate_sample_ranks_up(
    d_RanksA: &mut [u32],
    d_RanksB: &mut [u32],
    d_SrcKey: &mut [u32],
    stride: u32,
    N: u32,
    threadCount: u32,
);

/// `mergeElementaryIntervalsKernel<0>`, the descending sort's.
#[kernel(file = "corpus/mergeSort.cu", name = "mergeElementaryIntervalsKernel", instantiate = [0])]
pub fn merge_elementary_intervals_down(
    d_DstKey: &mut [u32],
    d_DstVal: &mut [u32],
    d_SrcKey: &mut [u32],
    d_SrcVal: &mut [u32],
    d_LimitsA: &mut [u32],
    d_LimitsB: &mut [u32],
    stride: u32,
    N: u32,
);

// NVIDIA's file declares something it never uses: NVRTC's warning 177, now that the build-time
// check compiles the file (it includes <cooperative_groups.h>), is silenced rather than the
// file edited.
#[kernel(file = "corpus/mergeSort_bitonic.cu", options = ["-diag-suppress=177"])]
pub mod merge_sort_bitonic {
    fn bitonicSortSharedKernel(
        d_DstKey: &mut [u32],
        d_DstVal: &mut [u32],
        d_SrcKey: &mut [u32],
        d_SrcVal: &mut [u32],
        arrayLength: u32,
        sortDir: u32,
    );
}

/// `bitonicMergeElementaryIntervalsKernel<1>`.
#[kernel(
    file = "corpus/mergeSort_bitonic.cu",
    name = "bitonicMergeElementaryIntervalsKernel",
    instantiate = [1],
    options = ["-diag-suppress=177"]
)]
pub fn bitonic_merge_elementary_intervals_up(
    d_DstKey: &mut [u32],
    d_DstVal: &mut [u32],
    d_SrcKey: &mut [u32],
    d_SrcVal: &mut [u32],
    d_LimitsA: &mut [u32],
    d_LimitsB: &mut [u32],
    stride: u32,
    N: u32,
);

#[kernel(file = "corpus/quasirandomGenerator.cu")]
pub mod quasirandom_generator {
    fn quasirandomGeneratorKernel(d_Output: &mut [f32], seed: u32, N: u32);
    fn inverseCNDKernel(d_Output: &mut [f32], d_Input: &mut [u32], pathN: u32);
}

#[kernel(file = "corpus/scalarProd.cu")]
pub mod scalar_prod {
    fn scalarProdGPU(d_C: &mut [f32], d_A: &mut [f32], d_B: &mut [f32], vectorN: i32, elementN: i32);
}

#[kernel(file = "corpus/scan.cu")]
pub mod scan {
    fn scanExclusiveShared(d_Dst: &mut [UInt4], d_Src: &mut [UInt4], size: u32);
    fn scanExclusiveShared2(
        d_Buf: &mut [u32],
        d_Dst: &mut [u32],
        d_Src: &mut [u32],
        N: u32,
        arrayLength: u32,
    );
    fn uniformUpdate(d_Data: &mut [UInt4], d_Buffer: &mut [u32]);
}

#[kernel(file = "corpus/segmentationTree.cu")]
pub mod segmentation_tree {
    fn addScalar(array: &mut [u32], scalar: i32, size: u32);
    fn markSegments(verticesOffsets: &[u32], flags: &mut [u32], verticesCount: u32);
    fn getVerticesMapping(
        clusteredVerticesIDs: &[u32],
        newVerticesIDs: &[u32],
        verticesMapping: &mut [u32],
        verticesCount: u32,
    );
    fn getSuccessors(
        verticesOffsets: &[u32],
        minScannedEdges: &[u32],
        successors: &mut [u32],
        verticesCount: u32,
        edgesCount: u32,
    );
    fn removeCycles(successors: &mut [u32], verticesCount: u32);
    fn getRepresentatives(successors: &[u32], representatives: &mut [u32], verticesCount: u32);
    fn invalidateLoops(startpoints: &[u32], verticesMapping: &[u32], edges: &mut [u32], edgesCount: u32);
    fn calculateEdgesInfo(
        startpoints: &[u32],
        verticesMapping: &[u32],
        edges: &[u32],
        weights: &[f32],
        newStartpoints: &mut [u32],
        survivedEdgesIDs: &mut [u32],
        edgesCount: u32,
        newVerticesCount: u32,
    );
    fn makeNewEdges(
        survivedEdgesIDs: &[u32],
        verticesMapping: &[u32],
        edges: &[u32],
        weights: &[f32],
        newEdges: &mut [u32],
        newWeights: &mut [f32],
        edgesCount: u32,
    );
}

#[kernel(file = "corpus/simpleTexture3D.cu")]
pub mod simple_texture_3d {
    fn d_render(d_output: &mut [u32], imageW: u32, imageH: u32, w: f32, texObj: TextureObject);
}

#[kernel(file = "corpus/sortingNetworks_bitonicSort.cu")]
pub mod bitonic_sort {
    fn bitonicSortShared(
        d_DstKey: &mut [u32],
        d_DstVal: &mut [u32],
        d_SrcKey: &mut [u32],
        d_SrcVal: &mut [u32],
        arrayLength: u32,
        dir: u32,
    );
    fn bitonicSortShared1(
        d_DstKey: &mut [u32],
        d_DstVal: &mut [u32],
        d_SrcKey: &mut [u32],
        d_SrcVal: &mut [u32],
    );
    fn bitonicMergeGlobal(
        d_DstKey: &mut [u32],
        d_DstVal: &mut [u32],
        d_SrcKey: &mut [u32],
        d_SrcVal: &mut [u32],
        arrayLength: u32,
        size: u32,
        stride: u32,
        dir: u32,
    );
    fn bitonicMergeShared(
        d_DstKey: &mut [u32],
        d_DstVal: &mut [u32],
        d_SrcKey: &mut [u32],
        d_SrcVal: &mut [u32],
        arrayLength: u32,
        size: u32,
        dir: u32,
    );
}

#[kernel(file = "corpus/sortingNetworks_oddEvenMergeSort.cu")]
pub mod odd_even_merge_sort {
    fn oddEvenMergeSortShared(
        d_DstKey: &mut [u32],
        d_DstVal: &mut [u32],
        d_SrcKey: &mut [u32],
        d_SrcVal: &mut [u32],
        arrayLength: u32,
        dir: u32,
    );
    fn oddEvenMergeGlobal(
        d_DstKey: &mut [u32],
        d_DstVal: &mut [u32],
        d_SrcKey: &mut [u32],
        d_SrcVal: &mut [u32],
        arrayLength: u32,
        size: u32,
        stride: u32,
        dir: u32,
    );
}

#[kernel(file = "corpus/transpose.cu")]
pub mod transpose {
    fn copy(odata: &mut [f32], idata: &mut [f32], width: i32, height: i32);
    fn copySharedMem(odata: &mut [f32], idata: &mut [f32], width: i32, height: i32);
    fn transposeNaive(odata: &mut [f32], idata: &mut [f32], width: i32, height: i32);
    fn transposeCoalesced(odata: &mut [f32], idata: &mut [f32], width: i32, height: i32);
    fn transposeNoBankConflicts(odata: &mut [f32], idata: &mut [f32], width: i32, height: i32);
    fn transposeDiagonal(odata: &mut [f32], idata: &mut [f32], width: i32, height: i32);
    fn transposeFineGrained(odata: &mut [f32], idata: &mut [f32], width: i32, height: i32);
    fn transposeCoarseGrained(odata: &mut [f32], idata: &mut [f32], width: i32, height: i32);
}

#[kernel(file = "corpus/vectorAdd.cu")]
pub mod vector_add {
    fn vectorAdd(A: &[f32], B: &[f32], C: &mut [f32], numElements: i32);
}
