//! The kernels of `roll`, `repeat` and `tile`: each moves whole words (1 to 16 bytes) of a
//! C-order array to their places, so one kernel per word size serves every element type, and
//! the widest word the layout allows moves 16 bytes a thread where it can. Indices that fit
//! 31 bits split with [`FastDiv`] (a multiplication, where a 64-bit `/` per element held
//! `tile` to 0.71 of the copy's speed on an H200).
//!
//! - `gpu_stretch_read` (`repeat`/`tile` of runs of 16 bytes or more, or unaligned ones):
//!   each word of the source read once and written `r` times.
//! - `gpu_stretch_write` (`repeat` of shorter runs, `repeat` along the last axis): each
//!   16-byte word of the result assembled from the elements it repeats, so the writes are
//!   whole 16-byte words (one element written `r` times by one thread left every write a
//!   strided, partial one).
//! - `gpu_roll` (one rolled axis): each word of the result read from its place before the
//!   roll, one kernel for both pieces; `gpu_roll_write` where the steps along the axis are
//!   shorter than 16 bytes (the last axis): each 16-byte word of the result assembled from
//!   its elements (one 4-byte element a thread ran at 0.70 of the copy's speed).

use crate::driver::memory::view::{DeviceView, DeviceViewMut};
use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::kernels::fast_div::{FastDiv, FAST_DIV_C, FAST_DIV_LIMIT};
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::launch::Arg;
use crate::types::repr::DeviceRepr;
use crate::types::{UInt2, UInt4};

/// How a kernel moves its words.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum Movement {
    /// `gpu_stretch_read`.
    StretchRead,
    /// `gpu_stretch_write`; the word is the element's size.
    StretchWrite,
    /// `gpu_roll`.
    Roll,
    /// `gpu_roll_write`; the word is the element's size.
    RollWrite,
}

/// One generated kernel: its movement, its word size in bytes and whether its indices are
/// 32-bit (every index below [`FAST_DIV_LIMIT`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct WordKernel {
    pub(crate) movement: Movement,
    pub(crate) word: usize,
    pub(crate) narrow: bool,
}

static KERNELS: SourceKernels<WordKernel> = SourceKernels::new();

/// The largest word (a power of two, at most 16 bytes) that divides `bytes` and every address.
pub(crate) fn word_for(bytes: usize, addresses: &[u64]) -> usize {
    // The lowest bit set in any of them is the smallest of their powers of two.
    let any = addresses.iter().fold(bytes as u64 | 16, |acc, &a| acc | a);
    1 << any.trailing_zeros()
}

fn word_c(word: usize) -> &'static str {
    match word {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "uint2",
        _ => "uint4",
    }
}

/// The source of `k`. Every kernel takes `(n, x, z, a, a_mul, a_shr, b, b_mul, b_shr, c)`:
/// `n` words of work, the source and the result, two divisors with their [`FastDiv`]
/// constants (used in narrow kernels) and one more number.
pub(crate) fn source(k: WordKernel) -> String {
    let (index, div) = if k.narrow {
        ("unsigned int", "gpu_fdiv(x, (unsigned int)(d), m, s)")
    } else {
        ("unsigned long long", "((x) / (d))")
    };
    let (name, x_type) = (name(k.movement), word_c(k.word));
    let z_type = if assembles(k.movement) { "uint4" } else { x_type };
    let body = match k.movement {
        // Word e is in run `row = e / a` at `e - row * a`, written to `(row * c + j) * a + ..`.
        Movement::StretchRead => "        I row = DIV(e, a, a_mul, a_shr);\n\
             \x20       W v = x[e];\n\
             \x20       Z *o = z + row * (c - 1) * a + e;\n\
             \x20       for (I j = 0; j < c; ++j) o[j * a] = v;\n"
            .to_owned(),
        // Result element q = (row * c + rep) * a + i comes from element row * a + i.
        Movement::StretchWrite => assembled(k.word, ["rr", "row", "rep"], "row * a + i"),
        // Result element q = (o * b + j) * a + i comes from (o * b + (j - c mod b)) * a + i.
        Movement::RollWrite => assembled(
            k.word,
            ["oj", "o", "j"],
            "(o * b + (j >= c ? j - c : j + (b - c))) * a + i",
        ),
        // Word e = (o * b + j) * a + i comes from j - c along the rolled axis (mod b).
        Movement::Roll => "        I oj = DIV(e, a, a_mul, a_shr);\n\
             \x20       I j = oj - DIV(oj, b, b_mul, b_shr) * b;\n\
             \x20       z[e] = x[j >= c ? e - c * a : e + (b - c) * a];\n"
            .to_owned(),
    };
    format!(
        "{FAST_DIV_C}#define DIV(x, d, m, s) {div}\n\
         typedef {index} I;\ntypedef {x_type} W;\ntypedef {z_type} Z;\n\
         extern \"C\" __global__ void {name}(unsigned long long n_, const {x_type} *__restrict__ x, \
         {z_type} *__restrict__ z, unsigned long long a_, unsigned int a_mul, unsigned int a_shr, \
         unsigned long long b_, unsigned int b_mul, unsigned int b_shr, unsigned long long c_) {{\n\
         \x20   const I n = (I)n_, a = (I)a_, b = (I)b_, c = (I)c_;\n\
         \x20   (void)b; (void)b_mul; (void)b_shr;\n\
         \x20   for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (I)gridDim.x * blockDim.x) {{\n\
         {body}    }}\n}}\n"
    )
}

