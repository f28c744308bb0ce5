//! `pw-fold-transfers`: removes moves that do nothing and shares the rest.
//!
//! After it runs (a fixed point):
//! - no `pw.transfer` or `pw.reshard` has the same type on both sides;
//! - a move of a moved array reads the original instead when that delivers
//!   no more bytes ([`crate::cost::move_bytes`]): always when the middle
//!   array has no other use and the direct move is no dearer than both hops,
//!   otherwise when the direct move is strictly cheaper than the second hop;
//! - there is one move per (array, destination type), shared by all users;
//! - no move is left without users.
//!
//! ```mlir
//! %1 = pw.transfer %0 : !pw.array<8xf32, @a, [{}]> -> !pw.array<8xf32, @b, [{}]>
//! %2 = pw.transfer %1 : !pw.array<8xf32, @b, [{}]> -> !pw.array<8xf32, @c, [{}]>
//! // becomes, when nothing else reads %1:
//! %2 = pw.transfer %0 : !pw.array<8xf32, @a, [{}]> -> !pw.array<8xf32, @c, [{}]>
//! ```

use crate::{cost, edit, read_program, Pass, PassFailed};
use melior::{
    ir::{operation::OperationLike, Module, TypeLike, Value, ValueLike},
    Context,
};
use pw_dialect::{
    ops::{self, defining_op, OpKind},
    ArrayType, Program,
};
use std::collections::HashMap;

/// See the module documentation.
pub struct FoldTransfers;

impl Pass for FoldTransfers {
    fn argument(&self) -> &'static str {
        "pw-fold-transfers"
    }

    fn run<'c>(&self, context: &'c Context, module: &Module<'c>) -> Result<(), PassFailed> {
        while sweep(context, &read_program(module)?)? {}
        Ok(())
    }
}

fn is_move(kind: Option<OpKind>) -> bool {
    matches!(kind, Some(OpKind::Transfer | OpKind::Reshard))
}

/// One pass over the body; returns whether anything changed. Duplicates are
/// shared before chains are judged, so a chain sees the real users of its
/// middle array.
fn sweep<'c>(context: &'c Context, program: &Program<'c, '_>) -> Result<bool, PassFailed> {
    let shared = share(program);
    let collapsed = collapse(context, program)?;
    Ok(shared || collapsed)
}

/// Removes unused and identity moves and merges duplicates.
fn share(program: &Program) -> bool {
    let mut changed = false;
    let mut first: HashMap<(*const std::ffi::c_void, *const std::ffi::c_void), Value> =
        HashMap::new();
    for op in program.ops() {
        if !is_move(OpKind::of(&op)) {
            continue;
        }
        let (Ok(input), Ok(result)) = (op.operand(0), op.result(0)) else {
            continue;
        };
        let result: Value = result.into();
        let key = (input.to_raw().ptr, result.r#type().to_raw().ptr);
        let replacement = if ops::users(result).is_empty() {
            None
        } else if input.r#type() == result.r#type() {
            Some(input)
        } else if let Some(earlier) = first.get(&key) {
            Some(*earlier)
        } else {
            first.insert(key, result);
            continue;
        };
        if let Some(replacement) = replacement {
            edit::replace_all_uses(result, replacement);
        }
        edit::erase(op);
        changed = true;
    }
    changed
}

/// Makes moves of moved arrays read the original where that is cheaper.
fn collapse<'c>(context: &'c Context, program: &Program<'c, '_>) -> Result<bool, PassFailed> {
    let mut changed = false;
    for op in program.ops() {
        if !is_move(OpKind::of(&op)) {
            continue;
        }
        let (Ok(input), Ok(result)) = (op.operand(0), op.result(0)) else {
            continue;
        };
        let result: Value = result.into();
        let Some(source) = shorter_source(program, input, result) else {
            continue;
        };
        let (Some(from), Some(to)) = (edit::array_type(source), edit::array_type(result)) else {
            continue;
        };
        if from == to {
            edit::replace_all_uses(result, source);
        } else {
            let name = if from.mesh == to.mesh {
                ops::RESHARD
            } else {
                ops::TRANSFER
            };
            let Ok(direct) = ops::build_move(context, name, op.location(), source, &to) else {
                return Err(PassFailed);
            };
            let Some(direct) = edit::insert_before(op, direct).and_then(|d| d.result(0).ok())
            else {
                return Err(PassFailed);
            };
            edit::replace_all_uses(result, direct.into());
        }
        edit::erase(op);
        changed = true;
    }
    Ok(changed)
}

/// The array a move into `result` should read instead of `input`, when
/// `input` is itself a move's result and reading that move's source is
/// cheaper (see the module documentation).
fn shorter_source<'c: 'a, 'a>(
    program: &Program,
    input: Value<'c, 'a>,
    result: Value<'c, 'a>,
) -> Option<Value<'c, 'a>> {
    let previous = defining_op(input).filter(|p| is_move(OpKind::of(p)))?;
    let source = previous.operand(0).ok()?;
    let bytes = |from: Value, to: Value| -> Option<u64> {
        let (from, to): (ArrayType, ArrayType) = (edit::array_type(from)?, edit::array_type(to)?);
        Some(cost::move_bytes(program, &from, &to))
    };
    let direct = bytes(source, result)?;
    let first = bytes(source, input)?;
    let second = bytes(input, result)?;
    let only_use = ops::users(input).len() == 1;
    ((only_use && direct <= first + second) || direct < second).then_some(source)
}
