//! Random integers in `[low, high)` (NumPy's `randint(low, high, size, dtype)`, CuPy's
//! `random.randint`), for every integer type, from the same Philox4x32-10 as the other fills
//! (`philox.rs`), unbiased by Lemire's method ("Fast random integer generation in an
//! interval", ACM TOMS 2019): a word `x` maps to `(x * r) >> 32` (64-bit words and a 128-bit
//! product when the range `r` exceeds 2^32), rejecting the few low products that would make
//! some values more likely.
//!
//! Elements `4g .. 4g + 3` (C order) draw their words, in order, from the Philox blocks with
//! counters `(g mod 2^32, g / 2^32, z, 0x52494e54)`, `z = 0, 1, ...` as they use them up (one
//! word each for a range up to 2^32 unless rejected, two beyond), and the key
//! `(seed mod 2^32, seed / 2^32)`: one Philox block usually serves four elements (a block per
//! element made the fill compute-bound at a quarter of the copy's speed), a thread stores
//! their values at once, and the value depends only on the seed and `i`, as the other fills'
//! do; these words are none of theirs (their fourth counter word is 0).

use ndarray::{Dimension, ShapeBuilder};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{ArrayShapeError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::dtype::DType;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::elements::index_element::IndexElement;
use crate::gpuarray::kernels::registry::{self, BLOCK};
use crate::gpuarray::kernels::source_kernels::SourceKernels;
use crate::gpuarray::random::philox::PHILOX_C;
use crate::launch::Arg;

const NAME: &str = "gpu_randint";

/// The fourth counter word of every block `randint` draws (`"RINT"`).
pub(crate) const TAG: u32 = 0x5249_4e54;

/// The class of a range `r`, each with a kernel of its own (a kernel that tested the range on
/// every group ran at 0.61 of the copy's speed on an H200; one per class at 0.88, as fast as
/// the uniform fill).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Range {
    /// `r < 2^32`: one word an element, Lemire's 32x32-bit product.
    Narrow,
    /// `r == 2^32`: the word itself.
    Word,
    /// `r > 2^32`, or `r == 0` (2^64): two words an element, a 64x64-bit product.
    Wide,
}

impl Range {
    fn of(r: u64) -> Range {
        match r {
            r if r != 0 && r < 1 << 32 => Range::Narrow,
            r if r == 1 << 32 => Range::Word,
            _ => Range::Wide,
        }
    }
}

