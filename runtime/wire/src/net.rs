//! Connections between pw's processes: gRPC channels and servers with the
//! tuned HTTP/2 settings of [`crate::framing`], listening addresses, and
//! the token a client presents and a server checks.

use crate::{framing as wire, Error};
use std::{net::SocketAddr, time::Duration};
use tonic::transport::{Channel, Endpoint};

/// A channel to `address` (`host:port`, or a `http://` URI), connected
/// within `timeout`, with large windows, TCP_NODELAY and keepalive.
pub async fn channel(address: &str, timeout: Duration) -> Result<Channel, Error> {
    let uri = if address.contains("://") {
        address.to_owned()
    } else {
        format!("http://{address}")
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

/// A gRPC server builder with the same settings.
pub fn server() -> tonic::transport::Server {
    tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .initial_stream_window_size(wire::STREAM_WINDOW)
        .initial_connection_window_size(wire::CONNECTION_WINDOW)
        .http2_keepalive_interval(Some(wire::KEEPALIVE))
        .http2_keepalive_timeout(Some(wire::KEEPALIVE_TIMEOUT))
}

/// The connections `listener` accepts, with TCP_NODELAY set (a server
/// given its own listener does not set it: small messages would wait for
/// Nagle's algorithm and delayed ACKs, ~40 ms each).
pub fn incoming(
    listener: tokio::net::TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    use tokio_stream::StreamExt;
    tokio_stream::wrappers::TcpListenerStream::new(listener).map(|conn| {
        conn.inspect(|stream| {
            let _ = stream.set_nodelay(true);
        })
    })
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

/// The metadata key that carries a server's token.
pub const TOKEN_KEY: &str = "x-pw-token";

/// The token a client presents: `$PW_TOKEN`, if set.
pub fn client_token() -> Option<String> {
    std::env::var("PW_TOKEN").ok().filter(|t| !t.is_empty())
}

/// Adds the client's token to every request.
#[derive(Clone)]
pub struct PresentToken(Option<tonic::metadata::AsciiMetadataValue>);

impl tonic::service::Interceptor for PresentToken {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(t) = &self.0 {
            request.metadata_mut().insert(TOKEN_KEY, t.clone());
        }
        Ok(request)
    }
}

/// The token of `$PW_TOKEN`, ready to present on a channel.
pub fn present_token() -> PresentToken {
    PresentToken(client_token().and_then(|t| t.parse().ok()))
}

/// A worker's client of the controller's registry on `channel`, presenting
/// `$PW_TOKEN`.
pub type RegistryClient = crate::proto::registry_client::RegistryClient<
    tonic::service::interceptor::InterceptedService<Channel, PresentToken>,
>;

pub fn registry_client(channel: Channel) -> RegistryClient {
    crate::proto::registry_client::RegistryClient::with_interceptor(channel, present_token())
        .max_decoding_message_size(wire::MAX_MESSAGE_BYTES)
        .max_encoding_message_size(wire::MAX_MESSAGE_BYTES)
}

/// Refuses requests that do not present the server's token (when it has
/// one). The comparison takes the same time wherever the tokens differ.
#[derive(Clone)]
pub struct CheckToken(pub Option<Vec<u8>>);

impl tonic::service::Interceptor for CheckToken {
    fn call(&mut self, request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        let Some(want) = &self.0 else {
            return Ok(request);
        };
        let given = request
            .metadata()
            .get(TOKEN_KEY)
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        let same = given.len() == want.len()
            && given
                .iter()
                .zip(want)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if same {
            Ok(request)
        } else {
            Err(tonic::Status::unauthenticated(
                "this pw-server needs its token: set PW_TOKEN (or pass token=) to the server's --token",
            ))
        }
    }
}

/// Whether `address` (`host:port`) is a loopback address.
pub async fn is_loopback(address: &str) -> bool {
    match tokio::net::lookup_host(address).await {
        Ok(mut addrs) => addrs.all(|a| a.ip().is_loopback()),
        Err(_) => false,
    }
}

/// `service`, refusing requests without `token` (when given).
pub fn checked<S>(
    service: S,
    token: Option<String>,
) -> tonic::service::interceptor::InterceptedService<S, CheckToken> {
    tonic::service::interceptor::InterceptedService::new(
        service,
        CheckToken(token.map(String::into_bytes)),
    )
}
