//! What the controller shows of itself: its counters
//! ([`Status::reply`], `Controller.Status`), and the one place that knows
//! what is queued on every device ([`Status::overview`]): the active runs
//! as the controller describes them, the workers' queues
//! (`Worker.Queues`), and for a run that stopped making progress the chain
//! of unmet dependencies that leads to where it is stuck. `pw-server
//! --http` serves it as `/api/status` and a live page; `Controller.Overview`
//! returns the same JSON to `pw-status`.
//!
//! A run is watched from when it starts executing until it ends (a guard
//! that [`Status::watch_run`] returns); heartbeats say how far each
//! worker has got ([`Watch::heartbeat`]), and a run whose progress did not
//! change for longer than `Config::stall` (after a worker first reported
//! it) is *stalled*. Its chain starts at the earliest pending step any
//! worker reports (or, when none answers, at an unanswering worker's first
//! unfinished step), follows the first unmet input to its producer (on
//! whichever worker and device), a queued step with nothing unmet to the
//! step running on its device, and ends at a running step with nothing
//! unmet (where it is stuck), a worker that does not answer, or a step the
//! host has not enqueued yet.

use crate::{registry::WorkerEntry, Controller};
use pw_core::plan::{Part, Plan};
use pw_wire::proto;
use serde_json::{json, Value};
use std::{
    collections::{BTreeMap, HashMap, HashSet, VecDeque},
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
    time::{Duration, Instant},
};

/// What the controller counts (see `ControllerCounters`).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub runs_ok: AtomicU64,
    pub runs_failed: AtomicU64,
    pub executables_shipped: AtomicU64,
    pub bytes_shipped: AtomicU64,
    pub bytes_from_clients: AtomicU64,
    pub bytes_to_clients: AtomicU64,
    pub workers_lost: AtomicU64,
    pub workers_refused: AtomicU64,
    pub runs_recovered: AtomicU64,
}

/// How long a worker may take to say what it has queued.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);
/// The most links of a chain.
const MAX_CHAIN: usize = 64;

/// What the controller keeps of one active run.
struct Watched {
    name: String,
    /// The session it is a call of.
    session: Option<u64>,
    /// Per plan step: label, kind, devices.
    steps: Vec<(String, &'static str, Vec<i64>)>,
    /// Per worker: the plan index of each step of its part.
    parts: BTreeMap<u32, Vec<usize>>,
    started: Instant,
    /// Per worker: the part's steps known complete, as last heard.
    progress: BTreeMap<u32, u32>,
    /// When `progress` last changed (or the run started).
    changed: Instant,
    /// Whether a worker has reported the run (its parts were sent).
    reported: bool,
}

/// The active runs (see the module doc), and whose the runs that ended
/// lately were (the devices' timelines name them).
#[derive(Default)]
pub struct Watch {
    runs: Mutex<BTreeMap<u64, Watched>>,
    ended: Mutex<VecDeque<Ended>>,
}

/// A run that ended: its name and session, and when.
struct Ended {
    run: u64,
    name: String,
    session: Option<u64>,
    at: Instant,
}

/// How long, and how many, ended runs are remembered (a little more than
/// the workers' timelines cover).
const ENDED_FOR: Duration = Duration::from_secs(90);
const MAX_ENDED: usize = 4096;

impl Watch {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Watched>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_ended(&self) -> std::sync::MutexGuard<'_, VecDeque<Ended>> {
        self.ended.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `run` is over: remember whose it was.
    fn end(&self, run: u64) {
        let Some(w) = self.lock().remove(&run) else {
            return;
        };
        let mut ended = self.lock_ended();
        let now = Instant::now();
        while ended
            .front()
            .is_some_and(|e| ended.len() >= MAX_ENDED || now - e.at > ENDED_FOR)
        {
            ended.pop_front();
        }
        ended.push_back(Ended {
            run,
            name: w.name,
            session: w.session,
            at: now,
        });
    }

    /// Run `run`'s name and session, while active or lately ended.
    fn owner(&self, run: u64) -> Option<(String, Option<u64>)> {
        if let Some(w) = self.lock().get(&run) {
            return Some((w.name.clone(), w.session));
        }
        self.lock_ended()
            .iter()
            .rev()
            .find(|e| e.run == run)
            .map(|e| (e.name.clone(), e.session))
    }