fn source(t: DType, range: Range) -> String {
    let tc = t.c_name();
    // The four values of a thread's group stored at once when `out` is aligned to their size
    // (at most 16 bytes a store): one store of a warp covers adjacent memory.
    let bytes = 4 * t.size();
    let vector = match bytes {
        4 => "unsigned int q; memcpy(&q, o, 4); *(unsigned int *)(out + 4 * g) = q;",
        8 => "uint2 q; memcpy(&q, o, 8); *(uint2 *)(out + 4 * g) = q;",
        16 => "uint4 q; memcpy(&q, o, 16); *(uint4 *)(out + 4 * g) = q;",
        _ => "uint4 q[2]; memcpy(q, o, 32); ((uint4 *)(out + 4 * g))[0] = q[0]; ((uint4 *)(out + 4 * g))[1] = q[1];",
    };
    let align = bytes.min(16);
    // The group's four values on the fast path: one Philox block (two beyond 2^32), four
    // products, and `slow` set when one of the first draws is rejected (for `r < 2^32`, with
    // probability at most 4t / 2^32: about 1 in a million groups for `r = 1000`).
    let fast = match range {
        Range::Word => format!(
            "const bool slow = false;\n\
             o[0] = ({tc})(low + q.x); o[1] = ({tc})(low + q.y); o[2] = ({tc})(low + q.z); o[3] = ({tc})(low + q.w);"
        ),
        Range::Narrow => format!(
            "const unsigned int r32 = (unsigned int)r, t32 = (unsigned int)t;\n\
             const unsigned long long m0 = (unsigned long long)q.x * r32, m1 = (unsigned long long)q.y * r32;\n\
             const unsigned long long m2 = (unsigned long long)q.z * r32, m3 = (unsigned long long)q.w * r32;\n\
             const bool slow = ((unsigned int)m0 < t32) | ((unsigned int)m1 < t32) | ((unsigned int)m2 < t32) | ((unsigned int)m3 < t32);\n\
             o[0] = ({tc})(low + (m0 >> 32)); o[1] = ({tc})(low + (m1 >> 32));\n\
             o[2] = ({tc})(low + (m2 >> 32)); o[3] = ({tc})(low + (m3 >> 32));"
        ),
        Range::Wide => format!(
            "const uint4 q1 = gpu_philox(make_uint4(glo, ghi, 1u, {TAG}u), key);\n\
             const unsigned long long x[4] = {{ ((unsigned long long)q.x << 32) | q.y, ((unsigned long long)q.z << 32) | q.w,\n\
                 ((unsigned long long)q1.x << 32) | q1.y, ((unsigned long long)q1.z << 32) | q1.w }};\n\
             bool slow = false;\n\
             #pragma unroll\n\
             for (int k = 0; k < 4; ++k) {{\n\
                 slow |= r != 0ull && x[k] * r < t;\n\
                 o[k] = ({tc})(low + (r == 0ull ? x[k] : __umul64hi(x[k], r)));\n\
             }}"
        ),
    };
    // `gpu_slow` is the definition of the module docs, word by word (each element takes its
    // words in turn, redrawing while Lemire's product falls below the threshold `t`, from
    // the next blocks of the group's counter), and stores the group itself; it is never
    // inlined, so that the fast path keeps its registers (inlined, its loops of Philox rounds
    // slowed every group). No division in a thread (`t` comes from the host), no state an
    // element.
    format!(
        "{PHILOX_C}struct gpu_words {{ uint4 q; unsigned int lo, hi, z; int used; uint2 key; }};\n\
         __device__ __forceinline__ unsigned int gpu_next(gpu_words &s) {{\n\
             if (s.used == 4) {{ s.z += 1u; s.q = gpu_philox(make_uint4(s.lo, s.hi, s.z, {TAG}u), s.key); s.used = 0; }}\n\
             const unsigned int w = s.used == 0 ? s.q.x : s.used == 1 ? s.q.y : s.used == 2 ? s.q.z : s.q.w;\n\
             s.used += 1;\n\
             return w;\n\
         }}\n\
         __device__ __forceinline__ unsigned long long gpu_draw(gpu_words &s, unsigned long long r, unsigned long long t) {{\n\
             if (r == 4294967296ull) return gpu_next(s);\n\
             if (r != 0ull && r < 4294967296ull) {{\n\
                 const unsigned int r32 = (unsigned int)r, t32 = (unsigned int)t;\n\
                 unsigned long long m = (unsigned long long)gpu_next(s) * r32;\n\
                 while ((unsigned int)m < t32) m = (unsigned long long)gpu_next(s) * r32;\n\
                 return m >> 32;\n\
             }}\n\
             unsigned long long x = (unsigned long long)gpu_next(s) << 32;\n\
             x |= gpu_next(s);\n\
             if (r == 0ull) return x;\n\
             while (x * r < t) {{ x = (unsigned long long)gpu_next(s) << 32; x |= gpu_next(s); }}\n\
             return __umul64hi(x, r);\n\
         }}\n\
         __device__ __noinline__ void gpu_slow(long long n, long long g, uint2 key, unsigned long long low, unsigned long long r, unsigned long long t, {tc} *out) {{\n\
             gpu_words s;\n\
             s.lo = (unsigned int)g; s.hi = (unsigned int)((unsigned long long)g >> 32); s.z = 0u; s.used = 0;\n\
             s.key = key;\n\
             s.q = gpu_philox(make_uint4(s.lo, s.hi, 0u, {TAG}u), s.key);\n\
             for (int k = 0; k < 4; ++k) {{ const {tc} v = ({tc})(low + gpu_draw(s, r, t)); if (4 * g + k < n) out[4 * g + k] = v; }}\n\
         }}\n\
         extern \"C\" __global__ void {NAME}(long long n, unsigned int k0, unsigned int k1, unsigned long long low, \
         unsigned long long r, unsigned long long t, {tc} *__restrict__ out) {{\n\
         (void)r; (void)t;\n\
         const bool vec = ((unsigned long long)out % {align}ull) == 0ull;\n\
         const uint2 key = make_uint2(k0, k1);\n\
         const long long ng = (n + 3) / 4;\n\
         for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < ng; g += (long long)gridDim.x * blockDim.x) {{\n\
             const unsigned int glo = (unsigned int)g, ghi = (unsigned int)((unsigned long long)g >> 32);\n\
             const uint4 q = gpu_philox(make_uint4(glo, ghi, 0u, {TAG}u), key);\n\
             {tc} o[4];\n\
             {fast}\n\
             if (slow) {{ gpu_slow(n, g, key, low, r, t, out); continue; }}\n\
             if (vec && 4 * g + 4 <= n) {{ {vector} continue; }}\n\
             #pragma unroll\n\
             for (int k = 0; k < 4; ++k) if (4 * g + k < n) out[4 * g + k] = o[k];\n\
         }}\n}}\n"
    )
}

