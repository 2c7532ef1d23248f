//! `#[elementwise]` fns over `half::f16`, `half::bf16` and `gpuarray::Bool` arrays and scalars.
//!
//! Without a GPU: every variant the run time may compile for each declared fn (the text its
//! build-time check compiled) compiles with NVRTC for sm_90, with CUDA's 16-bit float headers.
//! On a GPU (`cargo test --test suite -- --ignored array_elementwise_half::`): each fn against a CPU
//! reference on seeded random data (NaN and infinities among the floats), over empty, 0-d,
//! one- and several-axis arrays, each argument whole, stepped (every other element of the last
//! axis) or reversed (the first axis), the outputs' elements outside the view left as they were.

use gpu_runtime::__testing::{check_arch, compile_check};
use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::{Bool, DeviceArray, Element};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{Array, ArrayD, IxDyn};
use gpu_runtime::Context;
use gpu_suite::views::{info, Layout};
use gpu_suite::Rng;

/// `__half` arithmetic: CUDA's operators on `__half` (each product and sum rounded to `__half`,
/// or fused).
#[elementwise("z = a * x + y")]
fn axpy_f16(a: f16, x: &DeviceArray<f16>, y: &DeviceArray<f16>, z: &mut DeviceArray<f16>);

/// The same in `__nv_bfloat16`, the type written as a path.
#[elementwise("z = a * x + y")]
fn axpy_bf16(
    a: gpu_runtime::half::bf16,
    x: &DeviceArray<gpu_runtime::half::bf16>,
    y: &DeviceArray<gpu_runtime::half::bf16>,
    z: &mut DeviceArray<gpu_runtime::half::bf16>,
);

/// C's `bool` written from a comparison and read as an array.
#[elementwise("m = x > t && !skip")]
fn above(t: f32, x: &DeviceArray<f32>, skip: &DeviceArray<Bool>, m: &mut DeviceArray<Bool>);

/// A `Bool` scalar.
#[elementwise("z = flip ? !x : x")]
fn flip_if(flip: Bool, x: &DeviceArray<Bool>, z: &mut DeviceArray<Bool>);

/// Both 16-bit floats read, a `float` and a `bool` written.
#[elementwise("s = __half2float(h) + __bfloat162float(b); neg = s < 0.0f")]
fn widen(
    h: &DeviceArray<f16>,
    b: &DeviceArray<gpu_runtime::half::bf16>,
    s: &mut DeviceArray<f32>,
    neg: &mut DeviceArray<Bool>,
);

type Bf16 = gpu_runtime::half::bf16;

#[test]
fn declared_kernels_compile_for_sm_90() -> gpu_runtime::Result<()> {
    assert_eq!(
        axpy_f16::KERNEL.arguments(),
        "__half a, const __half *x, const __half *y, __half *z"
    );
    assert_eq!(
        axpy_bf16::KERNEL.arguments(),
        "__nv_bfloat16 a, const __nv_bfloat16 *x, const __nv_bfloat16 *y, __nv_bfloat16 *z"
    );
    assert_eq!(
        above::KERNEL.arguments(),
        "float t, const float *x, const bool *skip, bool *m"
    );
    assert_eq!(flip_if::KERNEL.arguments(), "bool flip, const bool *x, bool *z");
    let kernels = [
        axpy_f16::kernel()?,
        axpy_bf16::kernel()?,
        above::kernel()?,
        flip_if::kernel()?,
        widen::kernel()?,
    ];
    for k in kernels {
        for v in k.variants() {
            let source = k.source(v);
            if let Err(e) = compile_check(&source, check_arch(&source)) {
                panic!("{v:?} does not compile: {e}\n{source}");
            }
        }
    }
    let halves = widen::kernel()?.source(gpu_runtime::gpuarray::Variant::Contiguous);
    assert!(halves.contains("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"));
    Ok(())
}

/// The layouts of the arguments of one launch, last the output's.
const LAYOUTS: [[Layout; 3]; 5] = {
    use Layout::{Reversed as R, Stepped as S, Whole as W};
    [[W, W, W], [S, W, S], [R, S, W], [W, R, R], [S, S, S]]
};

/// The shapes each fn runs on: empty, 0-d, one element, a long axis (several blocks, the
/// contiguous path's vector body and tail), several axes.
const SHAPES: [&[usize]; 7] = [&[0], &[], &[1], &[1001], &[37, 129], &[3, 0, 5], &[5, 4, 33]];

/// Host data whose view in `layout` is `want`, `noise` elsewhere.
fn backing<T: Copy>(want: &ArrayD<T>, layout: Layout, mut noise: impl FnMut() -> T) -> ArrayD<T> {
    let mut shape = want.shape().to_vec();
    if layout == Layout::Stepped {
        if let Some(last) = shape.last_mut() {
            *last *= 2;
        }
    }
    let n = shape.iter().product();
    let mut b = Array::from_shape_vec(IxDyn(&shape), (0..n).map(|_| noise()).collect())
        .expect("the shape holds the data");
    b.slice_mut(info(want.ndim(), layout)).assign(want);
    b
}

