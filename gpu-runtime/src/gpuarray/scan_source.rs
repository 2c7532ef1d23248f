//! The CUDA C sources of [`ScanKernel`]'s variants.
//!
//! [`ScanVariant::LookBack`] is a single-pass scan with decoupled look-back (Merrill and
//! Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016; CUB's
//! `DeviceScan`): each block takes the next tile by an atomic ticket (blocks are not started in
//! launch order, and a tile may only wait on tiles whose blocks are already running), scans
//! it (each thread its run of consecutive elements, staged through shared memory; the
//! threads' sums by warp shuffles, then the warps' totals, with one barrier), publishes the tile's total (flag 1), then finds its prefix by reading
//! its predecessors' published values a warp-wide window of 32 at a time, backwards, until one
//! of them has published its inclusive prefix (flag 2); it then publishes its own inclusive
//! prefix and writes its tile. Every element is read once and written once, the floor.
//!
//! Values are published with a volatile store, `__threadfence()`, then a volatile store of the
//! flag; a reader loads the flag (volatile), fences, then loads the value (volatile). Flags and
//! values live in separate arrays so that any element type (up to 8 bytes) works.
//!
//! [`ScanVariant::Lanes`] scans many independent lanes (a scan along one axis of an n-d
//! array), one thread per lane, down the axis.

use std::fmt::Write as _;

use crate::gpuarray::element::Element;
use crate::gpuarray::kernel_cache::BLOCK;
use crate::gpuarray::scan::{ScanKernel, ScanVariant, PER_THREAD, TILE};

/// The shared-memory slot of a tile's element `j`: one padding slot per 32 elements, so that
/// the threads of a warp reading their consecutive runs hit different banks.
const PAD: &str = "#define GPU_PAD(j) ((j) + ((j) >> 5))\n";

/// `__shfl_up_sync` of any trivially copyable type, four bytes at a time (the builtin takes
/// only some types; the scans run on every element type, `__half` and complex ones included).
const SHFL_UP: &str =
    "template <typename T> __device__ __forceinline__ T gpu_shfl_up(T v, unsigned int d) {\n\
constexpr int W = (sizeof(T) + 3) / 4;\n\
unsigned int w[W];\n\
#pragma unroll\n\
for (int k = 0; k < W; ++k) w[k] = 0u;\n\
#pragma unroll\n\
for (int b = 0; b < (int)sizeof(T); ++b) ((unsigned char *)w)[b] = ((const unsigned char *)&v)[b];\n\
#pragma unroll\n\
for (int k = 0; k < W; ++k) w[k] = __shfl_up_sync(0xffffffffu, w[k], d);\n\
T r;\n\
#pragma unroll\n\
for (int b = 0; b < (int)sizeof(T); ++b) ((unsigned char *)&r)[b] = ((const unsigned char *)w)[b];\n\
return r; }\n";

/// Warps in a block of a scan.
const WARPS: u32 = BLOCK / 32;

