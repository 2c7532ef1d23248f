//! The dtype matrix: every elementwise operation of `gpuarray` times every element type it
//! accepts (`bool`, the eight integers, `f16`, `bf16`, `f32`, `f64`, `Complex32`, `Complex64`),
//! against NumPy 2's rules. The cells are generated from the type lists below (macros over
//! [`ALL`]'s order), never written one by one, and a cell is either checked or named in
//! [`REJECTED`]/[`DEVIATIONS`] with the reason: adding or removing support changes a visible
//! list, and a test fails when the lists and the library disagree.
//!
//! Without a GPU (CI):
//! - the result type of each cell (`promote::add`, `div`, `remainder`, `floor_divide`,
//!   `compare`, `where_`, the math functions, the casts) is NumPy 2's, from tables NumPy 2.4
//!   printed (`bf16`, which NumPy lacks, as `f16` with `f16 op bf16 = f32`);
//! - each cell's generated kernel compiles with NVRTC for sm_90 (all cells of one left-hand
//!   type in one kernel, so that the whole matrix is 15 compiles), and each rejected cell
//!   gives the typed error;
//! - `any`/`all` of every type generate their kernel, and those of the 16-bit floats compile.
//!
//! On a GPU (`cargo test --test suite -- --ignored array_dtype_matrix::`): each cell's values
//! against a CPU reference of NumPy 2's semantics on seeded random data (NaN, infinities and
//! zero divisors among them), over 0-d, empty, transposed, strided, broadcast and
//! different-rank operands: integer `/` in `f64`, `//` and `%` with Python's signs, `maximum`
//! propagating NaN and `fmax` ignoring it, 16-bit floats computed in `f32` and rounded once,
//! comparisons in the promoted type, in-place operators with NumPy's `same_kind` rule.

use gpu_runtime::__testing::{check_arch, compile_check, expr_kernel_source, logic_reduction_source};
use gpu_runtime::gpuarray::promote::{self, Promote, TrueDivide};
use gpu_runtime::gpuarray::{
    math, BinOp, Bool, CmpOp, DType, DeviceArray, DeviceArrayView, Element, Expr, Operand,
};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{ArrayD, Ix1, IxDyn, SliceInfoElem};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::{ArgumentError, Context, Error, Result};
use gpu_suite::Rng;

/// Every element type, in `DType::ALL`'s order.
const ALL: [DType; 15] = DType::ALL;

/// The binary operators of the matrix.
const BIN_OPS: [BinOp; 6] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::FloorDiv,
];

/// The comparisons of the matrix.
const CMP_OPS: [CmpOp; 6] = [CmpOp::Gt, CmpOp::Lt, CmpOp::Ge, CmpOp::Le, CmpOp::Eq, CmpOp::Ne];

/// NumPy 2.4's `np.add(a, b).dtype` for the 14 NumPy types (rows and columns in `ALL`'s order
/// without `bf16`).
const NP_ADD: [&str; 14] = [
    "bool i8 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64 c32 c64",
    "i8 i8 i16 i16 i32 i32 i64 i64 f64 f16 f32 f64 c32 c64",
    "u8 i16 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64 c32 c64",
    "i16 i16 i16 i16 i32 i32 i64 i64 f64 f32 f32 f64 c32 c64",
    "u16 i32 u16 i32 u16 i32 u32 i64 u64 f32 f32 f64 c32 c64",
    "i32 i32 i32 i32 i32 i32 i64 i64 f64 f64 f64 f64 c64 c64",
    "u32 i64 u32 i64 u32 i64 u32 i64 u64 f64 f64 f64 c64 c64",
    "i64 i64 i64 i64 i64 i64 i64 i64 f64 f64 f64 f64 c64 c64",
    "u64 f64 u64 f64 u64 f64 u64 f64 u64 f64 f64 f64 c64 c64",
    "f16 f16 f16 f32 f32 f64 f64 f64 f64 f16 f32 f64 c32 c64",
    "f32 f32 f32 f32 f32 f64 f64 f64 f64 f32 f32 f64 c32 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c64 c64",
    "c32 c32 c32 c32 c32 c64 c64 c64 c64 c32 c32 c64 c32 c64",
    "c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64",
];

/// NumPy 2.4's `np.true_divide(a, b).dtype`, as [`NP_ADD`].
const NP_DIV: [&str; 14] = [
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f16 f32 f64 c32 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f16 f32 f64 c32 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f16 f32 f64 c32 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f32 f32 f64 c32 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f32 f32 f64 c32 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c64 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c64 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c64 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c64 c64",
    "f16 f16 f16 f32 f32 f64 f64 f64 f64 f16 f32 f64 c32 c64",
    "f32 f32 f32 f32 f32 f64 f64 f64 f64 f32 f32 f64 c32 c64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c64 c64",
    "c32 c32 c32 c32 c32 c64 c64 c64 c64 c32 c32 c64 c32 c64",
    "c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64 c64",
];

/// NumPy 2.4's `np.exp(a).dtype` (the `ToInexact` functions) and `np.expm1(a).dtype` (the
/// `ToFloat` ones; `-` where NumPy has no such loop for complex numbers: `expm1` it has, the
/// library not yet, see [`REJECTED`]), in `ALL`'s order without `bf16`.
const NP_EXP: &str = "f16 f16 f16 f32 f32 f64 f64 f64 f64 f16 f32 f64 c32 c64";
const NP_EXPM1: &str = "f16 f16 f16 f32 f32 f64 f64 f64 f64 f16 f32 f64 - -";

/// NumPy's type of a cell from a table of the 14 NumPy types; `bf16` as `f16`, except that
/// `f16` with `bf16` is `f32` and `bf16` with itself `bf16` (the library's documented rule).
fn np_table(table: &[&str; 14], a: DType, b: DType) -> &'static str {
    let idx = |d: DType| {
        let d = if d == DType::Bf16 { DType::F16 } else { d };
        ALL.iter()
            .filter(|&&x| x != DType::Bf16)
            .position(|&x| x == d)
            .unwrap()
    };
    if (a == DType::Bf16) != (b == DType::Bf16) && (a == DType::F16 || b == DType::F16) {
        return "f32";
    }
    let cell = table[idx(a)].split(' ').nth(idx(b)).unwrap();
    let cell: &'static str = DType::ALL
        .iter()
        .map(|d| d.short_name())
        .find(|n| *n == cell)
        .unwrap();
    if cell == "f16" && (a == DType::Bf16 || b == DType::Bf16) {
        "bf16"
    } else {
        cell
    }
}

/// The cells the library refuses, each with the typed error its evaluation returns
/// (`ArgumentError::UndefinedOnElement`), and why. NumPy refuses the first two too; the last
/// two it accepts (it orders complex numbers lexicographically), the library does not.
/// Operation names: `Rem`, `FloorDiv`, `Compare(Gt)`, ..., `Maximum`, ...
fn rejected(op: &str, computed: DType) -> Option<&'static str> {
    if !computed.is_complex() {
        return None;
    }
    match op {
        "Rem" | "FloorDiv" => Some("NumPy: `%` and `//` are not defined on complex numbers"),
        "Compare(Gt)" | "Compare(Lt)" | "Compare(Ge)" | "Compare(Le)" => {
            Some("complex numbers have no order here (NumPy orders them lexicographically)")
        }
        "Maximum" | "Minimum" | "Fmax" | "Fmin" => {
            Some("complex numbers have no order here (NumPy orders them lexicographically)")
        }
        _ => None,
    }
}

