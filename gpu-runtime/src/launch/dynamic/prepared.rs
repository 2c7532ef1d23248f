//! Checking [`Arg`]s against a kernel's declaration, and launching them.

use std::ffi::c_void;
use std::time::Duration;

use cudarc::driver::sys;
use gpu_cdecl::CType;

use super::arg::*;
use crate::driver::module::function::Function;
use crate::driver::stream::Stream;
use crate::error::{Error, Result};
use crate::launch::dims::Dim3;
use crate::launch::staging::Staging;
use crate::launch::stream::LaunchStream;

/// The most parameters a prepared launch takes (kept on the stack, so launches allocate
/// nothing).
pub const MAX_ARGS: usize = 64;

/// A kernel with its parameter types checked: launch it with [`Arg`]s.
///
/// ```no_run
/// use gpu_runtime::{Arg, Context, SourceModule, Stream};
/// let ctx = Context::default()?;
/// let module = SourceModule::new(
///     "__global__ void add(float *y, const float *x, int n) {
///          int i = blockIdx.x * blockDim.x + threadIdx.x;
///          if (i < n) y[i] += x[i]; }",
/// )
/// .load(&ctx)?;
/// // The types come from the C declaration: (MutPtr, ConstPtr, I32).
/// let add = module.get_function("add")?.prepare_declared()?;
/// let n = 1 << 20;
/// let x = ctx.to_device(&vec![1.0f32; n])?;
/// let mut y = ctx.alloc_zeros::<f32>(n)?;
/// let args = [Arg::output(&mut y), Arg::input(&x), Arg::I32(n as i32)];
/// let stream = Stream::new(&ctx)?;
/// add.prepared_async_call(n / 256, 256, &stream, &args)?;
/// stream.synchronize()?;
/// let t = add.prepared_timed_call(n / 256, 256, &args)?;
/// println!("add: {t:?}");
/// assert_eq!(y.to_vec()?, vec![2.0; n]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PreparedFunction {
    pub(super) function: Function,
    pub(super) types: Vec<ArgType>,
    /// For pointer parameters to a scalar, the element size the buffer must have.
    pub(super) elem_sizes: Vec<Option<usize>>,
}

/// A parameter's [`ArgType`] (None for types runtime-typed launches do not support) and, for a
/// pointer to a scalar, the element size.
pub(super) fn declared_type(ty: &CType) -> (Option<ArgType>, Option<usize>) {
    match ty {
        CType::Scalar(s) => (scalar_type(*s), None),
        CType::Pointer {
            pointee,
            pointee_const,
        } => {
            let elem = match **pointee {
                CType::Scalar(s) => Some(scalar_size(s)),
                _ => None,
            };
            let t = if *pointee_const {
                ArgType::ConstPtr
            } else {
                ArgType::MutPtr
            };
            (Some(t), elem)
        }
        _ => (None, None),
    }
}

impl Function {
    pub(super) fn mismatch(&self, detail: String) -> Error {
        Error::ArgumentMismatch {
            kernel: self.name().to_owned(),
            detail,
        }
    }

    /// The kernel's C declaration, from the module's source.
    pub(super) fn declaration(&self) -> Result<gpu_cdecl::KernelDecl> {
        let source = self._module.source.as_deref().ok_or_else(|| {
            self.mismatch("no CUDA C declaration is known for this kernel (it was loaded from an image); use the unsafe `prepare_args_unchecked`".into())
        })?;
        let base = self.name().split('<').next().unwrap_or("").trim();
        gpu_cdecl::find_kernel(source, base)
            .map_err(|e| self.mismatch(format!("its declaration could not be read: {e}")))
    }

