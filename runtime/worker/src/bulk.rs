//! Direct fetches on the data port ([`pw_wire::bulk`]): the tickets the
//! controller granted, and the connections of clients presenting them.

use crate::State;
use pw_wire::bulk::{self, MAX_TICKETS, TICKET_BYTES, TICKET_TTL};
use std::{
    collections::{HashMap, VecDeque},
    io::Read,
    net::TcpStream,
    sync::{Condvar, Mutex},
    time::{Duration, Instant},
};

type Ticket = [u8; TICKET_BYTES];

/// The shard a ticket is for: (owner, value, position).
type Shard = (u64, usize, usize);

/// How long a client's connection waits for its ticket to arrive (the
/// controller sends it to the worker before it answers the client, but on
/// another connection).
const TICKET_WAIT: Duration = Duration::from_secs(5);

/// Tickets granted and not used yet: each with when it came, and their
/// order.
type Granted = (HashMap<Ticket, (Shard, Instant)>, VecDeque<Ticket>);

/// Tickets granted and not used yet.
#[derive(Default)]
pub struct Tickets {
    granted: Mutex<Granted>,
    arrived: Condvar,
}

impl Tickets {
    /// Keeps `ticket` for `shard` (the oldest goes past [`MAX_TICKETS`]);
    /// a ticket of the wrong length is dropped.
    pub fn grant(&self, ticket: &[u8], shard: Shard) {
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
        map.insert(ticket, (shard, Instant::now()));
        order.push_back(ticket);
        self.arrived.notify_all();
    }

    /// Takes `ticket` (once), waiting up to [`TICKET_WAIT`] for it.
    fn take(&self, ticket: &Ticket) -> Option<Shard> {
        let deadline = Instant::now() + TICKET_WAIT;
        let mut g = self.granted.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some((shard, at)) = g.0.remove(ticket) {
                g.1.retain(|t| t != ticket);
                return (at.elapsed() <= TICKET_TTL).then_some(shard);
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

/// Serves one client's direct fetch on `tcp` (see [`pw_wire::bulk`]): an
/// unknown or expired ticket, or a shard that is not there, is answered
/// with why; the connection then closes.
pub fn serve(state: &State, mut tcp: TcpStream) {
    let mut hello = [0u8; 8 + TICKET_BYTES];
    let _ = tcp.set_read_timeout(Some(pw_wire::link::HANDSHAKE_TIMEOUT));
    if tcp.read_exact(&mut hello).is_err() || &hello[..8] != bulk::MAGIC {
        return;
    }
    let ticket: Ticket = hello[8..].try_into().unwrap_or_default();
    let _ = tcp.set_nodelay(true);
    let buffer = match state.tickets.take(&ticket) {
        None => Err("no such ticket (unknown, used or expired)".to_owned()),
        Some((owner, value, position)) => {
            state
                .runtime
                .block_on(state.store.wait_for(owner, value, position, state.patience))
        }
    };
    let sent = buffer.and_then(|buffer| {
        let failed = |e: pw_pjrt::Error| format!("the shard failed: {e}");
        buffer.wait_ready().map_err(failed)?;
        // Written from where the bytes lie when they are in host memory
        // (no copy), else from a copy.
        let mut write =
            |bytes: &[u8]| bulk::write_answer(&mut tcp, Ok(bytes)).map(|()| bytes.len());
        let written = match buffer.read_in_place(&mut write).map_err(failed)? {
            Some(written) => written,
            None => write(&buffer.to_host_copy().map_err(failed)?),
        };
        written.map_err(|e| format!("cannot write to the client: {e}"))
    });
    match sent {
        Ok(bytes) => {
            state
                .counters
                .bytes_to_clients
                .fetch_add(bytes as u64, std::sync::atomic::Ordering::Relaxed);
        }
        Err(why) => {
            let _ = bulk::write_answer(&mut tcp, Err(&why));
        }
    }
}