/// The body of a kernel that assembles each 16-byte word `e` of the result from the
/// `16 / word` elements it holds: result element `q = (outer * b + middle) * a + i` (`pair`
/// names `outer * b + middle`, then `outer`, then `middle`) read from `x[source]`, the three
/// coordinates stepped along the word instead of divided again.
fn assembled(word: usize, [pair, outer, middle]: [&str; 3], source: &str) -> String {
    format!(
        "        I q = e * {v};\n\
         \x20       I {pair} = DIV(q, a, a_mul, a_shr);\n\
         \x20       I i = q - {pair} * a;\n\
         \x20       I {outer} = DIV({pair}, b, b_mul, b_shr);\n\
         \x20       I {middle} = {pair} - {outer} * b;\n\
         \x20       union {{ uint4 all; W one[{v}]; }} out;\n\
         #pragma unroll\n\
         \x20       for (int m = 0; m < {v}; ++m) {{\n\
         \x20           out.one[m] = x[{source}];\n\
         \x20           if (++i == a) {{ i = 0; if (++{middle} == b) {{ {middle} = 0; ++{outer}; }} }}\n\
         \x20       }}\n\
         \x20       z[e] = out.all;\n",
        v = 16 / word
    )
}

/// The kernel's name in its source.
fn name(m: Movement) -> &'static str {
    match m {
        Movement::StretchRead => "gpu_stretch_read",
        Movement::StretchWrite => "gpu_stretch_write",
        Movement::Roll => "gpu_roll",
        Movement::RollWrite => "gpu_roll_write",
    }
}

/// Whether `m` assembles 16-byte words of the result (`z` seen as `uint4`).
fn assembles(m: Movement) -> bool {
    matches!(m, Movement::StretchWrite | Movement::RollWrite)
}

/// Launches `k` over `n` words with the divisors `a` and `b` and the number `c`.
#[allow(clippy::too_many_arguments)]
fn launch<X: DeviceRepr, Z: DeviceRepr>(
    k: WordKernel,
    x: &DeviceView<'_, X>,
    z: &mut DeviceViewMut<'_, Z>,
    n: u64,
    a: u64,
    b: u64,
    c: u64,
    stream: Option<&Stream>,
) -> Result<()> {
    let ctx = x.context();
    let f = KERNELS.prepared(ctx, k, name(k.movement), || source(k))?;
    // Narrow kernels take divisors below 2^31; wide ones ignore the constants.
    let (fa, fb) = if k.narrow {
        (FastDiv::new(a as u32), FastDiv::new(b as u32))
    } else {
        (FastDiv::new(1), FastDiv::new(1))
    };
    let args = [
        Arg::U64(n),
        Arg::input::<X, _>(x),
        Arg::output::<Z, _>(z),
        Arg::U64(a),
        Arg::U32(fa.mul),
        Arg::U32(fa.shr),
        Arg::U64(b),
        Arg::U32(fb.mul),
        Arg::U32(fb.shr),
        Arg::U64(c),
    ];
    registry::launch(&f, registry::grid_for(ctx, n)?, BLOCK, stream, &args)
}

/// Launches `k` with `x` and `z` seen as words of `k.word` bytes (`z` as 16-byte words for
/// `StretchWrite` and `RollWrite`).
#[allow(clippy::too_many_arguments)]
fn launch_words<T: DeviceRepr>(
    k: WordKernel,
    x: DeviceView<'_, T>,
    z: DeviceViewMut<'_, T>,
    n: u64,
    a: u64,
    b: u64,
    c: u64,
    stream: Option<&Stream>,
) -> Result<()> {
    macro_rules! go {
        ($w:ty) => {{
            let x = x.cast::<$w>()?;
            if assembles(k.movement) {
                launch(k, &x, &mut z.cast_mut::<UInt4>()?, n, a, b, c, stream)
            } else {
                launch(k, &x, &mut z.cast_mut::<$w>()?, n, a, b, c, stream)
            }
        }};
    }
    match k.word {
        1 => go!(u8),
        2 => go!(u16),
        4 => go!(u32),
        8 => go!(UInt2),
        _ => go!(UInt4),
    }
}

