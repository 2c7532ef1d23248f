//! Communicators formed the way launched jobs form them, on GPUs: through the TCP rendezvous
//! and the launchers' variables ([`Comm::from_launch`], [`Comm::from_env`]), checked against a
//! CPU reference on random data.
//!
//! `cargo test --features nccl --test nccl_collectives -- --ignored --test-threads=1` on a machine
//! with NCCL (`source scripts/nvrtc-env.sh`): one GPU runs the single-rank test; the
//! two-process test needs two GPUs and is built with the `multi-gpu` feature only (`--features
//! "nccl multi-gpu"`). Keep
//! `NCCL_NVLS_ENABLE=0` (the tests set it unless it is set).
// The helpers of the two-GPU test go unused in builds without the `multi-gpu` feature.
#![cfg_attr(not(feature = "multi-gpu"), allow(unused_imports, dead_code))]

use std::process::{Command, Stdio};
use std::time::Duration;

use gpu_runtime::nccl::{Comm, CommOptions, Group, LaunchEnv, Launcher, ReduceOp};
use gpu_runtime::{Device, DeviceRead, DeviceWrite};
use gpu_suite::{assert_close, Rng};

/// Set in the children of the two-process test.
const CHILD_ENV: &str = "GPU_SUITE_NCCL_LAUNCH_CHILD";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Rank r's random data.
fn data(seed: u64, rank: usize, n: usize) -> Vec<f32> {
    Rng::new(seed * 1000 + rank as u64).vec_f32(n)
}

/// Every collective on `comm` (one rank of `comm.size()`, every rank running this) against
/// the CPU's answer from every rank's data.
fn every_collective(comm: &Comm) {
    let (rank, n, size) = (comm.rank(), 4099, comm.size());
    let ctx = comm.context();
    let all: Vec<Vec<f32>> = (0..size).map(|r| data(7, r, n)).collect();
    let send = ctx.to_device(&all[rank]).unwrap();
    // All-reduce: sum and max.
    let mut recv = ctx.alloc_zeros::<f32>(n).unwrap();
    comm.all_reduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    let sum: Vec<f32> = (0..n).map(|i| all.iter().map(|d| d[i]).sum()).collect();
    assert_close(&recv.to_vec().unwrap(), &sum, 1e-5);
    comm.all_reduce(&send, &mut recv, ReduceOp::Max).unwrap();
    let max: Vec<f32> = (0..n)
        .map(|i| all.iter().map(|d| d[i]).fold(f32::MIN, f32::max))
        .collect();
    assert_close(&recv.to_vec().unwrap(), &max, 0.0);
    // Broadcast from the last rank.
    let root = size - 1;
    let mut got = ctx.alloc_zeros::<f32>(n).unwrap();
    comm.broadcast((rank == root).then(|| send.device_view()), &mut got, root)
        .unwrap();
    assert_close(&got.to_vec().unwrap(), &all[root], 0.0);
    // Reduce to rank 0.
    let mut reduced = ctx.alloc_zeros::<f32>(n).unwrap();
    comm.reduce(
        &send,
        (rank == 0).then(|| reduced.device_view_mut()),
        ReduceOp::Sum,
        0,
    )
    .unwrap();
    if rank == 0 {
        assert_close(&reduced.to_vec().unwrap(), &sum, 1e-5);
    }
    // All-gather and reduce-scatter.
    let mut gathered = ctx.alloc_zeros::<f32>(n * size).unwrap();
    comm.all_gather(&send, &mut gathered).unwrap();
    assert_close(&gathered.to_vec().unwrap(), &all.concat(), 0.0);
    let big: Vec<Vec<f32>> = (0..size).map(|r| data(8, r, n * size)).collect();
    let big_send = ctx.to_device(&big[rank]).unwrap();
    let mut part = ctx.alloc_zeros::<f32>(n).unwrap();
    comm.reduce_scatter(&big_send, &mut part, ReduceOp::Sum).unwrap();
    let want: Vec<f32> = (0..n)
        .map(|i| big.iter().map(|d| d[rank * n + i]).sum())
        .collect();
    assert_close(&part.to_vec().unwrap(), &want, 1e-5);
    // A ring of sends and receives (to itself with one rank).
    let mut from_left = ctx.alloc_zeros::<f32>(n).unwrap();
    let mut g = Group::new();
    g.send(comm, &send, (rank + 1) % size).unwrap();
    g.recv(comm, &mut from_left, (rank + size - 1) % size).unwrap();
    g.run().unwrap();
    assert_close(&from_left.to_vec().unwrap(), &all[(rank + size - 1) % size], 0.0);
    comm.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_single_rank_formed_through_the_rendezvous_runs_every_collective() {
    assert!(Device::count().unwrap() >= 1, "this test needs a CUDA GPU");
    let env = LaunchEnv {
        launcher: Launcher::Torchrun,
        rank: 0,
        world_size: 1,
        local_rank: 0,
        master_addr: "127.0.0.1".into(),
        master_port: free_port(),
    };
    let comm = Comm::from_launch(&env, CommOptions::new().timeout(Duration::from_secs(60))).unwrap();
    assert_eq!((comm.rank(), comm.size(), comm.device().ordinal()), (0, 1, 0));
    every_collective(&comm);
    comm.destroy().unwrap();
}

/// The child side of the two-process test: a rank of the job its variables describe.
#[test]
#[ignore = "needs a CUDA GPU"]
fn launched_rank() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let comm = Comm::from_env_with(CommOptions::new().timeout(Duration::from_secs(120))).unwrap();
    assert_eq!(
        comm.device().ordinal(),
        comm.rank(),
        "the local rank picks the GPU"
    );
    every_collective(&comm);
    let (rank, size) = (comm.rank(), comm.size());
    comm.destroy().unwrap();
    println!("LAUNCHED rank {rank} of {size}: every collective matches the CPU");
}

// Two GPUs: with the `multi-gpu` feature, as tests/multi_gpu.rs (`cargo test --features
// "nccl multi-gpu" --test nccl_collectives -- --ignored` on a machine with two).
#[cfg(feature = "multi-gpu")]
#[test]
#[ignore = "needs a CUDA GPU"]
fn two_processes_with_torchrun_variables_meet_through_the_rendezvous() {
    let n = Device::count().unwrap();
    assert!(n >= 2, "this test needs two GPUs; this machine has {n}");
    let port = free_port().to_string();
    let children: Vec<_> = (0..2)
        .map(|rank| {
            Command::new(std::env::current_exe().unwrap())
                .arg(crate::common::test_path(module_path!(), "launched_rank"))
                .args(["--exact", "--ignored", "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, "1")
                .env("RANK", rank.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("WORLD_SIZE", "2")
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", &port)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (rank, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && text.contains(&format!("LAUNCHED rank {rank} of 2")),
            "rank {rank} failed:\n{text}"
        );
    }
}
