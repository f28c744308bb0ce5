//! pw-server's controller: the resource manager, and the one place that
//! runs programs across workers.
//!
//! * **Registry** ([`registry`]): workers register over `Controller.Attach`
//!   and keep a lease with heartbeats; a worker whose session ends (it died,
//!   or its connection broke) or whose lease expires (it hangs) is dropped,
//!   its peers are told (`PeerLost`), and every run it took part in
//!   recovers ([`recovery`]) or, past `max_recoveries`, fails, naming it and
//!   the first of its steps not known complete. Workers with an incompatible protocol,
//!   PJRT C API or plugin are refused at registration, with the reason.
//! * **A run** ([`Controller::run`]): lower the program onto the registered
//!   topology (the [`Lowerer`], which links MLIR, is given by pw-server);
//!   refuse it before anything runs if it needs devices no worker offers;
//!   get every executable each worker needs, compiled once ([`compile`]) and
//!   shipped; upload the inputs' shards; send each worker its part, every
//!   step in schedule order in one message (workers run ahead of their
//!   devices and move pieces between themselves); wait for every part;
//!   fetch the outputs; release the run everywhere (its buffers are
//!   dropped). A failure anywhere releases the run on every worker too;
//!   a lost worker starts another round that replays what it took with it.

pub mod compile;
pub mod recovery;
pub mod registry;
pub mod service;
pub mod session;
pub mod slices;
pub mod summary;
pub mod watch;

use crate::{
    cache::{key_of, DiskCache, Key},
    exec::Work,
    host::HostArray,
    wire::{self, proto},
};
use compile::{Compiler, Source};
use pw_core::{
    plan::{Part, Plan},
    Topology,
};
use registry::{Registry, WorkerEntry};
use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    path::PathBuf,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};
use summary::{ExecutableLine, RunSummary, WorkerLine};
use tokio::sync::mpsc;

/// The protocol version this build speaks.
pub const PROTOCOL: proto::Protocol = proto::Protocol::V1;

/// How the controller runs (the flags of `pw-server`).
#[derive(Debug, Clone)]
pub struct Config {
    /// The PJRT plugin the controller compiles with; None: workers compile.
    pub plugin: Option<PathBuf>,
    /// The disk cache of compiled executables (None: none).
    pub compile_cache: Option<PathBuf>,
    /// How often workers send heartbeats, and how long a silent one keeps
    /// its lease.
    pub heartbeat: Duration,
    pub lease: Duration,
    /// The longest a run may take unless it asks otherwise.
    pub run_timeout: Duration,
    /// How long a silent client keeps its session.
    pub client_lease: Duration,
    /// A run whose progress did not change for this long is stalled (the
    /// status page, [`watch`]).
    pub stall: Duration,
    /// How many times one run may recover from lost workers (0: a lost
    /// worker fails the run at once), and how long a recovery waits for a
    /// worker to take the lost devices ([`recovery`]).
    pub max_recoveries: u32,
    pub capacity_wait: Duration,
    /// How many bytes of uploaded host arrays sessions may keep for their
    /// arrays' lineage ([`session`]).
    pub lineage_budget: u64,
    /// Where a Chrome trace of each session goes when it closes (None:
    /// sessions are not traced).
    pub trace_sessions: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            plugin: None,
            compile_cache: None,
            heartbeat: Duration::from_millis(250),
            lease: Duration::from_millis(1500),
            run_timeout: Duration::from_secs(600),
            client_lease: Duration::from_secs(10),
            stall: Duration::from_secs(10),
            max_recoveries: 3,
            capacity_wait: Duration::from_secs(10),
            lineage_budget: 1 << 30,
            trace_sessions: None,
        }
    }
}

/// Lowers programs onto a topology (pw-server gives the MLIR pipeline).
pub trait Lowerer: Send + Sync + 'static {
    /// The plan of program `text` (named `name` in messages) on
    /// `topology`, scheduled by policy `schedule` (None: the default), and
    /// a line saying how it was lowered.
    fn lower(
        &self,
        name: &str,
        text: &str,
        topology: &Topology,
        schedule: Option<&str>,
    ) -> Result<(Plan, String), String>;
}

/// What the controller counts (see `ControllerCounters`).
#[derive(Debug, Default)]
struct Counters {
    runs_ok: AtomicU64,
    runs_failed: AtomicU64,
    executables_shipped: AtomicU64,
    bytes_shipped: AtomicU64,
    bytes_from_clients: AtomicU64,
    bytes_to_clients: AtomicU64,
    workers_lost: AtomicU64,
    workers_refused: AtomicU64,
    runs_recovered: AtomicU64,
}

/// What a run hears from its workers.
enum RunEvent {
    Done(u32, proto::PartDone),
    /// A worker was lost: why, and how many of its part's steps it had
    /// reported complete.
    Lost(u32, String, Option<u32>),
}

/// An active run's workers, and where its events go.
type ActiveRun = (Vec<u32>, mpsc::UnboundedSender<RunEvent>);

/// Why waiting for a run's parts stopped short.
struct Stop {
    /// The cause, for the user.
    message: String,
    /// Workers lost meanwhile (a recovery may go on without them), and
    /// when the first loss was noticed (from the run's start).
    lost: Vec<u32>,
    noticed: Duration,
    /// The reports of the parts that ended.
    reports: BTreeMap<u32, proto::PartDone>,
}

impl Stop {
    fn failed(message: String) -> Stop {
        Stop {
            message,
            lost: Vec::new(),
            noticed: Duration::ZERO,
            reports: BTreeMap::new(),
        }
    }
}

/// See the module doc. Cheap to clone (one shared controller).
#[derive(Clone)]
pub struct Controller {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    lowerer: Arc<dyn Lowerer>,
    registry: Mutex<Registry>,
    compiler: tokio::sync::Mutex<Compiler>,
    /// Active runs: their workers, and where their events go.
    runs: Mutex<HashMap<u64, ActiveRun>>,
    next_run: AtomicU64,
    /// Held while a run's parts are sent: every worker receives runs in one
    /// order (see `worker::GangOrder`).
    dispatch: tokio::sync::Mutex<()>,
    counters: Counters,
    /// The active runs, for the status page.
    watch: watch::Watch,
    /// Clients' sessions and the line for devices.
    sessions: Mutex<session::Sessions>,
}

