//! Counting into bins: NumPy's `bincount(x, weights=, minlength=)` and `histogram(a, bins=,
//! range=)`. Each block counts into bins in shared memory (atomics there are cheap and
//! uncontended across blocks), then adds its bins to the result in global memory; with more
//! bins than shared memory holds, each element adds to global memory directly. With few bins
//! (up to 1024), the counters are privatized (each warp counts into a sub-histogram of its own
//! for `histogram`, each lane into one of eight interleaved ones for `bincount`), summed once
//! at the end, and the input is read 16 bytes a load by a grid of resident blocks (see [`SUB_WORDS`],
//! [`BIN_BLOCKS_PER_SM`]), as CUB's `DeviceHistogram` privatizes its counters.
//!
//! `bincount` without weights is one pass over the input when its values are below
//! [`SMALL_BINS`]: the pass counts them while it finds the minimum and maximum, which the host
//! reads to size the result (NumPy's length). Otherwise, and for `bincount` with weights and
//! `histogram` without a range, one launch first writes each block's minimum and maximum,
//! which the host reads and combines (a few thousand values).

use ndarray::{Dimension, Ix1};

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::stream::Stream;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::cast::{convert_c, headers_for};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::index_element::{read_index, IndexElement};
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;

/// Bins a block keeps in shared memory: 4096 of 8 bytes, 32 KiB (of the 48 KiB every GPU
/// gives a block statically), so two blocks of 256 threads still fit on a multiprocessor.
const SHARED_BINS: u64 = 4096;

/// The bins of [`DeviceArrayBase::histogram`] (NumPy's `bins=` and `range=`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bins<'a> {
    /// `bins` bins of equal width over `range` (`None`: the data's minimum and maximum, widened
    /// by 0.5 each way when they are equal), NumPy's `bins=int, range=(lo, hi)`. The edges are
    /// computed as NumPy's `linspace` and rounded to the type NumPy gives them (`f32` data:
    /// `float32` edges, `f16` data: `float16`, integers: `float64`), so the counts are NumPy's.
    Count {
        /// The number of bins, at least 1.
        bins: usize,
        /// The range, finite with `lo <= hi`.
        range: Option<(f64, f64)>,
    },
    /// Explicit edges, at least two, non-decreasing: bin `i` is `[edges[i], edges[i + 1])`,
    /// the last one closed `[edges[n - 1], edges[n]]`.
    Edges(&'a [f64]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kernel {
    /// Each block's minimum and maximum, as `long long` (`bincount`) or `double`
    /// (`histogram`: NaN wins, as NumPy's `min` and `max` of the data).
    Range { as_double: bool },
    /// Counts (or sums of `weights`) by value.
    Bincount { weights: Option<DType> },
    /// Counts by bin of the edges.
    Histogram,
    /// Sums of weights of `weights`' type by bin of the edges (in `f64`).
    HistogramWeighted { weights: DType },
    /// `bincount`'s one pass (see [`SMALL_BINS`]): counts of the values below it, and the
    /// values' minimum and maximum.
    BincountSmall,
}

impl Kernel {
    fn name(self) -> &'static str {
        match self {
            Kernel::Range { .. } => "gpu_value_range",
            Kernel::Bincount { .. } => "gpu_bincount",
            Kernel::Histogram => "gpu_histogram",
            Kernel::HistogramWeighted { .. } => "gpu_histogram_weighted",
            Kernel::BincountSmall => "gpu_bincount_small",
        }
    }
}

