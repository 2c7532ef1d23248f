//! The port: `train_gpt2_fp32.cu`'s host code (karpathy/llm.c, MIT license, see
//! `llmc_ref/LICENSE`) in Rust on gpu-runtime. The kernels are llm.c's own, declared from its
//! file unchanged; the matmuls llm.c gives cuBLAS go through the library's checked cuBLAS path;
//! memory is the library's buffers and views. Each function below is the llm.c launcher of the
//! same name, with the same grid, block and shared memory.

use gpu_runtime::cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
use gpu_runtime::cudarc::cublas::{CudaBlas, GemmConfig, StridedBatchedConfig};
use gpu_runtime::driver::cublas::{cublas_on, gemm, gemm_strided_batched, set_tf32};
use gpu_runtime::driver::{memset_d32_async, StreamFlags};
use gpu_runtime::types::Float4;
use gpu_runtime::{
    kernel, Context, DeviceBuffer, DeviceRead, DeviceView, DeviceViewMut, DeviceWrite, Stream,
};

use crate::llmc::{p, Config, Res};

// `--graph on`: the step as one CUDA graph (`Gpt2::train_graph`).
#[path = "graph.rs"]
mod graph;

// llm.c's kernels, from its file as written (with its host code, `main()` and includes: the
// library compiles the device part). Each declaration is checked against the C signature at
// build time. `#[read_only]`: a `float *` the kernel only reads. `-use_fast_math`, as llm.c
// builds it (`nvcc -O3 --use_fast_math`).
#[kernel(file = "examples/gpt2_train/llmc_ref/train_gpt2_fp32.cu", options = ["-use_fast_math"])]
mod k {
    fn encoder_forward_kernel3(
        out: &mut [Float4],
        inp: &[i32],
        wte: &[Float4],
        wpe: &[Float4],
        b: i32,
        t: i32,
        c: i32,
    );
    fn encoder_backward_kernel(
        dwte: &mut [f32],
        dwpe: &mut [f32],
        dout: &[f32],
        inp: &[i32],
        b: i32,
        t: i32,
        c: i32,
    );
    fn layernorm_forward_kernel3(
        out: &mut [f32],
        mean: &mut [f32],
        rstd: &mut [f32],
        inp: &[f32],
        weight: &[f32],
        bias: &[f32],
        n: i32,
        c: i32,
    );
    fn permute_kernel(
        q: &mut [f32],
        k: &mut [f32],
        v: &mut [f32],
        inp: &[f32],
        b: i32,
        n: i32,
        nh: i32,
        d: i32,
    );
    fn permute_kernel_backward(
        dinp: &mut [f32],
        dq: &[f32],
        dk: &[f32],
        dv: &[f32],
        b: i32,
        n: i32,
        nh: i32,
        d: i32,
    );
    fn unpermute_kernel(#[read_only] inp: &[f32], out: &mut [f32], b: i32, n: i32, nh: i32, d: i32);
    fn unpermute_kernel_backward(dinp: &mut [f32], dout: &[f32], b: i32, n: i32, nh: i32, d: i32);
    fn softmax_forward_kernel5(out: &mut [f32], inv_temperature: f32, inp: &[f32], n: i32, t: i32);
    fn residual_forward_kernel(out: &mut [f32], #[read_only] inp1: &[f32], #[read_only] inp2: &[f32], n: i32);
    fn gelu_forward_kernel(out: &mut [f32], inp: &[f32], n: i32);
    fn gelu_backward_kernel(dinp: &mut [f32], inp: &[f32], dout: &[f32], n: i32);
    fn matmul_backward_bias_kernel4(dbias: &mut [f32], dout: &[f32], b: i32, t: i32, oc: i32);
    fn layernorm_backward_kernel2(
        dinp: &mut [f32],
        dweight: &mut [f32],
        dbias: &mut [f32],
        dout: &[f32],
        inp: &[f32],
        weight: &[f32],
        mean: &[f32],
        rstd: &[f32],
        b: i32,
        t: i32,
        c: i32,
    );
    fn softmax_autoregressive_backward_kernel(
        dpreatt: &mut [f32],
        datt: &[f32],
        att: &[f32],
        b: i32,
        t: i32,
        c: i32,
        scale: f32,
    );
    fn adamw_kernel2(
        params_memory: &mut [f32],
        #[read_only] grads_memory: &[f32],
        m_memory: &mut [f32],
        v_memory: &mut [f32],
        num_parameters: i64,
        learning_rate: f32,
        beta1: f32,
        beta2: f32,
        beta1_correction: f32,
        beta2_correction: f32,
        eps: f32,
        weight_decay: f32,
    );
    fn fused_classifier_kernel3(
        logits: &mut [f32],
        losses: &mut [f32],
        probs: Option<&mut [f32]>,
        dlosses: Option<&[f32]>,
        targets: &[i32],
        b: i32,
        t: i32,
        v: i32,
        p: i32,
    );
    fn matmul_forward_kernel4(
        out: &mut [f32],
        inp: &[f32],
        weight: &[f32],
        bias: Option<&[f32]>,
        c: i32,
        oc: i32,
    );
}

/// Every kernel, prepared once (compiled and loaded at the first `prepare`).
struct Kernels {
    encoder_fwd: k::encoder_forward_kernel3::Kernel,
    encoder_bwd: k::encoder_backward_kernel::Kernel,
    ln_fwd: k::layernorm_forward_kernel3::Kernel,
    permute: k::permute_kernel::Kernel,
    permute_bwd: k::permute_kernel_backward::Kernel,
    unpermute: k::unpermute_kernel::Kernel,
    unpermute_bwd: k::unpermute_kernel_backward::Kernel,
    softmax_fwd: k::softmax_forward_kernel5::Kernel,
    residual_fwd: k::residual_forward_kernel::Kernel,
    gelu_fwd: k::gelu_forward_kernel::Kernel,
    gelu_bwd: k::gelu_backward_kernel::Kernel,
    bias_bwd: k::matmul_backward_bias_kernel4::Kernel,
    ln_bwd: k::layernorm_backward_kernel2::Kernel,
    softmax_bwd: k::softmax_autoregressive_backward_kernel::Kernel,
    adamw: k::adamw_kernel2::Kernel,
    classifier: k::fused_classifier_kernel3::Kernel,
    matmul_fwd: k::matmul_forward_kernel4::Kernel,
}

impl Kernels {
    fn new(ctx: &Context) -> Res<Self> {
        Ok(Kernels {
            encoder_fwd: k::encoder_forward_kernel3::prepare(ctx)?,
            encoder_bwd: k::encoder_backward_kernel::prepare(ctx)?,
            ln_fwd: k::layernorm_forward_kernel3::prepare(ctx)?,
            permute: k::permute_kernel::prepare(ctx)?,
            permute_bwd: k::permute_kernel_backward::prepare(ctx)?,
            unpermute: k::unpermute_kernel::prepare(ctx)?,
            unpermute_bwd: k::unpermute_kernel_backward::prepare(ctx)?,
            softmax_fwd: k::softmax_forward_kernel5::prepare(ctx)?,
            residual_fwd: k::residual_forward_kernel::prepare(ctx)?,
            gelu_fwd: k::gelu_forward_kernel::prepare(ctx)?,
            gelu_bwd: k::gelu_backward_kernel::prepare(ctx)?,
            bias_bwd: k::matmul_backward_bias_kernel4::prepare(ctx)?,
            ln_bwd: k::layernorm_backward_kernel2::prepare(ctx)?,
            softmax_bwd: k::softmax_autoregressive_backward_kernel::prepare(ctx)?,
            adamw: k::adamw_kernel2::prepare(ctx)?,
            classifier: k::fused_classifier_kernel3::prepare(ctx)?,
            matmul_fwd: k::matmul_forward_kernel4::prepare(ctx)?,
        })
    }
}

fn ceil_div(a: usize, b: usize) -> u32 {
    a.div_ceil(b) as u32
}

/// The activations (`ActivationTensors`), one buffer per tensor (llm.c carves them from one
/// allocation; nothing reads across two of them, so separate buffers lay out the same).
struct Acts {
    encoded: DeviceBuffer<f32>,
    ln1: DeviceBuffer<f32>,
    ln1_mean: DeviceBuffer<f32>,
    ln1_rstd: DeviceBuffer<f32>,
    atty: DeviceBuffer<f32>,
    att: DeviceBuffer<f32>,
    attproj: DeviceBuffer<f32>,
    residual2: DeviceBuffer<f32>,
    ln2: DeviceBuffer<f32>,
    ln2_mean: DeviceBuffer<f32>,
    ln2_rstd: DeviceBuffer<f32>,
    fch: DeviceBuffer<f32>,
    fch_gelu: DeviceBuffer<f32>,
    fcproj: DeviceBuffer<f32>,
    residual3: DeviceBuffer<f32>,
    lnf: DeviceBuffer<f32>,
    lnf_mean: DeviceBuffer<f32>,
    lnf_rstd: DeviceBuffer<f32>,
    losses: DeviceBuffer<f32>,
    qkvr: DeviceBuffer<f32>,
    /// Logits, then their gradients; the forward pass's scratch (`output`).
    output: DeviceBuffer<f32>,
}

/// The model on the GPU (llm.c's `GPT2`).
pub struct Gpt2 {
    /// The shape.
    pub cfg: Config,
    b: usize,
    t: usize,
    ctx: Context,
    stream: Stream,
    blas: CudaBlas,
    /// A second stream, and cuBLAS on it, for the weight and bias gradients of each matmul
    /// backward when [`Opts::two_streams`].
    stream2: Stream,
    blas2: CudaBlas,
    k: Kernels,
    /// cuBLAS in TF32 mode (for the graph's own handle, `Opts::graph`).
    tf32: bool,
    params: DeviceBuffer<f32>,
    grads: DeviceBuffer<f32>,
    m: DeviceBuffer<f32>,
    v: DeviceBuffer<f32>,
    acts: Acts,
    // GradActTensors: bt4c, preatt, residual3; and a second bt4c where llm.c's gelu backward
    // works in place (its `dinp` and `dout` are one buffer, which a `&mut` and a `&` of the
    // same buffer cannot be: the kernel reads `dout[i]` before writing `dinp[i]`, so writing
    // elsewhere gives the same values).
    bt4c: DeviceBuffer<f32>,
    bt4c2: DeviceBuffer<f32>,
    dpreatt: DeviceBuffer<f32>,
    dresidual: DeviceBuffer<f32>,
    inputs: DeviceBuffer<i32>,
    targets: DeviceBuffer<i32>,
    cpu_losses: Vec<f32>,
    /// The mean loss of the last forward pass.
    pub mean_loss: f32,
    /// The variants of the step measured against llm.c's (see [`Opts`]).
    pub opts: Opts,
}

/// Departures from llm.c's host code, each off by default (the port as llm.c does it), so that
/// `compare.sh` can time each one's gain in the same run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Opts {
    /// Leave out the memset of the port's second GELU-gradient buffer (`bt4c2`, B*T*4C floats,
    /// 48 MiB at 124M, B=4, T=1024): `gelu_backward` writes all of it before anything reads it,
    /// so the memset is traffic llm.c does not have (llm.c works in place in `bt4c`).
    pub lean_memset: bool,
    /// Read the losses back after the step's synchronisation ([`Gpt2::read_loss`]) instead of
    /// at the end of the forward pass as llm.c does (`cudaMemcpy`, which waits for the
    /// forward): the host then queues the backward pass and the update while the forward
    /// runs, and the GPU does not idle between the two passes.
    pub late_loss: bool,
    /// Each matmul backward's weight gradient (cuBLAS) and bias gradient (llm.c's kernel) on a
    /// second stream, beside the input gradient and what follows it on the first: the two
    /// only share inputs, and the library's stream ordering makes each stream wait for the
    /// other where one writes what the other uses (the next layer's scratch, the gradients
    /// AdamW reads), with no event by hand. The same products in the same order: the same
    /// values.
    pub two_streams: bool,
    /// The step as one CUDA graph after the first step ([`Gpt2::train_graph`]): forward,
    /// zero-grad and backward, AdamW, launched once per step (`two_streams` and `late_loss`
    /// do not apply to it).
    pub graph: bool,
}

/// `n` parameter-sized pieces of `v`, in order.
fn split_mut<'a>(mut v: DeviceViewMut<'a, f32>, sizes: &[usize]) -> Res<Vec<DeviceViewMut<'a, f32>>> {
    let mut out = Vec::with_capacity(sizes.len());
    for &s in sizes {
        let (a, rest) = v.split_at_mut(s)?;
        out.push(a);
        v = rest;
    }
    Ok(out)
}

