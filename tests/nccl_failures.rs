//! NCCL across processes and when ranks fail: two processes joining one communicator through a
//! unique-id file, counts compared across ranks, a rank that never joins, a receive that never
//! gets its data, an aborted communicator. None may hang: each ends in a typed error within
//! its timeout.
//!
//! `cargo test --features nccl --test nccl_failures -- --ignored --test-threads=1` on a machine
//! with NCCL and GPUs. The two-process test needs two GPUs and is built with the `multi-gpu`
//! feature only (`--features "nccl multi-gpu"`); the others use what there is and say what they
//! could not try.
// The helpers of the two-GPU test go unused in builds without the `multi-gpu` feature.
#![cfg_attr(not(feature = "multi-gpu"), allow(unused_imports, dead_code))]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gpu_runtime::nccl::{Comm, CommOptions, Comms, Group, NcclError, ReduceOp, UniqueId};
use gpu_runtime::{Context, Device, DeviceRead};
use gpu_suite::{assert_close, Rng};

/// NCCL_NVLS_ENABLE=0 unless set, before `main` and so before any thread or NCCL call (the
/// child processes inherit it).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static NVLS_OFF: extern "C" fn() = {
    extern "C" fn nvls_off() {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
    }
    nvls_off
};

const RANK_ENV: &str = "GPU_SUITE_NCCL_RANK";
const ID_FILE_ENV: &str = "GPU_SUITE_NCCL_ID_FILE";

fn contexts() -> Vec<Context> {
    let n = Device::count().expect("these tests need a CUDA GPU");
    println!("nccl failure tests: {n} GPU(s)");
    (0..n)
        .map(|i| Context::new(Device::new(i).unwrap()).unwrap())
        .collect()
}

fn short(secs: u64) -> CommOptions {
    CommOptions::new().timeout(Duration::from_secs(secs))
}

/// The random data of rank `rank` (every process can make every rank's).
fn data(rank: usize, n: usize) -> Vec<f32> {
    Rng::new(100 + rank as u64).vec_f32(n)
}

