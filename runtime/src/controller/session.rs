//! Sessions: a client's slice of the devices, and the arrays and
//! executables it made there.
//!
//! * **Opening** ([`Controller::serve_session`]): the client asks for a
//!   number of devices; the resource manager's book ([`super::slices`])
//!   grants a slice at once or puts the client in line (it hears its
//!   place), strictly first come, first served. The session lives as long
//!   as the client's stream and its lease: a client that closes, vanishes
//!   or stops sending heartbeats loses the session, and its slice goes to
//!   the next in line.
//! * **Compiling** ([`Controller::compile_program`]): the program is
//!   lowered onto the slice once and each of its computations compiled once
//!   (the controller's memory and disk caches apply) and shipped to the
//!   workers of the slice. The session keeps the plan and each worker's
//!   part: a call lowers and compiles nothing.
//! * **Calling** ([`Controller::call`]): arguments are arrays of the
//!   session or host arrays sent with the call. Arrays laid out as the
//!   executable wants stay on their devices (the workers take them from the
//!   session's store); others travel through the controller once. The
//!   outputs become arrays of the session as soon as the run is on its way:
//!   a later call may take them while the run still executes, since every
//!   worker enqueues parts in the order they were sent. An array is ready
//!   (or failed, with the run's error) when its run is done.
//! * **Arrays** are named by (session, id); another session's array is
//!   refused. Deleting one, donating it to a call, or closing the session
//!   frees its buffers on the workers.

use super::{
    slices::{Ask, Lease, Want},
    summary::RunSummary,
    Controller, Prepared,
};
use crate::{cache::Key, host::HostArray, wire::proto};
use pw_core::plan::ValueId;
use std::{
    collections::{BTreeMap, BTreeSet, HashMap, VecDeque},
    sync::Arc,
    time::{Duration, Instant},
};
use tokio::sync::{mpsc, watch};
use tonic::Status;

/// How the failure of an array lost with its worker begins.
const DATA_LOSS: &str = "data loss";

/// Why an array that failed cannot be used, after "it" or "argument #i".
fn why_unusable(failure: &str) -> String {
    if failure.starts_with(DATA_LOSS) {
        format!("is lost ({failure})")
    } else {
        format!("is the output of a call that failed: {failure}")
    }
}

/// What went wrong with a session request; the kind travels to the client
/// (the `pw-error` metadata) so that it raises the matching exception.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The session does not exist (closed, lapsed, or the server
    /// restarted).
    #[error("{0}")]
    Session(String),
    /// The program cannot be lowered or compiled for the slice.
    #[error("{0}")]
    Program(String),
    /// Arguments that do not fit the executable (count, dtype, shape).
    #[error("{0}")]
    Argument(String),
    /// An array that cannot be used: deleted, donated, another session's,
    /// or the output of a failed call.
    #[error("{0}")]
    Array(String),
    /// A run failed, or a worker it needed is gone.
    #[error("{0}")]
    Run(String),
    /// The devices asked for were not free in time.
    #[error("{0}")]
    Busy(String),
}

impl SessionError {
    fn kind(&self) -> &'static str {
        match self {
            SessionError::Session(_) => "session",
            SessionError::Program(_) => "program",
            SessionError::Argument(_) => "argument",
            SessionError::Array(_) => "array",
            SessionError::Run(_) => "run",
            SessionError::Busy(_) => "busy",
        }
    }
}

impl From<SessionError> for Status {
    fn from(e: SessionError) -> Status {
        let kind = e.kind();
        let message = e.to_string();
        let mut status = match &e {
            SessionError::Session(_) => Status::not_found(message),
            SessionError::Program(_) | SessionError::Argument(_) => {
                Status::invalid_argument(message)
            }
            SessionError::Array(_) => Status::failed_precondition(message),
            SessionError::Run(_) => Status::aborted(message),
            SessionError::Busy(_) => Status::deadline_exceeded(message),
        };
        if let Ok(v) = kind.parse() {
            status.metadata_mut().insert("pw-error", v);
        }
        status
    }
}

/// An array on its way to a client.
pub enum Fetched {
    /// A worker's stream of the one shard that is all of it (its bytes).
    Forwarded(tonic::Streaming<proto::FetchReply>, u64),
    Assembled(HostArray),
}

/// Whether an array is computed yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayState {
    Pending,
    Ready,
    Failed(String),
}

