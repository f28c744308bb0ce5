//! The cost model: time estimates from shapes, for placement balance and
//! critical-path scheduling. Only relative costs matter.
//!
//! - A call costs `(flops / FLOP_RATE + bytes / MEMORY_BANDWIDTH)` seconds,
//!   split over its partitions. FLOPs are counted from the computation's
//!   ops: `2·M·N·K` for `stablehlo.dot_general` (K from its contracting
//!   dimensions), `2·out·(kernel/out_features)` for convolutions, one per
//!   output element for everything else; bytes are its inputs and outputs.
//! - A transfer costs the bytes it must receive (elements of each
//!   destination shard not already on that device) over a link:
//!   `LINK_BANDWIDTH[link]`. On meshes of more than [`EXACT_POSITIONS`]
//!   devices nothing is assumed local (counting it would take time in
//!   proportion to the mesh for every move).
//!
//! Sizes come from untrusted programs, so counts are floating point (FLOPs)
//! or saturate (bytes): a cost never overflows.

use melior::ir::{
    operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
    ValueLike,
};
use pw_core::Link;
use pw_dialect::{ops, ArrayInfo, Computation, Program, Tensor};
use std::collections::HashMap;

/// The largest mesh on which a move's local bytes are counted.
pub const EXACT_POSITIONS: i64 = 4096;

/// FLOPs per second of one device.
pub const FLOP_RATE: f64 = 1e12;
/// Bytes per second a device reads or writes its own memory.
pub const MEMORY_BANDWIDTH: f64 = 1e11;

/// Bytes per second over each link kind.
pub fn link_bandwidth(link: Link) -> f64 {
    match link {
        Link::SameDevice => MEMORY_BANDWIDTH,
        Link::IntraIsland => 1e10,
        Link::CrossIsland => 1e9,
    }
}

/// FLOPs and bytes of one execution of a computation (all partitions).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    pub flops: f64,
    pub bytes: f64,
}

impl Work {
    /// Seconds one call takes, its work split over its partitions.
    pub fn seconds(&self, partitions: i64) -> f64 {
        (self.flops / FLOP_RATE + self.bytes / MEMORY_BANDWIDTH) / partitions.max(1) as f64
    }
}

/// The work of every computation of a program, counted once each.
pub fn computation_work(program: &Program) -> HashMap<String, Work> {
    program
        .computations
        .iter()
        .map(|c| (c.name.clone(), work_of(c)))
        .collect()
}

fn work_of(computation: &Computation) -> Work {
    let bytes: f64 = computation
        .inputs
        .iter()
        .chain(&computation.outputs)
        .map(|s| elements(&s.shape) * s.dtype.map_or(4, |d| d.size_in_bytes()) as f64)
        .sum();
    let mut flops = 0.0;
    computation.op.walk(WalkOrder::PreOrder, |op| {
        flops += op_flops(&op);
        WalkResult::Advance
    });
    Work { flops, bytes }
}

fn op_flops(op: &OperationRef) -> f64 {
    let name = ops::op_name(op);
    if !name.starts_with("stablehlo.") || op.result_count() == 0 {
        return 0.0;
    }
    let out: f64 = op.results().map(|r| elements(&shape_of(r.r#type()))).sum();
    match name.as_str() {
        "stablehlo.dot_general" => {
            let lhs = op
                .operand(0)
                .map(|v| shape_of(v.r#type()))
                .unwrap_or_default();
            let dims = op
                .attribute("dot_dimension_numbers")
                .map(|a| contracting_dims(&a.to_string()))
                .unwrap_or_default();
            let k: f64 = dims
                .iter()
                .filter_map(|&d| lhs.get(d))
                .map(|&n| n.max(0) as f64)
                .product();
            2.0 * out * k
        }
        "stablehlo.convolution" => {
            let kernel = op
                .operand(1)
                .map(|v| shape_of(v.r#type()))
                .unwrap_or_default();
            let per_output = elements(&kernel) / kernel.last().copied().unwrap_or(1).max(1) as f64;
            2.0 * out * per_output
        }
        _ => out,
    }
}

/// `lhs_contracting_dimensions = [1, 2]` out of a printed `#stablehlo.dot`.
fn contracting_dims(text: &str) -> Vec<usize> {
    let Some(start) = text.find("lhs_contracting_dimensions = [") else {
        return Vec::new();
    };
    let rest = &text[start + "lhs_contracting_dimensions = [".len()..];
    let end = rest.find(']').unwrap_or(0);
    rest[..end]
        .split(',')
        .filter_map(|d| d.trim().parse().ok())
        .collect()
}

fn shape_of(t: melior::ir::Type) -> Vec<i64> {
    Tensor::read(t).map(|t| t.shape).unwrap_or_default()
}

/// Elements of a shape, as a float (dynamic dimensions count as 0).
fn elements(shape: &[i64]) -> f64 {
    shape.iter().map(|&d| d.max(0) as f64).product()
}

/// Bytes a move from `from` to `to` must deliver: every element of every
/// destination shard, except those the same mesh position already holds
/// when both sides share a mesh. (Across meshes nothing is assumed local:
/// which devices meshes share is decided later.)
pub fn move_bytes(from: &ArrayInfo, to: &ArrayInfo) -> u64 {
    let Some(dst) = &to.tiling else {
        return to.bytes;
    };
    let element = to.ty.dtype.size_in_bytes() as u64;
    let total = to.shard_bytes().saturating_mul(dst.positions() as u64);
    let src = match &from.tiling {
        Some(src) if from.ty.mesh == to.ty.mesh && dst.positions() <= EXACT_POSITIONS => src,
        _ => return total,
    };
    let local: u64 = (0..dst.positions())
        .map(|p| {
            dst.region(p)
                .intersect(&src.region(p))
                .map_or(0, |r| r.elements() as u64)
        })
        .fold(0, u64::saturating_add);
    total.saturating_sub(local.saturating_mul(element))
}