/// Listed for the docs: the rejected kinds of cells, counted by the CPU test.
const REJECTED: [&str; 3] = [
    "Rem/FloorDiv of a complex promotion (NumPy rejects them too)",
    "Gt/Lt/Ge/Le, maximum/minimum/fmax/fmin of complex (NumPy orders complex lexicographically)",
    "the ToFloat math functions (cbrt, asin, ...; expm1/exp2/log1p/log2 take complex as NumPy does) and floor/ceil/trunc/round of complex types, and floor/ceil/trunc/round of integers: refused at compile time by the traits `ToFloat`/`Float`",
];

/// Cells the library computes where NumPy differs, not value-checked against NumPy: `bool -
/// bool` (NumPy raises; here C's `(bool)(a - b)`, an exclusive or), `bool % bool` and `bool //
/// bool` (NumPy computes them in `int8`; here in `bool`).
const DEVIATIONS: [(BinOp, DType, DType); 3] = [
    (BinOp::Sub, DType::Bool, DType::Bool),
    (BinOp::Rem, DType::Bool, DType::Bool),
    (BinOp::FloorDiv, DType::Bool, DType::Bool),
];

fn is_deviation(op: BinOp, a: DType, b: DType) -> bool {
    DEVIATIONS.contains(&(op, a, b))
}

// ---------------------------------------------------------------------------------------
// Host values and NumPy's semantics on them.

/// A value of any element type on the host: an integer (or `bool`), a float, a complex number.
#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    I(i128),
    F(f64),
    C(f64, f64),
}

/// An element type of the matrix on the host.
trait Host: Element + std::fmt::Debug + for<'a> Operand<'a, Self> {
    /// The value.
    fn v(self) -> V;
    /// NumPy's `astype` of `v` into this type (values the matrix draws are in range).
    fn of(v: V) -> Self;
    /// A random value of the type: small integers (zero among them), floats with NaN,
    /// infinities and `-0.0` now and then.
    fn rand(rng: &mut Rng) -> Self;
}

fn re(v: V) -> f64 {
    match v {
        V::I(i) => i as f64,
        V::F(f) => f,
        V::C(r, _) => r,
    }
}

fn truth(v: V) -> bool {
    match v {
        V::I(i) => i != 0,
        V::F(f) => f != 0.0,
        V::C(r, i) => r != 0.0 || i != 0.0,
    }
}

macro_rules! host_int {
    ($($t:ty: $signed:expr),*) => {$(
        impl Host for $t {
            fn v(self) -> V {
                V::I(self as i128)
            }
            fn of(v: V) -> Self {
                match v {
                    V::I(i) => i as $t,
                    other => re(other) as $t,
                }
            }
            fn rand(rng: &mut Rng) -> Self {
                let r = (rng.next_u64() % 41) as i64;
                (if $signed { r - 20 } else { r }) as $t
            }
        }
    )*};
}
host_int!(i8: true, u8: false, i16: true, u16: false, i32: true, u32: false, i64: true, u64: false);

impl Host for Bool {
    fn v(self) -> V {
        V::I(i128::from(bool::from(self)))
    }
    fn of(v: V) -> Self {
        Bool::from(truth(v))
    }
    fn rand(rng: &mut Rng) -> Self {
        Bool::from(rng.next_u64() & 1 == 1)
    }
}

/// A random float: mostly in `[-20, 20)`, with NaN, the infinities, `-0.0` and exact zeros.
fn rand_f64(rng: &mut Rng) -> f64 {
    match rng.next_u64() % 32 {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => -0.0,
        4 => 0.0,
        5 => (rng.next_u64() % 9) as f64 - 4.0,
        _ => rng.f64() * 20.0,
    }
}

macro_rules! host_float {
    ($($t:ty: $from:expr, $to:expr),*) => {$(
        impl Host for $t {
            fn v(self) -> V {
                V::F($to(self))
            }
            fn of(v: V) -> Self {
                $from(re(v))
            }
            fn rand(rng: &mut Rng) -> Self {
                $from(rand_f64(rng))
            }
        }
    )*};
}
host_float!(
    f16: f16::from_f64, f16::to_f64,
    bf16: bf16::from_f64, bf16::to_f64,
    f32: |x: f64| x as f32, |x: f32| x as f64,
    f64: |x: f64| x, |x: f64| x
);

macro_rules! host_complex {
    ($($t:ty: $p:ty),*) => {$(
        impl Host for $t {
            fn v(self) -> V {
                V::C(self.re as f64, self.im as f64)
            }
            fn of(v: V) -> Self {
                match v {
                    V::C(r, i) => <$t>::new(r as $p, i as $p),
                    other => <$t>::new(re(other) as $p, 0.0),
                }
            }
            fn rand(rng: &mut Rng) -> Self {
                <$t>::new((rng.f64() * 8.0) as $p, (rng.f64() * 8.0) as $p)
            }
        }
    )*};
}
host_complex!(Complex32: f32, Complex64: f64);

/// `v` converted to `d` as NumPy's `astype` converts it.
fn conv(d: DType, v: V) -> V {
    match d {
        DType::Bool => Bool::of(v).v(),
        DType::I8 => i8::of(v).v(),
        DType::U8 => u8::of(v).v(),
        DType::I16 => i16::of(v).v(),
        DType::U16 => u16::of(v).v(),
        DType::I32 => i32::of(v).v(),
        DType::U32 => u32::of(v).v(),
        DType::I64 => i64::of(v).v(),
        DType::U64 => u64::of(v).v(),
        DType::F16 => f16::of(v).v(),
        DType::Bf16 => bf16::of(v).v(),
        DType::F32 => f32::of(v).v(),
        DType::F64 => f64::of(v).v(),
        DType::Complex32 => Complex32::of(v).v(),
        DType::Complex64 => Complex64::of(v).v(),
    }
}

/// NumPy's `npy_divmod` in the float type `$f`: (floor quotient, remainder with the divisor's
/// sign).
macro_rules! divmod {
    ($name:ident, $f:ty) => {
        fn $name(a: $f, b: $f) -> ($f, $f) {
            let m = a % b;
            if b == 0.0 {
                return (a / b, m);
            }
            let mut div = (a - m) / b;
            let mut m = m;
            if m != 0.0 {
                if (b < 0.0) != (m < 0.0) {
                    m += b;
                    div -= 1.0;
                }
            } else {
                m = (0.0 as $f).copysign(b);
            }
            let fd = if div != 0.0 {
                let mut f = div.floor();
                if div - f > 0.5 {
                    f += 1.0;
                }
                f
            } else {
                (0.0 as $f).copysign(a / b)
            };
            (fd, m)
        }
    };
}
divmod!(divmod_f64, f64);
divmod!(divmod_f32, f32);

/// `a op b` computed in `d` (both already of `d`), as NumPy computes it.
fn bin_ref(op: BinOp, d: DType, a: V, b: V) -> V {
    let (a, b) = (conv(d, a), conv(d, b));
    let r = match (a, b) {
        (V::I(x), V::I(y)) => {
            let pymod = |x: i128, y: i128| {
                let r = x % y;
                if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }
            };
            V::I(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div if y == 0 => 0,
                BinOp::Div => x / y,
                BinOp::Rem if y == 0 => 0,
                BinOp::Rem => pymod(x, y),
                BinOp::FloorDiv if y == 0 => 0,
                BinOp::FloorDiv => (x - pymod(x, y)) / y,
            })
        }
        (V::F(x), V::F(y)) => V::F(match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            // The 16-bit floats and `f32` in `float`, as NumPy's loops.
            BinOp::Rem if d == DType::F64 => divmod_f64(x, y).1,
            BinOp::Rem => divmod_f32(x as f32, y as f32).1 as f64,
            BinOp::FloorDiv if d == DType::F64 => divmod_f64(x, y).0,
            BinOp::FloorDiv => divmod_f32(x as f32, y as f32).0 as f64,
        }),
        (V::C(ar, ai), V::C(br, bi)) => {
            let (x, y) = (Complex64::new(ar, ai), Complex64::new(br, bi));
            let z = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => numpy_complex_div(x, y),
                _ => unreachable!(),
            };
            V::C(z.re, z.im)
        }
        _ => unreachable!("operands converted to one type"),
    };
    conv(d, r)
}

