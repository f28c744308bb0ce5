//! Names of the pw ops and attributes, and small readers and builders.

use crate::array_type::ArrayType;
use melior::{
    ir::{
        attribute::{ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute},
        operation::OperationRef,
        operation::{OperationBuilder, OperationLike},
        Attribute, Identifier, Location, Operation, Type, Value, ValueLike,
    },
    Context,
};
use pw_core::geometry::Sharding;

pub const MESH: &str = "pw.mesh";
pub const CALL: &str = "pw.call";
pub const TRANSFER: &str = "pw.transfer";
pub const RESHARD: &str = "pw.reshard";
pub const COPY: &str = "pw.copy";
pub const SCATTER: &str = "pw.scatter";
pub const GATHER: &str = "pw.gather";
pub const ASSEMBLE: &str = "pw.assemble";
pub const FUNC: &str = "func.func";
pub const RETURN: &str = "func.return";
pub const MODULE: &str = "builtin.module";

pub const ATTR_CALLEE: &str = "callee";
pub const ATTR_MESH: &str = "mesh";
pub const ATTR_IN_SHARDINGS: &str = "in_shardings";
pub const ATTR_PIECES: &str = "pieces";
pub const ATTR_SYM_NAME: &str = "sym_name";
pub const ATTR_AXIS_NAMES: &str = "axis_names";
pub const ATTR_AXIS_SIZES: &str = "axis_sizes";
pub const ATTR_KIND: &str = "kind";
pub const ATTR_SAME_ISLAND_AS: &str = "same_island_as";
pub const ATTR_DEVICES: &str = "devices";
pub const ATTR_FUNCTION_TYPE: &str = "function_type";
/// On a computation: its partition count, as lowering fixes it.
pub const ATTR_NUM_PARTITIONS: &str = "pw.num_partitions";
/// On a computation: the device sets (one array per mesh) it runs on.
pub const ATTR_DEVICE_ASSIGNMENTS: &str = "pw.device_assignments";
/// On the program: set by the schedule pass; body order is the schedule.
pub const ATTR_SCHEDULE: &str = "pw.schedule";
/// On a computation: it is a Python function for the sidecar (a
/// `pw_core::python::Function`'s encoding, in base64); its body is a
/// stand-in that says its signature and shardings.
pub const ATTR_SIDECAR: &str = "pw.sidecar";

/// The ops that may appear in a program's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Call,
    Transfer,
    Reshard,
    Copy,
    Scatter,
    Gather,
    Assemble,
    Return,
}

impl OpKind {
    /// Every kind.
    pub const ALL: [OpKind; 8] = [
        OpKind::Call,
        OpKind::Transfer,
        OpKind::Reshard,
        OpKind::Copy,
        OpKind::Scatter,
        OpKind::Gather,
        OpKind::Assemble,
        OpKind::Return,
    ];

    /// The kind of `op`, read without allocating.
    pub fn of<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<Self> {
        let name = name_bytes(op);
        Self::ALL.into_iter().find(|k| k.name().as_bytes() == name)
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The op's name (`pw.call`, ...; `func.return` for the terminator).
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Call => CALL,
            OpKind::Transfer => TRANSFER,
            OpKind::Reshard => RESHARD,
            OpKind::Copy => COPY,
            OpKind::Scatter => SCATTER,
            OpKind::Gather => GATHER,
            OpKind::Assemble => ASSEMBLE,
            OpKind::Return => RETURN,
        }
    }

    /// Ops that move bytes between shards (the physical form's copies).
    pub fn is_piece_op(self) -> bool {
        matches!(self, OpKind::Copy | OpKind::Scatter | OpKind::Gather)
    }
}

/// The op's name as a plain string.
pub fn op_name<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> String {
    String::from_utf8_lossy(name_bytes(op)).into_owned()
}