    /// A heartbeat of `worker` said how far its runs have got.
    pub fn heartbeat(&self, worker: u32, runs: &[proto::RunProgress]) {
        let mut watched = self.lock();
        for p in runs {
            if let Some(w) = watched.get_mut(&p.run) {
                if w.progress.get(&worker) != Some(&p.steps_done) {
                    w.progress.insert(worker, p.steps_done);
                    w.changed = Instant::now();
                }
                w.reported = true;
            }
        }
    }
}

/// Watches a run until dropped.
pub struct Watching {
    controller: Controller,
    run: u64,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.controller.inner.watch.end(self.run);
    }
}

impl Controller {
    /// What the controller shows of itself.
    pub fn status(&self) -> Status<'_> {
        Status { c: self }
    }
}

/// See the module doc.
pub struct Status<'a> {
    c: &'a Controller,
}

/// One worker's answer to `Worker.Queues`, with what the registry knows.
pub struct WorkerQueues {
    pub id: u32,
    pub address: String,
    pub host: String,
    pub pid: u32,
    pub island: String,
    /// (global id, local id, kind).
    pub devices: Vec<(i64, u32, String)>,
    pub last_heartbeat: Duration,
    /// Per active run: the part's steps known complete (heartbeats).
    pub progress: BTreeMap<u64, u32>,
    /// Err: why it did not answer.
    pub queues: Result<proto::QueuesReply, String>,
}

