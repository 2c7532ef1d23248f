//! The element types NCCL moves and reduces, mapped at compile time, and its reduction ops.

use cudarc::nccl::sys;

use crate::types::repr::DeviceRepr;

/// An NCCL data type (`ncclDataType_t`): what [`NcclType::DATA_TYPE`] names for each element
/// type, and what errors print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// `ncclInt8`: [`i8`].
    I8,
    /// `ncclUint8`: [`u8`].
    U8,
    /// `ncclInt32`: [`i32`].
    I32,
    /// `ncclUint32`: [`u32`].
    U32,
    /// `ncclInt64`: [`i64`].
    I64,
    /// `ncclUint64`: [`u64`].
    U64,
    /// `ncclFloat16`: [`half::f16`].
    F16,
    /// `ncclBfloat16`: [`half::bf16`].
    BF16,
    /// `ncclFloat32`: [`f32`].
    F32,
    /// `ncclFloat64`: [`f64`].
    F64,
}

impl DataType {
    /// NCCL's value for the type.
    pub(crate) fn raw(self) -> sys::ncclDataType_t {
        use sys::ncclDataType_t as D;
        match self {
            DataType::I8 => D::ncclInt8,
            DataType::U8 => D::ncclUint8,
            DataType::I32 => D::ncclInt32,
            DataType::U32 => D::ncclUint32,
            DataType::I64 => D::ncclInt64,
            DataType::U64 => D::ncclUint64,
            DataType::F16 => D::ncclFloat16,
            DataType::BF16 => D::ncclBfloat16,
            DataType::F32 => D::ncclFloat32,
            DataType::F64 => D::ncclFloat64,
        }
    }

    /// The size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DataType::I8 | DataType::U8 => 1,
            DataType::F16 | DataType::BF16 => 2,
            DataType::I32 | DataType::U32 | DataType::F32 => 4,
            DataType::I64 | DataType::U64 | DataType::F64 => 8,
        }
    }
}

mod sealed {
    /// Keeps [`NcclType`](super::NcclType) to the types NCCL has a data type for.
    pub trait Sealed {}
}

/// An element type NCCL can move and reduce: `i8`, `u8`, `i32`, `u32`, `i64`, `u64`,
/// [`half::f16`], [`half::bf16`], `f32` and `f64`.
///
/// Sealed: NCCL has no other types, and a wrong mapping would reinterpret the bytes. Every
/// collective takes its send and receive buffers with one element type `T`, so a `u8` buffer
/// cannot receive what an `f32` buffer sends: that does not compile.
#[diagnostic::on_unimplemented(
    message = "NCCL has no data type for `{Self}`",
    note = "NCCL moves and reduces i8, u8, i32, u32, i64, u64, half::f16, half::bf16, f32 and f64"
)]
pub trait NcclType: DeviceRepr + sealed::Sealed {
    /// The NCCL data type of `Self`.
    const DATA_TYPE: DataType;
}

macro_rules! nccl_type {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl NcclType for $t {
            const DATA_TYPE: DataType = DataType::$d;
        }
    )*};
}

nccl_type!(
    i8 => I8,
    u8 => U8,
    i32 => I32,
    u32 => U32,
    i64 => I64,
    u64 => U64,
    half::f16 => F16,
    half::bf16 => BF16,
    f32 => F32,
    f64 => F64,
);

/// How a reduction combines the ranks' values (`ncclRedOp_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (integers wrap around).
    Sum,
    /// The product (integers wrap around).
    Prod,
    /// The maximum.
    Max,
    /// The minimum.
    Min,
    /// The mean over the ranks. For integer types NCCL divides the wrapped sum by the number
    /// of ranks, rounding toward zero.
    Avg,
}

impl ReduceOp {
    /// NCCL's value for the op.
    pub(crate) fn raw(self) -> sys::ncclRedOp_t {
        use sys::ncclRedOp_t as R;
        match self {
            ReduceOp::Sum => R::ncclSum,
            ReduceOp::Prod => R::ncclProd,
            ReduceOp::Max => R::ncclMax,
            ReduceOp::Min => R::ncclMin,
            ReduceOp::Avg => R::ncclAvg,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each type maps to the NCCL type of its size and kind, by NCCL's numbering.
    #[test]
    fn types_map_to_their_nccl_types() {
        fn check<T: NcclType>(raw: u32) {
            assert_eq!(T::DATA_TYPE.raw() as u32, raw, "{}", std::any::type_name::<T>());
            assert_eq!(T::DATA_TYPE.size(), std::mem::size_of::<T>());
        }
        check::<i8>(0);
        check::<u8>(1);
        check::<i32>(2);
        check::<u32>(3);
        check::<i64>(4);
        check::<u64>(5);
        check::<half::f16>(6);
        check::<f32>(7);
        check::<f64>(8);
        check::<half::bf16>(9);
    }

    #[test]
    fn ops_map_to_nccl_ops() {
        let ops = [
            ReduceOp::Sum,
            ReduceOp::Prod,
            ReduceOp::Max,
            ReduceOp::Min,
            ReduceOp::Avg,
        ];
        let raw: Vec<u32> = ops.iter().map(|o| o.raw() as u32).collect();
        assert_eq!(raw, [0, 1, 2, 3, 4]);
    }
}
