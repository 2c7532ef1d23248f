//! Three kernels of the CUDA samples' corpus (`tests/corpus/`) run as the samples launch them,
//! each against a CPU reference on random data. Run on a GPU machine:
//! `cargo test --test suite -- --ignored corpus_run::`.

use crate::corpus_kernels as kernels;

use gpu_suite::Rng;
use kernels::*;

use crate::common::ctx;

/// histogram256.cu: 240 partial histograms of 192 threads each, merged by 256 blocks of 256.
#[test]
#[ignore = "needs a CUDA GPU"]
fn histogram256_counts_every_byte() {
    let ctx = ctx();
    let (partials, words) = (240u32, 1_000_003usize);
    let mut rng = Rng::new(151);
    let data: Vec<u32> = (0..words).map(|_| rng.next_u64() as u32).collect();
    let mut want = [0u32; 256];
    for w in &data {
        for b in w.to_le_bytes() {
            want[b as usize] += 1;
        }
    }
    let mut d_data = ctx.to_device(&data).unwrap();
    let mut d_partial = ctx.alloc_zeros::<u32>(partials as usize * 256).unwrap();
    let mut d_hist = ctx.alloc_zeros::<u32>(256).unwrap();
    let count = histogram256::histogram256Kernel::prepare(&ctx).unwrap();
    let merge = histogram256::mergeHistogram256Kernel::prepare(&ctx).unwrap();
    count
        .prepared_call((partials,), (192,), &mut d_partial, &mut d_data, words as u32)
        .unwrap();
    merge
        .prepared_call((256,), (256,), &mut d_hist, &mut d_partial, partials)
        .unwrap();
    assert_eq!(d_hist.to_vec().unwrap(), want);
}

/// sortingNetworks/bitonicSort.cu: batches of 1024 keys, each sorted by one block of 512
/// threads, values carried along.
#[test]
#[ignore = "needs a CUDA GPU"]
fn bitonic_sort_sorts_each_batch_and_carries_the_values() {
    let ctx = ctx();
    let (len, batches) = (1024usize, 37usize);
    let n = len * batches;
    let mut rng = Rng::new(152);
    let keys: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let vals: Vec<u32> = (0..n as u32).collect();
    let (mut d_src_key, mut d_src_val) = (ctx.to_device(&keys).unwrap(), ctx.to_device(&vals).unwrap());
    let mut d_dst_key = ctx.alloc_zeros::<u32>(n).unwrap();
    let mut d_dst_val = ctx.alloc_zeros::<u32>(n).unwrap();
    let sort = bitonic_sort::bitonicSortShared::prepare(&ctx).unwrap();
    sort.prepared_call(
        (batches as u32,),
        (len as u32 / 2,),
        &mut d_dst_key,
        &mut d_dst_val,
        &mut d_src_key,
        &mut d_src_val,
        len as u32,
        1,
    )
    .unwrap();
    let (got_keys, got_vals) = (d_dst_key.to_vec().unwrap(), d_dst_val.to_vec().unwrap());
    for b in 0..batches {
        let range = b * len..(b + 1) * len;
        let mut want = keys[range.clone()].to_vec();
        want.sort_unstable();
        assert_eq!(got_keys[range.clone()], want[..], "batch {b}");
        // Each value is the index of its key in the input, within the batch, once.
        let mut seen = vec![false; len];
        for (k, v) in got_keys[range.clone()].iter().zip(&got_vals[range.clone()]) {
            let v = *v as usize;
            assert!(range.contains(&v) && !seen[v - b * len], "batch {b}: value {v}");
            seen[v - b * len] = true;
            assert_eq!(keys[v], *k);
        }
    }
}

/// transpose.cu: the coalesced transpose, 32x32 tiles of 32x16 threads.
#[test]
#[ignore = "needs a CUDA GPU"]
fn transpose_coalesced_transposes() {
    let ctx = ctx();
    let (w, h) = (384usize, 256usize);
    let input = Rng::new(153).vec_f32(w * h);
    let mut d_in = ctx.to_device(&input).unwrap();
    let mut d_out = ctx.alloc_zeros::<f32>(w * h).unwrap();
    let k = transpose::transposeCoalesced::prepare(&ctx).unwrap();
    k.prepared_call(
        ((w / 32) as u32, (h / 32) as u32),
        (32, 16),
        &mut d_out,
        &mut d_in,
        w as i32,
        h as i32,
    )
    .unwrap();
    let got = d_out.to_vec().unwrap();
    for y in 0..h {
        for x in 0..w {
            assert_eq!(got[x * h + y], input[y * w + x], "({x}, {y})");
        }
    }
}
