//! `xla.ifrt.proxy.GrpcIfrtService` on pw-server: the version handshake,
//! one [`Session`] per `IfrtSession` stream, and the host buffers the
//! client stores and looks up beside it.

use crate::{
    protocol::{self, grpc_ifrt_service_server::GrpcIfrtService},
    session::{request_name, Session},
    Failure,
};
use bytes::Bytes;
use prost::Message;
use pw_controller::Controller;
use std::{
    collections::HashMap,
    pin::Pin,
    sync::{Arc, Mutex},
    time::Duration,
};
use tokio::sync::{mpsc, Notify};
use tonic::{Request, Response, Status, Streaming};

/// The protocol versions this server speaks (jaxlib 0.10.2 offers 16..25).
pub const PROTOCOLS: std::ops::RangeInclusive<i32> = 16..=25;

/// The IFRT serialization version of the messages it reads and writes.
const SERDES_VERSION: i32 = 3;

/// How long an `IfrtSession` waits for devices when others hold them.
const DEVICE_WAIT: Duration = Duration::from_secs(60);

/// Host buffers by IFRT session and handle; a request may wait for one the
/// client has yet to store. Only sessions this server opened have a place
/// here (their ids are random and shown nowhere else), each within its
/// byte budget; a session's buffers go with it.
#[derive(Default)]
pub struct HostBuffers {
    sessions: Mutex<HashMap<u64, Stored>>,
    arrived: Notify,
}

/// One session's host buffers.
struct Stored {
    buffers: HashMap<u64, Bytes>,
    /// Bytes held, and bytes announced by stores under way.
    bytes: u64,
    /// The most `bytes` may reach.
    limit: u64,
}

impl HostBuffers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Stored>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes room for IFRT session `session`'s buffers, at most `limit`
    /// bytes at once.
    pub fn open(&self, session: u64, limit: u64) {
        self.lock().insert(
            session,
            Stored {
                buffers: HashMap::new(),
                bytes: 0,
                limit,
            },
        );
    }

    /// Drops every buffer of `session`, and its place.
    pub fn close(&self, session: u64) {
        self.lock().remove(&session);
        self.arrived.notify_waiters();
    }

    /// Takes `size` bytes of `session`'s budget for a buffer on its way.
    fn reserve(&self, session: u64, handle: u64, size: u64) -> Result<(), Status> {
        let mut s = self.lock();
        let stored = s.get_mut(&session).ok_or_else(|| no_session(session))?;
        let total = stored.bytes.saturating_add(size);
        if total > stored.limit {
            return Err(Status::resource_exhausted(format!(
                "host buffer {handle}: the session's host buffers would hold {total} bytes, over the limit of {} (pw-server --session-transfer-mb)",
                stored.limit
            )));
        }
        stored.bytes = total;
        Ok(())
    }

    /// Gives back `size` bytes of `session`'s budget.
    fn unreserve(&self, session: u64, size: u64) {
        if let Some(stored) = self.lock().get_mut(&session) {
            stored.bytes = stored.bytes.saturating_sub(size);
        }
    }

    /// Stores a buffer for the client to look up, within the session's
    /// budget.
    pub fn put(&self, session: u64, handle: u64, bytes: Bytes) -> Result<(), Status> {
        self.reserve(session, handle, bytes.len() as u64)?;
        self.insert(session, handle, bytes);
        Ok(())
    }

    /// Stores a buffer whose bytes are already counted in the session's
    /// budget (a buffer it replaces gives its own back).
    fn insert(&self, session: u64, handle: u64, bytes: Bytes) {
        let mut s = self.lock();
        let Some(stored) = s.get_mut(&session) else {
            return;
        };
        if let Some(old) = stored.buffers.insert(handle, bytes) {
            stored.bytes = stored.bytes.saturating_sub(old.len() as u64);
        }
        drop(s);
        self.arrived.notify_waiters();
    }

    /// Buffer `handle`, removed, once it is stored (up to `wait`).
    pub async fn take(&self, session: u64, handle: u64, wait: Duration) -> Result<Bytes, String> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let arrived = self.arrived.notified();
            if let Some(b) = self.remove(session, handle) {
                return Ok(b);
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return Err(format!(
                    "host buffer {handle} was not stored within {wait:?}"
                ));
            }
        }
    }

    fn get(&self, session: u64, handle: u64) -> Result<Option<Bytes>, Status> {
        let s = self.lock();
        let stored = s.get(&session).ok_or_else(|| no_session(session))?;
        Ok(stored.buffers.get(&handle).cloned())
    }

    fn remove(&self, session: u64, handle: u64) -> Option<Bytes> {
        let mut s = self.lock();
        let stored = s.get_mut(&session)?;
        let bytes = stored.buffers.remove(&handle)?;
        stored.bytes = stored.bytes.saturating_sub(bytes.len() as u64);
        Some(bytes)
    }
}

