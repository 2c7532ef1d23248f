//! Stream compaction: the elements or positions where a predicate holds, in C order. NumPy's
//! `nonzero`, `flatnonzero`, `argwhere`, `count_nonzero`, one-argument `where`, and boolean-mask
//! indexing (`a[mask]`, `a[mask] = values`).
//!
//! Three launches: each block counts the true elements of its tile (`TILE` elements, read as
//! `ITEMS` coalesced rounds of the block), one block scans the tiles' counts into their
//! exclusive offsets (and the total after them), and each block writes its tile's true
//! elements at its offset plus their rank in the tile, so the order is C order. The total is
//! read back before the result is allocated, as NumPy's size must be known: that read waits
//! for the first two launches, as CuPy's does.
//!
//! The index forms (`nonzero`, `flatnonzero`, `argwhere`) count with [`Part::Flags`], which
//! also writes the truth of every element as a bitmask (1/32 of a 4-byte input), and their
//! last launch reads that bitmask instead of the input: it ranks a tile's elements in shared
//! memory and writes their indices in adjacent runs. `a[mask] = values` ranks the mask's
//! elements round by round in its last launch ([`Part::Scatter`]).
//!
//! `a[mask]` (`masked`) moves the most bytes and has kernels of its own ([`Part::SelectCount`],
//! [`Part::Select`]): tiles of 16 KiB of values, the mask counted 16 bytes a load, and the
//! values and mask read 16 bytes a load by the second pass, whose tile's selected elements go
//! through shared memory so that the result is written in adjacent runs (as CUB's
//! `DeviceSelect::Flagged`): the other compactions' pass waits on each round's ranks before it
//! loads that round's values, one load in flight a thread, which left `a[mask]` at a third of
//! the copy's speed.
//!
//! Inputs of any layout: an array not contiguous in C order is copied first. The scatter writes
//! no element at or past the total the count found (the grid is one block per tile, so the
//! total is `offsets[gridDim.x]`): the result's size bounds every write, whatever the data.

use ndarray::{Dimension, Ix1, Ix2, IxDyn};

use crate::driver::memory::view::DeviceRead;

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::stream::Stream;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::array::readback::read_back;
use crate::gpuarray::elements::boolean::Bool;
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;

/// Elements each thread reads per tile: 16 rounds of a 256-thread block, 4096 elements a tile,
/// so the tiles' counts (read and scanned by one block) are 1/4096 of the input.
const ITEMS: u64 = 16;
/// Elements per block of the count and scatter launches.
const TILE: u64 = BLOCK as u64 * ITEMS;
/// Threads of the one block that scans the tiles' counts.
const SCAN_BLOCK: u32 = 1024;
/// Elements of a tile one warp of [`Part::Flags`] reads: 16 rounds of 32.
const WARP_SPAN: u64 = 32 * ITEMS;

// The kernels keep one flag bit per round in an `unsigned int`, rank whole warps, and scan
// with a doubling loop over the block.
const _: () = assert!(ITEMS <= 32 && TILE.is_multiple_of(32) && SCAN_BLOCK.is_power_of_two());
// The bitmask kernels: a lane keeps one word a round (16 rounds, 16 words a warp), and a tile
// is 16 bits a thread; the scan's warp totals fit one warp.
const _: () = assert!(ITEMS == 16 && TILE == WARP_SPAN * (BLOCK as u64 / 32) && SCAN_BLOCK <= 1024);

/// The kernels of a compaction, each keyed with the predicate's element type `P` (what is
/// tested for truth), the element type `T` it moves, and the number of axes it unravels into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Part {
    /// `counts[tile]`: the true elements of each tile.
    Count,
    /// `counts[tile]` as [`Part::Count`], and the truth of every element as a bitmask in C
    /// order (`words[i / 32]` bit `i % 32`), which [`Part::Indices`] and [`Part::Rows`] read
    /// instead of the input.
    Flags,
    /// `counts` to exclusive offsets in place, the total at `counts[tiles]`.
    Offsets,
    /// One `long long` array per axis: the index along that axis of each true element
    /// (`nonzero`), `ndim` of them, from [`Part::Flags`]'s bitmask.
    Indices(usize),
    /// One `(count, ndim)` C-order array of the same indices (`argwhere`), from the bitmask.
    Rows,
    /// `a[i] = v[rank]` (`a[mask] = v`).
    Scatter,
    /// `a[i] = value` where the mask holds (`a[mask] = scalar`): one pass, no ranks.
    Fill,
    /// `counts[tile]` for [`Part::Select`]'s tiles (see [`select_tile`]): the true bytes of
    /// the mask, 16 a load.
    SelectCount,
    /// `out[rank] = a[i]` (`a[mask]`) in one pass over the mask and the values, 16 bytes a
    /// load, through shared memory (see [`source`]).
    Select,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Count => "gpu_compact_count",
            Part::Flags => "gpu_compact_flags",
            Part::Offsets => "gpu_compact_offsets",
            Part::Indices(_) => "gpu_compact_indices",
            Part::Rows => "gpu_compact_rows",
            Part::Scatter => "gpu_compact_scatter",
            Part::Fill => "gpu_compact_fill",
            Part::SelectCount => "gpu_compact_select_count",
            Part::Select => "gpu_compact_select",
        }
    }
}

