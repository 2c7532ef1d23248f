//! The fast copies' kernels on a GPU, each compared with a CPU reference on random data at
//! sizes that reach every loop of them: the flat conversion of contiguous arrays (`astype`,
//! `to_contiguous`, `assign`: four vector loads in flight per thread, then one at a time,
//! then a scalar tail; unaligned views and Fortran order too), the 64 x 64 tiled transpose
//! (full tiles, edge tiles, reversed and stepped views), and the strided variant's vector
//! tiles for broadcasts of a row `(m,)` or a column `(n, 1)` (rows aligned and not, row
//! lengths a multiple of four and not, several element types), with empty and 0-d arrays,
//! NaN and infinities.
//!
//! `cargo test --test suite -- --ignored array_copy_speed::`

use gpu_runtime::gpuarray::{DeviceArray, ElementwiseKernel, KernelArg};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{arr0, s, Array, Array1, Array2, ShapeBuilder};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// Lengths around the loops' edges: empty, shorter than a vector, a vector and a tail, less
/// than one grid step of unrolled loads, and several of them with a tail.
const LENGTHS: [usize; 8] = [0, 1, 3, 4, 1027, 3 * 1024 + 5, (1 << 20) + 3, (1 << 22) + 7];

/// `n` floats: random, with NaN, infinities, signed zeros and values out of `f16`'s range.
fn floats(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| match rng.next_u64() % 16 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => -0.0,
            4 => rng.f32() * 1e6,
            _ => rng.f32() * 100.0,
        })
        .collect()
}

