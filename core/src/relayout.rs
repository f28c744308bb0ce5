//! The relayout planner: which box of which source shard lands where when
//! an array moves from one layout (a sharding on some devices) to another.
//! pw's one: the lowering plans every `pw.transfer` with it, sessions plan
//! an argument laid out otherwise than a call takes it, and the IFRT proxy
//! plans `CopyArrays` and `ReshardArrays` ([`crate::plans::relayout`]).
//!
//! A plan It is byte-minimal: every element of every destination shard
//! is received exactly once, from a source shard on the same device when
//! one holds it, else from one on the same island, else from anywhere.
//! Among equally close replicas, the one that has sent the fewest elements
//! so far is read (then the lowest device id), spreading the load.
//!
//! Source tiles partition the array (replicas hold equal tiles), so their
//! intersections with a destination shard partition that shard: each
//! element is received once by construction. The tiles meeting a shard are
//! found per dimension (tiles are a grid), so planning costs time in
//! proportion to the pieces planned, which [`count`] gives beforehand. An
//! array with no elements still gets one (empty) piece per tile meeting
//! each destination shard, so every destination shard is written.

use crate::{
    geometry::{Layout, Region, Tiling},
    Link, Piece,
};
use std::collections::HashMap;

/// How an array is cut into equal shards, one per position: a [`Tiling`]
/// (computed per position) or a [`Layout`] (every offset listed).
pub trait Tiles {
    /// Number of positions.
    fn positions(&self) -> i64;
    /// The shape of every shard.
    fn shard_shape(&self) -> &[i64];
    /// The offset of position `position`'s shard in the array.
    fn offset(&self, position: i64) -> Vec<i64>;

    /// The box position `position` holds.
    fn region(&self, position: i64) -> Region {
        Region {
            offsets: self.offset(position),
            sizes: self.shard_shape().to_vec(),
        }
    }
}

impl Tiles for Tiling {
    fn positions(&self) -> i64 {
        Tiling::positions(self)
    }
    fn shard_shape(&self) -> &[i64] {
        &self.shard_shape
    }
    fn offset(&self, position: i64) -> Vec<i64> {
        Tiling::offset(self, position)
    }
}

impl Tiles for Layout {
    fn positions(&self) -> i64 {
        self.offsets.len() as i64
    }
    fn shard_shape(&self) -> &[i64] {
        &self.shard_shape
    }
    fn offset(&self, position: i64) -> Vec<i64> {
        self.offsets[position as usize].clone()
    }
}

/// Whether `tiles` cuts an array of `shape` evenly: every shard inside it
/// on the grid of the shard shape (offsets are multiples of the sizes),
/// and every tile of that grid held by some position. That is what
/// [`plan`] assumes of its source: a [`Tiling`] always is; a [`Layout`]
/// read from elsewhere is checked with this first.
pub fn is_even(tiles: &dyn Tiles, shape: &[i64]) -> bool {
    let sizes = tiles.shard_shape();
    if sizes.len() != shape.len() {
        return false;
    }
    // Tiles per dimension (one along an empty dimension).
    let mut grid: i64 = 1;
    for (&s, &d) in sizes.iter().zip(shape) {
        let n = match (s, d) {
            (0, 0) => 1,
            (s, d) if s > 0 && d % s == 0 => d / s,
            _ => return false,
        };
        grid = match grid.checked_mul(n) {
            Some(g) => g,
            None => return false,
        };
    }
    let mut seen = std::collections::HashSet::new();
    for p in 0..tiles.positions() {
        let region = tiles.region(p);
        let aligned =
            region
                .offsets
                .iter()
                .zip(sizes)
                .all(|(&o, &s)| if s == 0 { o == 0 } else { o % s == 0 });
        if !region.fits(shape) || !aligned {
            return false;
        }
        seen.insert(region.offsets);
    }
    seen.len() as i64 == grid
}

/// Shards on concrete devices (`devices[p]` holds position `p`'s shard).
#[derive(Clone, Copy)]
pub struct Placed<'a> {
    pub tiles: &'a dyn Tiles,
    pub devices: &'a [i64],
}

/// Per dimension of a destination shard at `offsets`, the source tile
/// starts (multiples of the source shard size) its extent meets.
fn tile_starts(src: &dyn Tiles, offsets: &[i64], sizes: &[i64]) -> Vec<Vec<i64>> {
    src.shard_shape()
        .iter()
        .zip(offsets.iter().zip(sizes))
        .map(|(&step, (&o, &n))| {
            if step == 0 || n == 0 {
                // An empty dimension: the one tile start of an empty array.
                return vec![o - o % step.max(1)];
            }
            let first = o / step;
            let last = (o + n - 1) / step;
            (first..=last).map(|k| k * step).collect()
        })
        .collect()
}

/// How many pieces [`plan`] makes, without making them (saturating).
pub fn count(src: &dyn Tiles, dst: &dyn Tiles) -> u64 {
    (0..dst.positions())
        .map(|q| {
            tile_starts(src, &dst.offset(q), dst.shard_shape())
                .iter()
                .map(|starts| starts.len() as u64)
                .fold(1u64, u64::saturating_mul)
        })
        .fold(0, u64::saturating_add)
}

/// The pieces moving `src` to `dst`, grouped by destination shard (in
/// destination position order); `link` classifies a device pair.
pub fn plan(src: Placed, dst: Placed, link: impl Fn(i64, i64) -> Link) -> Vec<Vec<Piece>> {
    // Each tile, by its offsets, with its replicas in position order.
    let mut tiles: HashMap<Vec<i64>, Vec<i64>> = HashMap::new();
    for (p, &device) in src.devices.iter().enumerate() {
        tiles
            .entry(src.tiles.offset(p as i64))
            .or_default()
            .push(device);
    }
    let mut sent: HashMap<i64, i64> = HashMap::new();
    let mut shards = Vec::with_capacity(dst.devices.len());
    for (q, &target) in dst.devices.iter().enumerate() {
        let shard = dst.tiles.region(q as i64);
        let mut pieces = Vec::new();
        for tile_offsets in grid(&tile_starts(src.tiles, &shard.offsets, &shard.sizes)) {
            let Some(replicas) = tiles.get(&tile_offsets) else {
                continue;
            };
            let tile = Region {
                offsets: tile_offsets,
                sizes: src.tiles.shard_shape().to_vec(),
            };
            let Some(overlap) = tile.meet(&shard) else {
                continue;
            };
            let Some(&from) = replicas
                .iter()
                .min_by_key(|&&d| (link(d, target), sent.get(&d).copied().unwrap_or(0), d))
            else {
                continue;
            };
            let elements = overlap.elements();
            sent.entry(from)
                .and_modify(|s| *s = s.saturating_add(elements))
                .or_insert(elements);
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

/// Every combination of one start per dimension, in row-major order.
fn grid(starts: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::with_capacity(starts.len())];
    for options in starts {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                options.iter().map(move |&s| {
                    let mut next = prefix.clone();
                    next.push(s);
                    next
                })
            })
            .collect();
    }
    out
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
    // Single pieces by source device, in order of first appearance.
    let mut by_source: Vec<(i64, Vec<Piece>)> = Vec::new();
    let mut group_of: HashMap<i64, usize> = HashMap::new();
    for mut pieces in shards {
        match pieces.len() {
            0 => {}
            1 => {
                let piece = pieces.remove(0);
                let g = *group_of.entry(piece.src_device).or_insert_with(|| {
                    by_source.push((piece.src_device, Vec::new()));
                    by_source.len() - 1
                });
                by_source[g].1.push(piece);
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