/// The C source of `part`, whose predicate reads `src[i]` of type `p` and moves elements of
/// type `t`.
fn source(part: Part, p: DType, t: DType) -> String {
    let pc = p.c_name();
    let tc = t.c_name();
    // A `Bool` may hold any byte (the device may write one): read as its byte, so that every
    // kernel of a compaction agrees on which elements are true.
    let truth = if p == DType::Bool {
        "(((const unsigned char *)src)[i] != 0)".to_owned()
    } else {
        cast::convert_c(p, DType::Bool, "src[i]")
    };
    let name = part.name();
    let headers = cast::headers_for([p, t]);
    // Reads the tile's flags, one bit per round, before ranking, so that a thread's 16 loads
    // are in flight together.
    let flags = format!(
        "    const unsigned long long base = (unsigned long long)blockIdx.x * {TILE}ull;\n\
         unsigned int bits = 0;\n\
         #pragma unroll\n\
         for (int r = 0; r < {ITEMS}; ++r) {{\n\
             unsigned long long i = base + (unsigned long long)r * {BLOCK}u + threadIdx.x;\n\
             if (i < n && {truth}) bits |= 1u << r;\n\
         }}\n"
    );
    let rank_loop = |params: &str, action: &str| {
        format!(
            "extern \"C\" __global__ void {name}(unsigned long long n, const {pc} *__restrict__ src, \
             const long long *__restrict__ offsets{params}) {{\n{flags}\
             __shared__ int warps[{w}];\n\
             const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;\n\
             long long run = offsets[blockIdx.x];\n\
             const long long cap = offsets[gridDim.x];\n\
             for (int r = 0; r < {ITEMS}; ++r) {{\n\
                 const bool f = (bits >> r) & 1u;\n\
                 const unsigned int b = __ballot_sync(0xffffffffu, f);\n\
                 if (lane == 0) warps[warp] = __popc(b);\n\
                 __syncthreads();\n\
                 int before = 0, total = 0;\n\
                 #pragma unroll\n\
                 for (int k = 0; k < {w}; ++k) {{ int v = warps[k]; total += v; if (k < (int)warp) before += v; }}\n\
                 if (f && run + before < cap) {{\n\
                     const unsigned long long i = base + (unsigned long long)r * {BLOCK}u + threadIdx.x;\n\
                     const long long pos = run + before + __popc(b & ((1u << lane) - 1u));\n\
                     if (pos < cap) {{ {action} }}\n\
                 }}\n\
                 run += total;\n\
                 __syncthreads();\n\
             }}\n}}\n",
            w = BLOCK / 32
        )
    };
    // The index of flat element `i` along each axis, last axis first.
    // `shape[0]` is never read (the first axis takes what is left), so a 1-d result needs no
    // shape in device memory.
    let unravel = |store: &dyn Fn(&str) -> String| {
        format!(
            "unsigned long long rem = i;\n\
             for (int d = ndim - 1; d >= 0; --d) {{\n\
                 const unsigned long long len = d ? (unsigned long long)shape[d] : 1ull;\n\
                 const unsigned long long q = d ? rem / len : 0ull;\n\
                 {}\n\
                 rem = q;\n\
             }}",
            store("(long long)(d ? rem - q * len : rem)")
        )
    };
    // A tile's indices from the bitmask: thread `t` takes 16 bits (elements `base + 16 t ..`),
    // the block scans their counts (warp shuffles, then the warps' totals), each thread
    // writes its elements' flat indices to shared memory at their ranks, and the block then
    // runs `action` (which stores element `i` at result position `pos`) for the tile's
    // indices in order, so that a warp's stores are adjacent. (Ranking the input's elements
    // round by round, each round two block barriers, took 365 us for 2^26 `f32` on an H200;
    // this, 85 us.)
    let from_words = |params: &str, action: &str| {
        format!(
            "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}(unsigned long long n, const unsigned int *__restrict__ words, \
             const long long *__restrict__ offsets{params}) {{\n\
             __shared__ unsigned long long stage[{TILE}];\n\
             __shared__ int warps[{w}];\n\
             const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;\n\
             const unsigned long long base = (unsigned long long)blockIdx.x * {TILE}ull;\n\
             const unsigned long long first = base + threadIdx.x * 16ull;\n\
             unsigned int bits = first < n ? words[first >> 5] : 0u;\n\
             bits = (threadIdx.x & 1u) ? (bits >> 16) : (bits & 0xffffu);\n\
             const int c = __popc(bits);\n\
             int x = c;\n\
             #pragma unroll\n\
             for (int o = 1; o < 32; o <<= 1) {{ const int y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= (unsigned int)o) x += y; }}\n\
             if (lane == 31u) warps[warp] = x;\n\
             __syncthreads();\n\
             int before = 0, total = 0;\n\
             #pragma unroll\n\
             for (int k = 0; k < {w}; ++k) {{ const int v = warps[k]; total += v; if (k < (int)warp) before += v; }}\n\
             int at = before + x - c;\n\
             while (bits) {{ const int b = __ffs(bits) - 1; bits &= bits - 1u; stage[at++] = first + (unsigned long long)b; }}\n\
             __syncthreads();\n\
             const long long off = offsets[blockIdx.x], cap = offsets[gridDim.x];\n\
             for (int j = threadIdx.x; j < total; j += {BLOCK}) {{\n\
                 const long long pos = off + j;\n\
                 if (pos >= cap) break;\n\
                 const unsigned long long i = stage[j];\n\
                 {action}\n\
             }}\n}}\n",
            w = BLOCK / 32
        )
    };
    let body = match part {
        Part::Count => format!(
            "extern \"C\" __global__ void {name}(unsigned long long n, const {pc} *__restrict__ src, \
             long long *__restrict__ counts) {{\n{flags}\
             int c = __popc(bits);\n\
             {store}}}\n",
            store = block_count_store()
        ),
        Part::Offsets => format!(
            // Rounds of 16 x SCAN_BLOCK counts: warp `w` scans its 512 (lane `l` holding counts
            // `32 k + l`, `k < 16`, all loaded at once, adjacent across the warp) with shuffles
            // and a running total, then the warps' totals (one barrier) give each warp its
            // start. (A run of adjacent counts a thread made each load of a warp touch 32 lines
            // of one multiprocessor's cache: 36 us for 16,384 counts on an H200; one block-wide
            // scan a chunk of 1024, three barriers each, 13 us.)
            "extern \"C\" __global__ void __launch_bounds__({SCAN_BLOCK}) {name}(unsigned long long m, long long *counts, long long *total) {{\n\
             __shared__ long long ws[{sw}];\n\
             const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;\n\
             long long carry = 0;\n\
             for (unsigned long long c0 = 0; c0 < m; c0 += 512ull * {sw}ull) {{\n\
                 const unsigned long long wb = c0 + warp * 512ull;\n\
                 long long v[16];\n\
                 #pragma unroll\n\
                 for (int k = 0; k < 16; ++k) {{ const unsigned long long i = wb + k * 32u + lane; v[k] = i < m ? counts[i] : 0; }}\n\
                 long long run = 0;\n\
                 #pragma unroll\n\
                 for (int k = 0; k < 16; ++k) {{\n\
                     long long x = v[k];\n\
                     #pragma unroll\n\
                     for (int o = 1; o < 32; o <<= 1) {{ const long long y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= (unsigned int)o) x += y; }}\n\
                     v[k] = run + x - v[k];\n\
                     run += __shfl_sync(0xffffffffu, x, 31);\n\
                 }}\n\
                 if (lane == 0u) ws[warp] = run;\n\
                 __syncthreads();\n\
                 long long before = 0, all = 0;\n\
                 #pragma unroll\n\
                 for (int w = 0; w < {sw}; ++w) {{ const long long t = ws[w]; all += t; if (w < (int)warp) before += t; }}\n\
                 #pragma unroll\n\
                 for (int k = 0; k < 16; ++k) {{ const unsigned long long i = wb + k * 32u + lane; if (i < m) counts[i] = carry + before + v[k]; }}\n\
                 carry += all;\n\
                 __syncthreads();\n\
             }}\n\
             if (threadIdx.x == 0) {{ counts[m] = carry; *total = carry; }}\n\
             }}\n",
            sw = SCAN_BLOCK / 32
        ),
        Part::Indices(k) => {
            let outs: String = (0..k).map(|d| format!(", long long *__restrict__ o{d}")).collect();
            let params = format!("{outs}, const long long *__restrict__ shape, int ndim");
            // One pointer per axis: chosen by a switch the compiler unrolls away.
            let cases: String = (0..k).map(|d| format!("case {d}: o{d}[pos] = v; break; ")).collect();
            let action = unravel(&|v| format!("{{ const long long v = {v}; switch (d) {{ {cases}}} }}"));
            from_words(&params, &action)
        }
        Part::Rows => {
            let params = ", long long *__restrict__ out, const long long *__restrict__ shape, int ndim";
            let action = unravel(&|v| format!("out[pos * ndim + d] = {v};"));
            from_words(params, &action)
        }
        Part::Flags => {
            // Warp `w` of the block reads elements `base + 512 w + 32 r + lane`, `r < 16`, all
            // loads before any ballot; round `r`'s ballot is the bitmask's word of those 32
            // elements (bit `lane`), kept by lane `r` and stored by lanes 0..15 together.
            format!(
                "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}(unsigned long long n, const {pc} *__restrict__ src, \
                 unsigned int *__restrict__ words, long long *__restrict__ counts) {{\n\
                 const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;\n\
                 const unsigned long long wbase = (unsigned long long)blockIdx.x * {TILE}ull + warp * {WARP_SPAN}ull;\n\
                 bool f[{ITEMS}];\n\
                 #pragma unroll\n\
                 for (int r = 0; r < {ITEMS}; ++r) {{ const unsigned long long i = wbase + r * 32u + lane; f[r] = i < n && {truth}; }}\n\
                 unsigned int mine = 0u;\n\
                 int c = 0;\n\
                 #pragma unroll\n\
                 for (int r = 0; r < {ITEMS}; ++r) {{ const unsigned int b = __ballot_sync(0xffffffffu, f[r]); if (lane == (unsigned int)r) mine = b; c += __popc(b); }}\n\
                 if (lane < {ITEMS}u && wbase + lane * 32ull < n) words[(wbase >> 5) + lane] = mine;\n\
                 __shared__ int warps[{w}];\n\
                 if (lane == 0u) warps[warp] = c;\n\
                 __syncthreads();\n\
                 if (threadIdx.x == 0) {{\n\
                     long long s = 0;\n\
                     for (int k = 0; k < {w}; ++k) s += warps[k];\n\
                     counts[blockIdx.x] = s;\n\
                 }}\n}}\n",
                w = BLOCK / 32
            )
        }
        Part::Scatter => rank_loop(
            &format!(", {tc} *__restrict__ a, const {tc} *__restrict__ v, unsigned long long vlen"),
            "a[i] = v[vlen == 1ull ? 0ull : (unsigned long long)pos];",
        ),
        Part::Fill => format!(
            "extern \"C\" __global__ void {name}(unsigned long long n, const {pc} *__restrict__ src, \
             {tc} *__restrict__ a, {tc} value) {{\n\
             for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n\
                  i += (unsigned long long)gridDim.x * blockDim.x) {{\n\
                 if ({truth}) a[i] = value;\n\
             }}\n}}\n"
        ),
        Part::SelectCount => {
            let tile = select_tile(t);
            format!(
                "extern \"C\" __global__ void {name}(unsigned long long n, const {pc} *__restrict__ src, \
                 long long *__restrict__ counts) {{\n\
                 const unsigned char *m = (const unsigned char *)src;\n\
                 const unsigned long long base = (unsigned long long)blockIdx.x * {tile}ull;\n\
                 int c = 0;\n\
                 if (((unsigned long long)m & 15ull) == 0ull && base + {tile}ull <= n) {{\n\
                     // The tile's mask bytes 16 at a time; a byte's truth is it being nonzero.\n\
                     for (unsigned int j = threadIdx.x; j < {tile}u / 16u; j += {BLOCK}u) {{\n\
                         const uint4 w = __ldcs((const uint4 *)(m + base) + j);\n\
                         c += (__popc(__vcmpne4(w.x, 0u)) + __popc(__vcmpne4(w.y, 0u)) + __popc(__vcmpne4(w.z, 0u)) + __popc(__vcmpne4(w.w, 0u))) >> 3;\n\
                     }}\n\
                 }} else {{\n\
                     for (unsigned long long i = base + threadIdx.x; i < base + {tile}ull && i < n; i += {BLOCK}u) c += m[i] != 0;\n\
                 }}\n\
                 {store}}}\n",
                store = block_count_store()
            )
        }
        Part::Select => {
            let (g, tile) = (select_group(t), select_tile(t));
            // Thread `t` of round `r` holds group `r * BLOCK + t` of the tile (`g` elements, 16
            // bytes of values): each load of a warp covers 512 adjacent bytes, and the order
            // of (round, warp, lane, element) is the elements' order. Ranks: each thread's
            // true elements of a round, scanned across its warp by shuffles; the (round,
            // warp) totals, 32 of them, scanned by one warp. The tile's true elements are
            // then written to shared memory at their ranks, and from there to `out` by the
            // whole block in order, so that a warp's stores cover adjacent memory whatever the
            // mask (CUB's DeviceSelect does the same): every value and mask byte is read once
            // and every result written once. `cap` (the total) bounds every write.
            format!(
                "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}(unsigned long long n, const {pc} *__restrict__ src, \
                 const long long *__restrict__ offsets, const {tc} *__restrict__ a, {tc} *__restrict__ out) {{\n\
                 __shared__ {tc} stage[{tile}];\n\
                 __shared__ int part[{ROUNDS} * {w} + 1];\n\
                 const unsigned char *m = (const unsigned char *)src;\n\
                 const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;\n\
                 const unsigned long long base = (unsigned long long)blockIdx.x * {tile}ull;\n\
                 const bool vec = (((unsigned long long)m | (unsigned long long)a) & 15ull) == 0ull;\n\
                 unsigned int f[{ROUNDS}];\n\
                 {tc} v[{ROUNDS}][{g}];\n\
                 #pragma unroll\n\
                 for (int r = 0; r < {ROUNDS}; ++r) {{\n\
                     const unsigned long long e0 = base + (unsigned long long)(r * {BLOCK} + threadIdx.x) * {g}ull;\n\
                     f[r] = 0u;\n\
                     if (vec && e0 + {g}ull <= n) {{\n\
                         unsigned char mb[{g}];\n\
                         {mask_load}\n\
                         #pragma unroll\n\
                         for (int k = 0; k < {g}; ++k) f[r] |= (unsigned int)(mb[k] != 0) << k;\n\
                         if (f[r]) {{ const uint4 w = __ldcs((const uint4 *)(a + e0)); memcpy(v[r], &w, 16); }}\n\
                     }} else {{\n\
                         #pragma unroll\n\
                         for (int k = 0; k < {g}; ++k) {{\n\
                             const unsigned long long i = e0 + k;\n\
                             if (i < n && m[i] != 0) {{ f[r] |= 1u << k; v[r][k] = a[i]; }}\n\
                         }}\n\
                     }}\n\
                 }}\n\
                 int incl[{ROUNDS}];\n\
                 #pragma unroll\n\
                 for (int r = 0; r < {ROUNDS}; ++r) {{\n\
                     int x = __popc(f[r]);\n\
                     #pragma unroll\n\
                     for (int o = 1; o < 32; o <<= 1) {{ const int y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= (unsigned int)o) x += y; }}\n\
                     incl[r] = x;\n\
                     if (lane == 31u) part[r * {w} + warp] = x;\n\
                 }}\n\
                 __syncthreads();\n\
                 if (warp == 0u) {{\n\
                     const int own = part[lane];\n\
                     int x = own;\n\
                     #pragma unroll\n\
                     for (int o = 1; o < 32; o <<= 1) {{ const int y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= (unsigned int)o) x += y; }}\n\
                     part[lane] = x - own;\n\
                     if (lane == 31u) part[{ROUNDS} * {w}] = x;\n\
                 }}\n\
                 __syncthreads();\n\
                 #pragma unroll\n\
                 for (int r = 0; r < {ROUNDS}; ++r) {{\n\
                     int pos = part[r * {w} + warp] + incl[r] - __popc(f[r]);\n\
                     #pragma unroll\n\
                     for (int k = 0; k < {g}; ++k) if ((f[r] >> k) & 1u) stage[pos++] = v[r][k];\n\
                 }}\n\
                 __syncthreads();\n\
                 const long long total = part[{ROUNDS} * {w}], off = offsets[blockIdx.x], cap = offsets[gridDim.x];\n\
                 for (long long j = threadIdx.x; j < total; j += {BLOCK}) if (off + j < cap) out[off + j] = stage[j];\n\
                 }}\n",
                w = BLOCK / 32,
                mask_load = match g {
                    1 => "mb[0] = m[e0];",
                    2 => "{ const unsigned short q = *(const unsigned short *)(m + e0); memcpy(mb, &q, 2); }",
                    4 => "{ const unsigned int q = *(const unsigned int *)(m + e0); memcpy(mb, &q, 4); }",
                    8 => "{ const uint2 q = *(const uint2 *)(m + e0); memcpy(mb, &q, 8); }",
                    _ => "{ const uint4 q = __ldcs((const uint4 *)(m + e0)); memcpy(mb, &q, 16); }",
                },
            )
        }
    };
    format!("{headers}{body}")
}

