//! Math on arrays (`gpuarray::math`) over 2^26 floats: `sin`, `exp`, a comparison `a > b`
//! (a `Bool` array out), `where_(c, a, b)`, `maximum`, `logaddexp`, `a & b` of `u32` and
//! `polyval` of a cubic (a new array each call, as CuPy's), each as bandwidth (the bytes that
//! must move: every input read once, the output written once) next to a device-to-device copy
//! of 2^26 floats in the same run, and, where CuPy is importable, the same operation through
//! CuPy. Outputs are allocated once, outside the timings (`eval_into`), as CuPy's `out=`.

use std::process::Command;
use std::time::Duration;

use gpu_runtime::gpuarray::{self, math, Bool, DeviceArray, Expr};
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

/// The operations through CuPy in a subprocess, as GB/s of the same bytes, if CuPy is
/// importable: sin, exp, greater, where, maximum, logaddexp, bitwise_and, polyval.
fn cupy() -> Option<Vec<f64>> {
    if !crate::cupy::importable() {
        return None;
    }
    let script = format!(
        r#"
import cupy as cp
n = {N}
x = cp.random.random(n, dtype=cp.float32); y = cp.random.random(n, dtype=cp.float32)
z = cp.empty_like(x); c = cp.empty(n, dtype=cp.bool_)
xu = cp.full(n, 12, dtype=cp.uint32); yu = cp.full(n, 10, dtype=cp.uint32); zu = cp.empty_like(xu)
p = cp.array([1.0, -2.0, 0.5, 3.0], dtype=cp.float32)
def t(f):
    f()
    best = 1e9
    for _ in range({ROUNDS}):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(); f(); e.record(); e.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(s, e) / 1e3)
    return best
cp.greater(x, y, out=c)
print(8 * n / t(lambda: cp.sin(x, out=z)) / 1e9,
      8 * n / t(lambda: cp.exp(x, out=z)) / 1e9,
      9 * n / t(lambda: cp.greater(x, y, out=c)) / 1e9,
      13 * n / t(lambda: cp.where(c, x, y)) / 1e9,
      12 * n / t(lambda: cp.maximum(x, y, out=z)) / 1e9,
      12 * n / t(lambda: cp.logaddexp(x, y, out=z)) / 1e9,
      12 * n / t(lambda: cp.bitwise_and(xu, yu, out=zu)) / 1e9,
      8 * n / t(lambda: cp.polyval(p, x)) / 1e9)
"#
    );
    let out = Command::new("python3").args(["-c", &script]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    (v.len() == 8).then_some(v)
}

pub fn rows(ctx: &Context) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let mut x = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    x.fill(0.5)?;
    let mut y = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    y.fill(0.25)?;
    let mut z = DeviceArray::<f32, Ix1>::empty(ctx, N)?;
    let mut c = DeviceArray::<Bool, Ix1>::empty(ctx, N)?;
    let copy = ctx.alloc::<f32>(N)?;
    let mut xu = DeviceArray::<u32, Ix1>::empty(ctx, N)?;
    xu.fill(12)?;
    let mut yu = DeviceArray::<u32, Ix1>::empty(ctx, N)?;
    yu.fill(10)?;
    let mut zu = DeviceArray::<u32, Ix1>::empty(ctx, N)?;
    (&xu & &yu).eval_into(&mut zu)?;
    let p = DeviceArray::from_ndarray(ctx, &gpu_runtime::ndarray::arr1(&[1.0f32, -2.0, 0.5, 3.0]))?;
    gpuarray::polyval(&p, &x)?;
    // The six operations, each compiled and loaded outside the timings by a first run.
    type Op = fn(
        &DeviceArray<f32, Ix1>,
        &DeviceArray<f32, Ix1>,
        &DeviceArray<Bool, Ix1>,
        &mut DeviceArray<f32, Ix1>,
    ) -> gpu_runtime::Result<()>;
    let sin: Op = |x, _, _, z| math::sin_into(x, z);
    let exp: Op = |x, _, _, z| math::exp_into(x, z);
    let wh: Op = |x, y, c, z| Expr::where_(c, x, y).eval_into(z);
    let max: Op = |x, y, _, z| x.expr().maximum(y).eval_into(z);
    let lae: Op = |x, y, _, z| math::logaddexp_into(x, y, z);
    x.expr().gt(&y).eval_into(&mut c)?;
    let ops: [(Op, usize); 5] = [(sin, 8), (exp, 8), (wh, 13), (max, 12), (lae, 12)];
    for (op, _) in &ops {
        op(&x, &y, &c, &mut z)?;
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); ops.len()];
    let (mut cmp, mut raw, mut and, mut pv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for (k, (op, _)) in ops.iter().enumerate() {
            times[k].push(timed(ctx, || op(&x, &y, &c, &mut z))?);
        }
        cmp.push(timed(ctx, || x.expr().gt(&y).eval_into(&mut c))?);
        and.push(timed(ctx, || (&xu & &yu).eval_into(&mut zu))?);
        pv.push(timed(ctx, || gpuarray::polyval(&p, &x).map(drop))?);
        raw.push(timed_copy(ctx, &copy, x.storage())?);
    }
    let floor = gbs(8, best(&raw));
    let row = |figure: &'static str, ours: f64| Row {
        figure,
        raw: "cuMemcpyDtoD of 2^26 floats",
        ours,
        theirs: floor,
        unit: "GB/s",
        higher_is_better: true,
        target: ">= 0.85x copy bandwidth",
        rounds: Vec::new(),
    };
    let ours = [
        gbs(8, best(&times[0])),
        gbs(8, best(&times[1])),
        gbs(9, best(&cmp)),
        gbs(13, best(&times[2])),
        gbs(12, best(&times[3])),
        gbs(12, best(&times[4])),
        gbs(12, best(&and)),
        gbs(8, best(&pv)),
    ];
    let figures = [
        "math::sin of 2^26 f32 (sinf; bytes read + written)",
        "math::exp of 2^26 f32 (expf; bytes read + written)",
        "a > b of 2^26 f32 into Bool (4 + 4 + 1 bytes per element)",
        "where_(c, a, b) of 2^26 f32 (1 + 4 + 4 + 4 bytes per element)",
        "maximum(a, b) of 2^26 f32 (NaN propagates; 12 bytes per element)",
        "logaddexp(a, b) of 2^26 f32 (log1pf of expf; 12 bytes per element)",
        "a & b of 2^26 u32 (bitwise_and; 12 bytes per element)",
        "polyval(p, x) of a cubic over 2^26 f32 (Horner's rule; 8 bytes per element)",
    ];
    let mut rows: Vec<Row> = figures.iter().zip(ours).map(|(f, v)| row(f, v)).collect();
    if let Some(theirs) = cupy() {
        let names = [
            "math::sin vs CuPy cp.sin(x, out=z)",
            "math::exp vs CuPy cp.exp(x, out=z)",
            "a > b vs CuPy cp.greater(x, y, out=c)",
            "where_ vs CuPy cp.where(c, x, y)",
            "maximum vs CuPy cp.maximum(x, y, out=z)",
            "logaddexp vs CuPy cp.logaddexp(x, y, out=z)",
            "a & b vs CuPy cp.bitwise_and(x, y, out=z) (u32)",
            "polyval vs CuPy cp.polyval(p, x) (a cubic)",
        ];
        for ((figure, ours), theirs) in names.into_iter().zip(ours).zip(theirs) {
            rows.push(Row::cupy(figure, "CuPy (subprocess)", ours, theirs, "GB/s"));
        }
    }
    Ok(rows)
}
