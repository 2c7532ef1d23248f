//! Data parallelism over the GPUs of a host with NCCL: a dataset is split into one shard per
//! GPU, each GPU sums the squares of every feature over its shard with a kernel, and an
//! all-reduce adds the GPUs' partial sums, so that every GPU holds the statistic of the whole
//! dataset. Checked against the CPU.
//!
//! `cargo run --release --features nccl --example nccl_data_parallel` runs one process that
//! drives every GPU. With `-- --procs` it runs one process per GPU instead: it starts itself
//! once per GPU with `--rank R --nranks N --id-file F`, as a launcher (`mpirun`, `srun`) would,
//! and rank 0 writes the NCCL unique id to F for the others to read. One GPU makes one rank.
//! Needs NCCL (`source scripts/nvrtc-env.sh`); without a GPU or NCCL it says so and exits 1.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use gpu_runtime::nccl::{Comm, Comms, ReduceOp, UniqueId};
use gpu_runtime::{kernel, Context, Device, DeviceBuffer};
use gpu_suite::{mismatch_error, run_example, Rng};

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

/// One rank of `nranks`, one per process: rank 0 makes the unique id and writes it to
/// `id_file`, the others wait for it there.
fn one_rank(rank: usize, nranks: usize, id_file: &Path) -> Fallible<()> {
    let id = if rank == 0 {
        let id = UniqueId::new()?;
        id.write_to_file(id_file)?;
        id
    } else {
        UniqueId::read_from_file(id_file, Duration::from_secs(120))?
    };
    let ctx = Context::new(Device::new(rank)?)?;
    let comm = Comm::init_rank(&ctx, &id, nranks, rank)?;
    let mut partial = partial_sums(&comm)?;
    comm.all_reduce_in_place(&mut partial, ReduceOp::Sum)?;
    mismatch_error(
        &format!("rank {rank}'s all-reduced sums"),
        &partial.to_vec()?,
        &reference(nranks),
        1e-4,
    )?;
    comm.destroy()?;
    println!(
        "nccl_data_parallel: rank {rank} of {nranks} (process {}) on {}: the sums match the CPU",
        std::process::id(),
        ctx.device().name()?
    );
    Ok(())
}

/// Starts this program once per GPU, one rank each, and waits for them all.
fn one_process_per_gpu() -> Fallible<()> {
    let nranks = Device::count()?;
    let dir = std::env::temp_dir().join(format!("nccl-data-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    // A new file per run: a stale id would send the ranks to a socket that is gone.
    let id_file = dir.join("unique.id");
    let exe = std::env::current_exe()?;
    let children = (0..nranks)
        .map(|rank| {
            Command::new(&exe)
                .args([
                    "--rank",
                    &rank.to_string(),
                    "--nranks",
                    &nranks.to_string(),
                    "--id-file",
                ])
                .arg(&id_file)
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
    let _ = std::fs::remove_dir_all(&dir);
    if failed > 0 {
        return Err(format!("{failed} of {nranks} rank processes failed").into());
    }
    println!("nccl_data_parallel: {nranks} process(es), one per GPU: every rank's sums match the CPU");
    Ok(())
}

/// `--rank R --nranks N --id-file F`, if given.
fn rank_args(args: &[String]) -> Fallible<Option<(usize, usize, PathBuf)>> {
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    match (value("--rank"), value("--nranks"), value("--id-file")) {
        (Some(r), Some(n), Some(f)) => Ok(Some((r.parse()?, n.parse()?, PathBuf::from(f)))),
        (None, None, None) => Ok(None),
        _ => Err("--rank, --nranks and --id-file go together".into()),
    }
}

fn main() -> std::process::ExitCode {
    // Before any thread or NCCL call: NVLink multicast can take down NVLink switches that other
    // users share, so it stays off unless the user chose otherwise.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    run_example("nccl_data_parallel", || match rank_args(&args)? {
        Some((rank, nranks, id_file)) => one_rank(rank, nranks, &id_file),
        None if args.iter().any(|a| a == "--procs") => one_process_per_gpu(),
        None => one_process(),
    })
}
