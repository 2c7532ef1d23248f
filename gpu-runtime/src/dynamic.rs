//! Launches with argument types known only at run time (PyCUDA's `prepare("PiP")` and
//! `prepared_call`, and its `Function.__call__` with `drv.In`/`drv.Out`/`drv.InOut`), for
//! kernels from sources built at run time.
//!
//! ```no_run
//! use gpu_runtime::{Arg, Context, SourceModule};
//! let ctx = Context::default()?;
//! let module = SourceModule::new(
//!     "__global__ void multiply_them(float *dest, const float *a, const float *b) {
//!          int i = threadIdx.x; dest[i] = a[i] * b[i]; }",
//! )
//! .load(&ctx)?;
//! let (a, b) = (vec![1.5f32; 400], vec![2.0f32; 400]);
//! let mut dest = vec![0f32; 400];
//! // Types come from the C declaration; the host arrays are copied in, and `dest` back out.
//! module.get_function("multiply_them")?.call(
//!     1,
//!     400,
//!     &mut [Arg::host_out(&mut dest), Arg::host_in(&a), Arg::host_in(&b)],
//! )?;
//! assert_eq!(dest[0], 3.0);
//! # Ok::<(), gpu_runtime::Error>(())
//! ```
//!
//! Safety comes from two checks. [`Function::prepare_args`] compares the declared [`ArgType`]s with
//! the kernel's C declaration, read from the module's source. Each launch compares the
//! [`Arg`]s with the declared types (kind, constness, element size, context). A mismatch is an
//! [`Error::ArgumentMismatch`] and nothing is launched.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::time::Duration;

use cudarc::driver::sys;
use gpu_cdecl::{CType, Scalar};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::host::{HostSlice, HostSliceMut};
use crate::launch::Dim3;
use crate::memory::{DeviceRead, DeviceWrite};
use crate::module::Function;
use crate::ordering::{LaunchStream, StreamUses};
use crate::repr::DeviceRepr;
use crate::staging::Staging;
use crate::stream::Stream;

/// The type of one kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    /// `signed char`, `int8_t`.
    I8,
    /// `unsigned char`, `uint8_t`.
    U8,
    /// `short`.
    I16,
    /// `unsigned short`.
    U16,
    /// `int`.
    I32,
    /// `unsigned int`.
    U32,
    /// `long`, `long long`, `ptrdiff_t`.
    I64,
    /// `unsigned long`, `unsigned long long`, `size_t`.
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
    /// `half`, `__half`.
    F16,
    /// `__nv_bfloat16`.
    Bf16,
    /// `bool`.
    Bool,
    /// `const T *`: takes [`Arg::input`] or [`Arg::output`].
    ConstPtr,
    /// `T *`: takes [`Arg::output`] only.
    MutPtr,
}

/// One kernel argument for [`PreparedFunction::prepared_call`] and, with host arrays copied
/// in and out, [`PreparedFunction::call`].
///
/// Not `Clone`: an argument may hold a mutable borrow of host memory.
#[derive(Debug)]
pub enum Arg<'a> {
    /// An `i8`.
    I8(i8),
    /// A `u8`.
    U8(u8),
    /// An `i16`.
    I16(i16),
    /// A `u16`.
    U16(u16),
    /// An `i32`.
    I32(i32),
    /// A `u32`.
    U32(u32),
    /// An `i64`.
    I64(i64),
    /// A `u64`.
    U64(u64),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A `half::f16` (`half`, `__half`).
    F16(half::f16),
    /// A `half::bf16` (`__nv_bfloat16`).
    Bf16(half::bf16),
    /// A `bool`.
    Bool(bool),
    /// Device memory: made by [`Arg::input`] or [`Arg::output`].
    Ptr(PtrArg<'a>),
    /// Host memory copied to the device and/or back around the launch: made by
    /// [`Arg::host_in`], [`Arg::host_out`] or [`Arg::host_in_out`]. Only [`PreparedFunction::call`]
    /// and [`Function::call`] take it.
    Host(HostArg<'a>),
}

/// Which way a host argument is copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    In,
    Out,
    InOut,
}