    /// Declares the kernel's parameter types (PyCUDA's `prepare`), after checking them against
    /// the kernel's C declaration in the module's source.
    ///
    /// Kernels from an image ([`Module::from_image`](crate::Module::from_image)) have no known
    /// declaration: use [`prepare_args_unchecked`](Self::prepare_args_unchecked).
    ///
    /// ```no_run
    /// use gpu_runtime::{Arg, ArgType, Context, Error, SourceModule};
    /// let ctx = Context::default()?;
    /// let module = SourceModule::new(
    ///     "__global__ void fill(double *y, double v) { y[threadIdx.x] = v; }",
    /// )
    /// .load(&ctx)?;
    /// let f = module.get_function("fill")?;
    /// // A `float` passed for a `double` would be read as garbage; it is refused here instead.
    /// let wrong = f.prepare_args(&[ArgType::MutPtr, ArgType::F32]);
    /// assert!(matches!(wrong, Err(Error::ArgumentMismatch { .. })));
    /// let fill = f.prepare_args(&[ArgType::MutPtr, ArgType::F64])?;
    /// let mut y = ctx.alloc::<f64>(32)?;
    /// fill.prepared_call(1, 32, &[Arg::output(&mut y), Arg::F64(0.25)])?;
    /// assert_eq!(y.to_vec()?, vec![0.25; 32]);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn prepare_args(&self, arg_types: &[ArgType]) -> Result<PreparedFunction> {
        let decl = self.declaration()?;
        if decl.params.len() != arg_types.len() {
            return Err(self.mismatch(format!(
                "{} argument types were given but the kernel takes {} parameters",
                arg_types.len(),
                decl.params.len()
            )));
        }
        let mut elem_sizes = Vec::with_capacity(arg_types.len());
        for (i, (p, &t)) in decl.params.iter().zip(arg_types).enumerate() {
            match declared_type(&p.ty) {
                (Some(e), elem) if e == t => elem_sizes.push(elem),
                (Some(e), _) => {
                    return Err(self.mismatch(format!(
                        "parameter {i} (`{}`) is {e:?}, but {t:?} was given",
                        p.text
                    )))
                }
                (None, _) => return Err(self.unsupported(i, &p.text)),
            }
        }
        if arg_types.len() > MAX_ARGS {
            return Err(self.mismatch(format!("it has more than {MAX_ARGS} parameters")));
        }
        Ok(PreparedFunction {
            function: self.clone(),
            types: arg_types.to_vec(),
            elem_sizes,
        })
    }

    /// Prepares the kernel with the parameter types of its C declaration, read from the
    /// module's source: [`prepare_args`](Self::prepare_args) without writing the types out.
    pub fn prepare_declared(&self) -> Result<PreparedFunction> {
        let decl = self.declaration()?;
        if decl.params.len() > MAX_ARGS {
            return Err(self.mismatch(format!("it has more than {MAX_ARGS} parameters")));
        }
        let mut types = Vec::with_capacity(decl.params.len());
        let mut elem_sizes = Vec::with_capacity(decl.params.len());
        for (i, p) in decl.params.iter().enumerate() {
            match declared_type(&p.ty) {
                (Some(t), elem) => {
                    types.push(t);
                    elem_sizes.push(elem);
                }
                (None, _) => return Err(self.unsupported(i, &p.text)),
            }
        }
        Ok(PreparedFunction {
            function: self.clone(),
            types,
            elem_sizes,
        })
    }

    /// Launches with host arrays copied in and out (PyCUDA's `Function.__call__` with
    /// `drv.In`/`drv.Out`/`drv.InOut`), taking the parameter types from the C declaration, and
    /// waits. Each call reads the declaration again; for repeated calls,
    /// [`prepare_declared`](Self::prepare_declared) once and use [`PreparedFunction::call`].
    pub fn call(&self, grid: impl Into<Dim3>, block: impl Into<Dim3>, args: &mut [Arg<'_>]) -> Result<()> {
        self.prepare_declared()?.call(grid, block, args)
    }

    pub(super) fn unsupported(&self, i: usize, text: &str) -> Error {
        self.mismatch(format!(
            "parameter {i} (`{text}`) has a type that runtime-typed launches do not support; use the #[kernel] macro"
        ))
    }

    /// [`prepare_args`](Self::prepare_args) without the declaration check, for kernels loaded from an
    /// image. Arguments are still checked against `arg_types` at each launch.
    ///
    /// # Safety
    /// `arg_types` must match the kernel's parameters one for one, in order and in size:
    /// nothing can check this, and a wrong list makes the kernel read garbage parameters.
    pub unsafe fn prepare_args_unchecked(&self, arg_types: &[ArgType]) -> Result<PreparedFunction> {
        if arg_types.len() > MAX_ARGS {
            return Err(Error::ArgumentMismatch {
                kernel: self.name().to_owned(),
                detail: format!("more than {MAX_ARGS} parameters"),
            });
        }
        Ok(PreparedFunction {
            function: self.clone(),
            types: arg_types.to_vec(),
            elem_sizes: vec![None; arg_types.len()],
        })
    }
}

impl PreparedFunction {
    /// The kernel.
    pub fn function(&self) -> &Function {
        &self.function
    }

    /// The declared parameter types.
    pub fn arg_types(&self) -> &[ArgType] {
        &self.types
    }

    /// Launches on the legacy default stream.
    pub fn prepared_call(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        self.launch(
            grid.into(),
            block.into(),
            crate::launch::args::legacy_stream(&self.function),
            args,
        )
    }

    /// Launches on `stream`; returns without waiting.
    pub fn prepared_async_call(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        stream: &Stream,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let s = crate::launch::args::stream_arg(&self.function, stream)?;
        self.launch(grid.into(), block.into(), s, args)
    }

