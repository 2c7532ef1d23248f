//! Programmatic dependent launches (compute capability 9.0): the chain of 100 small dependent
//! kernels of `graph.rs` (axpy on one `y`, grid 4, block 256), with a kernel that calls
//! `cudaGridDependencySynchronize()` before it touches `y`, launched with and without the
//! dependent-launch attribute, on a stream and as one graph (captured, and built with
//! programmatic edges), each per kernel against a bare `cuLaunchKernel` of the plain axpy in
//! the same rounds; and the dependent stream launch against a raw `cuLaunchKernelEx` with the
//! same attribute.

use std::ffi::c_void;

use gpu_runtime::__private_v0_1 as private;
use gpu_runtime::cudarc::driver::sys;
use gpu_runtime::driver::Function;
use gpu_runtime::launch::{
    Arg, Capture, GraphBuffer, GraphBuilder, GraphExec, GraphInput, GraphRead, NodeId,
};
use gpu_runtime::{kernel, Context, Stream};

use crate::graph::{median, ratios, rounds, us_per};
use crate::table::Row;
use crate::{axpy, ok};

#[kernel(
    r#"
#include <gpu_runtime/graph.h>
__global__ void axpy_dependent(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    if (i < n) y[i] = a * x[i] + y[i];
    cudaTriggerProgrammaticLaunchCompletion();
}"#
)]
fn axpy_dependent(a: f32, #[len = n] x: &[f32], #[len = n] y: &mut [f32], n: i32);

const CHAIN: usize = 100;
const CHAINS: usize = 200;
const N: i32 = 1024;
const A: f32 = 1.0001;

/// What the generated `capture` / `graph_node` do (`gpu-macros-core/src/expand.rs`,
/// `graph_body`), with a launch configuration the macro does not make yet (a dependent
/// launch): `axpy_dependent(A, x, y, N)` captured into `cap`, or added to `g` after `deps`.
fn node<'a>(
    to: Either<'_, 'a>,
    f: &Function,
    ex: &private::LaunchEx,
    x: &impl GraphRead<'a, f32>,
    y: &mut GraphBuffer<'a, f32>,
) -> gpu_runtime::Result<NodeId> {
    let (xv, yv) = (
        private::graph_read::<f32, _>(x),
        private::graph_write::<f32, _>(y),
    );
    let mut args = private::NodeArgs::new();
    let (p0, p1, p2, p3) = (A, args.read(f, &xv)?, args.write(f, &yv)?, N);
    let mut params: [*mut c_void; 4] = [
        private::param(&p0),
        private::param(&p1),
        private::param(&p2),
        private::param(&p3),
    ];
    // SAFETY: the parameters are axpy_dependent's (float, const float*, float*, int), each
    // slot lives until the call returns, and both buffers are tokens recorded in `args` of N
    // elements.
    let k = unsafe { private::KernelNode::new(f, ex, 4.into(), 256.into(), args, &mut params) };
    match to {
        Either::Capture(cap) => cap.kernel(k),
        Either::Build(g, deps) => g.kernel(deps, k),
    }
}

