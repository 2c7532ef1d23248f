//! Random numbers on the device: a counter-based generator (Philox4x32-10, Salmon et al.,
//! "Parallel random numbers: as easy as 1, 2, 3", SC 2011, as in Random123 and cuRAND) written
//! as a generated kernel, so no library is needed and the stream is the same on every GPU.
//!
//! The value of the element with C-order flat index `i` depends only on the seed and `i`: it
//! comes from block `g = i / W` of Philox with the counter `(g mod 2^32, g / 2^32, 0, 0)` and
//! the key `(seed mod 2^32, seed / 2^32)`, where `W` is 4 for 32-bit outputs and 2 for `f64`
//! (which takes two words per value). `philox4x32_10`, for the tests, is the same function on
//! the host.
//!
//! - `u32`, uniform: the word itself (word `i mod 4` of the block).
//! - `f32`, uniform: `(w >> 8) * 2^-24`, in `[0, 1)`; `f64`: 53 bits of two words, `[0, 1)`.
//! - normal: Box-Muller on pairs of uniforms (`u1` in `(0, 1]`), `mean + std * z`.
//! - complex, normal only (NumPy has no complex uniform): `mean + std * z` (complex `mean`
//!   and `std`), `z` the standard complex normal, whose real and imaginary parts are
//!   independent normals of variance 1/2 each (so `E|z|^2 = 1`, as JAX's `normal` on complex
//!   types; NumPy and CuPy draw no complex normals). Element `i`'s parts are the normal values
//!   `2i` and `2i + 1` of the part type's stream above, times `sqrt(1/2)`.
//!
//!
//! Each thread computes whole Philox blocks and, when the array's first element is aligned to
//! a block's bytes (16 for `u32`, `f32` and `f64`; 8 for `f16` and `bf16`), stores each block's
//! values with one vector store (a warp's store covers 512 adjacent bytes): one 4-byte store
//! per element, 16 bytes apart across the warp, left the `f32` fill at 0.75x the copy
//! bandwidth on an H100. The values are the same either way.

use gpu_cuda_source::Scalar;
use ndarray::{Dimension, ShapeBuilder};

use crate::driver::context::core::Context;
use crate::driver::stream::Stream;
use crate::error::{ArgumentError, Result};
use crate::gpuarray::array::core::{DeviceArray, DeviceArrayBase, StorageMut};
use crate::gpuarray::array::on_stream::{on_legacy_stream, OnStream};
use crate::gpuarray::elements::cast;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::{self, KernelKey, BLOCK};
use crate::launch::Arg;

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32 with 10 rounds, on the host: the reference the device kernels match bit for bit
/// (for the tests: `gpu_runtime::__testing`).
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// A distribution of [`DeviceArrayBase::fill_uniform`] and [`DeviceArrayBase::fill_normal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Uniform: the raw word for `u32`, `[0, 1)` scaled by `a + b * u` for floats.
    Uniform,
    /// Normal: `a + b * z`, `z` standard normal; floats only.
    Normal,
}

pub(crate) const PHILOX_C: &str = "__device__ __forceinline__ uint4 gpu_philox(uint4 c, uint2 k) {\n\
#pragma unroll\n\
for (int r = 0; r < 10; ++r) {\n\
if (r) { k.x += 0x9E3779B9u; k.y += 0xBB67AE85u; }\n\
unsigned int hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;\n\
unsigned int hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;\n\
c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);\n\
}\nreturn c;\n}\n";

/// Values per Philox block, and the C that sets `v[0..W]` from the block `r`, or `None` when
/// the distribution does not apply to the type.
fn body(scalar: Scalar, dist: Distribution) -> Option<(u32, &'static str)> {
    use Distribution::*;
    Some(match (scalar, dist) {
        (Scalar::U32, Uniform) => (4, "v[0] = r.x; v[1] = r.y; v[2] = r.z; v[3] = r.w;"),
        (Scalar::F32, Uniform) => (
            4,
            "const float s = 5.9604644775390625e-8f; v[0] = a + b * ((r.x >> 8) * s); v[1] = a + b * ((r.y >> 8) * s); \
             v[2] = a + b * ((r.z >> 8) * s); v[3] = a + b * ((r.w >> 8) * s);",
        ),
        (Scalar::F64, Uniform) => (
            2,
            "const double s = 1.1102230246251565e-16; \
             v[0] = a + b * ((double)((((unsigned long long)r.x << 32) | r.y) >> 11) * s); \
             v[1] = a + b * ((double)((((unsigned long long)r.z << 32) | r.w) >> 11) * s);",
        ),
        (Scalar::F32, Normal) => (
            4,
            "const float s = 5.9604644775390625e-8f; float sn, cs;\n\
             float q = sqrtf(-2.0f * logf(((r.x >> 8) + 1) * s)); sincospif(2.0f * ((r.y >> 8) * s), &sn, &cs); v[0] = a + b * q * cs; v[1] = a + b * q * sn;\n\
             q = sqrtf(-2.0f * logf(((r.z >> 8) + 1) * s)); sincospif(2.0f * ((r.w >> 8) * s), &sn, &cs); v[2] = a + b * q * cs; v[3] = a + b * q * sn;",
        ),
        (Scalar::F64, Normal) => (
            2,
            "const double s = 1.1102230246251565e-16; double sn, cs;\n\
             double u1 = (double)(((((unsigned long long)r.x << 32) | r.y) >> 11) + 1) * s;\n\
             double u2 = (double)((((unsigned long long)r.z << 32) | r.w) >> 11) * s;\n\
             double q = sqrt(-2.0 * log(u1)); sincospi(2.0 * u2, &sn, &cs); v[0] = a + b * q * cs; v[1] = a + b * q * sn;",
        ),
        _ => return None,
    })
}