/// A program lowered onto the workers: its plan, each worker's part, and
/// where every device of the plan is.
pub(crate) struct Prepared {
    pub plan: Plan,
    pub parts: BTreeMap<u32, (Part, Work)>,
    pub workers: Vec<u32>,
    pub addrs: HashMap<i64, pw_core::plan::DeviceAddr>,
}

/// A program to run, with its inputs.
pub struct RunRequest {
    pub name: String,
    pub text: String,
    pub inputs: Vec<HostArray>,
    /// Record completion times (stats, traces).
    pub record: bool,
    /// None: the controller's default.
    pub timeout: Option<Duration>,
    /// The schedule policy to lower with (None: the lowerer's default).
    pub schedule: Option<String>,
}

impl Controller {
    pub fn new(config: Config, lowerer: Arc<dyn Lowerer>) -> Controller {
        let disk = config
            .compile_cache
            .as_deref()
            .and_then(|d| DiskCache::open(Some(d)));
        let compiler = Compiler::new(config.plugin.clone(), disk);
        // Run ids differ between controller lifetimes, so a worker never
        // mixes up runs of an earlier controller with a new one's.
        let epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() & 0xffff_ffff);
        Controller {
            inner: Arc::new(Inner {
                config,
                lowerer,
                registry: Mutex::new(Registry::default()),
                compiler: tokio::sync::Mutex::new(compiler),
                runs: Mutex::new(HashMap::new()),
                next_run: AtomicU64::new(epoch << 32),
                dispatch: tokio::sync::Mutex::new(()),
                counters: Counters::default(),
                watch: watch::Watch::default(),
                sessions: Mutex::default(),
            }),
        }
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.inner
            .registry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Admits a worker, or says why not. `session` is the worker's event
    /// stream; dropping the registry's copy ends the session.
    pub async fn register(
        &self,
        register: &proto::Register,
        session: mpsc::UnboundedSender<Result<proto::ControllerEvent, tonic::Status>>,
    ) -> Result<proto::Registered, String> {
        if let Some(why) = self.registry().refusal(register) {
            self.inner
                .counters
                .workers_refused
                .fetch_add(1, Ordering::Relaxed);
            return Err(why);
        }
        let channel = crate::net::channel(&register.address, Duration::from_secs(3))
            .await
            .map_err(|e| {
                self.inner
                    .counters
                    .workers_refused
                    .fetch_add(1, Ordering::Relaxed);
                format!(
                    "the controller cannot reach its service at {}: {e}",
                    register.address
                )
            })?;
        let client = proto::worker_client::WorkerClient::new(channel)
            .max_encoding_message_size(wire::MAX_MESSAGE_BYTES)
            .max_decoding_message_size(wire::MAX_MESSAGE_BYTES);
        let mut registry = self.registry();
        // Checked again: another worker may have joined the island meanwhile.
        if let Some(why) = registry.refusal(register) {
            self.inner
                .counters
                .workers_refused
                .fetch_add(1, Ordering::Relaxed);
            return Err(why);
        }
        let (id, globals) = registry.allocate(register.devices.len());
        let entry = WorkerEntry {
            id,
            address: register.address.clone(),
            data_address: register.data_address.clone(),
            island: Registry::island_name(id, &register.island),
            host: register.host.clone(),
            pid: register.pid,
            platform: register.platform.clone(),
            plugin: register.plugin.clone(),
            can_compile: register.can_compile,
            devices: globals
                .iter()
                .zip(&register.devices)
                .map(|(g, d)| (*g, d.local_id, d.kind.clone()))
                .collect(),
            client,
            last_heartbeat: Instant::now(),
            counters: proto::WorkerCounters::default(),
            progress: BTreeMap::new(),
            loaded: Default::default(),
            session,
        };
        tracing::info!(
            "{} registered: island {}, devices {globals:?}, {}",
            entry.describe(),
            entry.island,
            entry.plugin
        );
        registry.workers.insert(id, entry);
        drop(registry);
        self.sessions_workers_changed();
        Ok(proto::Registered {
            worker: id,
            device_ids: globals,
            heartbeat_ms: self.inner.config.heartbeat.as_millis() as u32,
            lease_ms: self.inner.config.lease.as_millis() as u32,
        })
    }

    /// A heartbeat of `worker`: renews its lease.
    pub fn heartbeat(&self, worker: u32, beat: proto::Heartbeat) {
        if let Some(w) = self.registry().workers.get_mut(&worker) {
            w.last_heartbeat = Instant::now();
            w.counters = beat.counters.unwrap_or_default();
            w.progress = beat.runs.iter().map(|p| (p.run, p.steps_done)).collect();
        }
        self.inner.watch.heartbeat(worker, &beat.runs);
    }

