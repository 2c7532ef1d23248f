//! Ports the tail of PyCUDA's `test/test_gpuarray.py` (from `test_struct_reduce` to the end) as
//! GPU integration tests of `gpu_runtime::gpuarray`: `test_struct_reduce`, `test_reduce_out`,
//! `test_sum_allocator`, `test_dot_allocator`, `test_view_and_strides`,
//! `test_scalar_comparisons`, `test_minimum_maximum_scalar`, `test_transpose`, `test_newaxis`,
//! `test_copy`, `test_get_set`, `test_zeros_like_etc`, `test_logical_and_or`,
//! `test_logical_not`, `test_truth_value`, `test_setitem_scalar`, `test_default_zero`,
//! `test_log10`, `test_binary_ops_with_unequal_dtypes`, `test_big_array_elementwise`,
//! `test_big_array_reduction`, `test_big_array_scan`, `test_noncontig_transpose`,
//! `test_copy_strides`. Expected values are computed on the host.
//!
//! The big-array tests allocate several GiB of device and host memory, as PyCUDA's do.
//!
//! Run on a GPU machine with `cargo test --test suite -- --ignored array_pycuda::gpuarray_tail`.

use crate::common::ctx;
use gpu_runtime::gpuarray::promote::{self, Promote};
use gpu_runtime::gpuarray::{
    math, Bool, DType, DeviceArray, Element, ElementwiseKernel, KernelArg, PooledArray, ReductionKernel,
    ScanKernel,
};
use gpu_runtime::ndarray::{s, Array, Array2, IxDyn, NewAxis, ShapeBuilder};
use gpu_runtime::tools::DeviceMemoryPool;
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::{Context, DeviceRepr};
use gpu_suite::Rng;

#[derive(Clone, Copy)]
#[repr(C)]
struct MinMax {
    cur_min: f32,
    cur_max: f32,
}
// SAFETY: repr(C), two f32 fields, every bit pattern valid; the preamble declares the same.
unsafe impl DeviceRepr for MinMax {}

/// Ports `test_struct_reduce`: a reduction with a user struct accumulator gives min and max.
#[test]
#[ignore = "needs a CUDA GPU"]
fn struct_reduce() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, 20000, 1)?;
    let h = a.to_vec()?;
    let preamble = "struct minmax_collector { float cur_min; float cur_max; };\n\
        __device__ minmax_collector mmc(float lo, float hi) { minmax_collector m; m.cur_min = lo; m.cur_max = hi; return m; }\n\
        __device__ minmax_collector agg_mmc(minmax_collector a, minmax_collector b) { return mmc(fminf(a.cur_min, b.cur_min), fmaxf(a.cur_max, b.cur_max)); }";
    let want_min = h.iter().copied().fold(f32::INFINITY, f32::min);
    let want_max = h.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for (post, want) in [("a.cur_min", want_min), ("a.cur_max", want_max)] {
        let red = ReductionKernel::<f32>::with_struct_accumulator::<MinMax>(
            "const float *x",
            "mmc(x, x)",
            "agg_mmc(a, b)",
            "mmc(10000.0f, -10000.0f)",
            "minmax_collector",
            preamble,
        )?
        .post_map(post);
        let got = red.reduce([KernelArg::input(&a)])?.to_vec()?[0];
        assert_eq!(got, want, "{post}");
    }
    Ok(())
}

/// Ports `test_view_and_strides`: a view of a slice keeps its shape, strides and values.
#[test]
#[ignore = "needs a CUDA GPU"]
fn view_and_strides() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let x = DeviceArray::<f32, _>::random_uniform(&ctx, (5, 10), 2)?;
    let y_slice = x.slice(s![..3, ..5])?;
    let y = y_slice.view();
    assert_eq!(y.shape(), y_slice.shape());
    assert_eq!(y.strides(), y_slice.strides());
    let hx = x.to_ndarray()?;
    assert_eq!(y.to_ndarray()?, hx.slice(s![..3, ..5]));
    Ok(())
}

