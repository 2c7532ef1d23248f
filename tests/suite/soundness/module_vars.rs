//! A module's `__device__` and `__constant__` variables are memory like any other: every launch
//! of one of its kernels is a use of them, ordered per stream, and `Global::set`/`get` are
//! copies ordered with those launches, whatever thread queued them (issue 41, item 8). Each
//! test makes the hazard likely with kernels that spread their reads or writes of a table over
//! their run, on non-blocking streams, from several threads, and checks every result against
//! what the CPU knows was written.

use std::collections::HashSet;
use std::sync::Barrier;

use gpu_runtime::launch::Capture;
use gpu_runtime::{kernel, Stream};
use gpu_suite::Rng;

use super::{ctx, cycles, non_blocking};

/// Elements of the tables (one block of threads, one element each).
const TABLE: usize = 256;

/// Held by each test of this module for its whole run. The tables are the variables of one
/// module, which the default context loads once for the whole process: two of these tests at
/// once (a parallel `--ignored` run) would stamp each other's values into them and each see
/// values it never wrote.
static TABLES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn tables() -> std::sync::MutexGuard<'static, ()> {
    // A test that failed while holding it says so itself; the next one still runs.
    TABLES.lock().unwrap_or_else(|e| e.into_inner())
}
/// Rounds of each thread.
const ROUNDS: usize = 100;

#[kernel(
    r#"
#define TABLE 256

__device__ int table[TABLE];

__device__ void spin(long long cycles) {
    if (cycles <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

// One block of TABLE threads: thread i waits i/TABLE of `cycles`, then writes table[i] = value.
// The writes are spread over the kernel's run, so a copy of the table beside it sees a mix.
__global__ void stamp(int value, long long cycles) {
    int i = threadIdx.x;
    spin(cycles * i / TABLE);
    ((volatile int *)table)[i] = value;
}

// One block of TABLE threads: thread i waits i/TABLE of `cycles`, then reads table[i] (past
// L1, which could keep an older copy); out = {min, max} of what the threads read.
__global__ void spread(int *out, long long cycles) {
    __shared__ int seen[TABLE];
    int i = threadIdx.x;
    spin(cycles * i / TABLE);
    seen[i] = ((volatile int *)table)[i];
    __syncthreads();
    if (i == 0) {
        int lo = seen[0], hi = seen[0];
        for (int j = 1; j < TABLE; j++) { lo = min(lo, seen[j]); hi = max(hi, seen[j]); }
        out[0] = lo;
        out[1] = hi;
    }
}
"#
)]
mod dv {
    fn stamp(value: i32, cycles: i64);
    fn spread(out: &mut [i32], cycles: i64);
}

#[kernel(
    r#"
#define TABLE 256

__constant__ int ctable[TABLE];

__device__ void spin(long long cycles) {
    if (cycles <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

// As dv's `spread`, reading the constant table.
__global__ void cspread(int *out, long long cycles) {
    __shared__ int seen[TABLE];
    int i = threadIdx.x;
    spin(cycles * i / TABLE);
    seen[i] = ctable[i];
    __syncthreads();
    if (i == 0) {
        int lo = seen[0], hi = seen[0];
        for (int j = 1; j < TABLE; j++) { lo = min(lo, seen[j]); hi = max(hi, seen[j]); }
        out[0] = lo;
        out[1] = hi;
    }
}
"#
)]
mod cv {
    fn cspread(out: &mut [i32], cycles: i64);
}

/// The distinct values of each thread's rounds, drawn at random (never 0, the tables' first
/// value): what the CPU knows may be in a table.
fn values(seed: u64, threads: usize) -> Vec<Vec<i32>> {
    let mut rng = Rng::new(seed);
    let mut seen = HashSet::from([0]);
    (0..threads)
        .map(|_| {
            (0..ROUNDS)
                .map(|_| loop {
                    let v = (rng.next_u64() >> 33) as i32;
                    if seen.insert(v) {
                        break v;
                    }
                })
                .collect()
        })
        .collect()
}

/// Every value a table may hold: its first, 0, and those written.
fn allowed(written: &[Vec<i32>]) -> HashSet<i32> {
    written.iter().flatten().copied().chain([0]).collect()
}

/// A table read at once: every element one value, one the CPU knows was written.
fn check_whole(got: &[i32], allowed: &HashSet<i32>, what: &str) {
    assert!(
        got.iter().all(|&v| v == got[0]),
        "{what}: a torn table, {} distinct values (first {}, last {})",
        got.iter().collect::<HashSet<_>>().len(),
        got[0],
        got[got.len() - 1]
    );
    assert!(allowed.contains(&got[0]), "{what}: {} was never written", got[0]);
}

