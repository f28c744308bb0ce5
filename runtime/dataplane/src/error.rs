//! The data plane's one error type.

use pw_exec::PieceKey;

/// `Result` with the data plane's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What goes wrong moving pieces between workers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("unknown data plane {0:?} (tcp or grpc)")]
    UnknownTransport(String),

    // ------------------------------------------------------------ sending --
    #[error("cannot reach the data port of the worker at {address}: {source}")]
    Connect {
        address: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the data port of the worker at {address} refused this worker: {source}")]
    Handshake {
        address: String,
        #[source]
        source: pw_wire::auth::HandshakeError,
    },
    #[error("{address} resolves to no address")]
    Unresolved { address: String },
    #[error("TLS to the data port of the worker at {address}: {reason}")]
    Tls { address: String, reason: String },
    #[error("cannot reach the worker at {address}: {source}")]
    Channel {
        address: String,
        #[source]
        source: pw_wire::Error,
    },
    #[error("sending to the worker at {address}: {reason}")]
    Send { address: String, reason: String },

    // ---------------------------------------------------------- receiving --
    /// A payload that does not check out.
    #[error(transparent)]
    Wire(#[from] pw_wire::Error),
    #[error("{piece}: worker {from} was lost ({why}); nothing more is taken from it")]
    FromLost {
        piece: String,
        from: u32,
        why: String,
    },
    #[error("{piece}: also sent by worker {sender}")]
    AlsoSent { piece: String, sender: u32 },
    #[error("{piece}: expected from worker {sender}")]
    NotExpectedFrom { piece: String, sender: u32 },
    #[error("piece {key:?} came from worker {sender}, not {from}")]
    CameFrom {
        key: PieceKey,
        sender: u32,
        from: u32,
    },
    #[error("piece {key:?} is {size} bytes, its destination {destination}")]
    SizeMismatch {
        key: PieceKey,
        size: u64,
        destination: u64,
    },
    #[error("piece {key:?} is expected twice")]
    Twice { key: PieceKey },
    #[error("{piece}: {source}")]
    Land {
        piece: String,
        #[source]
        source: pw_pjrt::Error,
    },
    #[error("{piece}: a chunk after the piece was complete")]
    AfterComplete { piece: String },
    #[error("more than {limit} bytes arrived before their steps")]
    EarlyLimit { limit: u64 },
    #[error("run {run} is over")]
    RunOver { run: u64 },
    #[error("a frame of {len} bytes, more than the {limit} a chunk may have")]
    FrameTooLarge { len: usize, limit: usize },
}