fn host<T>(shape: &[usize], f: impl FnMut() -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), std::iter::repeat_with(f).take(n).collect())
        .expect("the shape holds the data")
}

/// A float in [-4, 4), NaN, or an infinity.
fn special_or(rng: &mut Rng) -> f64 {
    match rng.next_u64() % 40 {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        _ => rng.f64() * 4.0,
    }
}

/// One output: its device backing (the view in `layout` is written), the host backing it was
/// made from, and the layout.
struct Out<T: Element> {
    device: DeviceArray<T, IxDyn>,
    before: ArrayD<T>,
    layout: Layout,
    ndim: usize,
}

impl<T: Element> Out<T> {
    fn new(ctx: &Context, shape: &[usize], layout: Layout, mut noise: impl FnMut() -> T) -> Self {
        let zero = host(shape, || T::zero());
        let before = backing(&zero, layout, &mut noise);
        Out {
            device: DeviceArray::from_ndarray(ctx, &before).expect("the output uploads"),
            before,
            layout,
            ndim: shape.len(),
        }
    }

    /// The view the kernel wrote, read back; asserts that nothing else was written.
    fn written(&self, what: &str) -> gpu_runtime::Result<ArrayD<T>> {
        let after = self.device.to_ndarray()?;
        let mut inside = self.before.map(|_| false);
        inside.slice_mut(info(self.ndim, self.layout)).fill(true);
        for ((a, b), inside) in after.iter().zip(&self.before).zip(&inside) {
            assert!(
                *inside || a == b,
                "{what}: an element outside the output's view was written"
            );
        }
        Ok(after.slice(info(self.ndim, self.layout)).to_owned())
    }
}

/// `a * x + y` on 16-bit floats of `eps` (half an ulp at 1): `got` is the reference rounded
/// after each operation, or once after a fused multiply-add (CUDA may contract the two), to
/// within `eps` of the terms' size; NaN where the reference is NaN, the same infinities.
fn axpy_matches(got: f64, a: f64, x: f64, y: f64, round: impl Fn(f64) -> f64, eps: f64) -> bool {
    let want = round(round(a * x) + y);
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    got == want || (got - want).abs() <= 2.0 * eps * ((a * x).abs() + y.abs())
}

/// A 16-bit float type under test, as `f64`.
trait Half: Element {
    fn from(v: f64) -> Self;
    fn to(self) -> f64;
    /// Half an ulp at 1.
    const EPS: f64;
}