/// Ports `test_scalar_comparisons`: `>`, `<=`, `==` against a scalar, elementwise.
#[test]
#[ignore = "needs a CUDA GPU"]
fn scalar_comparisons() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = [1.0f64, 0.25, 0.1, -0.1, 0.0];
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(a.to_vec()))?;
    let check = |got: Vec<gpu_runtime::gpuarray::Bool>, f: &dyn Fn(f64) -> bool, what: &str| {
        let got: Vec<bool> = got.into_iter().map(bool::from).collect();
        let want: Vec<bool> = a.iter().map(|&x| f(x)).collect();
        assert_eq!(got, want, "{what}");
    };
    check(d.gt(0.25)?.to_vec()?, &|x| x > 0.25, "> 0.25");
    check(d.le(0.25)?.to_vec()?, &|x| x <= 0.25, "<= 0.25");
    check(d.eq(0.25)?.to_vec()?, &|x| x == 0.25, "== 0.25");
    check(math::equal(&d, 1.0)?.to_vec()?, &|x| x == 1.0, "== 1");
    Ok(())
}

/// Ports `test_minimum_maximum_scalar`: `maximum(a, 0)` and `minimum(0, a)` exactly.
#[test]
#[ignore = "needs a CUDA GPU"]
fn minimum_maximum_scalar() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, 20, 3)?;
    let h = a.to_vec()?;
    let mx = math::maximum(&a, 0.0)?.to_vec()?;
    let mn = math::minimum(0.0, &a)?.to_vec()?;
    assert_eq!(mx, h.iter().map(|&x| x.max(0.0)).collect::<Vec<_>>());
    assert_eq!(mn, h.iter().map(|&x| x.min(0.0)).collect::<Vec<_>>());
    Ok(())
}

/// Ports `test_transpose`: `a.T` of a 3-d array matches the host transpose.
#[test]
#[ignore = "needs a CUDA GPU"]
fn transpose() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, (10, 20, 30), 4)?;
    let h = a.to_ndarray()?;
    let t = a.t().to_ndarray()?;
    assert_eq!(t.shape(), &[30, 20, 10]);
    assert_eq!(t, h.t());
    Ok(())
}

/// Ports `test_setitem_scalar`: `zeros + 42`, then `a[...] = 1729`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn setitem_scalar() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let z = DeviceArray::<f64, _>::zeros(&ctx, 5)?;
    let mut a = (&z + 42.0).eval()?;
    assert_eq!(a.to_vec()?, vec![42.0; 5]);
    a.fill(1729.0)?;
    assert_eq!(a.to_vec()?, vec![1729.0; 5]);
    Ok(())
}

/// Ports `test_copy_strides`: a Fortran-order array keeps its strides on upload and `copy`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn copy_strides() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(5);
    let data: Vec<f64> = (0..22 * 33).map(|_| rng.f64() * 2.0 - 1.0).collect();
    let a = Array2::from_shape_vec((22, 33).f(), data).unwrap();
    let d = DeviceArray::from_ndarray(&ctx, &a)?;
    assert_eq!(d.strides(), a.strides());
    // PyCUDA's `a.copy()` keeps the layout.
    let d2 = d.copy()?;
    assert_eq!(d2.strides(), a.strides());
    assert_eq!(d2.to_ndarray()?, a);
    // A C array keeps C order; its transpose (Fortran-contiguous) is copied in Fortran order,
    // and a view with steps in C order.
    let c = DeviceArray::from_ndarray(&ctx, &a.as_standard_layout().to_owned())?;
    assert_eq!(c.copy()?.strides(), c.strides());
    let t = c.t().copy()?;
    assert_eq!(t.strides(), &[1, 33][..]);
    assert_eq!(t.to_ndarray()?, a.t());
    let stream = gpu_runtime::Stream::new(&ctx)?;
    let stepped = d.slice(s![..;2, 1..;3])?.on(&stream).copy()?;
    stream.synchronize()?;
    let want = a.slice(s![..;2, 1..;3]);
    assert_eq!(stepped.strides(), &[want.ncols() as isize, 1][..]);
    assert_eq!(stepped.to_ndarray()?, want);
    Ok(())
}