/// One array of a session: a value of one of its executables, laid out as
/// that value.
#[derive(Clone)]
struct SessionArray {
    exe: Arc<Executable>,
    value: ValueId,
    state: Arc<watch::Sender<ArrayState>>,
}

impl SessionArray {
    fn info(&self) -> &pw_core::plan::ValueInfo {
        &self.exe.prepared.plan.values[self.value]
    }

    /// The workers holding its shards.
    fn workers(&self) -> Vec<u32> {
        let mut w: Vec<u32> = self
            .info()
            .devices
            .iter()
            .filter_map(|d| self.exe.prepared.addrs.get(d))
            .map(|a| a.worker)
            .collect();
        w.sort_unstable();
        w.dedup();
        w
    }
}

/// A program compiled for a session's slice.
pub(crate) struct Executable {
    name: String,
    prepared: Prepared,
    keys: BTreeMap<u32, Vec<Key>>,
    /// Inputs whose arrays a call takes over.
    donate: BTreeSet<usize>,
}

/// One client's session.
struct Session {
    name: String,
    devices: Vec<i64>,
    opened: Instant,
    lease: Lease,
    executables: HashMap<u64, Arc<Executable>>,
    arrays: HashMap<u64, SessionArray>,
    counters: proto::SessionCounters,
    next_id: u64,
    calls_running: u64,
}

/// What a client in line hears.
enum Wait {
    Position(usize),
    Granted(Vec<i64>),
}

struct Waiter {
    name: String,
    since: Instant,
    tx: mpsc::UnboundedSender<Wait>,
}

/// Every session and the line for devices.
#[derive(Default)]
pub(crate) struct Sessions {
    slices: super::slices::Slices,
    live: HashMap<u64, Session>,
    waiting: HashMap<u64, Waiter>,
    /// Why recently closed sessions closed (for clear errors), oldest
    /// first, at most [`CLOSED_KEPT`].
    closed: VecDeque<(u64, String)>,
}

const CLOSED_KEPT: usize = 256;

impl Sessions {
    fn open(&mut self, id: u64, name: String, devices: Vec<i64>, lease: Duration) {
        let now = Instant::now();
        self.live.insert(
            id,
            Session {
                name,
                devices,
                opened: now,
                lease: Lease::new(lease, now),
                executables: HashMap::new(),
                arrays: HashMap::new(),
                counters: proto::SessionCounters::default(),
                next_id: 1,
                calls_running: 0,
            },
        );
    }

    /// Grants what the book handed out, and tells the rest of the line
    /// their new places.
    fn grant(&mut self, granted: Vec<(u64, Vec<i64>)>, lease: Duration) {
        for (id, devices) in granted {
            if let Some(w) = self.waiting.remove(&id) {
                self.open(id, w.name, devices.clone(), lease);
                let _ = w.tx.send(Wait::Granted(devices));
            }
        }
        for (id, w) in &self.waiting {
            if let Some(p) = self.slices.position(*id) {
                let _ = w.tx.send(Wait::Position(p));
            }
        }
    }

    fn get(&mut self, id: u64) -> Result<&mut Session, SessionError> {
        if let Some(s) = self.live.get_mut(&id) {
            return Ok(s);
        }
        let why = self
            .closed
            .iter()
            .find(|(c, _)| *c == id)
            .map(|(_, why)| format!("session {id} is closed: {why}"))
            .unwrap_or_else(|| {
                format!(
                    "there is no session {id} on this server (it closed, or the server restarted)"
                )
            });
        Err(SessionError::Session(why))
    }
}

/// What `Controller::session_view` shows of one session.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SessionLine {
    pub session: u64,
    pub name: String,
    pub devices: Vec<i64>,
    pub open_ms: u64,
    pub executables: usize,
    pub arrays: usize,
    pub calls: u64,
    pub calls_running: u64,
}

/// A client waiting for devices.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WaitingLine {
    pub session: u64,
    pub name: String,
    pub position: usize,
    /// 0: every device.
    pub devices: usize,
    pub waiting_ms: u64,
}

