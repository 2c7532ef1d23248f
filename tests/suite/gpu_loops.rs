//! Loops and branches on the GPU (conditional graph nodes) and programmatic dependent launches
//! (issue 29, parts 1 and 2). On any machine: their kernels compile with NVRTC, with and
//! without `-rdc`, for sm_90, sm_80 and PTX. On a GPU (`cargo test --test suite --
//! --ignored gpu_loops::`): loops, branches and dependent-launch chains checked against the CPU on random
//! data, and the refusals.

use gpu_runtime::compiler::Target;
use gpu_runtime::driver::driver_version;
use gpu_runtime::launch::{
    cudaGraphConditionalHandle, Arg, Capture, Graph, GraphBuffer, GraphBuilder, NodeId,
};
use gpu_runtime::{kernel, Context, Error, GraphError, LaunchConfigError, Stream};
use gpu_suite::solver::{solve_cpu, Solver, State};
use gpu_suite::{assert_close, Rng};

#[kernel(
    r#"
#include <gpu_runtime/graph.h>

// x = 0.5 x + 1
__global__ void halve_add(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 0.5f * x[i] + 1.0f;
}

// Counts the iterations; the loop goes on while fewer than `limit` ran.
__global__ void count_to(cudaGraphConditionalHandle h, int *count, int limit) {
    int k = ++*count;
    cudaGraphSetConditional(h, k < limit ? 1u : 0u);
}

// Sets the condition to `v`.
__global__ void set_condition(cudaGraphConditionalHandle h, unsigned int v) {
    cudaGraphSetConditional(h, v);
}

// x = v
__global__ void fill(float *x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}

