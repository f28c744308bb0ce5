//! Pieces as frames on a plain TCP connection per peer (the default
//! transport): the sending [`TcpLink`], and the listener that reads each
//! peer's connection ([`serve_tcp`]).

use crate::{Error, Link, Receiver, Result};
use bytes::Bytes;
use pw_exec::PieceKey;
use pw_wire::{
    self as wire,
    link::{self, Duplex, LinkError},
    proto,
};
use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

/// The most data connections a worker reads at once (each is a thread; a
/// peer needs one per lane).
pub const MAX_DATA_CONNECTIONS: usize = 1024;
/// A frame header: run u64, step u32, piece u32, offset u64, total u64,
/// length u32, flags u32 (bit 0: a CRC follows; bit 1: the piece failed,
/// the payload says why), crc u32; little-endian.
const FRAME_HEADER: usize = 44;

/// Flag of a frame saying its piece will not come.
const FRAME_FAILED: u32 = 2;

/// A frame's header.
fn frame_header(
    key: PieceKey,
    offset: u64,
    total: u64,
    len: usize,
    flags: u32,
    crc: u32,
) -> Vec<u8> {
    let mut frame = Vec::with_capacity(FRAME_HEADER + len.min(SMALL_FRAME));
    frame.extend_from_slice(&key.run.to_le_bytes());
    frame.extend_from_slice(&key.step.to_le_bytes());
    frame.extend_from_slice(&key.piece.to_le_bytes());
    frame.extend_from_slice(&offset.to_le_bytes());
    frame.extend_from_slice(&total.to_le_bytes());
    frame.extend_from_slice(&(len as u32).to_le_bytes());
    frame.extend_from_slice(&flags.to_le_bytes());
    frame.extend_from_slice(&crc.to_le_bytes());
    frame
}

/// Pieces as frames on one TCP connection (inside TLS when this worker has
/// a CA; see [`pw_wire::link`]).
pub struct TcpLink {
    stream: Box<dyn Duplex>,
    address: String,
}

impl TcpLink {
    pub fn connect(from: u32, address: &str, timeout: Duration) -> Result<TcpLink> {
        let (stream, _) = link::connect(from, address, timeout).map_err(|e| match e {
            LinkError::Connect { address, source } => Error::Connect { address, source },
            LinkError::Unresolved { address } => Error::Unresolved { address },
            LinkError::Tls { address, reason } => Error::Tls { address, reason },
            LinkError::Handshake { address, source } => Error::Handshake { address, source },
        })?;
        Ok(TcpLink {
            stream,
            address: address.to_owned(),
        })
    }
}

impl Link for TcpLink {
    fn write(&mut self, key: PieceKey, payload: &[u8], total: u64, crc: u32) -> Result<()> {
        for r in wire::chunk_ranges(payload.len()) {
            let data = &payload[r.clone()];
            let last = r.end as u64 == total;
            let mut frame = frame_header(
                key,
                r.start as u64,
                total,
                data.len(),
                u32::from(last),
                if last { crc } else { 0 },
            );
            // Small chunks go in one write; large ones straight from the payload.
            let written = if data.len() <= SMALL_FRAME {
                frame.extend_from_slice(data);
                self.stream.write_all(&frame)
            } else {
                self.stream
                    .write_all(&frame)
                    .and_then(|()| self.stream.write_all(data))
            };
            written.map_err(|e| self.failed(e))?;
        }
        Ok(())
    }

    fn fail(&mut self, key: PieceKey, why: &str) -> Result<()> {
        let why = &why.as_bytes()[..why.len().min(wire::CHUNK_BYTES)];
        let mut frame = frame_header(key, 0, 0, why.len(), FRAME_FAILED, 0);
        frame.extend_from_slice(why);
        self.stream.write_all(&frame).map_err(|e| self.failed(e))
    }
}

impl TcpLink {
    fn failed(&self, e: std::io::Error) -> Error {
        Error::Send {
            address: self.address.clone(),
            reason: e.to_string(),
        }
    }
}

/// Chunks up to this size are written with their header in one call.
const SMALL_FRAME: usize = 64 << 10;

/// What takes a connection the controller opened ([`link::CONTROLLER`]):
/// its command link or its report link.
pub type ControllerLink = Arc<dyn Fn(Box<dyn Duplex>, TcpStream) + Send + Sync>;

/// What takes a client's direct fetch ([`pw_wire::bulk`]): the connection,
/// its magic not read yet.
pub type BulkFetch = Arc<dyn Fn(TcpStream) + Send + Sync>;

