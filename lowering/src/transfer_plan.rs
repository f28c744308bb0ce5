//! Transfer plans: which box of which source shard lands where.
//!
//! A plan moves an array from one layout (a sharding on some devices) to
//! another. It is byte-minimal: every element of every destination shard
//! is received exactly once, from a source shard on the same device when
//! one holds it, else from one on the same island, else from anywhere.
//! Among equally close replicas, the one that has sent the fewest elements
//! so far is read (then the lowest device id), spreading the load.
//!
//! Source tiles partition the array (replicas hold equal tiles), so their
//! intersections with a destination shard partition that shard: each
//! element is received once by construction.

use pw_core::{
    geometry::{Layout, Region},
    Link, Piece,
};
use std::collections::{BTreeMap, HashMap};

/// A layout on concrete devices (`devices[p]` holds position `p`'s shard).
#[derive(Clone, Copy, Debug)]
pub struct Placed<'a> {
    pub layout: &'a Layout,
    pub devices: &'a [i64],
}

/// The pieces moving `src` to `dst`, grouped by destination shard (in
/// destination position order); `link` classifies a device pair.
pub fn plan(src: Placed, dst: Placed, link: impl Fn(i64, i64) -> Link) -> Vec<Vec<Piece>> {
    // Tiles in offset order, each with its replicas in position order.
    let mut tiles: BTreeMap<&Vec<i64>, Vec<i64>> = BTreeMap::new();
    for (p, offsets) in src.layout.offsets.iter().enumerate() {
        tiles.entry(offsets).or_default().push(src.devices[p]);
    }
    let mut sent: HashMap<i64, i64> = HashMap::new();
    let mut shards = Vec::with_capacity(dst.devices.len());
    for (q, dst_offsets) in dst.layout.offsets.iter().enumerate() {
        let target = dst.devices[q];
        let shard = Region {
            offsets: dst_offsets.clone(),
            sizes: dst.layout.shard_shape.clone(),
        };
        let mut pieces = Vec::new();
        for (tile_offsets, replicas) in &tiles {
            let tile = Region {
                offsets: (*tile_offsets).clone(),
                sizes: src.layout.shard_shape.clone(),
            };
            let Some(overlap) = tile.intersect(&shard) else {
                continue;
            };
            let Some(&from) = replicas
                .iter()
                .min_by_key(|&&d| (link(d, target), sent.get(&d).copied().unwrap_or(0), d))
            else {
                continue;
            };
            *sent.entry(from).or_default() += overlap.elements();
            pieces.push(Piece {
                src_device: from,
                src_offsets: relative(&overlap.offsets, &tile.offsets),
                dst_device: target,
                dst_offsets: relative(&overlap.offsets, &shard.offsets),
                sizes: overlap.sizes,
                link: link(from, target),
            });
        }
        shards.push(pieces);
    }
    shards
}

fn relative(a: &[i64], origin: &[i64]) -> Vec<i64> {
    a.iter().zip(origin).map(|(x, o)| x - o).collect()
}

/// One physical op of a lowered transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CopyOp {
    /// One piece filling one destination shard.
    Copy(Piece),
    /// Pieces of one source shard, each filling a destination shard.
    Scatter(Vec<Piece>),
    /// Pieces filling one destination shard.
    Gather(Vec<Piece>),
}

/// Groups a plan into ops: a destination shard made of several pieces is a
/// gather; single-piece shards read from the same source device form a
/// scatter when there are several, a copy otherwise.
pub fn group(shards: Vec<Vec<Piece>>) -> Vec<CopyOp> {
    let mut ops = Vec::new();
    let mut by_source: Vec<(i64, Vec<Piece>)> = Vec::new();
    for mut pieces in shards {
        match pieces.len() {
            0 => {}
            1 => {
                let piece = pieces.remove(0);
                match by_source.iter_mut().find(|(d, _)| *d == piece.src_device) {
                    Some((_, group)) => group.push(piece),
                    None => by_source.push((piece.src_device, vec![piece])),
                }
            }
            _ => ops.push(CopyOp::Gather(pieces)),
        }
    }
    for (_, mut pieces) in by_source {
        if pieces.len() == 1 {
            ops.push(CopyOp::Copy(pieces.remove(0)));
        } else {
            ops.push(CopyOp::Scatter(pieces));
        }
    }
    ops
}
