//! The worker's gRPC service: what the controller and peer workers ask of
//! it. Every request is checked before it is acted on (sizes against
//! limits before allocating, plans with [`Part::check`]); a bad one gets an
//! `INVALID_ARGUMENT` or `FAILED_PRECONDITION` status naming what is wrong.

use crate::State;
use bytes::Bytes;
use pw_core::plan::Part;
use pw_core::{report::SendRecord, DType};
use pw_dataplane::{Destination, Outgoing, PeerAddress};
use pw_exec::{
    cache::{compile_options, Key},
    Completion, Error, Need, Peers, PieceKey, Shards, Work,
};
use pw_pjrt::{Buffer, Device, Program};
use pw_wire::{self as wire, proto, Collect};
use std::{
    collections::HashMap,
    pin::Pin,
    sync::{atomic::Ordering, Arc},
    time::{Duration, Instant},
};
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

/// The largest serialized executable accepted.
const MAX_EXECUTABLE_BYTES: u64 = 4 << 30;
/// The largest input shard accepted.
const MAX_SHARD_BYTES: u64 = 64 << 30;

type Stream_<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

pub use pw_core::report::PartReport;

/// See the module doc.
pub struct WorkerService {
    state: Arc<State>,
}

impl WorkerService {
    pub fn new(state: Arc<State>) -> WorkerService {
        WorkerService { state }
    }
}

fn invalid(message: impl std::fmt::Display) -> Status {
    Status::invalid_argument(message.to_string())
}

/// Reads a client stream of chunked payload messages into one payload.
async fn collect<M>(
    stream: &mut Streaming<M>,
    first: M,
    chunk: impl Fn(&M) -> Option<&proto::Chunk>,
    limit: u64,
    expected: Option<u64>,
    what: &str,
) -> Result<Vec<u8>, Status> {
    let head = chunk(&first).ok_or_else(|| invalid(format!("{what}: no chunk")))?;
    let mut collect = Collect::new(head, limit, expected, what).map_err(invalid)?;
    if let Some(done) = collect.push(head).map_err(invalid)? {
        return Ok(done);
    }
    loop {
        let message = stream
            .message()
            .await?
            .ok_or_else(|| invalid(collect.truncated()))?;
        let c = chunk(&message).ok_or_else(|| invalid(format!("{what}: no chunk")))?;
        if let Some(done) = collect.push(c).map_err(invalid)? {
            return Ok(done);
        }
    }
}

/// A server stream of a payload's chunks, each wrapped by `wrap`.
fn stream_chunks<T: Send + 'static>(
    data: Bytes,
    wrap: impl Fn(proto::Chunk, bool) -> T + Send + 'static,
) -> Stream_<T> {
    let items: Vec<Result<T, Status>> = wire::chunks(data)
        .into_iter()
        .enumerate()
        .map(|(i, c)| Ok(wrap(c, i == 0)))
        .collect();
    Box::pin(tokio_stream::iter(items))
}

#[tonic::async_trait]
impl proto::worker_server::Worker for WorkerService {
    async fn load(
        &self,
        request: Request<Streaming<proto::LoadRequest>>,
    ) -> Result<Response<proto::LoadReply>, Status> {
        let mut stream = request.into_inner();
        let first = stream
            .message()
            .await?
            .ok_or_else(|| invalid("an empty load"))?;
        let key = Key::from_hex(&first.key)
            .ok_or_else(|| invalid(format!("bad executable key {:?}", first.key)))?;
        let bytes = collect(
            &mut stream,
            first,
            |m| m.chunk.as_ref(),
            MAX_EXECUTABLE_BYTES,
            None,
            "executable",
        )
        .await?;
        self.state
            .counters
            .bytes_from_controller
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let state = self.state.clone();
        tokio::task::spawn_blocking(move || {
            state
                .executables
                .lock()
                .map_err(|_| Status::internal("executables lock poisoned"))?
                .insert_serialized(key, &bytes)
                .map_err(|e| {
                    Status::failed_precondition(format!("cannot load executable {key:?}: {e}"))
                })
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))??;
        Ok(Response::new(proto::LoadReply {}))
    }

    type CompileStream = Stream_<proto::Chunk>;

