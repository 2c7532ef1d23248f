//! Running the radix sort ([`source`](crate::gpuarray::sort::source)): the digit counts, then
//! one pass per byte of the key, keys and values ping-ponging between pooled buffers, every
//! step queued on one stream. A sort of many rows (along an axis) sorts the keys with their
//! positions, then sorts the positions stably by their row (the row's number as the key),
//! which leaves each row's keys in order, and takes the elements (or the positions in the row)
//! from that.

use crate::driver::context::core::Context;
use crate::driver::memory::buffer::DeviceBuffer;
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::driver::memory::{memset_d32, memset_d32_async};
use crate::driver::stream::Stream;
use crate::error::{ArgumentError, ArrayShapeError, Result};
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::registry::{self, KernelKey, BLOCK};
use crate::gpuarray::sort::keys::KeyType;
use crate::gpuarray::sort::source::{self, PassVariant, ValuesIn, ValuesOut, RADIX_BLOCK, WORK_HEADER};
use crate::launch::{Arg, PreparedFunction};
use crate::tools::device_pool::PooledBuffer;
use crate::types::repr::DeviceRepr;

/// The most elements one sort takes: a tile's status holds a count in 30 bits.
pub(crate) const MAX_SORT: usize = (1 << 30) - 1;

/// The key of `T`, or the error for a complex `T` (no order).
pub(crate) fn key_of<T: Element>(operation: &'static str) -> Result<KeyType> {
    KeyType::of(T::DTYPE).ok_or_else(|| {
        ArgumentError::UndefinedOnElement {
            kernel: "gpu_radix_pass".into(),
            function: operation.into(),
            element: T::c_name(),
        }
        .into()
    })
}

/// `n` checked against [`MAX_SORT`].
pub(crate) fn check_len(operation: &'static str, n: usize) -> Result<()> {
    if n > MAX_SORT {
        return Err(ArrayShapeError::SortTooLong {
            operation,
            elements: n,
            max: MAX_SORT,
        }
        .into());
    }
    Ok(())
}

/// The prepared kernel `name` of the source `make` writes, keyed by its name, `parts` (what
/// else the source is made from) and `variant`.
pub(crate) fn kernel(
    ctx: &Context,
    name: &str,
    parts: &[&str],
    variant: u32,
    make: impl FnOnce() -> String,
) -> Result<PreparedFunction> {
    // The name is part of the key: one source may hold several kernels (`unique`'s).
    let mut all = ["gpu_sort", name, "", "", ""];
    let used = 2 + parts.len().min(3);
    all[2..used].copy_from_slice(&parts[..used - 2]);
    let key = KernelKey {
        source: registry::hash_parts(&all[..used]),
        variant,
    };
    registry::prepared(ctx, key, name, make)
}

/// What the first pass carries beside the keys.
pub(crate) enum ValuesFrom<'a> {
    None,
    /// Each key's position.
    Iota,
    /// Values read beside the keys.
    Load(&'a PooledBuffer<u32>),
}

