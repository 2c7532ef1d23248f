//! `--graph on`: the step (forward, zero-grad and backward, AdamW) captured once into one CUDA
//! graph and launched once per step. The same kernels with the same grids and the same cuBLAS
//! products as the port's path in `gpu.rs`, written a second time against graph tokens (one
//! `GraphBuffer` per allocation, narrowed per node), as `tests/cudarc/graph_gemm.rs` does.
//!
//! A graph borrows its buffers for its whole life, so nothing may write its inputs or read its
//! outputs between launches. Hence, unlike the port's path: every step's inputs and targets are
//! copied to the device before the first launch (one buffer of all steps'), each launch points
//! the three nodes that read them at its step's range (`update_node`), and the classifier
//! writes each step's losses into a range of one buffer of all steps', read back after the last
//! launch. AdamW is in the graph: its bias corrections (`1 - beta^t`, by-value arguments) are set
//! per launch by updating that node's parameters. The first step runs the port's path (module
//! loading, cuBLAS's first calls); the graph is captured after it. `Opts::two_streams` and
//! `Opts::late_loss` do not apply (one chain of nodes; losses read at the end).

use std::ops::Range;
use std::time::Instant;

use gpu_runtime::launch::{
    Capture, GraphBuffer, GraphExec, GraphInput, GraphRead, GraphSliceMut, GraphWrite, NodeId,
};
use gpu_runtime::types::Float4;

use super::{batched_cfg, ceil_div, sgemm_cfg, Gpt2, Kernels};
use crate::llmc::{p, Res};

/// AdamW's constants, as `main.rs` passes them to [`Gpt2::update`].
const BETA1: f32 = 0.9;
const BETA2: f32 = 0.999;
const EPS: f32 = 1e-8;
const WEIGHT_DECAY: f32 = 0.0;

/// One token per allocation the step touches.
struct Toks<'a> {
    params: GraphBuffer<'a, f32>,
    grads: GraphBuffer<'a, f32>,
    m: GraphBuffer<'a, f32>,
    v: GraphBuffer<'a, f32>,
    encoded: GraphBuffer<'a, f32>,
    ln1: GraphBuffer<'a, f32>,
    ln1_mean: GraphBuffer<'a, f32>,
    ln1_rstd: GraphBuffer<'a, f32>,
    atty: GraphBuffer<'a, f32>,
    att: GraphBuffer<'a, f32>,
    attproj: GraphBuffer<'a, f32>,
    residual2: GraphBuffer<'a, f32>,
    ln2: GraphBuffer<'a, f32>,
    ln2_mean: GraphBuffer<'a, f32>,
    ln2_rstd: GraphBuffer<'a, f32>,
    fch: GraphBuffer<'a, f32>,
    fch_gelu: GraphBuffer<'a, f32>,
    fcproj: GraphBuffer<'a, f32>,
    residual3: GraphBuffer<'a, f32>,
    lnf: GraphBuffer<'a, f32>,
    lnf_mean: GraphBuffer<'a, f32>,
    lnf_rstd: GraphBuffer<'a, f32>,
    qkvr: GraphBuffer<'a, f32>,
    output: GraphBuffer<'a, f32>,
    bt4c: GraphBuffer<'a, f32>,
    bt4c2: GraphBuffer<'a, f32>,
    dpreatt: GraphBuffer<'a, f32>,
    dresidual: GraphBuffer<'a, f32>,
    /// Every graph step's losses, B*T each.
    losses: GraphBuffer<'a, f32>,
    /// cuBLAS's workspace for the captured products.
    ws: GraphBuffer<'a, u8>,
}

/// The shape of the step.
#[derive(Clone, Copy)]
struct Dims {
    b: usize,
    t: usize,
    v: usize,
    vp: usize,
    l: usize,
    nh: usize,
    c: usize,
    max_t: usize,
    lean_memset: bool,
}

/// The nodes whose arguments change from step to step.
#[derive(Clone, Copy)]
struct Varying {
    encoder_fwd: NodeId,
    classifier: NodeId,
    encoder_bwd: NodeId,
    adamw: NodeId,
}

/// Parameter tensor `i`'s layer `li` (`n` floats per layer) inside the parameter buffer.
fn pr(off: &[usize; 16], i: usize, li: usize, n: usize) -> Range<usize> {
    off[i] + li * n..off[i] + (li + 1) * n
}

/// Layer `li`'s range of a buffer of `n` floats per layer.
fn layer(n: usize, li: usize) -> Range<usize> {
    li * n..(li + 1) * n
}