impl<T: Element> ScanKernel<T> {
    /// The CUDA C source of one variant, as it is compiled (with `no_extern_c`).
    pub fn source(&self, v: ScanVariant) -> String {
        let t = T::c_name();
        let (op, neutral, name) = (&self.op, &self.neutral, Self::c_name(v));
        let mut s = format!("__device__ __forceinline__ {t} gpu_op({t} a, {t} b) {{ return ({op}); }}\n");
        match v {
            ScanVariant::LookBack => {
                s.push_str(PAD);
                s.push_str(SHFL_UP);
                let _ = write!(
                    s,
                    "extern \"C\" __global__ void {name}(long long n, const {t} *__restrict__ x, long long x_o, long long x_s, \
                     {t} *__restrict__ out, long long out_o, long long out_s, unsigned int *gpu_status, {t} *gpu_agg, {t} *gpu_inc, int exclusive) {{\n\
                     __shared__ {t} tile[{TILE} + {TILE} / 32];\n__shared__ {t} wsum[{WARPS}];\n__shared__ {t} window[32];\n\
                     __shared__ long long s_tile;\n__shared__ {t} s_prefix;\n__shared__ int s_done;\n\
                     const {t} neutral = ({neutral});\n\
                     const int tid = threadIdx.x;\n\
                     // The tile's logical index, in the order blocks start: every earlier tile's block is running.\n\
                     if (tid == 0) s_tile = atomicAdd(gpu_status, 1u);\n\
                     __syncthreads();\n\
                     const long long me = s_tile;\n\
                     const long long base = me * {TILE};\n\
                     #pragma unroll\n\
                     for (int k = 0; k < {PER_THREAD}; ++k) {{ int j = k * {BLOCK} + tid; long long g = base + j; tile[GPU_PAD(j)] = g < n ? x[x_o + g * x_s] : neutral; }}\n\
                     __syncthreads();\n\
                     {t} acc = tile[GPU_PAD(tid * {PER_THREAD})];\n\
                     #pragma unroll\n\
                     for (int k = 1; k < {PER_THREAD}; ++k) acc = gpu_op(acc, tile[GPU_PAD(tid * {PER_THREAD} + k)]);\n\
                     // The block's scan of the threads' sums: a shuffle scan in each warp, then\n\
                     // the warps' totals through shared memory (one barrier, not one per step).\n\
                     const int lane = tid & 31, wid = tid >> 5;\n\
                     {t} incl = acc;\n\
                     #pragma unroll\n\
                     for (int off = 1; off < 32; off <<= 1) {{ {t} u = gpu_shfl_up(incl, off); if (lane >= off) incl = gpu_op(u, incl); }}\n\
                     const {t} lane_before = gpu_shfl_up(incl, 1);\n\
                     if (lane == 31) wsum[wid] = incl;\n\
                     __syncthreads();\n\
                     // The threads before this one: the earlier warps' totals, then the earlier\n\
                     // lanes of this warp (combined in order: the operator need not commute).\n\
                     {t} before = wsum[0];\n\
                     for (int w = 1; w < wid; ++w) before = gpu_op(before, wsum[w]);\n\
                     if (lane > 0) before = wid > 0 ? gpu_op(before, lane_before) : lane_before;\n\
                     {t} total = wsum[0];\n\
                     #pragma unroll\n\
                     for (int w = 1; w < {WARPS}; ++w) total = gpu_op(total, wsum[w]);\n\
                     volatile unsigned int *flags = gpu_status + 1;\n\
                     if (tid == 0) {{\n\
                       if (me == 0) {{ ((volatile {t} *)gpu_inc)[0] = total; __threadfence(); flags[0] = 2u; s_prefix = neutral; }}\n\
                       else {{ ((volatile {t} *)gpu_agg)[me] = total; __threadfence(); flags[me] = 1u; }}\n\
                     }}\n\
                     if (me > 0 && tid < 32) {{\n\
                       {t} running = neutral;\n\
                       long long end = me - 1;\n\
                       for (;;) {{\n\
                         long long p = end - tid;\n\
                         unsigned int f = 2u;\n\
                         if (p >= 0) {{ do {{ f = flags[p]; }} while (f == 0u); }}\n\
                         __threadfence();\n\
                         {t} v = neutral;\n\
                         if (p >= 0) v = f == 2u ? ((volatile {t} *)gpu_inc)[p] : ((volatile {t} *)gpu_agg)[p];\n\
                         unsigned int incl = __ballot_sync(0xffffffffu, f == 2u);\n\
                         window[tid] = v;\n\
                         __syncwarp();\n\
                         if (tid == 0) {{\n\
                           // Lane k holds tile end - k: the earliest is the highest lane, combined first.\n\
                           int stop = incl ? __ffs(incl) - 1 : 31;\n\
                           {t} w = window[stop];\n\
                           for (int k = stop - 1; k >= 0; --k) w = gpu_op(w, window[k]);\n\
                           running = gpu_op(w, running);\n\
                           s_done = incl != 0u;\n\
                         }}\n\
                         __syncwarp();\n\
                         if (s_done) break;\n\
                         end -= 32;\n\
                         __syncwarp();\n\
                       }}\n\
                       if (tid == 0) {{ s_prefix = running; ((volatile {t} *)gpu_inc)[me] = gpu_op(running, total); __threadfence(); flags[me] = 2u; }}\n\
                     }}\n\
                     __syncthreads();\n\
                     {t} run = tid > 0 ? gpu_op(s_prefix, before) : s_prefix;\n\
                     #pragma unroll\n\
                     for (int k = 0; k < {PER_THREAD}; ++k) {{ int j = GPU_PAD(tid * {PER_THREAD} + k); {t} v = tile[j]; {t} next = gpu_op(run, v); tile[j] = exclusive ? run : next; run = next; }}\n\
                     __syncthreads();\n\
                     #pragma unroll\n\
                     for (int k = 0; k < {PER_THREAD}; ++k) {{ int j = k * {BLOCK} + tid; long long g = base + j; if (g < n) out[out_o + g * out_s] = tile[GPU_PAD(j)]; }}\n}}\n",
                );
            }
            ScanVariant::Lanes(d) => {
                let dims: String = (0..d)
                    .map(|k| format!(", long long gpu_d{k}, long long x_s{k}, long long out_s{k}"))
                    .collect();
                let _ = writeln!(
                    s,
                    "extern \"C\" __global__ void {name}(long long m, long long lanes, const {t} *__restrict__ x, long long x_o, long long x_sa, \
                     {t} *__restrict__ out, long long out_sa, int exclusive{dims}) {{\n\
                     const {t} neutral = ({neutral});\n\
                     for (long long l = blockIdx.x * (long long)blockDim.x + threadIdx.x; l < lanes; l += (long long)gridDim.x * blockDim.x) {{\n\
                     long long r = l, xi = x_o, oi = 0, c;"
                );
                // The lane's index over the other axes, the last one fastest (C order).
                for k in (0..d).rev() {
                    let _ = writeln!(
                        s,
                        "c = r % gpu_d{k}; r /= gpu_d{k}; xi += c * x_s{k}; oi += c * out_s{k};"
                    );
                }
                s.push_str(&format!(
                    "{t} acc = neutral;\n\
                     for (long long i = 0; i < m; ++i) {{ {t} v = x[xi + i * x_sa]; {t} next = gpu_op(acc, v); out[oi + i * out_sa] = exclusive ? acc : next; acc = next; }}\n}}\n}}\n"
                ));
            }
        }
        s
    }
}