fn source(k: Kernel, t: DType) -> String {
    let tc = t.c_name();
    let name = k.name();
    let grid_loop =
        "for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n\
                     i += (unsigned long long)gridDim.x * blockDim.x)";
    let w = BLOCK / 32;
    // Shared bins of `st`, zeroed, counted into by `body(value, index, bins)` (which ends in
    // `atomicAdd(&bins[b], one)`, or `continue`s past an element), then added to `out` (of
    // `rt`). A thread reads `LOADS` elements (grid-stride, so each load of a warp is one
    // coalesced line) before it counts any: one at a time, each thread waited on its load
    // before its atomics. (Vector loads of four elements on top gained nothing measurable on
    // an H200: the shared atomics bound these kernels then.)
    let binned = |st: &str, rt: &str, body: &dyn Fn(&str, &str, &str) -> String| {
        let shared = body("gpu_v[u]", "gpu_i[u]", "s");
        let global = body("x[i]", "i", "out");
        format!(
            "    __shared__ {st} s[{SHARED_BINS}];\n\
             if (bins <= {SHARED_BINS}ll) {{\n\
                 for (long long b = threadIdx.x; b < bins; b += blockDim.x) s[b] = 0;\n\
                 __syncthreads();\n\
                 const unsigned long long gpu_st = (unsigned long long)gridDim.x * blockDim.x;\n\
                 for (unsigned long long gpu_at = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; gpu_at < n; gpu_at += {LOADS} * gpu_st) {{\n\
                     {tc} gpu_v[{LOADS}]; unsigned long long gpu_i[{LOADS}];\n\
                     #pragma unroll\n\
                     for (int u = 0; u < {LOADS}; ++u) {{ gpu_i[u] = gpu_at + u * gpu_st; if (gpu_i[u] < n) gpu_v[u] = x[gpu_i[u]]; }}\n\
                     #pragma unroll\n\
                     for (int u = 0; u < {LOADS}; ++u) {{ if (gpu_i[u] >= n) break; {shared} }}\n\
                 }}\n\
                 __syncthreads();\n\
                 for (long long b = threadIdx.x; b < bins; b += blockDim.x) if (s[b] != 0) atomicAdd(&out[b], ({rt})s[b]);\n\
             }} else {{\n\
                 {grid_loop} {{ {global} }}\n\
             }}\n"
        )
    };
    let body = match k {
        Kernel::Range { as_double } => {
            let (rt, read, lo0, hi0, less, more) = if as_double {
                (
                    "double",
                    convert_c(t, DType::F64, "x[i]"),
                    "__longlong_as_double(0x7ff0000000000000ll)",
                    "-__longlong_as_double(0x7ff0000000000000ll)",
                    // NaN wins: once `lo` is NaN nothing is less.
                    "(v < lo || v != v)",
                    "(v > hi || v != v)",
                )
            } else {
                (
                    "long long",
                    read_index(t, "x[i]"),
                    "9223372036854775807ll",
                    "(-9223372036854775807ll - 1ll)",
                    "(v < lo)",
                    "(v > hi)",
                )
            };
            format!(
                "extern \"C\" __global__ void {name}(unsigned long long n, const {tc} *__restrict__ x, {rt} *__restrict__ part) {{\n\
                 {rt} lo = {lo0}, hi = {hi0};\n\
                 {grid_loop} {{ const {rt} v = {read}; if {less} lo = v; if {more} hi = v; }}\n\
                 for (int o = 16; o; o >>= 1) {{\n\
                     {rt} v = __shfl_down_sync(0xffffffffu, lo, o); if {less} lo = v;\n\
                     v = __shfl_down_sync(0xffffffffu, hi, o); if {more} hi = v;\n\
                 }}\n\
                 __shared__ {rt} wl[{w}], wh[{w}];\n\
                 if ((threadIdx.x & 31u) == 0) {{ wl[threadIdx.x >> 5] = lo; wh[threadIdx.x >> 5] = hi; }}\n\
                 __syncthreads();\n\
                 if (threadIdx.x == 0) {{\n\
                     for (int k = 1; k < {w}; ++k) {{ {rt} v = wl[k]; if {less} lo = v; v = wh[k]; if {more} hi = v; }}\n\
                     part[2 * blockIdx.x] = lo; part[2 * blockIdx.x + 1] = hi;\n\
                 }}\n}}\n"
            )
        }
        // A value that names no bin is skipped: the range launch sized the bins, so this holds
        // for data that did not change; it keeps every write inside the result regardless.
        // Counts in shared `COUNT_C` (one each), or sums of the weights as `f64`.
        Kernel::Bincount { weights } => {
            let add = |v: &str, i: &str, bins: &str| {
                let inc = match weights {
                    None if bins == "s" => "1u".to_owned(),
                    None => "1ull".to_owned(),
                    Some(wt) => convert_c(wt, DType::F64, &format!("w[{i}]")),
                };
                format!(
                    "if ((unsigned long long){v} >= (unsigned long long)bins) continue; \
                     atomicAdd(&{bins}[(unsigned long long){}], {inc});",
                    read_index(t, v)
                )
            };
            let (w, st, rt) = match weights {
                None => (String::new(), COUNT_C, "unsigned long long"),
                Some(wt) => (
                    format!("const {} *__restrict__ w, ", wt.c_name()),
                    "double",
                    "double",
                ),
            };
            format!(
                "extern \"C\" __global__ void {name}(unsigned long long n, const {tc} *__restrict__ x, \
                 {w}{rt} *__restrict__ out, long long bins) {{\n{}}}\n",
                binned(st, rt, &add)
            )
        }
        Kernel::Histogram | Kernel::HistogramWeighted { .. } => {
            // The bin of `v` by the edges `ed`: NumPy's searchsorted rule, the last bin closed.
            // Equal bins: the value's place `f = (v - ed[0]) * norm` in bins, in `ct` (`float`
            // for 16- and 32-bit float data, whose equal edges are rounded to the data's type by
            // `uniform_edges` and so exact in `float`; `double` otherwise), names the bin by its floor whenever its fraction is at least `tol`
            // from a border, `tol` bounding (on the host, `fast_tolerance`) both the edges'
            // rounding and this arithmetic's: no edge is read then. Near a border, or with
            // unequal bins, the edges decide, as NumPy corrects its own estimate. (Reading two
            // edges from shared memory for every element, at banks as random as the data, and
            // the `double` arithmetic, held this kernel at 0.39 of the copy's speed on an
            // H200; the fraction test takes it to 0.71.)
            let ct = hist_compute_type(t);
            let floor = if ct == "float" { "floorf" } else { "floor" };
            let read_ct = convert_c(t, if ct == "float" { DType::F32 } else { DType::F64 }, "gpu_x");
            // Unequal edges (the user's, any `f64`) are compared in `double`, as they may not
            // be exact in `ct`.
            let read_f64 = convert_c(t, DType::F64, "gpu_x");
            // `inc` is what an element adds to its bin.
            let find = |x: &str, ed: &str, bins_of: &str, inc: &str| {
                format!(
                    "{{ const {tc} gpu_x = {x};\n\
                     long long b;\n\
                     if (uniform) {{\n\
                         const {ct} gpu_c = {read_ct};\n\
                         if (!(gpu_c >= gpu_lo && gpu_c <= gpu_hi)) continue;\n\
                         const {ct} gpu_f = (gpu_c - gpu_lo) * gpu_norm;\n\
                         const {ct} gpu_fl = {floor}(gpu_f);\n\
                         const {ct} gpu_fr = gpu_f - gpu_fl;\n\
                         if (gpu_fr >= gpu_tol && gpu_fr <= ({ct})1 - gpu_tol && gpu_fl < ({ct})bins) {{\n\
                             b = (long long)gpu_fl;\n\
                         }} else {{\n\
                             const double v = (double)gpu_c;\n\
                             double f = (v - {ed}[0]) * norm;\n\
                             b = f >= (double)bins ? bins - 1 : (f > 0.0 ? (long long)f : 0);\n\
                             while (b > 0 && v < {ed}[b]) --b;\n\
                             while (b < bins - 1 && v >= {ed}[b + 1]) ++b;\n\
                         }}\n\
                     }} else {{\n\
                         const double v = {read_f64};\n\
                         if (!(v >= {ed}[0] && v <= {ed}[bins])) continue;\n\
                         long long lo = 0, hi = bins + 1;\n\
                         while (lo < hi) {{ long long mid = (lo + hi) >> 1; if ({ed}[mid] <= v) lo = mid + 1; else hi = mid; }}\n\
                         b = lo - 1 >= bins ? bins - 1 : lo - 1;\n\
                     }}\n\
                     atomicAdd(&{bins_of}[b], {inc}); }}"
                )
            };
            let head = format!(
                "const {ct} gpu_lo = ({ct})e[0], gpu_hi = ({ct})e[bins], gpu_norm = ({ct})norm, gpu_tol = ({ct})tol;\n"
            );
            if let Kernel::HistogramWeighted { weights: wt } = k {
                // Each element adds its weight, as `f64`, to bins of `double` (in shared
                // memory up to SHARED_BINS of them); no per-warp copies or shared edges: the
                // counting form's tuning is for the bench's counts, this one's for its sums.
                let weight = |i: &str| convert_c(wt, DType::F64, &format!("w[{i}]"));
                format!(
                    "extern \"C\" __global__ void {name}(unsigned long long n, const {tc} *__restrict__ x, \
                     const {wc} *__restrict__ w, const double *__restrict__ e, double *__restrict__ out, long long bins, \
                     int uniform, double norm, double tol) {{\n{head}{}}}\n",
                    binned("double", "double", &|v, i, bins_of| find(v, "e", bins_of, &weight(i))),
                    wc = wt.c_name(),
                )
            } else {
                // Up to SUB_WORDS bins: `copies` sub-histograms in shared memory, warp `w` counting
                // into copy `w % copies` (8 for up to 1024 bins: a shared atomic then contends
                // only with its own warp's lanes, never with the other warps', and the copies are
                // summed once at the end), the edges copied to shared memory (up to 1024 bins) so
                // that the two edge reads of each element are shared loads, not L1 ones of 27
                // lines a warp; more bins: each element adds to global memory directly.
                format!(
                "extern \"C\" __global__ void __launch_bounds__({BLOCK}, {BIN_BLOCKS_PER_SM}) {name}(unsigned long long n, const {tc} *__restrict__ x, \
                 const double *__restrict__ e, unsigned long long *__restrict__ out, long long bins, \
                 int uniform, double norm, double tol) {{\n\
                 {head}\
                 __shared__ unsigned int s[{SUB_WORDS}];\n\
                 __shared__ double se[{EDGES_SHARED} + 1];\n\
                 if (bins <= {SUB_WORDS}ll) {{\n\
                     const int copies = bins * {w} <= {SUB_WORDS}ll ? {w} : (int)({SUB_WORDS}ll / bins);\n\
                     for (long long b = threadIdx.x; b < copies * bins; b += blockDim.x) s[b] = 0u;\n\
                     const bool shared_edges = bins <= {EDGES_SHARED}ll;\n\
                     if (shared_edges) for (long long b = threadIdx.x; b <= bins; b += blockDim.x) se[b] = e[b];\n\
                     __syncthreads();\n\
                     unsigned int *mine = s + (long long)((threadIdx.x >> 5) % copies) * bins;\n\
                     if (shared_edges) {{\n{shared_loop}}} else {{\n{global_loop}}}\n\
                     __syncthreads();\n\
                     for (long long b = threadIdx.x; b < bins; b += blockDim.x) {{\n\
                         unsigned int c = 0u;\n\
                         for (int k = 0; k < copies; ++k) c += s[k * bins + b];\n\
                         if (c != 0u) atomicAdd(&out[b], (unsigned long long)c);\n\
                     }}\n\
                 }} else {{\n\
                     {grid_loop} {{ {global} }}\n\
                 }}\n}}\n",
                w = BLOCK / 32,
                shared_loop = vector_loop(t, &|v| find(v, "se", "mine", "1u")),
                global_loop = vector_loop(t, &|v| find(v, "e", "mine", "1u")),
                global = find("x[i]", "e", "out", "1ull"),
            )
            }
        }
        Kernel::BincountSmall => {
            // Every value's minimum and maximum (from 0: a minimum above 0 or a maximum below
            // it changes nothing the host decides), and the counts of those below
            // SMALL_BINS in eight sub-histograms a block, interleaved: lane `l` counts value `v`
            // at `s[v * 8 + l % 8]`, so two lanes of a warp meet on a word only for the same
            // value and the same `l % 8`, and lanes `l` and `l + 8k` on a bank only then too
            // (a sub-histogram a warp, lanes meeting on one word and on one bank at random,
            // took 92 us for 2^26 values in 0..1000 on an H200, this 78 us). They are added to
            // `part[0..SMALL_BINS]` at the end; the minimum and maximum go to
            // `part[SMALL_BINS]` and `part[SMALL_BINS + 1]`, all of which start at 0.
            // Values of 32 bits or fewer are compared and indexed in 32 bits (64-bit minimum,
            // maximum and index arithmetic on every element was most of the pass's work).
            let (acc, read) = match t {
                DType::I8 | DType::I16 | DType::I32 => ("int", Some("((int)(@))")),
                DType::U8 | DType::U16 | DType::U32 => ("unsigned int", Some("((unsigned int)(@))")),
                _ => ("long long", None),
            };
            let count = |v: &str| {
                let read = read.map_or_else(|| read_index(t, v), |r| r.replace('@', v));
                format!(
                    "{{ const {acc} iv = {read}; gpu_lo = iv < gpu_lo ? iv : gpu_lo; gpu_hi = iv > gpu_hi ? iv : gpu_hi;\n\
                     if (({uacc})iv < {SMALL_BINS}u) atomicAdd(&mine[(unsigned int)iv * 8u], 1u); }}",
                    uacc = if acc == "long long" { "unsigned long long" } else { "unsigned int" }
                )
            };
            format!(
                "extern \"C\" __global__ void __launch_bounds__({BLOCK}, {BIN_BLOCKS_PER_SM}) {name}(unsigned long long n, const {tc} *__restrict__ x, \
                 unsigned long long *__restrict__ part) {{\n\
                 __shared__ unsigned int s[8 * {SMALL_BINS}];\n\
                 __shared__ long long wl[{w}], wh[{w}];\n\
                 for (int b = threadIdx.x; b < 8 * {SMALL_BINS}; b += blockDim.x) s[b] = 0u;\n\
                 __syncthreads();\n\
                 unsigned int *mine = s + (threadIdx.x & 7u);\n\
                 {acc} gpu_lo = 0, gpu_hi = 0;\n\
                 {loop}\
                 long long lo = (long long)gpu_lo, hi = (long long)gpu_hi;\n\
                 __syncthreads();\n\
                 for (int b = threadIdx.x; b < {SMALL_BINS}; b += blockDim.x) {{\n\
                     unsigned int c = 0u;\n\
                     #pragma unroll\n\
                     for (int k = 0; k < 8; ++k) c += s[b * 8 + k];\n\
                     if (c != 0u) atomicAdd(&part[b], (unsigned long long)c);\n\
                 }}\n\
                 for (int o = 16; o; o >>= 1) {{\n\
                     const long long l = __shfl_down_sync(0xffffffffu, lo, o), h = __shfl_down_sync(0xffffffffu, hi, o);\n\
                     lo = l < lo ? l : lo; hi = h > hi ? h : hi;\n\
                 }}\n\
                 if ((threadIdx.x & 31u) == 0) {{ wl[threadIdx.x >> 5] = lo; wh[threadIdx.x >> 5] = hi; }}\n\
                 __syncthreads();\n\
                 if (threadIdx.x == 0) {{\n\
                     for (int k = 1; k < {w}; ++k) {{ lo = wl[k] < lo ? wl[k] : lo; hi = wh[k] > hi ? wh[k] : hi; }}\n\
                     if (lo < 0) atomicMin((long long *)&part[{SMALL_BINS}], lo);\n\
                     if (hi > 0) atomicMax((long long *)&part[{SMALL_BINS} + 1], hi);\n\
                 }}\n}}\n",
                w = BLOCK / 32,
                loop = vector_loop(t, &count),
            )
        }
    };
    // The weights' type needs its header as much as the data's.
    let weights = match k {
        Kernel::Bincount { weights: Some(w) } | Kernel::HistogramWeighted { weights: w } => Some(w),
        _ => None,
    };
    format!("{}{body}", headers_for(std::iter::once(t).chain(weights)))
}