/// Accepts data connections on `listener` (a thread per peer, at most
/// [`MAX_DATA_CONNECTIONS`] at once) and delivers their chunks to
/// `receiver`; connections from the controller go to `controller`, direct
/// fetches to `bulk`. Runs until the listener fails.
pub fn serve_tcp(
    listener: TcpListener,
    receiver: Arc<Receiver>,
    controller: ControllerLink,
    bulk: BulkFetch,
) {
    let open = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_DATA_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!("{MAX_DATA_CONNECTIONS} data connections are open: refused one more");
            continue;
        }
        let (receiver, count) = (receiver.clone(), open.clone());
        let (controller, bulk) = (controller.clone(), bulk.clone());
        let spawned = std::thread::Builder::new()
            .name("pw-data-in".into())
            .spawn(move || {
                if is_bulk(&stream) {
                    bulk(stream);
                } else {
                    read_tcp(stream, &receiver, &controller);
                }
                count.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Whether `tcp` is a direct fetch: its first bytes are
/// [`pw_wire::bulk::MAGIC`] (looked at, not read; never on a port that
/// speaks TLS). Waits at most the handshake's timeout for them.
fn is_bulk(tcp: &TcpStream) -> bool {
    let plain = wire::tls::data_plane().is_ok_and(|t| t.server.is_none());
    if !plain {
        return false;
    }
    let magic = wire::bulk::MAGIC;
    let deadline = std::time::Instant::now() + link::HANDSHAKE_TIMEOUT;
    let _ = tcp.set_read_timeout(Some(link::HANDSHAKE_TIMEOUT));
    let mut first = [0u8; 8];
    loop {
        match tcp.peek(&mut first) {
            Ok(n) if n > 0 && first[..n] == magic[..n] => {
                if n == magic.len() {
                    return true;
                }
            }
            _ => return false,
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Reads one peer's connection until it ends: the handshake (the peer's
/// id comes from it), then frames; the controller's go to `controller`.
fn read_tcp(tcp: TcpStream, receiver: &Receiver, controller: &ControllerLink) {
    let (stream, from) = match link::accept(&tcp) {
        Ok(accepted) => accepted,
        Err(e) => {
            tracing::warn!("a data connection was refused: {e}");
            return;
        }
    };
    if from == link::CONTROLLER {
        return controller(stream, tcp);
    }
    // Buffered: a small frame (header and payload) is one system call.
    let why = read_frames(
        std::io::BufReader::with_capacity(256 << 10, stream),
        from,
        receiver,
    );
    receiver.stream_ended(from, &why);
}

/// Reads the frames of worker `from` on `stream` and delivers them to
/// `receiver`, until the stream ends or breaks a rule (every size is
/// checked before it is read); says why it stopped.
pub fn read_frames(mut stream: impl Read, from: u32, receiver: &Receiver) -> String {
    loop {
        let mut h = [0u8; FRAME_HEADER];
        match stream.read_exact(&mut h) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return "the peer closed it".to_owned()
            }
            Err(e) => return e.to_string(),
        }
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            u64::from_le_bytes(b)
        };
        let key = PieceKey {
            run: u64_at(0),
            step: u32_at(8),
            piece: u32_at(12),
        };
        let len = u32_at(32) as usize;
        if len > wire::CHUNK_BYTES {
            let e = Error::FrameTooLarge {
                len,
                limit: wire::CHUNK_BYTES,
            };
            return e.to_string();
        }
        let mut data = Vec::with_capacity(len);
        match (&mut stream).take(len as u64).read_to_end(&mut data) {
            Ok(n) if n == len => {}
            Ok(n) => {
                return format!("the connection ended inside a frame ({n} of its {len} bytes)")
            }
            Err(e) => return format!("the connection broke inside a frame: {e}"),
        }
        if u32_at(36) & FRAME_FAILED != 0 {
            if let Err(e) = receiver.piece_failed(from, key, &String::from_utf8_lossy(&data)) {
                tracing::warn!(error = %e, "refusing a failed piece");
                return e.to_string();
            }
            continue;
        }
        let chunk = proto::Chunk {
            offset: u64_at(16),
            total: u64_at(24),
            data: Bytes::from(data),
            crc32: (u32_at(36) & 1 == 1).then(|| u32_at(40)),
        };
        if let Err(e) = receiver.deliver(from, key, chunk) {
            tracing::warn!(error = %e, "refusing a piece");
            return e.to_string();
        }
    }
}
