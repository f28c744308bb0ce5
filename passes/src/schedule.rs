//! `pw-schedule`: orders the program's ops, critical path first.
//!
//! After it runs, the body of `@main` is in one deterministic total order,
//! consistent with the dataflow, and `@main` carries `pw.schedule =
//! "critical-path"`. Every device runs its ops in this one order (gang
//! order), so two SPMD computations sharing devices can never enqueue their
//! collectives in different orders on different devices, which is how
//! independent per-device queues deadlock.
//!
//! The order is list scheduling by bottom level: among the ops whose inputs
//! are ready, the one with the longest estimated path to the end of the
//! program goes first (ties: the earlier op). Op costs come from
//! [`crate::cost`]: calls by FLOPs and bytes, moves and copies by bytes over
//! their link. Scheduling a scheduled program changes nothing.

use crate::{cost, fail, Pass, PassError, PassFailure};
use melior::{
    ir::{attribute::StringAttribute, operation::OperationLike, Module, ValueLike},
    Context,
};
use pw_dialect::{
    analysis::PointerMap,
    edit,
    ops::{self, OpKind},
    Analysis,
};
use std::{
    cmp::Ordering,
    collections::{BinaryHeap, HashMap},
};

/// See the module documentation.
pub struct Schedule;

/// The policy name recorded on the program.
pub const POLICY: &str = "critical-path";

const PASS: &str = "pw-schedule";

impl Pass for Schedule {
    fn argument(&self) -> &'static str {
        PASS
    }

    fn run<'c>(
        &self,
        context: &'c Context,
        _module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>> {
        let program = &analysis.program;
        let mut ops = analysis.ops().to_vec();
        let Some(terminator) = ops.pop().filter(|t| OpKind::of(t) == Some(OpKind::Return)) else {
            return Err(fail(
                program.location(),
                PassError::Precondition {
                    pass: PASS,
                    needs: "a body that ends in func.return",
                    run: "the verifier",
                },
            ));
        };
        let work = cost::computation_work(program);
        let index: PointerMap<usize> = ops
            .iter()
            .enumerate()
            .flat_map(|(i, op)| op.results().map(move |r| (r.to_raw().ptr as usize, i)))
            .collect();
        // The dataflow edges, producer to consumer, as one sorted list.
        let mut edges: Vec<(usize, usize)> = Vec::with_capacity(ops.len() * 2);
        let mut waiting = vec![0usize; ops.len()];
        let mut producers = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            producers.clear();
            producers.extend(
                op.operands()
                    .filter_map(|v| index.get(&(v.to_raw().ptr as usize)).copied()),
            );
            producers.sort_unstable();
            producers.dedup();
            waiting[i] = producers.len();
            edges.extend(producers.iter().map(|&p| (p, i)));
        }
        edges.sort_unstable();
        // successors of op p: consumers[starts[p]..starts[p + 1]].
        let mut starts = vec![0usize; ops.len() + 1];
        for &(p, _) in &edges {
            starts[p + 1] += 1;
        }
        for p in 0..ops.len() {
            starts[p + 1] += starts[p];
        }
        let consumers: Vec<usize> = edges.iter().map(|&(_, c)| c).collect();
        let successors = |p: usize| &consumers[starts[p]..starts[p + 1]];
        let costs: Vec<f64> = ops
            .iter()
            .map(|op| op_seconds(analysis, &work, op))
            .collect();
        let mut bottom = vec![0.0f64; ops.len()];
        for i in (0..ops.len()).rev() {
            let tail = successors(i).iter().map(|&s| bottom[s]).fold(0.0, f64::max);
            bottom[i] = costs[i] + tail;
        }

        let mut ready: BinaryHeap<Ready> = (0..ops.len())
            .filter(|&i| waiting[i] == 0)
            .map(|i| Ready {
                bottom: bottom[i],
                index: i,
            })
            .collect();
        while let Some(Ready { index: i, .. }) = ready.pop() {
            // The body is one block (verified), ending in the terminator.
            edit::move_before(ops[i], terminator);
            for &s in successors(i) {
                waiting[s] -= 1;
                if waiting[s] == 0 {
                    ready.push(Ready {
                        bottom: bottom[s],
                        index: s,
                    });
                }
            }
        }
        edit::set_attribute(
            program.entry,
            ops::ATTR_SCHEDULE,
            StringAttribute::new(context, POLICY).into(),
        );
        Ok(())
    }
}

/// Estimated seconds of one op.
fn op_seconds<'c>(
    analysis: &Analysis<'c, '_>,
    work: &HashMap<String, cost::Work>,
    op: &melior::ir::operation::OperationRef<'c, '_>,
) -> f64 {
    let program = &analysis.program;
    match OpKind::of(op) {
        Some(OpKind::Call) => ops::symbol_attr(op, ops::ATTR_CALLEE)
            .and_then(|c| {
                Some(
                    work.get(&c)?
                        .seconds(program.computation(&c)?.num_partitions),
                )
            })
            .unwrap_or(0.0),
        Some(OpKind::Transfer | OpKind::Reshard) => {
            let types = (
                op.operand(0).ok().and_then(|v| analysis.value(v).ok()),
                op.result(0)
                    .ok()
                    .and_then(|r| analysis.value(r.into()).ok()),
            );
            match types {
                (Some(from), Some(to)) => {
                    cost::move_bytes(&from, &to) as f64
                        / cost::link_bandwidth(pw_core::Link::IntraIsland)
                }
                _ => 0.0,
            }
        }
        Some(OpKind::Copy | OpKind::Scatter | OpKind::Gather) => {
            let element = op
                .operand(0)
                .ok()
                .and_then(|v| analysis.value(v).ok())
                .map_or(4, |info| info.ty.dtype.size_in_bytes()) as f64;
            analysis
                .pieces(op)
                .map(|pieces| {
                    pieces
                        .iter()
                        .map(|p| p.elements() as f64 * element / cost::link_bandwidth(p.link))
                        .sum()
                })
                .unwrap_or(0.0)
        }
        _ => 0.0,
    }
}

/// A ready op, ordered by bottom level, then earliest first.
struct Ready {
    bottom: f64,
    index: usize,
}

impl Ord for Ready {
    fn cmp(&self, other: &Self) -> Ordering {
        self.bottom
            .total_cmp(&other.bottom)
            .then_with(|| other.index.cmp(&self.index))
    }
}

impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ready {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ready {}
