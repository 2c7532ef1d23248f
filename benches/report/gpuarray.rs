//! Device arrays: an elementwise kernel (`z = a * x + y`) and a sum over 2^26 floats, as
//! bandwidth (bytes moved) next to a device-to-device copy of the same floats in the same
//! process; an inclusive scan and a Philox uniform fill of the same floats against the same
//! floor; and, where CuPy is importable, the same operations through CuPy (the sum into
//! device memory and read back, the scan, and its Philox generator's uniform floats).

use std::process::Command;
use std::time::Duration;

use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg, ReductionKernel};
use gpu_runtime::ndarray::Ix1;
use gpu_runtime::Context;

use crate::best;
use crate::gpu_timer::{timed, timed_copy};
use crate::table::Row;

const N: usize = 1 << 26;
const ROUNDS: usize = 9;

fn gbs(bytes_per_elem: usize, d: Duration) -> f64 {
    (bytes_per_elem * N) as f64 / d.as_secs_f64() / 1e9
}

/// The same operations through CuPy in a subprocess, as GB/s (bytes moved): the elementwise
/// kernel, the sum (a 0-d device array), the sum read back (`float(x.sum())`), `cumsum` and a
/// Philox generator's uniform `float32`s into an existing array, if CuPy is importable (NaN
/// for one CuPy refuses).
fn cupy() -> Option<[f64; 5]> {
    if !crate::cupy::importable() {
        return None;
    }
    let script = format!(
        r#"
import cupy as cp
n = {N}
x = cp.random.random(n, dtype=cp.float32); y = cp.random.random(n, dtype=cp.float32); z = cp.empty_like(x)
k = cp.ElementwiseKernel('float32 a, float32 x, float32 y', 'float32 z', 'z = a * x + y', 'axpy')
def t(f):
    best = 1e9
    for _ in range({ROUNDS}):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(); f(); e.record(); e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(s, e) / 1e3)
    return best
def g(b, f):
    try:
        f()
        return b * n / t(f) / 1e9
    except Exception:
        return float('nan')
r = cp.empty_like(x)
rng = cp.random.Generator(cp.random.Philox4x3210(7))
print(g(12, lambda: k(cp.float32(2), x, y, z)), g(4, lambda: x.sum()), g(4, lambda: float(x.sum())),
      g(8, lambda: cp.cumsum(x)), g(4, lambda: rng.random(out=r, dtype=cp.float32)))
"#
    );
    let out = Command::new("python3").args(["-c", &script]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace().filter_map(|w| w.parse::<f64>().ok());
    Some([it.next()?, it.next()?, it.next()?, it.next()?, it.next()?])
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let axpy = ElementwiseKernel::new(
        "float a, const float *x, const float *y, float *z",
        "z = a * x + y",
    )?;
    let mut x = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    x.fill(1.0)?;
    let mut y = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    y.fill(2.0)?;
    let mut z = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    let copy = ctx.alloc::<f32>(N)?;
    // Compile and load both kernels outside the timings.
    axpy.launch([
        KernelArg::scalar(2.0f32),
        KernelArg::input(&x),
        KernelArg::input(&y),
        KernelArg::output(&mut z),
    ])?;
    std::hint::black_box(x.sum()?);
    let mut r = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    std::hint::black_box(x.cumsum()?);
    r.fill_uniform(1)?;
    let (mut ew, mut sum, mut raw) = (Vec::new(), Vec::new(), Vec::new());
    let (mut scan, mut rand, mut sum_dev) = (Vec::new(), Vec::new(), Vec::new());
    let sum_k = ReductionKernel::<f32>::new("const float *x", "x", "a + b", "0.0f")?;
    let mut total = DeviceArray::<f32, gpu_runtime::ndarray::Ix0>::zeros(ctx, ())?;
    sum_k.reduce_into([KernelArg::input(&x)], &mut total)?;
    for _ in 0..ROUNDS {
        ew.push(timed(ctx, || {
            axpy.launch([
                KernelArg::scalar(2.0f32),
                KernelArg::input(&x),
                KernelArg::input(&y),
                KernelArg::output(&mut z),
            ])
        })?);
        // The sum's time includes the second pass and reading the result back.
        sum.push(timed(ctx, || x.sum().map(drop))?);
        // Into device memory, as CuPy's x.sum() (a 0-d device array) is timed.
        sum_dev.push(timed(ctx, || {
            sum_k.reduce_into([KernelArg::input(&x)], &mut total)
        })?);
        // The scan's time includes allocating its output (from the driver, not a pool).
        scan.push(timed(ctx, || x.cumsum().map(drop))?);
        // Frees the scan's output now, not in the next timed allocation.
        ctx.synchronize()?;
        rand.push(timed(ctx, || r.fill_uniform(7))?);
        raw.push(timed_copy(ctx, &copy, x.storage())?);
    }
    let floor = gbs(8, best(&raw));
    let mut rows = vec![
        Row {
            figure: "elementwise z = a*x + y, 2^26 floats (bytes moved)",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(12, best(&ew)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: ">= 0.9x copy bandwidth",
            rounds: Vec::new(),
        },
        Row {
            figure: "sum of 2^26 floats into device memory (bytes read)",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(4, best(&sum_dev)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: ">= 0.85x copy bandwidth",
            rounds: Vec::new(),
        },
        Row {
            figure: "sum of 2^26 floats read back to the host, x.sum()",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(4, best(&sum)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "inclusive scan (cumsum) of 2^26 floats (bytes read + written)",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(8, best(&scan)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: "",
            rounds: Vec::new(),
        },
        Row {
            figure: "fill_uniform (Philox4x32-10) of 2^26 floats (bytes written)",
            raw: "cuMemcpyDtoD of 2^26 floats",
            ours: gbs(4, best(&rand)),
            theirs: floor,
            unit: "GB/s",
            higher_is_better: true,
            target: "",
            rounds: Vec::new(),
        },
    ];
    match cupy() {
        Some([c_ew, c_sum, c_back, c_scan, c_rand]) => {
            println!(
                "CuPy, same process run: elementwise {c_ew:.1} GB/s, sum {c_sum:.1} GB/s, read back \
                 {c_back:.1} GB/s, cumsum {c_scan:.1} GB/s, Philox uniform {c_rand:.1} GB/s"
            );
            for (figure, ours, theirs) in [
                (
                    "elementwise z = a*x + y vs CuPy ElementwiseKernel",
                    gbs(12, best(&ew)),
                    c_ew,
                ),
                (
                    "sum into device memory vs CuPy x.sum() (a 0-d device array)",
                    gbs(4, best(&sum_dev)),
                    c_sum,
                ),
                ("sum read back vs CuPy float(x.sum())", gbs(4, best(&sum)), c_back),
                ("inclusive scan vs CuPy cp.cumsum(x)", gbs(8, best(&scan)), c_scan),
                (
                    "fill_uniform vs CuPy Generator(Philox4x3210).random(out=r, dtype=float32)",
                    gbs(4, best(&rand)),
                    c_rand,
                ),
            ] {
                rows.push(Row::cupy(figure, "CuPy (subprocess)", ours, theirs, "GB/s"));
            }
        }
        None => println!("CuPy rows skipped: `python3 -c \"import cupy\"` failed here"),
    }
    Ok(rows)
}
