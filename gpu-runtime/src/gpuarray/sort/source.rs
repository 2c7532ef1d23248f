//! The CUDA C of the sorts: an LSD radix sort of 8-bit digits in the onesweep form (Adinets and
//! Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022; CUB's
//! `DeviceRadixSort`), and the kernels the other operations add around it.
//!
//! - `gpu_radix_hist`: one pass over the keys counts the digits of every pass at once (each
//!   block in shared memory, then added into the global counts).
//! - `gpu_radix_pass`, once per digit: each block takes the next tile by an atomic ticket
//!   (blocks start in no order, and a tile waits only on tiles whose blocks already run),
//!   ranks its keys by the digit (each warp its run of consecutive keys, 32 at a time, the peers
//!   of a digit found by each lane setting its bit in the warp's mask of that digit, or by
//!   `__match_any_sync` when the pass has few distinct digits, counted in the warp's own
//!   counters: the rank of a key is the number of keys of its digit before it, so equal digits
//!   keep their order: stable),
//!   publishes its count of each digit (flag 1), looks back over earlier tiles' counts (one
//!   thread per digit, a few tiles at a time) until a tile that published its inclusive count
//!   (flag 2), publishes its own, then moves its keys to their places in shared memory and
//!   writes them out, runs of a digit to consecutive addresses. Each key is read once and
//!   written once per digit. A status is one 32-bit word, the flag in its top two bits and the
//!   count in the rest (so a sort takes fewer than 2^30 keys), cleared before the sort.
//!
//! The first pass reads the elements' bits and makes them keys (`keys`), the last makes keys
//! elements again; values (the keys' first positions, for `argsort`) are made by the first
//! pass and carried through. Every kernel reads elements as unsigned integers of their size:
//! no CUDA header is needed.

use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::sort::keys::KeyType;
use crate::gpuarray::sort::quantile_method::QuantileMethod;

/// The most distinct digits a pass may have for its blocks to find a key's peers by
/// `match.any` instead of the warp's digit masks (see [`pass_source`]): on 2^26 uniform `f32`
/// (an H200, a CUDA C model) the skewed top byte took 0.32 ms a pass by `match.any`, 0.42 by
/// the masks (most lanes of a warp set bits in one word, one after another) and 0.49 by a
/// ballot per digit bit; the other bytes took 0.37 ms by the masks, 0.49 by ballots and 0.62
/// by `match.any`.
const FEW_DIGITS: u32 = 32;

/// Threads of a radix block (a thread per digit).
pub(crate) const RADIX_BLOCK: u32 = 256;

/// Keys per thread in a radix tile: 8 of 8 bytes; of up to 4 bytes, `ITEMS_KEYS` alone and
/// `ITEMS_VALUES` with values. More keys per tile mean longer runs of a digit in each tile's
/// writes (fewer partly written sectors) and fewer tiles to look back over, but more registers
/// a thread (fewer blocks an SM) and more shared memory (the tile lives in static shared
/// memory, 48 KiB at most: the keys, the values, 4 KiB of 16-bit counters, enough for a tile
/// of fewer than 2^16 keys, and 8 KiB of digit masks; 46 KiB with values of 4-byte keys).
pub(crate) fn items_of(key: KeyType, values: bool) -> u32 {
    if key.bytes > 4 {
        8
    } else if values {
        ITEMS_VALUES
    } else {
        ITEMS_KEYS
    }
}

/// Keys per thread of a tile of keys alone, the fastest measured (2^26 `f32` on an H200, with
/// [`min_blocks`] 4: 20 took 2.66 ms a sort, 24 2.73 ms; 16 with no bound on the registers
/// 3.38 ms).
const ITEMS_KEYS: u32 = 20;

/// Keys per thread of a tile with values (`argsort`): 16, the fastest measured (3.44 ms an
/// `argsort` with [`min_blocks`] 3; 12 and 20 were slower: fewer keys a tile, or more
/// registers).
const ITEMS_VALUES: u32 = 16;

/// The fewest blocks of a pass each SM should hold, 4 of keys alone and 3 with values:
/// `__launch_bounds__` caps a thread's registers (64, 80) so that they fit. The compiler alone
/// took up to 93 (2 blocks), and the passes were 10 to 20% slower: fewer loads in flight
/// while blocks rank and look back. (8-byte keys take the same bounds, not measured.)
pub(crate) fn min_blocks(values: bool) -> u32 {
    if values {
        3
    } else {
        4
    }
}