/// The refusal for a host buffer request naming no session of this server.
fn no_session(session: u64) -> Status {
    Status::not_found(format!(
        "there is no IFRT session {session} on this pw-server (host buffers live inside the session that stores them)"
    ))
}

/// A host buffer's `size` bytes from the client's stream, taken as they
/// arrive.
async fn receive(
    mut incoming: Streaming<protocol::GrpcHostBufferStoreRequest>,
    handle: u64,
    size: u64,
) -> Result<Vec<u8>, Status> {
    let mut data: Vec<u8> = Vec::new();
    while let Some(chunk) = incoming.message().await? {
        if data.len() as u64 + chunk.data.len() as u64 > size {
            return Err(Status::invalid_argument(format!(
                "host buffer {handle}: more than the {size} bytes announced"
            )));
        }
        data.try_reserve(chunk.data.len()).map_err(|_| {
            Status::resource_exhausted(format!("host buffer {handle}: no memory for {size} bytes"))
        })?;
        data.extend_from_slice(&chunk.data);
    }
    if data.len() as u64 != size {
        return Err(Status::invalid_argument(format!(
            "host buffer {handle}: {} of the {size} bytes announced came",
            data.len()
        )));
    }
    Ok(data)
}

/// See the module doc.
#[derive(Clone)]
pub struct ProxyService {
    controller: Controller,
    buffers: Arc<HostBuffers>,
    /// The server's token, which a session's initialization data must
    /// carry ([`TOKEN_KEY`]) when there is one.
    token: Option<Arc<str>>,
}

impl ProxyService {
    pub fn new(controller: Controller, token: Option<String>) -> ProxyService {
        ProxyService {
            controller,
            buffers: Arc::default(),
            token: token.map(Arc::from),
        }
    }

    /// The gRPC service, ready to add to a server.
    pub fn server(self) -> protocol::grpc_ifrt_service_server::GrpcIfrtServiceServer<ProxyService> {
        protocol::grpc_ifrt_service_server::GrpcIfrtServiceServer::new(self)
            .max_decoding_message_size(pw_wire::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(pw_wire::MAX_MESSAGE_BYTES)
    }
}

type Stream_<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send>>;

fn metadata<T: Message + Default>(
    request: &Request<impl Sized>,
    header: &str,
) -> Result<T, Status> {
    let value = request
        .metadata()
        .get_bin(header)
        .ok_or_else(|| Status::invalid_argument(format!("the {header} header is missing")))?;
    let bytes = value
        .to_bytes()
        .map_err(|e| Status::invalid_argument(format!("{header}: {e}")))?;
    T::decode(bytes).map_err(|e| Status::invalid_argument(format!("{header}: {e}")))
}

/// The key of the session's initialization data that asks for a number of
/// devices (the pw JAX plugin sets it from `PW_PROXY_DEVICES`).
pub const DEVICES_KEY: &str = "pw.devices";

/// The key of the session's initialization data that carries the server's
/// token (the pw JAX plugin sets it from `PW_TOKEN`): JAX's proxy client
/// sends no headers of its own.
pub const TOKEN_KEY: &str = "pw.token";

/// Whether the initialization data carries `want`.
fn token_given(data: Option<&protocol::xla::ifrt::AttributeMapProto>, want: &str) -> bool {
    use protocol::xla::ifrt::attribute_map_proto::value::Value;
    match data
        .and_then(|d| d.attributes.get(TOKEN_KEY))
        .and_then(|v| v.value.as_ref())
    {
        Some(Value::StringValue(t)) => pw_wire::auth::same(t, want.as_bytes()),
        _ => false,
    }
}

/// How many devices the client asks for (0: every free device).
fn requested_devices(
    data: Option<&protocol::xla::ifrt::AttributeMapProto>,
) -> Result<usize, Status> {
    use protocol::xla::ifrt::attribute_map_proto::value::Value;
    let Some(v) = data.and_then(|d| d.attributes.get(DEVICES_KEY)) else {
        return Ok(0);
    };
    match v.value {
        Some(Value::Int64Value(n)) if n > 0 => usize::try_from(n).map_err(|_| {
            Status::invalid_argument(format!("{DEVICES_KEY} = {n}: too many devices"))
        }),
        ref other => Err(Status::invalid_argument(format!(
            "{DEVICES_KEY} must be a number of devices above 0, not {other:?}"
        ))),
    }
}

/// The stream of a session whose client lacks the token: nothing is
/// opened, and every request (JAX's first is `Init`) is answered with
/// `UNAUTHENTICATED`, which JAX raises with this message (a refused stream
/// would reach the user only as "CANCELLED").
fn refuse_every_request(
    mut incoming: Streaming<protocol::IfrtRequest>,
) -> Response<Stream_<protocol::IfrtResponse>> {
    const UNAUTHENTICATED: i32 = 16;
    let message = format!(
        "this pw-server needs its token: set PW_TOKEN for the JAX process (the pw JAX plugin sends it as the session's `{TOKEN_KEY}`)"
    );
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(Some(request)) = incoming.message().await {
            let op_id = request.request_metadata.map_or(0, |m| m.op_id);
            let failure = Failure {
                code: UNAUTHENTICATED,
                message: message.clone(),
            };
            if tx.send(Ok(response(op_id, Err(failure)))).is_err() {
                break;
            }
        }
    });
    Response::new(Box::pin(
        tokio_stream::wrappers::UnboundedReceiverStream::new(rx),
    ))
}

