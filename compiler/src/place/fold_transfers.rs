//! `pw-fold-transfers`: removes moves that do nothing and shares the rest.
//!
//! After it runs (a fixed point):
//! - no `pw.transfer` or `pw.reshard` has the same type on both sides;
//! - a move of a moved array reads the original instead when that delivers
//!   no more bytes ([`crate::analysis::cost::move_bytes`]): always when the middle
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

use crate::{analysis::cost, fail, Error, Pass, PassFailure};
use melior::{
    ir::{operation::OperationLike, Module, TypeLike, Value, ValueLike},
    Context,
};
use pw_dialect::{
    analysis::FastMap,
    edit,
    ops::{self, defining_op, OpKind},
    Analysis,
};
use std::collections::HashMap;

/// See the module documentation.
pub struct FoldTransfers;

const PASS: &str = "pw-fold-transfers";

impl Pass for FoldTransfers {
    fn argument(&self) -> &'static str {
        PASS
    }

    fn run<'c>(
        &self,
        context: &'c Context,
        _module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>> {
        while sweep(context, analysis)? {}
        Ok(())
    }
}

fn is_move(kind: Option<OpKind>) -> bool {
    matches!(kind, Some(OpKind::Transfer | OpKind::Reshard))
}

/// One pass over the body; returns whether anything changed. Duplicates are
/// shared before chains are judged, so a chain sees the real users of its
/// middle array.
fn sweep<'c>(context: &'c Context, analysis: &Analysis<'c, '_>) -> Result<bool, PassFailure<'c>> {
    let shared = share(analysis);
    let collapsed = collapse(context, analysis)?;
    Ok(shared || collapsed)
}

/// The program's moves (transfers and reshards), each with its input and
/// its result.
fn moves<'c, 'a>(
    analysis: &'a Analysis<'c, '_>,
) -> impl Iterator<
    Item = (
        melior::ir::OperationRef<'c, 'a>,
        Value<'c, 'a>,
        Value<'c, 'a>,
    ),
> + 'a {
    analysis.program.ops().into_iter().filter_map(|op| {
        if !is_move(OpKind::of(&op)) {
            return None;
        }
        let (Ok(input), Ok(result)) = (op.operand(0), op.result(0)) else {
            return None;
        };
        Some((op, input, result.into()))
    })
}

/// Removes unused and identity moves and merges duplicates.
fn share(analysis: &Analysis) -> bool {
    let mut changed = false;
    // By (input, destination type).
    let mut first: FastMap<(usize, usize), Value> = HashMap::default();
    for (op, input, result) in moves(analysis) {
        let key = (
            input.to_raw().ptr as usize,
            result.r#type().to_raw().ptr as usize,
        );
        let replacement = if !ops::has_users(result) {
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
fn collapse<'c>(
    context: &'c Context,
    analysis: &Analysis<'c, '_>,
) -> Result<bool, PassFailure<'c>> {
    let mut changed = false;
    for (op, input, result) in moves(analysis) {
        let Some(source) = shorter_source(analysis, input, result) else {
            continue;
        };
        let (Ok(from), Ok(to)) = (analysis.value(source), analysis.value(result)) else {
            continue;
        };
        if from.ty == to.ty {
            edit::replace_all_uses(result, source);
        } else {
            let name = if from.ty.mesh == to.ty.mesh {
                ops::RESHARD
            } else {
                ops::TRANSFER
            };
            let location = op.location();
            let build_failed = |reason: String| {
                fail(
                    location,
                    Error::Build {
                        pass: PASS,
                        op: name,
                        reason,
                    },
                )
            };
            let direct = ops::build_move(context, name, location, source, &to.ty)
                .map_err(|e| build_failed(e.to_string()))?;
            let direct = edit::insert_before(op, direct)
                .and_then(|d| d.result(0).ok())
                .ok_or_else(|| build_failed("the move is outside a block".into()))?;
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
    analysis: &Analysis<'c, '_>,
    input: Value<'c, 'a>,
    result: Value<'c, 'a>,
) -> Option<Value<'c, 'a>> {
    let previous = defining_op(input).filter(|p| is_move(OpKind::of(p)))?;
    let source = previous.operand(0).ok()?;
    let bytes = |from: Value<'c, '_>, to: Value<'c, '_>| -> Option<u64> {
        Some(cost::move_bytes(
            &*analysis.value(from).ok()?,
            &*analysis.value(to).ok()?,
        ))
    };
    let direct = bytes(source, result)?;
    let first = bytes(source, input)?;
    let second = bytes(input, result)?;
    let only_use = ops::Users::of(input).nth(1).is_none();
    ((only_use && direct <= first.saturating_add(second)) || direct < second).then_some(source)
}