    async fn compile(
        &self,
        request: Request<proto::CompileRequest>,
    ) -> Result<Response<Self::CompileStream>, Status> {
        let r = request.into_inner();
        let need = Need {
            what: "a computation".into(),
            module: Arc::from(r.module.clone()),
            devices: r.local_devices.iter().map(|&d| i64::from(d)).collect(),
            local_devices: r.local_devices.clone(),
            spmd: r.spmd,
        };
        let state = self.state.clone();
        let bytes = tokio::task::spawn_blocking(move || -> Result<Vec<u8>, Status> {
            let mut executables = state
                .executables
                .lock()
                .map_err(|_| Status::internal("executables lock poisoned"))?;
            let key = pw_exec::cache::key_of(&need, executables.plugin()).map_err(invalid)?;
            if key.hex() != r.key {
                return Err(Status::failed_precondition(format!(
                    "this worker's plugin ({}) names the executable {}, not {}: the plugins differ",
                    executables.plugin(),
                    key.hex(),
                    r.key
                )));
            }
            let options = compile_options(&need).map_err(invalid)?;
            let executable = state
                .client
                .compile(&Program::mlir(r.module), &options)
                .map_err(|e| Status::failed_precondition(format!("compiling failed: {e}")))?;
            state
                .counters
                .executables_compiled
                .fetch_add(1, Ordering::Relaxed);
            let bytes = executable
                .serialize()
                .map_err(|e| Status::internal(format!("cannot serialize the executable: {e}")))?;
            executables
                .insert_serialized(key, &bytes)
                .map_err(|e| Status::internal(e.to_string()))?;
            Ok(bytes)
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))??;
        self.state
            .counters
            .bytes_to_controller
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(Response::new(stream_chunks(Bytes::from(bytes), |c, _| c)))
    }

    async fn put(
        &self,
        request: Request<Streaming<proto::PutRequest>>,
    ) -> Result<Response<proto::PutReply>, Status> {
        let mut stream = request.into_inner();
        let first = stream
            .message()
            .await?
            .ok_or_else(|| invalid("an empty put"))?;
        let (run, value, position, local) = (
            first.run,
            first.value as usize,
            first.position as usize,
            first.local_device,
        );
        let (dtype, dims, size) = first
            .r#type
            .as_ref()
            .ok_or_else(|| invalid("a put without a type"))?
            .read(MAX_SHARD_BYTES)
            .map_err(invalid)?;
        let device = self.device(local)?;
        let bytes = collect(
            &mut stream,
            first,
            |m| m.chunk.as_ref(),
            size,
            Some(size),
            "input shard",
        )
        .await?;
        self.state
            .counters
            .bytes_from_controller
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let buffer = self
            .state
            .client
            .buffer_from_host(&bytes, dtype, &dims, &device)
            .map_err(|e| Status::internal(e.to_string()))?;
        self.state
            .store
            .put(run, value, position, Arc::new(buffer))
            .map_err(Status::failed_precondition)?;
        Ok(Response::new(proto::PutReply {}))
    }

