//! cuBLAS GEMMs in a [`Capture`] (the `cublas` feature): [`Capture::gemm`] and
//! [`Capture::gemm_strided_batched`] record `f32` matrix products into the graph, so that a
//! training step of kernels and products (examples/gpt2_train) is one graph.
//!
//! Why not cudarc's `CudaBlas` on the capture stream: its calls record each buffer's use on
//! the stream they run on (cudarc's `device_ptr`), and a capture stream never enters an
//! ordering record (an event recorded there cannot be waited for later, cudarc issue #590);
//! and a handle shared with uncaptured code would, while it pointed at the capture stream, put
//! another thread's product into the graph. So the capture makes a cuBLAS handle of its own,
//! bound to its private stream, kept by the [`Graph`](super::Graph) (and so by its
//! [`GraphExec`](super::GraphExec)) for as long as the graph exists, and notes the matrices as
//! the node's reads and writes like a kernel's buffers: each launch of the graph orders them
//! on its stream.
//!
//! The workspace: cuBLAS's default workspace belongs to the handle and would be shared by
//! every launch of the graph on any stream; a captured product must use memory the graph
//! owns (`cublasSetWorkspace`, as NVIDIA's guide for graph capture asks). Each product takes
//! a workspace token, borrowed for `'a` and recorded as written, so that two launches of the
//! graph on different streams are ordered on it like on any buffer they write.

use cudarc::cublas::sys::{cublasHandle_t, cublasMath_t, cublasStatus_t};
use cudarc::cublas::{GemmConfig, StridedBatchedConfig};

use crate::driver::cublas::{
    check_gemm, check_gemm_strided_batched, cublas_error, cublas_present, cublas_status,
};
use crate::error::{Error, GemmError, Result};

use super::super::blas_handle::BlasHandle;
use super::super::buffers::{GraphArg, GraphRead, GraphWrite};
use super::super::node_args::NodeArgs;
use super::super::nodes::{Access, NodeKind};
use super::Capture;

/// Checks that `address` may be given to `cublasSetWorkspace` (256-byte aligned).
pub(crate) fn check_workspace(address: u64) -> Result<()> {
    if !address.is_multiple_of(256) {
        return Err(GemmError::WorkspaceMisaligned { address }.into());
    }
    Ok(())
}

impl<'a> Capture<'a> {
    /// The capture's cuBLAS handle, made on first use and bound to the capture stream.
    fn blas_handle(&mut self) -> Result<cublasHandle_t> {
        if let Some(h) = &self.blas {
            return Ok(h.0);
        }
        cublas_present()?;
        self.ctx.bind()?;
        let handle = cudarc::cublas::result::create_handle().map_err(cublas_error("cublasCreate"))?;
        // On failure the handle is not destroyed: `cublasDestroy` synchronizes the device,
        // which would invalidate this live capture behind its back. A handle leaked on a
        // failure cuBLAS documents for invalid handles only.
        // SAFETY: a live handle and the capture's live stream, of the current context.
        cublas_status("cublasSetStream", unsafe {
            cudarc::cublas::sys::cublasSetStream_v2(handle, self.stream as _)
        })?;
        self.blas = Some(BlasHandle(handle));
        Ok(handle)
    }

    /// Sets whether the `f32` products recorded from now on may use TF32 tensor cores (as
    /// [`set_tf32`](crate::driver::cublas::set_tf32) for a handle of one's own; off,
    /// exact FP32, unless set).
    pub fn set_blas_tf32(&mut self, tf32: bool) -> Result<()> {
        self.live()?;
        let handle = self.blas_handle()?;
        let mode = if tf32 {
            cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH
        } else {
            cublasMath_t::CUBLAS_DEFAULT_MATH
        };
        // SAFETY: a live handle; a math mode touches no memory.
        cublas_status("cublasSetMathMode", unsafe {
            cudarc::cublas::sys::cublasSetMathMode(handle, mode)
        })
    }

