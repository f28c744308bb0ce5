//! Phase 4 of the verifier for the physical form: `pw.copy`, `pw.scatter`,
//! `pw.gather` and `pw.assemble`.
//!
//! A piece op's rules depend only on its `pieces` attribute and its two
//! types, all uniqued by MLIR, so each distinct triple is checked once and
//! the verdict reused: the ops of a program that moves the same shapes the
//! same way over and over cost one hash lookup each.

use crate::{
    analysis::{Analysis, ArrayInfo, FastMap},
    diag::Errors,
    error::Error,
    ops::{self, defining_op, OpKind, Users},
};
use melior::ir::{
    operation::{OperationLike, OperationRef},
    AttributeLike, TypeLike, ValueLike,
};
use pw_core::{geometry::Region, Link, Piece};
use std::{collections::HashMap, rc::Rc};

/// The checks of piece ops and assemblies, with their memory.
pub(super) struct Physical<'p, 'c, 'a> {
    analysis: &'p Analysis<'c, 'a>,
    /// Verdicts per (kind, pieces, source type, destination type).
    verdicts: FastMap<(OpKind, usize, usize, usize), Result<(), Error>>,
    /// Per bound mesh, the position of each of its devices.
    positions: HashMap<String, HashMap<i64, i64>>,
    /// The errors of each distinct assembly (see `assemble`).
    assemblies: FastMap<Vec<usize>, Rc<Vec<Error>>>,
}

/// One side of a copy: its shards and the devices holding them.
struct Side<'s> {
    tiling: &'s pw_core::geometry::Tiling,
    positions: &'s HashMap<i64, i64>,
}

impl<'p, 'c, 'a> Physical<'p, 'c, 'a> {
    pub(super) fn new(analysis: &'p Analysis<'c, 'a>) -> Self {
        Self {
            analysis,
            verdicts: HashMap::default(),
            positions: HashMap::new(),
            assemblies: FastMap::default(),
        }
    }

    /// The device positions of `info`'s mesh, or why it has none.
    fn bind(&mut self, info: &ArrayInfo, side: &'static str) -> Result<(), Error> {
        let (Some(mesh), Some(_)) = (&info.ty.mesh, &info.tiling) else {
            return Err(Error::CopyUnplaced { side });
        };
        if self.positions.contains_key(mesh) {
            return Ok(());
        }
        let devices = self
            .analysis
            .program
            .mesh(mesh)
            .and_then(|m| m.devices.clone())
            .ok_or_else(|| Error::CopyMeshUnbound {
                side,
                mesh: mesh.clone(),
            })?;
        let positions = devices
            .iter()
            .enumerate()
            .map(|(p, &d)| (d, p as i64))
            .collect();
        self.positions.insert(mesh.clone(), positions);
        Ok(())
    }

    fn side<'s>(&'s self, info: &'s ArrayInfo) -> Option<Side<'s>> {
        Some(Side {
            tiling: info.tiling.as_ref()?,
            positions: self.positions.get(info.ty.mesh.as_deref()?)?,
        })
    }

