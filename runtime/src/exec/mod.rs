//! The executor: runs a lowered pw program on PJRT devices.
//!
//! * Every computation is compiled once per device set, keyed by a hash of
//!   its text and devices, before anything runs ([`Executor::prepare`]);
//!   the small kernels that cut and place pieces of shards too.
//! * The schedule is walked once, in order, on the host: each step is
//!   enqueued as soon as the host reaches it. PJRT buffers carry their own
//!   readiness, so a step whose inputs are still being computed is queued
//!   behind them by the plugin, and the host runs ahead of the devices; it
//!   blocks only when it fetches the outputs. Every device receives its
//!   work in the one schedule order (gang order).
//! * Transfers follow the plan: a piece that is a whole shard is one
//!   device-to-device copy (or no copy on the same device); other pieces are
//!   cut on the source device, copied, and placed into the destination shard
//!   on the destination device. Nothing goes through the host.
//! * A value's buffers are released after the last step that reads it, and
//!   an argument is donated to a computation that aliases it only when no
//!   one else holds it.
//! * A failure is reported with the step that caused it, its devices and
//!   the plugin's message; everything is released on the way out.

pub mod kernels;
pub mod plan;
pub mod resources;
pub mod trace;

use crate::{
    error::Error,
    host::HostArray,
    pjrt::{
        Buffer, Client, CompileOptions, Device, Event, ExecuteOptions, LoadedExecutable, Program,
    },
    sharding::IndexDomain,
};
use plan::{Plan, StepKind, ValueId};
use std::{
    collections::HashMap,
    hash::{DefaultHasher, Hash, Hasher},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};
use trace::{Span, Track};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{0}")]
    Setup(String),
    #[error("compiling {what} for devices {devices:?} failed: {source}")]
    Compile {
        what: String,
        devices: Vec<i64>,
        source: Box<Error>,
    },
    #[error("step {step} on devices {devices:?} failed: {source}")]
    Step {
        step: String,
        devices: Vec<i64>,
        source: Box<Error>,
    },
    #[error("{0}")]
    Runtime(Box<Error>),
}

impl From<Error> for ExecError {
    fn from(e: Error) -> Self {
        ExecError::Runtime(Box::new(e))
    }
}

/// When each device finished each step (steps in schedule order), filled
/// in by completion callbacks.
type DoneTimes = Arc<Mutex<Vec<Vec<(i64, Option<Duration>)>>>>;

/// Compiled executables, keyed by a hash of (text, devices).
#[derive(Default)]
pub struct CompileCache {
    entries: HashMap<u64, Arc<LoadedExecutable>>,
    /// Executables compiled.
    pub compiled: usize,
    /// Requests served from the cache.
    pub hits: usize,
    /// Seconds spent compiling.
    pub seconds: f64,
    /// One span per compilation, for the trace.
    pub spans: Vec<Span>,
}

fn key(text: &str, devices: &[i64]) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    devices.hash(&mut h);
    h.finish()
}

/// When one step was enqueued and when its devices finished it.
#[derive(Debug, Clone, Default)]
pub struct StepTiming {
    pub enqueue_start: Duration,
    pub enqueue_end: Duration,
    /// Per device of the step: when its part was done (None: no device work).
    pub done: Vec<(i64, Option<Duration>)>,
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    /// When the host had enqueued every step.
    pub enqueued: Duration,
    /// When the last output was ready.
    pub outputs_ready: Duration,
    /// When the outputs were on the host.
    pub finished: Duration,
    pub steps: Vec<StepTiming>,
}

/// Runs plans on one PJRT client.
pub struct Executor {
    client: Client,
    devices: HashMap<i64, Device>,
    pub cache: CompileCache,
    /// Record when each device finishes each step (for `--stats` and
    /// traces): one completion callback per step and device.
    pub record_completion: bool,
}

/// A value's shards, one slot per mesh position; copies fill some slots of
/// a partial value.
type Shards = Vec<Option<Arc<Buffer>>>;

/// What a step leaves to be checked: its completion events.
struct Pending {
    events: Vec<(i64, Event)>,
}

impl Executor {
    pub fn new(client: &Client) -> Self {
        let devices = client
            .devices()
            .into_iter()
            .map(|d| (i64::from(d.id()), d))
            .collect();
        Self {
            client: client.clone(),
            devices,
            cache: CompileCache::default(),
            record_completion: false,
        }
    }

    fn device(&self, id: i64) -> Result<&Device, ExecError> {
        self.devices.get(&id).ok_or_else(|| {
            ExecError::Setup(format!(
                "the program uses device {id}, which the PJRT client does not have"
            ))
        })
    }