/// Where the last pass writes the values.
pub(crate) enum ValuesTo<'a> {
    None,
    U32(&'a mut PooledBuffer<u32>),
    /// Each value modulo the `u32` (when not 0).
    I64(&'a mut DeviceBuffer<i64>, u32),
}

/// The pair of `t` read and written by a pass: `r` and `w` index `t` (different when both are
/// given).
fn pick<B>(t: &mut [B], r: Option<usize>, w: Option<usize>) -> (Option<&B>, Option<&mut B>) {
    match (r, w) {
        (Some(r), Some(w)) => {
            let (a, b) = t.split_at_mut(1);
            if r == 0 && w == 1 {
                (Some(&a[0]), Some(&mut b[0]))
            } else {
                (Some(&b[0]), Some(&mut a[0]))
            }
        }
        (Some(r), None) => (Some(&t[r]), None),
        (None, Some(w)) => (None, Some(&mut t[w])),
        (None, None) => (None, None),
    }
}

/// Sorts `n` keys (the elements of `K` at `input`, from its offset) by their first `passes`
/// bytes, stably, `transform` making keys of elements on the way in and elements of keys on
/// the way out; the sorted keys to `keys_out` (when given), the values carried to `vout`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn radix<K: DeviceRepr, I: DeviceRead<K>, O: DeviceWrite<K>>(
    ctx: &Context,
    stream: Option<&Stream>,
    key: KeyType,
    transform: bool,
    input: (&I, i64),
    n: usize,
    passes: u32,
    mut keys_out: Option<&mut O>,
    vin: ValuesFrom<'_>,
    mut vout: ValuesTo<'_>,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let values = !matches!(vin, ValuesFrom::None);
    let tile = source::tile_of(key, values) as usize;
    let tiles = n.div_ceil(tile) as u32;
    let pool = ctx.device_pool()?;
    let words = WORK_HEADER as usize + passes as usize * 256 * (1 + tiles as usize);
    let mut work = pool.alloc::<u32>(words)?;
    match stream {
        Some(s) => memset_d32_async(&mut work, 0, words, s)?,
        None => memset_d32(&mut work, 0, words)?,
    }
    let tag = key.tag();
    let tr = if transform { "t" } else { "-" };
    let hist = kernel(ctx, "gpu_radix_hist", &["gpu_radix_hist", &tag, tr], 0, || {
        source::hist_source(key, transform)
    })?;
    registry::launch(
        &hist,
        registry::grid_for(ctx, n as u64)?,
        RADIX_BLOCK,
        stream,
        &[
            Arg::input::<K, I>(input.0),
            Arg::I64(input.1),
            Arg::I64(n as i64),
            Arg::output(&mut work),
            Arg::I32(passes as i32),
        ],
    )?;
    let temps = (passes as usize).saturating_sub(1).min(2);
    let mut kt: Vec<PooledBuffer<K>> = (0..temps).map(|_| pool.alloc::<K>(n)).collect::<Result<_>>()?;
    let value_temps = if values { temps } else { 0 };
    let mut vt: Vec<PooledBuffer<u32>> = (0..value_temps)
        .map(|_| pool.alloc::<u32>(n))
        .collect::<Result<_>>()?;
    for p in 0..passes {
        let (first, last) = (p == 0, p + 1 == passes);
        let r = (!first).then_some((p as usize + 1) % 2);
        let w = (!last).then_some(p as usize % 2);
        let v = PassVariant {
            first,
            last,
            keys_out: !last || keys_out.is_some(),
            vin: match (&vin, first) {
                (ValuesFrom::None, _) => ValuesIn::None,
                (ValuesFrom::Iota, true) => ValuesIn::Iota,
                _ => ValuesIn::Load,
            },
            vout: match (&vout, last) {
                (ValuesTo::None, _) => ValuesOut::None,
                (ValuesTo::I64(..), true) => ValuesOut::I64,
                _ => ValuesOut::U32,
            },
        };
        let f = kernel(
            ctx,
            "gpu_radix_pass",
            &["gpu_radix_pass", &tag, tr],
            v.code(),
            || source::pass_source(key, transform, v),
        )?;
        let (k_in, k_out) = pick(&mut kt, r, w);
        let (v_in, v_out) = pick(&mut vt, r.filter(|_| values), w.filter(|_| values));
        let mut args = Vec::with_capacity(12);
        match k_in {
            Some(t) => args.extend([Arg::input::<K, _>(t), Arg::I64(0)]),
            None => args.extend([Arg::input::<K, I>(input.0), Arg::I64(input.1)]),
        }
        if v.keys_out {
            match k_out {
                Some(t) => args.push(Arg::output::<K, _>(t)),
                None => match keys_out.as_deref_mut() {
                    Some(o) => args.push(Arg::output::<K, O>(o)),
                    None => unreachable!("a last pass writes keys only when asked"),
                },
            }
        }
        if v.vin == ValuesIn::Load {
            match (v_in, &vin) {
                (Some(t), _) => args.push(Arg::input::<u32, _>(t)),
                (None, ValuesFrom::Load(b)) => args.push(Arg::input::<u32, _>(*b)),
                _ => unreachable!("values are loaded from a buffer"),
            }
        }
        match v.vout {
            ValuesOut::None => {}
            ValuesOut::U32 => match (v_out, &mut vout) {
                (Some(t), _) => args.extend([Arg::output::<u32, _>(t), Arg::U32(0)]),
                (None, ValuesTo::U32(b)) => args.extend([Arg::output::<u32, _>(&mut **b), Arg::U32(0)]),
                _ => unreachable!("u32 values go to a buffer"),
            },
            ValuesOut::I64 => match &mut vout {
                ValuesTo::I64(b, m) => args.extend([Arg::output::<i64, _>(&mut **b), Arg::U32(*m)]),
                _ => unreachable!("i64 values go to their array"),
            },
        }
        args.extend([
            Arg::output(&mut work),
            Arg::I64(n as i64),
            Arg::I32(p as i32),
            Arg::I32(passes as i32),
            Arg::U32(tiles),
        ]);
        registry::launch(&f, tiles, RADIX_BLOCK, stream, &args)?;
    }
    Ok(())
}

