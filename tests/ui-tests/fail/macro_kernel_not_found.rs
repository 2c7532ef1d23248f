//! candle's unary.cu (unchanged) declares its kernels through macros (`UNARY_OP(float,
//! uexp_f32, expg(x))`): they are read expanded, so a name it does not make gets the names
//! close to it and the macros; one in a group of an `#if` not taken says where and why. (The
//! path climbs out of trybuild's project to the repository, as in `pass/file_source.rs`.)
use gpu_runtime::kernel;

#[kernel(file = "../../../../tests/realworld/candle/unary.cu", check = false)]
fn uexp_f3(numel: usize);

#[kernel(file = "../../../../tests/realworld/candle/unary.cu", options = ["-arch=sm_75"], check = false)]
fn ucopy_bf16(numel: usize);

#[kernel(file = "../../../../tests/realworld/candle/unary.cu", check = false)]
fn uexp_f32(numel: usize, num_dims: usize, info: Option<&[usize]>, inp: Option<&[f64]>, out: &mut [f32]);

fn main() {}
