//! Graphs, clusters and cooperative launches: a chain of 100 small kernels (the axpy of
//! `launch.rs`, grid 4, block 256) launched as one captured graph, as 100
//! `prepared_async_call`s and as 100 bare `cuLaunchKernel`s; a typed node update + relaunch
//! against the same two driver calls made raw; and cluster and cooperative launches against a
//! raw `cuLaunchKernelEx` with the same attributes (compute capability 9.0 for clusters).

use std::ffi::c_void;
use std::time::{Duration, Instant};

use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::launch::{Capture, GraphBuffer, GraphInput};
use gpu_runtime::{Context, Stream};

use crate::table::Row;
use crate::{axpy, ok};

const CHAIN: usize = 100;
const CHAINS: usize = 200;
const UPDATES: usize = 2_000;
const EX_LAUNCHES: usize = 20_000;
/// Rounds of each figure, ours and raw back to back; the first warms up and is not counted.
pub(crate) const ROUNDS: usize = 7;
const N: i32 = 1024;

pub(crate) fn us_per(d: Duration, count: usize) -> f64 {
    d.as_secs_f64() * 1e6 / count as f64
}

pub(crate) fn median(v: &[Duration]) -> Duration {
    let mut t = v.to_vec();
    t.sort();
    t.get(t.len() / 2).copied().unwrap_or_default()
}

pub(crate) fn ratios(ours: &[Duration], theirs: &[Duration]) -> Vec<f64> {
    ours.iter()
        .zip(theirs)
        .map(|(o, t)| o.as_secs_f64() / t.as_secs_f64())
        .collect()
}

/// Times `ours` and `theirs` back to back for `ROUNDS` rounds (each ends with a synchronize of
/// `stream`), dropping the first: the samples of each.
pub(crate) fn rounds(
    stream: &Stream,
    mut ours: impl FnMut() -> gpu_runtime::Result<()>,
    mut theirs: impl FnMut(),
) -> Result<(Vec<Duration>, Vec<Duration>), Box<dyn std::error::Error>> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        stream.synchronize()?;
        let t = Instant::now();
        ours()?;
        stream.synchronize()?;
        let t_ours = t.elapsed();
        let t = Instant::now();
        theirs();
        stream.synchronize()?;
        if round > 0 {
            a.push(t_ours);
            b.push(t.elapsed());
        }
    }
    Ok((a, b))
}

