//! llm.c's GPT-2 fp32 training step (`train_gpt2_fp32.cu`, karpathy/llm.c, MIT license, see
//! `llmc_ref/LICENSE`) ported to Rust on gpu-runtime: llm.c's kernels from its own file,
//! unchanged; the host code (model layout, forward, backward, AdamW, data loader, checkpoint)
//! in Rust; cuBLAS through the library's checked path; memory in the library's buffers.
//!
//! ```text
//! cargo run --release --features cublas --example gpt2_train              # check: the port vs the CPU reference, small model
//! gpt2_train make-inputs --out DIR [--config small|124M] [--steps N -b B -t T] [--seed S]
//! gpt2_train train --checkpoint F --shard F [-b 4] [-t 1024] [--steps N] [--lr 3e-4] [--tf32 auto|on|off] [--lean-memset on] [--late-loss on] [--two-streams on] [--graph on]
//! gpt2_train cpu   --checkpoint F --shard F [-b 4] [-t 64] [--steps N] [--lr 1e-4]   # train_gpt2.c's step on the CPU
//! ```
//!
//! Without a GPU, `check` and `train` say so in one line and exit with status 0.

mod cpu;
mod gpu;
mod llmc;

use std::path::{Path, PathBuf};
use std::time::Instant;

use llmc::{Config, DataLoader, Res};

/// Command-line flags: `--name value` pairs (and `-b`, `-t`).
struct Flags(Vec<(String, String)>);

