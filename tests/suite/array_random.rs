//! The Philox fills on a GPU against the host's Philox, bit for bit, through both store paths
//! of the kernel: one vector store per Philox block (the array's first element aligned to the
//! block's bytes: 16 for `u32`, `f32` and `f64`, 8 for `f16`) and one element at a time (a
//! contiguous view starting 1 to 3 elements in, so misaligned), with partial last blocks, and
//! the bench's size 2^26 plus an odd tail.

use gpu_runtime::__testing::philox4x32_10;
use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::half::f16;
use gpu_runtime::ndarray::s;
use gpu_runtime::Context;
use gpu_suite::Rng;

/// The Philox block of element `i` of a fill with `per` elements per block.
fn block(seed: u64, i: usize, per: usize) -> [u32; 4] {
    let g = (i / per) as u64;
    philox4x32_10(
        [g as u32, (g >> 32) as u32, 0, 0],
        [seed as u32, (seed >> 32) as u32],
    )
}

fn host_u32(seed: u64, n: usize) -> Vec<u32> {
    (0..n).map(|i| block(seed, i, 4)[i % 4]).collect()
}

fn host_f32(seed: u64, n: usize) -> Vec<f32> {
    host_u32(seed, n)
        .iter()
        .map(|&w| (w >> 8) as f32 * (1.0 / 16_777_216.0))
        .collect()
}

fn host_f64(seed: u64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let r = block(seed, i, 2);
            let (hi, lo) = if i % 2 == 0 { (r[0], r[1]) } else { (r[2], r[3]) };
            ((((hi as u64) << 32) | lo as u64) >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fills_from_aligned_and_misaligned_starts_match_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4242);
    for n in [1usize, 4, 7, 8, 9, 4099, (rng.next_u64() % 300_000) as usize + 4] {
        let seed = rng.next_u64();
        for from in 0..4.min(n) {
            // A view from element `from`: its element 0 is the fill's element 0.
            let m = n - from;
            let mut a = DeviceArray::<u32, _>::zeros(&ctx, n)?;
            a.slice_mut(s![from..])?.fill_uniform(seed)?;
            let got = a.to_vec()?;
            assert!(
                got[..from].iter().all(|&x| x == 0),
                "n = {n} from {from}: before the view"
            );
            assert_eq!(got[from..], host_u32(seed, m)[..], "u32, n = {n} from {from}");
            let mut a = DeviceArray::<f32, _>::zeros(&ctx, n)?;
            a.slice_mut(s![from..])?.fill_uniform(seed)?;
            assert_eq!(
                a.to_vec()?[from..],
                host_f32(seed, m)[..],
                "f32, n = {n} from {from}"
            );
            let mut a = DeviceArray::<f64, _>::zeros(&ctx, n)?;
            a.slice_mut(s![from..])?.fill_uniform(seed)?;
            assert_eq!(
                a.to_vec()?[from..],
                host_f64(seed, m)[..],
                "f64, n = {n} from {from}"
            );
            let mut a = DeviceArray::<f16, _>::zeros(&ctx, n)?;
            a.slice_mut(s![from..])?.fill_uniform(seed)?;
            let want: Vec<f16> = host_f32(seed, m).into_iter().map(f16::from_f32).collect();
            assert_eq!(a.to_vec()?[from..], want[..], "f16, n = {n} from {from}");
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_bench_sized_f32_fill_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let n = (1usize << 26) + 3;
    let got = DeviceArray::<f32, _>::random_uniform(&ctx, n, 0x5EED)?.to_vec()?;
    let want = host_f32(0x5EED, n);
    if let Some(k) = (0..n).find(|&k| got[k] != want[k]) {
        panic!("element {k} of {n}: {} vs {}", got[k], want[k]);
    }
    Ok(())
}
