//! CUDA's vector types (`float4` is `Float4`), documented in the [`types`](super) module.

use crate::types::repr::DeviceRepr;

macro_rules! vector_type {
    ($(#[$doc:meta])* $name:ident, $c:expr, $t:ty, $align:literal, [$($f:ident),+], $n:literal) => {
        $(#[$doc])*
        #[doc = concat!("CUDA's `", $c, "`: ", stringify!($n), " × `", stringify!($t), "`, aligned to ", stringify!($align), " bytes.")]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        #[repr(C, align($align))]
        pub struct $name {
            $(
                #[doc = concat!("The `", stringify!($f), "` component.")]
                pub $f: $t,
            )+
        }

        impl $name {
            /// A vector from its components, like CUDA's `make_` function.
            #[inline]
            pub const fn new($($f: $t),+) -> $name {
                $name { $($f),+ }
            }

            /// Every component set to `v`.
            #[inline]
            pub const fn splat(v: $t) -> $name {
                $name { $($f: v),+ }
            }

            /// The CUDA C name of this type.
            pub const C_NAME: &'static str = $c;
        }

        impl From<[$t; $n]> for $name {
            #[inline]
            fn from(a: [$t; $n]) -> $name {
                let [$($f),+] = a;
                $name { $($f),+ }
            }
        }

        impl From<$name> for [$t; $n] {
            #[inline]
            fn from(v: $name) -> [$t; $n] {
                [$(v.$f),+]
            }
        }

        // SAFETY: repr(C) with CUDA's alignment, plain numeric fields (every bit pattern is
        // valid), no padding beyond what CUDA's own struct has; the sizes and alignments are
        // checked against gpu-cuda-source's table below, and that against NVRTC in the test suite.
        unsafe impl DeviceRepr for $name {}

        // The struct is written out here (`repr(align)` takes only a literal), the layout is
        // gpu-cuda-source's table, which the macros read: a difference fails this crate's build.
        const _: () = {
            let Some(t) = gpu_cuda_source::vectors::by_c_name($c) else {
                panic!(concat!("`", $c, "` is not in gpu_cuda_source::vectors::VECTOR_TYPES"))
            };
            assert!(
                t.size == std::mem::size_of::<$name>()
                    && t.align == std::mem::align_of::<$name>()
                    && t.lanes == $n,
                concat!("`", stringify!($name), "` differs from gpu-cuda-source's `", $c, "`")
            );
            assert!(
                gpu_cuda_source::vectors::const_str_eq(t.rust_name, stringify!($name)),
                concat!("gpu-cuda-source names `", $c, "` other than `", stringify!($name), "`")
            );
        };
    };
}

macro_rules! vector_family {
    ($t:ty, $c:literal, $n1:ident $a1:literal, $n2:ident $a2:literal, $n3:ident $a3:literal, $n4:ident $a4:literal) => {
        vector_type!($n1, concat!($c, "1"), $t, $a1, [x], 1);
        vector_type!($n2, concat!($c, "2"), $t, $a2, [x, y], 2);
        vector_type!($n3, concat!($c, "3"), $t, $a3, [x, y, z], 3);
        vector_type!($n4, concat!($c, "4"), $t, $a4, [x, y, z, w], 4);
    };
}

vector_family!(i8, "char", Char1 1, Char2 2, Char3 1, Char4 4);
vector_family!(u8, "uchar", UChar1 1, UChar2 2, UChar3 1, UChar4 4);
vector_family!(i16, "short", Short1 2, Short2 4, Short3 2, Short4 8);
vector_family!(u16, "ushort", UShort1 2, UShort2 4, UShort3 2, UShort4 8);
vector_family!(i32, "int", Int1 4, Int2 8, Int3 4, Int4 16);
vector_family!(u32, "uint", UInt1 4, UInt2 8, UInt3 4, UInt4 16);
vector_family!(i64, "long", Long1 8, Long2 16, Long3 8, Long4 16);
vector_family!(u64, "ulong", ULong1 8, ULong2 16, ULong3 8, ULong4 16);
vector_family!(i64, "longlong", LongLong1 8, LongLong2 16, LongLong3 8, LongLong4 16);
vector_family!(u64, "ulonglong", ULongLong1 8, ULongLong2 16, ULongLong3 8, ULongLong4 16);
vector_family!(f32, "float", Float1 4, Float2 8, Float3 4, Float4 16);
vector_family!(f64, "double", Double1 8, Double2 16, Double3 8, Double4 16);
// The pairs of 16-bit floats hold `half`'s types (the `half` feature).
#[cfg(feature = "half")]
vector_type!(
    /// Needs the `half` feature (on by default).
    Half2, "__half2", half::f16, 4, [x, y], 2
);
#[cfg(feature = "half")]
vector_type!(
    /// Needs the `half` feature (on by default).
    BFloat162, "__nv_bfloat162", half::bf16, 4, [x, y], 2
);

macro_rules! vector_table {
    ($($name:ident),* ; $($c_only:literal),* $(,)?) => {
        [
            $(($name::C_NAME, std::mem::size_of::<$name>(), std::mem::align_of::<$name>()),)*
            $(cuda_source_entry($c_only)),*
        ]
    };
}

/// gpu-cuda-source's entry for `c_name`: the table lists `__half2` and `__nv_bfloat162` whether or
/// not the `half` feature defines their structs (where it does, each struct is checked against this
/// same entry), so that an index into the table means one type in every build.
const fn cuda_source_entry(c_name: &str) -> (&'static str, usize, usize) {
    match gpu_cuda_source::vectors::by_c_name(c_name) {
        Some(t) => (t.c_name, t.size, t.align),
        None => panic!("a vector type missing from gpu_cuda_source::vectors::VECTOR_TYPES"),
    }
}

/// Calls the macro `$m` with every vector type (`$m!(Char1, ..., Double4)`), then, with the
/// `half` feature, with the two 16-bit float pairs (`$m!(Half2, BFloat162)`): the one list of
/// them that the impls over all vector types (kernel arguments, array elements) are made from.
macro_rules! for_each_vector_type {
    ($m:ident) => {
        $m!(
            Char1, Char2, Char3, Char4, UChar1, UChar2, UChar3, UChar4, Short1, Short2, Short3, Short4,
            UShort1, UShort2, UShort3, UShort4, Int1, Int2, Int3, Int4, UInt1, UInt2, UInt3, UInt4, Long1,
            Long2, Long3, Long4, ULong1, ULong2, ULong3, ULong4, LongLong1, LongLong2, LongLong3, LongLong4,
            ULongLong1, ULongLong2, ULongLong3, ULongLong4, Float1, Float2, Float3, Float4, Double1, Double2,
            Double3, Double4,
        );
        #[cfg(feature = "half")]
        $m!(Half2, BFloat162);
    };
}
pub(crate) use for_each_vector_type;

/// Every vector type: its CUDA C name, size and alignment in bytes, as this crate lays it out,
/// in the order of `gpu_cuda_source::vectors::VECTOR_TYPES` (each struct is checked against that
/// table when this crate compiles). The test suite compares each entry with what NVRTC reports.
pub const VECTOR_TYPES: &[(&str, usize, usize)] = &vector_table![
    Char1, Char2, Char3, Char4, UChar1, UChar2, UChar3, UChar4, Short1, Short2, Short3, Short4, UShort1,
    UShort2, UShort3, UShort4, Int1, Int2, Int3, Int4, UInt1, UInt2, UInt3, UInt4, Long1, Long2, Long3,
    Long4, ULong1, ULong2, ULong3, ULong4, LongLong1, LongLong2, LongLong3, LongLong4, ULongLong1,
    ULongLong2, ULongLong3, ULongLong4, Float1, Float2, Float3, Float4, Double1, Double2, Double3, Double4;
    "__half2", "__nv_bfloat162"
];

#[cfg(test)]
mod tests {
    use super::VECTOR_TYPES;

    #[test]
    fn the_table_is_gpu_cuda_sources_in_its_order() {
        // `launch::dynamic::VectorType` is an index into this table, and the macros name types
        // by gpu-cuda-source's: the two must list the same types, in the same order.
        let ours: Vec<_> = VECTOR_TYPES.to_vec();
        let theirs: Vec<_> = gpu_cuda_source::vectors::VECTOR_TYPES
            .iter()
            .map(|t| (t.c_name, t.size, t.align))
            .collect();
        assert_eq!(ours, theirs);
    }
}
