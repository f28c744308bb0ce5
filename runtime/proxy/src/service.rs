//! `xla.ifrt.proxy.GrpcIfrtService` on pw-server: the version handshake,
//! one [`Session`] per `IfrtSession` stream, and the host buffers the
//! client stores and looks up beside it.

use crate::{
    host_buffers::{receive, HostBuffers},
    protocol::{self, grpc_ifrt_service_server::GrpcIfrtService},
    session::{request_name, Session},
    Failure,
};
use prost::Message;
use pw_controller::Controller;
use std::{pin::Pin, sync::Arc, time::Duration};
use tokio::sync::mpsc;
use tonic::{Request, Response, Status, Streaming};

/// The protocol versions this server speaks (jaxlib 0.10.2 offers 16..25).
pub const PROTOCOLS: std::ops::RangeInclusive<i32> = 16..=25;

/// The IFRT serialization version of the messages it reads and writes.
const SERDES_VERSION: i32 = 3;

/// How long an `IfrtSession` waits for devices when others hold them.
const DEVICE_WAIT: Duration = Duration::from_secs(60);

/// A gRPC stream of `T`s.
pub(crate) type Stream_<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send>>;

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
        // The session and its budget first; memory only as bytes arrive,
        // each piece readable at once (an upload may forward it already).
        let filling = self.buffers.arriving(m.session_id, m.handle, size)?;
        let received = receive(request.into_inner(), m.handle, size, &filling).await;
        filling.finish(received.clone().map_err(|s| s.message().to_owned()));
        if received.is_err() {
            self.buffers.remove(m.session_id, m.handle);
        }
        received.map(|()| Response::new(protocol::GrpcHostBufferStoreResponse {}))
    }

    type HostBufferLookupStream = Stream_<protocol::GrpcHostBufferLookupResponse>;

    async fn host_buffer_lookup(
        &self,
        request: Request<protocol::GrpcHostBufferLookupRequest>,
    ) -> Result<Response<Self::HostBufferLookupStream>, Status> {
        let r = request.into_inner();
        Ok(Response::new(self.buffers.lookup(r.session_id, r.handle)?))
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