/// Loads in flight per thread in the bin kernels (see `binned` in [`source`]).
const LOADS: u32 = 4;

/// The most bins [`Kernel::Histogram`] counts in shared memory (32 KiB of 32-bit counters),
/// as `SUB_WORDS / bins` sub-histograms, at most one a warp.
const SUB_WORDS: u64 = 8192;

/// The C type [`Kernel::Histogram`] places values in bins with: `float` for 16- and 32-bit
/// float data (their values and their edges, rounded to the data's type by
/// [`uniform_edges`], are exact in it), `double` for the rest.
fn hist_compute_type(t: DType) -> &'static str {
    if matches!(t, DType::F16 | DType::Bf16 | DType::F32) {
        "float"
    } else {
        "double"
    }
}

/// The distance from a bin's border, in bins, beyond which [`Kernel::Histogram`]'s estimate
/// `floor((v - edges[0]) * norm)` (in [`hist_compute_type`]) is the bin the edges give, for
/// equal bins over `edges` of data of type `t`; 2 (every value checked against the edges)
/// when that bound is not small.
///
/// Two errors, in bins, each bounded generously: the edges' distance from the exactly equal
/// ones (each rounded to the edge type, whose machine epsilon is `eps_e`, and computed in the
/// data's type when the range is the data's: `M norm eps_e + 2 (bins + 1) eps_e`, `M` the
/// larger endpoint's magnitude), and the estimate's own rounding (a subtraction, `norm`
/// rounded to the compute type and a product: `M norm eps_c + (bins + 1) eps_c`). Twice
/// their sum keeps a margin.
fn fast_tolerance(edges: &[f64], norm: f64, t: DType) -> f64 {
    let eps = |d: DType| match d {
        DType::F16 => f64::from(half::f16::EPSILON),
        DType::Bf16 => f64::from(half::bf16::EPSILON),
        DType::F32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    };
    let eps_e = eps(t);
    let eps_c = if hist_compute_type(t) == "float" {
        f64::from(f32::EPSILON)
    } else {
        f64::EPSILON
    };
    let bins = (edges.len() - 1) as f64;
    let m = edges[0].abs().max(edges[edges.len() - 1].abs());
    let tol = 2.0 * (m * norm * (eps_e + eps_c) + (bins + 1.0) * (2.0 * eps_e + eps_c)) + 1e-12;
    if tol.is_finite() && tol < 0.25 {
        tol
    } else {
        2.0
    }
}

