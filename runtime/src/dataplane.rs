//! The data plane: shard pieces between workers, directly (never through
//! the controller).
//!
//! * Sending: [`Links`] keeps one [`Link`] per peer, a long-lived stream
//!   ([`GrpcLink`]: a gRPC client stream of `PushRequest`s with the tuned
//!   HTTP/2 windows of [`crate::wire`]); [`Link::send`] chunks a piece's
//!   bytes. The [`Link`] trait is the seam for other transports (a raw TCP
//!   channel).
//! * Receiving: [`Receiver`] matches arriving chunks to the destination
//!   buffers the executor created before the bytes came
//!   ([`AsyncTransfer`]s), by [`PieceKey`]. Chunks that arrive before the
//!   executor reaches their step are held (within a byte budget) and written
//!   when it does. Every payload is checked ([`ChunkCheck`]); the last chunk
//!   is written only once its checksum holds, so a corrupted or truncated
//!   piece fails its buffer (and the steps that read it), never feeds them
//!   wrong data.

use crate::{
    exec::PieceKey,
    pjrt::AsyncTransfer,
    wire::{self, proto, ChunkCheck, WireError},
};
use bytes::Bytes;
use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};
use tokio::sync::mpsc;

/// A stream of pieces to one peer.
#[tonic::async_trait]
pub trait Link: Send + Sync {
    /// Queues `data` as piece `key`; returns once every chunk is handed to
    /// the transport, or why it cannot be.
    async fn send(&self, key: PieceKey, data: Bytes) -> Result<(), String>;
}

/// Pieces on a gRPC client stream (`Worker.Push`) to one peer.
pub struct GrpcLink {
    from: u32,
    address: String,
    tx: mpsc::Sender<proto::PushRequest>,
    /// Why the stream ended, once it has.
    ended: Arc<Mutex<Option<String>>>,
}

/// Messages queued per link: with 1 MiB chunks, 16 MiB in flight.
const LINK_QUEUE: usize = 16;

impl GrpcLink {
    /// Opens the stream to `address` (host:port), within `timeout`.
    pub async fn connect(from: u32, address: &str, timeout: Duration) -> Result<GrpcLink, String> {
        let channel = crate::net::channel(address, timeout)
            .await
            .map_err(|e| format!("cannot reach worker at {address}: {e}"))?;
        let mut client = proto::worker_client::WorkerClient::new(channel)
            .max_encoding_message_size(wire::MAX_MESSAGE_BYTES)
            .max_decoding_message_size(wire::MAX_MESSAGE_BYTES);
        let (tx, rx) = mpsc::channel(LINK_QUEUE);
        let ended = Arc::new(Mutex::new(None));
        let done = ended.clone();
        let peer = address.to_owned();
        tokio::spawn(async move {
            let outcome = client
                .push(tokio_stream::wrappers::ReceiverStream::new(rx))
                .await;
            let why = match outcome {
                Ok(_) => "the stream was closed".to_owned(),
                Err(status) => format!("the stream to {peer} failed: {}", status.message()),
            };
            *done.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
        });
        Ok(GrpcLink {
            from,
            address: address.to_owned(),
            tx,
            ended,
        })
    }

    /// Whether the stream has ended (the link must be replaced).
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

impl GrpcLink {
    /// Queues the chunks of piece `key` (as [`wire::chunks`] cut them).
    pub async fn send_chunks(
        &self,
        key: PieceKey,
        chunks: Vec<proto::Chunk>,
    ) -> Result<(), String> {
        for chunk in chunks {
            let message = proto::PushRequest {
                from: self.from,
                run: key.run,
                step: key.step,
                piece: key.piece,
                chunk: Some(chunk),
            };
            if self.tx.send(message).await.is_err() {
                let why = self
                    .ended
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
                    .unwrap_or_else(|| "the stream ended".into());
                return Err(format!("sending to the worker at {}: {why}", self.address));
            }
        }
        Ok(())
    }
}

#[tonic::async_trait]
impl Link for GrpcLink {
    async fn send(&self, key: PieceKey, data: Bytes) -> Result<(), String> {
        self.send_chunks(key, wire::chunks(data)).await
    }
}

/// One link per peer address, opened on first use and replaced once closed.
#[derive(Default)]
pub struct Links {
    links: tokio::sync::Mutex<HashMap<String, Arc<GrpcLink>>>,
}

impl Links {
    /// The link to `address`.
    pub async fn get(
        &self,
        from: u32,
        address: &str,
        timeout: Duration,
    ) -> Result<Arc<GrpcLink>, String> {
        let mut links = self.links.lock().await;
        if let Some(link) = links.get(address).filter(|l| !l.is_closed()) {
            return Ok(link.clone());
        }
        let link = Arc::new(GrpcLink::connect(from, address, timeout).await?);
        links.insert(address.to_owned(), link.clone());
        Ok(link)
    }