    /// Launches, waits, and returns the GPU time the kernel took.
    pub fn prepared_timed_call(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &[Arg<'_>],
    ) -> Result<Duration> {
        let (grid, block) = (grid.into(), block.into());
        crate::launch::raw::timed(&self.function, || {
            self.launch(
                grid,
                block,
                crate::launch::args::legacy_stream(&self.function),
                args,
            )
        })
    }

    /// Launches with host arrays ([`Arg::host_in`], [`Arg::host_out`], [`Arg::host_in_out`])
    /// copied to the device before the kernel and back after it, through pinned staging memory
    /// and pooled device memory as the `#[kernel]` convenience call does, and waits (which
    /// reports any error the kernel raised). Device buffers and scalars may be mixed in.
    pub fn call(&self, grid: impl Into<Dim3>, block: impl Into<Dim3>, args: &mut [Arg<'_>]) -> Result<()> {
        let (grid, block) = (grid.into(), block.into());
        self.check(args, true)?;
        let mut staging = Staging::new(&self.function)?;
        // The device copies, kept alive until `finish`; and their addresses, by argument.
        let mut copies = Vec::new();
        let mut addrs = [0 as sys::CUdeviceptr; MAX_ARGS];
        for (addr, a) in addrs.iter_mut().zip(args.iter_mut()) {
            let Arg::Host(h) = a else { continue };
            let ptr = h.checked_ptr()?;
            // SAFETY: `ptr` and `bytes` describe the slice the argument borrows for its whole
            // lifetime, mutably for Out and InOut; `args` is borrowed mutably here, so no other
            // access to it happens while the staging holds the slice.
            let buf = unsafe {
                match h.direction {
                    Direction::In => staging.input::<u8>(std::slice::from_raw_parts(ptr, h.bytes))?,
                    Direction::Out => staging.output::<u8>(std::slice::from_raw_parts_mut(ptr, h.bytes))?,
                    Direction::InOut => {
                        staging.input_output::<u8>(std::slice::from_raw_parts_mut(ptr, h.bytes))?
                    }
                }
            };
            *addr = buf.device_ptr();
            copies.push(buf);
        }
        staging.upload()?;
        let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
        for ((slot, a), addr) in params.iter_mut().zip(args.iter()).zip(&addrs) {
            *slot = match a {
                Arg::Host(_) => (addr as *const sys::CUdeviceptr).cast_mut().cast(),
                a => a.param(),
            };
        }
        let params = &mut params[..args.len()];
        staging.launch(|stream| {
            // Staged copies were ordered on this stream when staged.
            order_args(args, stream)?;
            // SAFETY: as in `launch`; each host argument is replaced by its staged device copy,
            // which lives in `copies` until the stream has finished (`finish` waits for it, and
            // `launch` and `upload` wait when they fail).
            unsafe { self.function.launch_raw(grid, block, stream.raw(), params) }
        })?;
        staging.finish()?;
        drop(copies);
        Ok(())
    }

    pub(super) fn launch(
        &self,
        grid: Dim3,
        block: Dim3,
        stream: LaunchStream<'_>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        self.check(args, false)?;
        let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
        for (slot, a) in params.iter_mut().zip(args) {
            *slot = a.param();
        }
        order_args(args, stream)?;
        // SAFETY: `check` proved one argument per parameter, each of the declared type (which
        // `prepare_args` matched with the C declaration, or the caller of `prepare_args_unchecked`
        // vouched for), buffers in this context and borrowed for the call, and each buffer's use
        // was ordered on the stream; each param points into `args`, alive until launch_raw
        // returns.
        unsafe {
            self.function
                .launch_raw(grid, block, stream.raw(), &mut params[..args.len()])
        }
    }

    pub(super) fn check(&self, args: &[Arg<'_>], host_allowed: bool) -> Result<()> {
        let mismatch = |detail: String| Error::ArgumentMismatch {
            kernel: self.function.name().to_owned(),
            detail,
        };
        if args.len() != self.types.len() {
            return Err(mismatch(format!(
                "{} arguments were passed but it was prepared with {}",
                args.len(),
                self.types.len()
            )));
        }
        for (i, ((a, &t), elem)) in args.iter().zip(&self.types).zip(&self.elem_sizes).enumerate() {
            if !a.fits(t) {
                return Err(mismatch(format!(
                    "argument {i} is {} but the parameter is {t:?}",
                    a.describe()
                )));
            }
            if let Arg::Host(_) = a {
                if !host_allowed {
                    return Err(mismatch(format!(
                        "argument {i} is {}, which only `call` takes (it copies host arrays in and out); pass device memory (Arg::input/Arg::output) to prepared_call",
                        a.describe()
                    )));
                }
            }
            if let Arg::Ptr(p) = a {
                if !p.ctx.is(self.function.context().raw()) {
                    crate::launch::args::foreign_arg(self.function.context(), p.ctx)?;
                }
            }
            if let (Some(size), Some(e)) = (a.elem_size(), *elem) {
                if size != e {
                    return Err(mismatch(format!(
                        "argument {i} is a buffer of {size}-byte elements but the parameter points to {e}-byte elements"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Orders each device buffer argument's use on `stream`.
pub(super) fn order_args(args: &[Arg<'_>], stream: LaunchStream<'_>) -> Result<()> {
    args.iter().try_for_each(|a| match a {
        Arg::Ptr(p) => p.order_on(stream),
        _ => Ok(()),
    })
}
