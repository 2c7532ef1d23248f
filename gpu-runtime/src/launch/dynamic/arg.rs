//! The run-time typed arguments: [`ArgType`] (what a parameter is) and [`Arg`] (what is passed).

use std::ffi::c_void;
use std::marker::PhantomData;

use cudarc::driver::sys;
use gpu_cuda_source::Scalar;

use crate::driver::context::core::Context;
use crate::driver::memory::slices::{HostSlice, HostSliceMut};
use crate::driver::memory::view::{DeviceRead, DeviceWrite};
use crate::driver::ordering::StreamUses;
use crate::driver::texture::{SurfaceObject, TextureObject};
use crate::error::{CopyError, Error, Result};
use crate::launch::launch_stream::LaunchStream;
use crate::launch::params::KernelParam;
use crate::types::repr::DeviceRepr;

use super::value::{CudaVector, StructArg, StructType, VectorArg, VectorType};

/// The most parameters a prepared launch takes (kept on the stack, so launches allocate
/// nothing).
pub const MAX_ARGS: usize = 64;

/// The type of one kernel parameter, for [`Function::prepare_args`](crate::driver::Function::prepare_args).
/// A PyCUDA format string ([`Function::prepare_format`](crate::driver::Function::prepare_format),
/// [`ArgType::parse_format`]) is another way to write a list of them.
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
    /// `T *`: takes [`Arg::output`], or [`Arg::read_only`] when the kernel only reads it.
    MutPtr,
    /// A pointer, `const` or not (PyCUDA's `P`): [`prepare_args`](crate::driver::Function::prepare_args)
    /// makes it the declaration's [`ConstPtr`](Self::ConstPtr) or [`MutPtr`](Self::MutPtr).
    Ptr,
    /// A CUDA vector type by value (`float4`, `int2`, ...): takes [`Arg::vector`] of its Rust
    /// type ([`Float4`](crate::types::Float4), ...). [`ArgType::vector::<Float4>()`](ArgType::vector)
    /// names it by that type.
    Vector(VectorType),
    /// A `#[repr(C)]` struct by value: takes [`Arg::by_value`]. Checked against the C struct
    /// when prepared (its size, and more: see [`StructType`]).
    Struct(StructType),
    /// `cudaTextureObject_t`: takes a [`TextureObject`] ([`Texture::object`](crate::driver::Texture::object)).
    /// Preparing also takes [`U64`](Self::U64) (a format string's `Q`, as PyCUDA passes a
    /// handle) for such a parameter, and makes it this.
    Texture,
    /// `cudaSurfaceObject_t`: takes a [`SurfaceObject`] ([`Surface::object`](crate::driver::Surface::object)),
    /// and [`U64`](Self::U64) when preparing, as for [`Texture`](Self::Texture).
    Surface,
}

impl ArgType {
    /// The CUDA vector type of the Rust type `V`, by value: `ArgType::vector::<Float3>()` is
    /// `ArgType::Vector(VectorType::of::<Float3>())`, a `float3` parameter.
    ///
    /// ```
    /// use gpu_runtime::launch::{ArgType, VectorType};
    /// use gpu_runtime::types::Float3;
    /// assert_eq!(ArgType::vector::<Float3>(), ArgType::Vector(VectorType::of::<Float3>()));
    /// ```
    pub const fn vector<V: CudaVector>() -> ArgType {
        ArgType::Vector(VectorType::of::<V>())
    }
}

