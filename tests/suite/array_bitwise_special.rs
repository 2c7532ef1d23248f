//! NumPy's bitwise functions and three special float functions on a GPU against the host.
//! The operators `&`, `|`, `^`, `!` (NumPy's `~`), `<<` and `>>` on arrays, views, scalars and
//! chained expressions, and the functions `bitwise_and`, ..., `right_shift` (with their `_into`
//! forms), in every integer type against the operations on the host in `i128`, wrapped back to
//! the type: random operands over the whole range and every shift count from -2 to the width
//! plus 2 (NumPy shifts everything out for a count that is negative or too large); `bool`'s as
//! the logical operations. `gcd`, `lcm` and `bitwise_count` against Euclid's algorithm and
//! `count_ones` on the magnitudes, with CuPy's test case by value. Then `nextafter` against the
//! neighbouring bit pattern (every `f16` and `bf16` value, which step by their own spacing, and
//! CuPy's broadcast case), `sinc` against `sin(πx) / (πx)` (complex numbers too) and `i0`
//! against its power series, each as a new array, an `Expr` step and `_into`.

use std::f64::consts::PI;
use std::fmt::Debug;

use gpu_runtime::gpuarray::math::{self, Inexact};
use gpu_runtime::gpuarray::{Bitwise, Bool, DeviceArray, Element, IndexElement, Operand};
use gpu_runtime::half::{bf16, f16};
use gpu_runtime::ndarray::{s, Array1, Array2, Ix1};
use gpu_runtime::types::{Complex32, Complex64};
use gpu_runtime::Context;
use gpu_suite::Rng;

fn upload<T: Element>(ctx: &Context, x: &[T]) -> gpu_runtime::Result<DeviceArray<T, Ix1>> {
    DeviceArray::from_ndarray(ctx, &Array1::from(x.to_vec()))
}

/// Asserts `got == want` element by element; `args` are each element's operands, for the
/// message.
fn check<T: PartialEq + Debug, A: Debug>(what: &str, got: &[T], want: &[T], args: &[A]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, ((g, w), a)) in got.iter().zip(want).zip(args).enumerate() {
        assert!(g == w, "{what}: [{i}] of {a:?} is {g:?}, not {w:?}");
    }
}

/// An integer type under test, its values on the host as `i128` (sign-extended for the signed
/// types), where every NumPy operation is computed and wrapped back.
trait Int: IndexElement + Bitwise + for<'a> Operand<'a, Self> {
    const BITS: u32;
    const MIN: i128;
    const MAX: i128;
    /// `v` truncated to the type (`as`).
    fn wrap(v: i128) -> Self;
    /// The value, exactly.
    fn wide(self) -> i128;
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const BITS: u32 = <$t>::BITS;
            const MIN: i128 = <$t>::MIN as i128;
            const MAX: i128 = <$t>::MAX as i128;
            fn wrap(v: i128) -> $t {
                v as $t
            }
            fn wide(self) -> i128 {
                self as i128
            }
        }
    )*};
}
int!(i8, u8, i16, u16, i32, u32, i64, u64);

/// `n` operands: random bits over the whole range, small values of either sign, the extremes.
fn ints<T: Int>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|k| match k % 4 {
            0 | 1 => T::wrap(i128::from(rng.next_u64())),
            2 => T::wrap(i128::from(rng.next_u64() % 41) - 20),
            _ => T::wrap([T::MIN, T::MAX, 0, 1, -1][(rng.next_u64() % 5) as usize]),
        })
        .collect()
}

/// NumPy's `left_shift`: 0 for a count that is negative or at least the width; a negative
/// operand shifts as its bits.
fn shl<T: Int>(a: i128, c: i128) -> i128 {
    if (0..i128::from(T::BITS)).contains(&c) {
        a.wrapping_shl(c as u32)
    } else {
        0
    }
}

/// NumPy's `right_shift`: arithmetic for the signed types (`a` is sign-extended), logical
/// for the unsigned; out of range -1 for a negative operand, else 0.
fn shr<T: Int>(a: i128, c: i128) -> i128 {
    if (0..i128::from(T::BITS)).contains(&c) {
        a >> c
    } else if a < 0 {
        -1
    } else {
        0
    }
}

