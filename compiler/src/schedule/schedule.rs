//! `pw-schedule{policy=critical-path|gpipe|1f1b}`: orders the program's ops.
//!
//! After it runs, the body of `@main` is in one deterministic total order,
//! consistent with the dataflow, and `@main` carries `pw.schedule =
//! "<policy>"`. Every device runs its ops in this one order (gang order),
//! so two SPMD computations sharing devices can never enqueue their
//! collectives in different orders on different devices, which is how
//! independent per-device queues deadlock.
//!
//! - `critical-path` (the default): list scheduling by bottom level: among
//!   the ops whose inputs are ready, the one with the longest estimated path
//!   to the end of the program goes first (ties: the earlier op).
//! - `gpipe`: each pipeline stage runs the forward of every microbatch, then
//!   every backward.
//! - `1f1b`: stage `s` of `p` runs `p - 1 - s` forwards, then alternates one
//!   forward and one backward, then the remaining backwards: at most `p - s`
//!   microbatches are in flight on it (their activations held, and the next
//!   one's arriving).
//!
//! The pipeline policies need the stage, microbatch and direction of each
//! call, recognized from the dataflow ([`crate::analysis::pipeline_stages`]); calls that belong
//! to no microbatch, and the moves between stages, run as soon as their
//! inputs are ready. The stages' orders are merged into the total order by
//! simulating them on the cost model, so that the order follows time. A
//! program without that structure, or whose dataflow contradicts the
//! policy's order (a forward that needs an earlier microbatch's backward,
//! under GPipe), is an error that says why.
//!
//! Op costs come from [`crate::analysis::cost`]: calls by FLOPs and bytes, moves and
//! copies by bytes over their link. Scheduling a scheduled program with the
//! same policy changes nothing.

use crate::{
    analysis::{cost, pipeline_stages},
    fail, Error, OptionList, Options, Pass, PassFailure,
};
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

/// How the pass orders a program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Policy {
    #[default]
    CriticalPath,
    Gpipe,
    OneFOneB,
}

impl Policy {
    pub const ALL: [Policy; 3] = [Policy::CriticalPath, Policy::Gpipe, Policy::OneFOneB];

    /// The name on the command line and in `pw.schedule`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::CriticalPath => "critical-path",
            Policy::Gpipe => "gpipe",
            Policy::OneFOneB => "1f1b",
        }
    }

    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown schedule policy '{name}' (known: {})",
                    Self::ALL.map(Policy::name).join(", ")
                )
            })
    }
}

/// See the module documentation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Schedule {
    pub policy: Policy,
}

/// The pass's options.
pub const OPTIONS: OptionList = &[(
    "policy",
    "critical-path (default), gpipe or 1f1b: how to order pipeline stages",
)];

impl Schedule {
    /// From `policy=NAME`.
    pub fn from_options(options: &Options) -> Result<Self, String> {
        crate::check_options(PASS, options, OPTIONS)?;
        Ok(Self {
            policy: options
                .get("policy")
                .map(|p| Policy::parse(p))
                .transpose()?
                .unwrap_or_default(),
        })
    }
}

pub const PASS: &str = "pw-schedule";

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
                Error::Precondition {
                    pass: PASS,
                    needs: "a body that ends in func.return",
                    run: "the verifier",
                },
            ));
        };
        let work = cost::computation_work(program);
        let graph = Dataflow::of(&ops);
        let costs: Vec<f64> = ops
            .iter()
            .map(|op| op_seconds(analysis, &work, op))
            .collect();
        let order = match self.policy {
            Policy::CriticalPath => critical_path(&graph, &costs),
            policy => {
                let unschedulable = |location, reason: String| {
                    fail(
                        location,
                        Error::Unschedulable {
                            policy: policy.name(),
                            reason,
                        },
                    )
                };
                let structure = pipeline_stages::recognize(&ops, |i| graph.preds(i))
                    .map_err(|why| unschedulable(program.location(), why))?;
                if policy == Policy::OneFOneB && !structure.has_backward() {
                    return Err(unschedulable(
                        program.location(),
                        "it needs a backward pass, and no call reads its microbatch's data back from a later \
                         stage (for a forward-only pipeline, use gpipe)"
                            .into(),
                    ));
                }
                pipelined(policy, &structure, &graph, &costs)
                    .map_err(|(at, why)| unschedulable(ops[at].location(), why))?
            }
        };
        for i in order {
            // The body is one block (verified), ending in the terminator.
            edit::move_before(ops[i], terminator);
        }
        edit::set_attribute(
            program.entry,
            ops::ATTR_SCHEDULE,
            StringAttribute::new(context, self.policy.name()).into(),
        );
        Ok(())
    }
}