/// The op's name, borrowed from the context.
fn name_bytes<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> &'c [u8] {
    // SAFETY: an op's name is an identifier owned by the context, which
    // outlives 'c; a non-null string points at `length` bytes.
    unsafe {
        let name = mlir_sys::mlirIdentifierStr(mlir_sys::mlirOperationGetName(op.to_raw()));
        if name.data.is_null() {
            return &[];
        }
        std::slice::from_raw_parts(name.data as *const u8, name.length)
    }
}

pub fn string_attr<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Option<String> {
    op.attribute(name).ok().and_then(string_value)
}

pub fn symbol_attr<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Option<String> {
    op.attribute(name).ok().and_then(symbol_value)
}

/// The text of a C API string. (melior's `StringRef::as_str` must not see
/// the null data pointer of an empty string: it aborts.)
pub fn string_ref(s: mlir_sys::MlirStringRef) -> String {
    if s.data.is_null() || s.length == 0 {
        return String::new();
    }
    // SAFETY: a non-null C API string points at `length` valid bytes.
    let bytes = unsafe { std::slice::from_raw_parts(s.data as *const u8, s.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// The value of a builtin string attribute.
pub fn string_value(attr: Attribute) -> Option<String> {
    use melior::ir::AttributeLike;
    // SAFETY: the value is read only from a string attribute.
    unsafe {
        mlir_sys::mlirAttributeIsAString(attr.to_raw())
            .then(|| string_ref(mlir_sys::mlirStringAttrGetValue(attr.to_raw())))
    }
}

/// The name a flat symbol reference refers to.
pub fn symbol_value(attr: Attribute) -> Option<String> {
    use melior::ir::AttributeLike;
    // SAFETY: the value is read only from a flat symbol reference.
    unsafe {
        mlir_sys::mlirAttributeIsAFlatSymbolRef(attr.to_raw())
            .then(|| string_ref(mlir_sys::mlirFlatSymbolRefAttrGetValue(attr.to_raw())))
    }
}

pub fn i64_array_attr<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Option<Vec<i64>> {
    op.attribute(name).ok().and_then(read_i64_array)
}

pub fn read_i64_array(attr: Attribute) -> Option<Vec<i64>> {
    let array = DenseI64ArrayAttribute::try_from(attr).ok()?;
    (0..array.len()).map(|i| array.element(i).ok()).collect()
}

pub fn integer_attr<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Option<i64> {
    op.attribute(name)
        .ok()
        .and_then(|a| IntegerAttribute::try_from(a).ok())
        .map(|i| i.value())
}

/// Reads `in_shardings` of a call: one sharding per operand. `None` when
/// absent; `Some(None)` when it is not a list of shardings.
pub fn in_shardings<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Option<Option<Vec<Sharding>>> {
    let attr = op.attribute(ATTR_IN_SHARDINGS).ok()?;
    Some(read_in_shardings(attr))
}

/// The shardings of an `in_shardings` attribute, if it is a list of them.
pub fn read_in_shardings(attr: Attribute) -> Option<Vec<Sharding>> {
    array_elements(attr)?
        .into_iter()
        .map(crate::array_type::read_sharding)
        .collect()
}

pub fn in_shardings_attribute<'c>(context: &'c Context, shardings: &[Sharding]) -> Attribute<'c> {
    let elements: Vec<Attribute> = shardings
        .iter()
        .map(|s| crate::array_type::sharding_attribute(context, s))
        .collect();
    ArrayAttribute::new(context, &elements).into()
}

pub fn dense_i64<'c>(context: &'c Context, values: &[i64]) -> Attribute<'c> {
    DenseI64ArrayAttribute::new(context, values).into()
}

/// `pw.transfer` or `pw.reshard` of `input` to `to`.
pub fn build_move<'c>(
    context: &'c Context,
    name: &str,
    location: Location<'c>,
    input: Value<'c, '_>,
    to: &ArrayType,
) -> Result<Operation<'c>, melior::Error> {
    OperationBuilder::new(name, location)
        .add_operands(&[input])
        .add_results(&[to.to_mlir(context)])
        .build()
}

