//! The fast paths of the counting, compaction and random-integer kernels (issue 46, part 4)
//! against the host, on random data: `randint`'s one-block path and its rejection path
//! (against the stream its module docs define, word by word, and its uniformity where a
//! biased reduction would show), `bincount`'s one-pass path for small values and its
//! fallback for large ones, `histogram` with few and many bins, and `a[mask]` with all, none
//! and half of the mask true at lengths around its tiles.

use super::array_select::host_histogram;
use gpu_runtime::__testing::philox4x32_10;
use gpu_runtime::gpuarray::{Bins, Bool, DeviceArray};
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::{s, Array};
use gpu_runtime::{ArrayShapeError, Context, Error};

/// The fourth counter word of `randint`'s Philox blocks ("RINT").
const TAG: u32 = 0x5249_4e54;

/// `randint`'s values as its module docs define them: element `4g + k` takes its words in
/// turn from the blocks `(g, z, TAG)`, `z = 0, 1, ...`, one word a draw for a range up to
/// 2^32, two (high first) beyond, redrawn while Lemire's low product is below `2^w mod r`.
/// The values are offsets from `low`, as `u64`.
fn host_randint(seed: u64, n: usize, r: u64) -> Vec<u64> {
    let key = [seed as u32, (seed >> 32) as u32];
    let mut out = Vec::with_capacity(n);
    for g in 0..n.div_ceil(4) as u64 {
        let (mut z, mut used, mut q) = (0u32, 0usize, [0u32; 4]);
        let mut next = || {
            if used == 0 || used == 4 {
                q = philox4x32_10([g as u32, (g >> 32) as u32, z, TAG], key);
                z += 1;
                used = 0;
            }
            used += 1;
            q[used - 1]
        };
        for _ in 0..4 {
            let v = if r == 1 << 32 {
                u64::from(next())
            } else if r < 1 << 32 {
                let t = (1u64 << 32) % r;
                loop {
                    let m = u64::from(next()) * r;
                    if m & 0xffff_ffff >= t {
                        break m >> 32;
                    }
                }
            } else {
                let t = r.wrapping_neg() % r;
                loop {
                    let x = (u64::from(next()) << 32) | u64::from(next());
                    let m = u128::from(x) * u128::from(r);
                    if m as u64 >= t {
                        break (m >> 64) as u64;
                    }
                }
            };
            out.push(v);
        }
    }
    out.truncate(n);
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn randint_matches_its_definition_on_the_fast_and_the_rejection_paths() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // Lengths that end inside a group of four and inside a block of 256 groups.
    for n in [1usize, 7, 1023, 100_003] {
        // r = 1000: almost never rejected; 2^31 + 1: rejected about half the time (the slow
        // path on most groups); 2^32 exactly: the words themselves.
        let a = DeviceArray::<i32, _>::randint(&ctx, n, -17, 983, 5)?.to_vec()?;
        let want: Vec<i32> = host_randint(5, n, 1000).iter().map(|&v| v as i32 - 17).collect();
        assert_eq!(a, want, "i32 in -17..983, n {n}");
        let b = DeviceArray::<u32, _>::randint(&ctx, n, 3, (1 << 31) + 4, 6)?.to_vec()?;
        let want: Vec<u32> = host_randint(6, n, (1 << 31) + 1)
            .iter()
            .map(|&v| v as u32 + 3)
            .collect();
        assert_eq!(b, want, "u32 in 3..2^31 + 4, n {n}");
        let c = DeviceArray::<i64, _>::randint(&ctx, n, -(1 << 31), 1 << 31, 7)?.to_vec()?;
        let want: Vec<i64> = host_randint(7, n, 1 << 32)
            .iter()
            .map(|&v| v as i64 - (1 << 31))
            .collect();
        assert_eq!(c, want, "i64 over 2^32 values, n {n}");
        // Beyond 2^32: two words a draw; 2^63 + 1 rejects about half of them.
        let d = DeviceArray::<u64, _>::randint(&ctx, n, 1, (1 << 63) + 2, 8)?.to_vec()?;
        let want: Vec<u64> = host_randint(8, n, (1 << 63) + 1).iter().map(|&v| v + 1).collect();
        assert_eq!(d, want, "u64 in 1..2^63 + 2, n {n}");
        let e = DeviceArray::<i64, _>::randint(&ctx, n, i64::MIN, i64::MAX, 9)?.to_vec()?;
        let want: Vec<i64> = host_randint(9, n, u64::MAX)
            .iter()
            .map(|&v| (v as i64).wrapping_add(i64::MIN))
            .collect();
        assert_eq!(e, want, "i64 over all but one value, n {n}");
        // Small types: 4- and 8-byte groups.
        let f = DeviceArray::<u8, _>::randint(&ctx, n, 0, 255, 10)?.to_vec()?;
        let want: Vec<u8> = host_randint(10, n, 255).iter().map(|&v| v as u8).collect();
        assert_eq!(f, want, "u8 in 0..255, n {n}");
        let g = DeviceArray::<i16, _>::randint(&ctx, n, -300, 300, 11)?.to_vec()?;
        let want: Vec<i16> = host_randint(11, n, 600).iter().map(|&v| v as i16 - 300).collect();
        assert_eq!(g, want, "i16 in -300..300, n {n}");
    }
    // A view that starts one element in: not aligned for the group's vector store.
    let mut a = DeviceArray::<i32, _>::zeros(&ctx, 1001)?;
    a.slice_mut(s![1..])?.fill_randint(0, 1000, 12)?;
    let got = a.to_vec()?;
    let want: Vec<i32> = host_randint(12, 1000, 1000).iter().map(|&v| v as i32).collect();
    assert_eq!(got[0], 0);
    assert_eq!(&got[1..], &want[..]);
    Ok(())
}

