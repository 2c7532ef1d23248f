//! A Jacobi solver for the tridiagonal system `4 x[i] - x[i-1] - x[i+1] = b[i]`, iterated to
//! convergence two ways, with its CPU reference: the host loop (each iteration launches its
//! kernels and copies the residual back to test it, one round trip per iteration) and the GPU
//! loop (one graph launch: a `while` conditional node whose body ends in a kernel that tests
//! the residual and sets the loop's condition). `examples/graph_solver/main.rs` (whose module this is), the report bench
//! and `tests/suite/gpu_loops.rs` use it.
//!
//! One iteration is two sweeps (x -> y -> x), the residual's maximum (as the bits of a
//! non-negative float, with `atomicMax`) and the test, which also counts the iterations and
//! keeps the residual it tested.

use gpu_runtime::launch::{
    cudaGraphConditionalHandle, Capture, GraphBuffer, GraphBuilder, GraphExec, GraphInput,
};
use gpu_runtime::{kernel, Context, DeviceBuffer, Result, Stream};

// One sweep: out = (b + left + right) / 4 (bit for bit what `sweep_cpu` computes).
#[kernel(
    r#"
__global__ void jacobi_sweep(float *out, const float *in, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float left = i > 0 ? in[i - 1] : 0.0f;
    float right = i + 1 < n ? in[i + 1] : 0.0f;
    out[i] = (b[i] + left + right) * 0.25f;
}"#
)]
fn jacobi_sweep(#[len = n] out: &mut [f32], #[len = n] input: &[f32], #[len = n] b: &[f32], n: i32);

// max |4 x[i] - x[i-1] - x[i+1] - b[i]| into `res` (the bits of a non-negative float order as
// unsigned integers): one atomic per warp.
#[kernel(
    r#"
__global__ void jacobi_residual(unsigned int *res, const float *x, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float r = 0.0f;
    if (i < n) {
        float left = i > 0 ? x[i - 1] : 0.0f;
        float right = i + 1 < n ? x[i + 1] : 0.0f;
        r = fabsf(4.0f * x[i] - left - right - b[i]);
    }
    for (int o = 16; o > 0; o >>= 1) r = fmaxf(r, __shfl_down_sync(0xffffffffu, r, o));
    if ((threadIdx.x & 31) == 0) atomicMax(res, __float_as_uint(r));
}"#
)]
fn jacobi_residual(#[len = 1] res: &mut [u32], #[len = n] x: &[f32], #[len = n] b: &[f32], n: i32);

// The GPU loop's test: counts the iteration, keeps the residual in `last`, clears it for the
// next iteration, and goes on while it is above `tol` and fewer than `max_iters` ran.
#[kernel(
    r#"
#include <gpu_runtime/graph.h>
__global__ void jacobi_continue(cudaGraphConditionalHandle loop, unsigned int *res, int *iters,
                                float *last, float tol, int max_iters) {
    float r = __uint_as_float(*res);
    int k = ++*iters;
    *last = r;
    *res = 0u;
    cudaGraphSetConditional(loop, (r > tol && k < max_iters) ? 1u : 0u);
}"#
)]
fn jacobi_continue(
    loop_: cudaGraphConditionalHandle,
    #[len = 1] res: &mut [u32],
    #[len = 1] iters: &mut [i32],
    #[len = 1] last: &mut [f32],
    tol: f32,
    max_iters: i32,
);

// The host loop's bookkeeping: the same, without the condition (the host tests `last`).
#[kernel(
    r#"