/// How many earlier tiles' statuses a look-back step reads at once (independent loads, one
/// wait for all): a tile whose predecessors published only their own counts walks back that
/// many at a time rather than one.
const LOOKBACK: u32 = 4;

/// Keys in a radix tile.
pub(crate) fn tile_of(key: KeyType, values: bool) -> u32 {
    RADIX_BLOCK * items_of(key, values)
}

/// Words before the digit counts in a sort's work buffer: a ticket counter per pass.
pub(crate) const WORK_HEADER: u32 = 8;

/// What a radix pass carries beside its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ValuesIn {
    /// No values.
    None,
    /// Each key's position, made by this (first) pass.
    Iota,
    /// `unsigned int` values read beside the keys.
    Load,
}

/// What a radix pass writes of its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ValuesOut {
    /// Nothing.
    None,
    /// `unsigned int`.
    U32,
    /// `long long`, each value modulo `vmod` (when not 0): an index along the sorted axis.
    I64,
}

/// One radix pass's kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PassVariant {
    /// Reads elements (makes keys of them); else reads keys.
    pub first: bool,
    /// Writes elements (of the keys); else writes keys.
    pub last: bool,
    /// Writes the keys at all (an `argsort` needs only the values of its last pass).
    pub keys_out: bool,
    pub vin: ValuesIn,
    pub vout: ValuesOut,
}

impl PassVariant {
    /// A number for the kernel key.
    pub(crate) fn code(self) -> u32 {
        u32::from(self.first)
            | u32::from(self.last) << 1
            | u32::from(self.keys_out) << 2
            | (self.vin as u32) << 3
            | (self.vout as u32) << 5
    }
}

/// The helpers every radix kernel shares.
fn radix_prelude(key: KeyType, items: u32) -> String {
    format!(
        "{keys}#define GPU_T {RADIX_BLOCK}\n#define GPU_W ({RADIX_BLOCK} / 32)\n#define GPU_I {items}\n#define GPU_TILE (GPU_T * GPU_I)\n\
         __device__ __forceinline__ unsigned int gpu_lanemask_lt() {{ unsigned int m; asm(\"mov.u32 %0, %%lanemask_lt;\" : \"=r\"(m)); return m; }}\n\
         // The exclusive sum over the block's threads of one value each (`s_w`: a word per warp).\n\
         __device__ __forceinline__ unsigned int gpu_block_excl(unsigned int v, unsigned int *s_w) {{\n\
         unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, x = v;\n\
         #pragma unroll\n\
         for (unsigned int d = 1; d < 32; d <<= 1) {{ unsigned int y = __shfl_up_sync(0xffffffffu, x, d); if (lane >= d) x += y; }}\n\
         if (lane == 31u) s_w[warp] = x;\n\
         __syncthreads();\n\
         unsigned int off = 0;\n\
         for (unsigned int w = 0; w < warp; ++w) off += s_w[w];\n\
         return off + x - v;\n}}\n",
        keys = key.c_functions(None),
    )
}

