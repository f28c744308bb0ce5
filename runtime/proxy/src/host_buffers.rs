//! The proxy's host buffers: bytes the client stores for an array it makes
//! (`HostBufferStore`), and bytes a fetch leaves for the client to look up
//! (`CopyToHostBuffer`, then `HostBufferLookup`).
//!
//! A fetched buffer may still be arriving from its workers when the client
//! looks it up: the lookup streams each piece as it comes, so the workers'
//! sending and the client's receiving overlap instead of following each
//! other. A fetch that fails part-way ends the lookup with its error.

use crate::{protocol, service::Stream_};
use bytes::Bytes;
use pw_core::DType;
use pw_exec::HostArray;
use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};
use tokio::sync::Notify;
use tonic::{Status, Streaming};

/// Host buffers by IFRT session and handle; a request may wait for one the
/// client has yet to store. Only sessions this server opened have a place
/// here (their ids are random and shown nowhere else), each within its
/// byte budget; a session's buffers go with it.
#[derive(Default)]
pub struct HostBuffers {
    sessions: Mutex<HashMap<u64, Stored>>,
    arrived: Notify,
}

/// One session's host buffers.
struct Stored {
    buffers: HashMap<u64, Held>,
    /// Bytes held, and bytes announced by stores and fetches under way.
    bytes: u64,
    /// The most `bytes` may reach.
    limit: u64,
}

/// A host buffer: all its bytes, or a fetch still bringing them.
#[derive(Clone)]
enum Held {
    Whole(Bytes),
    Arriving(Arc<Arriving>),
}

impl Held {
    /// The bytes it holds or will hold.
    fn len(&self) -> u64 {
        match self {
            Held::Whole(b) => b.len() as u64,
            Held::Arriving(a) => a.size,
        }
    }
}

/// A host buffer's bytes as a reader takes them: piece by piece (as they
/// arrive, for a buffer still arriving), or whole.
#[derive(Clone)]
pub struct Source(Held);

impl Source {
    /// The bytes it holds or will hold.
    pub fn len(&self) -> u64 {
        self.0.len()
    }

    /// Piece `i` (of at most [`pw_wire::CHUNK_BYTES`]) once it is here;
    /// `None` past the last one (a buffer of no bytes has one empty piece);
    /// why the bytes will not come instead of pieces that will not.
    pub async fn piece(&self, i: usize) -> Option<Result<Bytes, String>> {
        match &self.0 {
            Held::Whole(bytes) if bytes.is_empty() => (i == 0).then(|| Ok(Bytes::new())),
            Held::Whole(bytes) => {
                let start = i.checked_mul(pw_wire::CHUNK_BYTES)?;
                (start < bytes.len())
                    .then(|| Ok(bytes.slice(start..bytes.len().min(start + pw_wire::CHUNK_BYTES))))
            }
            Held::Arriving(a) => a.piece(i).await,
        }
    }

    /// All the bytes, once they are here.
    pub async fn whole(&self) -> Result<Bytes, String> {
        match &self.0 {
            Held::Whole(bytes) => Ok(bytes.clone()),
            Held::Arriving(a) => a.whole().await,
        }
    }

    /// All the bytes, once they are here, as a `dtype` array of `dims`
    /// (without a copy where the bytes are not shared).
    pub async fn into_host(self, dtype: DType, dims: &[usize]) -> Result<HostArray, String> {
        let bytes = self.whole().await?;
        drop(self);
        HostArray::new(dtype, dims, Vec::from(bytes)).map_err(|e| e.to_string())
    }
}

impl From<Bytes> for Source {
    fn from(bytes: Bytes) -> Source {
        Source(Held::Whole(bytes))
    }
}

/// A buffer's bytes as they arrive (from the client's store or from a
/// fetch), and how their transfer ended.
struct Arriving {
    size: u64,
    progress: Mutex<Progress>,
    changed: Notify,
}

#[derive(Default)]
struct Progress {
    pieces: Vec<Bytes>,
    received: u64,
    /// Set once: the fetch's end (an error says why it failed).
    end: Option<Result<(), String>>,
}

