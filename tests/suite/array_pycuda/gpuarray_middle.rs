//! Ports part of PyCUDA's `test/test_gpuarray.py` (from `test_sum` to `test_squeeze`) as GPU
//! integration tests of `gpu_runtime::gpuarray`: `test_sum`, `test_any`, `test_all`,
//! `test_minmax`, `test_subset_minmax`, `test_subset_sum`, `test_dot`, `test_slice`,
//! `test_2d_slice_c`, `test_2d_slice_f`, `test_where`, `test_if_positive`, `test_take_put`,
//! `test_astype`, `test_complex_bits`, `test_pass_slice_to_kernel`, `test_scan`,
//! `test_stride_preservation`, `test_vector_fill`, `test_create_complex_zeros`,
//! `test_reshape`, `test_view`, `test_squeeze`. Expected values are computed on the host.
//!
//! Run on a GPU machine with `cargo test --test suite -- --ignored array_pycuda::gpuarray_middle`.

use crate::common::ctx;
use gpu_runtime::gpuarray::{
    if_positive, math, Bool, DeviceArray, Element, ElementwiseKernel, IndexMode, KernelArg, PooledArray,
    ScanKernel,
};
use gpu_runtime::ndarray::{s, Array, Array2, Order};
use gpu_runtime::tools::DeviceMemoryPool;
use gpu_runtime::types::{Complex32, Complex64, Float3};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// A host vector of `n` random `i32` in `[0, bound)`.
fn ints(rng: &mut Rng, n: usize, bound: u64) -> Vec<i32> {
    (0..n).map(|_| (rng.next_u64() % bound) as i32).collect()
}

/// PyCUDA's `meaningful_indices`: `0..`, skipping every multiple of `gran`, `l_m` of them.
fn meaningful_indices(l_a: usize, gran: usize) -> Vec<i64> {
    let l_m = l_a - l_a / gran + 1;
    let mut idx = Vec::with_capacity(l_m);
    let mut j = 0i64;
    for _ in 0..l_m {
        idx.push(j);
        j += 1;
        if j % gran as i64 == 0 {
            j += 1;
        }
    }
    idx
}

/// Ports `test_sum`: the sum of 200000 uniform floats, relative error below 1e-4.
#[test]
#[ignore = "needs a CUDA GPU"]
fn sum() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, 200_000, 1)?;
    let want: f64 = a.to_vec()?.iter().map(|&x| f64::from(x)).sum();
    let got = f64::from(a.sum()?);
    assert!((got - want).abs() / want.abs() < 1e-4, "{got} vs {want}");
    Ok(())
}

/// Host values of PyCUDA's `test_any`/`test_all` arrays, as `f64` 0/1 patterns.
fn logic_cases(rng: &mut Rng) -> Vec<Vec<f64>> {
    let mut cases = vec![vec![1.0; 10], vec![0.0], vec![1.0]];
    // `np.empty(10)` stands for arbitrary content: random 0/1 here.
    cases.push((0..10).map(|_| (rng.next_u64() % 2) as f64).collect());
    for bits in 0..8u32 {
        cases.push((0..3).map(|k| f64::from((bits >> (2 - k)) & 1)).collect());
    }
    cases
}

fn check_logic<T: Element>(ctx: &Context, conv: fn(f64) -> T, all: bool) -> gpu_runtime::Result<()> {
    let mut rng = Rng::new(2);
    for case in logic_cases(&mut rng) {
        let host: Vec<T> = case.iter().map(|&x| conv(x)).collect();
        let d = DeviceArray::from_ndarray(ctx, &Array::from(host))?;
        let (got, want) = if all {
            (d.all()?, case.iter().all(|&x| x != 0.0))
        } else {
            (d.any()?, case.iter().any(|&x| x != 0.0))
        };
        assert_eq!(got, want, "{:?} all={all} {case:?}", T::DTYPE);
        // The free functions agree with the methods.
        let f = if all { math::all(&d)? } else { math::any(&d)? };
        assert_eq!(f, want);
    }
    Ok(())
}

