//! By-value arguments other than scalars: CUDA vector types ([`VectorType`], [`VectorArg`]) and
//! `#[repr(C)]` structs ([`StructType`], [`StructArg`]).

use std::any::TypeId;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crate::types::repr::DeviceRepr;
use crate::types::vector::*;

/// One of CUDA's built-in vector types (`float4`, `int2`, `uchar4`, `__half2`, ...), as a
/// parameter type: what [`ArgType::Vector`](super::ArgType::Vector) holds.
///
/// ```
/// use gpu_runtime::launch::VectorType;
/// use gpu_runtime::types::Float4;
/// let t = VectorType::of::<Float4>();
/// assert_eq!((t.c_name(), t.size(), t.align()), ("float4", 16, 16));
/// assert_eq!(VectorType::from_c_name("float4"), Some(t));
/// // CUDA's aliases name the same types.
/// assert_eq!(VectorType::from_c_name("cuFloatComplex"), VectorType::from_c_name("float2"));
/// assert_eq!(VectorType::from_c_name("float5"), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct VectorType(u8);

impl VectorType {
    /// The entry of [`VECTOR_TYPES`] named `c_name` (evaluated at compile time for the
    /// [`CudaVector`] impls, so a name missing from the table fails the build).
    const fn named(c_name: &str) -> VectorType {
        let mut i = 0;
        while i < VECTOR_TYPES.len() {
            if gpu_cuda_source::vectors::const_str_eq(VECTOR_TYPES[i].0, c_name) {
                return VectorType(i as u8);
            }
            i += 1;
        }
        panic!("not a CUDA vector type")
    }

    /// The vector type of the Rust type `V` ([`Float4`] is `float4`).
    pub const fn of<V: CudaVector>() -> VectorType {
        V::TYPE
    }

    /// The vector type a C type name stands for: CUDA's own names (`float4`, `uchar2`,
    /// `__half2`), and the aliases CUDA's headers define for them (`half2`, `nv_bfloat162`,
    /// `cuFloatComplex` and `cuComplex` for `float2`, `cuDoubleComplex` for `double2`).
    pub fn from_c_name(name: &str) -> Option<VectorType> {
        let name = match name {
            "cuFloatComplex" | "cuComplex" => "float2",
            "cuDoubleComplex" => "double2",
            n => n,
        };
        // gpu-cuda-source's table knows CUDA's own aliases (`half2`); the index is ours.
        let c_name = gpu_cuda_source::vectors::by_c_name(name)?.c_name;
        VECTOR_TYPES
            .iter()
            .position(|(c, _, _)| *c == c_name)
            .map(|i| VectorType(i as u8))
    }

    /// CUDA's name for it (`float4`, `__half2`).
    pub const fn c_name(self) -> &'static str {
        VECTOR_TYPES[self.0 as usize].0
    }

    /// Its size in bytes.
    pub fn size(self) -> usize {
        VECTOR_TYPES[self.0 as usize].1
    }

    /// Its alignment in bytes.
    pub fn align(self) -> usize {
        VECTOR_TYPES[self.0 as usize].2
    }
}

impl fmt::Debug for VectorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.c_name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type for one of CUDA's vector types ([`Float4`], [`Int2`], [`Half2`], ...): what
/// [`Arg::vector`](super::Arg::vector) and `Arg::from` take. Implemented for every one of
/// [`types`' vector types](crate::types#vector-types) and nothing else (an [`Arg`](super::Arg)
/// copies the value's bytes by the size this trait promises).
pub trait CudaVector: DeviceRepr + sealed::Sealed {
    /// Which vector type this is.
    const TYPE: VectorType;
}

/// The largest vector type (`double4`, `longlong4`, ...) is 32 bytes, aligned to 16.
const VECTOR_BYTES: usize = 32;

macro_rules! cuda_vectors {
    ($($t:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl CudaVector for $t {
            const TYPE: VectorType = {
                assert!(std::mem::size_of::<$t>() <= VECTOR_BYTES && std::mem::align_of::<$t>() <= 16);
                VectorType::named($t::C_NAME)
            };
        }
    )*};
}
for_each_vector_type!(cuda_vectors);

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct VectorBytes([MaybeUninit<u8>; VECTOR_BYTES]);

/// A vector value passed by value (a copy of it, so the [`Arg`](super::Arg) borrows nothing):
/// made by [`Arg::vector`](super::Arg::vector) or `Arg::from(Float4::new(..))`.
#[derive(Clone, Copy)]
pub struct VectorArg {
    pub(super) ty: VectorType,
    bytes: VectorBytes,
}

