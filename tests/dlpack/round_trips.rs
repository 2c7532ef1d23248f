//! DLPack round trips (the `dlpack` feature) with the producer still writing on another stream
//! when the consumer takes the tensor: ours -> DLPack -> ours, and through `dlpark`'s cudarc
//! adapter both ways. Each writer is a kernel that waits before it writes, so that a consumer
//! not ordered after it would read the old data; every result is checked against the CPU on
//! random data, and no test synchronizes where the protocol's stream rule should order.
//!
//! Then the end of an export with the consumer's work still queued: a consumer of another
//! library (cudarc, given the tensor's raw address as a C library would be) queues a slow read,
//! calls the deleter or ends the lend at once, and the producer writes the memory or frees it
//! and fills the next array of its size (the context's block cache hands out the same block
//! once it is due); the consumer must still read the original values.
//!
//! Run on a GPU machine: `cargo test --features dlpack --test dlpack -- --ignored round_trips::`.

use std::sync::Arc;

use gpu_runtime::cudarc::driver::{CudaFunction, CudaSlice, CudaStream};
use gpu_runtime::dlpack::{
    ConsumerStream, Dlpack, DlpackTensor, DlpackTensorMut, ForeignStream, ProducerStream,
};
use gpu_runtime::dlpark::allocation::fixed;
use gpu_runtime::dlpark::ffi::DLManagedTensorVersioned;
use gpu_runtime::dlpark::interop::cudarc::{CudaDlpackExport, CudaImport, ManagedCudaSlice};
use gpu_runtime::dlpark::TryFromDlpack;
use gpu_runtime::driver::{DeviceAttribute, StreamFlags};
use gpu_runtime::gpuarray::DeviceArray;
use gpu_runtime::ndarray::{Array2, ShapeBuilder};
use gpu_runtime::{kernel, Context, DeviceRead, Error, Event, Stream};
use gpu_suite::Rng;

#[kernel(
    r#"
__device__ void wait_cycles(long long cycles) {
    if (cycles <= 0) return;
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

// Waits, then writes y[i] = a * i + b.
__global__ void late_fill(float *y, float a, float b, int n, long long cycles) {
    wait_cycles(cycles);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * (float)i + b;
}

// Reads x: y[i] = 2 x[i] + 1.
__global__ void map(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

// In place: x[i] = 2 x[i] + 1.
__global__ void map_in_place(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i] + 1.0f;
}
"#
)]
mod k {
    fn late_fill(y: &mut [f32], a: f32, b: f32, n: i32, cycles: i64);
    fn map(x: &[f32], y: &mut [f32], n: i32);
    fn map_in_place(x: &mut [f32], n: i32);
}

/// The same `late_fill`, for cudarc to compile and launch on its own stream.
const CUDARC_LATE_FILL: &str = r#"
extern "C" __global__ void late_fill(float *y, float a, float b, int n, long long cycles) {
    if (cycles > 0) {
        long long t0 = clock64();
        while (clock64() - t0 < cycles) {}
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * (float)i + b;
}
"#;

use crate::common::ctx;

/// Cycles of `clock64()` for about `ms` milliseconds.
fn cycles(ctx: &Context, ms: f64) -> i64 {
    let khz = ctx.device().attribute(DeviceAttribute::ClockRate).unwrap() as f64;
    (khz * ms) as i64
}

fn grid(n: usize) -> u32 {
    (n as u32).div_ceil(256)
}

/// What `late_fill` writes (the GPU fuses `a * i + b` into one multiply-add).
fn filled(a: f32, b: f32, n: usize) -> Vec<f32> {
    (0..n).map(|i| a.mul_add(i as f32, b)).collect()
}

fn mapped(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| 2.0f32.mul_add(*v, 1.0)).collect()
}

const TOL: f32 = 1e-6;
const N: usize = 1 << 16;
const ROUNDS: usize = 10;

