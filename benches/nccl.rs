//! NCCL through this crate next to bare NCCL, in the same process on the same buffers and
//! streams: all-reduce bus bandwidth (`busbw = algbw * 2(n-1)/n`, as nccl-tests reports it) at
//! 1 KiB, 1 MiB and 256 MiB, and the latency of an 8-byte all-reduce, for nonblocking
//! communicators (the default) and blocking ones, made by `Comms::with_options` and, as a
//! launched job makes them, through the TCP rendezvous (`Comm::from_launch`, one thread per
//! GPU standing in for a process each: the "rendezvous" rows). The bare side is
//! `cudarc::nccl::result::all_reduce` in `ncclGroupStart`/`ncclGroupEnd`, polling
//! `ncclCommGetAsyncError` where NCCL says the calls are still being queued, as NCCL requires.
//!
//! `cargo bench --features nccl --bench nccl` on a machine with NCCL and GPUs (well under a
//! minute). With one GPU it runs one rank, says so, and reports algorithm bandwidth (a bus
//! bandwidth is zero with nothing to cross). The table is also written as JSON to
//! `$OUT/bench-nccl.json` when `OUT` is set, else `target/bench-nccl.json`.

#[path = "report/table.rs"]
mod table;

use std::ffi::c_void;
use std::time::{Duration, Instant};

use gpu_runtime::cudarc::nccl::{result, sys};
use gpu_runtime::nccl::{Comm, CommOptions, Comms, Group, LaunchEnv, Launcher, ReduceOp};
use gpu_runtime::{Context, Device, DeviceBuffer};
use table::{median, Row};

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

/// Rounds of ours and bare, taking turns; each row's ratio is the median of the rounds'.
const ROUNDS: usize = 7;

/// One side of a measurement: `iters` all-reduces of `send` into `recv` on every rank, then a
/// wait for every rank's stream.
fn ours(
    comms: &[Comm],
    send: &[DeviceBuffer<f32>],
    recv: &mut [DeviceBuffer<f32>],
    iters: usize,
) -> Fallible<Duration> {
    let t = Instant::now();
    for _ in 0..iters {
        // What `Comms::all_reduce` does, for ranks made any way (one group, one call per rank).
        let mut g = Group::new();
        for ((c, s), r) in comms.iter().zip(send).zip(recv.iter_mut()) {
            g.all_reduce(c, s, r, ReduceOp::Sum)?;
        }
        g.run()?;
    }
    for c in comms.iter() {
        c.stream().synchronize()?;
    }
    Ok(t.elapsed())
}

/// The same through bare NCCL calls on the same communicators, buffers and streams.
fn bare(
    comms: &[Comm],
    send: &[DeviceBuffer<f32>],
    recv: &mut [DeviceBuffer<f32>],
    iters: usize,
) -> Fallible<Duration> {
    let count = send[0].len();
    let t = Instant::now();
    for _ in 0..iters {
        result::group_start().map_err(|e| format!("ncclGroupStart: {:?}", e.0))?;
        for ((c, s), r) in comms.iter().zip(send).zip(recv.iter_mut()) {
            // SAFETY: the buffers hold `count` floats on the communicator's device, and the
            // stream is of its context; every call is made on every rank.
            unsafe {
                result::all_reduce(
                    s.device_ptr() as *const c_void,
                    r.device_ptr() as *mut c_void,
                    count,
                    sys::ncclDataType_t::ncclFloat32,
                    sys::ncclRedOp_t::ncclSum,
                    c.raw(),
                    c.stream().raw() as sys::cudaStream_t,
                )
            }
            .map_err(|e| format!("ncclAllReduce: {:?}", e.0))?;
        }
        if result::group_end().map_err(|e| format!("ncclGroupEnd: {:?}", e.0))?
            == result::NcclStatus::InProgress
        {
            for c in comms.iter() {
                let mut state = sys::ncclResult_t::ncclInProgress;
                while state == sys::ncclResult_t::ncclInProgress {
                    // SAFETY: a live communicator and a valid out-pointer.
                    unsafe { sys::ncclCommGetAsyncError(c.raw(), &mut state) };
                }
                if state != sys::ncclResult_t::ncclSuccess {
                    return Err(format!("NCCL failed: {state:?}").into());
                }
            }
        }
    }
    for c in comms.iter() {
        c.stream().synchronize()?;
    }
    Ok(t.elapsed())
}

/// Runs both sides in turns: the best time of each, and the ratio (ours / bare) of each round.
fn measure(comms: &[Comm], count: usize, iters: usize) -> Fallible<(Duration, Duration, Vec<f64>)> {
    let send = comms
        .iter()
        .map(|c| c.context().to_device(&vec![1.0f32; count]))
        .collect::<Result<Vec<_>, _>>()?;
    let mut recv = comms
        .iter()
        .map(|c| c.context().alloc_zeros::<f32>(count))
        .collect::<Result<Vec<_>, _>>()?;
    // Warm up both paths: connections, kernels, the crate's records.
    ours(comms, &send, &mut recv, 2)?;
    bare(comms, &send, &mut recv, 2)?;
    let (mut best_ours, mut best_bare, mut ratios) = (Duration::MAX, Duration::MAX, Vec::new());
    for round in 0..ROUNDS {
        // Alternate which side goes first, so that neither always follows the other.
        let (o, b) = if round % 2 == 0 {
            let o = ours(comms, &send, &mut recv, iters)?;
            (o, bare(comms, &send, &mut recv, iters)?)
        } else {
            let b = bare(comms, &send, &mut recv, iters)?;
            (ours(comms, &send, &mut recv, iters)?, b)
        };
        best_ours = best_ours.min(o);
        best_bare = best_bare.min(b);
        ratios.push(o.as_secs_f64() / b.as_secs_f64());
    }
    // The result is every rank's ones summed.
    let got = recv[0].to_vec()?;
    if got.iter().any(|v| *v != comms.len() as f32) {
        return Err(format!("the all-reduce gave {} instead of {}", got[0], comms.len()).into());
    }
    Ok((best_ours, best_bare, ratios))
}

