//! Hugging Face candle's kernels, declared with `file = …` alone (`realworld/candle_kernels.rs`),
//! launched as candle-core launches them (grid `ceil(n / 1024)` × 1024, `num_dims` and an
//! `info` array of dims then strides, null `info` for a contiguous layout, null `inp` for an
//! in-place operation), each against a CPU reference on random data.
//! Run on a GPU machine: `cargo test --test suite -- --ignored candle::`.

use crate::candle_kernels;

use candle_kernels::*;
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::types::Fp8E4M3;
use gpu_suite::{assert_close, Rng};

use crate::common::ctx;

/// candle's launch: enough blocks of 1024 threads for `n` elements.
fn grid(n: usize) -> u32 {
    (n as u32).div_ceil(1024)
}

const R: usize = 37;
const C: usize = 53;

#[test]
#[ignore = "needs a CUDA GPU"]
fn unary_on_contiguous_transposed_and_in_place_layouts() {
    let ctx = ctx();
    let n = R * C;
    let mut rng = Rng::new(201);
    let x = rng.vec_f32(n);
    let xd = ctx.to_device(&x).unwrap();
    let k = unary::uexp_f32::prepare(&ctx).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(n).unwrap();

    // Contiguous: a null `info`.
    k.prepared_call(grid(n), 1024, n, 1, None, Some(&xd), &mut out)
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| v.exp()).collect();
    assert_close(&out.to_vec().unwrap(), &want, 1e-5);

    // The transpose of the R × C matrix `x`: dims [C, R], strides [1, C].
    let info = ctx.to_device(&[C, R, 1, C]).unwrap();
    k.prepared_call(grid(n), 1024, n, 2, Some(&info), Some(&xd), &mut out)
        .unwrap();
    let want: Vec<f32> = (0..n).map(|i| x[(i % R) * C + i / R].exp()).collect();
    assert_close(&out.to_vec().unwrap(), &want, 1e-5);

    // In place: a null `inp` reads `out`.
    let mut io = ctx.to_device(&x).unwrap();
    k.prepared_call(grid(n), 1024, n, 1, None, None, &mut io).unwrap();
    let want: Vec<f32> = x.iter().map(|v| v.exp()).collect();
    assert_close(&io.to_vec().unwrap(), &want, 1e-5);

    // Other dtypes, and a kernel with a parameter.
    let xa: Vec<f64> = x.iter().map(|v| f64::from(v.abs())).collect();
    let mut od = ctx.alloc_zeros::<f64>(n).unwrap();
    unary::usqrt_f64::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(n),
            1024,
            n,
            1,
            None,
            Some(&ctx.to_device(&xa).unwrap()),
            &mut od,
        )
        .unwrap();
    for (g, v) in od.to_vec().unwrap().iter().zip(&xa) {
        assert!((g - v.sqrt()).abs() <= 1e-15 * (1.0 + v.sqrt()), "{g} {v}");
    }
    unary::upowf_f32::prepare(&ctx)
        .unwrap()
        .prepared_call(grid(n), 1024, n, 1, None, 2.0, Some(&xd), &mut out)
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| v * v).collect();
    assert_close(&out.to_vec().unwrap(), &want, 1e-5);
    let xh: Vec<f16> = x.iter().map(|v| f16::from_f32(*v)).collect();
    let mut oh = ctx.alloc_zeros::<f16>(n).unwrap();
    unary::uneg_f16::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(n),
            1024,
            n,
            1,
            None,
            Some(&ctx.to_device(&xh).unwrap()),
            &mut oh,
        )
        .unwrap();
    assert_eq!(oh.to_vec().unwrap(), xh.iter().map(|v| -*v).collect::<Vec<_>>());
    let xb: Vec<bf16> = x.iter().map(|v| bf16::from_f32(*v)).collect();
    let mut ob = ctx.alloc_zeros::<bf16>(n).unwrap();
    unary::urelu_bf16::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(n),
            1024,
            n,
            1,
            None,
            Some(&ctx.to_device(&xb).unwrap()),
            &mut ob,
        )
        .unwrap();
    let want: Vec<bf16> = xb
        .iter()
        .map(|v| if v.to_f32() > 0.0 { *v } else { bf16::ZERO })
        .collect();
    assert_eq!(
        ob.to_vec()
            .unwrap()
            .iter()
            .map(|v| v.to_f32())
            .collect::<Vec<_>>(),
        want.iter().map(|v| v.to_f32()).collect::<Vec<_>>()
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn binary_on_contiguous_and_broadcast_layouts() {
    let ctx = ctx();
    let n = R * C;
    let mut rng = Rng::new(202);
    let (a, b) = (rng.vec_f32(n), rng.vec_f32(C));
    let (ad, bd) = (ctx.to_device(&a).unwrap(), ctx.to_device(&b).unwrap());
    let k = binary::badd_f32::prepare(&ctx).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
    // `b` (C) broadcast over the rows of `a` (R × C): dims [R, C], lhs strides [C, 1], rhs
    // strides [0, 1].
    let info = ctx.to_device(&[R, C, C, 1, 0, 1]).unwrap();
    k.prepared_call(grid(n), 1024, n, 2, Some(&info), &ad, &bd, &mut out)
        .unwrap();
    let want: Vec<f32> = (0..n).map(|i| a[i] + b[i % C]).collect();
    assert_close(&out.to_vec().unwrap(), &want, 1e-6);
    // Both contiguous: a null `dims_and_strides`.
    k.prepared_call(grid(n), 1024, n, 1, None, &ad, &ad, &mut out)
        .unwrap();
    let want: Vec<f32> = a.iter().map(|v| v + v).collect();
    assert_close(&out.to_vec().unwrap(), &want, 1e-6);

    let (l, r): (Vec<i64>, Vec<i64>) = (0..n)
        .map(|_| ((rng.next_u64() % 7) as i64 - 3, (rng.next_u64() % 7) as i64 - 3))
        .unzip();
    let mut o8 = ctx.alloc_zeros::<u8>(n).unwrap();
    binary::lt_i64::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(n),
            1024,
            n,
            1,
            None,
            &ctx.to_device(&l).unwrap(),
            &ctx.to_device(&r).unwrap(),
            &mut o8,
        )
        .unwrap();
    let want: Vec<u8> = l.iter().zip(&r).map(|(l, r)| u8::from(l < r)).collect();
    assert_eq!(o8.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn affine_in_f32_and_fp8_and_in_place() {
    let ctx = ctx();
    let n = R * C;
    let mut rng = Rng::new(203);
    let x = rng.vec_f32(n);
    let k = affine::affine_f32::prepare(&ctx).unwrap();
    let xd = ctx.to_device(&x).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
    k.prepared_call(grid(n), 1024, n, 1, None, Some(&xd), &mut out, 1.5, -0.25)
        .unwrap();
    let want: Vec<f32> = x.iter().map(|v| v * 1.5 - 0.25).collect();
    assert_close(&out.to_vec().unwrap(), &want, 1e-6);
    let mut io = ctx.to_device(&x).unwrap();
    k.prepared_call(grid(n), 1024, n, 1, None, None, &mut io, 1.5, -0.25)
        .unwrap();
    assert_close(&io.to_vec().unwrap(), &want, 1e-6);

    // fp8: every finite E4M3 value, doubled plus one half, in float, then rounded as CUDA
    // rounds (exactly what `Fp8E4M3::from_f32` does).
    let x8: Vec<Fp8E4M3> = (0..n)
        .map(|i| Fp8E4M3((i % 256) as u8))
        .map(|v| if v.to_f32().is_nan() { Fp8E4M3(0) } else { v })
        .collect();
    let (mul, add) = (Fp8E4M3::from_f32(2.0), Fp8E4M3::from_f32(0.5));
    let mut o8 = ctx.alloc_zeros::<Fp8E4M3>(n).unwrap();
    affine::affine_f8_e4m3::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(n),
            1024,
            n,
            1,
            None,
            Some(&ctx.to_device(&x8).unwrap()),
            &mut o8,
            mul,
            add,
        )
        .unwrap();
    let want: Vec<Fp8E4M3> = x8
        .iter()
        .map(|v| Fp8E4M3::from_f32(v.to_f32() * 2.0 + 0.5))
        .collect();
    assert_eq!(o8.to_vec().unwrap(), want);
    let mut neg = ctx.alloc_zeros::<Fp8E4M3>(n).unwrap();
    unary::uneg_fp8_e4m3::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(n),
            1024,
            n,
            1,
            None,
            Some(&ctx.to_device(&x8).unwrap()),
            &mut neg,
        )
        .unwrap();
    let want: Vec<Fp8E4M3> = x8.iter().map(|v| Fp8E4M3::from_f32(-v.to_f32())).collect();
    assert_eq!(neg.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn casts_fills_copies_and_where() {
    let ctx = ctx();
    let n = R * C;
    let mut rng = Rng::new(204);
    let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
    let mut of = ctx.alloc_zeros::<f32>(n).unwrap();
    cast::cast_u8_f32::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(n),
            1024,
            n,
            1,
            None,
            &ctx.to_device(&bytes).unwrap(),
            &mut of,
        )
        .unwrap();
    assert_eq!(
        of.to_vec().unwrap(),
        bytes.iter().map(|b| f32::from(*b)).collect::<Vec<_>>()
    );
    let x = rng.vec_f32(n);
    let mut ob = ctx.alloc_zeros::<bf16>(n).unwrap();
    cast::cast_f32_bf16::prepare(&ctx)
        .unwrap()
        .prepared_call(grid(n), 1024, n, 1, None, &ctx.to_device(&x).unwrap(), &mut ob)
        .unwrap();
    assert_eq!(
        ob.to_vec().unwrap(),
        x.iter().map(|v| bf16::from_f32(*v)).collect::<Vec<_>>()
    );

    let mut buf = ctx.alloc_zeros::<f32>(n).unwrap();
    fill::fill_f32::prepare(&ctx)
        .unwrap()
        .prepared_call(grid(n), 1024, &mut buf, 3.25, n)
        .unwrap();
    assert_eq!(buf.to_vec().unwrap(), vec![3.25; n]);
    // The left C - 3 columns of the R × C matrix `x` into an R × (C - 3) one.
    let d2 = C - 3;
    let mut dst = ctx.alloc_zeros::<f32>(R * d2).unwrap();
    fill::copy2d_f32::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(R * d2),
            1024,
            &ctx.to_device(&x).unwrap(),
            &mut dst,
            R as u32,
            d2 as u32,
            C as u32,
            d2 as u32,
        )
        .unwrap();
    let want: Vec<f32> = (0..R * d2).map(|i| x[(i / d2) * C + i % d2]).collect();
    assert_eq!(dst.to_vec().unwrap(), want);

    // where(ids, t, f) on contiguous 1-d layouts: dims, then the strides of ids, t and f.
    let ids: Vec<u8> = (0..n).map(|_| (rng.next_u64() % 2) as u8).collect();
    let (t, f) = (rng.vec_f32(n), rng.vec_f32(n));
    let info = ctx.to_device(&[n, 1, 1, 1]).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
    ternary::where_u8_f32::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(n),
            1024,
            n,
            1,
            Some(&info),
            &ctx.to_device(&ids).unwrap(),
            &ctx.to_device(&t).unwrap(),
            &ctx.to_device(&f).unwrap(),
            &mut out,
        )
        .unwrap();
    let want: Vec<f32> = (0..n).map(|i| if ids[i] != 0 { t[i] } else { f[i] }).collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn index_select_and_argsort() {
    let ctx = ctx();
    let mut rng = Rng::new(205);
    // Rows `ids` of the R × C matrix `src`.
    let src = rng.vec_f32(R * C);
    let ids: Vec<u32> = (0..19).map(|_| (rng.next_u64() % R as u64) as u32).collect();
    let numel = ids.len() * C;
    let info = ctx.to_device(&[R, C, C, 1]).unwrap();
    let mut out = ctx.alloc_zeros::<f32>(numel).unwrap();
    indexing::is_u32_f32::prepare(&ctx)
        .unwrap()
        .prepared_call(
            grid(numel),
            1024,
            numel,
            2,
            Some(&info),
            &ctx.to_device(&ids).unwrap(),
            &ctx.to_device(&src).unwrap(),
            &mut out,
            1,
            R,
            ids.len(),
            C,
        )
        .unwrap();
    let want: Vec<f32> = (0..numel).map(|i| src[ids[i / C] as usize * C + i % C]).collect();
    assert_eq!(out.to_vec().unwrap(), want);

    // Each row of an R × C matrix argsorted, one block a row, the indices in shared memory
    // (candle pads the columns to a power of two). The keys of a row are distinct, so that
    // the order is one (the bitonic sort is not stable).
    let src: Vec<f32> = (0..R * C)
        .map(|i| ((i % C * 22 + i / C * 31) % C) as f32 * 0.25 - 3.0)
        .collect();
    let pad = C.next_power_of_two();
    let mut dst = ctx.alloc_zeros::<u32>(R * C).unwrap();
    sort::asort_asc_f32::prepare(&ctx)
        .unwrap()
        .prepared_call_shared(
            R as u32,
            pad as u32,
            (pad * 4) as u32,
            &ctx.to_device(&src).unwrap(),
            &mut dst,
            C as i32,
            pad as i32,
        )
        .unwrap();
    let got = dst.to_vec().unwrap();
    for r in 0..R {
        let row = &src[r * C..(r + 1) * C];
        let mut want: Vec<u32> = (0..C as u32).collect();
        want.sort_by(|a, b| row[*a as usize].total_cmp(&row[*b as usize]));
        assert_eq!(&got[r * C..(r + 1) * C], &want[..], "row {r}");
    }
}

