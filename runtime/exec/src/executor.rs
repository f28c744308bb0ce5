//! The executor: enqueues one worker's part of a run on its PJRT devices.
//!
//! The steps are walked once, in schedule order, on the calling thread:
//! each is enqueued as soon as the host reaches it. PJRT buffers carry their
//! own readiness, so a step whose inputs are still being computed (or still
//! arriving from another worker) is queued behind them by the plugin, and
//! the host runs ahead of the devices. Every device receives its work in the
//! one schedule order (gang order).
//!
//! Transfers follow the plan ([`Work`]): a piece that is a whole shard is one
//! device-to-device copy (or none on the same device); other pieces are cut
//! on the source device and placed into the destination shard on the
//! destination device. A piece from another worker arrives through
//! [`Peers::receive`], which hands back the destination buffer before its
//! bytes arrive; a piece for another worker leaves through [`Peers::send`]
//! once its buffer is ready. A piece that cannot come fails its step, and
//! its buffer is filled with zeros rather than failed: with one partition's
//! input failed, the CPU plugin runs the other partitions of a
//! multi-device execution into a collective that never completes (and
//! aborts the process after 40 s). What was computed from such a piece is
//! *tainted* ([`Enqueued::tainted`]): never kept, never sent (see
//! `dataplane::Spoiled`).
//!
//! A value's buffers are released after the last step of the part that
//! reads it, and an argument is donated to a call that aliases it only when
//! no one else holds it (a pending send holds it too).

use crate::{
    cache::Executable,
    error::{Error, Result},
    host::HostArray,
    sidecar::{self, Sidecar},
    work::{Source, StepWork, Work},
};
use pw_core::plan::{Part, StepKind, ValueId};
use pw_core::DType;
use pw_pjrt::{Buffer, Client, Device, Event, ExecuteOptions};
use std::{
    collections::HashMap,
    sync::{Arc, Condvar, Mutex},
    time::{Duration, Instant},
};

/// A value's shards on this worker: one slot per mesh position (positions
/// on other workers, and those a partial value lacks, are `None`).
pub type Shards = Vec<Option<Arc<Buffer>>>;

/// Names one piece of one run: its step (index in the plan) and its index
/// in the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PieceKey {
    pub run: u64,
    pub step: u32,
    pub piece: u32,
}

/// The data plane, as the executor sees it.
pub trait Peers: Sync {
    /// A buffer of `dtype[dims]` on `device` that piece `key`, sent by
    /// worker `from`, will fill; usable (by later steps) at once. The
    /// completion says whether the piece landed (else the buffer holds
    /// zeros).
    fn receive(
        &self,
        key: PieceKey,
        from: u32,
        dtype: DType,
        dims: &[usize],
        device: &Device,
    ) -> Result<(Buffer, Completion)>;

    /// Sends `buffer`, once it is ready, as piece `key` to worker `to`.
    fn send(&self, key: PieceKey, to: u32, buffer: Arc<Buffer>) -> Result<Completion>;
}

/// The peers of a part that has none: everything is local.
pub struct NoPeers;

impl Peers for NoPeers {
    fn receive(
        &self,
        key: PieceKey,
        from: u32,
        _: DType,
        _: &[usize],
        _: &Device,
    ) -> Result<(Buffer, Completion)> {
        Err(Error::NoPeers {
            piece: format!("{key:?}"),
            worker: from,
        })
    }

    fn send(&self, key: PieceKey, to: u32, _: Arc<Buffer>) -> Result<Completion> {
        Err(Error::NoPeers {
            piece: format!("{key:?}"),
            worker: to,
        })
    }
}

/// A send's outcome: done, or why not.
pub type Outcome = std::result::Result<(), String>;

/// Completes once, with an [`Outcome`].
#[derive(Clone, Default)]
pub struct Completion {
    state: Arc<(Mutex<Option<Outcome>>, Condvar)>,
}

impl Completion {
    pub fn new() -> Completion {
        Completion::default()
    }