/// The matches over both enums that treat the plain scalars alike, from one table of
/// `(variant, Rust type, article)` rows: one row a scalar instead of a line in each match.
/// `f16`/`bf16` are written out, since `Arg`'s variants for them need the `half` feature.
macro_rules! scalar_matches {
    ($(($v:ident, $t:ty, $a:literal),)*) => {
        /// How messages name a parameter type: the Rust type for scalars, C for the rest.
        impl std::fmt::Display for ArgType {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let s = match self {
                    $(ArgType::$v => stringify!($t),)*
                    ArgType::F16 => "f16",
                    ArgType::Bf16 => "bf16",
                    ArgType::ConstPtr => "a `const T *` (ConstPtr)",
                    ArgType::MutPtr => "a `T *` (MutPtr)",
                    ArgType::Ptr => "a pointer (Ptr)",
                    ArgType::Vector(v) => return write!(f, "`{}` (Vector)", v.c_name()),
                    ArgType::Struct(t) => {
                        return match t.rust_name() {
                            Some(name) => write!(f, "the {}-byte struct `{name}`", t.size()),
                            None => write!(f, "a {}-byte value", t.size()),
                        }
                    }
                    ArgType::Texture => "`cudaTextureObject_t` (Texture)",
                    ArgType::Surface => "`cudaSurfaceObject_t` (Surface)",
                };
                f.write_str(s)
            }
        }

        impl Arg<'_> {
            pub(super) fn describe(&self) -> String {
                let s = match self {
                    $(Arg::$v(_) => concat!($a, " ", stringify!($t)),)*
                    #[cfg(feature = "half")]
                    Arg::F16(_) => "an f16",
                    #[cfg(feature = "half")]
                    Arg::Bf16(_) => "a bf16",
                    Arg::Ptr(p) if p.mutable => "an output buffer (Arg::output)",
                    Arg::Ptr(p) if p.read_only => "a read-only buffer (Arg::read_only)",
                    Arg::Ptr(_) => "an input buffer (Arg::input)",
                    Arg::Host(h) => match h.direction {
                        Direction::In => "a host array to copy in (Arg::host_in)",
                        Direction::Out => "a host array to copy out (Arg::host_out)",
                        Direction::InOut => "a host array to copy in and out (Arg::host_in_out)",
                    },
                    Arg::Vector(v) => return format!("an Arg::vector of `{:?}`", v.ty),
                    Arg::Struct(v) => {
                        return format!("an Arg::by_value of `{}` ({} bytes)", v.rust_name(), v.size)
                    }
                    Arg::Texture(_) => "a texture object",
                    Arg::Surface(_) => "a surface object",
                };
                s.to_owned()
            }

            /// Whether this argument may be passed for a parameter of type `t`.
            pub(super) fn fits(&self, t: ArgType) -> bool {
                matches!(
                    (self, t),
                    $((Arg::$v(_), ArgType::$v))|*
                        | (Arg::Ptr(_), ArgType::ConstPtr | ArgType::Ptr)
                        | (Arg::Host(_), ArgType::MutPtr | ArgType::Ptr)
                        | (Arg::Texture(_), ArgType::Texture)
                        | (Arg::Surface(_), ArgType::Surface)
                ) || match (self, t) {
                    (Arg::Ptr(p), ArgType::MutPtr) => p.mutable || p.read_only,
                    (Arg::Host(h), ArgType::ConstPtr) => h.direction == Direction::In,
                    (Arg::Vector(v), ArgType::Vector(t)) => v.ty == t,
                    (Arg::Struct(v), ArgType::Struct(t)) => v.fits(&t),
                    (Arg::Vector(v), ArgType::Struct(t)) => complex_as_vector(v.ty, &t),
                    #[cfg(feature = "half")]
                    (Arg::F16(_), ArgType::F16) | (Arg::Bf16(_), ArgType::Bf16) => true,
                    _ => false,
                }
            }

            /// The address of the value `cuLaunchKernel` copies the parameter from.
            pub(super) fn param(&self) -> *mut c_void {
                let p: *const c_void = match self {
                    $(Arg::$v(v) => (v as *const $t).cast(),)*
                    #[cfg(feature = "half")]
                    Arg::F16(v) => (v as *const half::f16).cast(),
                    #[cfg(feature = "half")]
                    Arg::Bf16(v) => (v as *const half::bf16).cast(),
                    Arg::Ptr(p) => (&p.ptr as *const sys::CUdeviceptr).cast(),
                    // Replaced by the staged device copy's address before any launch.
                    Arg::Host(_) => std::ptr::null(),
                    Arg::Vector(v) => v.param(),
                    Arg::Struct(v) => v.param(),
                    // The handle's first 8 bytes are the object (see KernelParam for TextureObject),
                    // as the #[kernel] macro passes it.
                    Arg::Texture(t) => (t as *const TextureObject<'_>).cast(),
                    Arg::Surface(s) => (s as *const SurfaceObject<'_>).cast(),
                };
                p as *mut c_void
            }
        }
    };
}
scalar_matches! {
    (I8, i8, "an"),
    (U8, u8, "a"),
    (I16, i16, "an"),
    (U16, u16, "a"),
    (I32, i32, "an"),
    (U32, u32, "a"),
    (I64, i64, "an"),
    (U64, u64, "a"),
    (F32, f32, "an"),
    (F64, f64, "an"),
    (Bool, bool, "a"),
}

