//! cudarc's memory in this crate's launches and copies: a `CudaSlice` (or view) lent to a
//! closure as memory of ours on one stream, ordered against cudarc's own events both ways.
//!
//! When the lend starts, the stream waits for cudarc's events (`device_ptr` /
//! `device_ptr_mut` of cudarc's own, on cudarc's handle to the stream), and the lend's own
//! stream record starts as a write on that stream: work of ours on any other stream inside the
//! closure waits for it, and is ordered with the rest of our work on the memory by that record,
//! as for any buffer of ours. When the closure returns (or unwinds), the stream waits for every
//! use the record names, and cudarc's read (or write) event is recorded on it, so cudarc's later
//! users of the slice wait for all of it. The closure form is what makes this sound: nothing
//! the caller does can skip the end (a guard the caller held could be forgotten).
//!
//! When cudarc orders nothing (its event tracking off, or its context not in multi-stream
//! mode), the lend synchronises the context when it starts and the stream when it ends, so
//! that cudarc's unordered work and ours never overlap.

use std::marker::PhantomData;

use cudarc::driver::{
    sys, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice,
};

use super::state::state;
use crate::driver::calls;
use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::driver::ordering::{LendGroups, Member, StreamUses};
use crate::driver::stream::Stream;
use crate::error::{Error, Result};

/// cudarc's memory, lent read-only to this crate inside [`Lend::lend`]: a [`DeviceRead`] like
/// any buffer of ours, for typed and run-time typed launches, graphs and copies, on any stream
/// of its context.
pub struct Lent<'s, T> {
    ptr: sys::CUdeviceptr,
    len: usize,
    stream: &'s Stream,
    /// The lend's record, owned by the lend itself (not by this value), so that whatever the
    /// closure does with the value (even swapping it with another lend's through `&mut`), the
    /// end of the lend waits for the uses of the memory it lent.
    uses: &'s StreamUses,
    _elem: PhantomData<&'s [T]>,
}

/// cudarc's memory, lent writable to this crate inside [`LendMut::lend_mut`]: a
/// [`DeviceWrite`] like any buffer of ours.
pub struct LentMut<'s, T> {
    inner: Lent<'s, T>,
    _elem: PhantomData<&'s mut [T]>,
}

impl<T> std::fmt::Debug for Lent<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lent({:#x}, len {})", self.ptr, self.len)
    }
}

impl<T> std::fmt::Debug for LentMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LentMut({:#x}, len {})", self.inner.ptr, self.inner.len)
    }
}

impl<T> DeviceRead<T> for Lent<'_, T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        DeviceView::tracked(self.ptr, self.len, self.stream.context(), self.uses)
    }
}

impl<T> DeviceRead<T> for LentMut<'_, T> {
    #[inline]
    fn device_view(&self) -> DeviceView<'_, T> {
        self.inner.device_view()
    }
}

impl<T> DeviceWrite<T> for LentMut<'_, T> {
    #[inline]
    fn device_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        let l = &self.inner;
        DeviceViewMut::tracked(l.ptr, l.len, l.stream.context(), l.uses)
    }
}

impl<T> Lent<'_, T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T> LentMut<'_, T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.inner.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }
}