/// The most bins whose edges [`Kernel::Histogram`] copies to shared memory (8 KiB of `f64`).
const EDGES_SHARED: u64 = 1024;

/// Values `bincount` counts in its one pass ([`Kernel::BincountSmall`]): eight interleaved
/// sub-histograms of this many 32-bit counters, 32 KiB a block. When the largest value is below it,
/// that pass is the whole of `bincount`; otherwise its counts are dropped and the input
/// read again by [`Kernel::Bincount`], sized by the maximum the pass found.
const SMALL_BINS: u64 = 1024;

/// Blocks per multiprocessor of the one-pass bin kernels: their grid, and their
/// `__launch_bounds__` (at most 64 registers a thread, so that this many blocks of [`BLOCK`]
/// threads are resident with their 32 to 40 KiB of shared memory each). A grid of exactly
/// what is resident has no second, mostly idle wave, and merges one block's counts per block
/// into global memory: 4 a multiprocessor, 1024 threads, with four 16-byte loads in flight
/// each, keeps the memory system busy.
const BIN_BLOCKS_PER_SM: u32 = 4;

/// The grid of the one-pass bin kernels over `n` elements: [`BIN_BLOCKS_PER_SM`] blocks a
/// multiprocessor, fewer for a small input, more only so that no block counts more than
/// 2^31 elements into its 32-bit counters.
fn grid_for_resident_bins(ctx: &Context, n: u64) -> Result<u32> {
    let resident = u64::from(registry::sm_count(ctx)?) * u64::from(BIN_BLOCKS_PER_SM);
    let usual = n.div_ceil(u64::from(BLOCK) * 16).clamp(1, resident);
    Ok(usual.max(n.div_ceil(1 << 31).min(u64::from(u32::MAX >> 1))) as u32)
}

/// A grid-stride loop over `x[0..n]` that runs `body(value)` on each element (`body` may
/// `continue` past one): 16 bytes a load where `x` is 16-byte aligned, [`LOADS`] loads of a
/// thread in flight before any is used (a warp's load covers 512 adjacent bytes), then the
/// elements past the last whole 16 bytes (or all of them, unaligned) one at a time.
fn vector_loop(t: DType, body: &dyn Fn(&str) -> String) -> String {
    let tc = t.c_name();
    let vw = (16 / t.size()).max(1);
    format!(
        "{{ const unsigned long long gpu_t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n\
         const unsigned long long gpu_st = (unsigned long long)gridDim.x * blockDim.x;\n\
         const unsigned long long gpu_nv = ((unsigned long long)x & 15ull) == 0ull ? n / {vw}ull : 0ull;\n\
         for (unsigned long long gpu_at = gpu_t; gpu_at < gpu_nv; gpu_at += {LOADS} * gpu_st) {{\n\
             uint4 gpu_w[{LOADS}];\n\
             #pragma unroll\n\
             for (int u = 0; u < {LOADS}; ++u) if (gpu_at + u * gpu_st < gpu_nv) gpu_w[u] = __ldcs((const uint4 *)x + gpu_at + u * gpu_st);\n\
             #pragma unroll\n\
             for (int u = 0; u < {LOADS}; ++u) {{\n\
                 if (gpu_at + u * gpu_st >= gpu_nv) break;\n\
                 {tc} gpu_v[{vw}];\n\
                 memcpy(gpu_v, &gpu_w[u], sizeof(gpu_v));\n\
                 #pragma unroll\n\
                 for (int k = 0; k < {vw}; ++k) {body}\n\
             }}\n\
         }}\n\
         for (unsigned long long i = gpu_nv * {vw}ull + gpu_t; i < n; i += gpu_st) {tail}\n\
         }}\n",
        body = body("gpu_v[k]"),
        tail = body("x[i]"),
    )
}

/// The C type of a block's shared counts: 32 bits, as shared-memory atomics add 32-bit words
/// natively (64-bit ones are a compare-and-swap loop). A block counts at most the elements it
/// reads, at most 2^31 and a block's worth by [`grid_for_bins`].
const COUNT_C: &str = "unsigned int";

/// The grid of a bin kernel over `n` elements: the usual grid, and enough blocks that none
/// reads more than 2^31 elements and a block's worth (its shared counts are [`COUNT_C`]).
fn grid_for_bins(ctx: &Context, n: u64) -> Result<u32> {
    let usual = registry::grid_for(ctx, n.max(1))?;
    Ok(usual.max(n.div_ceil(1 << 31).min(u64::from(u32::MAX >> 1)) as u32))
}

static KERNELS: SourceKernels<(Kernel, DType)> = SourceKernels::new();

fn prepared(ctx: &Context, k: Kernel, t: DType) -> Result<crate::launch::PreparedFunction> {
    KERNELS.prepared(ctx, (k, t), k.name(), || source(k, t))
}