impl Arriving {
    fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Piece `i` once it is here; `None` past the last one (a buffer of no
    /// bytes has one empty piece); the fetch's error instead of pieces
    /// that will not come.
    async fn piece(&self, i: usize) -> Option<Result<Bytes, String>> {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let p = self.lock();
                if let Some(piece) = p.pieces.get(i) {
                    return Some(Ok(piece.clone()));
                }
                match &p.end {
                    Some(Ok(())) if i == 0 => return Some(Ok(Bytes::new())),
                    Some(Ok(())) => return None,
                    Some(Err(why)) => return Some(Err(why.clone())),
                    None => {}
                }
            }
            // Bounded: the fetch's own reads are (`pw_wire::bulk::READ_WAIT`),
            // and a fetch that stops, however, ends the buffer ([`Filling`]).
            changed.await;
        }
    }

    /// All the bytes, once they are here.
    async fn whole(&self) -> Result<Bytes, String> {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let p = self.lock();
                match &p.end {
                    Some(Ok(())) if p.pieces.len() == 1 => return Ok(p.pieces[0].clone()),
                    Some(Ok(())) => return Ok(Bytes::from(p.pieces.concat())),
                    Some(Err(why)) => return Err(why.clone()),
                    None => {}
                }
            }
            changed.await;
        }
    }
}

/// The writing end of an arriving buffer: pieces go in as they arrive;
/// dropped before [`Filling::finish`], the buffer ends in an error (its
/// transfer was abandoned), so no reader waits for it forever.
pub struct Filling(Arc<Arriving>);

impl Filling {
    /// Adds the next piece (bytes past the announced size are refused at
    /// the end).
    pub fn push(&self, piece: Bytes) {
        let mut p = self.0.lock();
        if p.end.is_none() {
            p.received += piece.len() as u64;
            p.pieces.push(piece);
        }
        drop(p);
        self.0.changed.notify_waiters();
    }

    /// Ends the buffer: complete (when exactly its size arrived), or why not.
    pub fn finish(self, outcome: Result<(), String>) {
        self.end(outcome);
    }

    fn end(&self, outcome: Result<(), String>) {
        let mut p = self.0.lock();
        if p.end.is_some() {
            return;
        }
        let outcome = outcome.and_then(|()| {
            if p.received == self.0.size {
                Ok(())
            } else {
                Err(format!("{} of its {} bytes came", p.received, self.0.size))
            }
        });
        p.end = Some(outcome);
        drop(p);
        self.0.changed.notify_waiters();
    }
}

impl Drop for Filling {
    fn drop(&mut self) {
        self.end(Err("the transfer of its bytes was abandoned".into()));
    }
}

