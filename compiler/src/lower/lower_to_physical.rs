//! `pw-lower-to-physical`: binds meshes to devices and turns every transfer
//! into per-shard copies.
//!
//! Options: `topology=FILE` (see [`pw_core::topology`]); without it, one
//! island `local` of `devices=N` devices (default 8) of `kind=K` (default
//! `cpu`).
//!
//! After it runs:
//! - every `pw.mesh` has `devices`, chosen by [`super::allocate`], or the
//!   pass failed with a diagnostic naming the mesh and the unmet constraint;
//! - no `pw.transfer` or `pw.reshard` is left: each became the `pw.copy`,
//!   `pw.scatter` and `pw.gather` ops of a byte-minimal plan
//!   ([`pw_core::relayout`]), each piece labelled with the link it crosses, joined
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

use super::allocate::{allocate, Request};
use crate::Error;
use crate::{check_options, fail, OptionList, Options, Pass, PassFailure};
use melior::{
    ir::{
        attribute::{ArrayAttribute, IntegerAttribute},
        operation::{OperationLike, OperationRef},
        r#type::IntegerType,
        Attribute, Module, TypeLike, Value, ValueLike,
    },
    Context,
};
use pw_core::{
    relayout::{self, group, plan, CopyOp, Placed},
    topology::Links,
    Topology,
};
use pw_dialect::{
    analysis::FastMap,
    edit,
    legality::Stage,
    ops::{self, OpKind},
    Analysis, ArrayInfo,
};
use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    rc::Rc,
};

/// See the module documentation.
pub struct LowerToPhysical {
    pub topology: Topology,
}

/// The options `pw-lower-to-physical` accepts.
/// The pass's command-line name.
pub const PASS: &str = "pw-lower-to-physical";

pub const OPTIONS: OptionList = &[
    ("topology", "TOML or JSON file of islands and devices"),
    ("devices", "devices of the default local island (default 8)"),
    (
        "kind",
        "device kind of the default local island (default cpu)",
    ),
];

/// Devices of the default local island.
pub const DEFAULT_DEVICES: i64 = 8;

/// The most pieces the copies of one physical program may have: lowering
/// stops before planning more (a few hundred bytes of program can ask for
/// billions).
pub const MAX_PIECES: u64 = 1 << 24;

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
                .map_err(|_| format!("devices={n} is not a number"))?,
            None => DEFAULT_DEVICES,
        };
        let kind = options.get("kind").map_or("cpu", String::as_str);
        if kind.is_empty() {
            return Err("kind= needs a device kind".into());
        }
        Ok(Self {
            topology: Topology::local(devices, kind)
                .map_err(|e| format!("devices={devices}: {e}"))?,
        })
    }
}

impl Pass for LowerToPhysical {
    fn argument(&self) -> &'static str {
        PASS
    }

    fn requires(&self) -> Option<Stage> {
        Some(Stage::Sharded)
    }

    fn run<'c>(
        &self,
        context: &'c Context,
        module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>> {
        bind_meshes(context, analysis, &self.topology)?;
        // The meshes changed: read the program again to see their devices.
        let analysis = Analysis::read(module)
            .map_err(|d| d.into_iter().map(|d| d.map(Into::into)).collect::<Vec<_>>())?;
        let mut lowering = Lowering {
            context,
            analysis: &analysis,
            links: self.topology.links(),
            budget: MAX_PIECES,
            planned: HashMap::default(),
        };
        for &op in analysis.ops() {
            if matches!(OpKind::of(&op), Some(OpKind::Transfer | OpKind::Reshard)) {
                lowering
                    .lower_move(op)
                    .map_err(|e| fail(op.location(), e))?;
            }
        }
        set_compile_parameters(context, &analysis);
        Ok(())
    }
}

fn bind_meshes<'c>(
    context: &'c Context,
    analysis: &Analysis<'c, '_>,
    topology: &Topology,
) -> Result<(), PassFailure<'c>> {
    let program = &analysis.program;
    let requests: Vec<Request> = program
        .meshes
        .iter()
        .map(|m| Request {
            name: m.name.clone(),
            size: m.size,
            kind: m.kind.clone(),
            same_island_as: m.same_island_as.clone(),
            fixed: m.devices.clone(),
        })
        .collect();
    let bound = allocate(&requests, topology).map_err(|unmet| {
        let location = program
            .mesh(&unmet.mesh)
            .map_or(program.location(), |m| m.op.location());
        fail(location, Error::Allocation(unmet.message))
    })?;
    for mesh in &program.meshes {
        if mesh.devices.is_none() {
            if let Some(devices) = bound.get(&mesh.name) {
                edit::set_attribute(mesh.op, ops::ATTR_DEVICES, ops::dense_i64(context, devices));
            }
        }
    }
    Ok(())
}

