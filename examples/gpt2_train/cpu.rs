//! The CPU reference: llm.c's `train_gpt2.c` (karpathy/llm.c, MIT license, see
//! `llmc_ref/LICENSE`) forward, backward and AdamW, ported line for line with the same order
//! of floating-point operations (so that, built without fast-math, it agrees with llm.c's C
//! to the last bits), single-threaded.

use crate::llmc::{p, Config};

fn encoder_forward(out: &mut [f32], inp: &[i32], wte: &[f32], wpe: &[f32], b: usize, t: usize, c: usize) {
    for bi in 0..b {
        for ti in 0..t {
            let o = &mut out[(bi * t + ti) * c..][..c];
            let ix = inp[bi * t + ti] as usize;
            for i in 0..c {
                o[i] = wte[ix * c + i] + wpe[ti * c + i];
            }
        }
    }
}

fn encoder_backward(
    dwte: &mut [f32],
    dwpe: &mut [f32],
    dout: &[f32],
    inp: &[i32],
    b: usize,
    t: usize,
    c: usize,
) {
    for bi in 0..b {
        for ti in 0..t {
            let d = &dout[(bi * t + ti) * c..][..c];
            let ix = inp[bi * t + ti] as usize;
            for i in 0..c {
                dwte[ix * c + i] += d[i];
                dwpe[ti * c + i] += d[i];
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn layernorm_forward(
    out: &mut [f32],
    mean: &mut [f32],
    rstd: &mut [f32],
    inp: &[f32],
    w: &[f32],
    bias: &[f32],
    n: usize,
    c: usize,
) {
    for r in 0..n {
        let x = &inp[r * c..][..c];
        let mut m = 0.0f32;
        for &v in x {
            m += v;
        }
        m /= c as f32;
        let mut v = 0.0f32;
        for &xi in x {
            let s = xi - m;
            v += s * s;
        }
        v /= c as f32;
        let s = 1.0f32 / (v + 1e-5f32).sqrt();
        let o = &mut out[r * c..][..c];
        for i in 0..c {
            let nrm = s * (x[i] - m);
            o[i] = nrm * w[i] + bias[i];
        }
        mean[r] = m;
        rstd[r] = s;
    }
}

#[allow(clippy::too_many_arguments)]
fn layernorm_backward(
    dinp: &mut [f32],
    dw: &mut [f32],
    db: &mut [f32],
    dout: &[f32],
    inp: &[f32],
    w: &[f32],
    mean: &[f32],
    rstd: &[f32],
    n: usize,
    c: usize,
) {
    for r in 0..n {
        let d = &dout[r * c..][..c];
        let x = &inp[r * c..][..c];
        let di = &mut dinp[r * c..][..c];
        let (m, s) = (mean[r], rstd[r]);
        let mut dnorm_mean = 0.0f32;
        let mut dnorm_norm_mean = 0.0f32;
        for i in 0..c {
            let norm = (x[i] - m) * s;
            let dn = w[i] * d[i];
            dnorm_mean += dn;
            dnorm_norm_mean += dn * norm;
        }
        dnorm_mean /= c as f32;
        dnorm_norm_mean /= c as f32;
        for i in 0..c {
            let norm = (x[i] - m) * s;
            let dn = w[i] * d[i];
            db[i] += d[i];
            dw[i] += norm * d[i];
            let mut dval = 0.0f32;
            dval += dn;
            dval -= dnorm_mean;
            dval -= norm * dnorm_norm_mean;
            dval *= s;
            di[i] += dval;
        }
    }
}

/// `matmul_forward` with its 8-row unrolling (the order of the sums matters for bit equality).
fn matmul_forward(
    out: &mut [f32],
    inp: &[f32],
    w: &[f32],
    bias: Option<&[f32]>,
    bt: usize,
    c: usize,
    oc: usize,
) {
    const U: usize = 8;
    if !bt.is_multiple_of(U) {
        for r in 0..bt {
            for o in 0..oc {
                let mut val = bias.map_or(0.0, |b| b[o]);
                for i in 0..c {
                    val += inp[r * c + i] * w[o * c + i];
                }
                out[r * oc + o] = val;
            }
        }
        return;
    }
    for obt in (0..bt).step_by(U) {
        for o in 0..oc {
            let mut res = [bias.map_or(0.0, |b| b[o]); U];
            for i in 0..c {
                let wv = w[i + o * c];
                for (k, r) in res.iter_mut().enumerate() {
                    *r += inp[(obt + k) * c + i] * wv;
                }
            }
            for (k, r) in res.iter().enumerate() {
                out[(obt + k) * oc + o] = *r;
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn matmul_backward(
    dinp: &mut [f32],
    dw: &mut [f32],
    mut db: Option<&mut [f32]>,
    dout: &[f32],
    inp: &[f32],
    w: &[f32],
    bt: usize,
    c: usize,
    oc: usize,
) {
    for r in 0..bt {
        let d = &dout[r * oc..][..oc];
        let di = &mut dinp[r * c..][..c];
        for o in 0..oc {
            let wrow = &w[o * c..][..c];
            let dv = d[o];
            for i in 0..c {
                di[i] += wrow[i] * dv;
            }
        }
    }
    for o in 0..oc {
        for r in 0..bt {
            let dv = dout[r * oc + o];
            let x = &inp[r * c..][..c];
            if let Some(db) = db.as_deref_mut() {
                db[o] += dv;
            }
            let dwrow = &mut dw[o * c..][..c];
            for i in 0..c {
                dwrow[i] += x[i] * dv;
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn attention_forward(
    out: &mut [f32],
    preatt: &mut [f32],
    att: &mut [f32],
    inp: &[f32],
    b: usize,
    t: usize,
    c: usize,
    nh: usize,
) {
    let c3 = 3 * c;
    let hs = c / nh;
    // `1.0 / sqrtf(hs)` in C: a double division, rounded to float.
    let scale = (1.0f64 / ((hs as f32).sqrt() as f64)) as f32;
    for bi in 0..b {
        for ti in 0..t {
            for h in 0..nh {
                let q = bi * t * c3 + ti * c3 + h * hs;
                let row = bi * nh * t * t + h * t * t + ti * t;
                let mut maxval = -10000.0f32;
                for t2 in 0..=ti {
                    let k = bi * t * c3 + t2 * c3 + h * hs + c;
                    let mut val = 0.0f32;
                    for i in 0..hs {
                        val += inp[q + i] * inp[k + i];
                    }
                    val *= scale;
                    if val > maxval {
                        maxval = val;
                    }
                    preatt[row + t2] = val;
                }
                let mut expsum = 0.0f32;
                for t2 in 0..=ti {
                    let e = (preatt[row + t2] - maxval).exp();
                    expsum += e;
                    att[row + t2] = e;
                }
                let inv = if expsum == 0.0 { 0.0 } else { 1.0 / expsum };
                for t2 in 0..t {
                    if t2 <= ti {
                        att[row + t2] *= inv;
                    } else {
                        att[row + t2] = 0.0;
                    }
                }
                let o = bi * t * c + ti * c + h * hs;
                for i in 0..hs {
                    out[o + i] = 0.0;
                }
                for t2 in 0..=ti {
                    let v = bi * t * c3 + t2 * c3 + h * hs + 2 * c;
                    let a = att[row + t2];
                    for i in 0..hs {
                        out[o + i] += a * inp[v + i];
                    }
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn attention_backward(
    dinp: &mut [f32],
    dpreatt: &mut [f32],
    datt: &mut [f32],
    dout: &[f32],
    inp: &[f32],
    att: &[f32],
    b: usize,
    t: usize,
    c: usize,
    nh: usize,
) {
    let c3 = 3 * c;
    let hs = c / nh;
    let scale = 1.0f32 / (hs as f32).sqrt();
    for bi in 0..b {
        for ti in 0..t {
            for h in 0..nh {
                let row = bi * nh * t * t + h * t * t + ti * t;
                let q = bi * t * c3 + ti * c3 + h * hs;
                let d = bi * t * c + ti * c + h * hs;
                for t2 in 0..=ti {
                    let v = bi * t * c3 + t2 * c3 + h * hs + 2 * c;
                    for i in 0..hs {
                        datt[row + t2] += inp[v + i] * dout[d + i];
                        dinp[v + i] += att[row + t2] * dout[d + i];
                    }
                }
                for t2 in 0..=ti {
                    for t3 in 0..=ti {
                        let ind = if t2 == t3 { 1.0f32 } else { 0.0 };
                        let local = att[row + t2] * (ind - att[row + t3]);
                        dpreatt[row + t3] += local * datt[row + t2];
                    }
                }
                for t2 in 0..=ti {
                    let k = bi * t * c3 + t2 * c3 + h * hs + c;
                    for i in 0..hs {
                        dinp[q + i] += inp[k + i] * dpreatt[row + t2] * scale;
                        dinp[k + i] += inp[q + i] * dpreatt[row + t2] * scale;
                    }
                }
            }
        }
    }
}

/// `sqrtf(2.0f / M_PI)`: `2.0f / M_PI` is a double division (M_PI is a double).
fn gelu_scale() -> f32 {
    ((2.0f32 as f64 / std::f64::consts::PI) as f32).sqrt()
}

fn gelu_forward(out: &mut [f32], inp: &[f32]) {
    let s = gelu_scale();
    for (o, &x) in out.iter_mut().zip(inp) {
        let cube = 0.044715f32 * x * x * x;
        *o = 0.5f32 * x * (1.0f32 + (s * (x + cube)).tanh());
    }
}

fn gelu_backward(dinp: &mut [f32], inp: &[f32], dout: &[f32]) {
    let s = gelu_scale();
    for i in 0..inp.len() {
        let x = inp[i];
        let cube = 0.044715f32 * x * x * x;
        let arg = s * (x + cube);
        let th = arg.tanh();
        let ch = arg.cosh();
        let sech = 1.0f32 / (ch * ch);
        let local = 0.5f32 * (1.0f32 + th) + x * 0.5f32 * sech * s * (1.0f32 + 3.0f32 * 0.044715f32 * x * x);
        dinp[i] += local * dout[i];
    }
}

fn residual_forward(out: &mut [f32], a: &[f32], b: &[f32]) {
    for i in 0..out.len() {
        out[i] = a[i] + b[i];
    }
}

fn residual_backward(d1: &mut [f32], d2: &mut [f32], dout: &[f32]) {
    for i in 0..dout.len() {
        d1[i] += dout[i];
        d2[i] += dout[i];
    }
}

/// The activations (or their gradients) of `train_gpt2.c`, one `Vec` per tensor.
#[derive(Clone)]
struct Acts {
    encoded: Vec<f32>,
    ln1: Vec<f32>,
    ln1_mean: Vec<f32>,
    ln1_rstd: Vec<f32>,
    qkv: Vec<f32>,
    atty: Vec<f32>,
    preatt: Vec<f32>,
    att: Vec<f32>,
    attproj: Vec<f32>,
    residual2: Vec<f32>,
    ln2: Vec<f32>,
    ln2_mean: Vec<f32>,
    ln2_rstd: Vec<f32>,
    fch: Vec<f32>,
    fch_gelu: Vec<f32>,
    fcproj: Vec<f32>,
    residual3: Vec<f32>,
    lnf: Vec<f32>,
    lnf_mean: Vec<f32>,
    lnf_rstd: Vec<f32>,
    logits: Vec<f32>,
    probs: Vec<f32>,
    losses: Vec<f32>,
}

impl Acts {
    fn new(cfg: &Config, b: usize, t: usize) -> Self {
        let (c, nh, l, vp) = (cfg.channels, cfg.num_heads, cfg.num_layers, cfg.padded_vocab_size);
        let z = |n: usize| vec![0f32; n];
        Acts {
            encoded: z(b * t * c),
            ln1: z(l * b * t * c),
            ln1_mean: z(l * b * t),
            ln1_rstd: z(l * b * t),
            qkv: z(l * b * t * 3 * c),
            atty: z(l * b * t * c),
            preatt: z(l * b * nh * t * t),
            att: z(l * b * nh * t * t),
            attproj: z(l * b * t * c),
            residual2: z(l * b * t * c),
            ln2: z(l * b * t * c),
            ln2_mean: z(l * b * t),
            ln2_rstd: z(l * b * t),
            fch: z(l * b * t * 4 * c),
            fch_gelu: z(l * b * t * 4 * c),
            fcproj: z(l * b * t * c),
            residual3: z(l * b * t * c),
            lnf: z(b * t * c),
            lnf_mean: z(b * t),
            lnf_rstd: z(b * t),
            logits: z(b * t * vp),
            probs: z(b * t * vp),
            losses: z(b * t),
        }
    }

    fn zero(&mut self) {
        for v in [
            &mut self.encoded,
            &mut self.ln1,
            &mut self.ln1_mean,
            &mut self.ln1_rstd,
            &mut self.qkv,
            &mut self.atty,
            &mut self.preatt,
            &mut self.att,
            &mut self.attproj,
            &mut self.residual2,
            &mut self.ln2,
            &mut self.ln2_mean,
            &mut self.ln2_rstd,
            &mut self.fch,
            &mut self.fch_gelu,
            &mut self.fcproj,
            &mut self.residual3,
            &mut self.lnf,
            &mut self.lnf_mean,
            &mut self.lnf_rstd,
            &mut self.logits,
            &mut self.probs,
            &mut self.losses,
        ] {
            v.fill(0.0);
        }
    }
}

/// The model on the CPU: `train_gpt2.c`'s `GPT2`.
pub struct Gpt2 {
    /// The shape.
    pub cfg: Config,
    /// All parameters, in llm.c's layout.
    pub params: Vec<f32>,
    /// Their gradients.
    pub grads: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    b: usize,
    t: usize,
    acts: Acts,
    grads_acts: Acts,
    inputs: Vec<i32>,
    targets: Vec<i32>,
    /// The mean loss of the last forward pass.
    pub mean_loss: f32,
}

/// Splits `v` into the 16 parameter tensors.
fn split16<'a>(cfg: &Config, v: &'a [f32]) -> Vec<&'a [f32]> {
    let (off, _) = cfg.param_offsets();
    let sizes = cfg.param_sizes();
    (0..16).map(|i| &v[off[i]..off[i] + sizes[i]]).collect()
}

/// Splits `v` into the 16 parameter tensors, writable.
fn split16_mut<'a>(cfg: &Config, mut v: &'a mut [f32]) -> Vec<&'a mut [f32]> {
    let sizes = cfg.param_sizes();
    let mut out = Vec::with_capacity(16);
    for s in sizes {
        let (a, rest) = v.split_at_mut(s);
        out.push(a);
        v = rest;
    }
    out
}

impl Gpt2 {
    /// A model from parameters, for batches of `b` x `t`.
    pub fn new(cfg: Config, params: Vec<f32>, b: usize, t: usize) -> Self {
        let n = params.len();
        Gpt2 {
            cfg,
            grads: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
            b,
            t,
            acts: Acts::new(&cfg, b, t),
            grads_acts: Acts::new(&cfg, b, t),
            inputs: vec![0; b * t],
            targets: vec![0; b * t],
            params,
            mean_loss: -1.0,
        }
    }

    /// `gpt2_forward` with targets.
    pub fn forward(&mut self, inputs: &[i32], targets: &[i32]) {
        let (b, t) = (self.b, self.t);
        let Config {
            vocab_size: v,
            padded_vocab_size: vp,
            num_layers: l,
            num_heads: nh,
            channels: c,
            ..
        } = self.cfg;
        let bt = b * t;
        self.inputs.copy_from_slice(inputs);
        self.targets.copy_from_slice(targets);
        let pr = split16(&self.cfg, &self.params);
        let a = &mut self.acts;
        encoder_forward(&mut a.encoded, inputs, pr[p::WTE], pr[p::WPE], b, t, c);
        for li in 0..l {
            let btc = bt * c;
            let residual: &[f32] = if li == 0 {
                &a.encoded
            } else {
                &a.residual3[(li - 1) * btc..li * btc]
            };
            let residual = residual.to_vec();
            let r = |n: usize| li * n..(li + 1) * n;
            layernorm_forward(
                &mut a.ln1[r(btc)],
                &mut a.ln1_mean[r(bt)],
                &mut a.ln1_rstd[r(bt)],
                &residual,
                &pr[p::LN1W][r(c)],
                &pr[p::LN1B][r(c)],
                bt,
                c,
            );
            matmul_forward(
                &mut a.qkv[r(3 * btc)],
                &a.ln1[r(btc)],
                &pr[p::QKVW][r(3 * c * c)],
                Some(&pr[p::QKVB][r(3 * c)]),
                bt,
                c,
                3 * c,
            );
            attention_forward(
                &mut a.atty[r(btc)],
                &mut a.preatt[r(b * nh * t * t)],
                &mut a.att[r(b * nh * t * t)],
                &a.qkv[r(3 * btc)],
                b,
                t,
                c,
                nh,
            );
            matmul_forward(
                &mut a.attproj[r(btc)],
                &a.atty[r(btc)],
                &pr[p::ATTPROJW][r(c * c)],
                Some(&pr[p::ATTPROJB][r(c)]),
                bt,
                c,
                c,
            );
            residual_forward(&mut a.residual2[r(btc)], &residual, &a.attproj[r(btc)]);
            layernorm_forward(
                &mut a.ln2[r(btc)],
                &mut a.ln2_mean[r(bt)],
                &mut a.ln2_rstd[r(bt)],
                &a.residual2[r(btc)],
                &pr[p::LN2W][r(c)],
                &pr[p::LN2B][r(c)],
                bt,
                c,
            );
            matmul_forward(
                &mut a.fch[r(4 * btc)],
                &a.ln2[r(btc)],
                &pr[p::FCW][r(4 * c * c)],
                Some(&pr[p::FCB][r(4 * c)]),
                bt,
                c,
                4 * c,
            );
            gelu_forward(&mut a.fch_gelu[r(4 * btc)], &a.fch[r(4 * btc)]);
            matmul_forward(
                &mut a.fcproj[r(btc)],
                &a.fch_gelu[r(4 * btc)],
                &pr[p::FCPROJW][r(4 * c * c)],
                Some(&pr[p::FCPROJB][r(c)]),
                bt,
                4 * c,
                c,
            );
            let (res2, fcproj) = (&a.residual2[r(btc)], &a.fcproj[r(btc)]);
            residual_forward(&mut a.residual3[r(btc)], res2, fcproj);
        }
        let btc = bt * c;
        layernorm_forward(
            &mut a.lnf,
            &mut a.lnf_mean,
            &mut a.lnf_rstd,
            &a.residual3[(l - 1) * btc..l * btc],
            pr[p::LNFW],
            pr[p::LNFB],
            bt,
            c,
        );
        matmul_forward(&mut a.logits, &a.lnf, pr[p::WTE], None, bt, c, vp);
        // softmax_forward
        for r in 0..bt {
            let lg = &a.logits[r * vp..][..vp];
            let pb = &mut a.probs[r * vp..][..vp];
            let mut maxval = -10000.0f32;
            for &x in &lg[..v] {
                if x > maxval {
                    maxval = x;
                }
            }
            let mut sum = 0.0f32;
            for i in 0..v {
                pb[i] = (lg[i] - maxval).exp();
                sum += pb[i];
            }
            for x in &mut pb[..v] {
                *x /= sum;
            }
            for x in &mut pb[v..] {
                *x = 0.0;
            }
        }
        // crossentropy_forward
        for (r, &tg) in targets.iter().enumerate() {
            a.losses[r] = -a.probs[r * vp + tg as usize].ln();
        }
        let mut mean = 0.0f32;
        for &x in &a.losses {
            mean += x;
        }
        self.mean_loss = mean / bt as f32;
    }

    /// `gpt2_zero_grad` then `gpt2_backward`.
    pub fn zero_grad_backward(&mut self) {
        self.grads.fill(0.0);
        self.grads_acts.zero();
        let (b, t) = (self.b, self.t);
        let Config {
            vocab_size: v,
            padded_vocab_size: vp,
            num_layers: l,
            num_heads: nh,
            channels: c,
            ..
        } = self.cfg;
        let bt = b * t;
        let btc = bt * c;
        let pr = split16(&self.cfg, &self.params);
        let mut gr = split16_mut(&self.cfg, &mut self.grads);
        let a = &self.acts;
        let g = &mut self.grads_acts;
        let dloss_mean = 1.0f32 / bt as f32;
        g.losses.fill(dloss_mean);
        // crossentropy_softmax_backward
        for r in 0..bt {
            let ix = self.targets[r] as usize;
            let dl = g.losses[r];
            for i in 0..v {
                let pv = a.probs[r * vp + i];
                let ind = if i == ix { 1.0f32 } else { 0.0 };
                g.logits[r * vp + i] += (pv - ind) * dl;
            }
        }
        matmul_backward(
            &mut g.lnf,
            gr[p::WTE],
            None,
            &g.logits,
            &a.lnf,
            pr[p::WTE],
            bt,
            c,
            vp,
        );
        {
            let (lnfw, lnfb) = {
                let (x, y) = gr.split_at_mut(p::LNFB);
                (&mut x[p::LNFW], &mut y[0])
            };
            layernorm_backward(
                &mut g.residual3[(l - 1) * btc..l * btc],
                lnfw,
                lnfb,
                &g.lnf,
                &a.residual3[(l - 1) * btc..l * btc],
                pr[p::LNFW],
                &a.lnf_mean,
                &a.lnf_rstd,
                bt,
                c,
            );
        }
        for li in (0..l).rev() {
            let r = |n: usize| li * n..(li + 1) * n;
            let residual: &[f32] = if li == 0 {
                &a.encoded
            } else {
                &a.residual3[(li - 1) * btc..li * btc]
            };
            // dl_residual3 is this layer's slice of g.residual3; dresidual the one below.
            let dl_residual3 = g.residual3[r(btc)].to_vec();
            residual_backward(&mut g.residual2[r(btc)], &mut g.fcproj[r(btc)], &dl_residual3);
            {
                let (w, bb) = two(&mut gr, p::FCPROJW, p::FCPROJB);
                matmul_backward(
                    &mut g.fch_gelu[r(4 * btc)],
                    &mut w[r(4 * c * c)],
                    Some(&mut bb[r(c)]),
                    &g.fcproj[r(btc)],
                    &a.fch_gelu[r(4 * btc)],
                    &pr[p::FCPROJW][r(4 * c * c)],
                    bt,
                    4 * c,
                    c,
                );
            }
            gelu_backward(
                &mut g.fch[r(4 * btc)],
                &a.fch[r(4 * btc)],
                &g.fch_gelu[r(4 * btc)],
            );
            {
                let (w, bb) = two(&mut gr, p::FCW, p::FCB);
                matmul_backward(
                    &mut g.ln2[r(btc)],
                    &mut w[r(4 * c * c)],
                    Some(&mut bb[r(4 * c)]),
                    &g.fch[r(4 * btc)],
                    &a.ln2[r(btc)],
                    &pr[p::FCW][r(4 * c * c)],
                    bt,
                    c,
                    4 * c,
                );
            }
            {
                let (w, bb) = two(&mut gr, p::LN2W, p::LN2B);
                layernorm_backward(
                    &mut g.residual2[r(btc)],
                    &mut w[r(c)],
                    &mut bb[r(c)],
                    &g.ln2[r(btc)],
                    &a.residual2[r(btc)],
                    &pr[p::LN2W][r(c)],
                    &a.ln2_mean[r(bt)],
                    &a.ln2_rstd[r(bt)],
                    bt,
                    c,
                );
            }
            let dl_residual2 = g.residual2[r(btc)].to_vec();
            {
                let dres: &mut [f32] = if li == 0 {
                    &mut g.encoded
                } else {
                    &mut g.residual3[(li - 1) * btc..li * btc]
                };
                residual_backward(dres, &mut g.attproj[r(btc)], &dl_residual2);
            }
            {
                let (w, bb) = two(&mut gr, p::ATTPROJW, p::ATTPROJB);
                matmul_backward(
                    &mut g.atty[r(btc)],
                    &mut w[r(c * c)],
                    Some(&mut bb[r(c)]),
                    &g.attproj[r(btc)],
                    &a.atty[r(btc)],
                    &pr[p::ATTPROJW][r(c * c)],
                    bt,
                    c,
                    c,
                );
            }
            attention_backward(
                &mut g.qkv[r(3 * btc)],
                &mut g.preatt[r(b * nh * t * t)],
                &mut g.att[r(b * nh * t * t)],
                &g.atty[r(btc)],
                &a.qkv[r(3 * btc)],
                &a.att[r(b * nh * t * t)],
                b,
                t,
                c,
                nh,
            );
            {
                let (w, bb) = two(&mut gr, p::QKVW, p::QKVB);
                matmul_backward(
                    &mut g.ln1[r(btc)],
                    &mut w[r(3 * c * c)],
                    Some(&mut bb[r(3 * c)]),
                    &g.qkv[r(3 * btc)],
                    &a.ln1[r(btc)],
                    &pr[p::QKVW][r(3 * c * c)],
                    bt,
                    c,
                    3 * c,
                );
            }
            {
                let (w, bb) = two(&mut gr, p::LN1W, p::LN1B);
                let dres: &mut [f32] = if li == 0 {
                    &mut g.encoded
                } else {
                    &mut g.residual3[(li - 1) * btc..li * btc]
                };
                layernorm_backward(
                    dres,
                    &mut w[r(c)],
                    &mut bb[r(c)],
                    &g.ln1[r(btc)],
                    residual,
                    &pr[p::LN1W][r(c)],
                    &a.ln1_mean[r(bt)],
                    &a.ln1_rstd[r(bt)],
                    bt,
                    c,
                );
            }
        }
        let (wte, wpe) = two(&mut gr, p::WTE, p::WPE);
        encoder_backward(wte, wpe, &g.encoded, &self.inputs, b, t, c);
    }

    /// `gpt2_update` (AdamW), step `t` counting from 1.
    pub fn update(&mut self, lr: f32, beta1: f32, beta2: f32, eps: f32, wd: f32, t: i32) {
        for i in 0..self.params.len() {
            let param = self.params[i];
            let grad = self.grads[i];
            let m = beta1 * self.m[i] + (1.0f32 - beta1) * grad;
            let v = beta2 * self.v[i] + (1.0f32 - beta2) * grad * grad;
            // powf, as C's `powf`: libm's, not Rust's `powi`, which rounds differently.
            let m_hat = m / (1.0f32 - beta1.powf(t as f32));
            let v_hat = v / (1.0f32 - beta2.powf(t as f32));
            self.m[i] = m;
            self.v[i] = v;
            self.params[i] -= lr * (m_hat / (v_hat.sqrt() + eps) + wd * param);
        }
    }
}

/// Two distinct tensors of `gr`, both writable (`i < j`).
fn two<'a>(gr: &'a mut [&mut [f32]], i: usize, j: usize) -> (&'a mut [f32], &'a mut [f32]) {
    let (x, y) = gr.split_at_mut(j);
    (&mut *x[i], &mut *y[0])
}
