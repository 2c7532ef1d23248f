//! The record of a module's variables (`__device__` and `__constant__`): memory that any
//! kernel of the module may use without naming it. So every launch of one of its kernels is a
//! use of all of them, recorded on the launch's stream like a buffer argument's, and the host's
//! copies to and from a variable ([`Global::set`](crate::driver::Global::set) and `get`) are
//! ordered with those launches like copies of any allocation.
//!
//! What a launch is to the variables depends on what the module declares, found once, when it
//! is loaded (`driver/module/vars.rs`): nothing at all when it declares none (the launch path
//! is then what it was, one load and compare more); a read when they are all `__constant__`
//! (kernels cannot write constant memory); a write when one is `__device__`, or when the image
//! could not be read (kernels may write them).
//!
//! # The gate: why the record alone is not enough
//!
//! Launches share the module (`&Function` from any thread), yet a launch of a module with
//! `__device__` variables writes them, and the record's rule (`uses.rs`: a stream leaves the
//! record only under exclusive access, when no use can be between being recorded and being
//! queued) needs a write that takes streams out to be exclusive. A reader-writer lock, the
//! gate, held from recording a use to queueing its work, gives it:
//!
//! - a launch on a module of `__constant__` variables holds the gate shared while it records
//!   its read and queues: reads under a shared borrow only add to the record (the protocol of
//!   shared buffers, which `model.rs` checks);
//! - a launch on a module with `__device__` variables holds the gate shared while it checks the
//!   record's fast key and, when its stream is already the only one recorded and the writer,
//!   queues: a write there would change nothing, and under the shared gate nobody changes the
//!   record (changes need the exclusive gate). Otherwise it holds the gate exclusively while it
//!   records the write (waiting for every other stream's use) and queues;
//! - a host copy holds the gate exclusively while it records its use and queues the copy (a
//!   read completes before the gate is let go).
//!
//! So whenever a thread holds the gate exclusively, no other thread is between recording a use
//! of the record and queueing it: every use the record names is queued, and a fence recorded
//! now covers it. That is the exclusive access the rule asks for, and the exclusive write is
//! sound. Under the shared gate the record only grows, or does not change. Whatever the
//! interleaving, a launch and a host copy are ordered one way or the other: whichever takes the
//! gate second finds the other's use recorded and queued, and waits for it (on the GPU).
//!
//! The gate is only taken for modules with variables; a module of kernels alone has none.
//! Graph launches take the gates of their kernels' modules in address order (the only place
//! that holds more than one), so no two threads wait for each other's gates.

use std::sync::Arc;

use crate::error::Result;
use crate::sync::LockRank;

use super::streams::StreamInner;
use super::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use super::uses::StreamUses;

/// What a module's kernels may do to its variables, found when the module is loaded; ordered
/// from the least to the most a launch must be ordered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ModuleVars {
    /// The module declares no variable: a launch touches nothing here.
    None,
    /// Only `__constant__` variables: a launch reads them.
    Constant,
    /// At least one `__device__` variable, or an image that could not be read: a launch may
    /// write them.
    Device,
}

/// The stream-ordering record of a loaded module's variables, and its gate (see the module
/// docs).
pub(crate) struct ModuleUses {
    vars: ModuleVars,
    uses: StreamUses,
    gate: RwLock<()>,
}

impl std::fmt::Debug for ModuleUses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModuleUses")
            .field("vars", &self.vars)
            .field("uses", &self.uses)
            .finish()
    }
}

impl ModuleUses {
    /// The record of a module just loaded, whose variables are `vars`: no uses.
    pub(crate) fn new(vars: ModuleVars) -> ModuleUses {
        ModuleUses {
            vars,
            uses: StreamUses::new(),
            gate: RwLock::new(LockRank::ModuleGate, ()),
        }
    }

    /// What the module's kernels may do to its variables.
    #[inline(always)]
    pub(crate) fn vars(&self) -> ModuleVars {
        self.vars
    }

    /// Runs `queue`, which queues one launch of a kernel of the module on `s`, ordered after the
    /// uses of the module's variables it must follow and recorded so that later ones follow
    /// it. For a module without variables, `queue` alone.
    #[inline(always)]
    pub(crate) fn launch<R>(&self, s: &Arc<StreamInner>, queue: impl FnOnce() -> Result<R>) -> Result<R> {
        if self.vars == ModuleVars::None {
            return queue();
        }
        self.launch_with_vars(s, queue)
    }

    fn launch_with_vars<R>(&self, s: &Arc<StreamInner>, queue: impl FnOnce() -> Result<R>) -> Result<R> {
        if self.vars == ModuleVars::Constant {
            let _shared = self.shared();
            self.uses.read_on(s)?;
            return queue();
        }
        {
            let _shared = self.shared();
            if self.uses.is_sole_writer(s) {
                // Nothing to wait for or record, and nobody can change that before the launch
                // is queued: changes take the gate exclusively.
                return queue();
            }
        }
        let _exclusive = self.exclusive();
        self.uses.write_on(s)?;
        queue()
    }

    /// Runs `copy`, which records a host copy to or from a variable in the record it is given
    /// (as a copy of any allocation does: `write_on` for a write, `read_on` for a read) and
    /// queues it, with no launch of the module between being recorded and being queued
    /// meanwhile.
    pub(crate) fn host_copy<R>(&self, copy: impl FnOnce(&StreamUses) -> Result<R>) -> Result<R> {
        let _exclusive = self.exclusive();
        copy(&self.uses)
    }

    fn shared(&self) -> RwLockReadGuard<'_, ()> {
        self.gate.read()
    }

    fn exclusive(&self) -> RwLockWriteGuard<'_, ()> {
        self.gate.write()
    }
}