/// The minimum and maximum of `x` (C-contiguous, `n > 0`), combined on the host from each
/// block's.
fn value_range<T: Element, R: crate::types::repr::DeviceRepr + Copy + Default>(
    ctx: &Context,
    x: &impl crate::driver::memory::view::DeviceRead<T>,
    n: u64,
    as_double: bool,
    stream: Option<&Stream>,
    min: fn(R, R) -> R,
    max: fn(R, R) -> R,
) -> Result<(R, R)> {
    let grid = registry::grid_for(ctx, n)?;
    let mut part = DeviceBuffer::<R>::zeros(ctx, 2 * grid as usize)?;
    let f = prepared(ctx, Kernel::Range { as_double }, T::DTYPE)?;
    registry::launch(
        &f,
        grid,
        BLOCK,
        stream,
        &[Arg::U64(n), Arg::input::<T, _>(x), Arg::output(&mut part)],
    )?;
    let v = part.to_vec()?;
    let (mut lo, mut hi) = (v[0], v[1]);
    for p in v.chunks_exact(2).skip(1) {
        lo = min(lo, p[0]);
        hi = max(hi, p[1]);
    }
    Ok((lo, hi))
}

/// `pick(a, b)` (`f64::min` or `f64::max`), NaN if either is.
fn nan_or(a: f64, b: f64, pick: fn(f64, f64) -> f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        pick(a, b)
    }
}

/// NumPy's `linspace(lo, hi, bins + 1, dtype=)` for the edges of `t`'s data, as `f64`.
/// NumPy computes it in the type of `lo` and `hi`: `float64` for a given range (then rounded
/// to the edge type: `float32` for `f32` data, `float16` for `f16`), the data's own type when
/// the range is the data's minimum and maximum (`in_data_type`; each operation rounded, as
/// NumPy's `float32` and `float16` arithmetic is).
pub(crate) fn uniform_edges(lo: f64, hi: f64, bins: usize, t: DType, in_data_type: bool) -> Vec<f64> {
    let round = |v: f64| match t {
        DType::F32 => v as f32 as f64,
        DType::F16 => half::f16::from_f64(v).to_f64(),
        DType::Bf16 => half::bf16::from_f64(v).to_f64(),
        _ => v,
    };
    let small = matches!(t, DType::F32 | DType::F16 | DType::Bf16);
    let r = |v: f64| if in_data_type && small { round(v) } else { v };
    let step = r(r(hi - lo) / bins as f64);
    (0..=bins)
        .map(|i| {
            round(if i == bins {
                hi
            } else {
                r(r(r(i as f64) * step) + lo)
            })
        })
        .collect()
}

/// Checks explicit edges: at least two, non-decreasing.
pub(crate) fn check_edges(edges: &[f64]) -> Result<()> {
    if edges.len() < 2 {
        return Err(ArrayShapeError::HistogramEdges {
            index: edges.len(),
            value: f64::NAN,
        }
        .into());
    }
    for (i, w) in edges.windows(2).enumerate() {
        // NaN and the infinities fail the finiteness check.
        if w[0] > w[1] || !w[1].is_finite() || !w[0].is_finite() {
            return Err(ArrayShapeError::HistogramEdges {
                index: i + 1,
                value: w[1],
            }
            .into());
        }
    }
    Ok(())
}

impl<S: Storage<Elem: IndexElement>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The number of times each value `0..len` occurs among this 1-d array's elements (NumPy's
        /// `bincount(x, minlength=)`; another number of axes is [`ArrayShapeError::Dimension`]): `len` is the largest value plus
        /// one, at least `minlength`. A negative value is [`ArrayShapeError::NegativeValue`].
        /// Waits for the largest value, which sizes the result.
        fn bincount(&self, minlength: usize) -> Result<DeviceArray<i64, Ix1>>;

        /// The sums of `weights` by this array's values (NumPy's `bincount(x, weights, minlength)`):
        /// `out[v]` is the sum of `weights[i]` where `x[i] == v`, in `f64` (each weight converted
        /// to `f64`, as NumPy casts them). `weights` has this array's shape; complex weights are
        /// [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement), as
        /// NumPy refuses to cast them.
        fn bincount_weighted[SW: Storage<Elem: Element>, DW: Dimension](
            &self,
            weights: &DeviceArrayBase<SW, DW>,
            minlength: usize,
        ) -> Result<DeviceArray<f64, Ix1>>;
    }
}

impl<S: Storage<Elem: IndexElement>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`bincount`](DeviceArrayBase::bincount) on this stream.
    pub fn bincount(&self, minlength: usize) -> Result<DeviceArray<i64, Ix1>> {
        let mut out = None;
        bincount_stream::<S, D, S, D>(self.target, None, minlength, self.stream, &mut out, &mut None)?;
        filled(out, "DeviceArray::bincount", "a result of counts")
    }

    /// [`bincount_weighted`](DeviceArrayBase::bincount_weighted) on this stream.
    pub fn bincount_weighted<SW: Storage<Elem: Element>, DW: Dimension>(
        &self,
        weights: &DeviceArrayBase<SW, DW>,
        minlength: usize,
    ) -> Result<DeviceArray<f64, Ix1>> {
        let mut out = None;
        bincount_stream(
            self.target,
            Some(weights),
            minlength,
            self.stream,
            &mut None,
            &mut out,
        )?;
        filled(out, "DeviceArray::bincount_weighted", "a result of sums")
    }
}

/// The result `count_or_sum` filled in, or [`Error::Internal`](crate::error::Error::Internal)
/// naming `operation` and the result it did not fill (`broken`).
fn filled<T>(out: Option<T>, operation: &'static str, broken: &'static str) -> Result<T> {
    out.ok_or(crate::error::Error::Internal { operation, broken })
}

/// Refuses complex weights, as NumPy's `bincount` does (its sums are `f64`; a conversion would
/// drop the imaginary parts unseen), then weights of another shape than the data `a`'s
/// ([`ArrayShapeError::ElementCounts`]), which they pair with element by element.
fn check_weights<S, D, SW, DW>(
    operation: &'static str,
    kernel: &'static str,
    a: &DeviceArrayBase<S, D>,
    weights: &DeviceArrayBase<SW, DW>,
) -> Result<()>
where
    S: Storage,
    D: Dimension,
    SW: Storage<Elem: Element>,
    DW: Dimension,
{
    if SW::Elem::DTYPE.is_complex() {
        return Err(crate::error::ArgumentError::UndefinedOnElement {
            kernel: kernel.into(),
            function: operation.into(),
            element: SW::Elem::c_name(),
        }
        .into());
    }
    if weights.shape() == a.shape() {
        return Ok(());
    }
    Err(ArrayShapeError::ElementCounts {
        operation,
        first: a.len(),
        second: weights.len(),
    }
    .into())
}

