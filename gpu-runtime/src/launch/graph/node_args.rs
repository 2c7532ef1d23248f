//! The arguments of one kernel node as the generated graph methods collect them: each buffer
//! checked to belong to the kernel's context and recorded with how the kernel uses it (by-value
//! arguments are plain data: the macro refuses texture and surface objects in graphs). Nothing is recorded in the buffers' own
//! stream-ordering records here: the graph records its uses when it is launched.

use std::ffi::c_void;

use cudarc::driver::sys;

use crate::driver::module::function::Function;
use crate::error::Result;
use crate::launch::buffer_args::foreign_arg;
use crate::launch::cluster::LaunchEx;
use crate::launch::dims::Dim3;
use crate::launch::params::KernelParam;

use super::buffers::GraphArg;
use super::nodes::{Access, NodeKind, Use};

/// The buffers one kernel node uses, collected by the generated `capture`, `graph_node` and
/// `update_node` methods.
#[doc(hidden)]
#[derive(Default)]
pub struct NodeArgs<'a> {
    pub(crate) uses: Vec<Use<'a>>,
    /// The graphs whose conditions ([`ConditionalHandle`](crate::launch::ConditionalHandle))
    /// the kernel is given, which the graph checks are its own.
    pub(crate) conditions: Vec<u64>,
}

impl<'a> NodeArgs<'a> {
    /// No arguments yet.
    pub fn new() -> Self {
        NodeArgs {
            uses: Vec::new(),
            conditions: Vec::new(),
        }
    }

    /// A by-value argument: recorded when it is a graph's condition, returned as it is.
    #[inline(always)]
    pub fn value<T: KernelParam>(&mut self, value: T) -> T {
        if let Some(graph) = value.condition_of() {
            self.conditions.push(graph);
        }
        value
    }

    /// A buffer the kernel reads: its address, after checking its context.
    #[inline]
    pub fn read(&mut self, f: &Function, arg: &GraphArg<'a>) -> Result<sys::CUdeviceptr> {
        self.add(f, arg, Access::Read)
    }

    /// A buffer the kernel may write.
    #[inline]
    pub fn write(&mut self, f: &Function, arg: &GraphArg<'a>) -> Result<sys::CUdeviceptr> {
        self.add(f, arg, Access::Write)
    }

    /// [`read`](Self::read) for a pointer that may be null: `None` is the null pointer, no
    /// buffer, so nothing is recorded.
    #[inline]
    pub fn read_opt(&mut self, f: &Function, arg: Option<&GraphArg<'a>>) -> Result<sys::CUdeviceptr> {
        arg.map_or(Ok(0), |a| self.read(f, a))
    }

    /// [`write`](Self::write) for a pointer that may be null.
    #[inline]
    pub fn write_opt(&mut self, f: &Function, arg: Option<&GraphArg<'a>>) -> Result<sys::CUdeviceptr> {
        arg.map_or(Ok(0), |a| self.write(f, a))
    }

    /// Records `arg`'s allocation with `access` (once per allocation, the strongest access).
    pub(crate) fn add(
        &mut self,
        f: &Function,
        arg: &GraphArg<'a>,
        access: Access,
    ) -> Result<sys::CUdeviceptr> {
        if !arg.ctx.is(f.context().raw()) {
            foreign_arg(f.context(), arg.ctx)?;
        }
        self.record(arg, access);
        Ok(arg.ptr)
    }

    /// Records `arg`'s allocation with `access`, without a kernel (copies and memsets).
    pub(crate) fn record(&mut self, arg: &GraphArg<'a>, access: Access) {
        let Some(uses) = arg.uses else { return };
        let new = Use {
            uses,
            access,
            ptr: arg.ptr,
        };
        match self.uses.iter_mut().find(|u| u.key() == new.key()) {
            Some(u) => u.access = u.access.max(access),
            None => self.uses.push(new),
        }
    }
}

/// One kernel launch as every graph path takes it (`Capture::kernel`, `GraphBuilder::kernel`,
/// `GraphExec::update_kernel`): the generated `capture`, `graph_node` and `update_node` make it
/// once, after their compile-time typed argument checks.
#[doc(hidden)]
pub struct KernelNode<'a, 'p> {
    pub(crate) f: &'p Function,
    pub(crate) ex: &'p LaunchEx,
    pub(crate) grid: Dim3,
    pub(crate) block: Dim3,
    pub(crate) args: NodeArgs<'a>,
    params: &'p mut [*mut c_void],
}

impl<'a, 'p> KernelNode<'a, 'p> {
    /// The launch of `f` with `ex`, `grid` and `block`, its buffers in `args`.
    ///
    /// # Safety
    /// `params` holds one pointer per parameter of `f`, each to a value of the C parameter's
    /// type, its buffers are those of `args`, and its by-value arguments went through
    /// `args`' `value` (the macro's `graph_value`), so that a graph's condition is recorded.
    pub unsafe fn new(
        f: &'p Function,
        ex: &'p LaunchEx,
        grid: Dim3,
        block: Dim3,
        args: NodeArgs<'a>,
        params: &'p mut [*mut c_void],
    ) -> Self {
        KernelNode {
            f,
            ex,
            grid,
            block,
            args,
            params,
        }
    }

    /// What the graph's node list records of it.
    pub(crate) fn kind(&self) -> NodeKind {
        NodeKind::Kernel {
            function: self.f.clone(),
            plain: self.ex.is_plain(),
        }
    }

    /// The parameter array, as a stream launch takes it (`LaunchEx::launch`).
    pub(crate) fn params(&mut self) -> &mut [*mut c_void] {
        self.params
    }
}