/// Ports `test_any`: `any` of int32, bool, float32, float64 arrays of ones, zeros and every
/// 3-element 0/1 pattern matches NumPy (a host `bool`, not a 0-d device array).
#[test]
#[ignore = "needs a CUDA GPU"]
fn any() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    check_logic::<i32>(&ctx, |x| x as i32, false)?;
    check_logic::<Bool>(&ctx, |x| Bool::from(x != 0.0), false)?;
    check_logic::<f32>(&ctx, |x| x as f32, false)?;
    check_logic::<f64>(&ctx, |x| x, false)?;
    Ok(())
}

/// Ports `test_all`: `all` of int32, bool, float32, float64 arrays of ones, zeros and every
/// 3-element 0/1 pattern matches NumPy (a host `bool`, not a 0-d device array).
#[test]
#[ignore = "needs a CUDA GPU"]
fn all() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    check_logic::<i32>(&ctx, |x| x as i32, true)?;
    check_logic::<Bool>(&ctx, |x| Bool::from(x != 0.0), true)?;
    check_logic::<f32>(&ctx, |x| x as f32, true)?;
    check_logic::<f64>(&ctx, |x| x, true)?;
    Ok(())
}

/// Ports `test_minmax`: `min` and `max` of 200000 float64, float32 and int32 values, exactly.
#[test]
#[ignore = "needs a CUDA GPU"]
fn minmax() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let n = 200_000;
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, n, 3)?;
    let h = a.to_vec()?;
    assert_eq!(a.min()?, h.iter().copied().fold(f64::INFINITY, f64::min));
    assert_eq!(a.max()?, h.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, n, 4)?;
    let h = a.to_vec()?;
    assert_eq!(a.min()?, h.iter().copied().fold(f32::INFINITY, f32::min));
    assert_eq!(a.max()?, h.iter().copied().fold(f32::NEG_INFINITY, f32::max));
    // `random_uniform` has no int32 form: random host integers of both signs instead.
    let mut rng = Rng::new(5);
    let h: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
    let a = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
    assert_eq!(a.min()?, *h.iter().min().unwrap());
    assert_eq!(a.max()?, *h.iter().max().unwrap());
    Ok(())
}

/// Ports `test_subset_minmax`: `subset_min` (and `subset_max`) over every index but each
/// fifth of 200000 float64, float32 and int32 values, exactly (`min_at`, `max_at`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn subset_minmax() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let l_a = 200_000;
    let idx = meaningful_indices(l_a, 5);
    let di = DeviceArray::from_ndarray(&ctx, &Array::from(idx.clone()))?;
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, l_a, 6)?;
    let h = a.to_vec()?;
    let b: Vec<f64> = idx.iter().map(|&k| h[k as usize]).collect();
    assert_eq!(a.min_at(&di)?, b.iter().copied().fold(f64::INFINITY, f64::min));
    assert_eq!(
        a.max_at(&di)?,
        b.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    );
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, l_a, 7)?;
    let h = a.to_vec()?;
    let b: Vec<f32> = idx.iter().map(|&k| h[k as usize]).collect();
    assert_eq!(a.min_at(&di)?, b.iter().copied().fold(f32::INFINITY, f32::min));
    assert_eq!(
        a.max_at(&di)?,
        b.iter().copied().fold(f32::NEG_INFINITY, f32::max)
    );
    let mut rng = Rng::new(8);
    let h: Vec<i32> = (0..l_a).map(|_| rng.next_u64() as i32).collect();
    let a = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
    let b: Vec<i32> = idx.iter().map(|&k| h[k as usize]).collect();
    assert_eq!(a.min_at(&di)?, *b.iter().min().unwrap());
    assert_eq!(a.max_at(&di)?, *b.iter().max().unwrap());
    Ok(())
}