fn gcd_u(mut x: u128, mut y: u128) -> u128 {
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

/// NumPy's `gcd`: of the magnitudes (`gcd(MIN, 0)` is `|MIN|`, which wraps to `MIN`).
fn gcd(a: i128, b: i128) -> i128 {
    gcd_u(a.unsigned_abs(), b.unsigned_abs()) as i128
}

/// NumPy's `lcm`: `|a| / gcd * |b|` (wrapping in the type), 0 where either is 0.
fn lcm(a: i128, b: i128) -> i128 {
    let (x, y) = (a.unsigned_abs(), b.unsigned_abs());
    match gcd_u(x, y) {
        0 => 0,
        g => (x / g).wrapping_mul(y) as i128,
    }
}

/// A host function of two operands, on the values as `i128`.
type Host2 = fn(i128, i128) -> i128;

/// `f` of each pair, wrapped to the type.
fn host2<T: Int>(args: &[(T, T)], f: Host2) -> Vec<T> {
    args.iter()
        .map(|&(p, q)| T::wrap(f(p.wide(), q.wide())))
        .collect()
}

/// What `f` stores into `out`, read back.
fn into<T: Element>(
    out: &mut DeviceArray<T, Ix1>,
    f: impl FnOnce(&mut DeviceArray<T, Ix1>) -> gpu_runtime::Result<()>,
) -> gpu_runtime::Result<Vec<T>> {
    f(out)?;
    out.to_vec()
}

/// Each labelled result against the host's, `args` each element's operands.
fn check_all<T: PartialEq + Debug, A: Debug>(name: &str, args: &[A], cases: Vec<(&str, Vec<T>, &[T])>) {
    for (what, got, want) in cases {
        check(&format!("{name} {what}"), &got, want, args);
    }
}

/// The bitwise operators and functions and the shifts of `T`, in every form, against the host.
fn check_bitwise<T: Int>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let n = 3000;
    let name = std::any::type_name::<T>();
    let (x, y) = (ints::<T>(rng, n), ints::<T>(rng, n));
    // Every count from -2 to the width + 2 (a negative count of an unsigned type is large).
    let span = u64::from(T::BITS) + 5;
    let c: Vec<T> = (0..n)
        .map(|_| T::wrap(i128::from(rng.next_u64() % span) - 2))
        .collect();
    let s = T::wrap(i128::from(rng.next_u64()));
    let (dx, dy, dc) = (upload(ctx, &x)?, upload(ctx, &y)?, upload(ctx, &c)?);
    let mut out = DeviceArray::<T, Ix1>::zeros(ctx, n)?;
    let pairs: Vec<(T, T)> = x.iter().copied().zip(y.iter().copied()).collect();
    let counts: Vec<(T, T)> = x.iter().copied().zip(c.iter().copied()).collect();

    // Two arrays: operators, functions, `_into`, and a chain in one kernel.
    let and = host2(&pairs, |p, q| p & q);
    let or = host2(&pairs, |p, q| p | q);
    let xor = host2(&pairs, |p, q| p ^ q);
    let chained = host2(&pairs, |p, q| (!(p ^ q) & p) | 5);
    let five = T::wrap(5);
    check_all(
        name,
        &pairs,
        vec![
            ("x & y", (&dx & &dy).eval()?.to_vec()?, &and),
            ("bitwise_and", math::bitwise_and(&dx, &dy)?.to_vec()?, &and),
            (
                "bitwise_and_into",
                into(&mut out, |o| math::bitwise_and_into(&dx, &dy, o))?,
                &and,
            ),
            ("x | y", (&dx | &dy).eval()?.to_vec()?, &or),
            ("bitwise_or", math::bitwise_or(&dx, &dy)?.to_vec()?, &or),
            (
                "bitwise_or_into",
                into(&mut out, |o| math::bitwise_or_into(&dx, &dy, o))?,
                &or,
            ),
            ("x ^ y", (&dx ^ &dy).eval()?.to_vec()?, &xor),
            ("bitwise_xor", math::bitwise_xor(&dx, &dy)?.to_vec()?, &xor),
            (
                "bitwise_xor_into",
                into(&mut out, |o| math::bitwise_xor_into(&dx, &dy, o))?,
                &xor,
            ),
            (
                "(!(x ^ y) & x) | 5",
                ((!(&dx ^ &dy) & &dx) | five).eval()?.to_vec()?,
                &chained,
            ),
        ],
    );
    // One array: `!`, and a scalar operand on either side.
    let not: Vec<T> = x.iter().map(|p| T::wrap(!p.wide())).collect();
    let with_s = |f: Host2| -> Vec<T> { x.iter().map(|p| T::wrap(f(p.wide(), s.wide()))).collect() };
    let (and_s, or_s, xor_s) = (with_s(|p, q| p & q), with_s(|p, q| p | q), with_s(|p, q| p ^ q));
    check_all(
        &format!("{name} (s = {s:?})"),
        &x,
        vec![
            ("!x", (!&dx).eval()?.to_vec()?, &not),
            ("invert", math::invert(&dx)?.to_vec()?, &not),
            ("!x into", into(&mut out, |o| (!&dx).eval_into(o))?, &not),
            ("Expr::invert", dx.expr().invert().eval()?.to_vec()?, &not),
            ("x & s", (&dx & s).eval()?.to_vec()?, &and_s),
            ("x | s", (&dx | s).eval()?.to_vec()?, &or_s),
            ("x ^ s", (&dx ^ s).eval()?.to_vec()?, &xor_s),
            ("bitwise_and(s, x)", math::bitwise_and(s, &dx)?.to_vec()?, &and_s),
            ("bitwise_xor(s, x)", math::bitwise_xor(s, &dx)?.to_vec()?, &xor_s),
        ],
    );
    // A reversed view as an operand.
    let rx = dx.slice(s![..;-1])?;
    let rev: Vec<(T, T)> = x.iter().rev().copied().zip(y.iter().copied()).collect();
    let rev_or = host2(&rev, |p, q| p | q);
    check_all(
        name,
        &rev,
        vec![("x[::-1] | y", (&rx | &dy).eval()?.to_vec()?, &rev_or)],
    );

    // The shifts: operators, Expr steps, functions, `_into`, and (x << c) >> 1 in one kernel,
    // where the left shift wraps in the type before the right one.
    let left = host2(&counts, shl::<T>);
    let right = host2(&counts, shr::<T>);
    let both: Vec<T> = left.iter().map(|l| T::wrap(shr::<T>(l.wide(), 1))).collect();
    let one = T::wrap(1);
    check_all(
        name,
        &counts,
        vec![
            ("x << c", (&dx << &dc).eval()?.to_vec()?, &left),
            ("left_shift", math::left_shift(&dx, &dc)?.to_vec()?, &left),
            (
                "Expr::left_shift",
                dx.expr().left_shift(&dc).eval()?.to_vec()?,
                &left,
            ),
            (
                "left_shift_into",
                into(&mut out, |o| math::left_shift_into(&dx, &dc, o))?,
                &left,
            ),
            ("x >> c", (&dx >> &dc).eval()?.to_vec()?, &right),
            ("right_shift", math::right_shift(&dx, &dc)?.to_vec()?, &right),
            (
                "Expr::right_shift",
                dx.expr().right_shift(&dc).eval()?.to_vec()?,
                &right,
            ),
            (
                "right_shift_into",
                into(&mut out, |o| math::right_shift_into(&dx, &dc, o))?,
                &right,
            ),
            ("(x << c) >> 1", ((&dx << &dc) >> one).eval()?.to_vec()?, &both),
        ],
    );
    // A scalar count, and a scalar shifted by an array of counts.
    let by3 = |f: Host2| -> Vec<T> { x.iter().map(|p| T::wrap(f(p.wide(), 3))).collect() };
    let three = T::wrap(3);
    check_all(
        name,
        &x,
        vec![
            ("x << 3", (&dx << three).eval()?.to_vec()?, &by3(shl::<T>)),
            ("x >> 3", (&dx >> three).eval()?.to_vec()?, &by3(shr::<T>)),
        ],
    );
    let powers: Vec<T> = c.iter().map(|q| T::wrap(shl::<T>(1, q.wide()))).collect();
    check_all(
        name,
        &c,
        vec![("left_shift(1, c)", math::left_shift(one, &dc)?.to_vec()?, &powers)],
    );

    // Every count against 16 operands, broadcast: a column (16, 1) and a row (1, width + 5).
    let m = span as usize;
    let col = Array2::from_shape_fn((16, 1), |(i, _)| x[i]);
    let row = Array2::from_shape_fn((1, m), |(_, j)| T::wrap(j as i128 - 2));
    let (dcol, drow) = (
        DeviceArray::from_ndarray(ctx, &col)?,
        DeviceArray::from_ndarray(ctx, &row)?,
    );
    let grid: Vec<(usize, usize, T, T)> = (0..16 * m)
        .map(|k| (k / m, k % m, x[k / m], row[[0, k % m]]))
        .collect();
    let on_grid = |f: Host2| -> Vec<T> {
        grid.iter()
            .map(|&(_, _, p, q)| T::wrap(f(p.wide(), q.wide())))
            .collect()
    };
    let shifted = (&dcol << &drow).eval()?;
    assert_eq!(shifted.shape(), [16, m], "{name} broadcast <<");
    check(
        &format!("{name} column << row"),
        &shifted.to_vec()?,
        &on_grid(shl::<T>),
        &grid,
    );
    check(
        &format!("{name} column >> row"),
        &(&dcol >> &drow).eval()?.to_vec()?,
        &on_grid(shr::<T>),
        &grid,
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bitwise_operators_and_shifts_match_numpy_in_every_integer_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(8191);
    check_bitwise::<i8>(&ctx, &mut rng)?;
    check_bitwise::<u8>(&ctx, &mut rng)?;
    check_bitwise::<i16>(&ctx, &mut rng)?;
    check_bitwise::<u16>(&ctx, &mut rng)?;
    check_bitwise::<i32>(&ctx, &mut rng)?;
    check_bitwise::<u32>(&ctx, &mut rng)?;
    check_bitwise::<i64>(&ctx, &mut rng)?;
    check_bitwise::<u64>(&ctx, &mut rng)?;
    // NumPy's corner cases by value: a negative operand shifted left wraps as its bits, shifted
    // right by too much gives -1; a count of the width or more gives 0.
    let a = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![-1i8, -128, 64, -3, -3, 5]))?;
    let c = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![7i8, 1, 1, 8, -1, 8]))?;
    assert_eq!((&a << &c).eval()?.to_vec()?, [-128, 0, -128, 0, 0, 0]);
    assert_eq!((&a >> &c).eval()?.to_vec()?, [-1, -64, 32, -1, -1, 0]);
    let u = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0xffu8, 0x80, 1]))?;
    assert_eq!((&u >> 7u8).eval()?.to_vec()?, [1, 1, 0]);
    assert_eq!((&u << 8u8).eval()?.to_vec()?, [0, 0, 0]);
    assert_eq!((!&u).eval()?.to_vec()?, [0, 0x7f, 0xfe]);
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bool_bitwise_operators_are_the_logical_ones() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(4099);
    let n = 1000;
    let mut draw = || -> Vec<Bool> { (0..n).map(|_| Bool::from(rng.next_u64() >> 63 == 1)).collect() };
    let (x, y) = (draw(), draw());
    let (dx, dy) = (upload(&ctx, &x)?, upload(&ctx, &y)?);
    let mut out = DeviceArray::<Bool, Ix1>::zeros(&ctx, n)?;
    let pairs: Vec<(bool, bool)> = x.iter().zip(&y).map(|(p, q)| (p.get(), q.get())).collect();
    let host = |f: fn(bool, bool) -> bool| -> Vec<Bool> {
        pairs.iter().map(|&(p, q)| Bool::from(f(p, q))).collect()
    };
    let (and, or, xor) = (host(|p, q| p && q), host(|p, q| p || q), host(|p, q| p != q));
    // NumPy's ~ of a bool array is the logical not (not the byte's complement, 0xfe).
    let not = host(|p, _| !p);
    let chained = host(|p, q| !p && q);
    check_all(
        "bool",
        &pairs,
        vec![
            ("x & y", (&dx & &dy).eval()?.to_vec()?, &and),
            ("bitwise_and", math::bitwise_and(&dx, &dy)?.to_vec()?, &and),
            (
                "bitwise_and_into",
                into(&mut out, |o| math::bitwise_and_into(&dx, &dy, o))?,
                &and,
            ),
            ("x | y", (&dx | &dy).eval()?.to_vec()?, &or),
            ("bitwise_or", math::bitwise_or(&dx, &dy)?.to_vec()?, &or),
            (
                "bitwise_or_into",
                into(&mut out, |o| math::bitwise_or_into(&dx, &dy, o))?,
                &or,
            ),
            ("x ^ y", (&dx ^ &dy).eval()?.to_vec()?, &xor),
            ("bitwise_xor", math::bitwise_xor(&dx, &dy)?.to_vec()?, &xor),
            (
                "bitwise_xor_into",
                into(&mut out, |o| math::bitwise_xor_into(&dx, &dy, o))?,
                &xor,
            ),
            ("!x", (!&dx).eval()?.to_vec()?, &not),
            ("invert", math::invert(&dx)?.to_vec()?, &not),
            ("!!x", (!!&dx).eval()?.to_vec()?, &x),
            // Scalars (Rust's bool and Bool), and a chain in one kernel.
            ("x & true", (&dx & true).eval()?.to_vec()?, &x),
            ("x | Bool::FALSE", (&dx | Bool::FALSE).eval()?.to_vec()?, &x),
            ("x ^ true", (&dx ^ true).eval()?.to_vec()?, &not),
            (
                "(!x & y) | false",
                ((!&dx & &dy) | false).eval()?.to_vec()?,
                &chained,
            ),
        ],
    );
    // The truth tables by value.
    let t = DeviceArray::from_ndarray(
        &ctx,
        &Array1::from(vec![Bool::TRUE, Bool::TRUE, Bool::FALSE, Bool::FALSE]),
    )?;
    let f = DeviceArray::from_ndarray(
        &ctx,
        &Array1::from(vec![Bool::TRUE, Bool::FALSE, Bool::TRUE, Bool::FALSE]),
    )?;
    assert_eq!((&t & &f).eval()?.to_vec()?, [true, false, false, false]);
    assert_eq!((&t | &f).eval()?.to_vec()?, [true, true, true, false]);
    assert_eq!((&t ^ &f).eval()?.to_vec()?, [false, true, true, false]);
    assert_eq!((!&t).eval()?.to_vec()?, [false, false, true, true]);
    Ok(())
}