/// Pearson's chi-square of `counts` against equal expectations.
fn chi_square(counts: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    let e = n as f64 / counts.len() as f64;
    counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
}

/// Within 6 standard deviations of the chi-square distribution's mean (`k - 1` degrees of
/// freedom, variance twice that).
fn uniform_enough(counts: &[u64]) -> bool {
    let dof = (counts.len() - 1) as f64;
    chi_square(counts) < dof + 6.0 * (2.0 * dof).sqrt()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn randint_is_exactly_uniform_where_a_biased_reduction_would_show() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let n = 1 << 22;
    // 1000 values: each about n / 1000 times.
    let a = DeviceArray::<i32, _>::randint(&ctx, n, 0, 1000, 21)?.to_vec()?;
    let mut counts = vec![0u64; 1000];
    for &v in &a {
        assert!((0..1000).contains(&v));
        counts[v as usize] += 1;
    }
    assert!(uniform_enough(&counts), "chi-square {}", chi_square(&counts));
    // r = 3 * 2^30: 4/3 words a value. A modulo reduction makes the lowest third twice as
    // likely as each other; a multiply-shift without rejection makes the multiples of 3 twice
    // as likely. Both show at once in these counts (chi-square in the tens of thousands).
    let r = 3u32 << 30;
    let b = DeviceArray::<u32, _>::randint(&ctx, n, 0, r, 22)?.to_vec()?;
    let (mut thirds, mut mod3) = (vec![0u64; 3], vec![0u64; 3]);
    for &v in &b {
        assert!(v < r);
        thirds[(v >> 30) as usize] += 1;
        mod3[(v % 3) as usize] += 1;
    }
    assert!(uniform_enough(&thirds), "thirds {thirds:?}");
    assert!(uniform_enough(&mod3), "residues mod 3 {mod3:?}");
    // The same beyond 2^32: r = 3 * 2^62 in two words.
    let r = 3u64 << 62;
    let c = DeviceArray::<u64, _>::randint(&ctx, n, 0, r, 23)?.to_vec()?;
    let (mut thirds, mut mod3) = (vec![0u64; 3], vec![0u64; 3]);
    for &v in &c {
        assert!(v < r);
        thirds[(v >> 62) as usize] += 1;
        mod3[(v % 3) as usize] += 1;
    }
    assert!(uniform_enough(&thirds), "thirds {thirds:?}");
    assert!(uniform_enough(&mod3), "residues mod 3 {mod3:?}");
    Ok(())
}

