//! `!pw.array`: a logical array with optional placement and sharding.

use crate::ffi;
use melior::{
    ir::{
        attribute::{ArrayAttribute, FlatSymbolRefAttribute, StringAttribute},
        r#type::{IntegerType, RankedTensorType},
        Attribute, AttributeLike, Type, TypeLike,
    },
    Context,
};
use mlir_sys::{
    mlirIntegerTypeGetWidth, mlirIntegerTypeIsUnsigned, mlirShapedTypeGetDimSize,
    mlirShapedTypeGetElementType, mlirShapedTypeGetRank, mlirTypeIsABF16, mlirTypeIsAF16,
    mlirTypeIsAF32, mlirTypeIsAF64, mlirTypeIsAInteger, mlirTypeIsARankedTensor, MlirAttribute,
};
use pw_core::{geometry::Sharding, DType};

/// The Rust view of a `!pw.array<shape x dtype[, @mesh[, sharding]]>` type.
///
/// `mesh == None` is the location-agnostic form; `sharding == None` means the
/// sharding is not decided yet (the sharding pass decides it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayType {
    pub shape: Vec<i64>,
    pub dtype: DType,
    pub mesh: Option<String>,
    pub sharding: Option<Sharding>,
}

/// A ranked tensor type as pw reads it: the one reader of tensor shapes
/// (the tensor of an `!pw.array`, a computation's signature, the cost
/// model's operands). Dynamic dimensions are MLIR's negative marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub shape: Vec<i64>,
    /// None: an element type pw does not handle.
    pub dtype: Option<DType>,
}

impl Tensor {
    /// The tensor of type `t`; None when it is not a ranked tensor.
    pub fn read(t: Type) -> Option<Tensor> {
        let raw = t.to_raw();
        // SAFETY: the shape accessors are called only on a ranked tensor
        // type, which `t` is once checked.
        unsafe {
            if !mlirTypeIsARankedTensor(raw) {
                return None;
            }
            let rank = mlirShapedTypeGetRank(raw) as isize;
            Some(Tensor {
                shape: (0..rank)
                    .map(|d| mlirShapedTypeGetDimSize(raw, d))
                    .collect(),
                dtype: element_dtype(mlirShapedTypeGetElementType(raw)),
            })
        }
    }
}

/// Why a type could not be read as a pw array.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    #[error("expected a !pw.array type, found {0}")]
    NotArray(String),
    #[error("unsupported element type {0}")]
    UnsupportedElement(String),
}

impl ArrayType {
    /// Reads a `!pw.array` type.
    pub fn read(t: Type) -> Result<Self, TypeError> {
        let raw = t.to_raw();
        // SAFETY: all calls below take a valid type and only inspect it; the
        // pw accessors are called only once the type is known to be an array.
        unsafe {
            if !ffi::pwTypeIsAArray(raw) {
                return Err(TypeError::NotArray(t.to_string()));
            }
            let tensor = Type::from_raw(ffi::pwArrayTypeGetTensor(raw));
            let Some(Tensor { shape, dtype, .. }) = Tensor::read(tensor) else {
                return Err(TypeError::NotArray(t.to_string()));
            };
            let dtype = dtype.ok_or_else(|| {
                TypeError::UnsupportedElement(
                    Type::from_raw(mlirShapedTypeGetElementType(tensor.to_raw())).to_string(),
                )
            })?;
            let mesh = optional(ffi::pwArrayTypeGetMesh(raw)).and_then(crate::ops::symbol_value);
            // The type's own verifier checked the sharding's structure.
            let sharding = optional(ffi::pwArrayTypeGetSharding(raw))
                .map(|a| read_sharding(a).unwrap_or_default());
            Ok(Self {
                shape,
                dtype,
                mesh,
                sharding,
            })
        }
    }

