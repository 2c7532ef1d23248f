//! A header NVRTC cannot find at build time is not a build error (a directory only the machine
//! that runs the program has may hold it): the build goes on, with a warning that names the
//! header and where the source includes it (GPU_RUNTIME_BUILD_CHECK=require would make it an
//! error). The warning is allowed here, as a passing case prints none; its text names this
//! machine's CUDA header directories, so it is checked by gpu-macros-core's unit tests
//! (deep.rs, corpus_check.rs) rather than by a snapshot.
#![allow(deprecated)]
use gpu_runtime::kernel;

#[kernel(r#"
#include "not_here.cuh"
__global__ void with_header(float *v, int n) { if (n > 0) v[0] = NOT_HERE; }
"#)]
fn with_header(v: &mut [f32], n: i32);

fn main() {
    let _ = with_header::prepare;
}