/// Host memory passed to a kernel through a device copy (PyCUDA's `drv.In`, `drv.Out`,
/// `drv.InOut`), borrowed for the call.
#[derive(Debug)]
pub struct HostArg<'a> {
    /// The elements, or why there are none (an `ndarray` not contiguous in C order).
    ptr: std::result::Result<*mut u8, &'static str>,
    bytes: usize,
    elem_size: usize,
    direction: Direction,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl HostArg<'_> {
    fn checked_ptr(&self) -> Result<*mut u8> {
        self.ptr.map_err(|what| Error::NotContiguous { what })
    }
}

/// Device memory passed as a pointer, borrowed for the launch.
#[derive(Clone, Copy)]
pub struct PtrArg<'a> {
    ptr: sys::CUdeviceptr,
    ctx: &'a Context,
    mutable: bool,
    elem_size: usize,
    /// The record the launch orders its use with, when this crate tracks the memory.
    uses: Option<&'a StreamUses>,
}

impl std::fmt::Debug for PtrArg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtrArg")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("mutable", &self.mutable)
            .field("elem_size", &self.elem_size)
            .finish()
    }
}

impl PtrArg<'_> {
    /// Orders the launch's use on `stream`: after the last write for a read, after every use
    /// for a write.
    fn order_on(&self, stream: LaunchStream<'_>) -> Result<()> {
        match (self.uses, self.mutable) {
            (Some(u), false) => u.read_on(stream.inner()),
            (Some(u), true) => u.write_on(stream.inner()),
            (None, _) => Ok(()),
        }
    }
}

