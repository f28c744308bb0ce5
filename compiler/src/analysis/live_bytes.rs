//! Peak live bytes per device of a physical program, in its order: what a
//! schedule costs in memory.
//!
//! The model follows the runtime's: every device of a call's mesh holds one
//! shard of each result; a copy (scatter, gather) writes whole shards on the
//! devices its pieces go to; `pw.assemble` makes no buffer, its result holds
//! its parts' shards. Inputs are held from the start (to the end when no op
//! reads them). A buffer is freed after the last op that reads it (through
//! any assembled value) and outputs are held to the end. Donation is not
//! counted. These are the host's references, which is what the runtime
//! counts (`pw-run --stats`); PJRT may free a buffer's memory somewhat after
//! its last reader is enqueued, when that reader has run.

use melior::ir::{
    operation::{OperationLike, OperationRef},
    Value, ValueLike,
};
use pw_dialect::{analysis::PointerMap, ops::OpKind, Analysis};
use std::collections::BTreeMap;

/// The most live bytes each device holds at once, by device id.
pub fn peak_live_bytes<'c>(analysis: &Analysis<'c, '_>) -> BTreeMap<i64, u64> {
    let program = &analysis.program;
    let ops = analysis.ops();
    let mut buffers = Buffers::default();
    let shards_of = |v: Value<'c, '_>| -> Vec<(i64, u64)> {
        let Ok(info) = analysis.value(v) else {
            return Vec::new();
        };
        let devices = info
            .ty
            .mesh
            .as_deref()
            .and_then(|m| program.mesh(m))
            .and_then(|m| m.devices.clone())
            .unwrap_or_default();
        devices.iter().map(|&d| (d, info.shard_bytes())).collect()
    };
    let inputs = program.inputs();
    let mut read: std::collections::HashSet<usize> = Default::default();
    for &input in &inputs {
        buffers.make(input, &shards_of(input), 0);
    }
    for (i, op) in ops.iter().enumerate() {
        let kind = OpKind::of(op);
        // Outputs are held to the end.
        let until = if kind == Some(OpKind::Return) {
            usize::MAX
        } else {
            i
        };
        for operand in op.operands() {
            buffers.read(operand, until);
            read.insert(key(operand));
        }
        match kind {
            Some(OpKind::Return) => {}
            Some(OpKind::Assemble) => {
                if let Ok(r) = op.result(0) {
                    let parts: Vec<usize> = op
                        .operands()
                        .flat_map(|v| buffers.held(v).to_vec())
                        .collect();
                    buffers.holds.insert(key(r.into()), parts);
                }
            }
            Some(k) if k.is_piece_op() => {
                if let Ok(r) = op.result(0) {
                    buffers.make(r.into(), &copy_shards(analysis, op, r.into()), i);
                }
            }
            _ => {
                for r in op.results() {
                    buffers.make(r.into(), &shards_of(r.into()), i);
                }
            }
        }
    }
    // The runtime frees a value after its last reader: one no op reads is
    // held to the end.
    for &input in &inputs {
        if !read.contains(&key(input)) {
            buffers.read(input, usize::MAX);
        }
    }
    // Sweep in op order: a buffer counts from the op that makes it; it is
    // freed after its last reader (allocations of an op come before).
    let mut events: Vec<(usize, bool, i64, u64)> = Vec::with_capacity(2 * buffers.list.len());
    for b in &buffers.list {
        events.push((b.made, false, b.device, b.bytes));
        events.push((b.last, true, b.device, b.bytes));
    }
    events.sort_unstable();
    let mut live: BTreeMap<i64, u64> = BTreeMap::new();
    let mut peak: BTreeMap<i64, u64> = BTreeMap::new();
    for (_, freed, device, bytes) in events {
        let l = live.entry(device).or_default();
        if freed {
            *l = l.saturating_sub(bytes);
        } else {
            *l = l.saturating_add(bytes);
            let p = peak.entry(device).or_default();
            *p = (*p).max(*l);
        }
    }
    peak
}

fn key(v: Value) -> usize {
    v.to_raw().ptr as usize
}

struct Buffer {
    device: i64,
    bytes: u64,
    /// The op that makes it, and the last that reads it.
    made: usize,
    last: usize,
}

/// Every buffer, and the buffers each value holds.
#[derive(Default)]
struct Buffers {
    list: Vec<Buffer>,
    holds: PointerMap<Vec<usize>>,
}

impl Buffers {
    fn make(&mut self, v: Value, shards: &[(i64, u64)], at: usize) {
        let ids = shards
            .iter()
            .map(|&(device, bytes)| {
                self.list.push(Buffer {
                    device,
                    bytes,
                    made: at,
                    last: at,
                });
                self.list.len() - 1
            })
            .collect();
        self.holds.insert(key(v), ids);
    }

    fn held(&self, v: Value) -> &[usize] {
        self.holds.get(&key(v)).map_or(&[], Vec::as_slice)
    }

    fn read(&mut self, v: Value, at: usize) {
        if let Some(ids) = self.holds.get(&key(v)) {
            for &b in ids {
                self.list[b].last = self.list[b].last.max(at);
            }
        }
    }
}

/// The shards a copy writes: one whole shard of its result on each device
/// its pieces go to.
fn copy_shards<'c>(
    analysis: &Analysis<'c, '_>,
    op: &OperationRef<'c, '_>,
    result: Value<'c, '_>,
) -> Vec<(i64, u64)> {
    let bytes = analysis.value(result).map_or(0, |i| i.shard_bytes());
    let mut devices: Vec<i64> = analysis
        .pieces(op)
        .map(|p| p.iter().map(|p| p.dst_device).collect())
        .unwrap_or_default();
    devices.sort_unstable();
    devices.dedup();
    devices.into_iter().map(|d| (d, bytes)).collect()
}