/// Needs reduce.cu to compile under NVRTC (issue 42, part 3, fixed beside this).
#[test]
#[ignore = "needs a CUDA GPU"]
fn layernorm_with_and_without_alpha_and_beta() {
    let ctx = ctx();
    let mut rng = Rng::new(206);
    let k = reduce::layernorm_f32::prepare(&ctx).unwrap();
    // candle's launch: one block a row, 32 threads for fewer than 1024 columns, else 1024.
    for (rows, cols) in [(16usize, 1536usize), (9, 100)] {
        let block: u32 = if cols < 1024 { 32 } else { 1024 };
        let x = rng.vec_f32(rows * cols);
        let (alpha, beta) = (rng.vec_f32(cols), rng.vec_f32(cols));
        let xd = ctx.to_device(&x).unwrap();
        let (ad, bd) = (ctx.to_device(&alpha).unwrap(), ctx.to_device(&beta).unwrap());
        let eps = 1e-5f32;
        for (a, b) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut dst = ctx.alloc_zeros::<f32>(rows * cols).unwrap();
            k.prepared_call(
                rows as u32,
                block,
                &xd,
                &mut dst,
                a.then_some(&ad as &dyn gpu_runtime::DeviceRead<f32>),
                b.then_some(&bd as &dyn gpu_runtime::DeviceRead<f32>),
                cols as i32,
                block as i32,
                eps,
            )
            .unwrap();
            let mut want = Vec::with_capacity(rows * cols);
            for row in x.chunks(cols) {
                let mean = row.iter().map(|v| f64::from(*v)).sum::<f64>() / cols as f64;
                let var = row.iter().map(|v| (f64::from(*v) - mean).powi(2)).sum::<f64>() / cols as f64;
                let inv = 1.0 / (var + f64::from(eps)).sqrt();
                for (c, v) in row.iter().enumerate() {
                    let y = (f64::from(*v) - mean) * inv;
                    let y = if a { y * f64::from(alpha[c]) } else { y };
                    want.push((if b { y + f64::from(beta[c]) } else { y }) as f32);
                }
            }
            assert_close(&dst.to_vec().unwrap(), &want, 1e-4);
        }
    }
}
