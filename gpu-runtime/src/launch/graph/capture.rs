//! [`Capture`]: recording kernels, copies, memsets and event waits into a graph by stream
//! capture (`cuStreamBeginCapture` / `cuStreamEndCapture`), on a stream of its own.
//!
//! The capture stream is private: created for the capture, non-blocking (so work on the legacy
//! default stream never joins or invalidates the capture), captured in relaxed mode (so that
//! the program may allocate, copy and synchronize elsewhere, on this thread too, while the
//! capture is open), and never given to the crate's stream-ordering records: nothing recorded
//! on it could be waited for later, which is what broke cudarc (issue #590: an event recorded
//! while capturing, waited on after the graph was gone). Each recording method instead notes
//! which allocations the node reads and writes; the graph records them on the stream it is
//! launched on, each time.

use cudarc::driver::sys;

use crate::driver::calls;
use crate::driver::calls::Failed;
use crate::driver::context::core::Context;
use crate::driver::init::driver_version;
use crate::driver::stream::Event;
use crate::error::{Error, Result};
use crate::types::repr::DeviceRepr;

#[cfg(feature = "cublas")]
#[path = "capture_blas.rs"]
mod blas;

use super::buffers::{GraphRead, GraphWrite};
use super::graph::Graph;
use super::node_args::KernelNode;
use super::node_checks;
use super::nodes::{NodeId, NodeKind, Nodes};

/// A graph being recorded: each call adds a node after the previous one (a chain), with the
/// buffers it uses borrowed for `'a`. [`end`](Self::end) makes the [`Graph`].
///
/// Kernels are recorded by their generated `capture` method, typed like
/// `prepared_async_call`; buffers are passed as [`GraphInput`](super::buffers::GraphInput) /
/// [`GraphBuffer`](super::buffers::GraphBuffer) tokens, which hold the borrow.
///
/// An error before the driver is asked anything (a launch configuration over the limits, a
/// buffer too short for its `#[len]`, a wrong context) adds nothing and leaves the capture
/// going. An error of the driver ends the capture and destroys its partial graph
/// ([`Error::CaptureFailed`]); later calls report it again. Dropping a capture without `end`
/// abandons it the same way.
pub struct Capture<'a> {
    ctx: Context,
    stream: sys::CUstream,
    /// True until the capture is ended.
    capturing: bool,
    /// The driver error that ended the capture early.
    failed: Option<(&'static str, String, u32)>,
    nodes: Nodes<'a>,
    /// The cuBLAS handle of captured products (`capture_blas.rs`), made on first use; moved
    /// into the graph at `end`.
    #[cfg(feature = "cublas")]
    blas: Option<super::blas_handle::BlasHandle>,
}

// SAFETY: the stream is private to this value; a relaxed-mode capture is not tied to a thread.
unsafe impl Send for Capture<'_> {}

impl std::fmt::Debug for Capture<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("nodes", &self.nodes.len())
            .field("failed", &self.failed)
            .finish()
    }
}

impl<'a> Capture<'a> {
    /// Starts recording a graph in `ctx`.
    pub fn begin(ctx: &Context) -> Result<Capture<'a>> {
        // Node handles come from cuStreamGetCaptureInfo_v3 (CUDA 12.3); cudarc panics on a
        // symbol the driver lacks, so ask for the version first.
        let version = driver_version()?;
        if version < (12, 3) {
            return Err(Error::Unsupported {
                what: "a graph capture",
                needs: format!("CUDA 12.3 or later (the driver is {}.{})", version.0, version.1),
            });
        }
        ctx.bind()?;
        // The context is current.
        let stream = calls::stream_create(sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)?;
        // SAFETY: the stream was just made and nothing else has it.
        let begun = unsafe {
            calls::stream_begin_capture(stream, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        };
        if let Err(failed) = begun {
            // SAFETY: as above; nothing was queued on it. The capture's error is the one to
            // report.
            let _ = unsafe { calls::stream_destroy(stream) };
            return Err(failed.into());
        }
        Ok(Capture {
            ctx: ctx.clone(),
            stream,
            capturing: true,
            failed: None,
            nodes: Nodes::new(true),
            #[cfg(feature = "cublas")]
            blas: None,
        })
    }

