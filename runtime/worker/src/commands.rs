//! What the controller commands on the worker's command link
//! (`ControllerEvent`s, [`pw_wire::link`]): parts of runs, releases of
//! single arrays, reads of small shards, shards of checkpoints.
//!
//! The thread that reads the link does each command as it comes ([`run`]),
//! in the order sent, which is gang order: the controller sends the parts
//! of one run to all its workers before the next run's, so every device
//! sees one consistent order of work (two SPMD computations never
//! interleave into a deadlock). It enqueues each part
//! ([`pw_exec::Executor::enqueue`] does not wait for the devices), keeps its
//! outputs in the store, and hands the waiting for it to the [`crate::pool`];
//! a part whose every step completed while it was enqueued (cheap work on a
//! CPU plugin runs in the enqueueing thread) is reported at once, with no
//! thread in between. A part that cannot start is reported as failed
//! (`PartDone.error`): nothing here answers the controller any other way.
//! Releasing a whole run or session does not wait its turn here: it comes
//! on the worker's session (an enqueue that waits for devices must not hold
//! it up).
//!
//! A part can be kept, decoded and checked, with its executables and
//! peers, for the session that runs it again and again
//! (`ExecuteRequest.keep_for`): later runs send only its key and their
//! bindings.

use crate::{bulk, checkpoint, State};
use pw_core::plan::{Part, ValueId};
use pw_core::{report::SendRecord, DType};
use pw_dataplane::{Destination, Outgoing, PeerAddress};
use pw_exec::{
    cache::{Executable, Key},
    Completion, Error, Peers, PieceKey, Shards, Work,
};
use pw_pjrt::{Buffer, Device};
use pw_wire::{proto, MAX_INLINE_BYTES, MAX_READ_BYTES};
use std::{
    collections::HashMap,
    sync::{atomic::Ordering, Arc, Mutex},
    time::Instant,
};

pub use pw_core::report::PartReport;

/// A part kept for its session: decoded, checked, its work worked out.
pub struct KeptPart {
    part: Arc<Part>,
    work: Arc<Work>,
    executables: Vec<Executable>,
    peers: HashMap<u32, PeerAddress>,
}

/// The parts kept, by (owner, key).
#[derive(Default)]
pub struct Kept(Mutex<HashMap<(u64, u64), Arc<KeptPart>>>);

impl Kept {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(u64, u64), Arc<KeptPart>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets every part kept for `owner`.
    pub fn forget(&self, owner: u64) {
        self.lock().retain(|(o, _), _| *o != owner);
    }

    pub fn clear(&self) {
        self.lock().clear();
    }
}

/// Does one command of the link of registration `epoch` (see the module
/// doc).
pub fn run(state: &Arc<State>, event: proto::controller_event::Event, epoch: u32) {
    use proto::controller_event::Event;
    // A command of an earlier registration: its runs are gone.
    if state.id() != Some(epoch) {
        return;
    }
    match event {
        Event::Execute(request) => {
            let run = request.run;
            if let Err(why) = execute(state, request, Instant::now()) {
                tracing::warn!(run, "refused a part: {why}");
                state.counters.parts_failed.fetch_add(1, Ordering::Relaxed);
                state.report(proto::worker_event::Event::PartDone(proto::PartDone {
                    run,
                    error: why,
                    ..Default::default()
                }));
            }
        }
        Event::Release(r) if !r.arrays.is_empty() || !r.python.is_empty() => {
            let arrays: Vec<usize> = r.arrays.iter().map(|&a| a as usize).collect();
            state.store.delete(r.run, &arrays);
            if !r.python.is_empty() {
                state.sidecars.drop_programs(r.run, r.python);
            }
        }
        Event::Release(r) if r.lives_on => state.drop_held(r.run),
        Event::Release(r) => state.release(r.run, &r.reason),
        Event::Read(r) if !r.ticket.is_empty() => {
            let grant = bulk::Grant::Read(r.owner, r.value as usize, r.position as usize);
            state.tickets.grant(&r.ticket, grant);
        }
        Event::Write(w) => {
            let ticket = w.ticket.clone();
            state.tickets.grant(&ticket, bulk::Grant::Write(w));
        }
        Event::Read(r) => {
            // Ready already (the common case: a small result asked for
            // after its call): answered from here.
            let now = usize::try_from(r.value)
                .ok()
                .and_then(|v| state.store.get(r.owner, v, r.position as usize))
                .filter(|b| b.ready_event().and_then(|e| e.is_ready()).unwrap_or(false));
            match now {
                Some(buffer) => answer(state, r.id, shard_bytes(state, &buffer)),
                None => {
                    state.runtime.spawn(read(state.clone(), r));
                }
            }
        }
        Event::Rename(r) => match (usize::try_from(r.from), usize::try_from(r.to)) {
            (Ok(from), Ok(to)) => state.store.rename(r.owner, from, to),
            _ => tracing::warn!("a rename of array {} to {} ignored", r.from, r.to),
        },
        Event::Save(save) => {
            state.runtime.spawn(checkpoint::save(state.clone(), save));
        }
        Event::Load(load) => {
            state.runtime.spawn(checkpoint::load(state.clone(), load));
        }
        Event::PeerLost(lost) => state.peer_lost(&lost),
        Event::Link(_) | Event::Registered(_) | Event::Refused(_) => {}
    }
}