static KERNELS: SourceKernels<(DType, Range)> = SourceKernels::new();

fn prepared(ctx: &Context, t: DType, range: Range) -> Result<crate::launch::PreparedFunction> {
    KERNELS.prepared(ctx, (t, range), NAME, || source(t, range))
}

/// Lemire's rejection threshold for the range `r` (`0` meaning 2^64): `2^32 mod r` for a range
/// below 2^32 (a 32-bit word's product with `r` is rejected when its low half is below it),
/// `2^64 mod r` for a wider one, and 0 (nothing rejected) for 2^32 and 2^64. Computed here,
/// once a call, so that no kernel thread divides.
pub(crate) fn threshold(r: u64) -> u64 {
    match r {
        0 => 0,
        r if r < 1 << 32 => (1u64 << 32) % r,
        r if r == 1 << 32 => 0,
        r => r.wrapping_neg() % r,
    }
}

/// The range `high - low` as the kernel's `r` (`0` meaning 2^64), and `low` as its bits.
pub(crate) fn range_args(low: i128, high: i128) -> Result<(u64, u64)> {
    if low >= high {
        return Err(ArrayShapeError::EmptyRange {
            low: low.to_string(),
            high: high.to_string(),
        }
        .into());
    }
    Ok(((high - low) as u64, low as u64))
}

impl<T: IndexElement, D: Dimension> DeviceArray<T, D> {
    /// A new C-order array of `shape` of random integers in `[low, high)` (NumPy's
    /// `randint(low, high, size, dtype)`; `high` excluded, `low >= high` is
    /// [`ArrayShapeError::EmptyRange`]), uniform and unbiased, from `seed` (see
    /// [`fill_randint`](DeviceArrayBase::fill_randint)).
    ///
    /// ```no_run
    /// use gpu_runtime::gpuarray::DeviceArray;
    /// let ctx = gpu_runtime::Context::default()?;
    /// let dice = DeviceArray::<i32, _>::randint(&ctx, 1000, 1, 7, 42)?;
    /// assert!(dice.to_vec()?.iter().all(|d| (1..7).contains(d)));
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn randint<Sh: ShapeBuilder<Dim = D>>(
        ctx: &Context,
        shape: Sh,
        low: T,
        high: T,
        seed: u64,
    ) -> Result<Self> {
        OnStream::legacy(ctx).randint(shape, low, high, seed)
    }
}

impl OnStream<'_, &Context> {
    /// [`DeviceArray::randint`] on this stream.
    pub fn randint<T: IndexElement, D: Dimension, Sh: ShapeBuilder<Dim = D>>(
        &self,
        shape: Sh,
        low: T,
        high: T,
        seed: u64,
    ) -> Result<DeviceArray<T, D>> {
        self.filled(shape, |mut a| a.fill_randint(low, high, seed))
    }
}

impl<S: StorageMut<Elem: IndexElement>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// Fills the array with random integers in `[low, high)` from Philox4x32-10 with `seed`
        /// (see the module docs of `integers.rs`): element `i` in C order is the same for the same
        /// seed on every device and in every layout.
        fn fill_randint(&mut self, low: S::Elem, high: S::Elem, seed: u64) -> Result<()>;
    }
}

impl<S: StorageMut<Elem: IndexElement>, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`fill_randint`](DeviceArrayBase::fill_randint) on this stream.
    pub fn fill_randint(&mut self, low: S::Elem, high: S::Elem, seed: u64) -> Result<()> {
        fill_stream(self.target, low, high, seed, self.stream)
    }
}