/// The dataflow between the ops of a body: for each op, the ops whose
/// results it reads, and those that read its results (each once), as two
/// flat lists (programs have hundreds of thousands of ops).
struct Dataflow {
    pred_starts: Vec<usize>,
    pred_list: Vec<usize>,
    succ_starts: Vec<usize>,
    succ_list: Vec<usize>,
}

impl Dataflow {
    fn of(ops: &[melior::ir::operation::OperationRef<'_, '_>]) -> Self {
        let index: PointerMap<usize> = ops
            .iter()
            .enumerate()
            .flat_map(|(i, op)| op.results().map(move |r| (r.to_raw().ptr as usize, i)))
            .collect();
        let mut pred_starts = Vec::with_capacity(ops.len() + 1);
        let mut pred_list = Vec::with_capacity(ops.len() * 2);
        let mut edges: Vec<(usize, usize)> = Vec::with_capacity(ops.len() * 2);
        pred_starts.push(0);
        for (i, op) in ops.iter().enumerate() {
            let from = pred_list.len();
            pred_list.extend(
                op.operands()
                    .filter_map(|v| index.get(&(v.to_raw().ptr as usize)).copied()),
            );
            pred_list[from..].sort_unstable();
            let mut kept = from;
            for k in from..pred_list.len() {
                if k == from || pred_list[k] != pred_list[kept - 1] {
                    pred_list[kept] = pred_list[k];
                    kept += 1;
                }
            }
            pred_list.truncate(kept);
            edges.extend(pred_list[from..].iter().map(|&p| (p, i)));
            pred_starts.push(pred_list.len());
        }
        edges.sort_unstable();
        let mut succ_starts = vec![0usize; ops.len() + 1];
        for &(p, _) in &edges {
            succ_starts[p + 1] += 1;
        }
        for p in 0..ops.len() {
            succ_starts[p + 1] += succ_starts[p];
        }
        Self {
            pred_starts,
            pred_list,
            succ_starts,
            succ_list: edges.into_iter().map(|(_, c)| c).collect(),
        }
    }

    fn preds(&self, i: usize) -> &[usize] {
        &self.pred_list[self.pred_starts[i]..self.pred_starts[i + 1]]
    }

    fn succs(&self, i: usize) -> &[usize] {
        &self.succ_list[self.succ_starts[i]..self.succ_starts[i + 1]]
    }
}

/// List scheduling by bottom level (see the module documentation).
fn critical_path(graph: &Dataflow, costs: &[f64]) -> Vec<usize> {
    let n = costs.len();
    let mut bottom = vec![0.0f64; n];
    for i in (0..n).rev() {
        let tail = graph
            .succs(i)
            .iter()
            .map(|&s| bottom[s])
            .fold(0.0, f64::max);
        bottom[i] = costs[i] + tail;
    }
    let mut waiting: Vec<usize> = (0..n).map(|i| graph.preds(i).len()).collect();
    let mut ready: BinaryHeap<Ready> = (0..n)
        .filter(|&i| waiting[i] == 0)
        .map(|i| Ready {
            bottom: bottom[i],
            index: i,
        })
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Ready { index: i, .. }) = ready.pop() {
        order.push(i);
        for &s in graph.succs(i) {
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.push(Ready {
                    bottom: bottom[s],
                    index: s,
                });
            }
        }
    }
    order
}

