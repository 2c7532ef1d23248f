//! CUDA C written at run time (PyCUDA's `SourceModule`): the operator and the unroll factor
//! are spliced into the source as text, so each combination is its own compiled kernel, built
//! with NVRTC when first needed and kept in the on-disk cache for the next run. The kernel is
//! launched through `prepare_args` and `Arg`s, checked against its C declaration at run time.
//! Last, PyCUDA's `multiply_them` runs with host arrays copied in and out by `Function::call`.
//!
//! `cargo run --release --example runtime_source -- 8` unrolls 8 times (default 4). Run it
//! twice: the second run finds every module in the cache.

use gpu_runtime::launch::{Arg, ArgType};
use gpu_runtime::{Context, SourceModule};

/// Each thread handles `unroll` elements a block apart, so that a warp's loads stay coalesced.
fn source(op: &str, unroll: u32) -> String {
    format!(
        r#"
__global__ void combine(const float *x, float *y, int n) {{
    int base = blockIdx.x * blockDim.x * {unroll} + threadIdx.x;
    #pragma unroll
    for (int u = 0; u < {unroll}; ++u) {{
        int i = base + u * blockDim.x;
        if (i < n) {{ float a = x[i], b = y[i]; y[i] = {op}; }}
    }}
}}"#
    )
}

/// The CPU's version of an operator.
type BinOp = fn(f32, f32) -> f32;

fn main() -> std::process::ExitCode {
    run_example("runtime_source", || {
        let unroll: u32 = match std::env::args().nth(1) {
            Some(a) => a
                .parse()
                .map_err(|_| format!("the unroll factor must be a positive integer, not {a:?}"))?,
            None => 4,
        };
        if !(1..=64).contains(&unroll) {
            return Err(format!("the unroll factor must be from 1 to 64, not {unroll}").into());
        }
        let ctx = Context::default()?;
        let n = 1_000_000;
        let mut rng = Rng::new(6);
        let (x, y) = (rng.vec_f32(n), rng.vec_f32(n));
        let xd = ctx.to_device(&x)?;

        // One rounding each (`2.0f * b` is exact, so even a fused multiply-add rounds once):
        // GPU and CPU agree bit for bit.
        let ops: [(&str, BinOp); 4] = [
            ("a + b", |a, b| a + b),
            ("a * b", |a, b| a * b),
            ("fmaxf(a, b)", f32::max),
            ("a - 2.0f * b", |a, b| a - 2.0 * b),
        ];
        for (op, cpu) in ops {
            let module = SourceModule::new(source(op, unroll)).load(&ctx)?;
            // PyCUDA's `prepare("PPi")`: the types are checked against `combine`'s declaration.
            let combine = module.get_function("combine")?.prepare_args(&[
                ArgType::ConstPtr,
                ArgType::MutPtr,
                ArgType::I32,
            ])?;
            let mut yd = ctx.to_device(&y)?;
            let grid = (n as u32).div_ceil(256 * unroll);
            combine.prepared_call(
                grid,
                256,
                &[Arg::input(&xd), Arg::output(&mut yd), Arg::I32(n as i32)],
            )?;
            let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| cpu(*a, *b)).collect();
            mismatch_error(op, &yd.to_vec()?, &want, 0.0)?;
            let cache = match module.cache_status() {
                Some(s) => format!("{s:?}"),
                None => "none".into(),
            };
            println!("y = {op:<12} unrolled {unroll}x: matches the CPU; disk cache: {cache}");
        }
        // Miss: compiled and stored; Hit: loaded without compiling; Disabled/Unavailable: no cache.
        println!(
            "cache directory: {:?}",
            gpu_runtime::compiler::cache::default_cache_dir()
        );

        // PyCUDA's first example, `multiply_them(drv.Out(dest), drv.In(a), drv.In(b), ...)`:
        // host arrays go straight to `call`, which takes the types from the C declaration,
        // copies `a` and `b` to the device and `dest` back.
        let module = SourceModule::new(
            "__global__ void multiply_them(float *dest, const float *a, const float *b) {
                 const int i = threadIdx.x;
                 dest[i] = a[i] * b[i];
             }",
        )
        .load(&ctx)?;
        let (a, b) = (rng.vec_f32(400), rng.vec_f32(400));
        let mut dest = vec![0f32; 400];
        module.get_function("multiply_them")?.call(
            1,
            400,
            &mut [Arg::host_out(&mut dest), Arg::host_in(&a), Arg::host_in(&b)],
        )?;
        let want: Vec<f32> = a.iter().zip(&b).map(|(a, b)| a * b).collect();
        mismatch_error("multiply_them", &dest, &want, 0.0)?;
        println!("multiply_them with host In/Out arrays: matches the CPU");
        Ok(())
    })
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
