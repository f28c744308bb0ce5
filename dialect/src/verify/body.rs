//! Phases 3 and 4 of the verifier: the values of `@main`'s body, then its
//! calls and moves (physical copies are [`super::physical`]'s).

use super::physical::Physical;
use crate::{
    analysis::{Analysis, ArrayInfo, FastMap},
    diag::Errors,
    error::Error,
    ops::{self, OpKind},
    program::{significant, Computation, Mesh, Misfit},
};
use melior::ir::{
    operation::{OperationLike, OperationRef},
    AttributeLike, Location, TypeLike, ValueLike,
};
use pw_core::geometry::{Sharding, Tiling};
use std::{collections::HashMap, rc::Rc};

/// Phases 3 and 4, in one walk: an op's rules are checked once its own
/// values passed phase 3, and its operands' (defined before it) did.
pub(super) fn body<'c>(analysis: &Analysis<'c, '_>, errors: &mut Errors<'c>) {
    let program = &analysis.program;
    let check = |value: melior::ir::Value<'c, '_>, what: &dyn Fn() -> String| -> Option<Error> {
        match analysis.value(value) {
            Err(problem) => Some(problem.at(&what(), &value.r#type().to_string())),
            Ok(info) if !info.mesh_declared => Some(Error::UnknownMesh {
                what: what(),
                mesh: info.ty.mesh.clone().unwrap_or_default(),
            }),
            Ok(_) => None,
        }
    };
    // Values whose type failed phase 3: ops reading them are not checked.
    let mut broken = false;
    let inputs = program.inputs();
    for (i, &input) in inputs.iter().enumerate() {
        let what = || {
            if inputs.len() == 1 {
                "program input".to_owned()
            } else {
                format!("program input #{i}")
            }
        };
        if let Some(error) = check(input, &what) {
            errors.push(program.location(), error);
            broken = true;
        }
    }
    let mut checker = Checker {
        analysis,
        errors,
        expected: HashMap::new(),
        calls: FastMap::default(),
        physical: Physical::new(analysis),
    };
    for &op in analysis.ops() {
        if checker.errors.full() {
            return;
        }
        let location = op.location();
        let Some(kind) = OpKind::of(&op) else {
            checker.error(
                location,
                Error::ForeignOp {
                    op: ops::op_name(&op),
                },
            );
            continue;
        };
        if kind == OpKind::Return {
            continue;
        }
        let mut fine = true;
        for (i, result) in op.results().enumerate() {
            if let Some(error) = check(result.into(), &|| format!("result #{i}")) {
                checker.error(location, error);
                fine = false;
            }
        }
        broken |= !fine;
        // Until phase 3 has found nothing, phase 4 waits.
        if !broken {
            checker.op(op, kind);
        }
    }
}

/// What a computation expects on one mesh: its arguments' and results'
/// shardings.
type Expected = Result<Rc<(Vec<Sharding>, Vec<Sharding>)>, Error>;

struct Checker<'v, 'p, 'c, 'a> {
    analysis: &'p Analysis<'c, 'a>,
    errors: &'v mut Errors<'c>,
    /// Per (computation, mesh), what the computation expects there.
    expected: HashMap<(String, String), Expected>,
    /// The errors of each distinct call (see `op`).
    calls: FastMap<Vec<usize>, Rc<Vec<Error>>>,
    physical: Physical<'p, 'c, 'a>,
}

impl<'c, 'a> Checker<'_, '_, 'c, 'a> {
    fn error(&mut self, location: Location<'c>, error: Error) {
        self.errors.push(location, error);
    }

    /// The rules of `op`, whose values phase 3 read.
    fn op(&mut self, op: OperationRef<'c, 'a>, kind: OpKind) {
        let location = op.location();
        let analysis = self.analysis;
        let info = |v: Option<melior::ir::Value<'c, '_>>| v.and_then(|v| analysis.value(v).ok());
        if kind == OpKind::Call {
            // The rules read nothing but these attributes and types, all
            // uniqued: each distinct combination is judged once.
            let mut key = vec![
                attribute_key(&op, ops::ATTR_CALLEE),
                attribute_key(&op, ops::ATTR_MESH),
                attribute_key(&op, ops::ATTR_IN_SHARDINGS),
                op.operand_count(),
            ];
            key.extend(op.operands().map(|v| v.r#type().to_raw().ptr as usize));
            key.extend(op.results().map(|r| r.r#type().to_raw().ptr as usize));
            let verdict = match self.calls.get(&key) {
                Some(verdict) => verdict.clone(),
                None => {
                    let read =
                        |values: Vec<melior::ir::Value<'c, '_>>| -> Option<Vec<Rc<ArrayInfo>>> {
                            values.into_iter().map(|v| analysis.value(v).ok()).collect()
                        };
                    let verdict = match (
                        read(op.operands().collect()),
                        read(op.results().map(Into::into).collect()),
                    ) {
                        (Some(operands), Some(results)) => {
                            Rc::new(self.judge_call(op, &operands, &results))
                        }
                        _ => Rc::new(Vec::new()),
                    };
                    self.calls.insert(key, verdict.clone());
                    verdict
                }
            };
            for error in verdict.iter() {
                self.error(location, error.clone());
            }
            return;
        }
        let Some(to) = info(op.result(0).ok().map(Into::into)) else {
            return;
        };
        if kind == OpKind::Assemble {
            let errors = &mut *self.errors;
            self.physical.assemble(op, &to, errors);
            return;
        }
        // The unary ops: one operand, one result (their definitions say so).
        let Some(from) = info(op.operand(0).ok()) else {
            return;
        };
        if !from.ty.same_tensor(&to.ty) {
            return self.error(
                location,
                Error::ChangesType {
                    op: kind.name(),
                    from: from.ty.tensor_string(),
                    to: to.ty.tensor_string(),
                },
            );
        }
        match kind {
            OpKind::Transfer | OpKind::Reshard => self.move_op(location, kind, &from, &to),
            _ => {
                let errors = &mut *self.errors;
                self.physical.piece_op(op, kind, &from, &to, errors)
            }
        }
    }

    /// The rules of a call (see the verifier's module doc).
    fn judge_call(
        &mut self,
        op: OperationRef<'c, 'a>,
        operands: &[Rc<ArrayInfo>],
        results: &[Rc<ArrayInfo>],
    ) -> Vec<Error> {
        let mut errors = Vec::new();
        let program = &self.analysis.program;
        let Some(callee) = ops::symbol_attr(&op, ops::ATTR_CALLEE) else {
            return errors;
        };
        let Some(computation) = program.computation(&callee) else {
            errors.push(Error::UnknownComputation { callee });
            return errors;
        };
        let arity_ok = signature(
            &mut errors,
            computation,
            "argument",
            operands,
            &computation.inputs,
        ) & signature(
            &mut errors,
            computation,
            "result",
            results,
            &computation.outputs,
        );
        let mesh_name = ops::symbol_attr(&op, ops::ATTR_MESH);
        let on = |m: &Option<String>| {
            m.as_ref()
                .map_or("unplaced".to_owned(), |m| format!("on @{m}"))
        };
        for (i, r) in results.iter().enumerate() {
            if r.ty.mesh != mesh_name {
                errors.push(Error::ResultPlacement {
                    index: i,
                    result: on(&r.ty.mesh),
                    call: on(&mesh_name),
                });
            }
        }
        let shardings = self.analysis.in_shardings(&op);
        let Some(mesh_name) = mesh_name else {
            if shardings.is_some() {
                errors.push(Error::UnplacedInShardings);
            }
            return errors;
        };
        let Some(mesh) = program.mesh(&mesh_name) else {
            errors.push(Error::CallOnUnknownMesh { mesh: mesh_name });
            return errors;
        };
        if let Err(error) = fits(computation, mesh) {
            errors.push(error);
            return errors;
        }
        if !arity_ok {
            return errors;
        }
        let expected = match self.expected(computation, mesh) {
            Ok(expected) => expected,
            Err(error) => {
                errors.push(error);
                return errors;
            }
        };
        match shardings {
            None => {}
            Some(None) => errors.push(Error::MalformedInShardings),
            Some(Some(shardings)) if shardings.len() != operands.len() => {
                errors.push(Error::InShardingsCount {
                    entries: shardings.len(),
                    operands: operands.len(),
                })
            }
            Some(Some(shardings)) => {
                for (i, ((sharding, operand), want)) in
                    shardings.iter().zip(operands).zip(&expected.0).enumerate()
                {
                    if let Err(error) = Tiling::new(&operand.ty.shape, sharding, &mesh.shape) {
                        errors.push(Error::InShardingMisfit {
                            index: i,
                            sharding: sharding.clone(),
                            mesh: mesh_name.clone(),
                            error: Box::new(error),
                        });
                    } else if significant(sharding, &mesh.shape) != *want {
                        errors.push(Error::InShardingDisagrees {
                            index: i,
                            declared: sharding.clone(),
                            computation: computation.name.clone(),
                            expected: want.clone(),
                        });
                    }
                }
            }
        }
        for (i, (result, want)) in results.iter().zip(&expected.1).enumerate() {
            if let Some(sharding) = &result.ty.sharding {
                if significant(sharding, &mesh.shape) != *want {
                    errors.push(Error::ResultShardingDisagrees {
                        index: i,
                        declared: sharding.clone(),
                        computation: computation.name.clone(),
                        produced: want.clone(),
                    });
                }
            }
        }
        errors
    }

    /// What `computation` expects on `mesh` (which it fits), computed once
    /// per pair.
    fn expected(&mut self, computation: &Computation, mesh: &Mesh) -> Expected {
        let key = (computation.name.clone(), mesh.name.clone());
        self.expected
            .entry(key)
            .or_insert_with(|| {
                let on = |sigs: &[crate::program::TensorSig]| -> Result<Vec<Sharding>, Error> {
                    sigs.iter()
                        .map(|s| computation.sharding_on(s, &mesh.shape))
                        .collect()
                };
                Ok(Rc::new((
                    on(&computation.inputs)?,
                    on(&computation.outputs)?,
                )))
            })
            .clone()
    }

    fn move_op(&mut self, location: Location<'c>, kind: OpKind, from: &ArrayInfo, to: &ArrayInfo) {
        let op = kind.name();
        let (Some(a), Some(b)) = (&from.ty.mesh, &to.ty.mesh) else {
            return self.error(location, Error::MoveUnplaced { op });
        };
        if from.ty.sharding.is_none() || to.ty.sharding.is_none() {
            return self.error(location, Error::MoveUnsharded { op });
        }
        match kind {
            OpKind::Transfer if a == b => {
                self.error(location, Error::TransferWithinMesh { mesh: a.clone() })
            }
            OpKind::Reshard if a != b => self.error(
                location,
                Error::ReshardAcrossMeshes {
                    from: a.clone(),
                    to: b.clone(),
                },
            ),
            _ => {}
        }
    }
}

/// Checks arity, shapes and dtypes; false when the arity is wrong.
fn signature(
    errors: &mut Vec<Error>,
    computation: &Computation,
    what: &'static str,
    actual: &[Rc<ArrayInfo>],
    expected: &[crate::program::TensorSig],
) -> bool {
    if actual.len() != expected.len() {
        errors.push(Error::Arity {
            computation: computation.name.clone(),
            what,
            expected: expected.len(),
            actual: actual.len(),
        });
        return false;
    }
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        if a.ty.shape != e.shape || Some(a.ty.dtype) != e.dtype {
            errors.push(Error::SignatureMismatch {
                what,
                index: i,
                actual: a.ty.tensor_string(),
                computation: computation.name.clone(),
                expected: e.text.clone(),
            });
        }
    }
    true
}

/// Whether `computation` can run on `mesh`, or why not.
fn fits(computation: &Computation, mesh: &Mesh) -> Result<(), Error> {
    match computation.fits(&mesh.shape) {
        Ok(()) => Ok(()),
        Err(Misfit::Partitions {
            partitions,
            devices,
        }) => Err(Error::Partitions {
            computation: computation.name.clone(),
            partitions,
            mesh: mesh.name.clone(),
            devices,
        }),
        Err(Misfit::Axes { lowered_for }) => Err(Error::Axes {
            computation: computation.name.clone(),
            lowered_for,
            mesh: mesh.name.clone(),
            shape: mesh.shape.clone(),
        }),
    }
}

/// The address of an op's attribute, or 0 when it has none.
fn attribute_key<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> usize {
    op.attribute(name).map_or(0, |a| a.to_raw().ptr as usize)
}
