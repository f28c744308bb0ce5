//! IR edits the passes make, as safe functions: the only place outside
//! the dialect's own readers where pw touches MLIR through raw handles.

use crate::{array_type::ArrayType, ops};
use melior::{
    ir::{
        attribute::TypeAttribute,
        block::BlockLike,
        operation::{OperationLike, OperationMutLike, OperationRef, OperationRefMut},
        r#type::FunctionType,
        Attribute, RegionLike, Type, Value, ValueLike,
    },
    Context,
};

/// Gives `value` the type `t`.
pub fn set_array_type<'c>(context: &'c Context, value: Value<'c, '_>, t: &ArrayType) {
    value.set_type(t.to_mlir(context));
}

/// Makes the function type of `entry` (`@main`) agree with its block
/// arguments and the operands of its return, after their types changed.
pub fn sync_function_type<'c>(context: &'c Context, entry: OperationRef<'c, '_>) {
    let Some(body) = entry.region(0).ok().and_then(|r| r.first_block()) else {
        return;
    };
    let inputs: Vec<Type> = (0..body.argument_count())
        .filter_map(|i| body.argument(i).ok())
        .map(|a| a.r#type())
        .collect();
    let results: Vec<Type> = body
        .terminator()
        .map(|t| t.operands().map(|v| v.r#type()).collect())
        .unwrap_or_default();
    let function = FunctionType::new(context, &inputs, &results);
    set_attribute(
        entry,
        ops::ATTR_FUNCTION_TYPE,
        TypeAttribute::new(function.into()).into(),
    );
}

/// Sets an attribute on an op held by reference.
pub fn set_attribute<'c>(op: OperationRef<'c, '_>, name: &str, value: Attribute<'c>) {
    // SAFETY: the op is live; attributes are owned by the context.
    unsafe { OperationRefMut::from_raw(op.to_raw()).set_attribute(name, value) }
}

/// Removes an attribute from an op, if present.
pub fn remove_attribute(op: OperationRef<'_, '_>, name: &str) {
    // SAFETY: the op is live; removing an attribute does not move it.
    let _ = unsafe { OperationRefMut::from_raw(op.to_raw()).remove_attribute(name) };
}

/// Erases an op whose results have no uses (callers check).
pub fn erase(op: OperationRef<'_, '_>) {
    // SAFETY: the op is live and its results unused; it is unlinked from
    // its block and destroyed exactly once (callers drop their references).
    unsafe { mlir_sys::mlirOperationDestroy(op.to_raw()) }
}

/// Replaces every use of `from` with `to`.
pub fn replace_all_uses(from: Value<'_, '_>, to: Value<'_, '_>) {
    // SAFETY: both values are live.
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(from.to_raw(), to.to_raw()) }
}

/// Makes operand `index` of `op` use `value`; false if there is no such
/// operand.
pub fn set_operand<'c>(op: OperationRef<'c, '_>, index: usize, value: Value<'c, '_>) -> bool {
    if index >= op.operand_count() {
        return false;
    }
    // SAFETY: the op is live and has an operand at `index`.
    unsafe { mlir_sys::mlirOperationSetOperand(op.to_raw(), index as isize, value.to_raw()) };
    true
}

/// Inserts `new` right before `anchor` in its block.
pub fn insert_before<'c, 'a>(
    anchor: OperationRef<'c, 'a>,
    new: melior::ir::Operation<'c>,
) -> Option<OperationRef<'c, 'a>> {
    let block = anchor.block()?;
    Some(block.insert_operation_before(anchor, new))
}

/// Moves `op` (out of its block, if any) right before `anchor`, which must
/// be in a block (false otherwise).
pub fn move_before(op: OperationRef<'_, '_>, anchor: OperationRef<'_, '_>) -> bool {
    if anchor.block().is_none() {
        return false;
    }
    // SAFETY: both ops are live and the anchor is in a block, as MLIR
    // requires.
    unsafe { mlir_sys::mlirOperationMoveBefore(op.to_raw(), anchor.to_raw()) };
    true
}