/// `gpu_radix_hist(const KEY *x, long long x_o, long long n, unsigned int *work, int passes)`:
/// the counts of each digit of each of the first `passes` digits, added into `work` after its
/// header; `transform` makes keys of elements.
///
/// Each group of warps counts into its own copy of the block's counts ([`HIST_COPIES`]): a
/// skewed byte (the top byte of floats of one sign and range is a few values) sends most of a
/// warp's increments to one counter, and each copy divides that queue. Keys of 4 bytes are read
/// 16 bytes at a time when the start is aligned. Both together took the pass from 0.171 to
/// 0.112 ms for 2^26 uniform `f32` on an H200 (a CUDA C model of these kernels).
pub(crate) fn hist_source(key: KeyType, transform: bool) -> String {
    let bytes = key.bytes;
    let to_key = |v: &str| {
        if transform {
            format!("gpu_to_key({v})")
        } else {
            v.to_owned()
        }
    };
    // A pragma starts its own line.
    let count = "\n#pragma unroll\nfor (int p = 0; p < GPU_B; ++p) if (p < passes) atomicAdd(&h[p * 256 + ((unsigned int)(k >> (8 * p)) & 255u)], 1u);\n";
    let vector = if bytes == 4 {
        format!(
            "if ((((size_t)(x + x_o)) & 15u) == 0u) {{\n\
             const long long nv = n / 4;\n\
             const uint4 *xv = (const uint4 *)(x + x_o);\n\
             for (long long i = blockIdx.x * (long long)GPU_T + threadIdx.x; i < nv; i += (long long)gridDim.x * GPU_T) {{\n\
             const uint4 v = xv[i];\n\
             {{ KEY k = {a}; {count} }}\n{{ KEY k = {b}; {count} }}\n{{ KEY k = {c}; {count} }}\n{{ KEY k = {d}; {count} }}\n\
             }}\n\
             head = 4 * nv;\n\
             }}\n",
            a = to_key("v.x"),
            b = to_key("v.y"),
            c = to_key("v.z"),
            d = to_key("v.w"),
        )
    } else {
        String::new()
    };
    let load = to_key("x[x_o + i]");
    format!(
        "{prelude}#define GPU_B {bytes}\n#define GPU_HC {HIST_COPIES}\n\
         extern \"C\" __global__ void __launch_bounds__(GPU_T) gpu_radix_hist(const KEY *__restrict__ x, long long x_o, long long n, unsigned int *work, int passes) {{\n\
         __shared__ unsigned int hs[GPU_HC * GPU_B * 256];\n\
         for (int i = threadIdx.x; i < GPU_HC * GPU_B * 256; i += GPU_T) hs[i] = 0u;\n\
         __syncthreads();\n\
         unsigned int *h = hs + ((threadIdx.x >> 5) % GPU_HC) * (GPU_B * 256);\n\
         long long head = 0;\n\
         {vector}\
         for (long long i = head + blockIdx.x * (long long)GPU_T + threadIdx.x; i < n; i += (long long)gridDim.x * GPU_T) {{\n\
         KEY k = {load};\n\
         {count}\n\
         }}\n\
         __syncthreads();\n\
         for (int i = threadIdx.x; i < passes * 256; i += GPU_T) {{ unsigned int c = 0u;\n\
         #pragma unroll\n for (int q = 0; q < GPU_HC; ++q) c += hs[q * GPU_B * 256 + i];\n\
         if (c) atomicAdd(work + {WORK_HEADER} + i, c); }}\n\
         }}\n",
        prelude = radix_prelude(key, 1),
    )
}

/// Copies of a histogram block's counts (a group of warps each).
const HIST_COPIES: u32 = 4;

