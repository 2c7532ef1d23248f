//! The LU factorization of large matrices (`n >= BLOCKED_FROM`) for `det`, `slogdet`, `solve`
//! and `inv`, blocked as LAPACK's right-looking `getrf`: for each panel of [`NB`] columns, one
//! block a matrix factors the panel with partial pivoting, the panel's row swaps are applied to
//! the columns right of it, the block row right of the panel is solved by the panel's unit
//! lower triangle, and the trailing matrix is updated by one tiled matrix product over many
//! blocks. The right-hand sides (the identity, for `inv`) sit beside the matrix as columns
//! `n..n + k` of one workspace, so the factorization carries them. Back substitution takes
//! few right-hand sides a block each, in one launch (a warp solves each diagonal block of `U`,
//! the block's threads take it from the rows above), and many (`inv`'s identity) a diagonal
//! block at a time from the last up, with a tiled product between. Each kernel covers the
//! whole stack (its blocks loop over the matrices).
//!
//! The one-block-a-matrix kernel of [`lu`](super::lu) is the same algorithm unblocked: with one
//! large matrix it keeps one multiprocessor busy (a 1024 x 1024 `solve` took 150 times
//! cuSOLVER's time), where here the trailing updates, nearly all of the work, spread over the
//! GPU.
//!
//! Real and complex matrices share the kernels' text (`lu_helpers_c` in `stack` spells what
//! differs). What the kernels keep of the unblocked one's contract: the pivot is the first row
//! of the largest magnitude from the diagonal down (NaN never larger), a zero pivot leaves its column
//! and records the matrix in the failure flag, and the determinant is the product of the
//! pivots in order, its sign flipped by each swap (a zero diagonal entry, which only a zero
//! pivot leaves, makes `slogdet`'s sign 0).

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::gpuarray::linalg::stack::{lu_helpers_c, real_type, FAILED_C};
use crate::launch::{Arg, PreparedFunction};
use ndarray::{Ix1, IxDyn};

/// The matrix order from which `det`, `slogdet`, `solve` and `inv` factor blocked: below it,
/// one block a matrix finishes before the extra launches here would pay off.
pub(crate) const BLOCKED_FROM: usize = 128;

/// Columns of one panel. Narrow, because a panel is factored column by column by one block
/// (each column a pivot search, a swap and an update, with barriers between): in a CUDA C
/// model of these kernels on an H200, a 1024 x 1024 `f64` solve took 5.2 ms with panels of
/// 16 columns, 6.2 ms with 32 and 10.6 ms with 64, the trailing products (over many blocks)
/// taking up what the panels give away.
const NB: u64 = 16;
/// Threads of the block that factors a panel (one matrix's).
const PANEL_BLOCK: u32 = 1024;
/// The output tile of the trailing update: `TILE x TILE` entries a block of 256 threads, four
/// by four each.
const TILE: u64 = 64;
/// The inner dimension one tile step of the product stages in shared memory: a panel's width
/// (the trailing update's inner dimension), at most 32.
const KC: u64 = if NB < 32 { NB } else { 32 };
/// The panel kernel's own shared memory for a work type of `size` bytes (its reductions' words
/// and the pivot row, with room for alignment), beside the panel's dynamic share.
const fn panel_static_bytes(size: u64) -> u64 {
    32 * 8 + 32 * 8 + NB * size + 64
}
/// The most right-hand sides solved by [`Part::BackColumn`] (a block each, one launch); more
/// (`inv`'s identity) are solved a diagonal block at a time with tiled products between.
const BACK_COLUMNS: u64 = 64;
/// The most blocks one launch asks for; the blocks loop over the rest.
const MAX_GRID: u64 = 1 << 20;

const _: () = assert!(
    NB <= 64
        && TILE == 64
        && BLOCK == 256
        && PANEL_BLOCK.is_multiple_of(32)
        && (TILE * KC).is_multiple_of(BLOCK as u64)
);

