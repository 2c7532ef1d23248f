//! The one-pass scan (`cumsum`) on a GPU against the host, on random data, through each path
//! the launch picks: full tiles of contiguous, 16-byte aligned runs (16-byte vector loads and
//! stores, for elements of 1, 2, 4 and 8 bytes), runs that start misaligned (a view from
//! element 1 to 3: one element at a time), stepped and reversed views, lengths just below, at
//! and above multiples of the tile, 2^26 + an odd number of `f32`s (16K tiles chained by the
//! look-back), and the tile status packed into one word (elements of up to 4 bytes) or kept in
//! separate arrays (8 bytes); the stream's status buffer reused across scans, through the wrap
//! of its launch tags, and from many threads at once.

use gpu_runtime::__testing::scan_tile_of;
use gpu_runtime::gpuarray::{DeviceArray, Element};
use gpu_runtime::ndarray::{s, Array1};
use gpu_runtime::Context;
use gpu_suite::Rng;

/// The lengths around tile multiples that every type is scanned at: the tiles of 1-, 4-, 8- and
/// 16-byte elements (which differ).
fn lengths(rng: &mut Rng) -> Vec<usize> {
    let mut v = vec![0, 1, 3];
    for t in [
        scan_tile_of::<u8>(),
        scan_tile_of::<f32>(),
        scan_tile_of::<f64>(),
        scan_tile_of::<gpu_runtime::types::Complex64>(),
    ] {
        let t = t as usize;
        v.extend([t - 1, t, t + 1, 2 * t - 1, 5 * t, 5 * t + 7]);
    }
    v.push(64 * scan_tile_of::<f32>() as usize + 1);
    v.sort_unstable();
    v.dedup();
    v.extend((0..3).map(|_| (rng.next_u64() % 400_000) as usize));
    v
}

/// The inclusive scan on the host with `add` (wrapping for the integers).
fn host_scan<T: Copy>(h: &[T], zero: T, add: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = zero;
    h.iter()
        .map(|&x| {
            acc = add(acc, x);
            acc
        })
        .collect()
}

/// `cumsum` and `cumsum_exclusive` of `h` on the device, whole and from elements 1, 2 and 3
/// (misaligned starts), against the host, exactly.
fn check_exact<T>(ctx: &Context, h: &[T], zero: T, add: impl Fn(T, T) -> T + Copy) -> gpu_runtime::Result<()>
where
    T: Element + PartialEq + std::fmt::Debug,
{
    let n = h.len();
    let d = DeviceArray::from_ndarray(ctx, &Array1::from(h.to_vec()))?;
    let incl = host_scan(h, zero, add);
    let what = std::any::type_name::<T>();
    assert_eq!(d.cumsum()?.to_vec()?, incl, "{what}, n = {n}");
    let mut excl = vec![zero];
    excl.extend_from_slice(&incl[..n.saturating_sub(1)]);
    excl.truncate(n);
    assert_eq!(d.cumsum_exclusive()?.to_vec()?, excl, "{what}, n = {n} exclusive");
    for from in 1..4.min(n + 1) {
        let v = d.slice(s![from..])?;
        let want = host_scan(&h[from..], zero, add);
        assert_eq!(v.cumsum()?.to_vec()?, want, "{what}, n = {n} from {from}");
    }
    if n > 0 {
        let v = d.slice(s![..;-2])?;
        let hv: Vec<T> = h.iter().rev().step_by(2).copied().collect();
        assert_eq!(
            v.cumsum()?.to_vec()?,
            host_scan(&hv, zero, add),
            "{what}, n = {n} reversed"
        );
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scans_of_each_width_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2027);
    for n in lengths(&mut rng) {
        let h: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        check_exact(&ctx, &h, 0u8, u8::wrapping_add)?;
        let h: Vec<i16> = (0..n).map(|_| rng.next_u64() as i16).collect();
        check_exact(&ctx, &h, 0i16, i16::wrapping_add)?;
        let h: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        check_exact(&ctx, &h, 0u32, u32::wrapping_add)?;
        let h: Vec<i64> = (0..n).map(|_| rng.next_u64() as i64).collect();
        check_exact(&ctx, &h, 0i64, i64::wrapping_add)?;
        // Small integers as floats: every partial sum (of a run of adjacent elements, however
        // the device groups them) is an integer far below 2^24, so the result is exact.
        let h: Vec<f32> = (0..n).map(|_| (rng.next_u64() % 9) as f32 - 4.0).collect();
        check_exact(&ctx, &h, 0.0f32, |a, b| a + b)?;
        let h: Vec<f64> = (0..n).map(|_| (rng.next_u64() % 9) as f64 - 4.0).collect();
        check_exact(&ctx, &h, 0.0f64, |a, b| a + b)?;
    }
    Ok(())
}