    /// Closes the link to `address` (its peer sees the stream end).
    pub async fn close(&self, address: &str) {
        self.links.lock().await.remove(address);
    }

    /// Closes every link (their peers see the streams end).
    pub async fn clear(&self) {
        self.links.lock().await.clear();
    }
}

/// A piece's destination, as the receiver tracks it.
enum Slot {
    /// The executor created the destination; chunks go straight in. The
    /// check starts with the first chunk.
    Expecting {
        from: u32,
        transfer: AsyncTransfer,
        check: Option<ChunkCheck>,
    },
    /// Chunks arrived before the executor reached the step.
    Early {
        from: u32,
        chunks: Vec<proto::Chunk>,
        check: ChunkCheck,
        bytes: u64,
    },
    /// Every byte landed (or the piece failed): late chunks are errors.
    Closed,
}

/// Counts of what a receiver took in.
#[derive(Debug, Default)]
pub struct ReceiveCounters {
    pub bytes: AtomicU64,
    pub pieces: AtomicU64,
}

/// Matches arriving chunks with destination buffers (see the module doc).
pub struct Receiver {
    slots: Mutex<HashMap<PieceKey, Slot>>,
    /// Bytes held for pieces whose destination does not exist yet, and the
    /// most that may be.
    early: AtomicU64,
    early_limit: u64,
    pub counters: ReceiveCounters,
}

impl Receiver {
    /// A receiver that holds at most `early_limit` bytes of early pieces.
    pub fn new(early_limit: u64) -> Receiver {
        Receiver {
            slots: Mutex::new(HashMap::new()),
            early: AtomicU64::new(0),
            early_limit,
            counters: ReceiveCounters::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PieceKey, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The executor made the destination of piece `key` (from worker
    /// `from`): writes what already arrived, and routes the rest to it.
    pub fn expect(
        &self,
        key: PieceKey,
        from: u32,
        mut transfer: AsyncTransfer,
    ) -> Result<(), String> {
        let mut slots = self.lock();
        match slots.remove(&key) {
            None => {
                slots.insert(
                    key,
                    Slot::Expecting {
                        from,
                        transfer,
                        check: None,
                    },
                );
                Ok(())
            }
            Some(Slot::Early {
                from: sender,
                chunks,
                check,
                bytes,
            }) => {
                self.early.fetch_sub(bytes, Ordering::SeqCst);
                let outcome = (|| {
                    if sender != from {
                        return Err(format!(
                            "piece {key:?} came from worker {sender}, not {from}"
                        ));
                    }
                    if check.total() != transfer.size() as u64 {
                        return Err(format!(
                            "piece {key:?} is {} bytes, its destination {}",
                            check.total(),
                            transfer.size()
                        ));
                    }
                    let complete = check.is_done();
                    let n = chunks.len();
                    for (i, chunk) in chunks.into_iter().enumerate() {
                        let last = complete && i + 1 == n;
                        transfer
                            .write(chunk.data, last)
                            .map_err(|e| e.to_string())?;
                    }
                    Ok(complete)
                })();
                match outcome {
                    Ok(true) => {
                        self.counters.pieces.fetch_add(1, Ordering::Relaxed);
                        slots.insert(key, Slot::Closed);
                    }
                    Ok(false) => {
                        // `check` has seen the held chunks: it goes on from there.
                        slots.insert(
                            key,
                            Slot::Expecting {
                                from,
                                transfer,
                                check: Some(check),
                            },
                        );
                    }
                    Err(e) => {
                        let _ = transfer.fail(&e);
                        slots.insert(key, Slot::Closed);
                    }
                }
                Ok(())
            }
            Some(other) => {
                slots.insert(key, other);
                Err(format!("piece {key:?} is expected twice"))
            }
        }
    }

    /// A chunk of piece `key` from worker `from`. An error ends the peer's
    /// stream (the piece's destination, if any, fails with it).
    pub fn deliver(&self, from: u32, key: PieceKey, chunk: proto::Chunk) -> Result<(), WireError> {
        let what = || {
            format!(
                "piece {}/{} of run {} from worker {from}",
                key.step, key.piece, key.run
            )
        };
        let mut slots = self.lock();
        let len = chunk.data.len() as u64;
        match slots.get_mut(&key) {
            None => {
                let mut check = ChunkCheck::new(&chunk, self.early_limit, None, what())?;
                self.hold(len)?;
                check.check(&chunk)?;
                slots.insert(
                    key,
                    Slot::Early {
                        from,
                        chunks: vec![chunk],
                        check,
                        bytes: len,
                    },
                );
            }
            Some(Slot::Early {
                from: sender,
                chunks,
                check,
                bytes,
            }) => {
                if *sender != from {
                    return Err(WireError(format!(
                        "{}: also sent by worker {sender}",
                        what()
                    )));
                }
                check.check(&chunk)?;
                self.hold(len)?;
                *bytes += len;
                chunks.push(chunk);
            }
            Some(Slot::Expecting {
                from: sender,
                transfer,
                check,
            }) => {
                if *sender != from {
                    let e = WireError(format!("{}: expected from worker {sender}", what()));
                    let _ = transfer.fail(&e.0);
                    slots.insert(key, Slot::Closed);
                    return Err(e);
                }
                let check = match check {
                    Some(c) => c,
                    None => check.insert(
                        match ChunkCheck::new(
                            &chunk,
                            transfer.size() as u64,
                            Some(transfer.size() as u64),
                            what(),
                        ) {
                            Ok(c) => c,
                            Err(e) => {
                                let _ = transfer.fail(&e.0);
                                slots.insert(key, Slot::Closed);
                                return Err(e);
                            }
                        },
                    ),
                };
                let last = match check.check(&chunk) {
                    Ok(last) => last,
                    Err(e) => {
                        let _ = transfer.fail(&e.0);
                        slots.insert(key, Slot::Closed);
                        return Err(e);
                    }
                };
                if let Err(e) = transfer.write(chunk.data, last) {
                    let e = WireError(format!("{}: {e}", what()));
                    let _ = transfer.fail(&e.0);
                    slots.insert(key, Slot::Closed);
                    return Err(e);
                }
                if last {
                    self.counters.pieces.fetch_add(1, Ordering::Relaxed);
                    slots.insert(key, Slot::Closed);
                }
            }
            Some(Slot::Closed) => {
                return Err(WireError(format!(
                    "{}: a chunk after the piece was complete",
                    what()
                )));
            }
        }
        self.counters.bytes.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    fn hold(&self, bytes: u64) -> Result<(), WireError> {
        let held = self.early.fetch_add(bytes, Ordering::SeqCst) + bytes;
        if held > self.early_limit {
            self.early.fetch_sub(bytes, Ordering::SeqCst);
            return Err(WireError(format!(
                "more than {} bytes arrived before their steps",
                self.early_limit
            )));
        }
        Ok(())
    }

    /// The stream from worker `from` ended: its incomplete pieces fail.
    pub fn stream_ended(&self, from: u32, why: &str) {
        self.close(
            |_, sender| sender == from,
            &format!("the stream from worker {from} ended: {why}"),
        );
    }

    /// Run `run` is over: its pieces not yet complete fail with `why`, and
    /// everything the receiver holds for it is dropped.
    pub fn end_run(&self, run: u64, why: &str) {
        self.close(|key, _| key.run == run, why);
        self.lock().retain(|key, _| key.run != run);
    }

    fn close(&self, matches: impl Fn(&PieceKey, u32) -> bool, why: &str) {
        let mut slots = self.lock();
        for (key, slot) in slots.iter_mut() {
            let from = match slot {
                Slot::Expecting { from, .. } | Slot::Early { from, .. } => *from,
                Slot::Closed => continue,
            };
            if !matches(key, from) {
                continue;
            }
            match std::mem::replace(slot, Slot::Closed) {
                Slot::Expecting {
                    mut transfer,
                    check,
                    ..
                } => {
                    let detail = check
                        .map(|c| c.truncated().0)
                        .unwrap_or_else(|| format!("piece {key:?}: no byte arrived"));
                    let _ = transfer.fail(&format!("{detail} ({why})"));
                }
                Slot::Early { bytes, .. } => {
                    self.early.fetch_sub(bytes, Ordering::SeqCst);
                }
                Slot::Closed => {}
            }
        }
    }

    /// Pieces being received or held.
    pub fn pending(&self) -> usize {
        self.lock()
            .values()
            .filter(|s| !matches!(s, Slot::Closed))
            .count()
    }
}
