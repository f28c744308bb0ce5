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

use crate::Error;
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
pub type PlanFailure<'c> = Vec<Located<'c, Error>>;

/// Reads a verified physical program (see the module doc).
pub fn to_plan<'c>(analysis: &Analysis<'c, '_>) -> Result<Plan, PlanFailure<'c>> {
    let program = &analysis.program;
    let not_physical = legality::check(analysis, Stage::Physical);
    if !not_physical.is_empty() {
        return Err(not_physical
            .into_iter()
            .map(|d| d.map(Error::from))
            .collect());
    }
    let here = |error: Error| vec![Located::new(program.location(), error)];
    let unknown = || here(Error::NotPlaced);
    let body = program.body().ok_or_else(unknown)?;
    let shards = shards(analysis);
    if shards > MAX_PLAN_SHARDS {
        return Err(here(Error::PlanTooLarge {
            shards,
            limit: MAX_PLAN_SHARDS,
        }));
    }
    let mut reader = Reader::new(analysis);
    for i in 0..body.argument_count() {
        let arg = body.argument(i).map_err(|_| unknown())?;
        let id = reader.add(arg.into()).ok_or_else(unknown)?;
        reader.plan.inputs.push(id);
    }
    for (index, &op) in analysis.ops().iter().enumerate() {
        let operands = reader.ids(op.operands()).ok_or_else(unknown)?;
        if OpKind::of(&op) == Some(OpKind::Return) {
            reader.plan.outputs = operands;
            continue;
        }
        let step = reader.step(index, &op, operands).ok_or_else(unknown)?;
        reader.plan.steps.push(step);
    }
    let mut plan = reader.plan;
    plan.compute_frees();
    plan.check().map_err(|e| here(e.into()))?;
    Ok(plan)
}

/// The shards of every value (an op result or an input, placed on a bound
/// mesh): what the plan's size is bounded by.
fn shards<'c>(analysis: &Analysis<'c, '_>) -> u64 {
    let mut shards = 0u64;
    let mut count = |v: Value<'c, '_>| {
        let positions = analysis
            .value(v)
            .ok()
            .and_then(|i| i.tiling.as_ref().map(|t| t.positions()))
            .unwrap_or(0);
        shards = shards.saturating_add(positions as u64);
    };
    analysis.program.inputs().into_iter().for_each(&mut count);
    for op in analysis.ops() {
        op.results().for_each(|r| count(r.into()));
    }
    shards
}

/// The plan as it is read, op by op. A `None` is something the verified
/// physical program cannot lack (the caller reports it as not placed).
struct Reader<'a, 'c, 'm> {
    analysis: &'a Analysis<'c, 'm>,
    plan: Plan,
    /// Each value's id, by its MLIR pointer.
    ids: PointerMap<ValueId>,
    /// Each computation's index, by name.
    computations: HashMap<String, usize>,
}

impl<'a, 'c, 'm> Reader<'a, 'c, 'm> {
    fn new(analysis: &'a Analysis<'c, 'm>) -> Self {
        let meshes = analysis
            .program
            .meshes
            .iter()
            .map(|m| MeshPlacement {
                name: m.name.clone(),
                axes: m.shape.to_string(),
                devices: m.devices.clone().unwrap_or_default(),
            })
            .collect();
        Reader {
            analysis,
            plan: Plan {
                computations: Vec::new(),
                values: Vec::new(),
                inputs: Vec::new(),
                outputs: Vec::new(),
                steps: Vec::new(),
                meshes,
            },
            ids: PointerMap::default(),
            computations: HashMap::new(),
        }
    }

    /// Adds value `v`; its id.
    fn add(&mut self, v: Value<'c, '_>) -> Option<ValueId> {
        self.plan.values.push(value_info(self.analysis, v)?);
        let id = self.plan.values.len() - 1;
        self.ids.insert(v.to_raw().ptr as usize, id);
        Some(id)
    }

    /// The ids of values already read.
    fn ids<'v>(&self, values: impl Iterator<Item = Value<'c, 'v>>) -> Option<Vec<ValueId>>
    where
        'c: 'v,
    {
        values
            .map(|v| self.ids.get(&(v.to_raw().ptr as usize)).copied())
            .collect()
    }

    /// The step of op `index`, which reads `operands`; its results are
    /// added.
    fn step(
        &mut self,
        index: usize,
        op: &melior::ir::operation::OperationRef<'c, '_>,
        operands: Vec<ValueId>,
    ) -> Option<Step> {
        let results: Vec<ValueId> = op
            .results()
            .map(|r| self.add(r.into()))
            .collect::<Option<_>>()?;
        let (kind, label, devices) = match OpKind::of(op) {
            Some(OpKind::Call) => {
                let callee = ops::symbol_attr(op, ops::ATTR_CALLEE).unwrap_or_default();
                let mesh = ops::symbol_attr(op, ops::ATTR_MESH).unwrap_or_default();
                let program = &self.analysis.program;
                let devices = program.mesh(&mesh).and_then(|m| m.devices.clone())?;
                let computation = self.computation(&callee)?;
                (
                    StepKind::Call {
                        computation,
                        args: operands,
                        results,
                    },
                    format!("#{index} pw.call @{callee} on @{mesh}"),
                    devices,
                )
            }
            Some(k @ (OpKind::Copy | OpKind::Scatter | OpKind::Gather)) => {
                let pieces = self.analysis.pieces(op)?.to_vec();
                let (devices, flows) = pw_core::piece::span(&pieces);
                let (&input, &output) = (operands.first()?, results.first()?);
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
                let output = *results.first()?;
                let devices = self.plan.values[output].devices.clone();
                (
                    StepKind::Assemble {
                        parts: operands,
                        output,
                    },
                    format!("#{index} pw.assemble"),
                    devices,
                )
            }
            // Transfers and reshards are not physical (checked first).
            _ => return None,
        };
        Some(Step {
            kind,
            label,
            devices,
            frees: Vec::new(),
        })
    }

    /// The index of computation `callee`, added on its first call: its
    /// text without pw's annotations, or its Python function.
    fn computation(&mut self, callee: &str) -> Option<usize> {
        if let Some(&c) = self.computations.get(callee) {
            return Some(c);
        }
        let c = self.analysis.program.computation(callee)?;
        self.plan.computations.push(Computation {
            name: callee.to_owned(),
            module: match &c.python {
                Some(function) => Module::Python(function.clone()),
                None => Module::Text(print::print_without(
                    c.op,
                    &[ops::ATTR_NUM_PARTITIONS, ops::ATTR_DEVICE_ASSIGNMENTS],
                )),
            },
            num_partitions: c.num_partitions as usize,
        });
        let index = self.plan.computations.len() - 1;
        self.computations.insert(callee.to_owned(), index);
        Some(index)
    }
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