/// One kernel argument for [`PreparedFunction::prepared_call`](crate::launch::PreparedFunction::prepared_call) and, with host arrays copied
/// in and out, [`PreparedFunction::call`](crate::launch::PreparedFunction::call).
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
    /// A `half::f16` (`half`, `__half`; the `half` feature).
    #[cfg(feature = "half")]
    F16(half::f16),
    /// A `half::bf16` (`__nv_bfloat16`; the `half` feature).
    #[cfg(feature = "half")]
    Bf16(half::bf16),
    /// A `bool`.
    Bool(bool),
    /// Device memory: made by [`Arg::input`] or [`Arg::output`].
    Ptr(PtrArg<'a>),
    /// Host memory copied to the device and/or back around the launch: made by
    /// [`Arg::host_in`], [`Arg::host_out`] or [`Arg::host_in_out`]. Only [`PreparedFunction::call`](crate::launch::PreparedFunction::call)
    /// and [`Function::call`](crate::driver::Function::call) take it.
    Host(HostArg<'a>),
    /// A CUDA vector value (`float4`, ...), copied: made by [`Arg::vector`] or `Arg::from`.
    Vector(VectorArg),
    /// A `#[repr(C)]` struct by value, borrowed: made by [`Arg::by_value`].
    Struct(StructArg<'a>),
    /// A texture object's handle (`cudaTextureObject_t`). It borrows the
    /// [`Texture`](crate::driver::Texture), which cannot be dropped while the argument lives;
    /// the launch is ordered after the writes to the memory behind it and keeps it alive.
    Texture(TextureObject<'a>),
    /// A surface object's handle (`cudaSurfaceObject_t`), ordered like a write to its array.
    Surface(SurfaceObject<'a>),
}

/// Which way a host argument is copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    In,
    Out,
    InOut,
}

/// Host memory passed to a kernel through a device copy (PyCUDA's `drv.In`, `drv.Out`,
/// `drv.InOut`), borrowed for the call.
#[derive(Debug)]
pub struct HostArg<'a> {
    /// The elements, or why there are none: the function that made it (`Arg::host_in`) and, for an
    /// `ndarray` array contiguous in neither C nor Fortran order with positive strides, its
    /// refusal naming its shape and strides (kept whole, so the launch reports it).
    pub(super) ptr: std::result::Result<*mut u8, (&'static str, Option<CopyError>)>,
    pub(super) bytes: usize,
    pub(super) elem_size: usize,
    pub(super) direction: Direction,
    pub(super) _borrow: PhantomData<&'a mut [u8]>,
}

impl HostArg<'_> {
    pub(super) fn checked_ptr(&self) -> Result<*mut u8> {
        match &self.ptr {
            Ok(p) => Ok(*p),
            Err((_, Some(refusal))) => Err(refusal.clone().into()),
            // Another host type's own refusal (a `HostSlice` implemented outside this crate).
            Err((what, None)) => Err(Error::NotContiguous { what }),
        }
    }
}

/// Device memory passed as a pointer, borrowed for the launch.
#[derive(Clone, Copy)]
pub struct PtrArg<'a> {
    pub(super) ptr: sys::CUdeviceptr,
    pub(super) ctx: &'a Context,
    pub(super) mutable: bool,
    /// Made by [`Arg::read_only`]: read, yet fits a writable `T *` parameter on the caller's
    /// word that the kernel only reads through it.
    pub(super) read_only: bool,
    pub(super) elem_size: usize,
    /// The record the launch orders its use with, when this crate tracks the memory.
    pub(super) uses: Option<&'a StreamUses>,
}

impl std::fmt::Debug for PtrArg<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtrArg")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("mutable", &self.mutable)
            .field("read_only", &self.read_only)
            .field("elem_size", &self.elem_size)
            .finish()
    }
}

