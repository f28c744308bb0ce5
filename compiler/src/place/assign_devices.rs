//! `pw-assign-devices`: places every call and every value on a virtual mesh.
//!
//! After it runs:
//! - every `pw.call` runs on a mesh (`on @m`) and its results live there;
//! - every program input is placed, and `@main`'s signature says so;
//! - what the program already placed is unchanged.
//!
//! The policy, deterministic, for each unplaced call in program order (its
//! producers are decided before it):
//! 1. the candidates are the meshes the computation fits (as many devices as
//!    it has partitions, the axes it was lowered for);
//! 2. the call goes to the candidate that already holds the most bytes of its
//!    operands: the producer that would otherwise send it the most bytes;
//! 3. ties go to the candidate with the least estimated work so far (see
//!    [`crate::analysis::cost`]), then to the first declared;
//! 4. with no candidate, a new mesh `@autoN` (N devices, the computation's
//!    axes) is declared, on the island of the mesh its largest operand
//!    comes from.
//!
//! Unplaced inputs go where their consumers read the most bytes of them
//! (ties: the first consumer); an input nothing reads goes to the first mesh.
//!
//! ```mlir
//! %0 = pw.call @f(%x) : (!pw.array<8xf32>) -> !pw.array<8xf32>
//! // becomes, with %x produced on @a and @f fitting @a:
//! %0 = pw.call @f(%x) on @a : (!pw.array<8xf32, @a>) -> !pw.array<8xf32, @a>
//! ```

use crate::{analysis::cost, fail, Error, Pass, PassFailure};
use melior::{
    ir::{
        attribute::{ArrayAttribute, FlatSymbolRefAttribute, StringAttribute},
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        Attribute, Identifier, Location, Module, Value,
    },
    Context,
};
use pw_core::geometry::MeshShape;
use pw_dialect::{
    edit,
    ops::{self, OpKind},
    Analysis, Computation,
};
use std::collections::HashMap;

/// See the module documentation.
pub struct AssignDevices;

impl Pass for AssignDevices {
    fn argument(&self) -> &'static str {
        "pw-assign-devices"
    }

    fn run<'c>(
        &self,
        context: &'c Context,
        module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>> {
        let program = &analysis.program;
        let mut meshes: Vec<(String, MeshShape)> = program
            .meshes
            .iter()
            .map(|m| (m.name.clone(), m.shape.clone()))
            .collect();
        let work = cost::computation_work(program);
        let mut load: HashMap<String, f64> = HashMap::new();
        let mut created = 0;

        for &op in analysis.ops() {
            if OpKind::of(&op) != Some(OpKind::Call) {
                continue;
            }
            let Some(computation) =
                ops::symbol_attr(&op, ops::ATTR_CALLEE).and_then(|c| program.computation(&c))
            else {
                continue;
            };
            let seconds = work
                .get(&computation.name)
                .map_or(0.0, |w| w.seconds(computation.num_partitions));
            if let Some(mesh) = ops::symbol_attr(&op, ops::ATTR_MESH) {
                *load.entry(mesh).or_default() += seconds;
                continue;
            }
            let held = bytes_by_mesh(analysis, op.operands());
            let mesh = match choose(&meshes, computation, &held, &load) {
                Some(mesh) => mesh,
                None => {
                    let name = fresh_name(&meshes, computation.num_partitions, &mut created);
                    let shape = own_shape(computation);
                    let island = heaviest(&held);
                    declare_mesh(
                        context,
                        module,
                        &name,
                        &shape,
                        island.as_deref(),
                        op.location(),
                    )?;
                    meshes.push((name.clone(), shape));
                    name
                }
            };
            *load.entry(mesh.clone()).or_default() += seconds;
            edit::set_attribute(
                op,
                ops::ATTR_MESH,
                FlatSymbolRefAttribute::new(context, &mesh).into(),
            );
            for result in op.results() {
                if let Ok(info) = analysis.value(result.into()) {
                    let t = &info.ty;
                    edit::set_array_type(
                        context,
                        result.into(),
                        &t.placed(Some(&mesh), t.sharding.clone()),
                    );
                }
            }
        }

        if meshes.is_empty() && has_unplaced_input(analysis) {
            let shape = MeshShape::default();
            let name = fresh_name(&meshes, 1, &mut created);
            declare_mesh(context, module, &name, &shape, None, program.location())?;
            meshes.push((name, shape));
        }
        place_inputs(context, analysis, &meshes);
        edit::sync_function_type(context, program.entry);
        Ok(())
    }
}

/// Bytes of the given values held on each mesh.
fn bytes_by_mesh<'c, 'a>(
    analysis: &Analysis<'c, '_>,
    values: impl Iterator<Item = Value<'c, 'a>>,
) -> HashMap<String, u64> {
    let mut held: HashMap<String, u64> = HashMap::new();
    for v in values {
        if let Ok(info) = analysis.value(v) {
            if let Some(mesh) = &info.ty.mesh {
                let bytes = held.entry(mesh.clone()).or_default();
                *bytes = bytes.saturating_add(info.bytes);
            }
        }
    }
    held
}

/// The mesh holding the most bytes (ties: the smallest name, for
/// determinism).
fn heaviest(held: &HashMap<String, u64>) -> Option<String> {
    held.iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(m, _)| m.clone())
}