impl HostBuffers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Stored>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes room for IFRT session `session`'s buffers, at most `limit`
    /// bytes at once.
    pub fn open(&self, session: u64, limit: u64) {
        self.lock().insert(
            session,
            Stored {
                buffers: HashMap::new(),
                bytes: 0,
                limit,
            },
        );
    }

    /// Drops every buffer of `session`, and its place.
    pub fn close(&self, session: u64) {
        self.lock().remove(&session);
        self.arrived.notify_waiters();
    }

    /// Takes `size` bytes of `session`'s budget for a buffer on its way.
    pub fn reserve(&self, session: u64, handle: u64, size: u64) -> Result<(), Status> {
        let mut s = self.lock();
        let stored = s.get_mut(&session).ok_or_else(|| no_session(session))?;
        let total = stored.bytes.saturating_add(size);
        if total > stored.limit {
            return Err(Status::resource_exhausted(format!(
                "host buffer {handle}: the session's host buffers would hold {total} bytes, over the limit of {} (pw-server --session-transfer-mb)",
                stored.limit
            )));
        }
        stored.bytes = total;
        Ok(())
    }

    /// Gives back `size` bytes of `session`'s budget.
    pub fn unreserve(&self, session: u64, size: u64) {
        if let Some(stored) = self.lock().get_mut(&session) {
            stored.bytes = stored.bytes.saturating_sub(size);
        }
    }

    /// Stores a buffer for the client to look up, within the session's
    /// budget.
    pub fn put(&self, session: u64, handle: u64, bytes: Bytes) -> Result<(), Status> {
        self.reserve(session, handle, bytes.len() as u64)?;
        self.insert(session, handle, Held::Whole(bytes));
        Ok(())
    }

    /// A buffer of `size` bytes, within the session's budget, that readers
    /// may take at once while its transfer (a store, a fetch) fills it.
    pub fn arriving(&self, session: u64, handle: u64, size: u64) -> Result<Filling, Status> {
        self.reserve(session, handle, size)?;
        let arriving = Arc::new(Arriving {
            size,
            progress: Mutex::default(),
            changed: Notify::new(),
        });
        self.insert(session, handle, Held::Arriving(arriving.clone()));
        Ok(Filling(arriving))
    }

    /// Keeps a buffer whose bytes were reserved before they came.
    pub fn stored(&self, session: u64, handle: u64, bytes: Bytes) {
        self.insert(session, handle, Held::Whole(bytes));
    }

    /// Keeps a buffer whose bytes are already counted in the session's
    /// budget (a buffer it replaces gives its own back).
    fn insert(&self, session: u64, handle: u64, held: Held) {
        let mut s = self.lock();
        let Some(stored) = s.get_mut(&session) else {
            return;
        };
        if let Some(old) = stored.buffers.insert(handle, held) {
            stored.bytes = stored.bytes.saturating_sub(old.len());
        }
        drop(s);
        self.arrived.notify_waiters();
    }

    /// Buffer `handle`, removed, once the client has begun to store it (up
    /// to `wait`): its bytes may still be arriving.
    pub async fn take(&self, session: u64, handle: u64, wait: Duration) -> Result<Source, String> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let arrived = self.arrived.notified();
            if let Some(held) = self.detach(session, handle) {
                return Ok(Source(held));
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return Err(format!(
                    "host buffer {handle} was not stored within {wait:?}"
                ));
            }
        }
    }

    /// Buffer `handle` as the client looks it up: its pieces, streamed as
    /// they arrive (at least one message, also for no bytes); an error ends
    /// the stream if its transfer fails.
    pub fn lookup(
        &self,
        session: u64,
        handle: u64,
    ) -> Result<Stream_<protocol::GrpcHostBufferLookupResponse>, Status> {
        let held = {
            let s = self.lock();
            let stored = s.get(&session).ok_or_else(|| no_session(session))?;
            stored.buffers.get(&handle).cloned()
        }
        .ok_or_else(|| {
            Status::not_found(format!(
                "there is no host buffer {handle} in session {session}"
            ))
        })?;
        let source = Source(held);
        Ok(Box::pin(futures::stream::unfold(Some(0), move |next| {
            let source = source.clone();
            async move {
                let i = next?;
                match source.piece(i).await? {
                    Ok(data) => Some((
                        Ok(protocol::GrpcHostBufferLookupResponse { data }),
                        Some(i + 1),
                    )),
                    Err(why) => Some((
                        Err(Status::unavailable(format!("host buffer {handle}: {why}"))),
                        None,
                    )),
                }
            }
        })))
    }

    /// Forgets buffer `handle` (a fetch still filling it goes on unseen).
    pub fn remove(&self, session: u64, handle: u64) {
        self.detach(session, handle);
    }

    fn detach(&self, session: u64, handle: u64) -> Option<Held> {
        let mut s = self.lock();
        let stored = s.get_mut(&session)?;
        let held = stored.buffers.remove(&handle)?;
        stored.bytes = stored.bytes.saturating_sub(held.len());
        Some(held)
    }
}

/// The refusal for a host buffer request naming no session of this server.
fn no_session(session: u64) -> Status {
    Status::not_found(format!(
        "there is no IFRT session {session} on this pw-server (host buffers live inside the session that stores them)"
    ))
}

/// A host buffer's `size` bytes from the client's stream into `filling`,
/// piece by piece as they arrive (no copy).
pub async fn receive(
    mut incoming: Streaming<protocol::GrpcHostBufferStoreRequest>,
    handle: u64,
    size: u64,
    filling: &Filling,
) -> Result<(), Status> {
    let mut received = 0u64;
    while let Some(chunk) = incoming.message().await? {
        received += chunk.data.len() as u64;
        if received > size {
            return Err(Status::invalid_argument(format!(
                "host buffer {handle}: more than the {size} bytes announced"
            )));
        }
        filling.push(chunk.data);
    }
    if received != size {
        return Err(Status::invalid_argument(format!(
            "host buffer {handle}: {received} of the {size} bytes announced came"
        )));
    }
    Ok(())
}
