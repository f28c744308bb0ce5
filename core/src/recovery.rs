//! What a run needs to recompute after it lost a worker: the plan is its
//! own lineage.
//!
//! A plan is a static DAG of pure steps over values. When a worker is lost
//! mid-run, every value is either *available* (a program input, which the
//! controller keeps, or held whole by surviving workers) or gone. The
//! controller moves the lost devices onto others ([`remap_devices`]) and
//! runs the [`Replay`]: the steps whose results are still needed and not
//! available, in the original order, with the available values they read
//! as its inputs. After it runs:
//!
//! * **sufficient**: every value a replayed step reads is an input of the
//!   replay or written by an earlier replayed step, and every output that
//!   is not available is written by the replay;
//! * **minimal**: every replayed step writes a value that is not available
//!   and that an output, or a later replayed step, needs.

use crate::plan::{Plan, Step, StepKind, ValueId};
use std::collections::{BTreeMap, BTreeSet};

/// The steps to run again, by index into `steps` (each a step's reads and
/// writes), ascending: those writing a value needed and not available,
/// from the missing outputs back through what they read.
pub fn replay_steps(
    steps: &[(Vec<ValueId>, Vec<ValueId>)],
    outputs: &[ValueId],
    available: impl Fn(ValueId) -> bool,
) -> Vec<usize> {
    let mut needed: BTreeSet<ValueId> =
        outputs.iter().copied().filter(|v| !available(*v)).collect();
    let mut chosen = Vec::new();
    for (index, (reads, writes)) in steps.iter().enumerate().rev() {
        if !writes.iter().any(|w| needed.contains(w)) {
            continue;
        }
        chosen.push(index);
        for w in writes {
            needed.remove(w);
        }
        needed.extend(reads.iter().copied().filter(|r| !available(*r)));
    }
    chosen.reverse();
    chosen
}

/// A part of a plan to run again (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The plan of the steps to run again: its inputs are the values they
    /// read that no replayed step writes (available ones), its outputs the
    /// original outputs that were not available.
    pub plan: Plan,
    /// Each replayed step's index in the original plan.
    pub original: Vec<usize>,
}

impl Plan {
    /// What to run again when only the values `available` says are left
    /// (the program's inputs must count as available: the controller keeps
    /// them).
    pub fn replay(&self, available: impl Fn(ValueId) -> bool) -> Replay {
        let shapes: Vec<(Vec<ValueId>, Vec<ValueId>)> =
            self.steps.iter().map(|s| (s.reads(), s.writes())).collect();
        let original = replay_steps(&shapes, &self.outputs, &available);
        let steps: Vec<Step> = original.iter().map(|&i| self.steps[i].clone()).collect();
        let written: BTreeSet<ValueId> = steps.iter().flat_map(Step::writes).collect();
        let inputs: BTreeSet<ValueId> = steps
            .iter()
            .flat_map(Step::reads)
            .filter(|v| !written.contains(v))
            .collect();
        let mut plan = Plan {
            computations: self.computations.clone(),
            values: self.values.clone(),
            inputs: inputs.into_iter().collect(),
            outputs: self
                .outputs
                .iter()
                .copied()
                .filter(|v| !available(*v))
                .collect(),
            steps,
            meshes: self.meshes.clone(),
        };
        plan.compute_frees();
        Replay { plan, original }
    }
}

/// Moves the plan's devices `map` names onto their new ids (every value's
/// devices, every step's, every piece's ends, every mesh's): the same
/// program on other devices. Ids not in `map` stay.
pub fn remap_devices(plan: &mut Plan, map: &BTreeMap<i64, i64>) {
    let to = |d: &mut i64| {
        if let Some(n) = map.get(d) {
            *d = *n;
        }
    };
    for v in &mut plan.values {
        v.devices.iter_mut().for_each(to);
    }
    for m in &mut plan.meshes {
        m.devices.iter_mut().for_each(to);
    }
    for s in &mut plan.steps {
        s.devices.iter_mut().for_each(to);
        if let StepKind::Copy { pieces, .. } = &mut s.kind {
            for p in pieces {
                to(&mut p.src_device);
                to(&mut p.dst_device);
            }
        }
    }
}

