//! The memory a graph uses, borrowed for as long as the graph exists: [`GraphInput`] (read by
//! the graph, shared borrow) and [`GraphBuffer`] (written by it, exclusive borrow), and the
//! traits the generated `capture` / `graph_node` / `update_node` methods take them by.
//!
//! Why tokens and not `&'a` buffers in each call: a graph usually writes a buffer in one node
//! and reads it in the next, and one `&'a mut` borrow cannot be taken twice. A token borrows
//! the buffer once, for the graph's lifetime `'a`, and is then passed to as many nodes as the
//! graph has, each call reborrowing the token (`&mut` for a write, so that one kernel cannot
//! be given one buffer as two arguments of which one is written, as in `prepared_async_call`).

use std::marker::PhantomData;
use std::ops::RangeBounds;

use cudarc::driver::sys;

use crate::driver::context::core::Context;
use crate::driver::memory::view::{
    device_memory_accessors, DeviceRead, DeviceView, DeviceViewMut, DeviceWrite,
};
use crate::driver::ordering::StreamUses;
use crate::error::Result;
use crate::types::repr::DeviceRepr;

/// One buffer argument of a graph node, as the graph records it: the address and length, the
/// context, and the allocation's stream-ordering record, all valid for `'a`.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct GraphArg<'a> {
    pub(crate) ptr: sys::CUdeviceptr,
    pub(crate) len: usize,
    pub(crate) elem_bytes: usize,
    pub(crate) ctx: &'a Context,
    /// `None` for memory ordered by its owner ([`DeviceView::from_raw_parts`]).
    pub(crate) uses: Option<&'a StreamUses>,
}

impl GraphArg<'_> {
    // `len` is what `#[len = …]` checks.
    device_memory_accessors!(len);

    /// The size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.len * self.elem_bytes
    }
}

/// A buffer a graph reads, borrowed for the graph's lifetime `'a`: while any graph made with it
/// exists, the buffer cannot be written by the host or by other launches, nor dropped.
///
/// ```no_run
/// # use gpu_runtime::{Context, launch::{GraphInput, GraphBuffer}};
/// # let ctx = Context::default()?;
/// let x = ctx.to_device(&[1.0f32; 256])?;
/// let mut y = ctx.alloc_zeros::<f32>(256)?;
/// let xg = GraphInput::new(&x); // read by the graph; `x` stays readable meanwhile
/// let yg = GraphBuffer::new(&mut y); // written by the graph: `y` is the graph's until it is dropped
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct GraphInput<'a, T> {
    view: DeviceView<'a, T>,
}

impl<T> Clone for GraphInput<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for GraphInput<'_, T> {}

impl<'a, T> GraphInput<'a, T> {
    /// Borrows `buffer` (any [`DeviceRead`] memory: a buffer, a view, a pooled block) for `'a`.
    pub fn new(buffer: &'a (impl DeviceRead<T> + ?Sized)) -> Self {
        GraphInput {
            view: buffer.device_view(),
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.view.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.view.is_empty()
    }
}

/// A buffer a graph writes (and may read), borrowed exclusively for the graph's lifetime `'a`:
/// nothing else can use it, nor drop it, while a graph made with it exists. Pass it as `&mut`
/// to a node that writes it and as `&` to a node that reads it.
pub struct GraphBuffer<'a, T> {
    view: DeviceViewMut<'a, T>,
}

impl<'a, T> GraphBuffer<'a, T> {
    /// Borrows `buffer` (any [`DeviceWrite`] memory) exclusively for `'a`.
    pub fn new(buffer: &'a mut (impl DeviceWrite<T> + ?Sized)) -> Self {
        GraphBuffer {
            view: buffer.device_view_mut(),
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.view.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.view.is_empty()
    }
}

impl<'a, T> GraphInput<'a, T> {
    /// The token of `range` (in elements) of this one, borrowed as long: a layer's weights
    /// inside one parameter buffer. Out of range is [`ArrayShapeError::RangeOutOfBounds`](crate::ArrayShapeError::RangeOutOfBounds).
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<GraphInput<'a, T>> {
        Ok(GraphInput {
            view: self.view.slice(range)?,
        })
    }
}

