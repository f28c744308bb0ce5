//! `pw-insert-transfers`: makes every edge between different placements an
//! explicit op.
//!
//! Runs after `pw-propagate-shardings`. After it runs, every operand of
//! every call has exactly the type the call expects: on the call's mesh,
//! with the sharding of its `in_shardings` entry. Where the producer left
//! the array elsewhere, a `pw.transfer` (another mesh) or a `pw.reshard`
//! (the same mesh, another sharding) sits right before the call, one per
//! use; `pw-fold-transfers` shares and simplifies them. Program outputs stay
//! where their producers put them.
//!
//! ```mlir
//! %1 = pw.call @g(%0) on @b {in_shardings = [[["x"]]]} : (!pw.array<8xf32, @a, [{}]>) -> ...
//! // becomes
//! %t = pw.transfer %0 : !pw.array<8xf32, @a, [{}]> -> !pw.array<8xf32, @b, [{"x"}]>
//! %1 = pw.call @g(%t) on @b {in_shardings = [[["x"]]]} : (!pw.array<8xf32, @b, [{"x"}]>) -> ...
//! ```

use crate::{edit, read_program, Pass, PassFailed};
use melior::{
    ir::{operation::OperationLike, Module},
    Context,
};
use pw_dialect::{
    diag::Diag,
    ops::{self, OpKind},
};

/// See the module documentation.
pub struct InsertTransfers;

impl Pass for InsertTransfers {
    fn argument(&self) -> &'static str {
        "pw-insert-transfers"
    }

    fn run<'c>(&self, context: &'c Context, module: &Module<'c>) -> Result<(), PassFailed> {
        let program = read_program(module)?;
        for op in program.ops() {
            if OpKind::of(&op) != Some(OpKind::Call) {
                continue;
            }
            let (Some(mesh), Some(expected)) = (
                ops::symbol_attr(&op, ops::ATTR_MESH),
                ops::in_shardings(&op),
            ) else {
                Diag::error(
                    op.location(),
                    "pw-insert-transfers needs placed calls with in_shardings; run pw-assign-devices and pw-propagate-shardings first",
                )
                .emit();
                return Err(PassFailed);
            };
            let operands: Vec<_> = op.operands().collect();
            for (i, (value, sharding)) in operands.into_iter().zip(expected).enumerate() {
                let Some(have) = edit::array_type(value) else {
                    continue;
                };
                if have.mesh.is_none() || have.sharding.is_none() {
                    Diag::error(op.location(), format!("operand #{i} is not placed and sharded; run pw-propagate-shardings first")).emit();
                    return Err(PassFailed);
                }
                let want = have.placed(Some(&mesh), Some(sharding));
                if have == want {
                    continue;
                }
                let name = if have.mesh == want.mesh {
                    ops::RESHARD
                } else {
                    ops::TRANSFER
                };
                let Ok(moved) = ops::build_move(context, name, op.location(), value, &want) else {
                    return Err(PassFailed);
                };
                let Some(moved) = edit::insert_before(op, moved) else {
                    return Err(PassFailed);
                };
                if let Ok(result) = moved.result(0) {
                    edit::set_operand(op, i, result.into());
                }
            }
        }
        Ok(())
    }
}