/// `gcd`, `lcm` and `bitwise_count` of `T`, in every form, against the host.
fn check_gcd_lcm_count<T: Int>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let n = 3000;
    let name = std::any::type_name::<T>();
    // Random bits, and multiples of a small common factor so that the divisors are not all 1.
    let mut operand = |k: usize, f: i128| -> T {
        match k % 3 {
            0 => T::wrap(i128::from(rng.next_u64())),
            1 => T::wrap(f * (i128::from(rng.next_u64() % 61) - 30)),
            _ => T::wrap([T::MIN, T::MAX, 0, 1, -1, f][(rng.next_u64() % 6) as usize]),
        }
    };
    let pairs: Vec<(T, T)> = (0..n)
        .map(|k| {
            let f = 1 + (k % 12) as i128;
            (operand(k, f), operand(k + k / 3, f))
        })
        .collect();
    let (x, y): (Vec<T>, Vec<T>) = pairs.iter().copied().unzip();
    let (dx, dy) = (upload(ctx, &x)?, upload(ctx, &y)?);
    let mut out = DeviceArray::<T, Ix1>::zeros(ctx, n)?;

    let (g, l) = (host2(&pairs, gcd), host2(&pairs, lcm));
    check_all(
        name,
        &pairs,
        vec![
            ("gcd", math::gcd(&dx, &dy)?.to_vec()?, &g),
            ("Expr::gcd", dx.expr().gcd(&dy).eval()?.to_vec()?, &g),
            ("gcd_into", into(&mut out, |o| math::gcd_into(&dx, &dy, o))?, &g),
            ("lcm", math::lcm(&dx, &dy)?.to_vec()?, &l),
            ("Expr::lcm", dx.expr().lcm(&dy).eval()?.to_vec()?, &l),
            ("lcm_into", into(&mut out, |o| math::lcm_into(&dx, &dy, o))?, &l),
        ],
    );
    let g12: Vec<T> = x.iter().map(|p| T::wrap(gcd(p.wide(), 12))).collect();
    let l12: Vec<T> = x.iter().map(|p| T::wrap(lcm(p.wide(), 12))).collect();
    let twelve = T::wrap(12);
    check_all(
        name,
        &x,
        vec![
            ("gcd(x, 12)", math::gcd(&dx, twelve)?.to_vec()?, &g12),
            ("lcm(12, x)", math::lcm(twelve, &dx)?.to_vec()?, &l12),
        ],
    );

    // The count of one bits of |x|, a u8 array; fused after another step, of x ^ y (wrapped
    // to the type first).
    let ones = |v: i128| T::wrap(v).wide().unsigned_abs().count_ones() as u8;
    let count: Vec<u8> = x.iter().map(|p| ones(p.wide())).collect();
    let xor_count: Vec<u8> = pairs.iter().map(|&(p, q)| ones(p.wide() ^ q.wide())).collect();
    let mut counts = DeviceArray::<u8, Ix1>::zeros(ctx, n)?;
    check_all(
        name,
        &x,
        vec![
            ("bitwise_count", math::bitwise_count(&dx)?.to_vec()?, &count),
            (
                "Expr::bitwise_count",
                dx.expr().bitwise_count().eval()?.to_vec()?,
                &count,
            ),
            (
                "Expr::bitwise_count into",
                into(&mut counts, |o| dx.expr().bitwise_count().eval_into(o))?,
                &count,
            ),
        ],
    );
    check_all(
        name,
        &pairs,
        vec![(
            "(x ^ y).bitwise_count()",
            (&dx ^ &dy).bitwise_count().eval()?.to_vec()?,
            &xor_count,
        )],
    );
    Ok(())
}