impl Status<'_> {
    /// The registered workers and the controller's counters.
    pub fn reply(&self) -> proto::StatusReply {
        let inner = &self.c.inner;
        let c = &inner.counters;
        let compiler = inner.compiler.try_lock();
        let (compiled, from_cache) = compiler
            .as_ref()
            .map(|c| (c.compiled_here + c.compiled_on_workers, c.from_disk))
            .unwrap_or_default();
        let workers = inner
            .workers
            .lock()
            .workers
            .values()
            .map(|w| proto::WorkerStatus {
                worker: w.id,
                address: w.address.clone(),
                island: w.island.clone(),
                host: w.host.clone(),
                pid: w.pid,
                device_ids: w.devices.iter().map(|d| d.0).collect(),
                plugin: w.plugin.clone(),
                counters: Some(w.counters),
            })
            .collect();
        proto::StatusReply {
            workers,
            counters: Some(proto::ControllerCounters {
                runs_ok: c.runs_ok.load(Ordering::Relaxed),
                runs_failed: c.runs_failed.load(Ordering::Relaxed),
                executables_compiled: compiled,
                executables_from_cache: from_cache,
                executables_shipped: c.executables_shipped.load(Ordering::Relaxed),
                bytes_shipped: c.bytes_shipped.load(Ordering::Relaxed),
                bytes_from_clients: c.bytes_from_clients.load(Ordering::Relaxed),
                bytes_to_clients: c.bytes_to_clients.load(Ordering::Relaxed),
                workers_lost: c.workers_lost.load(Ordering::Relaxed),
                workers_refused: c.workers_refused.load(Ordering::Relaxed),
                runs_recovered: c.runs_recovered.load(Ordering::Relaxed),
            }),
        }
    }

    /// Counts bytes that came from (or went to) clients.
    pub fn count_client_bytes(&self, from: u64, to: u64) {
        let c = &self.c.inner.counters;
        c.bytes_from_clients.fetch_add(from, Ordering::Relaxed);
        c.bytes_to_clients.fetch_add(to, Ordering::Relaxed);
    }

    /// Starts watching run `run` (named `name`, a call of `session` if
    /// one) of `plan`, split into `parts`; it is watched until the guard
    /// is dropped.
    pub fn watch_run<W>(
        &self,
        run: u64,
        (name, session): (&str, Option<u64>),
        plan: &Plan,
        parts: &BTreeMap<u32, (Part, W)>,
    ) -> Watching {
        let watched = Watched {
            name: name.to_owned(),
            session,
            steps: plan
                .steps
                .iter()
                .map(|s| (s.label.clone(), s.kind.name(), s.devices.clone()))
                .collect(),
            parts: parts
                .iter()
                .map(|(w, (p, _))| (*w, p.steps.iter().map(|s| s.index).collect()))
                .collect(),
            started: Instant::now(),
            progress: BTreeMap::new(),
            changed: Instant::now(),
            reported: false,
        };
        self.c.inner.watch.lock().insert(run, watched);
        Watching {
            controller: self.c.clone(),
            run,
        }
    }

    /// Asks every registered worker what it has queued, concurrently, each
    /// for at most 500 ms.
    pub async fn queues(&self) -> Vec<WorkerQueues> {
        let asks: Vec<_> = {
            let r = self.c.inner.workers.lock();
            r.workers
                .values()
                .map(|w: &WorkerEntry| {
                    let mut client = w.client.clone();
                    let known = WorkerQueues {
                        id: w.id,
                        address: w.address.clone(),
                        host: w.host.clone(),
                        pid: w.pid,
                        island: w.island.clone(),
                        devices: w.devices.clone(),
                        last_heartbeat: w.last_heartbeat.elapsed(),
                        progress: w.progress.clone(),
                        queues: Err(String::new()),
                    };
                    async move {
                        let answer = tokio::time::timeout(
                            ASK_TIMEOUT,
                            client.queues(proto::QueuesRequest {}),
                        )
                        .await;
                        WorkerQueues {
                            queues: match answer {
                                Ok(Ok(reply)) => Ok(reply.into_inner()),
                                Ok(Err(status)) => Err(status.message().to_owned()),
                                Err(_) => Err(format!("no answer within {ASK_TIMEOUT:?}")),
                            },
                            ..known
                        }
                    }
                })
                .collect()
        };
        futures::future::join_all(asks).await
    }

    /// The status page's data (`/api/status`, `Controller.Overview`): the
    /// workers with every device's queue, the active runs (stalled ones
    /// with their chain), the counters, sessions and what waits for them.
    pub async fn overview(&self) -> Value {
        let workers = self.queues().await;
        let stall = self.c.inner.config.stall;
        let status = self.reply();
        let (sessions, waiting) = self.c.sessions().view();
        let inner_watch = &self.c.inner.watch;
        // Owners are looked up before the active runs are locked below.
        let runs_seen: HashSet<u64> = workers
            .iter()
            .filter_map(|w| w.queues.as_ref().ok())
            .flat_map(|q| {
                q.timelines
                    .iter()
                    .flat_map(|t| t.spans.iter().map(|s| s.run))
            })
            .collect();
        let owners: HashMap<u64, Option<(String, Option<u64>)>> = runs_seen
            .into_iter()
            .map(|run| (run, inner_watch.owner(run)))
            .collect();
        let watch = inner_watch.lock();
        let by_id: HashMap<u32, &WorkerQueues> = workers.iter().map(|w| (w.id, w)).collect();
        let session_names: HashMap<u64, &str> = sessions
            .iter()
            .map(|s| (s.session, s.name.as_str()))
            .collect();
        let owner = |run: u64| owner_json(run, owners.get(&run).cloned().flatten(), &session_names);
        let workers_json: Vec<Value> = workers
            .iter()
            .map(|w| worker_json(w, &watch, &owner))
            .collect();
        let runs_json: Vec<Value> = watch
            .iter()
            .map(|(&run, r)| {
                let since = r.changed.elapsed();
                let stalled = r.reported && since > stall;
                let (done, total) = plan_steps_done(r);
                json!({
                    "run": run,
                    "name": r.name,
                    "workers": r.parts.keys().collect::<Vec<_>>(),
                    "steps_done": done,
                    "steps_total": total,
                    "elapsed_ms": r.started.elapsed().as_millis() as u64,
                    "since_progress_ms": since.as_millis() as u64,
                    "stalled": stalled,
                    "chain": if stalled { chain(run, r, &by_id) } else { Vec::new() },
                })
            })
            .collect();
        let c = status.counters.unwrap_or_default();
        json!({
            "workers": workers_json,
            "runs": runs_json,
            "stall_ms": stall.as_millis() as u64,
            "counters": {
                "runs_ok": c.runs_ok,
                "runs_failed": c.runs_failed,
                "executables_compiled": c.executables_compiled,
                "executables_from_cache": c.executables_from_cache,
                "executables_shipped": c.executables_shipped,
                "bytes_shipped": c.bytes_shipped,
                "bytes_from_clients": c.bytes_from_clients,
                "bytes_to_clients": c.bytes_to_clients,
                "workers_lost": c.workers_lost,
                "workers_refused": c.workers_refused,
                "runs_recovered": c.runs_recovered,
            },
            "sessions": sessions,
            "waiting": waiting,
            "limits": limits_json(&self.c.inner.config.limits),
        })
    }
}

