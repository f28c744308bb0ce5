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
    /// Two `f32`s, real then imaginary (XLA's `C64`).
    C64,
    /// Two `f64`s, real then imaginary (XLA's `C128`).
    C128,
    /// The 8-bit floats of OCP, XLA and ml_dtypes, one byte each: `E`
    /// exponent and `M` mantissa bits; `FN` finite (no infinities), `UZ`
    /// unsigned zero (NaN at the negative zero's pattern), `B11` bias 11,
    /// `E8M0FNU` a scale of exponent bits only.
    F8E5M2,
    F8E4M3FN,
    F8E4M3B11FNUZ,
    F8E5M2FNUZ,
    F8E4M3FNUZ,
    F8E4M3,
    F8E3M4,
    F8E8M0FNU,
    /// The sub-byte types. On the host each element takes one byte, its
    /// value in the low bits (as ml_dtypes and IFRT's host buffers hold
    /// them); a device may pack them.
    I2,
    I4,
    U2,
    U4,
    /// The 4-bit float of OCP's MX formats: 1 sign, 2 exponent and 1
    /// mantissa bits, finite.
    F4E2M1FN,
}

impl DType {
    /// Every dtype, in a stable order.
    pub const ALL: [DType; 28] = [
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
        DType::C64,
        DType::C128,
        DType::F8E5M2,
        DType::F8E4M3FN,
        DType::F8E4M3B11FNUZ,
        DType::F8E5M2FNUZ,
        DType::F8E4M3FNUZ,
        DType::F8E4M3,
        DType::F8E3M4,
        DType::F8E8M0FNU,
        DType::I2,
        DType::I4,
        DType::U2,
        DType::U4,
        DType::F4E2M1FN,
    ];

