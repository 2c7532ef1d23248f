//! [`ReductionFn`]: a [`ReductionKernel`] declared at compile time by `#[reduction(…)]`, built
//! once per process on its first use and then launched like the run-time form (compiled once
//! per context, through the same per-context cache).

use std::sync::OnceLock;

use ndarray::IxDyn;

use crate::driver::stream::Stream;
use crate::error::Result;
use crate::gpuarray::array::core::DeviceArray;
use crate::gpuarray::elements::element::Element;
use crate::gpuarray::kernels::args::KernelArg;
use crate::gpuarray::reduce::kernel::ReductionKernel;

/// The kernel of one `#[reduction]` function: its name, C arguments and expressions, as the
/// macro wrote them, and the [`ReductionKernel`] made from them on first use (once per process;
/// each context then compiles each variant once, as any `ReductionKernel`).
///
/// The macro emits one `static` of this type per declared function, reachable as
/// `name::KERNEL`; [`kernel`](Self::kernel) gives the run-time kernel, for its other forms
/// ([`reduce_axis`](ReductionKernel::reduce_axis), `reduce_into`, ...) and its
/// [`source`](ReductionKernel::source).
#[derive(Debug)]
pub struct ReductionFn<R: Element> {
    name: &'static str,
    arguments: &'static str,
    map: &'static str,
    reduce: &'static str,
    neutral: &'static str,
    post_map: &'static str,
    kernel: OnceLock<ReductionKernel<R>>,
}

impl<R: Element> ReductionFn<R> {
    /// The reduction `name` with C `arguments` (`"const float *x"`) and the expressions of
    /// [`ReductionKernel::new`] and [`post_map`](ReductionKernel::post_map); nothing is read
    /// until the first use.
    pub const fn new(
        name: &'static str,
        arguments: &'static str,
        map: &'static str,
        reduce: &'static str,
        neutral: &'static str,
        post_map: &'static str,
    ) -> Self {
        ReductionFn {
            name,
            arguments,
            map,
            reduce,
            neutral,
            post_map,
            kernel: OnceLock::new(),
        }
    }

    /// The C argument list.
    pub fn arguments(&self) -> &'static str {
        self.arguments
    }

    /// The run-time kernel, made on the first call (the macro checked the arguments at build
    /// time, so this fails only where the two disagree, which would be a bug of the macro).
    pub fn kernel(&self) -> Result<&ReductionKernel<R>> {
        if let Some(k) = self.kernel.get() {
            return Ok(k);
        }
        let k = ReductionKernel::<R>::with_accumulator(
            self.name,
            self.arguments,
            self.map,
            self.reduce,
            self.neutral,
            (R::c_name(), "", std::mem::size_of::<R>()),
        )?
        .post_map(self.post_map);
        // Two threads may both make it; the first stored wins, and both are the same kernel.
        Ok(self.kernel.get_or_init(|| k))
    }

    /// Reduces `args` (one per declared argument, in order) over every axis into a new 0-d
    /// array, on `stream` or on the legacy default stream:
    /// [`ReductionKernel::on`]`(stream).reduce(args)` / [`reduce`](ReductionKernel::reduce).
    pub fn reduce<'a>(
        &self,
        stream: Option<&Stream>,
        args: impl IntoIterator<Item = KernelArg<'a>>,
    ) -> Result<DeviceArray<R, IxDyn>> {
        let k = self.kernel()?;
        match stream {
            Some(s) => k.on(s).reduce(args),
            None => k.reduce(args),
        }
    }
}