/// What one client may ask, as the status shows it (0: no limit).
fn limits_json(l: &crate::Limits) -> Value {
    json!({
        "request_bytes": l.request_bytes,
        "session_transfer_bytes": l.session_transfer_bytes,
        "session_device_bytes": l.session_device_bytes,
        "session_arrays": l.session_arrays,
        "waiting": l.waiting,
        "idle_s": l.idle.map_or(0, |d| d.as_secs()),
    })
}

/// Plan steps every part that has them completed, and the plan's steps.
fn plan_steps_done(r: &Watched) -> (usize, usize) {
    let mut pending: HashSet<usize> = HashSet::new();
    for (w, steps) in &r.parts {
        let done = r.progress.get(w).copied().unwrap_or(0) as usize;
        pending.extend(steps.iter().skip(done));
    }
    (
        r.steps.len() - pending.len().min(r.steps.len()),
        r.steps.len(),
    )
}

/// A step's label in run `r` (`#7` when the plan has no such step).
fn label(r: Option<&Watched>, step: u32) -> String {
    r.and_then(|r| r.steps.get(step as usize))
        .map_or_else(|| format!("#{step}"), |s| s.0.clone())
}

fn wait_json(run: Option<&Watched>, worker: u32, w: &proto::Wait) -> Value {
    let producer_worker = w.from_worker.unwrap_or(worker);
    json!({
        "value": w.value,
        "producer": w.producer,
        "producer_label": w.producer.map(|p| label(run, p)),
        "device": w.device,
        "worker": producer_worker,
        "remote": w.from_worker.is_some(),
    })
}

fn step_json(run: u64, r: Option<&Watched>, worker: u32, s: &proto::QueuedStep) -> Value {
    json!({
        "run": run,
        "step": s.step,
        "label": s.label,
        "kind": s.kind,
        "role": s.role,
        "not_enqueued": s.not_enqueued,
        "waits_for": s.waits_for.iter().map(|w| wait_json(r, worker, w)).collect::<Vec<_>>(),
    })
}

/// Whose run `run` is, for the timelines: the session's name (or the
/// run's, for a run of its own) and the session.
fn owner_json(
    run: u64,
    owner: Option<(String, Option<u64>)>,
    session_names: &HashMap<u64, &str>,
) -> Value {
    match owner {
        Some((name, Some(session))) => json!({
            "owner": session_names.get(&session).map_or_else(|| format!("session {session} (closed)"), |n| (*n).to_owned()),
            "session": session,
            "call": name,
        }),
        Some((name, None)) => json!({"owner": name, "session": null}),
        None => json!({"owner": format!("run {run}"), "session": null}),
    }
}

/// One device's recent past and counters, from its worker's answer.
fn activity_json(w: &WorkerQueues, local: u32, owner: &dyn Fn(u64) -> Value) -> (Value, Value) {
    let Ok(reply) = &w.queues else {
        return (Value::Array(Vec::new()), Value::Null);
    };
    let timeline = reply
        .timelines
        .iter()
        .find(|t| t.local_device == local)
        .map(|t| {
            t.spans
                .iter()
                .map(|s| {
                    let mut span = json!({
                        "start_ago_ms": s.start_ago_ms,
                        "end_ago_ms": s.end_ago_ms,
                        "state": if s.waiting { "waiting" } else { "busy" },
                        "run": s.run,
                    });
                    if let (Value::Object(to), Value::Object(from)) = (&mut span, owner(s.run)) {
                        to.extend(from);
                    }
                    span
                })
                .collect()
        })
        .unwrap_or_default();
    let counters = reply
        .devices
        .iter()
        .find(|d| d.local_device == local)
        .map_or(Value::Null, |d| {
            json!({
                "busy_s": d.busy_us as f64 / 1e6,
                "waiting_s": d.waiting_us as f64 / 1e6,
                "queued_steps": d.queued_steps,
                "held_bytes": d.held_bytes,
                "held_buffers": d.held_buffers,
            })
        });
    (Value::Array(timeline), counters)
}

