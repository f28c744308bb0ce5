//! The program verifier: whole-program rules that the op definitions alone
//! cannot check.
//!
//! MLIR's own verifier has already run when this one does (parsing
//! verifies): op structure, types of operands and attributes, SSA dominance
//! (every value defined before use, hence an acyclic graph) and unique
//! symbols. This one checks, each failure located at the offending op:
//! - the program's structure (see [`crate::program`]);
//! - meshes: axes well formed, constraints refer to existing meshes, a
//!   physical device list matches the mesh size;
//! - arrays: referenced meshes exist, shardings name axes of their mesh,
//!   each at most once, and sharded dimensions divide by their axes' sizes;
//! - calls: the callee exists and the call matches its entry signature
//!   (arity, shapes, dtypes); a placed call's mesh has as many devices as
//!   the computation has partitions, and the axes it was lowered for;
//! - transfers keep the array type and cross meshes (transfer) or stay
//!   within one (reshard);
//! - physical copies: every piece reads inside a source shard and writes
//!   inside a destination shard, at the same global position; copies,
//!   scatters and gathers have their shape; assembled parts give every
//!   destination device exactly one shard.

use crate::{
    array_type::ArrayType,
    diag::Diag,
    ops::{self, defining_op, users, OpKind},
    piece::read_pieces,
    program::{Computation, Mesh, Misfit, Program},
};
use melior::ir::{
    operation::{OperationLike, OperationRef},
    Location, Module, Value, ValueLike,
};
use pw_core::{
    geometry::{Layout, Region},
    Link, Piece,
};
use std::collections::{HashMap, HashSet};

/// Verifies a program; returns the diagnostics (empty when it is valid).
pub fn verify<'c>(module: &Module<'c>) -> Vec<Diag<'c>> {
    let program = match Program::read(module) {
        Ok(program) => program,
        Err(diags) => return diags,
    };
    let mut verifier = Verifier {
        program: &program,
        diags: Vec::new(),
    };
    verifier.meshes();
    verifier.body();
    verifier.diags
}

struct Verifier<'p, 'c, 'a> {
    program: &'p Program<'c, 'a>,
    diags: Vec<Diag<'c>>,
}

impl<'p, 'c, 'a> Verifier<'p, 'c, 'a> {
    fn error(&mut self, location: Location<'c>, message: impl Into<String>) {
        self.diags.push(Diag::error(location, message));
    }

    fn meshes(&mut self) {
        for mesh in &self.program.meshes {
            let location = mesh.op.location();
            let names = mesh.op.attribute(ops::ATTR_AXIS_NAMES).ok();
            let declared = names.and_then(ops::array_elements).map_or(0, |a| a.len());
            let sizes = ops::i64_array_attr(&mesh.op, ops::ATTR_AXIS_SIZES).unwrap_or_default();
            if declared != sizes.len() {
                self.error(
                    location,
                    format!(
                        "mesh @{} has {declared} axis names but {} sizes",
                        mesh.name,
                        sizes.len()
                    ),
                );
                continue;
            }
            let mut seen = HashSet::new();
            for (axis, size) in &mesh.shape.axes {
                if axis.is_empty() || !seen.insert(axis) {
                    self.error(
                        location,
                        format!(
                            "mesh @{} repeats or has an empty axis name \"{axis}\"",
                            mesh.name
                        ),
                    );
                }
                if *size < 1 {
                    self.error(
                        location,
                        format!(
                            "axis \"{axis}\" of mesh @{} has size {size}; sizes must be >= 1",
                            mesh.name
                        ),
                    );
                }
            }
            if mesh.kind.as_deref() == Some("") {
                self.error(
                    location,
                    format!("mesh @{} has an empty device kind", mesh.name),
                );
            }
            if let Some(other) = &mesh.same_island_as {
                if other == &mesh.name {
                    self.error(
                        location,
                        format!("mesh @{} cannot be on the same island as itself", mesh.name),
                    );
                } else if self.program.mesh(other).is_none() {
                    self.error(
                        location,
                        format!(
                            "mesh @{} must share an island with unknown mesh @{other}",
                            mesh.name
                        ),
                    );
                }
            }
            if let Some(devices) = &mesh.devices {
                let unique: HashSet<_> = devices.iter().collect();
                if devices.len() as i64 != mesh.size() {
                    self.error(
                        location,
                        format!(
                            "mesh @{} has {} devices but its axes need {}",
                            mesh.name,
                            devices.len(),
                            mesh.size()
                        ),
                    );
                } else if unique.len() != devices.len() || devices.iter().any(|&d| d < 0) {
                    self.error(
                        location,
                        format!(
                            "mesh @{} lists a device twice or a negative device id",
                            mesh.name
                        ),
                    );
                }
            }
        }
    }