/// `z` (`x.len() * r` elements) made from the C-order `x`, its runs of `unit` elements each
/// written `r` times in a row (`repeat` along an axis: `unit` the elements after it; `tile`:
/// the axis and the elements after it).
pub(crate) fn stretch<T: DeviceRepr>(
    x: DeviceView<'_, T>,
    z: DeviceViewMut<'_, T>,
    unit: usize,
    r: usize,
    stream: Option<&Stream>,
) -> Result<()> {
    let size = std::mem::size_of::<T>();
    let (xa, za) = (x.device_ptr(), z.device_ptr());
    let out_bytes = z.len() * size;
    let unit_bytes = unit * size;
    // Short runs of elements of 1 to 8 bytes: assemble 16-byte words of the result.
    if unit_bytes < 16
        && size.is_power_of_two()
        && size <= 8
        && out_bytes.is_multiple_of(16)
        && xa.is_multiple_of(size as u64)
        && za.is_multiple_of(16)
    {
        let k = WordKernel {
            movement: Movement::StretchWrite,
            word: size,
            narrow: (z.len() as u64) < FAST_DIV_LIMIT,
        };
        return launch_words(k, x, z, (out_bytes / 16) as u64, unit as u64, r as u64, 0, stream);
    }
    let word = word_for(unit_bytes, &[xa, za]);
    let n = x.len() * size / word;
    let k = WordKernel {
        movement: Movement::StretchRead,
        word,
        narrow: (n as u64).saturating_mul(r as u64) < FAST_DIV_LIMIT,
    };
    launch_words(k, x, z, n as u64, (unit_bytes / word) as u64, 0, r as u64, stream)
}

/// `z` = the C-order `x` rolled by `shift` (in `1..len`) along an axis of `len` elements
/// followed by `inner` elements per step.
pub(crate) fn roll<T: DeviceRepr>(
    x: DeviceView<'_, T>,
    z: DeviceViewMut<'_, T>,
    inner: usize,
    len: usize,
    shift: usize,
    stream: Option<&Stream>,
) -> Result<()> {
    let size = std::mem::size_of::<T>();
    let out_bytes = z.len() * size;
    // Steps of elements of 1 to 8 bytes shorter than 16 bytes: assemble 16-byte words.
    if inner * size < 16
        && size.is_power_of_two()
        && size <= 8
        && out_bytes.is_multiple_of(16)
        && x.device_ptr().is_multiple_of(size as u64)
        && z.device_ptr().is_multiple_of(16)
    {
        let k = WordKernel {
            movement: Movement::RollWrite,
            word: size,
            narrow: (z.len() as u64) < FAST_DIV_LIMIT,
        };
        let words = (out_bytes / 16) as u64;
        return launch_words(k, x, z, words, inner as u64, len as u64, shift as u64, stream);
    }
    let word = word_for(inner * size, &[x.device_ptr(), z.device_ptr()]);
    let n = x.len() * size / word;
    let k = WordKernel {
        movement: Movement::Roll,
        word,
        narrow: (n as u64) < FAST_DIV_LIMIT,
    };
    let inner_words = (inner * size / word) as u64;
    launch_words(k, x, z, n as u64, inner_words, len as u64, shift as u64, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_divides_the_run_and_both_addresses() {
        assert_eq!(word_for(4, &[0x1000, 0x2000]), 4);
        assert_eq!(word_for(32768, &[0x1000, 0x2000]), 16);
        assert_eq!(word_for(32768, &[0x1004, 0x2000]), 4);
        assert_eq!(word_for(24, &[0x1000, 0x2000]), 8);
        assert_eq!(word_for(12, &[0x1000, 0x2008]), 4);
        assert_eq!(word_for(3, &[0x1000, 0x2000]), 1);
    }

    /// Every kernel compiles for compute_90, its declaration reads with ten parameters.
    #[test]
    fn every_word_kernel_compiles() {
        use crate::gpuarray::kernels::registry::compile_check;
        let movements = [
            Movement::StretchRead,
            Movement::StretchWrite,
            Movement::Roll,
            Movement::RollWrite,
        ];
        for movement in movements {
            for word in [1, 2, 4, 8, 16] {
                if matches!(movement, Movement::StretchWrite | Movement::RollWrite) && word == 16 {
                    continue;
                }
                for narrow in [false, true] {
                    let k = WordKernel {
                        movement,
                        word,
                        narrow,
                    };
                    let src = source(k);
                    if let Err(e) = compile_check(&src, "sm_90") {
                        panic!("{k:?} does not compile: {e}\n{src}");
                    }
                    let kernels = gpu_cuda_source::find_kernels(&src).expect("the declaration reads");
                    assert_eq!(kernels.len(), 1, "{src}");
                    assert_eq!(kernels[0].name, name(movement), "{src}");
                    assert_eq!(kernels[0].params.len(), 10, "{src}");
                }
            }
        }
    }
}
