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
//! * **Lost workers**: the session's slice loses their devices and is
//!   topped up to its size again from free devices as soon as there are
//!   some (before the line is served). Each array keeps its *lineage*: the
//!   call that made it, with that call's arguments (other arrays' lineage,
//!   and host copies of what the client uploaded, within
//!   [`super::Config::lineage_budget`]). An array lost with a worker, or
//!   made by a call that lost one, is computed again on its next use (a
//!   fetch, a wait, a call taking it): the executables involved are lowered
//!   again onto the slice as it is now (their computations come from the
//!   caches), and the calls of its lineage run again, from the arrays that
//!   survived. An array without lineage (its uploads did not fit the
//!   budget, or it is more than [`MAX_LINEAGE`] calls deep) raises a
//!   data-loss error naming it; the session goes on either way.

use crate::{
    slices::{Ask, Lease, Want},
    summary::RunSummary,
    Controller, Prepared,
};
use pw_core::plan::ValueId;
use pw_exec::{cache::Key, HostArray};
use pw_wire::proto;
use std::{
    collections::{BTreeMap, BTreeSet, HashMap, VecDeque},
    future::Future,
    pin::Pin,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};
use tokio::sync::{mpsc, watch};
use tonic::Status;

/// How the failure of an array lost with its worker begins.
const DATA_LOSS: &str = "data loss";

/// The most calls a lineage chain keeps: the outputs of a deeper call
/// have none (recomputing them would replay that many calls).
pub const MAX_LINEAGE: usize = 1000;

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
/// that value, and output `.1` of the call `lineage.0` when it has one.
#[derive(Clone)]
struct SessionArray {
    exe: Arc<Executable>,
    value: ValueId,
    state: Arc<watch::Sender<ArrayState>>,
    lineage: Option<(Arc<Lineage>, usize)>,
}

/// A call that made arrays, as it can run again (see the module doc).
struct Lineage {
    /// The session's executable (lowered again when its devices are gone).
    executable: u64,
    arguments: Vec<Origin>,
    /// The arrays it made, by output.
    outputs: Vec<u64>,
    /// How many calls deep it is (1: from uploads and surviving arrays).
    depth: usize,
}

impl Drop for Lineage {
    /// Drops a long chain without recursing once per call.
    fn drop(&mut self) {
        fn parents(arguments: &mut Vec<Origin>) -> impl Iterator<Item = Arc<Lineage>> + '_ {
            arguments.drain(..).filter_map(|o| match o {
                Origin::Array {
                    made_by: Some((l, _)),
                    ..
                } => Some(l),
                _ => None,
            })
        }
        let mut stack: Vec<Arc<Lineage>> = parents(&mut self.arguments).collect();
        while let Some(l) = stack.pop() {
            if let Ok(mut l) = Arc::try_unwrap(l) {
                stack.extend(parents(&mut l.arguments));
            }
        }
    }
}

/// Where an argument of a call came from.
enum Origin {
    Host(KeptHost),
    /// Array `array` of the session, as made by its lineage when it has one.
    Array {
        array: u64,
        made_by: Option<(Arc<Lineage>, usize)>,
    },
}

/// A host array a call uploaded, kept for lineage: its bytes count
/// against the budget until it is dropped.
struct KeptHost {
    host: Arc<HostArray>,
    budget: Arc<AtomicU64>,
}

impl KeptHost {
    /// Keeps `host` if `budget` (bytes kept, shared) stays within `limit`.
    fn keep(host: &Arc<HostArray>, budget: &Arc<AtomicU64>, limit: u64) -> Option<KeptHost> {
        let n = host.bytes().len() as u64;
        budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| {
                kept.checked_add(n).filter(|&k| k <= limit)
            })
            .ok()?;
        Some(KeptHost {
            host: host.clone(),
            budget: budget.clone(),
        })
    }
}