impl VectorArg {
    pub(super) fn new<V: CudaVector>(v: V) -> VectorArg {
        let mut bytes = VectorBytes([MaybeUninit::uninit(); VECTOR_BYTES]);
        // SAFETY: `V` is at most VECTOR_BYTES long (asserted when `V::TYPE` is evaluated, which
        // `ty` below forces) and `bytes` is aligned to 16, at least `V`'s alignment; the copy
        // is of plain data (DeviceRepr) into storage of MaybeUninit bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&v as *const V).cast::<MaybeUninit<u8>>(),
                bytes.0.as_mut_ptr(),
                std::mem::size_of::<V>(),
            );
        }
        VectorArg { ty: V::TYPE, bytes }
    }

    /// Its vector type.
    pub fn vector_type(&self) -> VectorType {
        self.ty
    }

    /// The value as `V`, when it is one.
    pub fn get<V: CudaVector>(&self) -> Option<V> {
        // SAFETY: the bytes were copied from a `V` (same vector type, so the same Rust type:
        // each vector type has one Rust type) and are aligned for it.
        (self.ty == V::TYPE).then(|| unsafe { self.bytes.0.as_ptr().cast::<V>().read() })
    }

    pub(super) fn param(&self) -> *const c_void {
        self.bytes.0.as_ptr().cast()
    }
}

impl fmt::Debug for VectorArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VectorArg({:?})", self.ty)
    }
}

/// A `#[repr(C)]` struct as a parameter type: what [`ArgType::Struct`](super::ArgType::Struct)
/// holds.
///
/// [`of::<T>()`](Self::of) is the Rust type `T`: preparing checks that the C struct has its
/// size and alignment, and a launch takes only a `T` ([`Arg::by_value`](super::Arg::by_value)).
/// [`with_fields`](Self::with_fields) adds field offsets to compare with the C struct's, as
/// [`check_layout`](crate::compiler::layout::check_layout) does. [`bytes(n)`](Self::bytes) is
/// PyCUDA's `"16s"`: any `n`-byte value.
///
/// ```
/// use std::mem::offset_of;
/// use gpu_runtime::launch::StructType;
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Params { scale: f32, n: i32 }
/// // SAFETY: repr(C) plain data with the layout of the C struct.
/// unsafe impl gpu_runtime::DeviceRepr for Params {}
/// let t = StructType::of::<Params>()
///     .with_fields(&[("scale", offset_of!(Params, scale)), ("n", offset_of!(Params, n))]);
/// assert_eq!((t.size(), t.align(), t.fields().len()), (8, Some(4), 2));
/// assert_eq!(StructType::bytes(16).align(), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StructType {
    pub(super) rust: Option<(TypeId, &'static str)>,
    pub(super) size: usize,
    pub(super) align: Option<usize>,
    pub(super) fields: &'static [(&'static str, usize)],
}

impl StructType {
    /// The Rust type `T`, with its size and alignment.
    pub fn of<T: DeviceRepr>() -> StructType {
        StructType {
            rust: Some((TypeId::of::<T>(), std::any::type_name::<T>())),
            size: std::mem::size_of::<T>(),
            align: Some(std::mem::align_of::<T>()),
            fields: &[],
        }
    }

    /// Any value of `size` bytes (PyCUDA's `"16s"` in a format string).
    pub const fn bytes(size: usize) -> StructType {
        StructType {
            rust: None,
            size,
            align: None,
            fields: &[],
        }
    }

    /// Adds `(C field name, Rust offset)` pairs (`std::mem::offset_of!` gives the Rust side):
    /// preparing compares each with the C struct's `offsetof`, which needs the struct's
    /// definition in the module's source and NVRTC.
    pub const fn with_fields(mut self, fields: &'static [(&'static str, usize)]) -> StructType {
        self.fields = fields;
        self
    }

    /// The size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The alignment in bytes, when known (not for [`bytes`](Self::bytes)).
    pub fn align(&self) -> Option<usize> {
        self.align
    }

    /// The Rust type's name, for [`of`](Self::of).
    pub fn rust_name(&self) -> Option<&'static str> {
        self.rust.map(|r| r.1)
    }

    /// The fields given to [`with_fields`](Self::with_fields).
    pub fn fields(&self) -> &'static [(&'static str, usize)] {
        self.fields
    }
}

impl fmt::Debug for StructType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rust {
            Some((_, name)) => write!(f, "Struct({name}, {} bytes)", self.size),
            None => write!(f, "Struct({} bytes)", self.size),
        }
    }
}

/// A `#[repr(C)]` struct passed by value, borrowed for the launch: made by
/// [`Arg::by_value`](super::Arg::by_value).
#[derive(Clone, Copy)]
pub struct StructArg<'a> {
    ptr: *const c_void,
    pub(super) size: usize,
    pub(super) rust: (TypeId, &'static str),
    _borrow: PhantomData<&'a ()>,
}

impl<'a> StructArg<'a> {
    pub(super) fn new<T: DeviceRepr>(value: &'a T) -> StructArg<'a> {
        StructArg {
            ptr: (value as *const T).cast(),
            size: std::mem::size_of::<T>(),
            rust: (TypeId::of::<T>(), std::any::type_name::<T>()),
            _borrow: PhantomData,
        }
    }

    /// The Rust type's name.
    pub fn rust_name(&self) -> &'static str {
        self.rust.1
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    pub(super) fn param(&self) -> *const c_void {
        self.ptr
    }

    /// Whether it may be passed for a parameter of type `t`: the same size, and the same Rust
    /// type when `t` names one.
    pub(super) fn fits(&self, t: &StructType) -> bool {
        self.size == t.size && t.rust.is_none_or(|(id, _)| id == self.rust.0)
    }
}

impl fmt::Debug for StructArg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StructArg({}, {} bytes)", self.rust.1, self.size)
    }
}
