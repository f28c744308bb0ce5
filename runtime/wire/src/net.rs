//! Connections between pw's processes: gRPC channels and servers with the
//! tuned HTTP/2 settings of [`crate::framing`], listening addresses, and
//! the token a client presents and a server checks.

use crate::{auth, framing as wire, Error};
use std::{net::SocketAddr, time::Duration};
use tonic::transport::{Channel, Endpoint};

/// A channel to `address` (`host:port`, or a `http://` URI), connected
/// within `timeout`, with large windows, TCP_NODELAY and keepalive.
pub async fn channel(address: &str, timeout: Duration) -> Result<Channel, Error> {
    let tls = crate::tls::client()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let uri = match address.split_once("://") {
        Some((_, rest)) => format!("{scheme}://{rest}"),
        None => format!("{scheme}://{address}"),
    };
    let endpoint = Endpoint::from_shared(uri)
        .map_err(|e| Error::BadAddress {
            address: address.to_owned(),
            reason: e.to_string(),
        })?
        .connect_timeout(timeout)
        .tcp_nodelay(true)
        .initial_stream_window_size(wire::STREAM_WINDOW)
        .initial_connection_window_size(wire::CONNECTION_WINDOW)
        .http2_keep_alive_interval(wire::KEEPALIVE)
        .keep_alive_timeout(wire::KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true);
    let endpoint = match tls {
        Some(tls) => endpoint.tls_config(tls).map_err(|e| Error::Connect {
            address: address.to_owned(),
            reason: format!("TLS: {e}"),
        })?,
        None => endpoint,
    };
    tokio::time::timeout(timeout, endpoint.connect())
        .await
        .map_err(|_| Error::NoAnswer {
            address: address.to_owned(),
            timeout,
        })?
        .map_err(|e| {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                let part = s.to_string();
                if !message.contains(&part) {
                    message = format!("{message}: {part}");
                }
                source = s.source();
            }
            Error::Connect {
                address: address.to_owned(),
                reason: message,
            }
        })
}

/// A gRPC server builder with the same settings, serving TLS when this
/// process has a certificate ([`crate::tls`]).
pub fn server() -> Result<tonic::transport::Server, Error> {
    let server = tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .initial_stream_window_size(wire::STREAM_WINDOW)
        .initial_connection_window_size(wire::CONNECTION_WINDOW)
        .http2_keepalive_interval(Some(wire::KEEPALIVE))
        .http2_keepalive_timeout(Some(wire::KEEPALIVE_TIMEOUT));
    match crate::tls::server()? {
        Some(tls) => server.tls_config(tls).map_err(|e| Error::Tls {
            flag: "--tls-cert (PW_TLS_CERT)",
            path: std::path::PathBuf::new(),
            reason: e.to_string(),
        }),
        None => Ok(server),
    }
}

/// How long a new connection may stay silent before it is closed.
pub const SILENT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections a listener keeps that have not said anything yet;
/// past it, the oldest silent one is closed.
pub const MAX_SILENT: usize = 256;

