//! Element types on the host.
//!
//! [`DType`] is `pw-core`'s; [`Element`] ties each dtype to its Rust type so
//! host data can be built and read back typed. Host bytes are in the
//! machine's native byte order, as PJRT's CPU plugins expect them.

use half::{bf16, f16};

use pw_core::DType;

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