    async fn execute(
        &self,
        request: Request<proto::ExecuteRequest>,
    ) -> Result<Response<proto::ExecuteReply>, Status> {
        let received = Instant::now();
        let r = request.into_inner();
        let me = self
            .state
            .id()
            .ok_or_else(|| Status::failed_precondition("this worker is not registered"))?;
        let part: Part = postcard::from_bytes(&r.part)
            .map_err(|e| invalid(format!("the part does not decode: {e}")))?;
        if part.worker != me {
            return Err(Status::failed_precondition(format!(
                "the part is worker {}'s, this is worker {me}",
                part.worker
            )));
        }
        part.check().map_err(invalid)?;
        let work = Work::of(&part).map_err(invalid)?;
        if r.executables.len() != work.needs.len() {
            return Err(invalid(format!(
                "the part needs {} executables, the request names {}",
                work.needs.len(),
                r.executables.len()
            )));
        }
        let executables = {
            let loaded = self
                .state
                .executables
                .lock()
                .map_err(|_| Status::internal("executables lock poisoned"))?;
            r.executables
                .iter()
                .zip(&work.needs)
                .map(|(hex, need)| {
                    Key::from_hex(hex)
                        .and_then(|k| loaded.loaded(&k))
                        .ok_or_else(|| {
                            Status::failed_precondition(format!(
                                "{} for devices {:?} is not loaded (executable {hex})",
                                need.what, need.devices
                            ))
                        })
                })
                .collect::<Result<Vec<_>, _>>()?
        };
        let run = r.run;
        let bindings = Bindings::of(&part, &r.inputs_from, &r.outputs_to).map_err(invalid)?;
        {
            let mut runs = self
                .state
                .runs
                .lock()
                .map_err(|_| Status::internal("runs lock poisoned"))?;
            // Checked with `runs` held: a release ends the store's run
            // before it takes `runs`, so this part is refused or released.
            if let Some(why) = self.state.store.ended(run) {
                return Err(Status::failed_precondition(format!(
                    "run {run} is over: {why}"
                )));
            }
            let peers = r
                .peers
                .iter()
                .map(|(w, a)| {
                    (
                        *w,
                        PeerAddress {
                            service: a.service.clone(),
                            data: a.data.clone(),
                        },
                    )
                })
                .collect();
            if runs.insert(run, peers).is_none() {
                self.state
                    .counters
                    .runs_active
                    .fetch_add(1, Ordering::Relaxed);
            }
            if let Ok(mut p) = self.state.progress.lock() {
                p.insert(run, (None, 0));
            }
        }
        let state = self.state.clone();
        let record = r.record;
        // The place in line is taken now, before the controller hears back.
        let ticket = self.state.gang.ticket();
        let spawned = std::thread::Builder::new()
            .name(format!("pw-run-{run}"))
            .spawn(move || {
                execute_part(
                    state,
                    ticket,
                    run,
                    part,
                    work,
                    executables,
                    bindings,
                    record,
                    received,
                )
            });
        if let Err(e) = spawned {
            // Its turn passes.
            drop(self.state.gang.wait(ticket));
            return Err(Status::internal(format!(
                "cannot start the run's thread: {e}"
            )));
        }
        Ok(Response::new(proto::ExecuteReply {}))
    }

    type FetchStream = Stream_<proto::FetchReply>;

    async fn fetch(
        &self,
        request: Request<proto::FetchRequest>,
    ) -> Result<Response<Self::FetchStream>, Status> {
        let r = request.into_inner();
        let buffer = self
            .state
            .store
            .wait_for(
                r.run,
                r.value as usize,
                r.position as usize,
                self.state.patience,
            )
            .await
            .map_err(Status::failed_precondition)?;
        let (dtype, dims, bytes) = tokio::task::spawn_blocking(move || -> Result<_, Error> {
            buffer.wait_ready()?;
            Ok((buffer.dtype()?, buffer.dims()?, buffer.to_host()?))
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(|e| Status::failed_precondition(format!("the shard failed: {e}")))?;
        self.state
            .counters
            .bytes_to_controller
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let t = proto::ArrayType::of(dtype, &dims);
        Ok(Response::new(stream_chunks(
            Bytes::from(bytes),
            move |c, first| proto::FetchReply {
                r#type: first.then(|| t.clone()),
                chunk: Some(c),
            },
        )))
    }

    async fn release(
        &self,
        request: Request<proto::ReleaseRequest>,
    ) -> Result<Response<proto::ReleaseReply>, Status> {
        let r = request.into_inner();
        let why = if r.reason.is_empty() {
            "the run was released".to_owned()
        } else {
            r.reason
        };
        if !r.arrays.is_empty() {
            // In gang order: a part sent before still finds them when its
            // turn comes.
            let arrays: Vec<usize> = r.arrays.iter().map(|&a| a as usize).collect();
            let ticket = self.state.gang.ticket();
            let state = self.state.clone();
            tokio::task::spawn_blocking(move || {
                let _turn = state.gang.wait(ticket);
                state.store.delete(r.run, &arrays);
            });
            return Ok(Response::new(proto::ReleaseReply {}));
        }
        self.state.end_run(r.run, &why);
        let state = self.state.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            state.forget(r.run);
        });
        Ok(Response::new(proto::ReleaseReply {}))
    }