/// Ports `test_reduce_out`: a max reduction of each row written into one element of `out`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn reduce_out() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, (10, 200), 6)?;
    let h = a.to_ndarray()?;
    let red = ReductionKernel::<f32>::new("const float *in", "in", "max(a, b)", "0.0f")?;
    let mut out = DeviceArray::<f32, _>::empty(&ctx, 10)?;
    for i in 0..10 {
        let row = a.slice(s![i, ..])?;
        red.reduce_into([KernelArg::input(&row)], &mut out.slice_mut(s![i..i + 1])?)?;
    }
    let want: Vec<f32> = h
        .outer_iter()
        .map(|r| r.iter().copied().fold(0.0f32, f32::max))
        .collect();
    assert_eq!(out.to_vec()?, want);
    Ok(())
}

/// Ports `test_sum_allocator`: a sum of an array in pool memory (allocator -> `DeviceMemoryPool`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn sum_allocator() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let pool = DeviceMemoryPool::new(&ctx);
    let n = 512 + (Rng::new(7).next_u64() % 512) as i32;
    let host = Array::from((0..n).collect::<Vec<i32>>());
    let a = DeviceArray::<i32, _>::arange(&ctx, 0.0, f64::from(n), 1.0)?;
    let c = PooledArray::from_ndarray_in(&pool, &host)?;
    let want = n * (n - 1) / 2;
    assert_eq!(a.sum()?, want);
    assert_eq!(c.sum()?, want);
    Ok(())
}

/// Ports `test_dot_allocator`: a dot product of arrays in pool memory and in plain memory.
#[test]
#[ignore = "needs a CUDA GPU"]
fn dot_allocator() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let pool = DeviceMemoryPool::new(&ctx);
    let mut rng = Rng::new(8);
    let mut ints = || -> Vec<i64> { (0..1024).map(|_| 512 + (rng.next_u64() % 512) as i64).collect() };
    let (ha, hb) = (ints(), ints());
    let want: i64 = ha.iter().zip(&hb).map(|(x, y)| x * y).sum();
    let (ha, hb) = (Array::from(ha), Array::from(hb));
    let a = DeviceArray::from_ndarray(&ctx, &ha)?;
    let b = DeviceArray::from_ndarray(&ctx, &hb)?;
    assert_eq!(a.dot(&b)?, want);
    let pa = PooledArray::from_ndarray_in(&pool, &ha)?;
    let pb = PooledArray::from_ndarray_in(&pool, &hb)?;
    assert_eq!(pa.dot(&pb)?, want);
    Ok(())
}

/// Ports `test_newaxis`: `a[:, np.newaxis]` has NumPy's shape and strides.
#[test]
#[ignore = "needs a CUDA GPU"]
fn newaxis() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, (10, 20, 30), 9)?;
    let h = a.to_ndarray()?;
    let b = a.slice(s![.., NewAxis, .., ..])?;
    let hb = h.slice(s![.., NewAxis, .., ..]);
    assert_eq!(b.shape(), hb.shape());
    assert_eq!(b.strides(), hb.strides());
    assert_eq!(b.to_ndarray()?, hb);
    Ok(())
}

