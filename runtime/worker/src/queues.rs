//! What is queued on this worker's devices (`Worker.Queues`, for the
//! controller's status page): per active run, per local device in schedule
//! order, the steps not yet complete and the inputs each waits for.
//!
//! Nothing here keeps its own account of progress: completion is read from
//! the executor's [`Completions`] (the same the heartbeats count), arrival
//! of pieces from the [`pw_dataplane::Receiver`]. The [`Tracker`] only
//! keeps each active part (to name steps and inputs) and where the host is
//! while it enqueues one (parts are enqueued one at a time, in gang order,
//! and completions are known once every step of a part is enqueued).

use crate::State;
use pw_core::plan::{Part, StepKind, ValueId};
use pw_exec::{work::Source, work::StepWork, Completions, PieceKey, Work};
use pw_wire::{proto, MAX_QUEUED};
use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex},
};

/// An active part and its work.
type Active = (Arc<Part>, Arc<Work>);

/// The active parts, and where the host is in the one it is enqueueing.
#[derive(Default)]
pub struct Tracker {
    parts: Mutex<HashMap<u64, Active>>,
    /// (run, position in its part) while the host enqueues it.
    host: Mutex<Option<(u64, usize)>>,
}

impl Tracker {
    /// The host starts enqueueing `run`'s part.
    pub fn start(&self, run: u64, part: Arc<Part>, work: Arc<Work>) {
        if let Ok(mut p) = self.parts.lock() {
            p.insert(run, (part, work));
        }
        if let Ok(mut h) = self.host.lock() {
            *h = Some((run, 0));
        }
    }

    /// The host reached position `position` of the part it enqueues.
    pub fn reached(&self, position: usize) {
        if let Ok(mut h) = self.host.lock() {
            if let Some((_, at)) = h.as_mut() {
                *at = position;
            }
        }
    }

    /// The host enqueued every step of `run`'s part (or gave up).
    pub fn enqueued(&self, run: u64) {
        if let Ok(mut h) = self.host.lock() {
            if h.is_some_and(|(r, _)| r == run) {
                *h = None;
            }
        }
    }

    /// `run` is over.
    pub fn end(&self, run: u64) {
        if let Ok(mut p) = self.parts.lock() {
            p.remove(&run);
        }
        self.enqueued(run);
    }
}

/// The queues of every active run on this worker.
pub fn queues(state: &State) -> proto::QueuesReply {
    let parts: Vec<(u64, Arc<Part>, Arc<Work>)> = state
        .queues
        .parts
        .lock()
        .map(|p| {
            p.iter()
                .map(|(r, (part, work))| (*r, part.clone(), work.clone()))
                .collect()
        })
        .unwrap_or_default();
    let host = state.queues.host.lock().ok().and_then(|h| *h);
    let mut runs: Vec<proto::RunQueues> = parts
        .iter()
        .map(|(run, part, work)| {
            let (done, seen) = state
                .progress
                .lock()
                .ok()
                .and_then(|p| p.get(run).cloned())
                .unwrap_or((None, 0));
            let at = host.filter(|(r, _)| r == run).map(|(_, at)| at);
            let view = View {
                state,
                run: *run,
                part,
                work,
                done: done.as_ref(),
                producers: producers(part),
            };
            view.describe(seen, at)
        })
        .collect();
    runs.sort_by_key(|r| r.run);
    proto::QueuesReply {
        runs,
        ..Default::default()
    }
}

/// The step (position in the part) that writes each value.
fn producers(part: &Part) -> HashMap<ValueId, usize> {
    let mut p = HashMap::new();
    for (i, s) in part.steps.iter().enumerate() {
        for v in s.step.writes() {
            p.entry(v).or_insert(i);
        }
    }
    p
}

struct View<'a> {
    state: &'a State,
    run: u64,
    part: &'a Part,
    work: &'a Work,
    done: Option<&'a Completions>,
    producers: HashMap<ValueId, usize>,
}

/// One pending entry of a step on a device.
struct Pending {
    device: i64,
    step: proto::QueuedStep,
}

