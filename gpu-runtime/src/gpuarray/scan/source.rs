//! The CUDA C sources of [`ScanKernel`]'s variants.
//!
//! [`ScanVariant::LookBack`] is a single-pass scan with decoupled look-back (Merrill and
//! Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016; CUB's
//! `DeviceScan`): each block takes the next tile by an atomic ticket (blocks are not started in
//! launch order, and a tile may only wait on tiles whose blocks are already running), scans
//! it (each thread its run of consecutive elements, staged through shared memory; the
//! threads' sums by warp shuffles, then the warps' totals, with one barrier), publishes the tile's total (flag 1), then finds its prefix by reading
//! its predecessors' published values a warp-wide window of 32 at a time, backwards, until one
//! of them has published its inclusive prefix (flag 2), each window's values combined in order
//! by a five-step shuffle suffix scan; it then publishes its own inclusive prefix and writes
//! its tile. Every element is read once and written once, the floor.
//!
//! A full tile of a contiguous run whose ends are 16-byte aligned (`gpu_vec`, checked on the
//! host) is read and written with 16-byte vector accesses, block-striped (each load of a warp
//! covers 512 adjacent bytes) and moved to the blocked order of the scan through shared memory,
//! all of a thread's loads issued before the first is used, with streaming (evict-first) cache
//! hints, since each byte is read and written once; other tiles (the last, partial one,
//! or any strided run) take one element at a time.
//!
//! A tile's status for elements of up to 4 bytes is one 64-bit word, flag in the high half and
//! value in the low (see `packs_status`), published by one store and read by one load. For
//! larger elements, values are published with volatile stores of its 8- or 4-byte words (a
//! class type such as `gpu_runtime::complex` has no volatile assignment), `__threadfence()`,
//! then a volatile store of the flag; a reader loads the flag (volatile), fences, then loads
//! the value's words (volatile), from separate arrays so that any element type works. A tile is
//! 32 KiB of elements (`scan::per_thread_of`: 32 a thread of up to 4 bytes, 16 of 8, 8 of
//! 16), which fits 48 KiB of static shared memory.
//!
//! The status buffer is the stream's, reused by every scan on it and never cleared between
//! them ([`scan_status`](crate::gpuarray::scan::status)): a flag word is the launch's tag (`gpu_tag`, 1 to
//! 2^30 - 1) shifted left by two, or 1 (the tile's total) or 2 (its inclusive prefix), and a
//! word of another tag reads as "not yet". The ticket counter (`gpu_status[0]`) counts on
//! across launches; a block's tile is its ticket less the launch's first (`gpu_first`).
//!
//! [`ScanVariant::Lanes`] scans many independent lanes (a scan along one axis of an n-d
//! array), one thread per lane, down the axis.

use std::fmt::Write as _;

use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::BLOCK;
use crate::gpuarray::scan::kernel::{packs_status, per_thread_of, tile_of, ScanKernel, ScanVariant};
use crate::gpuarray::scan::status::HEADER_WORDS;

/// The shared-memory slot of a tile's element `j`: one padding slot per 32 elements, so that
/// the threads of a warp reading their consecutive runs hit different banks.
const PAD: &str = "#define GPU_PAD(j) ((j) + ((j) >> 5))\n";

/// `__shfl_{dir}_sync` of any trivially copyable type as `gpu_shfl_{dir}`, four bytes at a time
/// (the builtin takes only some types; the scans run on every element type, `__half` and
/// complex ones included); `dir` is `up` or `down`.
fn shfl_c(dir: &str) -> String {
    format!(
        "template <typename T> __device__ __forceinline__ T gpu_shfl_{dir}(T v, unsigned int d) {{\n\
constexpr int W = (sizeof(T) + 3) / 4;\n\
unsigned int w[W];\n\
#pragma unroll\n\
for (int k = 0; k < W; ++k) w[k] = 0u;\n\
#pragma unroll\n\
for (int b = 0; b < (int)sizeof(T); ++b) ((unsigned char *)w)[b] = ((const unsigned char *)&v)[b];\n\
#pragma unroll\n\
for (int k = 0; k < W; ++k) w[k] = __shfl_{dir}_sync(0xffffffffu, w[k], d);\n\
T r;\n\
#pragma unroll\n\
for (int b = 0; b < (int)sizeof(T); ++b) ((unsigned char *)&r)[b] = ((const unsigned char *)w)[b];\n\
return r; }}\n"
    )
}