impl Gpt2 {
    /// The model from a checkpoint's config and parameters, for batches of `b` x `t`; cuBLAS
    /// in TF32 mode when `tf32` (llm.c's choice on compute capability 8.0 and above).
    pub fn new(cfg: Config, params: &[f32], b: usize, t: usize, tf32: bool) -> Res<Self> {
        let (c, nh, l, vp) = (cfg.channels, cfg.num_heads, cfg.num_layers, cfg.padded_vocab_size);
        if !(b * t).is_multiple_of(128)
            || !c.is_multiple_of(128)
            || !vp.is_multiple_of(128)
            || !t.is_multiple_of(4)
            || !c.is_multiple_of(nh)
            || t > cfg.max_seq_len
        {
            return Err(format!(
                "B*T={} and C={c}, Vp={vp} must be multiples of 128, T={t} of 4 and at most maxT={}, C of NH={nh}: llm.c's fp32 kernels have no bounds checks",
                b * t,
                cfg.max_seq_len
            )
            .into());
        }
        let ctx = Context::default()?;
        let stream = Stream::with_flags(&ctx, StreamFlags::NonBlocking)?;
        let blas = cublas_on(&stream)?;
        set_tf32(&blas, tf32)?;
        let stream2 = Stream::with_flags(&ctx, StreamFlags::NonBlocking)?;
        let blas2 = cublas_on(&stream2)?;
        set_tf32(&blas2, tf32)?;
        let k = Kernels::new(&ctx)?;
        let n = params.len();
        let z = |len: usize| ctx.alloc_zeros::<f32>(len);
        let bt = b * t;
        let acts = Acts {
            encoded: z(bt * c)?,
            ln1: z(l * bt * c)?,
            ln1_mean: z(l * bt)?,
            ln1_rstd: z(l * bt)?,
            atty: z(l * bt * c)?,
            att: z(l * b * nh * t * t)?,
            attproj: z(l * bt * c)?,
            residual2: z(l * bt * c)?,
            ln2: z(l * bt * c)?,
            ln2_mean: z(l * bt)?,
            ln2_rstd: z(l * bt)?,
            fch: z(l * bt * 4 * c)?,
            fch_gelu: z(l * bt * 4 * c)?,
            fcproj: z(l * bt * c)?,
            residual3: z(l * bt * c)?,
            lnf: z(bt * c)?,
            lnf_mean: z(bt)?,
            lnf_rstd: z(bt)?,
            losses: z(bt)?,
            qkvr: z(l * bt * 3 * c)?,
            output: z(bt * (3 * c).max(nh * t).max(vp))?,
        };
        Ok(Gpt2 {
            cfg,
            b,
            t,
            params: ctx.to_device(params)?,
            grads: z(n)?,
            m: z(n)?,
            v: z(n)?,
            acts,
            bt4c: z(bt * 4 * c)?,
            bt4c2: z(bt * 4 * c)?,
            dpreatt: z(b * nh * t * t)?,
            dresidual: z(bt * c)?,
            inputs: ctx.alloc_zeros::<i32>(bt)?,
            targets: ctx.alloc_zeros::<i32>(bt)?,
            cpu_losses: vec![0.0; bt],
            mean_loss: -1.0,
            opts: Opts::default(),
            ctx,
            stream,
            blas,
            stream2,
            blas2,
            k,
            tf32,
        })
    }