/// The kernels, each of its own source, keyed by the part and the element type read (which
/// fixes the work, result and magnitude types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    /// The matrices (and right-hand sides, or the identity) into the workspace.
    Load,
    /// One panel factored with partial pivoting, its pivots recorded.
    Panel,
    /// The panel's row swaps applied to the columns right of it, and the block row right of
    /// the panel solved by the panel's unit lower triangle.
    SwapLower,
    /// `C -= A B`, three blocks of the workspace (the trailing update, and back substitution's).
    Update,
    /// One diagonal block of `U` solved against the right-hand sides (back substitution of
    /// many of them, with [`Part::Update`] between the blocks).
    SolveUpper,
    /// The whole back substitution of one right-hand side a block (for few of them).
    BackColumn,
    /// `det` or `slogdet` from the factored matrices.
    Det,
    /// The solutions out of the workspace, in the result type.
    Store,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Load => "gpu_blu_load",
            Part::Panel => "gpu_blu_panel",
            Part::SwapLower => "gpu_blu_swap_lower",
            Part::Update => "gpu_blu_update",
            Part::SolveUpper => "gpu_blu_upper",
            Part::BackColumn => "gpu_blu_back_column",
            Part::Det => "gpu_blu_det",
            Part::Store => "gpu_blu_store",
        }
    }
}

