//! Order statistics and distinct values on the device, as a CuPy user writes them: quantiles
//! by several of NumPy's methods (`np.percentile(x, 90, method=...)`), the distinct values
//! with their counts (`np.unique_counts`), the distinct rows of a table (`np.unique(t,
//! axis=0, return_counts=True)`), and a signal's ends padded with the mean of its nearest
//! samples before a moving average (`np.pad(s, 8, mode='mean', stat_length=8)`), each checked
//! against the host; then the quartiles of each column of a table at once (`np.quantile(t,
//! [0.25, 0.5, 0.75], axis=0)`), the samples above the median as one bit each (`np.packbits`),
//! and a moving average weighted by a Hann window (`np.hanning`).
//!
//! `cargo run --release --example statistics` on a machine with an NVIDIA GPU.

use std::collections::BTreeMap;

use gpu_runtime::gpuarray::{BitOrder, DeviceArray, Operand, PadStat, QuantileMethod, UniqueOptions};
use gpu_runtime::ndarray::{Array1, Array2};
use gpu_runtime::Context;

/// NumPy's `percentile(sorted, p, method=...)` for the methods used here, on the host.
fn host_percentile(sorted: &[i32], p: f64, method: QuantileMethod) -> f64 {
    let (n, q) = (sorted.len() as f64, p / 100.0);
    let at = |k: f64| f64::from(sorted[k.clamp(0.0, n - 1.0) as usize]);
    let lerp = |v: f64| {
        if v < 0.0 {
            return at(0.0);
        }
        let lo = v.floor().clamp(0.0, n - 1.0);
        let hi = (lo + 1.0).min(n - 1.0);
        at(lo) + (at(hi) - at(lo)) * (v - v.floor()).clamp(0.0, 1.0)
    };
    match method {
        QuantileMethod::Lower => at(((n - 1.0) * q).floor()),
        QuantileMethod::Higher => at(((n - 1.0) * q).ceil()),
        // Hazen: alpha = beta = 1/2, the virtual index n q - 1/2.
        QuantileMethod::Hazen => lerp(n * q - 0.5),
        _ => lerp((n - 1.0) * q),
    }
}