/// NumPy's `bincount` on the host.
fn host_bincount(v: &[i64], minlength: usize) -> Vec<i64> {
    let len = v
        .iter()
        .map(|&x| x as usize + 1)
        .max()
        .unwrap_or(0)
        .max(minlength);
    let mut c = vec![0i64; len];
    for &x in v {
        c[x as usize] += 1;
    }
    c
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bincount_in_one_pass_and_its_fallback_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = gpu_suite::Rng::new(46);
    // Lengths around a 16-byte load and a block's share; values below 1024 (the one pass),
    // up to exactly 1023, and with one value of 1024 or far above (the pass, then the
    // general path sized by the maximum it found).
    for n in [1usize, 3, 4, 4099, (1 << 20) + 3] {
        for (max, big) in [
            (1000u64, None),
            (1024, None),
            (17, Some(1024i64)),
            (1000, Some(1_000_000)),
        ] {
            let mut v: Vec<i64> = (0..n).map(|_| (rng.next_u64() % max) as i64).collect();
            if let Some(b) = big {
                let at = (rng.next_u64() % n as u64) as usize;
                v[at] = b;
            }
            let h: Vec<i32> = v.iter().map(|&x| x as i32).collect();
            let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
            for minlength in [0usize, 5, 2000] {
                assert_eq!(
                    d.bincount(minlength)?.to_vec()?,
                    host_bincount(&v, minlength),
                    "n {n} max {max} big {big:?} minlength {minlength}"
                );
            }
            // One element in: not 16-byte aligned, so every value is read one at a time.
            if n > 1 {
                let tail = d.slice(s![1..])?;
                assert_eq!(
                    tail.bincount(0)?.to_vec()?,
                    host_bincount(&v[1..], 0),
                    "n {n} from 1"
                );
            }
            // Bytes and 64-bit values (16 and 2 a load).
            let b: Vec<u8> = v.iter().map(|&x| (x % 251) as u8).collect();
            let wide: Vec<i64> = b.iter().map(|&x| i64::from(x)).collect();
            let db = DeviceArray::from_ndarray(&ctx, &Array::from(b))?;
            assert_eq!(db.bincount(0)?.to_vec()?, host_bincount(&wide, 0), "u8, n {n}");
            let dl = DeviceArray::from_ndarray(&ctx, &Array::from(v.clone()))?;
            assert_eq!(dl.bincount(3)?.to_vec()?, host_bincount(&v, 3), "i64, n {n}");
        }
    }
    // A negative value is refused, wherever it is: the one pass finds the minimum.
    let mut v: Vec<i32> = (0..100_001).map(|k| k % 50).collect();
    v[100_000] = -7;
    v[3] = -9;
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(v))?;
    assert!(matches!(
        d.bincount(0),
        Err(Error::Shape(ArrayShapeError::NegativeValue { value: -9, .. }))
    ));
    // A value past i64's range is still refused (the fallback's range).
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(vec![1u64, u64::MAX]))?;
    assert!(matches!(
        d.bincount(0),
        Err(Error::Shape(ArrayShapeError::ValueTooLarge { .. }))
    ));
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn histograms_with_few_and_many_bins_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = gpu_suite::Rng::new(47);
    for n in [1usize, 5, 4099, (1 << 20) + 3] {
        // Uniform in [-0.1, 1.1): some outside the range (0, 1), a NaN now and then, and the
        // range's ends themselves.
        let mut h: Vec<f32> = (0..n).map(|_| rng.f32() * 0.6 + 0.5).collect();
        for k in (0..n).step_by(997) {
            h[k] = [f32::NAN, 0.0, 1.0][k % 3];
        }
        let x: Vec<f64> = h.iter().map(|&v| f64::from(v)).collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array::from(h))?;
        // 100 bins: 8 sub-histograms and shared edges; 1500: 5 and the edges in global
        // memory; 5000: one; 9000: global atomics.
        for bins in [1usize, 100, 1024, 1500, 5000, 9000] {
            let (c, e) = d.histogram(Bins::Count {
                bins,
                range: Some((0.0, 1.0)),
            })?;
            let e = e.to_vec()?;
            assert_eq!(c.to_vec()?, host_histogram(&x, &e), "n {n} bins {bins}");
            // Explicit, unequal edges: the binary search.
            let edges: Vec<f64> = (0..=bins).map(|k| (k as f64 / bins as f64).powi(2)).collect();
            let (c, _) = d.histogram(Bins::Edges(&edges))?;
            assert_eq!(
                c.to_vec()?,
                host_histogram(&x, &edges),
                "n {n} bins {bins}, edges"
            );
        }
        if n > 1 {
            // Unaligned: one element in.
            let tail = d.slice(s![1..])?;
            let (c, e) = tail.histogram(Bins::Count {
                bins: 100,
                range: Some((0.0, 1.0)),
            })?;
            assert_eq!(c.to_vec()?, host_histogram(&x[1..], &e.to_vec()?), "n {n} from 1");
        }
    }
    // Other element types through the 16-byte loads: 8 halves and 2 doubles a load.
    let v: Vec<f64> = (0..70_001).map(|_| rng.f64() * 40.0).collect();
    let dh = DeviceArray::from_ndarray(
        &ctx,
        &Array::from(v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>()),
    )?;
    let xh: Vec<f64> = v.iter().map(|&x| f16::from_f64(x).to_f64()).collect();
    let (c, e) = dh.histogram(Bins::Count {
        bins: 64,
        range: None,
    })?;
    assert_eq!(c.to_vec()?, host_histogram(&xh, &e.to_vec()?), "f16");
    let dd = DeviceArray::from_ndarray(&ctx, &Array::from(v.clone()))?;
    let (c, e) = dd.histogram(Bins::Count {
        bins: 64,
        range: None,
    })?;
    assert_eq!(c.to_vec()?, host_histogram(&v, &e.to_vec()?), "f64");
    assert_eq!(c.to_vec()?.iter().sum::<i64>(), v.len() as i64);
    Ok(())
}

