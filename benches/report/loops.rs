//! Loops on the GPU: the Jacobi solver of `gpu_suite::solver` (two sweeps, the residual and its
//! test per iteration, 65,536 unknowns), a fixed number of iterations looped by the GPU (one
//! graph launch, a `while` conditional node) against the same iterations looped by the host
//! (four launches and a 4-byte copy back per iteration, to test the residual), interleaved in
//! rounds.

use std::time::{Duration, Instant};

use gpu_runtime::{Context, Stream};
use gpu_suite::solver::{Solver, State};
use gpu_suite::Rng;

use crate::graph::{median, ratios, ROUNDS};
use crate::table::Row;

const UNKNOWNS: usize = 1 << 16;
const ITERATIONS: i32 = 200;
/// Below every residual: both loops run exactly `ITERATIONS` iterations.
const NEVER: f32 = -1.0;

fn per_second(d: Duration) -> f64 {
    ITERATIONS as f64 / d.as_secs_f64()
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let solver = Solver::new(ctx)?;
    let stream = Stream::new(ctx)?;
    let b = Rng::new(11).vec_f32(UNKNOWNS);
    let mut on_gpu = State::new(ctx, &b)?;
    let mut on_host = State::new(ctx, &b)?;
    let mut exec = solver.loop_graph(ctx, &mut on_gpu, NEVER, ITERATIONS)?;
    let (mut gpu, mut host) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        stream.synchronize()?;
        let t = Instant::now();
        exec.launch(&stream)?;
        stream.synchronize()?;
        let t_gpu = t.elapsed();
        let t = Instant::now();
        let k = solver.host_loop(&mut on_host, &stream, NEVER, ITERATIONS)?;
        let t_host = t.elapsed();
        assert_eq!(k, ITERATIONS, "the host loop stops at its iteration limit");
        // The first round warms up.
        if round > 0 {
            gpu.push(t_gpu);
            host.push(t_host);
        }
    }
    drop(exec);
    assert_eq!(
        on_gpu.solved()?.iterations,
        ITERATIONS,
        "the GPU loop stops at its iteration limit"
    );
    Ok(vec![Row {
        figure: "Jacobi solver (65,536 unknowns), iterations per second: loop on the GPU (one graph launch, while node)",
        raw: "loop on the host: 4 launches + a 4-byte copy back per iteration",
        ours: per_second(median(&gpu)),
        theirs: per_second(median(&host)),
        unit: "it/s",
        higher_is_better: true,
        target: "no host round trip",
        rounds: ratios(&gpu, &host),
    }])
}