/// The source of `part` for elements of `t`, factored in `w`, results in `out` (magnitudes in
/// `real`).
fn source(part: Part, t: DType, w: DType, out: DType, real: DType) -> String {
    let wr = real_type(w);
    let (tc, wc, oc, rc, rl) = (t.c_name(), w.c_name(), out.c_name(), wr.c_name(), real.c_name());
    let name = part.name();
    let body = match part {
        Part::Load => format!(
            "extern \"C\" __global__ void {name}(long long count, long long n, long long k, \
             const {tc} *__restrict__ a, const {tc} *__restrict__ b, int identity, {wc} *__restrict__ work) {{\n\
             const long long w = n + k;\n\
             const unsigned long long total = (unsigned long long)count * n * w;\n\
             for (unsigned long long e = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;\n\
                  e += (unsigned long long)gridDim.x * blockDim.x) {{\n\
                 const long long m = e / (n * w), rc = e % (n * w), r = rc / w, c = rc % w;\n\
                 {wc} v;\n\
                 if (c < n) v = {a_rc};\n\
                 else if (identity) v = r == c - n ? ({wc})1 : ({wc})0;\n\
                 else v = {b_rc};\n\
                 work[e] = v;\n\
             }}\n}}\n",
            a_rc = convert_c(t, w, "a[m * n * n + r * n + c]"),
            b_rc = convert_c(t, w, "b[m * n * k + r * k + (c - n)]"),
        ),
        // The panel is factored in a column-major copy `P` (column `c - j0` at `P[(c - j0) *
        // n]`, by the row's own index), so that a warp's 32 rows of one column are one
        // coalesced access: in the workspace's rows they were 32 cache lines, and the panel
        // ten times slower. Thread `t` owns rows `j + 1 + t`, `j + 1 + t + blockDim.x`, ... of
        // each step's update; the pivot row is staged in shared memory.
        Part::Panel => format!(
            "{FAILED_C}\
             extern \"C\" __global__ void __launch_bounds__({PANEL_BLOCK}) {name}(long long count, long long n, long long w, \
             long long j0, long long jb, {wc} *work, {wc} *panel, int in_shared, long long *piv, unsigned long long *flag) {{\n\
             extern __shared__ __align__(16) unsigned char gpu_smem[];\n\
             __shared__ {rc} wv[32];\n\
             __shared__ long long wi[32];\n\
             __shared__ {wc} prow[{NB}];\n\
             const unsigned t = threadIdx.x, lane = t & 31u, warp = t >> 5, warps = blockDim.x >> 5;\n\
             const long long h = n - j0;\n\
             for (long long m = blockIdx.x; m < count; m += gridDim.x) {{\n\
                 {wc} *A = work + m * n * w;\n\
                 {wc} *const P = in_shared ? ({wc} *)gpu_smem : panel + m * n * {NB};\n\
                 const long long ld = in_shared ? h : n;\n\
                 __syncthreads();\n\
                 // A thread a row (no 64-bit division an element: it was a tenth of the panel).\n\
                 for (long long r = t; r < h; r += blockDim.x) {{\n\
                     const {wc} *row = A + (j0 + r) * w + j0;\n\
                     for (int c = 0; c < (int)jb; ++c) P[c * ld + r] = row[c];\n\
                 }}\n\
                 __syncthreads();\n\
                 for (long long j = j0; j < j0 + jb; ++j) {{\n\
                     const {wc} *col = P + (j - j0) * ld;\n\
                     // The pivot: the largest magnitude in column j from row j, the first of\n\
                     // equals (NaN is never larger, so a column of NaN keeps row j).\n\
                     {rc} bv = ({rc})-1; long long bi = j;\n\
                     for (long long i = j + t; i < n; i += blockDim.x) {{\n\
                         const {rc} v = gpu_lu_mag(col[i - j0]);\n\
                         if (v > bv) {{ bv = v; bi = i; }}\n\
                     }}\n\
                     for (int o = 16; o; o >>= 1) {{\n\
                         const {rc} ov = __shfl_down_sync(0xffffffffu, bv, o);\n\
                         const long long oi = __shfl_down_sync(0xffffffffu, bi, o);\n\
                         if (ov > bv || (ov == bv && oi < bi)) {{ bv = ov; bi = oi; }}\n\
                     }}\n\
                     if (lane == 0) {{ wv[warp] = bv; wi[warp] = bi; }}\n\
                     __syncthreads();\n\
                     if (warp == 0) {{\n\
                         bv = lane < warps ? wv[lane] : ({rc})-1; bi = lane < warps ? wi[lane] : j;\n\
                         for (int o = 16; o; o >>= 1) {{\n\
                             const {rc} ov = __shfl_down_sync(0xffffffffu, bv, o);\n\
                             const long long oi = __shfl_down_sync(0xffffffffu, bi, o);\n\
                             if (ov > bv || (ov == bv && oi < bi)) {{ bv = ov; bi = oi; }}\n\
                         }}\n\
                         if (lane == 0) {{ wv[0] = bv; wi[0] = bi; }}\n\
                     }}\n\
                     __syncthreads();\n\
                     const long long p = wi[0];\n\
                     const {rc} pv = wv[0];\n\
                     if (t == 0) piv[m * n + j] = pv == ({rc})0 ? j : p;\n\
                     // A zero pivot (getrf's info > 0): the column stays, the matrix is singular.\n\
                     if (pv == ({rc})0) {{\n\
                         if (t == 0) gpu_failed(flag, count, m);\n\
                         __syncthreads();\n\
                         continue;\n\
                     }}\n\
                     // The swap across the panel, the pivot row (from column j) staged.\n\
                     for (long long c = t; c < jb; c += blockDim.x) {{\n\
                         const {wc} s = P[c * ld + p - j0];\n\
                         if (p != j) {{ P[c * ld + p - j0] = P[c * ld + j - j0]; P[c * ld + j - j0] = s; }}\n\
                         prow[c] = s;\n\
                     }}\n\
                     __syncthreads();\n\
                     const long long jc = j - j0;\n\
                     const {wc} d = prow[jc];\n\
                     for (long long i = j + 1 + t; i < n; i += blockDim.x) {{\n\
                         const {wc} l = P[jc * ld + i - j0] / d;\n\
                         P[jc * ld + i - j0] = l;\n\
                         // Eight loads in flight before their stores (the compiler may not\n\
                         // move a load past a store to the same array).\n\
                         long long c = jc + 1;\n\
                         for (; c + 8 <= jb; c += 8) {{\n\
                             {wc} v[8];\n\
                             #pragma unroll\n\
                             for (int u = 0; u < 8; ++u) v[u] = P[(c + u) * ld + i - j0];\n\
                             #pragma unroll\n\
                             for (int u = 0; u < 8; ++u) P[(c + u) * ld + i - j0] = v[u] - l * prow[c + u];\n\
                         }}\n\
                         for (; c < jb; ++c) P[c * ld + i - j0] -= l * prow[c];\n\
                     }}\n\
                     __syncthreads();\n\
                 }}\n\
                 for (long long r = t; r < h; r += blockDim.x) {{\n\
                     {wc} *row = A + (j0 + r) * w + j0;\n\
                     for (int c = 0; c < (int)jb; ++c) row[c] = P[c * ld + r];\n\
                 }}\n\
             }}\n}}\n"
        ),
        // A thread a column right of the panel: the panel's swaps in order, then forward
        // substitution by the unit lower triangle of the panel's diagonal block (in shared
        // memory, zero outside the panel's `jb` columns), the column's `jb` rows in registers.
        Part::SwapLower => format!(
            "extern \"C\" __global__ void {name}(long long count, long long n, long long w, long long j0, long long jb, \
             {wc} *work, const long long *__restrict__ piv) {{\n\
             __shared__ {wc} L[{NB}][{NB}];\n\
             const long long c0 = j0 + jb, cols = w - c0;\n\
             const long long per = (cols + blockDim.x - 1) / blockDim.x;\n\
             for (long long g = blockIdx.x; g < count * per; g += gridDim.x) {{\n\
                 const long long m = g / per, c = c0 + (g % per) * blockDim.x + threadIdx.x;\n\
                 {wc} *A = work + m * n * w;\n\
                 __syncthreads();\n\
                 for (int e = threadIdx.x; e < {NB} * {NB}; e += blockDim.x) {{\n\
                     const int i = e / {NB}, l = e % {NB};\n\
                     L[i][l] = (i < jb && l < jb) ? A[(j0 + i) * w + j0 + l] : ({wc})0;\n\
                 }}\n\
                 __syncthreads();\n\
                 if (c >= w) continue;\n\
                 for (long long j = j0; j < j0 + jb; ++j) {{\n\
                     const long long p = piv[m * n + j];\n\
                     if (p != j) {{ const {wc} s = A[j * w + c]; A[j * w + c] = A[p * w + c]; A[p * w + c] = s; }}\n\
                 }}\n\
                 {wc} x[{NB}];\n\
                 #pragma unroll\n\
                 for (int i = 0; i < {NB}; ++i) x[i] = i < jb ? A[(j0 + i) * w + c] : ({wc})0;\n\
                 #pragma unroll\n\
                 for (int i = 1; i < {NB}; ++i) {{\n\
                     #pragma unroll\n\
                     for (int l = 0; l < i; ++l) x[i] -= L[i][l] * x[l];\n\
                 }}\n\
                 #pragma unroll\n\
                 for (int i = 1; i < {NB}; ++i) if (i < jb) A[(j0 + i) * w + c] = x[i];\n\
             }}\n}}\n"
        ),
        // C[r0 + r][c0 + c] -= sum over l < kb of A[r0 + r][l0 + l] * A[l0 + l][c0 + c], in
        // tiles of 64 x 64 (256 threads, 4 x 4 each), the inner dimension staged KC at a time.
        Part::Update => format!(
            "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}(long long count, long long n, long long w, {wc} *work, \
             long long r0, long long rows, long long c0, long long cols, long long l0, long long kb) {{\n\
             __shared__ {wc} As[{KC}][{TILE} + 1];\n\
             __shared__ {wc} Bs[{KC}][{TILE}];\n\
             const unsigned t = threadIdx.x, tx = t & 15u, ty = t >> 4;\n\
             const long long tr = (rows + {TILE} - 1) / {TILE}, tc = (cols + {TILE} - 1) / {TILE};\n\
             for (long long g = blockIdx.x; g < count * tr * tc; g += gridDim.x) {{\n\
                 const long long m = g / (tr * tc), rt = (g / tc) % tr, ct = g % tc;\n\
                 {wc} *A = work + m * n * w;\n\
                 const long long rb = rt * {TILE}, cb = ct * {TILE};\n\
                 {wc} acc[4][4];\n\
                 #pragma unroll\n\
                 for (int i = 0; i < 4; ++i) {{\n\
                     #pragma unroll\n\
                     for (int j = 0; j < 4; ++j) acc[i][j] = 0;\n\
                 }}\n\
                 for (long long lk = 0; lk < kb; lk += {KC}) {{\n\
                     __syncthreads();\n\
                     for (unsigned e = t; e < {TILE} * {KC}; e += blockDim.x) {{\n\
                         const unsigned r = e / {KC}, l = e % {KC};\n\
                         As[l][r] = (rb + r < rows && lk + l < kb) ? A[(r0 + rb + r) * w + l0 + lk + l] : ({wc})0;\n\
                         const unsigned bl = e / {TILE}, bc = e % {TILE};\n\
                         Bs[bl][bc] = (cb + bc < cols && lk + bl < kb) ? A[(l0 + lk + bl) * w + c0 + cb + bc] : ({wc})0;\n\
                     }}\n\
                     __syncthreads();\n\
                     #pragma unroll 8\n\
                     for (int l = 0; l < {KC}; ++l) {{\n\
                         {wc} x[4], y[4];\n\
                         #pragma unroll\n\
                         for (int i = 0; i < 4; ++i) {{ x[i] = As[l][ty + 16 * i]; y[i] = Bs[l][tx + 16 * i]; }}\n\
                         #pragma unroll\n\
                         for (int i = 0; i < 4; ++i) {{\n\
                             #pragma unroll\n\
                             for (int j = 0; j < 4; ++j) acc[i][j] += x[i] * y[j];\n\
                         }}\n\
                     }}\n\
                 }}\n\
                 #pragma unroll\n\
                 for (int i = 0; i < 4; ++i) {{\n\
                     const long long r = rb + ty + 16 * i;\n\
                     if (r >= rows) continue;\n\
                     #pragma unroll\n\
                     for (int j = 0; j < 4; ++j) {{\n\
                         const long long c = cb + tx + 16 * j;\n\
                         if (c < cols) A[(r0 + r) * w + c0 + c] -= acc[i][j];\n\
                     }}\n\
                 }}\n\
             }}\n}}\n"
        ),
        // A block a right-hand side (few of them): back substitution from the last diagonal
        // block of U up, each block's `jb` unknowns solved by one warp (a lane a row, the
        // solved unknown passed by a shuffle), then taken from every row above by the block's
        // threads (a row each, its `jb` entries of U read together).
        Part::BackColumn => format!(
            "extern \"C\" __global__ void {name}(long long count, long long n, long long w, {wc} *work) {{\n\
             __shared__ {wc} U[{NB}][{NB} + 1];\n\
             __shared__ {wc} xs[{NB}];\n\
             const unsigned t = threadIdx.x;\n\
             const long long k = w - n;\n\
             for (long long g = blockIdx.x; g < count * k; g += gridDim.x) {{\n\
                 const long long m = g / k, c = n + g % k;\n\
                 {wc} *A = work + m * n * w;\n\
                 for (long long end = n; end > 0;) {{\n\
                     const long long j0 = (end - 1) / {NB} * {NB}, jb = end - j0;\n\
                     __syncthreads();\n\
                     for (int e = t; e < {NB} * {NB}; e += blockDim.x) {{\n\
                         const int i = e / {NB}, l = e % {NB};\n\
                         U[i][l] = (i < jb && l < jb) ? A[(j0 + i) * w + j0 + l] : ({wc})0;\n\
                     }}\n\
                     __syncthreads();\n\
                     if (t < 32) {{\n\
                         {wc} b = t < jb ? A[(j0 + t) * w + c] : ({wc})0;\n\
                         for (int i = (int)jb - 1; i >= 0; --i) {{\n\
                             const {wc} xi = gpu_lu_shfl(b, i) / U[i][i];\n\
                             if (t == (unsigned)i) b = xi;\n\
                             else if (t < (unsigned)i) b -= U[t][i] * xi;\n\
                         }}\n\
                         if (t < jb) {{ xs[t] = b; A[(j0 + t) * w + c] = b; }}\n\
                     }}\n\
                     __syncthreads();\n\
                     for (long long r = t; r < j0; r += blockDim.x) {{\n\
                         const {wc} *row = A + r * w + j0;\n\
                         {wc} s = A[r * w + c];\n\
                         #pragma unroll\n\
                         for (int l = 0; l < {NB}; ++l) if (l < jb) s -= row[l] * xs[l];\n\
                         A[r * w + c] = s;\n\
                     }}\n\
                     end = j0;\n\
                 }}\n\
             }}\n}}\n"
        ),
        // A thread a right-hand side: back substitution by the diagonal block of U at j0.
        Part::SolveUpper => format!(
            "extern \"C\" __global__ void {name}(long long count, long long n, long long w, long long j0, long long jb, \
             {wc} *work) {{\n\
             __shared__ {wc} U[{NB}][{NB}];\n\
             const long long cols = w - n;\n\
             const long long per = (cols + blockDim.x - 1) / blockDim.x;\n\
             for (long long g = blockIdx.x; g < count * per; g += gridDim.x) {{\n\
                 const long long m = g / per, c = n + (g % per) * blockDim.x + threadIdx.x;\n\
                 {wc} *A = work + m * n * w;\n\
                 __syncthreads();\n\
                 for (long long e = threadIdx.x; e < jb * jb; e += blockDim.x) U[e / jb][e % jb] = A[(j0 + e / jb) * w + j0 + e % jb];\n\
                 __syncthreads();\n\
                 if (c < w) {{\n\
                     for (long long i = jb - 1; i >= 0; --i) {{\n\
                         {wc} s = A[(j0 + i) * w + c];\n\
                         for (long long l = i + 1; l < jb; ++l) s -= U[i][l] * A[(j0 + l) * w + c];\n\
                         A[(j0 + i) * w + c] = s / U[i][i];\n\
                     }}\n\
                 }}\n\
             }}\n}}\n"
        ),
        // A thread a matrix, in the unblocked kernel's order: the sign of the swaps, then the
        // pivots multiplied (or their logarithms added) from the first.
        Part::Det => format!(
            "extern \"C\" __global__ void {name}(long long count, long long n, const {wc} *__restrict__ work, \
             const long long *__restrict__ piv, int slog, {oc} *d0, {rl} *d1) {{\n\
             for (long long m = (long long)blockIdx.x * blockDim.x + threadIdx.x; m < count; m += (long long)gridDim.x * blockDim.x) {{\n\
                 const {wc} *A = work + m * n * n;\n\
                 bool odd = false, singular = false;\n\
                 for (long long j = 0; j < n; ++j) {{\n\
                     if (piv[m * n + j] != j) odd = !odd;\n\
                     if (A[j * n + j] == ({wc})0) singular = true;\n\
                 }}\n\
                 if (!slog) {{\n\
                     {det}\
                 }}\n\
             }}\n}}\n",
            det = det_c(w, out, real, "n"),
        ),
        Part::Store => format!(
            "extern \"C\" __global__ void {name}(long long count, long long n, long long k, \
             const {wc} *__restrict__ work, {oc} *__restrict__ x) {{\n\
             const long long w = n + k;\n\
             const unsigned long long total = (unsigned long long)count * n * k;\n\
             for (unsigned long long e = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;\n\
                  e += (unsigned long long)gridDim.x * blockDim.x) {{\n\
                 const long long m = e / (n * k), rc = e % (n * k);\n\
                 x[e] = {write_x};\n\
             }}\n}}\n",
            write_x = convert_c(w, out, "work[m * n * w + (rc / k) * w + n + rc % k]"),
        ),
    };
    format!("{}{}{body}", headers_for([t, w, out, real]), lu_helpers_c(w))
}

