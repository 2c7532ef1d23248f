//! `#[elementwise]` fns over `Complex32` and `Complex64` arrays and scalars, beside real ones.
//!
//! Without a GPU: the C arguments each fn is declared with, and every variant the run time may
//! compile for it (the text its build-time check compiled, with `<gpu_runtime/complex.h>`)
//! compiles with NVRTC for sm_90. On a GPU (`cargo test --test suite --
//! --ignored array_elementwise_complex::`): each fn against a CPU reference on seeded random data over empty, 0-d, one- and
//! several-axis arrays, each input whole, stepped (every other element of the last axis) or
//! reversed (the first axis).

use gpu_runtime::__testing::{check_arch, compile_check};
use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::ndarray::{Array, ArrayD, IxDyn};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::Context;
use gpu_suite::views::{info, Layout};
use gpu_suite::Rng;

/// Complex arithmetic of `<gpu_runtime/complex.h>`: a product, a sum and a conjugate.
#[elementwise("z = a * x + gpu_runtime::conj(y)")]
fn axpy_conj(
    a: Complex32,
    x: &DeviceArray<Complex32>,
    y: &DeviceArray<Complex32>,
    z: &mut DeviceArray<Complex32>,
);

/// A complex array in, a real array out, a real scalar beside.
#[elementwise("r = s * gpu_runtime::abs(x) + x.real()")]
fn scaled_abs(x: &DeviceArray<Complex64>, s: f64, r: &mut DeviceArray<f64>);

#[test]
fn declared_kernels_compile_for_sm_90() -> gpu_runtime::Result<()> {
    assert_eq!(
        axpy_conj::KERNEL.arguments(),
        "gpu_runtime::complex<float> a, const gpu_runtime::complex<float> *x, \
         const gpu_runtime::complex<float> *y, gpu_runtime::complex<float> *z"
    );
    assert_eq!(
        scaled_abs::KERNEL.arguments(),
        "const gpu_runtime::complex<double> *x, double s, double *r"
    );
    for k in [axpy_conj::kernel()?, scaled_abs::kernel()?] {
        for v in k.variants() {
            let source = k.source(v);
            assert!(source.contains("#include <gpu_runtime/complex.h>\n"), "{source}");
            if let Err(e) = compile_check(&source, check_arch(&source)) {
                panic!("{v:?} does not compile: {e}\n{source}");
            }
        }
    }
    Ok(())
}

/// Host data of `shape` whose view in `layout` (of an array twice as long in its last axis
/// when stepped) is what `f` makes, with `f`'s values elsewhere too: the backing and the view.
fn backed<T: Copy>(shape: &[usize], layout: Layout, mut f: impl FnMut() -> T) -> (ArrayD<T>, ArrayD<T>) {
    let mut full = shape.to_vec();
    if layout == Layout::Stepped {
        if let Some(last) = full.last_mut() {
            *last *= 2;
        }
    }
    let n = full.iter().product();
    let b = Array::from_shape_vec(IxDyn(&full), std::iter::repeat_with(&mut f).take(n).collect())
        .expect("the shape holds the data");
    let view = b.slice(info(shape.len(), layout)).to_owned();
    (b, view)
}

const SHAPES: [&[usize]; 6] = [&[0], &[], &[1], &[1001], &[37, 129], &[5, 4, 33]];
const LAYOUTS: [Layout; 3] = [Layout::Whole, Layout::Stepped, Layout::Reversed];

fn close(got: f64, want: f64, scale: f64, eps: f64) -> bool {
    got == want || (got - want).abs() <= eps * scale.max(1.0)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_elementwise_fns_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4242);
    for shape in SHAPES {
        for (k, &lx) in LAYOUTS.iter().enumerate() {
            let ly = LAYOUTS[(k + 1) % LAYOUTS.len()];
            let mut c32 = || Complex32::new(rng.f32() * 4.0 - 2.0, rng.f32() * 4.0 - 2.0);
            let (xb, xh) = backed(shape, lx, &mut c32);
            let (yb, yh) = backed(shape, ly, &mut c32);
            let a = c32();
            let (x, y) = (
                DeviceArray::from_ndarray(&ctx, &xb)?,
                DeviceArray::from_ndarray(&ctx, &yb)?,
            );
            let mut z = DeviceArray::<Complex32, IxDyn>::zeros(&ctx, IxDyn(shape))?;
            axpy_conj(
                a,
                &x.slice(info(shape.len(), lx))?,
                &y.slice(info(shape.len(), ly))?,
                &mut z,
            )?;
            let got = z.to_ndarray()?;
            for ((g, x), y) in got.iter().zip(&xh).zip(&yh) {
                let want = a * x + y.conj();
                let scale = f64::from((a * x).norm() + y.norm());
                assert!(
                    close(f64::from(g.re), f64::from(want.re), scale, 1e-6)
                        && close(f64::from(g.im), f64::from(want.im), scale, 1e-6),
                    "axpy_conj {shape:?} {lx:?}/{ly:?}: {g} != {want}"
                );
            }

            let mut c64 = || Complex64::new(rng.f64() * 8.0 - 4.0, rng.f64() * 8.0 - 4.0);
            let (wb, wh) = backed(shape, lx, &mut c64);
            let s = rng.f64() * 3.0 - 1.5;
            let w = DeviceArray::from_ndarray(&ctx, &wb)?;
            let mut r = DeviceArray::<f64, IxDyn>::zeros(&ctx, IxDyn(shape))?;
            scaled_abs(&w.slice(info(shape.len(), lx))?, s, &mut r)?;
            let got = r.to_ndarray()?;
            for (g, w) in got.iter().zip(&wh) {
                let want = s * w.norm() + w.re;
                assert!(
                    close(*g, want, w.norm() * s.abs() + w.re.abs(), 1e-14),
                    "scaled_abs {shape:?} {lx:?}: {g} != {want}"
                );
            }
        }
    }
    Ok(())
}
