//! `piecewise` (NumPy's and CuPy's, with values for functions) on a GPU: CuPy's own cases
//! (`tests/cupy_tests/functional_tests/test_piecewise.py`) against the values NumPy 2.4
//! printed for them, in several element types; random conditions (the last true one winning,
//! the "otherwise" value where none holds, conditions broadcast to `x`'s shape, 0-d `x`)
//! against the host's assignments in NumPy's order; on a stream; the refusals.

use gpu_runtime::gpuarray::{self, Bool, DeviceArray, Element, Operand};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr1, Array, ArrayD, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// CuPy's `test_piecewise` (x = linspace(2.5, 12.5, 6), conditions x < 0, x >= 0, x < 5,
/// x >= 1.5 (here x >= 1, the same on these x), values -1, 1, 2, 5: NumPy gives 5 everywhere, the last condition holding
/// everywhere) and `test_piecewise_otherwise_condition1` (x = linspace(-2, 20, 12),
/// conditions x > 15, x <= 5, x == 0, x == 10, values -1, 0, 2, 3 and -5 otherwise: NumPy
/// 2.4 printed `[0, 2, 0, 0, -5, -5, 3, -5, -5, -1, -1, -1]`), for one element type.
fn cupy_cases<T>(ctx: &Context, first: &[T]) -> gpu_runtime::Result<()>
where
    T: Element + From<i8> + for<'a> Operand<'a, T>,
{
    let v = |x: i8| T::from(x);
    let x = DeviceArray::from_ndarray(ctx, &arr1(first))?;
    let conds = [
        x.expr().lt(v(0)).eval()?,
        x.expr().ge(v(0)).eval()?,
        x.expr().lt(v(5)).eval()?,
        x.expr().ge(v(1)).eval()?,
    ];
    let refs: Vec<_> = conds.iter().collect();
    let got = gpuarray::piecewise(&x, &refs, &[v(-1), v(1), v(2), v(5)])?;
    assert_eq!(got.to_vec()?, vec![v(5); first.len()], "{:?}", T::DTYPE);

    let x: Vec<T> = (0..12).map(|i| v(-2 + 2 * i)).collect();
    let x = DeviceArray::from_ndarray(ctx, &arr1(&x))?;
    let conds = [
        x.expr().gt(v(15)).eval()?,
        x.expr().le(v(5)).eval()?,
        x.expr().eq(v(0)).eval()?,
        x.expr().eq(v(10)).eval()?,
    ];
    let refs: Vec<_> = conds.iter().collect();
    let got = gpuarray::piecewise(&x, &refs, &[v(-1), v(0), v(2), v(3), v(-5)])?;
    let want: Vec<T> = [0, 2, 0, 0, -5, -5, 3, -5, -5, -1, -1, -1].map(v).to_vec();
    assert_eq!(got.to_vec()?, want, "{:?}", T::DTYPE);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn piecewise_gives_numpys_values_for_cupys_cases() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    cupy_cases::<f32>(&ctx, &[2.5, 4.5, 6.5, 8.5, 10.5, 12.5])?;
    cupy_cases::<f64>(&ctx, &[2.5, 4.5, 6.5, 8.5, 10.5, 12.5])?;
    cupy_cases::<i32>(&ctx, &[2, 4, 6, 8, 10, 12])?;
    cupy_cases::<i8>(&ctx, &[2, 4, 6, 8, 10, 12])?;
    cupy_cases::<i64>(&ctx, &[2, 4, 6, 8, 10, 12])?;
    // `test_piecewise_otherwise_condition2`: two identical conditions, values -1, 1 and 2
    // otherwise: NumPy 2.4 printed [1, 2, 2, 1].
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[-10.0f32, 20.0, 30.0, 40.0]))?;
    let c = DeviceArray::from_ndarray(&ctx, &arr1(&[true, false, false, true].map(Bool::from)))?;
    let got = gpuarray::piecewise(&x, &[&c, &c], &[-1.0, 1.0, 2.0])?;
    assert_eq!(got.to_vec()?, [1.0, 2.0, 2.0, 1.0]);
    // f16 and u8, whose comparisons and values go through their own types.
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[1.0f32, -2.0, 0.0, 3.5].map(f16::from_f32)))?;
    let (neg, pos) = (x.expr().lt(f16::ZERO).eval()?, x.expr().gt(f16::ZERO).eval()?);
    let got = gpuarray::piecewise(&x, &[&neg, &pos], &[f16::from_f32(-1.0), f16::from_f32(1.0)])?;
    assert_eq!(got.to_vec()?, [1.0f32, -1.0, 0.0, 1.0].map(f16::from_f32));
    let x = DeviceArray::from_ndarray(&ctx, &arr1(&[0u8, 7, 200, 255]))?;
    let big = x.expr().gt(100u8).eval()?;
    assert_eq!(
        gpuarray::piecewise(&x, &[&big], &[9u8, 1])?.to_vec()?,
        [1, 1, 9, 9]
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn piecewise_assigns_in_order_over_broadcast_conditions() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4242);
    let shape = [2usize, 3, 5];
    let n: usize = shape.iter().product();
    let x = Array::from_shape_vec(IxDyn(&shape), (0..n).map(|_| rng.f64()).collect()).unwrap();
    let dx = DeviceArray::from_ndarray(&ctx, &x)?;
    for (pairs, otherwise) in [(1usize, false), (3, true), (12, false), (40, true)] {
        // Condition k: a random mask of shape (3, 5), broadcast along the first axis, or of
        // x's whole shape every other time.
        let mut host: Vec<ArrayD<bool>> = Vec::new();
        let mut conds = Vec::new();
        for k in 0..pairs {
            let cshape: &[usize] = if k % 2 == 0 { &shape[1..] } else { &shape };
            let m: usize = cshape.iter().product();
            let mask = Array::from_shape_vec(
                IxDyn(cshape),
                (0..m).map(|_| rng.next_u64().is_multiple_of(3)).collect(),
            )
            .unwrap();
            host.push(mask.broadcast(IxDyn(&shape)).unwrap().to_owned());
            conds.push(DeviceArray::from_ndarray(&ctx, &mask.mapv(Bool::from))?);
        }
        let values: Vec<f64> = (0..pairs + usize::from(otherwise))
            .map(|k| k as f64 + 0.5)
            .collect();
        let refs: Vec<_> = conds.iter().collect();
        let got = gpuarray::piecewise(&dx, &refs, &values)?;
        assert_eq!(got.shape(), shape);
        // NumPy's order: zeros (or the otherwise value where no condition holds), then each
        // value assigned where its condition holds, later ones over earlier ones.
        let mut want = ArrayD::from_elem(IxDyn(&shape), 0.0);
        for (i, w) in want.indexed_iter_mut() {
            if otherwise && host.iter().all(|h| !h[&i]) {
                *w = values[pairs];
            }
            for (k, h) in host.iter().enumerate() {
                if h[&i] {
                    *w = values[k];
                }
            }
        }
        assert_eq!(
            got.to_vec()?,
            want.iter().copied().collect::<Vec<_>>(),
            "{pairs} pairs"
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn piecewise_of_0d_and_without_conditions_on_a_stream_and_its_refusals() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    // CuPy's `test_piecewise_zero_dim_input`: x 0-d, conditions x < 0 and x > 0, values
    // 10, 1 and 2 otherwise.
    for (v, want) in [(-3.0f64, 10.0), (4.0, 1.0), (0.0, 2.0)] {
        let x = DeviceArray::from_ndarray(&ctx, &gpu_runtime::ndarray::arr0(v))?;
        let (neg, pos) = (x.expr().lt(0.0).eval()?, x.expr().gt(0.0).eval()?);
        let got = gpuarray::on(&stream).piecewise(&x, &[&neg, &pos], &[10.0, 1.0, 2.0])?;
        assert!(got.shape().is_empty());
        assert_eq!(got.to_vec()?, [want]);
    }
    // No conditions and one value: that value everywhere, in x's shape.
    let x = DeviceArray::<i32, _>::zeros(&ctx, (2, 3))?;
    let none: [&DeviceArray<Bool, gpu_runtime::ndarray::Ix2>; 0] = [];
    let got = gpuarray::on(&stream).piecewise(&x, &none, &[7])?;
    assert_eq!((got.shape().to_vec(), got.to_vec()?), (vec![2, 3], vec![7; 6]));
    // CuPy's `test_mismatched_lengths`: 2 conditions, 5 values; and 2 against 1.
    let c = x.expr().eq(0).eval()?;
    for values in [&[-1, 0, 2, 4, 5][..], &[1][..]] {
        let e = gpuarray::piecewise(&x, &[&c, &c], values).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Shape(ArrayShapeError::ElementCounts {
                    operation: "piecewise",
                    first: 2,
                    ..
                })
            ),
            "{e}"
        );
    }
    // A condition that does not broadcast to x's shape.
    let wide = DeviceArray::<Bool, _>::zeros(&ctx, (2, 4))?;
    assert!(gpuarray::piecewise(&x, &[&wide], &[1]).is_err());
    Ok(())
}
