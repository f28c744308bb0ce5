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
//!   `LINK_BANDWIDTH[link]`.

use melior::ir::{
    operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
    TypeLike, ValueLike,
};
use pw_core::{geometry::Layout, Link};
use pw_dialect::{ops, ArrayType, Computation, Program};
use std::collections::HashMap;

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
        .map(|s| {
            s.shape.iter().product::<i64>() as f64
                * s.dtype.map_or(4, |d| d.size_in_bytes() as u64) as f64
        })
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
    let out: f64 = op
        .results()
        .map(|r| shape_of(r.r#type()).iter().product::<i64>() as f64)
        .sum();
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
            let k: i64 = dims.iter().filter_map(|&d| lhs.get(d)).product();
            2.0 * out * k as f64
        }
        "stablehlo.convolution" => {
            let kernel = op
                .operand(1)
                .map(|v| shape_of(v.r#type()))
                .unwrap_or_default();
            let per_output =
                kernel.iter().product::<i64>() / kernel.last().copied().unwrap_or(1).max(1);
            2.0 * out * per_output as f64
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
    let raw = t.to_raw();
    // SAFETY: shape accessors are called only on ranked shaped types.
    unsafe {
        if !mlir_sys::mlirTypeIsARankedTensor(raw) {
            return Vec::new();
        }
        let rank = mlir_sys::mlirShapedTypeGetRank(raw) as isize;
        (0..rank)
            .map(|d| mlir_sys::mlirShapedTypeGetDimSize(raw, d))
            .collect()
    }
}

/// Bytes a move from `from` to `to` must deliver: every element of every
/// destination shard, except those the same mesh position already holds
/// when both sides share a mesh. (Across meshes nothing is assumed local:
/// which devices meshes share is decided later.)
pub fn move_bytes(program: &Program, from: &ArrayType, to: &ArrayType) -> u64 {
    let layouts = |t: &ArrayType| {
        let mesh = program.mesh(t.mesh.as_deref()?)?;
        Layout::new(&t.shape, t.sharding.as_ref()?, &mesh.shape).ok()
    };
    let Some(dst) = layouts(to) else {
        return to.bytes();
    };
    let per_shard = dst.shard_elements() as u64 * to.dtype.size_in_bytes() as u64;
    let total = per_shard * dst.offsets.len() as u64;
    if from.mesh != to.mesh {
        return total;
    }
    let Some(src) = layouts(from) else {
        return total;
    };
    let local: u64 = dst
        .offsets
        .iter()
        .zip(&src.offsets)
        .map(|(d, s)| {
            let region = |offsets: &Vec<i64>, shape: &Vec<i64>| pw_core::geometry::Region {
                offsets: offsets.clone(),
                sizes: shape.clone(),
            };
            region(d, &dst.shard_shape)
                .intersect(&region(s, &src.shard_shape))
                .map_or(0, |r| r.elements() as u64)
        })
        .sum();
    total - local * to.dtype.size_in_bytes() as u64
}
