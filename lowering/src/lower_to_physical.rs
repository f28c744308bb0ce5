//! `pw-lower-to-physical`: binds meshes to devices and turns every transfer
//! into per-shard copies.
//!
//! Options: `topology=FILE` (see [`pw_core::topology`]); without it, one
//! island `local` of `devices=N` devices (default 8) of `kind=K` (default
//! `cpu`).
//!
//! After it runs:
//! - every `pw.mesh` has `devices`, chosen by [`crate::allocate`], or the
//!   pass failed with a diagnostic naming the mesh and the unmet constraint;
//! - no `pw.transfer` or `pw.reshard` is left: each became the `pw.copy`,
//!   `pw.scatter` and `pw.gather` ops of a byte-minimal plan
//!   ([`crate::transfer_plan`]), each piece labelled with the link it crosses, joined
//!   by a `pw.assemble`;
//! - every computation has `pw.num_partitions` and `pw.device_assignments`
//!   (the device list of each mesh it runs on), its compile parameters.
//!
//! ```mlir
//! %1 = pw.transfer %0 : !pw.array<4xf32, @a, [{"x"}]> -> !pw.array<4xf32, @b, [{}]>
//! // becomes, with @a on devices [0, 1] and @b on [2]:
//! %p = pw.gather %0 [#pw.piece<0 [0] -> 2 [0] size [2] intra_island>,
//!                    #pw.piece<1 [0] -> 2 [2] size [2] intra_island>] : ...
//! %1 = pw.assemble %p : ...
//! ```

use crate::{
    allocate::{allocate, Request},
    transfer_plan::{group, plan, CopyOp, Placed},
};
use melior::{
    ir::{
        attribute::{ArrayAttribute, IntegerAttribute},
        operation::{OperationLike, OperationRef},
        r#type::IntegerType,
        Attribute, Module, Value,
    },
    Context,
};
use pw_core::{geometry::Layout, Topology};
use pw_dialect::{
    diag::Diag,
    ops::{self, OpKind},
    ArrayType, Program,
};
use pw_passes::{check_options, edit, read_program, Options, Pass, PassFailed};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// See the module documentation.
pub struct LowerToPhysical {
    pub topology: Topology,
}

/// The options `pw-lower-to-physical` accepts.
pub const OPTIONS: &[&str] = &["topology", "devices", "kind"];

/// Devices of the default local island.
pub const DEFAULT_DEVICES: i64 = 8;

impl LowerToPhysical {
    /// Builds the pass from its command-line options.
    pub fn from_options(options: &Options) -> Result<Self, String> {
        check_options("pw-lower-to-physical", options, OPTIONS)?;
        if let Some(path) = options.get("topology") {
            if options.contains_key("devices") || options.contains_key("kind") {
                return Err("give either topology=FILE or devices=N/kind=K, not both".into());
            }
            return Topology::load(std::path::Path::new(path))
                .map(|topology| Self { topology })
                .map_err(|e| e.to_string());
        }
        let devices = match options.get("devices") {
            Some(n) => n
                .parse::<i64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("devices={n} is not a positive number"))?,
            None => DEFAULT_DEVICES,
        };
        let kind = options.get("kind").map_or("cpu", String::as_str);
        Ok(Self {
            topology: Topology::local(devices, kind),
        })
    }
}

impl Pass for LowerToPhysical {
    fn argument(&self) -> &'static str {
        "pw-lower-to-physical"
    }

    fn run<'c>(&self, context: &'c Context, module: &Module<'c>) -> Result<(), PassFailed> {
        let program = read_program(module)?;
        bind_meshes(context, &program, &self.topology)?;
        // The meshes changed: read the program again to see their devices.
        let program = read_program(module)?;
        for op in program.ops() {
            if matches!(OpKind::of(&op), Some(OpKind::Transfer | OpKind::Reshard)) {
                lower_move(context, &program, &self.topology, op)?;
            }
        }
        set_compile_parameters(context, &program);
        Ok(())
    }
}

fn bind_meshes<'c>(
    context: &'c Context,
    program: &Program<'c, '_>,
    topology: &Topology,
) -> Result<(), PassFailed> {
    let requests: Vec<Request> = program
        .meshes
        .iter()
        .map(|m| Request {
            name: m.name.clone(),
            size: m.size(),
            kind: m.kind.clone(),
            same_island_as: m.same_island_as.clone(),
            fixed: m.devices.clone(),
        })
        .collect();
    let bound = allocate(&requests, topology).map_err(|unmet| {
        let location = program
            .mesh(&unmet.mesh)
            .map_or(program.location(), |m| m.op.location());
        Diag::error(location, unmet.message).emit();
        PassFailed
    })?;
    for mesh in &program.meshes {
        if mesh.devices.is_none() {
            if let Some(devices) = bound.get(&mesh.name) {
                let mut op = mesh.op;
                edit::set_attribute(&mut op, ops::ATTR_DEVICES, ops::dense_i64(context, devices));
            }
        }
    }
    Ok(())
}

