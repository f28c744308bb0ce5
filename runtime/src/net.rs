//! Connections between pw's processes: gRPC channels and servers with the
//! tuned HTTP/2 settings of [`crate::wire`], and listening addresses.

use crate::wire;
use std::{net::SocketAddr, time::Duration};
use tonic::transport::{Channel, Endpoint};

/// A channel to `address` (`host:port`, or a `http://` URI), connected
/// within `timeout`, with large windows, TCP_NODELAY and keepalive.
pub async fn channel(address: &str, timeout: Duration) -> Result<Channel, String> {
    let uri = if address.contains("://") {
        address.to_owned()
    } else {
        format!("http://{address}")
    };
    let endpoint = Endpoint::from_shared(uri)
        .map_err(|e| format!("bad address {address:?}: {e}"))?
        .connect_timeout(timeout)
        .tcp_nodelay(true)
        .initial_stream_window_size(wire::STREAM_WINDOW)
        .initial_connection_window_size(wire::CONNECTION_WINDOW)
        .http2_keep_alive_interval(wire::KEEPALIVE)
        .keep_alive_timeout(wire::KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true);
    tokio::time::timeout(timeout, endpoint.connect())
        .await
        .map_err(|_| format!("no answer from {address} within {timeout:?}"))?
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
            message
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
pub async fn bind(address: &str) -> Result<tokio::net::TcpListener, String> {
    let addr: SocketAddr = tokio::net::lookup_host(address)
        .await
        .map_err(|e| format!("cannot resolve {address:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("{address:?} resolves to no address"))?;
    tokio::net::TcpListener::bind(addr).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => {
            format!("cannot listen on {addr}: the address is already in use (is another pw-server or pw-worker running there?)")
        }
        std::io::ErrorKind::AddrNotAvailable => {
            format!("cannot listen on {addr}: no local interface has that address")
        }
        _ => format!("cannot listen on {addr}: {e}"),
    })
}
