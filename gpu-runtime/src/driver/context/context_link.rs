//! How state the context may own reaches its context ([`ContextLink`]).

use std::sync::{Arc, Weak};

use cudarc::driver::sys;

use crate::driver::context::core::{Context, ContextInner};
use crate::driver::current::bind_raw;
use crate::driver::ordering::{Release, UseSet};
use crate::error::Result;

/// How something the context may own reaches the context: a pool users own holds it strongly
/// (it keeps the context alive); the context's own staging pools hold it weakly, since the
/// context owns them and a strong handle would keep it alive forever.
pub(crate) enum ContextLink {
    Strong(Context),
    Weak {
        inner: Weak<ContextInner>,
        raw: sys::CUcontext,
    },
}

// SAFETY: the raw handle is only used while its context lives (or closes), from any thread.
unsafe impl Send for ContextLink {}
// SAFETY: as above; nothing is mutated.
unsafe impl Sync for ContextLink {}

impl ContextLink {
    pub(crate) fn holding(ctx: &Context) -> ContextLink {
        ContextLink::Strong(ctx.clone())
    }

    pub(crate) fn weak(ctx: &Context) -> ContextLink {
        ContextLink::Weak {
            inner: Arc::downgrade(&ctx.inner),
            raw: ctx.raw(),
        }
    }

    /// The context, when this link keeps it alive.
    pub(crate) fn strong(&self) -> Option<&Context> {
        match self {
            ContextLink::Strong(c) => Some(c),
            ContextLink::Weak { .. } => None,
        }
    }

    fn get(&self) -> Option<Context> {
        match self {
            ContextLink::Strong(c) => Some(c.clone()),
            ContextLink::Weak { inner, .. } => inner.upgrade().map(|inner| Context { inner }),
        }
    }

    /// Runs `f` with the context; fails when it is being destroyed.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Context) -> Result<R>) -> Result<R> {
        match self.get() {
            Some(ctx) => f(&ctx),
            None => Err(crate::driver::result::driver_error(
                "a pool allocation",
                sys::CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED,
            )),
        }
    }

    /// Frees `what` once the uses in `uses` have finished (see `Graveyard::release_after`);
    /// while the context is being destroyed, its work has finished, and it is freed now.
    pub(crate) fn release_after(&self, uses: UseSet, what: Release) {
        let inner = match self {
            ContextLink::Strong(ctx) => Some(ctx.inner.clone()),
            ContextLink::Weak { inner, .. } => inner.upgrade(),
        };
        match (inner, self) {
            (Some(inner), _) => inner.graveyard.release_after(inner.raw, uses, what),
            (None, ContextLink::Weak { raw, .. }) if bind_raw(*raw).is_ok() => {
                // SAFETY: the context is closing, so its work has finished, and the owner gave
                // the resource up.
                unsafe { what.now() };
            }
            (None, _) => {}
        }
    }

    /// Gives back what the context holds for later (see [`ContextInner::reclaim`]).
    pub(crate) fn reclaim(&self) {
        if let Some(ctx) = self.get() {
            ctx.inner.reclaim();
        }
    }
}
