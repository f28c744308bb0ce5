//! The wire layer's one error type: payloads that do not check out, and
//! connections that cannot be made.

use pw_core::DType;
use std::time::Duration;

/// What is wrong with a stream of chunks, or with a connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{what}: the payload declares {declared} bytes, more than the limit of {limit}")]
    TooLarge {
        what: String,
        declared: u64,
        limit: u64,
    },
    #[error("{what}: the payload declares {declared} bytes, but {expected} are expected")]
    Unexpected {
        what: String,
        declared: u64,
        expected: u64,
    },
    #[error("{what}: a chunk after the last one")]
    AfterLast { what: String },
    #[error("{what}: a chunk declares {declared} bytes in all, the first declared {first}")]
    TotalChanged {
        what: String,
        declared: u64,
        first: u64,
    },
    #[error("{what}: a chunk at offset {offset} where {expected} was expected")]
    OutOfOrder {
        what: String,
        offset: u64,
        expected: u64,
    },
    #[error("{what}: a chunk of {len} bytes at {offset} runs past the {total} bytes declared")]
    PastEnd {
        what: String,
        len: usize,
        offset: u64,
        total: u64,
    },
    #[error(
        "{what}: checksum mismatch (CRC-32 {actual:08x}, sent {sent:08x}): the bytes were corrupted"
    )]
    Checksum {
        what: String,
        actual: u32,
        sent: u32,
    },
    #[error("{what}: the last chunk carries no checksum")]
    NoChecksum { what: String },
    #[error("{what}: a checksum before the last byte ({at} of {total})")]
    EarlyChecksum { what: String, at: u64, total: u64 },
    #[error("{what}: the stream ended after {received} of {total} bytes")]
    Truncated {
        what: String,
        received: u64,
        total: u64,
    },
    #[error("{what}: no memory for {bytes} bytes")]
    OutOfMemory { what: String, bytes: u64 },
    #[error("unknown dtype {0:?}")]
    UnknownDType(String),
    #[error("{dtype}{dims:?} is larger than the limit of {limit} bytes")]
    ArrayTooLarge {
        dtype: DType,
        dims: Vec<u64>,
        limit: u64,
    },

    #[error("{what} #{index} came where #{expected} was due")]
    OutOfSequence {
        what: &'static str,
        index: u32,
        expected: usize,
    },
    #[error("{what} #{index} came without {lacks}")]
    Incomplete {
        what: &'static str,
        index: u32,
        lacks: &'static str,
    },

    // ------------------------------------------------------------ parts --
    #[error("the part {0}")]
    Part(String),

    // ------------------------------------------------------------- TLS --
    #[error("{flag} {}: {reason}", path.display())]
    Tls {
        flag: &'static str,
        path: std::path::PathBuf,
        reason: String,
    },
    #[error(
        "--tls-cert and --tls-key (PW_TLS_CERT, PW_TLS_KEY) go together: give both or neither"
    )]
    TlsPair,

    // ------------------------------------------------------ connections --
    #[error("bad address {address:?}: {reason}")]
    BadAddress { address: String, reason: String },
    #[error("no answer from {address} within {timeout:?}")]
    NoAnswer { address: String, timeout: Duration },
    /// The transport's error and its sources, joined.
    #[error("{reason}")]
    Connect { address: String, reason: String },
    #[error("cannot resolve {address:?}: {reason}")]
    Resolve { address: String, reason: String },
    #[error("{address:?} resolves to no address")]
    Unresolved { address: String },
    #[error("cannot listen on {addr}: the address is already in use (is another pw-server or pw-worker running there?)")]
    InUse { addr: std::net::SocketAddr },
    #[error("cannot listen on {addr}: no local interface has that address")]
    NotLocal { addr: std::net::SocketAddr },
    #[error("cannot listen on {addr}: {reason}")]
    Listen {
        addr: std::net::SocketAddr,
        reason: String,
    },
}