    /// Builds the MLIR type.
    pub fn to_mlir<'c>(&self, context: &'c Context) -> Type<'c> {
        let dims: Vec<u64> = self.shape.iter().map(|&d| d as u64).collect();
        let tensor = RankedTensorType::new(&dims, element_type(context, self.dtype), None);
        let mesh = self
            .mesh
            .as_ref()
            .map(|m| FlatSymbolRefAttribute::new(context, m).into());
        let sharding = self
            .sharding
            .as_ref()
            .map(|s| sharding_attribute(context, s));
        let null = MlirAttribute {
            ptr: std::ptr::null(),
        };
        // SAFETY: the tensor type and attributes are valid and of the kinds
        // the constructor expects; null stands for an absent parameter.
        unsafe {
            Type::from_raw(ffi::pwArrayTypeGet(
                tensor.to_raw(),
                mesh.map_or(null, |a: Attribute| a.to_raw()),
                sharding.map_or(null, |a| a.to_raw()),
            ))
        }
    }

    /// Elements of the logical array; `None` if the count overflows.
    pub fn elements(&self) -> Option<i64> {
        self.shape
            .iter()
            .try_fold(1i64, |acc, &d| (d >= 0).then(|| acc.checked_mul(d))?)
    }

    /// Bytes of the logical array; `None` past `i64::MAX`.
    pub fn bytes(&self) -> Option<u64> {
        self.elements()?
            .checked_mul(self.dtype.size_in_bytes() as i64)
            .map(|b| b as u64)
    }

    /// Whether both describe arrays of the same shape and element type.
    pub fn same_tensor(&self, other: &ArrayType) -> bool {
        self.shape == other.shape && self.dtype == other.dtype
    }

    /// This array placed on `mesh` with `sharding`.
    pub fn placed(&self, mesh: Option<&str>, sharding: Option<Sharding>) -> Self {
        Self {
            shape: self.shape.clone(),
            dtype: self.dtype,
            mesh: mesh.map(str::to_owned),
            sharding,
        }
    }

    /// The tensor type a computation sees for this array.
    pub fn tensor_string(&self) -> String {
        let mut s = String::from("tensor<");
        for d in &self.shape {
            s.push_str(&format!("{d}x"));
        }
        s.push_str(self.dtype.mlir_name());
        s.push('>');
        s
    }
}

/// The type as pw prints it: `!pw.array<8x16xf32, @m, [{"x"}, {}]>`.
impl std::fmt::Display for ArrayType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("!pw.array<")?;
        for d in &self.shape {
            write!(f, "{d}x")?;
        }
        f.write_str(self.dtype.mlir_name())?;
        if let Some(mesh) = &self.mesh {
            write!(f, ", @{mesh}")?;
            if let Some(sharding) = &self.sharding {
                write!(f, ", {sharding}")?;
            }
        }
        f.write_str(">")
    }
}

fn optional<'c>(raw: MlirAttribute) -> Option<Attribute<'c>> {
    // SAFETY: a non-null attribute handle from the C API is valid.
    unsafe { (!raw.ptr.is_null()).then(|| Attribute::from_raw(raw)) }
}

/// Reads `[["x"], []]` (as stored) into a sharding; `None` unless it is
/// an array of arrays of strings.
pub fn read_sharding(attr: Attribute) -> Option<Sharding> {
    let dims = crate::ops::array_elements(attr)?
        .into_iter()
        .map(|dim| {
            crate::ops::array_elements(dim)?
                .into_iter()
                .map(crate::ops::string_value)
                .collect()
        })
        .collect::<Option<_>>()?;
    Some(Sharding { dims })
}

/// The stored form of a sharding: an array of arrays of axis names.
pub fn sharding_attribute<'c>(context: &'c Context, sharding: &Sharding) -> Attribute<'c> {
    let dims: Vec<Attribute> = sharding
        .dims
        .iter()
        .map(|axes| {
            let names: Vec<Attribute> = axes
                .iter()
                .map(|a| StringAttribute::new(context, a).into())
                .collect();
            ArrayAttribute::new(context, &names).into()
        })
        .collect();
    ArrayAttribute::new(context, &dims).into()
}