/// Two ranges of one buffer (`x` before `y`), both written by one node.
fn two<'s, 'a>(
    g: &'s mut GraphBuffer<'a, f32>,
    x: Range<usize>,
    y: Range<usize>,
) -> Res<(GraphSliceMut<'s, 'a, f32>, GraphSliceMut<'s, 'a, f32>)> {
    let (lo, hi) = g.slice_mut(x.start..y.end)?.split_at_mut(y.start - x.start)?;
    let (x, _) = lo.split_at_mut(x.len())?;
    Ok((x, hi))
}

impl Gpt2 {
    /// Trains on `batches` (inputs, targets; one per step) with the step as one CUDA graph
    /// after a first step on the port's path; the losses and the step times (ms) of each step.
    pub fn train_graph(&mut self, batches: &[(Vec<i32>, Vec<i32>)], lr: f32) -> Res<(Vec<f32>, Vec<f64>)> {
        let (mut losses, mut ms) = (Vec::new(), Vec::new());
        let Some(((in0, tg0), rest)) = batches.split_first() else {
            return Ok((losses, ms));
        };
        let start = Instant::now();
        self.forward(in0, tg0)?;
        self.zero_grad_backward()?;
        self.update(lr, BETA1, BETA2, EPS, WEIGHT_DECAY, 1)?;
        self.synchronize()?;
        self.read_loss()?;
        ms.push(start.elapsed().as_secs_f64() * 1e3);
        losses.push(self.mean_loss);
        if rest.is_empty() {
            return Ok((losses, ms));
        }
        let (b, t, cfg) = (self.b, self.t, self.cfg);
        let bt = b * t;
        let (mut all_in, mut all_tg) = (
            Vec::with_capacity(rest.len() * bt),
            Vec::with_capacity(rest.len() * bt),
        );
        for (i, tg) in rest {
            if i.len() != bt || tg.len() != bt {
                return Err(format!(
                    "a batch of {} inputs and {} targets, not B*T={bt}",
                    i.len(),
                    tg.len()
                )
                .into());
            }
            for &x in i.iter().chain(tg) {
                if !(0..cfg.vocab_size as i32).contains(&x) {
                    return Err(format!("token {x} outside the vocabulary of {}", cfg.vocab_size).into());
                }
            }
            all_in.extend_from_slice(i);
            all_tg.extend_from_slice(tg);
        }
        let (in_d, tg_d) = (self.ctx.to_device(&all_in)?, self.ctx.to_device(&all_tg)?);
        let mut loss_d = self.ctx.alloc_zeros::<f32>(rest.len() * bt)?;
        // 32 MiB: NVIDIA's suggestion for Hopper (one workspace serves every product).
        let mut ws = self.ctx.alloc_zeros::<u8>(32 << 20)?;
        let d = Dims {
            b,
            t,
            v: cfg.vocab_size,
            vp: cfg.padded_vocab_size,
            l: cfg.num_layers,
            nh: cfg.num_heads,
            c: cfg.channels,
            max_t: cfg.max_seq_len,
            lean_memset: self.opts.lean_memset,
        };
        let (off, _) = cfg.param_offsets();
        {
            let (ins, tgs) = (GraphInput::new(&in_d), GraphInput::new(&tg_d));
            let a = &mut self.acts;
            let mut tk = Toks {
                params: GraphBuffer::new(&mut self.params),
                grads: GraphBuffer::new(&mut self.grads),
                m: GraphBuffer::new(&mut self.m),
                v: GraphBuffer::new(&mut self.v),
                encoded: GraphBuffer::new(&mut a.encoded),
                ln1: GraphBuffer::new(&mut a.ln1),
                ln1_mean: GraphBuffer::new(&mut a.ln1_mean),
                ln1_rstd: GraphBuffer::new(&mut a.ln1_rstd),
                atty: GraphBuffer::new(&mut a.atty),
                att: GraphBuffer::new(&mut a.att),
                attproj: GraphBuffer::new(&mut a.attproj),
                residual2: GraphBuffer::new(&mut a.residual2),
                ln2: GraphBuffer::new(&mut a.ln2),
                ln2_mean: GraphBuffer::new(&mut a.ln2_mean),
                ln2_rstd: GraphBuffer::new(&mut a.ln2_rstd),
                fch: GraphBuffer::new(&mut a.fch),
                fch_gelu: GraphBuffer::new(&mut a.fch_gelu),
                fcproj: GraphBuffer::new(&mut a.fcproj),
                residual3: GraphBuffer::new(&mut a.residual3),
                lnf: GraphBuffer::new(&mut a.lnf),
                lnf_mean: GraphBuffer::new(&mut a.lnf_mean),
                lnf_rstd: GraphBuffer::new(&mut a.lnf_rstd),
                qkvr: GraphBuffer::new(&mut a.qkvr),
                output: GraphBuffer::new(&mut a.output),
                bt4c: GraphBuffer::new(&mut self.bt4c),
                bt4c2: GraphBuffer::new(&mut self.bt4c2),
                dpreatt: GraphBuffer::new(&mut self.dpreatt),
                dresidual: GraphBuffer::new(&mut self.dresidual),
                losses: GraphBuffer::new(&mut loss_d),
                ws: GraphBuffer::new(&mut ws),
            };
            let mut cap = Capture::begin(&self.ctx)?;
            cap.set_blas_tf32(self.tf32)?;
            let (in0, tg0) = (ins.slice(..bt)?, tgs.slice(..bt)?);
            let enc = encoder_forward(&mut cap, &self.k, &mut tk, d, &off, &in0)?;
            let classifier = forward_layers(&mut cap, &self.k, &mut tk, d, &off, &tg0)?;
            let encoder_bwd = backward(&mut cap, &self.k, &mut tk, d, &off, &in0)?;
            let n = tk.params.len();
            let adamw = self.k.adamw.capture(
                &mut cap,
                ceil_div(n, 512),
                512u32,
                &mut tk.params,
                &tk.grads,
                &mut tk.m,
                &mut tk.v,
                n as i64,
                lr,
                BETA1,
                BETA2,
                1.0 - BETA1,
                1.0 - BETA2,
                EPS,
                WEIGHT_DECAY,
            )?;
            let nodes = Varying {
                encoder_fwd: enc,
                classifier,
                encoder_bwd,
                adamw,
            };
            let mut exec = cap.end()?.instantiate()?;
            for (j, step) in (0..rest.len()).zip(2i32..) {
                let start = Instant::now();
                let (inp, tg) = (ins.slice(layer(bt, j))?, tgs.slice(layer(bt, j))?);
                update(
                    &mut exec, &self.k, &mut tk, d, &off, nodes, &inp, &tg, j, lr, step,
                )?;
                exec.launch(&self.stream)?;
                self.stream.synchronize()?;
                ms.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        let host = loss_d.to_vec()?;
        for chunk in host.chunks(bt) {
            // As `read_loss` sums them.
            let mut mean = 0.0f32;
            for &x in chunk {
                mean += x;
            }
            self.mean_loss = mean / chunk.len() as f32;
            losses.push(self.mean_loss);
        }
        Ok((losses, ms))
    }
}

/// `encoder_forward` (block 512, a float4 per thread), reading `inp`.
fn encoder_forward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    tk: &mut Toks<'a>,
    d: Dims,
    off: &[usize; 16],
    inp: &GraphInput<'a, i32>,
) -> Res<NodeId> {
    let (b, t, c) = (d.b, d.t, d.c);
    let wte = tk.params.slice(pr(off, p::WTE, 0, d.vp * c))?.cast::<Float4>()?;
    let wpe = tk
        .params
        .slice(pr(off, p::WPE, 0, d.max_t * c))?
        .cast::<Float4>()?;
    let mut out = tk.encoded.slice_mut(..)?.cast_mut::<Float4>()?;
    let grid = ceil_div(b * t * c / 4, 512);
    Ok(k.encoder_fwd.capture(
        cap, grid, 512u32, &mut out, inp, &wte, &wpe, b as i32, t as i32, c as i32,
    )?)
}

#[allow(clippy::too_many_arguments)]
fn layernorm_forward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    out: &mut impl GraphWrite<'a, f32>,
    mean: &mut impl GraphWrite<'a, f32>,
    rstd: &mut impl GraphWrite<'a, f32>,
    inp: &impl GraphRead<'a, f32>,
    w: &impl GraphRead<'a, f32>,
    bias: &impl GraphRead<'a, f32>,
    n: usize,
    c: usize,
) -> Res<()> {
    k.ln_fwd.capture(
        cap,
        ceil_div(n * 32, 512),
        512u32,
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
fn matmul_forward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    out: &mut impl GraphWrite<'a, f32>,
    inp: &impl GraphRead<'a, f32>,
    w: &impl GraphRead<'a, f32>,
    bias: Option<&dyn GraphRead<'a, f32>>,
    bt: usize,
    c: usize,
    oc: usize,
) -> Res<()> {
    k.matmul_fwd.capture(
        cap,
        (ceil_div(bt, 128), ceil_div(oc, 128)),
        (16u32, 16u32),
        out,
        inp,
        w,
        bias,
        c as i32,
        oc as i32,
    )?;
    Ok(())
}

/// The layers, lnf, the classifier's matmul and the fused classifier (reading `tg`, writing
/// the first step's range of the losses); returns the classifier's node.
fn forward_layers<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    tk: &mut Toks<'a>,
    d: Dims,
    off: &[usize; 16],
    tg: &GraphInput<'a, i32>,
) -> Res<NodeId> {
    let Dims {
        b, t, v, vp, l, c, ..
    } = d;
    let (bt, btc) = (b * t, b * t * c);
    for li in 0..l {
        let pv = |i: usize, n: usize| tk.params.slice(pr(off, i, li, n));
        {
            let residual = if li == 0 {
                tk.encoded.slice(..)?
            } else {
                tk.residual3.slice(layer(btc, li - 1))?
            };
            layernorm_forward(
                cap,
                k,
                &mut tk.ln1.slice_mut(layer(btc, li))?,
                &mut tk.ln1_mean.slice_mut(layer(bt, li))?,
                &mut tk.ln1_rstd.slice_mut(layer(bt, li))?,
                &residual,
                &pv(p::LN1W, c)?,
                &pv(p::LN1B, c)?,
                bt,
                c,
            )?;
        }
        matmul_forward(
            cap,
            k,
            &mut tk.output,
            &tk.ln1.slice(layer(btc, li))?,
            &pv(p::QKVW, 3 * c * c)?,
            Some(&pv(p::QKVB, 3 * c)?),
            bt,
            c,
            3 * c,
        )?;
        attention_forward(cap, k, tk, li, d)?;
        let pv = |i: usize, n: usize| tk.params.slice(pr(off, i, li, n));
        matmul_forward(
            cap,
            k,
            &mut tk.attproj.slice_mut(layer(btc, li))?,
            &tk.atty.slice(layer(btc, li))?,
            &pv(p::ATTPROJW, c * c)?,
            Some(&pv(p::ATTPROJB, c)?),
            bt,
            c,
            c,
        )?;
        {
            let residual = if li == 0 {
                tk.encoded.slice(..)?
            } else {
                tk.residual3.slice(layer(btc, li - 1))?
            };
            k.residual_fwd.capture(
                cap,
                ceil_div(btc, 256),
                256u32,
                &mut tk.residual2.slice_mut(layer(btc, li))?,
                &residual,
                &tk.attproj.slice(layer(btc, li))?,
                btc as i32,
            )?;
        }
        layernorm_forward(
            cap,
            k,
            &mut tk.ln2.slice_mut(layer(btc, li))?,
            &mut tk.ln2_mean.slice_mut(layer(bt, li))?,
            &mut tk.ln2_rstd.slice_mut(layer(bt, li))?,
            &tk.residual2.slice(layer(btc, li))?,
            &pv(p::LN2W, c)?,
            &pv(p::LN2B, c)?,
            bt,
            c,
        )?;
        matmul_forward(
            cap,
            k,
            &mut tk.fch.slice_mut(layer(4 * btc, li))?,
            &tk.ln2.slice(layer(btc, li))?,
            &pv(p::FCW, 4 * c * c)?,
            Some(&pv(p::FCB, 4 * c)?),
            bt,
            c,
            4 * c,
        )?;
        k.gelu_fwd.capture(
            cap,
            ceil_div(4 * btc, 128),
            128u32,
            &mut tk.fch_gelu.slice_mut(layer(4 * btc, li))?,
            &tk.fch.slice(layer(4 * btc, li))?,
            (4 * btc) as i32,
        )?;
        matmul_forward(
            cap,
            k,
            &mut tk.fcproj.slice_mut(layer(btc, li))?,
            &tk.fch_gelu.slice(layer(4 * btc, li))?,
            &pv(p::FCPROJW, 4 * c * c)?,
            Some(&pv(p::FCPROJB, c)?),
            bt,
            4 * c,
            c,
        )?;
        k.residual_fwd.capture(
            cap,
            ceil_div(btc, 256),
            256u32,
            &mut tk.residual3.slice_mut(layer(btc, li))?,
            &tk.residual2.slice(layer(btc, li))?,
            &tk.fcproj.slice(layer(btc, li))?,
            btc as i32,
        )?;
    }
    layernorm_forward(
        cap,
        k,
        &mut tk.lnf,
        &mut tk.lnf_mean,
        &mut tk.lnf_rstd,
        &tk.residual3.slice(layer(btc, l - 1))?,
        &tk.params.slice(pr(off, p::LNFW, 0, c))?,
        &tk.params.slice(pr(off, p::LNFB, 0, c))?,
        bt,
        c,
    )?;
    matmul_forward(
        cap,
        k,
        &mut tk.output,
        &tk.lnf,
        &tk.params.slice(pr(off, p::WTE, 0, vp * c))?,
        None,
        bt,
        c,
        vp,
    )?;
    // fused_classifier3: block 1024, a block per position; dlosses NULL (1/(B*T) each).
    Ok(k.classifier.capture(
        cap,
        bt as u32,
        1024u32,
        &mut tk.output,
        &mut tk.losses.slice_mut(..bt)?,
        None,
        None,
        tg,
        b as i32,
        t as i32,
        v as i32,
        vp as i32,
    )?)
}