/// The connections `listener` accepts that speak, with TCP_NODELAY set (a
/// server given its own listener does not set it: small messages would
/// wait for Nagle's algorithm and delayed ACKs, ~40 ms each).
///
/// A connection is handed on once its first bytes arrive. One that says
/// nothing for [`SILENT_TIMEOUT`] is closed, and at most [`MAX_SILENT`]
/// silent ones are kept (a new one closes the oldest), so idle
/// connections cannot use up the process's file descriptors and keep
/// real clients out. When accepting fails (no descriptor left), the
/// listener pauses briefly instead of spinning.
pub fn incoming(
    listener: tokio::net::TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let silent = std::sync::Arc::new(std::sync::Mutex::new(Silent::default()));
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!("accepting a connection failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = tx.closed() => return,
            };
            let _ = stream.set_nodelay(true);
            let (tx, list) = (tx.clone(), silent.clone());
            // Held while the waiter is listed: it cannot leave the list first.
            let mut s = lock(&silent);
            let id = s.next_id();
            let waiter = tokio::spawn(async move {
                let mut first = [0u8; 1];
                let spoke = matches!(
                    tokio::time::timeout(SILENT_TIMEOUT, stream.peek(&mut first)).await,
                    Ok(Ok(n)) if n > 0
                );
                lock(&list).remove(id);
                if spoke {
                    let _ = tx.send(Ok(stream)).await;
                }
            });
            s.waiting.push_back((id, waiter.abort_handle()));
            if s.waiting.len() > MAX_SILENT {
                if let Some((_, oldest)) = s.waiting.pop_front() {
                    oldest.abort();
                }
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// The first bytes of a session link: a client's session on pw-server's
/// port spoken as framed messages on a plain TCP connection
/// ([`crate::link::write_message`]) rather than gRPC, so that a call costs
/// one small write.
pub const SESSION_LINK_MAGIC: &[u8; 8] = b"pw-link1";

/// Splits the connections of `incoming` ([`incoming`]) by what they speak:
/// those that open with [`SESSION_LINK_MAGIC`] (its bytes read) go to the
/// receiver, the others (gRPC) to the stream, untouched. A connection
/// that stops before it says which is closed after [`SILENT_TIMEOUT`].
pub fn split_links(
    incoming: impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> + Send + 'static,
) -> (
    impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>>,
    tokio::sync::mpsc::Receiver<tokio::net::TcpStream>,
) {
    use tokio::io::AsyncReadExt;
    use tokio_stream::StreamExt;
    let (grpc_tx, grpc_rx) = tokio::sync::mpsc::channel(64);
    let (link_tx, link_rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let mut incoming = std::pin::pin!(incoming);
        while let Some(stream) = incoming.next().await {
            let Ok(mut stream) = stream else { continue };
            let (grpc_tx, link_tx) = (grpc_tx.clone(), link_tx.clone());
            tokio::spawn(async move {
                let mut first = [0u8; 8];
                let link = async {
                    loop {
                        let n = stream.peek(&mut first).await?;
                        if n == 0 || first[..n] != SESSION_LINK_MAGIC[..n] {
                            return Ok::<bool, std::io::Error>(false);
                        }
                        if n == first.len() {
                            return Ok(true);
                        }
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                };
                match tokio::time::timeout(SILENT_TIMEOUT, link).await {
                    Ok(Ok(true)) if stream.read_exact(&mut first).await.is_ok() => {
                        let _ = link_tx.send(stream).await;
                    }
                    Ok(Ok(false)) => {
                        let _ = grpc_tx.send(Ok(stream)).await;
                    }
                    _ => {}
                }
            });
        }
    });
    (
        tokio_stream::wrappers::ReceiverStream::new(grpc_rx),
        link_rx,
    )
}

/// The silent connections of a listener, oldest first.
#[derive(Default)]
struct Silent {
    waiting: std::collections::VecDeque<(u64, tokio::task::AbortHandle)>,
    next: u64,
}

impl Silent {
    fn next_id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    fn remove(&mut self, id: u64) {
        self.waiting.retain(|(i, _)| *i != id);
    }
}

fn lock(s: &std::sync::Mutex<Silent>) -> std::sync::MutexGuard<'_, Silent> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// Binds `address` (`host:port`; port 0 picks a free one), with a clear
/// error when it is taken or not local.
pub async fn bind(address: &str) -> Result<tokio::net::TcpListener, Error> {
    let addr: SocketAddr = tokio::net::lookup_host(address)
        .await
        .map_err(|e| Error::Resolve {
            address: address.to_owned(),
            reason: e.to_string(),
        })?
        .next()
        .ok_or_else(|| Error::Unresolved {
            address: address.to_owned(),
        })?;
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AddrInUse => Error::InUse { addr },
            std::io::ErrorKind::AddrNotAvailable => Error::NotLocal { addr },
            _ => Error::Listen {
                addr,
                reason: e.to_string(),
            },
        })
}

/// The metadata key that carries a server's token (clients).
pub const TOKEN_KEY: &str = "x-pw-token";
/// The metadata key that carries the cluster secret (workers, controller).
pub const CLUSTER_KEY: &str = "x-pw-cluster";
/// The metadata key that carries a session's key (see [`crate::auth`]).
pub const SESSION_KEY: &str = "x-pw-session-key";

/// The token a client presents: `$PW_TOKEN`, if set.
pub fn client_token() -> Option<String> {
    std::env::var("PW_TOKEN").ok().filter(|t| !t.is_empty())
}

