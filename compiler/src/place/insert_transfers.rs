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

use crate::{fail, Error, Pass, PassFailure};
use melior::{
    ir::{operation::OperationLike, Module},
    Context,
};
use pw_dialect::{
    edit,
    ops::{self, OpKind},
    Analysis,
};

/// See the module documentation.
pub struct InsertTransfers;

const PASS: &str = "pw-insert-transfers";

impl Pass for InsertTransfers {
    fn argument(&self) -> &'static str {
        PASS
    }

    fn run<'c>(
        &self,
        context: &'c Context,
        _module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>> {
        let precondition = |location| {
            fail(
                location,
                Error::Precondition {
                    pass: PASS,
                    needs: "placed calls with in_shardings, on placed and sharded arrays",
                    run: "pw-assign-devices and pw-propagate-shardings",
                },
            )
        };
        for &op in analysis.ops() {
            if OpKind::of(&op) != Some(OpKind::Call) {
                continue;
            }
            let location = op.location();
            let (Some(mesh), Some(Some(expected))) = (
                ops::symbol_attr(&op, ops::ATTR_MESH),
                analysis.in_shardings(&op),
            ) else {
                return Err(precondition(location));
            };
            let operands: Vec<_> = op.operands().collect();
            for (i, (value, sharding)) in operands.into_iter().zip(expected.iter()).enumerate() {
                let Ok(have) = analysis.value(value) else {
                    return Err(precondition(location));
                };
                let have = &have.ty;
                if have.mesh.is_none() || have.sharding.is_none() {
                    return Err(precondition(location));
                }
                let want = have.placed(Some(&mesh), Some(sharding.clone()));
                if *have == want {
                    continue;
                }
                let name = if have.mesh == want.mesh {
                    ops::RESHARD
                } else {
                    ops::TRANSFER
                };
                let built =
                    ops::build_move(context, name, location, value, &want).map_err(|e| {
                        fail(
                            location,
                            Error::Build {
                                pass: PASS,
                                op: name,
                                reason: e.to_string(),
                            },
                        )
                    })?;
                let moved = edit::insert_before(op, built)
                    .and_then(|m| m.result(0).ok())
                    .ok_or_else(|| {
                        fail(
                            location,
                            Error::Build {
                                pass: PASS,
                                op: name,
                                reason: "the call is outside a block".into(),
                            },
                        )
                    })?;
                edit::set_operand(op, i, moved.into());
            }
        }
        Ok(())
    }
}