/// CuPy's `gcd`/`lcm` case by value in `T` (the magnitudes for an unsigned `T`), the elements
/// whose operands and results fit in it.
fn cupy_gcd_lcm<T: Int>(ctx: &Context) -> gpu_runtime::Result<()> {
    let signed = T::MIN < 0;
    let a = [0i128, -10, -5, 10, 410, 1, 6, 33];
    let b = [0i128, 5, -10, -5, 20, 51, 6, 42];
    let want_gcd = [0i128, 5, 5, 5, 10, 1, 6, 3];
    let want_lcm = [0i128, 10, 10, 10, 820, 51, 6, 462];
    let value = |v: i128| if signed { v } else { v.abs() };
    let fits = |v: i128| T::wrap(value(v)).wide() == value(v);
    let keep: Vec<usize> = (0..8)
        .filter(|&i| [a[i], b[i], want_gcd[i], want_lcm[i]].into_iter().all(fits))
        .collect();
    let take = |v: &[i128]| -> Vec<T> { keep.iter().map(|&i| T::wrap(value(v[i]))).collect() };
    let (x, y) = (take(&a), take(&b));
    let (dx, dy) = (upload(ctx, &x)?, upload(ctx, &y)?);
    let args: Vec<(T, T)> = x.iter().copied().zip(y.iter().copied()).collect();
    let name = std::any::type_name::<T>();
    check(
        &format!("CuPy's gcd in {name}"),
        &math::gcd(&dx, &dy)?.to_vec()?,
        &take(&want_gcd),
        &args,
    );
    check(
        &format!("CuPy's lcm in {name}"),
        &math::lcm(&dx, &dy)?.to_vec()?,
        &take(&want_lcm),
        &args,
    );
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gcd_lcm_and_bitwise_count_match_numpy_in_every_integer_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(6007);
    check_gcd_lcm_count::<i8>(&ctx, &mut rng)?;
    check_gcd_lcm_count::<u8>(&ctx, &mut rng)?;
    check_gcd_lcm_count::<i16>(&ctx, &mut rng)?;
    check_gcd_lcm_count::<u16>(&ctx, &mut rng)?;
    check_gcd_lcm_count::<i32>(&ctx, &mut rng)?;
    check_gcd_lcm_count::<u32>(&ctx, &mut rng)?;
    check_gcd_lcm_count::<i64>(&ctx, &mut rng)?;
    check_gcd_lcm_count::<u64>(&ctx, &mut rng)?;
    cupy_gcd_lcm::<i8>(&ctx)?;
    cupy_gcd_lcm::<u8>(&ctx)?;
    cupy_gcd_lcm::<i16>(&ctx)?;
    cupy_gcd_lcm::<u16>(&ctx)?;
    cupy_gcd_lcm::<i32>(&ctx)?;
    cupy_gcd_lcm::<u32>(&ctx)?;
    cupy_gcd_lcm::<i64>(&ctx)?;
    cupy_gcd_lcm::<u64>(&ctx)?;
    // The all-i16 case in full, and the edges: gcd(0, 0) = 0, lcm with 0 is 0, the count of
    // i8::MIN is that of 128.
    let a = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0i16, -10, -5, 10, 410, 1, 6, 33]))?;
    let b = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0i16, 5, -10, -5, 20, 51, 6, 42]))?;
    assert_eq!(math::gcd(&a, &b)?.to_vec()?, [0, 5, 5, 5, 10, 1, 6, 3]);
    assert_eq!(math::lcm(&a, &b)?.to_vec()?, [0, 10, 10, 10, 820, 51, 6, 462]);
    assert_eq!(math::lcm(&a, 0i16)?.to_vec()?, [0; 8]);
    let m = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![i8::MIN, -1, 0, i8::MAX, -7]))?;
    assert_eq!(math::bitwise_count(&m)?.to_vec()?, [1, 1, 0, 7, 3]);
    let u = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![u64::MAX, 0, 1 << 63]))?;
    assert_eq!(math::bitwise_count(&u)?.to_vec()?, [64, 0, 1]);
    Ok(())
}