/// A `&'static str` for a row built at run time.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn rows(comms: &[Comm], mode: &str) -> Fallible<Vec<Row>> {
    let n = comms.len() as f64;
    let mut rows = Vec::new();
    for (label, bytes) in [
        ("1 KiB", 1usize << 10),
        ("1 MiB", 1 << 20),
        ("256 MiB", 256 << 20),
    ] {
        let iters = ((1usize << 31) / bytes).clamp(5, 2000);
        let (o, b, ratios) = measure(comms, bytes / 4, iters)?;
        // nccl-tests' bus bandwidth: what each link carries; with one rank, the algorithm's.
        let factor = if comms.len() > 1 { 2.0 * (n - 1.0) / n } else { 1.0 };
        let gbs = |t: Duration| bytes as f64 * iters as f64 / t.as_secs_f64() / 1e9 * factor;
        let what = if comms.len() > 1 { "busbw" } else { "algbw" };
        rows.push(Row {
            figure: leak(format!("all-reduce {label} {what}, {mode}")),
            raw: "cudarc::nccl::result::all_reduce, grouped",
            ours: gbs(o),
            theirs: gbs(b),
            unit: "GB/s",
            higher_is_better: true,
            target: "<= 1.03 (ours >= 0.97x)",
            rounds: ratios,
        });
    }
    let iters = 1000;
    let (o, b, ratios) = measure(comms, 2, iters)?;
    let us = |t: Duration| t.as_secs_f64() * 1e6 / iters as f64;
    rows.push(Row {
        figure: leak(format!("all-reduce 8 B latency, {mode}")),
        raw: "cudarc::nccl::result::all_reduce, grouped",
        ours: us(o),
        theirs: us(b),
        unit: "us",
        higher_is_better: false,
        target: "",
        rounds: ratios,
    });
    Ok(rows)
}

/// One communicator per GPU, each formed by [`Comm::from_launch`] on a thread of its own as a
/// process of a launched job would (torchrun's variables, rank r on GPU r), in rank order.
fn through_the_rendezvous(ndev: usize, options: CommOptions) -> Fallible<Vec<Comm>> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let threads: Vec<_> = (0..ndev)
        .map(|rank| {
            let env = LaunchEnv {
                launcher: Launcher::Torchrun,
                rank,
                world_size: ndev,
                local_rank: rank,
                master_addr: "127.0.0.1".into(),
                master_port: port,
            };
            std::thread::spawn(move || Comm::from_launch(&env, options))
        })
        .collect();
    let mut comms = Vec::new();
    for t in threads {
        comms.push(t.join().map_err(|_| "a rank's thread panicked")??);
    }
    Ok(comms)
}

fn run() -> Fallible<()> {
    let ndev = Device::count()?;
    let ctxs = (0..ndev)
        .map(|i| Context::new(Device::new(i)?))
        .collect::<Result<Vec<_>, _>>()?;
    if ndev < 2 {
        println!("bench nccl: one GPU, so nranks = 1: the rows give algorithm bandwidth (a bus bandwidth is 0 for one rank)");
    }
    let (major, minor, patch) = gpu_runtime::nccl::version()?;
    let device = format!(
        "{ndev} x {} (NCCL {major}.{minor}.{patch}, {ndev} rank(s) in one process)",
        ctxs[0].device().name()?
    );
    let mut all = Vec::new();
    for (mode, blocking) in [("nonblocking comm", false), ("blocking comm", true)] {
        let comms = Comms::with_options(&ctxs, CommOptions::new().blocking(blocking))?;
        all.extend(rows(&comms, mode)?);
    }
    // The same through communicators formed as a launched job forms them: every rank joins
    // the TCP rendezvous (here one thread per GPU instead of one process) and NCCL's init
    // with the id it hands out. Bare NCCL runs on the same communicators.
    drop(ctxs);
    for (mode, blocking) in [
        ("rendezvous, nonblocking comm", false),
        ("rendezvous, blocking comm", true),
    ] {
        let comms = through_the_rendezvous(ndev, CommOptions::new().blocking(blocking))?;
        all.extend(rows(&comms, mode)?);
    }
    print!("{}", table::render(&device, &all));
    let worst = all
        .iter()
        .filter(|r| r.higher_is_better)
        .map(|r| median(&r.rounds))
        .fold(0.0, f64::max);
    println!(
        "worst bandwidth ratio: {worst:.3} (ours is {:.3}x bare)",
        1.0 / worst
    );
    let path = std::env::var_os("OUT")
        .map(|o| std::path::PathBuf::from(o).join("bench-nccl.json"))
        .unwrap_or_else(|| std::path::PathBuf::from("target/bench-nccl.json"));
    std::fs::write(&path, table::json(&device, &all))?;
    println!("JSON: {}", path.display());
    let md = path.with_extension("md");
    std::fs::write(&md, table::markdown(&device, &all))?;
    println!("markdown: {}", md.display());
    Ok(())
}

fn main() -> std::process::ExitCode {
    // Before any thread or NCCL call: NVLink multicast can take down NVLink switches that other
    // users share, so it stays off unless the user chose otherwise.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    // `cargo bench` passes `--bench`; there is nothing to choose.
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench nccl: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
