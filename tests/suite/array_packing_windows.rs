//! NumPy's `packbits`/`unpackbits` (CuPy's `binary_tests/test_packing.py`) and window
//! functions (`math_tests/test_window.py`) on a GPU: the bits against a host port of NumPy's
//! definition on random arrays of every `bool` and integer type, along each axis and
//! flattened, in both bit orders, transposed views too, and NumPy 2.4's numbers; the windows
//! against the formulas on the host and NumPy's printed values.

use gpu_runtime::gpuarray::{BitOrder, Bitwise, Bool, DeviceArray};
use gpu_runtime::ndarray::{arr1, arr2, Array, ArrayD, Axis, IxDyn};
use gpu_runtime::{ArrayShapeError, Context, Error, Stream};
use gpu_suite::Rng;

/// NumPy's `packbits(a, axis)` on the host for one lane: its truths, eight to a byte.
fn pack_lane(lane: &[bool], little: bool) -> Vec<u8> {
    lane.chunks(8)
        .map(|c| {
            c.iter().enumerate().fold(0u8, |b, (i, &t)| {
                if t {
                    b | 1 << if little { i } else { 7 - i }
                } else {
                    b
                }
            })
        })
        .collect()
}

/// NumPy's `unpackbits(a, axis, count)` on the host for one lane of bytes.
fn unpack_lane(lane: &[u8], m: usize, little: bool) -> Vec<u8> {
    (0..m)
        .map(|i| match lane.get(i / 8) {
            Some(&b) => (b >> if little { i % 8 } else { 7 - i % 8 }) & 1,
            None => 0,
        })
        .collect()
}

/// `f` applied to each lane of `h` along `axis`, the results put back along that axis.
fn along(h: &ArrayD<u8>, axis: usize, f: impl Fn(&[u8]) -> Vec<u8>) -> ArrayD<u8> {
    let lanes: Vec<Vec<u8>> = h.lanes(Axis(axis)).into_iter().map(|l| f(&l.to_vec())).collect();
    let m = lanes
        .first()
        .map_or_else(|| f(&vec![0; h.shape()[axis]]).len(), Vec::len);
    let mut shape = h.shape().to_vec();
    shape[axis] = m;
    let mut out = ArrayD::<u8>::zeros(IxDyn(&shape));
    for (mut dst, src) in out.lanes_mut(Axis(axis)).into_iter().zip(lanes) {
        dst.iter_mut().zip(src).for_each(|(d, s)| *d = s);
    }
    out
}

trait Bits: Bitwise + Copy {
    fn draw(rng: &mut Rng) -> Self;
    fn truth(self) -> bool;
}
macro_rules! bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            // Zero about half the time, else any value (the sign bit too).
            fn draw(rng: &mut Rng) -> Self {
                let r = rng.next_u64();
                if r & 1 == 0 { 0 } else { (r >> 1) as $t }
            }
            fn truth(self) -> bool { self != 0 }
        }
    )*};
}
bits!(i8, u8, i16, u16, i32, u32, i64, u64);
impl Bits for Bool {
    fn draw(rng: &mut Rng) -> Self {
        Bool::from(rng.next_u64() & 1 == 1)
    }
    fn truth(self) -> bool {
        bool::from(self)
    }
}

