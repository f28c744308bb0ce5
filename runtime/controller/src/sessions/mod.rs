//! Sessions: a client's slice of the devices, and the arrays and
//! executables it made there.
//!
//! * **Opening** ([`mod@line`]): the client asks for a number of devices; the
//!   resource manager ([`crate::resource_manager`]) grants a slice at once or
//!   puts the client in line (it hears its place), strictly first come,
//!   first served. The session lives as long as the client's stream and its
//!   lease: a client that closes, vanishes or stops sending heartbeats loses
//!   the session, and its slice goes to the next in line.
//! * **Compiling** ([`executables`]): the program is lowered onto the slice
//!   once and each of its computations compiled once (the controller's
//!   memory and disk caches apply) and shipped to the workers of the slice.
//!   The session keeps the plan and each worker's part: a call lowers and
//!   compiles nothing.
//! * **Calling** ([`call`]): arguments are arrays of the session or host
//!   arrays sent with the call. Arrays laid out as the executable wants stay
//!   on their devices (the workers take them from the session's store);
//!   others are laid out anew device to device first, by a small plan of
//!   the relayout planner ([`pw_core::plans::relayout`]). The outputs become
//!   arrays of the session as soon as the run is on its way: a later call
//!   may take them while the run still executes, since every worker
//!   enqueues parts in the order they were sent. An array is ready (or
//!   failed, with the run's error) when its run is done.
//! * **Owned**: a session's id is random, and it is granted with a key of
//!   its own (128 random bits) that every request naming the session must
//!   present ([`Sessions::authorize`]): another client holding the server's
//!   token still cannot use, read or delete it. Its bytes in flight through
//!   the server (uploads, fetches, IFRT host buffers), the
//!   device bytes its arrays hold and their count are bounded
//!   ([`crate::Limits`]).
//! * **Arrays** ([`arrays`]) are named by (session, id); another session's
//!   array is refused. Deleting one, donating it to a call, or closing the
//!   session frees its buffers on the workers.
//! * **Lost workers** ([`lineage`]): the session's slice loses their
//!   devices and is topped up to its size again from free devices as soon
//!   as there are some (before the line is served). Each array keeps its
//!   *lineage*: the call that made it, with that call's arguments (other
//!   arrays' lineage, and host copies of what the client uploaded, within
//!   [`crate::Config::lineage_budget`]). An array lost with a worker, or made
//!   by a call that lost one, is computed again on its next use (a fetch, a
//!   wait, a call taking it): the executables involved are lowered again
//!   onto the slice as it is now (their computations come from the caches),
//!   and the calls of its lineage run again, from the arrays that survived.
//!   An array without lineage (its uploads did not fit the budget, or it is
//!   more than [`lineage::MAX_LINEAGE`] calls deep) raises a data-loss error
//!   naming it; the session goes on either way. With a journal the
//!   lineage outlives the server too: its log of calls keeps it, and a
//!   session taken back after a restart computes again what was lost
//!   meanwhile ([`reattach`]).
//!
//! [`Store`] is the state; [`Sessions`] (from [`Controller::sessions`]) the
//! operations, which use the rest of the controller to run things.

pub mod arrays;
pub mod call;
pub mod checkpoints;
mod direct;
pub mod executables;
pub mod line;
pub mod lineage;
pub mod link;
pub mod pause;
pub mod reattach;
pub mod resize;
pub mod stream;
pub(crate) mod trace;

use crate::{
    error::{Error, Result, DATA_LOSS},
    resource_manager::{Lease, Slices, Want},
    Controller,
};
use arrays::{ArrayState, SessionArray};
use executables::Executable;
use pw_wire::proto;
use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    sync::{atomic::AtomicU64, Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};
use tokio::sync::mpsc;

/// How many recently closed sessions are remembered (for clear errors).
const CLOSED_KEPT: usize = 256;