/// Ports `test_subset_sum`: `subset_sum` over every index but each fifth of 2000 values in
/// [0, 10) (float64, float32, int32), in plain and in pool memory.
#[test]
#[ignore = "needs a CUDA GPU"]
fn subset_sum() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let pool = DeviceMemoryPool::new(&ctx);
    let l_a = 2000;
    let idx = meaningful_indices(l_a, 5);
    let hidx = Array::from(idx.clone());
    let mut rng = Rng::new(9);
    let raw: Vec<f64> = (0..l_a).map(|_| rng.f64() * 10.0).collect();
    let close = |got: f64, want: f64, what: &str| {
        assert!(
            (got - want).abs() <= 1e-8 + 1e-5 * want.abs(),
            "{what}: {got} vs {want}"
        );
    };
    for pooled in [false, true] {
        let di = DeviceArray::from_ndarray(&ctx, &hidx)?;
        let pi = PooledArray::from_ndarray_in(&pool, &hidx)?;
        macro_rules! check {
            ($t:ty) => {{
                let h: Vec<$t> = raw.iter().map(|&x| x as $t).collect();
                let want: f64 = idx.iter().map(|&k| h[k as usize] as f64).sum();
                let host = Array::from(h);
                let got = if pooled {
                    PooledArray::from_ndarray_in(&pool, &host)?.sum_at(&pi)?
                } else {
                    DeviceArray::from_ndarray(&ctx, &host)?.sum_at(&di)?
                };
                close(
                    got as f64,
                    want,
                    &format!("{} pooled={pooled}", stringify!($t)),
                );
            }};
        }
        check!(f64);
        check!(f32);
        check!(i32);
    }
    Ok(())
}

/// Ports `test_dot`: `dot` of two uniform float32 vectors of 17 sizes from 2 to 20000,
/// relative error below 1e-4.
#[test]
#[ignore = "needs a CUDA GPU"]
fn dot() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let sizes = [
        2usize,
        3,
        4,
        5,
        6,
        7,
        31,
        32,
        33,
        127,
        128,
        129,
        255,
        256,
        257,
        16384 - 993,
        20000,
    ];
    for (k, sz) in sizes.into_iter().enumerate() {
        let a = DeviceArray::<f32, _>::random_uniform(&ctx, sz, 100 + k as u64)?;
        let b = DeviceArray::<f32, _>::random_uniform(&ctx, sz, 200 + k as u64)?;
        let (ha, hb) = (a.to_vec()?, b.to_vec()?);
        let want: f64 = ha
            .iter()
            .zip(&hb)
            .map(|(&x, &y)| f64::from(x) * f64::from(y))
            .sum();
        let got = f64::from(a.dot(&b)?);
        assert!((got - want).abs() / want.abs() < 1e-4, "sz {sz}: {got} vs {want}");
    }
    Ok(())
}

/// A random `(start, end)` with `0 <= start <= end < n` (Python's `randrange` pair).
fn random_range(rng: &mut Rng, n: usize) -> (usize, usize) {
    let start = (rng.next_u64() % n as u64) as usize;
    let end = start + (rng.next_u64() % (n - start) as u64) as usize;
    (start, end)
}

/// Ports `test_slice`: 200 random `a[start:end]` of a 1-d array read back exactly.
#[test]
#[ignore = "needs a CUDA GPU"]
fn slice() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let sz = 20000;
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, sz, 10)?;
    let h = a.to_ndarray()?;
    let mut rng = Rng::new(11);
    for _ in 0..200 {
        let (start, end) = random_range(&mut rng, sz);
        assert_eq!(a.slice(s![start..end])?.to_ndarray()?, h.slice(s![start..end]));
    }
    Ok(())
}

/// Ports `test_2d_slice_c`: 200 random row ranges `a[start:end]` of a C-order 1000x300
/// array read back exactly.
#[test]
#[ignore = "needs a CUDA GPU"]
fn slice_2d_c() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let (n, m) = (1000, 300);
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, (n, m), 12)?;
    let h = a.to_ndarray()?;
    let mut rng = Rng::new(13);
    for _ in 0..200 {
        let (start, end) = random_range(&mut rng, n);
        let sl = s![start..end, ..];
        assert_eq!(a.slice(sl)?.to_ndarray()?, h.slice(sl), "{start}:{end}");
    }
    Ok(())
}

/// Ports `test_2d_slice_f`: the same memory seen as a Fortran-order 300x1000 array (here the
/// transpose view); 200 random column ranges `a[:, start:end]` read back exactly.
#[test]
#[ignore = "needs a CUDA GPU"]
fn slice_2d_f() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let (n, m) = (1000, 300);
    let c = DeviceArray::<f32, _>::random_uniform(&ctx, (n, m), 14)?;
    let f = c.t();
    assert_eq!(f.shape(), &[m, n]);
    assert!(f.is_fortran_layout());
    let h = f.to_ndarray()?;
    let mut rng = Rng::new(15);
    for _ in 0..200 {
        let (start, end) = random_range(&mut rng, n);
        let sl = s![.., start..end];
        assert_eq!(f.slice(sl)?.to_ndarray()?, h.slice(sl), "{start}:{end}");
    }
    Ok(())
}

