//! [`ScanKernel`]: prefix scans, inclusive and exclusive, with any associative operator and its
//! neutral (PyCUDA's `InclusiveScanKernel` and `ExclusiveScanKernel`; `cumsum` on arrays).
//!
//! Three steps, each a generated kernel launched through the checked path: every block scans a
//! tile of [`TILE`] elements (loaded into shared memory in coalesced order; each thread scans
//! [`PER_THREAD`] consecutive ones in registers, then the block scans the threads' totals) and
//! writes its tile and the tile's total; the totals are scanned (exclusively) the same way,
//! recursively while there is more than one tile; and each tile's prefix is combined back into
//! its elements. Every step is queued on one stream: nothing waits on the host.

use std::fmt::Write as _;
use std::marker::PhantomData;

use ndarray::{Dimension, Ix1};

use crate::driver::context::core::Context;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::driver::stream::Stream;
use crate::error::{ArgumentError, ArrayShapeError, Result};
use crate::gpuarray::array::{DeviceArray, DeviceArrayBase, Storage};
use crate::gpuarray::element::Element;
use crate::gpuarray::kernel_cache::{self, KernelKey, BLOCK};
use crate::launch::{Arg, PreparedFunction};

/// Consecutive elements each thread of a scan scans in registers.
pub const PER_THREAD: u32 = 8;
/// Elements one block of a scan handles: 256 threads of [`PER_THREAD`].
pub const TILE: u32 = BLOCK * PER_THREAD;

/// A scan (prefix reduction) over the elements of `T` with an associative operator of `a` and
/// `b` (`a` the earlier elements: it need not be commutative) and its neutral element.
///
/// ```no_run
/// use gpu_runtime::gpuarray::{DeviceArray, ScanKernel};
/// use gpu_runtime::{ndarray::Array1, Context};
/// let ctx = Context::default()?;
/// let running_max = ScanKernel::<i32>::new("a > b ? a : b", "(-2147483647 - 1)")?;
/// let x = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![3, 1, 4, 1, 5]))?;
/// assert_eq!(running_max.inclusive(&x)?.to_vec()?, vec![3, 3, 4, 4, 5]);
/// let sums = ScanKernel::<i32>::new("a + b", "0")?;
/// assert_eq!(sums.exclusive(&x)?.to_vec()?, vec![0, 3, 4, 8, 9]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ScanKernel<T: Element> {
    op: String,
    neutral: String,
    key: u64,
    _t: PhantomData<fn() -> T>,
}

/// Which kernel of a [`ScanKernel`]: see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanVariant {
    /// Scans each tile and writes its total.
    Tiles,
    /// Combines each tile's prefix into its elements.
    AddPrefix,
}

impl<T: Element> ScanKernel<T> {
    /// A scan with the C expression `op` of `a` and `b` (of type `T`) and `neutral`, the C
    /// expression of its neutral element: an identity on both sides, `op(neutral, x) ==
    /// op(x, neutral) == x` (the exclusive scan and the carries between tiles rely on both).
    /// Both are compiled on the first scan in each context (or, with no GPU, by compiling
    /// [`source`](Self::source) with a [`SourceModule`](crate::SourceModule)).
    pub fn new(op: &str, neutral: &str) -> Result<Self> {
        if op.trim().is_empty() || neutral.trim().is_empty() {
            return Err(ArgumentError::EmptyScanExpression {
                kernel: "gpu_scan".into(),
            }
            .into());
        }
        Ok(ScanKernel {
            key: kernel_cache::hash_parts(&["scan", T::c_name(), op, neutral]),
            op: op.to_owned(),
            neutral: neutral.to_owned(),
            _t: PhantomData,
        })
    }