fn name(scalar: Scalar, dist: Distribution) -> String {
    // `half::f16` is not a C identifier: the part after the path.
    let rust = scalar.rust_type().rsplit("::").next().unwrap_or("t");
    format!("gpu_philox_{dist:?}_{rust}").to_lowercase()
}

/// The type the values of an array of `scalar` are drawn in: `f32` for the 16-bit floats
/// (then rounded once into them), else the type itself.
fn drawn_in(scalar: Scalar) -> Scalar {
    match scalar {
        Scalar::F16 | Scalar::Bf16 => Scalar::F32,
        s => s,
    }
}

/// The CUDA C source of the kernel filling a contiguous array of `T` from `dist`, or an error
/// when `dist` does not apply to `T` (uniform: `u32`, `f16`, `bf16`, `f32`, `f64`; normal: the
/// same floats). `f16` and `bf16` are drawn as `f32` and rounded once to nearest.
pub fn random_source<T: Element>(dist: Distribution) -> Result<String> {
    if T::DTYPE.is_complex() {
        return complex_source::<T>(dist);
    }
    let drawn = drawn_in(T::SCALAR);
    let (w, code) = body(drawn, dist).ok_or_else(|| no_distribution::<T>(dist))?;
    let (t, d) = (T::c_name(), drawn.c_name());
    let (a_in, b_in) = (
        cast::cast_c(T::SCALAR, drawn, "a_in"),
        cast::cast_c(T::SCALAR, drawn, "b_in"),
    );
    let store = cast::cast_c(drawn, T::SCALAR, "v[k]");
    // A block's values stored as one vector when the launch says the array allows it
    // (`gpu_vec`, see `vector_c`): a warp's store then covers adjacent memory in one access.
    let vector = match vector_c::<T>(w) {
        Some(vt) => format!(
            "if (gpu_vec && g * {w} + {w} <= n) {{ {vt} q; memcpy(&q, o, sizeof(q)); (({vt} *)(out + out_o))[g] = q; continue; }}\n"
        ),
        None => String::new(),
    };
    Ok(format!(
        "{headers}{PHILOX_C}extern \"C\" __global__ void {name}(long long n, unsigned int k0, unsigned int k1, {t} a_in, {t} b_in, {t} *__restrict__ out, long long out_o, int gpu_vec) {{\n\
         const {d} a = {a_in}, b = {b_in};\n\
         (void)a; (void)b; (void)gpu_vec;\n\
         long long gpu_t = blockIdx.x * (long long)blockDim.x + threadIdx.x, gpu_nt = (long long)gridDim.x * blockDim.x;\n\
         long long ng = (n + {w} - 1) / {w};\n\
         for (long long g = gpu_t; g < ng; g += gpu_nt) {{\n\
         uint4 r = gpu_philox(make_uint4((unsigned int)g, (unsigned int)(g >> 32), 0u, 0u), make_uint2(k0, k1));\n\
         {d} v[{w}];\n{code}\n\
         {t} o[{w}];\n\
         #pragma unroll\nfor (int k = 0; k < {w}; ++k) o[k] = {store};\n\
         {vector}\
         #pragma unroll\nfor (int k = 0; k < {w}; ++k) {{ long long i = g * {w} + k; if (i < n) out[out_o + i] = o[k]; }}\n}}\n}}\n",
        headers = cast::headers_for([T::DTYPE]),
        name = name(T::SCALAR, dist)
    ))
}

/// The CUDA C type of one store of a Philox block's `w` values of `T` (16, 8 or 4 bytes), or
/// `None` when they make no such size.
fn vector_c<T>(w: u32) -> Option<&'static str> {
    match w as usize * std::mem::size_of::<T>() {
        16 => Some("uint4"),
        8 => Some("uint2"),
        4 => Some("unsigned int"),
        _ => None,
    }
}