/// `pw.copy`/`pw.scatter`/`pw.gather` of `input` moving `pieces` (an
/// array of `#pw.piece`, see [`crate::pieces_attribute`]) into an array of
/// type `to`.
pub fn build_piece_op<'c>(
    context: &'c Context,
    name: &str,
    location: Location<'c>,
    input: Value<'c, '_>,
    to: Type<'c>,
    pieces: Attribute<'c>,
) -> Result<Operation<'c>, melior::Error> {
    OperationBuilder::new(name, location)
        .add_operands(&[input])
        .add_attributes(&[(Identifier::new(context, ATTR_PIECES), pieces)])
        .add_results(&[to])
        .build()
}

/// `pw.assemble` of `parts` into one array of type `to`.
pub fn build_assemble<'c>(
    location: Location<'c>,
    parts: &[Value<'c, '_>],
    to: Type<'c>,
) -> Result<Operation<'c>, melior::Error> {
    OperationBuilder::new(ASSEMBLE, location)
        .add_operands(parts)
        .add_results(&[to])
        .build()
}

/// The elements of a builtin array attribute.
///
/// (melior 0.27's `ArrayAttribute::try_from` tests for a dense i64 array
/// instead of an array, so arrays are read through the C API here.)
pub fn array_elements(attr: Attribute<'_>) -> Option<Vec<Attribute<'_>>> {
    use melior::ir::AttributeLike;
    let raw = attr.to_raw();
    // SAFETY: element accessors are called only on an array attribute, with
    // in-range indices.
    unsafe {
        if !mlir_sys::mlirAttributeIsAArray(raw) {
            return None;
        }
        let n = mlir_sys::mlirArrayAttrGetNumElements(raw);
        Some(
            (0..n)
                .map(|i| Attribute::from_raw(mlir_sys::mlirArrayAttrGetElement(raw, i)))
                .collect(),
        )
    }
}

/// Every op using `value` (once per use), newest use first (MLIR's use
/// list order).
pub fn users<'c, 'a>(value: Value<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    Users::of(value).collect()
}

/// Whether `value` has a use.
pub fn has_users(value: Value) -> bool {
    Users::of(value).next().is_some()
}

/// The ops using a value, one per use, walking its use list.
pub struct Users<'c, 'a> {
    operand: mlir_sys::MlirOpOperand,
    _value: std::marker::PhantomData<Value<'c, 'a>>,
}

impl<'c, 'a> Users<'c, 'a> {
    pub fn of(value: Value<'c, 'a>) -> Self {
        Self {
            // SAFETY: the value is live.
            operand: unsafe { mlir_sys::mlirValueGetFirstUse(value.to_raw()) },
            _value: std::marker::PhantomData,
        }
    }
}

impl<'c: 'a, 'a> Iterator for Users<'c, 'a> {
    type Item = OperationRef<'c, 'a>;

    fn next(&mut self) -> Option<Self::Item> {
        // SAFETY: walks the value's use list; owners are live ops of the
        // module (the list is not edited while it is walked).
        unsafe {
            if mlir_sys::mlirOpOperandIsNull(self.operand) {
                return None;
            }
            let owner = OperationRef::from_raw(mlir_sys::mlirOpOperandGetOwner(self.operand));
            self.operand = mlir_sys::mlirOpOperandGetNextUse(self.operand);
            Some(owner)
        }
    }
}

/// The users of `value` in block order. (Ordering costs a renumbering of
/// the block after each edit: use it where the block is not being edited.)
pub fn users_in_order<'c, 'a>(value: Value<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut users = users(value);
    users.reverse();
    users.sort_by(|a, b| {
        if a == b {
            std::cmp::Ordering::Equal
        } else if a.block() == b.block() && a.is_before_in_block(*b) {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Greater
        }
    });
    users
}

/// The op defining an op result.
pub fn defining_op<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    melior::ir::operation::OperationResult::try_from(value)
        .ok()
        .map(|r| r.owner())
}
