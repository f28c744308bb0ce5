//! Direct transfers: a client takes a shard's bytes straight from the
//! worker that holds it, or gives a shard straight to the worker that will
//! hold it, on the worker's data port, instead of through the controller.
//!
//! The controller, asked by a session's owner (on the session's own
//! authenticated stream), gives the worker a ticket for one shard on the
//! command link (a `ReadRequest` with `ticket` set, or a `WriteGrant`) and
//! the client the same ticket with the worker's address (`DirectShards`).
//! The client opens a TCP connection to the data port and writes [`MAGIC`]
//! and the ticket. For a read the worker answers with a little-endian
//! `u64` length and that many bytes (the shard, row-major); for a write
//! the client goes on with the length, the worker answers [`SEND`] when
//! the ticket and the length are what it granted, the client sends the
//! bytes, and the worker answers [`STORED`] once the shard is on its
//! device. Either way a
//! failure is [`FAILED`], a `u32` length and why; then the connection
//! closes. A ticket is 16 random bytes, good for one connection within
//! [`TICKET_TTL`]: it is the proof that the peer is the session's owner,
//! so a data port that speaks TLS takes no direct fetch (the client then
//! fetches through the controller).

use std::{io::Write, time::Duration};

/// The first bytes of a direct fetch's connection (the data plane's own
/// connections begin with `auth`'s magic instead).
pub const MAGIC: &[u8; 8] = b"pw-bulk1";

/// The length of a ticket.
pub const TICKET_BYTES: usize = 16;

/// How long a ticket is good for after the worker got it.
pub const TICKET_TTL: Duration = Duration::from_secs(60);

/// The most tickets a worker keeps waiting at once (the oldest go first).
pub const MAX_TICKETS: usize = 4096;

/// In place of a length: the transfer failed, and why follows.
pub const FAILED: u64 = u64::MAX;

/// A write's answer: the shard is stored.
pub const STORED: u64 = 0;

/// A write's first answer: the ticket and the length are good; send.
pub const SEND: u64 = 1;

/// A fresh ticket.
pub fn ticket() -> [u8; TICKET_BYTES] {
    crate::auth::random_bytes()
}

/// Writes a direct fetch's answer: the bytes, or why there are none.
pub fn write_answer(stream: &mut impl Write, answer: Result<&[u8], &str>) -> std::io::Result<()> {
    match answer {
        Ok(bytes) => {
            stream.write_all(&(bytes.len() as u64).to_le_bytes())?;
            stream.write_all(bytes)?;
        }
        Err(why) => {
            let why = &why.as_bytes()[..why.len().min(4096)];
            stream.write_all(&FAILED.to_le_bytes())?;
            stream.write_all(&(why.len() as u32).to_le_bytes())?;
            stream.write_all(why)?;
        }
    }
    stream.flush()
}
