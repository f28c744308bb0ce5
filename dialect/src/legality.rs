//! The stages of lowering, and the check of what may exist at each: the
//! one answer to "is this program placed / physical / scheduled yet?".
//!
//! A verified program ([`crate::verify`]) is at some stage of lowering;
//! each pipeline phase must leave it at a later one, a pass may require
//! one to start from, and pw-run executes only physical programs:
//! - [`Stage::Sharded`] (what lowering starts from): every value is placed
//!   and sharded on a declared mesh;
//! - [`Stage::Placed`] (after the place phase): every call runs on a mesh
//!   and has `in_shardings`; every value is placed and sharded; every call
//!   operand has exactly the type its call expects (its mesh, its
//!   `in_shardings` entry), so the computation reads its arguments in the
//!   layout it was compiled for;
//! - [`Stage::Physical`] (after the lower phase): placed, every mesh bound
//!   to devices, and no `pw.transfer` or `pw.reshard` left: every byte that
//!   moves is in a per-shard copy;
//! - [`Stage::Scheduled`] (after the schedule phase): physical, and the
//!   body's order is a schedule (`pw.schedule` on `@main`).

use crate::{
    analysis::Analysis,
    diag::{Diag, Errors},
    error::Error,
    ops::{self, OpKind},
    program::significant,
};
use melior::ir::{operation::OperationLike, ValueLike};

/// A stage of lowering (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Sharded,
    Placed,
    Physical,
    Scheduled,
}

impl Stage {
    /// What makes a program reach this stage.
    pub fn remedy(self) -> &'static str {
        match self {
            Stage::Sharded | Stage::Placed => "run the place phase: pw-assign-devices, pw-propagate-shardings, pw-insert-transfers",
            Stage::Physical => "lower the program: pw-opt --pw-lower",
            Stage::Scheduled => "run pw-schedule",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Stage::Sharded => "sharded",
            Stage::Placed => "placed",
            Stage::Physical => "physical",
            Stage::Scheduled => "scheduled",
        }
    }
}

/// Whether a verified program is at `stage`: the errors saying why not
/// (empty when it is).
pub fn check<'c>(analysis: &Analysis<'c, '_>, stage: Stage) -> Vec<Diag<'c>> {
    let mut errors = Errors::default();
    let program = &analysis.program;
    let remedy = stage.remedy();
    let not_placed = |what: String| Error::NotPlaced { what, remedy };
    let placed =
        |v: melior::ir::Value<'c, '_>| analysis.value(v).is_ok_and(|info| info.tiling.is_some());
    for (i, input) in program.inputs().into_iter().enumerate() {
        if !placed(input) {
            errors.push(
                program.location(),
                not_placed(format!("program input #{i}")),
            );
        }
    }
    if stage >= Stage::Physical {
        for mesh in &program.meshes {
            if mesh.devices.is_none() {
                errors.push(
                    mesh.op.location(),
                    Error::MeshNotBound {
                        mesh: mesh.name.clone(),
                        remedy,
                    },
                );
            }
        }
    }
    for &op in analysis.ops() {
        if errors.full() {
            break;
        }
        let location = op.location();
        let kind = OpKind::of(&op);
        if kind == Some(OpKind::Return) {
            continue;
        }
        for (i, result) in op.results().enumerate() {
            if !placed(result.into()) {
                errors.push(location, not_placed(format!("result #{i}")));
            }
        }
        match kind {
            Some(k @ (OpKind::Transfer | OpKind::Reshard)) if stage >= Stage::Physical => {
                errors.push(
                    location,
                    Error::MoveLeft {
                        op: k.name(),
                        remedy,
                    },
                );
            }
            Some(OpKind::Call) if stage >= Stage::Placed => {
                let mesh = ops::symbol_attr(&op, ops::ATTR_MESH).and_then(|m| program.mesh(&m));
                let shardings = analysis.in_shardings(&op).flatten();
                let (Some(mesh), Some(shardings)) = (mesh, shardings) else {
                    errors.push(location, not_placed("the call".into()));
                    continue;
                };
                for (i, (operand, sharding)) in op.operands().zip(shardings.iter()).enumerate() {
                    let Ok(info) = analysis.value(operand) else {
                        continue;
                    };
                    let agrees = info.ty.mesh.as_deref() == Some(mesh.name.as_str())
                        && info.ty.sharding.as_ref().is_some_and(|s| {
                            significant(s, &mesh.shape) == significant(sharding, &mesh.shape)
                        });
                    if !agrees {
                        let expected = info.ty.placed(Some(&mesh.name), Some(sharding.clone()));
                        errors.push(
                            location,
                            Error::OperandNotAsExpected {
                                index: i,
                                actual: operand.r#type().to_string(),
                                expected: expected.to_string(),
                                remedy,
                            },
                        );
                    }
                }
            }
            _ => {}
        }
    }
    if stage >= Stage::Scheduled && program.entry.attribute(ops::ATTR_SCHEDULE).is_err() {
        errors.push(program.location(), Error::NotScheduled { remedy });
    }
    errors.into_vec()
}