/// One client's session.
pub(crate) struct Session {
    pub name: String,
    /// What a request must present to use it (see the module doc).
    pub key: String,
    /// Bytes of its transfers through the server in flight.
    pub in_flight: u64,
    /// When its client last asked something of it.
    pub used: Instant,
    pub devices: Vec<i64>,
    /// How many devices it was granted (it is topped up to that many).
    pub size: usize,
    pub opened: Instant,
    pub lease: Lease,
    pub executables: HashMap<u64, Arc<Executable>>,
    /// Executables that lay an array out anew, by source and target.
    pub relayouts: HashMap<String, Arc<Executable>>,
    pub arrays: HashMap<u64, SessionArray>,
    pub counters: proto::SessionCounters,
    pub next_id: u64,
    pub calls_running: u64,
    /// Told when one of its calls ends (a stream waiting for room).
    pub call_ended: Arc<tokio::sync::Notify>,
    /// Outputs of calls refused before they made them, and why
    /// ([`Session::refuse`]), oldest first.
    pub refused: HashMap<u64, (crate::Kind, String)>,
    pub refused_order: VecDeque<u64>,
    /// Its calls' timelines, from `opened` (when sessions are traced).
    pub trace: Vec<pw_exec::trace::Span>,
    /// Set while it pauses, is paused or resumes ([`pause`]).
    pub paused: Option<pause::Paused>,
    /// Set while it waits for its client to take it back after a restart
    /// ([`reattach`]).
    pub restored: Option<reattach::Restored>,
}

impl Session {
    /// A session named `name` on `devices`, with a fresh key.
    fn new(name: String, devices: Vec<i64>, lease: Lease) -> Session {
        let now = Instant::now();
        Session {
            name,
            key: pw_wire::auth::random_key(),
            in_flight: 0,
            used: now,
            size: devices.len(),
            devices,
            opened: now,
            lease,
            executables: HashMap::new(),
            relayouts: HashMap::new(),
            arrays: HashMap::new(),
            counters: proto::SessionCounters::default(),
            next_id: 1,
            calls_running: 0,
            call_ended: Arc::default(),
            refused: HashMap::new(),
            refused_order: VecDeque::new(),
            trace: Vec::new(),
            paused: None,
            restored: None,
        }
    }

    /// A fresh handle for an array or executable of the session.
    pub fn mint(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// One of its calls ended.
    pub fn call_done(&mut self) {
        self.calls_running = self.calls_running.saturating_sub(1);
        self.call_ended.notify_waiters();
    }
}

/// What a client in line hears.
pub(crate) enum Wait {
    Position(usize),
    Granted(Vec<i64>),
}

pub(crate) struct Waiter {
    name: String,
    since: Instant,
    tx: mpsc::UnboundedSender<Wait>,
    /// The key of the session it will be.
    key: String,
    /// From the journal, its client not back yet ([`reattach`]): granted,
    /// its session waits to be taken back.
    detached: bool,
}

/// Every session and the line for devices.
pub struct Store {
    state: Mutex<State>,
    client_lease: Duration,
}

#[derive(Default)]
pub(crate) struct State {
    pub slices: Slices,
    pub live: HashMap<u64, Session>,
    waiting: HashMap<u64, Waiter>,
    /// Why recently closed sessions closed, oldest first.
    closed: VecDeque<(u64, String)>,
    /// Bytes of host arrays kept for lineage, by every session.
    pub kept: Arc<AtomicU64>,
}

impl Store {
    pub(crate) fn new(client_lease: Duration) -> Store {
        Store {
            state: Mutex::default(),
            client_lease,
        }
    }
}

impl State {
    fn open(&mut self, id: u64, name: String, devices: Vec<i64>, lease: Duration) -> &mut Session {
        let session = Session::new(name, devices, Lease::new(lease, Instant::now()));
        self.live.entry(id).or_insert(session)
    }

    /// Gives `devices` to waiter `w`, session `id`: a new session, or a
    /// paused one that resumes on them.
    fn seat(&mut self, id: u64, w: Waiter, devices: Vec<i64>, lease: Duration) {
        match self.live.get_mut(&id) {
            Some(session) => {
                session.size = devices.len();
                session.devices = devices;
            }
            None => {
                let session = self.open(id, w.name, devices, lease);
                session.key = w.key;
                if w.detached {
                    session.restored = Some(reattach::Restored::granted());
                }
            }
        }
    }

    /// Grants what the book handed out, and tells the rest of the line
    /// their new places.
    fn grant(&mut self, granted: Vec<(u64, Vec<i64>)>, lease: Duration) {
        for (id, devices) in granted {
            if let Some(w) = self.waiting.remove(&id) {
                let tx = w.tx.clone();
                self.seat(id, w, devices.clone(), lease);
                let _ = tx.send(Wait::Granted(devices));
            }
        }
        for (id, w) in &self.waiting {
            if let Some(p) = self.slices.position(*id) {
                let _ = w.tx.send(Wait::Position(p));
            }
        }
    }