    /// Bytes per element on the host (a `bool` takes one byte, as in XLA's
    /// layout, and so does each sub-byte element).
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I2 | DType::I4 | DType::U2 | DType::U4 | DType::F4E2M1FN => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
            DType::F8E5M2
            | DType::F8E4M3FN
            | DType::F8E4M3B11FNUZ
            | DType::F8E5M2FNUZ
            | DType::F8E4M3FNUZ
            | DType::F8E4M3
            | DType::F8E3M4
            | DType::F8E8M0FNU => 1,
        }
    }

    /// Bits of one element's value: 2 or 4 for the sub-byte types, eight
    /// times the bytes for the others.
    pub fn bits(self) -> usize {
        match self {
            DType::I2 | DType::U2 => 2,
            DType::I4 | DType::U4 | DType::F4E2M1FN => 4,
            other => 8 * other.size_in_bytes(),
        }
    }

    /// Whether it is one of the 8-bit floats.
    pub fn is_float8(self) -> bool {
        self.name().starts_with("float8")
    }

    /// Whether its elements are narrower than a byte (on the host they
    /// still take one each).
    pub fn is_sub_byte(self) -> bool {
        self.bits() < 8
    }

    /// Whether it is a floating-point type (real or complex).
    pub fn is_float(self) -> bool {
        self.name().starts_with("float")
            || self.name().starts_with("complex")
            || self == DType::BF16
    }

    /// Whether NumPy's files cannot name it: ml_dtypes' one-byte types (the
    /// 8-bit floats and the sub-byte types), which `np.save` writes as raw
    /// bytes (`V1`).
    pub fn is_raw_byte(self) -> bool {
        self.is_float8() || self.is_sub_byte()
    }

    /// The value of one element of an 8-bit float type (`None` for other
    /// types): NaN and the infinities as the type encodes them.
    pub fn float8_value(self, byte: u8) -> Option<f64> {
        // (exponent bits, mantissa bits, bias, how the type marks NaN and
        // infinity)
        enum Special {
            /// IEEE: an all-ones exponent is infinity or NaN.
            Ieee,
            /// Finite: all ones (exponent and mantissa) is NaN.
            Fn,
            /// Finite, unsigned zero: the negative zero's pattern is NaN.
            Fnuz,
        }
        let (e_bits, m_bits, bias, special) = match self {
            DType::F8E5M2 => (5, 2, 15, Special::Ieee),
            DType::F8E4M3FN => (4, 3, 7, Special::Fn),
            DType::F8E4M3B11FNUZ => (4, 3, 11, Special::Fnuz),
            DType::F8E5M2FNUZ => (5, 2, 16, Special::Fnuz),
            DType::F8E4M3FNUZ => (4, 3, 8, Special::Fnuz),
            DType::F8E4M3 => (4, 3, 7, Special::Ieee),
            DType::F8E3M4 => (3, 4, 3, Special::Ieee),
            // A scale: 2^(e - 127), all ones NaN, no sign, no zero.
            DType::F8E8M0FNU => {
                return Some(if byte == 0xFF {
                    f64::NAN
                } else {
                    2f64.powi(i32::from(byte) - 127)
                })
            }
            _ => return None,
        };
        let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
        let e = i32::from((byte >> m_bits) & ((1 << e_bits) - 1));
        let m = f64::from(byte & ((1 << m_bits) - 1));
        let e_max = (1 << e_bits) - 1;
        match special {
            Special::Ieee if e == e_max => {
                return Some(if m == 0.0 {
                    sign * f64::INFINITY
                } else {
                    f64::NAN
                })
            }
            Special::Fn if byte & 0x7F == 0x7F => return Some(f64::NAN),
            Special::Fnuz if byte == 0x80 => return Some(f64::NAN),
            _ => {}
        }
        let scale = f64::from(1u32 << m_bits);
        Some(if e == 0 {
            sign * (m / scale) * 2f64.powi(1 - bias)
        } else {
            sign * (1.0 + m / scale) * 2f64.powi(e - bias)
        })
    }

    /// Whether it is complex.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
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
            DType::C64 => ("complex64", "complex<f32>"),
            DType::C128 => ("complex128", "complex<f64>"),
            DType::F8E5M2 => ("float8_e5m2", "f8E5M2"),
            DType::F8E4M3FN => ("float8_e4m3fn", "f8E4M3FN"),
            DType::F8E4M3B11FNUZ => ("float8_e4m3b11fnuz", "f8E4M3B11FNUZ"),
            DType::F8E5M2FNUZ => ("float8_e5m2fnuz", "f8E5M2FNUZ"),
            DType::F8E4M3FNUZ => ("float8_e4m3fnuz", "f8E4M3FNUZ"),
            DType::F8E4M3 => ("float8_e4m3", "f8E4M3"),
            DType::F8E3M4 => ("float8_e3m4", "f8E3M4"),
            DType::F8E8M0FNU => ("float8_e8m0fnu", "f8E8M0FNU"),
            DType::I2 => ("int2", "i2"),
            DType::I4 => ("int4", "i4"),
            DType::U2 => ("uint2", "ui2"),
            DType::U4 => ("uint4", "ui4"),
            DType::F4E2M1FN => ("float4_e2m1fn", "f4E2M1FN"),
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
    fn float8_values() {
        // Largest finite values and a subnormal, as ml_dtypes' finfo gives.
        let max = |d: DType| {
            (0..=255u8)
                .filter_map(|b| d.float8_value(b))
                .filter(|v| v.is_finite())
                .fold(f64::MIN, f64::max)
        };
        assert_eq!(max(DType::F8E4M3FN), 448.0);
        assert_eq!(max(DType::F8E5M2), 57344.0);
        assert_eq!(max(DType::F8E4M3FNUZ), 240.0);
        assert_eq!(max(DType::F8E5M2FNUZ), 57344.0);
        assert_eq!(max(DType::F8E4M3B11FNUZ), 30.0);
        assert_eq!(max(DType::F8E4M3), 240.0);
        assert_eq!(max(DType::F8E3M4), 15.5);
        assert_eq!(DType::F8E4M3FN.float8_value(0x01), Some(2f64.powi(-9)));
        assert_eq!(DType::F8E4M3FN.float8_value(0x38), Some(1.0));
        assert!(DType::F8E4M3FN.float8_value(0xFF).is_some_and(f64::is_nan));
        assert!(DType::F8E4M3FNUZ
            .float8_value(0x80)
            .is_some_and(f64::is_nan));
        assert_eq!(DType::F8E5M2.float8_value(0x7C), Some(f64::INFINITY));
        assert_eq!(DType::F8E8M0FNU.float8_value(127), Some(1.0));
        assert_eq!(DType::F32.float8_value(0), None);
        assert!(DType::ALL.iter().filter(|d| d.is_float8()).count() == 8);
        assert!(DType::ALL.iter().filter(|d| d.is_sub_byte()).count() == 5);
        assert!(DType::ALL
            .iter()
            .all(|d| !d.is_sub_byte() || d.size_in_bytes() == 1));
        assert!(DType::F4E2M1FN.is_float() && DType::C64.is_float() && !DType::I4.is_float());
    }

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_mlir(d.mlir_name()), Some(d));
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
    }
}