impl<'a, T: DeviceRepr> GraphInput<'a, T> {
    /// The same memory as elements of `U` (as [`DeviceView::cast`], same checks).
    pub fn cast<U: DeviceRepr>(self) -> Result<GraphInput<'a, U>> {
        Ok(GraphInput {
            view: self.view.cast()?,
        })
    }
}

impl<'a, T> GraphBuffer<'a, T> {
    /// A read-only token of `range` (in elements) of this buffer, valid for the graph's `'a`
    /// but borrowing this token for `'s`: while it is held, the buffer cannot be passed as
    /// written (`&mut`), so one node cannot read and write the same memory, as with
    /// `prepared_async_call`'s `&` and `&mut`.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<GraphSlice<'_, 'a, T>> {
        // SAFETY: the copy is tied to `&self` for `'_` and only read through.
        let view = unsafe { self.view.alias_read() }.slice(range)?;
        Ok(GraphSlice {
            view,
            _borrow: PhantomData,
        })
    }

    /// A written token of `range` (in elements) of this buffer, valid for `'a`, borrowing
    /// this token exclusively for `'s` (as [`DeviceViewMut::slice_mut`]): a layer's
    /// activations inside one buffer of all layers'.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<GraphSliceMut<'_, 'a, T>> {
        // SAFETY: the copy is tied to `&mut self` for `'_`.
        let view = unsafe { self.view.alias() }.into_slice(range)?;
        Ok(GraphSliceMut {
            view,
            _borrow: PhantomData,
        })
    }
}

/// A read-only sub-range of a [`GraphBuffer`] ([`GraphBuffer::slice`]): memory valid for the
/// graph's `'a`, borrowing its buffer token for `'s`.
pub struct GraphSlice<'s, 'a, T> {
    view: DeviceView<'a, T>,
    _borrow: PhantomData<&'s GraphBuffer<'a, T>>,
}

impl<'s, 'a, T: DeviceRepr> GraphSlice<'s, 'a, T> {
    /// The same memory as elements of `U` (as [`DeviceView::cast`], same checks).
    pub fn cast<U: DeviceRepr>(self) -> Result<GraphSlice<'s, 'a, U>> {
        Ok(GraphSlice {
            view: self.view.cast()?,
            _borrow: PhantomData,
        })
    }
}

/// A written sub-range of a [`GraphBuffer`] ([`GraphBuffer::slice_mut`]): memory valid for the
/// graph's `'a`, borrowing its buffer token exclusively for `'s`.
pub struct GraphSliceMut<'s, 'a, T> {
    view: DeviceViewMut<'a, T>,
    _borrow: PhantomData<&'s mut GraphBuffer<'a, T>>,
}

impl<'s, 'a, T> GraphSliceMut<'s, 'a, T> {
    /// Split in two at `mid` (as [`DeviceViewMut::split_at_mut`]), so that one node may write
    /// two parts of one allocation (a layer norm's weight and bias gradients).
    pub fn split_at_mut(self, mid: usize) -> Result<(GraphSliceMut<'s, 'a, T>, GraphSliceMut<'s, 'a, T>)> {
        let (x, y) = self.view.split_at_mut(mid)?;
        Ok((
            GraphSliceMut {
                view: x,
                _borrow: PhantomData,
            },
            GraphSliceMut {
                view: y,
                _borrow: PhantomData,
            },
        ))
    }
}

impl<'s, 'a, T: DeviceRepr> GraphSliceMut<'s, 'a, T> {
    /// The same memory as writable elements of `U` (as [`DeviceViewMut::cast_mut`]).
    pub fn cast_mut<U: DeviceRepr>(self) -> Result<GraphSliceMut<'s, 'a, U>> {
        Ok(GraphSliceMut {
            view: self.view.cast_mut()?,
            _borrow: PhantomData,
        })
    }
}

impl<T> std::fmt::Debug for GraphSlice<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GraphSlice({:?})", self.view)
    }
}

impl<T> std::fmt::Debug for GraphSliceMut<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GraphSliceMut({:?})", self.view)
    }
}

impl<T> std::fmt::Debug for GraphInput<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GraphInput({:?})", self.view)
    }
}

impl<T> std::fmt::Debug for GraphBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GraphBuffer({:?})", self.view)
    }
}