/// `bincount` of `x` (C-contiguous, `n > 0` values) in one pass over it
/// ([`Kernel::BincountSmall`]), when its largest value is below [`SMALL_BINS`]; `None` when
/// it is not (the caller counts them again, sized by the maximum). The negative and too large
/// values are refused as the general path refuses them, by the minimum and maximum read back
/// here, as the general path reads back its range: one wait either way.
fn bincount_small<T: IndexElement>(
    ctx: &Context,
    x: &impl crate::driver::memory::view::DeviceRead<T>,
    n: u64,
    minlength: usize,
    stream: Option<&Stream>,
) -> Result<Option<DeviceArray<i64, Ix1>>> {
    let small = SMALL_BINS as usize;
    // The counts, then the minimum and maximum; all start at 0 (see the kernel).
    let mut part = DeviceArray::<i64, Ix1>::zeros(ctx, small + 2)?;
    let f = prepared(ctx, Kernel::BincountSmall, T::DTYPE)?;
    registry::launch(
        &f,
        grid_for_resident_bins(ctx, n)?,
        BLOCK,
        stream,
        &[Arg::U64(n), Arg::input::<T, _>(x), Arg::output(&mut part)],
    )?;
    // Waits for the launch on `stream`, as every read of an array does.
    let range = part.slice(ndarray::s![small..])?.to_vec()?;
    let (lo, hi) = (range[0], range[1]);
    not_negative(lo)?;
    if hi as u64 >= SMALL_BINS {
        return Ok(None);
    }
    let bins = minlength.max(hi as usize + 1);
    if bins <= small {
        // The pass's own counts are the result (those past the largest value are its zeros):
        // no copy, the array keeps the pass's buffer, SMALL_BINS + 2 elements.
        return Ok(Some(part.slice_move(ndarray::s![..bins])?));
    }
    let mut out = DeviceArray::<i64, Ix1>::zeros(ctx, bins)?;
    let k = bins.min(small);
    OnStream::new(&mut out.slice_mut(ndarray::s![..k])?, stream).copy_from(&part.slice(ndarray::s![..k])?)?;
    Ok(Some(out))
}

/// Refuses the smallest value `lo` of `bincount`'s data when it is negative.
fn not_negative(lo: i64) -> Result<()> {
    if lo < 0 {
        return Err(ArrayShapeError::NegativeValue {
            operation: "DeviceArray::bincount",
            value: lo,
        }
        .into());
    }
    Ok(())
}

fn bincount_stream<S, D, SW, DW>(
    a: &DeviceArrayBase<S, D>,
    weights: Option<&DeviceArrayBase<SW, DW>>,
    minlength: usize,
    stream: Option<&Stream>,
    counts: &mut Option<DeviceArray<i64, Ix1>>,
    sums: &mut Option<DeviceArray<f64, Ix1>>,
) -> Result<()>
where
    S: Storage<Elem: IndexElement>,
    D: Dimension,
    SW: Storage<Elem: Element>,
    DW: Dimension,
{
    const OP: &str = "DeviceArray::bincount";
    if a.ndim() != 1 {
        // NumPy's "object too deep/of too small depth for desired array".
        return Err(ArrayShapeError::Dimension {
            axes: a.ndim(),
            fixed: 1,
        }
        .into());
    }
    if let Some(w) = weights {
        check_weights("DeviceArray::bincount_weighted", "gpu_bincount", a, w)?;
    }
    let ctx = a.context().clone();
    let n = a.len() as u64;
    let flat = OnStream::new(a, stream).c_order()?;
    let x = flat.view();
    if n > 0 && weights.is_none() {
        if let Some(out) = bincount_small::<S::Elem>(&ctx, &x, n, minlength, stream)? {
            *counts = Some(out);
            return Ok(());
        }
    }
    let mut bins = minlength;
    if n > 0 {
        let (lo, hi) = value_range::<S::Elem, i64>(&ctx, &x, n, false, stream, i64::min, i64::max)?;
        not_negative(lo)?;
        if hi == i64::MAX || hi as u64 >= usize::MAX as u64 {
            return Err(ArrayShapeError::ValueTooLarge {
                operation: OP,
                value: hi as u64,
            }
            .into());
        }
        bins = bins.max(hi as usize + 1);
    }
    let grid = grid_for_bins(&ctx, n)?;
    let weights = weights.map(|w| OnStream::new(w, stream));
    count_or_sum(&ctx, n, bins, weights, counts, sums, |out, w| {
        let k = Kernel::Bincount {
            weights: w.as_ref().map(|_| SW::Elem::DTYPE),
        };
        let f = prepared(&ctx, k, S::Elem::DTYPE)?;
        let (n_arg, x_arg, bins_arg) = (Arg::U64(n), Arg::input::<S::Elem, _>(&x), Arg::I64(bins as i64));
        match w {
            None => registry::launch(&f, grid, BLOCK, stream, &[n_arg, x_arg, out, bins_arg]),
            Some(w) => registry::launch(&f, grid, BLOCK, stream, &[n_arg, x_arg, w, out, bins_arg]),
        }
    })
}

/// Counts `n` values into `len` bins, or sums their `weights` by bin: the result is new zeros
/// (`i64` counts into `counts`, or with weights `f64` sums into `sums`), which `launch` (called
/// only for `n > 0` values) adds into, given the result's output argument and, weighted, the
/// weights' (in C order). So the two forms of `bincount` and of `histogram` differ only in
/// their kernels and arguments.
fn count_or_sum<SW: Storage<Elem: Element>, DW: Dimension>(
    ctx: &Context,
    n: u64,
    len: usize,
    weights: Option<OnStream<'_, &DeviceArrayBase<SW, DW>>>,
    counts: &mut Option<DeviceArray<i64, Ix1>>,
    sums: &mut Option<DeviceArray<f64, Ix1>>,
    launch: impl FnOnce(Arg<'_>, Option<Arg<'_>>) -> Result<()>,
) -> Result<()> {
    match weights {
        None => {
            let mut out = DeviceArray::<i64, Ix1>::zeros(ctx, len)?;
            if n > 0 {
                launch(Arg::output(&mut out), None)?;
            }
            *counts = Some(out);
        }
        Some(w) => {
            let mut out = DeviceArray::<f64, Ix1>::zeros(ctx, len)?;
            if n > 0 {
                let w_flat = w.c_order()?;
                let wv = w_flat.view();
                launch(Arg::output(&mut out), Some(Arg::input::<SW::Elem, _>(&wv)))?;
            }
            *sums = Some(out);
        }
    }
    Ok(())
}