/// C of `det` and, after the `} else {` it holds, `slogdet` from the factored matrix `A` of
/// the kernels (`lu`'s and [`Part::Det`]), whose diagonal element `j` is `A[j * ld + j]`: the
/// product of the pivots (or the sum of their logarithms), its sign flipped by each swap
/// (`odd`), into `d0[m]` (and `d1[m]`). `w`, `out` and `real` as [`source`]'s.
pub(crate) fn det_c(w: DType, out: DType, real: DType, ld: &str) -> String {
    let (wc, rc) = (w.c_name(), real_type(w).c_name());
    format!(
        "{wc} d = odd ? ({wc})-1 : ({wc})1;\n\
         for (long long j = 0; j < n; ++j) d *= A[j * {ld} + j];\n\
         d0[m] = {write_d};\n\
         }} else {{\n\
         {wc} sign = odd ? ({wc})-1 : ({wc})1;\n\
         {rc} logabs = 0;\n\
         for (long long j = 0; j < n; ++j) gpu_lu_slog(A[j * {ld} + j], sign, logabs);\n\
         if (singular) {{ sign = ({wc})0; logabs = -INFINITY; }}\n\
         d0[m] = {write_sign};\n\
         d1[m] = {write_logabs};\n",
        write_d = convert_c(w, out, "d"),
        write_sign = convert_c(w, out, "sign"),
        write_logabs = convert_c(real_type(w), real, "logabs"),
    )
}

