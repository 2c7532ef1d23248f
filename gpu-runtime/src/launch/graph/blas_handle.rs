//! The cuBLAS handle a [`Capture`](super::Capture) makes for its products (the `cublas`
//! feature, `capture_blas.rs`), kept by the [`Graph`](super::Graph) it ends in. Apart from
//! both so that neither imports the other for it.

use cudarc::cublas::sys::cublasHandle_t;

/// A cuBLAS handle made by a capture; destroyed when the graph that keeps it is dropped.
pub(crate) struct BlasHandle(pub(crate) cublasHandle_t);

// SAFETY: the handle is used by one thread at a time: by the capture (`&mut self` methods),
// then only destroyed, by whoever drops the graph.
unsafe impl Send for BlasHandle {}

impl BlasHandle {
    /// Points the handle back at the legacy default stream and cuBLAS's own workspace, once
    /// the capture stream ends, so that the handle refers to neither the stream (destroyed
    /// with the capture) nor the graph's workspace when it is destroyed.
    pub(crate) fn detach(&self) {
        // SAFETY: a live handle; the null stream always exists. `cublasSetStream` resets the
        // workspace to the handle's default pool. Nothing is queued.
        let _ = unsafe { cudarc::cublas::sys::cublasSetStream_v2(self.0, std::ptr::null_mut()) };
    }
}

impl Drop for BlasHandle {
    fn drop(&mut self) {
        // SAFETY: made by `cublasCreate` for this value and destroyed once, after the graph and
        // its executable (a field of `Graph`, dropped after `Graph::drop`, and `GraphExec`
        // drops its graph after destroying the executable). A drop cannot report a failure.
        let _ = unsafe { cudarc::cublas::result::destroy_handle(self.0) };
    }
}
