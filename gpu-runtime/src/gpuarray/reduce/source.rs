//! The CUDA C of a [`ReductionKernel`]'s variants: the grid-stride first pass (contiguous,
//! with aligned vector loads, or strided), the one-block second pass, and the kernels along
//! one axis (a block, or a thread, per output element; or, for columns, a thread per output
//! (or per four adjacent outputs, read as vectors) and chunk of the axis, then a thread per
//! output over the chunks' partials).

use std::fmt::Write as _;

use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::codegen::{self, VEC4};
use crate::gpuarray::reduce::kernel::{ReductionKernel, ReductionVariant};

impl<R: Element> ReductionKernel<R> {
    /// The CUDA C source of one variant, as it is compiled (with `no_extern_c`).
    pub fn source(&self, v: ReductionVariant) -> String {
        let acc = &self.acc;
        let mut s = String::from(VEC4);
        s.push_str(&self.acc_def);
        let _ = writeln!(
            s,
            "\n__device__ __forceinline__ {acc} gpu_reduce({acc} a, {acc} b) {{ return ({}); }}",
            self.reduce
        );
        // In order (see `in_order`), or `gpu_reduce` where there is no cheaper form.
        let _ = writeln!(
            s,
            "__device__ __forceinline__ {acc} gpu_next({acc} a, {acc} b) {{ return ({}); }}",
            self.in_order.as_deref().unwrap_or("gpu_reduce(a, b)")
        );
        let _ = writeln!(
            s,
            "__device__ __forceinline__ {} gpu_post({acc} a, long long n) {{ (void)n; return ({}); }}",
            R::c_name(),
            self.post
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
        let block = "const ".to_owned() + acc + " gpu_red = gpu_block(gpu_acc);\n";
        let head = "long long gpu_t = blockIdx.x * (long long)blockDim.x + threadIdx.x; \
                    long long gpu_nt = (long long)gridDim.x * blockDim.x;\n";
        let params = codegen::params_c(&self.params);
        let (map, neutral, name) = (&self.map, &self.neutral, self.c_name(v));
        let r = R::c_name();
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
             {{ {acc} gpu_acc = ({neutral});\n\
             for (unsigned int gpu_k = threadIdx.x; gpu_k < gridDim.x; gpu_k += blockDim.x) gpu_acc = gpu_reduce(gpu_acc, gpu_ld_part(({acc} *)gpu_parts + gpu_k));\n\
             const {acc} gpu_all = gpu_block(gpu_acc);\n\
             if (threadIdx.x == 0) {{ gpu_out[gpu_out_o] = gpu_post(gpu_all, n); gpu_ticket = 0u; }} }}\n"
        );
        let step = |refs: String| format!("{{ {refs} gpu_acc = gpu_reduce(gpu_acc, ({map})); }}");
        match v {
            ReductionVariant::Contiguous => {
                s.push_str(&last_block_scratch(acc));
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long n, int gpu_vec, {r} *gpu_out, long long gpu_out_o{params}) {{\n{head}{acc} gpu_acc = ({neutral});\nlong long gpu_done = 0;");
                // Unrolled so that each thread has several loads in flight: one at a time left
                // the first pass of a sum at about 0.7x the copy bandwidth on an H100.
                s.push_str("if (gpu_vec) {\nlong long gpu_nv = n / 4;\n#pragma unroll 4\nfor (long long gpu_j = gpu_t; gpu_j < gpu_nv; gpu_j += gpu_nt) {\n");
                for p in self.params.iter().filter(|p| p.array) {
                    let (t, n) = (codegen::c_type(p), &p.name);
                    let _ = writeln!(
                        s,
                        "gpu_vec4<{t}> {n}__v = ((const gpu_vec4<{t}> *)({n}__p + {n}__o))[gpu_j];"
                    );
                }
                let refs = codegen::bind_refs(&self.params, |p| format!("{}__v.v[gpu_k]", p.name));
                let _ = writeln!(s, "#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ long long i = 4 * gpu_j + gpu_k; (void)i; {} }}\n}}\ngpu_done = 4 * gpu_nv;\n}}", step(refs));
                let refs = codegen::bind_refs(&self.params, |p| format!("{n}__p[{n}__o + i]", n = p.name));
                let _ = writeln!(
                    s,
                    "for (long long i = gpu_done + gpu_t; i < n; i += gpu_nt) {}",
                    step(refs)
                );
                let _ = writeln!(s, "{block}{last}}}");
            }
            ReductionVariant::Strided(d) => {
                let strides = codegen::strides_c(&self.params, d);
                s.push_str(&last_block_scratch(acc));
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long n, {r} *gpu_out, long long gpu_out_o{params}{strides}) {{\n{head}{acc} gpu_acc = ({neutral});");
                let index = codegen::strided_index(&self.params, d, "i");
                let refs = codegen::bind_refs(&self.params, |p| format!("{n}__p[{n}__i]", n = p.name));
                let _ = writeln!(
                    s,
                    "for (long long i = gpu_t; i < n; i += gpu_nt) {{ {index} {} }}",
                    step(refs)
                );
                let _ = writeln!(s, "{block}{last}}}");
            }
            ReductionVariant::Final => {
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long n, int gpu_parts, const unsigned char *gpu_part, {r} *gpu_out, long long gpu_out_o) {{\n{acc} gpu_acc = ({neutral});");
                let _ = writeln!(s, "for (int k = threadIdx.x; k < gpu_parts; k += blockDim.x) gpu_acc = gpu_reduce(gpu_acc, ((const {acc} *)gpu_part)[k]);");
                let _ = writeln!(
                    s,
                    "{block}if (threadIdx.x == 0) gpu_out[gpu_out_o] = gpu_post(gpu_red, n);\n}}"
                );
            }
            ReductionVariant::AxisPartials => {
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, int gpu_chunks, const unsigned char *gpu_part, {r} *gpu_out) {{\n{head}for (long long gpu_o = gpu_t; gpu_o < gpu_nout; gpu_o += gpu_nt) {{\n{acc} gpu_acc = ({neutral});");
                let _ = writeln!(s, "for (int gpu_c = 0; gpu_c < gpu_chunks; ++gpu_c) gpu_acc = gpu_reduce(gpu_acc, ((const {acc} *)gpu_part)[gpu_c * gpu_nout + gpu_o]);\ngpu_out[gpu_o] = gpu_post(gpu_acc, gpu_m);\n}}\n}}");
            }
            ReductionVariant::AxisColumns(d) => {
                let outer = d.saturating_sub(1);
                let strides = codegen::strides_c(&self.params, outer);
                let axis: String = self
                    .params
                    .iter()
                    .filter(|p| p.array)
                    .map(|p| format!(", long long {}__sa", p.name))
                    .collect();
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, long long gpu_chunk, long long gpu_cblocks, unsigned char *gpu_part, int gpu_vec{params}{strides}{axis}) {{");
                let index = codegen::strided_index(&self.params, outer, "gpu_o");
                // `gpu_vec` (checked at launch: in every array the lanes' last axis has unit
                // stride and a length that is a multiple of four, and every row of four lanes
                // starts aligned for `gpu_vec4`): each thread takes four adjacent outputs, one
                // vector load per row, so a warp reads 512 adjacent bytes of f32 per row rather
                // than 128, with four rows' worth of loads per instruction of the scalar path.
                let _ = writeln!(s, "const long long gpu_c = blockIdx.x / gpu_cblocks;\nconst long long gpu_lo = gpu_c * gpu_chunk;\nconst long long gpu_hi = gpu_lo + gpu_chunk < gpu_m ? gpu_lo + gpu_chunk : gpu_m;");
                let _ = writeln!(s, "if (gpu_vec) {{\nconst long long gpu_o = 4 * ((blockIdx.x % gpu_cblocks) * blockDim.x + threadIdx.x);\nif (gpu_o >= gpu_nout) return;\n{index}{acc} gpu_a[4];\n#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) gpu_a[gpu_k] = ({neutral});");
                let loads: String = self
                    .params
                    .iter()
                    .filter(|p| p.array)
                    .map(|p| {
                        let (t, n) = (codegen::c_type(p), &p.name);
                        format!("gpu_vec4<{t}> {n}__v = *(const gpu_vec4<{t}> *)({n}__p + {n}__i + i * {n}__sa);\n")
                    })
                    .collect();
                let vrefs = codegen::bind_refs(&self.params, |p| format!("{}__v.v[gpu_k]", p.name));
                // The chunk's first row by `gpu_reduce` (from the neutral), the rest in order
                // by `gpu_next`: each thread walks its rows upwards.
                let _ = writeln!(s, "if (gpu_lo < gpu_hi) {{ const long long i = gpu_lo;\n{loads}#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ {vrefs} gpu_a[gpu_k] = gpu_reduce(gpu_a[gpu_k], ({map})); }}\n}}");
                let _ = writeln!(s, "#pragma unroll 8\nfor (long long i = gpu_lo + 1; i < gpu_hi; ++i) {{\n{loads}#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ {vrefs} gpu_a[gpu_k] = gpu_next(gpu_a[gpu_k], ({map})); }}\n}}");
                let _ = writeln!(s, "#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) (({acc} *)gpu_part)[gpu_c * gpu_nout + gpu_o + gpu_k] = gpu_a[gpu_k];\nreturn;\n}}");
                // Block b: the column block b % cblocks (adjacent outputs, adjacent threads) and
                // the chunk of rows b / cblocks.
                let _ = writeln!(s, "const long long gpu_o = (blockIdx.x % gpu_cblocks) * blockDim.x + threadIdx.x;\nif (gpu_o >= gpu_nout) return;");
                let refs = codegen::bind_refs(&self.params, |p| {
                    format!("{n}__p[{n}__i + i * {n}__sa]", n = p.name)
                });
                let _ = writeln!(s, "{index}{acc} gpu_acc = ({neutral});");
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
                    "#pragma unroll 8\nfor (long long i = gpu_lo + 1; i < gpu_hi; ++i) {{ {refs} gpu_acc = gpu_next(gpu_acc, ({map})); }}"
                );
                let _ = writeln!(s, "(({acc} *)gpu_part)[gpu_c * gpu_nout + gpu_o] = gpu_acc;\n}}");
            }
            ReductionVariant::AxisBlockSplit(d) => {
                let outer = d.saturating_sub(1);
                let strides = codegen::strides_c(&self.params, outer);
                let axis: String = self
                    .params
                    .iter()
                    .filter(|p| p.array)
                    .map(|p| format!(", long long {}__sa", p.name))
                    .collect();
                let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, long long gpu_chunk, unsigned char *gpu_part{params}{strides}{axis}) {{");
                // Block b: the lane b % nout and the chunk b / nout of it.
                let _ = writeln!(s, "const long long gpu_o = blockIdx.x % gpu_nout;\nconst long long gpu_c = blockIdx.x / gpu_nout;");
                let index = codegen::strided_index(&self.params, outer, "gpu_o");
                let refs = codegen::bind_refs(&self.params, |p| {
                    format!("{n}__p[{n}__i + i * {n}__sa]", n = p.name)
                });
                let _ = writeln!(s, "{index}{acc} gpu_acc = ({neutral});\nconst long long gpu_lo = gpu_c * gpu_chunk;\nconst long long gpu_hi = gpu_lo + gpu_chunk < gpu_m ? gpu_lo + gpu_chunk : gpu_m;");
                let _ = writeln!(s, "#pragma unroll 4\nfor (long long i = gpu_lo + threadIdx.x; i < gpu_hi; i += blockDim.x) {}", step(refs));
                let _ = writeln!(s, "{block}if (threadIdx.x == 0) (({acc} *)gpu_part)[gpu_c * gpu_nout + gpu_o] = gpu_red;\n}}");
            }
            ReductionVariant::AxisBlock(d) | ReductionVariant::AxisThread(d) => {
                let outer = d.saturating_sub(1);
                let strides = codegen::strides_c(&self.params, outer);
                let axis: String = self
                    .params
                    .iter()
                    .filter(|p| p.array)
                    .map(|p| format!(", long long {}__sa", p.name))
                    .collect();
                let index = codegen::strided_index(&self.params, outer, "gpu_o");
                let refs = codegen::bind_refs(&self.params, |p| {
                    format!("{n}__p[{n}__i + i * {n}__sa]", n = p.name)
                });
                if let ReductionVariant::AxisBlock(_) = v {
                    // `gpu_vec`: every lane is contiguous and starts aligned for `gpu_vec4`
                    // (checked at launch), so a thread reads four elements per load. With one
                    // scalar at a time, four in flight per thread, row sums of an 8192x8192
                    // f32 matrix ran at 0.75x the copy bandwidth on an H100.
                    let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, {r} *gpu_out, int gpu_vec{params}{strides}{axis}) {{");
                    let _ = writeln!(s, "for (long long gpu_o = blockIdx.x; gpu_o < gpu_nout; gpu_o += gridDim.x) {{\n{index}{acc} gpu_acc = ({neutral});\nlong long gpu_done = 0;");
                    s.push_str("if (gpu_vec) {\nconst long long gpu_nv = gpu_m / 4;\n#pragma unroll 4\nfor (long long gpu_j = threadIdx.x; gpu_j < gpu_nv; gpu_j += blockDim.x) {\n");
                    for p in self.params.iter().filter(|p| p.array) {
                        let (t, n) = (codegen::c_type(p), &p.name);
                        let _ = writeln!(
                            s,
                            "gpu_vec4<{t}> {n}__v = ((const gpu_vec4<{t}> *)({n}__p + {n}__i))[gpu_j];"
                        );
                    }
                    let vrefs = codegen::bind_refs(&self.params, |p| format!("{}__v.v[gpu_k]", p.name));
                    let _ = writeln!(s, "#pragma unroll\nfor (int gpu_k = 0; gpu_k < 4; ++gpu_k) {{ long long i = 4 * gpu_j + gpu_k; (void)i; {} }}\n}}\ngpu_done = 4 * gpu_nv;\n}}", step(vrefs));
                    let _ = writeln!(
                        s,
                        "#pragma unroll 4\nfor (long long i = gpu_done + threadIdx.x; i < gpu_m; i += blockDim.x) {}",
                        step(refs)
                    );
                    let _ = writeln!(s, "{block}if (threadIdx.x == 0) gpu_out[gpu_o] = gpu_post(gpu_red, gpu_m);\n__syncthreads();\n}}\n}}");
                } else {
                    let _ = writeln!(s, "extern \"C\" __global__ void {name}(long long gpu_m, long long gpu_nout, {r} *gpu_out{params}{strides}{axis}) {{");
                    let _ = writeln!(s, "{head}for (long long gpu_o = gpu_t; gpu_o < gpu_nout; gpu_o += gpu_nt) {{\n{index}{acc} gpu_acc = ({neutral});");
                    let _ = writeln!(s, "for (long long i = 0; i < gpu_m; ++i) {}", step(refs));
                    s.push_str("gpu_out[gpu_o] = gpu_post(gpu_acc, gpu_m);\n}\n}\n");
                }
            }
        }
        s
    }
}

/// The module scratch of the one-pass reduction over all axes (see `last` in
/// [`ReductionKernel::source`]): room for a partial per block (at most
/// [`MAX_PARTS`](crate::gpuarray::reduce::kernel::MAX_PARTS) blocks), the ticket counter (0
/// when the module is loaded, and again after each launch), its taking by a block's thread 0
/// (an acquire-release add at device scope: the block's partial, stored before it, is released,
/// and every block's before it acquired; the last block's other threads read the partials
/// after the barrier that follows, as CUTLASS's semaphore has its block wait), and the load of
/// a partial another block wrote, through L2 (`ld.global.cg`: never a line this
/// multiprocessor's L1 may hold).
fn last_block_scratch(acc: &str) -> String {
    use crate::gpuarray::reduce::kernel::MAX_PARTS;
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