/// The bytes of a key that numbers `count` rows (`1..=4`).
fn row_bytes(count: usize) -> u32 {
    let top = (count.max(2) - 1) as u64;
    (64 - top.leading_zeros()).div_ceil(8).max(1)
}

/// The sorted positions' output of [`sort_rows`].
pub(crate) enum Indices<'a> {
    None,
    /// The positions in the whole input (for `unique`, whose input is one row).
    U32(&'a mut PooledBuffer<u32>),
    /// The positions in each row (`argsort`).
    I64(&'a mut DeviceBuffer<i64>),
}

/// Sorts each row of `m` elements of `n` (a C-contiguous run of elements of `T` at `input`'s
/// offset), stably, NaN last: the sorted elements to `out` (when given), the positions to
/// `indices`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sort_rows<T: Element, I: DeviceRead<T>, O: DeviceWrite<T>>(
    ctx: &Context,
    stream: Option<&Stream>,
    input: (&I, i64),
    n: usize,
    m: usize,
    out: Option<&mut O>,
    indices: Indices<'_>,
    operation: &'static str,
) -> Result<()> {
    let key = key_of::<T>(operation)?;
    check_len(operation, n)?;
    if n == 0 || m == 0 {
        return Ok(());
    }
    let rows = n / m;
    if rows <= 1 {
        let (vin, vout) = match indices {
            Indices::None => (ValuesFrom::None, ValuesTo::None),
            Indices::U32(b) => (ValuesFrom::Iota, ValuesTo::U32(b)),
            Indices::I64(b) => (ValuesFrom::Iota, ValuesTo::I64(b, 0)),
        };
        return radix::<T, I, O>(ctx, stream, key, true, input, n, key.bytes, out, vin, vout);
    }
    // Every key with its position, then the positions by their row, stably.
    let pool = ctx.device_pool()?;
    let mut pos = pool.alloc::<u32>(n)?;
    radix::<T, I, PooledBuffer<T>>(
        ctx,
        stream,
        key,
        true,
        input,
        n,
        key.bytes,
        None,
        ValuesFrom::Iota,
        ValuesTo::U32(&mut pos),
    )?;
    let mut seg = pool.alloc::<u32>(n)?;
    let f = kernel(
        ctx,
        "gpu_radix_segment",
        &["gpu_radix_segment"],
        0,
        source::segment_source,
    )?;
    registry::launch(
        &f,
        registry::grid_for(ctx, n as u64)?,
        BLOCK,
        stream,
        &[
            Arg::input::<u32, _>(&pos),
            Arg::output::<u32, _>(&mut seg),
            Arg::I64(n as i64),
            Arg::U32(m as u32),
        ],
    )?;
    // The positions sorted by their row (stable: in key order within each), to `to`.
    let by_row = |to: ValuesTo<'_>| {
        let q = row_bytes(rows);
        let from = ValuesFrom::Load(&pos);
        radix::<u32, _, PooledBuffer<u32>>(
            ctx,
            stream,
            KeyType::SEGMENT,
            false,
            (&seg, 0),
            n,
            q,
            None,
            from,
            to,
        )
    };
    // `argsort` wants the positions within each row: the loaded ones modulo the row length.
    match indices {
        Indices::I64(b) => by_row(ValuesTo::I64(b, m as u32))?,
        Indices::U32(b) => by_row(ValuesTo::U32(b))?,
        Indices::None => {}
    }
    if let Some(out) = out {
        let mut sorted = pool.alloc::<u32>(n)?;
        by_row(ValuesTo::U32(&mut sorted))?;
        let f = kernel(
            ctx,
            "gpu_radix_gather",
            &["gpu_radix_gather", &key.tag()],
            0,
            || source::gather_source(key),
        )?;
        registry::launch(
            &f,
            registry::grid_for(ctx, n as u64)?,
            BLOCK,
            stream,
            &[
                Arg::input::<T, I>(input.0),
                Arg::I64(input.1),
                Arg::input::<u32, _>(&sorted),
                Arg::output::<T, O>(out),
                Arg::I64(n as i64),
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_numbered_in_the_fewest_bytes() {
        assert_eq!(row_bytes(2), 1);
        assert_eq!(row_bytes(256), 1);
        assert_eq!(row_bytes(257), 2);
        assert_eq!(row_bytes(65536), 2);
        assert_eq!(row_bytes(65537), 3);
        assert_eq!(row_bytes(1 << 30), 4);
    }
}