/// The end of the count kernels: the block's sum of every thread's `c`, stored as
/// `counts[blockIdx.x]`.
fn block_count_store() -> String {
    format!(
        "for (int o = 16; o; o >>= 1) c += __shfl_down_sync(0xffffffffu, c, o);\n\
         __shared__ int warps[{w}];\n\
         if ((threadIdx.x & 31u) == 0) warps[threadIdx.x >> 5] = c;\n\
         __syncthreads();\n\
         if (threadIdx.x == 0) {{\n\
             long long s = 0;\n\
             for (int k = 0; k < {w}; ++k) s += warps[k];\n\
             counts[blockIdx.x] = s;\n\
         }}\n",
        w = BLOCK / 32
    )
}

/// Rounds of [`Part::Select`]: groups of 16 bytes of values a thread reads per tile, so that
/// a tile is 16 KiB of values (staged in shared memory) and the (round, warp) totals are 32,
/// one warp's scan.
const ROUNDS: u64 = 4;

const _: () = assert!(ROUNDS * (BLOCK as u64 / 32) == 32);

/// Elements of `t` in 16 bytes (one for a 16-byte complex): a group of [`Part::Select`].
fn select_group(t: DType) -> u64 {
    (16 / t.size() as u64).max(1)
}

/// Elements of `t` in a tile of [`Part::Select`] and [`Part::SelectCount`]: 16 KiB of them.
fn select_tile(t: DType) -> u64 {
    u64::from(BLOCK) * ROUNDS * select_group(t)
}