fn worker_json(
    w: &WorkerQueues,
    watch: &BTreeMap<u64, Watched>,
    owner: &dyn Fn(u64) -> Value,
) -> Value {
    // Per global device: its pending steps across runs, in run order.
    let mut queued: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    let mut more: BTreeMap<i64, u32> = BTreeMap::new();
    let mut enqueuing = Vec::new();
    if let Ok(reply) = &w.queues {
        for run in &reply.runs {
            let r = watch.get(&run.run);
            if let Some(at) = run.enqueuing_at {
                enqueuing.push(json!({"run": run.run, "position": at}));
            }
            for d in &run.devices {
                let list = queued.entry(d.device).or_default();
                list.extend(d.steps.iter().map(|s| step_json(run.run, r, w.id, s)));
                *more.entry(d.device).or_default() += d.more;
            }
        }
    }
    let devices: Vec<Value> = w
        .devices
        .iter()
        .map(|(global, local, kind)| {
            let mut list = queued.remove(global).unwrap_or_default();
            let running = if list.is_empty() {
                Value::Null
            } else {
                list.remove(0)
            };
            let (timeline, activity) = activity_json(w, *local, owner);
            json!({
                "id": global,
                "local_id": local,
                "kind": kind,
                "running": running,
                "queue": list,
                "more": more.get(global).copied().unwrap_or(0),
                "timeline": timeline,
                "activity": activity,
            })
        })
        .collect();
    let runs: Vec<Value> = w
        .progress
        .iter()
        .map(|(run, done)| {
            let r = watch.get(run);
            let steps = r.and_then(|r| r.parts.get(&w.id));
            let next = steps
                .and_then(|s| s.get(*done as usize))
                .map(|&i| json!({"step": i, "label": label(r, i as u32)}));
            json!({
                "run": run,
                "steps_done": done,
                "steps": steps.map_or(0, Vec::len),
                "first_unfinished": next,
            })
        })
        .collect();
    json!({
        "id": w.id,
        "address": w.address,
        "host": w.host,
        "pid": w.pid,
        "island": w.island,
        "answering": w.queues.is_ok(),
        "error": w.queues.as_ref().err(),
        "last_heartbeat_ms": w.last_heartbeat.as_millis() as u64,
        "enqueuing": enqueuing,
        "runs": runs,
        "devices": devices,
    })
}

/// Run `run`'s pending steps on one worker: (device, step), in queue order.
fn pending_of(w: &WorkerQueues, run: u64) -> Vec<(i64, &proto::QueuedStep)> {
    let Ok(reply) = &w.queues else {
        return Vec::new();
    };
    reply
        .runs
        .iter()
        .filter(|r| r.run == run)
        .flat_map(|r| {
            r.devices
                .iter()
                .flat_map(|d| d.steps.iter().map(move |s| (d.device, s)))
        })
        .collect()
}