impl<S: Storage<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// The histogram of the flattened array (NumPy's `histogram(a, bins=, range=)`): the
        /// count of each bin (`i64`) and the bins' edges (`f64`; see [`Bins`] for their values).
        /// Values outside the edges, and NaN, are not counted; the last bin includes its right
        /// edge. Numbers are compared as `f64` (a complex number by its real part). Without a
        /// range, waits for the data's minimum and maximum (NaN among them, or an infinity, is
        /// [`ArrayShapeError::HistogramRange`], as NumPy refuses it).
        ///
        /// ```no_run
        /// use gpu_runtime::gpuarray::{Bins, DeviceArray};
        /// let ctx = gpu_runtime::Context::default()?;
        /// let a = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr1(&[1.0f64, 2.0, 2.0, 4.0]))?;
        /// let (counts, edges) = a.histogram(Bins::Count { bins: 3, range: None })?;
        /// assert_eq!(counts.to_vec()?, [1, 2, 1]);
        /// assert_eq!(edges.to_vec()?, [1.0, 2.0, 3.0, 4.0]);
        /// # Ok::<(), gpu_runtime::Error>(())
        /// ```
        fn histogram(&self, bins: Bins<'_>)
            -> Result<(DeviceArray<i64, Ix1>, DeviceArray<f64, Ix1>)>;

        /// [`histogram`](Self::histogram) with `weights` (NumPy's `histogram(a, bins, weights=)`):
        /// each bin holds the sum of the weights of its elements, in `f64` (each weight converted
        /// to `f64`), beside the same edges. `weights` has this array's shape (else
        /// [`ArrayShapeError::ElementCounts`]); it pairs with the elements in C order. Complex
        /// weights are [`ArgumentError::UndefinedOnElement`](crate::error::ArgumentError::UndefinedOnElement)
        /// (NumPy sums them as complex numbers; these sums are `f64`). For NumPy's
        /// `density=True`, pass either result to
        /// [`histogram_density`](crate::gpuarray::histogram_density).
        fn histogram_weighted[SW: Storage<Elem: Element>, DW: Dimension](
            &self,
            bins: Bins<'_>,
            weights: &DeviceArrayBase<SW, DW>,
        ) -> Result<(DeviceArray<f64, Ix1>, DeviceArray<f64, Ix1>)>;
    }
}