/// A float type under test: its bits and values on the host, and the tolerances of `sinc`
/// (absolute, the values being at most 1) and `i0` (relative).
trait Fp: math::Float + for<'a> Operand<'a, Self> {
    const SINC_TOL: f64;
    const I0_TOL: f64;
    /// The sign bit.
    const SIGN: u64;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
    fn to_u64(self) -> u64;
    /// The value of the low bits of `b`.
    fn from_u64(b: u64) -> Self;
}

macro_rules! fp {
    ($($t:ty: $u:ty, $sinc:expr, $i0:expr, $v:ident => $from:expr, $s:ident => $to:expr;)*) => {$(
        impl Fp for $t {
            const SINC_TOL: f64 = $sinc;
            const I0_TOL: f64 = $i0;
            const SIGN: u64 = 1 << (<$u>::BITS - 1);
            fn to_f64(self) -> f64 {
                let $s = self;
                $to
            }
            fn from_f64($v: f64) -> $t {
                $from
            }
            fn to_u64(self) -> u64 {
                u64::from(self.to_bits())
            }
            fn from_u64(b: u64) -> $t {
                <$t>::from_bits(b as $u)
            }
        }
    )*};
}
fp!(
    f64: u64, 1e-12, 1e-12, v => v, s => s;
    f32: u32, 1e-5, 1e-6, v => v as f32, s => f64::from(s);
    f16: u16, 2e-3, 1e-2, v => f16::from_f64(v), s => s.to_f64();
    bf16: u16, 1.6e-2, 1e-2, v => bf16::from_f64(v), s => s.to_f64();
);

/// NumPy's `nextafter` on the bit patterns: NaN from NaN; `y` where equal; from a zero the
/// least subnormal with `y`'s sign; else one step of the pattern away from or toward zero
/// (infinity steps to the largest finite value and that to infinity).
fn next_after<T: Fp>(x: T, y: T) -> T {
    let (a, b) = (x.to_f64(), y.to_f64());
    if a.is_nan() || b.is_nan() {
        T::from_f64(f64::NAN)
    } else if a == b {
        y
    } else if a == 0.0 {
        T::from_u64(1 | if b < 0.0 { T::SIGN } else { 0 })
    } else if (b > a) == (a > 0.0) {
        T::from_u64(x.to_u64() + 1)
    } else {
        T::from_u64(x.to_u64() - 1)
    }
}

/// Both NaN, or the same bits (a zero's sign too).
fn same_bits<T: Fp>(g: T, w: T) -> bool {
    (g.to_f64().is_nan() && w.to_f64().is_nan()) || g.to_u64() == w.to_u64()
}