/// A raw axpy launch on `s` ([`crate::raw_axpy`]), with `cuLaunchKernelEx` when `attrs` is not
/// empty.
fn raw_axpy_with(
    func: sys::CUfunction,
    s: sys::CUstream,
    x: u64,
    y: u64,
    attrs: &mut [sys::CUlaunchAttribute],
) {
    let (a, n) = (1.0001f32, N);
    if attrs.is_empty() {
        return crate::raw_axpy(func, s, a, x, y, n);
    }
    let mut params = [
        &a as *const f32 as *mut c_void,
        &x as *const u64 as *mut c_void,
        &y as *const u64 as *mut c_void,
        &n as *const i32 as *mut c_void,
    ];
    let cfg = sys::CUlaunchConfig {
        gridDimX: 4,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 256,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: s,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
    };
    // SAFETY: as above; the configuration and its attributes outlive the call.
    ok(unsafe { sys::cuLaunchKernelEx(&cfg, func, params.as_mut_ptr(), std::ptr::null_mut()) });
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let kernel = axpy::prepare(ctx)?;
    let stream = Stream::new(ctx)?;
    let x: Vec<f32> = (0..N).map(|i| i as f32 * 0.5).collect();
    let xd = ctx.to_device(&x)?;
    let mut yd = ctx.alloc_zeros::<f32>(N as usize)?;
    let mut zd = ctx.alloc_zeros::<f32>(N as usize)?;
    let (func, s) = (kernel.function().raw(), stream.raw());
    let (xp, yp) = (xd.device_ptr(), yd.device_ptr());
    let mut rows = Vec::new();

    // 1. The chain: one graph launch vs 100 typed calls vs 100 bare launches.
    let (graph_t, bare_t, update_t, raw_update_t) = {
        let xg = GraphInput::new(&xd);
        let mut yg = GraphBuffer::new(&mut yd);
        let mut cap = Capture::begin(ctx)?;
        let mut first = None;
        for _ in 0..CHAIN {
            let node = kernel.capture(&mut cap, 4, 256, 1.0001, &xg, &mut yg, N)?;
            first.get_or_insert(node);
        }
        let mut exec = cap.end()?.instantiate()?;
        let (graph_t, bare_t) = rounds(
            &stream,
            || {
                for _ in 0..CHAINS {
                    exec.launch(&stream)?;
                }
                Ok(())
            },
            || {
                for _ in 0..CHAINS * CHAIN {
                    raw_axpy_with(func, s, xp, yp, &mut []);
                }
            },
        )?;

        drop(exec);
        let _ = first;
        // 2. Update + relaunch of a one-node graph: ours typed, the raw side on a graph
        // captured by hand (the same work on both sides: one small kernel per launch).
        let mut cap = Capture::begin(ctx)?;
        let node = kernel.capture(&mut cap, 4, 256, 1.0001, &xg, &mut yg, N)?;
        let mut exec = cap.end()?.instantiate()?;
        let raw_exec = raw_single_node_graph(func, s, xp, yp);
        let (update_t, raw_update_t) = rounds(
            &stream,
            || {
                for i in 0..UPDATES {
                    let a = 1.0 + (i % 2) as f32 * 1e-4;
                    kernel.update_node(&mut exec, node, 4, 256, a, &xg, &mut yg, N)?;
                    exec.launch(&stream)?;
                }
                Ok(())
            },
            || {
                for i in 0..UPDATES {
                    raw_update_and_launch(&raw_exec, func, s, xp, yp, 1.0 + (i % 2) as f32 * 1e-4);
                }
            },
        )?;
        // SAFETY: made by raw_single_node_graph; its launches were synchronized.
        unsafe {
            sys::cuGraphExecDestroy(raw_exec.0);
            sys::cuGraphDestroy(raw_exec.1);
        }
        (graph_t, bare_t, update_t, raw_update_t)
    };
    let (typed_t, bare_t2) = rounds(
        &stream,
        || {
            for _ in 0..CHAINS * CHAIN {
                kernel.prepared_async_call(4, 256, &stream, 1.0001, &xd, &mut zd, N)?;
            }
            Ok(())
        },
        || {
            for _ in 0..CHAINS * CHAIN {
                raw_axpy_with(func, s, xp, yp, &mut []);
            }
        },
    )?;
    let kernels = CHAINS * CHAIN;
    rows.push(Row {
        figure: "chain of 100 kernels, per kernel: one graph launch (GraphExec::launch)",
        raw: "100 x cuLaunchKernel",
        ours: us_per(median(&graph_t), kernels),
        theirs: us_per(median(&bare_t), kernels),
        unit: "us",
        higher_is_better: false,
        target: "<= 0.33x cuLaunchKernel",
        rounds: ratios(&graph_t, &bare_t),
    });
    rows.push(Row {
        figure: "chain of 100 kernels, per kernel: 100 prepared_async_calls",
        raw: "100 x cuLaunchKernel",
        ours: us_per(median(&typed_t), kernels),
        theirs: us_per(median(&bare_t2), kernels),
        unit: "us",
        higher_is_better: false,
        target: "",
        rounds: ratios(&typed_t, &bare_t2),
    });
    rows.push(Row {
        figure: "graph node update + relaunch (update_node + launch)",
        raw: "cuGraphExecKernelNodeSetParams + cuGraphLaunch",
        ours: us_per(median(&update_t), UPDATES),
        theirs: us_per(median(&raw_update_t), UPDATES),
        unit: "us",
        higher_is_better: false,
        target: "",
        rounds: ratios(&update_t, &raw_update_t),
    });

    // 3. Cluster and cooperative launches against a raw cuLaunchKernelEx.
    let coop_attr = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue { cooperative: 1 },
    };
    let coop = kernel.cooperative()?;
    let (ours, theirs) = rounds(
        &stream,
        || {
            for _ in 0..EX_LAUNCHES {
                coop.prepared_async_call(4, 256, &stream, 1.0001, &xd, &mut zd, N)?;
            }
            Ok(())
        },
        || {
            for _ in 0..EX_LAUNCHES {
                raw_axpy_with(func, s, xp, yp, &mut [coop_attr]);
            }
        },
    )?;
    rows.push(Row {
        figure: "cooperative launch (cooperative().prepared_async_call)",
        raw: "cuLaunchKernelEx + CU_LAUNCH_ATTRIBUTE_COOPERATIVE",
        ours: us_per(median(&ours), EX_LAUNCHES),
        theirs: us_per(median(&theirs), EX_LAUNCHES),
        unit: "us",
        higher_is_better: false,
        target: "",
        rounds: ratios(&ours, &theirs),
    });
    if ctx.compute_capability().0 >= 9 {
        let cluster_attr = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
            pad: [0; 4],
            value: sys::CUlaunchAttributeValue {
                clusterDim: sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: 2, y: 1, z: 1 },
            },
        };
        let clustered = kernel.with_cluster((2, 1, 1))?;
        let (ours, theirs) = rounds(
            &stream,
            || {
                for _ in 0..EX_LAUNCHES {
                    clustered.prepared_async_call(4, 256, &stream, 1.0001, &xd, &mut zd, N)?;
                }
                Ok(())
            },
            || {
                for _ in 0..EX_LAUNCHES {
                    raw_axpy_with(func, s, xp, yp, &mut [cluster_attr]);
                }
            },
        )?;
        rows.push(Row {
            figure: "cluster launch (with_cluster((2, 1, 1)).prepared_async_call)",
            raw: "cuLaunchKernelEx + CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION",
            ours: us_per(median(&ours), EX_LAUNCHES),
            theirs: us_per(median(&theirs), EX_LAUNCHES),
            unit: "us",
            higher_is_better: false,
            target: "",
            rounds: ratios(&ours, &theirs),
        });
    }
    Ok(rows)
}