/// Ports `test_where`: `where([1, 0, -1], 2s, 3s)` is `[2, 3, 2]` (the integer condition is
/// converted to `Bool` first: `where_` takes a `Bool` condition).
#[test]
#[ignore = "needs a CUDA GPU"]
fn where_() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::from_ndarray(&ctx, &Array::from(vec![1i64, 0, -1]))?;
    let b = DeviceArray::from_ndarray(&ctx, &Array::from(vec![2i64; 3]))?;
    let c = DeviceArray::from_ndarray(&ctx, &Array::from(vec![3i64; 3]))?;
    let cond = a.astype::<Bool>()?;
    assert_eq!(math::where_(&cond, &b, &c)?.to_vec()?, vec![2, 3, 2]);
    Ok(())
}

/// Ports `test_if_positive`: `maximum`/`minimum` of two uniform arrays match NumPy exactly;
/// also `if_positive(a - b, a, b)` is the maximum.
#[test]
#[ignore = "needs a CUDA GPU"]
fn if_positive_() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let sz = 20;
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, sz, 16)?;
    let b = DeviceArray::<f32, _>::random_uniform(&ctx, sz, 17)?;
    let (ha, hb) = (a.to_vec()?, b.to_vec()?);
    let want_max: Vec<f32> = ha.iter().zip(&hb).map(|(&x, &y)| x.max(y)).collect();
    let want_min: Vec<f32> = ha.iter().zip(&hb).map(|(&x, &y)| x.min(y)).collect();
    assert_eq!(math::maximum(&a, &b)?.to_vec()?, want_max);
    assert_eq!(math::minimum(&a, &b)?.to_vec()?, want_min);
    let diff: Vec<f32> = ha.iter().zip(&hb).map(|(&x, &y)| x - y).collect();
    let crit = DeviceArray::from_ndarray(&ctx, &Array::from(diff))?;
    assert_eq!(if_positive(&crit, &a, &b)?.to_vec()?, want_max);
    Ok(())
}

/// Ports `test_take_put`: PyCUDA's `multi_take_put` (skipped there on CUDA 12), as one
/// `take` at each field offset and a `put` into a 96-element destination per array.
#[test]
#[ignore = "needs a CUDA GPU"]
fn take_put() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let dest_indices = [0i64, 1, 2, 3, 32, 33, 34, 35];
    let read_map = [7i64, 6, 5, 4, 3, 2, 1, 0];
    let di = DeviceArray::from_ndarray(&ctx, &Array::from(dest_indices.to_vec()))?;
    for n in [5usize, 17, 333] {
        let one_field_size = 8;
        let buf = DeviceArray::<f32, _>::random_uniform(&ctx, n * one_field_size, n as u64)?;
        let hbuf = buf.to_vec()?;
        for i in [0, n / 2, n - 1] {
            let off = (i * one_field_size) as i64;
            let src: Vec<i64> = read_map.iter().map(|&r| r + off).collect();
            let si = DeviceArray::from_ndarray(&ctx, &Array::from(src.clone()))?;
            let taken = buf.take(&si, 0, IndexMode::Raise)?;
            let want_taken: Vec<f32> = src.iter().map(|&k| hbuf[k as usize]).collect();
            assert_eq!(taken.to_vec()?, want_taken, "n {n} array {i}");
            let mut dest = DeviceArray::<f32, _>::zeros(&ctx, 96)?;
            dest.put(&di, &taken, IndexMode::Raise)?;
            let mut want = vec![0.0f32; 96];
            for (&d, &v) in dest_indices.iter().zip(&want_taken) {
                want[d as usize] = v;
            }
            assert_eq!(dest.to_vec()?, want, "n {n} array {i}");
        }
    }
    Ok(())
}