/// `gpu_radix_pass`: one digit's pass (see the module documentation). Its parameters: the
/// keys in (elements on the first pass, at offset `in_o`), the keys out (when written), the
/// values in (when loaded), the values out and `vmod` (when written), the work buffer (ticket
/// counters, digit counts, tile status), `n`, the pass, the passes and the tiles.
pub(crate) fn pass_source(key: KeyType, transform: bool, v: PassVariant) -> String {
    let mut params = "const KEY *__restrict__ keys_in, long long in_o".to_owned();
    if v.keys_out {
        params.push_str(", KEY *__restrict__ keys_out");
    }
    if v.vin == ValuesIn::Load {
        params.push_str(", const unsigned int *__restrict__ vals_in");
    }
    match v.vout {
        ValuesOut::None => {}
        ValuesOut::U32 => params.push_str(", unsigned int *__restrict__ vals_out, unsigned int vmod"),
        ValuesOut::I64 => params.push_str(", long long *__restrict__ vals_out, unsigned int vmod"),
    }
    params.push_str(", unsigned int *work, long long n, int pass, int passes, unsigned int tiles");
    let values = v.vin != ValuesIn::None;
    // The keys are made of the elements only once every load is issued: with the transform's
    // branches inside the loop of loads, the compiler issued them one at a time, each waiting
    // for memory (0.76 ms against 0.48 for the same pass without the transform: 2^26 `f32`,
    // an H200, a CUDA C model of this kernel).
    let to_keys = if v.first && transform {
        "#pragma unroll\nfor (int k = 0; k < GPU_I; ++k) key[k] = gpu_to_key(key[k]);\n"
    } else {
        ""
    };
    let from_key = if v.last && transform {
        "gpu_from_key(kk)"
    } else {
        "kk"
    };
    let load_val = match v.vin {
        ValuesIn::None => "",
        ValuesIn::Iota => "val[k] = (unsigned int)i;",
        ValuesIn::Load => "val[k] = vals_in[i];",
    };
    let s_vals = if values {
        "__shared__ unsigned int s_vals[GPU_TILE];\nunsigned int val[GPU_I];\n"
    } else {
        ""
    };
    let place_val = if values { "s_vals[pos] = val[k];" } else { "" };
    let store_key = if v.keys_out {
        format!("keys_out[g] = {from_key};")
    } else {
        String::new()
    };
    let store_val = match v.vout {
        ValuesOut::None => "",
        ValuesOut::U32 => "{ unsigned int vv = s_vals[i]; vals_out[g] = vmod ? vv % vmod : vv; }",
        ValuesOut::I64 => {
            "{ unsigned int vv = s_vals[i]; vals_out[g] = (long long)(vmod ? vv % vmod : vv); }"
        }
    };
    // The tile's count of each digit, published for the look-back of later tiles: inclusive
    // (flag 2) at once by the first tile, else as the tile's own (flag 1).
    let publish =
        "if (tile == 0) st[tid] = (2u << 30) | tot; else st[(size_t)tile * 256u + tid] = (1u << 30) | tot;\n";
    format!(
        "{prelude}#define GPU_LB {lb}\n\
         // The rank of a key among the warp's keys of its digit so far (its lane's peers before\n\
         // it, after the counts of the warp's earlier keys); the lowest peer adds them all.\n\
         __device__ __forceinline__ unsigned int gpu_rank(unsigned short *s_wh, unsigned int warp, unsigned int d, unsigned int peers, bool valid, unsigned int lt) {{\n\
         const unsigned int before = valid ? s_wh[warp * 256 + d] : 0u;\n\
         __syncwarp();\n\
         if (valid && (peers & lt) == 0u) s_wh[warp * 256 + d] = (unsigned short)(before + __popc(peers));\n\
         __syncwarp();\n\
         return before + __popc(peers & lt);\n}}\n\
         // The same rank with the peers found by the digit's mask in `s_match` (a word per warp\n\
         // and digit, zero between keys): each lane sets its bit in its digit's word, so the word\n\
         // read back is the lanes of its digit, with one shared atomic a key where a ballot per\n\
         // digit bit took eight; the lowest peer clears it for the warp's next keys.\n\
         __device__ __forceinline__ unsigned int gpu_rank_or(unsigned short *s_wh, unsigned int *s_match, unsigned int warp, unsigned int d, bool valid, unsigned int lane, unsigned int lt) {{\n\
         const unsigned int at = warp * 256 + d;\n\
         if (valid) atomicOr(&s_match[at], 1u << lane);\n\
         __syncwarp();\n\
         const unsigned int peers = valid ? s_match[at] : 0u;\n\
         const unsigned int before = valid ? s_wh[at] : 0u;\n\
         __syncwarp();\n\
         if (valid && (peers & lt) == 0u) {{ s_wh[at] = (unsigned short)(before + __popc(peers)); s_match[at] = 0u; }}\n\
         __syncwarp();\n\
         return before + __popc(peers & lt);\n}}\n\
         extern \"C\" __global__ void __launch_bounds__(GPU_T, {minb}) gpu_radix_pass({params}) {{\n\
         __shared__ unsigned short s_wh[GPU_W * 256];\n\
         __shared__ unsigned int s_match[GPU_W * 256];\n\
         __shared__ unsigned int s_start[256];\n\
         __shared__ unsigned int s_base[256];\n\
         __shared__ unsigned int s_w1[GPU_W];\n\
         __shared__ unsigned int s_w2[GPU_W];\n\
         __shared__ unsigned int s_tile;\n\
         __shared__ KEY s_keys[GPU_TILE];\n\
         KEY key[GPU_I];\nunsigned int rank[GPU_I];\n\
         {s_vals}\
         const unsigned int tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;\n\
         const int shift = 8 * pass;\n\
         if (tid == 0) s_tile = atomicAdd(work + pass, 1u);\n\
         for (int i = tid; i < GPU_W * 256; i += GPU_T) {{ s_wh[i] = 0u; s_match[i] = 0u; }}\n\
         __syncthreads();\n\
         const unsigned int tile = s_tile;\n\
         // A ticket past the grid (none, when the work buffer was cleared): nothing to do.\n\
         if (tile >= tiles) return;\n\
         const long long base = (long long)tile * GPU_TILE;\n\
         const long long wbase = base + (long long)warp * (32 * GPU_I);\n\
         #pragma unroll\n\
         for (int k = 0; k < GPU_I; ++k) {{\n\
         long long i = wbase + k * 32 + lane;\n\
         if (i < n) {{ key[k] = keys_in[in_o + i]; {load_val} }} else key[k] = 0;\n\
         }}\n\
         {to_keys}\
         volatile unsigned int *st = (volatile unsigned int *)(work + {WORK_HEADER} + passes * 256) + (size_t)pass * tiles * 256u;\n\
         const unsigned int lt = gpu_lanemask_lt();\n\
         // This warp's keys still in the array, in 32 bits (all of them but in the last tile).\n\
         const long long wl = n - wbase;\n\
         const unsigned int wleft = wl <= 0 ? 0u : (wl >= 32 * GPU_I ? 32u * GPU_I : (unsigned int)wl);\n\
         // The peers of a key (the lanes of its digit) by `match.any` when the pass has few\n\
         // distinct digits (a skewed byte: it is fast then, where the masks' atomics would queue\n\
         // on one word), else by the digits' masks. The choice is the block's, from the pass's\n\
         // counts, so one of the two loops runs.\n\
         if (__syncthreads_count(work[{WORK_HEADER} + pass * 256 + tid] != 0u) <= {FEW_DIGITS}) {{\n\
         #pragma unroll\n\
         for (int k = 0; k < GPU_I; ++k) {{\n\
         const bool valid = k * 32u + lane < wleft;\n\
         const unsigned int d = (unsigned int)(key[k] >> shift) & 255u;\n\
         const unsigned int peers = __match_any_sync(0xffffffffu, valid ? d : 256u);\n\
         rank[k] = gpu_rank(s_wh, warp, d, peers, valid, lt);\n\
         }}\n\
         }} else {{\n\
         #pragma unroll\n\
         for (int k = 0; k < GPU_I; ++k) {{\n\
         const bool valid = k * 32u + lane < wleft;\n\
         const unsigned int d = (unsigned int)(key[k] >> shift) & 255u;\n\
         rank[k] = gpu_rank_or(s_wh, s_match, warp, d, valid, lane, lt);\n\
         }}\n\
         }}\n\
         __syncthreads();\n\
         // Thread `tid` is digit `tid`: its count in the tile, each warp's first rank in it.\n\
         unsigned int tot = 0;\n\
         #pragma unroll\n\
         for (int w = 0; w < GPU_W; ++w) {{ unsigned int c = s_wh[w * 256 + tid]; s_wh[w * 256 + tid] = (unsigned short)tot; tot += c; }}\n\
         {publish}\
         unsigned int excl = 0;\n\
         if (tile != 0) {{\n\
         long long j = (long long)tile - 1;\n\
         bool done = false;\n\
         // GPU_LB earlier tiles' statuses read at once (independent loads, one wait), then\n\
         // taken in order up to the first inclusive one; an unpublished one is read again.\n\
         while (!done) {{\n\
         unsigned int s[GPU_LB];\n\
         #pragma unroll\n\
         for (int q = 0; q < GPU_LB; ++q) s[q] = j - q >= 0 ? st[(size_t)(j - q) * 256u + tid] : 0u;\n\
         #pragma unroll\n\
         for (int q = 0; q < GPU_LB; ++q) {{\n\
         const unsigned int f = s[q] >> 30;\n\
         if (f == 0u) break;\n\
         excl += s[q] & 0x3FFFFFFFu;\n\
         --j;\n\
         if (f == 2u) {{ done = true; break; }}\n\
         }}\n\
         }}\n\
         st[(size_t)tile * 256u + tid] = (2u << 30) | (excl + tot);\n\
         }}\n\
         const unsigned int gexcl = gpu_block_excl(work[{WORK_HEADER} + pass * 256 + tid], s_w1);\n\
         const unsigned int start = gpu_block_excl(tot, s_w2);\n\
         s_start[tid] = start;\n\
         s_base[tid] = gexcl + excl - start;\n\
         __syncthreads();\n\
         #pragma unroll\n\
         for (int k = 0; k < GPU_I; ++k) {{\n\
         if (k * 32u + lane < wleft) {{\n\
         const unsigned int d = (unsigned int)(key[k] >> shift) & 255u;\n\
         const unsigned int pos = s_start[d] + s_wh[warp * 256 + d] + rank[k];\n\
         s_keys[pos] = key[k]; {place_val}\n\
         }}\n\
         }}\n\
         __syncthreads();\n\
         const long long left = n - base;\n\
         const unsigned int count = left < GPU_TILE ? (unsigned int)left : (unsigned int)GPU_TILE;\n\
         for (unsigned int i = tid; i < count; i += GPU_T) {{\n\
         const KEY kk = s_keys[i];\n\
         const unsigned int g = s_base[(unsigned int)(kk >> shift) & 255u] + i;\n\
         {store_key} {store_val}\n\
         }}\n\
         }}\n",
        prelude = radix_prelude(key, items_of(key, values)),
        minb = min_blocks(values),
        lb = LOOKBACK,
    )
}

