//! The CUDA C of a reduction kernel (CuPy's `ReductionKernel`: map, reduce, neutral, post-map),
//! in each of its variants: the grid-stride pass over all axes (contiguous, with aligned vector
//! loads, or strided) that its last block finishes, the one-block pass over partials, and the
//! kernels along one axis (a block, or a thread, per output element; for columns, a thread per
//! output (or per four adjacent outputs, read as vectors) and chunk of the axis, then a thread
//! per output over the chunks' partials). The run time compiles this text for
//! `gpu_runtime::gpuarray::ReductionKernel` (and so for every `#[reduction]` fn and every
//! built-in reduction), and the macro's build-time check compiles the same text, so the kernel
//! checked is the kernel that runs.
//!
//! Each of the user's expressions is preceded by `#line 1 "map"` (`"reduce"`, `"neutral"`,
//! `"post_map"`) and followed by a `#line` back to the generated text's own line, under
//! [`Reduction::file_name`]: the compiler's messages about an expression give its own lines and
//! columns, under its name.
//!
//! ```
//! use gpu_cuda_source::elementwise::{Param, Role};
//! use gpu_cuda_source::reduction::{Reduction, ReductionVariant};
//!
//! let params = [Param::new("x", "float", Role::Input)];
//! let k = Reduction { name: "norm2", params: &params, map: "x * x", reduce: "a + b", neutral: "0.0f",
//!                     post_map: "sqrtf(a)", acc: "float", out: "float", ..Reduction::default() };
//! let cuda = k.source(&[ReductionVariant::Contiguous]);
//! assert!(cuda.contains("extern \"C\" __global__ void norm2_r0(long long n, int gpu_vec, float *gpu_out"));
//! assert!(cuda.contains("(\n#line 1 \"map\"\nx * x\n#line "));
//! ```

use std::fmt::Write as _;

use crate::elementwise::{bind_refs, params_c, strided_index, strides_c, Param, MAX_DIMS, VEC4};

/// Threads per block of every generated kernel's launch (a multiple of the 32 lanes of a warp,
/// which the block reduction `gpu_block` assumes).
pub const BLOCK: u32 = 256;

/// The most blocks (partial results) of a reduction over all axes: the last block reduces them,
/// and the module keeps room for this many.
pub const MAX_PARTS: u32 = 1024;

/// The file name the compiler's messages give the map expression (set by `#line`).
pub const MAP_FILE: &str = "map";
/// The file name of the reduce expression.
pub const REDUCE_FILE: &str = "reduce";
/// The file name of the neutral expression.
pub const NEUTRAL_FILE: &str = "neutral";
/// The file name of the post-map expression.
pub const POST_MAP_FILE: &str = "post_map";

/// The line that the final pass of [`Reduction::source`] turns into a `#line` back to the
/// generated text (no expression holds a `\u{1}`).
const RESTORE: &str = "#line \u{1}";

/// Which kernel of a reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReductionVariant {
    /// Over all axes, every array contiguous in one order (one launch; its last block
    /// finishes).
    Contiguous,
    /// Over all axes, strided over this many axes (one launch, as `Contiguous`).
    Strided(usize),
    /// A one-block pass over partials to the result: the second pass of the former two-pass
    /// reduction over all axes, which `Contiguous` and `Strided` now finish themselves; its
    /// source is still generated (and compiles) for code that names it.
    Final,
    /// Along one axis of arrays of this many axes, a block per output element.
    AxisBlock(usize),
    /// Along one axis of arrays of this many axes, a thread per output element.
    AxisThread(usize),
    /// Along one axis whose lanes are adjacent in memory (columns), of arrays of this many
    /// axes: a thread per output element and chunk of the axis, each writing a partial.
    AxisColumns(usize),
    /// Along one axis of arrays of this many axes, few long lanes: a block per output
    /// element and chunk of the axis, each writing a partial.
    AxisBlockSplit(usize),
    /// The chunks' partials of [`AxisColumns`](Self::AxisColumns) or
    /// [`AxisBlockSplit`](Self::AxisBlockSplit) to the results.
    AxisPartials,
}