/// The response to a request: its op id, and its answer or its failure.
fn response(
    op_id: u64,
    answer: Result<protocol::ifrt_response::Response, Failure>,
) -> protocol::IfrtResponse {
    let (status, response) = match answer {
        Ok(r) => (None, Some(r)),
        Err(f) => (
            Some(protocol::tensorflow::StatusProto {
                code: f.code,
                message: f.message,
                ..Default::default()
            }),
            None,
        ),
    };
    protocol::IfrtResponse {
        response_metadata: Some(protocol::ResponseMetadata {
            op_id,
            status,
            ..Default::default()
        }),
        response,
    }
}

#[tonic::async_trait]
impl GrpcIfrtService for ProxyService {
    async fn get_version(
        &self,
        request: Request<protocol::GrpcGetVersionRequest>,
    ) -> Result<Response<protocol::GrpcGetVersionResponse>, Status> {
        let r = request.into_inner();
        let min = r.min_version.map_or(0, |v| v.protocol_version);
        let max = r.max_version.map_or(0, |v| v.protocol_version);
        let version = (*PROTOCOLS.start()..=*PROTOCOLS.end())
            .rev()
            .find(|v| (min..=max).contains(v))
            .ok_or_else(|| {
                Status::failed_precondition(format!(
                    "this client speaks IFRT proxy protocols {min}..{max}; pw-server speaks {}..{}",
                    PROTOCOLS.start(),
                    PROTOCOLS.end()
                ))
            })?;
        Ok(Response::new(protocol::GrpcGetVersionResponse {
            version: Some(protocol::IfrtProxyVersion {
                protocol_version: version,
                ifrt_serdes_version_number: SERDES_VERSION,
            }),
        }))
    }

    type IfrtSessionStream = Stream_<protocol::IfrtResponse>;