    fn c_name(v: ScanVariant) -> &'static str {
        match v {
            ScanVariant::Tiles => "gpu_scan_tiles",
            ScanVariant::AddPrefix => "gpu_scan_add",
        }
    }

    /// The CUDA C source of one variant, as it is compiled (with `no_extern_c`).
    pub fn source(&self, v: ScanVariant) -> String {
        let t = T::c_name();
        let (op, neutral, name) = (&self.op, &self.neutral, Self::c_name(v));
        let mut s = format!("__device__ __forceinline__ {t} gpu_op({t} a, {t} b) {{ return ({op}); }}\n");
        match v {
            ScanVariant::Tiles => {
                let _ = write!(
                    s,
                    "extern \"C\" __global__ void {name}(long long n, const {t} *__restrict__ x, long long x_o, long long x_s, {t} *__restrict__ out, {t} *__restrict__ sums, int exclusive) {{\n\
                     __shared__ {t} tile[{TILE}];\n__shared__ {t} ts[2][{BLOCK}];\n\
                     const {t} neutral = ({neutral});\n\
                     const int tid = threadIdx.x;\n\
                     const long long base = (long long)blockIdx.x * {TILE};\n\
                     for (int k = 0; k < {PER_THREAD}; ++k) {{ int j = k * {BLOCK} + tid; long long g = base + j; tile[j] = g < n ? x[x_o + g * x_s] : neutral; }}\n\
                     __syncthreads();\n\
                     {t} acc = tile[tid * {PER_THREAD}];\n\
                     for (int k = 1; k < {PER_THREAD}; ++k) acc = gpu_op(acc, tile[tid * {PER_THREAD} + k]);\n\
                     int pin = 0;\nts[0][tid] = acc;\n__syncthreads();\n\
                     for (int off = 1; off < {BLOCK}; off <<= 1) {{ {t} v = ts[pin][tid]; if (tid >= off) v = gpu_op(ts[pin][tid - off], v); ts[1 - pin][tid] = v; pin = 1 - pin; __syncthreads(); }}\n\
                     {t} run = tid > 0 ? ts[pin][tid - 1] : neutral;\n\
                     for (int k = 0; k < {PER_THREAD}; ++k) {{ {t} v = tile[tid * {PER_THREAD} + k]; {t} next = gpu_op(run, v); tile[tid * {PER_THREAD} + k] = exclusive ? run : next; run = next; }}\n\
                     __syncthreads();\n\
                     for (int k = 0; k < {PER_THREAD}; ++k) {{ int j = k * {BLOCK} + tid; long long g = base + j; if (g < n) out[g] = tile[j]; }}\n\
                     if (tid == 0) sums[blockIdx.x] = ts[pin][{BLOCK} - 1];\n}}\n",
                    BLOCK = BLOCK
                );
            }
            ScanVariant::AddPrefix => {
                let _ = write!(
                    s,
                    "extern \"C\" __global__ void {name}(long long n, {t} *__restrict__ out, const {t} *__restrict__ prefix) {{\n\
                     const long long base = (long long)blockIdx.x * {TILE};\n\
                     const {t} p = prefix[blockIdx.x];\n\
                     for (int k = 0; k < {PER_THREAD}; ++k) {{ long long g = base + k * {BLOCK} + threadIdx.x; if (g < n) out[g] = gpu_op(p, out[g]); }}\n}}\n"
                );
            }
        }
        s
    }

    fn prepared(&self, ctx: &Context, v: ScanVariant) -> Result<PreparedFunction> {
        let key = KernelKey {
            source: self.key,
            variant: v as u32,
        };
        kernel_cache::prepared(ctx, key, Self::c_name(v), || self.source(v))
    }

    /// The inclusive scan (`out[i] = x[0] op ... op x[i]`) of a 1-D array (any stride) or of a
    /// C-contiguous array of any shape (in C order), into a new 1-D array, on the legacy
    /// default stream.
    pub fn inclusive<S: Storage<Elem = T>, D: Dimension>(
        &self,
        x: &DeviceArrayBase<S, D>,
    ) -> Result<DeviceArray<T, Ix1>> {
        self.scan(None, x, false)
    }

    /// The exclusive scan (`out[0] = neutral`, `out[i] = x[0] op ... op x[i - 1]`); as
    /// [`inclusive`](Self::inclusive) otherwise.
    pub fn exclusive<S: Storage<Elem = T>, D: Dimension>(
        &self,
        x: &DeviceArrayBase<S, D>,
    ) -> Result<DeviceArray<T, Ix1>> {
        self.scan(None, x, true)
    }

    /// [`inclusive`](Self::inclusive) (or, with `exclusive`, [`exclusive`](Self::exclusive))
    /// on `stream`, or (`None`) the legacy default stream; returns without waiting.
    pub fn scan<S: Storage<Elem = T>, D: Dimension>(
        &self,
        stream: Option<&Stream>,
        x: &DeviceArrayBase<S, D>,
        exclusive: bool,
    ) -> Result<DeviceArray<T, Ix1>> {
        let n = x.len();
        let stride = match x.shape() {
            [_] => x.strides()[0],
            _ if x.is_standard_layout() => 1,
            shape => {
                return Err(ArrayShapeError::ScanLayout {
                    shape: shape.to_vec(),
                    strides: x.strides().to_vec(),
                }
                .into())
            }
        };
        let ctx = x.context().clone();
        let mut out = DeviceArray::<T, Ix1>::empty(&ctx, n)?;
        if n == 0 {
            return Ok(out);
        }
        let (offset, stride) = (x.offset() as i64, stride as i64);
        self.level(
            &ctx,
            stream,
            n,
            (x.storage(), offset, stride),
            &mut out.data,
            exclusive,
        )?;
        Ok(out)
    }

    /// One level: scans `n` elements of `input` (the memory, the first element, the step)
    /// into `out`, then the tiles' totals, and combines them back.
    fn level<I: DeviceRead<T>, O: DeviceWrite<T>>(
        &self,
        ctx: &Context,
        stream: Option<&Stream>,
        n: usize,
        input: (&I, i64, i64),
        out: &mut O,
        exclusive: bool,
    ) -> Result<()> {
        let tiles = n.div_ceil(TILE as usize);
        let grid = u32::try_from(tiles).map_err(|_| ArrayShapeError::ScanTooLong { elements: n })?;
        let pool = ctx.device_pool()?;
        let mut sums = pool.alloc::<T>(tiles)?;
        let f = self.prepared(ctx, ScanVariant::Tiles)?;
        let list = [
            Arg::I64(n as i64),
            Arg::input::<T, I>(input.0),
            Arg::I64(input.1),
            Arg::I64(input.2),
            Arg::output::<T, O>(out),
            Arg::output(&mut sums),
            Arg::I32(exclusive as i32),
        ];
        kernel_cache::launch(&f, grid, BLOCK, stream, &list)?;
        if tiles == 1 {
            return Ok(());
        }
        let mut prefix = pool.alloc::<T>(tiles)?;
        self.level(ctx, stream, tiles, (&sums, 0, 1), &mut prefix, true)?;
        let f = self.prepared(ctx, ScanVariant::AddPrefix)?;
        let list = [Arg::I64(n as i64), Arg::output::<T, O>(out), Arg::input(&prefix)];
        kernel_cache::launch(&f, grid, BLOCK, stream, &list)
    }
}

