//! Pieces as frames on a plain TCP connection per peer (the default
//! transport): the sending [`TcpLink`], and the listener that reads each
//! peer's connection ([`serve_tcp`]).

use crate::{Error, Link, Receiver, Result};
use bytes::Bytes;
use pw_exec::PieceKey;
use pw_wire::{self as wire, proto};
use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    sync::Arc,
    time::Duration,
};

/// The first bytes of a data connection, then the sender's worker id.
const TCP_MAGIC: &[u8; 8] = b"PWDATA01";
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

/// Pieces as frames on one TCP connection.
pub struct TcpLink {
    stream: TcpStream,
    address: String,
}

impl TcpLink {
    pub fn connect(from: u32, address: &str, timeout: Duration) -> Result<TcpLink> {
        let failed = |source: std::io::Error| Error::Connect {
            address: address.to_owned(),
            source,
        };
        let addr = std::net::ToSocketAddrs::to_socket_addrs(address)
            .map_err(failed)?
            .next()
            .ok_or_else(|| Error::Unresolved {
                address: address.to_owned(),
            })?;
        let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(failed)?;
        stream.set_nodelay(true).map_err(failed)?;
        let mut hello = TCP_MAGIC.to_vec();
        hello.extend_from_slice(&from.to_le_bytes());
        stream.write_all(&hello).map_err(failed)?;
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

/// Accepts data connections on `listener` (a thread per peer) and delivers
/// their chunks to `receiver`. Runs until the listener fails.
pub fn serve_tcp(listener: TcpListener, receiver: Arc<Receiver>) {
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let receiver = receiver.clone();
        let _ = std::thread::Builder::new()
            .name("pw-data-in".into())
            .spawn(move || read_tcp(stream, &receiver));
    }
}

/// Reads one peer's connection until it ends.
fn read_tcp(stream: TcpStream, receiver: &Receiver) {
    let _ = stream.set_nodelay(true);
    // Buffered: a small frame (header and payload) is one system call.
    let mut stream = std::io::BufReader::with_capacity(256 << 10, stream);
    let mut hello = [0u8; 12];
    if stream.read_exact(&mut hello).is_err() || &hello[..8] != TCP_MAGIC {
        tracing::warn!("a data connection did not introduce itself; closed");
        return;
    }
    let from = u32::from_le_bytes([hello[8], hello[9], hello[10], hello[11]]);
    let why = loop {
        let mut h = [0u8; FRAME_HEADER];
        match stream.read_exact(&mut h) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                break "the peer closed it".to_owned()
            }
            Err(e) => break e.to_string(),
        }
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let u64_at = |i: usize| {
            u64::from_le_bytes([
                h[i],
                h[i + 1],
                h[i + 2],
                h[i + 3],
                h[i + 4],
                h[i + 5],
                h[i + 6],
                h[i + 7],
            ])
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
            break e.to_string();
        }
        let mut data = Vec::with_capacity(len);
        match (&mut stream).take(len as u64).read_to_end(&mut data) {
            Ok(n) if n == len => {}
            Ok(n) => break format!("the connection ended inside a frame ({n} of its {len} bytes)"),
            Err(e) => break format!("the connection broke inside a frame: {e}"),
        }
        if u32_at(36) & FRAME_FAILED != 0 {
            receiver.piece_failed(from, key, &String::from_utf8_lossy(&data));
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
            break e.to_string();
        }
    };
    receiver.stream_ended(from, &why);
}