/// The bench's size plus an odd tail: 16K full tiles and a partial one, chained by the
/// look-back; integers as floats (exact, as above), then uniform floats against an `f64`
/// reference.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_long_f32_scan_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(26);
    let n = (1usize << 26) + 13;
    let h: Vec<f32> = (0..n).map(|_| (rng.next_u64() % 9) as f32 - 4.0).collect();
    let d = DeviceArray::from_ndarray(&ctx, &Array1::from(h.clone()))?;
    assert_eq!(d.cumsum()?.to_vec()?, host_scan(&h, 0.0f32, |a, b| a + b));
    let h: Vec<f32> = (0..n).map(|_| rng.f32() * 2.0 - 1.0).collect();
    let d = DeviceArray::from_ndarray(&ctx, &Array1::from(h.clone()))?;
    let got = d.cumsum()?.to_vec()?;
    let (mut acc, mut peak) = (0.0f64, 0.0f64);
    for (k, (&g, &x)) in got.iter().zip(&h).enumerate() {
        acc += f64::from(x);
        peak = peak.max(acc.abs());
        // A prefix is the sum of at most 16K tiles' totals chained by the look-back, each
        // rounded to f32 at a magnitude of at most `peak`: well within 1e-3 of it, and tight
        // enough early on that a dropped or repeated element (|x| ~ 0.5) fails.
        assert!(
            (f64::from(g) - acc).abs() <= 1e-3 * (1.0 + peak),
            "element {k}: {g} vs {acc}"
        );
    }
    Ok(())
}

/// `cumsum_into` and `cumprod_into` (NumPy's `out=`) into a contiguous array, into every other
/// element of a longer one, and into a reversed view, on a stream and on the legacy stream,
/// against the host; a 2-D C-order input and a transposed one (flattened in C order); an
/// output of the wrong length is a typed error that leaves the output as it was.
#[test]
#[ignore = "needs a CUDA GPU"]
fn scans_into_existing_arrays_match_the_host() -> gpu_runtime::Result<()> {
    use gpu_runtime::ndarray::Array2;
    let ctx = Context::default()?;
    let stream = gpu_runtime::Stream::new(&ctx)?;
    let mut rng = Rng::new(31);
    let add = |a: i64, b: i64| a.wrapping_add(b);
    for n in [0usize, 1, 5, scan_tile_of::<i64>() as usize + 3, 300_001] {
        let h: Vec<i64> = (0..n).map(|_| rng.next_u64() as i64 >> 8).collect();
        let d = DeviceArray::from_ndarray(&ctx, &Array1::from(h.clone()))?;
        let incl = host_scan(&h, 0, add);
        let mut excl = vec![0i64];
        excl.extend_from_slice(&incl[..n.saturating_sub(1)]);
        excl.truncate(n);

        let mut out = DeviceArray::<i64, _>::zeros(&ctx, n)?;
        d.on(&stream).cumsum_into(&mut out, false)?;
        stream.synchronize()?;
        assert_eq!(out.to_vec()?, incl, "n = {n} contiguous");

        // Every other element of a longer array: the ones between stay as they were.
        let mut wide = DeviceArray::<i64, _>::full(&ctx, 2 * n, -7)?;
        d.cumsum_into(&mut wide.slice_mut(s![..;2])?, true)?;
        let w = wide.to_vec()?;
        let evens: Vec<i64> = w.iter().step_by(2).copied().collect();
        assert_eq!(evens, excl, "n = {n} stepped, exclusive");
        assert!(
            w.iter().skip(1).step_by(2).all(|&v| v == -7),
            "n = {n}: a gap was written"
        );

        let mut rev = DeviceArray::<i64, _>::zeros(&ctx, n)?;
        d.cumprod_into(&mut rev.slice_mut(s![..;-1])?, false)?;
        let mut want = host_scan(&h, 1, |a: i64, b: i64| a.wrapping_mul(b));
        want.reverse();
        assert_eq!(rev.to_vec()?, want, "n = {n} reversed, cumprod");
    }

    let (r, c) = (37usize, 129usize);
    let h: Vec<f64> = (0..r * c).map(|_| (rng.next_u64() % 9) as f64 - 4.0).collect();
    let m = DeviceArray::from_ndarray(&ctx, &Array2::from_shape_vec((r, c), h.clone()).unwrap())?;
    let mut out = DeviceArray::<f64, _>::zeros(&ctx, r * c)?;
    m.cumsum_into(&mut out, false)?;
    assert_eq!(out.to_vec()?, host_scan(&h, 0.0, |a, b| a + b), "2-D, C order");
    let t = m.t();
    let flat_t: Vec<f64> = (0..c)
        .flat_map(|j| (0..r).map(move |i| (i, j)))
        .map(|(i, j)| h[i * c + j])
        .collect();
    t.cumsum_into(&mut out, false)?;
    assert_eq!(
        out.to_vec()?,
        host_scan(&flat_t, 0.0, |a, b| a + b),
        "2-D, transposed"
    );

    let mut short = DeviceArray::<f64, _>::full(&ctx, r * c - 1, 2.5)?;
    let err = m.cumsum_into(&mut short, false).unwrap_err();
    assert!(err.to_string().contains("elements"), "{err}");
    assert!(short.to_vec()?.iter().all(|&v| v == 2.5));
    Ok(())
}