/// The kernel of each (part, predicate type, element type).
static KERNELS: SourceKernels<(Part, DType, DType)> = SourceKernels::new();

fn prepared(ctx: &Context, part: Part, p: DType, t: DType) -> Result<crate::launch::PreparedFunction> {
    KERNELS.prepared(ctx, (part, p, t), part.name(), || source(part, p, t))
}

/// The exclusive offset of each tile of `src` (C-contiguous, `n > 0` elements) in the
/// compacted result, and the total of true elements.
fn tile_offsets<P: Element, B: DeviceRead<P>>(
    ctx: &Context,
    src: &B,
    n: u64,
    stream: Option<&Stream>,
) -> Result<(DeviceBuffer<i64>, usize)> {
    offsets_of(
        ctx,
        src,
        n,
        (Part::Count, P::DTYPE),
        n.div_ceil(TILE),
        None,
        stream,
    )
}

/// [`tile_offsets`] for `tiles` tiles counted by the kernel `part` (`Part::Count` of the
/// predicate's type, `Part::Flags`, which also fills `words` with the bitmask, or
/// `Part::SelectCount` of the moved type, whose tiles are its own). Waits for the total.
fn offsets_of<P: Element, B: DeviceRead<P>>(
    ctx: &Context,
    src: &B,
    n: u64,
    (part, t): (Part, DType),
    tiles: u64,
    words: Option<&mut DeviceBuffer<u32>>,
    stream: Option<&Stream>,
) -> Result<(DeviceBuffer<i64>, usize)> {
    let grid = u32::try_from(tiles).map_err(|_| ArrayShapeError::ScanTooLong { elements: n as usize })?;
    // Every count is written before it is read (one a tile by the count, the total by the
    // scan), so the buffer is not cleared; it may be a block an array gave back.
    let mut counts = DeviceBuffer::<i64>::uninit_reusing(ctx, tiles as usize + 1)?;
    let count = prepared(ctx, part, P::DTYPE, t)?;
    {
        let mut args = vec![Arg::U64(n), Arg::input::<P, _>(src)];
        if let Some(w) = words {
            args.push(Arg::output(w));
        }
        args.push(Arg::output(&mut counts));
        registry::launch(&count, grid, BLOCK, stream, &args)?;
    }
    let offsets = prepared(ctx, Part::Offsets, DType::I64, DType::I64)?;
    // The total also goes to mapped host memory (see `readback`), which the host reads once the
    // stream is done: no copy after the scan.
    let total = read_back::<i64>(ctx, stream, |total| {
        registry::launch(
            &offsets,
            1,
            SCAN_BLOCK,
            stream,
            &[Arg::U64(tiles), Arg::output(&mut counts), Arg::output(total)],
        )
    })?;
    Ok((counts, total as usize))
}