    pub(super) fn piece_op(
        &mut self,
        op: OperationRef<'c, 'a>,
        kind: OpKind,
        from: &ArrayInfo,
        to: &ArrayInfo,
        errors: &mut Errors<'c>,
    ) {
        let location = op.location();
        let Ok(pieces_attr) = op.attribute(ops::ATTR_PIECES) else {
            return;
        };
        let key = (
            kind,
            pieces_attr.to_raw().ptr as usize,
            type_key(&op.operand(0)),
            op.result(0).map_or(0, |r| r.r#type().to_raw().ptr as usize),
        );
        let verdict = match self.verdicts.get(&key) {
            Some(known) => known.clone(),
            None => {
                let verdict = self.judge(&op, kind, from, to);
                self.verdicts.insert(key, verdict.clone());
                verdict
            }
        };
        if let Err(error) = verdict {
            errors.push(location, error);
        }
        let partial_escapes = op
            .result(0)
            .is_ok_and(|r| Users::of(r.into()).any(|u| OpKind::of(&u) != Some(OpKind::Assemble)));
        if partial_escapes {
            errors.push(location, Error::PartialEscapes { op: kind.name() });
        }
    }

    /// The rules of one piece op (see the verifier's module doc).
    fn judge(
        &mut self,
        op: &OperationRef<'c, 'a>,
        kind: OpKind,
        from: &ArrayInfo,
        to: &ArrayInfo,
    ) -> Result<(), Error> {
        let name = kind.name();
        let pieces = self
            .analysis
            .pieces(op)
            .ok_or(Error::NoPieces { op: name })?;
        if pieces.is_empty() {
            return Err(Error::NoPieces { op: name });
        }
        self.bind(from, "source")?;
        self.bind(to, "destination")?;
        let (Some(src), Some(dst)) = (self.side(from), self.side(to)) else {
            return Err(Error::CopyUnplaced { side: "source" });
        };
        let rank = from.ty.shape.len();
        for (index, piece) in pieces.iter().enumerate() {
            check_piece(index, piece, rank, &src, &dst)?;
        }
        let whole =
            |p: &Piece| p.sizes == dst.tiling.shard_shape && p.dst_offsets.iter().all(|&o| o == 0);
        match kind {
            OpKind::Copy if pieces.len() != 1 || !whole(&pieces[0]) => Err(Error::CopyShape),
            OpKind::Scatter => {
                let mut shards: Vec<i64> = pieces.iter().map(|p| p.dst_device).collect();
                shards.sort_unstable();
                shards.dedup();
                if pieces.iter().any(|p| p.src_device != pieces[0].src_device) {
                    Err(Error::ScatterSources)
                } else if !pieces.iter().all(whole) || shards.len() != pieces.len() {
                    Err(Error::ScatterShards)
                } else {
                    Ok(())
                }
            }
            OpKind::Gather => {
                if pieces.iter().any(|p| p.dst_device != pieces[0].dst_device) {
                    Err(Error::GatherDestinations)
                } else if !tiles(&pieces, &dst.tiling.shard_shape) {
                    Err(Error::GatherTiling)
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }

    pub(super) fn assemble(
        &mut self,
        op: OperationRef<'c, 'a>,
        to: &ArrayInfo,
        errors: &mut Errors<'c>,
    ) {
        // The rules read the result type and, per part, its type and its
        // producer's kind and pieces: each distinct combination is judged
        // once.
        let result_type = op.result(0).map_or(0, |r| r.r#type().to_raw().ptr as usize);
        let mut key = vec![result_type];
        let mut parts = Vec::with_capacity(op.operand_count());
        for part in op.operands() {
            let producer =
                defining_op(part).filter(|p| OpKind::of(p).is_some_and(OpKind::is_piece_op));
            let part_type = part.r#type().to_raw().ptr as usize;
            key.push(part_type);
            key.push(producer.map_or(0, |p| {
                p.attribute(ops::ATTR_PIECES)
                    .map_or(1, |a| a.to_raw().ptr as usize)
            }));
            parts.push((part_type, producer));
        }
        let verdict = match self.assemblies.get(&key) {
            Some(verdict) => verdict.clone(),
            None => {
                let verdict = Rc::new(self.judge_assemble(result_type, &parts, to));
                self.assemblies.insert(key, verdict.clone());
                verdict
            }
        };
        for error in verdict.iter() {
            errors.push(op.location(), error.clone());
        }
    }

    /// The rules of an assembly into `to` (of type `result_type`) of parts
    /// of the given types, made by the given ops (`None`: not a piece op).
    fn judge_assemble(
        &mut self,
        result_type: usize,
        parts: &[(usize, Option<OperationRef<'c, 'a>>)],
        to: &ArrayInfo,
    ) -> Vec<Error> {
        if let Err(error) = self.bind(to, "destination") {
            return vec![error];
        }
        let mut filled: HashMap<i64, usize> = HashMap::new();
        for (index, (part_type, producer)) in parts.iter().enumerate() {
            let Some(producer) = producer else {
                return vec![Error::AssemblePart { index }];
            };
            if *part_type != result_type {
                return vec![Error::AssemblePartType { index }];
            }
            let mut shards: Vec<i64> = self
                .analysis
                .pieces(producer)
                .map(|p| p.iter().map(|p| p.dst_device).collect())
                .unwrap_or_default();
            shards.sort_unstable();
            shards.dedup();
            for device in shards {
                *filled.entry(device).or_default() += 1;
            }
        }
        let Some(devices) = to
            .ty
            .mesh
            .as_deref()
            .and_then(|m| self.analysis.program.mesh(m))
            .and_then(|m| m.devices.as_ref())
        else {
            return Vec::new();
        };
        devices
            .iter()
            .filter_map(|&device| match filled.get(&device).copied().unwrap_or(0) {
                1 => None,
                0 => Some(Error::AssembleEmpty { device }),
                times => Some(Error::AssembleTwice { device, times }),
            })
            .collect()
    }
}

fn type_key(value: &Result<melior::ir::Value, melior::Error>) -> usize {
    value
        .as_ref()
        .map_or(0, |v| v.r#type().to_raw().ptr as usize)
}

/// One piece: rank, devices, bounds, position and link.
fn check_piece(
    index: usize,
    piece: &Piece,
    rank: usize,
    src: &Side,
    dst: &Side,
) -> Result<(), Error> {
    if piece.sizes.len() != rank
        || piece.src_offsets.len() != rank
        || piece.dst_offsets.len() != rank
    {
        return Err(Error::PieceRank {
            index,
            rank: piece.sizes.len(),
            array_rank: rank,
        });
    }
    let src_position = *src
        .positions
        .get(&piece.src_device)
        .ok_or(Error::PieceSource {
            index,
            device: piece.src_device,
        })?;
    let dst_position = *dst
        .positions
        .get(&piece.dst_device)
        .ok_or(Error::PieceDestination {
            index,
            device: piece.dst_device,
        })?;
    let inside = |offsets: &[i64], shard: &[i64]| {
        Region {
            offsets: offsets.to_vec(),
            sizes: piece.sizes.clone(),
        }
        .fits(shard)
    };
    if !inside(&piece.src_offsets, &src.tiling.shard_shape)
        || !inside(&piece.dst_offsets, &dst.tiling.shard_shape)
    {
        return Err(Error::PieceOutside { index });
    }
    // Inside shards that lie inside the array: the sums cannot overflow.
    let global = |origin: Vec<i64>, offsets: &[i64]| -> Vec<i64> {
        origin.iter().zip(offsets).map(|(a, b)| a + b).collect()
    };
    if global(src.tiling.offset(src_position), &piece.src_offsets)
        != global(dst.tiling.offset(dst_position), &piece.dst_offsets)
    {
        return Err(Error::PieceMisplaced { index });
    }
    if (piece.link == Link::SameDevice) != (piece.src_device == piece.dst_device) {
        return Err(Error::PieceLink {
            index,
            link: piece.link,
            from: piece.src_device,
            to: piece.dst_device,
        });
    }
    Ok(())
}

/// Whether boxes (each inside a shard of `shape`) fill it exactly once:
/// their elements add up to the shard's, and no two overlap. Overlaps are
/// found by a sweep along the dimension with the most distinct offsets,
/// comparing only boxes whose extents along it overlap.
fn tiles(pieces: &[Piece], shape: &[i64]) -> bool {
    let total = shape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d));
    let sum = pieces.iter().try_fold(0i64, |acc, p| {
        Region {
            offsets: p.dst_offsets.clone(),
            sizes: p.sizes.clone(),
        }
        .checked_elements()
        .and_then(|e| acc.checked_add(e))
    });
    if total.is_none() || sum != total {
        return false;
    }
    if shape.is_empty() {
        return pieces.len() == 1;
    }
    let dim = (0..shape.len())
        .max_by_key(|&d| {
            let mut starts: Vec<i64> = pieces.iter().map(|p| p.dst_offsets[d]).collect();
            starts.sort_unstable();
            starts.dedup();
            starts.len()
        })
        .unwrap_or(0);
    let mut order: Vec<&Piece> = pieces.iter().collect();
    order.sort_by_key(|p| p.dst_offsets[dim]);
    let region = |p: &Piece| Region {
        offsets: p.dst_offsets.clone(),
        sizes: p.sizes.clone(),
    };
    // Boxes whose extent along `dim` reaches past the current start.
    let mut active: Vec<&Piece> = Vec::new();
    for p in order {
        let start = p.dst_offsets[dim];
        active.retain(|a| a.dst_offsets[dim] + a.sizes[dim] > start);
        if p.sizes.iter().all(|&s| s > 0) {
            let here = region(p);
            if active.iter().any(|a| region(a).overlaps(&here)) {
                return false;
            }
            active.push(p);
        }
    }
    true
}