impl Drop for KeptHost {
    fn drop(&mut self) {
        self.budget
            .fetch_sub(self.host.bytes().len() as u64, Ordering::Relaxed);
    }
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T, SessionError>> + Send + 'a>>;

impl SessionArray {
    /// Lost with a worker (and computable again if it has lineage).
    fn lost(&self) -> bool {
        matches!(&*self.state.borrow(), ArrayState::Failed(e) if e.starts_with(DATA_LOSS))
    }

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
    /// What it is built from, onto how many of the slice's devices (to
    /// lower it again when they are gone).
    build: Build,
    devices: usize,
}

/// What a session's executable is built from.
#[derive(Clone)]
pub enum Build {
    /// A pw program, lowered onto the slice (with a schedule policy).
    Program {
        text: String,
        schedule: Option<String>,
    },
    /// A plan already on the slice's devices (the IFRT proxy builds them).
    Plan(pw_core::plan::Plan),
}

/// One client's session.
struct Session {
    name: String,
    devices: Vec<i64>,
    /// How many devices it was granted (it is topped up to that many).
    size: usize,
    opened: Instant,
    lease: Lease,
    executables: HashMap<u64, Arc<Executable>>,
    arrays: HashMap<u64, SessionArray>,
    counters: proto::SessionCounters,
    next_id: u64,
    calls_running: u64,
    /// Its calls' timelines, from `opened` (when sessions are traced).
    trace: Vec<pw_exec::trace::Span>,
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
    slices: crate::slices::Slices,
    live: HashMap<u64, Session>,
    waiting: HashMap<u64, Waiter>,
    /// Why recently closed sessions closed (for clear errors), oldest
    /// first, at most [`CLOSED_KEPT`].
    closed: VecDeque<(u64, String)>,
    /// Bytes of host arrays kept for lineage, by every session.
    kept: Arc<AtomicU64>,
}

const CLOSED_KEPT: usize = 256;

impl Sessions {
    fn open(&mut self, id: u64, name: String, devices: Vec<i64>, lease: Duration) {
        let now = Instant::now();
        self.live.insert(
            id,
            Session {
                name,
                size: devices.len(),
                devices,
                opened: now,
                lease: Lease::new(lease, now),
                executables: HashMap::new(),
                arrays: HashMap::new(),
                counters: proto::SessionCounters::default(),
                next_id: 1,
                calls_running: 0,
                trace: Vec::new(),
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
        let (asked, mut wait_rx) = self.ask(id, want, &name);
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

    /// Session `id` (named `name`) asks the book for `want`: opened when
    /// granted, else in line, hearing its place on the receiver.
    fn ask(&self, id: u64, want: Want, name: &str) -> (Ask, mpsc::UnboundedReceiver<Wait>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let registered = self.devices_by_worker();
        let lease = self.inner.config.client_lease;
        let mut s = self.sessions();
        let asked = s.slices.ask(id, want, &registered);
        match &asked {
            Ask::Granted(d) => s.open(id, name.to_owned(), d.clone(), lease),
            Ask::Queued(_) => {
                s.waiting.insert(
                    id,
                    Waiter {
                        name: name.to_owned(),
                        since: Instant::now(),
                        tx,
                    },
                );
            }
            Ask::Refused(_) => {}
        }
        (asked, rx)
    }

    /// Opens a session for a front end that keeps it for as long as its
    /// own connection lasts (the IFRT proxy): `devices` of them (0: every
    /// device), waiting in line up to `timeout`. Returns its id and
    /// devices; [`Controller::end_session`] closes it.
    pub async fn open_session(
        &self,
        name: String,
        devices: usize,
        timeout: Duration,
    ) -> Result<(u64, Vec<i64>), SessionError> {
        let id = self
            .inner
            .next_run
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let want = match devices {
            0 => Want::All,
            n => Want::Count(n),
        };
        let (asked, mut rx) = self.ask(id, want, &name);
        let granted = match asked {
            Ask::Granted(d) => d,
            Ask::Refused(why) => {
                return Err(SessionError::Busy(format!(
                    "error: cannot open a session: {why}"
                )))
            }
            Ask::Queued(_) => {
                let deadline = tokio::time::Instant::now() + timeout;
                loop {
                    match tokio::time::timeout_at(deadline, rx.recv()).await {
                        Ok(Some(Wait::Granted(d))) => break d,
                        Ok(Some(Wait::Position(_))) => {}
                        Ok(None) | Err(_) => {
                            let holders = self.holders();
                            self.leave_line(id);
                            return Err(SessionError::Busy(format!(
                                "error: waited {timeout:?} for devices; they are held by {holders}"
                            )));
                        }
                    }
                }
            }
        };
        tracing::info!("session {id} ({name}) opened on devices {granted:?}");
        Ok((id, granted))
    }

    /// Closes a session [`Controller::open_session`] opened.
    pub async fn end_session(&self, id: u64, why: &str) {
        self.close_session(id, why).await;
    }

    /// Builds an executable of session `id` from a plan on its devices
    /// (see [`Build::Plan`]); returns its handle.
    pub async fn compile_plan(
        &self,
        id: u64,
        name: String,
        plan: pw_core::plan::Plan,
        donate: BTreeSet<usize>,
    ) -> Result<u64, SessionError> {
        let slice = self.sessions().get(id)?.devices.clone();
        let (exe, summary) = self
            .build(id, name, Build::Plan(plan), slice, donate, &|_| {})
            .await?;
        let (compiled, cached) = compiled_and_cached(&summary);
        let mut s = self.sessions();
        let session = s.get(id)?;
        let handle = session.next_id;
        session.next_id += 1;
        session.executables.insert(handle, Arc::new(exe));
        session.counters.executables_compiled += u64::from(compiled);
        session.counters.executables_from_cache += u64::from(cached);
        Ok(handle)
    }

    /// What `module` makes on `devices` devices (see
    /// [`crate::compile::Compiler::inspect`]).
    pub async fn inspect(
        &self,
        module: &[u8],
        devices: usize,
    ) -> Result<crate::compile::Inspected, SessionError> {
        self.inner
            .compiler
            .lock()
            .await
            .inspect(module, devices)
            .await
            .map_err(|e| SessionError::Program(format!("error: the program does not compile: {e}")))
    }

    /// The devices of session `id`: (device, worker, platform, kind).
    pub fn session_devices(
        &self,
        id: u64,
    ) -> Result<Vec<(i64, u32, String, String)>, SessionError> {
        let devices = self.sessions().get(id)?.devices.clone();
        let r = self.registry();
        Ok(devices
            .iter()
            .filter_map(|d| {
                r.workers.values().find_map(|w| {
                    w.devices
                        .iter()
                        .find(|x| x.0 == *d)
                        .map(|x| (*d, w.id, w.platform.clone(), x.2.clone()))
                })
            })
            .collect())
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
        let (held, trace) = {
            let mut s = self.sessions();
            let (held, trace) = match s.live.remove(&id) {
                Some(x) => (Some(x.devices), x.trace),
                None => (None, Vec::new()),
            };
            s.closed.push_back((id, why.to_owned()));
            if s.closed.len() > CLOSED_KEPT {
                s.closed.pop_front();
            }
            let granted = s.slices.release(id, &devices);
            s.grant(granted, lease);
            (held, trace)
        };
        let Some(held) = held else { return };
        if let Some(dir) = &self.inner.config.trace_sessions {
            write_trace(dir, id, &trace);
        }
        tracing::info!("session {id} closed: {why}");
        let workers: Vec<u32> = devices
            .iter()
            .filter(|(_, ds)| ds.iter().any(|d| held.contains(d)))
            .map(|(w, _)| *w)
            .collect();
        self.release(id, &workers, &format!("session {id} closed: {why}"))
            .await;
    }

    /// A worker is gone: its devices leave every slice (topped up from
    /// free ones if there are some), and arrays with a shard on it are lost.
    pub(crate) fn sessions_lost_worker(&self, worker: u32, devices: &[i64], why: &str) {
        let mut s = self.sessions();
        s.slices.forget_devices(devices);
        for (sid, session) in s.live.iter_mut() {
            session.devices.retain(|d| !devices.contains(d));
            for (id, a) in &session.arrays {
                if a.workers().contains(&worker) {
                    a.state.send_replace(ArrayState::Failed(format!(
                        "{DATA_LOSS}: array {id} of session {sid} had shards on a worker that is gone \
                         ({why})"
                    )));
                }
            }
        }
        drop(s);
        self.sessions_workers_changed();
    }

    /// Workers joined or left: sessions short of devices are topped up,
    /// then the line may move.
    pub(crate) fn sessions_workers_changed(&self) {
        let registered = self.devices_by_worker();
        let lease = self.inner.config.client_lease;
        let mut guard = self.sessions();
        let s = &mut *guard;
        for (sid, session) in s.live.iter_mut() {
            let short = session.size.saturating_sub(session.devices.len());
            if short > 0 {
                if let Some(more) = s.slices.top_up(*sid, short, &registered) {
                    tracing::info!("session {sid} topped up with devices {more:?}");
                    session.devices.extend(more);
                }
            }
        }
        let granted = s.slices.serve(&registered);
        s.grant(granted, lease);
    }

    /// The first `n` devices of session `id`'s slice, waiting (up to the
    /// capacity wait) for it to be topped up when it has fewer.
    async fn slice_of(&self, id: u64, n: usize, name: &str) -> Result<Vec<i64>, SessionError> {
        let wait = self.inner.config.capacity_wait;
        let deadline = Instant::now() + wait;
        loop {
            let have = {
                let mut s = self.sessions();
                let devices = &s.get(id)?.devices;
                if devices.len() >= n {
                    return Ok(devices[..n].to_vec());
                }
                devices.len()
            };
            if Instant::now() >= deadline {
                return Err(SessionError::Run(format!(
                    "error: {name} needs {n} devices; session {id} has {have} left (its other \
                     workers are gone, and no free devices came in {wait:?})"
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
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
        let schedule = (!request.schedule.is_empty()).then_some(request.schedule);
        let donate: BTreeSet<usize> = request.donate.iter().map(|&d| d as usize).collect();
        let build = Build::Program {
            text: request.text,
            schedule,
        };
        let (exe, summary) = self
            .build(id, request.name, build, slice, donate, progress)
            .await?;
        let plan = &exe.prepared.plan;
        let (compiled, cached) = compiled_and_cached(&summary);
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
        let mut s = self.sessions();
        let session = s.get(id)?;
        let handle = session.next_id;
        session.next_id += 1;
        session.executables.insert(handle, Arc::new(exe));
        let c = &mut session.counters;
        c.lowerings += 1;
        c.executables_compiled += u64::from(compiled);
        c.executables_from_cache += u64::from(cached);
        Ok(proto::CompiledProgram {
            executable: handle,
            ..reply
        })
    }

    /// Lowers a program onto devices `slice` of session `id` (or cuts a
    /// plan already on them), compiles its computations and ships them to
    /// the slice's workers.
    async fn build(
        &self,
        id: u64,
        name: String,
        build: Build,
        slice: Vec<i64>,
        donate: BTreeSet<usize>,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(Executable, RunSummary), SessionError> {
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
        let prepared = match &build {
            Build::Program { text, schedule } => {
                self.prepare(
                    &name,
                    text.clone(),
                    schedule.clone(),
                    topology,
                    &addrs,
                    &mut summary,
                )
                .await
            }
            Build::Plan(plan) => match plan.devices().iter().find(|d| !slice.contains(d)) {
                Some(d) => Err(format!(
                    "error: {name} uses device {d}, which session {id} does not hold"
                )),
                None => plan
                    .check()
                    .map_err(|e| format!("error: {name}: {e}"))
                    .and_then(|()| self.cut(plan.clone(), &addrs, &mut summary)),
            },
        }
        .map_err(SessionError::Program)?;
        let keys = self
            .executables(&prepared.parts, &mut summary, progress)
            .await
            .map_err(SessionError::Program)?;
        let inputs = prepared.plan.inputs.len();
        if let Some(bad) = donate.iter().find(|&&d| d >= inputs) {
            return Err(SessionError::Argument(format!(
                "error: donated argument #{bad}: the program takes {inputs} inputs"
            )));
        }
        let exe = Executable {
            name,
            prepared,
            keys,
            donate,
            build,
            devices: slice.len(),
        };
        Ok((exe, summary))
    }

    /// Executable `handle` of session `id`, lowered again onto the slice as
    /// it is now when some of its devices are gone.
    async fn current_executable(
        &self,
        id: u64,
        handle: u64,
    ) -> Result<Arc<Executable>, SessionError> {
        let exe = self
            .sessions()
            .get(id)?
            .executables
            .get(&handle)
            .cloned()
            .ok_or_else(|| {
                SessionError::Argument(format!("error: session {id} has no executable {handle}"))
            })?;
        let registered = self.registry().addresses();
        if exe
            .prepared
            .plan
            .devices()
            .iter()
            .all(|d| registered.contains_key(d))
        {
            return Ok(exe);
        }
        if let Build::Plan(_) = exe.build {
            return Err(SessionError::Run(format!(
                "error: {} was built for devices of which some are gone",
                exe.name
            )));
        }
        let slice = self.slice_of(id, exe.devices, &exe.name).await?;
        tracing::info!(
            "session {id}: {} lowered again onto devices {slice:?} (some of its devices are gone)",
            exe.name
        );
        let (fresh, _) = self
            .build(
                id,
                exe.name.clone(),
                exe.build.clone(),
                slice,
                exe.donate.clone(),
                &|_| {},
            )
            .await?;
        let fresh = Arc::new(fresh);
        let mut s = self.sessions();
        let session = s.get(id)?;
        session.executables.insert(handle, fresh.clone());
        session.counters.lowerings += 1;
        Ok(fresh)
    }

    /// Runs an executable of a session (see the module doc); returns once
    /// every worker has its part, with the output arrays.
    pub async fn call(
        &self,
        begin: proto::CallBegin,
        hosts: Vec<HostArray>,
    ) -> Result<proto::CallReply, SessionError> {
        let hosts = hosts.into_iter().map(Arc::new).collect();
        self.call_as(begin, hosts, None).await
    }

    /// [`Controller::call`], or the call of `restoring` run again: then
    /// its outputs take the place of the lost arrays it made, and the
    /// others are new arrays (that the caller deletes when done).
    async fn call_as(
        &self,
        begin: proto::CallBegin,
        hosts: Vec<Arc<HostArray>>,
        restoring: Option<&Arc<Lineage>>,
    ) -> Result<proto::CallReply, SessionError> {
        let id = begin.session;
        let t0 = Instant::now();
        let deadline = t0 + self.inner.config.run_timeout;
        // Lost arguments are computed again first, and the executable
        // lowered again when its devices are gone.
        for a in &begin.arguments {
            if let Some(proto::call_argument::Argument::Array(r)) = &a.argument {
                if r.session == id {
                    self.restore(id, r.array).await?;
                }
            }
        }
        let exe = self.current_executable(id, begin.executable).await?;
        let limit = self.inner.config.lineage_budget;
        // Everything about the arguments is settled under the lock, before
        // anything moves.
        let (bound, relayouts, mut uploads, outputs, released) = {
            let mut guard = self.sessions();
            let kept = guard.kept.clone();
            let session = guard.get(id)?;
            let mut released = Vec::new();
            for a in &begin.release {
                if let Some(array) = session.arrays.remove(a) {
                    released.push((*a, array.workers()));
                }
            }
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
            let mut uploads: Vec<(ValueId, Arc<HostArray>)> = Vec::new();
            let mut hosts = hosts.into_iter();
            let mut donated = Vec::new();
            // The outputs' lineage (None once an upload does not fit).
            let mut origins: Option<Vec<Origin>> = restoring
                .is_none()
                .then(|| Vec::with_capacity(plan.inputs.len()));
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
                        if let Some(o) = &mut origins {
                            o.push(Origin::Array {
                                array: r.array,
                                made_by: array.lineage.clone(),
                            });
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
                        if let Some(o) = &mut origins {
                            match KeptHost::keep(&host, &kept, limit) {
                                Some(k) => o.push(Origin::Host(k)),
                                None => origins = None,
                            }
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
            let lineage = match (restoring, origins) {
                (Some(l), _) => Some(l.clone()),
                (None, Some(arguments)) => {
                    let depth = 1 + arguments
                        .iter()
                        .filter_map(|o| match o {
                            Origin::Array {
                                made_by: Some((l, _)),
                                ..
                            } => Some(l.depth),
                            _ => None,
                        })
                        .max()
                        .unwrap_or(0);
                    let outputs = (0..plan.outputs.len() as u64)
                        .map(|k| session.next_id + k)
                        .collect();
                    (depth <= MAX_LINEAGE).then(|| {
                        Arc::new(Lineage {
                            executable: begin.executable,
                            arguments,
                            outputs,
                            depth,
                        })
                    })
                }
                (None, None) => None,
            };
            let mut outputs = Vec::with_capacity(plan.outputs.len());
            for (k, &value) in plan.outputs.iter().enumerate() {
                // Run again, an output takes the place of the array it
                // made if that is still lost.
                let handle = restoring
                    .and_then(|l| l.outputs.get(k).copied())
                    .filter(|h| session.arrays.get(h).is_some_and(SessionArray::lost))
                    .unwrap_or_else(|| {
                        session.next_id += 1;
                        session.next_id - 1
                    });
                let state = Arc::new(watch::Sender::new(ArrayState::Pending));
                session.arrays.insert(
                    handle,
                    SessionArray {
                        exe: exe.clone(),
                        value,
                        state: state.clone(),
                        lineage: lineage.clone().map(|l| (l, k)),
                    },
                );
                outputs.push((value, handle, state));
            }
            session.counters.calls += 1;
            session.calls_running += 1;
            (bound, relayouts, uploads, outputs, released)
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
                Ok::<_, SessionError>(Arc::new(host))
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
        let traced = self.inner.config.trace_sessions.is_some();
        let mut summary = RunSummary::default();
        let started = async {
            let refs: Vec<(usize, &HostArray)> =
                uploads.iter().map(|(v, h)| (*v, h.as_ref())).collect();
            let sent = self.upload(run, prepared, &refs).await?;
            self.dispatch(
                run,
                prepared,
                &exe.keys,
                traced,
                &bindings,
                &mut summary,
                t0,
            )
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
            // A call that lost a worker lost its outputs: they are
            // computed again on use.
            let outcome = controller
                .wait_parts(prepared, &mut events, deadline, None, t0, &mut summary)
                .await
                .map(|_| ())
                .map_err(|stop| match stop.lost.is_empty() {
                    true => stop.message,
                    false => format!(
                        "{DATA_LOSS}: the call making it lost a worker: {}",
                        stop.message
                    ),
                });
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
            if traced {
                controller.trace_call(id, t0, &prepared.plan, &mut summary);
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

    /// Computes array `array` of session `id` again from its lineage if it
    /// was lost (see the module doc); an error names what cannot be.
    async fn restore(&self, id: u64, array: u64) -> Result<(), SessionError> {
        let a = self.array(&proto::ArrayRef { session: id, array })?;
        if !a.lost() {
            return Ok(());
        }
        let Some((lineage, _)) = a.lineage.clone() else {
            let why = match &*a.state.borrow() {
                ArrayState::Failed(e) => e.clone(),
                _ => String::new(),
            };
            return Err(SessionError::Array(format!(
                "error: array {array} {}; it has no lineage to compute it again from (an upload \
                 of it did not fit the server's --lineage-budget-mb, or it is more than \
                 {MAX_LINEAGE} calls deep), so compute it again (the session goes on with its \
                 other devices and arrays)",
                why_unusable(&why)
            )));
        };
        tracing::info!("session {id}: array {array} was lost; computing it again");
        let made = self.recompute(id, lineage.clone()).await.map_err(|e| {
            let e = e.to_string();
            SessionError::Array(format!(
                "error: array {array} was lost with a worker and cannot be computed again: {}",
                e.strip_prefix("error: ").unwrap_or(&e)
            ))
        })?;
        self.delete_temporaries(id, &lineage, &made).await;
        if let Ok(session) = self.sessions().get(id) {
            session.counters.arrays_recomputed += 1;
        }
        Ok(())
    }

    /// Runs the call of `lineage` again, after the calls that made the
    /// lost arrays it takes (oldest first, each once); returns the arrays
    /// holding its outputs.
    fn recompute(&self, id: u64, lineage: Arc<Lineage>) -> Boxed<'_, Vec<u64>> {
        Box::pin(async move {
            let live = |array: u64| {
                self.sessions()
                    .get(id)
                    .is_ok_and(|s| s.arrays.get(&array).is_some_and(|a| !a.lost()))
            };
            // The calls to run again, in an order that runs each after the
            // calls it takes from (depth-first, without recursion).
            let mut order: Vec<Arc<Lineage>> = Vec::new();
            let mut stack = vec![(lineage.clone(), false)];
            while let Some((l, expanded)) = stack.pop() {
                if order.iter().any(|o| Arc::ptr_eq(o, &l)) {
                    continue;
                }
                if expanded {
                    order.push(l);
                    continue;
                }
                stack.push((l.clone(), true));
                for origin in &l.arguments {
                    if let Origin::Array {
                        array,
                        made_by: Some((parent, _)),
                    } = origin
                    {
                        if !live(*array) {
                            stack.push((parent.clone(), false));
                        }
                    }
                }
            }
            let mut made: Vec<(Arc<Lineage>, Vec<u64>)> = Vec::with_capacity(order.len());
            let mut outcome = Ok(());
            for l in order {
                match self.run_again(id, &l, &made, &live).await {
                    Ok(outputs) => made.push((l, outputs)),
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            }
            // What the last call made is the caller's.
            let last = made
                .pop()
                .filter(|(l, _)| Arc::ptr_eq(l, &lineage) && outcome.is_ok());
            for (l, outputs) in &made {
                self.delete_temporaries(id, l, outputs).await;
            }
            outcome?;
            last.map(|(_, outputs)| outputs).ok_or_else(|| {
                SessionError::Run("error: the call that made it did not run again".to_owned())
            })
        })
    }

    /// Runs the call of `lineage` again, taking lost arguments from the
    /// outputs of calls `made` again before it.
    async fn run_again(
        &self,
        id: u64,
        lineage: &Arc<Lineage>,
        made: &[(Arc<Lineage>, Vec<u64>)],
        live: &(dyn Fn(u64) -> bool + Send + Sync),
    ) -> Result<Vec<u64>, SessionError> {
        let mut arguments = Vec::with_capacity(lineage.arguments.len());
        let mut hosts = Vec::new();
        for (i, origin) in lineage.arguments.iter().enumerate() {
            let argument = match origin {
                Origin::Host(k) => {
                    hosts.push(k.host.clone());
                    proto::call_argument::Argument::Host(proto::ArrayType::of(
                        k.host.dtype(),
                        k.host.shape(),
                    ))
                }
                Origin::Array { array, made_by } => {
                    let again = made_by.as_ref().and_then(|(parent, k)| {
                        made.iter()
                            .find(|(l, _)| Arc::ptr_eq(l, parent))
                            .and_then(|(_, outputs)| outputs.get(*k).copied())
                    });
                    let array = match again {
                        _ if live(*array) => *array,
                        Some(a) => a,
                        None => {
                            return Err(SessionError::Array(format!(
                                "error: array {array} (argument #{i} of a call that made it) \
                                 is gone and has no lineage"
                            )))
                        }
                    };
                    proto::call_argument::Argument::Array(proto::ArrayRef { session: id, array })
                }
            };
            arguments.push(proto::CallArgument {
                argument: Some(argument),
            });
        }
        let begin = proto::CallBegin {
            session: id,
            executable: lineage.executable,
            arguments,
            ..Default::default()
        };
        let outputs = self.call_as(begin, hosts, Some(lineage)).await?.outputs;
        if let Ok(session) = self.sessions().get(id) {
            session.counters.calls_replayed += 1;
        }
        Ok(outputs)
    }

    /// Deletes the arrays a call run again made that took no lost array's
    /// place.
    async fn delete_temporaries(&self, id: u64, lineage: &Lineage, made: &[u64]) {
        let arrays = made
            .iter()
            .copied()
            .filter(|a| !lineage.outputs.contains(a))
            .collect();
        let _ = self
            .delete_arrays(&proto::ArrayRefs {
                session: id,
                arrays,
            })
            .await;
    }

    /// Array `r` once it is ready, computed again (from its lineage) if it
    /// was lost before or while it was waited for; `kind` makes the error
    /// of a failed wait.
    async fn ready(
        &self,
        r: &proto::ArrayRef,
        kind: fn(String) -> SessionError,
    ) -> Result<SessionArray, SessionError> {
        let deadline = Instant::now() + self.inner.config.run_timeout;
        let mut tries = self.inner.config.max_recoveries;
        loop {
            self.restore(r.session, r.array).await?;
            let array = self.array(r)?;
            match wait_ready(&array, deadline).await {
                Ok(()) => return Ok(array),
                Err(e) => {
                    let again = self.array(r).is_ok_and(|a| a.lost() && a.lineage.is_some());
                    if !again || tries == 0 {
                        return Err(kind(format!("error: array {}: {e}", r.array)));
                    }
                    tries -= 1;
                }
            }
        }
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
        let array = self.ready(r, SessionError::Array).await?;
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
        for &array in &refs.arrays {
            let r = proto::ArrayRef {
                session: refs.session,
                array,
            };
            self.ready(&r, SessionError::Run).await?;
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

/// The most spans a session's trace keeps (later calls are not traced).
const MAX_TRACE_SPANS: usize = 1 << 20;

impl Controller {
    /// Adds a finished call's timeline (it started at `t0`) to session
    /// `id`'s trace.
    fn trace_call(
        &self,
        id: u64,
        t0: Instant,
        plan: &pw_core::plan::Plan,
        summary: &mut RunSummary,
    ) {
        summary.steps = plan
            .steps
            .iter()
            .map(|s| crate::summary::StepLine {
                label: s.label.clone(),
                kind: s.kind.name().to_owned(),
                devices: s.devices.clone(),
            })
            .collect();
        let spans = summary.spans();
        if let Ok(session) = self.sessions().get(id) {
            let shift = t0.saturating_duration_since(session.opened);
            if session.trace.len() + spans.len() <= MAX_TRACE_SPANS {
                session.trace.extend(spans.into_iter().map(|mut s| {
                    s.start += shift;
                    s.end += shift;
                    s
                }));
            }
        }
    }
}

/// Writes session `id`'s trace to `dir/session-ID.json` (whole or not at
/// all: through a temporary file).
fn write_trace(dir: &std::path::Path, id: u64, spans: &[pw_exec::trace::Span]) {
    use pw_exec::trace::{chrome_json, Track};
    let json = chrome_json(spans, &|track| match track {
        Track::Host(w) => format!("worker {w} host (enqueue)"),
        Track::Device(d) => format!("device {d}"),
        Track::Network => "network (worker to worker)".into(),
        Track::Compiler => "compiler".into(),
        Track::Recovery => "recoveries".into(),
    });
    let path = dir.join(format!("session-{id}.json"));
    let tmp = dir.join(format!(".session-{id}.json.tmp"));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, json.to_string()))
        .and_then(|()| std::fs::rename(&tmp, &path));
    match written {
        Ok(()) => tracing::info!("session {id}: trace written to {}", path.display()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            tracing::warn!(
                "session {id}: cannot write its trace to {}: {e}",
                path.display()
            );
        }
    }
}

/// How many of a build's executables were compiled, and how many came
/// from a cache.
fn compiled_and_cached(summary: &RunSummary) -> (u32, u32) {
    use crate::compile::Source;
    let count = |f: fn(&Source) -> bool| {
        summary
            .executables
            .iter()
            .filter(|e| e.source.as_ref().is_some_and(f))
            .count() as u32
    };
    (
        count(|s| matches!(s, Source::Controller | Source::Worker(_))),
        count(|s| matches!(s, Source::DiskCache | Source::Memory)),
    )
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
