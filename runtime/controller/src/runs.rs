//! The active runs: their ids, the events their workers send (a part done,
//! a worker lost), and the order their parts go out in.
//!
//! Gang order: the parts of one run are sent to all its workers before the
//! next run's (in order, under one lock), and each worker enqueues parts in
//! arrival order, so SPMD computations of concurrent runs never interleave
//! into a deadlock. Run ids count up from the controller's start time, so
//! a worker never mixes up runs of an earlier controller with a new one's;
//! session ids come from the same counter, so owners never collide in a
//! worker's store.

use crate::{
    error::{Error, Result},
    lowering::Prepared,
    summary::RunSummary,
    Controller,
};
use pw_exec::cache::Key;
use pw_wire::proto;
use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
    time::{Duration, Instant},
};
use tokio::sync::mpsc;

/// What a run hears from its workers.
pub(crate) enum RunEvent {
    Done(u32, proto::PartDone),
    /// A worker was lost: why, and how many of its part's steps it had
    /// reported complete.
    Lost(u32, String, Option<u32>),
}

/// Per worker, the session values it takes as inputs and keeps as outputs.
pub(crate) type Bindings = HashMap<u32, (Vec<proto::Binding>, Vec<proto::Binding>)>;

/// An active run's workers, and where its events go.
type Active = (Vec<u32>, mpsc::UnboundedSender<RunEvent>);

/// See the module doc.
pub struct Runs {
    /// The active runs.
    active: Mutex<HashMap<u64, Active>>,
    next: AtomicU64,
    /// Held while a run's parts (or a release of single arrays) are sent.
    order: Mutex<()>,
}

impl Default for Runs {
    fn default() -> Runs {
        // Random high bits: a restarted controller's ids do not meet those
        // of runs its workers still remember from the last one.
        let epoch = pw_wire::auth::random_id() | 1 << 63;
        Runs {
            active: Mutex::default(),
            next: AtomicU64::new(epoch & !0xffff_ffff),
            order: Mutex::new(()),
        }
    }
}

