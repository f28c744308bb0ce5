//! The controller's gRPC service: worker sessions, runs for clients, and
//! status.

use crate::{api, registry, Controller, RunRequest};
use pw_exec::HostArray;
use pw_wire::{self as wire, proto, Arrays, Collect};
use std::pin::Pin;
use tokio::sync::mpsc;
use tokio_stream::{wrappers::UnboundedReceiverStream, Stream};
use tonic::{Request, Response, Status, Streaming};

/// The largest program (text or bytecode) a client may send.
const MAX_PROGRAM_BYTES: u64 = 1 << 30;

type Stream_<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// See the module doc.
#[derive(Clone)]
pub struct ControllerService {
    controller: Controller,
}

impl ControllerService {
    pub fn new(controller: Controller) -> ControllerService {
        ControllerService { controller }
    }
}

fn invalid(message: impl std::fmt::Display) -> Status {
    Status::invalid_argument(message.to_string())
}

/// The session key a request presents (`x-pw-session-key`).
fn key_of<T>(request: &Request<T>) -> Option<&str> {
    request
        .metadata()
        .get(wire::net::SESSION_KEY)
        .and_then(|v| v.to_str().ok())
}

/// A stream of a client's messages: a gRPC stream, or a session link
/// ([`crate::sessions::link`]).
pub trait Messages<M>: Send {
    /// The next message; None once the client closed the stream.
    fn next_message(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<M>, Status>> + Send;
}

impl<M: prost::Message + Default + Send + 'static> Messages<M> for Streaming<M> {
    async fn next_message(&mut self) -> Result<Option<M>, Status> {
        self.message().await
    }
}

