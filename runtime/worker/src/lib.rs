//! pw-worker: the per-host process that holds one PJRT client.
//!
//! A worker registers its devices with the controller ([`serve`]: the
//! `Registry.Attach` session, with heartbeats), then does what the
//! controller says: on that session, in order, the parts of runs (every
//! step in one message, enqueued at once by the [`Executor`]), releases and
//! reads of small shards ([`commands`]); through its own `Worker` service
//! ([`service::WorkerService`]), loads of serialized executables, input
//! shards and fetches of output shards. It sends and receives shard pieces
//! directly to and from its peers ([`pw_dataplane`]).
//! Buffers live in an [`ObjectStore`] keyed by (run, value, shard); a run's
//! are dropped when the controller releases it.
//!
//! When the controller session ends (the controller died or dropped the
//! worker), the parts already taken finish, every run is dropped, the
//! sessions' arrays are kept, and the worker registers again, for at most
//! `connect_timeout` (then it exits with an error, for a supervisor such as
//! Kubernetes to restart it), listing the arrays it kept: a controller
//! restarted from its journal takes back those of its sessions and
//! releases the rest.
//!
//! The worker links no MLIR, no controller and no proxy: it receives
//! compiled executables, and depends on the binding, the executor, the wire
//! and the data plane only.

pub mod activity;
pub mod bulk;
pub mod checkpoint;
pub mod commands;
pub mod faults;
pub mod metrics;
pub mod pool;
pub mod queues;
pub mod service;
pub mod store;