/// The chain of unmet dependencies of stalled run `run` (see the module
/// doc).
fn chain(run: u64, r: &Watched, workers: &HashMap<u32, &WorkerQueues>) -> Vec<Value> {
    let mut links = Vec::new();
    // Where to start: the earliest pending step any worker reports.
    let mut start: Option<(u32, i64, u32)> = None;
    for &w in r.parts.keys() {
        let Some(q) = workers.get(&w) else { continue };
        for (device, s) in pending_of(q, run) {
            if start.is_none_or(|(_, _, step)| s.step < step) {
                start = Some((w, device, s.step));
            }
        }
    }
    // A worker that does not answer, reached at `at` (step, device).
    let unanswering = |w: u32, at: Option<(u32, i64)>, links: &mut Vec<Value>| {
        let q = workers.get(&w);
        let done = r.progress.get(&w).copied().unwrap_or(0) as usize;
        let next = r.parts.get(&w).and_then(|s| s.get(done)).copied();
        let step = at.map(|a| a.0).or(next.map(|i| i as u32));
        links.push(json!({
            "worker": w,
            "device": at.map(|a| a.1),
            "state": "not answering",
            "step": step,
            "label": step.map(|i| label(Some(r), i)),
            "first_unfinished": next.map(|i| label(Some(r), i as u32)),
            "last_heartbeat_ms": q.map(|q| q.last_heartbeat.as_millis() as u64),
            "error": q.and_then(|q| q.queues.as_ref().err()),
            "why": format!(
                "worker {w} does not answer{}{}",
                q.map(|q| format!(" (last heartbeat {} ms ago)", q.last_heartbeat.as_millis()))
                    .unwrap_or_else(|| " (it is gone)".into()),
                next.map(|i| format!("; its first unfinished step is {}", label(Some(r), i as u32)))
                    .unwrap_or_default()
            ),
        }));
    };
    let Some(mut at) = start else {
        // No answering worker has a pending step: the first unanswering one.
        if let Some(&w) = r
            .parts
            .keys()
            .find(|w| workers.get(w).is_none_or(|q| q.queues.is_err()))
        {
            unanswering(w, None, &mut links);
        }
        return links;
    };
    let mut seen = HashSet::new();
    while links.len() < MAX_CHAIN && seen.insert(at) {
        let (w, device, step) = at;
        let Some(q) = workers.get(&w).filter(|q| q.queues.is_ok()) else {
            unanswering(w, Some((step, device)), &mut links);
            break;
        };
        let pending = pending_of(q, run);
        let Some(&(_, s)) = pending.iter().find(|(d, s)| *d == device && s.step == step) else {
            links.push(json!({
                "worker": w, "device": device, "step": step,
                "label": label(Some(r), step),
                "state": "not queued",
                "why": format!(
                    "worker {w} does not list step {} on device {device}: done, in flight, or beyond the first {} queued",
                    label(Some(r), step),
                    pw_wire::MAX_QUEUED
                ),
            }));
            break;
        };
        let running = pending
            .iter()
            .find(|(d, _)| *d == device)
            .map(|(_, s)| s.step);
        let mut link = json!({
            "worker": w, "device": device, "step": step,
            "label": s.label, "kind": s.kind, "role": s.role,
            "waits_for": s.waits_for.iter().map(|x| wait_json(Some(r), w, x)).collect::<Vec<_>>(),
        });
        if s.not_enqueued {
            link["state"] = json!("not enqueued");
            link["why"] = json!(format!(
                "worker {w}'s host has not enqueued it yet: it is still enqueueing the part"
            ));
            links.push(link);
            break;
        }
        if let Some(first) = s.waits_for.first() {
            link["state"] = json!("waits");
            let from = first.from_worker.unwrap_or(w);
            link["why"] = json!(format!(
                "waits for value {} from step {} on device {} of worker {from}",
                first.value,
                first
                    .producer
                    .map_or_else(|| "?".into(), |p| label(Some(r), p)),
                first.device
            ));
            links.push(link);
            match first.producer {
                Some(p) => at = (from, first.device, p),
                None => break,
            }
        } else if running.is_some_and(|x| x != step) {
            let x = running.unwrap_or(step);
            link["state"] = json!("behind");
            link["why"] = json!(format!(
                "nothing unmet; queued behind step {} on device {device}",
                label(Some(r), x)
            ));
            links.push(link);
            at = (w, device, x);
        } else {
            link["state"] = json!("stuck");
            link["why"] = json!(format!(
                "nothing unmet: it is running on device {device} of worker {w} and does not finish{}",
                if s.role.starts_with("send") { " (its piece is not sent)" } else { "" }
            ));
            links.push(link);
            break;
        }
    }
    links
}
