//! The worker's gRPC service: what the controller and peer workers ask of
//! it. Every request is checked before it is acted on (sizes against
//! limits before allocating, plans with [`Part::check`]); a bad one gets an
//! `INVALID_ARGUMENT` or `FAILED_PRECONDITION` status naming what is wrong.

use crate::State;
use bytes::Bytes;
use pw_exec::{
    cache::{compile_options, Key},
    Error, Need, PieceKey,
};
use pw_pjrt::Program;
use pw_wire::{self as wire, proto, Collect};
use std::{
    pin::Pin,
    sync::{atomic::Ordering, Arc},
};
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

/// The largest serialized executable accepted.
const MAX_EXECUTABLE_BYTES: u64 = 4 << 30;
/// The largest input shard accepted.
pub(crate) const MAX_SHARD_BYTES: u64 = 64 << 30;

type Stream_<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

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
        if self.state.faults.on_put() {
            return Err(Status::unavailable("PW_WORKER_FAULTS=exit-on-put"));
        }
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
        let device = self.state.device(local).map_err(invalid)?;
        let head = first
            .chunk
            .ok_or_else(|| invalid("input shard: no chunk"))?;
        let mut check =
            wire::ChunkCheck::new(&head, size, Some(size), "input shard").map_err(invalid)?;
        // The chunks as they came (memory only as bytes arrive), checked;
        // then onto the device one by one, without a copy of the whole.
        let mut chunks = Vec::new();
        let mut chunk = head;
        while !check.check(&chunk).map_err(invalid)? {
            chunks.push(chunk.data);
            chunk = stream
                .message()
                .await?
                .ok_or_else(|| invalid(check.truncated()))?
                .chunk
                .ok_or_else(|| invalid("input shard: no chunk"))?;
        }
        chunks.push(chunk.data);
        let (mut transfer, buffer) = self
            .state
            .client
            .buffer_for_async_transfer(&device, dtype, &dims)
            .map_err(|e| Status::resource_exhausted(e.to_string()))?;
        let count = chunks.len();
        for (i, data) in chunks.into_iter().enumerate() {
            transfer
                .write(data, i + 1 == count)
                .map_err(|e| Status::internal(e.to_string()))?;
        }
        self.state
            .counters
            .bytes_from_controller
            .fetch_add(size, Ordering::Relaxed);
        self.state
            .store
            .put(run, value, position, Arc::new(buffer))
            .map_err(Status::failed_precondition)?;
        Ok(Response::new(proto::PutReply {}))
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
        let mut reply = crate::queues::queues(&self.state);
        let activity = &self.state.activity;
        reply.timelines = activity.timelines(std::time::Instant::now());
        reply.devices = activity.counters(&self.state);
        Ok(Response::new(reply))
    }
}