/// The kernel's name for elements of `T`.
fn kernel_name<T: Element>(dist: Distribution) -> String {
    if T::DTYPE.is_complex() {
        format!("gpu_philox_{dist:?}_complex_{}", T::SCALAR.rust_type()).to_lowercase()
    } else {
        name(T::SCALAR, dist)
    }
}

/// Elements of `T` each Philox block fills (a complex element takes two values).
fn per_block<T: Element>(dist: Distribution) -> u32 {
    let w = body(drawn_in(T::SCALAR), dist).map_or(4, |b| b.0);
    if T::DTYPE.is_complex() {
        w / 2
    } else {
        w
    }
}

/// The source of a complex normal fill (see the module docs): the part type's normal values,
/// scaled by `sqrt(1/2)`, paired into complex numbers and mapped to `a_in + b_in * z`.
fn complex_source<T: Element>(dist: Distribution) -> Result<String> {
    let part = T::SCALAR;
    let (w, code) = body(part, dist)
        .filter(|_| dist == Distribution::Normal)
        .ok_or_else(|| no_distribution::<T>(dist))?;
    let (t, d) = (T::c_name(), part.c_name());
    Ok(format!(
        "{headers}{PHILOX_C}extern \"C\" __global__ void {name}(long long n, unsigned int k0, unsigned int k1, {t} a_in, {t} b_in, {t} *__restrict__ out, long long out_o, int gpu_vec) {{\n\
         const {d} a = 0, b = ({d})0.70710678118654752440;\n\
         (void)gpu_vec;\n\
         long long gpu_t = blockIdx.x * (long long)blockDim.x + threadIdx.x, gpu_nt = (long long)gridDim.x * blockDim.x;\n\
         long long ng = (2 * n + {w} - 1) / {w};\n\
         for (long long g = gpu_t; g < ng; g += gpu_nt) {{\n\
         uint4 r = gpu_philox(make_uint4((unsigned int)g, (unsigned int)(g >> 32), 0u, 0u), make_uint2(k0, k1));\n\
         {d} v[{w}];\n{code}\n\
         #pragma unroll\nfor (int k = 0; k < {w}; k += 2) {{ long long i = (g * {w} + k) / 2; if (i < n) out[out_o + i] = a_in + b_in * {t}(v[k], v[k + 1]); }}\n}}\n}}\n",
        headers = cast::headers_for([T::DTYPE]),
        name = kernel_name::<T>(dist),
    ))
}

impl<T: Element, D: Dimension> DeviceArray<T, D> {
    /// A new C-order array of `shape` filled uniformly from `seed` (see
    /// [`fill_uniform`](DeviceArrayBase::fill_uniform)).
    pub fn random_uniform<Sh: ShapeBuilder<Dim = D>>(ctx: &Context, shape: Sh, seed: u64) -> Result<Self> {
        OnStream::legacy(ctx).random_uniform(shape, seed)
    }

    /// A new C-order array of `shape` filled with normal values (see
    /// [`fill_normal`](DeviceArrayBase::fill_normal)).
    pub fn random_normal<Sh: ShapeBuilder<Dim = D>>(
        ctx: &Context,
        shape: Sh,
        seed: u64,
        mean: T,
        std: T,
    ) -> Result<Self> {
        OnStream::legacy(ctx).random_normal(shape, seed, mean, std)
    }
}

impl OnStream<'_, &Context> {
    /// [`DeviceArray::random_uniform`] on this stream.
    pub fn random_uniform<T: Element, D: Dimension, Sh: ShapeBuilder<Dim = D>>(
        &self,
        shape: Sh,
        seed: u64,
    ) -> Result<DeviceArray<T, D>> {
        self.filled(shape, |mut a| a.fill_uniform(seed))
    }

    /// [`DeviceArray::random_normal`] on this stream.
    pub fn random_normal<T: Element, D: Dimension, Sh: ShapeBuilder<Dim = D>>(
        &self,
        shape: Sh,
        seed: u64,
        mean: T,
        std: T,
    ) -> Result<DeviceArray<T, D>> {
        self.filled(shape, |mut a| a.fill_normal(seed, mean, std))
    }
}

