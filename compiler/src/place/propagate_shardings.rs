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
//! computation produces is an error the verifier reports: the computation
//! decides its outputs.
//!
//! ```mlir
//! %0 = pw.call @f(%x) on @m : (!pw.array<8xf32, @m>) -> !pw.array<8xf32, @m>
//! // becomes, if @f takes [{"x"}] and returns [{}]:
//! %0 = pw.call @f(%x) on @m {in_shardings = [[["x"]]]} : (!pw.array<8xf32, @m>) -> !pw.array<8xf32, @m, [{}]>
//! ```

use crate::{Error, Pass, PassFailure};
use melior::{
    ir::{operation::OperationLike, Module, Value},
    Context,
};
use pw_core::geometry::Sharding;
use pw_dialect::{
    edit,
    ops::{self, OpKind},
    Analysis, Located,
};

/// See the module documentation.
pub struct PropagateShardings;

impl Pass for PropagateShardings {
    fn argument(&self) -> &'static str {
        "pw-propagate-shardings"
    }

    fn run<'c>(
        &self,
        context: &'c Context,
        _module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>> {
        let program = &analysis.program;
        let mut failures = Vec::new();
        for &op in analysis.ops() {
            if OpKind::of(&op) != Some(OpKind::Call) {
                continue;
            }
            let callee = ops::symbol_attr(&op, ops::ATTR_CALLEE).unwrap_or_default();
            let Some(computation) = program.computation(&callee) else {
                continue;
            };
            let Some(mesh) = ops::symbol_attr(&op, ops::ATTR_MESH).and_then(|m| program.mesh(&m))
            else {
                failures.push(Located::new(
                    op.location(),
                    Error::Precondition {
                        pass: "pw-propagate-shardings",
                        needs: "placed calls",
                        run: "pw-assign-devices",
                    },
                ));
                continue;
            };
            let on_mesh = |sigs: &[pw_dialect::program::TensorSig]| -> Result<Vec<Sharding>, _> {
                sigs.iter()
                    .map(|s| computation.sharding_on(s, &mesh.shape))
                    .collect()
            };
            let (ins, outs) = match (on_mesh(&computation.inputs), on_mesh(&computation.outputs)) {
                (Ok(ins), Ok(outs)) => (ins, outs),
                (Err(e), _) | (_, Err(e)) => {
                    failures.push(Located::new(op.location(), e.into()));
                    continue;
                }
            };
            edit::set_attribute(
                op,
                ops::ATTR_IN_SHARDINGS,
                ops::in_shardings_attribute(context, &ins),
            );
            // The verifier checked that a sharding a result already has is
            // the one its computation produces.
            for (result, sharding) in op.results().zip(outs) {
                if let Ok(info) = analysis.value(result.into()) {
                    let t = &info.ty;
                    edit::set_array_type(
                        context,
                        result.into(),
                        &t.placed(t.mesh.as_deref(), Some(sharding)),
                    );
                }
            }
        }
        shard_inputs(context, analysis);
        edit::sync_function_type(context, program.entry);
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures)
        }
    }
}

/// Program inputs take the sharding their first consumer on their mesh
/// expects.
fn shard_inputs<'c>(context: &'c Context, analysis: &Analysis<'c, '_>) {
    for value in analysis.program.inputs() {
        let Ok(info) = analysis.value(value) else {
            continue;
        };
        let t = &info.ty;
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
        ops::in_shardings(&user)??.get(index).cloned()
    })
}
