//! Host arrays with reversed axes (issue 41): `ndarray` counts an array whose axis runs
//! backwards (`s![..;-1]`, `invert_axis`) contiguous, but its `as_ptr()` is its highest element
//! along that axis, so memory handed to the driver from `as_ptr()` for `len()` elements ran
//! past the array's end. Each test builds, round after round, random arrays of 1 to 3 axes in
//! C or Fortran order with some axes reversed, in the middle of a larger `Vec` whose guard
//! elements on both sides hold a marker, and checks every path that hands host memory to the
//! driver: the elements arrive in the right order (against a CPU reference) or the array is
//! refused with its strides, and no guard element is ever written or left registered.

use gpu_runtime::driver::{
    memcpy_dtoh, memcpy_dtoh_async, memcpy_htod_async, HostRegisterFlags, RegisteredArray,
};
use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::ndarray::{Array, ArrayD, ArrayViewMutD, Axis, IxDyn, ShapeBuilder, Slice};
use gpu_runtime::{kernel, Context, CopyError, Error, Stream};
use gpu_suite::{assert_close, Rng};

use super::{ctx, cycles, grid, k, non_blocking};

#[kernel(
    r#"
__global__ void layout_twice(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}"#
)]
fn layout_twice(#[In] x: &[f32], #[Out] y: &mut [f32], n: i32);

const ROUNDS: usize = 100;

/// The marker in every guard element, compared bit for bit.
const GUARD: u32 = 0xDEAD_BEEF;

/// A random array in the middle of a `Vec` with guard elements around it.
struct Guarded {
    buf: Vec<f32>,
    /// Guard elements before the array's memory (as many after it).
    pad: usize,
    shape: Vec<usize>,
    /// Laid out in Fortran order in memory (before any axis is reversed).
    fortran: bool,
    /// The axes to reverse.
    reversed: Vec<usize>,
}

impl Guarded {
    /// A random layout: 1 to 3 axes of 1 to 17 elements (now and then one of length 1, whose
    /// reversal changes nothing, or an empty array), C or Fortran order, and a random set of
    /// reversed axes holding at least one longer than 1 when there is one.
    fn new(rng: &mut Rng) -> Guarded {
        let ndim = 1 + (rng.next_u64() % 3) as usize;
        let mut shape: Vec<usize> = (0..ndim).map(|_| 1 + (rng.next_u64() % 17) as usize).collect();
        match rng.next_u64() % 10 {
            0 => shape[0] = 1,
            1 => shape[ndim - 1] = 0,
            _ => {}
        }
        let long: Vec<usize> = (0..ndim).filter(|&a| shape[a] > 1).collect();
        let mut reversed: Vec<usize> = (0..ndim).filter(|_| rng.next_u64().is_multiple_of(2)).collect();
        if !long.is_empty() && !reversed.iter().any(|&r| shape[r] > 1) {
            reversed.push(long[(rng.next_u64() as usize) % long.len()]);
        }
        let fortran = rng.next_u64().is_multiple_of(3);
        Guarded::with_layout(rng, shape, fortran, reversed)
    }

    /// Random elements in the given layout, in a new guarded buffer.
    fn with_layout(rng: &mut Rng, shape: Vec<usize>, fortran: bool, reversed: Vec<usize>) -> Guarded {
        let n: usize = shape.iter().product();
        let pad = 64 + (rng.next_u64() % 1024) as usize;
        let mut buf = vec![f32::from_bits(GUARD); pad + n + pad];
        buf[pad..pad + n].copy_from_slice(&rng.vec_f32(n));
        Guarded {
            buf,
            pad,
            shape,
            fortran,
            reversed,
        }
    }

    /// Another array of the same layout, with other elements.
    fn like(&self, rng: &mut Rng) -> Guarded {
        Guarded::with_layout(rng, self.shape.clone(), self.fortran, self.reversed.clone())
    }

    fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when the array has elements and a reversed axis reaches more than one: its layout
    /// is then neither C nor Fortran, and what takes host memory as it is refuses it.
    fn really_reversed(&self) -> bool {
        self.len() > 0 && self.reversed.iter().any(|&a| self.shape[a] > 1)
    }

    /// The array: the middle of the buffer, with the chosen axes reversed.
    fn view(&mut self) -> ArrayViewMutD<'_, f32> {
        let n = self.len();
        let memory = &mut self.buf[self.pad..self.pad + n];
        let shape = IxDyn(&self.shape);
        let mut v = if self.fortran {
            ArrayViewMutD::from_shape(shape.f(), memory)
        } else {
            ArrayViewMutD::from_shape(shape, memory)
        }
        .unwrap();
        for &a in &self.reversed {
            v.invert_axis(Axis(a));
        }
        v
    }

    /// The array's elements in its logical (C) order: the CPU reference of what a C-ordered
    /// copy of it holds.
    fn logical(&mut self) -> Vec<f32> {
        self.view().iter().copied().collect()
    }

    /// Its memory, the middle of the buffer, in memory order.
    fn memory(&self) -> &[f32] {
        &self.buf[self.pad..self.pad + self.len()]
    }

    /// Panics if a guard element changed.
    fn check_guards(&self, what: &str) {
        let n = self.len();
        let outside = self.buf[..self.pad].iter().chain(&self.buf[self.pad + n..]);
        if let Some((i, x)) = outside.enumerate().find(|(_, x)| x.to_bits() != GUARD) {
            panic!("{what}: guard element {i} outside the array was written: {x}");
        }
    }
}