static KERNELS: SourceKernels<(Part, DType)> = SourceKernels::new();

/// The blocks for `items` items of a grid-stride loop of `block`-thread blocks.
fn blocks(items: u64, block: u32) -> u32 {
    items.div_ceil(u64::from(block)).clamp(1, MAX_GRID) as u32
}

/// The blocks for a launch of `units` block-sized units (each kernel loops over the rest).
fn units(units: u64) -> u32 {
    units.clamp(1, MAX_GRID) as u32
}

/// What the LU kernels (`lu`'s and the blocked ones) give back besides the factorization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// `det`: the determinant into `d0`.
    Det = 1,
    /// `slogdet`: its sign into `d0` and the logarithm of its magnitude into `d1`.
    SlogDet = 2,
    /// `solve`: the solutions of the right-hand sides `b` into `x`.
    Solve = 3,
    /// `inv`: the solutions of the identity into `x`.
    Inverse = 4,
}

/// The sizes of one factorization: `count` matrices of `n x n`, `k` right-hand sides each, and
/// what is wanted of them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dims {
    pub(crate) count: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) wanted: Wanted,
}

/// What a factorization (one block a matrix, or blocked) produced: `d0`/`d1` (`count` each)
/// or `x` (`count * n * k`), and the flag of the first singular matrix.
pub(crate) struct Factored<M: Element, R: Element> {
    /// The determinants, or the signs of [`Wanted::SlogDet`].
    pub(crate) d0: DeviceArray<M, Ix1>,
    /// The logarithms of [`Wanted::SlogDet`].
    pub(crate) d1: DeviceArray<R, Ix1>,
    /// The solutions.
    pub(crate) x: DeviceArray<M, Ix1>,
    /// The first singular matrix ([`FAILED_C`]).
    pub(crate) flag: DeviceBuffer<u64>,
}

