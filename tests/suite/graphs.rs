//! CUDA graphs from typed calls, on a GPU: captured and built graphs launched many times,
//! typed node updates, and the stream-ordered lifetimes of the memory a graph uses, each
//! checked against a CPU reference on random data.
//!
//! `cargo test --test suite -- --ignored graphs::` on a GPU machine.

use gpu_runtime::launch::{Capture, GraphBuffer, GraphBuilder, GraphInput};
use gpu_runtime::{kernel, Error, Event, GraphError, Stream};
use gpu_suite::{assert_close, Rng};

use crate::common::ctx;

#[kernel(
    r#"
__device__ void wait_cycles(long long cycles) {
    if (cycles <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

// acc = a * acc + x
__global__ void accum(float *acc, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] = a * acc[i] + x[i];
}

// y = a * x
__global__ void scale(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

// c = a + b
__global__ void add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Waits, then writes y[i] = v.
__global__ void late_fill(float *y, float v, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}
"#
)]
mod k {
    fn accum(acc: &mut [f32], #[len = n] x: &[f32], a: f32, n: i32);
    fn scale(y: &mut [f32], #[len = n] x: &[f32], a: f32, n: i32);
    fn add(c: &mut [f32], #[len = n] a: &[f32], #[len = n] b: &[f32], n: i32);
    fn late_fill(#[len = n] y: &mut [f32], v: f32, n: i32, cycles: i64);
}

const N: usize = 100_003;
const BLOCK: u32 = 256;
const GRID: u32 = (N as u32).div_ceil(BLOCK);

fn accum_cpu(acc: &mut [f32], x: &[f32], a: f32) {
    for (acc, x) in acc.iter_mut().zip(x) {
        *acc = a * *acc + x;
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_captured_graph_launched_many_times_on_two_streams_matches_the_cpu() {
    let ctx = ctx();
    let kern = k::accum::prepare(&ctx).unwrap();
    let mut rng = Rng::new(1);
    let (x, acc0) = (rng.vec_f32(N), rng.vec_f32(N));
    let xd = ctx.to_device(&x).unwrap();
    let mut acc = ctx.to_device(&acc0).unwrap();
    let mut snap = ctx.alloc_zeros::<f32>(N).unwrap();
    let (s1, s2) = (Stream::new(&ctx).unwrap(), Stream::new(&ctx).unwrap());
    let launches = 40;
    {
        let xg = GraphInput::new(&xd);
        let mut accg = GraphBuffer::new(&mut acc);
        let mut snapg = GraphBuffer::new(&mut snap);
        let mut cap = Capture::begin(&ctx).unwrap();
        kern.capture(&mut cap, GRID, BLOCK, &mut accg, &xg, 0.9, N as i32)
            .unwrap();
        kern.capture(&mut cap, GRID, BLOCK, &mut accg, &xg, -0.5, N as i32)
            .unwrap();
        cap.memcpy_dtod(&mut snapg, &accg).unwrap();
        assert_eq!(cap.len(), 3);
        let graph = cap.end().unwrap();
        assert_eq!(graph.allocations(), 3);
        let mut exec = graph.instantiate().unwrap();
        // Alternate streams: each launch must wait for the previous one on the other stream.
        for i in 0..launches {
            exec.launch(if i % 2 == 0 { &s1 } else { &s2 }).unwrap();
        }
    }
    let mut want = acc0;
    for _ in 0..launches {
        accum_cpu(&mut want, &x, 0.9);
        accum_cpu(&mut want, &x, -0.5);
    }
    // No synchronize: reading waits for the graph's last write through the records.
    assert_close(&acc.to_vec().unwrap(), &want, 1e-4);
    assert_close(&snap.to_vec().unwrap(), &want, 1e-4);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_node_updated_with_new_arguments_is_relaunched_without_instantiating_again() {
    let ctx = ctx();
    let kern = k::accum::prepare(&ctx).unwrap();
    let mut rng = Rng::new(2);
    let (x1, x2, acc0) = (rng.vec_f32(N), rng.vec_f32(N), rng.vec_f32(N));
    let (x1d, x2d) = (ctx.to_device(&x1).unwrap(), ctx.to_device(&x2).unwrap());
    let mut acc = ctx.to_device(&acc0).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    {
        let (x1g, x2g) = (GraphInput::new(&x1d), GraphInput::new(&x2d));
        let mut accg = GraphBuffer::new(&mut acc);
        let mut cap = Capture::begin(&ctx).unwrap();
        let node = kern
            .capture(&mut cap, GRID, BLOCK, &mut accg, &x1g, 0.5, N as i32)
            .unwrap();
        let mut exec = cap.end().unwrap().instantiate().unwrap();
        exec.launch(&stream).unwrap();
        kern.update_node(&mut exec, node, GRID, BLOCK, &mut accg, &x2g, 2.0, N as i32)
            .unwrap();
        exec.launch(&stream).unwrap();
        exec.launch(&stream).unwrap();
        // A launch configuration over the limits is refused, and the node keeps its arguments.
        let e = kern
            .update_node(&mut exec, node, GRID, 4096, &mut accg, &x1g, 1.0, N as i32)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidLaunch(_)), "{e}");
        exec.launch(&stream).unwrap();
    }
    let mut want = acc0;
    accum_cpu(&mut want, &x1, 0.5);
    for _ in 0..3 {
        accum_cpu(&mut want, &x2, 2.0);
    }
    assert_close(&acc.to_vec().unwrap(), &want, 1e-4);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_explicit_dag_runs_in_dependency_order_and_refuses_unordered_hazards() {
    let ctx = ctx();
    let (scale, add) = (k::scale::prepare(&ctx).unwrap(), k::add::prepare(&ctx).unwrap());
    let mut rng = Rng::new(3);
    let x = rng.vec_f32(N);
    let xd = ctx.to_device(&x).unwrap();
    let (mut a, mut b, mut c, mut d) = (
        ctx.alloc_zeros::<f32>(N).unwrap(),
        ctx.alloc_zeros::<f32>(N).unwrap(),
        ctx.alloc_zeros::<f32>(N).unwrap(),
        ctx.alloc_zeros::<f32>(N).unwrap(),
    );
    let stream = Stream::new(&ctx).unwrap();
    {
        let xg = GraphInput::new(&xd);
        let (mut ag, mut bg, mut cg, mut dg) = (
            GraphBuffer::new(&mut a),
            GraphBuffer::new(&mut b),
            GraphBuffer::new(&mut c),
            GraphBuffer::new(&mut d),
        );
        let mut g = GraphBuilder::new(&ctx).unwrap();
        // Two independent branches, then a join.
        let n0 = scale
            .graph_node(&mut g, &[], GRID, BLOCK, &mut ag, &xg, 2.0, N as i32)
            .unwrap();
        let n1 = scale
            .graph_node(&mut g, &[], GRID, BLOCK, &mut bg, &xg, 3.0, N as i32)
            .unwrap();
        // Reading `a` without depending on its writer could race: refused, nothing added.
        let e = add
            .graph_node(&mut g, &[n1], GRID, BLOCK, &mut cg, &ag, &bg, N as i32)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Graph(GraphError::Hazard {
                    node: 2,
                    other: 0,
                    both_write: false,
                    ..
                })
            ),
            "{e}"
        );
        assert_eq!(g.len(), 2);
        let n2 = add
            .graph_node(&mut g, &[n0, n1], GRID, BLOCK, &mut cg, &ag, &bg, N as i32)
            .unwrap();
        let n3 = g.memcpy_dtod(&[n2], &mut dg, &cg).unwrap();
        g.memset_d32(&[n3], &mut ag, 0, 16).unwrap();
        let mut exec = g.build().instantiate().unwrap();
        for _ in 0..5 {
            exec.launch(&stream).unwrap();
        }
    }
    let want: Vec<f32> = x.iter().map(|x| 5.0 * x).collect();
    assert_close(&c.to_vec().unwrap(), &want, 1e-5);
    assert_close(&d.to_vec().unwrap(), &want, 1e-5);
    let a_host = a.to_vec().unwrap();
    assert!(a_host[..16].iter().all(|&v| v == 0.0));
    assert_close(
        &a_host[16..],
        &x[16..].iter().map(|x| 2.0 * x).collect::<Vec<_>>(),
        1e-5,
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_buffer_dropped_after_its_graph_waits_for_the_queued_launch_before_reuse() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    let mut rng = Rng::new(4);
    for round in 0..5 {
        let mut y = ctx.alloc_zeros::<f32>(N).unwrap();
        {
            let mut yg = GraphBuffer::new(&mut y);
            let mut cap = Capture::begin(&ctx).unwrap();
            // Long enough (tens of ms) that the launch is still queued when the buffer goes.
            fill.capture(&mut cap, GRID, BLOCK, &mut yg, -7.0, N as i32, 50_000_000)
                .unwrap();
            let mut exec = cap.end().unwrap().instantiate().unwrap();
            exec.launch(&stream).unwrap();
        } // graph and exec dropped with the launch queued
        drop(y);
        // Same size: the allocator would hand the same memory back if it had been freed.
        let want = rng.vec_f32(N);
        let z = ctx.to_device(&want).unwrap();
        stream.synchronize().unwrap();
        assert_close(&z.to_vec().unwrap(), &want, 0.0);
        let _ = round;
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn errors_during_capture_are_typed_and_leave_everything_usable() {
    let ctx = ctx();
    let kern = k::accum::prepare(&ctx).unwrap();
    let mut rng = Rng::new(5);
    let (x, acc0) = (rng.vec_f32(N), rng.vec_f32(N));
    let xd = ctx.to_device(&x).unwrap();
    let short = ctx.to_device(&x[..10]).unwrap();
    let mut acc = ctx.to_device(&acc0).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    {
        let (xg, shortg) = (GraphInput::new(&xd), GraphInput::new(&short));
        let mut accg = GraphBuffer::new(&mut acc);
        let mut cap = Capture::begin(&ctx).unwrap();
        // Refused before the driver: the capture goes on without the node.
        let e = kern
            .capture(&mut cap, GRID, 2048, &mut accg, &xg, 1.0, N as i32)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidLaunch(_)), "{e}");
        let e = kern
            .capture(&mut cap, GRID, BLOCK, &mut accg, &shortg, 1.0, N as i32)
            .unwrap_err();
        assert!(matches!(e, Error::ArgumentTooShort { .. }), "{e}");
        // Work elsewhere while the capture is open, on this thread: synchronous copies and
        // launches on the legacy default stream do not touch the capture's stream.
        let other = ctx.to_device(&x).unwrap();
        assert_close(&other.to_vec().unwrap(), &x, 0.0);
        kern.capture(&mut cap, GRID, BLOCK, &mut accg, &xg, 0.25, N as i32)
            .unwrap();
        let mut exec = cap.end().unwrap().instantiate().unwrap();
        exec.launch(&stream).unwrap();
        // An abandoned capture (dropped without `end`) leaves nothing behind.
        let mut cap = Capture::begin(&ctx).unwrap();
        kern.capture(&mut cap, GRID, BLOCK, &mut accg, &xg, 100.0, N as i32)
            .unwrap();
        drop(cap);
        exec.launch(&stream).unwrap();
    }
    let mut want = acc0;
    accum_cpu(&mut want, &x, 0.25);
    accum_cpu(&mut want, &x, 0.25);
    assert_close(&acc.to_vec().unwrap(), &want, 1e-4);
    // The stream and the context work as before.
    kern.prepared_async_call(GRID, BLOCK, &stream, &mut acc, &xd, 1.0, N as i32)
        .unwrap();
    accum_cpu(&mut want, &x, 1.0);
    assert_close(&acc.to_vec().unwrap(), &want, 1e-4);
}

/// cudarc issue #590: an event recorded while capturing, waited on after the graph was
/// destroyed, failed later in an unrelated call. Here nothing is recorded while capturing.
#[test]
#[ignore = "needs a CUDA GPU"]
fn uses_across_streams_around_a_capture_do_not_leak_events_into_it() {
    let ctx = ctx();
    let kern = k::accum::prepare(&ctx).unwrap();
    let mut rng = Rng::new(6);
    let (x, acc0) = (rng.vec_f32(N), rng.vec_f32(N));
    let xd = ctx.to_device(&x).unwrap();
    let mut acc = ctx.to_device(&acc0).unwrap();
    let mut other = ctx.alloc_zeros::<f32>(N).unwrap();
    let (s1, s2, s3) = (
        Stream::new(&ctx).unwrap(),
        Stream::new(&ctx).unwrap(),
        Stream::new(&ctx).unwrap(),
    );
    let mut want = acc0.clone();
    // `acc` last written on s1, `x` read on s2: a capture using both must record nothing.
    kern.prepared_async_call(GRID, BLOCK, &s1, &mut acc, &xd, 0.5, N as i32)
        .unwrap();
    accum_cpu(&mut want, &x, 0.5);
    kern.prepared_async_call(GRID, BLOCK, &s2, &mut other, &xd, 1.0, N as i32)
        .unwrap();
    let marker = Event::new(&ctx).unwrap();
    for launch in [false, true] {
        let xg = GraphInput::new(&xd);
        let mut accg = GraphBuffer::new(&mut acc);
        let mut cap = Capture::begin(&ctx).unwrap();
        kern.capture(&mut cap, GRID, BLOCK, &mut accg, &xg, 2.0, N as i32)
            .unwrap();
        cap.record_event(&marker).unwrap();
        // Meanwhile `x` is read on s3 by an ordinary launch.
        kern.prepared_async_call(GRID, BLOCK, &s3, &mut other, &xd, 1.0, N as i32)
            .unwrap();
        let graph = cap.end().unwrap();
        if launch {
            let mut exec = graph.instantiate().unwrap();
            exec.launch(&s2).unwrap();
            accum_cpu(&mut want, &x, 2.0);
        }
    }
    // Graphs gone: `acc` is used on a third stream and read; every wait must succeed.
    kern.prepared_async_call(GRID, BLOCK, &s3, &mut acc, &xd, -1.0, N as i32)
        .unwrap();
    accum_cpu(&mut want, &x, -1.0);
    assert_close(&acc.to_vec().unwrap(), &want, 1e-4);
    s1.wait_for_event(&marker).unwrap();
    ctx.synchronize().unwrap();
}