/// The shape as the `long long` array the index kernels unravel with.
fn shape_buffer(ctx: &Context, shape: &[usize]) -> Result<DeviceBuffer<i64>> {
    let s: Vec<i64> = shape.iter().map(|&l| l as i64).collect();
    DeviceBuffer::from_host(ctx, &s[..])
}

/// One index array per axis (`nonzero`), or the rows of one array (`argwhere`): the one asked
/// for is filled, the other empty.
type Indices = (Vec<DeviceArray<i64, Ix1>>, DeviceArray<i64, Ix2>);

/// The true elements' indices along each axis of `shape` (`nonzero`), or as rows (`argwhere`).
fn indices<P: Element, S: Storage<Elem = P>, D: Dimension>(
    a: &DeviceArrayBase<S, D>,
    shape: &[usize],
    rows: bool,
    stream: Option<&Stream>,
) -> Result<Indices> {
    let ctx = a.context().clone();
    let n = a.len() as u64;
    let ndim = shape.len();
    let empty_rows = |count| DeviceArray::<i64, Ix2>::empty(&ctx, (count, ndim));
    let empty_columns = |count| {
        (0..ndim)
            .map(|_| DeviceArray::<i64, Ix1>::empty(&ctx, count))
            .collect::<Result<Vec<_>>>()
    };
    if n == 0 {
        let v = if rows { Vec::new() } else { empty_columns(0)? };
        return Ok((v, empty_rows(0)?));
    }
    let copy = OnStream::new(a, stream).c_order()?;
    let src = copy.view();
    // The bitmask of the true elements, every word written by the flags pass.
    let mut words = DeviceBuffer::<u32>::uninit_reusing(&ctx, n.div_ceil(32) as usize)?;
    let tiles = n.div_ceil(TILE);
    let (offsets, total) = offsets_of(
        &ctx,
        &src,
        n,
        (Part::Flags, DType::I64),
        tiles,
        Some(&mut words),
        stream,
    )?;
    let grid = tiles as u32;
    // The kernels never read `shape[0]` (see `unravel` in `source`): a 1-d result passes the
    // offsets in its place rather than copying a shape to the device.
    let shape_d = if ndim > 1 {
        Some(shape_buffer(&ctx, shape)?)
    } else {
        None
    };
    let shape_arg = || Arg::input::<i64, _>(shape_d.as_ref().unwrap_or(&offsets));
    if rows {
        let mut out = empty_rows(total)?;
        if total > 0 && ndim > 0 {
            let f = prepared(&ctx, Part::Rows, DType::Bool, DType::I64)?;
            let args = [
                Arg::U64(n),
                Arg::input::<u32, _>(&words),
                Arg::input::<i64, _>(&offsets),
                Arg::output(&mut out),
                shape_arg(),
                Arg::I32(ndim as i32),
            ];
            registry::launch(&f, grid, BLOCK, stream, &args)?;
        }
        return Ok((Vec::new(), out));
    }
    let mut outs: Vec<DeviceArray<i64, Ix1>> = empty_columns(total)?;
    if total > 0 {
        let f = prepared(&ctx, Part::Indices(ndim), DType::Bool, DType::I64)?;
        let mut args = vec![
            Arg::U64(n),
            Arg::input::<u32, _>(&words),
            Arg::input::<i64, _>(&offsets),
        ];
        args.extend(outs.iter_mut().map(Arg::output::<i64, _>));
        args.push(shape_arg());
        args.push(Arg::I32(ndim as i32));
        registry::launch(&f, grid, BLOCK, stream, &args)?;
    }
    Ok((outs, empty_rows(0)?))
}