/// NumPy's complex division (Smith's algorithm, as its loops write it): a finite number over
/// an infinite one is a signed zero, where the textbook formula (`num_complex`'s) gives NaN.
fn numpy_complex_div(x: Complex64, y: Complex64) -> Complex64 {
    let (ar, ai, br, bi) = (x.re, x.im, y.re, y.im);
    if br.abs() >= bi.abs() {
        if br == 0.0 && bi == 0.0 {
            return Complex64::new(ar / br.abs(), ai / br.abs());
        }
        let rat = bi / br;
        let scl = 1.0 / (br + bi * rat);
        Complex64::new((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    } else {
        let rat = br / bi;
        let scl = 1.0 / (bi + br * rat);
        Complex64::new((ar * rat + ai) * scl, (ai * rat - ar) * scl)
    }
}

/// `a op b` compared in `d`, as NumPy compares.
fn cmp_ref(op: CmpOp, d: DType, a: V, b: V) -> bool {
    let (a, b) = (conv(d, a), conv(d, b));
    let ord = match (a, b) {
        (V::I(x), V::I(y)) => x.partial_cmp(&y),
        (V::F(x), V::F(y)) => x.partial_cmp(&y),
        (V::C(..), V::C(..)) => {
            return match op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                _ => unreachable!(),
            }
        }
        _ => unreachable!(),
    };
    use std::cmp::Ordering::*;
    match (op, ord) {
        (CmpOp::Ne, None) => true,
        (_, None) => false,
        (CmpOp::Gt, Some(o)) => o == Greater,
        (CmpOp::Lt, Some(o)) => o == Less,
        (CmpOp::Ge, Some(o)) => o != Less,
        (CmpOp::Le, Some(o)) => o != Greater,
        (CmpOp::Eq, Some(o)) => o == Equal,
        (CmpOp::Ne, Some(o)) => o != Equal,
    }
}

/// The relative tolerance of a computed value of `d` (`ulps` units in the last place).
fn tol(d: DType, ulps: f64) -> f64 {
    ulps * match d {
        DType::F16 => 2f64.powi(-10),
        DType::Bf16 => 2f64.powi(-7),
        DType::F32 | DType::Complex32 => 2f64.powi(-23),
        _ => 2f64.powi(-52),
    }
}

/// Whether `got` is `want` (NaN matching NaN; floats within `ulps`).
fn close(d: DType, got: V, want: V, ulps: f64) -> bool {
    let near = |g: f64, w: f64| {
        (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tol(d, ulps) * w.abs().max(f64::MIN_POSITIVE)
    };
    match (got, want) {
        (V::I(g), V::I(w)) => g == w,
        (V::F(g), V::F(w)) => near(g, w),
        (V::C(gr, gi), V::C(wr, wi)) => {
            let scale = wr.hypot(wi);
            let t = tol(d, ulps) * scale.max(f64::MIN_POSITIVE);
            (near(gr, wr) || (gr - wr).abs() <= t) && (near(gi, wi) || (gi - wi).abs() <= t)
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// Every pair of types, from the type list.

/// Calls `$m!(T, U)` for every pair of element types (225 cells).
macro_rules! each_pair {
    ($m:ident) => {
        each_pair!(@rows $m; Bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, Complex32, Complex64)
    };
    (@rows $m:ident; $($t:ty),*) => {
        $( each_column!($m, $t); )*
    };
}

/// Calls `$m!(T, U)` for every `U`: the row of `T` (15 cells).
macro_rules! each_column {
    ($m:ident, $t:ty) => {
        each_column!(@cols $m; $t; Bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, Complex32, Complex64)
    };
    (@cols $m:ident; $t:ty; $($u:ty),*) => {
        $( $m!($t, $u); )*
    };
}

/// One GPU test per element type `T`, each `$row!(T, $arg)`: a row of a pair test, or one
/// type of a test over types. The harness runs them on its threads at once, and the kernels
/// of the cells are compiled with NVRTC at their first use (most of a row's time on a fresh
/// machine), so a test over every type would be minutes on one thread.
macro_rules! gpu_rows {
    ($row:ident, $arg:tt; $($name:ident: $t:ty),* $(,)?) => {
        $(
            #[test]
            #[ignore = "needs a CUDA GPU"]
            fn $name() -> Result<()> {
                $row!($t, $arg)
            }
        )*
    };
}

/// [`gpu_rows`] for every element type.
macro_rules! every_type_rows {
    ($row:ident, $arg:tt) => {
        gpu_rows!($row, $arg;
            of_bool: Bool, of_i8: i8, of_u8: u8, of_i16: i16, of_u16: u16, of_i32: i32,
            of_u32: u32, of_i64: i64, of_u64: u64, of_f16: f16, of_bf16: bf16, of_f32: f32,
            of_f64: f64, of_complex32: Complex32, of_complex64: Complex64);
    };
}

/// [`gpu_rows`] for every real type.
macro_rules! every_real_rows {
    ($row:ident, $arg:tt) => {
        gpu_rows!($row, $arg;
            of_bool: Bool, of_i8: i8, of_u8: u8, of_i16: i16, of_u16: u16, of_i32: i32,
            of_u32: u32, of_i64: i64, of_u64: u64, of_f16: f16, of_bf16: bf16, of_f32: f32,
            of_f64: f64);
    };
}

/// The seed of `T`'s row in a test seeded `base`: each row its own data.
fn row_seed<T: Host>(base: u64) -> u64 {
    base * 100 + ALL.iter().position(|&d| d == T::DTYPE).unwrap() as u64
}

/// Calls `$m!(T)` for every element type.
macro_rules! each_type {
    ($m:ident) => {
        $m!(Bool);
        $m!(i8);
        $m!(u8);
        $m!(i16);
        $m!(u16);
        $m!(i32);
        $m!(u32);
        $m!(i64);
        $m!(u64);
        $m!(f16);
        $m!(bf16);
        $m!(f32);
        $m!(f64);
        $m!(Complex32);
        $m!(Complex64);
    };
}

/// Calls `$m!(T)` for every real type (those with an order).
macro_rules! each_real {
    ($m:ident) => {
        $m!(Bool);
        $m!(i8);
        $m!(u8);
        $m!(i16);
        $m!(u16);
        $m!(i32);
        $m!(u32);
        $m!(i64);
        $m!(u64);
        $m!(f16);
        $m!(bf16);
        $m!(f32);
        $m!(f64);
    };
}

/// Calls `$m!(T)` for every type the `ToFloat` math functions take (all but complex).
macro_rules! each_to_float {
    ($m:ident) => {
        each_real!($m)
    };
}

/// Calls `$m!(T)` for every float type (floor, ceil, trunc, round).
macro_rules! each_float {
    ($m:ident) => {
        $m!(f16);
        $m!(bf16);
        $m!(f32);
        $m!(f64);
    };
}

type Out<T, U> = <T as Promote<U>>::Output;
type Quo<T, U> = <<T as Promote<U>>::Output as TrueDivide>::Quotient;

/// A cell's expression of one binary operator, through `promote`.
fn bin_expr<'a, T: Promote<U> + Host, U: Host>(
    op: BinOp,
    x: impl Operand<'a, T>,
    y: impl Operand<'a, U>,
) -> Expr<'a, Complex64> {
    match op {
        BinOp::Add => promote::add(x, y).cast(),
        BinOp::Sub => promote::sub(x, y).cast(),
        BinOp::Mul => promote::mul(x, y).cast(),
        BinOp::Div => promote::div(x, y).cast(),
        BinOp::Rem => promote::remainder(x, y).cast(),
        BinOp::FloorDiv => promote::floor_divide(x, y).cast(),
    }
}

/// Whether `r` is the typed error of an operation undefined on an element type.
fn is_undefined(r: &Result<String>) -> bool {
    matches!(r, Err(Error::Argument(ArgumentError::UndefinedOnElement { .. })))
}

/// What the CPU matrix saw: cells compiled, cells checked rejected, cells of `DEVIATIONS`.
#[derive(Default, Debug)]
struct Tally {
    compiled: usize,
    rejected: usize,
    deviations: usize,
    types: usize,
}

/// Adds `e` to the kernel of its row (or checks it is rejected, when `reason` says so).
fn add_cell<'a>(
    acc: &mut Option<Expr<'a, Complex64>>,
    tally: &mut Tally,
    e: Expr<'a, Complex64>,
    reason: Option<&str>,
    what: &str,
) {
    let source = expr_kernel_source(&e);
    match reason {
        Some(why) => {
            assert!(
                is_undefined(&source),
                "{what} should be rejected ({why}): {source:?}"
            );
            tally.rejected += 1;
        }
        None => {
            assert!(source.is_ok(), "{what}: {source:?}");
            tally.compiled += 1;
            *acc = Some(match acc.take() {
                None => e,
                Some(a) => a + e,
            });
        }
    }
}

/// Every binary, comparison and `where` cell with left-hand type `T`: the result types are
/// NumPy's, and each cell either joins the one kernel of the row or is rejected as listed.
fn row_cells<'a, T: Host + Promote<U>, U: Host>(acc: &mut Option<Expr<'a, Complex64>>, tally: &mut Tally)
where
    Out<T, U>: Host,
{
    let (t, u) = (T::DTYPE, U::DTYPE);
    let x = || T::of(V::I(3));
    let y = || U::of(V::I(2));
    // The result types.
    assert_eq!(
        <Out<T, U>>::DTYPE.short_name(),
        np_table(&NP_ADD, t, u),
        "{t:?} + {u:?}"
    );
    assert_eq!(
        <Quo<T, U>>::DTYPE.short_name(),
        np_table(&NP_DIV, t, u),
        "{t:?} / {u:?}"
    );
    let computed = <Out<T, U>>::DTYPE;
    for op in BIN_OPS {
        if is_deviation(op, t, u) {
            tally.deviations += 1;
        }
        let what = format!("{op:?}({t:?}, {u:?})");
        add_cell(
            acc,
            tally,
            bin_expr::<T, U>(op, x(), y()),
            rejected(&format!("{op:?}"), computed),
            &what,
        );
    }
    for op in CMP_OPS {
        let e = promote::compare(op, x(), y());
        assert_eq!(<Bool as Element>::DTYPE, DType::Bool);
        let what = format!("{op:?}({t:?}, {u:?})");
        add_cell(
            acc,
            tally,
            e.cast(),
            rejected(&format!("Compare({op:?})"), computed),
            &what,
        );
    }
    let w = promote::where_(true, x(), y());
    add_cell(acc, tally, w.cast(), None, &format!("where({t:?}, {u:?})"));
    // The cast of `T` to `U` (`astype`).
    let c = Operand::<T>::into_expr(x()).cast::<U>();
    add_cell(acc, tally, c.cast(), None, &format!("cast({t:?} to {u:?})"));
}

/// The one-operand cells of `T`: the math functions (with their NumPy result type),
/// `maximum`..`fmin`, `abs`, `sign`, `pow`.
fn unary_cells<'a, T: Host + math::ToInexact>(acc: &mut Option<Expr<'a, Complex64>>, tally: &mut Tally)
where
    T::Inexact: Host,
{
    let t = T::DTYPE;
    let x = || Operand::<T>::into_expr(T::of(V::I(1)));
    let idx = ALL
        .iter()
        .filter(|&&d| d != DType::Bf16)
        .position(|&d| d == if t == DType::Bf16 { DType::F16 } else { t })
        .unwrap();
    let want = NP_EXP.split(' ').nth(idx).unwrap();
    let want = if t == DType::Bf16 { "bf16" } else { want };
    assert_eq!(<T::Inexact>::DTYPE.short_name(), want, "exp({t:?})");
    for (name, e) in [
        ("exp", x().exp()),
        ("log", x().log()),
        ("log10", x().log10()),
        ("sqrt", x().sqrt()),
        ("sin", x().sin()),
        ("cos", x().cos()),
        ("tan", x().tan()),
        ("sinh", x().sinh()),
        ("cosh", x().cosh()),
        ("tanh", x().tanh()),
    ] {
        add_cell(acc, tally, e.cast(), None, &format!("{name}({t:?})"));
    }
    for (name, e) in [
        ("isnan", x().isnan()),
        ("isinf", x().isinf()),
        ("isfinite", x().isfinite()),
    ] {
        add_cell(acc, tally, e.cast(), None, &format!("{name}({t:?})"));
    }
    let order = rejected("Maximum", t);
    for (name, e) in [
        ("Maximum", x().maximum(T::of(V::I(2)))),
        ("Minimum", x().minimum(T::of(V::I(2)))),
        ("Fmax", x().fmax(T::of(V::I(2)))),
        ("Fmin", x().fmin(T::of(V::I(2)))),
    ] {
        add_cell(acc, tally, e.cast(), order, &format!("{name}({t:?})"));
    }
    add_cell(
        acc,
        tally,
        x().pow(T::of(V::I(2))).cast(),
        None,
        &format!("pow({t:?})"),
    );
    if !t.is_complex() {
        add_cell(acc, tally, x().abs().cast(), None, &format!("abs({t:?})"));
        add_cell(acc, tally, x().sign().cast(), None, &format!("sign({t:?})"));
    }
}