impl<'a> Arg<'a> {
    /// Device memory the kernel reads (a `const T *` parameter).
    pub fn input<T: 'a, B: DeviceRead<T> + ?Sized>(buffer: &'a B) -> Arg<'a> {
        let v = buffer.device_view();
        Arg::Ptr(PtrArg {
            ptr: v.device_ptr(),
            ctx: v.context(),
            mutable: false,
            elem_size: std::mem::size_of::<T>(),
            uses: v.uses(),
        })
    }

    /// Device memory the kernel may write (a `T *` parameter); borrowed mutably so nothing
    /// else reads it meanwhile.
    pub fn output<T: 'a, B: DeviceWrite<T> + ?Sized>(buffer: &'a mut B) -> Arg<'a> {
        let v = buffer.device_view_mut();
        Arg::Ptr(PtrArg {
            ptr: v.device_ptr(),
            ctx: v.context(),
            mutable: true,
            elem_size: std::mem::size_of::<T>(),
            uses: v.uses(),
        })
    }

    /// A host array the kernel reads (PyCUDA's `drv.In`): copied to the device before the
    /// launch. Fits a `const T *` or `T *` parameter.
    pub fn host_in<T: DeviceRepr, H: HostSlice<T> + ?Sized>(host: &'a H) -> Arg<'a> {
        let ptr = host
            .host_slice()
            .map(|s| (s.as_ptr() as *mut u8, std::mem::size_of_val(s)));
        Arg::host(ptr, std::mem::size_of::<T>(), Direction::In, "an In argument")
    }

    /// A host array the kernel writes (PyCUDA's `drv.Out`): copied back after the kernel has
    /// finished. Its previous contents are not sent. Fits a `T *` parameter.
    pub fn host_out<T: DeviceRepr, H: HostSliceMut<T> + ?Sized>(host: &'a mut H) -> Arg<'a> {
        let ptr = host
            .host_slice_mut()
            .map(|s| (s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)));
        Arg::host(ptr, std::mem::size_of::<T>(), Direction::Out, "an Out argument")
    }

    /// A host array the kernel reads and writes (PyCUDA's `drv.InOut`): copied to the device
    /// before the launch and back after it. Fits a `T *` parameter.
    pub fn host_in_out<T: DeviceRepr, H: HostSliceMut<T> + ?Sized>(host: &'a mut H) -> Arg<'a> {
        let ptr = host
            .host_slice_mut()
            .map(|s| (s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)));
        Arg::host(
            ptr,
            std::mem::size_of::<T>(),
            Direction::InOut,
            "an InOut argument",
        )
    }

    fn host(
        slice: Result<(*mut u8, usize)>,
        elem_size: usize,
        direction: Direction,
        what: &'static str,
    ) -> Arg<'a> {
        let (ptr, bytes) = match slice {
            Ok((p, b)) => (Ok(p), b),
            Err(_) => (Err(what), 0),
        };
        Arg::Host(HostArg {
            ptr,
            bytes,
            elem_size,
            direction,
            _borrow: PhantomData,
        })
    }

    fn describe(&self) -> &'static str {
        match self {
            Arg::I8(_) => "an i8",
            Arg::U8(_) => "a u8",
            Arg::I16(_) => "an i16",
            Arg::U16(_) => "a u16",
            Arg::I32(_) => "an i32",
            Arg::U32(_) => "a u32",
            Arg::I64(_) => "an i64",
            Arg::U64(_) => "a u64",
            Arg::F32(_) => "an f32",
            Arg::F64(_) => "an f64",
            Arg::F16(_) => "an f16",
            Arg::Bf16(_) => "a bf16",
            Arg::Bool(_) => "a bool",
            Arg::Ptr(p) if p.mutable => "an output buffer (Arg::output)",
            Arg::Ptr(_) => "an input buffer (Arg::input)",
            Arg::Host(h) => match h.direction {
                Direction::In => "a host array to copy in (Arg::host_in)",
                Direction::Out => "a host array to copy out (Arg::host_out)",
                Direction::InOut => "a host array to copy in and out (Arg::host_in_out)",
            },
        }
    }

    /// Whether this argument may be passed for a parameter of type `t`.
    fn fits(&self, t: ArgType) -> bool {
        matches!(
            (self, t),
            (Arg::I8(_), ArgType::I8)
                | (Arg::U8(_), ArgType::U8)
                | (Arg::I16(_), ArgType::I16)
                | (Arg::U16(_), ArgType::U16)
                | (Arg::I32(_), ArgType::I32)
                | (Arg::U32(_), ArgType::U32)
                | (Arg::I64(_), ArgType::I64)
                | (Arg::U64(_), ArgType::U64)
                | (Arg::F32(_), ArgType::F32)
                | (Arg::F64(_), ArgType::F64)
                | (Arg::F16(_), ArgType::F16)
                | (Arg::Bf16(_), ArgType::Bf16)
                | (Arg::Bool(_), ArgType::Bool)
                | (Arg::Ptr(_), ArgType::ConstPtr)
        ) || matches!((self, t), (Arg::Ptr(p), ArgType::MutPtr) if p.mutable)
            || matches!((self, t), (Arg::Host(h), ArgType::ConstPtr) if h.direction == Direction::In)
            || matches!((self, t), (Arg::Host(_), ArgType::MutPtr))
    }

    /// The element size of a buffer argument.
    fn elem_size(&self) -> Option<usize> {
        match self {
            Arg::Ptr(p) => Some(p.elem_size),
            Arg::Host(h) => Some(h.elem_size),
            _ => None,
        }
    }

    /// The address of the value `cuLaunchKernel` copies the parameter from.
    fn param(&self) -> *mut c_void {
        let p: *const c_void = match self {
            Arg::I8(v) => (v as *const i8).cast(),
            Arg::U8(v) => (v as *const u8).cast(),
            Arg::I16(v) => (v as *const i16).cast(),
            Arg::U16(v) => (v as *const u16).cast(),
            Arg::I32(v) => (v as *const i32).cast(),
            Arg::U32(v) => (v as *const u32).cast(),
            Arg::I64(v) => (v as *const i64).cast(),
            Arg::U64(v) => (v as *const u64).cast(),
            Arg::F32(v) => (v as *const f32).cast(),
            Arg::F64(v) => (v as *const f64).cast(),
            Arg::F16(v) => (v as *const half::f16).cast(),
            Arg::Bf16(v) => (v as *const half::bf16).cast(),
            Arg::Bool(v) => (v as *const bool).cast(),
            Arg::Ptr(p) => (&p.ptr as *const sys::CUdeviceptr).cast(),
            // Replaced by the staged device copy's address before any launch.
            Arg::Host(_) => std::ptr::null(),
        };
        p as *mut c_void
    }
}

macro_rules! arg_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Arg<'_> {
            fn from(v: $t) -> Self {
                Arg::$v(v)
            }
        }
    )*};
}
arg_from!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64,
          u64 => U64, f32 => F32, f64 => F64, half::f16 => F16, half::bf16 => Bf16, bool => Bool);