/// For a masked `operation` on `a`: `a`'s context and number of elements, once `mask` (the
/// mask's shape) is found to be `a`'s ([`ArrayShapeError::MaskShape`] otherwise); `None` when
/// `a` is empty, which leaves nothing to mask.
fn masked_operand<S: Storage, D: Dimension>(
    operation: &'static str,
    a: &DeviceArrayBase<S, D>,
    mask: &[usize],
) -> Result<Option<(Context, u64)>> {
    if a.shape() != mask {
        return Err(ArrayShapeError::MaskShape {
            operation,
            shape: a.shape().to_vec(),
            mask: mask.to_vec(),
        }
        .into());
    }
    let n = a.len() as u64;
    Ok((n > 0).then(|| (a.context().clone(), n)))
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The indices of the nonzero elements, one `i64` array per axis, in C order (NumPy's
        /// `nonzero(a)`, and its one-argument `where(a)`): element `k` of the nonzero ones is at
        /// `[out[0][k], out[1][k], ...]`. NumPy 2 refuses a 0-d array
        /// ([`ArrayShapeError::ZeroDimensional`]): [`flatnonzero`](Self::flatnonzero) or a 1-d
        /// view instead. Waits for the count of nonzero elements, which sizes the result.
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::DeviceArray;
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr2(&[[0, 3], [4, 0]]))?;
        /// let ix = a.nonzero()?;
        /// assert_eq!((ix[0].to_vec()?, ix[1].to_vec()?), (vec![0, 1], vec![1, 0]));
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn nonzero(&self) -> Result<Vec<DeviceArray<i64, Ix1>>>;

        /// The flat C-order indices of the nonzero elements (NumPy's `flatnonzero(a)`), of an
        /// array of any number of axes, 0-d too.
        fn flatnonzero(&self) -> Result<DeviceArray<i64, Ix1>>;

        /// The indices of the nonzero elements as the rows of a `(count, ndim)` array (NumPy's
        /// `argwhere(a)`; for a 0-d array, `(count, 0)` as NumPy gives).
        fn argwhere(&self) -> Result<DeviceArray<i64, Ix2>>;

        /// The elements where `mask` is true, in C order, as a new 1-d array (NumPy's `a[mask]`
        /// for a boolean `mask` of this array's shape; another shape is
        /// [`ArrayShapeError::MaskShape`]). Waits for the count, which sizes the result.
        fn masked[SM: Storage<Elem = Bool>, DM: Dimension](&self, mask: &DeviceArrayBase<SM, DM>)
            -> Result<DeviceArray<S::Elem, Ix1>>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// The number of nonzero elements through the compaction's tile counts (`count_nonzero`
    /// itself is a plain reduction, in `reduce::logic`; this module cannot use that room).
    fn count_by_tiles(&self) -> Result<usize> {
        let a = self.target;
        if a.is_empty() {
            return Ok(0);
        }
        let src = self.c_order()?;
        Ok(tile_offsets::<S::Elem, _>(a.context(), &src.view(), a.len() as u64, self.stream)?.1)
    }

    /// [`nonzero`](DeviceArrayBase::nonzero) on this stream.
    pub fn nonzero(&self) -> Result<Vec<DeviceArray<i64, Ix1>>> {
        let a = self.target;
        if a.ndim() == 0 {
            return Err(ArrayShapeError::ZeroDimensional {
                operation: "DeviceArray::nonzero",
            }
            .into());
        }
        Ok(indices(a, a.shape(), false, self.stream)?.0)
    }

    /// [`flatnonzero`](DeviceArrayBase::flatnonzero) on this stream.
    pub fn flatnonzero(&self) -> Result<DeviceArray<i64, Ix1>> {
        let a = self.target;
        let n = a.len();
        let mut v = indices(a, &[n], false, self.stream)?.0;
        v.pop().ok_or(crate::error::Error::Internal {
            operation: "DeviceArray::flatnonzero",
            broken: "one index array for one axis",
        })
    }

    /// [`argwhere`](DeviceArrayBase::argwhere) on this stream.
    pub fn argwhere(&self) -> Result<DeviceArray<i64, Ix2>> {
        let a = self.target;
        if a.ndim() == 0 {
            // NumPy: the rows of the 1-d array's, with no columns.
            let count = self.count_by_tiles()?;
            return DeviceArray::<i64, Ix2>::empty(a.context(), (count, 0));
        }
        Ok(indices(a, a.shape(), true, self.stream)?.1)
    }

    /// [`masked`](DeviceArrayBase::masked) on this stream.
    pub fn masked<SM: Storage<Elem = Bool>, DM: Dimension>(
        &self,
        mask: &DeviceArrayBase<SM, DM>,
    ) -> Result<DeviceArray<S::Elem, Ix1>> {
        let (a, stream) = (self.target, self.stream);
        let Some((ctx, n)) = masked_operand("DeviceArray::masked", a, mask.shape())? else {
            return DeviceArray::empty(a.context(), 0);
        };
        let m_copy = OnStream::new(mask, stream).c_order()?;
        let a_copy = OnStream::new(a, stream).c_order()?;
        let m = m_copy.view();
        let av = a_copy.view();
        let t = S::Elem::DTYPE;
        let tiles = n.div_ceil(select_tile(t));
        let (offsets, total) = offsets_of(&ctx, &m, n, (Part::SelectCount, t), tiles, None, stream)?;
        let mut out = DeviceArray::<S::Elem, Ix1>::empty(&ctx, total)?;
        if total > 0 {
            let f = prepared(&ctx, Part::Select, DType::Bool, t)?;
            registry::launch(
                &f,
                tiles as u32,
                BLOCK,
                stream,
                &[
                    Arg::U64(n),
                    Arg::input::<Bool, _>(&m),
                    Arg::input::<i64, _>(&offsets),
                    Arg::input::<S::Elem, _>(&av),
                    Arg::output(&mut out),
                ],
            )?;
        }
        Ok(out)
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// Writes `values` at the elements where `mask` is true, in C order (NumPy's
        /// `a[mask] = values`): `values` holds one element per true one, or a single element
        /// written to all ([`ArrayShapeError::ElementCounts`] otherwise). The mask has this
        /// array's shape. An array not contiguous in C order is written through a copy.
        fn set_masked[SM, DM, SV, DV](
            &mut self, mask: &DeviceArrayBase<SM, DM>, values: &DeviceArrayBase<SV, DV>,
        ) -> Result<()>
            where [SM: Storage<Elem = Bool>, DM: Dimension, SV: Storage<Elem = S::Elem>, DV: Dimension];

        /// Writes `value` at the elements where `mask` is true (NumPy's `a[mask] = value`), one
        /// pass over the array, of any layout.
        fn fill_masked[SM: Storage<Elem = Bool>, DM: Dimension](
            &mut self, mask: &DeviceArrayBase<SM, DM>, value: S::Elem,
        ) -> Result<()>;
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`set_masked`](DeviceArrayBase::set_masked) on this stream.
    pub fn set_masked<SM, DM, SV, DV>(
        &mut self,
        mask: &DeviceArrayBase<SM, DM>,
        values: &DeviceArrayBase<SV, DV>,
    ) -> Result<()>
    where
        SM: Storage<Elem = Bool>,
        DM: Dimension,
        SV: Storage<Elem = S::Elem>,
        DV: Dimension,
    {
        let (a, stream) = (&mut *self.target, self.stream);
        let Some((ctx, n)) = masked_operand("DeviceArray::set_masked", a, mask.shape())? else {
            return Ok(());
        };
        let m_copy = OnStream::new(mask, stream).c_order()?;
        let m = m_copy.view();
        let (offsets, total) = tile_offsets::<Bool, _>(&ctx, &m, n, stream)?;
        if values.len() != total && values.len() != 1 {
            return Err(ArrayShapeError::ElementCounts {
                operation: "DeviceArray::set_masked",
                first: values.len(),
                second: total,
            }
            .into());
        }
        if total == 0 {
            return Ok(());
        }
        let v_copy = OnStream::new(values, stream).c_order()?;
        let v = v_copy.view();
        let f = prepared(&ctx, Part::Scatter, DType::Bool, S::Elem::DTYPE)?;
        through_contiguous(a, stream, |dst| {
            registry::launch(
                &f,
                n.div_ceil(TILE) as u32,
                BLOCK,
                stream,
                &[
                    Arg::U64(n),
                    Arg::input::<Bool, _>(&m),
                    Arg::input::<i64, _>(&offsets),
                    Arg::output::<S::Elem, _>(dst),
                    Arg::input::<S::Elem, _>(&v),
                    Arg::U64(v.len() as u64),
                ],
            )
        })
    }

    /// [`fill_masked`](DeviceArrayBase::fill_masked) on this stream.
    pub fn fill_masked<SM: Storage<Elem = Bool>, DM: Dimension>(
        &mut self,
        mask: &DeviceArrayBase<SM, DM>,
        value: S::Elem,
    ) -> Result<()> {
        let (a, stream) = (&mut *self.target, self.stream);
        let Some((ctx, n)) = masked_operand("DeviceArray::fill_masked", a, mask.shape())? else {
            return Ok(());
        };
        let m_copy = OnStream::new(mask, stream).c_order()?;
        let m = m_copy.view();
        let f = prepared(&ctx, Part::Fill, DType::Bool, S::Elem::DTYPE)?;
        let grid = registry::grid_for(&ctx, n)?;
        through_contiguous(a, stream, |dst| {
            registry::launch(
                &f,
                grid,
                BLOCK,
                stream,
                &[
                    Arg::U64(n),
                    Arg::input::<Bool, _>(&m),
                    Arg::output::<S::Elem, _>(dst),
                    value.to_arg(),
                ],
            )
        })
    }
}