impl ReductionVariant {
    /// The variant's number: its kernel's C name ends in `_r{code}`, and the run time's cache
    /// keys it by this.
    pub fn code(self) -> u32 {
        match self {
            ReductionVariant::Contiguous => 0,
            ReductionVariant::Strided(d) => 1 + d as u32,
            ReductionVariant::Final => 20,
            ReductionVariant::AxisBlock(d) => 30 + d as u32,
            ReductionVariant::AxisThread(d) => 40 + d as u32,
            ReductionVariant::AxisColumns(d) => 50 + d as u32,
            ReductionVariant::AxisPartials => 21,
            ReductionVariant::AxisBlockSplit(d) => 60 + d as u32,
        }
    }

    /// Every variant a reduction may be compiled as: those over all axes and along one, for
    /// arrays of 1 to [`MAX_DIMS`] axes.
    pub fn all() -> impl Iterator<Item = ReductionVariant> {
        use ReductionVariant::*;
        let per_ndim = [Strided, AxisBlock, AxisThread, AxisColumns, AxisBlockSplit];
        [Contiguous, Final, AxisPartials]
            .into_iter()
            .chain(per_ndim.into_iter().flat_map(|v| (1..=MAX_DIMS).map(v)))
    }

    /// True for the variants over all axes that their last block finishes (they use the
    /// module's scratch).
    fn finishes_in_last_block(self) -> bool {
        matches!(self, ReductionVariant::Contiguous | ReductionVariant::Strided(_))
    }
}

/// A reduction: its name, arguments (scalars and arrays read), expressions, and types.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reduction<'a> {
    /// The kernel's name, a C identifier; each variant's C name is made from it
    /// ([`kernel_name`](Self::kernel_name)).
    pub name: &'a str,
    /// The arguments, in the order a launch passes them (arrays are read only).
    pub params: &'a [Param<'a>],
    /// What each element maps to: an expression of the arguments (arrays named as their
    /// elements) and `i`, the element's index.
    pub map: &'a str,
    /// How two values combine: an expression of `a` and `b`.
    pub reduce: &'a str,
    /// The value that changes nothing: the result of an empty reduction.
    pub neutral: &'a str,
    /// The result of the reduced value `a` and the count `n`.
    pub post_map: &'a str,
    /// `reduce` of `a` and `b` when every element in `b` comes after every one in `a` and `a`
    /// holds at least one element (a cheaper form where the order settles ties), if any.
    pub in_order: Option<&'a str>,
    /// The accumulator's C type.
    pub acc: &'a str,
    /// C code before the kernels: the `#include`s of the types, the accumulator's definition.
    pub preamble: &'a str,
    /// The result's C type.
    pub out: &'a str,
}