/// cudarc memory (`CudaSlice`, `CudaView`, `CudaViewMut`) that this crate's launches and
/// copies may read, for the length of a closure.
///
/// ```no_run
/// use gpu_runtime::driver::cudarc_interop::Lend;
/// use gpu_runtime::{kernel, Context, Stream};
///
/// #[kernel(r#"__global__ void twice(const float *x, float *y, int n) {
///     int i = blockIdx.x * blockDim.x + threadIdx.x;
///     if (i < n) y[i] = 2.0f * x[i];
/// }"#)]
/// fn twice(x: &[f32], y: &mut [f32], n: i32);
///
/// # fn main() -> gpu_runtime::Result<()> {
/// let ctx = Context::default()?;
/// let stream = Stream::new(&ctx)?;
/// let x = stream.to_cudarc()?.clone_htod(&[1.0f32; 256]).unwrap(); // cudarc's memory
/// let mut y = ctx.alloc_zeros::<f32>(256)?;
/// let k = twice::prepare(&ctx)?;
/// x.lend(&stream, |x| k.prepared_async_call(1, 256, &stream, x, &mut y, 256))??;
/// assert_eq!(y.to_vec()?, vec![2.0; 256]);
/// # Ok(()) }
/// ```
pub trait Lend<T> {
    /// Calls `f` with the memory as a [`DeviceRead`] of this crate, starting on `stream`
    /// (which must be of the memory's CUDA context, a device's primary context): see the
    /// module docs for the ordering. Errors are those of ordering and of the stream's
    /// context; `f`'s result is returned as it is.
    fn lend<R>(&self, stream: &Stream, f: impl FnOnce(&Lent<'_, T>) -> R) -> Result<R>;
}

/// cudarc memory (`CudaSlice`, `CudaViewMut`) that this crate's launches and copies may write,
/// for the length of a closure.
pub trait LendMut<T> {
    /// Calls `f` with the memory as a [`DeviceWrite`] of this crate, starting on `stream`; as
    /// [`Lend::lend`], with cudarc's write event recorded at the end.
    fn lend_mut<R>(&mut self, stream: &Stream, f: impl FnOnce(&mut LentMut<'_, T>) -> R) -> Result<R>;
}

impl<T> Lend<T> for CudaSlice<T> {
    fn lend<R>(&self, stream: &Stream, f: impl FnOnce(&Lent<'_, T>) -> R) -> Result<R> {
        lend_read(self, stream, f)
    }
}

impl<T> Lend<T> for CudaView<'_, T> {
    fn lend<R>(&self, stream: &Stream, f: impl FnOnce(&Lent<'_, T>) -> R) -> Result<R> {
        lend_read(self, stream, f)
    }
}

impl<T> Lend<T> for CudaViewMut<'_, T> {
    fn lend<R>(&self, stream: &Stream, f: impl FnOnce(&Lent<'_, T>) -> R) -> Result<R> {
        lend_read(self, stream, f)
    }
}

impl<T> LendMut<T> for CudaSlice<T> {
    fn lend_mut<R>(&mut self, stream: &Stream, f: impl FnOnce(&mut LentMut<'_, T>) -> R) -> Result<R> {
        lend_write(self, stream, f)
    }
}

impl<T> LendMut<T> for CudaViewMut<'_, T> {
    fn lend_mut<R>(&mut self, stream: &Stream, f: impl FnOnce(&mut LentMut<'_, T>) -> R) -> Result<R> {
        lend_write(self, stream, f)
    }
}

/// Checks that `mem` is of `stream`'s context, and returns cudarc's handle to the stream, after
/// letting cudarc's work finish where cudarc orders nothing.
fn check_start<'s, T, M: DeviceSlice<T> + ?Sized>(
    mem: &M,
    stream: &'s Stream,
) -> Result<(std::sync::Arc<CudaStream>, &'s LendGroups)> {
    let theirs = mem.stream().context();
    if theirs.cu_ctx() != stream.context().raw() {
        return Err(Error::WrongContext {
            what: "the cudarc memory (its context is not the stream's)",
        });
    }
    let c = stream.to_cudarc()?;
    // The stream is cudarc's to capture now: no lend starts while it does.
    stream.inner().refuse_foreign_capture()?;
    if !theirs.is_managing_stream_synchronization() {
        // cudarc orders nothing: let its work queued so far finish.
        stream.context().synchronize()?;
    }
    Ok((c, &state(stream.context())?.lends))
}

/// The lend's place in the group of its allocation's lends (found by the base address of the
/// allocation `ptr` lies in, so views of one slice share it).
fn join<'s>(groups: &'s LendGroups, ptr: sys::CUdeviceptr, stream: &'s Stream) -> Result<Member<'s>> {
    stream.context().bind()?;
    let base = if ptr == 0 {
        0
    } else {
        calls::mem_get_address_range(ptr)?.0
    };
    Ok(groups.join(base, stream.inner()))
}

/// How a lend ends on cudarc's side.
trait CudarcEnd {
    /// A write lend (cudarc's write event is recorded at the end).
    const WRITE: bool;
    /// cudarc orders its slices between streams.
    fn managing(&self) -> bool;
    /// Records cudarc's read or write event on `c` (cudarc's `SyncOnDrop`, dropped at once).
    fn record(&mut self, c: &CudaStream);
}

struct ReadEnd<'m, T, M: DevicePtr<T> + ?Sized>(&'m M, PhantomData<fn(T)>);
struct WriteEnd<'m, T, M: DevicePtrMut<T> + ?Sized>(&'m mut M, PhantomData<fn(T)>);

impl<T, M: DevicePtr<T> + ?Sized> CudarcEnd for ReadEnd<'_, T, M> {
    const WRITE: bool = false;
    fn managing(&self) -> bool {
        self.0.stream().context().is_managing_stream_synchronization()
    }
    fn record(&mut self, c: &CudaStream) {
        drop(self.0.device_ptr(c));
    }
}

impl<T, M: DevicePtrMut<T> + ?Sized> CudarcEnd for WriteEnd<'_, T, M> {
    const WRITE: bool = true;
    fn managing(&self) -> bool {
        self.0.stream().context().is_managing_stream_synchronization()
    }
    fn record(&mut self, c: &CudaStream) {
        drop(self.0.device_ptr_mut(c));
    }
}

/// A lend in progress: ended by `finish`, or when dropped (a panic in the closure).
struct Lending<'s, T, E: CudarcEnd> {
    /// Its place among the lends of the same cudarc allocation, whose ends cover each other
    /// (`driver::ordering::LendGroups`).
    member: Member<'s>,
    lent: LentMut<'s, T>,
    /// The lend's record (what `lent` records into, unless the closure swapped it).
    uses: &'s StreamUses,
    /// The lend's stream.
    stream: &'s Stream,
    c: std::sync::Arc<CudaStream>,
    end: E,
    done: bool,
}