/// Runs `write` on `a` when it is C-contiguous, else on a C-order copy that is then copied
/// back, so a masked write reaches an array of any layout.
fn through_contiguous<S: StorageMut<Elem: Element>, D: Dimension>(
    a: &mut DeviceArrayBase<S, D>,
    stream: Option<&Stream>,
    write: impl FnOnce(&mut crate::gpuarray::array::core::DeviceArrayViewMut<'_, S::Elem, IxDyn>) -> Result<()>,
) -> Result<()> {
    if a.is_standard_layout() {
        return write(&mut a.view_mut().into_dyn());
    }
    let mut tmp = OnStream::new(&*a, stream).to_contiguous()?.into_dyn();
    write(&mut tmp.view_mut())?;
    OnStream::new(&mut *a, stream).copy_from(&tmp)
}

/// NumPy's one-argument `where(condition)`: [`nonzero`](DeviceArrayBase::nonzero) of it.
pub fn where_nonzero<S: Storage<Elem: Element>, D: Dimension>(
    condition: &DeviceArrayBase<S, D>,
) -> Result<Vec<DeviceArray<i64, Ix1>>> {
    condition.nonzero()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every part of the compaction for every element type, compiled by NVRTC on the host.
    #[test]
    fn the_compaction_kernels_compile_for_every_element_type() {
        let mut sources = vec![source(Part::Offsets, DType::I64, DType::I64)];
        for part in [Part::Indices(1), Part::Indices(3), Part::Rows] {
            sources.push(source(part, DType::Bool, DType::I64));
        }
        for t in DType::ALL {
            for part in [Part::Count, Part::Flags] {
                sources.push(source(part, t, DType::I64));
            }
            for part in [Part::Scatter, Part::Fill, Part::SelectCount, Part::Select] {
                sources.push(source(part, DType::Bool, t));
            }
        }
        // One translation unit (NVRTC's start-up is most of a compile): each kernel renamed
        // apart; the headers are guarded, so they may repeat.
        let all_sources: String = sources
            .iter()
            .enumerate()
            .map(|(k, s)| {
                s.replace("void gpu_compact_", &format!("void k{k}_gpu_compact_"))
                    .replace(") gpu_compact_", &format!(") k{k}_gpu_compact_"))
            })
            .collect::<Vec<_>>()
            .join("\n");
        if let Err(e) = registry::compile_check(&all_sources, "sm_90") {
            panic!("{e}");
        }
    }

    #[test]
    fn each_part_declares_the_arguments_its_launch_passes() {
        let count = |part, t| {
            let s = source(part, DType::Bool, t);
            gpu_cuda_source::find_kernel(&s, part.name())
                .unwrap()
                .params
                .len()
        };
        assert_eq!(count(Part::Count, DType::Bool), 3);
        assert_eq!(count(Part::Flags, DType::Bool), 4);
        assert_eq!(count(Part::Offsets, DType::I64), 3);
        assert_eq!(count(Part::Indices(2), DType::I64), 3 + 2 + 2);
        assert_eq!(count(Part::Rows, DType::I64), 6);
        assert_eq!(count(Part::Scatter, DType::F32), 6);
        assert_eq!(count(Part::Fill, DType::F32), 4);
        assert_eq!(count(Part::SelectCount, DType::F32), 3);
        assert_eq!(count(Part::Select, DType::F32), 5);
    }
}
