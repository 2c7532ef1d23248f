//! Jacobi iterations for a tridiagonal system, captured once as a CUDA graph and launched many
//! times, checked against the same iterations on the CPU. Then the same solver iterated to
//! convergence twice: with the loop on the host (a round trip per iteration to test the
//! residual) and with the loop on the GPU (one graph launch: a `while` conditional node whose
//! last kernel tests the residual), both checked against the CPU (the module `solver`, solver.rs beside this file).
//!
//! `cargo run --release --example graph_solver`: needs an NVIDIA GPU (CUDA 12.3 or later). On
//! a machine without one it says so in one sentence and exits with status 1, as it does when
//! the GPU's result differs from the CPU's.

use std::time::Instant;

// The solver iterated to convergence, with its CPU reference: solver.rs beside this file.
mod solver;

use gpu_runtime::launch::{Capture, GraphBuffer, GraphInput};
use gpu_runtime::{kernel, Context, Stream};
use solver::{solve_cpu, Solver, State};

// One Jacobi sweep for 4 x[i] - x[i-1] - x[i+1] = b[i]: out = (b + left + right) / 4.
#[kernel(
    r#"
__global__ void jacobi(float *out, const float *in, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float left = i > 0 ? in[i - 1] : 0.0f;
    float right = i + 1 < n ? in[i + 1] : 0.0f;
    out[i] = (b[i] + left + right) * 0.25f;
}"#
)]
fn jacobi(#[len = n] out: &mut [f32], #[len = n] input: &[f32], #[len = n] b: &[f32], n: i32);

fn jacobi_cpu(out: &mut [f32], input: &[f32], b: &[f32]) {
    let n = input.len();
    for i in 0..n {
        let left = if i > 0 { input[i - 1] } else { 0.0 };
        let right = if i + 1 < n { input[i + 1] } else { 0.0 };
        out[i] = (b[i] + left + right) * 0.25;
    }
}

fn main() -> std::process::ExitCode {
    run_example("graph_solver", || {
        let ctx = Context::default()?;
        let n: usize = 1 << 20;
        let (block, grid) = (256u32, (n as u32).div_ceil(256));
        // Each graph launch is `STEPS` sweeps, ping-ponging between x and y.
        const STEPS: usize = 20;
        let launches = 50;
        let mut rng = Rng::new(7);
        let b = rng.vec_f32(n);
        let kernel = jacobi::prepare(&ctx)?;
        let bd = ctx.to_device(&b)?;
        let mut x = ctx.alloc_zeros::<f32>(n)?;
        let mut y = ctx.alloc_zeros::<f32>(n)?;
        let stream = Stream::new(&ctx)?;

        let elapsed = {
            let bg = GraphInput::new(&bd);
            let (mut xg, mut yg) = (GraphBuffer::new(&mut x), GraphBuffer::new(&mut y));
            let mut cap = Capture::begin(&ctx)?;
            for _ in 0..STEPS / 2 {
                kernel.capture(&mut cap, grid, block, &mut yg, &xg, &bg, n as i32)?;
                kernel.capture(&mut cap, grid, block, &mut xg, &yg, &bg, n as i32)?;
            }
            let mut solver = cap.end()?.instantiate()?;
            let t = Instant::now();
            for _ in 0..launches {
                solver.launch(&stream)?;
            }
            stream.synchronize()?;
            t.elapsed()
        };
        // The graph is gone: x is ours again (reading it waits for the last launch).
        let got = x.to_vec()?;

        let (mut xc, mut yc) = (vec![0.0f32; n], vec![0.0f32; n]);
        for _ in 0..launches * STEPS / 2 {
            jacobi_cpu(&mut yc, &xc, &b);
            jacobi_cpu(&mut xc, &yc, &b);
        }
        mismatch_error("Jacobi iterations from a graph", &got, &xc, 1e-5)?;
        // The residual of the last iterate, to show the iteration converges.
        let residual = (0..n)
            .map(|i| {
                let left = if i > 0 { xc[i - 1] } else { 0.0 };
                let right = if i + 1 < n { xc[i + 1] } else { 0.0 };
                (4.0 * xc[i] - left - right - b[i]).abs()
            })
            .fold(0.0f32, f32::max);
        println!(
            "graph_solver on {}: {} sweeps of {n} unknowns in {launches} graph launches ({:.2} us per sweep), results match the CPU; max residual {residual:.2e}",
            ctx.device().name()?,
            launches * STEPS,
            elapsed.as_secs_f64() * 1e6 / (launches * STEPS) as f64,
        );
        converge(&ctx, &b[..1 << 16])
    })
}

/// The solver to convergence, looped by the host and by the GPU, against the CPU.
fn converge(ctx: &Context, b: &[f32]) -> Result<(), Box<dyn std::error::Error>> {
    let (tol, max_iters) = (1e-5f32, 1000);
    let solver = Solver::new(ctx)?;
    let stream = Stream::new(ctx)?;
    let cpu = solve_cpu(b, tol, max_iters, None);

    let mut host = State::new(ctx, b)?;
    let t = Instant::now();
    let iterations = solver.host_loop(&mut host, &stream, tol, max_iters)?;
    let host_time = t.elapsed();

    let mut gpu = State::new(ctx, b)?;
    let gpu_time = {
        let mut exec = solver.loop_graph(ctx, &mut gpu, tol, max_iters)?;
        let t = Instant::now();
        exec.launch(&stream)?;
        stream.synchronize()?;
        t.elapsed()
    };
    let got = gpu.solved()?;
    // The GPU's residual (with fused multiply-adds) may stop it one iteration apart from the
    // CPU's when a residual is within rounding of `tol`: compare after as many iterations.
    let same = solve_cpu(b, tol, max_iters, Some(got.iterations));
    mismatch_error("the Jacobi solver looped on the GPU", &got.x, &same.x, 1e-5)?;
    if iterations != got.iterations {
        return Err(format!(
            "the host loop ran {iterations} iterations but the GPU loop {}",
            got.iterations
        )
        .into());
    }
    mismatch_error(
        "the Jacobi solver looped on the host",
        &host.solved()?.x,
        &got.x,
        0.0,
    )?;
    println!(
        "graph_solver to convergence ({} unknowns, tolerance {tol:e}): {} iterations on the GPU \
         ({} on the CPU, {iterations} looped by the host), residual {:.2e}; host loop {:.1} us \
         per iteration, GPU loop {:.1} us per iteration; results match the CPU",
        b.len(),
        got.iterations,
        cpu.iterations,
        got.residual,
        host_time.as_secs_f64() * 1e6 / iterations as f64,
        gpu_time.as_secs_f64() * 1e6 / got.iterations.max(1) as f64,
    );
    Ok(())
}

// The example's own checking helpers (a copy of this file in another crate needs nothing else).

/// Runs the example's body: on failure (no GPU, a compile error, or results that differ from the
/// CPU reference) prints the error in one sentence and exits with status 1.
fn run_example(
    name: &str,
    body: impl FnOnce() -> Result<(), Box<dyn std::error::Error>>,
) -> std::process::ExitCode {
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error naming the first element where the GPU's `got` and the CPU's `want` differ by more
/// than `tol * (1 + |want|)` (a NaN differs from everything).
fn mismatch_error(what: &str, got: &[f32], want: &[f32], tol: f32) -> Result<(), Box<dyn std::error::Error>> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements on the GPU but {} on the CPU",
            got.len(),
            want.len()
        )
        .into());
    }
    let differs = |(g, w): (&f32, &f32)| {
        let d = (g - w).abs();
        g != w && (d.is_nan() || d >= tol * (1.0 + w.abs()))
    };
    match got.iter().zip(want).position(differs) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i} is {} on the GPU but {} on the CPU",
            got[i], want[i]
        )
        .into()),
    }
}

/// A small seeded xorshift generator: reproducible random data without a dependency.
struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A float uniform in `[-1, 1)`.
    fn f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// `n` floats uniform in `[-1, 1)`.
    fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}