/// `nextafter(x, y)` as a new array, an `Expr` step and `_into`, and toward a scalar infinity,
/// against [`next_after`].
fn check_nextafter<T: Fp>(ctx: &Context, x: &[T], y: &[T]) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let args: Vec<(T, T)> = x.iter().copied().zip(y.iter().copied()).collect();
    let want: Vec<T> = args.iter().map(|&(p, q)| next_after(p, q)).collect();
    let (dx, dy) = (upload(ctx, x)?, upload(ctx, y)?);
    let mut out = DeviceArray::<T, Ix1>::zeros(ctx, x.len())?;
    math::nextafter_into(&dx, &dy, &mut out)?;
    let inf = T::from_f64(f64::INFINITY);
    let up: Vec<T> = x.iter().map(|&p| next_after(p, inf)).collect();
    let up_args: Vec<(T, T)> = x.iter().map(|&p| (p, inf)).collect();
    for (what, got, want, args) in [
        ("nextafter", math::nextafter(&dx, &dy)?.to_vec()?, &want, &args),
        (
            "Expr::nextafter",
            dx.expr().nextafter(&dy).eval()?.to_vec()?,
            &want,
            &args,
        ),
        ("nextafter_into", out.to_vec()?, &want, &args),
        (
            "nextafter(x, inf)",
            math::nextafter(&dx, inf)?.to_vec()?,
            &up,
            &up_args,
        ),
    ] {
        assert_eq!(got.len(), want.len(), "{what} {name}");
        for (i, ((&g, &w), (p, q))) in got.iter().zip(want).zip(args).enumerate() {
            assert!(
                same_bits(g, w),
                "{what} {name}: [{i}] of {p:?} ({:#x}), {q:?} is {g:?} ({:#x}), not {w:?} ({:#x})",
                p.to_u64(),
                g.to_u64(),
                w.to_u64()
            );
        }
    }
    Ok(())
}

/// CuPy's case: `a[:, None]` against `b[None, :]`, broadcast to (4, 5).
fn cupy_nextafter<T: Fp>(ctx: &Context) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let a = [-5.0, -3.0, 3.0, 5.0].map(T::from_f64);
    let b = [f64::NEG_INFINITY, -4.0, 0.0, 4.0, f64::INFINITY].map(T::from_f64);
    let da = DeviceArray::from_ndarray(ctx, &Array2::from_shape_fn((4, 1), |(i, _)| a[i]))?;
    let db = DeviceArray::from_ndarray(ctx, &Array2::from_shape_fn((1, 5), |(_, j)| b[j]))?;
    let got = math::nextafter(&da, &db)?;
    assert_eq!(got.shape(), [4, 5], "CuPy's nextafter in {name}");
    for (k, g) in got.to_vec()?.into_iter().enumerate() {
        let (p, q) = (a[k / 5], b[k % 5]);
        let w = next_after(p, q);
        assert!(
            same_bits(g, w),
            "CuPy's nextafter in {name}: [{}, {}] of {p:?}, {q:?} is {g:?}, not {w:?}",
            k / 5,
            k % 5
        );
    }
    Ok(())
}

/// Every bit pattern of a 16-bit type toward each special value, itself and random values.
fn every_16_bit<T: Fp>(rng: &mut Rng) -> (Vec<T>, Vec<T>) {
    let targets = [f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, f64::NAN];
    let mut pairs = Vec::new();
    for b in 0..=u64::from(u16::MAX) {
        let x = T::from_u64(b);
        pairs.extend(targets.iter().map(|&t| (x, T::from_f64(t))));
        pairs.push((x, x));
        pairs.push((x, T::from_u64(rng.next_u64())));
    }
    pairs.into_iter().unzip()
}

/// The special values of a type and random operands from `bits` (which for f32 avoids
/// subnormals: a GPU may flush them), every pair of specials, then random pairs, some equal.
fn specials_and_random<T: Fp>(
    rng: &mut Rng,
    max: T,
    tiny: T,
    bits: impl Fn(&mut Rng) -> T,
) -> (Vec<T>, Vec<T>) {
    let mut special: Vec<T> = [0.0, 1.0, 0.5, 2.0, 3.0, f64::INFINITY, f64::NAN]
        .into_iter()
        .map(T::from_f64)
        .chain([max, tiny])
        .collect();
    special.extend(
        special
            .clone()
            .into_iter()
            .map(|v| T::from_u64(v.to_u64() ^ T::SIGN)),
    );
    let mut pairs: Vec<(T, T)> = special
        .iter()
        .flat_map(|&p| special.iter().map(move |&q| (p, q)))
        .collect();
    for k in 0..4000 {
        let p = bits(rng);
        pairs.push((p, if k % 5 == 0 { p } else { bits(rng) }));
    }
    pairs.into_iter().unzip()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn nextafter_steps_to_the_neighbouring_value_of_each_float_type() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(65521);
    // The 16-bit types step by their own spacing (not float's): every value of each.
    let (x, y) = every_16_bit::<f16>(&mut rng);
    check_nextafter(&ctx, &x, &y)?;
    let (x, y) = every_16_bit::<bf16>(&mut rng);
    check_nextafter(&ctx, &x, &y)?;
    // f32: normal operands only (the exponent field made nonzero); zeros and the least
    // normal value step to subnormal results.
    let normal = |r: &mut Rng| {
        let b = r.next_u64() as u32;
        f32::from_bits(if b & 0x7f80_0000 == 0 { b | 0x0080_0000 } else { b })
    };
    let (x, y) = specials_and_random(&mut rng, f32::MAX, f32::MIN_POSITIVE, normal);
    check_nextafter(&ctx, &x, &y)?;
    // f64: any bits, subnormals and NaNs included.
    let any = |r: &mut Rng| f64::from_bits(r.next_u64());
    let (x, y) = specials_and_random(&mut rng, f64::MAX, f64::from_bits(1), any);
    check_nextafter(&ctx, &x, &y)?;
    cupy_nextafter::<f16>(&ctx)?;
    cupy_nextafter::<bf16>(&ctx)?;
    cupy_nextafter::<f32>(&ctx)?;
    cupy_nextafter::<f64>(&ctx)?;
    // By value: f16's spacing at 1 is 2^-10 above and 2^-11 below; its largest finite value
    // steps to infinity; 0 toward -1 is the least subnormal, negative.
    let h = |v: f32| f16::from_f32(v);
    let x = DeviceArray::from_ndarray(
        &ctx,
        &Array1::from(vec![h(1.0), h(1.0), f16::MAX, h(0.0), f16::INFINITY]),
    )?;
    let y = DeviceArray::from_ndarray(
        &ctx,
        &Array1::from(vec![h(2.0), h(0.0), f16::INFINITY, h(-1.0), h(0.0)]),
    )?;
    let got = math::nextafter(&x, &y)?.to_vec()?;
    let want = [
        h(1.0 + 1.0 / 1024.0),
        h(1.0 - 1.0 / 2048.0),
        f16::INFINITY,
        f16::from_bits(0x8001),
        f16::MAX,
    ];
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "f16 nextafter [{i}]: {g:?}, not {w:?}");
    }
    let one = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![1.0f64, 1.0]))?;
    let to = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![2.0f64, 0.0]))?;
    assert_eq!(
        math::nextafter(&one, &to)?.to_vec()?,
        [1.0 + f64::EPSILON, 1.0 - f64::EPSILON / 2.0]
    );
    Ok(())
}