/// Ports `test_copy`: stepped slices of 2-, 3- and 4-d arrays (and a transpose) copy back right.
#[test]
#[ignore = "needs a CUDA GPU"]
fn copy() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let ranges = [(0usize, 3usize, 1usize), (1, 2, 1), (0, 3, 2), (0, 3, 3)];
    for shape in [[3usize, 3], [3, 1]] {
        let a = DeviceArray::<f64, _>::random_uniform(&ctx, shape, 10)?;
        let h = a.to_ndarray()?;
        for (lo, hi, st) in ranges {
            let sl = s![lo..hi;st, ..];
            assert_eq!(
                a.slice(sl)?.to_ndarray()?,
                h.slice(sl),
                "{shape:?} {lo}:{hi}:{st}"
            );
        }
    }
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, (3, 3, 3), 11)?;
    let h = a.to_ndarray()?;
    for (lo, hi, st) in ranges {
        let sl = s![lo..hi;st, lo..hi;st, ..];
        assert_eq!(a.slice(sl)?.to_ndarray()?, h.slice(sl), "3-d {lo}:{hi}:{st}");
    }
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, (3, 3, 3), 12)?.permuted_axes(&[1, 2, 0])?;
    let h = a.to_ndarray()?;
    for (lo, hi, st) in ranges {
        let sl = s![lo..hi;st, .., lo..hi;st];
        assert_eq!(
            a.slice(sl)?.to_ndarray()?,
            h.slice(sl),
            "transposed {lo}:{hi}:{st}"
        );
    }
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, (3, 3, 3, 3), 13)?;
    let h = a.to_ndarray()?;
    for (lo, hi, st) in [(0usize, 3usize, 1usize), (1, 2, 1), (0, 3, 3)] {
        let sl = s![lo..hi;st, .., lo..hi;st, ..];
        assert_eq!(a.slice(sl)?.to_ndarray()?, h.slice(sl), "4-d {lo}:{hi}:{st}");
    }
    Ok(())
}

/// Ports `test_get_set`: upload of C-order and transposed arrays, and slices of them, read back.
#[test]
#[ignore = "needs a CUDA GPU"]
fn get_set() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(14);
    let a = Array::from_shape_vec((4, 4), (0..16).map(|_| rng.f64() * 2.0 - 1.0).collect()).unwrap();
    let d = DeviceArray::from_ndarray(&ctx, &a)?;
    assert_eq!(d.to_ndarray()?, a);
    assert_eq!(d.slice(s![1..3, 1..3])?.to_ndarray()?, a.slice(s![1..3, 1..3]));
    let a = Array::from_shape_vec((4, 4, 4), (0..64).map(|_| rng.f64() * 2.0 - 1.0).collect())
        .unwrap()
        .permuted_axes([1, 2, 0]);
    let d = DeviceArray::from_ndarray(&ctx, &a)?;
    assert_eq!(d.to_ndarray()?, a);
    let sl = s![1..3, 1..3, 1..3];
    assert_eq!(d.slice(sl)?.to_ndarray()?, a.slice(sl));
    Ok(())
}

/// Ports `test_zeros_like_etc`: `*_like` of C- and Fortran-order arrays keep shape and order,
/// of the same element type or another (PyCUDA's `dtype=`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn zeros_like_etc() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(15);
    let c = Array::from_shape_vec((16, 16), rng.vec_f32(256)).unwrap();
    let f = Array::from_shape_vec((16, 16).f(), c.iter().copied().collect()).unwrap();
    for host in [&c, &f] {
        let arr = DeviceArray::from_ndarray(&ctx, host)?;
        let fortran = !host.is_standard_layout();
        let made = [
            DeviceArray::<f32, _>::empty_like(&arr)?,
            DeviceArray::<f32, _>::zeros_like(&arr)?,
            DeviceArray::<f32, _>::ones_like(&arr)?,
        ];
        for (k, m) in made.iter().enumerate() {
            assert_eq!(m.shape(), arr.shape(), "func {k}");
            assert_eq!(m.is_standard_layout(), !fortran, "func {k}");
            assert_eq!(m.strides(), arr.strides(), "func {k}");
        }
        assert!(made[1].to_vec()?.iter().all(|&x| x == 0.0));
        assert!(made[2].to_vec()?.iter().all(|&x| x == 1.0));
        // PyCUDA's `dtype=`: the element type is the new array's, any other than the input's.
        let z = DeviceArray::<Complex64, _>::zeros_like(&arr)?;
        let o = DeviceArray::<i32, _>::ones_like(&arr)?;
        assert_eq!((z.shape(), z.is_standard_layout()), (arr.shape(), !fortran));
        assert_eq!((o.shape(), o.is_standard_layout()), (arr.shape(), !fortran));
        assert!(z.to_vec()?.iter().all(|x| *x == Complex64::new(0.0, 0.0)));
        assert!(o.to_vec()?.iter().all(|&x| x == 1));
    }
    Ok(())
}