    /// Completes it (the first outcome wins).
    pub fn complete(&self, outcome: Outcome) {
        let (lock, ready) = &*self.state;
        let mut slot = lock.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(outcome);
            ready.notify_all();
        }
    }

    /// Whether it has completed.
    pub fn is_done(&self) -> bool {
        self.state.0.lock().map(|s| s.is_some()).unwrap_or(true)
    }

    /// Blocks until it completes, at most `timeout`.
    pub fn wait(&self, timeout: Duration) -> Outcome {
        let (lock, ready) = &*self.state;
        let slot = lock.lock().unwrap_or_else(|e| e.into_inner());
        let (slot, _) = ready
            .wait_timeout_while(slot, timeout, |s| s.is_none())
            .unwrap_or_else(|e| e.into_inner());
        slot.clone()
            .unwrap_or_else(|| Err(format!("not done after {timeout:?}")))
    }
}

/// What completes with a step on one device.
pub enum Done {
    /// Device work: an execution, a copy, a buffer made ready.
    Event(Event),
    /// A piece sent to another worker or received from one, or a call a
    /// sidecar ran.
    Piece(Completion),
}

impl Done {
    /// Whether it has completed (a failure counts as complete), without
    /// blocking.
    pub fn is_done(&self) -> bool {
        match self {
            Done::Event(e) => e.is_ready().unwrap_or(true),
            Done::Piece(c) => c.is_done(),
        }
    }

    /// Whether it completed well: None while it has not completed.
    fn succeeded(&self) -> Option<bool> {
        self.is_done().then(|| self.wait(Duration::ZERO).is_ok())
    }

    fn wait(&self, send_timeout: Duration) -> Result<()> {
        match self {
            Done::Event(e) => Ok(e.wait()?),
            Done::Piece(c) => c.wait(send_timeout).map_err(Error::Piece),
        }
    }
}

/// What completes with each step of a part (per step, per device), shared
/// so that progress can be read while a waiter waits.
#[derive(Clone)]
pub struct Completions(Arc<Vec<Vec<(i64, Done)>>>);

impl Completions {
    /// What completes with the step at `position` in the part, per device
    /// (None: no such step).
    pub fn step(&self, position: usize) -> Option<&[(i64, Done)]> {
        self.0.get(position).map(Vec::as_slice)
    }

    /// Whether every step is complete (or failed).
    pub fn all_done(&self) -> bool {
        self.done_prefix(0) == self.0.len()
    }

    /// How many steps, from the first, are complete: scans on from `from`
    /// (a count read before), without blocking.
    pub fn done_prefix(&self, from: usize) -> usize {
        let mut n = from.min(self.0.len());
        while n < self.0.len() && self.0[n].iter().all(|(_, d)| d.is_done()) {
            n += 1;
        }
        n
    }

    /// Waits for steps `from..to` (blocking on the last first); the first
    /// failure among them, as `(step position, error)`.
    pub fn wait_range(
        &self,
        from: usize,
        to: usize,
        send_timeout: Duration,
    ) -> std::result::Result<(), (usize, Error)> {
        let to = to.min(self.0.len());
        if from >= to {
            return Ok(());
        }
        for (_, d) in &self.0[to - 1] {
            let _ = d.wait(send_timeout);
        }
        for (i, step) in self.0.iter().enumerate().take(to).skip(from) {
            for (_, d) in step {
                d.wait(send_timeout).map_err(|e| (i, e))?;
            }
        }
        Ok(())
    }