/// Bit-for-bit equality of floats (copies move bits).
fn same_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!("{what}: element {i} is {} but should be {}", got[i], want[i]);
    }
}

/// Asserts `r` is the refusal of a host array of `strides`.
fn refused<T>(r: gpu_runtime::Result<T>, strides: &[isize], what: &str) {
    match r {
        Err(Error::Copy(CopyError::HostArrayLayout { strides: s, .. })) if s == strides => {}
        Err(e) => panic!("{what}: expected the HostArrayLayout refusal with strides {strides:?}, got {e}"),
        Ok(_) => panic!("{what}: an array of strides {strides:?} was accepted"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reversed_host_arrays_reach_device_arrays_in_their_element_order_and_back() {
    let ctx = ctx();
    let mut rng = Rng::new(4101);
    for round in 0..ROUNDS {
        let what = |s: &str| format!("round {round}: {s}");
        let mut a = Guarded::new(&mut rng);
        let want = a.logical();
        // Upload: the memory from its lowest address, the strides kept on the device.
        let d = DeviceArray::from_ndarray(&ctx, &a.view()).unwrap();
        assert_eq!(d.shape(), &a.shape[..], "round {round}");
        same_bits(&d.to_vec().unwrap(), &want, &what("from_ndarray"));
        let back = d.to_ndarray().unwrap();
        same_bits(
            &back.iter().copied().collect::<Vec<_>>(),
            &want,
            &what("to_ndarray"),
        );
        // `set` from another array of the same layout: straight into memory when the device
        // array has the same strides, through a staging copy into a C-ordered one.
        let mut b = a.like(&mut rng);
        let b_want = b.logical();
        let mut same_layout = DeviceArray::from_ndarray(&ctx, &a.view()).unwrap();
        same_layout.set(&b.view()).unwrap();
        same_bits(
            &same_layout.to_vec().unwrap(),
            &b_want,
            &what("set, same strides"),
        );
        let mut c_order = DeviceArray::<f32, IxDyn>::zeros(&ctx, IxDyn(&a.shape)).unwrap();
        c_order.set(&b.view()).unwrap();
        same_bits(&c_order.to_vec().unwrap(), &b_want, &what("set, C order"));
        // Download into a reversed host array: a new array, assigned to it.
        b.view().assign(&d.to_ndarray().unwrap());
        same_bits(&b.logical(), &want, &what("assigned into a reversed array"));
        // Uploads only read; nothing wrote memory around the arrays.
        a.check_guards(&what("a"));
        b.check_guards(&what("b"));
        same_bits(&a.logical(), &want, &what("the uploaded array"));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn reversed_host_arrays_are_refused_as_copy_data_and_nothing_is_written() {
    let ctx = ctx();
    let mut rng = Rng::new(4102);
    let mut tested = 0;
    for round in 0..ROUNDS * 2 {
        let what = |s: &str| format!("round {round}: {s}");
        let mut a = Guarded::new(&mut rng);
        if !a.really_reversed() {
            continue;
        }
        tested += 1;
        let before = a.memory().to_vec();
        let strides = a.view().strides().to_vec();
        let n = a.len();
        let on_device = rng.vec_f32(n);
        let mut dev = ctx.to_device(&on_device).unwrap();
        // Host to device, as the memory holds it: refused (the device would see the elements
        // backwards, and `as_ptr()` + `len()` runs past the array's end).
        refused(ctx.to_device(&a.view()), &strides, &what("to_device"));
        refused(ctx.array_to_device(&a.view()), &strides, &what("array_to_device"));
        refused(dev.copy_from_host(&a.view()), &strides, &what("copy_from_host"));
        // Device to host, into the reversed array: refused before anything is written.
        refused(dev.copy_to_host(&mut a.view()), &strides, &what("copy_to_host"));
        refused(memcpy_dtoh(&mut a.view(), &dev), &strides, &what("memcpy_dtoh"));
        // The convenience call with the array as #[In] and as #[Out].
        let mut out = vec![0f32; n];
        refused(
            layout_twice(&ctx, grid(n), 256, &a.view(), &mut out, n as i32),
            &strides,
            &what("#[In]"),
        );
        let x = rng.vec_f32(n);
        refused(
            layout_twice(&ctx, grid(n), 256, &x, &mut a.view(), n as i32),
            &strides,
            &what("#[Out]"),
        );
        ctx.synchronize().unwrap();
        same_bits(a.memory(), &before, &what("the refused array"));
        same_bits(&dev.to_vec().unwrap(), &on_device, &what("the device memory"));
        a.check_guards(&what("refusals"));
        // The fix the error names: a C-ordered copy, in the reversed array's element order.
        let want = a.logical();
        let fixed = a.view().as_standard_layout().into_owned();
        same_bits(
            &ctx.to_device(&fixed).unwrap().to_vec().unwrap(),
            &want,
            &what("as_standard_layout"),
        );
        layout_twice(&ctx, grid(n), 256, &fixed, &mut out, n as i32).unwrap();
        let doubled: Vec<f32> = want.iter().map(|v| 2.0 * v).collect();
        same_bits(&out, &doubled, &what("#[In] of the fixed array"));
        // And back into the reversed array: into a standard one, assigned.
        let mut staged = ArrayD::<f32>::zeros(IxDyn(&a.shape));
        dev.copy_to_host(&mut staged).unwrap();
        a.view().assign(&staged);
        same_bits(&a.logical(), &on_device, &what("assigned back"));
        a.check_guards(&what("assigned back"));
    }
    assert!(tested >= ROUNDS, "only {tested} arrays had a reversed axis");
}

/// An owned array over the middle of a guarded `Vec` (its storage is the whole `Vec`, guards
/// included), in the same layout as the view: what `register_host_memory` takes.
fn owned(a: &mut Guarded) -> ArrayD<f32> {
    let strides = a.view().strides().to_vec();
    let first = a.view().as_ptr() as usize;
    let (pad, n) = (a.pad, a.len());
    let mut m = Array::from_vec(std::mem::take(&mut a.buf));
    m.slice_axis_inplace(Axis(0), Slice::from(pad..pad + n));
    let shape = IxDyn(&a.shape);
    let mut m = if a.fortran {
        m.into_shape_with_order((shape, gpu_runtime::ndarray::Order::F))
    } else {
        m.into_shape_with_order(shape)
    }
    .unwrap();
    for &ax in &a.reversed {
        m.invert_axis(Axis(ax));
    }
    if n > 0 {
        // The same memory and layout as the view: the Vec moved without reallocating.
        assert_eq!((m.strides(), m.as_ptr() as usize), (&strides[..], first));
    }
    m
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn only_c_or_fortran_arrays_are_page_locked_and_exactly_their_elements() {
    let ctx = ctx();
    let stream = non_blocking(&ctx);
    let mut rng = Rng::new(4103);
    let mut refusals = 0;
    for round in 0..ROUNDS {
        let what = |s: &str| format!("round {round}: {s}");
        let mut a = Guarded::new(&mut rng);
        if a.really_reversed() {
            // Refused before the driver is asked (the array goes with the error): from
            // `as_ptr()`, the registration, the copies and the mapping covered memory past it.
            let strides = a.view().strides().to_vec();
            refused(
                ctx.register_host_memory(owned(&mut a), HostRegisterFlags::DEVICE_MAP),
                &strides,
                &what("register_host_memory"),
            );
            refusals += 1;
            // The fix the error names, registered, in the reversed array's element order.
            let mut b = a.like(&mut rng);
            let fixed = b.view().as_standard_layout().into_owned();
            let reg = ctx
                .register_host_memory(fixed, HostRegisterFlags::DEVICE_MAP)
                .unwrap();
            exercise(&ctx, &stream, reg, &b.logical(), &what("as_standard_layout"));
            b.check_guards(&what("b"));
        }
        // The same shape and order with only its axes of length 1 reversed (still C or
        // Fortran order): registered in place, the middle of the guarded Vec, and used by
        // async copies both ways and by mapped kernels.
        let short: Vec<usize> = a.reversed.iter().copied().filter(|&r| a.shape[r] == 1).collect();
        let mut c = Guarded::with_layout(&mut rng, a.shape.clone(), a.fortran, short);
        let memory = c.memory().to_vec();
        let reg = ctx
            .register_host_memory(owned(&mut c), HostRegisterFlags::DEVICE_MAP)
            .unwrap();
        let back = exercise(&ctx, &stream, reg, &memory, &what("in place"));
        c.buf = back.into_raw_vec_and_offset().0;
        c.check_guards(&what("registered in place"));
        // The Vec came back with the mapped kernel's writes in the array's memory.
        assert_close(c.memory(), &exercised(memory.len()), 1e-6);
        // Unregistered from the address it was registered at, and nothing else registered:
        // the whole buffer, guards included, registers afresh (the driver refuses a range
        // that overlaps a registered one).
        ctx.register_host_slice(&mut c.buf, HostRegisterFlags::NONE, |_| ())
            .unwrap();
    }
    assert!(
        refusals >= ROUNDS / 2,
        "only {refusals} arrays had a reversed axis"
    );
}

/// Copies a registered array to the device and back asynchronously (behind late kernels), and
/// reads and writes it from kernels through its mapping, checking each against `memory` (its
/// elements in memory order) and the kernels' CPU formulas; returns the array, unregistered.
fn exercise(
    ctx: &Context,
    stream: &Stream,
    mut reg: RegisteredArray<f32, IxDyn>,
    memory: &[f32],
    what: &str,
) -> ArrayD<f32> {
    let n = memory.len();
    if n == 0 {
        return reg.into_inner();
    }
    let (map, fill) = (
        k::late_map::prepare(ctx).unwrap(),
        k::late_fill::prepare(ctx).unwrap(),
    );
    let slow = cycles(ctx, 0.2);
    // Host to device: exactly the registered elements, in memory order.
    let mut dev = ctx.alloc::<f32>(n).unwrap();
    memcpy_htod_async(&mut dev, &reg, stream).unwrap();
    same_bits(
        &dev.to_vec().unwrap(),
        memory,
        &format!("{what}: memcpy_htod_async"),
    );
    // A kernel reads the mapped host memory: y = 2 x + 1.
    let mut out = ctx.alloc::<f32>(n).unwrap();
    map.prepared_async_call(
        grid(n),
        256,
        stream,
        &reg.mapped().unwrap(),
        &mut out,
        n as i32,
        slow,
    )
    .unwrap();
    let mapped: Vec<f32> = memory.iter().map(|v| 2.0f32.mul_add(*v, 1.0)).collect();
    assert_close(&out.to_vec().unwrap(), &mapped, 1e-6);
    // Device to host behind a late kernel: the host reads once the copy has run.
    let (a, b) = (0.5f32, -3.0f32);
    fill.prepared_async_call(grid(n), 256, stream, &mut dev, a, b, n as i32, slow)
        .unwrap();
    memcpy_dtoh_async(&mut reg, &dev, stream).unwrap();
    let filled: Vec<f32> = (0..n).map(|i| a.mul_add(i as f32, b)).collect();
    assert_close(reg.as_slice_memory_order().unwrap(), &filled, 1e-6);
    // A kernel writes the mapped host memory directly.
    fill.prepared_async_call(
        grid(n),
        256,
        stream,
        &mut reg.mapped_mut().unwrap(),
        b,
        a,
        n as i32,
        slow,
    )
    .unwrap();
    let back = reg.into_inner();
    assert_close(back.as_slice_memory_order().unwrap(), &exercised(n), 1e-6);
    back
}

/// What [`exercise`] leaves in a registered array of `n` elements: its last kernel's writes.
fn exercised(n: usize) -> Vec<f32> {
    let (a, b) = (0.5f32, -3.0f32);
    (0..n).map(|i| b.mul_add(i as f32, a)).collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_reversed_arrays_memory_registered_as_a_slice_is_used_within_its_span() {
    let ctx = ctx();
    let (map, fill) = (
        k::late_map::prepare(&ctx).unwrap(),
        k::late_fill::prepare(&ctx).unwrap(),
    );
    let stream = non_blocking(&ctx);
    let slow = cycles(&ctx, 0.2);
    let mut rng = Rng::new(4104);
    for round in 0..ROUNDS {
        let what = |s: &str| format!("round {round}: {s}");
        let mut a = Guarded::new(&mut rng);
        let n = a.len();
        if n > 0 {
            let memory = a.memory().to_vec();
            let mut dev = ctx.alloc::<f32>(n).unwrap();
            let mut out = ctx.alloc::<f32>(n).unwrap();
            let (s, t) = (rng.f32(), rng.f32());
            {
                let mut view = a.view();
                // `ndarray` hands a reversed array's memory out from its lowest address.
                let slice = view.as_slice_memory_order_mut().unwrap();
                ctx.register_host_slice(slice, HostRegisterFlags::DEVICE_MAP, |mut reg| {
                    memcpy_htod_async(&mut dev, &reg, &stream).unwrap();
                    map.prepared_async_call(
                        grid(n),
                        256,
                        &stream,
                        &reg.mapped().unwrap(),
                        &mut out,
                        n as i32,
                        slow,
                    )
                    .unwrap();
                    fill.prepared_async_call(
                        grid(n),
                        256,
                        &stream,
                        &mut reg.mapped_mut().unwrap(),
                        s,
                        t,
                        n as i32,
                        slow,
                    )
                    .unwrap();
                })
                .unwrap();
            }
            // The copy and the mapped read saw the array's memory, in memory order.
            same_bits(&dev.to_vec().unwrap(), &memory, &what("memcpy_htod_async"));
            let mapped: Vec<f32> = memory.iter().map(|v| 2.0f32.mul_add(*v, 1.0)).collect();
            assert_close(&out.to_vec().unwrap(), &mapped, 1e-6);
            // The mapped write landed in the array's memory, all of it.
            let filled: Vec<f32> = (0..n).map(|i| s.mul_add(i as f32, t)).collect();
            assert_close(a.memory(), &filled, 1e-6);
            a.check_guards(&what("mapped write"));
            // And back, asynchronously, behind a late kernel, into the registered memory.
            let want = rng.vec_f32(n);
            let x = ctx.to_device(&want).unwrap();
            let mut delay = ctx.alloc::<f32>(1).unwrap();
            let mut view = a.view();
            let slice = view.as_slice_memory_order_mut().unwrap();
            ctx.register_host_slice(slice, HostRegisterFlags::NONE, |mut reg| {
                fill.prepared_async_call(1, 1, &stream, &mut delay, 0.0, 0.0, 1, slow)
                    .unwrap();
                memcpy_dtoh_async(&mut reg, &x, &stream).unwrap();
            })
            .unwrap();
            same_bits(a.memory(), &want, &what("memcpy_dtoh_async"));
        }
        a.check_guards(&what("registered slice"));
        // Nothing outside the array stayed registered: the whole buffer, guards included,
        // registers afresh.
        ctx.register_host_slice(&mut a.buf, HostRegisterFlags::NONE, |_| ())
            .unwrap();
    }
}
