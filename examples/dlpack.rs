//! DLPack (the `dlpack` feature): a buffer handed over as a DLPack tensor and taken back,
//! with no copy and no synchronization by hand. A kernel writes the buffer on one stream; the
//! export names the consumer's stream, which the protocol's stream rule makes wait for that
//! write; the import uses the memory there, and cudarc (through `dlpark`'s adapter) reads it
//! on its own stream. Run with `cargo run --features dlpack --example dlpack`.

use gpu_runtime::dlpack::{ConsumerStream, DlpackTensor, ForeignStream};
use gpu_runtime::dlpark::ffi::DLManagedTensorVersioned;
use gpu_runtime::dlpark::interop::cudarc::{CudaImport, ManagedCudaSlice};
use gpu_runtime::dlpark::TryFromDlpack;
use gpu_runtime::{kernel, Context, Stream};

#[kernel(
    r#"
__global__ void axpb(const float *x, float *y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}"#
)]
fn axpb(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

fn main() -> std::process::ExitCode {
    run_example("dlpack", || {
        let ctx = Context::default()?;
        let n = 1 << 20;
        let host = Rng::new(7).vec_f32(n);
        let k = axpb::prepare(&ctx)?;
        let (producer, consumer) = (Stream::new(&ctx)?, Stream::new(&ctx)?);

        // Produce: y = 2 x + 1 on the producer's stream, then export y for the consumer's.
        let x = ctx.to_device(&host[..])?;
        let mut y = ctx.alloc::<f32>(n)?;
        let grid = (n as u32).div_ceil(256);
        k.prepared_async_call(grid, 256, &producer, &x, &mut y, 2.0, 1.0, n as i32)?;
        let tensor = y.into_dlpack(ConsumerStream::Stream(&consumer))?;

        // Consume: import it back (checked: device, dtype, layout) and use it: z = 3 y.
        let y = DlpackTensor::<f32>::from_dlpack(tensor)?;
        let mut z = ctx.alloc::<f32>(n)?;
        k.prepared_async_call(grid, 256, &consumer, &y, &mut z, 3.0, 0.0, n as i32)?;
        let want: Vec<f32> = host.iter().map(|v| 3.0 * 2.0f32.mul_add(*v, 1.0)).collect();
        mismatch_error("ours -> DLPack -> ours", &z.to_vec()?, &want, 1e-5)?;

        // Hand z to cudarc: its stream waits for our kernel, then reads the memory in place.
        let cuda = gpu_runtime::cudarc::driver::CudaContext::new(ctx.device().ordinal())?;
        let stream = cuda.new_stream()?;
        let tensor = z.into_dlpack(ConsumerStream::Foreign(ForeignStream::cudarc(&stream)))?;
        // SAFETY: the export made `stream` wait for the work on z.
        let slice: ManagedCudaSlice<DLManagedTensorVersioned, f32> =
            unsafe { TryFromDlpack::try_from_dlpack(tensor, CudaImport::ready_on(stream.clone())) }?;
        mismatch_error(
            "ours -> DLPack -> cudarc",
            &stream.clone_dtoh(&*slice)?,
            &want,
            1e-5,
        )?;
        println!("dlpack: {n} elements went through DLPack twice without a copy; both results match the CPU");
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