/// A pipeline policy's order: each stage's calls in the policy's sequence,
/// merged by simulated start time; everything else as soon as it is ready.
/// Fails with the op that cannot go next and why.
fn pipelined(
    policy: Policy,
    structure: &pipeline_stages::Structure,
    graph: &Dataflow,
    costs: &[f64],
) -> Result<Vec<usize>, (usize, String)> {
    let n = costs.len();
    let (m, positions) = (structure.microbatches, structure.positions);
    let p = structure.stages.len();
    // Each stage's sequence: by slot, then program order.
    let mut keyed: Vec<(usize, usize, usize)> = structure
        .roles
        .iter()
        .enumerate()
        .filter_map(|(i, role)| {
            let r = (*role)?;
            let slot = pipeline_stages::slot(r, policy == Policy::OneFOneB, positions, m);
            Some((r.stage, slot, i))
        })
        .collect();
    keyed.sort_unstable();
    let mut sequences: Vec<Vec<usize>> = vec![Vec::new(); p];
    for (stage, _, i) in keyed {
        sequences[stage].push(i);
    }
    let mut next = vec![0usize; p];
    let mut free_at = vec![0.0f64; p];
    let mut waiting: Vec<usize> = (0..n).map(|i| graph.preds(i).len()).collect();
    let mut finish = vec![0.0f64; n];
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    // Ready ops outside every sequence, in program order.
    let mut loose: std::collections::BTreeSet<usize> = (0..n)
        .filter(|&i| waiting[i] == 0 && structure.roles[i].is_none())
        .collect();
    let start = |i: usize, finish: &[f64]| {
        graph
            .preds(i)
            .iter()
            .map(|&q| finish[q])
            .fold(0.0, f64::max)
    };
    while order.len() < n {
        let pick = if let Some(i) = loose.pop_first() {
            finish[i] = start(i, &finish) + costs[i];
            i
        } else {
            let best = (0..p)
                .filter(|&s| next[s] < sequences[s].len() && waiting[sequences[s][next[s]]] == 0)
                .map(|s| {
                    let i = sequences[s][next[s]];
                    (start(i, &finish).max(free_at[s]), s, i)
                })
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let Some((begin, s, i)) = best else {
                return Err(stuck(structure, &sequences, &next, graph, &done));
            };
            next[s] += 1;
            finish[i] = begin + costs[i];
            free_at[s] = finish[i];
            i
        };
        done[pick] = true;
        order.push(pick);
        for &s in graph.succs(pick) {
            waiting[s] -= 1;
            if waiting[s] == 0 && structure.roles[s].is_none() {
                loose.insert(s);
            }
        }
    }
    Ok(order)
}

/// Why no stage can go on: the first stage's next call and the call of
/// another place in the order it waits for.
fn stuck(
    structure: &pipeline_stages::Structure,
    sequences: &[Vec<usize>],
    next: &[usize],
    graph: &Dataflow,
    done: &[bool],
) -> (usize, String) {
    let describe = |i: usize| match structure.roles[i] {
        Some(r) => format!(
            "the {} of microbatch {} on @{}",
            if r.backward { "backward" } else { "forward" },
            r.microbatch,
            structure.stages[r.stage]
        ),
        None => "an op".into(),
    };
    let Some(s) = (0..sequences.len()).find(|&s| next[s] < sequences[s].len()) else {
        return (0, "the dataflow has a cycle".into());
    };
    let i = sequences[s][next[s]];
    // The nearest unscheduled call it needs, looking through moves.
    let mut blocker = None;
    let mut stack: Vec<usize> = graph.preds(i).to_vec();
    let mut seen = vec![false; done.len()];
    while let Some(q) = stack.pop() {
        if done[q] || std::mem::replace(&mut seen[q], true) {
            continue;
        }
        if structure.roles[q].is_some() {
            blocker = Some(q);
            break;
        }
        stack.extend_from_slice(graph.preds(q));
    }
    let why = match blocker {
        Some(q) => format!(
            "{} comes next on its stage, but it needs {}, which the policy orders after it",
            describe(i),
            describe(q)
        ),
        None => format!(
            "{} comes next on its stage, but its inputs never become ready",
            describe(i)
        ),
    };
    (i, why)
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