/// `gpu_radix_segment(const unsigned int *idx, unsigned int *seg, long long n, unsigned int m)`:
/// the row of each position (`idx / m`), the keys of the second sort of a sort along an axis.
pub(crate) fn segment_source() -> String {
    "extern \"C\" __global__ void gpu_radix_segment(const unsigned int *__restrict__ idx, unsigned int *__restrict__ seg, long long n, unsigned int m) {\n\
     for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) seg[i] = idx[i] / m;\n}\n"
        .to_owned()
}

/// `gpu_radix_gather(const KEY *x, long long x_o, const unsigned int *idx, KEY *out, long long n)`: the
/// elements at the sorted positions, as they are (the bits of the element type).
pub(crate) fn gather_source(key: KeyType) -> String {
    format!(
        "typedef {k} KEY;\nextern \"C\" __global__ void gpu_radix_gather(const KEY *__restrict__ x, long long x_o, const unsigned int *__restrict__ idx, KEY *__restrict__ out, long long n) {{\n\
         for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) out[i] = x[x_o + idx[i]];\n}}\n",
        k = key.c_type()
    )
}

/// The kernels of `unique` on a sorted run of `n` elements' bits (a sort's output, in which
/// equal values have equal bits): `gpu_unique_flags` (1 where a value starts, and at each NaN
/// when `nans_distinct`: `nan` is the one NaN's bits the sort writes), then, after an
/// inclusive sum of the flags, `gpu_unique_scatter` (each first value to its place, and its
/// position to `first`), `gpu_unique_counts`, `gpu_unique_index` (the first position in the
/// input, through the sort's permutation) and `gpu_unique_inverse`.
pub(crate) fn unique_source(key: KeyType) -> String {
    let k = key.c_type();
    let grid = "for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)";
    let gridk = "for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < k; j += (long long)gridDim.x * blockDim.x)";
    format!(
        "typedef {k} KEY;\n\
         #define GPU_NEW_RUN(i) ((i) == 0 || s[i] != s[(i) - 1] || (nans_distinct && (unsigned long long)s[i] == nan))\n\
         extern \"C\" __global__ void gpu_unique_flags(const KEY *__restrict__ s, unsigned int *__restrict__ flags, long long n, unsigned long long nan, int nans_distinct) {{\n\
         {grid} flags[i] = GPU_NEW_RUN(i) ? 1u : 0u;\n}}\n\
         extern \"C\" __global__ void gpu_unique_scatter(const KEY *__restrict__ s, const unsigned int *__restrict__ pos, KEY *__restrict__ out, long long *__restrict__ first, long long n, unsigned long long nan, int nans_distinct) {{\n\
         {grid} if (GPU_NEW_RUN(i)) {{ unsigned int j = pos[i] - 1u; out[j] = s[i]; first[j] = i; }}\n}}\n\
         extern \"C\" __global__ void gpu_unique_counts(const long long *__restrict__ first, long long *__restrict__ counts, long long k, long long n) {{\n\
         {gridk} counts[j] = (j + 1 < k ? first[j + 1] : n) - first[j];\n}}\n\
         extern \"C\" __global__ void gpu_unique_index(const long long *__restrict__ first, const unsigned int *__restrict__ perm, long long *__restrict__ index, long long k) {{\n\
         {gridk} index[j] = (long long)perm[first[j]];\n}}\n\
         extern \"C\" __global__ void gpu_unique_inverse(const unsigned int *__restrict__ pos, const unsigned int *__restrict__ perm, long long *__restrict__ inv, long long n) {{\n\
         {grid} inv[perm[i]] = (long long)pos[i] - 1;\n}}\n"
    )
}