/// A graph of one axpy node, captured and instantiated with raw driver calls: (exec, graph,
/// node).
fn raw_single_node_graph(
    func: sys::CUfunction,
    _s: sys::CUstream,
    x: u64,
    y: u64,
) -> (sys::CUgraphExec, sys::CUgraph, sys::CUgraphNode) {
    let mut cs = std::ptr::null_mut();
    let (mut graph, mut exec, mut node) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let mut count = 1usize;
    // SAFETY: valid out-pointers; the context is current (the caller's launches bound it).
    unsafe {
        ok(sys::cuStreamCreate(
            &mut cs,
            sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
        ));
        ok(sys::cuStreamBeginCapture_v2(
            cs,
            sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
        ));
    }
    raw_axpy_with(func, cs, x, y, &mut []);
    // SAFETY: as above.
    unsafe {
        ok(sys::cuStreamEndCapture(cs, &mut graph));
        ok(sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0));
        ok(sys::cuGraphGetNodes(graph, &mut node, &mut count));
        ok(sys::cuStreamDestroy_v2(cs));
    }
    (exec, graph, node)
}

/// The raw update + relaunch of the one-node graph.
fn raw_update_and_launch(
    g: &(sys::CUgraphExec, sys::CUgraph, sys::CUgraphNode),
    func: sys::CUfunction,
    s: sys::CUstream,
    x: u64,
    y: u64,
    a: f32,
) {
    let n = N;
    let mut params = [
        &a as *const f32 as *mut c_void,
        &x as *const u64 as *mut c_void,
        &y as *const u64 as *mut c_void,
        &n as *const i32 as *mut c_void,
    ];
    let p = sys::CUDA_KERNEL_NODE_PARAMS {
        func,
        gridDimX: 4,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 256,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        kernelParams: params.as_mut_ptr(),
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    };
    // SAFETY: the node is the graph's one axpy launch; the parameters match its signature.
    unsafe {
        ok(sys::cuGraphExecKernelNodeSetParams_v2(g.0, g.2, &p));
        ok(sys::cuGraphLaunch(g.0, s));
    }
}