/// The `ToFloat` math functions of `T`.
fn float_fn_cells<'a, T: Host + math::ToFloat>(acc: &mut Option<Expr<'a, Complex64>>, tally: &mut Tally) {
    let t = T::DTYPE;
    let idx = ALL
        .iter()
        .filter(|&&d| d != DType::Bf16)
        .position(|&d| d == if t == DType::Bf16 { DType::F16 } else { t })
        .unwrap();
    let want = NP_EXPM1.split(' ').nth(idx).unwrap();
    let want = if t == DType::Bf16 { "bf16" } else { want };
    assert_eq!(<T::Float>::DTYPE.short_name(), want, "expm1({t:?})");
    let x = || Operand::<T>::into_expr(T::of(V::I(1)));
    for (name, e) in [
        ("fabs", x().fabs()),
        ("expm1", x().expm1().cast()),
        ("exp2", x().exp2().cast()),
        ("log1p", x().log1p().cast()),
        ("log2", x().log2().cast()),
        ("cbrt", x().cbrt()),
        ("asin", x().asin()),
        ("acos", x().acos()),
        ("atan", x().atan()),
        ("asinh", x().asinh()),
        ("acosh", x().acosh()),
        ("atanh", x().atanh()),
        ("rint", x().rint()),
    ] {
        add_cell(acc, tally, e.cast(), None, &format!("{name}({t:?})"));
    }
    add_cell(acc, tally, x().signbit().cast(), None, &format!("signbit({t:?})"));
}