impl Flags {
    fn parse(args: &[String]) -> Res<Self> {
        let mut v = Vec::new();
        let mut it = args.iter();
        while let Some(k) = it.next() {
            if !k.starts_with('-') {
                return Err(format!("unexpected argument `{k}`").into());
            }
            let val = it.next().ok_or_else(|| format!("flag `{k}` needs a value"))?;
            v.push((k.trim_start_matches('-').to_owned(), val.clone()));
        }
        Ok(Flags(v))
    }
    fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
    fn num<T: std::str::FromStr>(&self, k: &str, default: T) -> Res<T> {
        match self.get(k) {
            None => Ok(default),
            Some(s) => s
                .parse()
                .map_err(|_| format!("flag --{k}: cannot parse `{s}`").into()),
        }
    }
    fn path(&self, k: &str) -> Res<PathBuf> {
        self.get(k)
            .map(PathBuf::from)
            .ok_or_else(|| format!("missing --{k}").into())
    }
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// `make-inputs`: a random checkpoint, a shard of random tokens (enough for `steps` batches of
/// B x T, as llm.c's main trains one epoch of the shard), and a tokenizer file.
fn make_inputs(f: &Flags) -> Res<()> {
    let out = f.path("out")?;
    std::fs::create_dir_all(&out)?;
    let cfg = match f.get("config").unwrap_or("small") {
        "small" => Config::SMALL,
        "124M" | "124m" => Config::GPT2_124M,
        other => return Err(format!("--config {other}: small or 124M").into()),
    };
    let seed: u32 = f.num("seed", 1337)?;
    let (b, t, steps): (usize, usize, usize) =
        (f.num("b", 4)?, f.num("t", cfg.max_seq_len)?, f.num("steps", 10)?);
    let name = if cfg == Config::SMALL { "small" } else { "124M" };
    let ckpt = out.join(format!("gpt2_{name}.bin"));
    llmc::write_checkpoint(&ckpt, &cfg, &llmc::random_params(&cfg, seed))?;
    let ntok = steps * b * t + 1;
    let mut rng = llmc::Mt19937::new(seed ^ 0x5eed);
    let tokens: Vec<u16> = (0..ntok)
        .map(|_| (rng.next_u32() % cfg.vocab_size as u32) as u16)
        .collect();
    let shard = out.join(format!("tokens_{name}.bin"));
    llmc::write_shard(&shard, &tokens)?;
    llmc::write_tokenizer(&out.join("gpt2_tokenizer.bin"), cfg.vocab_size)?;
    println!(
        "wrote {} ({} parameters), {} ({ntok} tokens: {steps} batches of {b} x {t}), {}",
        ckpt.display(),
        cfg.param_offsets().1,
        shard.display(),
        out.join("gpt2_tokenizer.bin").display()
    );
    Ok(())
}

/// The losses and step times of a run, and the parameters after it.
struct Run {
    losses: Vec<f32>,
    ms: Vec<f64>,
    params: Vec<f32>,
}

#[allow(clippy::too_many_arguments)]
fn run_gpu(
    ckpt: &Path,
    shard: &Path,
    b: usize,
    t: usize,
    steps: usize,
    lr: f32,
    tf32: Option<bool>,
    opts: gpu::Opts,
    print: bool,
) -> Res<Run> {
    let (cfg, params) = llmc::read_checkpoint(ckpt)?;
    let mut loader = DataLoader::new(shard, b, t, true)?;
    // llm.c: TF32 on compute capability 8.0 and above.
    let tf32 = match tf32 {
        Some(x) => x,
        None => gpu_runtime::Context::default()?.device().compute_capability()?.0 >= 8,
    };
    let mut model = gpu::Gpt2::new(cfg, &params, b, t, tf32)?;
    model.opts = opts;
    if print {
        println!(
            "port: {} | {:?} | B={b} T={t} | {} parameters | TF32 {} | {opts:?}",
            model.device_name()?,
            cfg,
            params.len(),
            if tf32 { "on" } else { "off" }
        );
    }
    if opts.graph {
        // The graph reads every step's batch from the device (see gpu/graph.rs).
        let batches: Vec<(Vec<i32>, Vec<i32>)> = (0..steps)
            .map(|_| {
                loader.next_batch();
                (loader.inputs.clone(), loader.targets.clone())
            })
            .collect();
        let (losses, ms) = model.train_graph(&batches, lr)?;
        if print {
            for (step, (loss, el)) in losses.iter().zip(&ms).enumerate() {
                println!("step {}: loss {loss:.6} ({el:.3} ms)", step + 1);
            }
        }
        return Ok(Run {
            losses,
            ms,
            params: model.params()?,
        });
    }
    let (mut losses, mut ms) = (Vec::new(), Vec::new());
    for step in 0..steps {
        let start = Instant::now();
        loader.next_batch();
        model.forward(&loader.inputs, &loader.targets)?;
        model.zero_grad_backward()?;
        model.update(lr, 0.9, 0.999, 1e-8, 0.0, step as i32 + 1)?;
        model.synchronize()?;
        if opts.late_loss {
            model.read_loss()?;
        }
        let el = start.elapsed().as_secs_f64() * 1e3;
        if print {
            println!("step {}: loss {:.6} ({el:.3} ms)", step + 1, model.mean_loss);
        }
        losses.push(model.mean_loss);
        ms.push(el);
    }
    Ok(Run {
        losses,
        ms,
        params: model.params()?,
    })
}

fn run_cpu(ckpt: &Path, shard: &Path, b: usize, t: usize, steps: usize, lr: f32, print: bool) -> Res<Run> {
    let (cfg, params) = llmc::read_checkpoint(ckpt)?;
    let mut loader = DataLoader::new(shard, b, t, true)?;
    let mut model = cpu::Gpt2::new(cfg, params, b, t);
    let (mut losses, mut ms) = (Vec::new(), Vec::new());
    for step in 0..steps {
        let start = Instant::now();
        loader.next_batch();
        model.forward(&loader.inputs, &loader.targets);
        model.zero_grad_backward();
        model.update(lr, 0.9, 0.999, 1e-8, 0.0, step as i32 + 1);
        let el = start.elapsed().as_secs_f64() * 1e3;
        if print {
            println!("step {}: loss {:.6} ({el:.3} ms)", step + 1, model.mean_loss);
        }
        losses.push(model.mean_loss);
        ms.push(el);
    }
    Ok(Run {
        losses,
        ms,
        params: model.params,
    })
}

fn no_gpu() -> bool {
    if gpu_runtime::driver::is_available() {
        return false;
    }
    println!("gpt2_train: no GPU (no CUDA driver or device found); nothing to run");
    true
}

/// The tolerance of the port's losses against the CPU reference's (fp32, TF32 off, relative).
/// The kernels sum in other orders than `train_gpt2.c` (warp reductions, 128 x 128 tiles,
/// cuBLAS's blocking, atomics in the layer-norm and encoder backward) and are built with
/// `-use_fast_math` as llm.c builds them (`__expf`, `__logf`, approximate division): each
/// operation is off by ~1e-7 to 1e-6 relative, and a mean over B*T positions of a ~6.2 loss
/// after 10 steps stays within ~1e-5; 1e-4 leaves room without hiding a wrong gradient, which
/// moves the loss by ~1e-3 a step at this learning rate.
pub const LOSS_RTOL: f32 = 1e-4;
/// Parameters after the steps: |gpu - cpu| <= PARAM_ATOL_LR x lr + PARAM_RTOL |cpu|. AdamW
/// moves each parameter by about lr a step whatever its gradient's size (`m / sqrt(v)`), so
/// a gradient that the two sides round differently moves a parameter differently by a
/// fraction of lr; a tenth of lr is 1% of what 10 steps move a parameter, while a wrong
/// gradient shows as ~lr a step.
pub const PARAM_ATOL_LR: f32 = 0.1;
/// See [`PARAM_ATOL_LR`].
pub const PARAM_RTOL: f32 = 1e-3;

/// Whether parameter `i` is a key bias (the middle third of a layer's `qkvb`): its gradient is
/// zero in exact arithmetic (adding a constant to every key adds `q . b` to every score of a
/// row, which the softmax ignores), so both sides compute rounding noise that AdamW turns
/// into moves of up to lr; it is left out of the comparison.
fn is_key_bias(cfg: &Config, i: usize) -> bool {
    let (off, _) = cfg.param_offsets();
    let c = cfg.channels;
    if i < off[llmc::p::QKVB] || i >= off[llmc::p::QKVB] + cfg.num_layers * 3 * c {
        return false;
    }
    let j = (i - off[llmc::p::QKVB]) % (3 * c);
    (c..2 * c).contains(&j)
}

/// The names of the parameter tensors, in llm.c's order.
const TENSORS: [&str; 16] = [
    "wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb", "ln2w", "ln2b", "fcw", "fcb",
    "fcprojw", "fcprojb", "lnfw", "lnfb",
];

/// The largest relative L2 error of one tensor's gradients allowed after one backward pass
/// (fp32 sums in other orders and fast-math `__expf`: ~1e-6 to 1e-5 expected).
pub const GRAD_RTOL: f32 = 1e-3;

/// One forward and backward pass of the first batch on both sides: each tensor's gradient,
/// compared by its relative L2 error, so that a failing check says which part of the step is
/// off.
fn check_grads(ckpt: &Path, shard: &Path, b: usize, t: usize) -> Res<()> {
    let (cfg, params) = llmc::read_checkpoint(ckpt)?;
    let mut loader = DataLoader::new(shard, b, t, true)?;
    loader.next_batch();
    let mut g = gpu::Gpt2::new(cfg, &params, b, t, false)?;
    g.forward(&loader.inputs, &loader.targets)?;
    g.zero_grad_backward()?;
    let gg = g.grads()?;
    let mut c = cpu::Gpt2::new(cfg, params, b, t);
    c.forward(&loader.inputs, &loader.targets);
    c.zero_grad_backward();
    let (off, _) = cfg.param_offsets();
    let sizes = cfg.param_sizes();
    let mut bad = Vec::new();
    for i in 0..16 {
        let r = off[i]..off[i] + sizes[i];
        let (x, y) = (&gg[r.clone()], &c.grads[r]);
        let num: f64 = x.iter().zip(y).map(|(a, b)| ((a - b) as f64).powi(2)).sum();
        let den: f64 = y.iter().map(|b| (*b as f64).powi(2)).sum();
        let rel = (num / den.max(1e-300)).sqrt() as f32;
        println!(
            "gradient of {:>8}: relative L2 error {rel:.2e} (|grad| {:.3e})",
            TENSORS[i],
            den.sqrt()
        );
        if rel.is_nan() || rel > GRAD_RTOL {
            bad.push(format!("{} ({rel:.2e})", TENSORS[i]));
        }
    }
    if !bad.is_empty() {
        return Err(format!(
            "gradients after one backward pass differ beyond {GRAD_RTOL}: {}",
            bad.join(", ")
        )
        .into());
    }
    Ok(())
}

/// `check`: the port against the CPU reference on the small model.
fn check(steps: usize, opts: gpu::Opts) -> Res<()> {
    let dir = std::env::temp_dir().join(format!("gpt2_train_check_{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (b, t) = (4usize, 64usize);
    let cfg = Config::SMALL;
    let ckpt = dir.join("ckpt.bin");
    let shard = dir.join("tokens.bin");
    llmc::write_checkpoint(&ckpt, &cfg, &llmc::random_params(&cfg, 7))?;
    let mut rng = llmc::Mt19937::new(11);
    let tokens: Vec<u16> = (0..3 * b * t + 1)
        .map(|_| (rng.next_u32() % cfg.vocab_size as u32) as u16)
        .collect();
    llmc::write_shard(&shard, &tokens)?;
    let lr = 1e-3;
    let runs = check_grads(&ckpt, &shard, b, t).and_then(|()| {
        Ok((
            run_gpu(&ckpt, &shard, b, t, steps, lr, Some(false), opts, false)?,
            run_cpu(&ckpt, &shard, b, t, steps, lr, false)?,
        ))
    });
    std::fs::remove_dir_all(&dir).ok();
    let (g, c) = runs?;
    let mut worst_loss = 0.0f32;
    for (i, (x, y)) in g.losses.iter().zip(&c.losses).enumerate() {
        let rel = (x - y).abs() / y.abs();
        println!("step {}: loss port {x:.6} cpu {y:.6} (rel diff {rel:.2e})", i + 1);
        worst_loss = worst_loss.max(rel);
        if rel.is_nan() || rel > LOSS_RTOL {
            return Err(format!(
                "step {}: loss {x} on the GPU, {y} on the CPU (tolerance {LOSS_RTOL})",
                i + 1
            )
            .into());
        }
    }
    let atol = PARAM_ATOL_LR * lr;
    let mut worst = (0usize, 0.0f32);
    let mut max_diff = 0.0f32;
    for (i, (x, y)) in g.params.iter().zip(&c.params).enumerate() {
        if is_key_bias(&cfg, i) {
            continue;
        }
        max_diff = max_diff.max((x - y).abs());
        let excess = (x - y).abs() - (atol + PARAM_RTOL * y.abs());
        if excess.is_nan() || excess > worst.1 {
            worst = (i, excess);
        }
        if excess.is_nan() {
            break;
        }
    }
    if worst.1 > 0.0 || worst.1.is_nan() {
        let i = worst.0;
        let (off, _) = cfg.param_offsets();
        let tensor = (0..16).rev().find(|&k| off[k] <= i).unwrap_or(0);
        return Err(format!(
            "parameter {i} ({} element {}) after {steps} steps: {} on the GPU, {} on the CPU (tolerance {atol} + {PARAM_RTOL} x |cpu|)",
            TENSORS[tensor],
            i - off[tensor],
            g.params[i],
            c.params[i]
        )
        .into());
    }
    println!(
        "gpt2_train check: {steps} steps of the small model on the GPU match the CPU reference (losses within {worst_loss:.1e} relative; parameters but the key biases within {max_diff:.1e}, tolerance {atol} + {PARAM_RTOL} x |cpu|)"
    );
    Ok(())
}

/// `--lean-memset`, `--late-loss`, `--two-streams` and `--graph`, each `on|off` (all off: the port as llm.c does it).
fn opts(f: &Flags) -> Res<gpu::Opts> {
    let on = |k: &str| match f.get(k).unwrap_or("off") {
        "on" | "1" => Ok(true),
        "off" | "0" => Ok(false),
        o => Err(format!("--{k} {o}: on or off")),
    };
    Ok(gpu::Opts {
        lean_memset: on("lean-memset")?,
        late_loss: on("late-loss")?,
        two_streams: on("two-streams")?,
        graph: on("graph")?,
    })
}

fn main_inner() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = args.first().map(String::as_str).unwrap_or("check");
    let f = Flags::parse(args.get(1..).unwrap_or(&[]))?;
    match cmd {
        "make-inputs" => make_inputs(&f),
        "check" => {
            if no_gpu() {
                return Ok(());
            }
            check(f.num("steps", 10)?, opts(&f)?)
        }
        "train" => {
            if no_gpu() {
                return Ok(());
            }
            let tf32 = match f.get("tf32").unwrap_or("auto") {
                "auto" => None,
                "on" | "1" => Some(true),
                "off" | "0" => Some(false),
                o => return Err(format!("--tf32 {o}: auto, on or off").into()),
            };
            let (b, t, steps) = (f.num("b", 4)?, f.num("t", 1024)?, f.num("steps", 30)?);
            let run = run_gpu(
                &f.path("checkpoint")?,
                &f.path("shard")?,
                b,
                t,
                steps,
                f.num("lr", 3e-4)?,
                tf32,
                opts(&f)?,
                true,
            )?;
            let warm: usize = f.num("warmup", 5)?;
            let mut rest: Vec<f64> = run.ms.iter().skip(warm).copied().collect();
            println!(
                "port: median step time {:.3} ms over {} steps after {warm} of warm-up",
                median(&mut rest),
                rest.len()
            );
            Ok(())
        }
        "cpu" => {
            let (b, t, steps) = (f.num("b", 4)?, f.num("t", 64)?, f.num("steps", 10)?);
            run_cpu(
                &f.path("checkpoint")?,
                &f.path("shard")?,
                b,
                t,
                steps,
                f.num("lr", 1e-4)?,
                true,
            )?;
            Ok(())
        }
        other => Err(format!("unknown command `{other}`: check, make-inputs, train or cpu").into()),
    }
}

fn main() -> std::process::ExitCode {
    match main_inner() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpt2_train: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod gpu_tests {
    /// The port against the CPU reference: 10 steps of the small model, TF32 off; losses and
    /// final parameters within the tolerances of `LOSS_RTOL`, `PARAM_ATOL_LR` and `PARAM_RTOL`.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn port_matches_cpu_reference() {
        super::check(10, super::gpu::Opts::default()).unwrap();
    }

    /// The same with every variant of the step on (`--lean-memset on --late-loss on --two-streams on`):
    /// the variants change when the host waits, which memsets run and on which stream, not the
    /// values.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn port_variants_match_cpu_reference() {
        let opts = super::gpu::Opts {
            lean_memset: true,
            late_loss: true,
            two_streams: true,
            graph: false,
        };
        super::check(10, opts).unwrap();
    }

    /// The step as one CUDA graph (`--graph on`, with `--lean-memset on`): 10 steps against
    /// the CPU reference, AdamW's per-step bias corrections set in the graph at each launch.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn port_graph_matches_cpu_reference() {
        let opts = super::gpu::Opts {
            graph: true,
            ..Default::default()
        };
        super::check(10, opts).unwrap();
        let lean = super::gpu::Opts {
            graph: true,
            lean_memset: true,
            ..Default::default()
        };
        super::check(10, lean).unwrap();
    }
}
