//! llm.c's file formats and data loader, ported from `llmc_ref/train_gpt2_fp32.cu`,
//! `llmc_ref/llmc/dataloader.h` and `llmc_ref/llmc/rand.h` (karpathy/llm.c, MIT license, see
//! `llmc_ref/LICENSE`): the model checkpoint (256 `int32` header, magic 20240326, version 3 for
//! fp32, then the parameters), the token shard (256 `int32` header, magic 20240520, version 1,
//! then `uint16` tokens), the tokenizer file (magic 20240328, version 2), the Mersenne twister
//! the loader shuffles with, and the loader itself, so that the port reads its batches in
//! llm.c's order.

use std::io::{Read, Write};
use std::path::Path;

/// Failure of this program: a message.
pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The model's shape (llm.c's `GPT2Config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// maxT: the longest sequence (the rows of `wpe`).
    pub max_seq_len: usize,
    /// V: the vocabulary.
    pub vocab_size: usize,
    /// Vp: V padded to a multiple of 128 (the rows of `wte`).
    pub padded_vocab_size: usize,
    /// L.
    pub num_layers: usize,
    /// NH.
    pub num_heads: usize,
    /// C.
    pub channels: usize,
}

impl Config {
    /// GPT-2 small, 124M parameters.
    pub const GPT2_124M: Config = Config {
        max_seq_len: 1024,
        vocab_size: 50257,
        padded_vocab_size: 50304,
        num_layers: 12,
        num_heads: 12,
        channels: 768,
    };
    /// A small model for tests: C, 3C and 4C multiples of 128 and Vp of 128, as llm.c's fp32
    /// forward matmul kernel (128 x 128 tiles, no bounds checks) needs.
    pub const SMALL: Config = Config {
        max_seq_len: 64,
        vocab_size: 500,
        padded_vocab_size: 512,
        num_layers: 2,
        num_heads: 4,
        channels: 128,
    };

    /// The sizes of the 16 parameter tensors (`fill_in_parameter_sizes`).
    pub fn param_sizes(&self) -> [usize; 16] {
        let (vp, c, maxt, l) = (
            self.padded_vocab_size,
            self.channels,
            self.max_seq_len,
            self.num_layers,
        );
        [
            vp * c,
            maxt * c,
            l * c,
            l * c,
            l * 3 * c * c,
            l * 3 * c,
            l * c * c,
            l * c,
            l * c,
            l * c,
            l * 4 * c * c,
            l * 4 * c,
            l * c * 4 * c,
            l * c,
            c,
            c,
        ]
    }

    /// The offset of each parameter tensor in the one allocation, and the total.
    pub fn param_offsets(&self) -> ([usize; 16], usize) {
        let sizes = self.param_sizes();
        let mut off = [0; 16];
        let mut total = 0;
        for i in 0..16 {
            off[i] = total;
            total += sizes[i];
        }
        (off, total)
    }
}

/// Indices of the parameter tensors, in llm.c's order.
pub mod p {
    pub const WTE: usize = 0;
    pub const WPE: usize = 1;
    pub const LN1W: usize = 2;
    pub const LN1B: usize = 3;
    pub const QKVW: usize = 4;
    pub const QKVB: usize = 5;
    pub const ATTPROJW: usize = 6;
    pub const ATTPROJB: usize = 7;
    pub const LN2W: usize = 8;
    pub const LN2B: usize = 9;
    pub const FCW: usize = 10;
    pub const FCB: usize = 11;
    pub const FCPROJW: usize = 12;
    pub const FCPROJB: usize = 13;
    pub const LNFW: usize = 14;
    pub const LNFB: usize = 15;
}

fn read_i32s(r: &mut impl Read, n: usize) -> Res<Vec<i32>> {
    let mut bytes = vec![0u8; n * 4];
    r.read_exact(&mut bytes)?;
    Ok(bytes
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// Reads a checkpoint as `gpt2_build_from_checkpoint` does: the config and all parameters.
pub fn read_checkpoint(path: &Path) -> Res<(Config, Vec<f32>)> {
    let mut f = std::io::BufReader::new(
        std::fs::File::open(path).map_err(|e| format!("cannot open checkpoint {}: {e}", path.display()))?,
    );
    let h = read_i32s(&mut f, 256)?;
    if h[0] != 20240326 {
        return Err(format!("{}: bad magic in model file ({})", path.display(), h[0]).into());
    }
    if h[1] != 3 {
        return Err(format!(
            "{}: bad version in model file ({}, want 3: fp32)",
            path.display(),
            h[1]
        )
        .into());
    }
    let dims: Vec<usize> = h[2..8]
        .iter()
        .map(|&v| usize::try_from(v).map_err(|_| format!("{}: negative size {v} in header", path.display())))
        .collect::<Result<_, _>>()?;
    let cfg = Config {
        max_seq_len: dims[0],
        vocab_size: dims[1],
        num_layers: dims[2],
        num_heads: dims[3],
        channels: dims[4],
        padded_vocab_size: dims[5],
    };
    let (_, n) = cfg.param_offsets();
    let mut bytes = vec![0u8; n * 4];
    f.read_exact(&mut bytes)
        .map_err(|e| format!("{}: {n} parameters expected: {e}", path.display()))?;
    let params = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok((cfg, params))
}

/// Writes a checkpoint in llm.c's fp32 format (version 3).
pub fn write_checkpoint(path: &Path, cfg: &Config, params: &[f32]) -> Res<()> {
    let mut h = [0i32; 256];
    h[0] = 20240326;
    h[1] = 3;
    h[2] = cfg.max_seq_len as i32;
    h[3] = cfg.vocab_size as i32;
    h[4] = cfg.num_layers as i32;
    h[5] = cfg.num_heads as i32;
    h[6] = cfg.channels as i32;
    h[7] = cfg.padded_vocab_size as i32;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for v in h {
        f.write_all(&v.to_le_bytes())?;
    }
    for v in params {
        f.write_all(&v.to_le_bytes())?;
    }
    f.flush()?;
    Ok(())
}

/// Writes a token shard: header (magic 20240520, version 1, token count), then `uint16`s.
pub fn write_shard(path: &Path, tokens: &[u16]) -> Res<()> {
    let mut h = [0i32; 256];
    h[0] = 20240520;
    h[1] = 1;
    h[2] = i32::try_from(tokens.len())?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for v in h {
        f.write_all(&v.to_le_bytes())?;
    }
    for t in tokens {
        f.write_all(&t.to_le_bytes())?;
    }
    f.flush()?;
    Ok(())
}

/// Writes a tokenizer file (version 2: magic 20240328, version, vocab size, EOT token; then
/// each token as a length byte and its bytes), so that llm.c's generation, which starts from
/// the tokenizer's EOT token, has one inside the vocabulary.
pub fn write_tokenizer(path: &Path, vocab_size: usize) -> Res<()> {
    let mut h = [0u32; 256];
    h[0] = 20240328;
    h[1] = 2;
    h[2] = vocab_size as u32;
    h[3] = vocab_size as u32 - 1;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for v in h {
        f.write_all(&v.to_le_bytes())?;
    }
    for i in 0..vocab_size {
        let s = format!("<{i}>");
        f.write_all(&[s.len() as u8])?;
        f.write_all(s.as_bytes())?;
    }
    f.flush()?;
    Ok(())
}

/// llm.c-like random initialisation (as `train_gpt2.cu`'s `gpt2_init_common` and GPT-2's
/// paper): weights normal with std 0.02, the residual projections (`attprojw`, `fcprojw`)
/// with 0.02 / sqrt(2 L), layer-norm weights 1, biases 0, the padded rows of `wte` 0.
pub fn random_params(cfg: &Config, seed: u32) -> Vec<f32> {
    let (off, n) = cfg.param_offsets();
    let sizes = cfg.param_sizes();
    let mut params = vec![0f32; n];
    let mut rng = Mt19937::new(seed);
    let resid_std = 0.02 / (2.0 * cfg.num_layers as f32).sqrt();
    for i in 0..16 {
        let t = &mut params[off[i]..off[i] + sizes[i]];
        match i {
            p::LN1W | p::LN2W | p::LNFW => t.fill(1.0),
            p::LN1B | p::LN2B | p::LNFB | p::QKVB | p::ATTPROJB | p::FCB | p::FCPROJB => {}
            p::WTE => {
                let real = cfg.vocab_size * cfg.channels;
                rng.normal(&mut t[..real], 0.02);
            }
            p::ATTPROJW | p::FCPROJW => rng.normal(t, resid_std),
            _ => rng.normal(t, 0.02),
        }
    }
    params
}

/// The Mersenne twister of `llmc/rand.h` (numerically torch's), which the loader shuffles with.
pub struct Mt19937 {
    state: [u32; 624],
    left: usize,
    next: usize,
}

impl Mt19937 {
    /// `manual_seed`.
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; 624];
        state[0] = seed;
        for j in 1..624 {
            state[j] = 1812433253u32
                .wrapping_mul(state[j - 1] ^ (state[j - 1] >> 30))
                .wrapping_add(j as u32);
        }
        Mt19937 {
            state,
            left: 1,
            next: 0,
        }
    }

    fn next_state(&mut self) {
        const M: usize = 397;
        const N: usize = 624;
        let mat = |y: u32| if y & 1 == 1 { 0x9908b0dfu32 } else { 0 };
        self.left = N;
        self.next = 0;
        let s = &mut self.state;
        for j in 0..N - 1 {
            let y = (s[j] & 0x8000_0000) | (s[j + 1] & 0x7fff_ffff);
            s[j] = s[(j + M) % N] ^ (y >> 1) ^ mat(y);
        }
        let y = (s[N - 1] & 0x8000_0000) | (s[0] & 0x7fff_ffff);
        s[N - 1] = s[M - 1] ^ (y >> 1) ^ mat(y);
    }

    /// `randint32`.
    pub fn next_u32(&mut self) -> u32 {
        self.left -= 1;
        if self.left == 0 {
            self.next_state();
        }
        let mut y = self.state[self.next];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680;
        y ^= (y << 15) & 0xefc60000;
        y ^= y >> 18;
        y
    }

    /// A float in [0, 1) (`randfloat32`).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() & ((1 << 24) - 1)) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Normal values (Box-Muller) with mean 0 and standard deviation `std`.
    pub fn normal(&mut self, out: &mut [f32], std: f32) {
        for pair in out.chunks_mut(2) {
            let u1 = 1.0 - self.next_f32();
            let u2 = self.next_f32();
            let r = (-2.0 * (u1 + 1e-12).ln()).sqrt();
            let th = 2.0 * std::f32::consts::PI * u2;
            pair[0] = r * th.cos() * std;
            if pair.len() > 1 {
                pair[1] = r * th.sin() * std;
            }
        }
    }

    /// `random_permutation`: Fisher-Yates from the end, as llm.c draws it.
    pub fn permute(&mut self, data: &mut [usize]) {
        for i in (1..data.len()).rev() {
            let j = self.next_u32() as usize % (i + 1);
            data.swap(i, j);
        }
    }
}

/// llm.c's `DataLoader` for one shard and one process: batches of `B*T+1` tokens, in a
/// shuffled order (seed 42) when `shuffle`, reshuffled each time the shard is used up.
pub struct DataLoader {
    tokens: Vec<u16>,
    b: usize,
    t: usize,
    shuffle: bool,
    rng: Mt19937,
    samples: usize,
    order: Vec<usize>,
    current: usize,
    /// The inputs of the last batch.
    pub inputs: Vec<i32>,
    /// The targets of the last batch (the inputs shifted by one).
    pub targets: Vec<i32>,
}

impl DataLoader {
    /// `dataloader_init` on one shard file.
    pub fn new(path: &Path, b: usize, t: usize, shuffle: bool) -> Res<Self> {
        let mut f =
            std::fs::File::open(path).map_err(|e| format!("cannot open shard {}: {e}", path.display()))?;
        let h = read_i32s(&mut f, 256)?;
        if h[0] != 20240520 {
            return Err(format!("{}: bad magic in the data file", path.display()).into());
        }
        if h[1] != 1 {
            return Err(format!("{}: bad version in data file", path.display()).into());
        }
        let ntok = usize::try_from(h[2]).map_err(|_| "negative token count")?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        if bytes.len() != ntok * 2 {
            return Err(format!("{}: file size is not as expected", path.display()).into());
        }
        if ntok < b * t + 1 {
            return Err(format!(
                "{}: {ntok} tokens, fewer than one batch of B*T+1 = {}",
                path.display(),
                b * t + 1
            )
            .into());
        }
        let tokens: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let samples = (ntok * 2 - 2) / (b * t * 2);
        let mut dl = DataLoader {
            tokens,
            b,
            t,
            shuffle,
            rng: Mt19937::new(42),
            samples,
            order: Vec::new(),
            current: 0,
            inputs: vec![0; b * t],
            targets: vec![0; b * t],
        };
        dl.reset();
        Ok(dl)
    }

    /// `dataloader_reset`: one shard, so the shard permutation draws nothing; then a new
    /// permutation of the samples.
    pub fn reset(&mut self) {
        self.current = 0;
        self.order = (0..self.samples).collect();
        if self.shuffle {
            let mut order = std::mem::take(&mut self.order);
            self.rng.permute(&mut order);
            self.order = order;
        }
    }

    /// `dataloader_next_batch`.
    pub fn next_batch(&mut self) {
        if self.current >= self.samples {
            self.reset();
        }
        let idx = self.order[self.current];
        let start = idx * self.b * self.t;
        for i in 0..self.b * self.t {
            self.inputs[i] = self.tokens[start + i] as i32;
            self.targets[i] = self.tokens[start + i + 1] as i32;
        }
        self.current += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rand.h's own check: torch.manual_seed(137) then five randint32.
    #[test]
    fn mt19937_matches_torch() {
        let mut r = Mt19937::new(137);
        let got: Vec<u32> = (0..5).map(|_| r.next_u32()).collect();
        assert_eq!(got, [4053805790, 2173880614, 380293709, 1237255315, 2986595568]);
    }

    #[test]
    fn checkpoint_round_trips() {
        let cfg = Config::SMALL;
        let params = random_params(&cfg, 1);
        let path = std::env::temp_dir().join(format!("gpt2_ckpt_{}.bin", std::process::id()));
        write_checkpoint(&path, &cfg, &params).unwrap();
        let (c2, p2) = read_checkpoint(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert_eq!(c2, cfg);
        assert_eq!(p2, params);
    }
}