fn main() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    // A million skewed integer samples in 0..1000 from a fixed linear congruential sequence.
    let n = 1 << 20;
    let mut state = 2024u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as f64 / (1u64 << 31) as f64
    };
    let samples: Vec<i32> = (0..n).map(|_| (next() * next() * 1000.0) as i32).collect();
    let x = DeviceArray::from_ndarray(&ctx, &Array1::from(samples.clone()))?;
    let mut sorted = samples.clone();
    sorted.sort_unstable();

    // np.percentile(x, 90, method=m) for four of NumPy's thirteen methods.
    for method in [
        QuantileMethod::Linear,
        QuantileMethod::Lower,
        QuantileMethod::Higher,
        QuantileMethod::Hazen,
    ] {
        let got = x.percentile_method(90.0, method)?;
        let want = host_percentile(&sorted, 90.0, method);
        assert!(
            (got - want).abs() <= 1e-9 * want.abs(),
            "{method:?}: {got} against {want}"
        );
        println!("90th percentile, {method:?}: {got}");
    }

    // np.unique_counts(x): every distinct value and how often it occurs.
    let counted = x.unique_counts()?;
    let mut host: BTreeMap<i32, i64> = BTreeMap::new();
    for &s in &samples {
        *host.entry(s).or_default() += 1;
    }
    let values = counted.values.to_vec()?;
    let counts = counted.counts.to_vec()?;
    assert_eq!(values, host.keys().copied().collect::<Vec<_>>());
    assert_eq!(counts, host.values().copied().collect::<Vec<_>>());
    println!(
        "{} distinct values, the commonest {} times",
        values.len(),
        counts.iter().max().unwrap_or(&0)
    );

    // np.unique(t, axis=0, return_counts=True): the distinct rows of a table of 4 columns.
    let rows = 10_000;
    let table = Array2::from_shape_fn((rows, 4), |(i, j)| samples[4 * i + j] / 250);
    let t = DeviceArray::from_ndarray(&ctx, &table)?;
    let options = UniqueOptions {
        return_counts: true,
        ..UniqueOptions::default()
    };
    let distinct = t.unique_axis(0, options)?;
    let mut host_rows: BTreeMap<Vec<i32>, i64> = BTreeMap::new();
    for r in table.rows() {
        *host_rows.entry(r.to_vec()).or_default() += 1;
    }
    let got_rows = distinct.values.to_vec()?;
    let want_rows: Vec<i32> = host_rows.keys().flatten().copied().collect();
    assert_eq!(got_rows, want_rows, "the distinct rows, in lexicographic order");
    let row_counts = distinct.counts.expect("the counts were asked for").to_vec()?;
    assert_eq!(row_counts, host_rows.values().copied().collect::<Vec<_>>());
    println!("{} distinct rows of {rows}", host_rows.len());

    // np.pad(s, 8, mode='mean', stat_length=8), then an average over 17 samples: the ends
    // are padded with the mean of their 8 nearest samples instead of zeros.
    let signal: Vec<f64> = samples[..4096].iter().map(|&s| f64::from(s)).collect();
    let s = DeviceArray::from_ndarray(&ctx, &Array1::from(signal.clone()))?;
    let padded = s.pad_stat(&[(8, 8)], PadStat::Mean, &[(8, 8)])?.to_vec()?;
    let head = signal[..8].iter().sum::<f64>() / 8.0;
    let tail = signal[signal.len() - 8..].iter().sum::<f64>() / 8.0;
    assert_eq!(padded.len(), signal.len() + 16);
    assert!(
        padded[..8].iter().all(|&v| (v - head).abs() < 1e-9),
        "{:?} against {head}",
        &padded[..8]
    );
    assert!(padded[padded.len() - 8..]
        .iter()
        .all(|&v| (v - tail).abs() < 1e-9));
    assert_eq!(&padded[8..8 + signal.len()], &signal[..]);
    let smooth: Vec<f64> = padded.windows(17).map(|w| w.iter().sum::<f64>() / 17.0).collect();
    println!(
        "smoothed {} samples, first {:.2}, last {:.2}",
        smooth.len(),
        smooth[0],
        smooth[smooth.len() - 1]
    );

    // np.quantile(t, [0.25, 0.5, 0.75], axis=0): each column sorted once for all three.
    let quartiles = t.quantile_axes(&[0.25, 0.5, 0.75], Some(&[0]), false, QuantileMethod::Linear)?;
    assert_eq!(quartiles.shape(), &[3, 4]);
    let got = quartiles.to_vec()?;
    for j in 0..4 {
        let mut column: Vec<i32> = table.column(j).to_vec();
        column.sort_unstable();
        for (k, p) in [25.0, 50.0, 75.0].into_iter().enumerate() {
            let want = host_percentile(&column, p, QuantileMethod::Linear);
            assert!((got[4 * k + j] - want).abs() <= 1e-9, "column {j} at {p}%");
        }
    }
    println!("column quartiles: {got:?}");

    // np.packbits(x > np.median(x)): a million flags in 128 KiB.
    let median = x.median()?;
    let above = (&x).into_expr().cast::<f64>().gt(median).eval()?;
    let bits = above.packbits(BitOrder::Big)?.to_vec()?;
    assert_eq!(bits.len(), n / 8);
    for (i, &s) in samples.iter().enumerate().step_by(997) {
        let bit = bits[i / 8] >> (7 - i % 8) & 1;
        assert_eq!(bit == 1, f64::from(s) > median, "sample {i}");
    }
    let count: u32 = bits.iter().map(|b| b.count_ones()).sum();
    println!("{count} samples above the median {median}");

    // A moving average weighted by np.hanning(17), normalised to sum to one.
    let window = DeviceArray::hanning(&ctx, 17)?.to_vec()?;
    let total: f64 = window.iter().sum();
    let weighted: Vec<f64> = padded
        .windows(17)
        .map(|w| w.iter().zip(&window).map(|(v, h)| v * h).sum::<f64>() / total)
        .collect();
    let pi = std::f64::consts::PI;
    assert!(window
        .iter()
        .enumerate()
        .all(|(k, &h)| (h - (0.5 - 0.5 * (2.0 * pi * k as f64 / 16.0).cos())).abs() < 1e-12));
    println!(
        "Hann-weighted, first {:.2}, last {:.2}",
        weighted[0],
        weighted[weighted.len() - 1]
    );
    Ok(())
}
