//! Reads a physical pw program into a [`Plan`], the plain data the runtime
//! executes (`pw_core::plan`).
//!
//! The program must be lowered: every mesh bound to devices, every value
//! placed and sharded, no `pw.transfer`/`pw.reshard` left. The body's order
//! is the schedule.

use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, OperationPrintingFlags},
    Module, Value, ValueLike,
};
use pw_core::{
    geometry::Layout,
    plan::{Computation, MeshPlacement, Plan, PlanError, Step, StepKind, ValueId, ValueInfo},
};
use pw_dialect::{
    ops::{self, OpKind},
    read_pieces, ArrayType, Program,
};
use std::collections::HashMap;

/// Reads a physical program (see the module doc).
pub fn to_plan(module: &Module) -> Result<Plan, PlanError> {
    let program = Program::read(module).map_err(|d| {
        PlanError(
            d.first()
                .map_or("not a pw program".into(), |d| d.message.clone()),
        )
    })?;
    let body = program
        .body()
        .ok_or_else(|| PlanError("@main has no body".into()))?;
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
    let mut ids: HashMap<*const std::ffi::c_void, ValueId> = HashMap::new();
    let add = |plan: &mut Plan, ids: &mut HashMap<_, _>, v: Value| -> Result<ValueId, PlanError> {
        let t = ArrayType::read(v.r#type()).map_err(|e| PlanError(e.to_string()))?;
        plan.values.push(value_info(&program, &t)?);
        ids.insert(v.to_raw().ptr, plan.values.len() - 1);
        Ok(plan.values.len() - 1)
    };
    for i in 0..body.argument_count() {
        let arg = body.argument(i).map_err(|e| PlanError(e.to_string()))?;
        let id = add(&mut plan, &mut ids, arg.into())?;
        plan.inputs.push(id);
    }
    let mut computation_ids: HashMap<String, usize> = HashMap::new();
    for (index, op) in program.ops().into_iter().enumerate() {
        let kind = OpKind::of(&op);
        if kind == Some(OpKind::Return) {
            for v in op.operands() {
                plan.outputs.push(
                    *ids.get(&v.to_raw().ptr)
                        .ok_or_else(|| PlanError("output of unknown value".into()))?,
                );
            }
            continue;
        }
        let operands: Vec<ValueId> = op
            .operands()
            .map(|v| {
                ids.get(&v.to_raw().ptr)
                    .copied()
                    .ok_or_else(|| PlanError("use of an unknown value".into()))
            })
            .collect::<Result<_, _>>()?;
        let results: Vec<ValueId> = op
            .results()
            .map(|r| add(&mut plan, &mut ids, r.into()))
            .collect::<Result<_, _>>()?;
        let (kind, label, devices) = match kind {
            Some(OpKind::Call) => {
                let callee = ops::symbol_attr(&op, ops::ATTR_CALLEE).unwrap_or_default();
                let mesh = ops::symbol_attr(&op, ops::ATTR_MESH).ok_or_else(|| {
                    PlanError(format!(
                        "call of @{callee} is not placed; lower the program first"
                    ))
                })?;
                let devices = program
                    .mesh(&mesh)
                    .and_then(|m| m.devices.clone())
                    .ok_or_else(|| {
                        PlanError(format!(
                            "mesh @{mesh} has no devices; lower the program first"
                        ))
                    })?;
                let computation = match computation_ids.get(&callee) {
                    Some(&c) => c,
                    None => {
                        let c = program
                            .computation(&callee)
                            .ok_or_else(|| PlanError(format!("unknown computation @{callee}")))?;
                        plan.computations.push(Computation {
                            name: callee.clone(),
                            text: computation_text(c),
                            num_partitions: c.num_partitions.max(1) as usize,
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
                let pieces = op
                    .attribute(ops::ATTR_PIECES)
                    .ok()
                    .and_then(read_pieces)
                    .unwrap_or_default();
                let mut devices: Vec<i64> = pieces
                    .iter()
                    .flat_map(|p| [p.src_device, p.dst_device])
                    .collect();
                devices.sort_unstable();
                devices.dedup();
                let name = k.name();
                let flows: Vec<String> = pieces
                    .iter()
                    .map(|p| format!("{}->{}", p.src_device, p.dst_device))
                    .collect();
                (
                    StepKind::Copy {
                        input: operands[0],
                        output: results[0],
                        pieces,
                    },
                    format!("#{index} {name} {}", flows.join(" ")),
                    devices,
                )
            }
            Some(OpKind::Assemble) => {
                let devices = plan.values[results[0]].devices.clone();
                (
                    StepKind::Assemble {
                        parts: operands,
                        output: results[0],
                    },
                    format!("#{index} pw.assemble"),
                    devices,
                )
            }
            _ => {
                return Err(PlanError(format!(
                    "'{}' cannot run: lower the program first (pw-opt --pw-lower)",
                    ops::op_name(&op)
                )))
            }
        };
        plan.steps.push(Step {
            kind,
            label,
            devices,
            frees: Vec::new(),
        });
    }
    plan.compute_frees();
    plan.check()?;
    Ok(plan)
}

fn value_info(program: &Program, t: &ArrayType) -> Result<ValueInfo, PlanError> {
    let mesh_name = t.mesh.clone().ok_or_else(|| {
        PlanError(format!(
            "{} is not placed; lower the program first",
            t.tensor_string()
        ))
    })?;
    let mesh = program
        .mesh(&mesh_name)
        .ok_or_else(|| PlanError(format!("unknown mesh @{mesh_name}")))?;
    let devices = mesh.devices.clone().ok_or_else(|| {
        PlanError(format!(
            "mesh @{mesh_name} has no devices; lower the program first"
        ))
    })?;
    let sharding = t.sharding.clone().ok_or_else(|| {
        PlanError(format!(
            "{} on @{mesh_name} has no sharding; lower the program first",
            t.tensor_string()
        ))
    })?;
    let layout =
        Layout::new(&t.shape, &sharding, &mesh.shape).map_err(|e| PlanError(e.to_string()))?;
    Ok(ValueInfo {
        dtype: t.dtype,
        shape: t.shape.clone(),
        mesh: mesh_name,
        devices,
        layout,
        sharding: sharding.to_string(),
    })
}

/// The computation's module as PJRT gets it: pw's annotations removed, the
/// rest as JAX produced it.
fn computation_text(computation: &pw_dialect::Computation) -> String {
    for attr in [ops::ATTR_NUM_PARTITIONS, ops::ATTR_DEVICE_ASSIGNMENTS] {
        ops::remove_attribute(computation.op, attr);
    }
    computation
        .op
        .to_string_with_flags(OperationPrintingFlags::new().print_generic_operation_form())
        .unwrap_or_else(|_| computation.op.to_string())
}