    async fn ifrt_session(
        &self,
        request: Request<Streaming<protocol::IfrtRequest>>,
    ) -> Result<Response<Self::IfrtSessionStream>, Status> {
        let m: protocol::GrpcIfrtSessionMetadata =
            metadata(&request, protocol::SESSION_METADATA_HEADER)?;
        let version = m.version.map_or(0, |v| v.protocol_version);
        if !PROTOCOLS.contains(&version) {
            return Err(Status::failed_precondition(format!(
                "IFRT proxy protocol {version}: pw-server speaks {}..{} (ask GetVersion first)",
                PROTOCOLS.start(),
                PROTOCOLS.end()
            )));
        }
        if let Some(want) = &self.token {
            if !token_given(m.initialization_data.as_ref(), want) {
                return Ok(refuse_every_request(request.into_inner()));
            }
        }
        let devices = requested_devices(m.initialization_data.as_ref())?;
        let name = match request.remote_addr() {
            Some(a) => format!("IFRT proxy client {a}"),
            None => "IFRT proxy client".to_owned(),
        };
        let (id, slice) = self
            .controller
            .sessions()
            .open(name, devices, DEVICE_WAIT)
            .await
            .map_err(Status::from)?;
        let ifrt_id = pw_wire::auth::random_id();
        let limit = self.controller.config().limits.session_transfer_bytes;
        self.buffers.open(ifrt_id, limit);
        let session = Arc::new(Session::new(
            self.controller.clone(),
            (id, ifrt_id),
            slice,
            self.buffers.clone(),
        ));
        let mut incoming = request.into_inner();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let why = loop {
                match incoming.message().await {
                    Ok(Some(request)) => {
                        let op_id = request.request_metadata.map_or(0, |m| m.op_id);
                        let Some(r) = request.request else {
                            let _ = tx.send(Ok(response(
                                op_id,
                                Err(Failure {
                                    code: 3,
                                    message: "a request without a body".into(),
                                }),
                            )));
                            continue;
                        };
                        tracing::debug!(session = id, op_id, "{}", request_name(&r));
                        // Waits run beside the stream; the rest in order, so
                        // that each sees the arrays made before it.
                        let waits = matches!(
                            r,
                            protocol::ifrt_request::Request::CheckValueReadyRequest(_)
                                | protocol::ifrt_request::Request::CheckFutureRequest(_)
                                | protocol::ifrt_request::Request::CopyToHostBufferRequest(_)
                        );
                        if waits {
                            let (s, tx) = (session.clone(), tx.clone());
                            tokio::spawn(async move {
                                let _ = tx.send(Ok(response(op_id, s.handle(r).await)));
                            });
                        } else {
                            let _ = tx.send(Ok(response(op_id, session.handle(r).await)));
                        }
                    }
                    Ok(None) => break "its client closed it".to_owned(),
                    Err(e) => break format!("its client's connection failed: {}", e.message()),
                }
            };
            session.close(&why).await;
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::UnboundedReceiverStream::new(rx),
        )))
    }

    async fn host_buffer_store(
        &self,
        request: Request<Streaming<protocol::GrpcHostBufferStoreRequest>>,
    ) -> Result<Response<protocol::GrpcHostBufferStoreResponse>, Status> {
        let m: protocol::GrpcHostBufferStoreMetadata =
            metadata(&request, protocol::HOST_BUFFER_STORE_METADATA_HEADER)?;
        let size = u64::try_from(m.buffer_size).map_err(|_| {
            Status::invalid_argument(format!(
                "host buffer {}: a size of {} bytes",
                m.handle, m.buffer_size
            ))
        })?;
        // The session and its budget first; memory only as bytes arrive.
        self.buffers.reserve(m.session_id, m.handle, size)?;
        let received = receive(request.into_inner(), m.handle, size).await;
        match received {
            Ok(data) => {
                // Its bytes were reserved before they came: no second check.
                self.buffers
                    .insert(m.session_id, m.handle, Bytes::from(data));
                Ok(Response::new(protocol::GrpcHostBufferStoreResponse {}))
            }
            Err(e) => {
                self.buffers.unreserve(m.session_id, size);
                Err(e)
            }
        }
    }

    type HostBufferLookupStream = Stream_<protocol::GrpcHostBufferLookupResponse>;

    async fn host_buffer_lookup(
        &self,
        request: Request<protocol::GrpcHostBufferLookupRequest>,
    ) -> Result<Response<Self::HostBufferLookupStream>, Status> {
        let r = request.into_inner();
        let bytes = self.buffers.get(r.session_id, r.handle)?.ok_or_else(|| {
            Status::not_found(format!(
                "there is no host buffer {} in session {}",
                r.handle, r.session_id
            ))
        })?;
        // At least one message, also for no bytes.
        let mut chunks: Vec<Result<protocol::GrpcHostBufferLookupResponse, Status>> = bytes
            .chunks(1 << 20)
            .map(|c| {
                Ok(protocol::GrpcHostBufferLookupResponse {
                    data: bytes.slice_ref(c),
                })
            })
            .collect();
        if chunks.is_empty() {
            chunks.push(Ok(protocol::GrpcHostBufferLookupResponse::default()));
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }

    async fn host_buffer_delete(
        &self,
        request: Request<protocol::GrpcHostBufferDeleteRequest>,
    ) -> Result<Response<protocol::GrpcHostBufferDeleteResponse>, Status> {
        let r = request.into_inner();
        self.buffers.remove(r.session_id, r.handle);
        Ok(Response::new(protocol::GrpcHostBufferDeleteResponse {}))
    }

    async fn host_buffer_read_from_disk(
        &self,
        _request: Request<protocol::GrpcHostBufferReadFromDiskRequest>,
    ) -> Result<Response<protocol::GrpcHostBufferReadFromDiskResponse>, Status> {
        Err(Status::unimplemented(
            "pw-server does not read host buffers from disk; unset IFRT_PROXY_GRPC_LARGE_TRANSFER_OPTIMIZATION_DIRECTORY",
        ))
    }
}