/// The C of `gpu_publish` (a tile's value and its flag: 1 its own total, 2 its inclusive
/// prefix, with the launch's tag) and `gpu_wait` (spins until a tile has published with this
/// launch's tag, returns its flag and value). The tiles' status starts after the header
/// (8-byte aligned): packed 64-bit words, or 32-bit flag words with the values in `gpu_agg`
/// (flag 1) and `gpu_inc` (flag 2), written before the flag with a fence between.
fn status_c(t: &str, size: usize, packed: bool) -> String {
    let header = HEADER_WORDS;
    let mut c = format!(
        "__device__ __forceinline__ unsigned int *gpu_tiles(unsigned int *st) {{ return st + {header}; }}\n"
    );
    // The separate arrays are written and read in the widest words that divide the element.
    let w = if size.is_multiple_of(8) {
        "unsigned long long"
    } else {
        "unsigned int"
    };
    if packed {
        c.push_str(&format!(
            "__device__ __forceinline__ void gpu_publish(unsigned int *st, {t} *, {t} *, long long i, unsigned int flag, {t} v, unsigned int tag) {{\n\
             unsigned int bits = 0u; memcpy(&bits, &v, sizeof({t}));\n\
             // One aligned 64-bit store: a reader sees the flag and the value together or neither.\n\
             ((volatile unsigned long long *)gpu_tiles(st))[i] = ((unsigned long long)((tag << 2) | flag) << 32) | bits; }}\n\
             __device__ __forceinline__ unsigned int gpu_wait(unsigned int *st, {t} *, {t} *, long long i, {t} *v, unsigned int tag) {{\n\
             unsigned long long w;\n\
             do {{ w = ((volatile unsigned long long *)gpu_tiles(st))[i]; }} while ((unsigned int)(w >> 34) != tag);\n\
             unsigned int bits = (unsigned int)w; memcpy(v, &bits, sizeof({t}));\n\
             return (unsigned int)(w >> 32) & 3u; }}\n"
        ));
    } else {
        c.push_str(&format!(
            "__device__ __forceinline__ void gpu_publish(unsigned int *st, {t} *agg, {t} *inc, long long i, unsigned int flag, {t} v, unsigned int tag) {{\n\
             // Word by word: a volatile store of a class type (complex) has no operator.\n\
             {w} words[sizeof({t}) / sizeof({w})]; memcpy(words, &v, sizeof({t}));\n\
             volatile {w} *d = (volatile {w} *)((flag == 2u ? inc : agg) + i);\n\
             #pragma unroll\nfor (int k = 0; k < (int)(sizeof({t}) / sizeof({w})); ++k) d[k] = words[k];\n\
             __threadfence();\n\
             ((volatile unsigned int *)gpu_tiles(st))[i] = (tag << 2) | flag; }}\n\
             __device__ __forceinline__ unsigned int gpu_wait(unsigned int *st, {t} *agg, {t} *inc, long long i, {t} *v, unsigned int tag) {{\n\
             unsigned int f;\n\
             do {{ f = ((volatile unsigned int *)gpu_tiles(st))[i]; }} while ((f >> 2) != tag);\n\
             __threadfence();\n\
             f &= 3u;\n\
             const volatile {w} *p = (const volatile {w} *)((f == 2u ? inc : agg) + i);\n\
             {w} words[sizeof({t}) / sizeof({w})];\n\
             #pragma unroll\nfor (int k = 0; k < (int)(sizeof({t}) / sizeof({w})); ++k) words[k] = p[k];\n\
             memcpy(v, words, sizeof({t}));\n\
             return f; }}\n"
        ));
    }
    c
}