/// Bitwise equality, NaN equal to NaN (both sides convert it to a NaN).
fn same_f64(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "{what}: element {i}: {g} != {w}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn contiguous_conversions_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(17);
    for n in LENGTHS {
        let x = floats(&mut rng, n);
        let d = DeviceArray::from_ndarray(&ctx, &Array1::from(x.clone()))?;
        let want: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let wide = d.astype::<f64>()?;
        same_f64(&wide.to_vec()?, &want, &format!("f32 -> f64, n = {n}"));
        // And back: every f64 here is an f32 exactly.
        let back: Vec<f64> = wide
            .astype::<f32>()?
            .to_vec()?
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        same_f64(&back, &want, &format!("f64 -> f32, n = {n}"));
        let halves: Vec<u16> = d.astype::<f16>()?.to_vec()?.iter().map(|h| h.to_bits()).collect();
        let want_halves: Vec<u16> = x.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
        for (i, (g, w)) in halves.iter().zip(&want_halves).enumerate() {
            let nan = |b: u16| f16::from_bits(b).is_nan();
            assert!(
                g == w || (nan(*g) && nan(*w)),
                "f32 -> f16, n = {n}, element {i}: {g:#x} != {w:#x}"
            );
        }
        let copy: Vec<f64> = d
            .to_contiguous()?
            .to_vec()?
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        same_f64(&copy, &want, &format!("f32 copy, n = {n}"));
        // Integer widenings and narrowings.
        let ints: Vec<i32> = (0..n)
            .map(|_| (rng.next_u64() as i32) >> (rng.next_u64() % 32))
            .collect();
        let di = DeviceArray::from_ndarray(&ctx, &Array1::from(ints.clone()))?;
        let want: Vec<i64> = ints.iter().map(|&v| i64::from(v)).collect();
        assert_eq!(di.astype::<i64>()?.to_vec()?, want, "i32 -> i64, n = {n}");
        let want: Vec<u8> = ints.iter().map(|&v| v as u8).collect();
        assert_eq!(di.astype::<u8>()?.to_vec()?, want, "i32 -> u8, n = {n}");
        let want: Vec<f32> = ints.iter().map(|&v| v as u8 as f32).collect();
        let bytes = DeviceArray::from_ndarray(
            &ctx,
            &Array1::from(ints.iter().map(|&v| v as u8).collect::<Vec<_>>()),
        )?;
        assert_eq!(bytes.astype::<f32>()?.to_vec()?, want, "u8 -> f32, n = {n}");
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn views_and_fortran_order_convert_as_on_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(23);
    let n = (1 << 20) + 9;
    let x = floats(&mut rng, n);
    let host = Array1::from(x);
    let d = DeviceArray::from_ndarray(&ctx, &host)?;
    // First elements aligned for vectors (4) and not (1, 3): both are plain memory.
    for start in [1, 3, 4] {
        let want: Vec<f64> = host.slice(s![start..]).iter().map(|&v| f64::from(v)).collect();
        let got = d.slice(s![start..])?.astype::<f64>()?.to_vec()?;
        same_f64(&got, &want, &format!("f32 -> f64 from element {start}"));
    }
    // Stepped and reversed: the elementwise kernel.
    let want: Vec<f64> = host.slice(s![..;-3]).iter().map(|&v| f64::from(v)).collect();
    same_f64(
        &d.slice(s![..;-3])?.astype::<f64>()?.to_vec()?,
        &want,
        "reversed, stepped",
    );
    // Fortran order into Fortran order is one flat copy; into C order it is a transpose.
    let (rows, cols) = (1031, 517);
    let values = floats(&mut rng, rows * cols);
    let f_host = Array::from_shape_vec((rows, cols).f(), values).unwrap();
    let f_dev = DeviceArray::from_ndarray(&ctx, &f_host)?;
    let want = f_host.mapv(f64::from);
    let mut f_out = DeviceArray::<f64, _>::from_ndarray(&ctx, &Array2::<f64>::zeros((rows, cols).f()))?;
    f_out.assign(&f_dev)?;
    let got = f_out.to_ndarray()?;
    same_f64(
        &got.iter().copied().collect::<Vec<_>>(),
        &want.iter().copied().collect::<Vec<_>>(),
        "F into F",
    );
    let got = f_dev.astype::<f64>()?.to_ndarray()?;
    same_f64(
        &got.iter().copied().collect::<Vec<_>>(),
        &want.iter().copied().collect::<Vec<_>>(),
        "F into C",
    );
    // 0-d.
    let zero_d = DeviceArray::from_ndarray(&ctx, &arr0(1.5f32))?;
    assert_eq!(zero_d.astype::<f64>()?.to_ndarray()?, arr0(1.5));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tiled_transposes_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(29);
    // Full tiles only, edge tiles on either side, the smallest tiled sides, large.
    for (rows, cols) in [(64, 128), (300, 170), (32, 1000), (1000, 33), (2048, 2049)] {
        let values = floats(&mut rng, rows * cols);
        let host = Array::from_shape_vec((rows, cols), values).unwrap();
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        let bits = |a: &Array2<f32>| a.iter().map(|v| f64::from(*v)).collect::<Vec<_>>();
        let got = d.t().to_contiguous()?.to_ndarray()?;
        same_f64(
            &bits(&got),
            &bits(&host.t().to_owned()),
            &format!("{rows} x {cols} transposed"),
        );
        let got = d.t().astype::<f64>()?.to_ndarray()?;
        let want: Vec<f64> = host.t().iter().map(|&v| f64::from(v)).collect();
        same_f64(
            &got.iter().copied().collect::<Vec<_>>(),
            &want,
            &format!("{rows} x {cols} transposed into f64"),
        );
        // A reversed, stepped view of the transpose.
        let view = d.slice(s![..;-1, ..;2])?;
        let got = view.t().to_contiguous()?.to_ndarray()?;
        let want = host.slice(s![..;-1, ..;2]).t().to_owned();
        same_f64(
            &bits(&got),
            &bits(&want),
            &format!("{rows} x {cols} reversed, stepped, transposed"),
        );
    }
    // Empty.
    let empty = DeviceArray::from_ndarray(&ctx, &Array2::<f32>::zeros((0, 64)))?;
    assert_eq!(empty.t().to_contiguous()?.to_ndarray()?.shape(), &[64, 0]);
    Ok(())
}

/// `(n, m) + (m,)` and `(n, m) + (n, 1)` through an elementwise kernel, against ndarray's
/// broadcasting: rows a multiple of four long (the vector tiles), not (the scalar ones), rows
/// of a wider array starting aligned and not, and an output the operation reads.
macro_rules! broadcast_case {
    ($ctx:expr, $rng:expr, $t:ty, $c:literal, $gen:expr) => {{
        let add = ElementwiseKernel::new(
            concat!("const ", $c, " *x, const ", $c, " *y, ", $c, " *z"),
            "z = x + y",
        )?;
        let accumulate = ElementwiseKernel::new(concat!("const ", $c, " *y, ", $c, " *z"), "z = z + y")?;
        for (n, m) in [(5usize, 1024usize), (3, 4100), (7, 1001), (4, 256), (2, 300)] {
            // A wider array whose columns 4.. (aligned) and 1.. (not) are the operand.
            for start in [0usize, 1, 4] {
                let width = m + 8;
                let wide: Array2<$t> = Array::from_shape_fn((n, width), |_| $gen($rng));
                let host_x = wide.slice(s![.., start..start + m]).to_owned();
                let d_wide = DeviceArray::from_ndarray($ctx, &wide)?;
                let d_x = d_wide.slice(s![.., start..start + m])?;
                let row: Array1<$t> = Array::from_shape_fn(m, |_| $gen($rng));
                let column: Array2<$t> = Array::from_shape_fn((n, 1), |_| $gen($rng));
                let (d_row, d_column) = (
                    DeviceArray::from_ndarray($ctx, &row)?,
                    DeviceArray::from_ndarray($ctx, &column)?,
                );
                let what = format!("{} ({n}, {m}) from column {start}", $c);
                let mut z = DeviceArray::<$t, _>::from_ndarray($ctx, &Array2::<$t>::default((n, m)))?;
                add.launch([
                    KernelArg::input(&d_x),
                    KernelArg::input(&d_row),
                    KernelArg::output(&mut z),
                ])?;
                assert_eq!(z.to_ndarray()?, &host_x + &row, "{what} + row");
                add.launch([
                    KernelArg::input(&d_x),
                    KernelArg::input(&d_column),
                    KernelArg::output(&mut z),
                ])?;
                assert_eq!(z.to_ndarray()?, &host_x + &column, "{what} + column");
                accumulate.launch([KernelArg::input(&d_row), KernelArg::output(&mut z)])?;
                assert_eq!(
                    z.to_ndarray()?,
                    &(&host_x + &column) + &row,
                    "{what} + column, then += row"
                );
            }
        }
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn broadcast_rows_and_columns_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(31);
    broadcast_case!(&ctx, &mut rng, f32, "float", |r: &mut Rng| r.f32() * 100.0);
    broadcast_case!(&ctx, &mut rng, f64, "double", |r: &mut Rng| r.f64() * 100.0);
    broadcast_case!(&ctx, &mut rng, i32, "int", |r: &mut Rng| (r.next_u64() % 20001)
        as i32
        - 10000);
    broadcast_case!(
        &ctx,
        &mut rng,
        u8,
        "unsigned char",
        |r: &mut Rng| (r.next_u64() % 80) as u8
    );
    // NaN and infinities pass through the vector tiles as through the scalar ones.
    let add = ElementwiseKernel::new("const float *x, const float *y, float *z", "z = x + y")?;
    let specials = floats(&mut rng, 8 * 1024);
    let x = Array::from_shape_vec((8, 1024), specials).unwrap();
    let row = Array1::from(floats(&mut rng, 1024));
    let mut z = DeviceArray::<f32, _>::from_ndarray(&ctx, &Array2::<f32>::zeros((8, 1024)))?;
    add.launch([
        KernelArg::input(&DeviceArray::from_ndarray(&ctx, &x)?),
        KernelArg::input(&DeviceArray::from_ndarray(&ctx, &row)?),
        KernelArg::output(&mut z),
    ])?;
    let want: Vec<f64> = (&x + &row).iter().map(|&v| f64::from(v)).collect();
    let got: Vec<f64> = z.to_ndarray()?.iter().map(|&v| f64::from(v)).collect();
    same_f64(&got, &want, "NaN and infinities + row");
    Ok(())
}