// Two GPUs: with the `multi-gpu` feature, as tests/multi_gpu.rs (`cargo test --features
// "nccl multi-gpu" --test nccl_failures -- --ignored` on a machine with two).
#[cfg(feature = "multi-gpu")]
#[test]
#[ignore = "needs a CUDA GPU"]
fn two_processes_join_through_an_id_file() {
    if let (Ok(rank), Ok(file)) = (std::env::var(RANK_ENV), std::env::var(ID_FILE_ENV)) {
        return child(rank.parse().unwrap(), PathBuf::from(file));
    }
    let n = Device::count().expect("this test needs CUDA GPUs");
    assert!(
        n >= 2,
        "this test runs one process on each of two GPUs, and this machine has {n} GPU(s)"
    );
    let dir = std::env::temp_dir().join(format!("gpu-suite-nccl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("unique.id");
    let _ = std::fs::remove_file(&file);
    let exe = std::env::current_exe().unwrap();
    let spawn = |rank: usize| -> Child {
        Command::new(&exe)
            .args([
                "two_processes_join_through_an_id_file",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(RANK_ENV, rank.to_string())
            .env(ID_FILE_ENV, &file)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Rank 1 first: it waits for the file that rank 0 writes.
    let children = [spawn(1), spawn(0)];
    let start = Instant::now();
    let mut outputs = Vec::new();
    for mut c in children {
        while c.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(180) {
            std::thread::sleep(Duration::from_millis(50));
        }
        if c.try_wait().unwrap().is_none() {
            let _ = c.kill();
        }
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        outputs.push((out.status.success(), text));
    }
    let _ = std::fs::remove_dir_all(&dir);
    for ((ok, text), rank) in outputs.iter().zip([1, 0]) {
        println!("---- rank {rank}:\n{text}");
        assert!(
            *ok && text.contains("1 passed"),
            "rank {rank}'s process failed:\n{text}"
        );
        assert!(
            text.contains(&format!("rank {rank} of 2: every result matches")),
            "{text}"
        );
    }
}

/// One rank of the two-process test.
fn child(rank: usize, file: PathBuf) {
    let id = if rank == 0 {
        let id = UniqueId::new().unwrap();
        id.write_to_file(&file).unwrap();
        id
    } else {
        UniqueId::read_from_file(&file, Duration::from_secs(60)).unwrap()
    };
    let ctx = Context::new(Device::new(rank).unwrap()).unwrap();
    let comm = Comm::init_rank_with(&ctx, &id, 2, rank, short(120)).unwrap();
    assert_eq!((comm.rank(), comm.size()), (rank, 2));
    let n = 300_001;
    let (mine, theirs) = (data(rank, n), data(1 - rank, n));
    // All-reduce: the sum of both processes' data.
    let send = ctx.to_device(&mine).unwrap();
    let mut recv = ctx.alloc_zeros::<f32>(n).unwrap();
    comm.check_counts(n).unwrap();
    comm.all_reduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    let want: Vec<f32> = mine.iter().zip(&theirs).map(|(a, b)| a + b).collect();
    assert_close(&recv.to_vec().unwrap(), &want, 1e-5);
    // Broadcast from rank 1.
    let mut got = ctx.alloc_zeros::<f32>(n).unwrap();
    comm.broadcast((rank == 1).then(|| send.device_view()), &mut got, 1)
        .unwrap();
    assert_eq!(got.to_vec().unwrap(), data(1, n));
    // A swap: each sends its data and receives the other's, as one group.
    let mut swapped = ctx.alloc_zeros::<f32>(n).unwrap();
    let mut g = Group::new();
    g.send(&comm, &send, 1 - rank).unwrap();
    g.recv(&comm, &mut swapped, 1 - rank).unwrap();
    g.run().unwrap();
    assert_eq!(swapped.to_vec().unwrap(), theirs);
    comm.synchronize().unwrap();
    comm.destroy().unwrap();
    println!("rank {rank} of 2: every result matches the host");
}

/// An all-reduce of `count(rank)` elements on every rank, each rank on its own thread as one
/// process per GPU would be (a count check is a collective: one thread cannot make it for
/// several ranks in turn).
fn all_reduce_on_threads(
    comms: &mut [Comm],
    count: impl Fn(usize) -> usize + Sync,
) -> Vec<gpu_runtime::nccl::Result<()>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .iter_mut()
            .map(|c| {
                let n = count(c.rank());
                s.spawn(move || {
                    let send = c.context().to_device(&data(c.rank(), n)).unwrap();
                    let mut recv = c.context().alloc_zeros::<f32>(n).unwrap();
                    c.all_reduce(&send, &mut recv, ReduceOp::Sum)?;
                    c.synchronize()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn counts_are_compared_across_ranks() {
    let ctxs = contexts();
    let ranks = ctxs.len();
    let mut comms = Comms::with_options(&ctxs, short(60).verify_counts(true))
        .unwrap()
        .into_vec();
    for r in all_reduce_on_threads(&mut comms, |_| 1000) {
        r.unwrap();
    }
    if ranks < 2 {
        println!("one GPU: counts that differ across ranks are not tried");
        return;
    }
    // Every rank reports every rank's count, in rank order.
    let expected: Vec<u64> = (0..ranks as u64).map(|r| 1000 + r).collect();
    for (rank, r) in all_reduce_on_threads(&mut comms, |rank| 1000 + rank)
        .into_iter()
        .enumerate()
    {
        let e = r.unwrap_err();
        assert!(
            matches!(&e, NcclError::CountsDiffer { counts, .. } if *counts == expected),
            "rank {rank}: {e}"
        );
    }
    // The check cost the ranks nothing: they still work together.
    for r in all_reduce_on_threads(&mut comms, |_| 10) {
        r.unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_rank_that_never_joins_times_out() {
    let ctx = contexts().remove(0);
    let id = UniqueId::new().unwrap();
    let start = Instant::now();
    // Rank 0 of 2; rank 1 never comes.
    let e = Comm::init_rank_with(&ctx, &id, 2, 0, short(5)).unwrap_err();
    let took = start.elapsed();
    assert!(matches!(e, NcclError::Timeout { .. }), "{e}");
    assert!(took < Duration::from_secs(60), "the timeout of 5 s took {took:?}");
    println!("{e} (after {took:?})");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn aborted_communicators_refuse_calls() {
    let comms = Comms::with_options(&contexts(), short(30)).unwrap();
    let ctx = comms[0].context();
    let mut buf = ctx.to_device(&data(0, 64)).unwrap();
    comms[0].abort().unwrap();
    assert!(comms[0].is_aborted() && comms[0].raw().is_null());
    let e = comms[0].all_reduce_in_place(&mut buf, ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, NcclError::Aborted { rank: 0, .. }), "{e}");
    let e = comms[0].synchronize().unwrap_err();
    assert!(matches!(e, NcclError::Aborted { .. }), "{e}");
    // Dropping the rest must not wait for the aborted rank beyond their timeout.
    let start = Instant::now();
    drop(comms);
    println!("dropped the other ranks in {:?}", start.elapsed());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_receive_that_gets_no_data_times_out() {
    let ctxs = contexts();
    if ctxs.len() < 2 {
        println!("one GPU: a receive with no sender needs two ranks, not tried");
        return;
    }
    let comms = Comms::with_options(&ctxs[..2], short(10)).unwrap();
    let mut buf = ctxs[1].alloc_zeros::<f32>(1 << 20).unwrap();
    let start = Instant::now();
    // Rank 1 receives from rank 0, which never sends: either the queuing or the wait for the
    // GPU times out, and rank 1 is aborted (its kernel stops) rather than hanging.
    let mut g = Group::new();
    g.recv(&comms[1], &mut buf, 0).unwrap();
    let e = match g.run() {
        Err(e) => e,
        Ok(()) => comms[1]
            .synchronize_with_timeout(Duration::from_secs(5))
            .unwrap_err(),
    };
    assert!(
        matches!(e, NcclError::Timeout { .. } | NcclError::Call { .. }),
        "{e}"
    );
    assert!(comms[1].is_aborted());
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "took {:?}",
        start.elapsed()
    );
    println!("{e}");
}
