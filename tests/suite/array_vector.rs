//! Arrays of CUDA vector types (PyCUDA's `gpuarray.vec.float3`) on a GPU, compared with the host
//! on seeded random data: round trips of several vector types (12-byte `Float3`, `Double2`,
//! `UChar4`, `Int4`, 3-byte `Char3`, 6-byte `Short3`, 32-byte `Double4`, `Half2`, `Float2`)
//! including empty and 0-d arrays and Fortran order; stepped, reversed, transposed and permuted
//! views copied on the device (the strided copy kernel, and for the transposes of elements of up
//! to 8 bytes the tiled one) and to the host; `zeros`, `full`, `fill` through a stepped view,
//! `copy_from` into a view, `concatenate`; and elementwise kernels over them, run-time
//! (`ElementwiseKernel`, element-bound and PyCUDA's indexed form) and build-time
//! (`#[elementwise]`): the norm of `float3` vectors (with infinite and NaN components), `float4`s
//! packed from pairs of `float2`s, a `float3` scalar, and the typed error of a `float4` parameter
//! given a `Float3` array.
//!
//! `cargo test --test suite -- --ignored array_vector::` on a machine with a GPU.

use gpu_runtime::elementwise;
use gpu_runtime::gpuarray::{concatenate, ArrayElement, DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr0, s, Array1, Array2, Array3, Axis, ShapeBuilder};
use gpu_runtime::types::{Char3, Double2, Double4, Float2, Float3, Float4, Half2, Int4, Short3, UChar4};
use gpu_runtime::{ArgumentError, Context, Error};
use gpu_suite::Rng;

/// A vector type under test, with a random value of it.
trait Vector: ArrayElement + Default {
    fn random(rng: &mut Rng) -> Self;
}

impl Vector for Float3 {
    fn random(rng: &mut Rng) -> Self {
        Float3::new(rng.f32() * 10.0, rng.f32(), rng.f32() * 1e3)
    }
}
impl Vector for Double2 {
    fn random(rng: &mut Rng) -> Self {
        Double2::new(rng.f64() * 1e6, rng.f64())
    }
}
impl Vector for UChar4 {
    fn random(rng: &mut Rng) -> Self {
        let b = rng.next_u64().to_le_bytes();
        UChar4::new(b[0], b[1], b[2], b[3])
    }
}
impl Vector for Int4 {
    fn random(rng: &mut Rng) -> Self {
        let r = rng.next_u64();
        Int4::new(r as i32, (r >> 32) as i32, -(r as i32 >> 3), 7)
    }
}
impl Vector for Char3 {
    fn random(rng: &mut Rng) -> Self {
        let b = rng.next_u64().to_le_bytes();
        Char3::new(b[0] as i8, b[1] as i8, b[2] as i8)
    }
}
impl Vector for Short3 {
    fn random(rng: &mut Rng) -> Self {
        let r = rng.next_u64();
        Short3::new(r as i16, (r >> 16) as i16, (r >> 32) as i16)
    }
}
impl Vector for Double4 {
    fn random(rng: &mut Rng) -> Self {
        Double4::new(rng.f64(), rng.f64() * 1e-3, -rng.f64(), f64::from(rng.f32()))
    }
}
impl Vector for Float2 {
    fn random(rng: &mut Rng) -> Self {
        Float2::new(rng.f32() * 1e4, -rng.f32())
    }
}
impl Vector for Half2 {
    fn random(rng: &mut Rng) -> Self {
        Half2::new(f16::from_f32(rng.f32()), f16::from_f32(rng.f32() * 100.0))
    }
}

fn random<V: Vector>(rng: &mut Rng, n: usize) -> Vec<V> {
    (0..n).map(|_| V::random(rng)).collect()
}