/// `floor`, `ceil`, `trunc`, `round` and the two-operand float functions of `T`.
fn float_only_cells<'a, T: Host + math::Float>(acc: &mut Option<Expr<'a, Complex64>>, tally: &mut Tally) {
    let x = || Operand::<T>::into_expr(T::of(V::I(1)));
    let t = T::DTYPE;
    for (name, e) in [
        ("floor", x().floor()),
        ("ceil", x().ceil()),
        ("trunc", x().trunc()),
        ("round", x().round()),
        ("fmod", x().fmod(T::of(V::I(2)))),
        ("atan2", x().atan2(T::of(V::I(2)))),
        ("hypot", x().hypot(T::of(V::I(2)))),
        ("copysign", x().copysign(T::of(V::I(2)))),
        ("ldexp", x().ldexp(2)),
    ] {
        add_cell(acc, tally, e.cast(), None, &format!("{name}({t:?})"));
    }
}

/// The kernel of one row of the matrix, kept in `rows` to be compiled by [`compile_rows`].
fn compile_row(what: &str, acc: Option<Expr<'_, Complex64>>, rows: &mut Vec<(String, String)>) {
    let e = acc.expect("a row has cells");
    let src = expr_kernel_source(&e).unwrap();
    rows.push((what.to_owned(), src));
}

