//! [`Group`]: several NCCL calls queued as one (`ncclGroupStart` ... `ncclGroupEnd`).

use crate::driver::memory::view::{DeviceRead, DeviceView, DeviceViewMut, DeviceWrite};
use crate::nccl::collectives::nccl_calls;
use crate::nccl::communicator::OnStream;
use crate::nccl::error::{NcclError, Result};
use crate::nccl::handle::Handle;
use crate::nccl::init::in_group;
use crate::nccl::op::{Kind, Op};
use crate::nccl::types::{NcclType, ReduceOp};
use crate::nccl::wait;

/// NCCL calls handed to NCCL together, as one group: what a rank needs for a send and a
/// receive that would otherwise wait for each other, and what a thread that drives several
/// ranks (a [`Comms`](crate::nccl::Comms)) needs for a collective across them.
///
/// Each method checks its call at once (typed errors, as the methods of [`Comm`](crate::nccl::Comm)) and keeps
/// it; [`Group::run`] hands them all to NCCL and returns once they are queued. The buffers stay
/// borrowed until then, so none can be freed, or written by other work, between the check and
/// the queuing. Each call takes a communicator (`&comm`, on its own stream) or
/// `comm.on(&stream)`.
///
/// ```no_run
/// use gpu_runtime::nccl::{Comms, Group};
/// use gpu_runtime::{Context, Device};
/// # fn main() -> gpu_runtime::nccl::Result<()> {
/// // A ring: each GPU sends its buffer to the next and receives from the previous.
/// let ctxs = (0..Device::count()?).map(|i| Context::new(Device::new(i)?)).collect::<Result<Vec<_>, _>>()?;
/// let comms = Comms::new(&ctxs)?;
/// let n = comms.len();
/// let send: Vec<_> = comms.iter().map(|c| c.context().to_device(&vec![c.rank() as u32; 256])).collect::<Result<_, _>>()?;
/// let mut recv: Vec<_> = comms.iter().map(|c| c.context().alloc_zeros::<u32>(256)).collect::<Result<_, _>>()?;
/// let mut group = Group::new();
/// for ((comm, s), r) in comms.iter().zip(&send).zip(&mut recv) {
///     group.send(comm, s, (comm.rank() + 1) % n)?;
///     group.recv(comm, r, (comm.rank() + n - 1) % n)?;
/// }
/// group.run()?;
/// assert_eq!(recv[0].to_vec()?[0], (n - 1) as u32);
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct Group<'a> {
    ops: Vec<Op<'a>>,
}

impl std::fmt::Debug for Group<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let calls: Vec<&str> = self.ops.iter().map(Op::name).collect();
        f.debug_struct("Group").field("calls", &calls).finish()
    }
}

/// Runs the calls `build` adds to a group, as one group: `nccl::group(|g| { g.send(..)?;
/// g.recv(..) })`.
pub fn group<'a>(build: impl FnOnce(&mut Group<'a>) -> Result<()>) -> Result<()> {
    let mut g = Group::new();
    build(&mut g)?;
    g.run()
}

impl<'a> Group<'a> {
    /// An empty group.
    pub fn new() -> Group<'a> {
        Group::default()
    }

    /// The number of calls kept.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when no call is kept.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Keeps `op`, once checked.
    pub(crate) fn push(&mut self, op: Result<Op<'a>>) -> Result<&mut Self> {
        self.ops.push(op?);
        Ok(self)
    }
}

/// [`Group`]'s methods, each keeping its call for [`Group::run`].
macro_rules! group_methods {
    ($($name:ident($($arg:ident: $t:ty),* $(,)?) = $op:ident($($e:expr),*);)*) => {
        impl<'a> Group<'a> {$(
            #[doc = concat!(
                "[`Comm::", stringify!($name), "`](crate::nccl::Comm::", stringify!($name), ") in the group."
            )]
            pub fn $name<T: NcclType>(
                &mut self,
                comm: impl Into<OnStream<'a>>,
                $($arg: $t),*
            ) -> Result<&mut Self> {
                self.push(Op::$op(comm.into(), $($e),*))
            }
        )*}
    };
}
nccl_calls!(group_methods, 'a);

impl Group<'_> {
    /// Hands every call to NCCL in one group and returns once NCCL has queued them (waiting at
    /// most the longest timeout of their communicators). On a failure NCCL cancels the group;
    /// a communicator that failed or timed out is aborted.
    pub fn run(self) -> Result<()> {
        let Some(first) = self.ops.first() else {
            return Ok(());
        };
        let blocking = first.comm.options.blocking;
        for op in &self.ops {
            op.comm.handle.get(op.name())?;
            if op.comm.options.blocking != blocking {
                return Err(NcclError::MixedBlocking);
            }
        }
        for op in &self.ops {
            op.order()?;
        }
        in_group(true, || self.ops.iter().try_for_each(|op| op.call().map(drop)))?;
        // A nonblocking group's calls are queued by NCCL's thread, which `ncclGroupEnd` only
        // starts: wait for each communicator (a blocking one answers at once).
        let mut handles: Vec<&Handle> = Vec::new();
        for op in &self.ops {
            if !handles.iter().any(|h| std::ptr::eq(*h, &op.comm.handle)) {
                handles.push(&op.comm.handle);
            }
        }
        let timeout = self
            .ops
            .iter()
            .map(|op| op.comm.options.timeout)
            .max()
            .unwrap_or_default();
        wait::until_queued(
            &handles,
            || format!("a group of {} NCCL calls", self.ops.len()),
            timeout,
        )
    }
}
