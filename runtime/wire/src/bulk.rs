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

/// The longest a taker waits for a worker's next bytes.
pub const READ_WAIT: Duration = Duration::from_secs(60);

/// Opens a direct transfer: connects to `address` and writes `hello`
/// ([`MAGIC`], the ticket, for a write the length).
async fn open(address: &str, hello: &[&[u8]]) -> Result<tokio::net::TcpStream, String> {
    use tokio::io::AsyncWriteExt;
    let mut tcp = tokio::time::timeout(READ_WAIT, tokio::net::TcpStream::connect(address))
        .await
        .map_err(|_| {
            format!("the direct transfer with {address}: no connection within {READ_WAIT:?}")
        })?
        .map_err(|e| format!("the direct transfer with {address}: cannot connect: {e}"))?;
    let _ = tcp.set_nodelay(true);
    tcp.write_all(&hello.concat())
        .await
        .map_err(|e| format!("the direct transfer with {address}: cannot ask: {e}"))?;
    Ok(tcp)
}

/// The worker's next word (a length or an answer), within [`READ_WAIT`];
/// its refusal ([`FAILED`] and why) as an error.
async fn word(tcp: &mut tokio::net::TcpStream, address: &str) -> Result<u64, String> {
    use tokio::io::AsyncReadExt;
    let failed =
        |e: std::io::Error| format!("the direct transfer with {address}: no answer came: {e}");
    let got = tokio::time::timeout(READ_WAIT, tcp.read_u64_le())
        .await
        .map_err(|_| format!("the direct transfer with {address}: no answer within {READ_WAIT:?}"))?
        .map_err(failed)?;
    if got != FAILED {
        return Ok(got);
    }
    let n = tcp.read_u32_le().await.map_err(failed)?;
    let mut why = vec![0u8; n.min(4096) as usize];
    tcp.read_exact(&mut why).await.map_err(failed)?;
    Err(format!(
        "the worker at {address} refused the direct transfer: {}",
        String::from_utf8_lossy(&why)
    ))
}

/// Takes a granted shard from a worker's data port (the reading side of
/// the protocol above): presents `ticket` on a connection to `address`
/// and passes the shard's bytes to `sink` as they arrive, in pieces of
/// [`crate::CHUNK_BYTES`] (the last may be shorter). The worker must
/// announce `expected` bytes; a refusal, another length, a connection
/// that ends early or a wait over [`READ_WAIT`] is an error saying which.
pub async fn take(
    address: &str,
    ticket: &[u8],
    expected: u64,
    mut sink: impl FnMut(bytes::Bytes),
) -> Result<(), String> {
    use tokio::io::AsyncReadExt;
    let mut tcp = open(address, &[MAGIC, ticket]).await?;
    let length = word(&mut tcp, address).await?;
    if length != expected {
        return Err(format!(
            "the worker at {address} sent a shard of {length} bytes, {expected} were expected"
        ));
    }
    let mut left = length;
    while left > 0 {
        let piece = left.min(crate::CHUNK_BYTES as u64) as usize;
        let mut buffer = bytes::BytesMut::with_capacity(piece);
        while buffer.len() < piece {
            let got = tokio::time::timeout(READ_WAIT, tcp.read_buf(&mut buffer))
                .await
                .map_err(|_| {
                    format!("the direct transfer with {address}: no bytes within {READ_WAIT:?}")
                })?
                .map_err(|e| {
                    format!("the direct transfer with {address}: the connection failed: {e}")
                })?;
            if got == 0 {
                return Err(format!(
                    "the direct transfer with {address} ended after {} of {length} bytes",
                    length - left + buffer.len() as u64
                ));
            }
        }
        left -= piece as u64;
        sink(buffer.freeze());
    }
    Ok(())
}

/// Gives a granted shard to a worker's data port (the writing side of the
/// protocol above): presents `ticket` and `length` on a connection to
/// `address`, then, once the worker agrees, writes the pieces `next`
/// yields (exactly `length` bytes in all; `None` ends them, an error stops
/// the transfer) and waits for the worker to store the shard. A refusal,
/// a wrong count or a wait over [`READ_WAIT`] is an error saying which.
pub async fn give<F>(
    address: &str,
    ticket: &[u8],
    length: u64,
    mut next: impl FnMut() -> F,
) -> Result<(), String>
where
    F: std::future::Future<Output = Option<Result<bytes::Bytes, String>>>,
{
    use tokio::io::AsyncWriteExt;
    let mut tcp = open(address, &[MAGIC, ticket, &length.to_le_bytes()]).await?;
    let answered = |got: u64, due: u64| match got == due {
        true => Ok(()),
        false => Err(format!(
            "the worker at {address} answered {got} where {due} was due"
        )),
    };
    answered(word(&mut tcp, address).await?, SEND)?;
    let mut sent = 0u64;
    while let Some(piece) = next().await {
        let piece = piece?;
        sent += piece.len() as u64;
        if sent > length {
            return Err(format!("more than the {length} bytes granted to {address}"));
        }
        tcp.write_all(&piece)
            .await
            .map_err(|e| format!("the direct transfer with {address}: cannot send: {e}"))?;
    }
    if sent != length {
        return Err(format!(
            "{sent} of the {length} bytes granted to {address} came"
        ));
    }
    answered(word(&mut tcp, address).await?, STORED)
}