// One link of a dependent chain: y = a x + 1, after the kernel before it (which wrote x, or
// reads y) has finished: a dependent launch may start before it does.
__global__ void chain(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    if (i < n) y[i] = a * x[i] + 1.0f;
    cudaTriggerProgrammaticLaunchCompletion();
}
"#
)]
mod k {
    fn halve_add(#[len = n] x: &mut [f32], n: i32);
    fn count_to(h: cudaGraphConditionalHandle, #[len = 1] count: &mut [i32], limit: i32);
    fn set_condition(h: cudaGraphConditionalHandle, v: u32);
    fn fill(#[len = n] x: &mut [f32], v: f32, n: i32);
    fn chain(#[len = n] y: &mut [f32], #[len = n] x: &[f32], a: f32, n: i32);
}

const N: usize = 50_003;
const BLOCK: u32 = 256;
const GRID: u32 = (N as u32).div_ceil(BLOCK);

use crate::common::ctx;

fn driver_at_least(major: u32, minor: u32) -> bool {
    driver_version().expect("the driver's version") >= (major, minor)
}

#[test]
fn the_device_side_compiles_with_nvrtc_without_rdc_for_every_target() {
    let sources = [
        ("halve_add", k::halve_add::source()),
        ("count_to", k::count_to::source()),
        ("chain", k::chain::source()),
    ];
    let targets = [
        Target::Cubin { major: 9, minor: 0 },
        Target::Cubin { major: 8, minor: 0 },
        Target::Ptx { major: 7, minor: 5 },
    ];
    for (name, source) in sources {
        for target in targets {
            let out = source
                .compile(target)
                .unwrap_or_else(|e| panic!("{name} for {target:?}: {e}"));
            assert!(!out.image.is_empty(), "{name} for {target:?}");
        }
    }
    // On sm_90 the dependent-launch functions are the griddepcontrol instructions; below it,
    // nothing (a dependent launch is refused there).
    let ptx90 = k::chain::source()
        .compile(Target::Ptx { major: 9, minor: 0 })
        .expect("chain for compute_90");
    let text = String::from_utf8_lossy(&ptx90.image);
    assert!(text.contains("griddepcontrol.wait"), "{text}");
    assert!(text.contains("griddepcontrol.launch_dependents"), "{text}");
    let ptx75 = k::chain::source()
        .compile(Target::Ptx { major: 7, minor: 5 })
        .expect("chain for compute_75");
    assert!(!String::from_utf8_lossy(&ptx75.image).contains("griddepcontrol"));
    // cudaGraphSetConditional is left to the driver, as printf's vprintf is.
    let ptx = k::count_to::source()
        .compile(Target::Ptx { major: 9, minor: 0 })
        .expect("count_to for compute_90");
    assert!(String::from_utf8_lossy(&ptx.image).contains("cudaGraphSetConditional"));
}

#[test]
fn with_rdc_the_header_defers_to_cudas_own_declarations() {
    let src = r#"
#include <gpu_runtime/graph.h>
extern "C" __global__ void step(cudaGraphConditionalHandle h, float *x) {
    cudaGridDependencySynchronize();
    x[threadIdx.x] += 1.0f;
    cudaTriggerProgrammaticLaunchCompletion();
    if (threadIdx.x == 0) cudaGraphSetConditional(h, 0u);
}"#;
    let out = gpu_runtime::compiler::compile(
        src,
        "rdc.cu",
        &["step"],
        &["-rdc=true"],
        Target::Cubin { major: 9, minor: 0 },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!out.image.is_empty());
}

fn halve_add_cpu(x: &mut [f32], times: usize) {
    for _ in 0..times {
        for v in x.iter_mut() {
            *v = 0.5 * *v + 1.0;
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_while_loop_runs_on_the_gpu_until_its_kernel_clears_the_condition() {
    let ctx = ctx();
    let (step, count) = (
        k::halve_add::prepare(&ctx).unwrap(),
        k::count_to::prepare(&ctx).unwrap(),
    );
    let x0 = Rng::new(1).vec_f32(N);
    let mut x = ctx.to_device(&x0).unwrap();
    let mut c = ctx.alloc_zeros::<i32>(1).unwrap();
    const LIMIT: i32 = 37;
    {
        let (mut xg, mut cg) = (GraphBuffer::new(&mut x), GraphBuffer::new(&mut c));
        let mut g = GraphBuilder::new(&ctx).unwrap();
        let h = g.conditional_handle(Some(1)).unwrap();
        let mut body = GraphBuilder::new(&ctx).unwrap();
        let s = step
            .graph_node(&mut body, &[], GRID, BLOCK, &mut xg, N as i32)
            .unwrap();
        count
            .graph_node(&mut body, &[s], 1, 1, h, &mut cg, LIMIT)
            .unwrap();
        g.while_loop(&[], h, body.build()).unwrap();
        let mut exec = g.build().instantiate().unwrap();
        let stream = Stream::new(&ctx).unwrap();
        // The first launch runs LIMIT iterations; the second starts the condition at 1 again
        // (its default), runs one iteration, whose count (LIMIT + 1) stops it.
        exec.launch(&stream).unwrap();
        exec.launch(&stream).unwrap();
    }
    assert_eq!(c.to_vec().unwrap(), vec![LIMIT + 1]);
    let mut want = x0.clone();
    halve_add_cpu(&mut want, LIMIT as usize + 1);
    assert_close(&x.to_vec().unwrap(), &want, 1e-6);
}

/// `x` after a graph of `set_condition(v)` then a conditional node built by `node` from the
/// bodies `fill(x, values[i])`.
fn branch(
    ctx: &Context,
    v: u32,
    values: &[f32],
    node: impl for<'g> FnOnce(&mut GraphBuilder<'g>, NodeId, cudaGraphConditionalHandle, Vec<Graph<'g>>),
) -> Vec<f32> {
    let (set, fill) = (
        k::set_condition::prepare(ctx).unwrap(),
        k::fill::prepare(ctx).unwrap(),
    );
    let mut x = ctx.to_device(&vec![-1.0f32; N]).unwrap();
    {
        let mut xg = GraphBuffer::new(&mut x);
        let mut g = GraphBuilder::new(ctx).unwrap();
        let h = g.conditional_handle(None).unwrap();
        let first = set.graph_node(&mut g, &[], 1, 1, h, v).unwrap();
        let mut bodies = Vec::new();
        for &value in values {
            let mut b = GraphBuilder::new(ctx).unwrap();
            fill.graph_node(&mut b, &[], GRID, BLOCK, &mut xg, value, N as i32)
                .unwrap();
            bodies.push(b.build());
        }
        node(&mut g, first, h, bodies);
        let mut exec = g.build().instantiate().unwrap();
        exec.launch(&Stream::new(ctx).unwrap()).unwrap();
    }
    x.to_vec().unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn if_runs_its_body_only_when_the_condition_is_set() {
    let ctx = ctx();
    for (v, want) in [(0u32, -1.0f32), (1, 3.0), (7, 3.0)] {
        let got = branch(&ctx, v, &[3.0], |g, first, h, mut b| {
            g.if_then(&[first], h, b.remove(0)).unwrap();
        });
        assert_eq!(got, vec![want; N], "condition {v}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn if_else_and_switch_pick_their_body_by_the_condition() {
    let ctx = ctx();
    if !driver_at_least(12, 8) {
        // Refused with a typed error on older drivers.
        let mut g = GraphBuilder::new(&ctx).unwrap();
        let h = g.conditional_handle(None).unwrap();
        let e = g
            .switch(&[], h, vec![GraphBuilder::new(&ctx).unwrap().build()])
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        return;
    }
    for (v, want) in [(0u32, 2.0f32), (1, 1.0)] {
        let got = branch(&ctx, v, &[1.0, 2.0], |g, first, h, mut b| {
            let otherwise = b.pop().unwrap();
            g.if_else(&[first], h, b.pop().unwrap(), otherwise).unwrap();
        });
        assert_eq!(got, vec![want; N], "if/else on {v}");
    }
    for (v, want) in [(0u32, 10.0f32), (2, 12.0), (5, -1.0)] {
        let got = branch(&ctx, v, &[10.0, 11.0, 12.0], |g, first, h, b| {
            g.switch(&[first], h, b).unwrap();
        });
        assert_eq!(got, vec![want; N], "switch on {v}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn conditional_nodes_refuse_foreign_handles_stream_launches_hazards_and_empty_switches() {
    let ctx = ctx();
    let (set, fill) = (
        k::set_condition::prepare(&ctx).unwrap(),
        k::fill::prepare(&ctx).unwrap(),
    );
    let stream = Stream::new(&ctx).unwrap();
    let mut x = ctx.alloc_zeros::<f32>(N).unwrap();
    let mut xg = GraphBuffer::new(&mut x);
    let mut a = GraphBuilder::new(&ctx).unwrap();
    let mut b = GraphBuilder::new(&ctx).unwrap();
    let ha = a.conditional_handle(Some(0)).unwrap();
    // A handle on a stream: refused before the driver.
    let e = set.prepared_async_call(1, 1, &stream, ha, 1).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    // Another graph's handle.
    let body = GraphBuilder::new(&ctx).unwrap().build();
    let e = b.while_loop(&[], ha, body).unwrap_err();
    assert!(matches!(e, Error::Graph(GraphError::ForeignCondition)), "{e}");
    // No cases.
    let e = a.switch(&[], ha, Vec::new()).unwrap_err();
    assert!(matches!(e, Error::Graph(GraphError::NoCases)), "{e}");
    // A body that writes what an unordered node of the graph writes.
    fill.graph_node(&mut a, &[], GRID, BLOCK, &mut xg, 1.0, N as i32)
        .unwrap();
    let mut body = GraphBuilder::new(&ctx).unwrap();
    fill.graph_node(&mut body, &[], GRID, BLOCK, &mut xg, 2.0, N as i32)
        .unwrap();
    let e = a.if_then(&[], ha, body.build()).unwrap_err();
    assert!(matches!(e, Error::Graph(GraphError::Hazard { .. })), "{e}");
    // Another graph's handle given to a typed kernel node (which records its by-value
    // arguments): the graph is refused before the driver instantiates it, and so is a body of
    // another graph holding it, built or captured, and a node update that passes it.
    for (as_body, captured) in [(false, false), (true, false), (false, true), (true, true)] {
        let body = if captured {
            let mut cap = Capture::begin(&ctx).unwrap();
            set.capture(&mut cap, 1, 1, ha, 1).unwrap();
            cap.end().unwrap()
        } else {
            let mut c = GraphBuilder::new(&ctx).unwrap();
            set.graph_node(&mut c, &[], 1, 1, ha, 1).unwrap();
            c.build()
        };
        let e = if as_body {
            let mut d = GraphBuilder::new(&ctx).unwrap();
            let hd = d.conditional_handle(Some(0)).unwrap();
            d.if_then(&[], hd, body).unwrap();
            d.build().instantiate().unwrap_err()
        } else {
            body.instantiate().unwrap_err()
        };
        assert!(
            matches!(e, Error::Graph(GraphError::ForeignCondition)),
            "body {as_body}, captured {captured}: {e}"
        );
    }
    let mut c = GraphBuilder::new(&ctx).unwrap();
    let hc = c.conditional_handle(Some(0)).unwrap();
    let node = set.graph_node(&mut c, &[], 1, 1, hc, 0).unwrap();
    let mut body = GraphBuilder::new(&ctx).unwrap();
    fill.graph_node(&mut body, &[], GRID, BLOCK, &mut xg, 5.0, N as i32)
        .unwrap();
    c.if_then(&[node], hc, body.build()).unwrap();
    let mut exec = c.build().instantiate().unwrap();
    let e = set.update_node(&mut exec, node, 1, 1, ha, 1).unwrap_err();
    assert!(matches!(e, Error::Graph(GraphError::ForeignCondition)), "{e}");
    // Its own handle updates and runs.
    set.update_node(&mut exec, node, 1, 1, hc, 1).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_jacobi_solver_loops_on_the_gpu_to_the_cpus_answer_and_the_host_loops() {
    let ctx = ctx();
    let solver = Solver::new(&ctx).unwrap();
    let b = Rng::new(5).vec_f32(1 << 16);
    let (tol, max_iters) = (1e-5f32, 1000);
    let mut gpu = State::new(&ctx, &b).unwrap();
    {
        let mut exec = solver.loop_graph(&ctx, &mut gpu, tol, max_iters).unwrap();
        exec.launch(&Stream::new(&ctx).unwrap()).unwrap();
    }
    let got = gpu.solved().unwrap();
    let cpu = solve_cpu(&b, tol, max_iters, None);
    // The residual's rounding on the GPU (fused multiply-adds) may stop it one iteration
    // apart from the CPU when a residual lands within rounding of `tol`.
    assert!(
        (got.iterations - cpu.iterations).abs() <= 1,
        "GPU {} iterations, CPU {}",
        got.iterations,
        cpu.iterations
    );
    assert!(
        got.iterations > 1 && got.iterations < max_iters,
        "{}",
        got.iterations
    );
    assert!(got.residual <= tol, "{}", got.residual);
    let same = solve_cpu(&b, tol, max_iters, Some(got.iterations));
    assert_close(&got.x, &same.x, 1e-6);

    let mut host = State::new(&ctx, &b).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    let k = solver.host_loop(&mut host, &stream, tol, max_iters).unwrap();
    let by_host = host.solved().unwrap();
    assert_eq!(k, got.iterations);
    assert_eq!(by_host.iterations, got.iterations);
    assert_eq!(by_host.x, got.x);
}

const LINKS: usize = 100;
const A: f32 = 0.999;

/// The chain on the CPU: `LINKS` links alternating y = a x + 1 and x = a y + 1.
fn chain_cpu(x0: &[f32]) -> Vec<f32> {
    let (mut x, mut y) = (x0.to_vec(), vec![0.0f32; x0.len()]);
    for link in 0..LINKS {
        let (src, dst) = if link % 2 == 0 { (&x, &mut y) } else { (&y, &mut x) };
        for (d, s) in dst.iter_mut().zip(src.iter()) {
            *d = A * s + 1.0;
        }
    }
    x
}

fn has_dependent_launches(ctx: &Context) -> bool {
    ctx.compute_capability().0 >= 9
}

/// `chain` as a dependent launch (the generated `dependent_launch`): refused below compute
/// capability 9.0 with its typed error, made from 9.0 on.
fn dependent_or_refused(ctx: &Context, chain: &k::chain::Kernel) -> Option<k::chain::Kernel> {
    // SAFETY: `chain` calls cudaGridDependencySynchronize() in every thread, first.
    let made = unsafe { chain.dependent_launch() };
    if has_dependent_launches(ctx) {
        Some(made.expect("a dependent launch on compute capability 9.0"))
    } else {
        let e = made.unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidLaunch(LaunchConfigError::DependentLaunchUnsupported { .. })
            ),
            "{e}"
        );
        None
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_chain_of_dependent_launches_on_a_stream_matches_the_cpu() {
    let ctx = ctx();
    let chain = k::chain::prepare(&ctx).unwrap();
    let prepared = chain.function().prepare_declared().unwrap();
    // SAFETY: `chain` calls cudaGridDependencySynchronize() in every thread, first.
    let dependent = unsafe { prepared.clone().dependent_launch() };
    let Some(typed) = dependent_or_refused(&ctx, &chain) else {
        assert!(dependent.is_err());
        return;
    };
    let dependent = dependent.unwrap();
    let x0 = Rng::new(3).vec_f32(N);
    let mut x = ctx.to_device(&x0).unwrap();
    let mut y = ctx.alloc_zeros::<f32>(N).unwrap();
    let stream = Stream::new(&ctx).unwrap();
    for link in 0..LINKS {
        let args = if link % 2 == 0 {
            [
                Arg::output(&mut y),
                Arg::input(&x),
                Arg::F32(A),
                Arg::I32(N as i32),
            ]
        } else {
            [
                Arg::output(&mut x),
                Arg::input(&y),
                Arg::F32(A),
                Arg::I32(N as i32),
            ]
        };
        dependent
            .prepared_async_call(GRID, BLOCK, &stream, &args)
            .unwrap();
    }
    assert_close(&x.to_vec().unwrap(), &chain_cpu(&x0), 1e-5);
    // The same chain through the typed handle.
    let mut x = ctx.to_device(&x0).unwrap();
    let mut y = ctx.alloc_zeros::<f32>(N).unwrap();
    for link in 0..LINKS {
        if link % 2 == 0 {
            typed.prepared_async_call(GRID, BLOCK, &stream, &mut y, &x, A, N as i32)
        } else {
            typed.prepared_async_call(GRID, BLOCK, &stream, &mut x, &y, A, N as i32)
        }
        .unwrap();
    }
    assert_close(&x.to_vec().unwrap(), &chain_cpu(&x0), 1e-5);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dependent_launches_in_captured_and_built_graphs_match_the_cpu() {
    let ctx = ctx();
    let chain = k::chain::prepare(&ctx).unwrap();
    let Some(dependent) = dependent_or_refused(&ctx, &chain) else {
        return;
    };
    let x0 = Rng::new(4).vec_f32(N);
    let want = chain_cpu(&x0);
    let stream = Stream::new(&ctx).unwrap();
    for built in [false, true] {
        let mut x = ctx.to_device(&x0).unwrap();
        let mut y = ctx.alloc_zeros::<f32>(N).unwrap();
        {
            let (mut xg, mut yg) = (GraphBuffer::new(&mut x), GraphBuffer::new(&mut y));
            let graph = if built {
                let mut g = GraphBuilder::new(&ctx).unwrap();
                let mut last: Vec<NodeId> = Vec::new();
                for link in 0..LINKS {
                    let n = if link % 2 == 0 {
                        dependent.graph_node(&mut g, &last, GRID, BLOCK, &mut yg, &xg, A, N as i32)
                    } else {
                        dependent.graph_node(&mut g, &last, GRID, BLOCK, &mut xg, &yg, A, N as i32)
                    }
                    .unwrap();
                    last = vec![n];
                }
                // A dependent node keeps its edges only if not updated: refused.
                let mut exec = g.build().instantiate().unwrap();
                let e = chain
                    .update_node(&mut exec, last[0], GRID, BLOCK, &mut xg, &yg, A, N as i32)
                    .unwrap_err();
                assert!(matches!(e, Error::Graph(GraphError::NotUpdatable { .. })), "{e}");
                exec
            } else {
                let mut cap = Capture::begin(&ctx).unwrap();
                for link in 0..LINKS {
                    if link % 2 == 0 {
                        dependent.capture(&mut cap, GRID, BLOCK, &mut yg, &xg, A, N as i32)
                    } else {
                        dependent.capture(&mut cap, GRID, BLOCK, &mut xg, &yg, A, N as i32)
                    }
                    .unwrap();
                }
                cap.end().unwrap().instantiate().unwrap()
            };
            let mut exec = graph;
            exec.launch(&stream).unwrap();
        }
        assert_close(&x.to_vec().unwrap(), &want, 1e-5);
    }
}