impl<S: StorageMut<Elem: Element>, D: Dimension> DeviceArrayBase<S, D> {
    on_legacy_stream! {
        /// Fills the array from Philox4x32-10 with `seed`: raw 32-bit words for `u32`, `[0, 1)`
        /// for the floats, an error for other types (`f16` and `bf16` are drawn as `f32` and rounded
        /// once to nearest, so a draw just below 1 may round to 1). Element `i` (in C order,
        /// whatever the layout) is the same for the same seed on every device and in every layout.
        fn fill_uniform(&mut self, seed: u64) -> Result<()>;

        /// Fills the array with normal values of `mean` and standard deviation `std` (Box-Muller
        /// on Philox4x32-10 with `seed`); the floats (`f16` and `bf16` computed in `f32`) and the
        /// complex types: `mean + std * z`, `z` standard complex normal (real and imaginary parts
        /// independent, of variance 1/2 each; see the module docs of `philox.rs`).
        fn fill_normal(&mut self, seed: u64, mean: S::Elem, std: S::Elem) -> Result<()>;
    }

    /// Fills this array with `dist` of `(a, b)` from `seed`, on `stream` or (`None`) the legacy
    /// default stream.
    fn fill_random(
        &mut self,
        stream: Option<&Stream>,
        dist: Distribution,
        seed: u64,
        a: S::Elem,
        b: S::Elem,
    ) -> Result<()> {
        let source = random_source::<S::Elem>(dist)?;
        if !self.is_standard_layout() {
            // Generated in C order, then stored through this array's layout.
            let mut tmp = DeviceArray::<S::Elem, D>::empty(self.context(), self.raw_dim())?;
            tmp.fill_random(stream, dist, seed, a, b)?;
            return OnStream::new(self, stream).assign(&tmp);
        }
        let n = self.len();
        if n == 0 {
            return Ok(());
        }
        let ctx = self.context().clone();
        let w = per_block::<S::Elem>(dist);
        let name = kernel_name::<S::Elem>(dist);
        let key = KernelKey {
            source: registry::hash_parts(&["philox", &name]),
            variant: 0,
        };
        let f = registry::prepared(&ctx, key, &name, || source)?;
        let off = self.offset() as i64;
        // One vector store per block when the blocks' runs start aligned to their size: the
        // array's first element is (then every block's is, a block being `w` elements).
        let first = self
            .data
            .device_view()
            .device_ptr()
            .wrapping_add((off as u64).wrapping_mul(std::mem::size_of::<S::Elem>() as u64));
        let vec = vector_c::<S::Elem>(w).is_some()
            && first.is_multiple_of(u64::from(w) * std::mem::size_of::<S::Elem>() as u64);
        let list = [
            Arg::I64(n as i64),
            Arg::U32(seed as u32),
            Arg::U32((seed >> 32) as u32),
            a.to_arg(),
            b.to_arg(),
            Arg::output(&mut self.data),
            Arg::I64(off),
            Arg::I32(vec as i32),
        ];
        let grid = registry::grid_for(&ctx, (n as u64).div_ceil(u64::from(w)))?;
        registry::launch(&f, grid, BLOCK, stream, &list)
    }
}

/// The Philox fills on a stream (`a.on_mut(&stream).fill_uniform(seed)`): the one body of each.
impl<S: StorageMut<Elem: Element>, D: Dimension> OnStream<'_, &mut DeviceArrayBase<S, D>> {
    /// [`fill_uniform`](DeviceArrayBase::fill_uniform) on this stream.
    pub fn fill_uniform(&mut self, seed: u64) -> Result<()> {
        let one = one::<S::Elem>()?;
        self.target
            .fill_random(self.stream, Distribution::Uniform, seed, S::Elem::zero(), one)
    }

    /// [`fill_normal`](DeviceArrayBase::fill_normal) on this stream.
    pub fn fill_normal(&mut self, seed: u64, mean: S::Elem, std: S::Elem) -> Result<()> {
        self.target
            .fill_random(self.stream, Distribution::Normal, seed, mean, std)
    }
}

/// One, for the floating-point types (the scale of a uniform fill); zero for `u32`, whose
/// kernel ignores it.
fn one<T: Element>() -> Result<T> {
    let any: Box<dyn std::any::Any> = match T::SCALAR {
        Scalar::F32 => Box::new(1.0f32),
        Scalar::F64 => Box::new(1.0f64),
        Scalar::F16 => Box::new(half::f16::ONE),
        Scalar::Bf16 => Box::new(half::bf16::ONE),
        _ => Box::new(T::zero()),
    };
    any.downcast::<T>()
        .map(|b| *b)
        // Only an element type whose `SCALAR` is not its own type gets here; the uniform fill,
        // the one that asks for a unit, is then the distribution it has none of.
        .map_err(|_| no_distribution::<T>(Distribution::Uniform).into())
}

/// [`ArgumentError::NoDistribution`]: `dist` does not apply to `T`.
fn no_distribution<T>(dist: Distribution) -> ArgumentError {
    ArgumentError::NoDistribution {
        kernel: "gpu_philox".into(),
        distribution: format!("{dist:?}"),
        element: std::any::type_name::<T>(),
    }
}