impl<S: Storage<Elem: Element>, D: Dimension> OnStream<'_, &DeviceArrayBase<S, D>> {
    /// [`histogram`](DeviceArrayBase::histogram) on this stream.
    pub fn histogram(&self, bins: Bins<'_>) -> Result<(DeviceArray<i64, Ix1>, DeviceArray<f64, Ix1>)> {
        let (mut counts, mut sums) = (None, None);
        let edges = self.histogram_into::<S, D>(bins, None, &mut counts, &mut sums)?;
        let counts = filled(counts, "DeviceArray::histogram", "a result of counts")?;
        Ok((counts, edges))
    }

    /// [`histogram_weighted`](DeviceArrayBase::histogram_weighted) on this stream.
    pub fn histogram_weighted<SW: Storage<Elem: Element>, DW: Dimension>(
        &self,
        bins: Bins<'_>,
        weights: &DeviceArrayBase<SW, DW>,
    ) -> Result<(DeviceArray<f64, Ix1>, DeviceArray<f64, Ix1>)> {
        check_weights(
            "DeviceArray::histogram_weighted",
            "gpu_histogram_weighted",
            self.target,
            weights,
        )?;
        let (mut counts, mut sums) = (None, None);
        let edges = self.histogram_into(bins, Some(weights), &mut counts, &mut sums)?;
        let sums = filled(sums, "DeviceArray::histogram_weighted", "a result of sums")?;
        Ok((sums, edges))
    }

    /// The edges of `bins`, and the counts (no `weights`) or the sums of `weights` by bin;
    /// returns the edges.
    fn histogram_into<SW: Storage<Elem: Element>, DW: Dimension>(
        &self,
        bins: Bins<'_>,
        weights: Option<&DeviceArrayBase<SW, DW>>,
        counts: &mut Option<DeviceArray<i64, Ix1>>,
        sums: &mut Option<DeviceArray<f64, Ix1>>,
    ) -> Result<DeviceArray<f64, Ix1>> {
        let (a, stream) = (self.target, self.stream);
        let ctx = a.context().clone();
        let n = a.len() as u64;
        let flat = OnStream::new(a, stream).c_order()?;
        let x = flat.view();
        let t = S::Elem::DTYPE;
        let (edges, uniform) = match bins {
            Bins::Edges(e) => {
                check_edges(e)?;
                (e.to_vec(), false)
            }
            Bins::Count { bins, range } => {
                let in_data_type = range.is_none();
                let (mut lo, mut hi) = match range {
                    Some(r) => r,
                    None if n == 0 => (0.0, 1.0),
                    // NaN wins, as NumPy's `min` and `max` of the data.
                    None => {
                        let (min, max) = (|a, b| nan_or(a, b, f64::min), |a, b| nan_or(a, b, f64::max));
                        value_range::<S::Elem, f64>(&ctx, &x, n, true, stream, min, max)?
                    }
                };
                if bins == 0 || lo > hi || !lo.is_finite() || !hi.is_finite() {
                    return Err(ArrayShapeError::HistogramRange {
                        bins,
                        low: lo,
                        high: hi,
                    }
                    .into());
                }
                if lo == hi {
                    // In the data's type when the range is the data's (NumPy's scalars).
                    let r = |v: f64| uniform_edges(v, v, 1, t, in_data_type)[0];
                    lo = r(lo - 0.5);
                    hi = r(hi + 0.5);
                }
                (uniform_edges(lo, hi, bins, t, in_data_type), true)
            }
        };
        let nbins = edges.len() - 1;
        let edges_d = DeviceArray::<f64, Ix1>::from_ndarray(&ctx, &ndarray::Array1::from_vec(edges.clone()))?;
        let norm = nbins as f64 / (edges[nbins] - edges[0]);
        // The bin placement's parameters, after the output (see the kernel).
        let (p_bins, p_uniform, p_norm, p_tol) = (
            Arg::I64(nbins as i64),
            Arg::I32(i32::from(uniform && norm.is_finite())),
            Arg::F64(if norm.is_finite() { norm } else { 0.0 }),
            Arg::F64(if norm.is_finite() && n > 0 {
                fast_tolerance(&edges, norm, t)
            } else {
                2.0
            }),
        );
        let weights = weights.map(|w| OnStream::new(w, stream));
        count_or_sum(&ctx, n, nbins, weights, counts, sums, |out, w| {
            let (n_arg, x_arg, e_arg) = (
                Arg::U64(n),
                Arg::input::<S::Elem, _>(&x),
                Arg::input::<f64, _>(&edges_d),
            );
            match w {
                None => {
                    let f = prepared(&ctx, Kernel::Histogram, t)?;
                    let args = [n_arg, x_arg, e_arg, out, p_bins, p_uniform, p_norm, p_tol];
                    registry::launch(&f, grid_for_resident_bins(&ctx, n)?, BLOCK, stream, &args)
                }
                Some(w) => {
                    let k = Kernel::HistogramWeighted {
                        weights: SW::Elem::DTYPE,
                    };
                    let f = prepared(&ctx, k, t)?;
                    let args = [n_arg, x_arg, w, e_arg, out, p_bins, p_uniform, p_norm, p_tol];
                    registry::launch(&f, grid_for_bins(&ctx, n)?, BLOCK, stream, &args)
                }
            }
        })?;
        Ok(edges_d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bin_kernels_compile_for_every_element_type() {
        let ints = [
            DType::I8,
            DType::U8,
            DType::I16,
            DType::U16,
            DType::I32,
            DType::U32,
            DType::I64,
            DType::U64,
        ];
        let reals = [
            DType::F16,
            DType::Bf16,
            DType::F32,
            DType::F64,
            DType::Bool,
            DType::Complex64,
        ];
        let mut sources = Vec::new();
        for t in ints {
            sources.push(source(Kernel::Range { as_double: false }, t));
            sources.push(source(Kernel::Bincount { weights: None }, t));
            sources.push(source(
                Kernel::Bincount {
                    weights: Some(DType::F32),
                },
                t,
            ));
            sources.push(source(Kernel::Histogram, t));
            sources.push(source(Kernel::HistogramWeighted { weights: DType::F32 }, t));
            sources.push(source(Kernel::Range { as_double: true }, t));
            sources.push(source(Kernel::BincountSmall, t));
        }
        for t in reals {
            sources.push(source(Kernel::Histogram, t));
            sources.push(source(Kernel::HistogramWeighted { weights: t }, t));
            sources.push(source(Kernel::Range { as_double: true }, t));
            sources.push(source(Kernel::Bincount { weights: Some(t) }, DType::I32));
        }
        // Each source stands alone (they are compiled together below, where one's headers
        // would hide another's missing ones).
        for s in &sources {
            for (ty, header) in [("__half", "cuda_fp16.h"), ("__nv_bfloat16", "cuda_bf16.h")] {
                assert!(
                    !s.contains(ty) || s.contains(header),
                    "{ty} without {header}:\n{s}"
                );
            }
        }
        let all: String = sources
            .iter()
            .enumerate()
            .map(|(k, s)| {
                for name in [
                    "gpu_value_range",
                    "gpu_bincount",
                    "gpu_histogram",
                    "gpu_histogram_weighted",
                    "gpu_bincount_small",
                ] {
                    if let Ok(decl) = gpu_cuda_source::find_kernel(s, name) {
                        let want = match name {
                            "gpu_value_range" | "gpu_bincount_small" => 3,
                            "gpu_histogram" => 8,
                            "gpu_histogram_weighted" => 9,
                            _ if s.contains("const double *") || s.contains("w[i]") => 5,
                            _ => 4,
                        };
                        assert_eq!(decl.params.len(), want, "{name}");
                    }
                }
                // The one-pass kernels' names follow their `__launch_bounds__`.
                s.replace("void gpu_", &format!("void k{k}_gpu_"))
                    .replace(") gpu_histogram(", &format!(") k{k}_gpu_histogram("))
                    .replace(") gpu_bincount_small(", &format!(") k{k}_gpu_bincount_small("))
            })
            .collect::<Vec<_>>()
            .join("\n");
        if let Err(e) = registry::compile_check(&all, "sm_90") {
            panic!("{e}");
        }
    }

    #[test]
    fn the_one_pass_kernels_declare_what_their_launches_pass() {
        // Their `__launch_bounds__` sits between `void` and the name: the declaration that
        // each launch is checked against is still found.
        let decl = |k: Kernel| {
            gpu_cuda_source::find_kernel(&source(k, DType::F32), k.name())
                .unwrap()
                .params
                .len()
        };
        assert_eq!(decl(Kernel::Histogram), 8);
        let s = source(Kernel::BincountSmall, DType::I32);
        assert_eq!(
            gpu_cuda_source::find_kernel(&s, "gpu_bincount_small")
                .unwrap()
                .params
                .len(),
            3
        );
    }

    #[test]
    fn uniform_edges_are_numpys_linspace_in_the_edge_type() {
        assert_eq!(
            uniform_edges(0.0, 1.0, 4, DType::F64, true),
            [0.0, 0.25, 0.5, 0.75, 1.0]
        );
        // np.histogram(np.float32([0, 1]), 3, range=(0, 1))[1]: float32(1/3), float32(2/3).
        let e = uniform_edges(0.0, 1.0, 3, DType::F32, false);
        assert_eq!(e[1], (1.0f64 / 3.0) as f32 as f64);
        assert_eq!(e[3], 1.0);
        // Without a range, in float32: step = float32(1/3), edge 2 = float32(2 * step).
        let e = uniform_edges(0.0, 1.0, 3, DType::F32, true);
        assert_eq!(e[2], (2.0f32 * (1.0f32 / 3.0)) as f64);
        let e = uniform_edges(-0.1, 0.1, 2, DType::F64, false);
        assert_eq!(e, [-0.1, 0.0, 0.1]);
    }

    /// The kernel's fraction test, replayed here in `f32` as the kernel computes it: wherever
    /// it takes the estimate, the estimate is the bin the edges give (searchsorted, the last bin
    /// closed), for values at every edge, one `f32` step either side of it, and between.
    #[test]
    fn the_fast_bin_estimate_agrees_with_the_edges_wherever_it_is_taken() {
        let cases: [(f64, f64, usize, bool); 6] = [
            (0.0, 1.0, 100, false),
            (-3.3, 17.1, 1000, false),
            (1000.0, 1000.5, 7, false),
            (-1e-3, 2e-3, 3, true),
            (0.1, 0.7, 10, true),
            (-5.0, 5.0, 1024, false),
        ];
        let mut taken = 0usize;
        for (lo, hi, bins, in_data_type) in cases {
            let edges = uniform_edges(lo, hi, bins, DType::F32, in_data_type);
            let norm = bins as f64 / (edges[bins] - edges[0]);
            let tol = fast_tolerance(&edges, norm, DType::F32);
            assert!(tol < 0.25, "{lo} {hi} {bins}: {tol}");
            let (lo_f, norm_f, tol_f) = (edges[0] as f32, norm as f32, tol as f32);
            let by_edges = |v: f32| {
                let v = f64::from(v);
                let k = edges.partition_point(|&e| e <= v);
                (k - 1).min(bins - 1)
            };
            let mut values: Vec<f32> = Vec::new();
            for &e in &edges {
                let e = e as f32;
                values.extend([e, e.next_up(), e.next_down()]);
            }
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                values.push((lo + (hi - lo) * (x >> 11) as f64 / (1u64 << 53) as f64) as f32);
            }
            let hi_f = edges[bins] as f32;
            for v in values.into_iter().filter(|&v| v >= lo_f && v <= hi_f) {
                let f = (v - lo_f) * norm_f;
                let fl = f.floor();
                let fr = f - fl;
                if fr >= tol_f && fr <= 1.0 - tol_f && fl < bins as f32 {
                    taken += 1;
                    assert_eq!(fl as usize, by_edges(v), "{v} in {lo}..{hi}, {bins} bins");
                }
            }
        }
        assert!(taken > 100_000, "the estimate was taken {taken} times");
        // A range narrow beside its magnitude: every value goes to the edges.
        let edges = uniform_edges(1e6, 1e6 + 1.0, 1000, DType::F32, false);
        let norm = 1000.0 / (edges[1000] - edges[0]);
        assert_eq!(fast_tolerance(&edges, norm, DType::F32), 2.0);
    }

    #[test]
    fn explicit_edges_must_increase() {
        assert!(check_edges(&[0.0, 1.0, 1.0, 2.0]).is_ok());
        assert!(check_edges(&[0.0]).is_err());
        assert!(check_edges(&[1.0, 0.0]).is_err());
        assert!(check_edges(&[0.0, f64::NAN]).is_err());
    }
}
