//! Copies whose layouts are each other's transpose (`a.t().to_contiguous()`, `assign` from a
//! transposed view), through tiles of 64 x 64 elements in shared memory: each tile is read
//! along the source's unit-stride axis and written along the destination's, so both sides
//! move whole cache lines. The strided elementwise copy reads one of the two a float at a
//! time across lines (about a third of the copy bandwidth); this one runs near it.
//!
//! Used by the array copies and conversions when, after merging axes
//! (`layout::coalesce`), both layouts have two axes of at least 32 elements, and the source's
//! smaller stride is on the first axis while the destination's is on the second; for numbers
//! converted and for CUDA vector types copied to themselves, of up to 8 bytes
//! ([`MAX_ELEMENT`]). Anything else takes the elementwise kernel.

use crate::gpuarray::elements::array_element::ElementType;

use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::layout;
use crate::gpuarray::elements::cast;
use crate::gpuarray::kernels::args::{ArgKind, KernelArg};
use crate::gpuarray::kernels::broadcast::overlaps_itself;
use crate::gpuarray::kernels::elementwise::first_context;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;

/// The side of a tile: 64 x 64 elements, each of a block's 256 threads moving 16 of them, so
/// that each thread has 16 independent loads in flight before the block's barrier (a 32 x 32
/// tile gives 4, about a quarter of the bytes in flight per SM that H100's bandwidth needs).
const TILE: usize = 64;

/// The threads along a tile's side: one warp reads 32 consecutive elements of a column of
/// the source (its unit-stride axis) and writes 32 consecutive elements of a row.
const WARP: usize = 32;

/// The smallest side the tiled copy is used from: below it, most of a tile is empty.
const MIN_SIDE: usize = 32;

/// The kernel's name in its module.
const NAME: &str = "gpu_transpose";

/// The largest element a tile holds: 64 x 65 of them fit 48 KiB of static shared memory at
/// 8 bytes (a `double`, a `Complex32`, a `float2`), not at 12 or 16 (`float3`, `float4`).
pub(crate) const MAX_ELEMENT: usize = 8;

/// The source of the tiled copy from elements of `from` to elements of `to`: numbers
/// converted as C converts them, or a CUDA vector type copied to itself.
pub(crate) fn source(from: ElementType, to: ElementType) -> String {
    let (f, t) = (from.c_name(), to.c_name());
    let headers = cast::headers_for([from, to].into_iter().filter_map(ElementType::header_dtype));
    let read = "gpu_tile[gpu_tx + gpu_i][gpu_ty + j]";
    let store = match (from.number(), to.number()) {
        (Some(from), Some(to)) => cast::convert_c(from, to, read),
        // A vector type to itself (what `run` accepts): no conversion.
        _ => read.to_owned(),
    };
    let rows_per_step = BLOCK as usize / WARP;
    // 256 threads: `gpu_tx` walks 32 along a tile's side (twice, for 64), `gpu_ty` 8 rows
    // of it per step (eight steps, for 64). The tile has a 65th column so that a warp
    // reading a column of it hits 32 banks. A full tile (all but the edges) is moved with
    // no bounds checks, its 16 loads per thread unrolled so that all are issued before the
    // first is used; the pointers advance by whole strides so that the inner loops do no
    // 64-bit multiplications.
    // A tile's moves of `step`: for a full tile unrolled and unchecked, else each where
    // `inside` holds.
    let moves = |inside: &str, step: &str| {
        format!(
            "if (gpu_full) {{\n\
             #pragma unroll\n\
             for (int gpu_i = 0; gpu_i < {TILE}; gpu_i += {WARP}) {{\n\
             #pragma unroll\n\
             for (int j = 0; j < {TILE}; j += {rows_per_step}) {{\n\
             {step}\n\
             }}\n\
             }}\n\
             }} else {{\n\
             for (int gpu_i = 0; gpu_i < {TILE}; gpu_i += {WARP}) {{\n\
             for (int j = 0; j < {TILE}; j += {rows_per_step}) {{\n\
             if ({inside}) {step}\n\
             }}\n\
             }}\n\
             }}\n"
        )
    };
    let load = moves(
        "r0 + gpu_tx + gpu_i < rows && c0 + gpu_ty + j < cols",
        "gpu_tile[gpu_ty + j][gpu_tx + gpu_i] = gpu_x[gpu_i * x__s0 + j * x__s1];",
    );
    let write = moves(
        "r0 + gpu_ty + j < rows && c0 + gpu_tx + gpu_i < cols",
        &format!("gpu_z[j * z__s0 + gpu_i * z__s1] = {store};"),
    );
    format!(
        "{headers}extern \"C\" __global__ void {NAME}(long long rows, long long cols, \
         const {f} *__restrict__ x__p, long long x__o, long long x__s0, long long x__s1, \
         {t} *__restrict__ z__p, long long z__o, long long z__s0, long long z__s1) {{\n\
         __shared__ {f} gpu_tile[{TILE}][{TILE} + 1];\n\
         int gpu_tx = threadIdx.x % {WARP}, gpu_ty = threadIdx.x / {WARP};\n\
         long long gpu_tc = (cols + {TILE} - 1) / {TILE};\n\
         long long gpu_tiles = ((rows + {TILE} - 1) / {TILE}) * gpu_tc;\n\
         for (long long gpu_t = blockIdx.x; gpu_t < gpu_tiles; gpu_t += gridDim.x) {{\n\
         long long r0 = (gpu_t / gpu_tc) * {TILE}, c0 = (gpu_t % gpu_tc) * {TILE};\n\
         bool gpu_full = r0 + {TILE} <= rows && c0 + {TILE} <= cols;\n\
         const {f} *gpu_x = x__p + x__o + (r0 + gpu_tx) * x__s0 + (c0 + gpu_ty) * x__s1;\n\
         {load}\
         __syncthreads();\n\
         {t} *gpu_z = z__p + z__o + (r0 + gpu_ty) * z__s0 + (c0 + gpu_tx) * z__s1;\n\
         {write}\
         __syncthreads();\n\
         }}\n}}\n"
    )
}