use faults::Faults;
use pw_dataplane::{Damage, PeerAddress, Receiver, Sender, Transport};
use pw_exec::sidecar::Sidecar;
use pw_exec::{
    cache::{plugin_identity, Executables},
    Completions, Executor,
};
use pw_pjrt::{Client, ClientOptions, Device, Plugin};
use pw_wire::{net, proto, MAX_MESSAGE_BYTES};
use std::{
    collections::{HashMap, VecDeque},
    path::PathBuf,
    sync::{
        atomic::{AtomicU32, AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};
use store::ObjectStore;
use tokio::sync::mpsc;

/// How long a released owner is remembered (so that a late request of it
/// is refused, not taken for a new one).
const FORGET_AFTER: Duration = Duration::from_secs(60);

/// How a worker is started (the flags of `pw-worker`).
#[derive(Debug, Clone)]
pub struct Config {
    /// The controller's address (host:port).
    pub controller: String,
    /// Where this worker's service listens (port 0: any free port).
    pub listen: String,
    /// The address others reach the service at (default: the bound one).
    pub advertise: Option<String>,
    /// The PJRT plugin (default: [`Plugin::discover`]).
    pub plugin: Option<PathBuf>,
    /// Devices to ask the plugin for (CPU plugins).
    pub devices: Option<usize>,
    /// The island to join (default: one of its own).
    pub island: Option<String>,
    /// How long to keep trying to reach the controller.
    pub connect_timeout: Duration,
    /// The TCP port peers send pieces to (0: any free port), on the
    /// service's host.
    pub data_port: u16,
    /// How this worker sends pieces to its peers (it receives both ways).
    pub transport: Transport,
    /// Most bytes held for pieces that arrive before their steps.
    pub early_limit: u64,
    pub faults: Faults,
    /// Where to serve Prometheus metrics ([`metrics`]), if anywhere.
    pub metrics: Option<std::net::SocketAddr>,
    /// How to start sessions' sidecars (None: colocated Python calls are
    /// refused).
    pub sidecar: Option<pw_exec::sidecar::Config>,
}

/// Counters a worker reports (see `WorkerCounters` in the protocol).
#[derive(Debug, Default)]
pub struct Counters {
    pub runs_active: AtomicU64,
    pub executables_compiled: AtomicU64,
    pub bytes_from_controller: AtomicU64,
    pub bytes_to_controller: AtomicU64,
    pub bytes_to_clients: AtomicU64,
    pub bytes_from_clients: AtomicU64,
    pub parts_done: AtomicU64,
    pub parts_failed: AtomicU64,
}

/// Everything a worker holds; shared by its service and its session.
pub struct State {
    pub client: Client,
    pub executor: Executor,
    pub executables: Mutex<Executables>,
    pub store: ObjectStore,
    pub receiver: Arc<Receiver>,
    pub sender: Sender,
    /// The id the controller gave (`u32::MAX` before registration).
    id: AtomicU32,
    /// Events for the controller session (heartbeats; reports when there
    /// is no report link).
    events: mpsc::UnboundedSender<proto::WorkerEvent>,
    /// The report link the controller opened ([`pw_wire::link`]), for the
    /// registration it names.
    reports: Mutex<Option<(u32, Box<dyn pw_wire::link::Duplex>)>>,
    pub counters: Counters,
    pub faults: Faults,
    /// Per active run: the address of each peer worker.
    pub runs: Mutex<HashMap<u64, HashMap<u32, PeerAddress>>>,
    /// Per active run: what completes with each step of its part, and how
    /// many steps from the first were complete when last looked at.
    pub progress: Mutex<HashMap<u64, (Option<Completions>, usize)>>,
    /// Parts kept for the sessions that run them again.
    pub kept: commands::Kept,
    /// Each session's sidecar, started at its first colocated Python call.
    pub sidecars: Sidecars,
    /// Shards clients may take directly ([`bulk`]).
    pub tickets: bulk::Tickets,
    /// Threads that wait for parts to finish.
    pub pool: Arc<pool::Pool>,
    /// The runtime of the worker's tasks (for threads that start some).
    pub runtime: tokio::runtime::Handle,
    /// How long a send waits for its piece, and a fetch for its shard.
    pub patience: Duration,
    /// The active parts, for `Worker.Queues` (the status page).
    pub queues: Arc<queues::Tracker>,
    /// What each device did lately (timelines, metrics).
    pub activity: activity::Activity,
    /// Owners released, oldest first, with when each may be forgotten.
    released: Mutex<VecDeque<(Instant, u64)>>,
}

impl State {
    /// The id the controller gave this worker, once registered.
    pub fn id(&self) -> Option<u32> {
        let id = self.id.load(Ordering::SeqCst);
        (id != u32::MAX).then_some(id)
    }

    /// This worker's device of local id `local`.
    pub fn device(&self, local: u32) -> Result<Device, String> {
        self.client
            .addressable_devices()
            .into_iter()
            .find(|d| d.id() as u32 == local)
            .ok_or_else(|| format!("this worker has no device {local}"))
    }

    /// Tells the controller `event`: on the report link when it has one
    /// for this registration, else on the session (dropped while not
    /// registered).
    pub fn report(&self, event: proto::worker_event::Event) {
        let event = proto::WorkerEvent { event: Some(event) };
        let mut link = self.reports.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((worker, stream)) = link.as_mut() {
            if Some(*worker) == self.id() {
                if pw_wire::link::write_message(stream, &event).is_ok() {
                    return;
                }
                tracing::warn!("the report link failed; reporting on the session");
                *link = None;
            }
        }
        drop(link);
        let _ = self.events.send(event);
    }

    /// A link the controller opened to the data port: its first message
    /// says which registration it belongs to and which way it goes. The
    /// report link is kept for [`State::report`]; the command link is read
    /// here, each command done in order ([`commands::run`]), until it
    /// closes.
    fn controller_link(self: &Arc<Self>, mut stream: Box<dyn pw_wire::link::Duplex>) {
        use proto::controller_event::Event;
        let limit = pw_wire::MAX_MESSAGE_BYTES;
        let open = match pw_wire::link::read_message::<proto::ControllerEvent>(&mut stream, limit) {
            Ok(Some(proto::ControllerEvent {
                event: Some(Event::Link(open)),
            })) => open,
            other => {
                tracing::warn!(?other, "a controller link that does not say what it is");
                return;
            }
        };
        // The registration it belongs to may be a moment behind on the
        // session.
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.id() != Some(open.worker) {
            if Instant::now() > deadline {
                tracing::warn!(
                    worker = open.worker,
                    "a controller link for a registration this worker does not have"
                );
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if open.reports {
            *self.reports.lock().unwrap_or_else(|e| e.into_inner()) = Some((open.worker, stream));
            return;
        }
        loop {
            match pw_wire::link::read_message::<proto::ControllerEvent>(&mut stream, limit) {
                Ok(Some(proto::ControllerEvent { event: Some(e) })) => {
                    commands::run(self, e, open.worker)
                }
                Ok(Some(_)) => {}
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("the command link failed: {e}");
                    return;
                }
            }
        }
    }

    pub fn snapshot(&self) -> proto::WorkerCounters {
        let c = &self.counters;
        let live = self.client.live();
        let executables = self.executables.lock().map(|e| e.len()).unwrap_or_default();
        proto::WorkerCounters {
            live_buffers: live.buffers as u64,
            live_transfers: live.transfers as u64,
            runs_active: c.runs_active.load(Ordering::Relaxed),
            executables_loaded: executables as u64,
            executables_compiled: c.executables_compiled.load(Ordering::Relaxed),
            bytes_to_peers: self.sender.counters.bytes.load(Ordering::Relaxed),
            bytes_from_peers: self.receiver.counters.bytes.load(Ordering::Relaxed),
            pieces_to_peers: self.sender.counters.pieces.load(Ordering::Relaxed),
            pieces_from_peers: self.receiver.counters.pieces.load(Ordering::Relaxed),
            bytes_from_controller: c.bytes_from_controller.load(Ordering::Relaxed),
            bytes_to_controller: c.bytes_to_controller.load(Ordering::Relaxed),
            bytes_to_clients: c.bytes_to_clients.load(Ordering::Relaxed),
            bytes_from_clients: c.bytes_from_clients.load(Ordering::Relaxed),
            parts_done: c.parts_done.load(Ordering::Relaxed),
            parts_failed: c.parts_failed.load(Ordering::Relaxed),
        }
    }

    /// How far each active run has got: the steps complete from the first.
    pub fn run_progress(&self) -> Vec<proto::RunProgress> {
        let Ok(mut progress) = self.progress.lock() else {
            return Vec::new();
        };
        progress
            .iter_mut()
            .map(|(&run, (done, seen))| {
                if let Some(d) = done {
                    *seen = d.done_prefix(*seen);
                }
                proto::RunProgress {
                    run,
                    steps_done: *seen as u32,
                }
            })
            .collect()
    }

    /// Drops everything of run `run`: its buffers, its pending pieces
    /// (they fail with `why`), its peers.
    pub fn end_run(&self, run: u64, why: &str) {
        // Every call ends a run: debug, not info (the controller logs
        // failed runs).
        tracing::debug!(
            run,
            buffers = self.client.live().buffers,
            "ending the run: {why}"
        );
        self.store.end_run(run, why);
        self.receiver.end_run(run, why);
        if let Ok(mut p) = self.progress.lock() {
            p.remove(&run);
        }
        self.queues.end(run);
        if self
            .runs
            .lock()
            .map(|mut r| r.remove(&run).is_some())
            .unwrap_or(false)
        {
            self.counters.runs_active.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// A peer was lost (the controller says): pieces from it and to it
    /// fail, whenever they are due, so the parts that wait for them end.
    pub fn peer_lost(&self, lost: &proto::PeerLost) {
        tracing::warn!(
            worker = lost.worker,
            "the controller says worker {} is lost: {}",
            lost.worker,
            lost.reason
        );
        self.receiver.peer_lost(lost.worker, &lost.reason);
        if let Some(a) = &lost.address {
            let peer = PeerAddress {
                service: a.service.clone(),
                data: a.data.clone(),
            };
            self.sender.peer_lost(lost.worker, &peer, &lost.reason);
        }
    }

    /// Drops owner `owner` (a run or a session) at once: its buffers, its
    /// pending pieces (they fail with `why`), its kept parts.
    pub fn release(&self, owner: u64, why: &str) {
        let why = if why.is_empty() {
            "the run was released"
        } else {
            why
        };
        self.end_run(owner, why);
        self.kept.forget(owner);
        self.sidecars.end(owner);
        // Forgotten once no late request of it can still arrive: swept
        // here, at later releases (no timer per release).
        let now = Instant::now();
        let mut released = self.released.lock().unwrap_or_else(|e| e.into_inner());
        while released.front().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, old)) = released.pop_front() {
                self.forget(old);
            }
        }
        released.push_back((now + FORGET_AFTER, owner));
    }

    /// Drops everything `owner` holds here, which lives on (a paused
    /// session): no mark that it ended.
    pub fn drop_held(&self, owner: u64) {
        self.store.drop_owner(owner);
        self.kept.forget(owner);
        self.sidecars.end(owner);
    }

    /// Forgets that run `run` ended (long after, once no late request of
    /// it can still arrive).
    pub fn forget(&self, run: u64) {
        self.store.forget(run);
        self.receiver.forget(run);
    }
}

/// The sessions' sidecars on this worker (see [`pw_exec::sidecar`]).
pub struct Sidecars {
    config: Option<pw_exec::sidecar::Config>,
    running: Mutex<HashMap<u64, Arc<Sidecar>>>,
}

impl Sidecars {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Sidecar>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Session `owner`'s sidecar, made now if it has none (None: this
    /// worker runs no sidecars, or the run is no session's).
    pub fn of(&self, owner: u64) -> Option<Arc<Sidecar>> {
        let config = self.config.as_ref().filter(|_| owner != 0)?;
        Some(
            self.running()
                .entry(owner)
                .or_insert_with(|| Arc::new(Sidecar::new(config.clone(), owner)))
                .clone(),
        )
    }

    /// Session `owner`'s sidecar drops programs `ids`, if it has a
    /// sidecar (after the calls queued before).
    pub fn drop_programs(&self, owner: u64, ids: Vec<String>) {
        let sidecar = self.running().get(&owner).cloned();
        if let Some(sidecar) = sidecar {
            sidecar.drop_programs(ids);
        }
    }

    /// Ends session `owner`'s sidecar, if it has one (once its queued
    /// calls ran).
    pub fn end(&self, owner: u64) {
        self.running().remove(&owner);
    }

    pub fn end_all(&self) {
        self.running().clear();
    }
}

/// Why a worker stopped: the worker layer's one error type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Its plugin or client cannot be had.
    #[error(transparent)]
    Plugin(#[from] pw_pjrt::Error),
    /// Its service cannot listen where it was asked to.
    #[error(transparent)]
    Listen(#[from] pw_wire::Error),
    #[error("cannot listen for pieces on {address}: {source}")]
    DataPort {
        address: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{flag} {address}: not a loopback address, so anyone who can reach it could {what}; give --cluster-secret (or PW_CLUSTER_SECRET), the secret pw-server and its workers share")]
    Unprotected {
        flag: &'static str,
        address: String,
        what: &'static str,
    },
    #[error("cannot serve metrics on {address}: {source}")]
    MetricsPort {
        address: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the thread that {what}: {source}")]
    Thread {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("the controller refused this worker: {reason}")]
    Refused { reason: String },
    #[error("cannot reach the controller at {address} within {waited:?}: {source}")]
    Unreachable {
        address: String,
        waited: Duration,
        #[source]
        source: pw_wire::Error,
    },
    #[error("its service stopped: {source}")]
    Service {
        #[source]
        source: tonic::transport::Error,
    },
}

/// Runs a worker until it is shut down (`shutdown` resolves) or loses its
/// controller for longer than `config.connect_timeout`. `ready` hears the
/// address the service listens on.
pub async fn serve(
    config: Config,
    ready: impl FnOnce(&str),
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), Error> {
    let plugin = match &config.plugin {
        Some(path) => Plugin::load(path),
        None => Plugin::discover(),
    }?;
    let client = Client::open(&plugin, &ClientOptions::from_env()?, config.devices)?;
    let listener = net::bind(&config.listen).await?;
    let bound = listener.local_addr().map_err(|source| Error::DataPort {
        address: config.listen.clone(),
        source,
    })?;
    if pw_wire::auth::cluster_secret().is_none() && !bound.ip().is_loopback() {
        return Err(Error::Unprotected {
            flag: "--listen",
            address: bound.to_string(),
            what: "drive this worker",
        });
    }
    let address = config
        .advertise
        .clone()
        .unwrap_or_else(|| bound.to_string());
    // The TCP data port, on the service's interface.
    let data_port_error = |source| Error::DataPort {
        address: format!("{}:{}", bound.ip(), config.data_port),
        source,
    };
    let data_listener =
        std::net::TcpListener::bind((bound.ip(), config.data_port)).map_err(data_port_error)?;
    let data_port = data_listener.local_addr().map_err(data_port_error)?.port();
    let data_address = match address.rsplit_once(':') {
        Some((host, _)) => format!("{host}:{data_port}"),
        None => format!("{address}:{data_port}"),
    };
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let mut executor = Executor::new(&client);
    // Runs recover from what survivors keep (the controller's recovery).
    executor.retain = true;
    // Where the host is (the status page), then any injected fault.
    let tracker = Arc::new(queues::Tracker::default());
    let (faults, at) = (config.faults.clone(), tracker.clone());
    executor.before_step = Some(Arc::new(move |i, p| {
        at.reached(p);
        if faults.any_step_fault() {
            faults.before_step(i, p)
        }
    }));
    let damage = Damage {
        corrupt: config.faults.corrupt_pieces,
        truncate: config.faults.truncate_pieces,
    };
    let receiver = Arc::new(Receiver::new(config.early_limit));
    let spoiled = receiver.spoiled();
    let state = Arc::new(State {
        executables: Mutex::new(Executables::new(&client, None)),
        executor,
        client: client.clone(),
        store: ObjectStore::default(),
        receiver,
        sender: Sender::new(
            config.transport,
            tokio::runtime::Handle::current(),
            damage,
            spoiled,
        ),
        id: AtomicU32::new(u32::MAX),
        events: events_tx,
        reports: Mutex::new(None),
        counters: Counters::default(),
        faults: config.faults.clone(),
        runs: Mutex::new(HashMap::new()),
        progress: Mutex::new(HashMap::new()),
        kept: commands::Kept::default(),
        sidecars: Sidecars {
            config: config.sidecar.clone(),
            running: Mutex::default(),
        },
        released: Mutex::default(),
        tickets: bulk::Tickets::default(),
        pool: Arc::default(),
        runtime: tokio::runtime::Handle::current(),
        patience: Duration::from_secs(600),
        queues: tracker,
        activity: activity::Activity::default(),
    });
    let locals = client
        .addressable_devices()
        .iter()
        .map(|d| d.id() as u32)
        .collect();
    tokio::spawn(activity::sample(Arc::downgrade(&state), locals));
    if let Some(at) = config.metrics {
        if pw_wire::auth::cluster_secret().is_none() && !at.ip().is_loopback() {
            return Err(Error::Unprotected {
                flag: "--metrics",
                address: at.to_string(),
                what: "read what this worker runs",
            });
        }
        let listener =
            tokio::net::TcpListener::bind(at)
                .await
                .map_err(|source| Error::MetricsPort {
                    address: at.to_string(),
                    source,
                })?;
        let tls = pw_wire::tls::http_server()?;
        tokio::spawn(metrics::serve(listener, tls, Arc::downgrade(&state)));
    }
    let (incoming, linked) = (state.receiver.clone(), state.clone());
    let controller: pw_dataplane::ControllerLink =
        Arc::new(move |stream, _tcp| linked.controller_link(stream));
    let fetching = state.clone();
    let bulk: pw_dataplane::BulkFetch = Arc::new(move |tcp| bulk::serve(&fetching, tcp));
    std::thread::Builder::new()
        .name("pw-data-accept".into())
        .spawn(move || pw_dataplane::serve_tcp(data_listener, incoming, controller, bulk))
        .map_err(|source| Error::Thread {
            what: "accepts data connections",
            source,
        })?;
    // Only the controller and peer workers (holding the cluster secret)
    // are served.
    let service = net::cluster_only(
        proto::worker_server::WorkerServer::new(service::WorkerService::new(state.clone()))
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES),
    );
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        net::server()?
            .add_service(service)
            .serve_with_incoming_shutdown(net::incoming(listener), async {
                let _ = stop_rx.await;
            }),
    );
    ready(&address);
    let register = proto::Register {
        protocol: pw_wire::PROTOCOL as i32,
        address: address.clone(),
        island: config.island.clone().unwrap_or_default(),
        platform: client.platform_name().to_owned(),
        platform_version: client.platform_version().to_owned(),
        api_major: plugin.version().major as u32,
        api_minor: plugin.version().minor as u32,
        plugin: plugin_identity(&client),
        devices: client
            .addressable_devices()
            .iter()
            .map(|d| proto::DeviceInfo {
                local_id: d.id() as u32,
                kind: d.kind().to_owned(),
            })
            .collect(),
        host: hostname(),
        pid: std::process::id(),
        can_compile: true,
        data_address,
        held: Vec::new(),
    };
    let outcome = tokio::select! {
        outcome = attach_loop(&config, &state, register, events_rx) => outcome,
        _ = shutdown => Ok(()),
    };
    let _ = stop_tx.send(());
    state.store.clear("the worker is shutting down");
    state.sender.clear();
    let _ = tokio::time::timeout(Duration::from_secs(2), server).await;
    outcome
}

/// Registers with the controller and keeps the session; registers again
/// when it ends, for at most `connect_timeout` each time.
async fn attach_loop(
    config: &Config,
    state: &Arc<State>,
    register: proto::Register,
    mut events: mpsc::UnboundedReceiver<proto::WorkerEvent>,
) -> Result<(), Error> {
    // Between failed registrations: short at first (a restarted server
    // is back within tens of milliseconds), then longer.
    let mut pause = Duration::from_millis(20);
    loop {
        let channel = connect(config).await?;
        let mut client = net::registry_client(channel);
        let (tx, rx) = mpsc::unbounded_channel();
        let register = proto::Register {
            held: state.held(),
            ..register.clone()
        };
        let _ = tx.send(proto::WorkerEvent {
            event: Some(proto::worker_event::Event::Register(register)),
        });
        let mut replies = match client
            .attach(tokio_stream::wrappers::UnboundedReceiverStream::new(rx))
            .await
        {
            Ok(r) => r.into_inner(),
            // Another secret (or none) will not get better with retries.
            Err(status) if status.code() == tonic::Code::Unauthenticated => {
                return Err(Error::Refused {
                    reason: status.message().to_owned(),
                })
            }
            Err(status) => {
                tracing::warn!(error = %status.message(), "registration failed; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let registered = match replies.message().await {
            Ok(Some(proto::ControllerEvent {
                event: Some(proto::controller_event::Event::Registered(r)),
            })) => r,
            Ok(Some(proto::ControllerEvent {
                event: Some(proto::controller_event::Event::Refused(r)),
            })) => return Err(Error::Refused { reason: r.reason }),
            other => {
                tracing::warn!(
                    ?other,
                    "the controller did not answer the registration; retrying"
                );
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        pause = Duration::from_millis(20);
        state.id.store(registered.worker, Ordering::SeqCst);
        state.sender.set_id(registered.worker);
        tracing::info!(
            worker = registered.worker,
            devices = ?registered.device_ids,
            "registered with the controller at {}",
            config.controller
        );
        // Stale reports of an earlier session are not sent.
        while events.try_recv().is_ok() {}
        let heartbeat = Duration::from_millis(u64::from(registered.heartbeat_ms.max(50)));
        let mut ticker = tokio::time::interval(heartbeat);
        let why = loop {
            tokio::select! {
                _ = ticker.tick() => {
                    let runs = state.run_progress();
                    let beat = proto::worker_event::Event::Heartbeat(proto::Heartbeat {
                        counters: Some(state.snapshot()),
                        runs,
                        devices: state.activity.counters(state),
                    });
                    if tx.send(proto::WorkerEvent { event: Some(beat) }).is_err() {
                        break "the session closed".to_owned();
                    }
                }
                Some(event) = events.recv() => {
                    if tx.send(event).is_err() {
                        break "the session closed".to_owned();
                    }
                }
                reply = replies.message() => match reply {
                    Ok(Some(proto::ControllerEvent { event: Some(event) })) => {
                        commands::run(state, event, registered.worker)
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => break "the controller ended the session".to_owned(),
                    Err(status) => break format!("the session failed: {}", status.message()),
                },
            }
        };
        tracing::warn!(
            %why,
            "lost the controller; finishing the runs under way, keeping sessions' arrays, and registering again"
        );
        state.id.store(u32::MAX, Ordering::SeqCst);
        state.without_controller().await;
    }
}

/// How long a worker that lost its controller lets the parts it already
/// took finish (their outputs may be a session's arrays, kept for the
/// controller that comes back).
const FINISH_WAIT: Duration = Duration::from_secs(10);

impl State {
    /// The controller is gone: the parts under way finish (for at most
    /// [`FINISH_WAIT`]), then every run goes; what sessions hold stays,
    /// for a controller restarted from its journal to take back (it
    /// releases what it does not know). Kept parts, sidecars and tickets
    /// go: a new controller sends its own.
    async fn without_controller(&self) {
        let deadline = tokio::time::Instant::now() + FINISH_WAIT;
        loop {
            let busy = self.progress.lock().is_ok_and(|p| {
                p.values()
                    .any(|(done, _)| done.as_ref().is_some_and(|d| !d.all_done()))
            });
            if !busy || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let runs: Vec<u64> = self
            .runs
            .lock()
            .map(|r| r.keys().copied().collect())
            .unwrap_or_default();
        for run in runs {
            self.end_run(run, "the worker lost its controller");
        }
        self.kept.clear();
        self.sidecars.end_all();
        self.tickets.clear();
        *self.reports.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The shards of sessions' arrays it holds (see
    /// [`State::without_controller`]).
    fn held(&self) -> Vec<proto::HeldShard> {
        self.store
            .shards()
            .into_iter()
            .map(|(owner, array, position)| proto::HeldShard {
                owner,
                array: array as u64,
                position: position as u32,
            })
            .collect()
    }
}

/// A channel to the controller, retried for at most `connect_timeout`.
async fn connect(config: &Config) -> Result<tonic::transport::Channel, Error> {
    let deadline = tokio::time::Instant::now() + config.connect_timeout;
    let mut delay = Duration::from_millis(50);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match net::channel(
            &config.controller,
            left.clamp(Duration::from_millis(100), Duration::from_secs(2)),
        )
        .await
        {
            Ok(channel) => return Ok(channel),
            Err(source) if tokio::time::Instant::now() + delay >= deadline => {
                return Err(Error::Unreachable {
                    address: config.controller.clone(),
                    waited: config.connect_timeout,
                    source,
                })
            }
            Err(_) => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(1));
            }
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}