/// `gpu_searchsorted(const KEY *a, long long a_o, long long a_s, long long na, const KEY *v,
/// long long v_o, long long nv, long long *out, int right)`: NumPy's `searchsorted` by binary search, in the
/// keys' order (NaN last).
pub(crate) fn searchsorted_source(key: KeyType) -> String {
    format!(
        "{keys}extern \"C\" __global__ void gpu_searchsorted(const KEY *__restrict__ a, long long a_o, long long a_s, long long na, const KEY *__restrict__ v, long long v_o, long long nv, long long *__restrict__ out, int right) {{\n\
         for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nv; i += (long long)gridDim.x * blockDim.x) {{\n\
         const KEY kv = gpu_to_key(v[v_o + i]);\n\
         long long lo = 0, hi = na;\n\
         while (lo < hi) {{\n\
         const long long mid = lo + ((hi - lo) >> 1);\n\
         const KEY ka = gpu_to_key(a[a_o + mid * a_s]);\n\
         if (right ? ka <= kv : ka < kv) lo = mid + 1; else hi = mid;\n\
         }}\n\
         out[i] = lo;\n\
         }}\n}}\n",
        keys = key.c_functions(None),
    )
}

/// `gpu_quantile(const KEY *s, double *out, long long out_o, long long rows, long long stride,
/// double q, int median, int skip_nan, int method)`: the `q` quantile of each sorted row of
/// `stride` elements, into `out[out_o + row]` (one launch per `q` of a list), by NumPy's `method` (a [`QuantileMethod`] as its code; NumPy's `_quantile`: a
/// virtual index, its neighbours clamped to the row, the weight `gamma` and NumPy's `_lerp`;
/// the discrete methods take one element; each product rounded on its own, `__dmul_rn`, as
/// NumPy rounds it: NVRTC would fuse `n * q - 1` into one FMA, which at a whole `n q` picks
/// another element than NumPy's) (`median`: NumPy's `median`, the mean of the two
/// middle elements), NaN where a row holds one
/// (sorted last) or is empty; with `skip_nan` (NumPy's `nanquantile`), of the row's elements
/// before its first NaN (found by bisection: NaNs sort last), NaN when there are none.
pub(crate) fn quantile_source(key: KeyType, dtype: DType) -> String {
    format!(
        "{keys}extern \"C\" __global__ void gpu_quantile(const KEY *__restrict__ s, double *__restrict__ out_all, long long out_o, long long rows, long long stride, double q, int median, int skip_nan, int method) {{\n\
         double *out = out_all + out_o;\n\
         for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x) {{\n\
         const KEY *row = s + r * stride;\n\
         long long m = stride;\n\
         if (skip_nan) {{\n\
         long long lo = 0, hi = stride;\n\
         while (lo < hi) {{ const long long mid = lo + (hi - lo) / 2; const double v = gpu_key_to_double(row[mid]); if (v != v) hi = mid; else lo = mid + 1; }}\n\
         m = lo;\n\
         }}\n\
         if (m == 0) {{ out[r] = __longlong_as_double(0x7FF8000000000000ll); continue; }}\n\
         const double last = gpu_key_to_double(row[m - 1]);\n\
         if (last != last) {{ out[r] = last; continue; }}\n\
         if (median) {{\n\
         const long long h = m / 2;\n\
         const double b = gpu_key_to_double(row[h]);\n\
         out[r] = (m & 1) ? b : (gpu_key_to_double(row[h - 1]) + b) / 2.0;\n\
         continue;\n\
         }}\n\
         const double n = (double)m;\n\
         if (method >= {LOWER}) {{\n\
         double k;\n\
         if (method == {LOWER}) k = floor(__dmul_rn(n - 1.0, q));\n\
         else if (method == {HIGHER}) k = ceil(__dmul_rn(n - 1.0, q));\n\
         else if (method == {NEAREST}) k = rint(__dmul_rn(n - 1.0, q));\n\
         else {{\n\
         const double v = method == {INVERTED_CDF} ? __dmul_rn(n, q) - 1.0 : __dmul_rn(n, q) - 1.0 - 0.5;\n\
         const double p = floor(v);\n\
         const bool at = v - p == 0.0 && (method == {INVERTED_CDF} || p - 2.0 * floor(p / 2.0) == 1.0);\n\
         k = at ? p : p + 1.0;\n\
         }}\n\
         k = k < 0.0 ? 0.0 : (k > n - 1.0 ? n - 1.0 : k);\n\
         out[r] = gpu_key_to_double(row[(long long)k]);\n\
         continue;\n\
         }}\n\
         double alpha = 1.0, beta = 1.0, vi;\n\
         if (method == {INTERPOLATED}) {{ alpha = 0.0; beta = 1.0; }}\n\
         else if (method == {HAZEN}) {{ alpha = 0.5; beta = 0.5; }}\n\
         else if (method == {WEIBULL}) {{ alpha = 0.0; beta = 0.0; }}\n\
         else if (method == {MEDIAN_UNBIASED}) {{ alpha = 1.0 / 3.0; beta = 1.0 / 3.0; }}\n\
         else if (method == {NORMAL_UNBIASED}) {{ alpha = 3.0 / 8.0; beta = 3.0 / 8.0; }}\n\
         if (method == {LINEAR}) vi = __dmul_rn(n - 1.0, q);\n\
         else if (method == {MIDPOINT}) vi = 0.5 * (floor(__dmul_rn(n - 1.0, q)) + ceil(__dmul_rn(n - 1.0, q)));\n\
         else if (method == {AVERAGED}) vi = __dmul_rn(n, q) - 1.0;\n\
         else vi = __dmul_rn(n, q) + (alpha + __dmul_rn(q, 1.0 - alpha - beta)) - 1.0;\n\
         long long lo, hi;\n\
         double below;\n\
         if (vi >= n - 1.0) {{ lo = hi = m - 1; below = -1.0; }}\n\
         else if (vi < 0.0) {{ lo = hi = 0; below = 0.0; }}\n\
         else {{ below = floor(vi); lo = (long long)below; hi = lo + 1; }}\n\
         double t = vi - below;\n\
         if (method == {AVERAGED}) t = t == 0.0 ? 0.5 : 1.0;\n\
         else if (method == {MIDPOINT}) t = vi - floor(vi) == 0.0 ? 0.0 : 0.5;\n\
         const double a = gpu_key_to_double(row[lo]), b = gpu_key_to_double(row[hi]);\n\
         const double d = b - a;\n\
         out[r] = t >= 0.5 ? b - __dmul_rn(d, 1.0 - t) : a + __dmul_rn(d, t);\n\
         }}\n}}\n",
        keys = key.c_functions(Some(dtype)),
        LOWER = QuantileMethod::Lower as i32,
        HIGHER = QuantileMethod::Higher as i32,
        NEAREST = QuantileMethod::Nearest as i32,
        INVERTED_CDF = QuantileMethod::InvertedCdf as i32,
        INTERPOLATED = QuantileMethod::InterpolatedInvertedCdf as i32,
        HAZEN = QuantileMethod::Hazen as i32,
        WEIBULL = QuantileMethod::Weibull as i32,
        MEDIAN_UNBIASED = QuantileMethod::MedianUnbiased as i32,
        NORMAL_UNBIASED = QuantileMethod::NormalUnbiased as i32,
        LINEAR = QuantileMethod::Linear as i32,
        MIDPOINT = QuantileMethod::Midpoint as i32,
        AVERAGED = QuantileMethod::AveragedInvertedCdf as i32,
    )
}