fn check_pack<T: Bits>(ctx: &Context, rng: &mut Rng, stream: &Stream) -> gpu_runtime::Result<()> {
    let name = std::any::type_name::<T>();
    for shape in [
        vec![0usize],
        vec![1],
        vec![9],
        vec![2, 3, 4],
        vec![3, 17, 2],
        vec![2, 0, 5],
        vec![],
    ] {
        let n: usize = shape.iter().product();
        let h: Vec<T> = (0..n).map(|_| T::draw(rng)).collect();
        let host = ArrayD::from_shape_vec(IxDyn(&shape), h).unwrap();
        let truth = host.mapv(|x| u8::from(x.truth()));
        let d = DeviceArray::from_ndarray(ctx, &host)?;
        for order in [BitOrder::Big, BitOrder::Little] {
            let little = order == BitOrder::Little;
            let views = [(d.view(), truth.view()), (d.t(), truth.t())];
            for (k, (dv, tv)) in views.into_iter().enumerate() {
                let what = format!("{name} {shape:?} {order:?} view {k}");
                let flat: Vec<bool> = tv.iter().map(|&t| t == 1).collect();
                let want = pack_lane(&flat, little);
                assert_eq!(dv.packbits(order)?.to_vec()?, want, "{what} flat");
                assert_eq!(
                    dv.on(stream).packbits(order)?.to_vec()?,
                    want,
                    "{what} flat, stream"
                );
                let tv = tv.to_owned();
                for axis in 0..shape.len() {
                    let want = along(&tv, axis, |l| {
                        pack_lane(&l.iter().map(|&t| t == 1).collect::<Vec<_>>(), little)
                    });
                    let neg = axis as isize - shape.len() as isize;
                    let got = dv.packbits_axis(if axis % 2 == 0 { axis as isize } else { neg }, order)?;
                    assert_eq!(got.to_ndarray()?, want, "{what} axis {axis}");
                    // Unpacking gives the truths back (NumPy's round trip), `count` the length.
                    let packed = got.to_ndarray()?;
                    let dp = DeviceArray::from_ndarray(ctx, &packed)?;
                    let len = tv.shape()[axis] as isize;
                    let back = dp.on(stream).unpackbits_axis(axis as isize, Some(len), order)?;
                    assert_eq!(back.to_ndarray()?, tv, "{what} axis {axis} round trip");
                }
            }
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn packbits_of_every_type_matches_the_host() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let (mut rng, stream) = (Rng::new(0xb175), Stream::new(&ctx)?);
    check_pack::<Bool>(&ctx, &mut rng, &stream)?;
    check_pack::<i8>(&ctx, &mut rng, &stream)?;
    check_pack::<u8>(&ctx, &mut rng, &stream)?;
    check_pack::<i16>(&ctx, &mut rng, &stream)?;
    check_pack::<u16>(&ctx, &mut rng, &stream)?;
    check_pack::<i32>(&ctx, &mut rng, &stream)?;
    check_pack::<u32>(&ctx, &mut rng, &stream)?;
    check_pack::<i64>(&ctx, &mut rng, &stream)?;
    check_pack::<u64>(&ctx, &mut rng, &stream)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn unpackbits_matches_the_host_with_every_count() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let mut rng = Rng::new(0x0b17);
    for shape in [vec![0usize], vec![1], vec![4], vec![3, 5], vec![2, 3, 2]] {
        let n: usize = shape.iter().product();
        let h: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
        let host = ArrayD::from_shape_vec(IxDyn(&shape), h).unwrap();
        let d = DeviceArray::from_ndarray(&ctx, &host)?;
        for order in [BitOrder::Big, BitOrder::Little] {
            let little = order == BitOrder::Little;
            let flat: Vec<u8> = host.iter().copied().collect();
            let bits = 8 * n as isize;
            for count in [
                None,
                Some(0),
                Some(3),
                Some(bits),
                Some(bits + 11),
                Some(-1),
                Some(-bits),
            ] {
                let what = format!("{shape:?} {order:?} count {count:?}");
                let m = match count {
                    None => bits as usize,
                    Some(c) if c >= 0 => c as usize,
                    // More bits taken off than there are: NumPy's `ValueError`.
                    Some(c) if -c > bits => {
                        let r = d.unpackbits(count, order);
                        assert!(
                            matches!(r, Err(Error::Shape(ArrayShapeError::ElementCounts { .. }))),
                            "{what}: {r:?}"
                        );
                        continue;
                    }
                    Some(c) => (bits + c) as usize,
                };
                assert_eq!(
                    d.unpackbits(count, order)?.to_vec()?,
                    unpack_lane(&flat, m, little),
                    "{what}"
                );
                // Along each axis of the array and of its transpose (whose axes have other
                // lengths), `count` kept within what NumPy takes.
                let ht = host.t().to_owned();
                for (axis, &len) in shape.iter().enumerate() {
                    for (h, transposed) in [(&host, false), (&ht, true)] {
                        let bits = 8 * h.shape()[axis] as isize;
                        let count = count.map(|c| c.clamp(-bits, bits + 11));
                        let m = match count {
                            None => bits as usize,
                            Some(c) if c >= 0 => c as usize,
                            Some(c) => (bits + c) as usize,
                        };
                        let want = along(h, axis, |l| unpack_lane(l, m, little));
                        let view = if transposed { d.t() } else { d.view() };
                        let got = view.unpackbits_axis(axis as isize, count, order)?.to_ndarray()?;
                        assert_eq!(
                            got, want,
                            "{what} axis {axis} (of {len}), transposed {transposed}"
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// NumPy 2.4's numbers (CuPy's cases), and the errors NumPy raises.
#[test]
#[ignore = "needs a CUDA GPU"]
fn packing_gives_numpys_numbers_and_errors() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let a = DeviceArray::from_ndarray(&ctx, &arr1(&[1i64, 0, 1, 1, 0, 1, 1, 1, 1]))?;
    assert_eq!(a.packbits(BitOrder::Big)?.to_vec()?, [183, 128]);
    assert_eq!(a.packbits(BitOrder::Little)?.to_vec()?, [237, 1]);
    let h = Array::from_iter((0..24i32).map(|i| i % 2))
        .into_shape_with_order((2, 3, 4))
        .unwrap();
    let d = DeviceArray::from_ndarray(&ctx, &h)?;
    assert_eq!(d.packbits(BitOrder::Big)?.to_vec()?, [85, 85, 85]);
    assert_eq!(
        d.packbits_axis(1, BitOrder::Big)?.to_vec()?,
        [0, 224, 0, 224, 0, 224, 0, 224]
    );
    assert_eq!(d.packbits_axis(-1, BitOrder::Little)?.to_vec()?, [10; 6]);
    let u = DeviceArray::from_ndarray(&ctx, &arr2(&[[100u8, 200], [123, 213]]))?;
    let got = u.unpackbits_axis(0, Some(5), BitOrder::Little)?;
    assert_eq!(
        (got.shape(), got.to_vec()?),
        (&[5usize, 2][..], vec![0, 0, 0, 0, 1, 0, 0, 1, 0, 0])
    );
    let bytes = DeviceArray::from_ndarray(&ctx, &arr1(&[100u8, 200, 123, 213]))?;
    let big = bytes.unpackbits(None, BitOrder::Big)?.to_vec()?;
    assert_eq!(&big[..8], [0, 1, 1, 0, 0, 1, 0, 0]);
    match bytes.unpackbits(Some(-33), BitOrder::Big) {
        Err(Error::Shape(ArrayShapeError::ElementCounts {
            first: 32,
            second: 33,
            ..
        })) => {}
        other => panic!("count -33 of 32 bits: {other:?}"),
    }
    assert!(matches!(
        bytes.packbits_axis(1, BitOrder::Big),
        Err(Error::Shape(ArrayShapeError::AxisOutOfBounds { .. }))
    ));
    Ok(())
}

/// NumPy's `i0` on the host: its power series (to the last bit for the arguments here).
fn i0(x: f64) -> f64 {
    let (mut sum, mut term, q) = (1.0, 1.0, x * x / 4.0);
    for k in 1..200 {
        term *= q / (k * k) as f64;
        sum += term;
        if term < sum * 1e-18 {
            break;
        }
    }
    sum
}

/// The windows by NumPy's formulas on the host.
fn host_window(name: &str, m: i64, beta: f64) -> Vec<f64> {
    if m < 1 {
        return Vec::new();
    }
    if m == 1 {
        return vec![1.0];
    }
    let last = (m - 1) as f64;
    let pi = std::f64::consts::PI;
    if name == "kaiser" {
        let alpha = last / 2.0;
        return (0..m)
            .map(|n| {
                let r = (n as f64 - alpha) / alpha;
                i0(beta * (1.0 - r * r).sqrt()) / i0(beta)
            })
            .collect();
    }
    (0..m)
        .map(|k| (1 - m + 2 * k) as f64)
        .map(|n| match name {
            "bartlett" => 1.0 - n.abs() / last,
            "blackman" => 0.42 + 0.5 * (pi * n / last).cos() + 0.08 * (2.0 * pi * n / last).cos(),
            "hamming" => 0.54 + 0.46 * (pi * n / last).cos(),
            _ => 0.5 + 0.5 * (pi * n / last).cos(),
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn windows_match_numpy() -> gpu_runtime::Result<()> {
    let ctx = Context::default()?;
    let stream = Stream::new(&ctx)?;
    let close = |got: &[f64], want: &[f64], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() <= 1e-13 * w.abs().max(1.0),
                "{what}: {got:?} against {want:?}"
            );
        }
    };
    type Make = fn(&Context, i64) -> gpu_runtime::Result<DeviceArray<f64, gpu_runtime::ndarray::Ix1>>;
    let plain: [(&str, Make); 4] = [
        ("bartlett", DeviceArray::bartlett),
        ("blackman", DeviceArray::blackman),
        ("hamming", DeviceArray::hamming),
        ("hanning", DeviceArray::hanning),
    ];
    for m in [0, 1, -1, 2, 5, 1024, 1001] {
        for (name, make) in plain {
            let what = format!("{name}({m})");
            close(&make(&ctx, m)?.to_vec()?, &host_window(name, m, 0.0), &what);
        }
        let on = gpu_runtime::gpuarray::on(&stream);
        close(
            &on.hamming(m)?.to_vec()?,
            &host_window("hamming", m, 0.0),
            "stream hamming",
        );
        close(
            &on.bartlett(m)?.to_vec()?,
            &host_window("bartlett", m, 0.0),
            "stream bartlett",
        );
    }
    for m in [10, 30, 1024, -1, 0, 1] {
        for beta in [-3.4, 0.0, 5.0, 6.0, 8.6, 1.5] {
            let what = format!("kaiser({m}, {beta})");
            close(
                &DeviceArray::kaiser(&ctx, m, beta)?.to_vec()?,
                &host_window("kaiser", m, beta),
                &what,
            );
        }
    }
    // NumPy 2.4's numbers.
    close(
        &DeviceArray::blackman(&ctx, 5)?.to_vec()?,
        &[
            -1.3877787807814457e-17,
            0.34,
            0.9999999999999999,
            0.34,
            -1.3877787807814457e-17,
        ],
        "blackman(5)",
    );
    close(
        &DeviceArray::hamming(&ctx, 5)?.to_vec()?,
        &[0.08000000000000002, 0.54, 1.0, 0.54, 0.08000000000000002],
        "hamming(5)",
    );
    close(
        &DeviceArray::hanning(&ctx, 5)?.to_vec()?,
        &[0.0, 0.5, 1.0, 0.5, 0.0],
        "hanning(5)",
    );
    close(
        &DeviceArray::bartlett(&ctx, 5)?.to_vec()?,
        &[0.0, 0.5, 1.0, 0.5, 0.0],
        "bartlett(5)",
    );
    let k6 = [
        0.036710892271286676,
        0.4149036392433668,
        0.9138124838692001,
        0.9138124838692001,
        0.4149036392433668,
        0.036710892271286676,
    ];
    close(&DeviceArray::kaiser(&ctx, 6, 5.0)?.to_vec()?, &k6, "kaiser(6, 5)");
    let k5 = [
        0.14738799379648493,
        0.6878194738764881,
        1.0,
        0.6878194738764881,
        0.14738799379648493,
    ];
    close(
        &gpu_runtime::gpuarray::on(&stream).kaiser(5, -3.4)?.to_vec()?,
        &k5,
        "kaiser(5, -3.4)",
    );
    Ok(())
}
