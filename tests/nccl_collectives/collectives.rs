//! NCCL on GPUs: every collective and a send/receive ring against a host reference on random
//! data, the stream ordering of collectives, the checks made before NCCL is called, and two
//! processes joining one communicator through a unique-id file.
//!
//! `cargo test --features nccl --test nccl_collectives -- --ignored --test-threads=1` on a machine with
//! NCCL (`source scripts/nvrtc-env.sh` finds or installs it) and one or more GPUs: the tests
//! use every GPU and print how many; the two-process test needs two and fails saying so on a
//! machine with one. Failures (a rank that never joins, a receive with no sender, an aborted
//! communicator) are in tests/nccl_failures.rs.

use gpu_runtime::nccl::{group, Comms, Group, ReduceOp};
use gpu_runtime::{
    driver::memset_d32_async, driver::StreamFlags, kernel, Context, Device, DeviceBuffer, DeviceRead,
    DeviceRepr, Stream,
};
use gpu_suite::{assert_close, Rng};

#[kernel(
    r#"
__global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}
__global__ void fill(float *x, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}"#
)]
mod kernels {
    pub fn spin(cycles: i64);
    pub fn fill(x: &mut [f32], v: f32, n: i32);
}

/// A primary context on every GPU, with a line saying how many there are.
fn contexts() -> Vec<Context> {
    let n = Device::count().expect("these tests need a CUDA GPU");
    assert!(n >= 1, "these tests need a CUDA GPU");
    let ctxs: Vec<Context> = (0..n)
        .map(|i| Context::new(Device::new(i).unwrap()).unwrap())
        .collect();
    let names: Vec<String> = ctxs.iter().map(|c| c.device().name().unwrap()).collect();
    println!("nccl tests: {n} GPU(s), so {n} rank(s): {}", names.join(", "));
    ctxs
}

fn comms() -> Comms {
    Comms::new(&contexts()).unwrap()
}

/// Rank r's random data: `n` values from `gen`, seeded by `seed` and the rank.
fn per_rank<T>(ranks: usize, seed: u64, n: usize, gen: impl Fn(&mut Rng) -> T) -> Vec<Vec<T>> {
    (0..ranks)
        .map(|r| {
            let mut rng = Rng::new(seed * 1000 + r as u64);
            (0..n).map(|_| gen(&mut rng)).collect()
        })
        .collect()
}

fn upload<T: DeviceRepr>(comms: &Comms, data: &[Vec<T>]) -> Vec<DeviceBuffer<T>> {
    comms
        .iter()
        .zip(data)
        .map(|(c, d)| c.context().to_device(d).unwrap())
        .collect()
}

fn zeros<T: DeviceRepr>(comms: &Comms, n: usize) -> Vec<DeviceBuffer<T>> {
    comms
        .iter()
        .map(|c| c.context().alloc_zeros::<T>(n).unwrap())
        .collect()
}