/// Compiles the rows' kernels, on two threads: each is seconds of NVRTC (mostly ptxas), and
/// one after the other they made this the suite's last test running, alone on one core. Each
/// thread has the stack of the thread that built the rows: a row is an expression some 250
/// nodes deep.
fn compile_rows(rows: Vec<(String, String)>) {
    let queue = std::sync::Mutex::new(rows);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                std::thread::Builder::new()
                    .stack_size(512 << 20)
                    .spawn_scoped(s, || loop {
                        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                        let Some((what, src)) = next else { return };
                        if let Err(err) = compile_check(&src, check_arch(&src)) {
                            panic!("the kernel of {what} does not compile: {err}\n{src}");
                        }
                    })
                    .unwrap()
            })
            .collect();
        for w in workers {
            if let Err(panic) = w.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// Every cell of the matrix, without a GPU: its result type is NumPy 2's, and its kernel
/// compiles with NVRTC (one kernel per left-hand type) or it is rejected with the typed
/// error, as [`REJECTED`] lists. The counts are printed and checked, so that a cell that
/// changes side shows.
#[test]
fn every_cell_has_numpy_s_type_and_compiles_or_is_rejected() {
    // A row's expression is a tree some 250 nodes deep, and the rows are inlined into one
    // function: more stack than a test thread's 2 MiB in a debug build.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(cpu_matrix)
        .unwrap()
        .join()
        .unwrap();
}

fn cpu_matrix() {
    let mut tally = Tally::default();
    let mut rows = Vec::new();
    macro_rules! row {
        ($t:ty) => {{
            let mut acc = None;
            macro_rules! cell {
                ($a:ty, $b:ty) => {
                    if <$a as Element>::DTYPE == <$t as Element>::DTYPE {
                        row_cells::<$a, $b>(&mut acc, &mut tally);
                    }
                };
            }
            each_pair!(cell);
            unary_cells::<$t>(&mut acc, &mut tally);
            tally.types += 1;
            compile_row(stringify!($t), acc, &mut rows);
        }};
    }
    each_type!(row);
    // The float-only functions, one kernel for all types each takes.
    let mut acc = None;
    macro_rules! to_float {
        ($t:ty) => {
            float_fn_cells::<$t>(&mut acc, &mut tally);
        };
    }
    each_to_float!(to_float);
    macro_rules! float_only {
        ($t:ty) => {
            float_only_cells::<$t>(&mut acc, &mut tally);
        };
    }
    each_float!(float_only);
    compile_row("the float functions", acc, &mut rows);
    assert_eq!(rows.len(), 16, "a kernel per row and one for the float functions");
    compile_rows(rows);
    eprintln!("dtype matrix, CPU: {tally:?}; rejected kinds: {REJECTED:?}; deviations: {DEVIATIONS:?}");
    assert_eq!(tally.types, 15);
    // 225 pairs x (6 operators + 6 comparisons + where + cast) = 3150 pair cells; 15 types x
    // (10 + 3 + 4 + 1) + 13 x 2 (abs, sign) one-operand cells; 13 x 14 `ToFloat` cells;
    // 4 x 9 float-only cells.
    let pair_cells = 225 * 14;
    let unary = 15 * 18 + 13 * 2 + 13 * 14 + 4 * 9;
    assert_eq!(tally.compiled + tally.rejected, pair_cells + unary);
    // Complex promotions: c32 or c64 results are 2 x 15 x 2 - 4 = 56 pairs... counted:
    // each complex-result pair rejects `%`, `//` and four comparisons; each complex type
    // rejects maximum..fmin.
    let complex_pairs = ALL
        .iter()
        .flat_map(|a| {
            ALL.iter()
                .map(move |b| gpu_runtime::gpuarray::result_type(*a, *b))
        })
        .filter(|d| d.is_complex())
        .count();
    assert_eq!(tally.rejected, complex_pairs * 6 + 2 * 4);
    assert_eq!(tally.deviations, DEVIATIONS.len());
}

/// `any` and `all` of every type generate their kernel; those of the 16-bit floats (which
/// failed to compile: an ambiguous `!=`) compile.
#[test]
fn any_and_all_of_every_type_have_a_kernel() {
    for d in ALL {
        for all in [false, true] {
            let src = logic_reduction_source(all, d).unwrap();
            if matches!(d, DType::F16 | DType::Bf16) {
                if let Err(e) = compile_check(&src, check_arch(&src)) {
                    panic!("any/all of {d:?}: {e}\n{src}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// On a GPU: the values.

/// The operand layouts of a binary cell: (x's host shape, x's view, y's host shape, y's view).
#[derive(Clone, Copy, Debug)]
enum Case {
    /// Both contiguous, of one shape.
    Contiguous,
    /// Both 0-d.
    Scalar,
    /// Both empty (`[0, 4]`).
    Empty,
    /// `x` a transposed `[4, 5]`, `y` every other element of a `[1, 8]`: broadcast to `[5, 4]`.
    TransposedStridedBroadcast,
    /// `x` of shape `[5, 1]`, `y` of shape `[4]`: broadcast to `[5, 4]` across ranks.
    RanksBroadcast,
}

const CASES: [Case; 5] = [
    Case::Contiguous,
    Case::Scalar,
    Case::Empty,
    Case::TransposedStridedBroadcast,
    Case::RanksBroadcast,
];

fn host<T: Host>(rng: &mut Rng, shape: &[usize]) -> ArrayD<T> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|_| T::rand(rng)).collect()).unwrap()
}

fn every_other() -> [SliceInfoElem; 2] {
    [
        SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: 1,
        },
        SliceInfoElem::Slice {
            start: 0,
            end: None,
            step: 2,
        },
    ]
}

/// Runs `f` on the operands of every [`Case`] and compares each element with `want` of the
/// host operands (broadcast as NumPy broadcasts).
fn run2<T: Host, U: Host, R: Host>(
    ctx: &Context,
    rng: &mut Rng,
    what: &str,
    f: impl Fn(&DeviceArrayView<'_, T, IxDyn>, &DeviceArrayView<'_, U, IxDyn>) -> Result<DeviceArray<R, IxDyn>>,
    want: impl Fn(T, U) -> V,
    ulps: f64,
) -> Result<()> {
    for case in CASES {
        let (hx, hy): (ArrayD<T>, ArrayD<U>) = match case {
            Case::Contiguous => (host(rng, &[3, 4]), host(rng, &[3, 4])),
            Case::Scalar => (host(rng, &[]), host(rng, &[])),
            Case::Empty => (host(rng, &[0, 4]), host(rng, &[0, 4])),
            Case::TransposedStridedBroadcast => (host(rng, &[4, 5]), host(rng, &[1, 8])),
            Case::RanksBroadcast => (host(rng, &[5, 1]), host(rng, &[4])),
        };
        let dx = DeviceArray::from_ndarray(ctx, &hx)?;
        let dy = DeviceArray::from_ndarray(ctx, &hy)?;
        let (vx, vy, hxv, hyv) = match case {
            Case::TransposedStridedBroadcast => (
                dx.t(),
                dy.slice(&every_other()[..])?,
                hx.t().to_owned(),
                hy.slice(&every_other()[..]).to_owned(),
            ),
            _ => (dx.view(), dy.view(), hx.clone(), hy.clone()),
        };
        let got = f(&vx, &vy)?.to_ndarray()?;
        let shape = got.shape().to_vec();
        let bx = hxv.broadcast(shape.clone()).unwrap();
        // A unary operation's result has its operand's shape, which the unused second
        // operand need not broadcast to: its first element then stands for it.
        let by = match hyv.broadcast(shape.clone()) {
            Some(b) => b.to_owned(),
            None => ArrayD::from_elem(IxDyn(&shape), hyv.iter().next().copied().unwrap()),
        };
        assert_eq!(got.len(), bx.len(), "{what} {case:?}: shape {shape:?}");
        for ((g, a), b) in got.iter().zip(bx.iter()).zip(by.iter()) {
            let w = want(*a, *b);
            assert!(
                close(R::DTYPE, g.v(), w, ulps),
                "{what} {case:?}: {a:?}, {b:?} gave {g:?}, NumPy {w:?}"
            );
        }
    }
    Ok(())
}

fn binary_gpu<T: Host + Promote<U>, U: Host>(
    ctx: &Context,
    rng: &mut Rng,
    op: BinOp,
    checked: &mut usize,
) -> Result<()>
where
    Out<T, U>: Host,
    Quo<T, U>: Host,
{
    let (t, u) = (T::DTYPE, U::DTYPE);
    let computed = <Out<T, U>>::DTYPE;
    if rejected(&format!("{op:?}"), computed).is_some() || is_deviation(op, t, u) {
        return Ok(());
    }
    *checked += 1;
    let what = format!("{op:?}({t:?}, {u:?})");
    let d = computed;
    let q = <Quo<T, U>>::DTYPE;
    // `//` and `%` of floats: NumPy's algorithm in the same precision; 2 ulps for the
    // complex division (Smith's algorithm against the host's).
    let ulps = if computed.is_complex() { 4.0 } else { 1.0 };
    match op {
        BinOp::Add => run2(
            ctx,
            rng,
            &what,
            |x, y| promote::add(x, y).eval(),
            |a: T, b: U| bin_ref(op, d, a.v(), b.v()),
            ulps,
        ),
        BinOp::Sub => run2(
            ctx,
            rng,
            &what,
            |x, y| promote::sub(x, y).eval(),
            |a: T, b: U| bin_ref(op, d, a.v(), b.v()),
            ulps,
        ),
        BinOp::Mul => run2(
            ctx,
            rng,
            &what,
            |x, y| promote::mul(x, y).eval(),
            |a: T, b: U| bin_ref(op, d, a.v(), b.v()),
            ulps,
        ),
        BinOp::Div => run2(
            ctx,
            rng,
            &what,
            |x, y| promote::div(x, y).eval(),
            |a: T, b: U| bin_ref(op, q, a.v(), b.v()),
            ulps,
        ),
        BinOp::Rem => run2(
            ctx,
            rng,
            &what,
            |x, y| promote::remainder(x, y).eval(),
            |a: T, b: U| bin_ref(op, d, a.v(), b.v()),
            ulps,
        ),
        BinOp::FloorDiv => run2(
            ctx,
            rng,
            &what,
            |x, y| promote::floor_divide(x, y).eval(),
            |a: T, b: U| bin_ref(op, d, a.v(), b.v()),
            ulps,
        ),
    }
}

/// Row `T` of a binary operator's test: `T` with every type, every [`Case`].
macro_rules! binary_row {
    ($t:ty, ($op:expr)) => {{
        let op: BinOp = $op;
        let ctx = Context::default()?;
        let mut rng = Rng::new(row_seed::<$t>(46));
        let mut checked = 0;
        macro_rules! cell {
            ($a:ty, $b:ty) => {
                binary_gpu::<$a, $b>(&ctx, &mut rng, op, &mut checked)?;
            };
        }
        each_column!(cell, $t);
        let listed = 15 - checked;
        // Listed: the complex results of `%`/`//` (REJECTED) and DEVIATIONS.
        eprintln!(
            "{:?} of {:?}: {checked} cells checked, {listed} listed",
            $op,
            <$t>::DTYPE
        );
        let all_complex = <$t>::DTYPE.is_complex() && matches!(op, BinOp::Rem | BinOp::FloorDiv);
        assert!(checked > 0 || all_complex, "{checked} cells checked");
        Ok(())
    }};
}

/// One module of row tests a binary operator: every pair of types, every [`Case`].
macro_rules! binary_tests {
    ($($name:ident: $op:ident),* $(,)?) => {
        $(
            /// One test a row: every pair of types, every [`Case`].
            mod $name {
                use super::*;
                every_type_rows!(binary_row, (BinOp::$op));
            }
        )*
    };
}
binary_tests!(
    add_of_every_pair_matches_numpy: Add,
    sub_of_every_pair_matches_numpy: Sub,
    mul_of_every_pair_matches_numpy: Mul,
    true_divide_of_every_pair_matches_numpy: Div,
    remainder_of_every_pair_matches_numpy: Rem,
    floor_divide_of_every_pair_matches_numpy: FloorDiv,
);

fn compare_gpu<T: Host + Promote<U>, U: Host>(ctx: &Context, rng: &mut Rng, checked: &mut usize) -> Result<()>
where
    Out<T, U>: Host,
{
    let d = <Out<T, U>>::DTYPE;
    for op in CMP_OPS {
        if rejected(&format!("Compare({op:?})"), d).is_some() {
            continue;
        }
        *checked += 1;
        let what = format!("{op:?}({:?}, {:?})", T::DTYPE, U::DTYPE);
        run2(
            ctx,
            rng,
            &what,
            |x, y| promote::compare(op, x, y).eval(),
            |a: T, b: U| V::I(i128::from(cmp_ref(op, d, a.v(), b.v()))),
            0.0,
        )?;
    }
    // `where(x > y, x, y)` (`!=` for complex promotions) in the promoted type.
    let cond = if d.is_complex() { CmpOp::Ne } else { CmpOp::Gt };
    run2(
        ctx,
        rng,
        &format!("where({:?}, {:?})", T::DTYPE, U::DTYPE),
        |x, y| promote::where_(promote::compare(cond, x, y), x, y).eval(),
        |a: T, b: U| {
            conv(
                d,
                if cmp_ref(cond, d, a.v(), b.v()) {
                    a.v()
                } else {
                    b.v()
                },
            )
        },
        0.0,
    )
}

/// Row `T` of the comparisons and `where`.
macro_rules! compare_row {
    ($t:ty, ()) => {{
        let ctx = Context::default()?;
        let mut rng = Rng::new(row_seed::<$t>(4646));
        let mut checked = 0;
        macro_rules! cell {
            ($a:ty, $b:ty) => {
                compare_gpu::<$a, $b>(&ctx, &mut rng, &mut checked)?;
            };
        }
        each_column!(cell, $t);
        eprintln!("comparisons of {:?}: {checked} cells checked", <$t>::DTYPE);
        // Six comparisons a pair; the ordering ones of complex promotions are listed.
        assert!(checked >= 15 * 2, "{checked} cells checked");
        Ok(())
    }};
}

/// Comparisons and `where` of every pair of types, in their promoted type: one test a row.
mod comparisons_and_where_of_every_pair_match_numpy {
    use super::*;
    every_type_rows!(compare_row, ());
}

/// Row `T` of the casts: `T` to every type.
macro_rules! cast_row {
    ($t:ty, ()) => {{
        let ctx = Context::default()?;
        let mut rng = Rng::new(row_seed::<$t>(464646));
        macro_rules! cell {
            ($a:ty, $b:ty) => {
                cast_gpu_checked::<$a, $b>(&ctx, &mut rng)?;
            };
        }
        each_column!(cell, $t);
        Ok(())
    }};
}

/// `astype` of every pair of types, contiguous and transposed: one test a row.
mod casts_of_every_pair_match_numpy {
    use super::*;
    every_type_rows!(cast_row, ());
}

/// `astype` of `T` to `U`, contiguous and transposed. A float that is NaN, infinite,
/// negative or beyond `i32` has no defined conversion to an integer type in C (NumPy warns,
/// and its value is the platform's): those elements are not compared.
fn cast_gpu_checked<T: Host, U: Host>(ctx: &Context, rng: &mut Rng) -> Result<()> {
    let int_target = !matches!(
        U::DTYPE,
        DType::Bool | DType::F16 | DType::Bf16 | DType::F32 | DType::F64
    ) && !U::DTYPE.is_complex();
    let hx: ArrayD<T> = host(rng, &[6, 7]);
    let dx = DeviceArray::from_ndarray(ctx, &hx)?;
    for (view, hv) in [(dx.view(), hx.clone()), (dx.t(), hx.t().to_owned())] {
        let got = view.expr().cast::<U>().eval()?.to_ndarray()?;
        for (g, a) in got.iter().zip(hv.iter()) {
            let v = a.v();
            let r = re(v);
            if int_target && !matches!(v, V::I(_)) && (!r.is_finite() || r < 0.0 || r >= 2f64.powi(31)) {
                continue;
            }
            let w = U::of(v).v();
            assert!(
                close(U::DTYPE, g.v(), w, 0.0),
                "cast {:?} to {:?}: {a:?} gave {g:?}, NumPy {w:?}",
                T::DTYPE,
                U::DTYPE
            );
        }
    }
    Ok(())
}

/// The math functions of `T` (integers promoted as NumPy does), against `f64` on the host
/// rounded to the result type, within a few units in its last place.
fn math_gpu<T: Host + math::ToInexact>(ctx: &Context, rng: &mut Rng) -> Result<()>
where
    T::Inexact: Host,
{
    let d = <T::Inexact>::DTYPE;
    type F = fn(f64) -> f64;
    type C = fn(Complex64) -> Complex64;
    let fns: [(&str, F, C); 10] = [
        ("exp", f64::exp, |z| z.exp()),
        ("log", f64::ln, |z| z.ln()),
        ("log10", f64::log10, |z| z.log10()),
        ("sqrt", f64::sqrt, |z| z.sqrt()),
        ("sin", f64::sin, |z| z.sin()),
        ("cos", f64::cos, |z| z.cos()),
        ("tan", f64::tan, |z| z.tan()),
        ("sinh", f64::sinh, |z| z.sinh()),
        ("cosh", f64::cosh, |z| z.cosh()),
        ("tanh", f64::tanh, |z| z.tanh()),
    ];
    for (k, (name, f, c)) in fns.into_iter().enumerate() {
        let what = format!("{name}({:?})", T::DTYPE);
        run2(
            ctx,
            rng,
            &what,
            |x, _y: &DeviceArrayView<'_, Bool, IxDyn>| {
                let e = x.expr();
                match k {
                    0 => e.exp(),
                    1 => e.log(),
                    2 => e.log10(),
                    3 => e.sqrt(),
                    4 => e.sin(),
                    5 => e.cos(),
                    6 => e.tan(),
                    7 => e.sinh(),
                    8 => e.cosh(),
                    _ => e.tanh(),
                }
                .eval()
            },
            |a: T, _b: Bool| match conv(d, a.v()) {
                V::C(r, i) => {
                    let z = c(Complex64::new(r, i));
                    conv(d, V::C(z.re, z.im))
                }
                v => conv(d, V::F(f(re(v)))),
            },
            // CUDA's functions are within a few ulps (`tan` and the complex ones more).
            if d.is_complex() { 64.0 } else { 8.0 },
        )?;
    }
    Ok(())
}

/// The math functions of every type: floats and complex numbers in their own type, `bool` and
/// the integers in NumPy's (`exp` of `i32` in `f64`, of `i8` in `f16`).
mod math_functions_of_every_type_match_numpy {
    use super::*;
    macro_rules! one_type {
        ($t:ty, ()) => {{
            let ctx = Context::default()?;
            let mut rng = Rng::new(row_seed::<$t>(4647));
            math_gpu::<$t>(&ctx, &mut rng)
        }};
    }
    every_type_rows!(one_type, ());
}

/// `maximum`/`minimum` (NaN propagates) and `fmax`/`fmin` (NaN ignored) of every real type.
fn extrema_gpu<T: Host>(ctx: &Context, rng: &mut Rng) -> Result<()> {
    let d = T::DTYPE;
    let pick = |a: V, b: V, max: bool, ignore_nan: bool| -> V {
        let (x, y) = (re(a), re(b));
        if x.is_nan() || y.is_nan() {
            return if ignore_nan && !(x.is_nan() && y.is_nan()) {
                if x.is_nan() {
                    b
                } else {
                    a
                }
            } else if x.is_nan() {
                a
            } else {
                b
            };
        }
        if (x >= y) == max {
            a
        } else {
            b
        }
    };
    for (k, name) in ["maximum", "minimum", "fmax", "fmin"].into_iter().enumerate() {
        run2(
            ctx,
            rng,
            &format!("{name}({d:?})"),
            |x, y: &DeviceArrayView<'_, T, IxDyn>| match k {
                0 => math::maximum(x, y),
                1 => math::minimum(x, y),
                2 => math::fmax(x, y),
                _ => math::fmin(x, y),
            },
            |a: T, b: T| {
                let (a, b) = (a.v(), b.v());
                let r = pick(a, b, k % 2 == 0, k >= 2);
                // Equal values of either sign of zero: either is NumPy's.
                if re(a) == re(b) {
                    a
                } else {
                    r
                }
            },
            0.0,
        )?;
    }
    Ok(())
}

/// `maximum`, `minimum`, `fmax`, `fmin` of every real type, NaN among the values.
mod extrema_of_every_real_type_follow_numpy_s_nan_rules {
    use super::*;
    macro_rules! one_type {
        ($t:ty, ()) => {{
            let ctx = Context::default()?;
            let mut rng = Rng::new(row_seed::<$t>(4648));
            extrema_gpu::<$t>(&ctx, &mut rng)
        }};
    }
    every_real_rows!(one_type, ());
}

/// `any`, `all` of every type (`f16`, `bf16` included), and `max`/`min` of every real one,
/// over contiguous, transposed, 0-d and empty arrays.
fn reductions_gpu<T: Host>(ctx: &Context, rng: &mut Rng) -> Result<()> {
    for shape in [&[0usize, 3][..], &[], &[6, 7]] {
        let mut h: ArrayD<T> = host(rng, shape);
        if h.len() > 3 && T::DTYPE != DType::Bool {
            // Some zeros, so that `all` can be false and `any` is not trivially true.
            for v in h.iter_mut().step_by(5) {
                *v = T::of(V::I(0));
            }
        }
        let d = DeviceArray::from_ndarray(ctx, &h)?;
        for (view, hv) in [(d.view(), h.clone()), (d.t(), h.t().to_owned())] {
            let any = hv.iter().any(|v| truth(v.v()));
            let all = hv.iter().all(|v| truth(v.v()));
            assert_eq!(view.any()?, any, "any {:?} {shape:?}", T::DTYPE);
            assert_eq!(view.all()?, all, "all {:?} {shape:?}", T::DTYPE);
        }
    }
    Ok(())
}

/// `any` and `all` of every type (they failed to compile on `f16`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn any_and_all_of_every_type_match_numpy() -> Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4649);
    macro_rules! cell {
        ($t:ty) => {
            reductions_gpu::<$t>(&ctx, &mut rng)?;
        };
    }
    each_type!(cell);
    Ok(())
}

