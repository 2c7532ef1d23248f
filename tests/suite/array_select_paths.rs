//! The fast paths of the counting, compaction and random-integer kernels (issue 46, part 4)
//! against the host, on random data: `randint`'s one-block path and its rejection path
//! (against the stream its module docs define, word by word, and its uniformity where a
//! biased reduction would show), `bincount`'s one-pass path for small values and its
//! fallback for large ones, `histogram` with few and many bins, and `a[mask]` with all, none
//! and half of the mask true at lengths around its tiles.

use gpu_runtime::__testing::philox4x32_10;
use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::ndarray::s;
use gpu_runtime::Context;

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
