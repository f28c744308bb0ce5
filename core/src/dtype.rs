//! Element types: the one [`DType`] of pw, from the IR to the host bytes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An array element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DType {
    /// One byte, 0 or 1 (XLA's `PRED`, MLIR's `i1`).
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

    /// Bytes per element (a `bool` takes one byte, as in XLA's layout).
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
        self.names().0
    }

    /// The MLIR spelling (`f32`, `bf16`, `i1`, `ui8`...).
    pub fn mlir_name(self) -> &'static str {
        self.names().1
    }

    /// Parses the MLIR spelling of an element type.
    pub fn from_mlir(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.mlir_name() == name)
    }

    /// Parses the NumPy name of an element type.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    fn names(self) -> (&'static str, &'static str) {
        match self {
            DType::Bool => ("bool", "i1"),
            DType::I8 => ("int8", "i8"),
            DType::I16 => ("int16", "i16"),
            DType::I32 => ("int32", "i32"),
            DType::I64 => ("int64", "i64"),
            DType::U8 => ("uint8", "ui8"),
            DType::U16 => ("uint16", "ui16"),
            DType::U32 => ("uint32", "ui32"),
            DType::U64 => ("uint64", "ui64"),
            DType::F16 => ("float16", "f16"),
            DType::BF16 => ("bfloat16", "bf16"),
            DType::F32 => ("float32", "f32"),
            DType::F64 => ("float64", "f64"),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::DType;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_mlir(d.mlir_name()), Some(d));
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
    }
}
