//! What the layers above the driver keep per context (the module cache of `driver::module`,
//! the staging pools of `launch`, the scans' tile status and the read-back slots of `gpuarray`): each kind in its own
//! slot of the context, made on first use, asked to give memory back on out-of-memory, and
//! dropped while the context still exists. The context knows the slots, not the types in them.

use std::any::Any;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The slots, one per kind of state.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    /// `driver::module::cache::ModuleCache`.
    Modules = 0,
    /// `launch::staging::ContextStaging`.
    Staging = 1,
    /// `driver::cudarc::CudarcState`.
    Cudarc = 2,
    /// `gpuarray::scan::status::ScanStatus`.
    #[cfg_attr(not(feature = "gpuarray"), allow(dead_code))]
    ScanStatus = 3,
    /// `gpuarray::array::readback::Readback`.
    #[cfg_attr(not(feature = "gpuarray"), allow(dead_code))]
    Readback = 4,
}

const SLOTS: usize = 5;

/// State a context keeps for a layer above it.
pub(crate) trait Extension: Any + Send + Sync {
    /// The slot it lives in.
    const SLOT: Slot;
    /// Gives back memory held for later (on out-of-memory, before one retry).
    fn reclaim(&self) {}
}

/// An extension with its type erased.
trait Erased: Send + Sync {
    fn reclaim(&self);
    fn as_any(&self) -> &dyn Any;
}

impl<T: Extension> Erased for T {
    fn reclaim(&self) {
        Extension::reclaim(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A context's slots.
#[derive(Default)]
pub(crate) struct Extensions {
    slots: [OnceLock<Box<dyn Erased>>; SLOTS],
}

impl Extensions {
    /// The state in `T`'s slot, made with `init` on first use (when two threads race, one's
    /// is kept and the other's dropped).
    #[inline]
    pub(crate) fn get_or_try_init<T: Extension>(&self, init: impl FnOnce() -> Result<T>) -> Result<&T> {
        let slot = &self.slots[T::SLOT as usize];
        if slot.get().is_none() {
            let _ = slot.set(Box::new(init()?));
        }
        slot.get()
            .and_then(|b| b.as_any().downcast_ref::<T>())
            // Each slot is set only with its own key's type above, so another type here is a
            // broken invariant of this module, not a caller's mistake: an internal error
            // (without formatting, so the check stays free on every prepare).
            .ok_or(Error::Internal {
                operation: "a context's state",
                broken: "a state slot holds another kind of state than its key",
            })
    }

    /// The state in `T`'s slot, if it was made.
    #[inline]
    pub(crate) fn get<T: Extension>(&self) -> Option<&T> {
        self.slots[T::SLOT as usize].get()?.as_any().downcast_ref::<T>()
    }

    /// Asks every extension to give back memory held for later.
    pub(crate) fn reclaim(&self) {
        for s in &self.slots {
            if let Some(e) = s.get() {
                e.reclaim();
            }
        }
    }

    /// Drops every extension (the context is closing, and still exists).
    pub(crate) fn clear(&mut self) {
        for s in &mut self.slots {
            drop(s.take());
        }
    }
}