/// Adds a credential (a header) to every request, when there is one.
#[derive(Clone)]
pub struct Present(Option<(&'static str, tonic::metadata::AsciiMetadataValue)>);

impl tonic::service::Interceptor for Present {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some((key, value)) = &self.0 {
            request.metadata_mut().insert(*key, value.clone());
        }
        Ok(request)
    }
}

/// The token of `$PW_TOKEN`, ready to present on a channel.
pub fn present_token() -> Present {
    Present(client_token().and_then(|t| Some((TOKEN_KEY, t.parse().ok()?))))
}

/// This process's cluster secret, ready to present on a channel.
pub fn present_cluster_secret() -> Present {
    Present(auth::cluster_secret().and_then(|s| {
        let value = tonic::metadata::AsciiMetadataValue::try_from(s.as_bytes()).ok()?;
        Some((CLUSTER_KEY, value))
    }))
}

/// A channel presenting the cluster secret.
pub type ClusterChannel = tonic::service::interceptor::InterceptedService<Channel, Present>;

/// A worker's client of the controller's registry on `channel`, presenting
/// the cluster secret.
pub type RegistryClient = crate::proto::registry_client::RegistryClient<ClusterChannel>;

pub fn registry_client(channel: Channel) -> RegistryClient {
    crate::proto::registry_client::RegistryClient::with_interceptor(
        channel,
        present_cluster_secret(),
    )
    .max_decoding_message_size(wire::MAX_MESSAGE_BYTES)
    .max_encoding_message_size(wire::MAX_MESSAGE_BYTES)
}

/// A client of a worker's service (the controller's, or a peer's) on
/// `channel`, presenting the cluster secret.
pub type WorkerClient = crate::proto::worker_client::WorkerClient<ClusterChannel>;

pub fn worker_client(channel: Channel) -> WorkerClient {
    crate::proto::worker_client::WorkerClient::with_interceptor(channel, present_cluster_secret())
        .max_decoding_message_size(wire::MAX_MESSAGE_BYTES)
        .max_encoding_message_size(wire::MAX_MESSAGE_BYTES)
}

/// Refuses requests that do not present `want` under `key` (when there is
/// one to want). The comparison takes the same time wherever they differ;
/// the refusal says which credential is missing, never its value.
#[derive(Clone)]
pub struct Check {
    key: &'static str,
    want: Option<Vec<u8>>,
    hint: &'static str,
}

impl tonic::service::Interceptor for Check {
    fn call(&mut self, request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        let Some(want) = &self.want else {
            return Ok(request);
        };
        let given = request
            .metadata()
            .get(self.key)
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        if auth::same(given, want) {
            Ok(request)
        } else {
            Err(tonic::Status::unauthenticated(self.hint))
        }
    }
}

/// `service`, refusing requests without the client token `token` (when
/// given).
pub fn checked<S>(
    service: S,
    token: Option<String>,
) -> tonic::service::interceptor::InterceptedService<S, Check> {
    tonic::service::interceptor::InterceptedService::new(
        service,
        Check {
            key: TOKEN_KEY,
            want: token.map(String::into_bytes),
            hint: "this pw-server needs its token: set PW_TOKEN (or pass token=) to the server's --token",
        },
    )
}

/// `service`, refusing requests without this process's cluster secret
/// (when it has one): the ports only the cluster's own processes use.
pub fn cluster_only<S>(service: S) -> tonic::service::interceptor::InterceptedService<S, Check> {
    tonic::service::interceptor::InterceptedService::new(
        service,
        Check {
            key: CLUSTER_KEY,
            want: auth::cluster_secret().map(|s| s.as_bytes().to_vec()),
            hint: "this port serves only pw's own processes: they present the cluster secret (PW_CLUSTER_SECRET)",
        },
    )
}

/// Whether `address` (`host:port`) is a loopback address.
pub async fn is_loopback(address: &str) -> bool {
    match tokio::net::lookup_host(address).await {
        Ok(mut addrs) => addrs.all(|a| a.ip().is_loopback()),
        Err(_) => false,
    }
}

/// The address a `flag` (`--http`, `--metrics`) asks to listen on:
/// `HOST:PORT`, or a bare port on loopback.
pub fn listen_address(asked: &str, flag: &str) -> Result<std::net::SocketAddr, String> {
    let full = if asked.bytes().all(|b| b.is_ascii_digit()) && !asked.is_empty() {
        format!("127.0.0.1:{asked}")
    } else {
        asked.to_owned()
    };
    use std::net::ToSocketAddrs;
    full.to_socket_addrs()
        .map_err(|e| format!("{flag} {asked}: not HOST:PORT or PORT: {e}"))?
        .next()
        .ok_or_else(|| format!("{flag} {asked}: names no address"))
}