mod sealed {
    pub trait Sealed {}
}
impl<T> sealed::Sealed for GraphInput<'_, T> {}
impl<T> sealed::Sealed for GraphBuffer<'_, T> {}
impl<T> sealed::Sealed for GraphSlice<'_, '_, T> {}
impl<T> sealed::Sealed for GraphSliceMut<'_, '_, T> {}

/// Memory a graph node reads, valid for the graph's lifetime `'a`: a [`GraphInput`] or a
/// [`GraphBuffer`]. What a `const T*` parameter takes in the generated graph methods. Sealed:
/// only the tokens, which hold their borrow for `'a`, implement it.
// The message names the fix for a buffer (or host data) passed to a graph method directly
// (issue 28): graphs take tokens that hold the borrow for the graph's lifetime.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a graph argument: a graph node reads device memory through a `GraphInput<'_, {T}>` or `GraphBuffer<'_, {T}>`",
    label = "expected `&GraphInput::new(&buffer)` (or a `GraphBuffer`)",
    note = "wrap the device buffer once, before the graph is built: `let xg = GraphInput::new(&x);` and pass `&xg`; the token borrows the buffer for as long as the graph can launch",
    note = "host data goes to the device first with `ctx.to_device(&data)?`; a graph launches on device memory only"
)]
pub trait GraphRead<'a, T>: sealed::Sealed {
    /// The argument as the graph records it.
    #[doc(hidden)]
    fn graph_arg(&self) -> GraphArg<'a>;
}

/// Memory a graph node writes, valid for `'a`: a [`GraphBuffer`]. What a `T*` parameter takes
/// in the generated graph methods.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a writable graph argument: a graph node writes device memory through a `GraphBuffer<'_, {T}>`",
    label = "expected `&mut GraphBuffer::new(&mut buffer)`",
    note = "wrap the device buffer once, before the graph is built: `let mut yg = GraphBuffer::new(&mut y);` and pass `&mut yg`; the token borrows the buffer exclusively for as long as the graph can launch",
    note = "host data goes to the device first with `ctx.to_device(&data)?`; a graph launches on device memory only"
)]
pub trait GraphWrite<'a, T>: GraphRead<'a, T> {
    /// The argument as the graph records it, for a write.
    #[doc(hidden)]
    fn graph_arg_mut(&mut self) -> GraphArg<'a>;
}

fn arg_of<'a, T>(
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: &'a Context,
    uses: Option<&'a StreamUses>,
) -> GraphArg<'a> {
    GraphArg {
        ptr,
        len,
        elem_bytes: std::mem::size_of::<T>(),
        ctx,
        uses,
    }
}

impl<'a, T> GraphRead<'a, T> for GraphInput<'a, T> {
    #[inline]
    fn graph_arg(&self) -> GraphArg<'a> {
        let v = self.view;
        arg_of::<T>(v.device_ptr(), v.len(), v.context(), v.uses())
    }
}

impl<'a, T> GraphRead<'a, T> for GraphBuffer<'a, T> {
    #[inline]
    fn graph_arg(&self) -> GraphArg<'a> {
        let v = &self.view;
        arg_of::<T>(v.device_ptr(), v.len(), v.context(), v.uses())
    }
}

impl<'a, T> GraphWrite<'a, T> for GraphBuffer<'a, T> {
    #[inline]
    fn graph_arg_mut(&mut self) -> GraphArg<'a> {
        self.graph_arg()
    }
}

impl<'a, T> GraphRead<'a, T> for GraphSlice<'_, 'a, T> {
    #[inline]
    fn graph_arg(&self) -> GraphArg<'a> {
        let v = self.view;
        arg_of::<T>(v.device_ptr(), v.len(), v.context(), v.uses())
    }
}

impl<'a, T> GraphRead<'a, T> for GraphSliceMut<'_, 'a, T> {
    #[inline]
    fn graph_arg(&self) -> GraphArg<'a> {
        let v = &self.view;
        arg_of::<T>(v.device_ptr(), v.len(), v.context(), v.uses())
    }
}

impl<'a, T> GraphWrite<'a, T> for GraphSliceMut<'_, 'a, T> {
    #[inline]
    fn graph_arg_mut(&mut self) -> GraphArg<'a> {
        self.graph_arg()
    }
}