    /// The number of nodes recorded so far.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True before the first node.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 0
    }

    /// Ok while the capture is going; the error that ended it otherwise.
    fn live(&self) -> Result<()> {
        match &self.failed {
            None => Ok(()),
            Some((call, name, code)) => Err(Error::CaptureFailed {
                call,
                name: name.clone(),
                code: *code,
            }),
        }
    }

    /// Ends the capture after the driver failed `call` with `code`, destroying the partial
    /// graph, so that the stream is left usable; the error to return.
    #[cold]
    fn fail(&mut self, call: &'static str, code: sys::CUresult) -> Error {
        self.fail_named(call, format!("{code:?}"), code as u32)
    }

    /// [`Capture::fail`] with the code's name and number.
    #[cold]
    fn fail_named(&mut self, call: &'static str, name: String, code: u32) -> Error {
        self.abandon();
        self.failed = Some((call, name, code));
        self.live().err().unwrap_or(Error::CaptureFailed {
            call,
            name: String::new(),
            code,
        })
    }

    /// Ends the capture, if it is going, and destroys what it recorded.
    fn abandon(&mut self) {
        if !self.capturing || self.ctx.bind().is_err() {
            return;
        }
        self.capturing = false;
        // SAFETY: the stream is capturing; ending returns the (possibly invalidated) graph,
        // which nothing else has. Abandoning reports nothing: the error that led here is.
        let (graph, _) = unsafe { calls::stream_end_capture(self.stream) };
        if !graph.is_null() {
            // SAFETY: as above, destroyed once.
            let _ = unsafe { calls::graph_destroy(graph) };
        }
    }

    /// Runs a driver call on the capture stream; a failure ends the capture.
    fn call(&mut self, f: impl FnOnce(sys::CUstream) -> std::result::Result<(), Failed>) -> Result<()> {
        self.live()?;
        self.ctx.bind()?;
        match f(self.stream) {
            Ok(()) => Ok(()),
            Err(Failed { call, code }) => Err(self.fail(call, code)),
        }
    }

    /// The node the last call on the capture stream added.
    fn last_node(&mut self) -> Result<sys::CUgraphNode> {
        // SAFETY: the stream is capturing (the driver version was checked in `begin`).
        let info = match unsafe { calls::stream_get_capture_info(self.stream) } {
            Ok(info) => info,
            Err(Failed { call, code }) => return Err(self.fail(call, code)),
        };
        let (deps, n) = (info.dependencies, info.count);
        if info.status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE {
            return Err(self.fail(
                "cuStreamGetCaptureInfo",
                sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
            ));
        }
        // After one launch the stream depends on exactly that launch's node.
        Ok(if n == 1 && !deps.is_null() {
            // SAFETY: the driver returned `n` handles at `deps`, valid until the next call on
            // the stream.
            unsafe { *deps }
        } else {
            std::ptr::null_mut()
        })
    }

    /// Records a kernel launch (the generated `capture` calls this after its compile-time
    /// typed argument checks) and returns its node, for `update_node`.
    #[doc(hidden)]
    pub fn kernel(&mut self, mut k: KernelNode<'a, '_>) -> Result<NodeId> {
        self.live()?;
        if !k.f.context().is(self.ctx.raw()) {
            return Err(Error::WrongContext { what: "the kernel" });
        }
        let (f, ex, grid, block, stream) = (k.f, k.ex, k.grid, k.block, self.stream);
        // SAFETY: `KernelNode::new`'s contract for the parameters; the stream is the
        // capture's, so nothing runs yet.
        match unsafe { ex.launch(f, grid, block, stream, k.params()) } {
            Ok(()) => {}
            // Refused before the driver saw it: nothing was recorded.
            Err(e @ Error::InvalidLaunch(_)) => return Err(e),
            Err(Error::Driver { call, code, name, .. }) => {
                return Err(self.fail_named(call, name, code));
            }
            // A fault reported by the launch, or the like: the capture cannot go on.
            Err(e) => {
                self.fail_named("cuLaunchKernel", e.to_string(), 0);
                return Err(e);
            }
        }
        let raw = self.last_node()?;
        self.nodes.note_conditions(&k.args.conditions);
        Ok(self.nodes.push(raw, k.kind(), k.args.uses, Vec::new()))
    }

    /// Records a copy of `src` into `dst`, of the same length.
    pub fn memcpy_dtod<T: DeviceRepr>(
        &mut self,
        dst: &mut impl GraphWrite<'a, T>,
        src: &impl GraphRead<'a, T>,
    ) -> Result<()> {
        let (dst, src) = (dst.graph_arg_mut(), src.graph_arg());
        let (args, bytes) = node_checks::copy(&self.ctx, &dst, &src)?;
        if bytes > 0 {
            // SAFETY: both ranges lie in allocations borrowed for 'a (checked lengths).
            self.call(|s| unsafe { calls::memcpy_dtod_async(dst.ptr, src.ptr, bytes, s) })?;
            self.nodes
                .push(std::ptr::null_mut(), NodeKind::Other, args.uses, Vec::new());
        }
        Ok(())
    }

    /// Records setting the first `count` 32-bit values of `dst` to `value`.
    pub fn memset_d32<T>(
        &mut self,
        dst: &mut impl GraphWrite<'a, T>,
        value: u32,
        count: usize,
    ) -> Result<()> {
        let dst = dst.graph_arg_mut();
        let args = node_checks::memset(&self.ctx, &dst, 4, count)?;
        if count > 0 {
            // SAFETY: `count` values fit in the allocation, borrowed for 'a (checked).
            self.call(|s| unsafe { calls::memset_d32_async(dst.ptr, value, count, s) })?;
            self.nodes
                .push(std::ptr::null_mut(), NodeKind::Other, args.uses, Vec::new());
        }
        Ok(())
    }

    /// Records setting the first `count` bytes of `dst` to `value`.
    pub fn memset_d8<T>(&mut self, dst: &mut impl GraphWrite<'a, T>, value: u8, count: usize) -> Result<()> {
        let dst = dst.graph_arg_mut();
        let args = node_checks::memset(&self.ctx, &dst, 1, count)?;
        if count > 0 {
            // SAFETY: `count` bytes fit in the allocation, borrowed for 'a (checked).
            self.call(|s| unsafe { calls::memset_d8_async(dst.ptr, value, count, s) })?;
            self.nodes
                .push(std::ptr::null_mut(), NodeKind::Other, args.uses, Vec::new());
        }
        Ok(())
    }

    /// Records a wait for `event`: each launch of the graph waits there until the work
    /// captured by the event's latest record (on any stream, outside the graph) has completed.
    pub fn wait_event(&mut self, event: &'a Event) -> Result<()> {
        if !event.context().is(self.ctx.raw()) {
            return Err(Error::WrongContext { what: "the event" });
        }
        let ev = event.raw();
        // SAFETY: live event, borrowed for 'a.
        self.call(|s| unsafe {
            calls::stream_wait_event(s, ev, sys::CUevent_wait_flags::CU_EVENT_WAIT_EXTERNAL as u32)
        })?;
        self.nodes
            .push(std::ptr::null_mut(), NodeKind::Other, Vec::new(), Vec::new());
        Ok(())
    }

    /// Records a record of `event`: each launch of the graph records it when the nodes before
    /// have run, so that other streams can wait for that point ([`Stream::wait_for_event`](crate::Stream::wait_for_event)).
    pub fn record_event(&mut self, event: &'a Event) -> Result<()> {
        if !event.context().is(self.ctx.raw()) {
            return Err(Error::WrongContext { what: "the event" });
        }
        let ev = event.raw();
        // SAFETY: live event, borrowed for 'a.
        self.call(|s| unsafe {
            calls::event_record_with_flags(ev, s, sys::CUevent_record_flags::CU_EVENT_RECORD_EXTERNAL)
        })?;
        self.nodes
            .push(std::ptr::null_mut(), NodeKind::Other, Vec::new(), Vec::new());
        Ok(())
    }

    /// Ends the capture and returns the graph recorded.
    pub fn end(mut self) -> Result<Graph<'a>> {
        self.live()?;
        self.ctx.bind()?;
        self.capturing = false;
        // SAFETY: the stream is capturing; the graph returned is ours.
        let (graph, ended) = unsafe { calls::stream_end_capture(self.stream) };
        #[cfg(feature = "cublas")]
        if let Some(h) = &self.blas {
            h.detach();
        }
        if let Err(Failed { call, code }) = ended {
            if !graph.is_null() {
                // SAFETY: an invalidated capture's graph is returned to be destroyed. The
                // capture's error is the one to report.
                let _ = unsafe { calls::graph_destroy(graph) };
            }
            return Err(captured(call, code));
        }
        let nodes = std::mem::replace(&mut self.nodes, Nodes::new(true));
        #[allow(unused_mut)]
        let mut g = Graph::from_parts(self.ctx.clone(), graph, nodes);
        // The graph keeps the handle of its products for as long as it exists.
        #[cfg(feature = "cublas")]
        {
            g.blas.extend(self.blas.take());
        }
        Ok(g)
    }
}

/// [`Error::CaptureFailed`] for `call` failing with `code`.
fn captured(call: &'static str, code: sys::CUresult) -> Error {
    Error::CaptureFailed {
        call,
        name: format!("{code:?}"),
        code: code as u32,
    }
}

impl Drop for Capture<'_> {
    fn drop(&mut self) {
        self.abandon();
        let bound = self.ctx.bind().is_ok();
        // After the bind: destroying a cuBLAS handle synchronizes the current device, which
        // must be this capture's.
        #[cfg(feature = "cublas")]
        if let Some(h) = self.blas.take() {
            // Off the stream before it is destroyed.
            h.detach();
        }
        if bound {
            // SAFETY: made for this value and destroyed once; nothing was queued on it outside
            // the capture. A drop cannot report a failure.
            let _ = unsafe { calls::stream_destroy(self.stream) };
        }
    }
}
