//! Element types.
//!
//! [`DType`] names the element types the runtime moves around; [`Element`]
//! ties each to its Rust type so host data can be built and read back typed.
//! Host bytes are in the machine's native byte order, as PJRT's CPU plugins
//! expect them.

use std::fmt;

use half::{bf16, f16};

use crate::pjrt::sys;

/// An array element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// One byte, 0 or 1 (XLA's `PRED`).
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    /// bfloat16: 1 sign, 8 exponent and 7 mantissa bits.
    BF16,
    F32,
    F64,
}

impl DType {
    /// Every dtype, in a stable order.
    pub const ALL: [DType; 13] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    /// Bytes per element.
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// The name JAX and NumPy use (`float32`, `bfloat16`, `bool`...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    pub(crate) fn to_pjrt(self) -> sys::PJRT_Buffer_Type {
        match self {
            DType::Bool => sys::PJRT_Buffer_Type_PRED,
            DType::I8 => sys::PJRT_Buffer_Type_S8,
            DType::I16 => sys::PJRT_Buffer_Type_S16,
            DType::I32 => sys::PJRT_Buffer_Type_S32,
            DType::I64 => sys::PJRT_Buffer_Type_S64,
            DType::U8 => sys::PJRT_Buffer_Type_U8,
            DType::U16 => sys::PJRT_Buffer_Type_U16,
            DType::U32 => sys::PJRT_Buffer_Type_U32,
            DType::U64 => sys::PJRT_Buffer_Type_U64,
            DType::F16 => sys::PJRT_Buffer_Type_F16,
            DType::BF16 => sys::PJRT_Buffer_Type_BF16,
            DType::F32 => sys::PJRT_Buffer_Type_F32,
            DType::F64 => sys::PJRT_Buffer_Type_F64,
        }
    }

    /// `None` for PJRT types without a [`DType`] (complex, fp8, int4, token...).
    pub(crate) fn from_pjrt(ty: sys::PJRT_Buffer_Type) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.to_pjrt() == ty)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Rust type that is the element type of a [`DType`].
pub trait Element: Copy + Send + Sync + 'static {
    const DTYPE: DType;
    /// Appends the element's native-endian bytes.
    fn write_bytes(self, out: &mut Vec<u8>);
    /// Reads one element from exactly `size_in_bytes` native-endian bytes.
    fn read_bytes(bytes: &[u8]) -> Self;
}

macro_rules! numeric_element {
    ($($ty:ty => $dtype:ident),* $(,)?) => {$(
        impl Element for $ty {
            const DTYPE: DType = DType::$dtype;
            fn write_bytes(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
            fn read_bytes(bytes: &[u8]) -> Self {
                let mut raw = [0u8; std::mem::size_of::<$ty>()];
                raw.copy_from_slice(bytes);
                <$ty>::from_ne_bytes(raw)
            }
        }
    )*};
}

numeric_element!(
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f16 => F16, bf16 => BF16, f32 => F32, f64 => F64,
);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn write_bytes(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn read_bytes(bytes: &[u8]) -> Self {
        bytes.first().is_some_and(|b| *b != 0)
    }
}
