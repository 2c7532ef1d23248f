//! The kernel files of `tests/corpus/includes/` through `#[kernel(file = …)]`: each includes
//! standard headers (`<stdio.h>`, `<assert.h>`, `<float.h>`, `<math.h>`, `<stdint.h>`), CUDA
//! headers (`<cooperative_groups.h>`, `<cuda_bf16.h>`, `<cuda_fp16.h>`) and `"common.h"` from
//! beside it, so every one is compiled by the build-time check (a CUDA error in one fails the
//! build) and by the run time (tests/suite/corpus_compile.rs).
#![allow(dead_code, non_snake_case)]

use gpu_runtime::half::f16;
use gpu_runtime::kernel;

#[kernel(file = "corpus/includes/layernorm.cu")]
pub fn layernorm_forward(
    out: &mut [f32],
    mean: &mut [f32],
    rstd: &mut [f32],
    inp: &[f32],
    weight: &[f32],
    bias: &[f32],
    N: i32,
    C: i32,
);

#[kernel(file = "corpus/includes/softmax.cu")]
pub fn softmax_forward(out: &mut [f32], inp: &[f32], N: i32, C: i32);

#[kernel(file = "corpus/includes/adamw.cu")]
pub fn adamw_update(
    params: &mut [f32],
    params_half: &mut [f16],
    grads: &[f32],
    m: &mut [f32],
    v: &mut [f32],
    n: i64,
    lr: f32,
    beta1: f32,
    beta2: f32,
    beta1_correction: f32,
    beta2_correction: f32,
    eps: f32,
    weight_decay: f32,
);