impl View<'_> {
    fn describe(&self, seen: usize, host_at: Option<usize>) -> proto::RunQueues {
        let mut devices: BTreeMap<i64, proto::DeviceQueue> = self
            .part
            .devices
            .iter()
            .filter(|(_, a)| a.worker == self.part.worker)
            .map(|(d, a)| {
                (
                    *d,
                    proto::DeviceQueue {
                        local_device: a.local,
                        device: *d,
                        steps: Vec::new(),
                        more: 0,
                    },
                )
            })
            .collect();
        // While enqueueing, nothing is known complete: list from where the
        // host is.
        let (from, done) = match (host_at, self.done) {
            (Some(_), _) | (None, None) => (host_at.unwrap_or(seen).max(seen), None),
            (None, Some(d)) => (seen, Some(d)),
        };
        for position in from..self.part.steps.len() {
            for pending in self.pending(position, done) {
                if let Some(q) = devices.get_mut(&pending.device) {
                    if q.steps.len() < MAX_QUEUED {
                        q.steps.push(pending.step);
                    } else {
                        q.more += 1;
                    }
                }
            }
        }
        proto::RunQueues {
            run: self.run,
            steps: self.part.steps.len() as u32,
            steps_done: seen as u32,
            enqueuing_at: host_at.map(|a| a as u32),
            devices: devices.into_values().collect(),
        }
    }

    /// The entries of the step at `position` not complete, with what each
    /// waits for; every entry when `done` is None (not enqueued yet).
    fn pending(&self, position: usize, done: Option<&Completions>) -> Vec<Pending> {
        let s = &self.part.steps[position];
        let queued = |role: &str, waits_for: Vec<proto::Wait>| proto::QueuedStep {
            step: s.index as u32,
            label: s.step.label.clone(),
            kind: s.step.kind.name().to_owned(),
            not_enqueued: done.is_none(),
            waits_for,
            role: role.to_owned(),
        };
        let entries = done.and_then(|d| d.step(position));
        let complete = |j: usize| {
            entries
                .and_then(|e| e.get(j))
                .is_some_and(|(_, d)| d.is_done())
        };
        let mut out = Vec::new();
        match (&s.step.kind, &self.work.steps[position]) {
            (StepKind::Call { args, .. }, StepWork::Call { .. }) => {
                for (j, &device) in s.step.devices.iter().enumerate() {
                    if complete(j) {
                        continue;
                    }
                    let waits = if done.is_some() {
                        args.iter()
                            .filter_map(|&v| self.unmet(v, position, device))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    out.push(Pending {
                        device,
                        step: queued("", waits),
                    });
                }
            }
            (StepKind::Copy { input, pieces, .. }, StepWork::Copy { targets, sends }) => {
                for (j, send) in sends.iter().enumerate() {
                    if complete(j) {
                        continue;
                    }
                    let device = pieces[send.piece].src_device;
                    let waits = if done.is_some() {
                        self.unmet(*input, position, device).into_iter().collect()
                    } else {
                        Vec::new()
                    };
                    out.push(Pending {
                        device,
                        step: queued(&format!("send to worker {}", send.worker), waits),
                    });
                }
                for (t, target) in targets.iter().enumerate() {
                    if complete(sends.len() + t) {
                        continue;
                    }
                    let mut waits = Vec::new();
                    if done.is_some() {
                        for (i, from) in &target.pieces {
                            match from {
                                Source::Local { .. } => waits.extend(self.unmet(
                                    *input,
                                    position,
                                    pieces[*i].src_device,
                                )),
                                Source::Remote { piece, worker } => {
                                    let key = PieceKey {
                                        run: self.run,
                                        step: s.index as u32,
                                        piece: *piece as u32,
                                    };
                                    if self.state.receiver.awaits(key) {
                                        waits.push(proto::Wait {
                                            value: *input as u32,
                                            producer: Some(s.index as u32),
                                            device: pieces[*i].src_device,
                                            from_worker: Some(*worker),
                                        });
                                    }
                                }
                            }
                        }
                    }
                    out.push(Pending {
                        device: target.device,
                        step: queued("receive", waits),
                    });
                }
            }
            _ => {}
        }
        out
    }

    /// Value `v`, read by the step at `position` on `device`, if it is not
    /// ready there yet.
    fn unmet(&self, v: ValueId, position: usize, device: i64) -> Option<proto::Wait> {
        let producer = *self.producers.get(&v)?;
        if producer >= position {
            return None;
        }
        let producer = self.unready(producer, device, 0)?;
        Some(proto::Wait {
            value: v as u32,
            producer: Some(self.part.steps[producer].index as u32),
            device,
            from_worker: None,
        })
    }

    /// The step that keeps what the step at `position` writes from being
    /// ready on `device`: itself, or for an assembled value the producer
    /// of a part that is not ready (None: ready).
    fn unready(&self, position: usize, device: i64, depth: usize) -> Option<usize> {
        let s = &self.part.steps[position];
        if let StepKind::Assemble { parts, .. } = &s.step.kind {
            if depth < 16 {
                return parts.iter().find_map(|p| match self.producers.get(p) {
                    Some(&pp) if pp < position => self.unready(pp, device, depth + 1),
                    _ => None,
                });
            }
        }
        (!self.ready(position, device, depth)).then_some(position)
    }

    /// Whether the step at `position` has made what it writes ready on
    /// `device` (assembled values: their parts, `depth` levels down).
    fn ready(&self, position: usize, device: i64, depth: usize) -> bool {
        let Some(entries) = self.done.and_then(|d| d.step(position)) else {
            return false;
        };
        let s = &self.part.steps[position];
        match (&s.step.kind, &self.work.steps[position]) {
            (StepKind::Copy { .. }, StepWork::Copy { sends, .. }) => entries
                .iter()
                .skip(sends.len())
                .filter(|(d, _)| *d == device)
                .all(|(_, d)| d.is_done()),
            (StepKind::Assemble { parts, .. }, _) => {
                depth < 16
                    && parts.iter().all(|p| match self.producers.get(p) {
                        Some(&pp) if pp < position => self.ready(pp, device, depth + 1),
                        _ => true,
                    })
            }
            _ => entries
                .iter()
                .filter(|(d, _)| *d == device)
                .all(|(_, d)| d.is_done()),
        }
    }
}
