//! `pw-propagate-shardings`: gives every array the sharding the computation
//! producing it declares, and tells every call which sharding it expects.
//!
//! Runs on a placed program. After it runs:
//! - every result of a call has the sharding its computation declares for
//!   that output (Shardy's `sdy.sharding`; none declared = replicated);
//! - every call has `in_shardings`: for each operand, the sharding its
//!   computation declares for that input (none declared = replicated);
//! - every program input without a sharding gets the one its first
//!   consumer on the same mesh expects (replicated if none);
//! - `@main`'s signature agrees.
//!
//! A result whose type already carries another sharding than the
//! computation produces is an error: the computation decides its outputs.
//!
//! ```mlir
//! %0 = pw.call @f(%x) on @m : (!pw.array<8xf32, @m>) -> !pw.array<8xf32, @m>
//! // becomes, if @f takes [{"x"}] and returns [{}]:
//! %0 = pw.call @f(%x) on @m {in_shardings = [[["x"]]]} : (!pw.array<8xf32, @m>) -> !pw.array<8xf32, @m, [{}]>
//! ```

use crate::{edit, read_program, Pass, PassFailed};
use melior::{
    ir::{operation::OperationLike, Module, Value},
    Context,
};
use pw_core::geometry::{MeshShape, Sharding};
use pw_dialect::{
    diag::Diag,
    ops::{self, OpKind},
    program::TensorSig,
    Program,
};

/// See the module documentation.
pub struct PropagateShardings;

impl Pass for PropagateShardings {
    fn argument(&self) -> &'static str {
        "pw-propagate-shardings"
    }

    fn run<'c>(&self, context: &'c Context, module: &Module<'c>) -> Result<(), PassFailed> {
        let program = read_program(module)?;
        let mut failed = false;
        for op in program.ops() {
            if OpKind::of(&op) != Some(OpKind::Call) {
                continue;
            }
            let callee = ops::symbol_attr(&op, ops::ATTR_CALLEE).unwrap_or_default();
            let Some(computation) = program.computation(&callee) else {
                continue;
            };
            let Some(mesh) = ops::symbol_attr(&op, ops::ATTR_MESH).and_then(|m| program.mesh(&m))
            else {
                Diag::error(
                    op.location(),
                    "pw-propagate-shardings needs placed calls; run pw-assign-devices first",
                )
                .emit();
                failed = true;
                continue;
            };
            let expected = |sigs: &[TensorSig]| -> Result<Vec<Sharding>, String> {
                sigs.iter().map(|s| on_mesh(s, &mesh.shape)).collect()
            };
            let (ins, outs) = match (
                expected(&computation.inputs),
                expected(&computation.outputs),
            ) {
                (Ok(ins), Ok(outs)) => (ins, outs),
                (Err(e), _) | (_, Err(e)) => {
                    Diag::error(op.location(), e).emit();
                    failed = true;
                    continue;
                }
            };
            let mut call = op;
            edit::set_attribute(
                &mut call,
                ops::ATTR_IN_SHARDINGS,
                ops::in_shardings_attribute(context, &ins),
            );
            for (i, (result, sharding)) in op.results().zip(outs).enumerate() {
                let Some(t) = edit::array_type(result.into()) else {
                    continue;
                };
                match &t.sharding {
                    Some(s) if *s != sharding => {
                        Diag::error(
                            op.location(),
                            format!(
                                "result #{i} is declared {s} but @{callee} produces {sharding}"
                            ),
                        )
                        .emit();
                        failed = true;
                    }
                    _ => edit::set_array_type(
                        context,
                        result.into(),
                        &t.placed(t.mesh.as_deref(), Some(sharding)),
                    ),
                }
            }
        }
        shard_inputs(context, &program);
        edit::sync_function_type(context, &program);
        if failed {
            Err(PassFailed)
        } else {
            Ok(())
        }
    }
}

/// A computation's declared sharding expressed on a pw mesh: axes map by
/// name (the verifier checked they agree); size-1 axes split nothing and
/// are dropped.
fn on_mesh(sig: &TensorSig, mesh: &MeshShape) -> Result<Sharding, String> {
    let Some(declared) = &sig.sharding else {
        return Ok(Sharding::replicated(sig.shape.len()));
    };
    let dims = declared
        .dims
        .iter()
        .map(|axes| {
            axes.iter()
                .filter(|a| mesh.axis_size(a) != Some(1))
                .map(|a| match mesh.axis_size(a) {
                    Some(_) => Ok(a.clone()),
                    None => Err(format!(
                        "the computation shards over axis \"{a}\", which mesh {mesh} lacks"
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Sharding { dims })
}

/// Program inputs take the sharding their first consumer on their mesh
/// expects.
fn shard_inputs<'c>(context: &'c Context, program: &Program<'c, '_>) {
    for value in program.inputs() {
        let Some(t) = edit::array_type(value) else {
            continue;
        };
        if t.sharding.is_some() || t.mesh.is_none() {
            continue;
        }
        let wanted = first_expectation(value, t.mesh.as_deref())
            .unwrap_or_else(|| Sharding::replicated(t.shape.len()));
        edit::set_array_type(context, value, &t.placed(t.mesh.as_deref(), Some(wanted)));
    }
}

fn first_expectation(value: Value, mesh: Option<&str>) -> Option<Sharding> {
    ops::users_in_order(value).into_iter().find_map(|user| {
        if ops::symbol_attr(&user, ops::ATTR_MESH).as_deref() != mesh {
            return None;
        }
        let index = user.operands().position(|o| o == value)?;
        ops::in_shardings(&user)?.get(index).cloned()
    })
}