impl<'s, T, E: CudarcEnd> Lending<'s, T, E> {
    fn new(
        member: Member<'s>,
        ptr: sys::CUdeviceptr,
        len: usize,
        stream: &'s Stream,
        uses: &'s StreamUses,
        c: std::sync::Arc<CudaStream>,
        end: E,
    ) -> Self {
        Lending {
            member,
            lent: LentMut {
                inner: Lent {
                    ptr,
                    len,
                    stream,
                    uses,
                    _elem: PhantomData,
                },
                _elem: PhantomData,
            },
            uses,
            stream,
            c,
            end,
            done: false,
        }
    }

    /// The record starts as a write on the lend's stream, which waited for cudarc's events:
    /// a use on another stream waits for it.
    fn begin(&self) -> Result<()> {
        self.uses.write_on(self.stream.inner())
    }

    /// The stream waits for every use of ours (the host, if that fails), then cudarc's event is
    /// recorded on it; where cudarc orders nothing, the host waits for the stream.
    fn end_now(&mut self) -> Result<()> {
        self.done = true;
        // The closure has returned: no borrow of the lent value is left, so this write is
        // exclusive, and waits for every use the record names.
        let ordered = self.uses.write_on(self.stream.inner());
        let waited = match ordered {
            Ok(()) => Ok(()),
            Err(_) => self.uses.host_write(),
        };
        // Atomic with respect to the other lends' ends of this allocation: the stream first
        // waits for every stream they lent on, so cudarc's one event covers all of them.
        let (end, c) = (&mut self.end, &self.c);
        let covered = self.member.end(E::WRITE, || end.record(c));
        // cudarc records its event only where both contexts it looks at order streams.
        let recorded = self.end.managing() && self.c.context().is_managing_stream_synchronization();
        if ordered.is_err() || covered.is_err() || !recorded {
            self.stream.synchronize()?;
        }
        waited
    }

    fn finish(mut self) -> Result<()> {
        self.end_now()
    }
}

impl<T, E: CudarcEnd> Drop for Lending<'_, T, E> {
    fn drop(&mut self) {
        if !self.done {
            // Unwinding from the closure: the lend must end all the same; an error here has
            // no one to go to (only a failed context fails, and its work never runs on).
            let _ = self.end_now();
        }
    }
}

fn lend_read<T, M: DevicePtr<T> + ?Sized, R>(
    mem: &M,
    stream: &Stream,
    f: impl FnOnce(&Lent<'_, T>) -> R,
) -> Result<R> {
    let (c, groups) = check_start(mem, stream)?;
    // cudarc makes `c` wait for its last write; its read event is recorded at the end.
    let (ptr, record) = mem.device_ptr(&c);
    std::mem::forget(record);
    let member = join(groups, ptr, stream)?;
    let uses = StreamUses::new();
    let lending = Lending::new(
        member,
        ptr,
        mem.len(),
        stream,
        &uses,
        c,
        ReadEnd(mem, PhantomData),
    );
    lending.begin()?;
    let r = f(&lending.lent.inner);
    lending.finish()?;
    Ok(r)
}

fn lend_write<T, M: DevicePtrMut<T> + ?Sized, R>(
    mem: &mut M,
    stream: &Stream,
    f: impl FnOnce(&mut LentMut<'_, T>) -> R,
) -> Result<R> {
    let (c, groups) = check_start(&*mem, stream)?;
    // cudarc makes `c` wait for its last write and reads; its write event is recorded at the
    // end.
    let (ptr, record) = mem.device_ptr_mut(&c);
    std::mem::forget(record);
    let member = join(groups, ptr, stream)?;
    let len = mem.len();
    let uses = StreamUses::new();
    let mut lending = Lending::new(member, ptr, len, stream, &uses, c, WriteEnd(mem, PhantomData));
    lending.begin()?;
    let r = f(&mut lending.lent);
    lending.finish()?;
    Ok(r)
}
