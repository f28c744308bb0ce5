//! Authenticated TCP connections between the cluster's processes, and
//! protobuf messages framed on them.
//!
//! [`connect`] and [`accept`] are the two ends of every such connection:
//! TLS around the TCP stream when this process has the files for it
//! ([`crate::tls::data_plane`]), then the handshake ([`crate::auth`]) that
//! proves both ends hold the cluster secret and fixes the id the
//! connecting side speaks for. The data plane's pieces travel on them
//! (`pw-dataplane`), and so do the controller's commands to a worker and
//! the worker's reports: the controller connects to the worker's data port
//! as [`CONTROLLER`] and the two exchange [`write_message`] frames — a
//! little-endian `u32` length, then a `ControllerEvent` (to the worker) or
//! a `WorkerEvent` (back) — in order, each way, with no round trip per
//! message.

use crate::{auth, tls};
use std::{
    io::{Read, Write},
    net::TcpStream,
    time::Duration,
};

/// The id the controller speaks for on a worker's data port (no worker
/// has it: worker ids count up from 0).
pub const CONTROLLER: u32 = u32::MAX;

/// How long a new connection has to complete its handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// A byte stream both ways: a TCP connection, or TLS over one.
pub trait Duplex: Read + Write + Send {}
impl<T: Read + Write + Send> Duplex for T {}

/// Why a connection could not be made or taken.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("cannot connect to {address}: {source}")]
    Connect {
        address: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{address:?} resolves to no address")]
    Unresolved { address: String },
    #[error("TLS with {address}: {reason}")]
    Tls { address: String, reason: String },
    #[error("the handshake with {address} failed: {source}")]
    Handshake {
        address: String,
        #[source]
        source: auth::HandshakeError,
    },
}

/// Connects to `address` as `from` (a worker's id, or [`CONTROLLER`]):
/// TCP with `TCP_NODELAY`, TLS when this process has a CA, the handshake.
/// Returns the stream, and the TCP connection under it (for timeouts and
/// shutdown).
pub fn connect(
    from: u32,
    address: &str,
    timeout: Duration,
) -> Result<(Box<dyn Duplex>, TcpStream), LinkError> {
    let failed = |source: std::io::Error| LinkError::Connect {
        address: address.to_owned(),
        source,
    };
    let addr = std::net::ToSocketAddrs::to_socket_addrs(address)
        .map_err(failed)?
        .next()
        .ok_or_else(|| LinkError::Unresolved {
            address: address.to_owned(),
        })?;
    let tcp = TcpStream::connect_timeout(&addr, timeout).map_err(failed)?;
    tcp.set_nodelay(true).map_err(failed)?;
    tcp.set_read_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(failed)?;
    let tls = tls::data_plane().map_err(|e| LinkError::Tls {
        address: address.to_owned(),
        reason: e.to_string(),
    })?;
    let mut stream: Box<dyn Duplex> = match &tls.client {
        Some(config) => {
            let bad = |reason: String| LinkError::Tls {
                address: address.to_owned(),
                reason,
            };
            let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
            let name =
                rustls::pki_types::ServerName::try_from(host.trim_matches(['[', ']']).to_owned())
                    .map_err(|e| bad(e.to_string()))?;
            let conn = rustls::ClientConnection::new(config.clone(), name)
                .map_err(|e| bad(e.to_string()))?;
            Box::new(rustls::StreamOwned::new(
                conn,
                tcp.try_clone().map_err(failed)?,
            ))
        }
        None => Box::new(tcp.try_clone().map_err(failed)?),
    };
    auth::introduce(&mut stream, from, auth::cluster_secret()).map_err(|source| {
        LinkError::Handshake {
            address: address.to_owned(),
            source,
        }
    })?;
    tcp.set_read_timeout(None).map_err(failed)?;
    Ok((stream, tcp))
}

/// Takes a connection that came to this process's data port: TLS when it
/// has a certificate, then the handshake. Returns the stream and the id
/// the peer speaks for.
pub fn accept(tcp: &TcpStream) -> Result<(Box<dyn Duplex>, u32), LinkError> {
    let peer = tcp
        .peer_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    let failed = |source: std::io::Error| LinkError::Connect {
        address: peer.clone(),
        source,
    };
    let _ = tcp.set_nodelay(true);
    tcp.set_read_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(failed)?;
    let tls = tls::data_plane().map_err(|e| LinkError::Tls {
        address: peer.clone(),
        reason: e.to_string(),
    })?;
    let plain = tcp.try_clone().map_err(failed)?;
    let mut stream: Box<dyn Duplex> = match &tls.server {
        Some(config) => match rustls::ServerConnection::new(config.clone()) {
            Ok(conn) => Box::new(rustls::StreamOwned::new(conn, plain)),
            Err(e) => {
                return Err(LinkError::Tls {
                    address: peer,
                    reason: e.to_string(),
                })
            }
        },
        None => Box::new(plain),
    };
    let from = auth::admit(&mut stream, auth::cluster_secret()).map_err(|source| {
        LinkError::Handshake {
            address: peer.clone(),
            source,
        }
    })?;
    tcp.set_read_timeout(None).map_err(failed)?;
    Ok((stream, from))
}

/// Writes `message` as one frame (see the module doc).
pub fn write_message(stream: &mut dyn Write, message: &impl prost::Message) -> std::io::Result<()> {
    let len = message.encoded_len();
    let len32 = u32::try_from(len).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("a message of {len} bytes is too large for a frame"),
        )
    })?;
    let mut frame = Vec::with_capacity(4 + len);
    frame.extend_from_slice(&len32.to_le_bytes());
    message
        .encode(&mut frame)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    stream.write_all(&frame)?;
    stream.flush()
}

/// Reads one frame of `M` (at most `limit` bytes; its memory is taken only
/// as its bytes arrive); None when the peer closed the connection between
/// frames.
pub fn read_message<M: prost::Message + Default>(
    stream: &mut dyn Read,
    limit: usize,
) -> std::io::Result<Option<M>> {
    let mut head = [0u8; 4];
    match stream.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(head) as usize;
    if len > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes, more than the {limit} a message may have"),
        ));
    }
    let mut body = Vec::new();
    let got = stream.take(len as u64).read_to_end(&mut body)?;
    if got != len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the connection ended inside a frame ({got} of its {len} bytes)"),
        ));
    }
    M::decode(body.as_slice())
        .map(Some)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto;

    /// Frames round-trip, a closed connection between frames is None, and
    /// a frame over the limit or cut short is an error.
    #[test]
    fn frames() {
        let event = proto::WorkerEvent {
            event: Some(proto::worker_event::Event::PartDone(proto::PartDone {
                run: 7,
                error: "no".into(),
                ..Default::default()
            })),
        };
        let mut bytes = Vec::new();
        write_message(&mut bytes, &event).unwrap();
        write_message(&mut bytes, &event).unwrap();
        let mut r = bytes.as_slice();
        for _ in 0..2 {
            let got: proto::WorkerEvent = read_message(&mut r, 1 << 20).unwrap().unwrap();
            assert_eq!(got, event);
        }
        assert!(read_message::<proto::WorkerEvent>(&mut r, 1 << 20)
            .unwrap()
            .is_none());
        assert!(read_message::<proto::WorkerEvent>(&mut bytes.as_slice(), 4).is_err());
        assert!(read_message::<proto::WorkerEvent>(&mut &bytes[..8], 1 << 20).is_err());
        let huge = (u32::MAX).to_le_bytes();
        assert!(read_message::<proto::WorkerEvent>(&mut &huge[..], 1 << 20).is_err());
    }
}