    /// A captured product, cuBLAS's `name` made by `call` (given the handle and the matrices'
    /// device addresses `a`, `b`, `c`) on the capture stream. Before it: the capture still
    /// live, the tokens' lengths in elements passed to `check` (`a`, `b`, `c`), their contexts
    /// and the workspace's alignment checked, their uses noted, and the handle pointed at the
    /// workspace; after it, the node recorded, or the capture ended on a failure.
    #[allow(clippy::too_many_arguments)]
    fn gemm_node(
        &mut self,
        name: &'static str,
        a: &impl GraphRead<'a, f32>,
        b: &impl GraphRead<'a, f32>,
        c: &mut impl GraphWrite<'a, f32>,
        workspace: &mut impl GraphWrite<'a, u8>,
        check: impl FnOnce(usize, usize, usize) -> Result<()>,
        call: impl FnOnce(cublasHandle_t, *const f32, *const f32, *mut f32) -> cublasStatus_t,
    ) -> Result<()> {
        self.live()?;
        let (a, b, c, ws) = (
            a.graph_arg(),
            b.graph_arg(),
            c.graph_arg_mut(),
            workspace.graph_arg_mut(),
        );
        check(a.len, b.len, c.len)?;
        for arg in [&a, &b, &c, &ws] {
            if !arg.ctx.is(self.ctx.raw()) {
                return Err(Error::WrongContext {
                    what: "a matrix or the workspace of a captured gemm",
                });
            }
        }
        check_workspace(ws.ptr)?;
        let mut args = NodeArgs::new();
        args.record(&a, Access::Read);
        args.record(&b, Access::Read);
        args.record(&c, Access::Write);
        args.record(&ws, Access::Write);
        let handle = self.blas_handle()?;
        self.use_workspace(handle, &ws)?;
        let (a, b, c) = (a.ptr as *const f32, b.ptr as *const f32, c.ptr as *mut f32);
        let status = self.with_stream(|_| Ok(call(handle, a, b, c)))?;
        self.after_blas(name, status, args)
    }

    /// Points the handle at `workspace` (cuBLAS keeps it until the next `cublasSetStream` or
    /// `cublasSetWorkspace`; only this capture's products use the handle).
    fn use_workspace(&mut self, handle: cublasHandle_t, workspace: &GraphArg<'a>) -> Result<()> {
        let (ptr, bytes) = (workspace.ptr, workspace.bytes());
        let set = |_s| {
            // SAFETY: a live handle; the workspace lies in an allocation borrowed for 'a,
            // `bytes` long and 256-byte aligned (checked), which cuBLAS only notes here.
            let status = unsafe {
                cudarc::cublas::sys::cublasSetWorkspace_v2(handle, ptr as *mut std::ffi::c_void, bytes)
            };
            Ok(status)
        };
        let status = self.with_stream(set)?;
        cublas_status("cublasSetWorkspace", status)
    }

    /// Runs `f` with the context bound, while the capture is live.
    fn with_stream<R>(&mut self, f: impl FnOnce(cudarc::driver::sys::CUstream) -> Result<R>) -> Result<R> {
        self.live()?;
        self.ctx.bind()?;
        f(self.stream)
    }