    /// The device's name.
    pub fn device_name(&self) -> Res<String> {
        Ok(self.ctx.device().name()?)
    }

    /// The parameters, copied back.
    pub fn params(&self) -> Res<Vec<f32>> {
        Ok(self.params.to_vec()?)
    }

    /// The parameters' gradients of the last backward pass, copied back.
    pub fn grads(&self) -> Res<Vec<f32>> {
        Ok(self.grads.to_vec()?)
    }

    /// Waits for the queued work (llm.c's `cudaDeviceSynchronize` after each step).
    pub fn synchronize(&self) -> Res<()> {
        Ok(self.stream.synchronize()?)
    }

    /// `gpt2_forward` with targets: the loss of each position, their mean on the host.
    pub fn forward(&mut self, inputs: &[i32], targets: &[i32]) -> Res<()> {
        let (b, t) = (self.b, self.t);
        let Config {
            vocab_size: v,
            padded_vocab_size: vp,
            num_layers: l,
            num_heads: nh,
            channels: c,
            ..
        } = self.cfg;
        for &x in inputs.iter().chain(targets) {
            if !(0..v as i32).contains(&x) {
                return Err(format!("token {x} outside the vocabulary of {v}").into());
            }
        }
        let bt = b * t;
        let btc = bt * c;
        self.inputs.copy_from_host(inputs)?;
        self.targets.copy_from_host(targets)?;
        let s = &self.stream;
        let k = &self.k;
        let a = &mut self.acts;
        let (off, _) = self.cfg.param_offsets();
        let params = &self.params;
        let pv = |i: usize, li: usize, n: usize| params.slice(off[i] + li * n..off[i] + (li + 1) * n);
        let lr = |n: usize, li: usize| li * n..(li + 1) * n;

        // encoder_forward: block 512, a float4 per thread.
        {
            let wte = params
                .slice(off[p::WTE]..off[p::WTE] + vp * c)?
                .cast::<Float4>()?;
            let wpe = params
                .slice(off[p::WPE]..off[p::WPE] + self.cfg.max_seq_len * c)?
                .cast::<Float4>()?;
            let mut out = a.encoded.slice_mut(..)?.cast_mut::<Float4>()?;
            k.encoder_fwd.prepared_async_call(
                ceil_div(btc / 4, 512),
                512u32,
                s,
                &mut out,
                &self.inputs,
                &wte,
                &wpe,
                b as i32,
                t as i32,
                c as i32,
            )?;
        }
        for li in 0..l {
            let residual: DeviceView<'_, f32> = if li == 0 {
                a.encoded.slice(..)?
            } else {
                a.residual3.slice(lr(btc, li - 1))?
            };
            layernorm_forward(
                k,
                s,
                &mut a.ln1.slice_mut(lr(btc, li))?,
                &mut a.ln1_mean.slice_mut(lr(bt, li))?,
                &mut a.ln1_rstd.slice_mut(lr(bt, li))?,
                &residual,
                &pv(p::LN1W, li, c)?,
                &pv(p::LN1B, li, c)?,
                bt,
                c,
            )?;
            matmul_forward(
                k,
                s,
                &mut a.output,
                &a.ln1.slice(lr(btc, li))?,
                &pv(p::QKVW, li, 3 * c * c)?,
                Some(&pv(p::QKVB, li, 3 * c)?),
                bt,
                c,
                3 * c,
            )?;
            attention_forward(
                k,
                &self.blas,
                s,
                a.atty.slice_mut(lr(btc, li))?,
                a.qkvr.slice_mut(lr(3 * btc, li))?,
                a.att.slice_mut(lr(b * nh * t * t, li))?,
                &mut a.output,
                b,
                t,
                c,
                nh,
            )?;
            matmul_forward(
                k,
                s,
                &mut a.attproj.slice_mut(lr(btc, li))?,
                &a.atty.slice(lr(btc, li))?,
                &pv(p::ATTPROJW, li, c * c)?,
                Some(&pv(p::ATTPROJB, li, c)?),
                bt,
                c,
                c,
            )?;
            residual_forward(
                k,
                s,
                &mut a.residual2.slice_mut(lr(btc, li))?,
                &residual,
                &a.attproj.slice(lr(btc, li))?,
                btc,
            )?;
            layernorm_forward(
                k,
                s,
                &mut a.ln2.slice_mut(lr(btc, li))?,
                &mut a.ln2_mean.slice_mut(lr(bt, li))?,
                &mut a.ln2_rstd.slice_mut(lr(bt, li))?,
                &a.residual2.slice(lr(btc, li))?,
                &pv(p::LN2W, li, c)?,
                &pv(p::LN2B, li, c)?,
                bt,
                c,
            )?;
            matmul_forward(
                k,
                s,
                &mut a.fch.slice_mut(lr(4 * btc, li))?,
                &a.ln2.slice(lr(btc, li))?,
                &pv(p::FCW, li, 4 * c * c)?,
                Some(&pv(p::FCB, li, 4 * c)?),
                bt,
                c,
                4 * c,
            )?;
            gelu_forward(
                k,
                s,
                &mut a.fch_gelu.slice_mut(lr(4 * btc, li))?,
                &a.fch.slice(lr(4 * btc, li))?,
                4 * btc,
            )?;
            matmul_forward(
                k,
                s,
                &mut a.fcproj.slice_mut(lr(btc, li))?,
                &a.fch_gelu.slice(lr(4 * btc, li))?,
                &pv(p::FCPROJW, li, 4 * c * c)?,
                Some(&pv(p::FCPROJB, li, c)?),
                bt,
                4 * c,
                c,
            )?;
            residual_forward(
                k,
                s,
                &mut a.residual3.slice_mut(lr(btc, li))?,
                &a.residual2.slice(lr(btc, li))?,
                &a.fcproj.slice(lr(btc, li))?,
                btc,
            )?;
        }
        layernorm_forward(
            k,
            s,
            &mut a.lnf,
            &mut a.lnf_mean,
            &mut a.lnf_rstd,
            &a.residual3.slice(lr(btc, l - 1))?,
            &pv(p::LNFW, 0, c)?,
            &pv(p::LNFB, 0, c)?,
            bt,
            c,
        )?;
        matmul_forward(
            k,
            s,
            &mut a.output,
            &a.lnf,
            &pv(p::WTE, 0, vp * c)?,
            None,
            bt,
            c,
            vp,
        )?;
        // fused_classifier3: block 1024, a block per position; dlosses NULL (1/(B*T) each).
        k.classifier.prepared_async_call(
            bt as u32,
            1024u32,
            s,
            &mut a.output,
            &mut a.losses,
            None,
            None,
            &self.targets,
            b as i32,
            t as i32,
            v as i32,
            vp as i32,
        )?;
        if !self.opts.late_loss {
            self.read_loss()?;
        }
        Ok(())
    }

    /// The losses of the last forward pass back to the host and their mean into
    /// `mean_loss` (waits for the classifier kernel; with
    /// [`Opts::late_loss`] the caller calls it after the step).
    pub fn read_loss(&mut self) -> Res<()> {
        self.acts.losses.copy_to_host(&mut self.cpu_losses[..])?;
        let mut mean = 0.0f32;
        for &x in &self.cpu_losses {
            mean += x;
        }
        self.mean_loss = mean / self.cpu_losses.len() as f32;
        Ok(())
    }

    /// `gpt2_zero_grad` then `gpt2_backward`.
    pub fn zero_grad_backward(&mut self) -> Res<()> {
        let (b, t) = (self.b, self.t);
        let Config {
            padded_vocab_size: vp,
            num_layers: l,
            num_heads: nh,
            channels: c,
            ..
        } = self.cfg;
        let bt = b * t;
        let btc = bt * c;
        let s = &self.stream;
        // gpt2_zero_grad: memsets of the activation gradients and the parameter gradients.
        for buf in [
            &mut self.bt4c,
            &mut self.dpreatt,
            &mut self.dresidual,
            &mut self.grads,
        ] {
            let n = buf.len();
            memset_d32_async(buf, 0, n, s)?;
        }
        if !self.opts.lean_memset {
            let n = self.bt4c2.len();
            memset_d32_async(&mut self.bt4c2, 0, n, s)?;
        }
        let k = &self.k;
        let blas = &self.blas;
        let (wblas, ws) = if self.opts.two_streams {
            (&self.blas2, &self.stream2)
        } else {
            (blas, s)
        };
        let a = &mut self.acts;
        let (off, _) = self.cfg.param_offsets();
        let pv = |i: usize, li: usize, n: usize| self.params.slice(off[i] + li * n..off[i] + (li + 1) * n);
        let lr = |n: usize, li: usize| li * n..(li + 1) * n;
        let mut g = split_mut(self.grads.slice_mut(..)?, &self.cfg.param_sizes())?;

        // The classifier's matmul backward: logit gradients (in `output`) into lnf's gradient
        // (in bt4c) and wte's; no bias.
        matmul_backward(
            k,
            blas,
            wblas,
            ws,
            &mut self.bt4c.slice_mut(..btc)?,
            &mut g[p::WTE],
            None,
            &a.output.slice(..bt * vp)?,
            &a.lnf.slice(..)?,
            &pv(p::WTE, 0, vp * c)?,
            bt,
            c,
            vp,
        )?;
        {
            let (gw, gb) = two(&mut g, p::LNFW, p::LNFB);
            layernorm_backward(
                k,
                s,
                &mut self.dresidual,
                gw,
                gb,
                &self.bt4c.slice(..btc)?,
                &a.residual3.slice(lr(btc, l - 1))?,
                &pv(p::LNFW, 0, c)?,
                &a.lnf_mean,
                &a.lnf_rstd,
                bt,
                c,
            )?;
        }
        for li in (0..l).rev() {
            // dl_btc is lnf (no longer needed), dl_bt4c is bt4c; scratch is output.
            {
                let (gw, gb) = two(&mut g, p::FCPROJW, p::FCPROJB);
                matmul_backward(
                    k,
                    blas,
                    wblas,
                    ws,
                    &mut self.bt4c.slice_mut(..)?,
                    &mut gw.slice_mut(lr(4 * c * c, li))?,
                    Some(&mut gb.slice_mut(lr(c, li))?),
                    &self.dresidual.slice(..)?,
                    &a.fch_gelu.slice(lr(4 * btc, li))?,
                    &pv(p::FCPROJW, li, 4 * c * c)?,
                    bt,
                    4 * c,
                    c,
                )?;
            }
            gelu_backward(
                k,
                s,
                &mut self.bt4c2,
                &a.fch.slice(lr(4 * btc, li))?,
                &self.bt4c,
                4 * btc,
            )?;
            {
                let (gw, gb) = two(&mut g, p::FCW, p::FCB);
                matmul_backward(
                    k,
                    blas,
                    wblas,
                    ws,
                    &mut a.lnf.slice_mut(..)?,
                    &mut gw.slice_mut(lr(4 * c * c, li))?,
                    Some(&mut gb.slice_mut(lr(4 * c, li))?),
                    &self.bt4c2.slice(..)?,
                    &a.ln2.slice(lr(btc, li))?,
                    &pv(p::FCW, li, 4 * c * c)?,
                    bt,
                    c,
                    4 * c,
                )?;
            }
            {
                let (gw, gb) = two(&mut g, p::LN2W, p::LN2B);
                layernorm_backward(
                    k,
                    s,
                    &mut self.dresidual,
                    &mut gw.slice_mut(lr(c, li))?,
                    &mut gb.slice_mut(lr(c, li))?,
                    &a.lnf,
                    &a.residual2.slice(lr(btc, li))?,
                    &pv(p::LN2W, li, c)?,
                    &a.ln2_mean.slice(lr(bt, li))?,
                    &a.ln2_rstd.slice(lr(bt, li))?,
                    bt,
                    c,
                )?;
            }
            {
                let (gw, gb) = two(&mut g, p::ATTPROJW, p::ATTPROJB);
                matmul_backward(
                    k,
                    blas,
                    wblas,
                    ws,
                    &mut a.lnf.slice_mut(..)?,
                    &mut gw.slice_mut(lr(c * c, li))?,
                    Some(&mut gb.slice_mut(lr(c, li))?),
                    &self.dresidual.slice(..)?,
                    &a.atty.slice(lr(btc, li))?,
                    &pv(p::ATTPROJW, li, c * c)?,
                    bt,
                    c,
                    c,
                )?;
            }
            // attention backward: dinp = bt4c, dqkvr = this layer's fch (buffer_b), dpreatt,
            // datt = output (scratch), scratch = this layer's atty (buffer_a).
            attention_backward(
                k,
                blas,
                s,
                &mut self.bt4c.slice_mut(..3 * btc)?,
                a.fch.slice_mut(lr(4 * btc, li))?.into_slice(..3 * btc)?,
                &mut self.dpreatt,
                &mut a.output.slice_mut(..b * nh * t * t)?,
                &mut a.atty.slice_mut(lr(btc, li))?,
                &a.lnf,
                &a.qkvr.slice(lr(3 * btc, li))?,
                &a.att.slice(lr(b * nh * t * t, li))?,
                b,
                t,
                c,
                nh,
            )?;
            {
                let (gw, gb) = two(&mut g, p::QKVW, p::QKVB);
                matmul_backward(
                    k,
                    blas,
                    wblas,
                    ws,
                    &mut a.lnf.slice_mut(..)?,
                    &mut gw.slice_mut(lr(3 * c * c, li))?,
                    Some(&mut gb.slice_mut(lr(3 * c, li))?),
                    &self.bt4c.slice(..3 * btc)?,
                    &a.ln1.slice(lr(btc, li))?,
                    &pv(p::QKVW, li, 3 * c * c)?,
                    bt,
                    c,
                    3 * c,
                )?;
            }
            {
                let residual: DeviceView<'_, f32> = if li == 0 {
                    a.encoded.slice(..)?
                } else {
                    a.residual3.slice(lr(btc, li - 1))?
                };
                let (gw, gb) = two(&mut g, p::LN1W, p::LN1B);
                layernorm_backward(
                    k,
                    s,
                    &mut self.dresidual,
                    &mut gw.slice_mut(lr(c, li))?,
                    &mut gb.slice_mut(lr(c, li))?,
                    &a.lnf,
                    &residual,
                    &pv(p::LN1W, li, c)?,
                    &a.ln1_mean.slice(lr(bt, li))?,
                    &a.ln1_rstd.slice(lr(bt, li))?,
                    bt,
                    c,
                )?;
            }
        }
        // encoder_backward: block 256, atomics into wte's and wpe's gradients.
        let (gwte, gwpe) = two(&mut g, p::WTE, p::WPE);
        k.encoder_bwd.prepared_async_call(
            ceil_div(btc, 256),
            256u32,
            s,
            gwte,
            gwpe,
            &self.dresidual,
            &self.inputs,
            b as i32,
            t as i32,
            c as i32,
        )?;
        Ok(())
    }

    /// `gpt2_update`: AdamW over all parameters in one launch (block 512), step `t` from 1.
    pub fn update(&mut self, lr: f32, beta1: f32, beta2: f32, eps: f32, wd: f32, t: i32) -> Res<()> {
        let n = self.params.len();
        let beta1_correction = 1.0f32 - beta1.powf(t as f32);
        let beta2_correction = 1.0f32 - beta2.powf(t as f32);
        self.k.adamw.prepared_async_call(
            ceil_div(n, 512),
            512u32,
            &self.stream,
            &mut self.params,
            &self.grads,
            &mut self.m,
            &mut self.v,
            n as i64,
            lr,
            beta1,
            beta2,
            beta1_correction,
            beta2_correction,
            eps,
            wd,
        )?;
        Ok(())
    }
}

