//! Hugging Face candle's kernels (`tests/realworld/candle/`, copied unchanged), declared with
//! `file = …` alone: no prototypes, though almost all are stamped out by C macros
//! (`UNARY_OP(float, uexp_f32, expg(x))`), each checked against its expansion. The pointers
//! candle passes null are `Option`s: `info` for a contiguous layout, `inp` for an in-place
//! operation, `alpha`/`beta` for a layer norm without them. Shared by realworld_compile.rs
//! (NVRTC) and candle.rs (the GPU, against CPU references).
#![allow(dead_code)]

use gpu_runtime::half::{bf16, f16};
use gpu_runtime::kernel;
use gpu_runtime::types::Fp8E4M3;

#[kernel(file = "realworld/candle/unary.cu")]
pub mod unary {
    fn uexp_f32(numel: usize, num_dims: usize, info: Option<&[usize]>, inp: Option<&[f32]>, out: &mut [f32]);
    fn usqrt_f64(numel: usize, num_dims: usize, info: Option<&[usize]>, inp: Option<&[f64]>, out: &mut [f64]);
    fn uneg_f16(numel: usize, num_dims: usize, info: Option<&[usize]>, inp: Option<&[f16]>, out: &mut [f16]);
    fn urelu_bf16(
        numel: usize,
        num_dims: usize,
        info: Option<&[usize]>,
        inp: Option<&[bf16]>,
        out: &mut [bf16],
    );
    fn upowf_f32(
        numel: usize,
        num_dims: usize,
        info: Option<&[usize]>,
        param: f32,
        inp: Option<&[f32]>,
        out: &mut [f32],
    );
    fn uneg_fp8_e4m3(
        numel: usize,
        num_dims: usize,
        info: Option<&[usize]>,
        inp: Option<&[Fp8E4M3]>,
        out: &mut [Fp8E4M3],
    );
}

#[kernel(file = "realworld/candle/binary.cu")]
pub mod binary {
    fn badd_f32(
        numel: usize,
        num_dims: usize,
        dims_and_strides: Option<&[usize]>,
        lhs: &[f32],
        rhs: &[f32],
        out: &mut [f32],
    );
    fn lt_i64(
        numel: usize,
        num_dims: usize,
        dims_and_strides: Option<&[usize]>,
        lhs: &[i64],
        rhs: &[i64],
        out: &mut [u8],
    );
}

#[kernel(file = "realworld/candle/affine.cu")]
pub mod affine {
    fn affine_f32(
        numel: usize,
        num_dims: usize,
        info: Option<&[usize]>,
        inp: Option<&[f32]>,
        out: &mut [f32],
        mul: f32,
        add: f32,
    );
    fn affine_f8_e4m3(
        numel: usize,
        num_dims: usize,
        info: Option<&[usize]>,
        inp: Option<&[Fp8E4M3]>,
        out: &mut [Fp8E4M3],
        mul: Fp8E4M3,
        add: Fp8E4M3,
    );
}

#[kernel(file = "realworld/candle/cast.cu")]
pub mod cast {
    fn cast_u8_f32(numel: usize, num_dims: usize, info: Option<&[usize]>, inp: &[u8], out: &mut [f32]);
    fn cast_f32_bf16(numel: usize, num_dims: usize, info: Option<&[usize]>, inp: &[f32], out: &mut [bf16]);
}

#[kernel(file = "realworld/candle/fill.cu")]
pub mod fill {
    fn fill_f32(buf: &mut [f32], value: f32, numel: usize);
    fn copy2d_f32(src: &[f32], dst: &mut [f32], d1: u32, d2: u32, src_s: u32, dst_s: u32);
}

#[kernel(file = "realworld/candle/ternary.cu")]
pub mod ternary {
    fn where_u8_f32(
        numel: usize,
        num_dims: usize,
        info: Option<&[usize]>,
        ids: &[u8],
        t: &[f32],
        f: &[f32],
        out: &mut [f32],
    );
}

#[kernel(file = "realworld/candle/indexing.cu")]
pub mod indexing {
    fn is_u32_f32(
        numel: usize,
        num_dims: usize,
        info: Option<&[usize]>,
        ids: &[u32],
        inp: &[f32],
        out: &mut [f32],
        left_size: usize,
        src_dim_size: usize,
        ids_dim_size: usize,
        right_size: usize,
    );
}

#[kernel(file = "realworld/candle/sort.cu")]
pub mod sort {
    fn asort_asc_f32(x: &[f32], dst: &mut [u32], ncols: i32, ncols_pad: i32);
}

// Not compiled at build time: NVRTC rejects reduce.cu as long as the built-in <stdint.h> and
// libcu++'s <cuda/std/cstdint> disagree on `int64_t` (issue 42, part 3, fixed beside this one);
// the declarations are read and checked all the same.
#[kernel(file = "realworld/candle/reduce.cu")]
pub mod reduce {
    fn layernorm_f32(
        src: &[f32],
        dst: &mut [f32],
        alpha: Option<&[f32]>,
        beta: Option<&[f32]>,
        n_cols: i32,
        block_size: i32,
        eps: f32,
    );
    fn softmax_f32(src: &[f32], dst: &mut [f32], n_cols: i32);
}