/// NumPy's `sinc` on the host: 1 at 0, else `sin(πx) / (πx)`.
fn sinc_host(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        (PI * x).sin() / (PI * x)
    }
}

/// Within `tol` (absolute: `|sinc| <= 1`), or both NaN.
fn close(g: f64, w: f64, tol: f64) -> bool {
    (g.is_nan() && w.is_nan()) || (g - w).abs() <= tol * w.abs().max(1.0)
}

fn check_sinc<T: Fp>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let mut x: Vec<T> = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        3.0,
        1e-3,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ]
    .into_iter()
    .map(T::from_f64)
    .collect();
    x.extend((0..3000).map(|_| T::from_f64(rng.f64() * 8.0)));
    let want: Vec<f64> = x.iter().map(|p| sinc_host(p.to_f64())).collect();
    let dx = upload(ctx, &x)?;
    let mut out = DeviceArray::<T, Ix1>::zeros(ctx, x.len())?;
    math::sinc_into(&dx, &mut out)?;
    for (what, got) in [
        ("sinc", math::sinc(&dx)?.to_vec()?),
        ("Expr::sinc", dx.expr().sinc().eval()?.to_vec()?),
        ("sinc_into", out.to_vec()?),
    ] {
        assert_eq!(got.len(), x.len(), "{what} {name}");
        for (i, ((g, &w), p)) in got.iter().zip(&want).zip(&x).enumerate() {
            let g = g.to_f64();
            assert!(
                close(g, w, T::SINC_TOL),
                "{what} {name}: [{i}] of {p:?} is {g:?}, not {w:?}"
            );
            // Exactly 1 at either zero.
            assert!(
                p.to_f64() != 0.0 || g == 1.0,
                "{what} {name}: [{i}] of {p:?} is {g:?}, not 1"
            );
        }
    }
    Ok(())
}

/// A complex type under test, its parts as f64 and `sinc`'s tolerance (of the parts'
/// magnitude, `cosh(π Im z)`).
trait Cplx: Inexact + for<'a> Operand<'a, Self> {
    const TOL: f64;
    fn make(re: f64, im: f64) -> Self;
    fn parts(self) -> (f64, f64);
}

impl Cplx for Complex64 {
    const TOL: f64 = 1e-12;
    fn make(re: f64, im: f64) -> Self {
        Complex64::new(re, im)
    }
    fn parts(self) -> (f64, f64) {
        (self.re, self.im)
    }
}

impl Cplx for Complex32 {
    const TOL: f64 = 2e-5;
    fn make(re: f64, im: f64) -> Self {
        Complex32::new(re as f32, im as f32)
    }
    fn parts(self) -> (f64, f64) {
        (f64::from(self.re), f64::from(self.im))
    }
}

/// `sin(πz) / (πz)` by hand (`sin(a + ib) = sin a cosh b + i cos a sinh b`), 1 at 0.
fn csinc_host(re: f64, im: f64) -> (f64, f64) {
    if re == 0.0 && im == 0.0 {
        return (1.0, 0.0);
    }
    let (a, b) = (PI * re, PI * im);
    let (sr, si) = (a.sin() * b.cosh(), a.cos() * b.sinh());
    let d = a * a + b * b;
    ((sr * a + si * b) / d, (si * a - sr * b) / d)
}