/// A part that is ready to enqueue.
struct Ready {
    kept: Arc<KeptPart>,
    bindings: Bindings,
    /// The part is the whole run: end it once reported.
    ends_run: bool,
    /// The session whose run it is (0: none): its sidecar runs the part's
    /// Python functions.
    owner: u64,
}

/// The part of `r`, checked: decoded (and kept when asked), or the one
/// kept under its key.
fn part_of(state: &State, r: &mut proto::ExecuteRequest, me: u32) -> Result<Arc<KeptPart>, String> {
    if r.part.is_empty() {
        return state
            .kept
            .lock()
            .get(&(r.keep_for, r.part_key))
            .cloned()
            .ok_or_else(|| {
                format!(
                    "run {}: no part is kept under key {} for owner {} (it was released?)",
                    r.run, r.part_key, r.keep_for
                )
            });
    }
    let part = pw_wire::part::decode(&r.part).map_err(|e| e.to_string())?;
    if part.worker != me {
        return Err(format!(
            "the part is worker {}'s, this is worker {me}",
            part.worker
        ));
    }
    let work = Work::of(&part).map_err(|e| e.to_string())?;
    if r.executables.len() != work.needs.len() {
        return Err(format!(
            "the part needs {} executables, the request names {}",
            work.needs.len(),
            r.executables.len()
        ));
    }
    let executables = {
        let loaded = state
            .executables
            .lock()
            .map_err(|_| "the executables' lock is poisoned".to_owned())?;
        r.executables
            .iter()
            .zip(&work.needs)
            .map(|(hex, need)| {
                Key::from_hex(hex)
                    .and_then(|k| loaded.loaded(&k))
                    .ok_or_else(|| {
                        format!(
                            "{} for devices {:?} is not loaded (executable {hex})",
                            need.what, need.devices
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?
    };
    let peers = std::mem::take(&mut r.peers)
        .into_iter()
        .map(|(w, a)| {
            (
                w,
                PeerAddress {
                    service: a.service,
                    data: a.data,
                },
            )
        })
        .collect();
    let kept = Arc::new(KeptPart {
        part: Arc::new(part),
        work: Arc::new(work),
        executables,
        peers,
    });
    if r.keep_for != 0 {
        state
            .kept
            .lock()
            .insert((r.keep_for, r.part_key), kept.clone());
    }
    Ok(kept)
}

/// Checks and enqueues the part of `r` (see the module doc); an error
/// says why it cannot start.
fn execute(state: &Arc<State>, mut r: proto::ExecuteRequest, t0: Instant) -> Result<(), String> {
    let me = state.id().ok_or("this worker is not registered")?;
    let kept = part_of(state, &mut r, me)?;
    let run = r.run;
    let bindings = Bindings::of(&kept.part, &r.inputs_from, &r.outputs_to)?;
    put_inline(state, run, &kept.part, std::mem::take(&mut r.inputs_inline))?;
    {
        let mut runs = state
            .runs
            .lock()
            .map_err(|_| "the runs' lock is poisoned".to_owned())?;
        // Checked with `runs` held: a release ends the store's run before
        // it takes `runs`, so this part is refused or released.
        if let Some(why) = state.store.ended(run) {
            return Err(format!("run {run} is over: {why}"));
        }
        if runs.insert(run, kept.peers.clone()).is_none() {
            state.counters.runs_active.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(mut p) = state.progress.lock() {
            p.insert(run, (None, 0));
        }
    }
    let ready = Ready {
        kept,
        bindings,
        ends_run: r.ends_run,
        owner: r.keep_for,
    };
    let peers = RunPeers {
        state: state.clone(),
        run,
        addresses: ready.kept.peers.clone(),
        sends: Arc::default(),
        t0,
    };
    let enqueued = enqueue(state, run, &ready, &peers, r.record, t0);
    let steps = ready.kept.part.steps.len();
    // Done while enqueued (and nothing to record): reported from here.
    let finished = match &enqueued {
        Ok(e) => !r.record && e.done.done_prefix(0) == steps,
        Err(_) => true,
    };
    let record = r.record;
    let pool = state.pool.clone();
    let state = state.clone();
    let job = move || report(&state, run, &ready, enqueued, &peers, record);
    if finished {
        job();
    } else if let Err(job) = pool.run(Box::new(job)) {
        // No thread to spare: wait here (the next parts wait too).
        job();
    }
    Ok(())
}

/// Small input shards that came with the request, into the store as the
/// run's values (as `Worker.Put` would).
fn put_inline(
    state: &State,
    run: u64,
    part: &Part,
    shards: Vec<proto::InlineShard>,
) -> Result<(), String> {
    let mut total = 0u64;
    for s in shards {
        let value = s.value as usize;
        if !part.inputs.contains(&value) {
            return Err(format!(
                "an inline shard of value {value}, not an input of the part"
            ));
        }
        let (dtype, dims, size) = s
            .r#type
            .as_ref()
            .ok_or("an inline shard without a type")?
            .read(MAX_INLINE_BYTES)
            .map_err(|e| format!("an inline shard of value {value}: {e}"))?;
        total += size;
        if size != s.data.len() as u64 || total > MAX_INLINE_BYTES {
            return Err(format!(
                "an inline shard of value {value}: {} bytes for a type of {size} (at most {MAX_INLINE_BYTES} inline in all)",
                s.data.len()
            ));
        }
        let device = state.device(s.local_device)?;
        let buffer = state
            .client
            .buffer_from_host(&s.data, dtype, &dims, &device)
            .map_err(|e| e.to_string())?;
        state
            .counters
            .bytes_from_controller
            .fetch_add(size, Ordering::Relaxed);
        state
            .store
            .put(run, value, s.position as usize, Arc::new(buffer))?;
    }
    Ok(())
}

/// Enqueues a part (on the command link's reader: gang order) and keeps its
/// outputs where its bindings say.
fn enqueue(
    state: &State,
    run: u64,
    ready: &Ready,
    peers: &RunPeers,
    record: bool,
    t0: Instant,
) -> pw_exec::Result<pw_exec::Enqueued> {
    let KeptPart {
        part,
        work,
        executables,
        ..
    } = &*ready.kept;
    state.queues.start(run, part.clone(), work.clone());
    let values = ready.bindings.inputs(&state.store, run, part);
    let needs_sidecar = executables
        .iter()
        .any(|e| matches!(e, Executable::Python(_)));
    let sidecar = needs_sidecar
        .then(|| state.sidecars.of(ready.owner))
        .flatten();
    let outcome = state.executor.enqueue(
        run,
        part,
        work,
        executables,
        values,
        peers,
        sidecar.as_deref(),
        t0,
        record,
    );
    if let Ok(enqueued) = &outcome {
        for &id in &part.outputs {
            let targets = match ready.bindings.outputs.get(&id) {
                Some(t) => t.clone(),
                None => vec![(run, id)],
            };
            for (position, buffer) in enqueued.values[id].iter().flatten().enumerate() {
                if let Some(b) = buffer {
                    for &(owner, array) in &targets {
                        // Refused once the owner is released: nobody
                        // will fetch it.
                        let _ = state.store.put(owner, array, position, b.clone());
                    }
                }
            }
        }
    }
    state.queues.enqueued(run);
    outcome
}

/// Waits for an enqueued part and reports it to the controller.
fn report(
    state: &State,
    run: u64,
    ready: &Ready,
    outcome: pw_exec::Result<pw_exec::Enqueued>,
    peers: &RunPeers,
    record: bool,
) {
    let part = &ready.kept.part;
    let mut report = proto::PartDone {
        run,
        ..Default::default()
    };
    match outcome {
        Err(e) => report.error = e.to_string(),
        Ok(mut enqueued) => {
            if let Some(p) = state
                .progress
                .lock()
                .ok()
                .as_mut()
                .and_then(|p| p.get_mut(&run))
            {
                p.0 = Some(enqueued.done.clone());
            }
            if let Err((i, e)) = enqueued.settle(state.patience) {
                let step = &part.steps[i];
                report.failed_step = Some(step.index as u32);
                report.error = format!(
                    "step {} on devices {:?} failed on worker {}: {e}",
                    step.step.label, step.step.devices, part.worker
                );
            }
            report.held = held(state, run, part, &ready.bindings, &mut enqueued);
            let sends = peers.sends.lock().map(|s| s.clone()).unwrap_or_default();
            // Nothing to say beyond the outcome: no report (the common,
            // small case costs nothing to encode).
            if record || !sends.is_empty() || !enqueued.peak_bytes.is_empty() {
                let r = PartReport {
                    worker: part.worker,
                    enqueued: enqueued.enqueued,
                    steps: if record {
                        let timings = enqueued.timings(report.error.is_empty());
                        part.steps.iter().map(|s| s.index).zip(timings).collect()
                    } else {
                        Vec::new()
                    },
                    sends,
                    peak_bytes: enqueued.peak_bytes.clone(),
                };
                report.report_json = serde_json::to_string(&r).unwrap_or_default();
            }
            drop(enqueued);
        }
    }
    let counter = if report.error.is_empty() {
        &state.counters.parts_done
    } else {
        &state.counters.parts_failed
    };
    counter.fetch_add(1, Ordering::Relaxed);
    let failed = !report.error.is_empty();
    state.report(proto::worker_event::Event::PartDone(report));
    if ready.ends_run {
        state.release(
            run,
            if failed {
                "the call failed"
            } else {
                "the call finished"
            },
        );
    }
}

/// Answers a read: the shard's bytes once it is ready (the reply goes on
/// the worker's session).
async fn read(state: Arc<State>, r: proto::ReadRequest) {
    let shard = async {
        let value = usize::try_from(r.value).map_err(|_| format!("no value {}", r.value))?;
        let buffer = state
            .store
            .wait_for(r.owner, value, r.position as usize, state.patience)
            .await?;
        let waited = state.clone();
        tokio::task::spawn_blocking(move || shard_bytes(&waited, &buffer))
            .await
            .map_err(|e| e.to_string())?
    };
    let got = shard.await;
    answer(&state, r.id, got);
}

/// Answers read `id` with `got`.
fn answer(state: &State, id: u64, got: Result<(proto::ArrayType, Vec<u8>), String>) {
    let mut reply = proto::ReadReply {
        id,
        ..Default::default()
    };
    match got {
        Ok((t, data)) => {
            reply.r#type = Some(t);
            reply.data = data.into();
        }
        Err(e) => reply.error = e,
    }
    state.report(proto::worker_event::Event::Read(reply));
}

/// The bytes of a shard for the controller, once it is ready (at most
/// [`MAX_READ_BYTES`] of them).
fn shard_bytes(
    state: &State,
    buffer: &pw_pjrt::Buffer,
) -> Result<(proto::ArrayType, Vec<u8>), String> {
    let got = (|| -> Result<_, Error> {
        buffer.wait_ready()?;
        let dtype = buffer.dtype()?;
        let dims = buffer.dims()?;
        let size = dims.iter().product::<usize>() as u64 * dtype.size_in_bytes() as u64;
        if size > MAX_READ_BYTES {
            return Err(Error::Piece(format!(
                "a shard of {size} bytes is more than a read returns ({MAX_READ_BYTES}); fetch it"
            )));
        }
        Ok((dtype, dims, buffer.to_host()?))
    })();
    let (dtype, dims, bytes) = got.map_err(|e| format!("the shard failed: {e}"))?;
    state
        .counters
        .bytes_to_controller
        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
    Ok((proto::ArrayType::of(dtype, &dims), bytes))
}

/// Where a part's inputs come from and its outputs go, when not the run's
/// own store: a session's arrays.
struct Bindings {
    /// Per input value: (owner, array, take).
    inputs: HashMap<usize, (u64, usize, bool)>,
    /// Per output value: the (owner, array)s it is kept as.
    outputs: HashMap<usize, Vec<(u64, usize)>>,
}

impl Bindings {
    fn of(
        part: &Part,
        inputs: &[proto::Binding],
        outputs: &[proto::Binding],
    ) -> Result<Bindings, String> {
        let mut b = Bindings {
            inputs: HashMap::new(),
            outputs: HashMap::new(),
        };
        for i in inputs {
            let value = i.value as usize;
            if !part.inputs.contains(&value) {
                return Err(format!(
                    "binding: value {value} is not an input of the part"
                ));
            }
            b.inputs.insert(value, (i.owner, i.array as usize, i.take));
        }
        for o in outputs {
            let value = o.value as usize;
            if !part.outputs.contains(&value) {
                return Err(format!(
                    "binding: value {value} is not an output of the part"
                ));
            }
            b.outputs
                .entry(value)
                .or_default()
                .push((o.owner, o.array as usize));
        }
        Ok(b)
    }

    /// The part's inputs, from the store: the run's uploads, or the bound
    /// arrays. Taken in the part's turn, after every earlier part here left
    /// its outputs.
    fn inputs(
        &self,
        store: &crate::store::ObjectStore,
        run: u64,
        part: &Part,
    ) -> Vec<Option<Shards>> {
        let mut values: Vec<Option<Shards>> = vec![None; part.values.len()];
        for &id in &part.inputs {
            let mut shards: Shards = vec![None; part.values[id].devices.len()];
            let found = match self.inputs.get(&id) {
                Some(&(owner, array, take)) => store.value(owner, array, take),
                None => store.value(run, id, true),
            };
            for (position, buffer) in found {
                if let Some(slot) = shards.get_mut(position) {
                    *slot = Some(buffer);
                }
            }
            values[id] = Some(shards);
        }
        values
    }
}

/// What of run `run` this worker holds once its part settled, for the
/// controller (and a recovery) to read: the outputs it kept, and the
/// values kept because a reader did not complete ([`Enqueued::retained`]),
/// which go into the store under the run. Only values whose every shard
/// here is ready, and that rest on no failed step ([`Enqueued::tainted`]),
/// count.
fn held(
    state: &State,
    run: u64,
    part: &Part,
    bindings: &Bindings,
    enqueued: &mut pw_exec::Enqueued,
) -> Vec<proto::Held> {
    let good = |shards: &Shards| {
        let mine: Vec<&Arc<pw_pjrt::Buffer>> = shards.iter().flatten().collect();
        !mine.is_empty() && mine.iter().all(|b| b.wait_ready().is_ok())
    };
    let positions = |shards: &Shards| {
        shards
            .iter()
            .enumerate()
            .filter(|(_, b)| b.is_some())
            .map(|(p, _)| p as u32)
            .collect()
    };
    let tainted = enqueued.tainted(part);
    let mut held = Vec::new();
    for &id in &part.outputs {
        if bindings.outputs.contains_key(&id) || tainted.contains(&id) {
            continue;
        }
        if let Some(shards) = enqueued.values[id].as_ref().filter(|s| good(s)) {
            held.push(proto::Held {
                value: id as u32,
                positions: positions(shards),
            });
        }
    }
    // Checkpoints (never freed by the part) and values retained after a
    // failure go to the store, under the run, until it ends: a replay
    // reads them there.
    let checkpoints: Vec<(ValueId, Shards)> = part
        .kept
        .iter()
        .filter_map(|&id| Some((id, enqueued.values[id].take()?)))
        .collect();
    let retained = std::mem::take(&mut enqueued.retained)
        .into_iter()
        .map(|(id, s, _)| (id, s));
    for (id, shards) in checkpoints.into_iter().chain(retained) {
        if tainted.contains(&id) || !good(&shards) || held.iter().any(|h| h.value as usize == id) {
            continue;
        }
        let mut kept = true;
        for (position, b) in shards.iter().enumerate() {
            if let Some(b) = b {
                kept &= state.store.put(run, id, position, b.clone()).is_ok();
            }
        }
        if kept {
            held.push(proto::Held {
                value: id as u32,
                positions: positions(&shards),
            });
        }
    }
    held
}

/// The data plane of one run, as its executor sees it.
struct RunPeers {
    state: Arc<State>,
    run: u64,
    addresses: HashMap<u32, PeerAddress>,
    sends: Arc<std::sync::Mutex<Vec<SendRecord>>>,
    t0: Instant,
}

impl Peers for RunPeers {
    fn receive(
        &self,
        key: PieceKey,
        from: u32,
        dtype: DType,
        dims: &[usize],
        device: &Device,
    ) -> pw_exec::Result<(Buffer, Completion)> {
        let (transfer, buffer) = self
            .state
            .client
            .buffer_for_async_transfer(device, dtype, dims)?;
        let landed = Completion::new();
        self.state
            .receiver
            .expect(
                key,
                from,
                Destination {
                    transfer,
                    landed: landed.clone(),
                },
            )
            .map_err(|e| Error::Piece(e.to_string()))?;
        Ok((buffer, landed))
    }

    fn send(&self, key: PieceKey, to: u32, buffer: Arc<Buffer>) -> pw_exec::Result<Completion> {
        let peer = self.addresses.get(&to).ok_or_else(|| {
            Error::Piece(format!("run {} names no address for worker {to}", self.run))
        })?;
        let done = Completion::new();
        self.state.sender.send(
            peer,
            Outgoing {
                key,
                to,
                buffer,
                done: done.clone(),
                log: self.sends.clone(),
                t0: self.t0,
            },
        );
        Ok(done)
    }
}