/// The values a run keeps to its end as checkpoints, so that a loss
/// replays less: chosen from the values a worker sends to another worker,
/// within `budget` bytes on each worker (`worker_of` says which worker
/// drives a device).
///
/// Without checkpoints a sender frees what it sent once the send
/// completed, so the loss of the receiver (with what it computed from it)
/// sends the replay back through the sender's steps to the program's
/// inputs: on a pipeline, losing the last stage replays every stage. A
/// value kept at its sender stops the replay there. The cost model: a
/// value costs the bytes of its shards on each worker that holds them, and
/// saves, at best, its *depth* (the longest chain of steps from the
/// program's inputs to it: what a replay from the inputs would run again
/// for it). Values are taken greedily by depth per byte, deepest per byte
/// first (then by id, for determinism), each only if every worker holding
/// it still has room. Inputs (the controller keeps them) and outputs (never
/// freed) are not candidates.
pub fn checkpoints(
    plan: &Plan,
    worker_of: impl Fn(i64) -> Option<u32>,
    budget: u64,
) -> BTreeSet<ValueId> {
    let mut depth = vec![0u64; plan.values.len()];
    let mut candidates = BTreeSet::new();
    for step in &plan.steps {
        let reads = step.reads();
        let d = 1 + reads.iter().map(|&r| depth[r]).max().unwrap_or(0);
        for w in step.writes() {
            depth[w] = d;
        }
        if let StepKind::Copy { input, pieces, .. } = &step.kind {
            let crosses = pieces
                .iter()
                .any(|p| worker_of(p.src_device) != worker_of(p.dst_device));
            if crosses && !plan.inputs.contains(input) && !plan.outputs.contains(input) {
                candidates.insert(*input);
            }
        }
    }
    // Bytes of each candidate on each worker holding it.
    let cost = |v: ValueId| {
        let info = &plan.values[v];
        let mut per: BTreeMap<u32, u64> = BTreeMap::new();
        for &d in &info.devices {
            if let Some(w) = worker_of(d) {
                *per.entry(w).or_default() += info.shard_bytes();
            }
        }
        per
    };
    let mut ranked: Vec<(ValueId, BTreeMap<u32, u64>)> =
        candidates.into_iter().map(|v| (v, cost(v))).collect();
    let per_byte = |v: ValueId, c: &BTreeMap<u32, u64>| {
        depth[v] as f64 / c.values().sum::<u64>().max(1) as f64
    };
    ranked.sort_by(|(a, ca), (b, cb)| per_byte(*b, cb).total_cmp(&per_byte(*a, ca)).then(a.cmp(b)));
    let mut used: BTreeMap<u32, u64> = BTreeMap::new();
    let mut kept = BTreeSet::new();
    for (v, c) in ranked {
        let fits = c
            .iter()
            .all(|(w, b)| used.get(w).copied().unwrap_or(0).saturating_add(*b) <= budget);
        if fits {
            for (w, b) in c {
                *used.entry(w).or_default() += b;
            }
            kept.insert(v);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A random DAG: `inputs` input values, then steps each reading 1-3
    /// earlier values and writing 1-2 new ones; outputs drawn from all.
    #[derive(Debug, Clone)]
    struct Dag {
        inputs: usize,
        steps: Vec<(Vec<ValueId>, Vec<ValueId>)>,
        outputs: Vec<ValueId>,
        /// The worker each step runs on (its results live there).
        worker: Vec<u32>,
    }

    fn dag() -> impl Strategy<Value = Dag> {
        (1usize..4, 1usize..25, 2u32..5, any::<u64>()).prop_map(|(inputs, n, workers, seed)| {
            let mut rng = seed;
            let mut next = |bound: usize| {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((rng >> 33) as usize) % bound.max(1)
            };
            let mut values = inputs;
            let mut steps = Vec::new();
            let mut worker = Vec::new();
            for _ in 0..n {
                let reads: Vec<ValueId> = (0..1 + next(3)).map(|_| next(values)).collect();
                let writes: Vec<ValueId> = (0..1 + next(2)).map(|i| values + i).collect();
                values += writes.len();
                steps.push((reads, writes));
                worker.push(next(workers as usize) as u32);
            }
            let mut outputs: Vec<ValueId> = (0..1 + next(3)).map(|_| next(values)).collect();
            outputs.sort_unstable();
            outputs.dedup();
            Dag {
                inputs,
                steps,
                outputs,
                worker,
            }
        })
    }

    /// Runs `order` of the DAG's steps from `known` values: each result is
    /// a hash of the step and what it read. None if a step reads a value
    /// not known by then.
    fn simulate(
        d: &Dag,
        order: &[usize],
        mut known: HashMap<ValueId, u64>,
    ) -> Option<HashMap<ValueId, u64>> {
        for &i in order {
            let (reads, writes) = &d.steps[i];
            let mut h = i as u64 + 1;
            for r in reads {
                h = h.wrapping_mul(31).wrapping_add(*known.get(r)?);
            }
            for (k, w) in writes.iter().enumerate() {
                known.insert(*w, h.wrapping_mul(17).wrapping_add(k as u64));
            }
        }
        Some(known)
    }

    proptest! {
        /// A random worker is lost after a random number of completed
        /// steps; survivors hold what they computed except values whose
        /// readers all completed (freed). The replay gives the same outputs
        /// as the whole run, and recomputes nothing that survived.
        #[test]
        fn replay_is_sufficient_and_minimal(d in dag(), cut in any::<prop::sample::Index>(), lost in 0u32..5) {
            let inputs: HashMap<ValueId, u64> = (0..d.inputs).map(|v| (v, v as u64 * 7 + 3)).collect();
            let all: Vec<usize> = (0..d.steps.len()).collect();
            let full = simulate(&d, &all, inputs.clone()).expect("the whole DAG runs");
            let done = cut.index(d.steps.len() + 1);
            // Who wrote each value, and the last reader of each.
            let mut writer: HashMap<ValueId, usize> = HashMap::new();
            let mut last_reader: HashMap<ValueId, usize> = HashMap::new();
            for (i, (reads, writes)) in d.steps.iter().enumerate() {
                for w in writes { writer.insert(*w, i); }
                for r in reads { last_reader.insert(*r, i); }
            }
            let held: BTreeSet<ValueId> = writer
                .iter()
                .filter(|(v, &w)| {
                    w < done
                        && d.worker[w] != lost
                        && (d.outputs.contains(v) || last_reader.get(v).is_some_and(|&r| r >= done))
                })
                .map(|(v, _)| *v)
                .collect();
            let available = |v: ValueId| v < d.inputs || held.contains(&v);
            let replayed = replay_steps(&d.steps, &d.outputs, available);
            // Sufficient: the replay, from inputs and held values, gives
            // the whole run's outputs.
            let mut start = inputs.clone();
            for v in &held { start.insert(*v, full[v]); }
            let after = simulate(&d, &replayed, start);
            prop_assert!(after.is_some(), "a replayed step reads a value that is neither held nor replayed");
            let after = after.unwrap();
            for o in &d.outputs {
                prop_assert_eq!(after.get(o), full.get(o));
            }
            // Minimal: every replayed step writes something needed and not
            // available: a missing output or a later replayed step's read.
            for (k, &i) in replayed.iter().enumerate() {
                let later: BTreeSet<ValueId> = replayed[k + 1..].iter().flat_map(|&j| d.steps[j].0.clone()).collect();
                let needed = d.steps[i].1.iter().any(|w| !available(*w) && (d.outputs.contains(w) || later.contains(w)));
                prop_assert!(needed, "step {} is replayed but nothing needs what it writes", i);
            }
            // Nothing lost: no step replayed when every output survived.
            if d.outputs.iter().all(|o| available(*o)) {
                prop_assert!(replayed.is_empty());
            }
        }
    }

    /// A 3-stage chain, stage k on device (and worker) k: in 0 -call->
    /// 1 -copy-> 2 -call-> 3 -copy-> 4 -call-> 5 (output); values of 4 KiB.
    fn three_stages() -> Plan {
        use crate::plans::on_device;
        let f = |d: i64| on_device(crate::DType::F32, &[1024], d);
        let values = vec![f(0), f(0), f(1), f(1), f(2), f(2)];
        let step = |kind: StepKind, device: i64| Step {
            kind,
            label: String::new(),
            devices: vec![device],
            frees: Vec::new(),
        };
        let call = |arg: ValueId, result: ValueId, device: i64| {
            step(
                StepKind::Call {
                    computation: 0,
                    args: vec![arg],
                    results: vec![result],
                },
                device,
            )
        };
        let copy = |input: ValueId, output: ValueId, src: i64| {
            step(
                StepKind::Copy {
                    input,
                    output,
                    pieces: vec![crate::Piece {
                        src_device: src,
                        src_offsets: vec![0],
                        dst_device: src + 1,
                        dst_offsets: vec![0],
                        sizes: vec![1024],
                        link: crate::plans::link(src, src + 1),
                    }],
                },
                src,
            )
        };
        let mut plan = Plan {
            computations: Vec::new(),
            values,
            inputs: vec![0],
            outputs: vec![5],
            steps: vec![
                call(0, 1, 0),
                copy(1, 2, 0),
                call(2, 3, 1),
                copy(3, 4, 1),
                call(4, 5, 2),
            ],
            meshes: Vec::new(),
        };
        plan.compute_frees();
        plan
    }

    #[test]
    fn checkpoints_are_sent_values_deepest_per_byte_first_within_the_budget() {
        let plan = three_stages();
        let by_device = |d: i64| u32::try_from(d).ok();
        let all = checkpoints(&plan, by_device, 1 << 20);
        assert_eq!(all, BTreeSet::from([1, 3]));
        // Room for one value on each worker: both are on different workers.
        assert_eq!(checkpoints(&plan, by_device, 4096), BTreeSet::from([1, 3]));
        assert!(checkpoints(&plan, by_device, 4095).is_empty());
        assert!(checkpoints(&plan, by_device, 0).is_empty());
        // One worker: nothing crosses, nothing is kept.
        assert!(checkpoints(&plan, |_| Some(0), 1 << 20).is_empty());
    }

    #[test]
    fn a_kept_value_is_never_freed_and_stops_the_replay() {
        let plan = three_stages();
        let addrs: BTreeMap<i64, crate::plan::DeviceAddr> = (0..3)
            .map(|d| {
                (
                    d,
                    crate::plan::DeviceAddr {
                        worker: d as u32,
                        local: 0,
                    },
                )
            })
            .collect();
        let kept = checkpoints(&plan, |d| u32::try_from(d).ok(), 1 << 20);
        let part = plan.part(1, &addrs, &kept).unwrap();
        assert_eq!(part.kept, [3]);
        assert!(part.steps.iter().all(|s| !s.step.frees.contains(&3)));
        let plain = plan.part(1, &addrs, &BTreeSet::new()).unwrap();
        assert!(plain.steps.iter().any(|s| s.step.frees.contains(&3)));
        // Worker 2 lost after everything ran: without the checkpoint the
        // replay goes back to the input; with it, only the last stage runs.
        let lost = |held: &[ValueId]| {
            let held = held.to_vec();
            plan.replay(move |v| v == 0 || held.contains(&v)).original
        };
        assert_eq!(lost(&[]), [0, 1, 2, 3, 4]);
        assert_eq!(lost(&[3]), [3, 4]);
    }

    #[test]
    fn a_chain_reruns_from_the_last_held_value() {
        // in 0 -> s0 -> 1 -> s1 -> 2 -> s2 -> 3 (output)
        let steps = vec![(vec![0], vec![1]), (vec![1], vec![2]), (vec![2], vec![3])];
        assert_eq!(replay_steps(&steps, &[3], |v| v == 0), vec![0, 1, 2]);
        assert_eq!(replay_steps(&steps, &[3], |v| v == 0 || v == 1), vec![1, 2]);
        assert_eq!(replay_steps(&steps, &[3], |_| true), Vec::<usize>::new());
    }
}