    /// Session `id`, or why there is none.
    pub fn get(&mut self, id: u64) -> Result<&mut Session> {
        if let Some(s) = self.live.get_mut(&id) {
            return Ok(s);
        }
        Err(match self.closed.iter().find(|(c, _)| *c == id) {
            Some((_, why)) => Error::SessionClosed {
                session: id,
                why: why.clone(),
            },
            None => Error::NoSession { session: id },
        })
    }

    /// Session `id` when it is not paused (`doing`: what the refused
    /// request was doing).
    pub fn active(&mut self, id: u64, doing: &'static str) -> Result<&mut Session> {
        let session = self.get(id)?;
        if session.restored.is_some() {
            return Err(Error::NotReattachable {
                session: id,
                why: format!(
                    "{doing} must wait until its client takes it back after the server's restart"
                ),
            });
        }
        match &session.paused {
            Some(p) => Err(Error::Paused {
                session: id,
                phase: p.phase.name(),
                doing,
            }),
            None => Ok(session),
        }
    }

    /// Session `id`, if `key` is its key.
    pub fn owned(&mut self, id: u64, key: Option<&str>) -> Result<&mut Session> {
        let session = self.get(id)?;
        match key {
            Some(k) if pw_wire::auth::same(k.as_bytes(), session.key.as_bytes()) => {
                session.used = Instant::now();
                Ok(session)
            }
            _ => Err(Error::NotYours {
                session: id,
                key_header: pw_wire::net::SESSION_KEY,
            }),
        }
    }

    /// Array `array` of session `id`.
    pub fn array(&mut self, id: u64, array: u64) -> Result<SessionArray> {
        let session = self.get(id)?;
        if let Some(a) = session.arrays.get(&array) {
            return Ok(a.clone());
        }
        Err(session.refusal(array).unwrap_or(Error::NoArray {
            index: None,
            array,
            session: id,
        }))
    }
}

/// Bytes of a session's transfer budget, given back when dropped.
pub struct Transfer {
    c: Controller,
    id: u64,
    bytes: u64,
}

impl Drop for Transfer {
    fn drop(&mut self) {
        let bytes = self.bytes;
        self.c
            .sessions()
            .update(self.id, |s| s.in_flight = s.in_flight.saturating_sub(bytes));
    }
}

/// What `Sessions::view` shows of one session.
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
    /// Bytes its arrays hold on devices, every shard counted.
    pub device_bytes: u64,
    /// Bytes of its transfers through the server in flight.
    pub in_flight_bytes: u64,
    /// `open`, `pausing`, `paused`, `resuming`, `resizing`, or `restored`
    /// (from the journal, waiting for its client after a restart).
    pub state: &'static str,
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
    /// The sessions (see the module doc).
    pub fn sessions(&self) -> Sessions<'_> {
        Sessions { c: self }
    }
}

/// The operations on sessions (see the module doc).
#[derive(Clone, Copy)]
pub struct Sessions<'a> {
    c: &'a Controller,
}

impl<'a> Sessions<'a> {
    pub(crate) fn lock(&self) -> MutexGuard<'a, State> {
        self.c
            .inner
            .sessions
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn client_lease(&self) -> Duration {
        self.c.inner.sessions.client_lease
    }

    /// Runs `f` on session `id` if it is still open (counters of calls
    /// that finish after their session closed go nowhere).
    pub(crate) fn update(&self, id: u64, f: impl FnOnce(&mut Session)) {
        if let Ok(session) = self.lock().get(id) {
            f(session);
        }
    }

    /// Whether the client presenting `key` owns session `id` (see the
    /// module doc); every request that names a session asks this first.
    pub fn authorize(&self, id: u64, key: Option<&str>) -> Result<()> {
        self.lock().owned(id, key).map(|_| ())
    }

    /// Notes that session `id`'s client asked something of it (a front end
    /// that keeps its own connection, such as the IFRT proxy, says so on
    /// every request).
    pub fn touch(&self, id: u64) {
        self.update(id, |s| s.used = Instant::now());
    }

    /// Takes `bytes` of session `id`'s transfer budget (bytes through the
    /// server, either way) for as long as the returned guard lives, or
    /// refuses them (over the request limit, or over what the session may
    /// have in flight).
    pub fn start_transfer(&self, id: u64, bytes: u64) -> Result<Transfer> {
        let limits = &self.c.inner.config.limits;
        if bytes > limits.request_bytes {
            return Err(Error::OverLimit {
                what: format!("a transfer of session {id} (bytes)"),
                asked: bytes,
                limit: limits.request_bytes,
                flag: "--max-request-mb",
            });
        }
        let mut s = self.lock();
        let session = s.get(id)?;
        let total = session.in_flight.saturating_add(bytes);
        if total > limits.session_transfer_bytes {
            return Err(Error::OverLimit {
                what: format!("session {id}'s transfers in flight (bytes)"),
                asked: total,
                limit: limits.session_transfer_bytes,
                flag: "--session-transfer-mb",
            });
        }
        session.in_flight = total;
        Ok(Transfer {
            c: self.c.clone(),
            id,
            bytes,
        })
    }

