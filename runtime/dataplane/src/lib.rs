//! The data plane: shard pieces between workers, directly (never through
//! the controller).
//!
//! * Sending ([`Sender`]): the pieces for one peer are written in the order
//!   the executor queued them (schedule order, so a piece never waits behind
//!   one that depends on it), each once its buffer is ready, from where it
//!   lies (a CPU buffer is read in place), chunked, on the peer's [`Link`].
//!   A small piece is written by the thread that completed its buffer; large
//!   ones by the peer's own sending thread. Two transports implement [`Link`]: [`TcpLink`], frames on a
//!   plain TCP connection (the default), and [`GrpcLink`], a gRPC client
//!   stream (`Worker.Push`) with the tuned HTTP/2 windows of
//!   [`pw_wire`].
//! * Receiving ([`Receiver`]): arriving chunks are matched to the
//!   destination buffers the executor created before the bytes came
//!   ([`pw_pjrt::AsyncTransfer`]s), by [`PieceKey`]. Chunks that arrive before the
//!   executor reaches their step are held (within a byte budget) and written
//!   when it does. Every payload is checked ([`pw_wire::ChunkCheck`]); the last chunk
//!   is written only once its checksum holds, so a corrupted or truncated
//!   piece fails its buffer (and the steps that read it), never feeds them
//!   wrong data. A worker listens for both transports
//!   ([`serve_tcp`] and the gRPC service).
//!
//! This crate moves bytes between PJRT buffers of workers; it knows the
//! executor's completions and piece keys, not the controller.

mod error;
mod grpc;
mod receive;
mod send;
mod tcp;

pub use error::{Error, Result};
pub use grpc::GrpcLink;
pub use pw_core::report::SendRecord;
pub use receive::{Destination, ReceiveCounters, Receiver, Spoiled};
pub use send::{Damage, Outgoing, SendCounters, Sender};
pub use tcp::{read_frames, serve_tcp, BulkFetch, ControllerLink, TcpLink};

use pw_exec::PieceKey;
/// Which transport a worker sends pieces on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// Frames on a TCP connection per peer.
    #[default]
    Tcp,
    /// A gRPC client stream per peer.
    Grpc,
}

impl std::str::FromStr for Transport {
    type Err = Error;
    fn from_str(s: &str) -> Result<Transport> {
        match s {
            "tcp" => Ok(Transport::Tcp),
            "grpc" => Ok(Transport::Grpc),
            other => Err(Error::UnknownTransport(other.to_owned())),
        }
    }
}

/// Where a peer worker takes pieces: its gRPC service and its TCP data port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PeerAddress {
    pub service: String,
    pub data: String,
}

/// A stream of pieces to one peer.
pub trait Link: Send {
    /// Writes `payload`, chunked, as the first bytes of piece `key`, a
    /// payload of `total` bytes whose CRC-32 is `crc` (sent with the chunk
    /// that ends at `total`). Returns once the bytes are handed to the
    /// transport, or why they cannot be.
    fn write(&mut self, key: PieceKey, payload: &[u8], total: u64, crc: u32) -> Result<()>;

    /// Tells the peer that piece `key` will not come, and why (its source
    /// failed): the step waiting for it fails instead of waiting.
    fn fail(&mut self, key: PieceKey, why: &str) -> Result<()>;
}
