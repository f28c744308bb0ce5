//! Direct transfers on the data port ([`pw_wire::bulk`]): the tickets the
//! controller granted, and the connections of clients presenting them.

use crate::State;
use pw_wire::{
    bulk::{self, MAX_TICKETS, TICKET_BYTES, TICKET_TTL},
    proto,
};
use std::{
    collections::{HashMap, VecDeque},
    io::Read,
    net::TcpStream,
    sync::{atomic::Ordering, Arc, Condvar, Mutex},
    time::{Duration, Instant},
};

type Ticket = [u8; TICKET_BYTES];

/// What a ticket lets its holder do.
#[derive(Clone)]
pub enum Grant {
    /// Take shard (owner, value, position) of the store.
    Read(u64, usize, usize),
    /// Write one shard, as the grant says.
    Write(proto::WriteGrant),
}

/// The most bytes of a direct put copied onto the device at once.
pub(crate) const PUT_CHUNK: usize = 2 << 20;

/// How long a client's connection waits for its ticket to arrive (the
/// controller sends it to the worker before it answers the client, but on
/// another connection).
const TICKET_WAIT: Duration = Duration::from_secs(5);

/// Tickets granted and not used yet: each with when it came, and their
/// order.
type Granted = (HashMap<Ticket, (Grant, Instant)>, VecDeque<Ticket>);

/// Tickets granted and not used yet.
#[derive(Default)]
pub struct Tickets {
    granted: Mutex<Granted>,
    arrived: Condvar,
}

impl Tickets {
    /// Keeps `ticket` for `grant` (the oldest goes past [`MAX_TICKETS`]);
    /// a ticket of the wrong length is dropped.
    pub fn grant(&self, ticket: &[u8], grant: Grant) {
        let Ok(ticket) = Ticket::try_from(ticket) else {
            tracing::warn!("dropped a ticket of {} bytes", ticket.len());
            return;
        };
        let mut g = self.granted.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *g;
        while map.len() >= MAX_TICKETS {
            let Some(old) = order.pop_front() else { break };
            map.remove(&old);
        }
        map.insert(ticket, (grant, Instant::now()));
        order.push_back(ticket);
        self.arrived.notify_all();
    }

    /// Takes `ticket` (once), waiting up to [`TICKET_WAIT`] for it.
    fn take(&self, ticket: &Ticket) -> Option<Grant> {
        let deadline = Instant::now() + TICKET_WAIT;
        let mut g = self.granted.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some((grant, at)) = g.0.remove(ticket) {
                g.1.retain(|t| t != ticket);
                return (at.elapsed() <= TICKET_TTL).then_some(grant);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            g = self
                .arrived
                .wait_timeout(g, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    pub fn clear(&self) {
        let mut g = self.granted.lock().unwrap_or_else(|e| e.into_inner());
        g.0.clear();
        g.1.clear();
    }
}

/// Serves one client's direct transfer on `tcp` (see [`pw_wire::bulk`]):
/// an unknown or expired ticket, a shard that is not there, or bytes that
/// are not what the grant says are answered with why; the connection then
/// closes.
pub fn serve(state: &State, mut tcp: TcpStream) {
    let mut hello = [0u8; 8 + TICKET_BYTES];
    let _ = tcp.set_read_timeout(Some(pw_wire::link::HANDSHAKE_TIMEOUT));
    if tcp.read_exact(&mut hello).is_err() || &hello[..8] != bulk::MAGIC {
        return;
    }
    let ticket: Ticket = hello[8..].try_into().unwrap_or_default();
    let _ = tcp.set_nodelay(true);
    let done = match state.tickets.take(&ticket) {
        None => Err("no such ticket (unknown, used or expired)".to_owned()),
        Some(Grant::Read(owner, value, position)) => {
            send(state, &mut tcp, (owner, value, position))
        }
        Some(Grant::Write(grant)) => receive(state, &mut tcp, &grant),
    };
    if let Err(why) = done {
        let _ = bulk::write_answer(&mut tcp, Err(&why));
    }
}

/// Sends a shard of the store, once it is ready.
fn send(
    state: &State,
    tcp: &mut TcpStream,
    (owner, value, position): (u64, usize, usize),
) -> Result<(), String> {
    let buffer =
        state
            .runtime
            .block_on(state.store.wait_for(owner, value, position, state.patience))?;
    let failed = |e: pw_pjrt::Error| format!("the shard failed: {e}");
    buffer.wait_ready().map_err(failed)?;
    // Written from where the bytes lie when they are in host memory (no
    // copy), else from a copy.
    let mut write = |bytes: &[u8]| bulk::write_answer(&mut *tcp, Ok(bytes)).map(|()| bytes.len());
    let written = match buffer.read_in_place(&mut write).map_err(failed)? {
        Some(written) => written,
        None => write(&buffer.to_host_copy().map_err(failed)?),
    };
    let bytes = written.map_err(|e| format!("cannot write to the client: {e}"))?;
    state
        .counters
        .bytes_to_clients
        .fetch_add(bytes as u64, Ordering::Relaxed);
    Ok(())
}

/// Receives the shard `grant` names onto its device and into the store;
/// answers [`bulk::STORED`].
fn receive(state: &State, tcp: &mut TcpStream, grant: &proto::WriteGrant) -> Result<(), String> {
    let (dtype, dims, size) = grant
        .r#type
        .as_ref()
        .ok_or("a grant without a type")?
        .read(crate::service::MAX_SHARD_BYTES)
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 8];
    tcp.read_exact(&mut head)
        .map_err(|e| format!("no length came: {e}"))?;
    let declared = u64::from_le_bytes(head);
    if declared != size {
        return Err(format!("{declared} bytes declared for a shard of {size}"));
    }
    use std::io::Write;
    tcp.write_all(&bulk::SEND.to_le_bytes())
        .and_then(|()| tcp.flush())
        .map_err(|e| format!("cannot answer the client: {e}"))?;
    // The size is the grant's (the controller checked it against the
    // session's limits), not the client's.
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(60)));
    let device = state.device(grant.local_device)?;
    let (mut transfer, buffer) = state
        .client
        .buffer_for_async_transfer(&device, dtype, &dims)
        .map_err(|e| e.to_string())?;
    // Onto the device chunk by chunk as the bytes come: each chunk is
    // still in the cache when it is copied, and nothing holds the whole.
    let size = usize::try_from(size).map_err(|_| format!("a shard of {size} bytes"))?;
    loop {
        let len = (size - transfer.written()).min(PUT_CHUNK);
        let mut chunk = Vec::with_capacity(len);
        let got = Read::by_ref(tcp)
            .take(len as u64)
            .read_to_end(&mut chunk)
            .map_err(|e| format!("the bytes did not come: {e}"))?;
        if got != len {
            return Err(format!(
                "the bytes did not come: the connection closed after {} of {size}",
                transfer.written() + got
            ));
        }
        let last = transfer.written() + len == size;
        transfer.write(chunk, last).map_err(|e| e.to_string())?;
        if last {
            break;
        }
    }
    state.store.put(
        grant.owner,
        grant.value as usize,
        grant.position as usize,
        Arc::new(buffer),
    )?;
    state
        .counters
        .bytes_from_clients
        .fetch_add(size as u64, Ordering::Relaxed);
    tcp.write_all(&bulk::STORED.to_le_bytes())
        .and_then(|()| tcp.flush())
        .map_err(|e| format!("cannot answer the client: {e}"))
}