/// Ports `test_astype`: float32 -> float64 is exact; float64 -> float32 rounds as the host.
#[test]
#[ignore = "needs a CUDA GPU"]
fn astype() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let a = DeviceArray::<f32, _>::random_uniform(&ctx, 2000, 18)?;
    let want: Vec<f64> = a.to_vec()?.iter().map(|&x| f64::from(x)).collect();
    assert_eq!(a.astype::<f64>()?.to_vec()?, want);
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, 2000, 19)?;
    let want: Vec<f32> = a.to_vec()?.iter().map(|&x| x as f32).collect();
    assert_eq!(a.astype::<f32>()?.to_vec()?, want);
    Ok(())
}

/// Ports `test_complex_bits`: `real`, `imag`, `conj` of complex64 and complex128 arrays match
/// the host exactly, the conjugate cast to complex64 too, and keep C/Fortran contiguity.
#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_bits() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let n = 20;
    let mut rng = Rng::new(20);
    let h32: Vec<Complex32> = (0..n).map(|_| Complex32::new(rng.f32(), rng.f32())).collect();
    let z = DeviceArray::from_ndarray(&ctx, &Array::from(h32.clone()))?;
    let re: Vec<f32> = h32.iter().map(|z| z.re).collect();
    let im: Vec<f32> = h32.iter().map(|z| z.im).collect();
    let cj: Vec<Complex32> = h32.iter().map(|z| z.conj()).collect();
    assert_eq!(math::real(&z)?.to_vec()?, re);
    assert_eq!(math::imag(&z)?.to_vec()?, im);
    assert_eq!(math::conj(&z)?.to_vec()?, cj);
    let h64: Vec<Complex64> = (0..n).map(|_| Complex64::new(rng.f64(), rng.f64())).collect();
    let z = DeviceArray::from_ndarray(&ctx, &Array::from(h64.clone()))?;
    let re: Vec<f64> = h64.iter().map(|z| z.re).collect();
    let im: Vec<f64> = h64.iter().map(|z| z.im).collect();
    let cj: Vec<Complex64> = h64.iter().map(|z| z.conj()).collect();
    assert_eq!(math::real(&z)?.to_vec()?, re);
    assert_eq!(math::imag(&z)?.to_vec()?, im);
    assert_eq!(math::conj(&z)?.to_vec()?, cj);
    // PyCUDA's `z.conj(out=z.astype(complex64))`: no `out=` form; the conjugate cast instead.
    let out = math::conj(&z)?.astype::<Complex32>()?.to_vec()?;
    for (g, w) in out.iter().zip(&cj) {
        assert!((Complex64::new(f64::from(g.re), f64::from(g.im)) - w).norm() < 5e-6);
    }
    // Contiguity is kept, for zeros and nonzero data, in C and Fortran order (2-d here, where
    // the orders differ; PyCUDA's 1-d arrays are both).
    let hz = Array2::from_shape_vec((4, 5), h64[..20].to_vec()).unwrap();
    let zc = DeviceArray::from_ndarray(&ctx, &hz)?;
    let zf = zc.t().copy()?;
    let zeros_c = DeviceArray::<Complex64, _>::zeros(&ctx, (4, 5))?;
    let zeros_f = zeros_c.t().copy()?;
    for (fortran, d) in [(false, &zc), (true, &zf), (false, &zeros_c), (true, &zeros_f)] {
        let check = |c: bool, f: bool, what: &str| {
            if fortran {
                assert!(f, "{what} not Fortran-contiguous");
            } else {
                assert!(c, "{what} not C-contiguous");
            }
        };
        check(d.is_standard_layout(), d.is_fortran_layout(), "input");
        let r = math::real(d)?;
        check(r.is_standard_layout(), r.is_fortran_layout(), "real");
        let i = math::imag(d)?;
        check(i.is_standard_layout(), i.is_fortran_layout(), "imag");
        let c = math::conj(d)?;
        check(c.is_standard_layout(), c.is_fortran_layout(), "conj");
        assert_eq!(c.to_ndarray()?, d.to_ndarray()?.mapv(|z| z.conj()).into_dyn());
    }
    Ok(())
}