__global__ void jacobi_record(unsigned int *res, int *iters, float *last) {
    ++*iters;
    *last = __uint_as_float(*res);
    *res = 0u;
}"#
)]
fn jacobi_record(#[len = 1] res: &mut [u32], #[len = 1] iters: &mut [i32], #[len = 1] last: &mut [f32]);

/// The threads per block of every sweep.
const BLOCK: u32 = 256;

/// What a solve ends with: the iterate, the iterations run and the last residual tested.
#[derive(Debug, Clone)]
pub struct Solved {
    /// The solution's last iterate.
    pub x: Vec<f32>,
    /// Iterations run (two sweeps each).
    pub iterations: i32,
    /// The residual tested after the last iteration.
    pub residual: f32,
}

/// One sweep on the CPU.
pub fn sweep_cpu(out: &mut [f32], input: &[f32], b: &[f32]) {
    let n = input.len();
    for i in 0..n {
        let left = if i > 0 { input[i - 1] } else { 0.0 };
        let right = if i + 1 < n { input[i + 1] } else { 0.0 };
        out[i] = (b[i] + left + right) * 0.25;
    }
}

/// The residual's maximum on the CPU.
pub fn residual_cpu(x: &[f32], b: &[f32]) -> f32 {
    let n = x.len();
    (0..n)
        .map(|i| {
            let left = if i > 0 { x[i - 1] } else { 0.0 };
            let right = if i + 1 < n { x[i + 1] } else { 0.0 };
            (4.0 * x[i] - left - right - b[i]).abs()
        })
        .fold(0.0f32, f32::max)
}

/// The CPU reference: from x = 0, iterations until the residual is at most `tol` or
/// `max_iters` ran; or exactly `exact` iterations when given (to compare with a GPU run that
/// stopped one iteration apart on a residual within rounding of `tol`).
pub fn solve_cpu(b: &[f32], tol: f32, max_iters: i32, exact: Option<i32>) -> Solved {
    let n = b.len();
    let (mut x, mut y) = (vec![0.0f32; n], vec![0.0f32; n]);
    let mut k = 0;
    loop {
        sweep_cpu(&mut y, &x, b);
        sweep_cpu(&mut x, &y, b);
        k += 1;
        let r = residual_cpu(&x, b);
        let done = match exact {
            Some(e) => k >= e,
            None => !(r > tol && k < max_iters),
        };
        if done {
            return Solved {
                x,
                iterations: k,
                residual: r,
            };
        }
    }
}

/// The solver's kernels, prepared once per context.
pub struct Solver {
    sweep: jacobi_sweep::Kernel,
    residual: jacobi_residual::Kernel,
    test: jacobi_continue::Kernel,
    record: jacobi_record::Kernel,
}

/// The device state of one solve: the iterate, the other buffer of the sweeps, the right-hand
/// side, and the residual, iteration count and last residual.
pub struct State {
    /// The iterate.
    pub x: DeviceBuffer<f32>,
    y: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    res: DeviceBuffer<u32>,
    iters: DeviceBuffer<i32>,
    last: DeviceBuffer<f32>,
}

impl State {
    /// x = 0 for the right-hand side `b`.
    pub fn new(ctx: &Context, b: &[f32]) -> Result<State> {
        Ok(State {
            x: ctx.alloc_zeros(b.len())?,
            y: ctx.alloc_zeros(b.len())?,
            b: ctx.to_device(b)?,
            res: ctx.alloc_zeros(1)?,
            iters: ctx.alloc_zeros(1)?,
            last: ctx.alloc_zeros(1)?,
        })
    }

    /// What the solve ended with (waits for it).
    pub fn solved(&self) -> Result<Solved> {
        Ok(Solved {
            x: self.x.to_vec()?,
            iterations: self.iters.to_vec()?[0],
            residual: self.last.to_vec()?[0],
        })
    }
}

impl Solver {
    /// The kernels, compiled and loaded in `ctx`.
    pub fn new(ctx: &Context) -> Result<Solver> {
        Ok(Solver {
            sweep: jacobi_sweep::prepare(ctx)?,
            residual: jacobi_residual::prepare(ctx)?,
            test: jacobi_continue::prepare(ctx)?,
            record: jacobi_record::prepare(ctx)?,
        })
    }

    /// The host loop: per iteration, the sweeps, the residual and its bookkeeping launched on
    /// `stream`, then the residual copied back and tested (a round trip). Returns the
    /// iterations run. The iteration count on the device goes on from what it was.
    pub fn host_loop(&self, s: &mut State, stream: &Stream, tol: f32, max_iters: i32) -> Result<i32> {
        let n = s.b.len() as i32;
        let grid = (n as u32).div_ceil(BLOCK);
        let mut last = [0.0f32];
        let mut k = 0;
        loop {
            self.sweep
                .prepared_async_call(grid, BLOCK, stream, &mut s.y, &s.x, &s.b, n)?;
            self.sweep
                .prepared_async_call(grid, BLOCK, stream, &mut s.x, &s.y, &s.b, n)?;
            self.residual
                .prepared_async_call(grid, BLOCK, stream, &mut s.res, &s.x, &s.b, n)?;
            self.record
                .prepared_async_call(1, 1, stream, &mut s.res, &mut s.iters, &mut s.last)?;
            // The round trip: waits for the iteration, then tests on the host.
            s.last.copy_to_host(&mut last[..])?;
            k += 1;
            if !(last[0] > tol && k < max_iters) {
                return Ok(k);
            }
        }
    }

    /// The GPU loop: a graph that clears the iteration count, then runs iterations in a
    /// `while` node until the residual is at most `tol` or `max_iters` ran, with no host
    /// involved. Each launch solves again from the iterate the last one left. The graph borrows
    /// the state's buffers until it is dropped ([`State::solved`] reads them after).
    pub fn loop_graph<'s>(
        &self,
        ctx: &Context,
        s: &'s mut State,
        tol: f32,
        max_iters: i32,
    ) -> Result<GraphExec<'s>> {
        let n = s.b.len() as i32;
        let grid = (n as u32).div_ceil(BLOCK);
        let bg = GraphInput::new(&s.b);
        let (mut xg, mut yg) = (GraphBuffer::new(&mut s.x), GraphBuffer::new(&mut s.y));
        let (mut res, mut iters, mut last) = (
            GraphBuffer::new(&mut s.res),
            GraphBuffer::new(&mut s.iters),
            GraphBuffer::new(&mut s.last),
        );
        let mut g = GraphBuilder::new(ctx)?;
        // Tested before the first iteration too: start it at 1 on every launch.
        let cond = g.conditional_handle(Some(1))?;
        let clear = g.memset_d32(&[], &mut iters, 0, 1)?;
        // The body, captured as a chain.
        let mut body = Capture::begin(ctx)?;
        self.sweep.capture(&mut body, grid, BLOCK, &mut yg, &xg, &bg, n)?;
        self.sweep.capture(&mut body, grid, BLOCK, &mut xg, &yg, &bg, n)?;
        self.residual
            .capture(&mut body, grid, BLOCK, &mut res, &xg, &bg, n)?;
        self.test.capture(
            &mut body, 1, 1, cond, &mut res, &mut iters, &mut last, tol, max_iters,
        )?;
        g.while_loop(&[clear], cond, body.end()?)?;
        g.build().instantiate()
    }
}