/// Ports `test_logical_and_or`: `logical_and`/`logical_or` with arrays and scalars.
#[test]
#[ignore = "needs a CUDA GPU"]
fn logical_and_or() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(16);
    let shape = (10, 4);
    for and in [true, false] {
        let op = |x: f64, y: f64| {
            if and {
                x != 0.0 && y != 0.0
            } else {
                x != 0.0 || y != 0.0
            }
        };
        let hx = Array::from_shape_vec(shape, (0..40).map(|_| rng.f64()).collect()).unwrap();
        let hy = Array::from_shape_vec(shape, (0..40).map(|_| rng.f64()).collect()).unwrap();
        let x = DeviceArray::from_ndarray(&ctx, &hx)?;
        let y = DeviceArray::from_ndarray(&ctx, &hy)?;
        let zeros = DeviceArray::<f64, _>::zeros(&ctx, shape)?;
        let ones = DeviceArray::<f64, _>::ones(&ctx, shape)?;
        let want = |other: &dyn Fn(usize) -> f64| -> Vec<bool> {
            hx.iter().enumerate().map(|(k, &v)| op(v, other(k))).collect()
        };
        let hyv: Vec<f64> = hy.iter().copied().collect();
        let bools = |a: DeviceArray<Bool, IxDyn>| -> gpu_runtime::Result<Vec<bool>> {
            Ok(a.to_vec()?.into_iter().map(bool::from).collect())
        };
        macro_rules! f {
            ($y:expr) => {
                if and {
                    math::logical_and(&x, $y)?
                } else {
                    math::logical_or(&x, $y)?
                }
            };
        }
        assert_eq!(bools(f!(&y))?, want(&|k| hyv[k]), "and={and} y");
        assert_eq!(bools(f!(&ones))?, want(&|_| 1.0), "and={and} ones");
        assert_eq!(bools(f!(&zeros))?, want(&|_| 0.0), "and={and} zeros");
        assert_eq!(bools(f!(1.0))?, want(&|_| 1.0), "and={and} 1.0");
        assert_eq!(bools(f!(0.0))?, want(&|_| 0.0), "and={and} 0.0");
    }
    Ok(())
}

/// Ports `test_logical_not`: `logical_not` of random, zero and one arrays.
#[test]
#[ignore = "needs a CUDA GPU"]
fn logical_not() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(17);
    let hx: Vec<f64> = (0..40).map(|_| rng.f64()).collect();
    let x = DeviceArray::from_ndarray(&ctx, &Array::from_shape_vec((10, 4), hx.clone()).unwrap())?;
    let bools = |a: DeviceArray<Bool, IxDyn>| -> gpu_runtime::Result<Vec<bool>> {
        Ok(a.to_vec()?.into_iter().map(bool::from).collect())
    };
    let want: Vec<bool> = hx.iter().map(|&v| v == 0.0).collect();
    assert_eq!(bools(math::logical_not(&x)?)?, want);
    let zeros = DeviceArray::<f64, _>::zeros(&ctx, 10)?;
    assert_eq!(bools(math::logical_not(&zeros)?)?, vec![true; 10]);
    let ones = DeviceArray::<f64, _>::ones(&ctx, 10)?;
    assert_eq!(bools(math::logical_not(&ones)?)?, vec![false; 10]);
    Ok(())
}

