//! Conversions between arrays of one shape that are both contiguous in one order (`astype`,
//! `to_contiguous`, `assign` of plain memory): one flat loop with aligned vector loads and
//! stores (of four elements, or two when the output is the wider), 64 bytes of loads in
//! flight per thread (four to eight vectors).
//!
//! The elementwise kernel's contiguous variant has one vector load in flight per thread per
//! iteration. For a widening conversion (f32 -> f64: 4 bytes read, 8 written per element) that
//! is a third of the bytes the thread moves, and on an H100 it ran at 0.62x of the copy
//! bandwidth; here each thread issues all its loads before converting and storing any of
//! them, so that each SM has more bytes of reads in flight, and a widening conversion moves
//! two elements per vector, so that a warp's stores are one contiguous run. Narrowing conversions and plain
//! copies take the same kernel: more loads in flight costs them nothing.
//!
//! Used when both arrays are C-contiguous (or both Fortran-contiguous: the flat orders then
//! agree), of the same shape, and each first element is aligned for `gpu_vec4`; anything else
//! takes the elementwise kernel.

use crate::gpuarray::elements::dtype::DType;
use gpu_cuda_source::elementwise::MAX_DIMS;

use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::layout;
use crate::gpuarray::elements::cast;
use crate::gpuarray::kernels::args::{ArgKind, ArrayArg, KernelArg};
use crate::gpuarray::kernels::codegen::vec4_align;
use crate::gpuarray::kernels::elementwise::first_context;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;

/// The kernel's name in its module.
const NAME: &str = "gpu_convert_contig";

/// The bytes of input vectors each thread loads before it converts and stores any.
const BYTES_IN_FLIGHT: usize = 64;

/// Elements per vector: four, or two when the output element is wider than the input one, so
/// that each thread stores 16 bytes at most per vector and a warp's store is one contiguous
/// run (four `double`s per thread made two 16-byte stores 32 bytes apart, half-filled sectors
/// each: `astype` f32 -> f64 ran at 0.6 of the copy floor on an H100).
fn width(from: DType, to: DType) -> usize {
    if to.size() > from.size() {
        2
    } else {
        4
    }
}

/// Vectors each thread loads before it converts and stores any.
fn in_flight(from: DType, to: DType) -> usize {
    (BYTES_IN_FLIGHT / (width(from, to) * from.size())).clamp(4, 8)
}

/// The source of the flat conversion from elements of `from` to elements of `to`.
pub(crate) fn source(from: DType, to: DType) -> String {
    let (f, t) = (from.c_name(), to.c_name());
    let headers = cast::headers_for([from, to]);
    let cast_vec = cast::convert_c(from, to, "gpu_a[gpu_k].v[gpu_m]");
    let cast_one = cast::convert_c(from, to, "x__p[x__o + i]");
    let (w, in_flight) = (width(from, to), in_flight(from, to));
    // The loads of one step are `gpu_nt` vectors apart, so that each warp's accesses stay
    // consecutive (coalesced) as in a plain grid-stride loop. A vector of `w` elements is
    // aligned to its size, which the launch's check of `gpu_vec4`'s (larger or equal)
    // alignment implies.
    format!(
        "{headers}template <typename T> struct alignas({w} * sizeof(T)) gpu_vw {{ T v[{w}]; }};\n\
         extern \"C\" __global__ void {NAME}(long long n, \
         const {f} *__restrict__ x__p, long long x__o, {t} *__restrict__ z__p, long long z__o) {{\n\
         const gpu_vw<{f}> *gpu_x = (const gpu_vw<{f}> *)(x__p + x__o);\n\
         gpu_vw<{t}> *gpu_z = (gpu_vw<{t}> *)(z__p + z__o);\n\
         long long gpu_t = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n\
         long long gpu_nt = (long long)gridDim.x * blockDim.x;\n\
         long long gpu_nv = n / {w};\n\
         long long gpu_j = gpu_t;\n\
         for (; gpu_j + {last} * gpu_nt < gpu_nv; gpu_j += {in_flight} * gpu_nt) {{\n\
         gpu_vw<{f}> gpu_a[{in_flight}];\n\
         #pragma unroll\n\
         for (int gpu_k = 0; gpu_k < {in_flight}; ++gpu_k) gpu_a[gpu_k] = gpu_x[gpu_j + gpu_k * gpu_nt];\n\
         #pragma unroll\n\
         for (int gpu_k = 0; gpu_k < {in_flight}; ++gpu_k) {{\n\
         gpu_vw<{t}> gpu_b;\n\
         #pragma unroll\n\
         for (int gpu_m = 0; gpu_m < {w}; ++gpu_m) gpu_b.v[gpu_m] = {cast_vec};\n\
         gpu_z[gpu_j + gpu_k * gpu_nt] = gpu_b;\n\
         }}\n\
         }}\n\
         for (; gpu_j < gpu_nv; gpu_j += gpu_nt) {{\n\
         gpu_vw<{f}> gpu_a[1] = {{gpu_x[gpu_j]}};\n\
         const int gpu_k = 0;\n\
         gpu_vw<{t}> gpu_b;\n\
         #pragma unroll\n\
         for (int gpu_m = 0; gpu_m < {w}; ++gpu_m) gpu_b.v[gpu_m] = {cast_vec};\n\
         gpu_z[gpu_j] = gpu_b;\n\
         }}\n\
         for (long long i = {w} * gpu_nv + gpu_t; i < n; i += gpu_nt) z__p[z__o + i] = {cast_one};\n\
         }}\n",
        last = in_flight - 1,
    )
}