impl Controller {
    fn sessions(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Every registered device, by worker.
    fn devices_by_worker(&self) -> BTreeMap<u32, Vec<i64>> {
        self.registry()
            .workers
            .values()
            .map(|w| (w.id, w.devices.iter().map(|d| d.0).collect()))
            .collect()
    }

    /// Serves one client's session stream (see the module doc) until it
    /// ends; `out` is the stream to the client.
    pub async fn serve_session(
        self,
        open: proto::SessionOpen,
        mut incoming: tonic::Streaming<proto::SessionRequest>,
        out: mpsc::UnboundedSender<Result<proto::SessionEvent, Status>>,
    ) {
        let id = self
            .inner
            .next_run
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let lease = self.inner.config.client_lease;
        let want = match open.devices {
            0 => Want::All,
            n => Want::Count(n as usize),
        };
        let name = if open.name.is_empty() {
            format!("session {id}")
        } else {
            open.name.clone()
        };
        let (wait_tx, mut wait_rx) = mpsc::unbounded_channel();
        let asked = {
            let devices = self.devices_by_worker();
            let mut s = self.sessions();
            let asked = s.slices.ask(id, want, &devices);
            match &asked {
                Ask::Granted(d) => s.open(id, name.clone(), d.clone(), lease),
                Ask::Queued(_) => {
                    s.waiting.insert(
                        id,
                        Waiter {
                            name: name.clone(),
                            since: Instant::now(),
                            tx: wait_tx,
                        },
                    );
                }
                Ask::Refused(_) => {}
            }
            asked
        };
        let send = |event: proto::session_event::Event| {
            let _ = out.send(Ok(proto::SessionEvent { event: Some(event) }));
        };
        let devices = match asked {
            Ask::Granted(d) => d,
            Ask::Refused(why) => {
                let _ = out.send(Err(Status::from(SessionError::Busy(format!(
                    "error: cannot open a session: {why}"
                )))));
                return;
            }
            Ask::Queued(position) => {
                send(proto::session_event::Event::Queued(position as u32));
                let timeout = Duration::from_millis(open.timeout_ms);
                let deadline = tokio::time::Instant::now() + timeout;
                loop {
                    tokio::select! {
                        w = wait_rx.recv() => match w {
                            Some(Wait::Position(p)) => {
                                send(proto::session_event::Event::Queued(p as u32));
                            }
                            Some(Wait::Granted(d)) => break d,
                            None => return,
                        },
                        m = incoming.message() => {
                            if !matches!(m, Ok(Some(_))) {
                                self.leave_line(id);
                                return;
                            }
                        }
                        _ = tokio::time::sleep_until(deadline), if open.timeout_ms > 0 => {
                            let holders = self.holders();
                            self.leave_line(id);
                            let wanted = match want {
                                Want::All => "every device".to_owned(),
                                Want::Count(n) => format!("{n} devices"),
                            };
                            let _ = out.send(Err(Status::from(SessionError::Busy(format!(
                                "error: waited {timeout:?} for {wanted}; they are held by {holders}"
                            )))));
                            return;
                        }
                    }
                }
            }
        };
        tracing::info!("session {id} ({name}) opened on devices {devices:?}");
        send(proto::session_event::Event::Granted(
            proto::SessionGranted {
                session: id,
                devices,
                heartbeat_ms: (lease.as_millis() / 4).max(1) as u32,
                lease_ms: lease.as_millis() as u32,
            },
        ));
        let why = loop {
            let Some(deadline) = self.sessions().live.get(&id).map(|s| s.lease.deadline()) else {
                break "it was closed".to_owned();
            };
            match tokio::time::timeout_at(deadline.into(), incoming.message()).await {
                Ok(Ok(Some(_))) => {
                    if let Some(s) = self.sessions().live.get_mut(&id) {
                        s.lease.renew(Instant::now());
                    }
                }
                Ok(Ok(None)) => break "its client closed it".to_owned(),
                Ok(Err(status)) => {
                    break format!("its client's connection failed: {}", status.message())
                }
                Err(_) => {
                    let why = format!("its client's lease lapsed (no heartbeat for {lease:?})");
                    let _ = out.send(Err(Status::from(SessionError::Session(format!(
                        "error: session {id} is closed: {why}"
                    )))));
                    break why;
                }
            }
        };
        self.close_session(id, &why).await;
    }

    /// Who holds devices now, for messages.
    fn holders(&self) -> String {
        let s = self.sessions();
        let mut lines: Vec<String> = s
            .live
            .iter()
            .map(|(id, x)| format!("session {id} ({}): devices {:?}", x.name, x.devices))
            .collect();
        lines.sort();
        if lines.is_empty() {
            "nobody (the line is ahead of it)".into()
        } else {
            lines.join("; ")
        }
    }

    /// A client in line gave up (timeout, or it vanished).
    fn leave_line(&self, id: u64) {
        let devices = self.devices_by_worker();
        let lease = self.inner.config.client_lease;
        let mut s = self.sessions();
        s.waiting.remove(&id);
        let granted = s.slices.release(id, &devices);
        s.grant(granted, lease);
    }

    /// Closes session `id`: its slice goes to the line, and every worker
    /// of the slice drops what it held.
    async fn close_session(&self, id: u64, why: &str) {
        let devices = self.devices_by_worker();
        let lease = self.inner.config.client_lease;
        let held = {
            let mut s = self.sessions();
            let held = s.live.remove(&id).map(|x| x.devices);
            s.closed.push_back((id, why.to_owned()));
            if s.closed.len() > CLOSED_KEPT {
                s.closed.pop_front();
            }
            let granted = s.slices.release(id, &devices);
            s.grant(granted, lease);
            held
        };
        let Some(held) = held else { return };
        tracing::info!("session {id} closed: {why}");
        let workers: Vec<u32> = devices
            .iter()
            .filter(|(_, ds)| ds.iter().any(|d| held.contains(d)))
            .map(|(w, _)| *w)
            .collect();
        self.release(id, &workers, &format!("session {id} closed: {why}"))
            .await;
    }

    /// A worker is gone: its devices leave every slice, and arrays with a
    /// shard on it fail.
    pub(crate) fn sessions_lost_worker(&self, worker: u32, devices: &[i64], why: &str) {
        let registered = self.devices_by_worker();
        let lease = self.inner.config.client_lease;
        let mut s = self.sessions();
        s.slices.forget_devices(devices);
        for (sid, session) in s.live.iter_mut() {
            session.devices.retain(|d| !devices.contains(d));
            for (id, a) in &session.arrays {
                if a.workers().contains(&worker) {
                    a.state.send_replace(ArrayState::Failed(format!(
                        "{DATA_LOSS}: array {id} of session {sid} had shards on a worker that is gone \
                         ({why}); a session array has no lineage to compute it again from, so compute \
                         it again (the session goes on with its other devices and arrays)"
                    )));
                }
            }
        }
        let granted = s.slices.serve(&registered);
        s.grant(granted, lease);
    }

    /// Workers joined: the line may move.
    pub(crate) fn sessions_workers_changed(&self) {
        let registered = self.devices_by_worker();
        let lease = self.inner.config.client_lease;
        let mut s = self.sessions();
        let granted = s.slices.serve(&registered);
        s.grant(granted, lease);
    }

    /// Lowers `text` onto session `session`'s slice and compiles it (see
    /// the module doc); `progress` hears each compile.
    pub async fn compile_program(
        &self,
        request: proto::CompileProgramRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<proto::CompiledProgram, SessionError> {
        let id = request.session;
        let mut slice = self.sessions().get(id)?.devices.clone();
        let n = request.devices as usize;
        if n > slice.len() {
            return Err(SessionError::Program(format!(
                "error: {n} devices asked for, session {id} holds {}",
                slice.len()
            )));
        }
        if n > 0 {
            slice.truncate(n);
        }
        let (topology, addrs) = {
            let r = self.registry();
            (r.topology(Some(&slice)), r.addresses())
        };
        if topology.islands.is_empty() {
            return Err(SessionError::Session(format!(
                "error: session {id} has no devices left (its workers are gone)"
            )));
        }
        let mut summary = RunSummary::default();
        let schedule = (!request.schedule.is_empty()).then_some(request.schedule);
        let prepared = self
            .prepare(
                &request.name,
                request.text,
                schedule,
                topology,
                &addrs,
                &mut summary,
            )
            .await
            .map_err(SessionError::Program)?;
        let keys = self
            .executables(&prepared.parts, &mut summary, progress)
            .await
            .map_err(SessionError::Program)?;
        let plan = &prepared.plan;
        let donate: BTreeSet<usize> = request.donate.iter().map(|&d| d as usize).collect();
        if let Some(bad) = donate.iter().find(|&&d| d >= plan.inputs.len()) {
            return Err(SessionError::Argument(format!(
                "error: donated argument #{bad}: the program takes {} inputs",
                plan.inputs.len()
            )));
        }
        use super::compile::Source;
        let compiled = summary
            .executables
            .iter()
            .filter(|e| matches!(e.source, Some(Source::Controller | Source::Worker(_))))
            .count() as u32;
        let cached = summary
            .executables
            .iter()
            .filter(|e| matches!(e.source, Some(Source::DiskCache | Source::Memory)))
            .count() as u32;
        let info = |v: ValueId| {
            let value = &plan.values[v];
            let dims: Vec<usize> = value.shape.iter().map(|&d| d as usize).collect();
            proto::ArrayInfo {
                r#type: Some(proto::ArrayType::of(value.dtype, &dims)),
                devices: value.devices.clone(),
                sharding: value.sharding.clone(),
            }
        };
        let reply = proto::CompiledProgram {
            executable: 0,
            inputs: plan.inputs.iter().map(|&v| info(v)).collect(),
            outputs: plan.outputs.iter().map(|&v| info(v)).collect(),
            compiled,
            cached,
            lowered: summary.lowered.clone(),
        };
        let exe = Arc::new(Executable {
            name: request.name,
            prepared,
            keys,
            donate,
        });
        let mut s = self.sessions();
        let session = s.get(id)?;
        let handle = session.next_id;
        session.next_id += 1;
        session.executables.insert(handle, exe);
        let c = &mut session.counters;
        c.lowerings += 1;
        c.executables_compiled += u64::from(compiled);
        c.executables_from_cache += u64::from(cached);
        Ok(proto::CompiledProgram {
            executable: handle,
            ..reply
        })
    }

    /// Runs an executable of a session (see the module doc); returns once
    /// every worker has its part, with the output arrays.
    pub async fn call(
        &self,
        begin: proto::CallBegin,
        hosts: Vec<HostArray>,
    ) -> Result<proto::CallReply, SessionError> {
        let id = begin.session;
        let t0 = Instant::now();
        let deadline = t0 + self.inner.config.run_timeout;
        // Everything about the arguments is settled under the lock, before
        // anything moves.
        let (exe, bound, relayouts, mut uploads, outputs, released) = {
            let mut s = self.sessions();
            let session = s.get(id)?;
            let mut released = Vec::new();
            for a in &begin.release {
                if let Some(array) = session.arrays.remove(a) {
                    released.push((*a, array.workers()));
                }
            }
            let exe = session
                .executables
                .get(&begin.executable)
                .cloned()
                .ok_or_else(|| {
                    SessionError::Argument(format!(
                        "error: session {id} has no executable {}",
                        begin.executable
                    ))
                })?;
            let plan = &exe.prepared.plan;
            if begin.arguments.len() != plan.inputs.len() {
                return Err(SessionError::Argument(format!(
                    "error: {} takes {} arguments, {} given",
                    exe.name,
                    plan.inputs.len(),
                    begin.arguments.len()
                )));
            }
            let mut uses: HashMap<u64, usize> = HashMap::new();
            for a in &begin.arguments {
                if let Some(proto::call_argument::Argument::Array(r)) = &a.argument {
                    *uses.entry(r.array).or_default() += 1;
                }
            }
            let mut bound: Vec<(ValueId, u64, bool)> = Vec::new();
            let mut relayouts: Vec<(ValueId, u64, SessionArray)> = Vec::new();
            let mut uploads: Vec<(ValueId, HostArray)> = Vec::new();
            let mut hosts = hosts.into_iter();
            let mut donated = Vec::new();
            for (i, (a, &value)) in begin.arguments.iter().zip(&plan.inputs).enumerate() {
                let want = &plan.values[value];
                match &a.argument {
                    Some(proto::call_argument::Argument::Array(r)) => {
                        if r.session != id {
                            return Err(SessionError::Array(format!(
                                "error: argument #{i} is array {} of session {}, not of this session ({id})",
                                r.array, r.session
                            )));
                        }
                        let array = session.arrays.get(&r.array).ok_or_else(|| {
                            SessionError::Array(format!(
                                "error: argument #{i}: array {} does not exist in session {id}: it was deleted, or donated to an earlier call",
                                r.array
                            ))
                        })?;
                        if let ArrayState::Failed(e) = &*array.state.borrow() {
                            return Err(SessionError::Array(format!(
                                "error: argument #{i} (array {}) {}",
                                r.array,
                                why_unusable(e)
                            )));
                        }
                        let have = array.info();
                        if have.dtype != want.dtype || have.shape != want.shape {
                            return Err(SessionError::Argument(format!(
                                "error: argument #{i} is {}, but {} expects {}",
                                have.describe(),
                                exe.name,
                                want.describe()
                            )));
                        }
                        let take = exe.donate.contains(&i) && uses[&r.array] == 1;
                        if take {
                            donated.push(r.array);
                        }
                        if have.devices == want.devices && have.layout == want.layout {
                            bound.push((value, r.array, take));
                        } else {
                            relayouts.push((value, r.array, array.clone()));
                        }
                    }
                    Some(proto::call_argument::Argument::Host(t)) => {
                        let host = hosts.next().ok_or_else(|| {
                            SessionError::Argument(format!("error: argument #{i}: no bytes came"))
                        })?;
                        let shape: Vec<i64> = t.dims.iter().map(|&d| d as i64).collect();
                        if host.dtype() != want.dtype || shape != want.shape {
                            return Err(SessionError::Argument(format!(
                                "error: argument #{i} is {}{:?}, but {} expects {}",
                                host.dtype(),
                                host.shape(),
                                exe.name,
                                want.describe()
                            )));
                        }
                        uploads.push((value, host));
                    }
                    None => {
                        return Err(SessionError::Argument(format!(
                            "error: argument #{i} is empty"
                        )))
                    }
                }
            }
            for a in donated {
                if let Some(array) = session.arrays.remove(&a) {
                    // A relaid-out donation travels through the host: the
                    // source is freed after the call.
                    if relayouts.iter().any(|(_, r, _)| *r == a) {
                        released.push((a, array.workers()));
                    }
                }
            }
            let mut outputs = Vec::with_capacity(plan.outputs.len());
            for &value in &plan.outputs {
                let handle = session.next_id;
                session.next_id += 1;
                let state = Arc::new(watch::Sender::new(ArrayState::Pending));
                session.arrays.insert(
                    handle,
                    SessionArray {
                        exe: exe.clone(),
                        value,
                        state: state.clone(),
                    },
                );
                outputs.push((value, handle, state));
            }
            session.counters.calls += 1;
            session.calls_running += 1;
            (exe, bound, relayouts, uploads, outputs, released)
        };
        let fail_outputs = |why: &str| {
            for (_, _, state) in &outputs {
                state.send_replace(ArrayState::Failed(why.to_owned()));
            }
            if let Ok(session) = self.sessions().get(id) {
                session.calls_running = session.calls_running.saturating_sub(1);
            }
        };
        for (array, workers) in &released {
            self.release_arrays(id, workers, "deleted by its client", &[*array])
                .await;
        }
        // Arrays laid out otherwise travel through the controller.
        let mut from_workers = 0u64;
        for (value, array, source) in relayouts {
            let outcome = async {
                wait_ready(&source, deadline).await?;
                let (host, bytes) = self
                    .fetch_value(
                        id,
                        array as usize,
                        source.info(),
                        &source.exe.prepared.addrs,
                    )
                    .await
                    .map_err(SessionError::Run)?;
                from_workers += bytes.values().sum::<u64>();
                Ok::<_, SessionError>(host)
            }
            .await;
            match outcome {
                Ok(host) => uploads.push((value, host)),
                Err(e) => {
                    fail_outputs(&e.to_string());
                    return Err(e);
                }
            }
        }
        let prepared = &exe.prepared;
        let run = self
            .inner
            .next_run
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut events = self.open_run(run, &prepared.workers);
        let watching = self.watch_run(run, &exe.name, &prepared.plan, &prepared.parts);
        // Which worker takes which session array, and keeps which output.
        let mut bindings: HashMap<u32, (Vec<proto::Binding>, Vec<proto::Binding>)> = HashMap::new();
        for (&w, (part, _)) in &prepared.parts {
            let entry = bindings.entry(w).or_default();
            for &(value, array, take) in &bound {
                if part.inputs.contains(&value) {
                    entry.0.push(proto::Binding {
                        value: value as u32,
                        owner: id,
                        array,
                        take,
                    });
                }
            }
            for (value, array, _) in &outputs {
                if part.outputs.contains(value) {
                    entry.1.push(proto::Binding {
                        value: *value as u32,
                        owner: id,
                        array: *array,
                        take: false,
                    });
                }
            }
        }
        let mut summary = RunSummary::default();
        let started = async {
            let refs: Vec<(usize, &HostArray)> = uploads.iter().map(|(v, h)| (*v, h)).collect();
            let sent = self.upload(run, prepared, &refs).await?;
            self.dispatch(run, prepared, &exe.keys, false, &bindings, &mut summary, t0)
                .await?;
            Ok::<u64, String>(sent.values().sum())
        }
        .await;
        let to_workers = match started {
            Ok(b) => b,
            Err(e) => {
                self.close_run(run);
                self.release(run, &prepared.workers, &format!("the call failed: {e}"))
                    .await;
                fail_outputs(&e);
                return Err(SessionError::Run(e));
            }
        };
        if let Ok(session) = self.sessions().get(id) {
            let c = &mut session.counters;
            c.bytes_to_workers += to_workers;
            c.bytes_from_workers += from_workers;
        }
        // The run finishes on its own; its outputs say how it went.
        let controller = self.clone();
        let exe_ = exe.clone();
        let states: Vec<Arc<watch::Sender<ArrayState>>> =
            outputs.iter().map(|(_, _, s)| s.clone()).collect();
        tokio::spawn(async move {
            let prepared = &exe_.prepared;
            let outcome = controller
                .wait_parts(prepared, &mut events, deadline, None, t0, &mut summary)
                .await
                .map(|_| ())
                .map_err(|stop| stop.message);
            controller.close_run(run);
            drop(watching);
            let (state, why) = match &outcome {
                Ok(()) => (ArrayState::Ready, "the call finished".to_owned()),
                Err(e) => (
                    ArrayState::Failed(e.clone()),
                    format!("the call failed: {e}"),
                ),
            };
            controller.release(run, &prepared.workers, &why).await;
            for s in &states {
                // A worker lost meanwhile has already failed it.
                s.send_if_modified(|now| {
                    let pending = *now == ArrayState::Pending;
                    if pending {
                        *now = state.clone();
                    }
                    pending
                });
            }
            let counter = if outcome.is_ok() {
                &controller.inner.counters.runs_ok
            } else {
                &controller.inner.counters.runs_failed
            };
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if let Ok(session) = controller.sessions().get(id) {
                session.calls_running = session.calls_running.saturating_sub(1);
            }
        });
        Ok(proto::CallReply {
            outputs: outputs.iter().map(|(_, a, _)| *a).collect(),
            run,
        })
    }

    fn array(&self, r: &proto::ArrayRef) -> Result<SessionArray, SessionError> {
        let mut s = self.sessions();
        let session = s.get(r.session)?;
        session.arrays.get(&r.array).cloned().ok_or_else(|| {
            SessionError::Array(format!(
                "error: array {} does not exist in session {}: it was deleted, or donated to a call",
                r.array, r.session
            ))
        })
    }

    /// Array `r`, once it is ready: the stream of its worker when one
    /// shard is all of it (forwarded chunk by chunk, its checksum checked by
    /// the client), else assembled here from its tiles.
    pub async fn fetch_array(&self, r: &proto::ArrayRef) -> Result<Fetched, SessionError> {
        let array = self.array(r)?;
        wait_ready(&array, Instant::now() + self.inner.config.run_timeout)
            .await
            .map_err(|e| SessionError::Array(format!("error: array {}: {e}", r.array)))?;
        let info = array.info();
        let whole = pw_core::geometry::Region::full(&info.shape);
        if info.region(0) == whole {
            let addr = array
                .exe
                .prepared
                .addrs
                .get(&info.devices[0])
                .copied()
                .ok_or_else(|| SessionError::Run("error: its device has no worker".into()))?;
            let (_, mut client, _) = self.worker_handle(addr.worker).map_err(SessionError::Run)?;
            let stream = client
                .fetch(proto::FetchRequest {
                    run: r.session,
                    value: r.array as u32,
                    position: 0,
                })
                .await
                .map_err(|s| {
                    SessionError::Run(format!(
                        "error: fetching array {} from worker {}: {}",
                        r.array,
                        addr.worker,
                        s.message()
                    ))
                })?
                .into_inner();
            if let Ok(session) = self.sessions().get(r.session) {
                let bytes = info.shard_bytes();
                session.counters.bytes_from_workers += bytes;
                session.counters.bytes_to_client += bytes;
            }
            return Ok(Fetched::Forwarded(stream, info.shard_bytes()));
        }
        let (host, bytes) = self
            .fetch_value(
                r.session,
                r.array as usize,
                array.info(),
                &array.exe.prepared.addrs,
            )
            .await
            .map_err(|e| SessionError::Run(format!("error: fetching array {}: {e}", r.array)))?;
        if let Ok(session) = self.sessions().get(r.session) {
            let c = &mut session.counters;
            c.bytes_from_workers += bytes.values().sum::<u64>();
            c.bytes_to_client += host.bytes().len() as u64;
        }
        Ok(Fetched::Assembled(host))
    }

    /// Waits until every array of `refs` is ready; the first failed one is
    /// an error.
    pub async fn await_arrays(&self, refs: &proto::ArrayRefs) -> Result<(), SessionError> {
        let deadline = Instant::now() + self.inner.config.run_timeout;
        for &a in &refs.arrays {
            let array = self.array(&proto::ArrayRef {
                session: refs.session,
                array: a,
            })?;
            wait_ready(&array, deadline)
                .await
                .map_err(|e| SessionError::Run(format!("error: array {a}: {e}")))?;
        }
        Ok(())
    }

    /// Frees arrays of a session (unknown ones are ignored: deleting twice
    /// is harmless).
    pub async fn delete_arrays(&self, refs: &proto::ArrayRefs) -> Result<(), SessionError> {
        let gone: Vec<(u64, Vec<u32>)> = {
            let mut s = self.sessions();
            let session = s.get(refs.session)?;
            refs.arrays
                .iter()
                .filter_map(|a| session.arrays.remove(a).map(|x| (*a, x.workers())))
                .collect()
        };
        let mut by_worker: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for (a, workers) in gone {
            for w in workers {
                by_worker.entry(w).or_default().push(a);
            }
        }
        for (w, arrays) in by_worker {
            self.release_arrays(refs.session, &[w], "deleted by its client", &arrays)
                .await;
        }
        Ok(())
    }

    /// What session `id` has cost so far.
    pub fn session_stats(&self, id: u64) -> Result<proto::SessionCounters, SessionError> {
        let mut s = self.sessions();
        let session = s.get(id)?;
        Ok(proto::SessionCounters {
            arrays_live: session.arrays.len() as u64,
            ..session.counters
        })
    }

    /// Counts bytes a session's client sent.
    pub fn count_session_bytes(&self, id: u64, from_client: u64) {
        if let Ok(session) = self.sessions().get(id) {
            session.counters.bytes_from_client += from_client;
        }
    }

    /// The sessions and the line, for the status.
    pub fn session_view(&self) -> (Vec<SessionLine>, Vec<WaitingLine>) {
        let s = self.sessions();
        let mut sessions: Vec<SessionLine> = s
            .live
            .iter()
            .map(|(id, x)| SessionLine {
                session: *id,
                name: x.name.clone(),
                devices: x.devices.clone(),
                open_ms: x.opened.elapsed().as_millis() as u64,
                executables: x.executables.len(),
                arrays: x.arrays.len(),
                calls: x.counters.calls,
                calls_running: x.calls_running,
            })
            .collect();
        sessions.sort_by_key(|l| l.session);
        let waiting = s
            .slices
            .line()
            .enumerate()
            .filter_map(|(i, (id, want))| {
                s.waiting.get(&id).map(|w| WaitingLine {
                    session: id,
                    name: w.name.clone(),
                    position: i + 1,
                    devices: match want {
                        Want::All => 0,
                        Want::Count(n) => n,
                    },
                    waiting_ms: w.since.elapsed().as_millis() as u64,
                })
            })
            .collect();
        (sessions, waiting)
    }
}

/// Waits (until `deadline`) for an array's run; its failure is an error.
async fn wait_ready(array: &SessionArray, deadline: Instant) -> Result<(), SessionError> {
    let mut rx = array.state.subscribe();
    let waited =
        tokio::time::timeout_at(deadline.into(), rx.wait_for(|s| *s != ArrayState::Pending)).await;
    match waited {
        Err(_) => Err(SessionError::Run(
            "its call did not finish in time".to_owned(),
        )),
        Ok(Err(_)) => Err(SessionError::Run("its call was abandoned".to_owned())),
        Ok(Ok(state)) => match &*state {
            ArrayState::Failed(e) => Err(SessionError::Run(format!("it {}", why_unusable(e)))),
            _ => Ok(()),
        },
    }
}
