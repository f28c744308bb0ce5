//! Reads a physical pw program into a [`Plan`], the plain data the runtime
//! executes (`pw_core::plan`).
//!
//! The program must be verified and physical ([`Stage::Physical`]: every
//! mesh bound to devices, every value placed and sharded, every call
//! operand in the layout its computation takes, no `pw.transfer` or
//! `pw.reshard` left); the reader checks that first, with the one check of
//! `pw_dialect::legality`. The body's order is the schedule. Reading never
//! changes the program: each computation's text is printed from a copy
//! without pw's annotations.

use crate::LowerError;
use melior::ir::{block::BlockLike, operation::OperationLike, Value, ValueLike};
use pw_core::plan::{Computation, MeshPlacement, Module, Plan, Step, StepKind, ValueId, ValueInfo};
use pw_dialect::{
    analysis::PointerMap,
    legality::{self, Stage},
    ops::{self, OpKind},
    print, Analysis, Located,
};
use std::collections::HashMap;

/// The most shards (values times their devices) a plan may hold: every
/// shard has an entry in the plan, so this bounds its memory.
pub const MAX_PLAN_SHARDS: u64 = 1 << 26;

/// The errors of reading a plan, each at its op.
pub type PlanFailure<'c> = Vec<Located<'c, LowerError>>;

/// Reads a verified physical program (see the module doc).
pub fn to_plan<'c>(analysis: &Analysis<'c, '_>) -> Result<Plan, PlanFailure<'c>> {
    let program = &analysis.program;
    let not_physical = legality::check(analysis, Stage::Physical);
    if !not_physical.is_empty() {
        return Err(not_physical
            .into_iter()
            .map(|d| d.map(LowerError::from))
            .collect());
    }
    let here = |error: LowerError| vec![Located::new(program.location(), error)];
    let body = program.body().ok_or_else(|| here(LowerError::NotPlaced))?;
    // Every value is an op result or an input, placed on a bound mesh.
    let mut shards = 0u64;
    let mut count = |v: Value<'c, '_>| {
        let positions = analysis
            .value(v)
            .ok()
            .and_then(|i| i.tiling.as_ref().map(|t| t.positions()))
            .unwrap_or(0);
        shards = shards.saturating_add(positions as u64);
    };
    program.inputs().into_iter().for_each(&mut count);
    for op in analysis.ops() {
        op.results().for_each(|r| count(r.into()));
    }
    if shards > MAX_PLAN_SHARDS {
        return Err(here(LowerError::PlanTooLarge {
            shards,
            limit: MAX_PLAN_SHARDS,
        }));
    }

    let mut plan = Plan {
        computations: Vec::new(),
        values: Vec::new(),
        inputs: Vec::new(),
        outputs: Vec::new(),
        steps: Vec::new(),
        meshes: program
            .meshes
            .iter()
            .map(|m| MeshPlacement {
                name: m.name.clone(),
                axes: m.shape.to_string(),
                devices: m.devices.clone().unwrap_or_default(),
            })
            .collect(),
    };
    let mut ids: PointerMap<ValueId> = PointerMap::default();
    let add = |plan: &mut Plan, ids: &mut PointerMap<ValueId>, v: Value<'c, '_>| {
        plan.values.push(value_info(analysis, v)?);
        ids.insert(v.to_raw().ptr as usize, plan.values.len() - 1);
        Some(plan.values.len() - 1)
    };
    let unknown = || here(LowerError::NotPlaced);
    for i in 0..body.argument_count() {
        let arg = body.argument(i).map_err(|_| unknown())?;
        let id = add(&mut plan, &mut ids, arg.into()).ok_or_else(unknown)?;
        plan.inputs.push(id);
    }
    let mut computation_ids: HashMap<String, usize> = HashMap::new();
    for (index, &op) in analysis.ops().iter().enumerate() {
        let kind = OpKind::of(&op);
        let operands: Vec<ValueId> = op
            .operands()
            .map(|v| ids.get(&(v.to_raw().ptr as usize)).copied())
            .collect::<Option<_>>()
            .ok_or_else(unknown)?;
        if kind == Some(OpKind::Return) {
            plan.outputs = operands;
            continue;
        }
        let results: Vec<ValueId> = op
            .results()
            .map(|r| add(&mut plan, &mut ids, r.into()))
            .collect::<Option<_>>()
            .ok_or_else(unknown)?;
        let (kind, label, devices) = match kind {
            Some(OpKind::Call) => {
                let callee = ops::symbol_attr(&op, ops::ATTR_CALLEE).unwrap_or_default();
                let mesh = ops::symbol_attr(&op, ops::ATTR_MESH).unwrap_or_default();
                let devices = program
                    .mesh(&mesh)
                    .and_then(|m| m.devices.clone())
                    .ok_or_else(unknown)?;
                let computation = match computation_ids.get(&callee) {
                    Some(&c) => c,
                    None => {
                        let c = program.computation(&callee).ok_or_else(unknown)?;
                        plan.computations.push(Computation {
                            name: callee.clone(),
                            module: Module::Text(print::print_without(
                                c.op,
                                &[ops::ATTR_NUM_PARTITIONS, ops::ATTR_DEVICE_ASSIGNMENTS],
                            )),
                            num_partitions: c.num_partitions as usize,
                        });
                        computation_ids.insert(callee.clone(), plan.computations.len() - 1);
                        plan.computations.len() - 1
                    }
                };
                (
                    StepKind::Call {
                        computation,
                        args: operands,
                        results: results.clone(),
                    },
                    format!("#{index} pw.call @{callee} on @{mesh}"),
                    devices,
                )
            }
            Some(k @ (OpKind::Copy | OpKind::Scatter | OpKind::Gather)) => {
                let pieces = analysis.pieces(&op).ok_or_else(unknown)?.to_vec();
                let (devices, flows) = pw_core::piece::span(&pieces);
                let (Some(&input), Some(&output)) = (operands.first(), results.first()) else {
                    return Err(unknown());
                };
                (
                    StepKind::Copy {
                        input,
                        output,
                        pieces,
                    },
                    format!("#{index} {} {flows}", k.name()),
                    devices,
                )
            }
            Some(OpKind::Assemble) => {
                let output = *results.first().ok_or_else(unknown)?;
                (
                    StepKind::Assemble {
                        parts: operands,
                        output,
                    },
                    format!("#{index} pw.assemble"),
                    plan.values[output].devices.clone(),
                )
            }
            // Transfers and reshards are not physical (checked above).
            _ => return Err(unknown()),
        };
        plan.steps.push(Step {
            kind,
            label,
            devices,
            frees: Vec::new(),
        });
    }
    plan.compute_frees();
    plan.check().map_err(|e| here(e.into()))?;
    Ok(plan)
}

/// The plan's description of a placed value on a bound mesh.
fn value_info<'c>(analysis: &Analysis<'c, '_>, v: Value<'c, '_>) -> Option<ValueInfo> {
    let info = analysis.value(v).ok()?;
    let mesh_name = info.ty.mesh.clone()?;
    let devices = analysis.program.mesh(&mesh_name)?.devices.clone()?;
    Some(ValueInfo {
        dtype: info.ty.dtype,
        shape: info.ty.shape.clone(),
        mesh: mesh_name,
        devices,
        layout: info.tiling.as_ref()?.layout(),
        sharding: info.ty.sharding.as_ref()?.to_string(),
    })
}