/// Two distinct views of `g` (`i < j`), both writable.
fn two<'g, 'a>(
    g: &'g mut [DeviceViewMut<'a, f32>],
    i: usize,
    j: usize,
) -> (&'g mut DeviceViewMut<'a, f32>, &'g mut DeviceViewMut<'a, f32>) {
    let (x, y) = g.split_at_mut(j);
    (&mut x[i], &mut y[0])
}

#[allow(clippy::too_many_arguments)]
fn layernorm_forward(
    k: &Kernels,
    s: &Stream,
    out: &mut impl DeviceWrite<f32>,
    mean: &mut impl DeviceWrite<f32>,
    rstd: &mut impl DeviceWrite<f32>,
    inp: &impl DeviceRead<f32>,
    w: &impl DeviceRead<f32>,
    bias: &impl DeviceRead<f32>,
    n: usize,
    c: usize,
) -> Res<()> {
    k.ln_fwd.prepared_async_call(
        ceil_div(n * 32, 512),
        512u32,
        s,
        out,
        mean,
        rstd,
        inp,
        w,
        bias,
        n as i32,
        c as i32,
    )?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn matmul_forward(
    k: &Kernels,
    s: &Stream,
    out: &mut impl DeviceWrite<f32>,
    inp: &impl DeviceRead<f32>,
    w: &impl DeviceRead<f32>,
    bias: Option<&DeviceView<'_, f32>>,
    bt: usize,
    c: usize,
    oc: usize,
) -> Res<()> {
    let bias = bias.map(|b| b as &dyn DeviceRead<f32>);
    k.matmul_fwd.prepared_async_call(
        (ceil_div(bt, 128), ceil_div(oc, 128)),
        (16u32, 16u32),
        s,
        out,
        inp,
        w,
        bias,
        c as i32,
        oc as i32,
    )?;
    Ok(())
}

fn residual_forward(
    k: &Kernels,
    s: &Stream,
    out: &mut impl DeviceWrite<f32>,
    a: &impl DeviceRead<f32>,
    b: &impl DeviceRead<f32>,
    n: usize,
) -> Res<()> {
    k.residual_fwd
        .prepared_async_call(ceil_div(n, 256), 256u32, s, out, a, b, n as i32)?;
    Ok(())
}

fn gelu_forward(
    k: &Kernels,
    s: &Stream,
    out: &mut impl DeviceWrite<f32>,
    inp: &impl DeviceRead<f32>,
    n: usize,
) -> Res<()> {
    k.gelu_fwd
        .prepared_async_call(ceil_div(n, 128), 128u32, s, out, inp, n as i32)?;
    Ok(())
}

fn gelu_backward(
    k: &Kernels,
    s: &Stream,
    dinp: &mut impl DeviceWrite<f32>,
    inp: &impl DeviceRead<f32>,
    dout: &impl DeviceRead<f32>,
    n: usize,
) -> Res<()> {
    k.gelu_bwd
        .prepared_async_call(ceil_div(n, 128), 128u32, s, dinp, inp, dout, n as i32)?;
    Ok(())
}

/// cuBLAS column-major: `C (m x n) = alpha op(A) op(B) + beta C`.
#[allow(clippy::too_many_arguments)]
fn sgemm_cfg(
    ta: bool,
    tb: bool,
    m: usize,
    n: usize,
    kk: usize,
    lda: usize,
    ldb: usize,
    beta: f32,
    ldc: usize,
) -> GemmConfig<f32> {
    let op = |t: bool| if t { CUBLAS_OP_T } else { CUBLAS_OP_N };
    GemmConfig {
        transa: op(ta),
        transb: op(tb),
        m: m as i32,
        n: n as i32,
        k: kk as i32,
        alpha: 1.0,
        lda: lda as i32,
        ldb: ldb as i32,
        beta,
        ldc: ldc as i32,
    }
}

/// `cublasSgemmStridedBatched` as llm.c calls it (alpha 1).
#[allow(clippy::too_many_arguments)]
fn batched_cfg(
    ta: bool,
    tb: bool,
    m: usize,
    n: usize,
    kk: usize,
    lda: usize,
    sa: usize,
    ldb: usize,
    sb: usize,
    ldc: usize,
    sc: usize,
    batch: usize,
) -> StridedBatchedConfig<f32> {
    StridedBatchedConfig {
        gemm: sgemm_cfg(ta, tb, m, n, kk, lda, ldb, 0.0, ldc),
        batch_size: batch as i32,
        stride_a: sa as i64,
        stride_b: sb as i64,
        stride_c: sc as i64,
    }
}

#[allow(clippy::too_many_arguments)]
fn matmul_backward(
    k: &Kernels,
    blas: &CudaBlas,
    wblas: &CudaBlas,
    ws: &Stream,
    dinp: &mut DeviceViewMut<'_, f32>,
    dweight: &mut DeviceViewMut<'_, f32>,
    dbias: Option<&mut DeviceViewMut<'_, f32>>,
    dout: &DeviceView<'_, f32>,
    inp: &DeviceView<'_, f32>,
    weight: &DeviceView<'_, f32>,
    bt: usize,
    c: usize,
    oc: usize,
) -> Res<()> {
    // dinp = weight^T-ish product (=, beta 0) on `blas`'s stream; dweight += (beta 1).
    gemm(
        blas,
        sgemm_cfg(false, false, c, bt, oc, c, oc, 0.0, c),
        weight,
        dout,
        dinp,
    )?;
    // dweight and dbias on `wblas`'s stream `ws` (the first stream unless `Opts::two_streams`).
    gemm(
        wblas,
        sgemm_cfg(false, true, c, oc, bt, c, oc, 1.0, c),
        inp,
        dout,
        dweight,
    )?;
    if let Some(dbias) = dbias {
        // block 1024, OC/32 blocks, 1024 floats of shared memory.
        k.bias_bwd.prepared_async_call_shared(
            (oc / 32) as u32,
            1024u32,
            ws,
            1024 * 4,
            dbias,
            dout,
            1,
            bt as i32,
            oc as i32,
        )?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn layernorm_backward(
    k: &Kernels,
    s: &Stream,
    dinp: &mut impl DeviceWrite<f32>,
    dw: &mut impl DeviceWrite<f32>,
    db: &mut impl DeviceWrite<f32>,
    dout: &impl DeviceRead<f32>,
    inp: &impl DeviceRead<f32>,
    w: &impl DeviceRead<f32>,
    mean: &impl DeviceRead<f32>,
    rstd: &impl DeviceRead<f32>,
    bt: usize,
    c: usize,
) -> Res<()> {
    // block 512, a warp per row, 2 C floats of shared memory; B and T passed as 1 and B*T
    // (the kernel only uses their product and b*T+t, which is the row either way).
    k.ln_bwd.prepared_async_call_shared(
        ceil_div(32 * bt, 512),
        512u32,
        s,
        (2 * c * 4) as u32,
        dinp,
        dw,
        db,
        dout,
        inp,
        w,
        mean,
        rstd,
        1,
        bt as i32,
        c as i32,
    )?;
    Ok(())
}

/// `attention_forward`: permute, K^T Q by cuBLAS (into the scratch `inp`), softmax, V att
/// (into `inp` again), unpermute into `out`.
#[allow(clippy::too_many_arguments)]
fn attention_forward(
    k: &Kernels,
    blas: &CudaBlas,
    s: &Stream,
    mut out: DeviceViewMut<'_, f32>,
    qkvr: DeviceViewMut<'_, f32>,
    mut att: DeviceViewMut<'_, f32>,
    inp: &mut DeviceBuffer<f32>,
    b: usize,
    t: usize,
    c: usize,
    nh: usize,
) -> Res<()> {
    let hs = c / nh;
    let btc = b * t * c;
    let (mut q, rest) = qkvr.split_at_mut(btc)?;
    let (mut kk, mut v) = rest.split_at_mut(btc)?;
    let (b_, t_, nh_, hs_) = (b as i32, t as i32, nh as i32, hs as i32);
    k.permute.prepared_async_call(
        ceil_div(b * nh * t * hs, 256),
        256u32,
        s,
        &mut q,
        &mut kk,
        &mut v,
        &*inp,
        b_,
        t_,
        nh_,
        hs_,
    )?;
    let (q, kk, v) = (q.device_view(), kk.device_view(), v.device_view());
    // preatt = inp: (T x T) per head.
    gemm_strided_batched(
        blas,
        batched_cfg(true, false, t, t, hs, hs, t * hs, hs, t * hs, t, t * t, b * nh),
        &kk,
        &q,
        inp,
    )?;
    // `float scale = 1.0 / sqrtf(HS);`: a double division rounded to float.
    let scale = (1.0f64 / (hs as f32).sqrt() as f64) as f32;
    k.softmax_fwd.prepared_async_call(
        ceil_div(b * nh * t * 32, 256),
        256u32,
        s,
        &mut att,
        scale,
        &*inp,
        (b * nh) as i32,
        t_,
    )?;
    let att = att.device_view();
    // vaccum = inp: (HS x T) per head.
    gemm_strided_batched(
        blas,
        batched_cfg(false, false, hs, t, t, hs, t * hs, t, t * t, hs, t * hs, b * nh),
        &v,
        &att,
        inp,
    )?;
    k.unpermute
        .prepared_async_call(ceil_div(btc, 256), 256u32, s, &*inp, &mut out, b_, t_, nh_, hs_)?;
    Ok(())
}

/// `attention_backward` (its cuBLAS calls as llm.c makes them).
#[allow(clippy::too_many_arguments)]
fn attention_backward(
    k: &Kernels,
    blas: &CudaBlas,
    s: &Stream,
    dinp: &mut DeviceViewMut<'_, f32>,
    dqkvr: DeviceViewMut<'_, f32>,
    dpreatt: &mut DeviceBuffer<f32>,
    datt: &mut DeviceViewMut<'_, f32>,
    scratch: &mut DeviceViewMut<'_, f32>,
    dout: &DeviceBuffer<f32>,
    qkvr: &DeviceView<'_, f32>,
    att: &DeviceView<'_, f32>,
    b: usize,
    t: usize,
    c: usize,
    nh: usize,
) -> Res<()> {
    let hs = c / nh;
    let btc = b * t * c;
    let (b_, t_, nh_, hs_) = (b as i32, t as i32, nh as i32, hs as i32);
    let (q, kk, v) = (
        qkvr.slice(..btc)?,
        qkvr.slice(btc..2 * btc)?,
        qkvr.slice(2 * btc..3 * btc)?,
    );
    let (mut dq, rest) = dqkvr.split_at_mut(btc)?;
    let (mut dk, mut dv) = rest.split_at_mut(btc)?;
    k.unpermute_bwd
        .prepared_async_call(ceil_div(btc, 256), 256u32, s, scratch, dout, b_, t_, nh_, hs_)?;
    let sc = scratch.device_view();
    // datt = V^T-ish: (T x T)
    gemm_strided_batched(
        blas,
        batched_cfg(true, false, t, t, hs, hs, t * hs, hs, t * hs, t, t * t, b * nh),
        &v,
        &sc,
        datt,
    )?;
    // dv
    gemm_strided_batched(
        blas,
        batched_cfg(false, true, hs, t, t, hs, t * hs, t, t * t, hs, t * hs, b * nh),
        &sc,
        att,
        &mut dv,
    )?;
    let scale = 1.0f32 / (hs as f32).sqrt();
    k.softmax_bwd.prepared_async_call(
        ((t / 4) as u32, (b * nh) as u32),
        256u32,
        s,
        dpreatt,
        &*datt,
        att,
        b_,
        t_,
        c as i32,
        scale,
    )?;
    // dq
    gemm_strided_batched(
        blas,
        batched_cfg(false, false, hs, t, t, hs, t * hs, t, t * t, hs, t * hs, b * nh),
        &kk,
        &*dpreatt,
        &mut dq,
    )?;
    // dk
    gemm_strided_batched(
        blas,
        batched_cfg(false, true, hs, t, t, hs, t * hs, t, t * t, hs, t * hs, b * nh),
        &q,
        &*dpreatt,
        &mut dk,
    )?;
    k.permute_bwd.prepared_async_call(
        ceil_div(b * nh * t * hs, 256),
        256u32,
        s,
        dinp,
        &dq,
        &dk,
        &dv,
        b_,
        t_,
        nh_,
        hs_,
    )?;
    Ok(())
}