    /// Waits for every step; the first failure in schedule order, as
    /// `(step position in the part, error)` (later failures usually inherit
    /// it through their inputs). It blocks on the last step first, so it
    /// wakes about once rather than once a step. Sends wait at most
    /// `send_timeout` each.
    pub fn wait(&self, send_timeout: Duration) -> std::result::Result<(), (usize, Error)> {
        if let Some(last) = self.0.last() {
            for (_, d) in last {
                let _ = d.wait(send_timeout);
            }
        }
        let mut first = None;
        for (i, step) in self.0.iter().enumerate() {
            for (_, d) in step {
                if let Err(e) = d.wait(send_timeout) {
                    first.get_or_insert((i, e));
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

pub use pw_core::report::StepTiming;

/// A part, enqueued: what is left of its values (the outputs, and whatever
/// the part never frees), and what completes with each step.
pub struct Enqueued {
    pub values: Vec<Option<Shards>>,
    /// Values the part is done with but whose readers may not have
    /// completed, with the position of their last reader: kept until it
    /// has, so that after a failure they can be read again (lineage, see
    /// [`Enqueued::settle`]). PJRT keeps a buffer until its readers ran
    /// anyway, so this holds no device memory longer; it is not counted
    /// in `peak_bytes`. Donated values are not kept.
    pub retained: Vec<(ValueId, Shards, usize)>,
    /// Per step of the part: what completes with it, per device.
    pub done: Completions,
    /// When the host had enqueued every step (from `t0`).
    pub enqueued: Duration,
    pub timings: Vec<StepTiming>,
    /// Completion times filled in by callbacks, when recorded.
    done_times: DoneTimes,
    /// When recorded: the most bytes of buffers this part held at once, per
    /// device (plan device id).
    pub peak_bytes: std::collections::BTreeMap<i64, u64>,
}

/// The bytes of the buffers a part holds, per device, and the most it has
/// held: a buffer counts from when a value holding it is made until the
/// last value holding it is released (values share buffers: assembled
/// arrays hold their parts').
#[derive(Default)]
struct LiveBytes {
    /// By buffer address: (device, bytes, values holding it).
    held: HashMap<usize, (i64, u64, usize)>,
    live: std::collections::BTreeMap<i64, u64>,
    peak: std::collections::BTreeMap<i64, u64>,
}

impl LiveBytes {
    fn hold(&mut self, part: &Part, id: ValueId, shards: &Shards) {
        for (position, buffer) in shards.iter().enumerate() {
            let (Some(buffer), Some(&device)) = (buffer, part.values[id].devices.get(position))
            else {
                continue;
            };
            let entry = self
                .held
                .entry(Arc::as_ptr(buffer) as usize)
                .or_insert_with(|| (device, buffer.on_device_size().unwrap_or(0) as u64, 0));
            entry.2 += 1;
            if entry.2 == 1 {
                let live = self.live.entry(device).or_default();
                *live += entry.1;
                let peak = self.peak.entry(device).or_default();
                *peak = (*peak).max(*live);
            }
        }
    }

    fn release(&mut self, shards: &Shards) {
        for buffer in shards.iter().flatten() {
            let key = Arc::as_ptr(buffer) as usize;
            let Some(entry) = self.held.get_mut(&key) else {
                continue;
            };
            entry.2 -= 1;
            if entry.2 == 0 {
                let (device, bytes, _) = *entry;
                self.held.remove(&key);
                let live = self.live.entry(device).or_default();
                *live = live.saturating_sub(bytes);
            }
        }
    }
}

/// When each device finished each step, filled in by completion callbacks
/// (which notify the condition variable).
type DoneTimes = Arc<(Mutex<Vec<Vec<(i64, Option<Duration>)>>>, Condvar)>;

impl Enqueued {
    /// The values of `part` computed from a step that failed (a piece that
    /// did not come, an execution that failed): its results and everything
    /// computed from them. Call once the part settled.
    pub fn tainted(&self, part: &Part) -> std::collections::HashSet<ValueId> {
        let mut tainted = std::collections::HashSet::new();
        for (i, s) in part.steps.iter().enumerate() {
            let failed = self
                .done
                .step(i)
                .is_some_and(|d| d.iter().any(|(_, d)| d.succeeded() != Some(true)));
            if failed || s.step.reads().iter().any(|v| tainted.contains(v)) {
                tainted.extend(s.step.writes());
            }
        }
        tainted
    }

    /// Waits for every step (see [`Completions::wait`]), dropping each
    /// retained value once every reader of it has completed. After a
    /// failure, `retained` keeps the values some reader of which failed or
    /// never ran (with the steps before them done, they are good).
    pub fn settle(&mut self, send_timeout: Duration) -> std::result::Result<(), (usize, Error)> {
        let mut kept = std::collections::VecDeque::from(std::mem::take(&mut self.retained));
        let mut ok = 0;
        while let Some(&(_, _, last)) = kept.front() {
            if self.done.wait_range(ok, last + 1, send_timeout).is_err() {
                break;
            }
            ok = last + 1;
            while kept.front().is_some_and(|k| k.2 < ok) {
                kept.pop_front();
            }
        }
        let outcome = self.done.wait(send_timeout);
        if outcome.is_ok() {
            kept.clear();
        }
        self.retained = kept.into();
        outcome
    }

    /// The step timings with the recorded completion times. After a
    /// successful `wait`, `settle` waits (at most a second) for
    /// every completion's callback, which can run just after its event is
    /// ready; a failed part's later steps never complete, so without it
    /// the times recorded so far are taken.
    pub fn timings(&self, settle: bool) -> Vec<StepTiming> {
        let (times, recorded) = &*self.done_times;
        let mut times = times.lock().unwrap_or_else(|e| e.into_inner());
        if settle {
            // Woken by each callback as it records (no polling, which
            // would add its period to every traced part).
            let deadline = std::time::Instant::now() + Duration::from_secs(1);
            while !times.iter().flatten().all(|(_, done)| done.is_some()) {
                let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else {
                    break;
                };
                times = recorded
                    .wait_timeout(times, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        let mut timings = self.timings.clone();
        for (timing, done) in timings.iter_mut().zip(times.iter()) {
            timing.done = done.clone();
        }
        timings
    }
}

/// What completes with one step on each device, and the values it donated.
type StepEnqueued = (Vec<(i64, Done)>, Vec<ValueId>);

/// Called before each step is enqueued, with its plan index and its
/// position in the part.
pub type StepHook = Arc<dyn Fn(usize, usize) + Send + Sync>;

/// Enqueues parts on one PJRT client.
pub struct Executor {
    client: Client,
    devices: HashMap<u32, Device>,
    /// For fault injection in tests (`pw-worker`'s `PW_WORKER_FAULTS`).
    pub before_step: Option<StepHook>,
    /// Keep values until their readers completed ([`Enqueued::retained`]):
    /// on workers, whose runs can recover.
    pub retain: bool,
}

impl Executor {
    pub fn new(client: &Client) -> Self {
        let devices = client
            .addressable_devices()
            .into_iter()
            .map(|d| (d.id() as u32, d))
            .collect();
        Self {
            client: client.clone(),
            devices,
            before_step: None,
            retain: false,
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The local device behind the plan's device `id`.
    pub fn device(&self, part: &Part, id: i64) -> Result<&Device> {
        part.addr(id)
            .filter(|a| a.worker == part.worker)
            .and_then(|a| self.devices.get(&a.local))
            .ok_or(Error::NoDevice { device: id })
    }

    /// Enqueues every step of `part` (see the module doc). `values` holds the
    /// part's inputs (by value id); `executables[i]` is `work.needs[i]`,
    /// compiled. Python functions go to `sidecar` (the session's). Completion
    /// times are recorded when `record` (one callback per step and device).
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &self,
        run: u64,
        part: &Part,
        work: &Work,
        executables: &[Executable],
        mut values: Vec<Option<Shards>>,
        peers: &dyn Peers,
        sidecar: Option<&Sidecar>,
        t0: Instant,
        record: bool,
    ) -> Result<Enqueued> {
        if work.steps.len() != part.steps.len() || executables.len() != work.needs.len() {
            return Err(Error::Inconsistent {
                step: format!("part of run {run}"),
                what: "the part's work and executables do not match it",
            });
        }
        values.resize(part.values.len(), None);
        let done_times: DoneTimes = Arc::new((
            Mutex::new(part.steps.iter().map(|_| Vec::new()).collect()),
            Condvar::new(),
        ));
        let mut timings = Vec::with_capacity(part.steps.len());
        let mut done_all = Vec::with_capacity(part.steps.len());
        let mut live = LiveBytes::default();
        let mut retained = std::collections::VecDeque::new();
        let mut in_flight = InFlight::default();
        let mut ok = 0;
        if record {
            for (id, shards) in values.iter().enumerate() {
                if let Some(shards) = shards {
                    live.hold(part, id, shards);
                }
            }
        }
        for (index, (s, step_work)) in part.steps.iter().zip(&work.steps).enumerate() {
            let step = &s.step;
            if let Some(hook) = &self.before_step {
                hook(s.index, index);
            }
            tracing::trace!(step = %step.label, devices = ?step.devices, "enqueue");
            let enqueue_start = t0.elapsed();
            let key = |piece: usize| PieceKey {
                run,
                step: s.index as u32,
                piece: piece as u32,
            };
            let at = StepAt {
                part,
                step,
                executables,
                peers,
                sidecar,
                key: &key,
            };
            let (done, donated) = self
                .enqueue_step(&at, step_work, &mut values, &mut in_flight)
                .map_err(|e| match e {
                    Error::Pjrt(_) | Error::Piece(_) | Error::NoPeers { .. } => Error::Step {
                        step: step.label.clone(),
                        devices: step.devices.clone(),
                        source: Box::new(e),
                    },
                    other => other,
                })?;
            if record {
                for (device, d) in &done {
                    let Done::Event(event) = d else { continue };
                    let times = done_times.clone();
                    let device = *device;
                    let slot = {
                        let mut t = times.0.lock().unwrap_or_else(|e| e.into_inner());
                        t[index].push((device, None));
                        t[index].len() - 1
                    };
                    event.on_ready(move |_| {
                        let (t, recorded) = &*times;
                        if let Ok(mut t) = t.lock() {
                            t[index][slot].1 = Some(t0.elapsed());
                        }
                        recorded.notify_all();
                    })?;
                }
            }
            done_all.push(done);
            if record {
                for v in step.writes() {
                    if let Some(shards) = &values[v] {
                        live.hold(part, v, shards);
                    }
                }
            }
            for v in &step.frees {
                if let Some(shards) = values[*v].take() {
                    if record {
                        live.release(&shards);
                    }
                    if self.retain && !donated.contains(v) {
                        retained.push_back((*v, shards, index));
                    }
                }
            }
            release_completed(&mut retained, &done_all, &mut ok);
            timings.push(StepTiming {
                enqueue_start,
                enqueue_end: t0.elapsed(),
                done: Vec::new(),
            });
        }
        let enqueued = t0.elapsed();
        tracing::debug!(steps = part.steps.len(), ?enqueued, "every step enqueued");
        Ok(Enqueued {
            values,
            retained: retained.into(),
            done: Completions(Arc::new(done_all)),
            enqueued,
            timings,
            done_times,
            peak_bytes: live.peak,
        })
    }

    /// Enqueues one step; returns what completes with it, and the values it
    /// donated.
    fn enqueue_step(
        &self,
        at: &StepAt,
        work: &StepWork,
        values: &mut [Option<Shards>],
        in_flight: &mut InFlight,
    ) -> Result<StepEnqueued> {
        let step = at.step;
        match (&step.kind, work) {
            (StepKind::Call { args, results, .. }, StepWork::Call { need }) => {
                match &at.executables[*need] {
                    Executable::Xla(_) => at.call(args, results, *need, values, in_flight),
                    Executable::Python(program) => at.python(self, program, args, results, values),
                }
            }
            (
                StepKind::Copy {
                    input,
                    output,
                    pieces,
                },
                StepWork::Copy { targets, sends },
            ) => {
                let copy = Copy {
                    at,
                    input: *input,
                    pieces,
                };
                let mut done = copy.send(sends, values, in_flight)?;
                let written = copy.receive(self, targets, *output, values, in_flight, &mut done)?;
                values[*output] = Some(written);
                Ok((done, Vec::new()))
            }
            (StepKind::Assemble { parts, output }, StepWork::Assemble) => {
                let mut shards: Shards = vec![None; at.part.values[*output].devices.len()];
                for p in parts {
                    for (slot, buffer) in shards.iter_mut().zip(values[*p].iter().flatten()) {
                        if buffer.is_some() {
                            *slot = buffer.clone();
                        }
                    }
                }
                values[*output] = Some(shards);
                Ok((Vec::new(), Vec::new()))
            }
            _ => Err(at.inconsistent("the work does not match the step")),
        }
    }

    /// The shards of value `id` on this worker's devices, cut from `host`.
    pub fn upload(&self, part: &Part, id: ValueId, host: &HostArray) -> Result<Shards> {
        let value = &part.values[id];
        let shape = crate::host::dims(host.shape());
        if host.dtype() != value.dtype || shape != value.shape {
            return Err(Error::Input {
                index: id,
                given: format!("{}{:?}", host.dtype(), host.shape()),
                expected: value.describe(),
            });
        }
        let regions: Vec<_> = (0..value.devices.len()).map(|p| value.region(p)).collect();
        let parts = crate::host::split(host, &regions)?;
        let mut shards = Vec::with_capacity(value.devices.len());
        for (device, shard) in value.devices.iter().zip(parts) {
            shards.push(if part.is_mine(*device) {
                Some(Arc::new(
                    shard.to_device(&self.client, self.device(part, *device)?)?,
                ))
            } else {
                None
            });
        }
        Ok(shards)
    }
}

/// Reassembles value `id` on the host from the shards this worker holds
/// (all of them, in the embedded case).
pub fn download(part: &Part, id: ValueId, shards: &Shards) -> Result<HostArray> {
    let value = &part.values[id];
    let regions: Vec<_> = (0..value.devices.len()).map(|p| value.region(p)).collect();
    let shape = crate::host::sizes(&pw_core::geometry::Region::full(&value.shape));
    crate::host::assemble(value.dtype, &shape, &regions, |p| {
        shards
            .get(p)
            .cloned()
            .flatten()
            .map(|b| b.to_host())
            .transpose()
            .map_err(Error::from)
    })
}

/// What every part of enqueuing one step reads: its part and step, the
/// part's executables, the run's peers, and the key of each of its pieces.
struct StepAt<'a> {
    part: &'a Part,
    step: &'a pw_core::plan::Step,
    executables: &'a [Executable],
    peers: &'a dyn Peers,
    sidecar: Option<&'a Sidecar>,
    key: &'a dyn Fn(usize) -> PieceKey,
}

impl StepAt<'_> {
    /// The error for what the step needs and does not find (a bug of the
    /// plan or the executor).
    fn inconsistent(&self, what: &'static str) -> Error {
        Error::Inconsistent {
            step: self.step.label.clone(),
            what,
        }
    }

    /// Executable `need`, which must be a PJRT one.
    fn xla(&self, need: usize) -> Result<&pw_pjrt::LoadedExecutable> {
        match self.executables.get(need) {
            Some(Executable::Xla(e)) => Ok(e),
            _ => Err(self.inconsistent("a kernel or call has no PJRT executable")),
        }
    }

    /// Hands a call of Python function `program` to the session's sidecar
    /// (see [`sidecar`]): its results are buffers the sidecar's thread
    /// fills, usable by later steps at once.
    fn python(
        &self,
        executor: &Executor,
        program: &Arc<sidecar::Program>,
        args: &[ValueId],
        results: &[ValueId],
        values: &mut [Option<Shards>],
    ) -> Result<StepEnqueued> {
        let step = self.step;
        let sidecar = self.sidecar.ok_or_else(|| {
            Error::Sidecar(format!(
                "{}: a Python function runs in a sidecar, and this run has none (it is not a \
             session's, or the worker or pw-run was started without --sidecar-python)",
                step.label
            ))
        })?;
        let mut inputs = Vec::with_capacity(args.len());
        for &arg in args {
            let info = &self.part.values[arg];
            let shards = values[arg]
                .as_ref()
                .ok_or_else(|| self.inconsistent("an argument was released early"))?;
            let shards = info
                .devices
                .iter()
                .zip(shards)
                .enumerate()
                .filter_map(|(p, (&d, b))| Some((d, info.region(p), b.clone()?)))
                .collect();
            inputs.push(sidecar::Operand {
                dtype: info.dtype,
                shape: info.shape.clone(),
                shards,
            });
        }
        let mut outputs = Vec::with_capacity(results.len());
        for &result in results {
            let info = &self.part.values[result];
            let mut made: Shards = vec![None; info.devices.len()];
            let mut shards = Vec::new();
            for (p, &device) in info.devices.iter().enumerate() {
                if !self.part.is_mine(device) {
                    continue;
                }
                let region = info.region(p);
                let (transfer, buffer) = executor.client.buffer_for_async_transfer(
                    executor.device(self.part, device)?,
                    info.dtype,
                    &crate::host::sizes(&region),
                )?;
                made[p] = Some(Arc::new(buffer));
                shards.push((device, region, transfer));
            }
            values[result] = Some(made);
            outputs.push(sidecar::Operand {
                dtype: info.dtype,
                shape: info.shape.clone(),
                shards,
            });
        }
        let done = Completion::new();
        sidecar.submit(sidecar::Call {
            program: program.clone(),
            label: step.label.clone(),
            devices: step.devices.clone(),
            inputs,
            outputs,
            done: done.clone(),
        });
        let done = step
            .devices
            .iter()
            .map(|&d| (d, Done::Piece(done.clone())))
            .collect();
        Ok((done, Vec::new()))
    }

    /// Runs transfer kernel `need` on `args` (on `device`): its one output.
    fn kernel(
        &self,
        need: usize,
        args: Vec<&Buffer>,
        device: i64,
        in_flight: &mut InFlight,
    ) -> Result<Arc<Buffer>> {
        in_flight.admit(device);
        let mut run = self.xla(need)?.execute(&[args])?;
        let out = run.outputs.remove(0).remove(0);
        in_flight.push(device, &out);
        Ok(Arc::new(out))
    }

    /// Enqueues a call of executable `need`, SPMD over the step's devices.
    fn call(
        &self,
        args: &[ValueId],
        results: &[ValueId],
        need: usize,
        values: &mut [Option<Shards>],
        in_flight: &mut InFlight,
    ) -> Result<StepEnqueued> {
        let step = self.step;
        let mut lists: Vec<Vec<&Buffer>> = vec![Vec::with_capacity(args.len()); step.devices.len()];
        for arg in args {
            let shards = values[*arg]
                .as_ref()
                .ok_or_else(|| self.inconsistent("an argument was released early"))?;
            for (position, list) in lists.iter_mut().enumerate() {
                let buffer = shards
                    .get(position)
                    .and_then(|b| b.as_deref())
                    .ok_or_else(|| self.inconsistent("an argument shard is missing"))?;
                list.push(buffer);
            }
        }
        let donated = donatable(args, &step.frees, values);
        let options = ExecuteOptions {
            donatable_arguments: donated.clone(),
            ..ExecuteOptions::default()
        };
        let slices: Vec<&[&Buffer]> = lists.iter().map(Vec::as_slice).collect();
        for d in &step.devices {
            in_flight.admit(*d);
        }
        let pw_pjrt::Execution { outputs, done } =
            self.xla(need)?.execute_with(&slices, &options)?;
        for (d, per_device) in step.devices.iter().zip(&outputs) {
            if let Some(first) = per_device.first() {
                in_flight.push(*d, first);
            }
        }
        let mut shards: Vec<Shards> = vec![vec![None; step.devices.len()]; results.len()];
        for (position, per_device) in outputs.into_iter().enumerate() {
            for (i, buffer) in per_device.into_iter().enumerate() {
                if let Some(slot) = shards.get_mut(i).and_then(|s| s.get_mut(position)) {
                    *slot = Some(Arc::new(buffer));
                }
            }
        }
        for (result, shards) in results.iter().zip(shards) {
            values[*result] = Some(shards);
        }
        let done = step
            .devices
            .iter()
            .copied()
            .zip(done.into_iter().map(Done::Event))
            .collect();
        Ok((done, donated.iter().map(|&i| args[i]).collect()))
    }
}

/// A copy step: pieces of `input`'s shards into whole shards of its output.
struct Copy<'a> {
    at: &'a StepAt<'a>,
    input: ValueId,
    pieces: &'a [pw_core::Piece],
}

impl Copy<'_> {
    /// The input's shard at `position`.
    fn shard(&self, values: &[Option<Shards>], position: usize) -> Result<Arc<Buffer>> {
        values[self.input]
            .as_ref()
            .and_then(|s| s.get(position).cloned().flatten())
            .ok_or_else(|| self.at.inconsistent("a copied array was released early"))
    }

    /// The piece of `buffer` that kernel `slice` cuts out (all of it when
    /// None), on `device`.
    fn cut(
        &self,
        buffer: Arc<Buffer>,
        slice: Option<usize>,
        device: i64,
        in_flight: &mut InFlight,
    ) -> Result<Arc<Buffer>> {
        match slice {
            None => Ok(buffer),
            Some(need) => self
                .at
                .kernel(need, vec![buffer.as_ref()], device, in_flight),
        }
    }

    /// Cuts the pieces other workers take and hands them to the peers.
    fn send(
        &self,
        sends: &[crate::work::Send],
        values: &[Option<Shards>],
        in_flight: &mut InFlight,
    ) -> Result<Vec<(i64, Done)>> {
        let mut done = Vec::with_capacity(sends.len());
        for send in sends {
            let piece = &self.pieces[send.piece];
            let shard = self.shard(values, send.position)?;
            let cut = self.cut(shard, send.slice, piece.src_device, in_flight)?;
            let sent = self
                .at
                .peers
                .send((self.at.key)(send.piece), send.worker, cut)?;
            done.push((piece.src_device, Done::Piece(sent)));
        }
        Ok(done)
    }

    /// Makes each destination shard on this worker from its pieces (local,
    /// or received from peers into buffers made now), placed by a kernel
    /// when there are several; what completes goes into `done`.
    fn receive(
        &self,
        executor: &Executor,
        targets: &[crate::work::Target],
        output: ValueId,
        values: &[Option<Shards>],
        in_flight: &mut InFlight,
        done: &mut Vec<(i64, Done)>,
    ) -> Result<Shards> {
        let at = self.at;
        let src = &at.part.values[self.input];
        let mut written: Shards = vec![None; at.part.values[output].devices.len()];
        for target in targets {
            let device = executor.device(at.part, target.device)?;
            let mut arrived = Vec::with_capacity(target.pieces.len());
            for (i, from) in &target.pieces {
                let piece = &self.pieces[*i];
                arrived.push(match from {
                    Source::Local { position, slice } => {
                        let shard = self.shard(values, *position)?;
                        let cut = self.cut(shard, *slice, piece.src_device, in_flight)?;
                        if piece.src_device == target.device {
                            cut
                        } else {
                            Arc::new(cut.copy_to_device(device)?)
                        }
                    }
                    Source::Remote { piece: p, worker } => {
                        let sizes = crate::work::usizes(&piece.sizes);
                        let (buffer, landed) =
                            at.peers
                                .receive((at.key)(*p), *worker, src.dtype, &sizes, device)?;
                        done.push((target.device, Done::Piece(landed)));
                        Arc::new(buffer)
                    }
                });
            }
            let buffer = match target.place {
                None => arrived.remove(0),
                Some(need) => {
                    let args: Vec<&Buffer> = arrived.iter().map(Arc::as_ref).collect();
                    at.kernel(need, args, target.device, in_flight)?
                }
            };
            done.push((target.device, Done::Event(buffer.ready_event()?)));
            written[target.position] = Some(buffer);
        }
        Ok(written)
    }
}

/// Executions enqueued on each device and not known complete. The CPU
/// plugin blocks the enqueuing host at 32 executions in flight on a device,
/// and with multi-device executions among them it can stay blocked after
/// their inputs arrived (the long pipeline of the recovery tests, 64
/// microbatches through two-device stages, hung so), so the host waits for
/// the oldest itself before the plugin would.
#[derive(Default)]
pub(crate) struct InFlight(HashMap<i64, std::collections::VecDeque<Event>>);

impl InFlight {
    /// Below the plugin's 32, with room for a step's transfer kernels.
    const LIMIT: usize = 24;

    /// Returns once one more execution fits on `device`.
    fn admit(&mut self, device: i64) {
        let queue = self.0.entry(device).or_default();
        while queue
            .front()
            .is_some_and(|e| queue.len() >= Self::LIMIT || e.is_ready().unwrap_or(true))
        {
            if let Some(oldest) = queue.pop_front() {
                // Its failure is its step's to report.
                let _ = oldest.wait();
            }
        }
    }

    /// An execution on `device` whose result is `output` was enqueued.
    fn push(&mut self, device: i64, output: &Buffer) {
        if let Ok(e) = output.ready_event() {
            self.0.entry(device).or_default().push_back(e);
        }
    }
}

/// Drops the retained values whose readers all completed: `ok` steps
/// from the first are known to have completed well; it moves on over those
/// that have since, without blocking.
fn release_completed(
    retained: &mut std::collections::VecDeque<(ValueId, Shards, usize)>,
    done: &[Vec<(i64, Done)>],
    ok: &mut usize,
) {
    if retained.is_empty() {
        return;
    }
    while *ok < done.len() && done[*ok].iter().all(|(_, d)| d.succeeded() == Some(true)) {
        *ok += 1;
    }
    while retained.front().is_some_and(|k| k.2 < *ok) {
        retained.pop_front();
    }
}

/// Argument positions a call may donate: the call is the value's last
/// reader, the value appears once, and no other value (or pending send)
/// shares its buffers.
fn donatable(args: &[ValueId], frees: &[ValueId], values: &[Option<Shards>]) -> Vec<usize> {
    args.iter()
        .enumerate()
        .filter(|(_, v)| frees.contains(v) && args.iter().filter(|a| a == v).count() == 1)
        .filter(|(_, v)| {
            values[**v]
                .iter()
                .flatten()
                .flatten()
                .all(|b| Arc::strong_count(b) == 1)
        })
        .map(|(i, _)| i)
        .collect()
}