/// A placed array's tiling and devices, on a bound mesh.
fn placement<'i>(analysis: &'i Analysis, info: &'i ArrayInfo) -> Option<Placed<'i>> {
    let mesh = analysis.program.mesh(info.ty.mesh.as_deref()?)?;
    Some(Placed {
        tiles: info.tiling.as_ref()?,
        devices: mesh.devices.as_deref()?,
    })
}

/// The copy ops one move between two types becomes.
struct Planned<'c> {
    /// Each op's name and `pieces` attribute.
    ops: Vec<(&'static str, Attribute<'c>)>,
    /// How many pieces they hold.
    pieces: u64,
}

/// The state of lowering one program's moves.
struct Lowering<'p, 'c, 'a> {
    context: &'c Context,
    analysis: &'p Analysis<'c, 'a>,
    links: Links,
    /// Pieces still allowed (see [`MAX_PIECES`]).
    budget: u64,
    /// Plans by (source type, destination type): types are uniqued and a
    /// plan depends on nothing else, so each pair is planned once.
    planned: FastMap<(usize, usize), Rc<Planned<'c>>>,
}

impl<'c> Lowering<'_, 'c, '_> {
    fn lower_move(&mut self, op: OperationRef<'c, '_>) -> Result<(), Error> {
        let (Ok(input), Ok(result)) = (op.operand(0), op.result(0)) else {
            return Err(Error::NotPlaced);
        };
        let result: Value = result.into();
        // The copies and their assembly all have the move's result type.
        let to_type = result.r#type();
        let key = (
            input.r#type().to_raw().ptr as usize,
            to_type.to_raw().ptr as usize,
        );
        let planned = match self.planned.get(&key) {
            Some(planned) => planned.clone(),
            None => {
                let planned = Rc::new(self.plan_move(input, result)?);
                self.planned.insert(key, planned.clone());
                planned
            }
        };
        if planned.pieces > self.budget {
            return Err(Error::TooManyPieces { limit: MAX_PIECES });
        }
        self.budget -= planned.pieces;
        let location = op.location();
        let build_failed = |op: &'static str, reason: String| Error::Build {
            pass: PASS,
            op,
            reason,
        };
        let mut parts = Vec::with_capacity(planned.ops.len());
        for &(name, pieces) in &planned.ops {
            let built = ops::build_piece_op(self.context, name, location, input, to_type, pieces)
                .map_err(|e| build_failed(name, e.to_string()))?;
            let inserted = edit::insert_before(op, built)
                .and_then(|i| i.result(0).ok())
                .ok_or_else(|| build_failed(name, "the move is outside a block".into()))?;
            parts.push(inserted.into());
        }
        let assemble = ops::build_assemble(location, &parts, to_type)
            .map_err(|e| build_failed(ops::ASSEMBLE, e.to_string()))?;
        let assembled = edit::insert_before(op, assemble)
            .and_then(|a| a.result(0).ok())
            .ok_or_else(|| build_failed(ops::ASSEMBLE, "the move is outside a block".into()))?;
        edit::replace_all_uses(result, assembled.into());
        edit::erase(op);
        Ok(())
    }

    /// Plans a move from `input`'s type to `result`'s, within the budget.
    fn plan_move(&self, input: Value<'c, '_>, result: Value<'c, '_>) -> Result<Planned<'c>, Error> {
        let analysis = self.analysis;
        let (Ok(from), Ok(to)) = (analysis.value(input), analysis.value(result)) else {
            return Err(Error::NotPlaced);
        };
        let (Some(src), Some(dst)) = (placement(analysis, &from), placement(analysis, &to)) else {
            return Err(Error::NotPlaced);
        };
        let count = relayout::count(src.tiles, dst.tiles);
        if count > self.budget {
            return Err(Error::TooManyPieces { limit: MAX_PIECES });
        }
        let shards = plan(src, dst, |a, b| self.links.link(a, b));
        let ops = group(shards)
            .into_iter()
            .map(|copy| {
                let (name, pieces) = match copy {
                    CopyOp::Copy(piece) => (ops::COPY, vec![piece]),
                    CopyOp::Scatter(pieces) => (ops::SCATTER, pieces),
                    CopyOp::Gather(pieces) => (ops::GATHER, pieces),
                };
                (name, pw_dialect::pieces_attribute(self.context, &pieces))
            })
            .collect();
        Ok(Planned { ops, pieces: count })
    }
}

/// Records, on every computation, its partition count and the device lists
/// of the meshes it runs on.
fn set_compile_parameters<'c>(context: &'c Context, analysis: &Analysis<'c, '_>) {
    let program = &analysis.program;
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
        edit::set_attribute(
            computation.op,
            ops::ATTR_NUM_PARTITIONS,
            IntegerAttribute::new(
                IntegerType::new(context, 64).into(),
                computation.num_partitions,
            )
            .into(),
        );
        edit::set_attribute(
            computation.op,
            ops::ATTR_DEVICE_ASSIGNMENTS,
            ArrayAttribute::new(context, &lists).into(),
        );
    }
}