type Cached = std::sync::Arc<dyn std::any::Any + Send + Sync>;
static SUMS: std::sync::Mutex<Option<std::collections::HashMap<gpu_cdecl::Scalar, Cached>>> =
    std::sync::Mutex::new(None);

/// The prefix-sum scan of `T`, defined once per process.
fn sum_kernel<T: Element>() -> Result<std::sync::Arc<ScanKernel<T>>> {
    let mut map = SUMS.lock().unwrap_or_else(|p| p.into_inner());
    let map = map.get_or_insert_with(Default::default);
    if let Some(k) = map
        .get(&T::SCALAR)
        .and_then(|k| k.clone().downcast::<ScanKernel<T>>().ok())
    {
        return Ok(k);
    }
    let k = std::sync::Arc::new(ScanKernel::<T>::new("a + b", &format!("({})0", T::c_name()))?);
    map.insert(T::SCALAR, k.clone() as Cached);
    Ok(k)
}

impl<S: Storage, D: Dimension> DeviceArrayBase<S, D> {
    /// The running sums (numpy's `cumsum`: `out[i] = x[0] + ... + x[i]`) of a 1-D array, or of
    /// a C-contiguous one in C order, accumulated in the element type (integers wrap).
    pub fn cumsum(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        sum_kernel::<S::Elem>()?.inclusive(self)
    }

    /// The exclusive running sums (`out[0] = 0`, `out[i] = x[0] + ... + x[i - 1]`).
    pub fn cumsum_exclusive(&self) -> Result<DeviceArray<S::Elem, Ix1>> {
        sum_kernel::<S::Elem>()?.exclusive(self)
    }
}

/// The sources of the prefix-sum scan of `T`, both variants.
#[cfg(test)]
pub(crate) fn test_sources<T: Element>() -> [String; 2] {
    let k = sum_kernel::<T>().unwrap();
    [k.source(ScanVariant::Tiles), k.source(ScanVariant::AddPrefix)]
}