fn non_blocking(ctx: &Context) -> Stream {
    Stream::with_flags(ctx, StreamFlags::NonBlocking).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_round_trip_of_a_buffer_orders_the_consumer_after_a_late_producer() {
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::map::prepare(&ctx).unwrap(),
    );
    let (producer, consumer) = (non_blocking(&ctx), non_blocking(&ctx));
    let mut rng = Rng::new(251);
    for round in 0..ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        let mut buf = ctx.alloc_zeros::<f32>(N).unwrap();
        fill.prepared_async_call(
            grid(N),
            256,
            &producer,
            &mut buf,
            a,
            b,
            N as i32,
            cycles(&ctx, 5.0),
        )
        .unwrap();
        // Exported and imported while the producer has not written yet.
        let tensor = buf.into_dlpack(ConsumerStream::Stream(&consumer)).unwrap();
        let imported = DlpackTensor::<f32>::from_dlpack(tensor).unwrap();
        assert_eq!((imported.shape(), imported.strides()), (&[N][..], &[1][..]));
        let mut out = ctx.alloc_zeros::<f32>(N).unwrap();
        map.prepared_async_call(grid(N), 256, &consumer, &imported, &mut out, N as i32)
            .unwrap();
        let want = mapped(&filled(a, b, N));
        let got = out.to_vec().unwrap();
        assert!(
            gpu_suite::first_mismatch(&got, &want, TOL).is_none(),
            "round {round}: the consumer read before the producer wrote"
        );
        // Dropped with no wait: the memory is freed after the consumer's read.
        drop(imported);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_round_trip_unordered_export_is_ordered_by_the_buffer_record() {
    // `Unordered` asks no wait of the export; importing our own tensor still orders the read
    // after the producer's write, through the exported buffer's record (borrowing import).
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::map::prepare(&ctx).unwrap(),
    );
    let (producer, consumer) = (non_blocking(&ctx), non_blocking(&ctx));
    let mut rng = Rng::new(252);
    for round in 0..ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        let mut buf = ctx.alloc_zeros::<f32>(N).unwrap();
        fill.prepared_async_call(
            grid(N),
            256,
            &producer,
            &mut buf,
            a,
            b,
            N as i32,
            cycles(&ctx, 5.0),
        )
        .unwrap();
        // SAFETY: the only consumer is this crate's import below, ordered through the buffer's
        // record.
        let tensor: Dlpack = buf.into_dlpack(unsafe { ConsumerStream::unordered() }).unwrap();
        let mut out = ctx.alloc_zeros::<f32>(N).unwrap();
        {
            let view = DlpackTensor::<f32>::from_dlpack_ref(&tensor).unwrap();
            map.prepared_async_call(grid(N), 256, &consumer, &view, &mut out, N as i32)
                .unwrap();
        }
        // The tensor (and the buffer) go at once, under the consumer's pending read.
        drop(tensor);
        let got = out.to_vec().unwrap();
        assert!(
            gpu_suite::first_mismatch(&got, &mapped(&filled(a, b, N)), TOL).is_none(),
            "round {round}: the read was not ordered after the write"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_round_trip_of_arrays_keeps_shape_and_strides_and_takes_writes() {
    let ctx = ctx();
    let (fill, map_in_place) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::map_in_place::prepare(&ctx).unwrap(),
    );
    let (producer, consumer) = (non_blocking(&ctx), non_blocking(&ctx));
    let mut rng = Rng::new(253);
    let (rows, cols) = (96, 160);
    for round in 0..ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        // Fortran order on odd rounds: the strides travel through DLPack unchanged.
        let host = if round % 2 == 0 {
            Array2::<f32>::zeros((rows, cols))
        } else {
            Array2::<f32>::zeros((rows, cols).f())
        };
        let mut array = DeviceArray::from_ndarray(&ctx, &host).unwrap();
        let strides = array.strides().to_vec();
        fill.prepared_async_call(
            grid(rows * cols),
            256,
            &producer,
            &mut array,
            a,
            b,
            (rows * cols) as i32,
            cycles(&ctx, 5.0),
        )
        .unwrap();
        let tensor = array.into_dlpack(ConsumerStream::Stream(&consumer)).unwrap();
        let mut imported = DlpackTensorMut::<f32>::from_dlpack(tensor).unwrap();
        assert_eq!(imported.shape(), &[rows, cols]);
        assert_eq!(imported.strides(), &strides[..]);
        // A write on a third stream: ordered after the consumer's, and after the producer's.
        let third = non_blocking(&ctx);
        map_in_place
            .prepared_async_call(
                grid(rows * cols),
                256,
                &third,
                &mut imported,
                (rows * cols) as i32,
            )
            .unwrap();
        let got = imported.array().unwrap().to_ndarray().unwrap();
        // The memory, in storage order, is what the kernels wrote; the array reads it back
        // through the shape and strides.
        let flat = mapped(&filled(a, b, rows * cols));
        let want = if round % 2 == 0 {
            Array2::from_shape_vec((rows, cols), flat).unwrap()
        } else {
            Array2::from_shape_vec((rows, cols).f(), flat).unwrap()
        };
        let got: Vec<f32> = got.iter().copied().collect();
        let want: Vec<f32> = want.iter().copied().collect();
        assert!(
            gpu_suite::first_mismatch(&got, &want, TOL).is_none(),
            "round {round}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_import_refuses_gaps_another_dtype_and_writes_to_read_only_exports() {
    let ctx = ctx();
    // A column slice of a C-order matrix: elements with gaps between them.
    let array = DeviceArray::from_ndarray(&ctx, &Array2::<f32>::zeros((8, 8))).unwrap();
    let column = array.slice_move(gpu_runtime::ndarray::s![.., 1..2]).unwrap();
    // SAFETY: nothing uses the tensor but this crate's imports, ordered through the record.
    let tensor = column
        .into_dlpack(unsafe { ConsumerStream::unordered() })
        .unwrap();
    assert!(matches!(
        DlpackTensor::<f32>::from_dlpack_ref(&tensor),
        Err(Error::Dlpack(gpu_runtime::DlpackError::Strides { .. }))
    ));
    assert!(matches!(
        DlpackTensor::<i32>::from_dlpack_ref(&tensor),
        Err(Error::Dlpack(gpu_runtime::DlpackError::Dtype { .. }))
    ));
    // Marked read-only by its holder: refused for writing, taken for reading.
    let stream = non_blocking(&ctx);
    let mut tensor = ctx
        .alloc_zeros::<f32>(16)
        .unwrap()
        .into_dlpack(ConsumerStream::Stream(&stream))
        .unwrap();
    // SAFETY: marking read-only only promises less.
    unsafe { *tensor.flags_mut() |= gpu_runtime::dlpark::DlpackFlags::READ_ONLY };
    let read = DlpackTensor::<f32>::from_dlpack_ref(&tensor).unwrap();
    assert_eq!(read.device_view().to_vec().unwrap(), vec![0.0; 16]);
    drop(read);
    assert!(matches!(
        DlpackTensorMut::<f32>::from_dlpack(tensor),
        Err(Error::Dlpack(gpu_runtime::DlpackError::ReadOnly))
    ));
}

/// cudarc's context and stream on the device of `ctx` (the same primary context).
fn cudarc_stream(ctx: &Context) -> Arc<gpu_runtime::cudarc::driver::CudaStream> {
    let cuda = gpu_runtime::cudarc::driver::CudaContext::new(ctx.device().ordinal()).unwrap();
    cuda.new_stream().unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_round_trip_ours_to_cudarc_through_dlparks_adapter() {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let producer = non_blocking(&ctx);
    let cuda_stream = cudarc_stream(&ctx);
    let mut rng = Rng::new(254);
    for round in 0..ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        let mut buf = ctx.alloc_zeros::<f32>(N).unwrap();
        fill.prepared_async_call(
            grid(N),
            256,
            &producer,
            &mut buf,
            a,
            b,
            N as i32,
            cycles(&ctx, 5.0),
        )
        .unwrap();
        // The cudarc stream is the consumer: the export makes it wait for the producer.
        let tensor = buf
            .into_dlpack(ConsumerStream::Foreign(ForeignStream::cudarc(&cuda_stream)))
            .unwrap();
        // SAFETY: the data is ready on the cudarc stream (the export ordered it).
        let slice: ManagedCudaSlice<DLManagedTensorVersioned, f32> =
            unsafe { TryFromDlpack::try_from_dlpack(tensor, CudaImport::ready_on(cuda_stream.clone())) }
                .unwrap();
        let got = cuda_stream.clone_dtoh(&*slice).unwrap();
        assert!(
            gpu_suite::first_mismatch(&got, &filled(a, b, N), TOL).is_none(),
            "round {round}: cudarc read before the producer wrote"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_round_trip_cudarc_to_ours_through_dlparks_adapter() {
    use gpu_runtime::cudarc::driver::{LaunchConfig, PushKernelArg};
    let ctx = ctx();
    let map = k::map::prepare(&ctx).unwrap();
    let consumer = non_blocking(&ctx);
    let cuda_stream = cudarc_stream(&ctx);
    let ptx = gpu_runtime::cudarc::nvrtc::compile_ptx(CUDARC_LATE_FILL).unwrap();
    let module = cuda_stream.context().load_module(ptx).unwrap();
    let late_fill = module.load_function("late_fill").unwrap();
    let mut rng = Rng::new(255);
    for round in 0..ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        let mut slice = cuda_stream.alloc_zeros::<f32>(N).unwrap();
        let (n, wait) = (N as i32, cycles(&ctx, 5.0));
        let mut launch = cuda_stream.launch_builder(&late_fill);
        launch.arg(&mut slice).arg(&a).arg(&b).arg(&n).arg(&wait);
        // SAFETY: the arguments are the kernel's parameters, in order.
        unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) }.unwrap();
        // Exported by dlpark while cudarc's kernel has not written yet.
        let export: CudaDlpackExport<fixed::Initialized<DLManagedTensorVersioned, 1>> =
            Box::new(slice).try_into().unwrap();
        let (initialized, current) = export.into_parts();
        // SAFETY: a fresh export of a cudarc allocation, owned by the tensor.
        let tensor: Dlpack = unsafe { initialized.finish() };
        // SAFETY: the tensor is device memory of this device's primary context (ours), written
        // only by the work on `current`, and nothing else uses it meanwhile.
        let imported = unsafe {
            DlpackTensor::<f32>::from_foreign(
                tensor,
                &consumer,
                ProducerStream::Foreign(ForeignStream::cudarc(&current)),
            )
        }
        .unwrap();
        let mut out = ctx.alloc_zeros::<f32>(N).unwrap();
        map.prepared_async_call(grid(N), 256, &consumer, &imported, &mut out, N as i32)
            .unwrap();
        // Dropping the import waits for the read, then gives the slice back to cudarc.
        drop(imported);
        assert!(
            gpu_suite::first_mismatch(&out.to_vec().unwrap(), &mapped(&filled(a, b, N)), TOL).is_none(),
            "round {round}: the consumer read before cudarc's kernel wrote"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_writable_import_of_a_cudarc_tensor_waits_for_cudarc_and_refuses_read_only() {
    use gpu_runtime::cudarc::driver::{LaunchConfig, PushKernelArg};
    let ctx = ctx();
    let map_in_place = k::map_in_place::prepare(&ctx).unwrap();
    let consumer = non_blocking(&ctx);
    let cuda_stream = cudarc_stream(&ctx);
    let ptx = gpu_runtime::cudarc::nvrtc::compile_ptx(CUDARC_LATE_FILL).unwrap();
    let module = cuda_stream.context().load_module(ptx).unwrap();
    let late_fill = module.load_function("late_fill").unwrap();
    let mut rng = Rng::new(256);
    for round in 0..ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        let mut slice = cuda_stream.alloc_zeros::<f32>(N).unwrap();
        let (n, wait) = (N as i32, cycles(&ctx, 5.0));
        let mut launch = cuda_stream.launch_builder(&late_fill);
        launch.arg(&mut slice).arg(&a).arg(&b).arg(&n).arg(&wait);
        // SAFETY: the arguments are the kernel's parameters, in order.
        unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) }.unwrap();
        let mut export: CudaDlpackExport<fixed::Initialized<DLManagedTensorVersioned, 1>> =
            Box::new(slice).try_into().unwrap();
        let read_only = round % 2 == 1;
        if read_only {
            export
                .initialized_mut()
                .set_flags(gpu_runtime::dlpark::DlpackFlags::READ_ONLY)
                .unwrap();
        }
        let (initialized, current) = export.into_parts();
        // SAFETY: a fresh export of a cudarc allocation, owned by the tensor.
        let tensor: Dlpack = unsafe { initialized.finish() };
        // SAFETY: device memory of this device's primary context (ours), written only by the
        // work on `current`, and used by nothing else meanwhile.
        let imported = unsafe {
            DlpackTensorMut::<f32>::from_foreign(
                tensor,
                &consumer,
                ProducerStream::Foreign(ForeignStream::cudarc(&current)),
            )
        };
        if read_only {
            assert!(
                matches!(imported, Err(Error::Dlpack(gpu_runtime::DlpackError::ReadOnly))),
                "round {round}: a read-only tensor was taken for writing"
            );
            continue;
        }
        let mut imported = imported.unwrap();
        map_in_place
            .prepared_async_call(grid(N), 256, &consumer, &mut imported, N as i32)
            .unwrap();
        let got = imported.device_view().to_vec().unwrap();
        assert!(
            gpu_suite::first_mismatch(&got, &mapped(&filled(a, b, N)), TOL).is_none(),
            "round {round}: the consumer wrote before cudarc's kernel did"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_lent_buffer_and_array_slice_are_read_after_a_late_producer() {
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::map::prepare(&ctx).unwrap(),
    );
    let (producer, consumer) = (non_blocking(&ctx), non_blocking(&ctx));
    let mut rng = Rng::new(257);
    let (rows, cols) = (64, 128);
    for round in 0..ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        let mut buf = ctx.alloc_zeros::<f32>(N).unwrap();
        fill.prepared_async_call(
            grid(N),
            256,
            &producer,
            &mut buf,
            a,
            b,
            N as i32,
            cycles(&ctx, 5.0),
        )
        .unwrap();
        let mut out = ctx.alloc_zeros::<f32>(N).unwrap();
        {
            let lent = buf.to_dlpack(ConsumerStream::Stream(&consumer)).unwrap();
            assert!(lent
                .tensor()
                .flags()
                .contains(gpu_runtime::dlpark::DlpackFlags::READ_ONLY));
            let view = DlpackTensor::<f32>::from_dlpack_ref(lent.tensor()).unwrap();
            map.prepared_async_call(grid(N), 256, &consumer, &view, &mut out, N as i32)
                .unwrap();
        }
        // The buffer goes at once, under the consumer's pending read (its record has it).
        drop(buf);
        assert!(
            gpu_suite::first_mismatch(&out.to_vec().unwrap(), &mapped(&filled(a, b, N)), TOL).is_none(),
            "round {round}: the lent buffer was read before the producer wrote"
        );

        // Rows 8..40 of a C-order matrix: contiguous, at a byte offset into the storage.
        let mut array = DeviceArray::from_ndarray(&ctx, &Array2::<f32>::zeros((rows, cols))).unwrap();
        fill.prepared_async_call(
            grid(rows * cols),
            256,
            &producer,
            &mut array,
            a,
            b,
            (rows * cols) as i32,
            cycles(&ctx, 5.0),
        )
        .unwrap();
        let part = array.slice(gpu_runtime::ndarray::s![8..40, ..]).unwrap();
        let lent = part.to_dlpack(ConsumerStream::Stream(&consumer)).unwrap();
        let view = DlpackTensor::<f32>::from_dlpack_ref(lent.tensor()).unwrap();
        assert_eq!(
            (view.shape(), view.strides()),
            (&[32, cols][..], &[cols as isize, 1][..])
        );
        let n = 32 * cols;
        let mut out = ctx.alloc_zeros::<f32>(n).unwrap();
        map.prepared_async_call(grid(n), 256, &consumer, &view, &mut out, n as i32)
            .unwrap();
        let want = mapped(&filled(a, b, rows * cols)[8 * cols..40 * cols]);
        assert!(
            gpu_suite::first_mismatch(&out.to_vec().unwrap(), &want, TOL).is_none(),
            "round {round}: the lent array slice differs"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_foreign_import_waits_for_a_producer_stream_of_ours() {
    use gpu_runtime::cudarc::driver::DevicePtr;
    use gpu_runtime::DeviceViewMut;
    let ctx = ctx();
    let (fill, map) = (
        k::late_fill::prepare(&ctx).unwrap(),
        k::map::prepare(&ctx).unwrap(),
    );
    let (producer, consumer) = (non_blocking(&ctx), non_blocking(&ctx));
    let cuda_stream = cudarc_stream(&ctx);
    let mut rng = Rng::new(258);
    for round in 0..ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        // cudarc's memory, written late by our kernel on our producer stream.
        let slice = cuda_stream.alloc_zeros::<f32>(N).unwrap();
        cuda_stream.synchronize().unwrap();
        let (ptr, _record) = slice.device_ptr(&cuda_stream);
        // SAFETY: N floats of this device's primary context (ours), alive until the tensor's
        // deleter; written only here, and the import below is ordered after it.
        let mut raw = unsafe { DeviceViewMut::<f32>::from_raw_parts(&ctx, ptr, N) };
        fill.prepared_async_call(
            grid(N),
            256,
            &producer,
            &mut raw,
            a,
            b,
            N as i32,
            cycles(&ctx, 5.0),
        )
        .unwrap();
        drop(_record);
        let export: CudaDlpackExport<fixed::Initialized<DLManagedTensorVersioned, 1>> =
            Box::new(slice).try_into().unwrap();
        let (initialized, _cudarc_stream) = export.into_parts();
        // SAFETY: a fresh export of a cudarc allocation, owned by the tensor.
        let tensor: Dlpack = unsafe { initialized.finish() };
        // SAFETY: the producer's pending write is on `producer`; nothing else uses the memory.
        let imported = unsafe {
            DlpackTensor::<f32>::from_foreign(tensor, &consumer, ProducerStream::Stream(&producer))
        }
        .unwrap();
        let mut out = ctx.alloc_zeros::<f32>(N).unwrap();
        map.prepared_async_call(grid(N), 256, &consumer, &imported, &mut out, N as i32)
            .unwrap();
        drop(imported);
        assert!(
            gpu_suite::first_mismatch(&out.to_vec().unwrap(), &mapped(&filled(a, b, N)), TOL).is_none(),
            "round {round}: the consumer read before our producer stream wrote"
        );
    }
}

/// The consumer's kernel, for cudarc: waits, then copies `n` floats from `x` (the raw address
/// of a DLPack tensor) to `y`.
const CUDARC_SLOW_COPY: &str = r#"
extern "C" __global__ void slow_copy(const float *x, float *y, int n, long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"#;

/// Rounds of the tests of the end of an export.
const STRESS_ROUNDS: usize = 100;

/// Another library consuming DLPack tensors: cudarc, on its stream, through the tensor's raw
/// address.
struct ForeignConsumer {
    stream: Arc<CudaStream>,
    slow_copy: CudaFunction,
}

impl ForeignConsumer {
    fn new(stream: Arc<CudaStream>) -> ForeignConsumer {
        let ptx = gpu_runtime::cudarc::nvrtc::compile_ptx(CUDARC_SLOW_COPY).unwrap();
        let module = stream.context().load_module(ptx).unwrap();
        let slow_copy = module.load_function("slow_copy").unwrap();
        ForeignConsumer { stream, slow_copy }
    }

    /// Queues on its stream a copy of the `n` floats at `address` into `out`, after `cycles`.
    fn queue_slow_copy(&self, address: u64, out: &mut CudaSlice<f32>, n: usize, cycles: i64) {
        use gpu_runtime::cudarc::driver::{LaunchConfig, PushKernelArg};
        let n32 = n as i32;
        let mut launch = self.stream.launch_builder(&self.slow_copy);
        launch.arg(&address).arg(out).arg(&n32).arg(&cycles);
        // SAFETY: the arguments are the kernel's parameters, in order (a `const float *` is
        // passed as its 64-bit address); `address` holds `n` floats until the export ends, and
        // the export orders that end after this read.
        unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
    }
}

/// Where a DLPack tensor's first element is: what the consumer's kernel is given.
fn data_address(tensor: &Dlpack) -> u64 {
    // SAFETY: a live managed tensor points to an initialized description.
    let t = unsafe { &(*tensor.as_ptr()).dl_tensor };
    t.data as u64 + t.byte_offset
}

/// How the consumer's stream is named to the export.
#[derive(Debug, Clone, Copy)]
enum ConsumerKind {
    /// A stream of ours, handed to cudarc ([`Stream::to_cudarc`]).
    Ours,
    /// cudarc's stream, through [`ForeignStream::cudarc`].
    Cudarc,
    /// cudarc's stream, by its raw handle only ([`ForeignStream::from_raw`]).
    Raw,
}

/// The consumer (its stream is non-blocking), and the stream of ours it runs on, if any.
fn consumer(ctx: &Context, kind: ConsumerKind) -> (ForeignConsumer, Option<Stream>) {
    match kind {
        ConsumerKind::Ours => {
            let ours = non_blocking(ctx);
            (ForeignConsumer::new(ours.to_cudarc().unwrap()), Some(ours))
        }
        ConsumerKind::Cudarc | ConsumerKind::Raw => (ForeignConsumer::new(cudarc_stream(ctx)), None),
    }
}

/// The export's `stream` argument for the consumer.
fn consumer_arg<'s>(
    kind: ConsumerKind,
    foreign: &'s ForeignConsumer,
    ours: &'s Option<Stream>,
) -> ConsumerStream<'s> {
    match kind {
        ConsumerKind::Ours => ConsumerStream::Stream(ours.as_ref().unwrap()),
        ConsumerKind::Cudarc => ConsumerStream::Foreign(ForeignStream::cudarc(&foreign.stream)),
        ConsumerKind::Raw => {
            // SAFETY: cudarc's stream lives as long as `foreign`, past the end of every export
            // (deleter or lend) of these tests.
            let raw = unsafe { ForeignStream::from_raw(foreign.stream.cu_stream()) };
            ConsumerStream::Foreign(raw)
        }
    }
}

/// Waits on the host for the work of ours (not the consumer's non-blocking stream): the
/// producer's stream and the legacy default stream. A free that waited for these only would be
/// due after this, and the next allocation of its size would get the block back.
fn idle_ours(ctx: &Context, producer: &Stream) {
    producer.synchronize().unwrap();
    let legacy = Event::new(ctx).unwrap();
    legacy.record(None).unwrap();
    legacy.synchronize().unwrap();
}

/// By value: the consumer calls the deleter with its read still queued; the memory must not be
/// handed to the next array of its size until that read has run.
fn deleter_with_a_queued_read(kind: ConsumerKind, seed: u64) {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let producer = non_blocking(&ctx);
    let (foreign, ours) = consumer(&ctx, kind);
    let mut rng = Rng::new(seed);
    for round in 0..STRESS_ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        let (a2, b2) = (rng.f32() + 2.0, rng.f32() + 2.0);
        let mut array = DeviceArray::<f32, _>::empty(&ctx, N).unwrap();
        fill.prepared_async_call(
            grid(N),
            256,
            &producer,
            &mut array,
            a,
            b,
            N as i32,
            cycles(&ctx, 0.5),
        )
        .unwrap();
        let tensor = array.into_dlpack(consumer_arg(kind, &foreign, &ours)).unwrap();
        let mut out = foreign.stream.alloc_zeros::<f32>(N).unwrap();
        foreign.queue_slow_copy(data_address(&tensor), &mut out, N, cycles(&ctx, 3.0));
        // Done queueing: the consumer lets go of the tensor at once, its read still queued.
        drop(tensor);
        idle_ours(&ctx, &producer);
        let mut next = DeviceArray::<f32, _>::empty(&ctx, N).unwrap();
        fill.prepared_async_call(grid(N), 256, &producer, &mut next, a2, b2, N as i32, 0)
            .unwrap();
        let got = foreign.stream.clone_dtoh(&out).unwrap();
        assert!(
            gpu_suite::first_mismatch(&got, &filled(a, b, N), TOL).is_none(),
            "{kind:?} round {round}: the memory was handed out again under the consumer's queued read"
        );
        assert!(
            gpu_suite::first_mismatch(&next.to_vec().unwrap(), &filled(a2, b2, N), TOL).is_none(),
            "{kind:?} round {round}: the next array"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_deleter_with_a_read_queued_on_our_stream_delays_the_reuse() {
    deleter_with_a_queued_read(ConsumerKind::Ours, 261);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_deleter_with_a_read_queued_on_a_cudarc_stream_delays_the_reuse() {
    deleter_with_a_queued_read(ConsumerKind::Cudarc, 262);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_deleter_with_a_read_queued_on_a_raw_stream_delays_the_reuse() {
    deleter_with_a_queued_read(ConsumerKind::Raw, 263);
}

/// A lend: it ends with the consumer's read still queued; the producer then writes the memory
/// in place (even rounds), or drops it and fills the next array of its size (odd rounds).
fn lend_end_with_a_queued_read(kind: ConsumerKind, seed: u64) {
    let ctx = ctx();
    let fill = k::late_fill::prepare(&ctx).unwrap();
    let producer = non_blocking(&ctx);
    let (foreign, ours) = consumer(&ctx, kind);
    let mut rng = Rng::new(seed);
    for round in 0..STRESS_ROUNDS {
        let (a, b) = (rng.f32(), rng.f32());
        let (a2, b2) = (rng.f32() + 2.0, rng.f32() + 2.0);
        let mut array = DeviceArray::<f32, _>::empty(&ctx, N).unwrap();
        fill.prepared_async_call(
            grid(N),
            256,
            &producer,
            &mut array,
            a,
            b,
            N as i32,
            cycles(&ctx, 0.5),
        )
        .unwrap();
        let mut out = foreign.stream.alloc_zeros::<f32>(N).unwrap();
        {
            let lent = array.to_dlpack(consumer_arg(kind, &foreign, &ours)).unwrap();
            foreign.queue_slow_copy(data_address(lent.tensor()), &mut out, N, cycles(&ctx, 3.0));
        }
        let next = if round % 2 == 0 {
            fill.prepared_async_call(grid(N), 256, &producer, &mut array, a2, b2, N as i32, 0)
                .unwrap();
            array
        } else {
            drop(array);
            idle_ours(&ctx, &producer);
            let mut next = DeviceArray::<f32, _>::empty(&ctx, N).unwrap();
            fill.prepared_async_call(grid(N), 256, &producer, &mut next, a2, b2, N as i32, 0)
                .unwrap();
            next
        };
        let got = foreign.stream.clone_dtoh(&out).unwrap();
        assert!(
            gpu_suite::first_mismatch(&got, &filled(a, b, N), TOL).is_none(),
            "{kind:?} round {round}: the memory was written under the consumer's queued read"
        );
        assert!(
            gpu_suite::first_mismatch(&next.to_vec().unwrap(), &filled(a2, b2, N), TOL).is_none(),
            "{kind:?} round {round}: the write after the lend"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_lend_end_with_a_read_queued_on_our_stream_orders_later_writes() {
    lend_end_with_a_queued_read(ConsumerKind::Ours, 264);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_lend_end_with_a_read_queued_on_a_cudarc_stream_orders_later_writes() {
    lend_end_with_a_queued_read(ConsumerKind::Cudarc, 265);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_lend_end_with_a_read_queued_on_a_raw_stream_orders_later_writes() {
    lend_end_with_a_queued_read(ConsumerKind::Raw, 266);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dlpack_export_refuses_the_per_thread_stream_as_its_consumer() {
    let ctx = ctx();
    let host = Rng::new(267).vec_f32(1024);
    let buf = ctx.to_device(&host[..]).unwrap();
    let per_thread = cudarc_stream(&ctx).context().per_thread_stream();
    let refused =
        |r: Result<(), Error>| matches!(r, Err(Error::Dlpack(gpu_runtime::DlpackError::PerThreadConsumer)));
    assert!(refused(
        buf.to_dlpack(ConsumerStream::Foreign(ForeignStream::cudarc(&per_thread)))
            .map(drop)
    ));
    // SAFETY: CU_STREAM_PER_THREAD, which the export refuses before using it.
    let raw = unsafe { ForeignStream::from_raw(per_thread.cu_stream()) };
    assert!(refused(buf.to_dlpack(ConsumerStream::Foreign(raw)).map(drop)));
    // The refused lends left the buffer as it was; a refused export by value drops it.
    assert_eq!(buf.to_vec().unwrap(), host);
    assert!(refused(buf.into_dlpack(ConsumerStream::Foreign(raw)).map(drop)));
}