    fn devices(&self, ids: &[i64]) -> Result<Vec<Device>, ExecError> {
        ids.iter().map(|&id| self.device(id).cloned()).collect()
    }

    /// A compiled executable, without counting a cache hit: for the run,
    /// after `prepare` compiled everything.
    fn compiled(
        &mut self,
        what: &str,
        text: &str,
        devices: &[i64],
        spmd: bool,
    ) -> Result<Arc<LoadedExecutable>, ExecError> {
        match self.cache.entries.get(&key(text, devices)) {
            Some(hit) => Ok(hit.clone()),
            None => self.compile(what, text, devices, spmd, &mut |_| {}),
        }
    }

    /// Compiles `text` for `devices` unless the cache has it.
    fn compile(
        &mut self,
        what: &str,
        text: &str,
        devices: &[i64],
        spmd: bool,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Arc<LoadedExecutable>, ExecError> {
        let k = key(text, devices);
        if let Some(hit) = self.cache.entries.get(&k) {
            self.cache.hits += 1;
            return Ok(hit.clone());
        }
        progress(&format!("compiling {what} for devices {devices:?}"));
        let targets = self.devices(devices)?;
        let first = targets
            .first()
            .ok_or_else(|| ExecError::Setup(format!("{what} has no device")))?;
        let start = Instant::now();
        let options = if spmd {
            CompileOptions::spmd(&targets)
        } else {
            CompileOptions::single_device(first)
        };
        let compiled = options
            .and_then(|o| self.client.compile(&Program::mlir_text(text), &o))
            .map_err(|source| ExecError::Compile {
                what: what.to_owned(),
                devices: devices.to_vec(),
                source: Box::new(source),
            })?;
        let elapsed = start.elapsed();
        tracing::debug!(what, ?devices, seconds = elapsed.as_secs_f64(), "compiled");
        self.cache.seconds += elapsed.as_secs_f64();
        self.cache.compiled += 1;
        self.cache.spans.push(Span {
            name: format!("compile {what}"),
            category: "compile",
            track: Track::Compiler,
            start: Duration::ZERO,
            end: elapsed,
        });
        let compiled = Arc::new(compiled);
        self.cache.entries.insert(k, compiled.clone());
        Ok(compiled)
    }

    /// Compiles everything `plan` needs: each computation once per device
    /// set, and the slice and place kernels of its copies. `progress` hears
    /// of each compilation as it starts.
    pub fn prepare(
        &mut self,
        plan: &Plan,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(), ExecError> {
        for step in &plan.steps {
            match &step.kind {
                StepKind::Call { computation, .. } => {
                    let c = &plan.computations[*computation];
                    if c.num_partitions != step.devices.len() {
                        return Err(ExecError::Setup(format!(
                            "{}: @{} has {} partitions but runs on {} devices",
                            step.label,
                            c.name,
                            c.num_partitions,
                            step.devices.len()
                        )));
                    }
                    self.compile(
                        &format!("@{}", c.name),
                        &c.text,
                        &step.devices,
                        true,
                        progress,
                    )?;
                }
                StepKind::Copy {
                    input,
                    output,
                    pieces,
                } => {
                    for target in copy_work(plan, *input, *output, pieces)? {
                        for (piece, slice) in &target.pieces {
                            if let Some(text) = slice {
                                self.compile(
                                    "a transfer kernel",
                                    text,
                                    &[piece.src_device],
                                    false,
                                    progress,
                                )?;
                            }
                        }
                        if let Some(text) = &target.place {
                            self.compile(
                                "a transfer kernel",
                                text,
                                &[target.device],
                                false,
                                progress,
                            )?;
                        }
                    }
                }
                StepKind::Assemble { .. } => {}
            }
        }
        Ok(())
    }

    /// Runs `plan` on `inputs` (host arrays, in program order); returns the
    /// outputs on the host and the timings. Compiles whatever [`Executor::prepare`]
    /// has not.
    pub fn run(
        &mut self,
        plan: &Plan,
        inputs: &[HostArray],
    ) -> Result<(Vec<HostArray>, RunReport), ExecError> {
        if inputs.len() != plan.inputs.len() {
            return Err(ExecError::Setup(format!(
                "the program takes {} inputs, got {}",
                plan.inputs.len(),
                inputs.len()
            )));
        }
        let t0 = Instant::now();
        let mut values: Vec<Option<Shards>> = vec![None; plan.values.len()];
        for (i, (&id, host)) in plan.inputs.iter().zip(inputs).enumerate() {
            values[id] = Some(self.upload(plan, id, host).map_err(|e| match e {
                ExecError::Runtime(source) => ExecError::Step {
                    step: format!("input #{i}"),
                    devices: plan.values[id].devices.clone(),
                    source,
                },
                other => other,
            })?);
        }
        // Each call's executable, looked up once per computation and device
        // set rather than once per step.
        let mut resolved: HashMap<(usize, &[i64]), Arc<LoadedExecutable>> = HashMap::new();
        let mut executables: Vec<Option<Arc<LoadedExecutable>>> =
            Vec::with_capacity(plan.steps.len());
        for step in &plan.steps {
            executables.push(match &step.kind {
                StepKind::Call { computation, .. } => {
                    let executable = match resolved.entry((*computation, step.devices.as_slice())) {
                        std::collections::hash_map::Entry::Occupied(e) => e.get().clone(),
                        std::collections::hash_map::Entry::Vacant(slot) => {
                            let c = &plan.computations[*computation];
                            let e = self.compiled(
                                &format!("@{}", c.name),
                                &c.text,
                                &step.devices,
                                true,
                            )?;
                            slot.insert(e).clone()
                        }
                    };
                    Some(executable)
                }
                _ => None,
            });
        }
        let done_times: DoneTimes =
            Arc::new(Mutex::new(plan.steps.iter().map(|_| Vec::new()).collect()));
        let mut timings = Vec::with_capacity(plan.steps.len());
        let mut pending: Vec<Pending> = Vec::with_capacity(plan.steps.len());
        for (index, step) in plan.steps.iter().enumerate() {
            tracing::trace!(step = %step.label, devices = ?step.devices, "enqueue");
            let enqueue_start = t0.elapsed();
            let events = self
                .enqueue(plan, step, executables[index].as_deref(), &mut values)
                .map_err(|e| match e {
                    ExecError::Runtime(source) => ExecError::Step {
                        step: step.label.clone(),
                        devices: step.devices.clone(),
                        source,
                    },
                    other => other,
                })?;
            for (device, event) in events.iter().filter(|_| self.record_completion) {
                let times = done_times.clone();
                let device = *device;
                let slot = {
                    let mut t = times
                        .lock()
                        .map_err(|_| ExecError::Setup("timing lock poisoned".into()))?;
                    t[index].push((device, None));
                    t[index].len() - 1
                };
                event.on_ready(move |_| {
                    if let Ok(mut t) = times.lock() {
                        t[index][slot].1 = Some(t0.elapsed());
                    }
                })?;
            }
            pending.push(Pending { events });
            for v in &step.frees {
                values[*v] = None;
            }
            timings.push(StepTiming {
                enqueue_start,
                enqueue_end: t0.elapsed(),
                done: Vec::new(),
            });
        }
        let enqueued = t0.elapsed();
        tracing::debug!(steps = plan.steps.len(), ?enqueued, "every step enqueued");

        // Block only now: wait for the outputs, then fetch them.
        let mut first_failure = None;
        for &id in &plan.outputs {
            for buffer in values[id].iter().flatten().flatten() {
                if let Err(e) = buffer.wait_ready() {
                    first_failure.get_or_insert(e);
                }
            }
        }
        let outputs_ready = t0.elapsed();
        tracing::debug!(?outputs_ready, "outputs ready");
        // Every step's events, in schedule order: the first failure is the
        // cause (later ones inherit it through their inputs).
        for (step, p) in plan.steps.iter().zip(&pending) {
            for (_, event) in &p.events {
                if let Err(source) = event.wait() {
                    return Err(ExecError::Step {
                        step: step.label.clone(),
                        devices: step.devices.clone(),
                        source: Box::new(source),
                    });
                }
            }
        }
        if let Some(source) = first_failure {
            return Err(source.into());
        }
        let mut outputs = Vec::with_capacity(plan.outputs.len());
        for &id in &plan.outputs {
            outputs.push(self.download(plan, id, values[id].as_ref())?);
        }
        let finished = t0.elapsed();
        drop(pending);
        if let Ok(times) = done_times.lock() {
            for (timing, done) in timings.iter_mut().zip(times.iter()) {
                timing.done = done.clone();
            }
        }
        Ok((
            outputs,
            RunReport {
                enqueued,
                outputs_ready,
                finished,
                steps: timings,
            },
        ))
    }

    /// Splits a host array into the shards of value `id` on its devices.
    fn upload(&self, plan: &Plan, id: ValueId, host: &HostArray) -> Result<Shards, ExecError> {
        let value = &plan.values[id];
        if host.dtype() != value.dtype || host.shape() != value.shape.as_slice() {
            return Err(ExecError::Setup(format!(
                "is {}{:?} but the program expects {}{:?}",
                host.dtype(),
                host.shape(),
                value.dtype,
                value.shape
            )));
        }
        let mut cut: HashMap<&Vec<i64>, HostArray> = HashMap::new();
        let mut shards = Vec::with_capacity(value.devices.len());
        for (position, device) in value.devices.iter().enumerate() {
            let offsets = &value.layout.offsets[position];
            if !cut.contains_key(offsets) {
                cut.insert(
                    offsets,
                    host.slice(&domain(offsets, &value.layout.shard_shape))?,
                );
            }
            let part = &cut[offsets];
            let buffer = self.client.buffer_from_host(
                part.bytes(),
                part.dtype(),
                part.shape(),
                self.device(*device)?,
            )?;
            shards.push(Some(Arc::new(buffer)));
        }
        Ok(shards)
    }

    /// Reassembles value `id` on the host from one replica of each tile.
    fn download(
        &self,
        plan: &Plan,
        id: ValueId,
        shards: Option<&Shards>,
    ) -> Result<HostArray, ExecError> {
        let value = &plan.values[id];
        let shards =
            shards.ok_or_else(|| ExecError::Setup("an output was released early".into()))?;
        let mut host = HostArray::zeros(value.dtype, &value.shape);
        let mut done: Vec<&Vec<i64>> = Vec::new();
        for (position, offsets) in value.layout.offsets.iter().enumerate() {
            if done.contains(&offsets) {
                continue;
            }
            let buffer = shards[position].as_ref().ok_or_else(|| {
                ExecError::Setup(format!(
                    "output shard on device {} is missing",
                    value.devices[position]
                ))
            })?;
            let shape: Vec<usize> = value
                .layout
                .shard_shape
                .iter()
                .map(|&d| d as usize)
                .collect();
            let part = HostArray::new(value.dtype, &shape, buffer.to_host()?)?;
            host.write_slice(&domain(offsets, &value.layout.shard_shape), &part)?;
            done.push(offsets);
        }
        Ok(host)
    }

    /// Enqueues one step; returns the events that complete with it.
    fn enqueue(
        &mut self,
        plan: &Plan,
        step: &plan::Step,
        executable: Option<&LoadedExecutable>,
        values: &mut [Option<Shards>],
    ) -> Result<Vec<(i64, Event)>, ExecError> {
        match &step.kind {
            StepKind::Call {
                computation,
                args,
                results,
            } => {
                let executable = executable.ok_or_else(|| {
                    ExecError::Setup(format!(
                        "{}: @{} is not compiled",
                        step.label, plan.computations[*computation].name
                    ))
                })?;
                let mut lists: Vec<Vec<&Buffer>> =
                    vec![Vec::with_capacity(args.len()); step.devices.len()];
                for arg in args {
                    let shards = values[*arg].as_ref().ok_or_else(|| {
                        ExecError::Setup(format!("{}: an argument was released early", step.label))
                    })?;
                    for (position, list) in lists.iter_mut().enumerate() {
                        let buffer =
                            shards
                                .get(position)
                                .and_then(|b| b.as_deref())
                                .ok_or_else(|| {
                                    ExecError::Setup(format!(
                                        "{}: an argument shard is missing",
                                        step.label
                                    ))
                                })?;
                        list.push(buffer);
                    }
                }
                let options = ExecuteOptions {
                    donatable_arguments: donatable(args, &step.frees, values),
                    ..ExecuteOptions::default()
                };
                let slices: Vec<&[&Buffer]> = lists.iter().map(Vec::as_slice).collect();
                let crate::pjrt::Execution { outputs, done } =
                    executable.execute_with(&slices, &options)?;
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
                Ok(step.devices.iter().copied().zip(done).collect())
            }
            StepKind::Copy {
                input,
                output,
                pieces,
            } => {
                let shards = self.copy(plan, *input, *output, pieces, values)?;
                let mut events = Vec::new();
                for (position, buffer) in shards.iter().enumerate() {
                    if let Some(buffer) = buffer {
                        events.push((
                            plan.values[*output].devices[position],
                            buffer.ready_event()?,
                        ));
                    }
                }
                values[*output] = Some(shards);
                Ok(events)
            }
            StepKind::Assemble { parts, output } => {
                let mut shards: Shards = vec![None; plan.values[*output].devices.len()];
                for part in parts {
                    for (slot, buffer) in shards.iter_mut().zip(values[*part].iter().flatten()) {
                        if buffer.is_some() {
                            *slot = buffer.clone();
                        }
                    }
                }
                values[*output] = Some(shards);
                Ok(Vec::new())
            }
        }
    }

    /// Carries out the pieces of one copy op; returns the destination
    /// shards it writes.
    fn copy(
        &mut self,
        plan: &Plan,
        input: ValueId,
        output: ValueId,
        pieces: &[pw_dialect::Piece],
        values: &[Option<Shards>],
    ) -> Result<Shards, ExecError> {
        let src = &plan.values[input];
        let source = values[input]
            .as_ref()
            .ok_or_else(|| ExecError::Setup("a copied array was released early".into()))?;
        let mut shards: Shards = vec![None; plan.values[output].devices.len()];
        for target in copy_work(plan, input, output, pieces)? {
            let mut arrived = Vec::with_capacity(target.pieces.len());
            for (piece, slice) in &target.pieces {
                let from = src
                    .devices
                    .iter()
                    .position(|&d| d == piece.src_device)
                    .and_then(|p| source[p].clone())
                    .ok_or_else(|| {
                        ExecError::Setup(format!(
                            "device {} holds no source shard",
                            piece.src_device
                        ))
                    })?;
                let cut = match slice {
                    None => from,
                    Some(text) => {
                        let kernel =
                            self.compiled("a transfer kernel", text, &[piece.src_device], false)?;
                        let mut run = kernel.execute(&[[from.as_ref()]])?;
                        Arc::new(run.outputs.remove(0).remove(0))
                    }
                };
                arrived.push(if piece.src_device == target.device {
                    cut
                } else {
                    Arc::new(cut.copy_to_device(self.device(target.device)?)?)
                });
            }
            shards[target.position] = Some(match &target.place {
                None => arrived.remove(0),
                Some(text) => {
                    let kernel =
                        self.compiled("a transfer kernel", text, &[target.device], false)?;
                    let args: Vec<&Buffer> = arrived.iter().map(Arc::as_ref).collect();
                    let mut run = kernel.execute(&[args])?;
                    Arc::new(run.outputs.remove(0).remove(0))
                }
            });
        }
        Ok(shards)
    }
}

/// The work of a copy op for one destination shard: its pieces, each with
/// the slice kernel that cuts it out of its source shard (None: the piece
/// is the whole shard), and the kernel that places the pieces into the
/// shard (None: one piece is the whole shard).
struct TargetWork<'p> {
    device: i64,
    position: usize,
    pieces: Vec<(&'p pw_dialect::Piece, Option<String>)>,
    place: Option<String>,
}

fn copy_work<'p>(
    plan: &Plan,
    input: ValueId,
    output: ValueId,
    pieces: &'p [pw_dialect::Piece],
) -> Result<Vec<TargetWork<'p>>, ExecError> {
    let (src, dst) = (&plan.values[input], &plan.values[output]);
    let mut targets: Vec<TargetWork> = Vec::new();
    for p in pieces {
        let whole = p.src_offsets.iter().all(|&o| o == 0) && p.sizes == src.layout.shard_shape;
        let slice = (!whole).then(|| {
            kernels::slice(
                src.dtype,
                &usizes(&src.layout.shard_shape),
                &usizes(&p.src_offsets),
                &usizes(&p.sizes),
            )
        });
        match targets.iter_mut().find(|t| t.device == p.dst_device) {
            Some(t) => t.pieces.push((p, slice)),
            None => {
                let position = dst
                    .devices
                    .iter()
                    .position(|&d| d == p.dst_device)
                    .ok_or_else(|| {
                        ExecError::Setup(format!(
                            "device {} holds no destination shard",
                            p.dst_device
                        ))
                    })?;
                targets.push(TargetWork {
                    device: p.dst_device,
                    position,
                    pieces: vec![(p, slice)],
                    place: None,
                });
            }
        }
    }
    for t in &mut targets {
        let fills = t.pieces.len() == 1 && t.pieces[0].0.sizes == dst.layout.shard_shape;
        if !fills {
            let layout: Vec<(Vec<usize>, Vec<usize>)> = t
                .pieces
                .iter()
                .map(|(p, _)| (usizes(&p.dst_offsets), usizes(&p.sizes)))
                .collect();
            t.place = Some(kernels::place(
                dst.dtype,
                &usizes(&dst.layout.shard_shape),
                &layout,
            ));
        }
    }
    Ok(targets)
}

/// Argument positions a call may donate: the call is the value's last
/// reader, the value appears once, and no other value shares its buffers.
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

fn usizes(v: &[i64]) -> Vec<usize> {
    v.iter().map(|&x| x.max(0) as usize).collect()
}

fn domain(offsets: &[i64], shape: &[i64]) -> IndexDomain {
    IndexDomain {
        origin: usizes(offsets),
        shape: usizes(shape),
    }
}