/// Ports `test_truth_value`: a 1-element array of 1 is true, of 0 false (via `math::any`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn truth_value() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    for ndim in 0..5 {
        let shape = gpu_runtime::ndarray::IxDyn(&vec![1; ndim]);
        let zeros = DeviceArray::<f32, _>::zeros(&ctx, shape.clone())?;
        let ones = DeviceArray::<f32, _>::ones(&ctx, shape)?;
        assert!(math::any(&ones)?, "ones, ndim {ndim}");
        assert!(!math::any(&zeros)?, "zeros, ndim {ndim}");
        assert_eq!(ones.item(&vec![0; ndim])?, 1.0);
    }
    Ok(())
}

/// Ports `test_default_zero`: `zeros` without a dtype is float64 (here: the element type is
/// explicit; checks `zeros::<f64>` is `DType::F64` and zero).
#[test]
#[ignore = "needs a CUDA GPU"]
fn default_zero() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::<f64, _>::zeros(&ctx, 10)?;
    assert_eq!(<f64 as Element>::DTYPE, DType::F64);
    assert_eq!(a.to_vec()?, vec![0.0; 10]);
    Ok(())
}

/// Element types of the mixed-type tests, with a conversion to `Complex64` on the host.
trait Host: Element + Copy {
    fn c64(self) -> Complex64;
    fn from_c64(z: Complex64) -> Self;
    /// A random nonzero value (no division by zero).
    fn random(rng: &mut Rng) -> Self;
}

macro_rules! host_real {
    ($($t:ty => $r:expr),*) => {$(
        impl Host for $t {
            fn c64(self) -> Complex64 {
                Complex64::new(self as f64, 0.0)
            }
            fn from_c64(z: Complex64) -> Self {
                z.re as $t
            }
            fn random(rng: &mut Rng) -> Self {
                let f: fn(&mut Rng) -> $t = $r;
                f(rng)
            }
        }
    )*};
}
host_real!(
    i32 => |r| 1 + (r.next_u64() % 100) as i32,
    i64 => |r| 1 + (r.next_u64() % 100) as i64,
    f32 => |r| 0.5 + r.f32(),
    f64 => |r| 0.5 + r.f64()
);
impl Host for Complex32 {
    fn c64(self) -> Complex64 {
        Complex64::new(f64::from(self.re), f64::from(self.im))
    }
    fn from_c64(z: Complex64) -> Self {
        Complex32::new(z.re as f32, z.im as f32)
    }
    fn random(rng: &mut Rng) -> Self {
        Complex32::new(0.5 + rng.f32(), 0.5 + rng.f32())
    }
}
impl Host for Complex64 {
    fn c64(self) -> Complex64 {
        self
    }
    fn from_c64(z: Complex64) -> Self {
        z
    }
    fn random(rng: &mut Rng) -> Self {
        Complex64::new(0.5 + rng.f64(), 0.5 + rng.f64())
    }
}

/// `|got - want| <= rtol * |want|` for each element (NumPy's `assert_allclose`, `atol = 0`).
fn allclose(what: &str, got: &[Complex64], want: &[Complex64], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).norm() <= rtol * w.norm(),
            "{what}[{k}]: got {g}, want {w}"
        );
    }
}

/// NumPy 2's result type of two of `int32, int64, float32, float64, complex64, complex128`.
fn numpy2_result(a: DType, b: DType) -> DType {
    let rank = |d| match d {
        DType::I32 => 0,
        DType::I64 => 1,
        DType::F32 => 2,
        DType::F64 => 3,
        DType::Complex32 => 4,
        DType::Complex64 => 5,
        other => panic!("no NumPy table entry for {other:?}"),
    };
    let (lo, hi) = if rank(a) <= rank(b) { (a, b) } else { (b, a) };
    match (lo, hi) {
        // An integer with float32 gives float64, with complex64 complex128.
        (DType::I32 | DType::I64, DType::F32) => DType::F64,
        (DType::I32 | DType::I64 | DType::F64, DType::Complex32) => DType::Complex64,
        _ => hi,
    }
}