/// `attention_forward` of layer `li`: permute, K^T Q (into `output`), softmax, V att (into
/// `output` again), unpermute into `atty`.
fn attention_forward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    tk: &mut Toks<'a>,
    li: usize,
    d: Dims,
) -> Res<()> {
    let Dims { b, t, nh, c, .. } = d;
    let hs = c / nh;
    let btc = b * t * c;
    let (b_, t_, nh_, hs_) = (b as i32, t as i32, nh as i32, hs as i32);
    let qkvr = tk.qkvr.slice_mut(layer(3 * btc, li))?;
    let (mut q, rest) = qkvr.split_at_mut(btc)?;
    let (mut kk, mut v) = rest.split_at_mut(btc)?;
    k.permute.capture(
        cap,
        ceil_div(b * nh * t * hs, 256),
        256u32,
        &mut q,
        &mut kk,
        &mut v,
        &tk.output,
        b_,
        t_,
        nh_,
        hs_,
    )?;
    cap.gemm_strided_batched(
        batched_cfg(true, false, t, t, hs, hs, t * hs, hs, t * hs, t, t * t, b * nh),
        &kk,
        &q,
        &mut tk.output,
        &mut tk.ws,
    )?;
    // `float scale = 1.0 / sqrtf(HS);`: a double division rounded to float.
    let scale = (1.0f64 / (hs as f32).sqrt() as f64) as f32;
    let mut att = tk.att.slice_mut(layer(b * nh * t * t, li))?;
    k.softmax_fwd.capture(
        cap,
        ceil_div(b * nh * t * 32, 256),
        256u32,
        &mut att,
        scale,
        &tk.output,
        (b * nh) as i32,
        t_,
    )?;
    cap.gemm_strided_batched(
        batched_cfg(false, false, hs, t, t, hs, t * hs, t, t * t, hs, t * hs, b * nh),
        &v,
        &att,
        &mut tk.output,
        &mut tk.ws,
    )?;
    k.unpermute.capture(
        cap,
        ceil_div(btc, 256),
        256u32,
        &tk.output,
        &mut tk.atty.slice_mut(layer(btc, li))?,
        b_,
        t_,
        nh_,
        hs_,
    )?;
    Ok(())
}