/// The sources this module generates for `dtype`, for the compile check with no GPU: every
/// pass variant when `every_pass` (the variants differ by the key's size, not its kind), else
/// the one pass that transforms both ways.
#[cfg(test)]
pub(crate) fn all_sources(dtype: DType, every_pass: bool) -> Vec<String> {
    let key = KeyType::of(dtype).unwrap();
    let bits = KeyType {
        kind: crate::gpuarray::sort::keys::KeyKind::Unsigned,
        bytes: key.bytes,
    };
    let mut out = vec![
        hist_source(key, true),
        hist_source(KeyType::SEGMENT, false),
        gather_source(key),
        unique_source(bits),
        searchsorted_source(key),
        quantile_source(key, dtype),
        segment_source(),
    ];
    for first in [false, true] {
        for last in [false, true] {
            for keys_out in [false, true] {
                for vin in [ValuesIn::None, ValuesIn::Iota, ValuesIn::Load] {
                    for vout in [ValuesOut::None, ValuesOut::U32, ValuesOut::I64] {
                        // Only the passes `radix` launches: values from the first pass on
                        // (made, or loaded for the second sort of rows), keys written by every
                        // pass but perhaps the last, `i64` values from the last only.
                        let launched = (vin == ValuesIn::None) == (vout == ValuesOut::None)
                            && (last || (keys_out && vout != ValuesOut::I64))
                            && (first || vin != ValuesIn::Iota)
                            && (keys_out || vin != ValuesIn::None);
                        if !launched || !(every_pass || first && last && keys_out && vin == ValuesIn::Iota) {
                            continue;
                        }
                        let v = PassVariant {
                            first,
                            last,
                            keys_out,
                            vin,
                            vout,
                        };
                        out.push(pass_source(key, true, v));
                    }
                }
            }
        }
    }
    out
}