impl Runs {
    /// A fresh run (or session) id.
    pub fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    fn active(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Active>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers run `run` of `workers`: its events come to the receiver.
    pub(crate) fn open(&self, run: u64, workers: &[u32]) -> mpsc::UnboundedReceiver<RunEvent> {
        let (tx, events) = mpsc::unbounded_channel();
        self.active().insert(run, (workers.to_vec(), tx));
        events
    }

    pub(crate) fn close(&self, run: u64) {
        self.active().remove(&run);
    }

    /// `worker` finished its part of a run.
    pub fn part_done(&self, worker: u32, done: proto::PartDone) {
        if let Some((_, tx)) = self.active().get(&done.run) {
            let _ = tx.send(RunEvent::Done(worker, done));
        }
    }

    /// `worker` was lost (`why`), having done `progress` steps of each of
    /// its runs' parts: every run it takes part in hears of it.
    pub(crate) fn lost(&self, worker: u32, why: &str, progress: &BTreeMap<u64, u32>) {
        for (run, (workers, tx)) in self.active().iter() {
            if workers.contains(&worker) {
                let _ = tx.send(RunEvent::Lost(
                    worker,
                    why.to_owned(),
                    progress.get(run).copied(),
                ));
            }
        }
    }

    /// Holds gang order while held (see the module doc).
    pub(crate) fn in_order(&self) -> std::sync::MutexGuard<'_, ()> {
        self.order.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What one dispatch sends: the run, its executables per worker, the
/// session values each worker binds, the small input shards that travel
/// with the parts, and where the parts are kept (a session's executable).
pub(crate) struct Dispatch<'a> {
    pub run: u64,
    pub prepared: &'a Prepared,
    pub keys: &'a BTreeMap<u32, Vec<Key>>,
    pub record: bool,
    pub bindings: &'a Bindings,
    pub inline: BTreeMap<u32, Vec<proto::InlineShard>>,
    pub keep: Option<(u64, &'a KeptParts)>,
    /// A run of one part, which its worker ends once done (no release
    /// follows its success).
    pub ends_run: bool,
}

/// Which workers keep an executable's parts (sent once, with the key),
/// so that later runs of it send only their bindings.
pub(crate) struct KeptParts {
    pub key: u64,
    on: Mutex<std::collections::HashSet<u32>>,
}

impl KeptParts {
    pub fn new(key: u64) -> KeptParts {
        KeptParts {
            key,
            on: Mutex::default(),
        }
    }

    fn on(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<u32>> {
        self.on.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Sends every worker all its steps in one message, on its session, and
/// returns: the parts of one run go out together, before any part of the
/// next (gang order), and nothing waits for an answer (completion, or a
/// refusal, comes as `PartDone`). A part already kept on its worker goes
/// as its key. Returns when it was sent (from `t0`); the first time a
/// worker is sent a part goes into `summary.part_sent`.
pub(crate) fn dispatch(
    c: &Controller,
    mut d: Dispatch<'_>,
    summary: &mut RunSummary,
    t0: Instant,
) -> Result<Duration> {
    let kept_on = d.keep.map(|(_, k)| k.on().clone()).unwrap_or_default();
    let needs_part: Vec<u32> = d
        .prepared
        .parts
        .keys()
        .copied()
        .filter(|w| !kept_on.contains(w))
        .collect();
    let peers = if needs_part.is_empty() {
        HashMap::new()
    } else {
        c.inner.workers.peers(d.prepared.parts.keys())
    };
    let (keep_for, part_key) = d.keep.map_or((0, 0), |(owner, k)| (owner, k.key));
    let mut requests = Vec::with_capacity(d.prepared.parts.len());
    for (&w, (part, _)) in &d.prepared.parts {
        let (inputs_from, outputs_to) = d.bindings.get(&w).cloned().unwrap_or_default();
        let mut request = proto::ExecuteRequest {
            run: d.run,
            record: d.record,
            inputs_from,
            outputs_to,
            keep_for,
            part_key,
            inputs_inline: d.inline.remove(&w).unwrap_or_default(),
            ends_run: d.ends_run,
            ..Default::default()
        };
        if needs_part.contains(&w) {
            request.part = pw_wire::part::encode(part).map_err(|e| Error::PartRefused {
                worker: w,
                message: e.to_string(),
            })?;
            request.executables = d.keys[&w].iter().map(Key::hex).collect();
            request.peers = peers.clone();
        }
        requests.push((w, request));
    }
    let _order = c.inner.runs.in_order();
    let sent = t0.elapsed();
    for (w, request) in requests {
        let with_part = !request.part.is_empty();
        c.inner
            .workers
            .command(w, proto::controller_event::Event::Execute(request))?;
        if let (true, Some((_, k))) = (with_part, d.keep) {
            k.on().insert(w);
        }
        if !summary.part_sent.iter().any(|(p, _)| *p == w) {
            summary.part_sent.push((w, sent));
        }
    }
    Ok(sent)
}

/// Why waiting for a run's parts stopped short.
pub(crate) struct Stop {
    /// The cause, for the user.
    pub error: Error,
    /// Workers lost meanwhile (a recovery may go on without them), and
    /// when the first loss was noticed (from the run's start).
    pub lost: Vec<u32>,
    pub noticed: Duration,
    /// The reports of the parts that ended.
    pub reports: BTreeMap<u32, proto::PartDone>,
}

impl From<Error> for Stop {
    fn from(error: Error) -> Stop {
        Stop {
            error,
            lost: Vec::new(),
            noticed: Duration::ZERO,
            reports: BTreeMap::new(),
        }
    }
}

/// How long waiting for the parts of a run may take.
pub(crate) struct Patience {
    /// The run's deadline.
    pub deadline: Instant,
    /// With a run that may recover: until when a loss waits for the
    /// surviving parts to end and report what they keep (without, it stops
    /// at once).
    pub settle: Option<Instant>,
    /// When the run started.
    pub t0: Instant,
}

/// Waits for every part. The first failure (in schedule order among those
/// reported together) is the cause; a worker lost meanwhile is the cause
/// (a failed send to it is only a symptom). Returns every part's report.
pub(crate) async fn wait_parts(
    prepared: &Prepared,
    events: &mut mpsc::UnboundedReceiver<RunEvent>,
    patience: &Patience,
    summary: &mut RunSummary,
) -> std::result::Result<BTreeMap<u32, proto::PartDone>, Stop> {
    let mut pending: Vec<u32> = prepared.parts.keys().copied().collect();
    let mut reports = BTreeMap::new();
    let mut failures: Vec<(Option<u32>, String)> = Vec::new();
    let mut losses: Vec<(u32, Error)> = Vec::new();
    let mut noticed = Duration::ZERO;
    // Once something failed: how long to wait for the other parts.
    let mut until: Option<Instant> = None;
    while !pending.is_empty() {
        let wait = until.map_or(patience.deadline, |u| u.min(patience.deadline));
        match tokio::time::timeout_at(wait.into(), events.recv()).await {
            Err(_) if until.is_some() => break,
            Err(_) => {
                return Err(Error::Timeout {
                    after: patience.deadline - patience.t0,
                    waiting: pending,
                }
                .into())
            }
            Ok(None) => return Err(Error::EventsClosed.into()),
            Ok(Some(RunEvent::Lost(w, why, done))) => {
                if losses.is_empty() {
                    noticed = patience.t0.elapsed();
                }
                pending.retain(|p| *p != w);
                losses.push((w, lost_at(prepared, w, why, done)));
                match patience.settle {
                    Some(by) => until = Some(by),
                    None => break,
                }
            }
            Ok(Some(RunEvent::Done(w, done))) => {
                pending.retain(|p| *p != w);
                if !done.report_json.is_empty() {
                    if let Ok(report) = serde_json::from_str(&done.report_json) {
                        summary.parts.push(report);
                    }
                }
                if !done.error.is_empty() {
                    failures.push((done.failed_step, done.error.clone()));
                    // Give the other workers a moment to report theirs.
                    if until.is_none() {
                        until = Some(Instant::now() + Duration::from_millis(200));
                    }
                }
                reports.insert(w, done);
            }
        }
    }
    if !losses.is_empty() {
        let lost = losses.iter().map(|l| l.0).collect();
        return Err(Stop {
            error: losses.swap_remove(0).1,
            lost,
            noticed,
            reports,
        });
    }
    if !failures.is_empty() {
        failures.sort_by_key(|(step, _)| step.unwrap_or(u32::MAX));
        return Err(Error::PartFailed {
            message: failures.swap_remove(0).1,
        }
        .into());
    }
    Ok(reports)
}

/// Worker `w` was lost (`why`), having done `done` of its part's steps:
/// the error names the first step it had not finished.
fn lost_at(prepared: &Prepared, w: u32, why: String, done: Option<u32>) -> Error {
    let steps = prepared
        .parts
        .get(&w)
        .map(|(part, _)| part.steps.as_slice())
        .unwrap_or_default();
    let done = done.unwrap_or(0) as usize;
    let at = match steps.get(done) {
        Some(s) => format!(
            "; it had not finished step {} on devices {:?} ({done} of its {} steps were done)",
            s.step.label,
            s.step.devices,
            steps.len()
        ),
        None => format!(
            "; all {} of its steps were done, its report was not",
            steps.len()
        ),
    };
    Error::WorkerLost { worker: w, why, at }
}