fn check_mixed<L, R>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()>
where
    L: Host + Promote<R>,
    R: Host,
    <L as Promote<R>>::Output: Host,
{
    let want_dtype = numpy2_result(L::DTYPE, R::DTYPE);
    assert_eq!(
        <L as Promote<R>>::Output::DTYPE,
        want_dtype,
        "{:?} with {:?}",
        L::DTYPE,
        R::DTYPE
    );
    let hl: Vec<L> = (0..40).map(|_| L::random(rng)).collect();
    let hr: Vec<R> = (0..40).map(|_| R::random(rng)).collect();
    let l = DeviceArray::from_ndarray(ctx, &Array::from_shape_vec((10, 4), hl.clone()).unwrap())?;
    let r = DeviceArray::from_ndarray(ctx, &Array::from_shape_vec((10, 4), hr.clone()).unwrap())?;
    let is_int = |d| matches!(d, DType::I32 | DType::I64);
    let ints = is_int(L::DTYPE) && is_int(R::DTYPE);
    type Op = fn(Complex64, Complex64) -> Complex64;
    let ops: [(&str, Op); 4] = [
        ("add", |a, b| a + b),
        ("sub", |a, b| a - b),
        ("mul", |a, b| a * b),
        ("div", |a, b| a / b),
    ];
    for (name, op) in ops {
        if name == "div" && ints {
            // PyCUDA marks integer true division xfail (merge request 66).
            continue;
        }
        let got: DeviceArray<<L as Promote<R>>::Output, IxDyn> = match name {
            "add" => promote::add(&l, &r).eval()?,
            "sub" => promote::sub(&l, &r).eval()?,
            "mul" => promote::mul(&l, &r).eval()?,
            // Integer pairs are skipped above: the quotient is the promoted float itself.
            _ => promote::div(&l, &r).cast().eval()?,
        };
        assert_eq!(got.shape(), &[10, 4]);
        let got: Vec<Complex64> = got.to_vec()?.into_iter().map(Host::c64).collect();
        // The host result rounded to the result type, as NumPy computes it in that type.
        let want: Vec<Complex64> = hl
            .iter()
            .zip(&hr)
            .map(|(&a, &b)| <L as Promote<R>>::Output::from_c64(op(a.c64(), b.c64())).c64())
            .collect();
        let what = format!("{name} {:?} {:?}", L::DTYPE, R::DTYPE);
        allclose(&what, &got, &want, 5e-5);
    }
    Ok(())
}

/// Ports `test_binary_ops_with_unequal_dtypes`: `+ - * /` of every pair of int32, int64,
/// float32, float64, complex64, complex128 give NumPy 2's result dtype, shape and values.
#[test]
#[ignore = "needs a CUDA GPU"]
fn binary_ops_with_unequal_dtypes() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(18);
    macro_rules! rights {
        ($l:ty) => {
            check_mixed::<$l, i32>(&ctx, &mut rng)?;
            check_mixed::<$l, i64>(&ctx, &mut rng)?;
            check_mixed::<$l, f32>(&ctx, &mut rng)?;
            check_mixed::<$l, f64>(&ctx, &mut rng)?;
            check_mixed::<$l, Complex32>(&ctx, &mut rng)?;
            check_mixed::<$l, Complex64>(&ctx, &mut rng)?;
        };
    }
    rights!(i32);
    rights!(i64);
    rights!(f32);
    rights!(f64);
    rights!(Complex32);
    rights!(Complex64);
    Ok(())
}