    async fn push(
        &self,
        request: Request<Streaming<proto::PushRequest>>,
    ) -> Result<Response<proto::PushReply>, Status> {
        let mut stream = request.into_inner();
        let mut from = None;
        loop {
            match stream.message().await {
                Ok(Some(m)) => {
                    let sender = *from.get_or_insert(m.from);
                    let key = PieceKey {
                        run: m.run,
                        step: m.step,
                        piece: m.piece,
                    };
                    if !m.failed.is_empty() {
                        if let Err(e) = self.state.receiver.piece_failed(sender, key, &m.failed) {
                            self.state.receiver.stream_ended(sender, &e.to_string());
                            return Err(invalid(e));
                        }
                        continue;
                    }
                    let chunk = m.chunk.ok_or_else(|| invalid("a push without a chunk"))?;
                    if let Err(e) = self.state.receiver.deliver(sender, key, chunk) {
                        tracing::warn!(error = %e, "refusing a piece");
                        self.state.receiver.stream_ended(sender, &e.to_string());
                        return Err(invalid(e));
                    }
                }
                Ok(None) => {
                    if let Some(sender) = from {
                        self.state
                            .receiver
                            .stream_ended(sender, "the peer closed it");
                    }
                    return Ok(Response::new(proto::PushReply {}));
                }
                Err(status) => {
                    if let Some(sender) = from {
                        self.state.receiver.stream_ended(sender, status.message());
                    }
                    return Err(status);
                }
            }
        }
    }

    async fn stats(
        &self,
        _: Request<proto::StatsRequest>,
    ) -> Result<Response<proto::WorkerCounters>, Status> {
        Ok(Response::new(self.state.snapshot()))
    }

    async fn queues(
        &self,
        _: Request<proto::QueuesRequest>,
    ) -> Result<Response<proto::QueuesReply>, Status> {
        Ok(Response::new(crate::queues::queues(&self.state)))
    }
}

impl WorkerService {
    fn device(&self, local: u32) -> Result<Device, Status> {
        self.state
            .client
            .addressable_devices()
            .into_iter()
            .find(|d| d.id() as u32 == local)
            .ok_or_else(|| invalid(format!("this worker has no device {local}")))
    }
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

/// Enqueues a part, keeps its outputs, waits for it and reports to the
/// controller. Runs on its own thread.
#[allow(clippy::too_many_arguments)]
fn execute_part(
    state: Arc<State>,
    ticket: u64,
    run: u64,
    part: Part,
    work: Work,
    executables: Vec<Arc<pw_pjrt::LoadedExecutable>>,
    bindings: Bindings,
    record: bool,
    t0: Instant,
) {
    let peers = RunPeers {
        state: state.clone(),
        run,
        addresses: state
            .runs
            .lock()
            .ok()
            .and_then(|r| r.get(&run).cloned())
            .unwrap_or_default(),
        sends: Arc::default(),
        t0,
    };
    let (part, work) = (Arc::new(part), Arc::new(work));
    let outcome = {
        let _turn = state.gang.wait(ticket);
        state.queues.start(run, part.clone(), work.clone());
        let values = bindings.inputs(&state.store, run, &part);
        let outcome =
            state
                .executor
                .enqueue(run, &part, &work, &executables, values, &peers, t0, record);
        if let Ok(enqueued) = &outcome {
            for &id in &part.outputs {
                let targets = match bindings.outputs.get(&id) {
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
    };
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
            report.held = held(&state, run, &part, &bindings, &mut enqueued);
            let r = PartReport {
                worker: part.worker,
                enqueued: enqueued.enqueued,
                steps: if record {
                    let timings = enqueued.timings(report.error.is_empty());
                    part.steps.iter().map(|s| s.index).zip(timings).collect()
                } else {
                    Vec::new()
                },
                sends: peers.sends.lock().map(|s| s.clone()).unwrap_or_default(),
                peak_bytes: enqueued.peak_bytes.clone(),
            };
            report.report_json = serde_json::to_string(&r).unwrap_or_default();
            drop(enqueued);
        }
    }
    let counter = if report.error.is_empty() {
        &state.counters.parts_done
    } else {
        &state.counters.parts_failed
    };
    counter.fetch_add(1, Ordering::Relaxed);
    state.report(proto::worker_event::Event::PartDone(report));
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
    for (id, shards, _) in std::mem::take(&mut enqueued.retained) {
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