    /// `worker` finished its part of a run.
    pub fn part_done(&self, worker: u32, done: proto::PartDone) {
        let runs = self.inner.runs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, tx)) = runs.get(&done.run) {
            let _ = tx.send(RunEvent::Done(worker, done));
        }
    }

    /// Drops `worker` (its session ended, or its lease expired): every run
    /// it takes part in fails.
    pub fn lost(&self, worker: u32, why: &str) {
        let Some(entry) = self.registry().workers.remove(&worker) else {
            return;
        };
        self.inner
            .counters
            .workers_lost
            .fetch_add(1, Ordering::Relaxed);
        // A session that ends after a silence is a hang or a cut link that
        // the transport noticed first.
        let silence = entry.last_heartbeat.elapsed();
        let why = if silence > self.inner.config.heartbeat * 3 {
            format!(
                "{why} (silent for {:.1} s: it hangs or its link is down)",
                silence.as_secs_f64()
            )
        } else {
            why.to_owned()
        };
        let why = why.as_str();
        tracing::warn!("{} is gone: {why}", entry.describe());
        // Its peers stop waiting for it, and take nothing more from it.
        let fence = proto::ControllerEvent {
            event: Some(proto::controller_event::Event::PeerLost(proto::PeerLost {
                worker,
                address: Some(proto::PeerAddress {
                    service: entry.address.clone(),
                    data: entry.data_address.clone(),
                }),
                reason: why.to_owned(),
            })),
        };
        for w in self.registry().workers.values() {
            let _ = w.session.send(Ok(fence.clone()));
        }
        let devices: Vec<i64> = entry.devices.iter().map(|d| d.0).collect();
        self.sessions_lost_worker(
            worker,
            &devices,
            &format!("{} was lost: {why}", entry.describe()),
        );
        let runs = self.inner.runs.lock().unwrap_or_else(|e| e.into_inner());
        for (run, (workers, tx)) in runs.iter() {
            if workers.contains(&worker) {
                let _ = tx.send(RunEvent::Lost(
                    worker,
                    format!("{} was lost: {why}", entry.describe()),
                    entry.progress.get(run).copied(),
                ));
            }
        }
    }

    /// Drops workers whose lease expired; runs until the controller is
    /// dropped (call it once, in a task).
    pub async fn watch_leases(self) {
        let mut tick =
            tokio::time::interval(self.inner.config.heartbeat.min(Duration::from_millis(100)));
        loop {
            tick.tick().await;
            if Arc::strong_count(&self.inner) == 1 {
                return;
            }
            let lease = self.inner.config.lease;
            let expired: Vec<u32> = self
                .registry()
                .workers
                .values()
                .filter(|w| w.last_heartbeat.elapsed() > lease)
                .map(|w| w.id)
                .collect();
            for id in expired {
                self.lost(
                    id,
                    &format!("no heartbeat for {lease:?}: it hangs or its link is down"),
                );
            }
        }
    }

    /// The registered workers and the controller's counters.
    pub fn status(&self) -> proto::StatusReply {
        let registry = self.registry();
        let c = &self.inner.counters;
        let compiler = self.inner.compiler.try_lock();
        let (compiled, from_cache) = compiler
            .as_ref()
            .map(|c| (c.compiled_here + c.compiled_on_workers, c.from_disk))
            .unwrap_or_default();
        proto::StatusReply {
            workers: registry
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
                .collect(),
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
        let c = &self.inner.counters;
        c.bytes_from_clients.fetch_add(from, Ordering::Relaxed);
        c.bytes_to_clients.fetch_add(to, Ordering::Relaxed);
    }

    /// Runs a program (see the module doc); `progress` hears what happens.
    pub async fn run(
        &self,
        request: RunRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(Vec<HostArray>, RunSummary), String> {
        let outcome = self.run_inner(request, progress).await;
        let c = &self.inner.counters;
        match &outcome {
            Ok((_, summary)) => {
                c.runs_ok.fetch_add(1, Ordering::Relaxed);
                if !summary.recoveries.is_empty() {
                    c.runs_recovered.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(_) => {
                c.runs_failed.fetch_add(1, Ordering::Relaxed);
            }
        }
        outcome
    }

    async fn run_inner(
        &self,
        request: RunRequest,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<(Vec<HostArray>, RunSummary), String> {
        let t0 = Instant::now();
        let mut summary = RunSummary::default();
        let (topology, addrs) = {
            let r = self.registry();
            if r.workers.is_empty() {
                return Err("no worker is registered with this server".into());
            }
            (r.topology(None), r.addresses())
        };
        let plan = self
            .lower(
                &request.name,
                request.text,
                request.schedule,
                topology,
                &mut summary,
            )
            .await?;
        let mut prepared = self.cut(plan, &addrs, &mut summary)?;
        summary.timings.lowered = t0.elapsed();
        check_inputs(&prepared.plan, &request.inputs)?;
        let deadline = t0 + request.timeout.unwrap_or(self.inner.config.run_timeout);
        // The whole plan on its current devices, the program's inputs by
        // value, and what the rounds keep on workers.
        let mut whole = prepared.plan.clone();
        let inputs: HashMap<usize, &HostArray> =
            whole.inputs.iter().copied().zip(&request.inputs).collect();
        let mut kept = recovery::Kept::default();
        // Each round's run id and workers, released at the end.
        let mut rounds: Vec<(u64, Vec<u32>)> = Vec::new();
        // A replayed round's step indices in the whole plan.
        let mut original: Option<Vec<usize>> = None;
        // What the status page calls each round.
        let mut label = request.name.clone();
        let outcome = loop {
            let run = self.inner.next_run.fetch_add(1, Ordering::Relaxed);
            if rounds.is_empty() {
                summary.run = run;
            }
            rounds.push((run, prepared.workers.clone()));
            let reports_before = summary.parts.len();
            let round = self
                .round(
                    run,
                    (&label, request.record),
                    &prepared,
                    &inputs,
                    &kept,
                    deadline,
                    t0,
                    &mut summary,
                    progress,
                )
                .await;
            remap_reports(&mut summary, reports_before, original.as_deref());
            let stop = match round {
                Ok(reports) => {
                    for (w, done) in &reports {
                        kept.add(run, *w, &done.held);
                    }
                    if let Some(last) = summary.recoveries.last_mut() {
                        last.recovered = Some(t0.elapsed());
                    }
                    match self.fetch_outputs(&whole, &kept, &mut summary, t0).await {
                        Ok(outputs) => break Ok(outputs),
                        // A worker lost while its outputs were fetched:
                        // they are computed again.
                        Err(e) => match self.lost_meanwhile(&rounds, &kept).await {
                            lost if lost.is_empty() => break Err(e),
                            lost => Stop {
                                message: e,
                                lost,
                                noticed: t0.elapsed(),
                                reports: BTreeMap::new(),
                            },
                        },
                    }
                }
                Err(stop) if stop.lost.is_empty() => break Err(stop.message),
                Err(stop) => stop,
            };
            if summary.recoveries.len() >= self.inner.config.max_recoveries as usize {
                break Err(stop.message);
            }
            for (w, done) in &stop.reports {
                kept.add(run, *w, &done.held);
            }
            for w in &stop.lost {
                kept.lose(*w);
            }
            progress(format!(
                "{}; recovering",
                stop.message.trim_start_matches("error: ")
            ));
            match self
                .recover(&mut whole, &kept, &stop, t0, &mut summary)
                .await
            {
                Ok((next, replayed)) => {
                    if let Some(r) = summary.recoveries.last() {
                        label = format!(
                            "{} (recovering from the loss of {}: replaying {} of {} steps)",
                            request.name,
                            r.lost.join(", "),
                            r.steps_replayed,
                            r.steps
                        );
                    }
                    prepared = next;
                    original = Some(replayed);
                }
                Err(e) => {
                    break Err(format!(
                        "{}\nerror: the run cannot recover: {e}",
                        stop.message
                    ))
                }
            }
        };
        let why = match &outcome {
            Ok(_) => "the run finished".to_owned(),
            Err(e) => format!("the run failed: {e}"),
        };
        for (run, workers) in &rounds {
            self.release(*run, workers, &why).await;
        }
        outcome.map(|outputs| (outputs, summary))
    }

    /// One round of a run: the executables, the inputs it uploads (the
    /// program's) and binds (values earlier rounds kept), its parts; waits
    /// for them. Returns every part's report.
    #[allow(clippy::too_many_arguments)]
    async fn round(
        &self,
        run: u64,
        (name, record): (&str, bool),
        prepared: &Prepared,
        inputs: &HashMap<usize, &HostArray>,
        kept: &recovery::Kept,
        deadline: Instant,
        t0: Instant,
        summary: &mut RunSummary,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<BTreeMap<u32, proto::PartDone>, Stop> {
        let mut events = self.open_run(run, &prepared.workers);
        let watching = self.watch_run(run, name, &prepared.plan, &prepared.parts);
        let settle = (self.inner.config.max_recoveries as usize > summary.recoveries.len())
            .then_some(deadline);
        let outcome = async {
            let keys = self
                .executables(&prepared.parts, summary, progress)
                .await
                .map_err(Stop::failed)?;
            summary.timings.executables_ready = t0.elapsed();
            let uploads: Vec<(usize, &HostArray)> = prepared
                .plan
                .inputs
                .iter()
                .filter_map(|v| inputs.get(v).map(|h| (*v, *h)))
                .collect();
            let put_bytes = self
                .upload(run, prepared, &uploads)
                .await
                .map_err(Stop::failed)?;
            summary.timings.inputs_sent = t0.elapsed();
            let mut bindings: HashMap<u32, (Vec<proto::Binding>, Vec<proto::Binding>)> =
                HashMap::new();
            for (&w, (part, _)) in &prepared.parts {
                for &v in &part.inputs {
                    if inputs.contains_key(&v) {
                        continue;
                    }
                    let owner = kept.owner(v, part.values[v].devices.len()).ok_or_else(|| {
                        Stop::failed(format!("error: value {v} is neither an input nor kept"))
                    })?;
                    bindings.entry(w).or_default().0.push(proto::Binding {
                        value: v as u32,
                        owner,
                        array: v as u64,
                        take: false,
                    });
                }
            }
            let sent = self
                .dispatch(run, prepared, &keys, record, &bindings, summary, t0)
                .await
                .map_err(Stop::failed)?;
            summary.timings.parts_sent = t0.elapsed();
            let before = summary.parts.len();
            let waited = self
                .wait_parts(prepared, &mut events, deadline, settle, t0, summary)
                .await;
            // A later round's timings, on the worker's first part's clock.
            for report in summary.parts.iter_mut().skip(before) {
                let first = summary
                    .part_sent
                    .iter()
                    .find(|(w, _)| *w == report.worker)
                    .map_or(sent, |p| p.1);
                report.shift(sent.saturating_sub(first));
            }
            let reports = waited?;
            summary.timings.parts_done = t0.elapsed();
            for (w, b) in put_bytes {
                summary.controller_bytes.push((w, b, 0));
            }
            Ok(reports)
        }
        .await;
        self.close_run(run);
        drop(watching);
        // A worker lost before its part was sent: the whole round is lost
        // with it (what was sent already is released with the run).
        outcome.map_err(|stop: Stop| {
            if !stop.lost.is_empty() || settle.is_none() {
                return stop;
            }
            let r = self.registry();
            let lost: Vec<u32> = prepared
                .workers
                .iter()
                .copied()
                .filter(|w| !r.workers.contains_key(w))
                .collect();
            Stop {
                lost,
                noticed: t0.elapsed(),
                ..stop
            }
        })
    }

    /// After a round lost workers: moves their devices onto healthy ones
    /// (waiting, bounded, for a worker to register if none can take them)
    /// and prepares the replay of what was lost. Returns it and the whole
    /// plan's index of each replayed step.
    async fn recover(
        &self,
        whole: &mut Plan,
        kept: &recovery::Kept,
        stop: &Stop,
        t0: Instant,
        summary: &mut RunSummary,
    ) -> Result<(Prepared, Vec<usize>), String> {
        let detected = t0.elapsed();
        let lost_names: Vec<String> = summary
            .workers
            .iter()
            .filter(|w| stop.lost.contains(&w.id))
            .map(|w| format!("worker {} ({}, pid {})", w.id, w.address, w.pid))
            .collect();
        let waiting_since = Instant::now();
        let capacity_by = waiting_since + self.inner.config.capacity_wait;
        let (map, addrs) = loop {
            let attempt = {
                let r = self.registry();
                let addrs = r.addresses();
                let mut lost: BTreeMap<u32, (String, Vec<i64>)> = BTreeMap::new();
                for d in whole.devices() {
                    if addrs.contains_key(&d) {
                        continue;
                    }
                    let w = summary
                        .devices
                        .iter()
                        .find(|(g, _)| *g == d)
                        .map(|(_, a)| a.worker);
                    let platform = summary
                        .workers
                        .iter()
                        .find(|l| Some(l.id) == w)
                        .map(|l| l.platform.clone())
                        .unwrap_or_default();
                    lost.entry(w.unwrap_or(u32::MAX))
                        .or_insert_with(|| (platform, Vec::new()))
                        .1
                        .push(d);
                }
                let candidates: Vec<recovery::Candidate> = r
                    .workers
                    .values()
                    .map(|w| recovery::Candidate {
                        worker: w.id,
                        platform: w.platform.clone(),
                        devices: w.devices.iter().map(|d| d.0).collect(),
                    })
                    .collect();
                let used: BTreeSet<i64> = whole.devices().into_iter().collect();
                recovery::place(&lost, &candidates, &used).map(|m| (m, addrs))
            };
            match attempt {
                Ok(found) => break found,
                Err(e) if Instant::now() >= capacity_by => {
                    let waited = waiting_since.elapsed();
                    summary.recoveries.push(recovery::line(
                        lost_names,
                        &BTreeMap::new(),
                        0,
                        whole.steps.len(),
                        kept.whole(whole),
                        (stop.noticed, detected),
                        waited,
                    ));
                    return Err(format!(
                        "{e} (waited {:.1} s for a worker to register); lost: {}",
                        waited.as_secs_f64(),
                        self.lost_values(whole, kept)
                    ));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        };
        let waited = waiting_since.elapsed();
        pw_core::recovery::remap_devices(whole, &map);
        let available = |v: usize| {
            whole.inputs.contains(&v) || kept.owner(v, whole.values[v].devices.len()).is_some()
        };
        let replay = whole.replay(available);
        tracing::warn!(
            "run {}: {} lost; devices {:?} moved; replaying {} of {} steps",
            summary.run,
            lost_names.join(", "),
            map,
            replay.original.len(),
            whole.steps.len()
        );
        summary.recoveries.push(recovery::line(
            lost_names,
            &map,
            replay.original.len(),
            whole.steps.len(),
            kept.whole(whole),
            (stop.noticed, detected),
            waited,
        ));
        let prepared = self.cut(replay.plan, &addrs, summary)?;
        Ok((prepared, replay.original))
    }

    /// The workers of `rounds` that are gone and not recovered from yet,
    /// waiting (at most a lease and a heartbeat) for the registry to notice
    /// one: a fetch can fail just before the worker's loss is known.
    async fn lost_meanwhile(&self, rounds: &[(u64, Vec<u32>)], kept: &recovery::Kept) -> Vec<u32> {
        let by = Instant::now() + self.inner.config.lease + self.inner.config.heartbeat;
        loop {
            let lost: Vec<u32> = {
                let r = self.registry();
                let mut lost: Vec<u32> = rounds
                    .iter()
                    .flat_map(|(_, ws)| ws.iter().copied())
                    .filter(|w| !r.workers.contains_key(w) && !kept.is_lost(*w))
                    .collect();
                lost.sort_unstable();
                lost.dedup();
                lost
            };
            if !lost.is_empty() || Instant::now() >= by {
                return lost;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The values the plan still needs and no live worker keeps whole.
    fn lost_values(&self, whole: &Plan, kept: &recovery::Kept) -> String {
        let gone: Vec<String> = whole
            .outputs
            .iter()
            .filter(|v| kept.owner(**v, whole.values[**v].devices.len()).is_none())
            .map(|v| format!("output value {v} ({})", whole.values[*v].describe()))
            .collect();
        match gone.len() {
            0 => "no output".into(),
            n if n > 4 => format!("{} and {} more outputs", gone[..4].join(", "), n - 4),
            _ => gone.join(", "),
        }
    }

    /// Fetches the program's outputs from the rounds that kept them.
    async fn fetch_outputs(
        &self,
        whole: &Plan,
        kept: &recovery::Kept,
        summary: &mut RunSummary,
        t0: Instant,
    ) -> Result<Vec<HostArray>, String> {
        let addrs: HashMap<i64, pw_core::plan::DeviceAddr> =
            self.registry().addresses().into_iter().collect();
        let mut outputs = Vec::with_capacity(whole.outputs.len());
        let mut fetched: BTreeMap<u32, u64> = BTreeMap::new();
        for &id in &whole.outputs {
            let value = &whole.values[id];
            let owner = kept
                .owner(id, value.devices.len())
                .ok_or_else(|| format!("error: output {id}: no live worker holds it"))?;
            let (host, bytes) = self
                .fetch_value(owner, id, value, &addrs)
                .await
                .map_err(|e| format!("error: output {id}: {e}"))?;
            for (w, b) in bytes {
                *fetched.entry(w).or_default() += b;
            }
            outputs.push(host);
        }
        summary.timings.outputs_fetched = t0.elapsed();
        for (w, b) in fetched {
            summary.controller_bytes.push((w, 0, b));
        }
        // One line per worker: what it got and what it gave.
        let mut merged: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        for (w, put, got) in summary.controller_bytes.drain(..) {
            let e = merged.entry(w).or_default();
            e.0 += put;
            e.1 += got;
        }
        summary.controller_bytes = merged.into_iter().map(|(w, (a, b))| (w, a, b)).collect();
        Ok(outputs)
    }

    /// Lowers a program onto `topology` and cuts it into each worker's
    /// part (see [`Controller::cut`]).
    async fn prepare(
        &self,
        name: &str,
        text: String,
        schedule: Option<String>,
        topology: Topology,
        addrs: &BTreeMap<i64, pw_core::plan::DeviceAddr>,
        summary: &mut RunSummary,
    ) -> Result<Prepared, String> {
        let plan = self.lower(name, text, schedule, topology, summary).await?;
        self.cut(plan, addrs, summary)
    }

    /// Lowers a program onto `topology`; its placement and steps go into
    /// `summary`.
    async fn lower(
        &self,
        name: &str,
        text: String,
        schedule: Option<String>,
        topology: Topology,
        summary: &mut RunSummary,
    ) -> Result<Plan, String> {
        let lowerer = self.inner.lowerer.clone();
        let name_ = name.to_owned();
        let (plan, lowered) = tokio::task::spawn_blocking(move || {
            lowerer.lower(&name_, &text, &topology, schedule.as_deref())
        })
        .await
        .map_err(|e| format!("lowering crashed: {e}"))??;
        summary.lowered = lowered;
        plan.check()
            .map_err(|e| format!("error: the lowered plan is not runnable: {e}"))?;
        summary.placement = plan.meshes.clone();
        summary.steps = plan
            .steps
            .iter()
            .map(|s| summary::StepLine {
                label: s.label.clone(),
                kind: s.kind.name().to_owned(),
                devices: s.devices.clone(),
            })
            .collect();
        Ok(plan)
    }

    /// Refuses a plan that needs devices no registered worker offers, and
    /// cuts it into each worker's part; the workers and devices it uses
    /// join those `summary` lists.
    fn cut(
        &self,
        plan: Plan,
        addrs: &BTreeMap<i64, pw_core::plan::DeviceAddr>,
        summary: &mut RunSummary,
    ) -> Result<Prepared, String> {
        // Admission: every device of the plan is a registered worker's.
        for mesh in &plan.meshes {
            if let Some(d) = mesh.devices.iter().find(|d| !addrs.contains_key(d)) {
                return Err(format!(
                    "error: mesh @{} is bound to device {d}, which no registered worker offers (devices {:?})",
                    mesh.name,
                    addrs.keys().collect::<Vec<_>>()
                ));
            }
        }
        let devices = plan.devices();
        let mut workers: Vec<u32> = devices
            .iter()
            .filter_map(|d| addrs.get(d))
            .map(|a| a.worker)
            .collect();
        workers.sort_unstable();
        workers.dedup();
        let mut parts: BTreeMap<u32, (Part, Work)> = BTreeMap::new();
        for &w in &workers {
            let part = plan.part(w, addrs).map_err(|e| format!("error: {e}"))?;
            part.check().map_err(|e| format!("error: {e}"))?;
            let work = Work::of(&part).map_err(|e| format!("error: {e}"))?;
            parts.insert(w, (part, work));
        }
        for (d, a) in addrs.iter().filter(|(d, _)| devices.contains(d)) {
            if !summary.devices.iter().any(|(g, _)| g == d) {
                summary.devices.push((*d, *a));
            }
        }
        {
            let r = self.registry();
            for &w in &workers {
                if summary.workers.iter().any(|l| l.id == w) {
                    continue;
                }
                let e = r
                    .workers
                    .get(&w)
                    .ok_or_else(|| format!("worker {w} left before the run started"))?;
                summary.workers.push(WorkerLine {
                    id: w,
                    address: e.address.clone(),
                    island: e.island.clone(),
                    host: e.host.clone(),
                    pid: e.pid,
                    platform: e.platform.clone(),
                    devices: e.devices.iter().map(|d| d.0).collect(),
                });
            }
        }
        let addrs = parts
            .values()
            .next()
            .map(|(p, _)| p.devices.iter().copied().collect())
            .unwrap_or_default();
        Ok(Prepared {
            plan,
            parts,
            workers,
            addrs,
        })
    }

    /// Registers run `run` of `workers`: its events come to the receiver.
    fn open_run(&self, run: u64, workers: &[u32]) -> mpsc::UnboundedReceiver<RunEvent> {
        let (tx, events) = mpsc::unbounded_channel();
        self.inner
            .runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(run, (workers.to_vec(), tx));
        events
    }

    fn close_run(&self, run: u64) {
        self.inner
            .runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&run);
    }

    /// Every executable each part needs: compiled once, shipped where
    /// missing. Each is listed in `summary.executables` with where it came
    /// from (None: the worker had it).
    async fn executables(
        &self,
        parts: &BTreeMap<u32, (Part, Work)>,
        summary: &mut RunSummary,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<BTreeMap<u32, Vec<Key>>, String> {
        let mut keys: BTreeMap<u32, Vec<Key>> = BTreeMap::new();
        for (&w, (_, work)) in parts {
            let (plugin, mut client, loaded) = self.worker_handle(w)?;
            let mut worker_keys = Vec::with_capacity(work.needs.len());
            for need in &work.needs {
                let key = key_of(need, &plugin).map_err(|e| e.to_string())?;
                worker_keys.push(key);
                if loaded.contains(&key)
                    || summary
                        .executables
                        .iter()
                        .any(|e| e.worker == w && e.key == key.hex())
                {
                    summary.executables.push(ExecutableLine {
                        what: need.what.clone(),
                        devices: need.devices.clone(),
                        worker: w,
                        key: key.hex(),
                        source: None,
                    });
                    continue;
                }
                let (bytes, source) = {
                    let mut compiler = self.inner.compiler.lock().await;
                    compiler
                        .get(need, key, &plugin, (w, &mut client))
                        .await
                        .map_err(|e| {
                            format!(
                                "error: compiling {} for devices {:?} failed: {e}",
                                need.what, need.devices
                            )
                        })?
                };
                if matches!(source, Source::Controller | Source::Worker(_)) {
                    progress(format!(
                        "compiled {} for devices {:?} ({source})",
                        need.what, need.devices
                    ));
                }
                if source != Source::Worker(w) {
                    compile::ship(&mut client, key, &bytes).await.map_err(|e| {
                        format!("error: worker {w} could not load {}: {e}", need.what)
                    })?;
                    self.inner
                        .counters
                        .executables_shipped
                        .fetch_add(1, Ordering::Relaxed);
                    self.inner
                        .counters
                        .bytes_shipped
                        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
                }
                if let Some(e) = self.registry().workers.get_mut(&w) {
                    e.loaded.insert(key);
                }
                summary.executables.push(ExecutableLine {
                    what: need.what.clone(),
                    devices: need.devices.clone(),
                    worker: w,
                    key: key.hex(),
                    source: Some(source),
                });
            }
            keys.insert(w, worker_keys);
        }
        Ok(keys)
    }

    /// Uploads host arrays as values of owner `run`, each shard to the
    /// worker of its device; returns the bytes sent to each worker.
    async fn upload(
        &self,
        run: u64,
        prepared: &Prepared,
        inputs: &[(usize, &HostArray)],
    ) -> Result<BTreeMap<u32, u64>, String> {
        let mut put_bytes: BTreeMap<u32, u64> = BTreeMap::new();
        let mut puts = Vec::new();
        for &(id, host) in inputs {
            let value = &prepared.plan.values[id];
            let regions: Vec<_> = (0..value.devices.len()).map(|p| value.region(p)).collect();
            let shards = crate::host::split(host, &regions).map_err(|e| e.to_string())?;
            for (position, (device, shard)) in value.devices.iter().zip(shards).enumerate() {
                let addr = prepared
                    .addrs
                    .get(device)
                    .copied()
                    .ok_or_else(|| format!("device {device} has no worker"))?;
                *put_bytes.entry(addr.worker).or_default() += shard.bytes().len() as u64;
                let (_, client, _) = self.worker_handle(addr.worker)?;
                puts.push(put(client, run, id, position, addr, shard));
            }
        }
        for outcome in futures::future::join_all(puts).await {
            outcome?;
        }
        Ok(put_bytes)
    }

    /// Sends every worker all its steps in one message; the parts of one
    /// run go out together (gang order). Returns when (from `t0`); the
    /// first time a worker is sent a part goes into `summary.part_sent`. `bindings` names, per worker, the
    /// inputs it takes from and the outputs it leaves in a session.
    #[allow(clippy::too_many_arguments)]
    async fn dispatch(
        &self,
        run: u64,
        prepared: &Prepared,
        keys: &BTreeMap<u32, Vec<Key>>,
        record: bool,
        bindings: &HashMap<u32, (Vec<proto::Binding>, Vec<proto::Binding>)>,
        summary: &mut RunSummary,
        t0: Instant,
    ) -> Result<Duration, String> {
        let peers: HashMap<u32, proto::PeerAddress> = {
            let r = self.registry();
            prepared
                .parts
                .keys()
                .filter_map(|w| {
                    r.workers.get(w).map(|e| {
                        (
                            *w,
                            proto::PeerAddress {
                                service: e.address.clone(),
                                data: e.data_address.clone(),
                            },
                        )
                    })
                })
                .collect()
        };
        let mut sends = Vec::new();
        for (&w, (part, _)) in &prepared.parts {
            let (_, mut client, _) = self.worker_handle(w)?;
            let (inputs_from, outputs_to) = bindings.get(&w).cloned().unwrap_or_default();
            let request = proto::ExecuteRequest {
                run,
                part: postcard::to_allocvec(part).map_err(|e| e.to_string())?,
                executables: keys[&w].iter().map(Key::hex).collect(),
                record,
                peers: peers.clone(),
                inputs_from,
                outputs_to,
            };
            sends.push(async move {
                client
                    .execute(request)
                    .await
                    .map(|_| ())
                    .map_err(|s| format!("error: worker {w} refused its part: {}", s.message()))
            });
        }
        let _order = self.inner.dispatch.lock().await;
        let sent = t0.elapsed();
        for w in prepared.parts.keys() {
            if !summary.part_sent.iter().any(|(p, _)| p == w) {
                summary.part_sent.push((*w, sent));
            }
        }
        for outcome in futures::future::join_all(sends).await {
            outcome?;
        }
        Ok(sent)
    }

    /// Waits for every part. The first failure (in schedule order among
    /// those reported together) is the cause; a worker lost meanwhile is
    /// the cause (a failed send to it is only a symptom). With `settle`
    /// (a run that may recover), a loss waits, until then at the latest,
    /// for the surviving parts to end and report what they keep; without,
    /// it stops at once. Returns every part's report.
    async fn wait_parts(
        &self,
        prepared: &Prepared,
        events: &mut mpsc::UnboundedReceiver<RunEvent>,
        deadline: Instant,
        settle: Option<Instant>,
        t0: Instant,
        summary: &mut RunSummary,
    ) -> Result<BTreeMap<u32, proto::PartDone>, Stop> {
        let parts = &prepared.parts;
        // Worker `w` was lost, having done `done` of its part's steps.
        let lost = |w: u32, why: &str, done: Option<u32>| {
            let steps = parts
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
            format!("error: {why}{at}")
        };
        let mut pending: Vec<u32> = parts.keys().copied().collect();
        let mut reports = BTreeMap::new();
        let mut failures: Vec<(Option<u32>, String)> = Vec::new();
        let mut losses: Vec<(u32, String)> = Vec::new();
        let mut noticed = Duration::ZERO;
        // Once something failed: how long to wait for the other parts.
        let mut until: Option<Instant> = None;
        while !pending.is_empty() {
            let wait = until.map_or(deadline, |u| u.min(deadline));
            match tokio::time::timeout_at(wait.into(), events.recv()).await {
                Err(_) if until.is_some() => break,
                Err(_) => {
                    return Err(Stop::failed(format!(
                    "error: the run did not finish within {:?} (waiting for workers {pending:?})",
                    deadline - t0
                )))
                }
                Ok(None) => {
                    return Err(Stop::failed("error: the run's event channel closed".into()))
                }
                Ok(Some(RunEvent::Lost(w, why, done))) => {
                    if losses.is_empty() {
                        noticed = t0.elapsed();
                    }
                    pending.retain(|p| *p != w);
                    losses.push((w, lost(w, &why, done)));
                    match settle {
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
        if let Some((_, message)) = losses.first() {
            return Err(Stop {
                message: message.clone(),
                lost: losses.iter().map(|l| l.0).collect(),
                noticed,
                reports,
            });
        }
        if !failures.is_empty() {
            failures.sort_by_key(|(step, _)| step.unwrap_or(u32::MAX));
            return Err(Stop::failed(format!("error: {}", failures.remove(0).1)));
        }
        Ok(reports)
    }

    /// Fetches value `key` of owner `owner` (a run's value, a session's
    /// array), laid out as `value`: one replica of each tile, from the
    /// worker holding it. Returns it and the bytes each worker sent.
    async fn fetch_value(
        &self,
        owner: u64,
        key: usize,
        value: &pw_core::plan::ValueInfo,
        addrs: &HashMap<i64, pw_core::plan::DeviceAddr>,
    ) -> Result<(HostArray, BTreeMap<u32, u64>), String> {
        let regions: Vec<_> = (0..value.devices.len()).map(|p| value.region(p)).collect();
        let mut wanted = Vec::new();
        for (position, region) in regions.iter().enumerate() {
            if regions[..position].contains(region) {
                continue;
            }
            let addr = addrs
                .get(&value.devices[position])
                .copied()
                .ok_or("its device has no worker")?;
            let (_, client, _) = self.worker_handle(addr.worker)?;
            wanted.push(fetch(client, owner, key, position, addr.worker));
        }
        let mut bytes: HashMap<usize, Vec<u8>> = HashMap::new();
        let mut fetched: BTreeMap<u32, u64> = BTreeMap::new();
        for got in futures::future::join_all(wanted).await {
            let (position, worker, data) = got?;
            *fetched.entry(worker).or_default() += data.len() as u64;
            bytes.insert(position, data);
        }
        let shape: Vec<usize> = value.shape.iter().map(|&d| d as usize).collect();
        let host = crate::host::assemble(value.dtype, &shape, &regions, |p| Ok(bytes.remove(&p)))
            .map_err(|e| e.to_string())?;
        Ok((host, fetched))
    }

    /// A worker's plugin identity, a client to it and what it has loaded.
    fn worker_handle(
        &self,
        worker: u32,
    ) -> Result<
        (
            String,
            proto::worker_client::WorkerClient<tonic::transport::Channel>,
            std::collections::HashSet<Key>,
        ),
        String,
    > {
        let r = self.registry();
        let e = r
            .workers
            .get(&worker)
            .ok_or_else(|| format!("error: worker {worker} is gone"))?;
        Ok((e.plugin.clone(), e.client.clone(), e.loaded.clone()))
    }

    /// Tells every worker of the run (or session) to drop it (bounded: a
    /// worker that does not answer within 2 s is left to its own clean-up).
    async fn release(&self, run: u64, workers: &[u32], why: &str) {
        self.release_arrays(run, workers, why, &[]).await
    }

    /// Tells `workers` to drop `arrays` of owner `owner`, or all of it when
    /// `arrays` is empty. Single arrays are dropped in gang order (sent
    /// under the dispatch lock, done in each worker's turn order), so that
    /// parts sent earlier still find them.
    async fn release_arrays(&self, owner: u64, workers: &[u32], why: &str, arrays: &[u64]) {
        let _order = if arrays.is_empty() {
            None
        } else {
            Some(self.inner.dispatch.lock().await)
        };
        let mut calls = Vec::new();
        for &w in workers {
            if let Ok((_, mut client, _)) = self.worker_handle(w) {
                let request = proto::ReleaseRequest {
                    run: owner,
                    reason: why.to_owned(),
                    arrays: arrays.to_vec(),
                };
                calls.push(async move {
                    let _ =
                        tokio::time::timeout(Duration::from_secs(2), client.release(request)).await;
                });
            }
        }
        futures::future::join_all(calls).await;
    }
}

/// Checks the inputs against the plan before anything is sent.
fn check_inputs(plan: &Plan, inputs: &[HostArray]) -> Result<(), String> {
    if inputs.len() != plan.inputs.len() {
        return Err(format!(
            "error: the program takes {} inputs, {} given",
            plan.inputs.len(),
            inputs.len()
        ));
    }
    for (i, (&id, host)) in plan.inputs.iter().zip(inputs).enumerate() {
        let want = &plan.values[id];
        let shape: Vec<i64> = host.shape().iter().map(|&d| d as i64).collect();
        if host.dtype() != want.dtype || shape != want.shape {
            return Err(format!(
                "error: input #{i} is {}{:?}, but the program expects {}",
                host.dtype(),
                host.shape(),
                want.describe()
            ));
        }
    }
    Ok(())
}

/// Uploads one input shard.
async fn put(
    mut client: proto::worker_client::WorkerClient<tonic::transport::Channel>,
    run: u64,
    value: usize,
    position: usize,
    addr: pw_core::plan::DeviceAddr,
    shard: Arc<HostArray>,
) -> Result<(), String> {
    let t = proto::ArrayType::of(shard.dtype(), shard.shape());
    let data = bytes::Bytes::copy_from_slice(shard.bytes());
    let messages: Vec<proto::PutRequest> = wire::chunks(data)
        .into_iter()
        .map(|chunk| proto::PutRequest {
            run,
            value: value as u32,
            position: position as u32,
            local_device: addr.local,
            r#type: Some(t.clone()),
            chunk: Some(chunk),
        })
        .collect();
    client
        .put(tokio_stream::iter(messages))
        .await
        .map(|_| ())
        .map_err(|s| {
            format!(
                "error: worker {} did not take an input shard: {}",
                addr.worker,
                s.message()
            )
        })
}

/// Fetches one output shard: (position, worker, bytes).
async fn fetch(
    mut client: proto::worker_client::WorkerClient<tonic::transport::Channel>,
    run: u64,
    value: usize,
    position: usize,
    worker: u32,
) -> Result<(usize, u32, Vec<u8>), String> {
    let failed =
        |why: String| format!("error: fetching an output shard from worker {worker}: {why}");
    let mut stream = client
        .fetch(proto::FetchRequest {
            run,
            value: value as u32,
            position: position as u32,
        })
        .await
        .map_err(|s| failed(s.message().to_owned()))?
        .into_inner();
    let first = stream
        .message()
        .await
        .map_err(|s| failed(s.message().to_owned()))?
        .ok_or_else(|| failed("no reply".into()))?;
    let limit = first
        .r#type
        .as_ref()
        .ok_or_else(|| failed("no type".into()))?
        .read(u64::MAX)
        .map_err(|e| failed(e.0))?
        .2;
    let head = first
        .chunk
        .as_ref()
        .ok_or_else(|| failed("no chunk".into()))?;
    let mut collect =
        wire::Collect::new(head, limit, Some(limit), "an output shard").map_err(|e| failed(e.0))?;
    let mut done = collect.push(head).map_err(|e| failed(e.0))?;
    while done.is_none() {
        let next = stream
            .message()
            .await
            .map_err(|s| failed(s.message().to_owned()))?
            .ok_or_else(|| failed(collect.truncated().0))?;
        let chunk = next.chunk.ok_or_else(|| failed("no chunk".into()))?;
        done = collect.push(&chunk).map_err(|e| failed(e.0))?;
    }
    Ok((position, worker, done.unwrap_or_default()))
}

/// Puts the reports of a replayed round (from `from` on) in terms of the
/// whole plan: step positions of the replay become the plan's indices.
fn remap_reports(summary: &mut RunSummary, from: usize, original: Option<&[usize]>) {
    let Some(original) = original else { return };
    for report in summary.parts.iter_mut().skip(from) {
        for (index, _) in &mut report.steps {
            if let Some(&o) = original.get(*index) {
                *index = o;
            }
        }
    }
}