/// Ports `test_pass_slice_to_kernel`: a kernel doubling `a[256:-256]` of 65536 ones leaves
/// the first and last 256 elements at 1 (an `ElementwiseKernel` on a mutable slice here).
#[test]
#[ignore = "needs a CUDA GPU"]
fn pass_slice_to_kernel() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let n = 256 * 256;
    let twice = ElementwiseKernel::new("float *a", "a[i] *= 2")?;
    let mut a = DeviceArray::<f32, _>::ones(&ctx, n)?;
    // `a[256:-256]`: a negative end counts from the end, as in Python.
    let end: isize = -256;
    twice.launch([KernelArg::output(&mut a.slice_mut(s![256..end])?)])?;
    let h = a.to_vec()?;
    assert_eq!(h[255..257], [1.0, 2.0]);
    assert_eq!(h[255 * 256 - 1..255 * 256 + 1], [2.0, 1.0]);
    let want: Vec<f32> = (0..n)
        .map(|k| if (256..n - 256).contains(&k) { 2.0 } else { 1.0 })
        .collect();
    assert_eq!(h, want);
    Ok(())
}

/// Ports `test_scan`: exclusive and inclusive int32 `a+b` scans of random 0..10 values over
/// nine sizes up to 2**24 match the host cumulative sum.
#[test]
#[ignore = "needs a CUDA GPU"]
fn scan() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let kern = ScanKernel::<i32>::new("a+b", "0")?;
    let mut rng = Rng::new(21);
    let sizes = [
        10usize,
        (1 << 10) - 5,
        1 << 10,
        (1 << 20) - (1 << 18),
        (1 << 20) - (1 << 18) + 5,
        (1 << 10) + 5,
        (1 << 20) + 5,
        1 << 20,
        1 << 24,
    ];
    for exclusive in [true, false] {
        for n in sizes {
            let h = ints(&mut rng, n, 10);
            let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
            let got = if exclusive {
                kern.exclusive(&d)?
            } else {
                kern.inclusive(&d)?
            };
            let mut acc = 0i32;
            let want: Vec<i32> = h
                .iter()
                .map(|&x| {
                    acc += x;
                    if exclusive {
                        acc - x
                    } else {
                        acc
                    }
                })
                .collect();
            assert!(got.to_vec()? == want, "exclusive={exclusive} n = {n}");
        }
    }
    Ok(())
}

/// Ports `test_stride_preservation`: uploading a transposed (Fortran-order) 3x3 host array
/// keeps its strides and values.
#[test]
#[ignore = "needs a CUDA GPU"]
fn stride_preservation() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut rng = Rng::new(22);
    let a = Array2::from_shape_vec((3, 3), (0..9).map(|_| rng.f64()).collect()).unwrap();
    let at = a.t();
    let d = DeviceArray::from_ndarray(&ctx, &at)?;
    assert_eq!(d.strides(), at.strides());
    assert!(d.is_fortran_layout());
    assert_eq!(d.to_ndarray()?, at);
    Ok(())
}

/// Ports `test_vector_fill`: an array of 100 `float3` filled with `make_float3(...)` reads
/// back as `float3` values.
#[test]
#[ignore = "needs a CUDA GPU"]
fn vector_fill() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let mut a = DeviceArray::<Float3, _>::empty(&ctx, 100)?;
    a.fill(Float3::new(0.0, 0.0, 0.0))?;
    let got = a.to_vec()?;
    assert_eq!(got.len(), 100);
    assert!(got.iter().all(|v| (v.x, v.y, v.z) == (0.0, 0.0, 0.0)));
    let v = Float3::new(1.5, -2.0, 3.25);
    a.fill(v)?;
    assert!(a.to_vec()?.iter().all(|w| (w.x, w.y, w.z) == (v.x, v.y, v.z)));
    Ok(())
}

/// Ports `test_create_complex_zeros`: `zeros(3, complex64)` works (and is zero).
#[test]
#[ignore = "needs a CUDA GPU"]
fn create_complex_zeros() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let z = DeviceArray::<Complex32, _>::zeros(&ctx, 3)?;
    assert_eq!(z.to_vec()?, vec![Complex32::new(0.0, 0.0); 3]);
    Ok(())
}