/// `matmul_backward`: dinp (=), dweight (+=) by cuBLAS, dbias by llm.c's kernel.
#[allow(clippy::too_many_arguments)]
fn matmul_backward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    ws: &mut GraphBuffer<'a, u8>,
    dinp: &mut impl GraphWrite<'a, f32>,
    dweight: &mut impl GraphWrite<'a, f32>,
    dbias: Option<&mut GraphSliceMut<'_, 'a, f32>>,
    dout: &impl GraphRead<'a, f32>,
    inp: &impl GraphRead<'a, f32>,
    weight: &impl GraphRead<'a, f32>,
    bt: usize,
    c: usize,
    oc: usize,
) -> Res<()> {
    cap.gemm(
        sgemm_cfg(false, false, c, bt, oc, c, oc, 0.0, c),
        weight,
        dout,
        dinp,
        ws,
    )?;
    cap.gemm(
        sgemm_cfg(false, true, c, oc, bt, c, oc, 1.0, c),
        inp,
        dout,
        dweight,
        ws,
    )?;
    if let Some(dbias) = dbias {
        // block 1024, OC/32 blocks, 1024 floats of shared memory.
        k.bias_bwd.with_shared_mem(1024 * 4).capture(
            cap,
            (oc / 32) as u32,
            1024u32,
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
fn layernorm_backward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    dinp: &mut impl GraphWrite<'a, f32>,
    dw: &mut impl GraphWrite<'a, f32>,
    db: &mut impl GraphWrite<'a, f32>,
    dout: &impl GraphRead<'a, f32>,
    inp: &impl GraphRead<'a, f32>,
    w: &impl GraphRead<'a, f32>,
    mean: &impl GraphRead<'a, f32>,
    rstd: &impl GraphRead<'a, f32>,
    bt: usize,
    c: usize,
) -> Res<()> {
    // block 512, a warp per row, 2 C floats of shared memory; B and T passed as 1 and B*T.
    k.ln_bwd.with_shared_mem((2 * c * 4) as u32).capture(
        cap,
        ceil_div(32 * bt, 512),
        512u32,
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

/// `gpt2_zero_grad` then `gpt2_backward`, as `Gpt2::zero_grad_backward` on one stream;
/// returns the node of `encoder_backward` (which reads `inp`).
fn backward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    tk: &mut Toks<'a>,
    d: Dims,
    off: &[usize; 16],
    inp: &GraphInput<'a, i32>,
) -> Res<NodeId> {
    let Dims { b, t, vp, l, c, .. } = d;
    let (bt, btc) = (b * t, b * t * c);
    for buf in [&mut tk.bt4c, &mut tk.dpreatt, &mut tk.dresidual, &mut tk.grads] {
        let n = buf.len();
        cap.memset_d32(buf, 0, n)?;
    }
    if !d.lean_memset {
        let n = tk.bt4c2.len();
        cap.memset_d32(&mut tk.bt4c2, 0, n)?;
    }
    matmul_backward(
        cap,
        k,
        &mut tk.ws,
        &mut tk.bt4c.slice_mut(..btc)?,
        &mut tk.grads.slice_mut(pr(off, p::WTE, 0, vp * c))?,
        None,
        &tk.output.slice(..bt * vp)?,
        &tk.lnf,
        &tk.params.slice(pr(off, p::WTE, 0, vp * c))?,
        bt,
        c,
        vp,
    )?;
    {
        let (mut gw, mut gb) = two(&mut tk.grads, pr(off, p::LNFW, 0, c), pr(off, p::LNFB, 0, c))?;
        layernorm_backward(
            cap,
            k,
            &mut tk.dresidual,
            &mut gw,
            &mut gb,
            &tk.bt4c.slice(..btc)?,
            &tk.residual3.slice(layer(btc, l - 1))?,
            &tk.params.slice(pr(off, p::LNFW, 0, c))?,
            &tk.lnf_mean,
            &tk.lnf_rstd,
            bt,
            c,
        )?;
    }
    for li in (0..l).rev() {
        let g2 = |i: usize, j: usize, n: usize, nb: usize| (pr(off, i, li, n), pr(off, j, li, nb));
        {
            let (wr, br) = g2(p::FCPROJW, p::FCPROJB, 4 * c * c, c);
            let (mut gw, mut gb) = two(&mut tk.grads, wr, br)?;
            matmul_backward(
                cap,
                k,
                &mut tk.ws,
                &mut tk.bt4c,
                &mut gw,
                Some(&mut gb),
                &tk.dresidual,
                &tk.fch_gelu.slice(layer(4 * btc, li))?,
                &tk.params.slice(pr(off, p::FCPROJW, li, 4 * c * c))?,
                bt,
                4 * c,
                c,
            )?;
        }
        k.gelu_bwd.capture(
            cap,
            ceil_div(4 * btc, 128),
            128u32,
            &mut tk.bt4c2,
            &tk.fch.slice(layer(4 * btc, li))?,
            &tk.bt4c,
            (4 * btc) as i32,
        )?;
        {
            let (wr, br) = g2(p::FCW, p::FCB, 4 * c * c, 4 * c);
            let (mut gw, mut gb) = two(&mut tk.grads, wr, br)?;
            matmul_backward(
                cap,
                k,
                &mut tk.ws,
                &mut tk.lnf,
                &mut gw,
                Some(&mut gb),
                &tk.bt4c2,
                &tk.ln2.slice(layer(btc, li))?,
                &tk.params.slice(pr(off, p::FCW, li, 4 * c * c))?,
                bt,
                c,
                4 * c,
            )?;
        }
        {
            let (wr, br) = g2(p::LN2W, p::LN2B, c, c);
            let (mut gw, mut gb) = two(&mut tk.grads, wr, br)?;
            layernorm_backward(
                cap,
                k,
                &mut tk.dresidual,
                &mut gw,
                &mut gb,
                &tk.lnf,
                &tk.residual2.slice(layer(btc, li))?,
                &tk.params.slice(pr(off, p::LN2W, li, c))?,
                &tk.ln2_mean.slice(layer(bt, li))?,
                &tk.ln2_rstd.slice(layer(bt, li))?,
                bt,
                c,
            )?;
        }
        {
            let (wr, br) = g2(p::ATTPROJW, p::ATTPROJB, c * c, c);
            let (mut gw, mut gb) = two(&mut tk.grads, wr, br)?;
            matmul_backward(
                cap,
                k,
                &mut tk.ws,
                &mut tk.lnf,
                &mut gw,
                Some(&mut gb),
                &tk.dresidual,
                &tk.atty.slice(layer(btc, li))?,
                &tk.params.slice(pr(off, p::ATTPROJW, li, c * c))?,
                bt,
                c,
                c,
            )?;
        }
        attention_backward(cap, k, tk, li, d)?;
        {
            let (wr, br) = g2(p::QKVW, p::QKVB, 3 * c * c, 3 * c);
            let (mut gw, mut gb) = two(&mut tk.grads, wr, br)?;
            matmul_backward(
                cap,
                k,
                &mut tk.ws,
                &mut tk.lnf,
                &mut gw,
                Some(&mut gb),
                &tk.bt4c.slice(..3 * btc)?,
                &tk.ln1.slice(layer(btc, li))?,
                &tk.params.slice(pr(off, p::QKVW, li, 3 * c * c))?,
                bt,
                c,
                3 * c,
            )?;
        }
        {
            let residual = if li == 0 {
                tk.encoded.slice(..)?
            } else {
                tk.residual3.slice(layer(btc, li - 1))?
            };
            let (wr, br) = g2(p::LN1W, p::LN1B, c, c);
            let (mut gw, mut gb) = two(&mut tk.grads, wr, br)?;
            layernorm_backward(
                cap,
                k,
                &mut tk.dresidual,
                &mut gw,
                &mut gb,
                &tk.lnf,
                &residual,
                &tk.params.slice(pr(off, p::LN1W, li, c))?,
                &tk.ln1_mean.slice(layer(bt, li))?,
                &tk.ln1_rstd.slice(layer(bt, li))?,
                bt,
                c,
            )?;
        }
    }
    encoder_backward(cap, k, tk, d, off, inp)
}

/// `encoder_backward`: block 256, atomics into wte's and wpe's gradients, reading `inp`.
fn encoder_backward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    tk: &mut Toks<'a>,
    d: Dims,
    off: &[usize; 16],
    inp: &GraphInput<'a, i32>,
) -> Res<NodeId> {
    let (b, t, c) = (d.b, d.t, d.c);
    let (mut gwte, mut gwpe) = two(
        &mut tk.grads,
        pr(off, p::WTE, 0, d.vp * c),
        pr(off, p::WPE, 0, d.max_t * c),
    )?;
    Ok(k.encoder_bwd.capture(
        cap,
        ceil_div(b * t * c, 256),
        256u32,
        &mut gwte,
        &mut gwpe,
        &tk.dresidual,
        inp,
        b as i32,
        t as i32,
        c as i32,
    )?)
}

/// `attention_backward` of layer `li`: dinp = bt4c, dqkvr = this layer's fch, dpreatt, datt
/// = output (scratch), scratch = this layer's atty, dout = lnf.
fn attention_backward<'a>(
    cap: &mut Capture<'a>,
    k: &Kernels,
    tk: &mut Toks<'a>,
    li: usize,
    d: Dims,
) -> Res<()> {
    let Dims { b, t, nh, c, .. } = d;
    let hs = c / nh;
    let btc = b * t * c;
    let (b_, t_, nh_, hs_) = (b as i32, t as i32, nh as i32, hs as i32);
    let q0 = 3 * btc * li;
    let (q, kk, v) = (
        tk.qkvr.slice(q0..q0 + btc)?,
        tk.qkvr.slice(q0 + btc..q0 + 2 * btc)?,
        tk.qkvr.slice(q0 + 2 * btc..q0 + 3 * btc)?,
    );
    let att = tk.att.slice(layer(b * nh * t * t, li))?;
    let (dqkvr, _) = tk.fch.slice_mut(layer(4 * btc, li))?.split_at_mut(3 * btc)?;
    let (mut dq, rest) = dqkvr.split_at_mut(btc)?;
    let (mut dk, mut dv) = rest.split_at_mut(btc)?;
    let mut scratch = tk.atty.slice_mut(layer(btc, li))?;
    let mut datt = tk.output.slice_mut(..b * nh * t * t)?;
    k.unpermute_bwd.capture(
        cap,
        ceil_div(btc, 256),
        256u32,
        &mut scratch,
        &tk.lnf,
        b_,
        t_,
        nh_,
        hs_,
    )?;
    cap.gemm_strided_batched(
        batched_cfg(true, false, t, t, hs, hs, t * hs, hs, t * hs, t, t * t, b * nh),
        &v,
        &scratch,
        &mut datt,
        &mut tk.ws,
    )?;
    cap.gemm_strided_batched(
        batched_cfg(false, true, hs, t, t, hs, t * hs, t, t * t, hs, t * hs, b * nh),
        &scratch,
        &att,
        &mut dv,
        &mut tk.ws,
    )?;
    let scale = 1.0f32 / (hs as f32).sqrt();
    k.softmax_bwd.capture(
        cap,
        ((t / 4) as u32, (b * nh) as u32),
        256u32,
        &mut tk.dpreatt,
        &datt,
        &att,
        b_,
        t_,
        c as i32,
        scale,
    )?;
    cap.gemm_strided_batched(
        batched_cfg(false, false, hs, t, t, hs, t * hs, t, t * t, hs, t * hs, b * nh),
        &kk,
        &tk.dpreatt,
        &mut dq,
        &mut tk.ws,
    )?;
    cap.gemm_strided_batched(
        batched_cfg(false, true, hs, t, t, hs, t * hs, t, t * t, hs, t * hs, b * nh),
        &q,
        &tk.dpreatt,
        &mut dk,
        &mut tk.ws,
    )?;
    k.permute_bwd.capture(
        cap,
        ceil_div(b * nh * t * hs, 256),
        256u32,
        &mut tk.bt4c.slice_mut(..3 * btc)?,
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

/// The step's new arguments: the inputs and targets of graph step `j` (`inp`, `tg`) for the
/// encoder (forward and backward) and the classifier, whose losses go to range `j`; AdamW's
/// bias corrections for step `step` (from 1).
#[allow(clippy::too_many_arguments)]
fn update<'a>(
    exec: &mut GraphExec<'a>,
    k: &Kernels,
    tk: &mut Toks<'a>,
    d: Dims,
    off: &[usize; 16],
    nodes: Varying,
    inp: &GraphInput<'a, i32>,
    tg: &GraphInput<'a, i32>,
    j: usize,
    lr: f32,
    step: i32,
) -> Res<()> {
    let Dims { b, t, v, vp, c, .. } = d;
    let (bt, btc) = (b * t, b * t * c);
    {
        let wte = tk.params.slice(pr(off, p::WTE, 0, vp * c))?.cast::<Float4>()?;
        let wpe = tk
            .params
            .slice(pr(off, p::WPE, 0, d.max_t * c))?
            .cast::<Float4>()?;
        let mut out = tk.encoded.slice_mut(..)?.cast_mut::<Float4>()?;
        k.encoder_fwd.update_node(
            exec,
            nodes.encoder_fwd,
            ceil_div(btc / 4, 512),
            512u32,
            &mut out,
            inp,
            &wte,
            &wpe,
            b as i32,
            t as i32,
            c as i32,
        )?;
    }
    k.classifier.update_node(
        exec,
        nodes.classifier,
        bt as u32,
        1024u32,
        &mut tk.output,
        &mut tk.losses.slice_mut(layer(bt, j))?,
        None,
        None,
        tg,
        b as i32,
        t as i32,
        v as i32,
        vp as i32,
    )?;
    {
        let (mut gwte, mut gwpe) = two(
            &mut tk.grads,
            pr(off, p::WTE, 0, vp * c),
            pr(off, p::WPE, 0, d.max_t * c),
        )?;
        k.encoder_bwd.update_node(
            exec,
            nodes.encoder_bwd,
            ceil_div(btc, 256),
            256u32,
            &mut gwte,
            &mut gwpe,
            &tk.dresidual,
            inp,
            b as i32,
            t as i32,
            c as i32,
        )?;
    }
    let n = tk.params.len();
    k.adamw.update_node(
        exec,
        nodes.adamw,
        ceil_div(n, 512),
        512u32,
        &mut tk.params,
        &tk.grads,
        &mut tk.m,
        &mut tk.v,
        n as i64,
        lr,
        BETA1,
        BETA2,
        1.0 - BETA1.powf(step as f32),
        1.0 - BETA2.powf(step as f32),
        EPS,
        WEIGHT_DECAY,
    )?;
    Ok(())
}