/// A placed array's layout and devices.
fn placement(program: &Program, t: &ArrayType) -> Option<(Layout, Vec<i64>)> {
    let mesh = program.mesh(t.mesh.as_deref()?)?;
    let layout = Layout::new(&t.shape, t.sharding.as_ref()?, &mesh.shape).ok()?;
    Some((layout, mesh.devices.clone()?))
}

fn lower_move<'c>(
    context: &'c Context,
    program: &Program<'c, '_>,
    topology: &Topology,
    op: OperationRef<'c, '_>,
) -> Result<(), PassFailed> {
    let fail = |message: &str| {
        Diag::error(op.location(), message).emit();
        PassFailed
    };
    let (Ok(input), Ok(result)) = (op.operand(0), op.result(0)) else {
        return Err(fail("malformed move"));
    };
    let result: Value = result.into();
    let (Some(from), Some(to)) = (edit::array_type(input), edit::array_type(result)) else {
        return Err(fail("a move between non-array types"));
    };
    let (Some((src_layout, src_devices)), Some((dst_layout, dst_devices))) =
        (placement(program, &from), placement(program, &to))
    else {
        return Err(fail(
            "lowering needs placed, sharded arrays on bound meshes",
        ));
    };
    let shards = plan(
        Placed {
            layout: &src_layout,
            devices: &src_devices,
        },
        Placed {
            layout: &dst_layout,
            devices: &dst_devices,
        },
        |a, b| topology.link(a, b),
    );
    let mut parts = Vec::new();
    for copy in group(shards) {
        let (name, pieces) = match copy {
            CopyOp::Copy(piece) => (ops::COPY, vec![piece]),
            CopyOp::Scatter(pieces) => (ops::SCATTER, pieces),
            CopyOp::Gather(pieces) => (ops::GATHER, pieces),
        };
        let built = ops::build_piece_op(context, name, op.location(), input, &to, &pieces)
            .map_err(|_| fail("cannot build a copy"))?;
        let inserted =
            edit::insert_before(op, built).ok_or_else(|| fail("move outside a block"))?;
        parts.push(
            inserted
                .result(0)
                .map_err(|_| fail("copy without result"))?
                .into(),
        );
    }
    let assemble = ops::build_assemble(context, op.location(), &parts, &to)
        .map_err(|_| fail("cannot build pw.assemble"))?;
    let assembled =
        edit::insert_before(op, assemble).ok_or_else(|| fail("move outside a block"))?;
    let assembled = assembled
        .result(0)
        .map_err(|_| fail("pw.assemble without result"))?;
    edit::replace_all_uses(result, assembled.into());
    edit::erase(op);
    Ok(())
}

/// Records, on every computation, its partition count and the device lists
/// of the meshes it runs on.
fn set_compile_parameters<'c>(context: &'c Context, program: &Program<'c, '_>) {
    let mut assignments: HashMap<String, BTreeSet<Vec<i64>>> = HashMap::new();
    for op in program.ops() {
        if OpKind::of(&op) != Some(OpKind::Call) {
            continue;
        }
        let callee = ops::symbol_attr(&op, ops::ATTR_CALLEE).unwrap_or_default();
        let devices = ops::symbol_attr(&op, ops::ATTR_MESH)
            .and_then(|m| program.mesh(&m))
            .and_then(|m| m.devices.clone());
        if let Some(devices) = devices {
            assignments.entry(callee).or_default().insert(devices);
        }
    }
    let ordered: BTreeMap<_, _> = assignments.into_iter().collect();
    for computation in &program.computations {
        let Some(sets) = ordered.get(&computation.name) else {
            continue;
        };
        let lists: Vec<Attribute> = sets.iter().map(|d| ops::dense_i64(context, d)).collect();
        let mut module = computation.op;
        edit::set_attribute(
            &mut module,
            ops::ATTR_NUM_PARTITIONS,
            IntegerAttribute::new(
                IntegerType::new(context, 64).into(),
                computation.num_partitions,
            )
            .into(),
        );
        edit::set_attribute(
            &mut module,
            ops::ATTR_DEVICE_ASSIGNMENTS,
            ArrayAttribute::new(context, &lists).into(),
        );
    }
}