fn scalar_type(s: Scalar) -> Option<ArgType> {
    Some(match s {
        Scalar::I8 => ArgType::I8,
        Scalar::U8 => ArgType::U8,
        Scalar::I16 => ArgType::I16,
        Scalar::U16 => ArgType::U16,
        Scalar::I32 => ArgType::I32,
        Scalar::U32 => ArgType::U32,
        Scalar::I64 | Scalar::Isize => ArgType::I64,
        Scalar::U64 | Scalar::Usize => ArgType::U64,
        Scalar::F32 => ArgType::F32,
        Scalar::F64 => ArgType::F64,
        Scalar::Bool => ArgType::Bool,
        Scalar::F16 => ArgType::F16,
        Scalar::Bf16 => ArgType::Bf16,
    })
}

fn scalar_size(s: Scalar) -> usize {
    match s {
        Scalar::I8 | Scalar::U8 | Scalar::Bool => 1,
        Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::Bf16 => 2,
        Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
        _ => 8,
    }
}

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
    function: Function,
    types: Vec<ArgType>,
    /// For pointer parameters to a scalar, the element size the buffer must have.
    elem_sizes: Vec<Option<usize>>,
}

/// A parameter's [`ArgType`] (None for types runtime-typed launches do not support) and, for a
/// pointer to a scalar, the element size.
fn declared_type(ty: &CType) -> (Option<ArgType>, Option<usize>) {
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
    fn mismatch(&self, detail: String) -> Error {
        Error::ArgumentMismatch {
            kernel: self.name().to_owned(),
            detail,
        }
    }

    /// The kernel's C declaration, from the module's source.
    fn declaration(&self) -> Result<gpu_cdecl::KernelDecl> {
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

    fn unsupported(&self, i: usize, text: &str) -> Error {
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
        self.launch(grid.into(), block.into(), self.function.legacy_stream(), args)
    }

    /// Launches on `stream`; returns without waiting.
    pub fn prepared_async_call(
        &self,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        stream: &Stream,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let s = self.function.stream_arg(stream)?;
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
        self.function
            .timed(|| self.launch(grid, block, self.function.legacy_stream(), args))
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

    fn launch(&self, grid: Dim3, block: Dim3, stream: LaunchStream<'_>, args: &[Arg<'_>]) -> Result<()> {
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

    fn check(&self, args: &[Arg<'_>], host_allowed: bool) -> Result<()> {
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
                    crate::module::foreign_arg(self.function.context(), p.ctx, 0)?;
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
fn order_args(args: &[Arg<'_>], stream: LaunchStream<'_>) -> Result<()> {
    args.iter().try_for_each(|a| match a {
        Arg::Ptr(p) => p.order_on(stream),
        _ => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_arrays_fit_the_pointers_their_direction_allows() {
        let (a, mut b, mut c) = (vec![1f32; 4], vec![0f32; 4], vec![0f32; 4]);
        let input = Arg::host_in(&a);
        let output = Arg::host_out(&mut b);
        let both = Arg::host_in_out(&mut c);
        // In reads only: fits `const T *` and `T *`; Out and InOut need a writable `T *`.
        assert!(input.fits(ArgType::ConstPtr) && input.fits(ArgType::MutPtr));
        assert!(!output.fits(ArgType::ConstPtr) && output.fits(ArgType::MutPtr));
        assert!(!both.fits(ArgType::ConstPtr) && both.fits(ArgType::MutPtr));
        assert!(!input.fits(ArgType::F32));
        assert_eq!(input.elem_size(), Some(4));
        assert!(output.describe().contains("host_out"));
        let Arg::Host(h) = &both else { panic!("{both:?}") };
        assert_eq!((h.bytes, h.direction), (16, Direction::InOut));
    }

    #[test]
    fn a_non_contiguous_array_is_refused_when_copied() {
        let m = ndarray::Array2::<f64>::zeros((3, 5));
        let t = m.t();
        let Arg::Host(h) = Arg::host_in(&t) else { panic!() };
        assert!(matches!(h.checked_ptr(), Err(Error::NotContiguous { .. })));
        let Arg::Host(h) = Arg::host_in(&m) else { panic!() };
        assert_eq!((h.checked_ptr().is_ok(), h.bytes, h.elem_size), (true, 120, 8));
    }
}