/// Factors the `count` matrices of `n x n` in `a` (C order) beside the `k` right-hand sides a
/// matrix of `b` (`count` blocks of `n x k`, C order; `None`: the identity, `k = n`) in
/// `work` (`count * n * (n + k)` of the work type `W`) and queues what `want` asks for into
/// `out`, every kernel on `stream`.
pub(crate) fn factor_blocked<T: Element, M: Element, R: Element, W: Element>(
    ctx: &Context,
    a: &DeviceArrayBase<impl Storage<Elem = T>, IxDyn>,
    b: Option<&DeviceArrayBase<impl Storage<Elem = T>, IxDyn>>,
    work: &mut DeviceArray<W, Ix1>,
    out: &mut Factored<M, R>,
    dims: Dims,
    stream: Option<&Stream>,
) -> Result<()> {
    let Dims {
        count,
        n,
        k,
        wanted: want,
    } = dims;
    let (t, w, res, real) = (T::DTYPE, W::DTYPE, M::DTYPE, R::DTYPE);
    let f = |part: Part| KERNELS.prepared(ctx, (part, t), part.name(), || source(part, t, w, res, real));
    let (c, n64, k64) = (count as u64, n as u64, k as u64);
    let wid = n64 + k64;
    let (ci, ni, ki, wi) = (count as i64, n as i64, k as i64, wid as i64);
    let Factored { d0, d1, x, flag } = out;
    let mut piv = DeviceBuffer::<i64>::zeros(ctx, count * n)?;
    // The panel in the block's shared memory when `n x NB` of the work type fits (up to
    // about n = 1800 in `f64` on an H200, whose opt-in limit is 227 KiB), else in a global
    // copy a matrix.
    let panel_bytes = n as u64 * NB * W::DTYPE.size() as u64;
    let in_shared = panel_bytes + panel_static_bytes(W::DTYPE.size() as u64)
        <= u64::from(ctx.limits().max_shared_memory_per_block_optin);
    let scratch_len = if in_shared { 0 } else { count * n * NB as usize };
    let mut scratch = DeviceArray::<W, Ix1>::empty(ctx, scratch_len)?;
    let av = a.view();
    let bv = b.map(|b| b.view());
    registry::launch(
        &f(Part::Load)?,
        blocks(c * n64 * wid, BLOCK),
        BLOCK,
        stream,
        &[
            Arg::I64(ci),
            Arg::I64(ni),
            Arg::I64(ki),
            Arg::input::<T, _>(&av),
            Arg::input::<T, _>(bv.as_ref().unwrap_or(&av)),
            Arg::I32(i32::from(b.is_none() && k > 0)),
            Arg::output(&mut *work),
        ],
    )?;
    let panel = f(Part::Panel)?;
    let panel = if in_shared {
        panel.with_shared_mem(panel_bytes as u32)
    } else {
        panel
    };
    let (swap_lower, update) = (f(Part::SwapLower)?, f(Part::Update)?);
    let mut j0 = 0;
    while j0 < n64 {
        let jb = NB.min(n64 - j0);
        let (j0i, jbi) = (j0 as i64, jb as i64);
        registry::launch(
            &panel,
            units(c),
            PANEL_BLOCK,
            stream,
            &[
                Arg::I64(ci),
                Arg::I64(ni),
                Arg::I64(wi),
                Arg::I64(j0i),
                Arg::I64(jbi),
                Arg::output(&mut *work),
                Arg::output(&mut scratch),
                Arg::I32(i32::from(in_shared)),
                Arg::output(&mut piv),
                Arg::output(&mut *flag),
            ],
        )?;
        let right = wid - j0 - jb;
        if right > 0 {
            registry::launch(
                &swap_lower,
                units(c * right.div_ceil(u64::from(BLOCK))),
                BLOCK,
                stream,
                &[
                    Arg::I64(ci),
                    Arg::I64(ni),
                    Arg::I64(wi),
                    Arg::I64(j0i),
                    Arg::I64(jbi),
                    Arg::output(&mut *work),
                    Arg::input(&piv),
                ],
            )?;
            let below = n64 - j0 - jb;
            if below > 0 {
                let trailing = Block {
                    r0: j0 + jb,
                    rows: below,
                    c0: j0 + jb,
                    cols: right,
                };
                launch_update(&update, (c, n64, wid), work, trailing, (j0, jb), stream)?;
            }
        }
        j0 += jb;
    }
    match want {
        Wanted::Det | Wanted::SlogDet => {
            return registry::launch(
                &f(Part::Det)?,
                blocks(c, BLOCK),
                BLOCK,
                stream,
                &[
                    Arg::I64(ci),
                    Arg::I64(ni),
                    Arg::input(&*work),
                    Arg::input(&piv),
                    Arg::I32(i32::from(want == Wanted::SlogDet)),
                    Arg::output(d0),
                    Arg::output(d1),
                ],
            );
        }
        // Few right-hand sides: one launch, a block each.
        Wanted::Solve | Wanted::Inverse if k64 <= BACK_COLUMNS => registry::launch(
            &f(Part::BackColumn)?,
            units(c * k64),
            BLOCK,
            stream,
            &[Arg::I64(ci), Arg::I64(ni), Arg::I64(wi), Arg::output(&mut *work)],
        )?,
        Wanted::Solve | Wanted::Inverse => {
            // Back substitution, the last diagonal block of U first: its rows of the
            // right-hand sides solved, then subtracted from the rows above.
            let upper = f(Part::SolveUpper)?;
            let mut end = n64;
            while end > 0 {
                let j0 = (end - 1) / NB * NB;
                let jb = end - j0;
                registry::launch(
                    &upper,
                    units(c * k64.div_ceil(u64::from(BLOCK))),
                    BLOCK,
                    stream,
                    &[
                        Arg::I64(ci),
                        Arg::I64(ni),
                        Arg::I64(wi),
                        Arg::I64(j0 as i64),
                        Arg::I64(jb as i64),
                        Arg::output(&mut *work),
                    ],
                )?;
                if j0 > 0 {
                    let above = Block {
                        r0: 0,
                        rows: j0,
                        c0: n64,
                        cols: k64,
                    };
                    launch_update(&update, (c, n64, wid), work, above, (j0, jb), stream)?;
                }
                end = j0;
            }
        }
    }
    // The solutions out of the factored workspace into `x`, in the result type.
    registry::launch(
        &f(Part::Store)?,
        blocks(c * n64 * k64, BLOCK),
        BLOCK,
        stream,
        &[
            Arg::I64(ci),
            Arg::I64(ni),
            Arg::I64(ki),
            Arg::input(&*work),
            Arg::output(x),
        ],
    )
}

