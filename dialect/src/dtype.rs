//! Element types of pw arrays.

use std::fmt;

/// The element types a pw array may hold, named as in XLA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Pred,
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
}

const NAMES: &[(DType, &str)] = &[
    (DType::Pred, "i1"),
    (DType::S8, "i8"),
    (DType::S16, "i16"),
    (DType::S32, "i32"),
    (DType::S64, "i64"),
    (DType::U8, "ui8"),
    (DType::U16, "ui16"),
    (DType::U32, "ui32"),
    (DType::U64, "ui64"),
    (DType::F16, "f16"),
    (DType::BF16, "bf16"),
    (DType::F32, "f32"),
    (DType::F64, "f64"),
];

impl DType {
    /// Parses the MLIR spelling of an element type (`f32`, `bf16`, `i1`, ...).
    pub fn from_mlir(name: &str) -> Option<Self> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(d, _)| *d)
    }

    /// The MLIR spelling of this element type.
    pub fn mlir_name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(d, _)| *d == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }

    /// Bytes per element (a `pred` takes one byte, as in XLA's layout).
    pub fn byte_size(self) -> u64 {
        match self {
            DType::Pred | DType::S8 | DType::U8 => 1,
            DType::S16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::S32 | DType::U32 | DType::F32 => 4,
            DType::S64 | DType::U64 | DType::F64 => 8,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mlir_name())
    }
}
