use gpu_runtime::gpuarray::{DeviceArray, ReductionKernel};
use gpu_runtime::half::f16;
use gpu_runtime::reduction;
use gpu_runtime::types::Complex32;

/// The Euclidean norm, on arrays and views of any layout.
#[reduction(map = "x * x", reduce = "a + b", neutral = "0.0", post_map = "sqrt(a)")]
pub fn norm2(x: &DeviceArray<f64>) -> f64;

// A scalar, two arrays, the index and a 16-bit float; no post-map.
#[reduction(
    map = "m ? __half2float(h) * w + (float)i : -1e30f",
    reduce = "fmaxf(a, b)",
    neutral = "-1e30f"
)]
fn masked_max(w: f32, h: &DeviceArray<f16>, m: &DeviceArray<u8>) -> f32;

// An integer count, accumulated in the result type.
#[reduction(map = "x > t ? 1ll : 0ll", reduce = "a + b", neutral = "0ll")]
fn count_above(t: i32, x: &DeviceArray<i32>) -> i64;

// Complex numbers (`<gpu_runtime/complex.h>`), the result type imported.
#[reduction(map = "x * x", reduce = "a + b", neutral = "gpu_runtime::complex<float>(0.0f)", post_map = "a / (float)n")]
fn mean_square(x: &DeviceArray<Complex32>) -> Complex32;

fn main() {
    fn launch(ctx: &gpu_runtime::Context) -> gpu_runtime::Result<()> {
        let x = DeviceArray::<f64>::zeros(ctx, vec![4, 3])?;
        // Any array or view of the element type; the result is a 0-d array.
        let r: DeviceArray<f64> = norm2(&x.t())?;
        assert_eq!(r.ndim(), 0);
        let stream = gpu_runtime::Stream::new(ctx)?;
        norm2_on(&stream, &x)?;
        let h = DeviceArray::<f16>::zeros(ctx, vec![8])?;
        let m = DeviceArray::<u8>::zeros(ctx, vec![8])?;
        masked_max(2.0, &h, &m)?;
        let i = DeviceArray::<i32>::zeros(ctx, vec![8])?;
        count_above(3, &i.view())?;
        let c = DeviceArray::<Complex32>::zeros(ctx, vec![8])?;
        mean_square(&c)?;
        // The typed run-time kernel, for its other forms.
        let k: &ReductionKernel<f64> = norm2::kernel()?;
        let _ = k.source(gpu_runtime::gpuarray::ReductionVariant::Contiguous);
        Ok(())
    }
    let _ = launch;
}