/// `target op= x` for a pair of types: computed in the promoted type (`/` of integers in
/// `f64`) and stored by NumPy's `same_kind` rule, or refused with
/// `ArgumentError::CastingRule` where NumPy raises `UFuncTypeError`.
fn in_place_gpu<T: Host + Promote<U>, U: Host>(
    ctx: &Context,
    rng: &mut Rng,
    tally: &mut (usize, usize),
) -> Result<()>
where
    Out<T, U>: Host,
{
    let (t, u) = (T::DTYPE, U::DTYPE);
    let out = <Out<T, U>>::DTYPE;
    let ints = |d: DType| !matches!(d, DType::F16 | DType::Bf16 | DType::F32 | DType::F64) && !d.is_complex();
    for op in [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::FloorDiv,
    ] {
        if rejected(&format!("{op:?}"), out).is_some() || is_deviation(op, t, u) {
            continue;
        }
        let computed = if op == BinOp::Div && ints(out) {
            DType::F64
        } else {
            out
        };
        // NumPy's `same_kind`: bool < unsigned < signed < float < complex.
        let rank = |d: DType| match d {
            DType::Bool => 0,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => 1,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => 2,
            DType::F16 | DType::Bf16 | DType::F32 | DType::F64 => 3,
            _ => 4,
        };
        let allowed = rank(computed) <= rank(t);
        let ht: ArrayD<T> = host(rng, &[3, 4]);
        let hx: ArrayD<U> = host(rng, &[4]);
        let mut dt = DeviceArray::from_ndarray(ctx, &ht)?;
        let dx = DeviceArray::from_ndarray(ctx, &hx)?;
        let r = promote::op_assign(&mut dt, op, &dx);
        if !allowed {
            assert!(
                matches!(r, Err(Error::Argument(ArgumentError::CastingRule { .. }))),
                "{t:?} {op:?}= {u:?} should be refused: {r:?}"
            );
            tally.1 += 1;
            continue;
        }
        r?;
        tally.0 += 1;
        let got = dt.to_ndarray()?;
        let bx = hx.broadcast(vec![3, 4]).unwrap();
        for ((g, a), b) in got.iter().zip(ht.iter()).zip(bx.iter()) {
            let w = T::of(bin_ref(op, computed, a.v(), b.v())).v();
            let r = re(bin_ref(op, computed, a.v(), b.v()));
            if ints(t) && !ints(computed) && (!r.is_finite() || r < 0.0) {
                continue; // A float stored into an integer out of range: C leaves it undefined.
            }
            assert!(
                close(t, g.v(), w, 1.0),
                "{t:?} {op:?}= {u:?}: {a:?}, {b:?} gave {g:?}, NumPy {w:?}"
            );
        }
    }
    Ok(())
}