/// Rows `r0..r0 + rows` by columns `c0..c0 + cols` of each matrix's workspace.
#[derive(Debug, Clone, Copy)]
struct Block {
    r0: u64,
    rows: u64,
    c0: u64,
    cols: u64,
}

/// [`Part::Update`] on every matrix of the stack (`count` of `n` rows of `w` columns):
/// `out -= A B`, `A` the rows of `out` at the columns `l0..l0 + kb`, `B` the rows
/// `l0..l0 + kb` at the columns of `out`.
fn launch_update<W: Element>(
    f: &PreparedFunction,
    (count, n, w): (u64, u64, u64),
    work: &mut DeviceArray<W, Ix1>,
    out: Block,
    (l0, kb): (u64, u64),
    stream: Option<&Stream>,
) -> Result<()> {
    let tiles = count * out.rows.div_ceil(TILE) * out.cols.div_ceil(TILE);
    let i = |v: u64| Arg::I64(v as i64);
    registry::launch(
        f,
        units(tiles),
        BLOCK,
        stream,
        &[
            i(count),
            i(n),
            i(w),
            Arg::output(work),
            i(out.r0),
            i(out.rows),
            i(out.c0),
            i(out.cols),
            i(l0),
            i(kb),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpuarray::linalg::stack::{mean_dtype, work_type};

    #[test]
    fn every_part_compiles_for_every_element_type() {
        let parts = [
            Part::Load,
            Part::Panel,
            Part::SwapLower,
            Part::Update,
            Part::SolveUpper,
            Part::BackColumn,
            Part::Det,
            Part::Store,
        ];
        for t in DType::ALL {
            for part in parts {
                let s = source(part, t, work_type(t), mean_dtype(t), real_type(mean_dtype(t)));
                assert!(gpu_cuda_source::find_kernel(&s, part.name()).is_ok());
                if let Err(e) = registry::compile_check(&s, "sm_90") {
                    panic!("{t:?} {part:?}: {e}");
                }
            }
        }
    }
}