/// Ports `test_reshape`: reshapes of an 8x16 array to (4, 32), with one inferred axis, two
/// inferred axes an error, and C/Fortran order of the result.
#[test]
#[ignore = "needs a CUDA GPU"]
fn reshape() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let h = Array::from_shape_vec((8, 16), (0..128).map(|x| x as f32).collect()).unwrap();
    let a = DeviceArray::from_ndarray(&ctx, &h)?;
    let r = a.view().reshape((4, 32))?;
    assert_eq!(r.shape(), &[4, 32]);
    assert_eq!(r.to_vec()?, h.iter().copied().collect::<Vec<_>>());
    let r = a.view().reshape([4, 32])?;
    assert_eq!(r.shape(), &[4, 32]);
    let shape = |s: &[Option<usize>]| -> gpu_runtime::Result<Vec<usize>> {
        Ok(a.view().reshape_infer(s, Order::C)?.shape().to_vec())
    };
    assert_eq!(shape(&[None, Some(32)])?, [4, 32]);
    assert_eq!(shape(&[Some(32), None])?, [32, 4]);
    assert_eq!(shape(&[Some(8), None, Some(4)])?, [8, 4, 4]);
    assert!(a.view().reshape_infer(&[None, None, Some(4)], Order::C).is_err());
    let c = a.view().reshape_infer(&[Some(4), Some(32)], Order::C)?;
    assert!(c.is_standard_layout());
    // PyCUDA reinterprets a C array in Fortran order; here Fortran order needs a
    // Fortran-contiguous array (no data moves), so reshape the Fortran copy of it.
    let f = a.t().copy()?;
    assert!(f.is_fortran_layout());
    let rf = f.view().reshape_infer(&[Some(4), Some(32)], Order::F)?;
    assert_eq!(rf.shape(), &[4, 32]);
    assert!(rf.is_fortran_layout());
    let rf2 = rf.view().reshape_infer(&[Some(4), Some(32)], Order::F)?;
    assert!(rf2.is_fortran_layout());
    Ok(())
}

/// Ports `test_view`: a same-type view keeps shape and element type (views as another dtype,
/// `view(np.complex64)`/`view(np.int16)`, have no counterpart).
#[test]
#[ignore = "needs a CUDA GPU"]
fn view() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let h = Array::from_shape_vec((8, 16), (0..128).map(|x| x as f32).collect()).unwrap();
    let a = DeviceArray::from_ndarray(&ctx, &h)?;
    let v = a.view();
    assert_eq!(v.shape(), a.shape());
    assert_eq!(v.strides(), a.strides());
    assert_eq!(v.to_ndarray()?, h);
    Ok(())
}

/// Ports `test_squeeze`: squeezing `a[0:1, 1:2]` of a (40, 2, 5, 100) array gives a
/// C-contiguous (5, 100); squeezing `a[:, :, 2:3]` a non-contiguous (40, 2, 100); same values.
#[test]
#[ignore = "needs a CUDA GPU"]
fn squeeze() -> gpu_runtime::Result<()> {
    let ctx = ctx();
    let shape = (40, 2, 5, 100);
    let a = DeviceArray::<f64, _>::random_uniform(&ctx, shape, 23)?;
    let h = a.to_ndarray()?;

    let sl = a.slice(s![0..1, 1..2, .., ..])?;
    assert_eq!(sl.shape(), &[1, 1, 5, 100]);
    assert!(sl.is_standard_layout());
    let sq = a.slice(s![0..1, 1..2, .., ..])?.squeeze()?;
    assert_eq!(sq.shape(), &[5, 100]);
    assert!(sq.is_standard_layout());
    assert_eq!(sq.to_vec()?, sl.to_vec()?);
    assert_eq!(
        sq.to_vec()?,
        h.slice(s![0, 1, .., ..]).iter().copied().collect::<Vec<_>>()
    );

    let sl = a.slice(s![.., .., 2..3, ..])?;
    assert_eq!(sl.shape(), &[40, 2, 1, 100]);
    assert!(!sl.is_standard_layout());
    let sq = a.slice(s![.., .., 2..3, ..])?.squeeze()?;
    assert_eq!(sq.shape(), &[40, 2, 100]);
    assert!(!sq.is_standard_layout());
    assert_eq!(sq.to_vec()?, sl.to_vec()?);
    assert_eq!(
        sq.to_vec()?,
        h.slice(s![.., .., 2, ..]).iter().copied().collect::<Vec<_>>()
    );
    Ok(())
}