impl Half for f16 {
    fn from(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn to(self) -> f64 {
        self.to_f64()
    }
    const EPS: f64 = 1.0 / 2048.0;
}

impl Half for Bf16 {
    fn from(v: f64) -> Self {
        Bf16::from_f64(v)
    }
    fn to(self) -> f64 {
        self.to_f64()
    }
    const EPS: f64 = 1.0 / 256.0;
}

type Axpy<T> = fn(
    T,
    &gpu_runtime::gpuarray::DeviceArrayView<'_, T, IxDyn>,
    &gpu_runtime::gpuarray::DeviceArrayView<'_, T, IxDyn>,
    &mut gpu_runtime::gpuarray::DeviceArrayViewMut<'_, T, IxDyn>,
) -> gpu_runtime::Result<()>;

fn axpy_case<T: Half>(name: &str, seed: u64, run: Axpy<T>) -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(seed);
    for shape in SHAPES {
        for [lx, ly, lz] in LAYOUTS {
            let what = format!("{name} {shape:?} x {lx:?} y {ly:?} z {lz:?}");
            let a = T::from(rng.f64() * 3.0);
            let hx = host(shape, || T::from(special_or(&mut rng)));
            let hy = host(shape, || T::from(special_or(&mut rng)));
            let x = DeviceArray::from_ndarray(&ctx, &backing(&hx, lx, || T::from(9.0)))?;
            let y = DeviceArray::from_ndarray(&ctx, &backing(&hy, ly, || T::from(-9.0)))?;
            let mut z = Out::new(&ctx, shape, lz, || T::from(7.0));
            {
                let (xv, yv) = (x.slice(info(shape.len(), lx))?, y.slice(info(shape.len(), ly))?);
                let mut zv = z.device.slice_mut(info(shape.len(), lz))?;
                run(a, &xv, &yv, &mut zv)?;
            }
            let got = z.written(&what)?;
            for (k, ((g, x), y)) in got.iter().zip(&hx).zip(&hy).enumerate() {
                let round = |v: f64| T::from(v).to();
                assert!(
                    axpy_matches(g.to(), a.to(), x.to(), y.to(), round, T::EPS),
                    "{what}: element {k}: {a:?} * {x:?} + {y:?} gave {g:?}"
                );
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
#[allow(
    clippy::redundant_closure,
    reason = "the generated fn is generic over its arrays' storage, so only a closure takes views of any lifetime"
)]
fn f16_axpy_matches_the_host() -> gpu_runtime::Result<()> {
    axpy_case::<f16>("f16", 161, |a, x, y, z| axpy_f16(a, x, y, z))
}

#[test]
#[ignore = "needs a CUDA GPU"]
#[allow(
    clippy::redundant_closure,
    reason = "the generated fn is generic over its arrays' storage, so only a closure takes views of any lifetime"
)]
fn bf16_axpy_matches_the_host() -> gpu_runtime::Result<()> {
    axpy_case::<Bf16>("bf16", 1616, |a, x, y, z| axpy_bf16(a, x, y, z))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bool_kernels_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2727);
    let coin = |rng: &mut Rng| Bool::from(rng.next_u64() % 2 == 1);
    for shape in SHAPES {
        for [lx, ls, lm] in LAYOUTS {
            let what = format!("above {shape:?} x {lx:?} skip {ls:?} m {lm:?}");
            let t = (rng.f64() * 2.0) as f32;
            let hx = host(shape, || special_or(&mut rng) as f32);
            let hs = host(shape, || coin(&mut rng));
            let x = DeviceArray::from_ndarray(&ctx, &backing(&hx, lx, || 0.0))?;
            let skip = DeviceArray::from_ndarray(&ctx, &backing(&hs, ls, || Bool::TRUE))?;
            let mut m = Out::new(&ctx, shape, lm, || Bool::TRUE);
            above(
                t,
                &x.slice(info(shape.len(), lx))?,
                &skip.slice(info(shape.len(), ls))?,
                &mut m.device.slice_mut(info(shape.len(), lm))?,
            )?;
            let got = m.written(&what)?;
            for (k, ((g, x), s)) in got.iter().zip(&hx).zip(&hs).enumerate() {
                // NaN compares false, as in C and NumPy.
                let want = *x > t && !s.get();
                assert_eq!(g.get(), want, "{what}: element {k}: {x} > {t} && !{s}");
            }

            let flip = coin(&mut rng);
            let what = format!("flip_if({flip}) {shape:?} x {lx:?} z {lm:?}");
            let hx = host(shape, || coin(&mut rng));
            let x = DeviceArray::from_ndarray(&ctx, &backing(&hx, lx, || Bool::FALSE))?;
            let mut z = Out::new(&ctx, shape, lm, || Bool::TRUE);
            flip_if(
                flip,
                &x.slice(info(shape.len(), lx))?,
                &mut z.device.slice_mut(info(shape.len(), lm))?,
            )?;
            let got = z.written(&what)?;
            for (k, (g, x)) in got.iter().zip(&hx).enumerate() {
                assert_eq!(g.get(), x.get() != flip.get(), "{what}: element {k}");
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mixed_16_bit_floats_and_bool_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1627);
    for shape in SHAPES {
        for [lh, lb, lo] in LAYOUTS {
            let what = format!("widen {shape:?} h {lh:?} b {lb:?} outputs {lo:?}");
            let hh = host(shape, || f16::from_f64(special_or(&mut rng)));
            let hb = host(shape, || Bf16::from_f64(special_or(&mut rng)));
            let h = DeviceArray::from_ndarray(&ctx, &backing(&hh, lh, || f16::ONE))?;
            let b = DeviceArray::from_ndarray(&ctx, &backing(&hb, lb, || Bf16::ONE))?;
            let mut s = Out::new(&ctx, shape, lo, || 5.0f32);
            let mut neg = Out::new(&ctx, shape, lo, || Bool::TRUE);
            widen(
                &h.slice(info(shape.len(), lh))?,
                &b.slice(info(shape.len(), lb))?,
                &mut s.device.slice_mut(info(shape.len(), lo))?,
                &mut neg.device.slice_mut(info(shape.len(), lo))?,
            )?;
            let (got_s, got_neg) = (s.written(&what)?, neg.written(&what)?);
            let cases = got_s.iter().zip(&got_neg).zip(hh.iter().zip(&hb));
            for (k, ((gs, gn), (h, b))) in cases.enumerate() {
                // Both widen exactly, and one `float` addition rounds.
                let want = h.to_f32() + b.to_f32();
                let same = (want.is_nan() && gs.is_nan()) || *gs == want;
                assert!(same, "{what}: element {k}: {h} + {b} gave {gs}, want {want}");
                assert_eq!(gn.get(), want < 0.0, "{what}: element {k}: {want} < 0");
            }
        }
    }
    Ok(())
}