fn fill_stream<S: StorageMut<Elem: IndexElement>, D: Dimension>(
    a: &mut DeviceArrayBase<S, D>,
    low: S::Elem,
    high: S::Elem,
    seed: u64,
    stream: Option<&Stream>,
) -> Result<()> {
    let (r, low_bits) = range_args(low.to_i128(), high.to_i128())?;
    if !a.is_standard_layout() {
        // Drawn in C order, then stored through this array's layout.
        let mut tmp = DeviceArray::<S::Elem, D>::empty(a.context(), a.raw_dim())?;
        fill_stream(&mut tmp, low, high, seed, stream)?;
        return OnStream::new(a, stream).copy_from(&tmp);
    }
    let n = a.len();
    if n == 0 {
        return Ok(());
    }
    let ctx = a.context().clone();
    let f = prepared(&ctx, S::Elem::DTYPE, Range::of(r))?;
    // A grid-stride loop over a few blocks a multiprocessor (`grid_for`): on an H200, 74 us for
    // 2^26 `i32` against 94 us with a block per 256 groups.
    let groups = (n as u64).div_ceil(4);
    let grid = registry::grid_for(&ctx, groups)?;
    registry::launch(
        &f,
        grid,
        BLOCK,
        stream,
        &[
            Arg::I64(n as i64),
            Arg::U32(seed as u32),
            Arg::U32((seed >> 32) as u32),
            Arg::U64(low_bits),
            Arg::U64(r),
            Arg::U64(threshold(r)),
            Arg::output::<S::Elem, _>(a),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_compile_for_every_integer_type_and_range() {
        // The integer types, `i8` to `u64`, in `DType::ALL`.
        let types = &DType::ALL[1..9];
        let mut all = String::new();
        let cases = types
            .iter()
            .flat_map(|&t| [Range::Narrow, Range::Word, Range::Wide].map(|r| (t, r)));
        for (k, (t, range)) in cases.enumerate() {
            let s = source(t, range);
            assert_eq!(gpu_cuda_source::find_kernel(&s, NAME).unwrap().params.len(), 7);
            all.push_str(
                &s.replace(NAME, &format!("{NAME}{k}"))
                    .replace("gpu_philox", &format!("gpu_philox{k}"))
                    .replace("gpu_words", &format!("gpu_words{k}"))
                    .replace("gpu_next", &format!("gpu_next{k}"))
                    .replace("gpu_draw", &format!("gpu_draw{k}"))
                    .replace("gpu_slow", &format!("gpu_slow{k}")),
            );
        }
        if let Err(e) = registry::compile_check(&all, "sm_90") {
            panic!("{e}");
        }
    }

    #[test]
    fn ranges_are_exact_for_every_type() {
        assert_eq!((-128i8).to_i128(), -128);
        assert_eq!(u64::MAX.to_i128(), u64::MAX as i128);
        assert_eq!(range_args(-5, 3).unwrap(), (8, (-5i64) as u64));
        // The whole of u64 but its top: r = 2^64 - 1.
        assert_eq!(range_args(0, u64::MAX as i128).unwrap().0, u64::MAX);
        // The whole of i64 but its top.
        assert_eq!(
            range_args(i64::MIN as i128, i64::MAX as i128).unwrap().0,
            u64::MAX
        );
        assert!(matches!(
            range_args(3, 3),
            Err(crate::error::Error::Shape(ArrayShapeError::EmptyRange { ref low, ref high })) if low == "3" && high == "3"
        ));
        assert!(range_args(4, 3).is_err());
    }

    #[test]
    fn thresholds_are_the_rejected_low_products() {
        // 2^32 mod 1000 = 296; 2^32 mod 3 = 1; powers of two reject nothing.
        assert_eq!(threshold(1000), 296);
        assert_eq!(threshold(3), 1);
        assert_eq!(threshold(1 << 20), 0);
        assert_eq!(threshold(1 << 32), 0);
        assert_eq!(threshold(0), 0);
        // 2^64 mod (2^63 + 1) = 2^63 - 1; 2^64 mod (2^32 + 1) = 1.
        assert_eq!(threshold((1 << 63) + 1), (1 << 63) - 1);
        assert_eq!(threshold((1 << 32) + 1), 1);
        assert_eq!(threshold(u64::MAX), 1);
    }
}
