//! Data parallelism over the GPUs of a host with NCCL: a dataset is split into one shard per
//! GPU, each GPU sums the squares of every feature over its shard with a kernel, and an
//! all-reduce adds the GPUs' partial sums, so that every GPU holds the statistic of the whole
//! dataset. Checked against the CPU.
//!
//! `cargo run --release --features nccl --example nccl_data_parallel` runs one process that
//! drives every GPU. Started by a launcher, it is one rank of the launcher's job
//! ([`Comm::from_env`]: the variables of `torchrun`, Slurm's `srun` or Open MPI's `mpirun`;
//! rank 0 serves the NCCL unique id at `MASTER_ADDR:MASTER_PORT`), on one host or several:
//!
//! ```text
//! cargo build --release --features nccl --example nccl_data_parallel
//! EX=target/release/examples/nccl_data_parallel
//! torchrun --nnodes 2 --nproc-per-node 4 --rdzv-endpoint node01:29500 --no-python $EX
//! srun -N 2 --ntasks-per-node 4 --gpus-per-node 4 $EX        # rank 0's host from SLURM_JOB_NODELIST
//! mpirun -np 8 -x MASTER_ADDR=node01 -x MASTER_PORT=29500 $EX   # one host: MASTER_ADDR may be left out
//! ```
//!
//! With `-- --procs` it plays the launcher on this host: it starts itself once per GPU with
//! `torchrun`'s variables (`RANK`, `LOCAL_RANK`, `WORLD_SIZE`, `MASTER_ADDR=127.0.0.1`, a free
//! `MASTER_PORT`). One GPU makes one rank. Needs NCCL (`source scripts/nvrtc-env.sh`); without a
//! GPU or NCCL it says so and exits 1.

use std::process::Command;

use gpu_runtime::nccl::{Comm, Comms, LaunchEnv, ReduceOp};
use gpu_runtime::{kernel, Device, DeviceBuffer};

#[kernel(
    r#"
__global__ void sum_squares(const float *x, float *out, int samples, int features) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= features) return;
    float s = 0.0f;
    for (int i = 0; i < samples; ++i) {
        float v = x[(size_t)i * features + j];
        s += v * v;
    }
    out[j] = s;
}"#
)]
fn sum_squares(x: &[f32], out: &mut [f32], samples: i32, features: i32);

const FEATURES: usize = 4096;
const SAMPLES_PER_GPU: usize = 512;

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

/// The shard of GPU `rank`: `SAMPLES_PER_GPU` rows of `FEATURES` values.
fn shard(rank: usize) -> Vec<f32> {
    Rng::new(1 + rank as u64).vec_f32(SAMPLES_PER_GPU * FEATURES)
}

/// The CPU's answer for `nranks` shards.
fn reference(nranks: usize) -> Vec<f32> {
    let mut sums = vec![0f64; FEATURES];
    for rank in 0..nranks {
        for row in shard(rank).chunks(FEATURES) {
            for (s, v) in sums.iter_mut().zip(row) {
                *s += f64::from(*v) * f64::from(*v);
            }
        }
    }
    sums.into_iter().map(|s| s as f32).collect()
}

/// This rank's partial sums, computed on its communicator's stream. The shard's buffer is
/// dropped while the kernel may still read it: the crate keeps it allocated until then.
fn partial_sums(comm: &Comm) -> Fallible<DeviceBuffer<f32>> {
    let ctx = comm.context();
    let x = ctx.to_device(&shard(comm.rank()))?;
    let mut partial = ctx.alloc_zeros::<f32>(FEATURES)?;
    let grid = FEATURES.div_ceil(256) as u32;
    sum_squares::prepare(ctx)?.prepared_async_call(
        grid,
        256,
        comm.stream(),
        &x,
        &mut partial,
        SAMPLES_PER_GPU as i32,
        FEATURES as i32,
    )?;
    Ok(partial)
}

/// Every GPU in this process: one rank each, one all-reduce across them.
fn one_process() -> Fallible<()> {
    let comms = Comms::all_devices()?;
    let mut partials = comms.iter().map(partial_sums).collect::<Fallible<Vec<_>>>()?;
    // Queued on each rank's stream after its kernel, with no wait on the host.
    comms.all_reduce_in_place(&mut partials, ReduceOp::Sum)?;
    let want = reference(comms.len());
    for (rank, p) in partials.iter().enumerate() {
        mismatch_error(
            &format!("rank {rank}'s all-reduced sums"),
            &p.to_vec()?,
            &want,
            1e-4,
        )?;
    }
    let names = comms
        .iter()
        .map(|c| c.device().name())
        .collect::<Result<Vec<_>, _>>()?;
    println!(
        "nccl_data_parallel: {} rank(s) in one process on {}: the all-reduced sums of squares of {} samples match the CPU",
        comms.len(),
        names.join(", "),
        comms.len() * SAMPLES_PER_GPU
    );
    Ok(())
}