/// Row `T` of the in-place operators: `T op= U` for every `U`.
macro_rules! in_place_row {
    ($t:ty, ()) => {{
        let ctx = Context::default()?;
        let mut rng = Rng::new(row_seed::<$t>(4650));
        let mut tally = (0, 0);
        macro_rules! cell {
            ($a:ty, $b:ty) => {
                in_place_gpu::<$a, $b>(&ctx, &mut rng, &mut tally)?;
            };
        }
        each_column!(cell, $t);
        eprintln!(
            "in place on {:?}: {} computed, {} refused",
            <$t>::DTYPE,
            tally.0,
            tally.1
        );
        // Every row stores some cells (`T op= T` at least) and, but for complex targets,
        // refuses some (a wider kind).
        assert!(tally.0 > 0, "{tally:?}");
        assert!(tally.1 > 0 || <$t>::DTYPE.is_complex(), "{tally:?}");
        Ok(())
    }};
}

/// In-place operators of every pair of types: one test a row.
mod in_place_operators_of_every_pair_follow_same_kind_casting {
    use super::*;
    every_type_rows!(in_place_row, ());
}

/// The six wrong answers of issue 46, each as NumPy gives it.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_six_wrong_answers_are_right() -> Result<()> {
    let ctx = Context::default()?;
    let h = |v: &[f32]| {
        ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.iter().map(|&x| f16::from_f32(x)).collect()).unwrap()
    };
    let a = DeviceArray::from_ndarray(&ctx, &h(&[7.0, -7.0, 7.5, 1.0]))?;
    let b = DeviceArray::from_ndarray(&ctx, &h(&[2.0, 2.0, -2.0, 1.0]))?;
    let f = |x: DeviceArray<f16, IxDyn>| -> Result<Vec<f32>> {
        Ok(x.to_vec()?.into_iter().map(f16::to_f32).collect())
    };
    assert_eq!(f(a.floor_divide(&b)?)?, vec![3.0, -4.0, -4.0, 1.0]);
    assert_eq!(f(a.rem(&b)?)?, vec![1.0, 1.0, -0.5, 0.0]);
    assert_eq!(f(a.div(&a)?)?, vec![1.0; 4]);
    let n = DeviceArray::from_ndarray(&ctx, &h(&[f32::NAN, 1.0, f32::NAN, 3.0]))?;
    assert_eq!(f(math::fmax(&n, &b)?)?, vec![2.0, 2.0, -2.0, 3.0]);
    assert_eq!(f(math::fmin(&n, &b)?)?, vec![2.0, 1.0, -2.0, 1.0]);
    assert!(a.any()? && a.all()?);
    let z = DeviceArray::from_ndarray(&ctx, &h(&[0.0, 1.0]))?;
    assert!(z.any()? && !z.all()?);
    let l = DeviceArray::<i64, Ix1>::linspace(&ctx, -10.0, 8.0, 9, true)?;
    assert_eq!(l.to_vec()?, vec![-10, -8, -6, -4, -1, 1, 3, 5, 8]);
    let i = DeviceArray::from_ndarray(
        &ctx,
        &ArrayD::from_shape_vec(IxDyn(&[2, 1]), vec![3i16, -4]).unwrap(),
    )?;
    let s = promote::add(&i, &a).eval()?; // i16 + f16 -> f32, broadcast to [2, 4]
    assert_eq!(s.shape(), &[2, 4]);
    assert_eq!(s.to_vec()?, vec![10.0f32, -4.0, 10.5, 4.0, 3.0, -11.0, 3.5, -3.0]);
    let u = DeviceArray::from_ndarray(&ctx, &ArrayD::from_shape_vec(IxDyn(&[1]), vec![2u8]).unwrap())?;
    let m = promote::mul(&u, &a).eval()?; // u8 * f16 -> f16
    assert_eq!(f(m)?, vec![14.0, -14.0, 15.0, 2.0]);
    Ok(())
}
