//! Small IR edits the passes share.

use melior::{
    ir::{
        attribute::TypeAttribute,
        block::BlockLike,
        operation::{OperationLike, OperationMutLike, OperationRef},
        r#type::FunctionType,
        Type, Value, ValueLike,
    },
    Context,
};
use pw_dialect::{ops, ArrayType, Program};

/// Gives `value` the type `t`.
pub fn set_array_type<'c>(context: &'c Context, value: Value<'c, '_>, t: &ArrayType) {
    value.set_type(t.to_mlir(context));
}

/// Makes `@main`'s function type agree with its block arguments and the
/// operands of its return, after their types changed.
pub fn sync_function_type<'c>(context: &'c Context, program: &Program<'c, '_>) {
    let Some(body) = program.body() else {
        return;
    };
    let inputs: Vec<Type> = program.inputs().iter().map(|a| a.r#type()).collect();
    let results: Vec<Type> = body
        .terminator()
        .map(|t| t.operands().map(|v| v.r#type()).collect())
        .unwrap_or_default();
    let function = FunctionType::new(context, &inputs, &results);
    let mut entry = program.entry;
    let attr = TypeAttribute::new(function.into());
    set_attribute(&mut entry, ops::ATTR_FUNCTION_TYPE, attr.into());
}

/// Sets an attribute on an op we hold by reference.
pub fn set_attribute<'c>(
    op: &mut OperationRef<'c, '_>,
    name: &str,
    value: melior::ir::Attribute<'c>,
) {
    // SAFETY: the op is live; attributes are owned by the context.
    unsafe {
        let mut op = melior::ir::operation::OperationRefMut::from_raw(op.to_raw());
        op.set_attribute(name, value);
    }
}

/// Erases an op that has no remaining uses.
pub fn erase(op: OperationRef<'_, '_>) {
    // SAFETY: callers erase only ops whose results are unused; the op is
    // detached and destroyed exactly once.
    unsafe { mlir_sys::mlirOperationDestroy(op.to_raw()) }
}

/// Replaces every use of `from` with `to`.
pub fn replace_all_uses(from: Value<'_, '_>, to: Value<'_, '_>) {
    // SAFETY: both values are live and of the same type.
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(from.to_raw(), to.to_raw()) }
}

/// The array type of a value (every value of a verified program has one).
pub fn array_type(value: Value) -> Option<ArrayType> {
    ArrayType::read(value.r#type()).ok()
}

/// Makes operand `index` of `op` use `value`.
pub fn set_operand<'c>(op: OperationRef<'c, '_>, index: usize, value: Value<'c, '_>) {
    // SAFETY: the op is live and has an operand at `index`.
    unsafe { mlir_sys::mlirOperationSetOperand(op.to_raw(), index as isize, value.to_raw()) }
}

/// Inserts `new` right before `anchor` in its block.
pub fn insert_before<'c, 'a>(
    anchor: OperationRef<'c, 'a>,
    new: melior::ir::Operation<'c>,
) -> Option<OperationRef<'c, 'a>> {
    let block = anchor.block()?;
    Some(block.insert_operation_before(anchor, new))
}