    /// The devices of session `id`: (device, worker, platform, kind).
    pub fn devices(&self, id: u64) -> Result<Vec<(i64, u32, String, String)>> {
        let devices = self.lock().get(id)?.devices.clone();
        Ok(self.c.inner.workers.describe_devices(&devices))
    }

    /// What session `id` has cost so far.
    pub fn stats(&self, id: u64) -> Result<proto::SessionCounters> {
        let mut s = self.lock();
        let session = s.get(id)?;
        Ok(proto::SessionCounters {
            arrays_live: session.arrays.len() as u64,
            calls_running: session.calls_running,
            ..session.counters
        })
    }

    /// Counts bytes a session's client sent.
    pub fn count_bytes(&self, id: u64, from_client: u64) {
        self.update(id, |s| s.counters.bytes_from_client += from_client);
    }

    /// A worker is gone: its devices leave every slice (topped up from
    /// free ones if there are some), and arrays with a shard on it are lost.
    pub(crate) fn lost_worker(&self, worker: u32, devices: &[i64], why: &str) {
        let mut s = self.lock();
        s.slices.forget_devices(devices);
        let mut changed = Vec::new();
        for (sid, session) in s.live.iter_mut() {
            let before = session.devices.len();
            session.devices.retain(|d| !devices.contains(d));
            if session.devices.len() != before && session.restored.is_none() {
                changed.push((*sid, session.record()));
            }
            if session.paused.as_ref().is_some_and(|p| p.off_devices()) {
                // Its arrays are in its pause's checkpoint.
                continue;
            }
            for (id, a) in &session.arrays {
                if a.workers().contains(&worker) {
                    a.state.send_replace(ArrayState::Failed(format!(
                        "{DATA_LOSS}: array {id} of session {sid} had shards on a worker that is \
                         gone ({why})"
                    )));
                }
            }
        }
        drop(s);
        self.journal_all(changed);
        self.workers_changed();
    }

    /// Journals sessions whose slices changed beside any request (a worker
    /// lost, a slice topped up); a failure is logged, as nobody asked.
    fn journal_all(&self, changed: Vec<(u64, proto::JournalSession)>) {
        for (id, record) in changed {
            if let Err(e) = self.c.journal(|j| j.session(id, &record)) {
                tracing::error!("session {id}: its new slice is not journaled: {e}");
            }
        }
    }

    /// Workers joined or left: sessions short of devices are topped up,
    /// then the line may move.
    pub(crate) fn workers_changed(&self) {
        let registered = self.c.inner.workers.devices_by_worker();
        let lease = self.client_lease();
        let mut guard = self.lock();
        let s = &mut *guard;
        let mut changed = Vec::new();
        for (sid, session) in s.live.iter_mut() {
            let short = session.size.saturating_sub(session.devices.len());
            if short > 0 {
                if let Some(more) = s.slices.top_up(*sid, short, &registered) {
                    tracing::info!("session {sid} topped up with devices {more:?}");
                    session.devices.extend(more);
                    changed.push((*sid, session.record()));
                }
            }
        }
        let granted = s.slices.serve(&registered);
        s.grant(granted, lease);
        drop(guard);
        self.journal_all(changed);
    }

    /// The sessions and the line, for the status.
    pub fn view(&self) -> (Vec<SessionLine>, Vec<WaitingLine>) {
        let s = self.lock();
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
                device_bytes: match &x.paused {
                    Some(p) if p.off_devices() => 0,
                    _ => x.arrays.values().map(|a| a.info().device_bytes()).sum(),
                },
                in_flight_bytes: x.in_flight,
                state: match (&x.restored, &x.paused) {
                    (Some(_), _) => "restored",
                    (None, Some(p)) => p.phase.name(),
                    (None, None) => "open",
                },
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

    /// Who holds devices now, for messages.
    fn holders(&self) -> String {
        let s = self.lock();
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

    /// Every registered device, by worker.
    fn registered(&self) -> BTreeMap<u32, Vec<i64>> {
        self.c.inner.workers.devices_by_worker()
    }
}