impl Reduction<'_> {
    /// The C name of the kernel of `v` (`NAME_r{code}`).
    pub fn kernel_name(&self, v: ReductionVariant) -> String {
        format!("{}_r{}", self.name, v.code())
    }

    /// The name the generated text has in the compiler's messages (`NAME.cu`), given by the
    /// `#line` after each expression.
    pub fn file_name(&self) -> String {
        format!("{}.cu", self.name)
    }

    /// The source of one module holding the kernels of `variants` (each `extern "C"`), after
    /// the vector type, the preamble, the reduction's functions and (for the variants over all
    /// axes) the module's scratch: what is compiled, with no `extern "C"` added around it.
    pub fn source(&self, variants: &[ReductionVariant]) -> String {
        let acc = self.acc;
        let mut s = String::from(VEC4);
        s.push_str(self.preamble);
        let _ = writeln!(
            s,
            "\n__device__ __forceinline__ {acc} gpu_reduce({acc} a, {acc} b) {{ return {}; }}",
            tag(REDUCE_FILE, self.reduce)
        );
        // In order (see `in_order`), or `gpu_reduce` where there is no cheaper form.
        let _ = writeln!(
            s,
            "__device__ __forceinline__ {acc} gpu_next({acc} a, {acc} b) {{ return ({}); }}",
            self.in_order.unwrap_or("gpu_reduce(a, b)")
        );
        let _ = writeln!(
            s,
            "__device__ __forceinline__ {} gpu_post({acc} a, long long n) {{ (void)n; return {}; }}",
            self.out,
            tag(POST_MAP_FILE, self.post_map)
        );
        // The block's reduction, valid in thread 0: each warp's by shuffles, then the warps'
        // partials by the first warp. A tree through shared memory (eight barriers for 256
        // threads) made a one-launch sum of 2^20 f32 about 0.4 us slower on an H200, twice per
        // launch (each block, then the last one). Word by word, so any accumulator shuffles;
        // the same pairs as a tree (lower lanes on the left), so the order is fixed.
        let _ = writeln!(
            s,
            "__device__ __forceinline__ {acc} gpu_shfl_down({acc} v, int o) {{\n\
             unsigned int w[(sizeof({acc}) + 3) / 4] = {{}}; memcpy(w, &v, sizeof({acc}));\n\
             #pragma unroll\n\
             for (int k = 0; k < (int)((sizeof({acc}) + 3) / 4); ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], o);\n\
             {acc} r = v; memcpy(&r, w, sizeof({acc})); return r; }}\n\
             __device__ __forceinline__ {acc} gpu_block({acc} v) {{\n\
             __shared__ {acc} gpu_s[32];\n\
             for (int o = 16; o > 0; o >>= 1) v = gpu_reduce(v, gpu_shfl_down(v, o));\n\
             __syncthreads();\n\
             if ((threadIdx.x & 31u) == 0) gpu_s[threadIdx.x >> 5] = v;\n\
             __syncthreads();\n\
             if (threadIdx.x < 32) {{\n\
             const unsigned int nw = blockDim.x >> 5;\n\
             if (threadIdx.x < nw) v = gpu_s[threadIdx.x];\n\
             for (int o = 16; o > 0; o >>= 1) {{ {acc} u = gpu_shfl_down(v, o); if (threadIdx.x + o < nw) v = gpu_reduce(v, u); }}\n\
             }}\n\
             return v; }}"
        );
        if variants.iter().any(|v| v.finishes_in_last_block()) {
            s.push_str(&last_block_scratch(acc));
        }
        for &v in variants {
            self.kernel(&mut s, v);
        }
        restore_lines(&s, &self.file_name())
    }

    /// The kernel of `v`.
    fn kernel(&self, s: &mut String, v: ReductionVariant) {
        let acc = self.acc;
        // The block's reduction (`gpu_block`), valid in thread 0.
        let block = format!("const {acc} gpu_red = gpu_block(gpu_acc);\n");
        let head = "long long gpu_t = blockIdx.x * (long long)blockDim.x + threadIdx.x; \
                    long long gpu_nt = (long long)gridDim.x * blockDim.x;\n";
        let params = params_c(self.params);
        let arrays = || self.params.iter().filter(|p| p.is_array());
        let map = tag(MAP_FILE, self.map);
        let neutral = tag(NEUTRAL_FILE, self.neutral);
        let name = self.kernel_name(v);
        let r = self.out;
        // The end of the one-pass reduction over all axes: each block leaves its partial in the
        // module's scratch and takes a ticket; the block that takes the last one (every other
        // partial is then written and, by the ticket's release and acquire, visible) reduces
        // the partials in a fixed order (the result does not depend on timing), stores the
        // result and puts the ticket back to 0 for the next launch, which the module's stream
        // ordering queues after this one (its `__device__` variables make every launch a
        // write of them).
        let last = format!(
            "__shared__ bool gpu_last;\n\
             if (threadIdx.x == 0) {{ (({acc} *)gpu_parts)[blockIdx.x] = gpu_red; gpu_last = gpu_take_ticket() == gridDim.x - 1; }}\n\
             __syncthreads();\nif (!gpu_last) return;\n\
             {{ {acc} gpu_acc = {neutral};\n\
             for (unsigned int gpu_k = threadIdx.x; gpu_k < gridDim.x; gpu_k += blockDim.x) gpu_acc = gpu_reduce(gpu_acc, gpu_ld_part(({acc} *)gpu_parts + gpu_k));\n\
             const {acc} gpu_all = gpu_block(gpu_acc);\n\
             if (threadIdx.x == 0) {{ gpu_out[gpu_out_o] = gpu_post(gpu_all, n); gpu_ticket = 0u; }} }}\n"
        );
        let step = |refs: String| format!("{{ {refs} gpu_acc = gpu_reduce(gpu_acc, {map}); }}");
        // For the kernels along one axis of `d`: the parameters after the user's (the outer
        // axes' shape and strides, then each array's lane-axis stride), the output's index into
        // each array, and the arrays bound at lane element `i`.
        let along = |d: usize| {
            let outer = d.saturating_sub(1);
            let axis: String = arrays().map(|p| format!(", long long {}__sa", p.name)).collect();
            let refs = bind_refs(self.params, |p| {
                format!("{n}__p[{n}__i + i * {n}__sa]", n = p.name)
            });
            let index = strided_index(self.params, outer, "gpu_o");
            (strides_c(self.params, outer) + &axis, index, refs)
        };
        // The body of the vector loop over `gpu_j` (and its end): each array's `gpu_vec4` of the
        // four elements at vector index `gpu_j` from `{n}__{base}`, each element a step.
        let vec_steps = |s: &mut String, base: &str| {
            for p in arrays() {
                let (t, n) = (p.c_type, p.name);
                let _ = writeln!(
                    s,
                    "gpu_vec4<{t}> {n}__v = ((const gpu_vec4<{t}> *)({n}__p + {n}__{base}))[gpu_j];"
                );
            }
            let refs = bind_refs(self.params, |p| format!("{}__v.v[gpu_k]", p.name));
            let _ = writeln!(s, "#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ long long i = 4 * gpu_j + gpu_k; (void)i; {} }}\n}}\ngpu_done = 4 * gpu_nv;\n}}", step(refs));
        };
        let chunk = "const long long gpu_lo = gpu_c * gpu_chunk;\n\
                     const long long gpu_hi = gpu_lo + gpu_chunk < gpu_m ? gpu_lo + gpu_chunk : gpu_m;";
        match v {
            ReductionVariant::Contiguous => {
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long n, int gpu_vec, {r} *gpu_out, long long gpu_out_o{params}) {{\n{head}{acc} gpu_acc = {neutral};\nlong long gpu_done = 0;");
                // Unrolled so that each thread has several loads in flight: one at a time left
                // the first pass of a sum at about 0.7x the copy bandwidth on an H100.
                s.push_str("if (gpu_vec) {\nlong long gpu_nv = n / 4;\n#pragma unroll 4\nfor (long long gpu_j = gpu_t; gpu_j < gpu_nv; gpu_j += gpu_nt) {\n");
                vec_steps(s, "o");
                let refs = bind_refs(self.params, |p| format!("{n}__p[{n}__o + i]", n = p.name));
                let _ = writeln!(
                    s,
                    "for (long long i = gpu_done + gpu_t; i < n; i += gpu_nt) {}",
                    step(refs)
                );
                let _ = writeln!(s, "{block}{last}}}");
            }
            ReductionVariant::Strided(d) => {
                let strides = strides_c(self.params, d);
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long n, {r} *gpu_out, long long gpu_out_o{params}{strides}) {{\n{head}{acc} gpu_acc = {neutral};");
                let index = strided_index(self.params, d, "i");
                let refs = bind_refs(self.params, |p| format!("{n}__p[{n}__i]", n = p.name));
                let _ = writeln!(
                    s,
                    "for (long long i = gpu_t; i < n; i += gpu_nt) {{ {index} {} }}",
                    step(refs)
                );
                let _ = writeln!(s, "{block}{last}}}");
            }
            ReductionVariant::Final => {
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long n, int gpu_parts, const unsigned char *gpu_part, {r} *gpu_out, long long gpu_out_o) {{\n{acc} gpu_acc = {neutral};");
                let _ = writeln!(s, "for (int k = threadIdx.x; k < gpu_parts; k += blockDim.x) gpu_acc = gpu_reduce(gpu_acc, ((const {acc} *)gpu_part)[k]);");
                let _ = writeln!(
                    s,
                    "{block}if (threadIdx.x == 0) gpu_out[gpu_out_o] = gpu_post(gpu_red, n);\n}}"
                );
            }
            ReductionVariant::AxisPartials => {
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, int gpu_chunks, const unsigned char *gpu_part, {r} *gpu_out) {{\n{head}for (long long gpu_o = gpu_t; gpu_o < gpu_nout; gpu_o += gpu_nt) {{\n{acc} gpu_acc = {neutral};");
                let _ = writeln!(s, "for (int gpu_c = 0; gpu_c < gpu_chunks; ++gpu_c) gpu_acc = gpu_reduce(gpu_acc, ((const {acc} *)gpu_part)[gpu_c * gpu_nout + gpu_o]);\ngpu_out[gpu_o] = gpu_post(gpu_acc, gpu_m);\n}}\n}}");
            }
            ReductionVariant::AxisColumns(d) => {
                let (strides, index, refs) = along(d);
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, long long gpu_chunk, long long gpu_cblocks, unsigned char *gpu_part, int gpu_vec{params}{strides}) {{");
                // `gpu_vec` (checked at launch: in every array the lanes' last axis has unit
                // stride and a length that is a multiple of four, and every row of four lanes
                // starts aligned for `gpu_vec4`): each thread takes four adjacent outputs, one
                // vector load per row, so a warp reads 512 adjacent bytes of f32 per row rather
                // than 128, with four rows' worth of loads per instruction of the scalar path.
                let _ = writeln!(s, "const long long gpu_c = blockIdx.x / gpu_cblocks;\n{chunk}");
                let _ = writeln!(s, "if (gpu_vec) {{\nconst long long gpu_o = 4 * ((blockIdx.x % gpu_cblocks) * blockDim.x + threadIdx.x);\nif (gpu_o >= gpu_nout) return;\n{index}{acc} gpu_a[4];\n#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) gpu_a[gpu_k] = {neutral};");
                let loads: String = arrays()
                    .map(|p| {
                        let (t, n) = (p.c_type, p.name);
                        format!("gpu_vec4<{t}> {n}__v = *(const gpu_vec4<{t}> *)({n}__p + {n}__i + i * {n}__sa);\n")
                    })
                    .collect();
                let vrefs = bind_refs(self.params, |p| format!("{}__v.v[gpu_k]", p.name));
                // The chunk's first row by `gpu_reduce` (from the neutral), the rest in order
                // by `gpu_next`: each thread walks its rows upwards.
                let _ = writeln!(s, "if (gpu_lo < gpu_hi) {{ const long long i = gpu_lo;\n{loads}#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ {vrefs} gpu_a[gpu_k] = gpu_reduce(gpu_a[gpu_k], {map}); }}\n}}");
                let _ = writeln!(s, "#pragma unroll 8\nfor (long long i = gpu_lo + 1; i < gpu_hi; ++i) {{\n{loads}#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ {vrefs} gpu_a[gpu_k] = gpu_next(gpu_a[gpu_k], {map}); }}\n}}");
                let _ = writeln!(s, "#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) (({acc} *)gpu_part)[gpu_c * gpu_nout + gpu_o + gpu_k] = gpu_a[gpu_k];\nreturn;\n}}");
                // Block b: the column block b % cblocks (adjacent outputs, adjacent threads) and
                // the chunk of rows b / cblocks.
                let _ = writeln!(s, "const long long gpu_o = (blockIdx.x % gpu_cblocks) * blockDim.x + threadIdx.x;\nif (gpu_o >= gpu_nout) return;");
                let _ = writeln!(s, "{index}{acc} gpu_acc = {neutral};");
                // Eight rows in flight per thread (each a coalesced 128 bytes per warp of f32):
                // four left the column sums of an 8192x8192 f32 matrix at 0.83x the copy
                // bandwidth on an H100. The first row from the neutral, the rest in order.
                let _ = writeln!(
                    s,
                    "if (gpu_lo < gpu_hi) {{ const long long i = gpu_lo; {} }}",
                    step(refs.clone())
                );
                let _ = writeln!(
                    s,
                    "#pragma unroll 8\nfor (long long i = gpu_lo + 1; i < gpu_hi; ++i) {{ {refs} gpu_acc = gpu_next(gpu_acc, {map}); }}"
                );
                let _ = writeln!(s, "(({acc} *)gpu_part)[gpu_c * gpu_nout + gpu_o] = gpu_acc;\n}}");
            }
            ReductionVariant::AxisBlockSplit(d) => {
                let (strides, index, refs) = along(d);
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, long long gpu_chunk, unsigned char *gpu_part{params}{strides}) {{");
                // Block b: the lane b % nout and the chunk b / nout of it.
                let _ = writeln!(s, "const long long gpu_o = blockIdx.x % gpu_nout;\nconst long long gpu_c = blockIdx.x / gpu_nout;");
                let _ = writeln!(s, "{index}{acc} gpu_acc = {neutral};\n{chunk}");
                let _ = writeln!(s, "#pragma unroll 4\nfor (long long i = gpu_lo + threadIdx.x; i < gpu_hi; i += blockDim.x) {}", step(refs));
                let _ = writeln!(s, "{block}if (threadIdx.x == 0) (({acc} *)gpu_part)[gpu_c * gpu_nout + gpu_o] = gpu_red;\n}}");
            }
            ReductionVariant::AxisBlock(d) | ReductionVariant::AxisThread(d) => {
                let (strides, index, refs) = along(d);
                if let ReductionVariant::AxisBlock(_) = v {
                    // `gpu_vec`: every lane is contiguous and starts aligned for `gpu_vec4`
                    // (checked at launch), so a thread reads four elements per load. With one
                    // scalar at a time, four in flight per thread, row sums of an 8192x8192
                    // f32 matrix ran at 0.75x the copy bandwidth on an H100.
                    let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, {r} *gpu_out, int gpu_vec{params}{strides}) {{");
                    let _ = writeln!(s, "for (long long gpu_o = blockIdx.x; gpu_o < gpu_nout; gpu_o += gridDim.x) {{\n{index}{acc} gpu_acc = {neutral};\nlong long gpu_done = 0;");
                    s.push_str("if (gpu_vec) {\nconst long long gpu_nv = gpu_m / 4;\n#pragma unroll 4\nfor (long long gpu_j = threadIdx.x; gpu_j < gpu_nv; gpu_j += blockDim.x) {\n");
                    vec_steps(s, "i");
                    let _ = writeln!(
                        s,
                        "#pragma unroll 4\nfor (long long i = gpu_done + threadIdx.x; i < gpu_m; i += blockDim.x) {}",
                        step(refs)
                    );
                    let _ = writeln!(s, "{block}if (threadIdx.x == 0) gpu_out[gpu_o] = gpu_post(gpu_red, gpu_m);\n__syncthreads();\n}}\n}}");
                } else {
                    let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, {r} *gpu_out{params}{strides}) {{");
                    let _ = writeln!(s, "{head}for (long long gpu_o = gpu_t; gpu_o < gpu_nout; gpu_o += gpu_nt) {{\n{index}{acc} gpu_acc = {neutral};");
                    let _ = writeln!(s, "for (long long i = 0; i < gpu_m; ++i) {}", step(refs));
                    s.push_str("gpu_out[gpu_o] = gpu_post(gpu_acc, gpu_m);\n}\n}\n");
                }
            }
        }
    }
}

/// `expr` in parentheses, on lines of its own numbered from 1 under the name `file`, then a
/// line that [`restore_lines`] turns into a `#line` back to the generated text.
fn tag(file: &str, expr: &str) -> String {
    // The `#line` after it also ends a `//` comment on the expression's last line.
    format!("(\n#line 1 \"{file}\"\n{expr}\n{RESTORE}\n)")
}

/// `source` with each [`RESTORE`] line made `#line N "file"`, N being the line after it: the
/// generated text keeps its own line numbers in the compiler's messages.
fn restore_lines(source: &str, file: &str) -> String {
    let mut out = String::with_capacity(source.len() + 256);
    for (k, line) in source.split_inclusive('\n').enumerate() {
        if line.trim_end_matches('\n') == RESTORE {
            let _ = writeln!(out, "#line {} \"{file}\"", k + 2);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The module scratch of the one-pass reduction over all axes (see `last` in
/// [`Reduction::kernel`]): room for a partial per block (at most [`MAX_PARTS`] blocks), the
/// ticket counter (0 when the module is loaded, and again after each launch), its taking by a
/// block's thread 0 (an acquire-release add at device scope: the block's partial, stored before
/// it, is released, and every block's before it acquired; the last block's other threads read
/// the partials after the barrier that follows, as CUTLASS's semaphore has its block wait), and
/// the load of a partial another block wrote, through L2 (`ld.global.cg`: never a line this
/// multiprocessor's L1 may hold).
fn last_block_scratch(acc: &str) -> String {
    format!(
        "__device__ __align__(16) unsigned char gpu_parts[{MAX_PARTS} * sizeof({acc})];\n\
         __device__ unsigned int gpu_ticket;\n\
         __device__ __forceinline__ unsigned int gpu_take_ticket() {{\n\
         #if __CUDA_ARCH__ >= 700\n\
         unsigned int old; asm volatile(\"atom.add.acq_rel.gpu.u32 %0, [%1], 1;\" : \"=r\"(old) : \"l\"(&gpu_ticket) : \"memory\"); return old;\n\
         #else\n\
         __threadfence(); const unsigned int old = atomicAdd(&gpu_ticket, 1u); __threadfence(); return old;\n\
         #endif\n\
         }}\n\
         template <class T> __device__ __forceinline__ T gpu_ld_part(const T *p) {{\n\
         __align__(16) unsigned char gpu_b[sizeof(T)];\n\
         if (sizeof(T) % 4 == 0) {{ for (int k = 0; k < (int)(sizeof(T) / 4); ++k) ((unsigned int *)gpu_b)[k] = __ldcg((const unsigned int *)p + k); }}\n\
         else {{ for (int k = 0; k < (int)sizeof(T); ++k) gpu_b[k] = ((const volatile unsigned char *)p)[k]; }}\n\
         T r; memcpy(&r, gpu_b, sizeof(T)); return r; }}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::Role;

    const PARAMS: [Param<'static>; 2] = [
        Param::new("s", "float", Role::Scalar),
        Param::new("x", "float", Role::Input),
    ];

    fn kernel() -> Reduction<'static> {
        Reduction {
            name: "k",
            params: &PARAMS,
            map: "x * s // a comment",
            reduce: "a + b",
            neutral: "0.0f",
            post_map: "a / n",
            acc: "float",
            out: "double",
            ..Reduction::default()
        }
    }

    #[test]
    fn each_expression_is_numbered_from_its_own_first_line() {
        let src = kernel().source(&[ReductionVariant::Contiguous]);
        assert!(src.contains("return (\n#line 1 \"reduce\"\na + b\n#line "));
        assert!(src.contains("(\n#line 1 \"post_map\"\na / n\n#line "));
        assert!(src.contains("(\n#line 1 \"map\"\nx * s // a comment\n#line "));
        assert!(src.contains("gpu_acc = (\n#line 1 \"neutral\"\n0.0f\n#line "));
        // Every `#line` back names the line after it, in the generated text's own numbering.
        let lines: Vec<&str> = src.lines().collect();
        let mut back = 0;
        for (k, l) in lines.iter().enumerate() {
            if let Some(rest) = l.strip_prefix("#line ") {
                if let Some(n) = rest.strip_suffix(" \"k.cu\"") {
                    assert_eq!(n.parse::<usize>().unwrap(), k + 2, "{l}");
                    back += 1;
                }
            }
        }
        assert_eq!(back, src.matches("#line 1 \"").count());
        assert!(!src.contains('\u{1}'));
    }

    #[test]
    fn one_module_holds_every_variant_with_the_shared_parts_once() {
        let all: Vec<ReductionVariant> = ReductionVariant::all().collect();
        assert_eq!(all.len(), 3 + 5 * MAX_DIMS);
        let codes: std::collections::HashSet<u32> = all.iter().map(|v| v.code()).collect();
        assert_eq!(codes.len(), all.len(), "every variant has a name of its own");
        let k = kernel();
        let module = k.source(&all);
        for v in &all {
            // Each kernel, as the run time generates it alone, is in the module.
            let alone = k.source(&[*v]);
            let name = format!("void {}(", k.kernel_name(*v));
            assert!(alone.contains(&name) && module.contains(&name), "{name}");
        }
        assert_eq!(module.matches("gpu_reduce(float a, float b)").count(), 1);
        assert_eq!(module.matches("__device__ unsigned int gpu_ticket;").count(), 1);
        let one = k.source(&[ReductionVariant::AxisPartials]);
        assert!(!one.contains("gpu_ticket"));
    }
}