    fn body(&mut self) {
        let program = self.program;
        if program.body().is_none() {
            self.error(program.location(), "func.func @main has no body");
            return;
        }
        for input in program.inputs() {
            self.array(program.location(), &input, "program input");
        }
        let mut types: HashMap<*const std::ffi::c_void, ArrayType> = HashMap::new();
        for op in program.ops() {
            let location = op.location();
            let Some(kind) = OpKind::of(&op) else {
                self.error(
                    location,
                    format!(
                        "'{}' is not a pw op; a program's body holds only pw ops",
                        ops::op_name(&op)
                    ),
                );
                continue;
            };
            if kind == OpKind::Return {
                continue;
            }
            let mut ok = true;
            for (i, result) in op.results().enumerate() {
                match self.array(location, &result.into(), &format!("result #{i}")) {
                    Some(t) => {
                        types.insert(result.to_raw().ptr, t);
                    }
                    None => ok = false,
                }
            }
            let operands: Option<Vec<ArrayType>> = op
                .operands()
                .map(|v| {
                    types
                        .get(&v.to_raw().ptr)
                        .cloned()
                        .or_else(|| ArrayType::read(v.r#type()).ok())
                })
                .collect();
            let (Some(operands), true) = (operands, ok) else {
                continue;
            };
            let results: Vec<ArrayType> = op
                .results()
                .filter_map(|r| types.get(&r.to_raw().ptr).cloned())
                .collect();
            let unary = matches!(
                kind,
                OpKind::Transfer
                    | OpKind::Reshard
                    | OpKind::Copy
                    | OpKind::Scatter
                    | OpKind::Gather
            );
            if unary && !operands[0].same_tensor(&results[0]) {
                self.error(
                    location,
                    format!(
                        "{} changes the array type from {} to {}",
                        ops::op_name(&op),
                        operands[0].tensor_string(),
                        results[0].tensor_string()
                    ),
                );
                continue;
            }
            match kind {
                OpKind::Call => self.call(op, &operands, &results),
                OpKind::Transfer | OpKind::Reshard => {
                    self.move_op(op, kind, &operands[0], &results[0])
                }
                OpKind::Copy | OpKind::Scatter | OpKind::Gather => {
                    self.piece_op(op, kind, &operands[0], &results[0])
                }
                OpKind::Assemble => self.assemble(op, &results[0]),
                OpKind::Return => {}
            }
        }
    }

    /// Reads a value as a pw array and checks its mesh and sharding.
    fn array(
        &mut self,
        location: Location<'c>,
        value: &Value<'c, '_>,
        what: &str,
    ) -> Option<ArrayType> {
        let t = match ArrayType::read(value.r#type()) {
            Ok(t) => t,
            Err(e) => {
                self.error(location, format!("{what}: {e}"));
                return None;
            }
        };
        let Some(mesh_name) = t.mesh.as_deref() else {
            return Some(t);
        };
        let Some(mesh) = self.program.mesh(mesh_name) else {
            self.error(
                location,
                format!("{what} is placed on unknown mesh @{mesh_name}"),
            );
            return None;
        };
        if let Some(sharding) = &t.sharding {
            if let Err(e) = Layout::new(&t.shape, sharding, &mesh.shape) {
                self.error(
                    location,
                    format!(
                        "{what}: sharding {sharding} of {} does not fit mesh @{mesh_name}: {e}",
                        t.tensor_string()
                    ),
                );
                return None;
            }
        }
        Some(t)
    }

    fn call(&mut self, op: OperationRef<'c, 'a>, operands: &[ArrayType], results: &[ArrayType]) {
        let location = op.location();
        let program = self.program;
        let Some(callee) = ops::symbol_attr(&op, ops::ATTR_CALLEE) else {
            return;
        };
        let Some(computation) = program.computation(&callee) else {
            self.error(location, format!("call to unknown computation @{callee}"));
            return;
        };
        self.signature(
            location,
            computation,
            "argument",
            operands,
            &computation.inputs,
        );
        self.signature(
            location,
            computation,
            "result",
            results,
            &computation.outputs,
        );
        let mesh_name = ops::symbol_attr(&op, ops::ATTR_MESH);
        for (i, r) in results.iter().enumerate() {
            if r.mesh != mesh_name {
                let on = |m: &Option<String>| {
                    m.as_ref()
                        .map_or("unplaced".to_owned(), |m| format!("on @{m}"))
                };
                self.error(
                    location,
                    format!(
                        "result #{i} is {} but the call is {}",
                        on(&r.mesh),
                        on(&mesh_name)
                    ),
                );
            }
        }
        let shardings = ops::in_shardings(&op);
        let Some(mesh_name) = mesh_name else {
            if shardings.is_some() {
                self.error(location, "an unplaced call cannot have in_shardings");
            }
            return;
        };
        let Some(mesh) = program.mesh(&mesh_name) else {
            self.error(
                location,
                format!("call placed on unknown mesh @{mesh_name}"),
            );
            return;
        };
        self.fits(location, computation, mesh);
        if let Some(shardings) = shardings {
            if shardings.len() != operands.len() {
                self.error(
                    location,
                    format!(
                        "in_shardings has {} entries for {} operands",
                        shardings.len(),
                        operands.len()
                    ),
                );
                return;
            }
            for (i, (sharding, operand)) in shardings.iter().zip(operands).enumerate() {
                if let Err(e) = Layout::new(&operand.shape, sharding, &mesh.shape) {
                    self.error(
                        location,
                        format!("in_shardings #{i} {sharding} does not fit mesh @{mesh_name}: {e}"),
                    );
                }
            }
        }
    }

    fn signature(
        &mut self,
        location: Location<'c>,
        computation: &Computation,
        what: &str,
        actual: &[ArrayType],
        expected: &[crate::program::TensorSig],
    ) {
        if actual.len() != expected.len() {
            self.error(
                location,
                format!(
                    "computation @{} takes {} {what}s but the call has {}",
                    computation.name,
                    expected.len(),
                    actual.len()
                ),
            );
            return;
        }
        for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
            if a.shape != e.shape || Some(a.dtype) != e.dtype {
                self.error(
                    location,
                    format!(
                        "{what} #{i} is {} but computation @{} expects {}",
                        a.tensor_string(),
                        computation.name,
                        e.text
                    ),
                );
            }
        }
    }

    fn fits(&mut self, location: Location<'c>, computation: &Computation, mesh: &Mesh) {
        match computation.fits(&mesh.shape) {
            Ok(()) => {}
            Err(Misfit::Partitions { partitions, devices }) => self.error(
                location,
                format!(
                    "computation @{} is compiled for {partitions} partition(s) but mesh @{} has {devices} device(s)",
                    computation.name, mesh.name
                ),
            ),
            Err(Misfit::Axes { lowered_for }) => self.error(
                location,
                format!(
                    "computation @{} was lowered for mesh {lowered_for} but runs on mesh @{} {}",
                    computation.name, mesh.name, mesh.shape
                ),
            ),
        }
    }

    fn move_op(
        &mut self,
        op: OperationRef<'c, 'a>,
        kind: OpKind,
        from: &ArrayType,
        to: &ArrayType,
    ) {
        let location = op.location();
        let name = ops::op_name(&op);
        let (Some(a), Some(b)) = (&from.mesh, &to.mesh) else {
            self.error(
                location,
                format!("{name} moves placed arrays; both sides need a mesh"),
            );
            return;
        };
        if from.sharding.is_none() || to.sharding.is_none() {
            self.error(
                location,
                format!("{name} moves sharded arrays; both sides need a sharding"),
            );
            return;
        }
        match kind {
            OpKind::Transfer if a == b => self.error(
                location,
                format!("pw.transfer stays on mesh @{a}; use pw.reshard within a mesh"),
            ),
            OpKind::Reshard if a != b => self.error(
                location,
                format!("pw.reshard cannot move @{a} to @{b}; use pw.transfer"),
            ),
            _ => {}
        }
    }

    /// The physical layout of a placed, sharded array on a lowered mesh.
    fn physical(
        &mut self,
        location: Location<'c>,
        t: &ArrayType,
        side: &str,
    ) -> Option<(Layout, Vec<i64>)> {
        let mesh = t.mesh.as_deref().and_then(|m| self.program.mesh(m));
        let (Some(mesh), Some(sharding)) = (mesh, &t.sharding) else {
            self.error(
                location,
                format!("the {side} of a physical copy must be placed and sharded"),
            );
            return None;
        };
        let Some(devices) = mesh.devices.clone() else {
            self.error(
                location,
                format!(
                    "the {side} mesh @{} has no devices; run lowering first",
                    mesh.name
                ),
            );
            return None;
        };
        Layout::new(&t.shape, sharding, &mesh.shape)
            .ok()
            .map(|l| (l, devices))
    }

    fn piece_op(
        &mut self,
        op: OperationRef<'c, 'a>,
        kind: OpKind,
        from: &ArrayType,
        to: &ArrayType,
    ) {
        let location = op.location();
        let name = ops::op_name(&op);
        let Some(pieces) = op.attribute(ops::ATTR_PIECES).ok().and_then(read_pieces) else {
            return;
        };
        if pieces.is_empty() {
            self.error(location, format!("{name} moves no pieces"));
            return;
        }
        let (Some((src, src_devices)), Some((dst, dst_devices))) = (
            self.physical(location, from, "source"),
            self.physical(location, to, "destination"),
        ) else {
            return;
        };
        let src_shard = |device| {
            src_devices
                .iter()
                .position(|&d| d == device)
                .map(|p| &src.offsets[p])
        };
        let dst_shard = |device| {
            dst_devices
                .iter()
                .position(|&d| d == device)
                .map(|p| &dst.offsets[p])
        };
        for (i, piece) in pieces.iter().enumerate() {
            let rank = from.shape.len();
            if piece.sizes.len() != rank {
                self.error(
                    location,
                    format!(
                        "piece #{i} has rank {} for an array of rank {rank}",
                        piece.sizes.len()
                    ),
                );
                return;
            }
            let Some(src_origin) = src_shard(piece.src_device) else {
                self.error(
                    location,
                    format!(
                        "piece #{i} reads device {}, which holds no shard of the source",
                        piece.src_device
                    ),
                );
                return;
            };
            let Some(dst_origin) = dst_shard(piece.dst_device) else {
                self.error(
                    location,
                    format!(
                        "piece #{i} writes device {}, which holds no shard of the destination",
                        piece.dst_device
                    ),
                );
                return;
            };
            let inside = |offsets: &[i64], shard: &[i64]| {
                offsets
                    .iter()
                    .zip(&piece.sizes)
                    .zip(shard)
                    .all(|((o, s), e)| o + s <= *e)
            };
            if !inside(&piece.src_offsets, &src.shard_shape)
                || !inside(&piece.dst_offsets, &dst.shard_shape)
            {
                self.error(
                    location,
                    format!("piece #{i} reaches outside its source or destination shard"),
                );
                return;
            }
            let global = |origin: &[i64], offsets: &[i64]| -> Vec<i64> {
                origin.iter().zip(offsets).map(|(a, b)| a + b).collect()
            };
            if global(src_origin, &piece.src_offsets) != global(dst_origin, &piece.dst_offsets) {
                self.error(
                    location,
                    format!("piece #{i} lands at a different position of the array than the one it reads"),
                );
                return;
            }
            if (piece.link == Link::SameDevice) != (piece.src_device == piece.dst_device) {
                self.error(
                    location,
                    format!(
                        "piece #{i} is labelled {} but goes from device {} to {}",
                        piece.link, piece.src_device, piece.dst_device
                    ),
                );
                return;
            }
        }
        let whole = |p: &Piece| p.sizes == dst.shard_shape && p.dst_offsets.iter().all(|&o| o == 0);
        match kind {
            OpKind::Copy if pieces.len() != 1 || !whole(&pieces[0]) => self.error(
                location,
                "pw.copy moves exactly one piece, which fills a whole destination shard",
            ),
            OpKind::Scatter => {
                let distinct: HashSet<_> = pieces.iter().map(|p| p.dst_device).collect();
                if pieces.iter().any(|p| p.src_device != pieces[0].src_device) {
                    self.error(location, "pw.scatter reads one source device");
                } else if !pieces.iter().all(whole) || distinct.len() != pieces.len() {
                    self.error(
                        location,
                        "each piece of pw.scatter fills a whole, distinct destination shard",
                    );
                }
            }
            OpKind::Gather => {
                if pieces.iter().any(|p| p.dst_device != pieces[0].dst_device) {
                    self.error(location, "pw.gather writes one destination device");
                } else if !tiles(&pieces, dst.shard_elements()) {
                    self.error(
                        location,
                        "the pieces of pw.gather must fill its destination shard exactly once",
                    );
                }
            }
            _ => {}
        }
        let partial_escapes = op
            .result(0)
            .map(|r| {
                users(r.into())
                    .iter()
                    .any(|u| OpKind::of(u) != Some(OpKind::Assemble))
            })
            .unwrap_or(false);
        if partial_escapes {
            self.error(
                location,
                format!("the result of {name} is partial; only pw.assemble may use it"),
            );
        }
    }

    fn assemble(&mut self, op: OperationRef<'c, 'a>, to: &ArrayType) {
        let location = op.location();
        let Some((_, devices)) = self.physical(location, to, "destination") else {
            return;
        };
        let mut filled: HashMap<i64, usize> = HashMap::new();
        for (i, part) in op.operands().enumerate() {
            let producer = part
                .is_operation_result()
                .then(|| defining_op(part))
                .flatten();
            let Some(producer) =
                producer.filter(|p| OpKind::of(p).is_some_and(OpKind::is_piece_op))
            else {
                self.error(
                    location,
                    format!("part #{i} of pw.assemble is not a pw.copy, pw.scatter or pw.gather"),
                );
                return;
            };
            if ArrayType::read(part.r#type()).ok().as_ref() != Some(to) {
                self.error(
                    location,
                    format!("part #{i} of pw.assemble has another type than its result"),
                );
                return;
            }
            let pieces = producer
                .attribute(ops::ATTR_PIECES)
                .ok()
                .and_then(read_pieces)
                .unwrap_or_default();
            let mut shards: Vec<i64> = pieces.iter().map(|p| p.dst_device).collect();
            shards.dedup();
            for device in shards {
                *filled.entry(device).or_default() += 1;
            }
        }
        for device in devices {
            match filled.get(&device).copied().unwrap_or(0) {
                1 => {}
                0 => self.error(
                    location,
                    format!("pw.assemble leaves the shard on device {device} empty"),
                ),
                n => self.error(
                    location,
                    format!("pw.assemble writes the shard on device {device} {n} times"),
                ),
            }
        }
    }
}

/// Whether pairwise-disjoint boxes add up to `total` elements.
fn tiles(pieces: &[Piece], total: i64) -> bool {
    let regions: Vec<Region> = pieces
        .iter()
        .map(|p| Region {
            offsets: p.dst_offsets.clone(),
            sizes: p.sizes.clone(),
        })
        .collect();
    let disjoint = regions
        .iter()
        .enumerate()
        .all(|(i, a)| regions[i + 1..].iter().all(|b| a.intersect(b).is_none()));
    disjoint && regions.iter().map(Region::elements).sum::<i64>() == total
}