/// Values on every edge and one step either side of it, where the kernel's estimate of the
/// bin from the value's place must give way to the edges, in `f32`, `f16` and `f64`, over
/// ranges wide and narrow beside their magnitude; and `f32` values beside explicit edges that
/// no `f32` equals.
#[test]
#[ignore = "needs a CUDA GPU"]
fn histograms_of_values_on_and_beside_every_edge_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = gpu_suite::Rng::new(4646);
    for (lo, hi, bins) in [
        (0.0, 1.0, 100usize),
        (-3.3, 17.1, 1000),
        (1000.0, 1000.5, 7),
        (1e6, 1e6 + 1.0, 10),
    ] {
        let (_, e) = DeviceArray::from_ndarray(&ctx, &Array::from(vec![0.5f32]))?.histogram(Bins::Count {
            bins,
            range: Some((lo, hi)),
        })?;
        let mut h: Vec<f32> = Vec::new();
        for &edge in &e.to_vec()? {
            let edge = edge as f32;
            h.extend([edge, edge.next_up(), edge.next_down()]);
        }
        h.extend((0..10_000).map(|_| (lo + (hi - lo) * rng.f64()) as f32));
        let x: Vec<f64> = h.iter().map(|&v| f64::from(v)).collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array::from(h.clone()))?;
        let hd: Vec<f64> = x.iter().flat_map(|&v| [v, v.next_up(), v.next_down()]).collect();
        let dd = DeviceArray::from_ndarray(&ctx, &Array::from(hd.clone()))?;
        let cases = [
            (
                d.histogram(Bins::Count {
                    bins,
                    range: Some((lo, hi)),
                })?,
                &x,
                "f32",
            ),
            (
                d.histogram(Bins::Count { bins, range: None })?,
                &x,
                "f32, data range",
            ),
            (
                dd.histogram(Bins::Count {
                    bins,
                    range: Some((lo, hi)),
                })?,
                &hd,
                "f64",
            ),
        ];
        for ((c, e), values, what) in cases {
            assert_eq!(
                c.to_vec()?,
                host_histogram(values, &e.to_vec()?),
                "{what} {lo}..{hi}, {bins} bins"
            );
        }
    }
    // Explicit edges that no `f32` equals, each between an `f32` value and its neighbour: the
    // data's `f32` values must be compared with them as `f64`.
    let edges = [f64::from(0.1f32) + 1e-12, 0.5 - 1e-12, f64::from(0.9f32) - 1e-12];
    let mut h: Vec<f32> = Vec::new();
    for &e in &edges {
        let f = e as f32;
        h.extend([f, f.next_up(), f.next_down()]);
    }
    h.extend((0..1000).map(|_| rng.f64() as f32));
    let x: Vec<f64> = h.iter().map(|&v| f64::from(v)).collect();
    let d = DeviceArray::from_ndarray(&ctx, &Array::from(h))?;
    let (c, _) = d.histogram(Bins::Edges(&edges))?;
    assert_eq!(c.to_vec()?, host_histogram(&x, &edges), "f32 data, f64 edges");
    let v: Vec<f16> = (0..=2000)
        .map(|k| f16::from_f64(-4.0 + k as f64 * 0.004))
        .collect();
    let xh: Vec<f64> = v.iter().map(|x| x.to_f64()).collect();
    let dh = DeviceArray::from_ndarray(&ctx, &Array::from(v))?;
    for range in [Some((-4.0, 4.0)), None] {
        let (c, e) = dh.histogram(Bins::Count { bins: 64, range })?;
        assert_eq!(c.to_vec()?, host_histogram(&xh, &e.to_vec()?), "f16 {range:?}");
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn masked_with_all_none_and_half_true_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = gpu_suite::Rng::new(48);
    // Lengths around the tiles (4096 f32, 2048 f64, 16384 u8) and 16-byte groups.
    for n in [1usize, 3, 4095, 4096, 4097, 16_385, 100_003, (1 << 20) + 5] {
        let x: Vec<f32> = rng.vec_f32(n);
        let xd: Vec<f64> = x.iter().map(|&v| f64::from(v) * 3.0).collect();
        let xb: Vec<u8> = x.iter().map(|&v| (v * 100.0) as i8 as u8).collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array::from(x.clone()))?;
        let dd = DeviceArray::from_ndarray(&ctx, &Array::from(xd.clone()))?;
        let db = DeviceArray::from_ndarray(&ctx, &Array::from(xb.clone()))?;
        for kind in ["all", "none", "half", "sparse"] {
            let m: Vec<bool> = (0..n)
                .map(|_| match kind {
                    "all" => true,
                    "none" => false,
                    "half" => rng.next_u64() & 1 == 1,
                    _ => rng.next_u64().is_multiple_of(1000),
                })
                .collect();
            let md = DeviceArray::from_ndarray(
                &ctx,
                &Array::from(m.iter().map(|&b| Bool::from(b)).collect::<Vec<_>>()),
            )?;
            let pick = |i: usize| m[i];
            let want: Vec<u32> = (0..n).filter(|&i| pick(i)).map(|i| x[i].to_bits()).collect();
            let got: Vec<u32> = d.masked(&md)?.to_vec()?.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "f32 n {n} {kind}");
            let want: Vec<f64> = (0..n).filter(|&i| pick(i)).map(|i| xd[i]).collect();
            assert_eq!(dd.masked(&md)?.to_vec()?, want, "f64 n {n} {kind}");
            let want: Vec<u8> = (0..n).filter(|&i| pick(i)).map(|i| xb[i]).collect();
            assert_eq!(db.masked(&md)?.to_vec()?, want, "u8 n {n} {kind}");
            if n > 1 {
                // Views one element in: neither the values nor the mask 16-byte aligned.
                let want: Vec<u32> = (1..n).filter(|&i| pick(i)).map(|i| x[i].to_bits()).collect();
                let got: Vec<u32> = d
                    .slice(s![1..])?
                    .masked(&md.slice(s![1..])?)?
                    .to_vec()?
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                assert_eq!(got, want, "f32 from 1, n {n} {kind}");
            }
        }
    }
    // A mask byte other than 1 is true (a `Bool` may hold any byte the device wrote).
    let bytes = DeviceArray::from_ndarray(&ctx, &Array::from(vec![0u8, 2, 0, 255, 7, 0, 0, 1]))?;
    let mask = bytes.view_as::<Bool>()?;
    let d = DeviceArray::from_ndarray(&ctx, &Array::from((0..8).map(|k| k as f32).collect::<Vec<_>>()))?;
    assert_eq!(d.masked(&mask)?.to_vec()?, [1.0, 3.0, 4.0, 7.0]);
    Ok(())
}
