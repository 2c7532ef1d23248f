use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::DeviceArray;

/// `z = a * x + y`, on arrays and views of any layout.
#[elementwise("z = a * x + y")]
pub fn axpy(a: f32, x: &DeviceArray<f32>, y: &DeviceArray<f32>, z: &mut DeviceArray<f32>);

// Several statements, a local, a called function, the index, an integer type and an output
// that is read before it is written.
#[elementwise(
    r#"
    long long t = x * k + (long long)i;  // a comment
    acc += t; if (acc > 100) acc = max(acc - 100, 0ll);
"#
)]
fn accumulate(k: i64, x: &DeviceArray<i64>, acc: &mut DeviceArray<i64>);

#[elementwise("y = sqrt(fabs(x)); flag = x < 0 ? 1u : 0u")]
fn split(x: &DeviceArray<f64>, y: &mut DeviceArray<f64>, flag: &mut DeviceArray<u32>);

// A loop with a local counter, casts, exponents and hex literals, a block comment.
#[elementwise(
    r#"
    double s = 0.0, scale = 1e-3; /* the sum of x * k over k */
    for (int k = 0; k < 3; ++k) { s += (double)x * k * scale; }
    y = s + (double)(0x10u & (unsigned)i) + 2.5e+1;
    y += m == 0 ? 0.0 : 1.0;
"#
)]
fn looped(x: &DeviceArray<f32>, m: &DeviceArray<u8>, y: &mut DeviceArray<f64>);

fn main() {
    fn launch(ctx: &gpu_runtime::Context) -> gpu_runtime::Result<()> {
        let x = DeviceArray::<f32>::zeros(ctx, vec![4, 3])?;
        let mut z = DeviceArray::<f32>::zeros(ctx, vec![3, 4])?;
        // A transposed view and an array: any array or view of the element type.
        axpy(2.0, &x.t(), &x.t(), &mut z)?;
        axpy(2.0, &x.t(), &x.t(), &mut z.view_mut())?;
        let stream = gpu_runtime::Stream::new(ctx)?;
        axpy_on(&stream, 2.0, &x.t(), &x.t(), &mut z)?;
        let i = DeviceArray::<i64>::zeros(ctx, vec![8])?;
        let mut acc = DeviceArray::<i64>::zeros(ctx, vec![8])?;
        accumulate(3, &i, &mut acc)?;
        let (f, mut g) = (
            DeviceArray::<f64>::zeros(ctx, vec![8])?,
            DeviceArray::<f64>::zeros(ctx, vec![8])?,
        );
        let mut flag = DeviceArray::<u32>::zeros(ctx, vec![8])?;
        split(&f, &mut g, &mut flag)?;
        let m = DeviceArray::<u8>::zeros(ctx, vec![8])?;
        let xf = DeviceArray::<f32>::zeros(ctx, vec![8])?;
        looped(&xf, &m, &mut g)?;
        axpy::kernel().map(drop)
    }
    let _ = launch;
}