/// True when the flat conversion applies to a copy from `args[0]` (the source) into
/// `args[1]` (the destination): see the module documentation.
pub(crate) fn applies(args: &[KernelArg<'_>; 2]) -> bool {
    let [KernelArg(ArgKind::Array(src)), KernelArg(ArgKind::Array(dst))] = args else {
        return false;
    };
    let same_order = |a: &ArrayArg<'_>, b: &ArrayArg<'_>| {
        (layout::is_c_contiguous(a.shape(), a.strides()) && layout::is_c_contiguous(b.shape(), b.strides()))
            || (layout::is_f_contiguous(a.shape(), a.strides())
                && layout::is_f_contiguous(b.shape(), b.strides()))
    };
    let aligned = |a: &ArrayArg<'_>| a.addr.is_multiple_of(vec4_align(a.elem.size()));
    // Vectors of 16-byte elements (`Complex64`) would be wider than the alignment checked.
    let narrow = src.elem.size() <= 8 && dst.elem.size() <= 8;
    // Conversions are of numbers; vector elements are copied by the elementwise kernel.
    let numbers = src.elem.number().is_some() && dst.elem.number().is_some();
    // More axes than an `ArrayArg` holds are the elementwise launch's to refuse.
    let representable = src.ndim <= MAX_DIMS && dst.ndim <= MAX_DIMS;
    narrow
        && numbers
        && representable
        && src.shape() == dst.shape()
        && same_order(src, dst)
        && aligned(src)
        && aligned(dst)
}

/// The kernel of each (source, destination) element type.
static KERNELS: SourceKernels<(DType, DType)> = SourceKernels::new();

/// Runs the flat conversion from `args[0]` (the source) into `args[1]` (the destination),
/// for which [`applies`] holds.
pub(crate) fn run(stream: Option<&Stream>, args: [KernelArg<'_>; 2]) -> Result<()> {
    let Some(ctx) = first_context(&args) else {
        return Ok(());
    };
    let [ArgKind::Array(src), ArgKind::Array(dst)] = args.map(|a| a.0) else {
        return Ok(());
    };
    let n: usize = dst.shape().iter().product();
    if n == 0 {
        return Ok(());
    }
    let (Some(from), Some(to)) = (src.elem.number(), dst.elem.number()) else {
        return Err(crate::error::Error::Internal {
            operation: "convert_contig::run",
            broken: "a flat conversion of elements that are no numbers",
        });
    };
    let f = KERNELS.prepared(&ctx, (from, to), NAME, || source(from, to))?;
    let list = [
        Arg::I64(n as i64),
        src.arg,
        Arg::I64(src.offset as i64),
        dst.arg,
        Arg::I64(dst.offset as i64),
    ];
    // One thread per `in_flight` vectors; `grid_for` caps the grid at the blocks the device
    // holds at once, and the loop strides over the rest.
    let threads = n.div_ceil(width(from, to) * in_flight(from, to));
    let grid = registry::grid_for(&ctx, threads as u64)?;
    registry::launch(&f, grid, BLOCK, stream, &list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::kernels::registry::{check_arch, compile_check};

    #[test]
    fn the_flat_conversion_compiles() {
        for (from, to) in [
            (DType::F32, DType::F64),
            (DType::F64, DType::F32),
            (DType::F32, DType::F32),
            (DType::F32, DType::F16),
            (DType::Bf16, DType::F32),
            (DType::I32, DType::I64),
            (DType::U8, DType::F32),
            (DType::Bool, DType::I16),
            (DType::Complex32, DType::Complex32),
            (DType::F32, DType::Complex32),
            (DType::Complex32, DType::F64),
        ] {
            let src = source(from, to);
            if let Err(e) = compile_check(&src, check_arch(&src)) {
                panic!("{from:?} -> {to:?}: {e}\n{src}");
            }
        }
    }
}