/// Every layout operation and copy of arrays of `V`, against `ndarray` on the host.
fn layouts<V: Vector>(ctx: &Context, seed: u64) -> gpu_runtime::Result<()> {
    let what = std::any::type_name::<V>();
    let mut rng = Rng::new(seed);
    let host = Array2::from_shape_vec((37, 70), random::<V>(&mut rng, 37 * 70)).unwrap();
    let a = DeviceArray::from_ndarray(ctx, &host)?;
    assert_eq!(a.to_ndarray()?, host, "{what}: round trip");
    assert_eq!(
        a.to_vec()?,
        host.iter().copied().collect::<Vec<_>>(),
        "{what}: to_vec"
    );
    // Views copied on the device (`to_contiguous`: the strided copy kernel) and read back.
    let stepped = s![..;3, ..;-2];
    assert_eq!(
        a.slice(stepped)?.to_contiguous()?.to_ndarray()?,
        host.slice(stepped),
        "{what}: stepped"
    );
    assert_eq!(
        a.slice(stepped)?.to_ndarray()?,
        host.slice(stepped),
        "{what}: stepped to host"
    );
    assert_eq!(
        a.t().to_contiguous()?.to_ndarray()?,
        host.t(),
        "{what}: transpose"
    );
    assert_eq!(
        a.slice(s![.., 5])?.to_contiguous()?.to_ndarray()?,
        host.column(5),
        "{what}: column"
    );
    // Misaligned and reversed contiguous runs (the element loop, not the 4-element chunks).
    assert_eq!(
        a.slice(s![1.., 1..])?.to_contiguous()?.to_ndarray()?,
        host.slice(s![1.., 1..]),
        "{what}: offset"
    );
    assert_eq!(
        a.slice(s![..;-1, ..;-1])?.to_contiguous()?.to_ndarray()?,
        host.slice(s![..;-1, ..;-1])
    );
    // Three axes, permuted; a reshape of the copy.
    let host3 = Array3::from_shape_vec((4, 5, 6), random::<V>(&mut rng, 120)).unwrap();
    let a3 = DeviceArray::from_ndarray(ctx, &host3)?;
    let permuted = a3.view().permuted_axes(&[2, 0, 1])?;
    assert_eq!(
        permuted.to_contiguous()?.to_ndarray()?,
        host3.view().permuted_axes([2, 0, 1])
    );
    let flat = permuted.to_contiguous()?.reshape(120)?;
    let want: Vec<V> = host3.view().permuted_axes([2, 0, 1]).iter().copied().collect();
    assert_eq!(flat.to_vec()?, want, "{what}: reshape");
    // Fortran order in and out.
    let fortran = Array2::from_shape_vec((9, 11).f(), random::<V>(&mut rng, 99)).unwrap();
    let f = DeviceArray::from_ndarray(ctx, &fortran)?;
    assert!(f.is_fortran_layout());
    assert_eq!(f.to_ndarray()?, fortran);
    assert_eq!(f.to_contiguous()?.to_ndarray()?, fortran);
    // Empty and 0-d.
    let empty = DeviceArray::<V, _>::zeros(ctx, (0, 4))?;
    assert_eq!(empty.to_vec()?, Vec::<V>::new());
    assert_eq!(empty.to_contiguous()?.shape(), &[0, 4]);
    let v0 = V::random(&mut rng);
    let zero_d = DeviceArray::from_ndarray(ctx, &arr0(v0))?;
    assert_eq!(zero_d.to_vec()?, vec![v0]);
    assert_eq!(zero_d.to_contiguous()?.to_vec()?, vec![v0]);
    // zeros, full, fill through a stepped view, full_like.
    assert!(DeviceArray::<V, _>::zeros(ctx, 1000)?
        .to_vec()?
        .iter()
        .all(|v| *v == V::default()));
    let mut full = DeviceArray::full(ctx, (5, 6), v0)?;
    assert!(full.to_vec()?.iter().all(|v| *v == v0));
    let v1 = V::random(&mut rng);
    full.slice_mut(s![.., ..;2])?.fill(v1)?;
    for ((_, j), v) in full.to_ndarray()?.indexed_iter() {
        assert_eq!(*v, if j % 2 == 0 { v1 } else { v0 }, "{what}: fill");
    }
    let like = DeviceArray::full_like(&a.t(), v1)?;
    assert_eq!(
        (like.shape(), like.to_vec()?),
        (&[70usize, 37][..], vec![v1; 37 * 70])
    );
    let mut zero_d = DeviceArray::full(ctx, (), v0)?;
    zero_d.fill(v1)?;
    assert_eq!(zero_d.to_vec()?, vec![v1]);
    // copy_from into a view, from a transposed view.
    let mut dst = DeviceArray::full(ctx, (80, 40), v0)?;
    dst.slice_mut(s![5..75, 1..38])?.copy_from(&a.t())?;
    let mut want = Array2::from_elem((80, 40), v0);
    want.slice_mut(s![5..75, 1..38]).assign(&host.t());
    assert_eq!(dst.to_ndarray()?, want, "{what}: copy_from");
    // concatenate.
    let joined = concatenate(&[&a.view(), &a.slice(s![..3, ..])?], 0)?;
    let want = gpu_runtime::ndarray::concatenate(Axis(0), &[host.view(), host.slice(s![..3, ..])]).unwrap();
    assert_eq!(joined.to_ndarray()?, want, "{what}: concatenate");
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn vector_arrays_copy_view_and_fill() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    assert_eq!(std::mem::size_of::<Float3>(), 12);
    layouts::<Float3>(&ctx, 1)?;
    layouts::<Double2>(&ctx, 2)?;
    layouts::<UChar4>(&ctx, 3)?;
    layouts::<Int4>(&ctx, 4)?;
    layouts::<Char3>(&ctx, 5)?;
    layouts::<Short3>(&ctx, 6)?;
    layouts::<Double4>(&ctx, 7)?;
    layouts::<Half2>(&ctx, 8)?;
    layouts::<Float2>(&ctx, 9)
}