    /// A cuBLAS status of a call on the capture stream: a failure ends the capture (the stream
    /// may hold part of the product's kernels).
    fn after_blas(&mut self, call: &'static str, status: cublasStatus_t, args: NodeArgs<'a>) -> Result<()> {
        if status != cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            let code = status as i32;
            let _ = self.fail_named(call, format!("{status:?}"), code as u32);
            return Err(Error::Cublas { call, code });
        }
        // The product may be several kernels (a split-K reduction): the graph notes it as one
        // node of the chain, as a copy, by its uses.
        self.nodes
            .push(std::ptr::null_mut(), NodeKind::Other, args.uses, Vec::new());
        Ok(())
    }

    /// Records `C = alpha op(A) op(B) + beta C` (`cublasSgemm`, column-major, `cfg` as cudarc's
    /// `Gemm::gemm` takes it) into the graph, after the checks of
    /// [`gemm`](crate::driver::cublas::gemm) (each matrix fits its buffer: a
    /// [`GemmError`] otherwise, and nothing is recorded).
    ///
    /// `workspace` is cuBLAS's scratch memory for this product (`cublasSetWorkspace`): any
    /// size, 256-byte aligned ([`GemmError::WorkspaceMisaligned`]); cuBLAS picks algorithms
    /// that fit it (NVIDIA suggests 32 MiB on Hopper). One workspace may serve every product
    /// of a capture (they run one after another). It is recorded as written by the graph, and
    /// `a`, `b` read and `c` written, so each launch of the graph orders them on its stream.
    pub fn gemm(
        &mut self,
        cfg: GemmConfig<f32>,
        a: &impl GraphRead<'a, f32>,
        b: &impl GraphRead<'a, f32>,
        c: &mut impl GraphWrite<'a, f32>,
        workspace: &mut impl GraphWrite<'a, u8>,
    ) -> Result<()> {
        let (alpha, beta) = (cfg.alpha, cfg.beta);
        let check = |a, b, c| check_gemm(&cfg, a, b, c);
        self.gemm_node("cublasSgemm", a, b, c, workspace, check, |handle, a, b, c| {
            // SAFETY: every matrix lies inside its buffer (checked), each borrowed for 'a, so
            // for as long as the graph can run; `c` is an exclusive token, so it overlaps
            // neither `a` nor `b`; the handle queues on the capture stream, so nothing runs
            // now; `alpha` and `beta` are host values read during the call
            // (CUBLAS_POINTER_MODE_HOST, the default).
            unsafe {
                cudarc::cublas::sys::cublasSgemm_v2(
                    handle, cfg.transa, cfg.transb, cfg.m, cfg.n, cfg.k, &alpha, a, cfg.lda, b, cfg.ldb,
                    &beta, c, cfg.ldc,
                )
            }
        })
    }

    /// Records `C_i = alpha op(A_i) op(B_i) + beta C_i` for `i < cfg.batch_size`
    /// (`cublasSgemmStridedBatched`), after the checks of
    /// [`gemm_strided_batched`](crate::driver::cublas::gemm_strided_batched) (every
    /// matrix fits its buffer, no two `C_i` overlap); `workspace` as for [`Capture::gemm`].
    pub fn gemm_strided_batched(
        &mut self,
        cfg: StridedBatchedConfig<f32>,
        a: &impl GraphRead<'a, f32>,
        b: &impl GraphRead<'a, f32>,
        c: &mut impl GraphWrite<'a, f32>,
        workspace: &mut impl GraphWrite<'a, u8>,
    ) -> Result<()> {
        let g = &cfg.gemm;
        let (alpha, beta) = (g.alpha, g.beta);
        let check = |a, b, c| check_gemm_strided_batched(&cfg, a, b, c);
        self.gemm_node(
            "cublasSgemmStridedBatched",
            a,
            b,
            c,
            workspace,
            check,
            |handle, a, b, c| {
                // SAFETY: as in `gemm`, for every matrix of every batch (checked, the results not
                // overlapping one another).
                unsafe {
                    cudarc::cublas::sys::cublasSgemmStridedBatched(
                        handle,
                        g.transa,
                        g.transb,
                        g.m,
                        g.n,
                        g.k,
                        &alpha,
                        a,
                        g.lda,
                        cfg.stride_a,
                        b,
                        g.ldb,
                        cfg.stride_b,
                        &beta,
                        c,
                        g.ldc,
                        cfg.stride_c,
                        cfg.batch_size,
                    )
                }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_captured_gemm_refuses_a_workspace_off_256_bytes() {
        assert!(check_workspace(0x7f00_0000_0000).is_ok());
        assert!(check_workspace(0x7f00_0000_0100).is_ok());
        assert!(matches!(
            check_workspace(0x7f00_0000_0080),
            Err(Error::Gemm(GemmError::WorkspaceMisaligned {
                address: 0x7f00_0000_0080
            }))
        ));
    }
}