/// Where [`node`] puts its node.
enum Either<'c, 'a> {
    Capture(&'c mut Capture<'a>),
    Build(&'c mut GraphBuilder<'a>, &'c [NodeId]),
}

/// The chain as one executable graph: captured, or built node after node.
fn chain_graph<'a>(
    ctx: &Context,
    built: bool,
    f: &Function,
    ex: &private::LaunchEx,
    x: &GraphInput<'a, f32>,
    y: &mut GraphBuffer<'a, f32>,
) -> gpu_runtime::Result<GraphExec<'a>> {
    if built {
        let mut g = GraphBuilder::new(ctx)?;
        let mut last: Vec<NodeId> = Vec::new();
        for _ in 0..CHAIN {
            last = vec![node(Either::Build(&mut g, &last), f, ex, x, y)?];
        }
        g.build().instantiate()
    } else {
        let mut cap = Capture::begin(ctx)?;
        for _ in 0..CHAIN {
            node(Either::Capture(&mut cap), f, ex, x, y)?;
        }
        cap.end()?.instantiate()
    }
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    if ctx.compute_capability().0 < 9 {
        println!("dependent launches: skipped (compute capability 9.0 needed)");
        return Ok(Vec::new());
    }
    let plain_axpy = axpy::prepare(ctx)?;
    let kernel = axpy_dependent::prepare(ctx)?;
    let f = kernel.function();
    let prepared = f.prepare_declared()?;
    // SAFETY: axpy_dependent calls cudaGridDependencySynchronize() in every thread, first.
    let dependent = unsafe { prepared.clone().dependent_launch() }?;
    // SAFETY: as above.
    let ex = unsafe { private::dependent_launch(f, &private::LaunchEx::default()) }?;
    let plain_ex = private::LaunchEx::default();
    let stream = Stream::new(ctx)?;
    let xd = ctx.to_device(&(0..N).map(|i| i as f32 * 0.5).collect::<Vec<_>>())?;
    let mut yd = ctx.alloc_zeros::<f32>(N as usize)?;
    let mut zd = ctx.alloc_zeros::<f32>(N as usize)?;
    let (bare, s) = (plain_axpy.function().raw(), stream.raw());
    let (xp, zp) = (xd.device_ptr(), zd.device_ptr());
    let kernels = CHAINS * CHAIN;
    let bare_chain = || {
        for _ in 0..kernels {
            crate::raw_axpy(bare, s, A, xp, zp, N);
        }
    };
    let mut rows = Vec::new();
    let mut row = |figure, raw, ours: &[std::time::Duration], theirs: &[std::time::Duration], target| {
        rows.push(Row {
            figure,
            raw,
            ours: us_per(median(ours), kernels),
            theirs: us_per(median(theirs), kernels),
            unit: "us",
            higher_is_better: false,
            target,
            rounds: ratios(ours, theirs),
        })
    };

    // On a stream: the run-time typed launch, plain and dependent.
    for (p, figure) in [
        (&prepared, "dependent chain of 100 kernels, per kernel: 100 prepared_async_calls (run-time typed), not dependent"),
        (&dependent, "dependent chain of 100 kernels, per kernel: 100 dependent prepared_async_calls (dependent_launch)"),
    ] {
        let (ours, theirs) = rounds(
            &stream,
            || {
                let args = [Arg::F32(A), Arg::input(&xd), Arg::output(&mut yd), Arg::I32(N)];
                for _ in 0..kernels {
                    p.prepared_async_call(4, 256, &stream, &args)?;
                }
                Ok(())
            },
            bare_chain,
        )?;
        row(figure, "100 x cuLaunchKernel (plain axpy)", &ours, &theirs, "");
    }

    // The dependent stream launch against the raw one.
    let attr = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            programmaticStreamSerializationAllowed: 1,
        },
    };
    let (yp, dep) = (yd.device_ptr(), f.raw());
    let (ours, theirs) = rounds(
        &stream,
        || {
            let args = [Arg::F32(A), Arg::input(&xd), Arg::output(&mut zd), Arg::I32(N)];
            for _ in 0..kernels {
                dependent.prepared_async_call(4, 256, &stream, &args)?;
            }
            Ok(())
        },
        || {
            for _ in 0..kernels {
                raw_dependent(dep, s, xp, yp, attr);
            }
        },
    )?;
    row(
        "dependent chain of 100 kernels, per kernel: 100 dependent prepared_async_calls",
        "100 x cuLaunchKernelEx + PROGRAMMATIC_STREAM_SERIALIZATION",
        &ours,
        &theirs,
        "",
    );

    // As one graph: captured without and with the attribute, and built with programmatic
    // edges.
    for (built, ex, figure, target) in [
        (
            false,
            &plain_ex,
            "dependent chain of 100 kernels, per kernel: one captured graph, not dependent",
            "",
        ),
        (
            false,
            &ex,
            "dependent chain of 100 kernels, per kernel: one captured graph of dependent launches",
            "<= 0.33x cuLaunchKernel",
        ),
        (
            true,
            &ex,
            "dependent chain of 100 kernels, per kernel: one built graph, programmatic edges",
            "<= 0.33x cuLaunchKernel",
        ),
    ] {
        let (ours, theirs) = {
            let xg = GraphInput::new(&xd);
            let mut yg = GraphBuffer::new(&mut yd);
            let mut exec = chain_graph(ctx, built, f, ex, &xg, &mut yg)?;
            rounds(
                &stream,
                || {
                    for _ in 0..CHAINS {
                        exec.launch(&stream)?;
                    }
                    Ok(())
                },
                bare_chain,
            )?
        };
        row(
            figure,
            "100 x cuLaunchKernel (plain axpy)",
            &ours,
            &theirs,
            target,
        );
    }
    Ok(rows)
}

/// `axpy_dependent(A, x, y, N)` with `cuLaunchKernelEx` and the dependent-launch attribute.
fn raw_dependent(func: sys::CUfunction, s: sys::CUstream, x: u64, y: u64, attr: sys::CUlaunchAttribute) {
    let (a, n) = (A, N);
    let mut attrs = [attr];
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
        numAttrs: 1,
    };
    // SAFETY: the parameters match axpy_dependent's signature and point to live values; the
    // configuration and its attribute outlive the call.
    ok(unsafe { sys::cuLaunchKernelEx(&cfg, func, params.as_mut_ptr(), std::ptr::null_mut()) });
}