/// The tile status is the stream's, reused by every scan and never cleared between them: each
/// status carries its launch's tag, and the buffer is cleared when the 30-bit tags wrap.
/// A long scan leaves every tile's status with tag 1; the launch count is then taken to the
/// wrap (two short scans), so that the next long scan, of other data, uses tag 1 again: had
/// the old statuses not been cleared, its look-backs would take the old prefixes for new ones.
/// For a packed status (`f32`) and separate value arrays (`f64`), on a stream and on the legacy
/// stream.
#[test]
#[ignore = "needs a CUDA GPU"]
fn scans_stay_right_across_the_tags_wrap() -> gpu_runtime::Result<()> {
    use gpu_runtime::__testing::scan_set_launch_count;
    let ctx = Context::default()?;
    let stream = gpu_runtime::Stream::new(&ctx)?;
    let mut rng = Rng::new(30);
    for on in [Some(&stream), None] {
        for wide in [false, true] {
            let tile = if wide {
                scan_tile_of::<f64>()
            } else {
                scan_tile_of::<f32>()
            } as usize;
            let long = 2000 * tile + 5;
            let mut run = |n: usize| -> gpu_runtime::Result<()> {
                // Integers as floats: exact, whatever the grouping.
                let h: Vec<i32> = (0..n).map(|_| (rng.next_u64() % 9) as i32 - 4).collect();
                let wide_h: Vec<i64> = h.iter().map(|&v| i64::from(v)).collect();
                let want = host_scan(&wide_h, 0i64, |a, b| a + b);
                let got: Vec<i64> = if wide {
                    let h: Vec<f64> = h.iter().map(|&v| f64::from(v)).collect();
                    let d = DeviceArray::from_ndarray(&ctx, &Array1::from(h))?;
                    let mut out = DeviceArray::<f64, _>::zeros(&ctx, n)?;
                    match on {
                        Some(s) => d.on(s).cumsum_into(&mut out, false)?,
                        None => d.cumsum_into(&mut out, false)?,
                    }
                    stream.synchronize()?;
                    out.to_vec()?.into_iter().map(|v| v as i64).collect()
                } else {
                    let h: Vec<f32> = h.iter().map(|&v| v as f32).collect();
                    let d = DeviceArray::from_ndarray(&ctx, &Array1::from(h))?;
                    let mut out = DeviceArray::<f32, _>::zeros(&ctx, n)?;
                    match on {
                        Some(s) => d.on(s).cumsum_into(&mut out, false)?,
                        None => d.cumsum_into(&mut out, false)?,
                    }
                    stream.synchronize()?;
                    out.to_vec()?.into_iter().map(|v| v as i64).collect()
                };
                assert_eq!(got, want, "n = {n}, f64: {wide}, on a stream: {}", on.is_some());
                Ok(())
            };
            // The long scan's statuses get tag 1 (launch count 0).
            scan_set_launch_count(&ctx, on, 0)?;
            run(long)?;
            // Tags 2^30 - 2 and 2^30 - 1: after the second, the tags wrap.
            scan_set_launch_count(&ctx, on, 0x3FFF_FFFD)?;
            run(3 * tile)?;
            run(tile + 1)?;
            // Tag 1 again, over the whole length of the first.
            run(long)?;
            run(long)?;
        }
    }
    Ok(())
}

/// Threads scanning on one stream at once (each launch holds the stream's status buffer while
/// it is queued) and threads on streams of their own (a buffer each), against the host.
#[test]
#[ignore = "needs a CUDA GPU"]
fn scans_from_many_threads_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let shared = gpu_runtime::Stream::new(&ctx)?;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8u64)
            .map(|t| {
                let (ctx, shared) = (&ctx, &shared);
                scope.spawn(move || -> gpu_runtime::Result<()> {
                    let own = gpu_runtime::Stream::new(ctx)?;
                    let mut rng = Rng::new(100 + t);
                    for round in 0..20 {
                        let n = 1 + (rng.next_u64() % 300_000) as usize;
                        let h: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32 >> 4).collect();
                        let d = DeviceArray::from_ndarray(ctx, &Array1::from(h.clone()))?;
                        let s = if round % 2 == 0 { shared } else { &own };
                        let mut out = DeviceArray::<i32, _>::zeros(ctx, n)?;
                        d.on(s).cumsum_into(&mut out, false)?;
                        s.synchronize()?;
                        assert_eq!(
                            out.to_vec()?,
                            host_scan(&h, 0i32, i32::wrapping_add),
                            "thread {t}, round {round}, n = {n}"
                        );
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("a scanning thread panicked"))
    })
}