/// Steps 1-3 of the policy.
fn choose(
    meshes: &[(String, MeshShape)],
    computation: &Computation,
    held: &HashMap<String, u64>,
    load: &HashMap<String, f64>,
) -> Option<String> {
    let mut best: Option<(&String, u64, f64)> = None;
    for (name, shape) in meshes {
        if computation.fits(shape).is_err() {
            continue;
        }
        let bytes = held.get(name).copied().unwrap_or(0);
        let work = load.get(name).copied().unwrap_or(0.0);
        let better = match best {
            None => true,
            Some((_, b, w)) => bytes > b || (bytes == b && work < w),
        };
        if better {
            best = Some((name, bytes, work));
        }
    }
    best.map(|(name, _, _)| name.clone())
}

/// The axes a new mesh for `computation` gets: those it was lowered for, or
/// one axis `x` over its partitions.
fn own_shape(computation: &Computation) -> MeshShape {
    match &computation.mesh {
        Some(shape) if shape.size() == Some(computation.num_partitions) => shape.clone(),
        _ if computation.num_partitions == 1 => MeshShape::default(),
        _ => MeshShape::new(vec![("x".to_owned(), computation.num_partitions)]),
    }
}

fn fresh_name(meshes: &[(String, MeshShape)], devices: i64, created: &mut usize) -> String {
    loop {
        let name = if *created == 0 {
            format!("auto{devices}")
        } else {
            format!("auto{devices}_{created}")
        };
        *created += 1;
        if meshes.iter().all(|(m, _)| *m != name) {
            return name;
        }
    }
}

/// Adds `pw.mesh @name` after the program's last mesh (or first, if none).
fn declare_mesh<'c>(
    context: &'c Context,
    module: &Module<'c>,
    name: &str,
    shape: &MeshShape,
    same_island_as: Option<&str>,
    location: Location<'c>,
) -> Result<(), PassFailure<'c>> {
    let names: Vec<Attribute> = shape
        .axes
        .iter()
        .map(|(a, _)| StringAttribute::new(context, a).into())
        .collect();
    let sizes: Vec<i64> = shape.axes.iter().map(|(_, s)| *s).collect();
    let mut attributes = vec![
        (
            Identifier::new(context, ops::ATTR_SYM_NAME),
            StringAttribute::new(context, name).into(),
        ),
        (
            Identifier::new(context, ops::ATTR_AXIS_NAMES),
            ArrayAttribute::new(context, &names).into(),
        ),
        (
            Identifier::new(context, ops::ATTR_AXIS_SIZES),
            ops::dense_i64(context, &sizes),
        ),
    ];
    if let Some(island) = same_island_as {
        attributes.push((
            Identifier::new(context, ops::ATTR_SAME_ISLAND_AS),
            FlatSymbolRefAttribute::new(context, island).into(),
        ));
    }
    let op = OperationBuilder::new(ops::MESH, location)
        .add_attributes(&attributes)
        .build()
        .map_err(|e| {
            fail(
                location,
                Error::Build {
                    pass: "pw-assign-devices",
                    op: ops::MESH,
                    reason: e.to_string(),
                },
            )
        })?;
    let body = module.body();
    let mut last_mesh = None;
    let mut next = body.first_operation();
    while let Some(o) = next {
        next = o.next_in_block();
        if ops::op_name(&o) == ops::MESH {
            last_mesh = Some(o);
        }
    }
    match (last_mesh, body.first_operation()) {
        (Some(after), _) => {
            body.insert_operation_after(after, op);
        }
        (None, Some(first)) => {
            body.insert_operation_before(first, op);
        }
        (None, None) => {
            body.append_operation(op);
        }
    }
    Ok(())
}

fn has_unplaced_input(analysis: &Analysis) -> bool {
    analysis
        .program
        .inputs()
        .into_iter()
        .filter_map(|v| analysis.value(v).ok())
        .any(|info| info.ty.mesh.is_none())
}

/// Places unplaced program inputs (see the module documentation).
fn place_inputs<'c>(
    context: &'c Context,
    analysis: &Analysis<'c, '_>,
    meshes: &[(String, MeshShape)],
) {
    for value in analysis.program.inputs() {
        let Ok(info) = analysis.value(value) else {
            continue;
        };
        let t = &info.ty;
        if t.mesh.is_some() {
            continue;
        }
        let mut read: Vec<(String, u64)> = Vec::new();
        for user in ops::users_in_order(value) {
            if let Some(mesh) = ops::symbol_attr(&user, ops::ATTR_MESH) {
                match read.iter_mut().find(|(m, _)| *m == mesh) {
                    Some((_, bytes)) => *bytes = bytes.saturating_add(info.bytes),
                    None => read.push((mesh, info.bytes)),
                }
            }
        }
        // The first consumer wins ties: max_by keeps the last maximum, so
        // search the reversed list.
        let chosen = read
            .iter()
            .rev()
            .max_by_key(|(_, bytes)| *bytes)
            .map(|(m, _)| m.clone())
            .or_else(|| meshes.first().map(|(m, _)| m.clone()));
        if let Some(mesh) = chosen {
            edit::set_array_type(context, value, &t.placed(Some(&mesh), None));
        }
    }
}