#[elementwise("z = make_float4(p.x, p.y, q.x, q.y)")]
fn pack(p: &DeviceArray<Float2>, q: &DeviceArray<Float2>, z: &mut DeviceArray<Float4>);

#[elementwise("z = make_float3(s.x * v.x, s.y * v.y, s.z * v.z)")]
fn scale(s: Float3, v: &DeviceArray<Float3>, z: &mut DeviceArray<Float3>);

#[elementwise("norm = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z)")]
fn norm(v: &DeviceArray<Float3>, norm: &mut DeviceArray<f32>);

/// The host's norm, in `f32` as the kernel computes it (`sqrtf` and IEEE products and sums
/// are correctly rounded on both, so only fused multiply-adds differ: a relative tolerance).
fn host_norm(v: Float3) -> f32 {
    (v.x * v.x + v.y * v.y + v.z * v.z).sqrt()
}

#[track_caller]
fn check_norms(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let same = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 1e-6 * w.abs();
        assert!(same, "{what}: element {k}: {g} vs {w}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn elementwise_kernels_over_vector_elements_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(11);
    let n = 100_003;
    let mut vs: Vec<Float3> = random(&mut rng, n);
    vs[7] = Float3::new(f32::INFINITY, 1.0, 2.0);
    vs[8] = Float3::new(0.0, f32::NAN, 1.0);
    vs[9] = Float3::new(-0.0, 0.0, -0.0);
    let host = Array1::from(vs.clone());
    let v = DeviceArray::from_ndarray(&ctx, &host)?;
    let want: Vec<f32> = vs.iter().map(|&x| host_norm(x)).collect();

    // `#[elementwise]`: contiguous, and a reversed view.
    let mut out = DeviceArray::<f32, _>::zeros(&ctx, n)?;
    norm(&v, &mut out)?;
    check_norms("#[elementwise] norm", &out.to_vec()?, &want);
    norm(&v.slice(s![..;-1])?, &mut out)?;
    let reversed: Vec<f32> = want.iter().rev().copied().collect();
    check_norms(
        "#[elementwise] norm of a reversed view",
        &out.to_vec()?,
        &reversed,
    );

    // The run-time kernel, element-bound, over a 2-D transposed view.
    let k = ElementwiseKernel::new(
        "const float3 *v, float *norm",
        "norm = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z)",
    )?;
    let grid = Array2::from_shape_vec((300, 333), vs[..99_900].to_vec()).unwrap();
    let g = DeviceArray::from_ndarray(&ctx, &grid)?;
    let mut out2 = DeviceArray::<f32, _>::zeros(&ctx, (333, 300))?;
    k.launch([KernelArg::input(&g.t()), KernelArg::output(&mut out2)])?;
    let want2: Vec<f32> = grid.t().iter().map(|&x| host_norm(x)).collect();
    check_norms("ElementwiseKernel norm of a transpose", &out2.to_vec()?, &want2);

    // PyCUDA's indexed form.
    let indexed = ElementwiseKernel::new("const float3 *a, float *out", "out[i] = a[i].x + a[i].y")?;
    let mut sums = DeviceArray::<f32, _>::zeros(&ctx, n)?;
    indexed.launch([KernelArg::input(&v), KernelArg::output(&mut sums)])?;
    let want_sums: Vec<f32> = vs.iter().map(|x| x.x + x.y).collect();
    let got = sums.to_vec()?;
    for (k, (g, w)) in got.iter().zip(&want_sums).enumerate() {
        assert!(
            g == w || (g.is_nan() && w.is_nan()),
            "indexed: element {k}: {g} vs {w}"
        );
    }

    // float4 from pairs of float2: exact.
    let ps: Vec<Float2> = (0..n).map(|_| Float2::new(rng.f32(), rng.f32())).collect();
    let qs: Vec<Float2> = (0..n).map(|_| Float2::new(rng.f32(), rng.f32())).collect();
    let (p, q) = (
        DeviceArray::from_ndarray(&ctx, &Array1::from(ps.clone()))?,
        DeviceArray::from_ndarray(&ctx, &Array1::from(qs.clone()))?,
    );
    let mut packed = DeviceArray::<Float4, _>::zeros(&ctx, n)?;
    pack(&p, &q, &mut packed)?;
    let want_packed: Vec<Float4> = ps
        .iter()
        .zip(&qs)
        .map(|(p, q)| Float4::new(p.x, p.y, q.x, q.y))
        .collect();
    assert_eq!(packed.to_vec()?, want_packed);

    // A vector scalar: one product per component, exact on both sides.
    let s = Float3::new(2.0, -0.5, 3.0);
    let mut scaled = DeviceArray::<Float3, _>::zeros(&ctx, n)?;
    scale(s, &v, &mut scaled)?;
    let got = scaled.to_vec()?;
    for (k, (g, x)) in got.iter().zip(&vs).enumerate() {
        let w = Float3::new(s.x * x.x, s.y * x.y, s.z * x.z);
        let eq = |a: f32, b: f32| a == b || (a.is_nan() && b.is_nan());
        assert!(
            eq(g.x, w.x) && eq(g.y, w.y) && eq(g.z, w.z),
            "scale: element {k}: {g:?} vs {w:?}"
        );
    }

    // Empty and 0-d arrays launch nothing and write their one element.
    let empty = DeviceArray::<Float3, _>::zeros(&ctx, 0)?;
    let mut empty_out = DeviceArray::<f32, _>::zeros(&ctx, 0)?;
    norm(&empty, &mut empty_out)?;
    let one = DeviceArray::from_ndarray(&ctx, &arr0(Float3::new(3.0, 4.0, 0.0)))?;
    let mut one_out = DeviceArray::<f32, _>::zeros(&ctx, ())?;
    norm(&one, &mut one_out)?;
    assert_eq!(one_out.to_vec()?, vec![5.0]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_vector_array_of_another_type_is_refused_before_launch() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let v = DeviceArray::<Float3, _>::zeros(&ctx, 8)?;
    let mut out = DeviceArray::<f32, _>::zeros(&ctx, 8)?;
    let k = ElementwiseKernel::new("const float4 *v, float *out", "out = v.w")?;
    match k.launch([KernelArg::input(&v), KernelArg::output(&mut out)]) {
        Err(Error::Argument(ArgumentError::ElementTypeDiffers {
            expected: "float4",
            given: "float3",
            expected_array: true,
            given_array: true,
            ..
        })) => Ok(()),
        other => panic!("a Float3 array for `const float4 *v`: {other:?}"),
    }
}