/// Reads `count` host arrays sent as `RunInput` chunks, in order, each
/// checked as it arrives; returns them and their bytes.
pub(crate) async fn read_inputs<M>(
    stream: &mut impl Messages<M>,
    count: usize,
    limit: u64,
    input_of: impl Fn(M) -> Option<proto::RunInput>,
) -> Result<(Vec<HostArray>, u64), Status> {
    let mut inputs: Vec<HostArray> = Vec::with_capacity(count.min(1 << 16));
    let mut arrays = Arrays::new("input", limit);
    let mut received = 0u64;
    while inputs.len() < count {
        let message = stream.next_message().await?.ok_or_else(|| {
            invalid(format!(
                "the client sent {} of {count} inputs",
                inputs.len()
            ))
        })?;
        let input = input_of(message).ok_or_else(|| invalid("expected an input"))?;
        let complete = arrays
            .push(input.index, input.r#type.as_ref(), input.chunk.as_ref())
            .map_err(invalid)?;
        if let Some((dtype, dims, data)) = complete {
            received += data.len() as u64;
            inputs.push(HostArray::new(dtype, &dims, data).map_err(invalid)?);
        }
    }
    Ok((inputs, received))
}

#[tonic::async_trait]
impl proto::registry_server::Registry for ControllerService {
    type AttachStream = Stream_<proto::ControllerEvent>;

    async fn attach(
        &self,
        request: Request<Streaming<proto::WorkerEvent>>,
    ) -> Result<Response<Self::AttachStream>, Status> {
        let mut events = request.into_inner();
        let first = tokio::time::timeout(std::time::Duration::from_secs(5), events.message())
            .await
            .map_err(|_| invalid("no registration within 5 s"))??;
        let register = match first {
            Some(proto::WorkerEvent {
                event: Some(proto::worker_event::Event::Register(r)),
            }) => r,
            _ => return Err(invalid("a worker session must start with `register`")),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let mut strangers = Vec::new();
        let reply = match registry::register(&self.controller, &register, tx.clone()).await {
            Ok((registered, kept_for_nobody)) => {
                strangers = kept_for_nobody;
                proto::controller_event::Event::Registered(registered)
            }
            Err(reason) => {
                tracing::warn!(address = %register.address, %reason, "refused a worker");
                proto::controller_event::Event::Refused(proto::Refused { reason })
            }
        };
        let worker = match &reply {
            proto::controller_event::Event::Registered(r) => Some(r.worker),
            _ => None,
        };
        let _ = tx.send(Ok(proto::ControllerEvent { event: Some(reply) }));
        if let Some(worker) = worker {
            self.controller
                .sessions()
                .release_strangers(worker, &strangers);
            let controller = self.controller.clone();
            drop(tx);
            tokio::spawn(async move {
                let why = loop {
                    match events.message().await {
                        Ok(Some(proto::WorkerEvent {
                            event: Some(proto::worker_event::Event::Register(_)),
                        })) => break "it registered twice on one session".to_owned(),
                        Ok(Some(proto::WorkerEvent { event: Some(e) })) => {
                            crate::worker_link::route(&controller, worker, e)
                        }
                        Ok(Some(_)) => {}
                        Ok(None) => break "its session ended".to_owned(),
                        Err(status) => break format!("its session failed: {}", status.message()),
                    }
                };
                registry::lost(&controller, worker, &why);
            });
        }
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }
}

#[tonic::async_trait]
impl api::controller_server::Controller for ControllerService {
    type RunStream = Stream_<proto::RunReply>;

    async fn run(
        &self,
        request: Request<Streaming<proto::RunRequest>>,
    ) -> Result<Response<Self::RunStream>, Status> {
        let mut stream = request.into_inner();
        let begin = match stream.message().await? {
            Some(proto::RunRequest {
                request: Some(proto::run_request::Request::Begin(b)),
            }) => b,
            _ => return Err(invalid("a run must start with `begin`")),
        };
        if begin.protocol != pw_wire::PROTOCOL as i32 {
            return Err(Status::failed_precondition(format!(
                "the client speaks wire protocol {}, this server {}",
                begin.protocol,
                pw_wire::PROTOCOL as i32
            )));
        }
        // The program (MLIR text or bytecode).
        let first = match stream.message().await? {
            Some(proto::RunRequest {
                request: Some(proto::run_request::Request::Program(c)),
            }) => c,
            _ => return Err(invalid("`begin` must be followed by the program")),
        };
        let mut program =
            Collect::new(&first, MAX_PROGRAM_BYTES, None, "the program").map_err(invalid)?;
        let mut source = program.push(&first).map_err(invalid)?;
        while source.is_none() {
            let chunk = match stream.message().await? {
                Some(proto::RunRequest {
                    request: Some(proto::run_request::Request::Program(c)),
                }) => c,
                _ => return Err(invalid(program.truncated())),
            };
            source = program.push(&chunk).map_err(invalid)?;
        }
        let source = source.unwrap_or_default();
        let limit = self.controller.config().limits.request_bytes;
        let (inputs, received) =
            read_inputs(&mut stream, begin.inputs as usize, limit, |m| {
                match m.request {
                    Some(proto::run_request::Request::Input(i)) => Some(i),
                    _ => None,
                }
            })
            .await?;
        self.controller.status().count_client_bytes(received, 0);
        let (tx, rx) = mpsc::unbounded_channel();
        let controller = self.controller.clone();
        let request = RunRequest {
            name: begin.name,
            source,
            inputs: inputs.into_iter().map(std::sync::Arc::new).collect(),
            record: begin.record,
            timeout: (begin.timeout_ms > 0)
                .then(|| std::time::Duration::from_millis(begin.timeout_ms)),
            schedule: (!begin.schedule.is_empty()).then_some(begin.schedule),
        };
        tokio::spawn(async move {
            let progress_tx = tx.clone();
            let progress = move |line: String| {
                let _ = progress_tx.send(Ok(proto::RunReply {
                    reply: Some(proto::run_reply::Reply::Progress(line)),
                }));
            };
            match crate::run::run(&controller, request, &progress).await {
                Err(e) => {
                    let _ = tx.send(Err(Status::from(e)));
                }
                Ok((outputs, summary)) => {
                    let json = serde_json::to_string(&summary).unwrap_or_default();
                    let _ = tx.send(Ok(proto::RunReply {
                        reply: Some(proto::run_reply::Reply::ReportJson(json)),
                    }));
                    let mut sent = 0;
                    for (index, output) in outputs.into_iter().enumerate() {
                        let t = proto::ArrayType::of(output.dtype(), output.shape());
                        sent += output.bytes().len() as u64;
                        for (i, chunk) in wire::chunks(bytes::Bytes::from(output.into_bytes()))
                            .into_iter()
                            .enumerate()
                        {
                            let reply = proto::RunOutput {
                                index: index as u32,
                                r#type: (i == 0).then(|| t.clone()),
                                chunk: Some(chunk),
                            };
                            let _ = tx.send(Ok(proto::RunReply {
                                reply: Some(proto::run_reply::Reply::Output(reply)),
                            }));
                        }
                    }
                    controller.status().count_client_bytes(0, sent);
                }
            }
        });
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }

    async fn status(
        &self,
        _: Request<proto::StatusRequest>,
    ) -> Result<Response<proto::StatusReply>, Status> {
        Ok(Response::new(self.controller.status().reply()))
    }

    type SessionStream = Stream_<proto::SessionEvent>;

    async fn session(
        &self,
        request: Request<Streaming<proto::SessionRequest>>,
    ) -> Result<Response<Self::SessionStream>, Status> {
        let mut incoming = request.into_inner();
        let open = match incoming.message().await? {
            Some(proto::SessionRequest {
                request: Some(proto::session_request::Request::Open(o)),
            }) => o,
            _ => return Err(invalid("a session must start with `open`")),
        };
        if open.protocol != pw_wire::PROTOCOL as i32 {
            return Err(Status::failed_precondition(format!(
                "the client speaks wire protocol {}, this server {}",
                open.protocol,
                pw_wire::PROTOCOL as i32
            )));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let controller = self.controller.clone();
        tokio::spawn(async move { controller.sessions().serve(open, incoming, tx).await });
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }

    type CompileProgramStream = Stream_<proto::CompileProgramReply>;

    async fn compile_program(
        &self,
        request: Request<proto::CompileProgramRequest>,
    ) -> Result<Response<Self::CompileProgramStream>, Status> {
        self.controller
            .sessions()
            .authorize(request.get_ref().session, key_of(&request))?;
        let request = request.into_inner();
        if request.program.len() as u64 > MAX_PROGRAM_BYTES {
            return Err(invalid("the program is larger than 1 GiB"));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let controller = self.controller.clone();
        tokio::spawn(async move {
            let progress_tx = tx.clone();
            let progress = move |line: String| {
                let _ = progress_tx.send(Ok(proto::CompileProgramReply {
                    reply: Some(proto::compile_program_reply::Reply::Progress(line)),
                }));
            };
            let reply = match controller
                .sessions()
                .compile_program(request, &progress)
                .await
            {
                Ok(p) => Ok(proto::CompileProgramReply {
                    reply: Some(proto::compile_program_reply::Reply::Program(p)),
                }),
                Err(e) => Err(Status::from(e)),
            };
            let _ = tx.send(reply);
        });
        Ok(Response::new(Box::pin(UnboundedReceiverStream::new(rx))))
    }

    async fn session_stats(
        &self,
        request: Request<proto::SessionStatsRequest>,
    ) -> Result<Response<proto::SessionCounters>, Status> {
        self.controller
            .sessions()
            .authorize(request.get_ref().session, key_of(&request))?;
        Ok(Response::new(
            self.controller
                .sessions()
                .stats(request.get_ref().session)?,
        ))
    }

    async fn overview(
        &self,
        _: Request<proto::OverviewRequest>,
    ) -> Result<Response<proto::OverviewReply>, Status> {
        let json = self.controller.status().overview().await.to_string();
        Ok(Response::new(proto::OverviewReply { json }))
    }
}