/// The layout the tiled copy runs over, when it applies: rows, columns, and the source's and
/// destination's strides over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub dims: [usize; 2],
    pub src: [isize; 2],
    pub dst: [isize; 2],
}

/// The plan of a copy from `src_shape`/`src_strides` to `dst_shape`/`dst_strides`, when the
/// tiled copy applies (see the module documentation).
pub(crate) fn plan(
    src_shape: &[usize],
    src_strides: &[isize],
    dst_shape: &[usize],
    dst_strides: &[isize],
) -> Option<Plan> {
    if src_shape != dst_shape || overlaps_itself(dst_shape, dst_strides) {
        return None;
    }
    let (dims, strides) = layout::coalesce(dst_shape, &[src_strides, dst_strides]);
    let ([r, c], [s, d]) = (dims.as_slice(), strides.as_slice()) else {
        return None;
    };
    let transposed = s[0].unsigned_abs() < s[1].unsigned_abs() && d[1].unsigned_abs() < d[0].unsigned_abs();
    (transposed && *r >= MIN_SIDE && *c >= MIN_SIDE).then(|| Plan {
        dims: [*r, *c],
        src: [s[0], s[1]],
        dst: [d[0], d[1]],
    })
}

/// The kernel of each (source, destination) element type.
static KERNELS: SourceKernels<(ElementType, ElementType)> = SourceKernels::new();

/// Runs the tiled copy of `plan` from `args[0]` (the source) into `args[1]` (the
/// destination), whose layouts it was made from.
pub(crate) fn run(plan: &Plan, stream: Option<&Stream>, args: [KernelArg<'_>; 2]) -> Result<()> {
    let Some(ctx) = first_context(&args) else {
        return Ok(());
    };
    let [ArgKind::Array(src), ArgKind::Array(dst)] = args.map(|a| a.0) else {
        return Ok(());
    };
    let (from, to) = (src.elem, dst.elem);
    let numbers = from.number().is_some() && to.number().is_some();
    if !(numbers || from == to) || from.size().max(to.size()) > MAX_ELEMENT {
        return Err(crate::error::Error::Internal {
            operation: "transpose::run",
            broken: "a tiled copy between vector types, or of elements larger than a tile holds",
        });
    }
    let f = KERNELS.prepared(&ctx, (from, to), NAME, || source(from, to))?;
    let [rows, cols] = plan.dims;
    let list = [
        Arg::I64(rows as i64),
        Arg::I64(cols as i64),
        src.arg,
        Arg::I64(src.offset as i64),
        Arg::I64(plan.src[0] as i64),
        Arg::I64(plan.src[1] as i64),
        dst.arg,
        Arg::I64(dst.offset as i64),
        Arg::I64(plan.dst[0] as i64),
        Arg::I64(plan.dst[1] as i64),
    ];
    let tiles = rows.div_ceil(TILE) * cols.div_ceil(TILE);
    let grid = registry::grid_for(&ctx, (tiles * BLOCK as usize) as u64)?;
    registry::launch(&f, grid, BLOCK, stream, &list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::elements::array_element::ArrayElement;
    use crate::gpuarray::elements::dtype::DType;
    use crate::gpuarray::kernels::registry::{check_arch, compile_check};

    #[test]
    fn transposes_are_found() {
        // a.t() of a C-ordered (100, 200) array into a C-ordered (200, 100) one.
        let p = plan(&[200, 100], &[1, 200], &[200, 100], &[100, 1]).expect("a transpose");
        assert_eq!(p.dims, [200, 100]);
        // The axes of a 3-D permutation that merge into two.
        let p = plan(&[64, 8, 4], &[1, 256, 64], &[64, 8, 4], &[32, 4, 1]).expect("merges to 2-D");
        assert_eq!(p.dims, [64, 32]);
        // Not transposes: a plain copy, a small tile, a broadcast destination.
        assert!(plan(&[200, 100], &[100, 1], &[200, 100], &[100, 1]).is_none());
        assert!(plan(&[200, 8], &[1, 200], &[200, 8], &[8, 1]).is_none());
        assert!(plan(&[200, 100], &[1, 200], &[200, 100], &[0, 1]).is_none());
        assert!(plan(&[200, 100], &[1, 200], &[100, 200], &[200, 1]).is_none());
    }

    #[test]
    fn the_tiled_copy_compiles() {
        use crate::types::{BFloat162, Float2, Half2, UChar4, UShort4};
        let vector = |t: ElementType| (t, t);
        let pairs: [(ElementType, ElementType); 10] = [
            (DType::F32.into(), DType::F32.into()),
            (DType::F64.into(), DType::I32.into()),
            (DType::U8.into(), DType::F32.into()),
            (DType::Complex32.into(), DType::Complex32.into()),
            (DType::F32.into(), DType::Complex32.into()),
            vector(Float2::ELEMENT_TYPE),
            vector(UChar4::ELEMENT_TYPE),
            vector(UShort4::ELEMENT_TYPE),
            vector(Half2::ELEMENT_TYPE),
            vector(BFloat162::ELEMENT_TYPE),
        ];
        for (from, to) in pairs {
            let src = source(from, to);
            if let Err(e) = compile_check(&src, check_arch(&src)) {
                panic!("{from:?} -> {to:?}: {e}\n{src}");
            }
        }
    }
}