/// What a reader kernel saw, `[min, max]`: one value, one the CPU knows was written.
fn check_one_value(seen: &[i32], allowed: &HashSet<i32>, what: &str) {
    assert_eq!(seen[0], seen[1], "{what}: a kernel saw two values of the table");
    assert!(
        allowed.contains(&seen[0]),
        "{what}: {} was never written",
        seen[0]
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eight_threads_get_a_device_table_while_kernels_on_other_streams_stamp_it() {
    let _tables = tables();
    let ctx = ctx();
    let stamp = dv::stamp::prepare(&ctx).unwrap();
    let table = dv::globals::table(&ctx).unwrap();
    table.set([0; TABLE]).unwrap();
    let slow = cycles(&ctx, 0.5);
    let written = values(41, 4);
    let allowed = allowed(&written);
    let streams: Vec<Stream> = (0..4).map(|_| non_blocking(&ctx)).collect();
    let barrier = Barrier::new(8);
    std::thread::scope(|s| {
        for (stream, mine) in streams.iter().zip(&written) {
            let (stamp, barrier) = (&stamp, &barrier);
            s.spawn(move || {
                barrier.wait();
                for &v in mine {
                    stamp
                        .prepared_async_call(1, TABLE as u32, stream, v, slow)
                        .unwrap();
                }
            });
        }
        for t in 0..4 {
            let (table, barrier, allowed) = (&table, &barrier, &allowed);
            s.spawn(move || {
                barrier.wait();
                for round in 0..ROUNDS {
                    check_whole(
                        &table.get().unwrap(),
                        allowed,
                        &format!("getter {t}, round {round}"),
                    );
                }
            });
        }
    });
    // Every stamp has been queued: the get waits for them all, so it sees a last one whole.
    let last = table.get().unwrap();
    check_whole(&last, &allowed, "after the threads");
    let lasts: HashSet<i32> = written.iter().map(|w| w[ROUNDS - 1]).collect();
    assert!(
        lasts.contains(&last[0]),
        "the table is not any thread's last stamp"
    );
}

/// `set` from two threads while six others launch readers of the table on their own streams,
/// for a module of `__device__` or `__constant__` variables: no reader sees two values.
fn set_while_kernels_read(constant: bool, seed: u64) {
    let _tables = tables();
    let ctx = ctx();
    let slow = cycles(&ctx, 0.5);
    let written = values(seed, 2);
    let allowed = allowed(&written);
    let (device_table, const_table) = (
        dv::globals::table(&ctx).unwrap(),
        cv::globals::ctable(&ctx).unwrap(),
    );
    let set = |v: i32| {
        if constant {
            const_table.set([v; TABLE]).unwrap()
        } else {
            device_table.set([v; TABLE]).unwrap()
        }
    };
    set(0);
    let (spread, cspread) = (
        dv::spread::prepare(&ctx).unwrap(),
        cv::cspread::prepare(&ctx).unwrap(),
    );
    let barrier = Barrier::new(8);
    std::thread::scope(|s| {
        for t in 0..6 {
            let (ctx, barrier, allowed, spread, cspread) = (&ctx, &barrier, &allowed, &spread, &cspread);
            s.spawn(move || {
                let stream = non_blocking(ctx);
                let mut out = ctx.alloc_zeros::<i32>(2).unwrap();
                barrier.wait();
                for round in 0..ROUNDS {
                    if constant {
                        cspread.prepared_async_call(1, TABLE as u32, &stream, &mut out, slow)
                    } else {
                        spread.prepared_async_call(1, TABLE as u32, &stream, &mut out, slow)
                    }
                    .unwrap();
                    check_one_value(
                        &out.to_vec().unwrap(),
                        allowed,
                        &format!("reader {t}, round {round}"),
                    );
                }
            });
        }
        for mine in &written {
            let (barrier, set) = (&barrier, &set);
            s.spawn(move || {
                barrier.wait();
                for &v in mine {
                    set(v);
                }
            });
        }
    });
    let lasts: HashSet<i32> = written.iter().map(|w| w[ROUNDS - 1]).collect();
    let last = if constant {
        const_table.get().unwrap()
    } else {
        device_table.get().unwrap()
    };
    check_whole(&last, &allowed, "after the threads");
    assert!(
        lasts.contains(&last[0]),
        "the table is not any setter's last value"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eight_threads_set_a_device_table_while_kernels_on_other_streams_read_it() {
    set_while_kernels_read(false, 42);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eight_threads_set_a_constant_table_while_kernels_on_other_streams_read_it() {
    set_while_kernels_read(true, 43);
}

/// A kernel that writes the table on one stream, then one that reads it on another: the reader
/// waits for the writer, as for any memory written on one stream and read on another.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_table_stamped_on_one_stream_is_read_after_the_stamp_on_another() {
    let _tables = tables();
    let ctx = ctx();
    let (stamp, spread) = (
        dv::stamp::prepare(&ctx).unwrap(),
        dv::spread::prepare(&ctx).unwrap(),
    );
    let table = dv::globals::table(&ctx).unwrap();
    let (writer, reader) = (non_blocking(&ctx), non_blocking(&ctx));
    let slow = cycles(&ctx, 0.5);
    let mut out = ctx.alloc_zeros::<i32>(2).unwrap();
    for (round, &v) in values(44, 1)[0].iter().enumerate() {
        stamp
            .prepared_async_call(1, TABLE as u32, &writer, v, slow)
            .unwrap();
        spread
            .prepared_async_call(1, TABLE as u32, &reader, &mut out, 0)
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), [v, v], "round {round}");
        assert_eq!(table.get().unwrap(), [v; TABLE], "round {round}");
    }
}

/// A graph that stamps the table, launched on a non-blocking stream between a `set` and a
/// `get`: the graph runs after the set, and the get after the graph.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_graph_launch_is_ordered_with_set_and_get_of_its_kernels_module_variables() {
    let _tables = tables();
    let ctx = ctx();
    let stamp = dv::stamp::prepare(&ctx).unwrap();
    let table = dv::globals::table(&ctx).unwrap();
    let stream = non_blocking(&ctx);
    let stamped = 7_000_001;
    let mut cap = Capture::begin(&ctx).unwrap();
    stamp
        .capture(&mut cap, 1, TABLE as u32, stamped, cycles(&ctx, 0.5))
        .unwrap();
    let mut exec = cap.end().unwrap().instantiate().unwrap();
    for (round, &v) in values(45, 1)[0].iter().enumerate() {
        table.set([v; TABLE]).unwrap();
        exec.launch(&stream).unwrap();
        assert_eq!(table.get().unwrap(), [stamped; TABLE], "round {round}");
    }
}