/// Warps in a block of a scan.
const WARPS: u32 = BLOCK / 32;

impl<T: Element> ScanKernel<T> {
    /// The CUDA C source of one variant, as it is compiled (with `no_extern_c`).
    pub fn source(&self, v: ScanVariant) -> String {
        let t = T::c_name();
        let (op, neutral, name) = (&self.op, &self.neutral, Self::c_name(v));
        // The element's headers (`__half`, `__nv_bfloat16`, `gpu_runtime::complex`) first.
        let mut s = cast::headers_for([T::DTYPE]);
        let _ = writeln!(
            s,
            "__device__ __forceinline__ {t} gpu_op({t} a, {t} b) {{ return ({op}); }}"
        );
        match v {
            ScanVariant::LookBack => {
                let (tile, pt) = (tile_of::<T>(), per_thread_of::<T>());
                s.push_str(PAD);
                s.push_str(&shfl_c("up"));
                s.push_str(&shfl_c("down"));
                s.push_str(&status_c(t, std::mem::size_of::<T>(), packs_status::<T>()));
                // Packed status words carry the values: no value arrays then.
                let (values, no_values) = if packs_status::<T>() {
                    (String::new(), format!("{t} *gpu_agg = 0, *gpu_inc = 0;\n"))
                } else {
                    (format!(", {t} *gpu_agg, {t} *gpu_inc"), String::new())
                };
                let _ = write!(
                    s,
                    "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}(long long n, const {t} *__restrict__ x, long long x_o, long long x_s, \
                     {t} *__restrict__ out, long long out_o, long long out_s, unsigned int *gpu_status{values}, unsigned int gpu_first, unsigned int gpu_tag, int exclusive, int gpu_vec) {{\n\
                     {no_values}\
                     __shared__ {t} tile[{tile} + {tile} / 32];\n__shared__ {t} wsum[{WARPS}];\n\
                     __shared__ long long s_tile;\n__shared__ {t} s_prefix;\n\
                     const {t} neutral = ({neutral});\n\
                     const int tid = threadIdx.x;\n\
                     // Elements per 16-byte vector (only used when `gpu_vec`: the host checked that\n\
                     // 16 bytes hold a whole number of them and that both runs are contiguous and aligned).\n\
                     constexpr int V = sizeof({t}) <= 16 ? 16 / (int)sizeof({t}) : 1;\n\
                     constexpr int VPT = {tile} / V / {BLOCK};\n\
                     // The tile's logical index, in the order blocks start: every earlier tile's block is running.\n\
                     // Tickets count on across launches, from `gpu_first` for this one's.\n\
                     if (tid == 0) s_tile = (long long)(atomicAdd(gpu_status, 1u) - gpu_first);\n\
                     __syncthreads();\n\
                     const long long me = s_tile;\n\
                     // Never past the status buffer, even for a launch replayed from a graph another\n\
                     // library captured while the host counted (see `scan_status`): one tile a block.\n\
                     if (me >= (long long)gridDim.x) return;\n\
                     const unsigned int tag = gpu_tag;\n\
                     const long long base = me * {tile};\n\
                     const bool vec = gpu_vec && base + {tile} <= n;\n\
                     if (vec) {{\n\
                       // Block-striped 16-byte loads (a warp reads 512 adjacent bytes per load, all\n\
                       // of a thread's loads in flight at once), put in blocked order in shared memory.\n\
                       // Read and written once, so streamed (`__ldcs`/`__stcs`, evict first): 0.826x ->\n\
                       // 0.839x of a copy of the same bytes (H100, 2^26 f32).\n\
                       const uint4 *xv = (const uint4 *)(x + x_o + base);\n\
                       uint4 q[VPT];\n\
                       #pragma unroll\n\
                       for (int k = 0; k < VPT; ++k) q[k] = __ldcs(&xv[k * {BLOCK} + tid]);\n\
                       #pragma unroll\n\
                       for (int k = 0; k < VPT; ++k) {{ {t} e[V]; memcpy(e, &q[k], V * sizeof({t})); const int j0 = (k * {BLOCK} + tid) * V;\n\
                         #pragma unroll\n\
                         for (int u = 0; u < V; ++u) tile[GPU_PAD(j0 + u)] = e[u]; }}\n\
                     }} else {{\n\
                       #pragma unroll\n\
                       for (int k = 0; k < {pt}; ++k) {{ int j = k * {BLOCK} + tid; long long g = base + j; tile[GPU_PAD(j)] = g < n ? x[x_o + g * x_s] : neutral; }}\n\
                     }}\n\
                     __syncthreads();\n\
                     {t} acc = tile[GPU_PAD(tid * {pt})];\n\
                     #pragma unroll\n\
                     for (int k = 1; k < {pt}; ++k) acc = gpu_op(acc, tile[GPU_PAD(tid * {pt} + k)]);\n\
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
                     if (tid == 0) {{\n\
                       if (me == 0) {{ gpu_publish(gpu_status, gpu_agg, gpu_inc, 0, 2u, total, tag); s_prefix = neutral; }}\n\
                       else gpu_publish(gpu_status, gpu_agg, gpu_inc, me, 1u, total, tag);\n\
                     }}\n\
                     if (me > 0 && tid < 32) {{\n\
                       {t} running = neutral;\n\
                       long long end = me - 1;\n\
                       for (;;) {{\n\
                         long long p = end - tid;\n\
                         unsigned int f = 2u;\n\
                         {t} v = neutral;\n\
                         if (p >= 0) f = gpu_wait(gpu_status, gpu_agg, gpu_inc, p, &v, tag);\n\
                         unsigned int incl = __ballot_sync(0xffffffffu, f == 2u);\n\
                         // Lane k holds tile end - k. The nearest inclusive prefix is the lowest\n\
                         // lane with flag 2: it and the lanes below are combined, the earliest tile\n\
                         // (the highest lane) first, by a shuffle suffix scan (five steps, not a\n\
                         // serial loop of 32 on the critical path); later lanes count as neutral.\n\
                         const int stop = incl ? __ffs(incl) - 1 : 31;\n\
                         if (tid > stop) v = neutral;\n\
                         #pragma unroll\n\
                         for (int off = 1; off < 32; off <<= 1) {{ {t} u = gpu_shfl_down(v, off); if (tid + off < 32) v = gpu_op(u, v); }}\n\
                         if (tid == 0) running = gpu_op(v, running);\n\
                         if (incl) break;\n\
                         end -= 32;\n\
                       }}\n\
                       if (tid == 0) {{ s_prefix = running; gpu_publish(gpu_status, gpu_agg, gpu_inc, me, 2u, gpu_op(running, total), tag); }}\n\
                     }}\n\
                     __syncthreads();\n\
                     {t} run = tid > 0 ? gpu_op(s_prefix, before) : s_prefix;\n\
                     #pragma unroll\n\
                     for (int k = 0; k < {pt}; ++k) {{ int j = GPU_PAD(tid * {pt} + k); {t} v = tile[j]; {t} next = gpu_op(run, v); tile[j] = exclusive ? run : next; run = next; }}\n\
                     __syncthreads();\n\
                     if (vec) {{\n\
                       uint4 *ov = (uint4 *)(out + out_o + base);\n\
                       #pragma unroll\n\
                       for (int k = 0; k < VPT; ++k) {{ {t} e[V]; const int j0 = (k * {BLOCK} + tid) * V;\n\
                         #pragma unroll\n\
                         for (int u = 0; u < V; ++u) e[u] = tile[GPU_PAD(j0 + u)];\n\
                         uint4 q = make_uint4(0u, 0u, 0u, 0u); memcpy(&q, e, V * sizeof({t})); __stcs(&ov[k * {BLOCK} + tid], q); }}\n\
                     }} else {{\n\
                       #pragma unroll\n\
                       for (int k = 0; k < {pt}; ++k) {{ int j = k * {BLOCK} + tid; long long g = base + j; if (g < n) out[out_o + g * out_s] = tile[GPU_PAD(j)]; }}\n\
                     }}\n}}\n",
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