fn check_log10<T: Host + math::Inexact>(ctx: &Context, rtol: f64) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(0);
    let h: Vec<T> = (0..40)
        .map(|_| T::from_c64(Complex64::new(rng.f64(), rng.f64())))
        .collect();
    let x = DeviceArray::from_ndarray(ctx, &Array::from_shape_vec((10, 4), h.clone()).unwrap())?;
    let got: Vec<Complex64> = math::log10(&x)?.to_vec()?.into_iter().map(Host::c64).collect();
    let want: Vec<Complex64> = h.iter().map(|z| z.c64().ln() / std::f64::consts::LN_10).collect();
    allclose(&format!("log10 {:?}", T::DTYPE), &got, &want, rtol);
    Ok(())
}

/// Ports `test_log10`: `cumath.log10` of complex64 (rtol 1e-6) and complex128 (rtol 1e-14).
#[test]
#[ignore = "needs a CUDA GPU"]
fn log10() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    check_log10::<Complex32>(&ctx, 1e-6)?;
    check_log10::<Complex64>(&ctx, 1e-14)?;
    Ok(())
}

/// Ports `test_big_array_elementwise`: an elementwise kernel over 2**32 bytes sees every `i`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn big_array_elementwise() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let n_items = 1usize << 32;
    let k = ElementwiseKernel::new("unsigned char *d_arr", "d_arr[i] = (unsigned char) (i & 0xff)")?;
    let mut d = DeviceArray::<u8, _>::empty(&ctx, n_items)?;
    k.launch([KernelArg::output(&mut d)])?;
    let got = d.to_vec()?;
    assert_eq!(got.len(), n_items);
    let bad = got.iter().enumerate().position(|(k, &v)| v != (k & 0xff) as u8);
    assert_eq!(bad, None, "first wrong element");
    Ok(())
}

/// Ports `test_big_array_reduction`: a byte sum mod 256 over 2**32 + 11 ones is 11.
#[test]
#[ignore = "needs a CUDA GPU"]
fn big_array_reduction() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let n_items = (1usize << 32) + 11;
    let red = ReductionKernel::<u8>::new("const unsigned char *x", "x", "(a + b) & 0xff", "0")?;
    let mut d = DeviceArray::<u8, _>::zeros(&ctx, n_items)?;
    d.fill(1)?;
    assert_eq!(red.reduce([KernelArg::input(&d)])?.to_vec()?, vec![11u8]);
    Ok(())
}

/// Ports `test_big_array_scan`: an inclusive byte scan mod 256 over 2**32 + 12 ones.
#[test]
#[ignore = "needs a CUDA GPU"]
fn big_array_scan() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let n_items = (1usize << 32) + 12;
    let cumsum = ScanKernel::<u8>::new("(a + b) & 0xff", "0")?;
    let mut d = DeviceArray::<u8, _>::zeros(&ctx, n_items)?;
    d.fill(1)?;
    let got = cumsum.inclusive(&d)?.to_vec()?;
    assert_eq!(got.len(), n_items);
    let bad = got
        .iter()
        .enumerate()
        .position(|(k, &v)| v != ((k + 1) & 0xff) as u8);
    assert_eq!(bad, None, "first wrong element");
    assert_eq!(got[1 << 32..], (1..=12).collect::<Vec<u8>>()[..]);
    Ok(())
}

/// Ports `test_noncontig_transpose`: transposing a non-contiguous slice works (and is right).
#[test]
#[ignore = "needs a CUDA GPU"]
fn noncontig_transpose() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let d = DeviceArray::<f32, _>::random_uniform(&ctx, (1000, 15, 2048), 19)?;
    let h = d.to_ndarray()?;
    let t = d.view().permuted_axes(&[1, 0, 2])?;
    assert_eq!(t.shape(), &[15, 1000, 2048]);
    let d2 = d.slice(s![.., 7..9, ..])?;
    assert!(!d2.is_standard_layout());
    let t2 = d2.permuted_axes(&[1, 0, 2])?;
    assert_eq!(t2.shape(), &[2, 1000, 2048]);
    assert_eq!(
        t2.to_ndarray()?,
        h.slice(s![.., 7..9, ..]).permuted_axes([1, 0, 2])
    );
    Ok(())
}