/// One rank of the job the launcher's variables describe (`torchrun`, `srun`, `mpirun`, or
/// `--procs` below): `Comm::from_env` picks the GPU from the local rank and meets the other
/// ranks at `MASTER_ADDR:MASTER_PORT`, where rank 0 hands out the NCCL unique id.
fn one_rank_from_env() -> Fallible<()> {
    let comm = Comm::from_env()?;
    let (rank, nranks) = (comm.rank(), comm.size());
    let mut partial = partial_sums(&comm)?;
    comm.all_reduce_in_place(&mut partial, ReduceOp::Sum)?;
    mismatch_error(
        &format!("rank {rank}'s all-reduced sums"),
        &partial.to_vec()?,
        &reference(nranks),
        1e-4,
    )?;
    let name = comm.device().name()?;
    comm.destroy()?;
    println!(
        "nccl_data_parallel: rank {rank} of {nranks} (process {}) on {name}: the sums match the CPU",
        std::process::id(),
    );
    Ok(())
}

/// A TCP port free on this host right now, for the rendezvous of `--procs`.
fn free_port() -> Fallible<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Starts this program once per GPU with `torchrun`'s variables, as `torchrun
/// --nproc-per-node N` would, and waits for every rank.
fn one_process_per_gpu() -> Fallible<()> {
    let nranks = Device::count()?;
    let port = free_port()?.to_string();
    let exe = std::env::current_exe()?;
    let children = (0..nranks)
        .map(|rank| {
            Command::new(&exe)
                .env("RANK", rank.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("WORLD_SIZE", nranks.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", &port)
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let failed = children
        .into_iter()
        .map(|mut c| c.wait())
        .collect::<Result<Vec<_>, _>>()?
        .iter()
        .filter(|s| !s.success())
        .count();
    if failed > 0 {
        return Err(format!("{failed} of {nranks} rank processes failed").into());
    }
    println!("nccl_data_parallel: {nranks} process(es), one per GPU, met through the TCP rendezvous: every rank's sums match the CPU");
    Ok(())
}

fn main() -> std::process::ExitCode {
    // Before any thread or NCCL call: NVLink multicast can take down NVLink switches that other
    // users share, so it stays off unless the user chose otherwise.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let procs = std::env::args().skip(1).any(|a| a == "--procs");
    // Started by a launcher (or by --procs): one rank. Otherwise every GPU in this process.
    let launched = LaunchEnv::from_env().is_ok();
    run_example("nccl_data_parallel", || {
        if launched {
            one_rank_from_env()
        } else if procs {
            one_process_per_gpu()
        } else {
            one_process()
        }
    })
}

// The example's own checking helpers (a copy of this file in another crate needs nothing else).

/// Runs the example's body: on failure (no GPU, a compile error, or results that differ from the
/// CPU reference) prints the error in one sentence and exits with status 1.
fn run_example(
    name: &str,
    body: impl FnOnce() -> Result<(), Box<dyn std::error::Error>>,
) -> std::process::ExitCode {
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error naming the first element where the GPU's `got` and the CPU's `want` differ by more
/// than `tol * (1 + |want|)` (a NaN differs from everything).
fn mismatch_error(what: &str, got: &[f32], want: &[f32], tol: f32) -> Result<(), Box<dyn std::error::Error>> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} elements on the GPU but {} on the CPU",
            got.len(),
            want.len()
        )
        .into());
    }
    let differs = |(g, w): (&f32, &f32)| {
        let d = (g - w).abs();
        g != w && (d.is_nan() || d >= tol * (1.0 + w.abs()))
    };
    match got.iter().zip(want).position(differs) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i} is {} on the GPU but {} on the CPU",
            got[i], want[i]
        )
        .into()),
    }
}

/// A small seeded xorshift generator: reproducible random data without a dependency.
struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A float uniform in `[-1, 1)`.
    fn f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// `n` floats uniform in `[-1, 1)`.
    fn vec_f32(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
}