/// Element-wise `f` over the ranks' vectors.
fn fold<T: Copy>(data: &[Vec<T>], f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out = data[0].clone();
    for d in &data[1..] {
        for (o, v) in out.iter_mut().zip(d) {
            *o = f(*o, *v);
        }
    }
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn all_reduce_matches_the_host() {
    let comms = comms();
    let (ranks, n) = (comms.len(), 100_003);
    // f32 sum, separate buffers.
    let x = per_rank(ranks, 1, n, Rng::f32);
    let send = upload(&comms, &x);
    let mut recv = zeros::<f32>(&comms, n);
    comms.all_reduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    let want = fold(&x, |a, b| a + b);
    for r in &recv {
        assert_close(&r.to_vec().unwrap(), &want, 1e-5);
    }
    // i32 max, in place.
    let y = per_rank(ranks, 2, n, |g| (g.next_u64() >> 33) as i32 - (1 << 30));
    let mut bufs = upload(&comms, &y);
    comms.all_reduce_in_place(&mut bufs, ReduceOp::Max).unwrap();
    let want = fold(&y, i32::max);
    for b in &bufs {
        assert_eq!(b.to_vec().unwrap(), want);
    }
    // f64 average and u64 minimum, rank by rank in a group, each rank's own call.
    let z = per_rank(ranks, 3, n, Rng::f64);
    let w = per_rank(ranks, 4, n, |g| g.next_u64() % 1_000_000);
    let (zs, ws) = (upload(&comms, &z), upload(&comms, &w));
    let (mut za, mut wm) = (zeros::<f64>(&comms, n), zeros::<u64>(&comms, n));
    group(|g| {
        for (((c, zs), ws), (za, wm)) in comms
            .iter()
            .zip(&zs)
            .zip(&ws)
            .zip(za.iter_mut().zip(wm.iter_mut()))
        {
            g.all_reduce(c, zs, za, ReduceOp::Avg)?;
            g.all_reduce(c, ws, wm, ReduceOp::Min)?;
        }
        Ok(())
    })
    .unwrap();
    let want_avg: Vec<f64> = fold(&z, |a, b| a + b).iter().map(|s| s / ranks as f64).collect();
    let want_min = fold(&w, u64::min);
    for (za, wm) in za.iter().zip(&wm) {
        for (g, w) in za.to_vec().unwrap().iter().zip(&want_avg) {
            assert!((g - w).abs() < 1e-12, "average {g}, want {w}");
        }
        assert_eq!(wm.to_vec().unwrap(), want_min);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn broadcast_and_reduce_match_the_host() {
    let comms = comms();
    let (ranks, n) = (comms.len(), 65_537);
    let x = per_rank(ranks, 5, n, Rng::f32);
    let send = upload(&comms, &x);
    for root in 0..ranks {
        // Broadcast: the root passes its send buffer, the others none.
        let mut recv = zeros::<f32>(&comms, n);
        let mut g = Group::new();
        for ((c, s), r) in comms.iter().zip(&send).zip(recv.iter_mut()) {
            let mine = (c.rank() == root).then(|| s.device_view());
            g.broadcast(c, mine, r, root).unwrap();
        }
        g.run().unwrap();
        for r in &recv {
            assert_eq!(r.to_vec().unwrap(), x[root], "broadcast from {root}");
        }
        // Broadcast in place.
        let mut bufs = upload(&comms, &x);
        comms.broadcast_in_place(&mut bufs, root).unwrap();
        for b in &bufs {
            assert_eq!(b.to_vec().unwrap(), x[root], "broadcast in place from {root}");
        }
        // Reduce to the root: its buffer gets the sum, nothing else is written.
        let mut out = comms[root].context().alloc_zeros::<f32>(n).unwrap();
        comms.reduce(&send, &mut out, ReduceOp::Sum, root).unwrap();
        assert_close(&out.to_vec().unwrap(), &fold(&x, |a, b| a + b), 1e-5);
        // Reduce in place, with the product: only the root's buffer changes.
        let small = per_rank(ranks, 6 + root as u64, n, |g| 1.0 + 0.1 * g.f32());
        let mut bufs = upload(&comms, &small);
        group(|g| {
            for (c, b) in comms.iter().zip(bufs.iter_mut()) {
                g.reduce_in_place(c, b, ReduceOp::Prod, root)?;
            }
            Ok(())
        })
        .unwrap();
        for (r, b) in bufs.iter().enumerate() {
            let got = b.to_vec().unwrap();
            if r == root {
                assert_close(&got, &fold(&small, |a, b| a * b), 1e-5);
            } else {
                assert_eq!(
                    got, small[r],
                    "a non-root buffer of an in-place reduce is only read"
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn all_gather_and_reduce_scatter_match_the_host() {
    let comms = comms();
    let (ranks, n) = (comms.len(), 4099);
    let x = per_rank(ranks, 8, n, |g| (g.next_u64() % 251) as u8);
    let send = upload(&comms, &x);
    let mut recv = zeros::<u8>(&comms, ranks * n);
    comms.all_gather(&send, &mut recv).unwrap();
    let want: Vec<u8> = x.concat();
    for r in &recv {
        assert_eq!(r.to_vec().unwrap(), want);
    }
    // Reduce-scatter: rank r gets the r-th part of the sum of every rank's send buffer.
    let y = per_rank(ranks, 9, ranks * n, Rng::f32);
    let send = upload(&comms, &y);
    let mut recv = zeros::<f32>(&comms, n);
    comms.reduce_scatter(&send, &mut recv, ReduceOp::Sum).unwrap();
    let sum = fold(&y, |a, b| a + b);
    for (r, b) in recv.iter().enumerate() {
        assert_close(&b.to_vec().unwrap(), &sum[r * n..(r + 1) * n], 1e-5);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn send_recv_ring_in_a_group() {
    let comms = comms();
    let (ranks, n) = (comms.len(), 10_007);
    let x = per_rank(ranks, 10, n, |g| g.next_u64() as i64);
    let send = upload(&comms, &x);
    let mut recv = zeros::<i64>(&comms, n);
    let mut g = Group::new();
    for ((c, s), r) in comms.iter().zip(&send).zip(recv.iter_mut()) {
        g.send(c, s, (c.rank() + 1) % ranks).unwrap();
        g.recv(c, r, (c.rank() + ranks - 1) % ranks).unwrap();
    }
    assert_eq!(g.len(), 2 * ranks);
    g.run().unwrap();
    for (r, b) in recv.iter().enumerate() {
        assert_eq!(
            b.to_vec().unwrap(),
            x[(r + ranks - 1) % ranks],
            "rank {r} receives from its left"
        );
    }
}

/// Cycles of `clock64()` for about `ms` milliseconds on `ctx`'s GPU.
fn cycles_for_ms(ctx: &Context, ms: f64) -> i64 {
    let khz = ctx
        .device()
        .attribute(gpu_runtime::driver::DeviceAttribute::ClockRate)
        .unwrap() as f64;
    (khz * ms) as i64
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn collectives_are_stream_ordered() {
    let comms = comms();
    let (ranks, n) = (comms.len(), 1 << 20);
    let x = per_rank(ranks, 11, n, Rng::f32);
    let want = fold(&x, |a, b| a + b);
    let spin: Vec<_> = comms
        .iter()
        .map(|c| kernels::spin::prepare(c.context()).unwrap())
        .collect();
    let delay = |ms: f64| {
        for (c, k) in comms.iter().zip(&spin) {
            k.prepared_async_call(1, 1, c.stream(), cycles_for_ms(c.context(), ms))
                .unwrap();
        }
    };

    // 1. A send buffer dropped right after the call: it must stay allocated until NCCL has
    // read it, although new allocations filled with NaN come right after.
    let mut recv = zeros::<f32>(&comms, n);
    delay(100.0);
    let send = upload(&comms, &x);
    comms.all_reduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    drop(send);
    let garbage: Vec<Vec<DeviceBuffer<f32>>> = comms
        .iter()
        .map(|c| {
            (0..4)
                .map(|_| c.context().to_device(&vec![f32::NAN; n]).unwrap())
                .collect()
        })
        .collect();
    for r in &recv {
        assert_close(&r.to_vec().unwrap(), &want, 1e-5);
    }
    drop(garbage);

    // 2. Another stream writes the send buffer right after the call: its write waits for
    // NCCL's read, with no event in this code.
    let mut send = upload(&comms, &x);
    let others: Vec<Stream> = comms
        .iter()
        .map(|c| Stream::with_flags(c.context(), StreamFlags::NonBlocking).unwrap())
        .collect();
    delay(100.0);
    comms.all_reduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    for (s, o) in send.iter_mut().zip(&others) {
        memset_d32_async(s, f32::NAN.to_bits(), n, o).unwrap();
    }
    for r in &recv {
        assert_close(&r.to_vec().unwrap(), &want, 1e-5);
    }

    // 3. A kernel on another stream writes the send buffer after a delay; the collective,
    // queued right after on the communicator's stream, waits for it.
    let fill: Vec<_> = comms
        .iter()
        .map(|c| kernels::fill::prepare(c.context()).unwrap())
        .collect();
    for (((c, s), o), (k, f)) in comms
        .iter()
        .zip(send.iter_mut())
        .zip(&others)
        .zip(spin.iter().zip(&fill))
    {
        k.prepared_async_call(1, 1, o, cycles_for_ms(c.context(), 100.0))
            .unwrap();
        f.prepared_async_call(
            (n as u32).div_ceil(256),
            256,
            o,
            s,
            1.0 + c.rank() as f32,
            n as i32,
        )
        .unwrap();
    }
    comms.all_reduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    let total = (1..=ranks).sum::<usize>() as f32;
    for r in &recv {
        assert_close(&r.to_vec().unwrap(), &vec![total; n], 0.0);
    }
    comms.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn wrong_lengths_contexts_and_ranks_are_errors_before_nccl() {
    use gpu_runtime::nccl::NcclError;
    use gpu_runtime::Error;
    let comms = comms();
    let ranks = comms.len();
    let c = &comms[0];
    let ctx = c.context();
    let send = ctx.to_device(&Rng::new(12).vec_f32(100)).unwrap();
    let mut short = ctx.alloc_zeros::<f32>(99).unwrap();
    let size = |e: NcclError| assert!(matches!(e, NcclError::BufferLength { .. }), "{e}");
    size(c.all_reduce(&send, &mut short, ReduceOp::Sum).unwrap_err());
    let mut gathered = ctx.alloc_zeros::<f32>(100 * ranks + 1).unwrap();
    size(c.all_gather(&send, &mut gathered).unwrap_err());
    let mut part = ctx.alloc_zeros::<f32>(100 / ranks + 1).unwrap();
    size(c.reduce_scatter(&send, &mut part, ReduceOp::Sum).unwrap_err());
    let mut recv = ctx.alloc_zeros::<f32>(100).unwrap();
    let e = c
        .broadcast(Some(send.device_view()), &mut recv, ranks)
        .unwrap_err();
    assert!(
        matches!(e, NcclError::RankOutOfRange { what: "root", rank, .. } if rank == ranks),
        "{e}"
    );
    let e = c.send(&send, ranks + 3).unwrap_err();
    assert!(
        matches!(e, NcclError::RankOutOfRange { what: "peer", rank, .. } if rank == ranks + 3),
        "{e}"
    );
    // The root must pass its buffer.
    let e = c.broadcast(None, &mut recv, 0).unwrap_err();
    assert!(e.to_string().contains("root and must pass"), "{e}");
    // Buffers of the process's ranks: one each, the same length on every rank.
    let sends = upload(&comms, &per_rank(ranks, 13, 64, Rng::f32));
    let mut recvs = zeros::<f32>(&comms, 64);
    let e = comms
        .all_reduce(&sends[..ranks - 1], &mut recvs, ReduceOp::Sum)
        .unwrap_err();
    assert!(
        matches!(&e, NcclError::NotOnePerRank { got, nranks, .. } if *got == ranks - 1 && *nranks == ranks),
        "{e}"
    );
    if ranks >= 2 {
        let mut uneven = zeros::<f32>(&comms, 64);
        uneven[1] = comms[1].context().alloc_zeros::<f32>(63).unwrap();
        size(comms.all_reduce_in_place(&mut uneven, ReduceOp::Sum).unwrap_err());
        // Memory and streams of another GPU.
        let other = comms[1].context().alloc_zeros::<f32>(100).unwrap();
        let e = c.all_reduce(&other, &mut recv, ReduceOp::Sum).unwrap_err();
        assert!(matches!(e, NcclError::Cuda(Error::WrongContext { .. })), "{e}");
        let e = c
            .on(comms[1].stream())
            .all_reduce(&send, &mut recv, ReduceOp::Sum)
            .unwrap_err();
        assert!(matches!(e, NcclError::Cuda(Error::WrongContext { .. })), "{e}");
    } else {
        println!("one GPU: buffers and streams of another GPU are not tried");
    }
    // Nothing was called: the communicators still work.
    comms.all_reduce(&sends, &mut recvs, ReduceOp::Sum).unwrap();
    comms.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn split_makes_communicators_of_the_same_color() {
    let comms = comms();
    let ranks = comms.len();
    // Even ranks and odd ranks, each half ranked in reverse by its key.
    let halves = comms
        .split(|r| (Some((r % 2) as u32), (ranks - r) as i32))
        .unwrap();
    for (r, h) in halves.iter().enumerate() {
        let h = h.as_ref().unwrap();
        let members = (0..ranks).filter(|q| q % 2 == r % 2).count();
        let above = (r + 1..ranks).filter(|q| q % 2 == r % 2).count();
        assert_eq!((h.size(), h.rank()), (members, above), "rank {r}");
        assert_eq!(h.context(), comms[r].context());
    }
    // An all-reduce in each half, driven together as one group.
    let x = per_rank(ranks, 14, 1000, Rng::f32);
    let send = upload(&comms, &x);
    let mut recv = zeros::<f32>(&comms, 1000);
    let mut g = Group::new();
    for ((h, s), r) in halves.iter().zip(&send).zip(recv.iter_mut()) {
        g.all_reduce(h.as_ref().unwrap(), s, r, ReduceOp::Sum).unwrap();
    }
    g.run().unwrap();
    for (r, b) in recv.iter().enumerate() {
        let mine: Vec<Vec<f32>> = (0..ranks)
            .filter(|q| q % 2 == r % 2)
            .map(|q| x[q].clone())
            .collect();
        assert_close(&b.to_vec().unwrap(), &fold(&mine, |a, b| a + b), 1e-5);
    }
    // A rank that passes no color gets none.
    let none = comms.split(|r| (if r == 0 { None } else { Some(0) }, 0)).unwrap();
    assert!(none[0].is_none());
    assert!(none[1..]
        .iter()
        .all(|c| c.as_ref().is_some_and(|c| c.size() == ranks - 1)));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn non_contiguous_buffers_are_refused_before_nccl() {
    use gpu_runtime::gpuarray::DeviceArray;
    use gpu_runtime::nccl::NcclError;
    use gpu_runtime::ndarray::{s, Array2};
    let comms = comms();
    let c = &comms[0];
    let ctx = c.context();
    let host = Array2::from_shape_vec((8, 6), Rng::new(21).vec_f32(48)).unwrap();
    let mut a = DeviceArray::from_ndarray(ctx, &host).unwrap();
    let mut recv = ctx.alloc_zeros::<f32>(8 * 3).unwrap();
    let refused = |e: NcclError, what: &str| {
        assert!(
            matches!(&e, NcclError::NonContiguous { what: w, .. } if *w == what),
            "{e}"
        );
    };
    // Every other column: the view spans the columns between, which NCCL would send.
    let strided = a.slice(s![.., ..;2]).unwrap();
    assert!(!strided.is_contiguous());
    refused(
        c.all_reduce(&strided, &mut recv, ReduceOp::Sum).unwrap_err(),
        "the send buffer",
    );
    refused(c.send(&strided, 0).unwrap_err(), "the buffer");
    // A receive buffer with steps would have its gaps overwritten.
    let send = ctx.to_device(&Rng::new(22).vec_f32(8 * 3)).unwrap();
    {
        let mut strided_mut = a.slice_mut(s![.., ..;2]).unwrap();
        refused(
            c.all_reduce(&send, &mut strided_mut, ReduceOp::Sum).unwrap_err(),
            "the receive buffer",
        );
        refused(
            c.all_reduce_in_place(&mut strided_mut, ReduceOp::Sum)
                .unwrap_err(),
            "the buffer",
        );
    }
    // A pitched buffer with padded rows.
    let pitched = ctx.alloc_pitch::<f32>(3, 8).unwrap();
    if pitched.pitch() != 3 * 4 {
        assert!(!pitched.is_contiguous());
        let mut full = ctx.alloc_zeros::<f32>(pitched.device_view().len()).unwrap();
        refused(
            c.all_reduce(&pitched, &mut full, ReduceOp::Sum).unwrap_err(),
            "the send buffer",
        );
    }
    // Contiguous arrays pass, rows of a C-order array included, and the result matches the
    // host's sum of every rank's rows.
    let rows = a.slice(s![2..5, ..]).unwrap();
    assert!(rows.is_contiguous());
    let mut sum = ctx.alloc_zeros::<f32>(3 * 6).unwrap();
    if comms.len() == 1 {
        c.all_reduce(&rows, &mut sum, ReduceOp::Sum).unwrap();
        c.synchronize().unwrap();
        let want: Vec<f32> = host.slice(s![2..5, ..]).iter().copied().collect();
        assert_close(&sum.to_vec().unwrap(), &want, 0.0);
    }
    // Nothing was called: the communicators still work.
    let sends = upload(&comms, &per_rank(comms.len(), 23, 32, Rng::f32));
    let mut recvs = zeros::<f32>(&comms, 32);
    comms.all_reduce(&sends, &mut recvs, ReduceOp::Sum).unwrap();
    comms.synchronize().unwrap();
}