fn check_csinc<C: Cplx>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<C>();
    let mut z: Vec<C> = [
        (0.0, 0.0),
        (-0.0, -0.0),
        (1.0, 0.0),
        (0.0, 1.0),
        (-2.0, 0.5),
        (0.5, -1.5),
        (1e-4, 1e-4),
    ]
    .into_iter()
    .map(|(re, im)| C::make(re, im))
    .collect();
    z.extend((0..2000).map(|_| C::make(rng.f64() * 3.0, rng.f64() * 1.5)));
    let dz = upload(ctx, &z)?;
    let mut out = DeviceArray::<C, Ix1>::zeros(ctx, z.len())?;
    math::sinc_into(&dz, &mut out)?;
    for (what, got) in [
        ("sinc", math::sinc(&dz)?.to_vec()?),
        ("Expr::sinc", dz.expr().sinc().eval()?.to_vec()?),
        ("sinc_into", out.to_vec()?),
    ] {
        assert_eq!(got.len(), z.len(), "{what} {name}");
        for (i, (g, p)) in got.iter().zip(&z).enumerate() {
            let (re, im) = p.parts();
            let w = csinc_host(re, im);
            let g = g.parts();
            let err = (g.0 - w.0).hypot(g.1 - w.1);
            let tol = C::TOL * (1.0 + (PI * im).cosh());
            assert!(err <= tol, "{what} {name}: [{i}] of {p:?} is {g:?}, not {w:?}");
            if re == 0.0 && im == 0.0 {
                assert!(g == (1.0, 0.0), "{what} {name}: [{i}] of {p:?} is {g:?}, not 1");
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sinc_is_sin_pi_x_over_pi_x_for_real_and_complex_types() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(1729);
    check_sinc::<f64>(&ctx, &mut rng)?;
    check_sinc::<f32>(&ctx, &mut rng)?;
    check_sinc::<f16>(&ctx, &mut rng)?;
    check_sinc::<bf16>(&ctx, &mut rng)?;
    check_csinc::<Complex64>(&ctx, &mut rng)?;
    check_csinc::<Complex32>(&ctx, &mut rng)?;
    // Fused after arithmetic in one kernel: sinc(2x), sinc(x - 1).
    let x: Vec<f64> = (0..1000).map(|_| rng.f64() * 4.0).collect();
    let dx = upload(&ctx, &x)?;
    let got = (&dx * 2.0).sinc().eval()?.to_vec()?;
    for (i, (&g, &p)) in got.iter().zip(&x).enumerate() {
        let w = sinc_host(2.0 * p);
        assert!(
            close(g, w, 1e-12),
            "sinc(2x) f64: [{i}] of {p:?} is {g:?}, not {w:?}"
        );
    }
    let x32: Vec<f32> = x.iter().map(|&p| p as f32).collect();
    let dx32 = upload(&ctx, &x32)?;
    let got = (&dx32 - 1.0f32).sinc().eval()?.to_vec()?;
    for (i, (&g, &p)) in got.iter().zip(&x32).enumerate() {
        let w = sinc_host(f64::from(p - 1.0));
        assert!(
            close(f64::from(g), w, 1e-5),
            "sinc(x - 1) f32: [{i}] of {p:?} is {g:?}, not {w:?}"
        );
    }
    // NumPy's values: sinc at the integers is 0 (to rounding), at 1/2 it is 2/π.
    let v = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0.0f64, 0.5, 1.0, -2.0]))?;
    let got = math::sinc(&v)?.to_vec()?;
    assert_eq!(got[0], 1.0);
    assert!((got[1] - 2.0 / PI).abs() < 1e-15, "sinc(0.5) = {}", got[1]);
    assert!(
        got[2].abs() < 1e-15 && got[3].abs() < 1e-15,
        "sinc at integers: {got:?}"
    );
    Ok(())
}

/// I0 by its power series `sum_k ((x/2)^(2k) / (k!)^2)`, every term positive (no
/// cancellation: accurate to rounding).
fn i0_series(x: f64) -> f64 {
    let q = x * x / 4.0;
    let (mut term, mut sum, mut k) = (1.0, 1.0, 0.0);
    while term > 1e-18 * sum {
        k += 1.0;
        term *= q / (k * k);
        sum += term;
    }
    sum
}

fn check_i0<T: Fp>(ctx: &Context, rng: &mut Rng) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    let mut x: Vec<T> = [0.0, -0.0, 1.0, -1.0, 10.0, -10.0, 1e-3, 3.75]
        .into_iter()
        .map(T::from_f64)
        .collect();
    x.extend((0..3000).map(|_| T::from_f64(rng.f64() * 10.0)));
    let want: Vec<f64> = x.iter().map(|p| i0_series(p.to_f64())).collect();
    let dx = upload(ctx, &x)?;
    let mut out = DeviceArray::<T, Ix1>::zeros(ctx, x.len())?;
    math::i0_into(&dx, &mut out)?;
    for (what, got) in [
        ("i0", math::i0(&dx)?.to_vec()?),
        ("Expr::i0", dx.expr().i0().eval()?.to_vec()?),
        ("i0_into", out.to_vec()?),
    ] {
        assert_eq!(got.len(), x.len(), "{what} {name}");
        for (i, ((g, &w), p)) in got.iter().zip(&want).zip(&x).enumerate() {
            let g = g.to_f64();
            assert!(
                (g - w).abs() <= T::I0_TOL * w,
                "{what} {name}: [{i}] of {p:?} is {g:?}, not {w:?}"
            );
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn i0_matches_its_power_series() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(2029);
    check_i0::<f64>(&ctx, &mut rng)?;
    check_i0::<f32>(&ctx, &mut rng)?;
    check_i0::<f16>(&ctx, &mut rng)?;
    check_i0::<bf16>(&ctx, &mut rng)?;
    // Fused after arithmetic: i0(x / 2) of f64.
    let x: Vec<f64> = (0..1000).map(|_| rng.f64() * 20.0).collect();
    let dx = upload(&ctx, &x)?;
    let got = (&dx * 0.5).i0().eval()?.to_vec()?;
    for (i, (&g, &p)) in got.iter().zip(&x).enumerate() {
        let w = i0_series(p * 0.5);
        assert!(
            (g - w).abs() <= 1e-12 * w,
            "i0(x / 2) f64: [{i}] of {p:?} is {g:?}, not {w:?}"
        );
    }
    // NumPy's documented values: i0(0) = 1, i0([0, 1, 2, 3]).
    let v = DeviceArray::from_ndarray(&ctx, &Array1::from(vec![0.0f64, 1.0, 2.0, 3.0]))?;
    let got = math::i0(&v)?.to_vec()?;
    let want = [1.0, 1.2660658777520084, 2.2795853023360673, 4.880792585865024];
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= 1e-14 * w, "i0 [{i}]: {g}, not {w}");
    }
    Ok(())
}