/// The element type of a builtin tensor as a [`DType`].
///
/// # Safety
/// `element` must be a valid type.
pub(crate) unsafe fn element_dtype(element: mlir_sys::MlirType) -> Option<DType> {
    unsafe {
        if mlirTypeIsAF32(element) {
            Some(DType::F32)
        } else if mlirTypeIsABF16(element) {
            Some(DType::BF16)
        } else if mlirTypeIsAF16(element) {
            Some(DType::F16)
        } else if mlirTypeIsAF64(element) {
            Some(DType::F64)
        } else if mlirTypeIsAInteger(element) {
            let unsigned = mlirIntegerTypeIsUnsigned(element);
            match (mlirIntegerTypeGetWidth(element), unsigned) {
                (1, _) => Some(DType::Bool),
                (2, false) => Some(DType::I2),
                (4, false) => Some(DType::I4),
                (2, true) => Some(DType::U2),
                (4, true) => Some(DType::U4),
                (8, false) => Some(DType::I8),
                (16, false) => Some(DType::I16),
                (32, false) => Some(DType::I32),
                (64, false) => Some(DType::I64),
                (8, true) => Some(DType::U8),
                (16, true) => Some(DType::U16),
                (32, true) => Some(DType::U32),
                (64, true) => Some(DType::U64),
                _ => None,
            }
        } else {
            // The rest (complex, the 8-bit floats) by their spelling.
            DType::from_mlir(&Type::from_raw(element).to_string())
        }
    }
}

fn element_type(context: &Context, dtype: DType) -> Type<'_> {
    let raw = context.to_raw();
    // SAFETY: each constructor takes a live context (or a valid element
    // type) and returns a valid type owned by it.
    let made = |f: unsafe extern "C" fn(mlir_sys::MlirContext) -> mlir_sys::MlirType| unsafe {
        Type::from_raw(f(raw))
    };
    let complex =
        |element: Type| unsafe { Type::from_raw(mlir_sys::mlirComplexTypeGet(element.to_raw())) };
    match dtype {
        DType::Bool => IntegerType::new(context, 1).into(),
        DType::I8 => IntegerType::new(context, 8).into(),
        DType::I16 => IntegerType::new(context, 16).into(),
        DType::I32 => IntegerType::new(context, 32).into(),
        DType::I64 => IntegerType::new(context, 64).into(),
        DType::U8 => IntegerType::unsigned(context, 8).into(),
        DType::U16 => IntegerType::unsigned(context, 16).into(),
        DType::U32 => IntegerType::unsigned(context, 32).into(),
        DType::U64 => IntegerType::unsigned(context, 64).into(),
        DType::F16 => Type::float16(context),
        DType::BF16 => Type::bfloat16(context),
        DType::F32 => Type::float32(context),
        DType::F64 => Type::float64(context),
        DType::C64 => complex(Type::float32(context)),
        DType::C128 => complex(Type::float64(context)),
        DType::F8E5M2 => made(mlir_sys::mlirFloat8E5M2TypeGet),
        DType::F8E4M3FN => made(mlir_sys::mlirFloat8E4M3FNTypeGet),
        DType::F8E4M3B11FNUZ => made(mlir_sys::mlirFloat8E4M3B11FNUZTypeGet),
        DType::F8E5M2FNUZ => made(mlir_sys::mlirFloat8E5M2FNUZTypeGet),
        DType::F8E4M3FNUZ => made(mlir_sys::mlirFloat8E4M3FNUZTypeGet),
        DType::F8E4M3 => made(mlir_sys::mlirFloat8E4M3TypeGet),
        DType::F8E3M4 => made(mlir_sys::mlirFloat8E3M4TypeGet),
        DType::F8E8M0FNU => made(mlir_sys::mlirFloat8E8M0FNUTypeGet),
        DType::I2 => IntegerType::new(context, 2).into(),
        DType::I4 => IntegerType::new(context, 4).into(),
        DType::U2 => IntegerType::unsigned(context, 2).into(),
        DType::U4 => IntegerType::unsigned(context, 4).into(),
        DType::F4E2M1FN => made(mlir_sys::mlirFloat4E2M1FNTypeGet),
    }
}