impl PtrArg<'_> {
    /// Orders the launch's use on `stream`: after the last write for a read, after every use
    /// for a write.
    pub(super) fn order_on(&self, stream: LaunchStream<'_>) -> Result<()> {
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
            read_only: false,
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
            read_only: false,
            elem_size: std::mem::size_of::<T>(),
            uses: v.uses(),
        })
    }

    /// Device memory the kernel only reads through a pointer C leaves writable (a `T *`
    /// parameter of a kernel that never writes through it): the run-time `#[read_only]`.
    ///
    /// Borrowed shared, like [`Arg::input`], and ordered as a read, so other reads of the
    /// buffer may run at the same time; the element size is still checked against the C
    /// pointee. That the kernel does not write through it is the caller's word (as with a
    /// `const T *` the kernel could cast away): a kernel that does races with those reads.
    /// For a `const T *` parameter, [`Arg::input`] is the same.
    pub fn read_only<T: 'a, B: DeviceRead<T> + ?Sized>(buffer: &'a B) -> Arg<'a> {
        let v = buffer.device_view();
        Arg::Ptr(PtrArg {
            ptr: v.device_ptr(),
            ctx: v.context(),
            mutable: false,
            read_only: true,
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
        Arg::host(ptr, std::mem::size_of::<T>(), Direction::In, "Arg::host_in")
    }

    /// A host array the kernel writes (PyCUDA's `drv.Out`): copied back after the kernel has
    /// finished. Its previous contents are not sent. Fits a `T *` parameter.
    pub fn host_out<T: DeviceRepr, H: HostSliceMut<T> + ?Sized>(host: &'a mut H) -> Arg<'a> {
        let ptr = host
            .host_slice_mut()
            .map(|s| (s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)));
        Arg::host(ptr, std::mem::size_of::<T>(), Direction::Out, "Arg::host_out")
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
            "Arg::host_in_out",
        )
    }

    /// A CUDA vector type by value (a `float4` parameter takes a
    /// [`Float4`](crate::types::Float4)); `Arg::from(v)` is the same.
    pub fn vector<V: CudaVector>(v: V) -> Arg<'a> {
        Arg::Vector(VectorArg::new(v))
    }

    /// A `#[repr(C)]` struct by value, for a parameter declared as that C struct. The C
    /// struct's size must be `size_of::<T>()`, checked when the kernel is prepared (and its
    /// field offsets, for [`StructType::with_fields`]); only a `T` fits a parameter prepared
    /// with [`StructType::of::<T>()`](StructType::of). Borrowed until the launch has copied it.
    ///
    /// A CUDA vector type goes through [`Arg::vector`] instead.
    pub fn by_value<T: DeviceRepr>(value: &'a T) -> Arg<'a> {
        Arg::Struct(StructArg::new(value))
    }

    /// A texture object's handle, for a `cudaTextureObject_t` parameter; `Arg::from` is the same.
    pub fn texture(object: TextureObject<'a>) -> Arg<'a> {
        Arg::Texture(object)
    }

    /// A surface object's handle, for a `cudaSurfaceObject_t` parameter; `Arg::from` is the same.
    pub fn surface(object: SurfaceObject<'a>) -> Arg<'a> {
        Arg::Surface(object)
    }

    pub(super) fn host(
        slice: Result<(*mut u8, usize)>,
        elem_size: usize,
        direction: Direction,
        what: &'static str,
    ) -> Arg<'a> {
        let (ptr, bytes) = match slice {
            Ok((p, b)) => (Ok(p), b),
            Err(Error::Copy(mut refusal @ CopyError::HostArrayLayout { .. })) => {
                if let CopyError::HostArrayLayout { operation, .. } = &mut refusal {
                    *operation = what;
                }
                (Err((what, Some(refusal))), 0)
            }
            Err(_) => (Err((what, None)), 0),
        };
        Arg::Host(HostArg {
            ptr,
            bytes,
            elem_size,
            direction,
            _borrow: PhantomData,
        })
    }

    /// The element size of a buffer argument.
    pub(super) fn elem_size(&self) -> Option<usize> {
        match self {
            Arg::Ptr(p) => Some(p.elem_size),
            Arg::Host(h) => Some(h.elem_size),
            _ => None,
        }
    }
}

/// Whether a vector value may be passed for a declared complex parameter: `float2` for
/// `gpu_runtime::complex<float>` (which a declaration gives the Rust type `Complex32`),
/// `double2` for `<double>`, the same bytes. Generated kernels pass complex numbers so, as an
/// owned value (an [`Arg::by_value`] borrows).
fn complex_as_vector(v: VectorType, t: &StructType) -> bool {
    use crate::types::{Complex32, Complex64, Double2, Float2};
    (t.rust == StructType::of::<Complex32>().rust && v == VectorType::of::<Float2>())
        || (t.rust == StructType::of::<Complex64>().rust && v == VectorType::of::<Double2>())
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
          u64 => U64, f32 => F32, f64 => F64, bool => Bool);
#[cfg(feature = "half")]
arg_from!(half::f16 => F16, half::bf16 => Bf16);

impl<V: CudaVector> From<V> for Arg<'_> {
    fn from(v: V) -> Self {
        Arg::vector(v)
    }
}

impl<'a> From<TextureObject<'a>> for Arg<'a> {
    fn from(object: TextureObject<'a>) -> Self {
        Arg::Texture(object)
    }
}

impl<'a> From<SurfaceObject<'a>> for Arg<'a> {
    fn from(object: SurfaceObject<'a>) -> Self {
        Arg::Surface(object)
    }
}

impl Arg<'_> {
    /// Orders the launch's use of what the argument refers to on `stream`: device buffers
    /// (after the last write for a read, after every use for a write), and the memory behind
    /// texture and surface objects, as the `#[kernel]` macro's `by_value` does.
    pub(super) fn order_on(&self, stream: LaunchStream<'_>) -> Result<()> {
        match self {
            Arg::Ptr(p) => p.order_on(stream),
            Arg::Texture(t) => KernelParam::order_on(t, &stream),
            Arg::Surface(s) => KernelParam::order_on(s, &stream),
            _ => Ok(()),
        }
    }
}

pub(super) fn scalar_type(s: Scalar) -> Option<ArgType> {
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

pub(super) fn scalar_size(s: Scalar) -> usize {
    match s {
        Scalar::I8 | Scalar::U8 | Scalar::Bool => 1,
        Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::Bf16 => 2,
        Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
        _ => 8,
    }
}
