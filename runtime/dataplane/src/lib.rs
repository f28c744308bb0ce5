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
//!   ([`AsyncTransfer`]s), by [`PieceKey`]. Chunks that arrive before the
//!   executor reaches their step are held (within a byte budget) and written
//!   when it does. Every payload is checked ([`ChunkCheck`]); the last chunk
//!   is written only once its checksum holds, so a corrupted or truncated
//!   piece fails its buffer (and the steps that read it), never feeds them
//!   wrong data. A worker listens for both transports
//!   ([`serve_tcp`] and the gRPC service).
//!
//! This crate moves bytes between PJRT buffers of workers; it knows the
//! executor's completions and piece keys, not the controller.

#![deny(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

use bytes::Bytes;
use pw_exec::{executor::Outcome, Completion, PieceKey};
use pw_pjrt::{AsyncTransfer, Buffer};
use pw_wire::{self as wire, proto, ChunkCheck, WireError};
use std::{
    collections::{HashMap, HashSet},
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Condvar, Mutex,
    },
    time::{Duration, Instant},
};

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
    type Err = String;
    fn from_str(s: &str) -> Result<Transport, String> {
        match s {
            "tcp" => Ok(Transport::Tcp),
            "grpc" => Ok(Transport::Grpc),
            other => Err(format!("unknown data plane {other:?} (tcp or grpc)")),
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
    fn write(&mut self, key: PieceKey, payload: &[u8], total: u64, crc: u32) -> Result<(), String>;

    /// Tells the peer that piece `key` will not come, and why (its source
    /// failed): the step waiting for it fails instead of waiting.
    fn fail(&mut self, key: PieceKey, why: &str) -> Result<(), String>;
}

// ------------------------------------------------------------------ TCP ---

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
    pub fn connect(from: u32, address: &str, timeout: Duration) -> Result<TcpLink, String> {
        let failed = |e: std::io::Error| {
            format!("cannot reach the data port of the worker at {address}: {e}")
        };
        let addr = std::net::ToSocketAddrs::to_socket_addrs(address)
            .map_err(failed)?
            .next()
            .ok_or_else(|| format!("{address} resolves to no address"))?;
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
    fn write(&mut self, key: PieceKey, payload: &[u8], total: u64, crc: u32) -> Result<(), String> {
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
            written.map_err(|e| format!("sending to the worker at {}: {e}", self.address))?;
        }
        Ok(())
    }

    fn fail(&mut self, key: PieceKey, why: &str) -> Result<(), String> {
        let why = &why.as_bytes()[..why.len().min(wire::CHUNK_BYTES)];
        let mut frame = frame_header(key, 0, 0, why.len(), FRAME_FAILED, 0);
        frame.extend_from_slice(why);
        self.stream
            .write_all(&frame)
            .map_err(|e| format!("sending to the worker at {}: {e}", self.address))
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
            break format!(
                "a frame of {len} bytes, more than the {} a chunk may have",
                wire::CHUNK_BYTES
            );
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
            break e.0;
        }
    };
    receiver.stream_ended(from, &why);
}

// ----------------------------------------------------------------- gRPC ---

/// Pieces on a gRPC client stream (`Worker.Push`) to one peer.
pub struct GrpcLink {
    from: u32,
    address: String,
    tx: tokio::sync::mpsc::Sender<proto::PushRequest>,
    /// Why the stream ended, once it has.
    ended: Arc<Mutex<Option<String>>>,
}

/// Messages queued per gRPC link: with 1 MiB chunks, 16 MiB in flight.
const LINK_QUEUE: usize = 16;

impl GrpcLink {
    /// Opens the stream to `address` (host:port) on `handle`'s runtime.
    pub fn connect(
        from: u32,
        address: &str,
        timeout: Duration,
        handle: &tokio::runtime::Handle,
    ) -> Result<GrpcLink, String> {
        let channel = handle
            .block_on(pw_wire::net::channel(address, timeout))
            .map_err(|e| format!("cannot reach the worker at {address}: {e}"))?;
        let mut client = proto::worker_client::WorkerClient::new(channel)
            .max_encoding_message_size(wire::MAX_MESSAGE_BYTES)
            .max_decoding_message_size(wire::MAX_MESSAGE_BYTES);
        let (tx, rx) = tokio::sync::mpsc::channel(LINK_QUEUE);
        let ended = Arc::new(Mutex::new(None));
        let done = ended.clone();
        let peer = address.to_owned();
        handle.spawn(async move {
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
}

impl Link for GrpcLink {
    fn write(&mut self, key: PieceKey, payload: &[u8], total: u64, crc: u32) -> Result<(), String> {
        for r in wire::chunk_ranges(payload.len()) {
            let last = r.end as u64 == total;
            let message = proto::PushRequest {
                from: self.from,
                run: key.run,
                step: key.step,
                piece: key.piece,
                chunk: Some(proto::Chunk {
                    offset: r.start as u64,
                    total,
                    crc32: last.then_some(crc),
                    data: Bytes::copy_from_slice(&payload[r]),
                }),
                failed: String::new(),
            };
            self.push(message)?;
        }
        Ok(())
    }

    fn fail(&mut self, key: PieceKey, why: &str) -> Result<(), String> {
        self.push(proto::PushRequest {
            from: self.from,
            run: key.run,
            step: key.step,
            piece: key.piece,
            chunk: None,
            failed: why.to_owned(),
        })
    }
}

impl GrpcLink {
    /// Queues one message on the stream, or says why the stream ended.
    fn push(&self, message: proto::PushRequest) -> Result<(), String> {
        if self.tx.blocking_send(message).is_ok() {
            return Ok(());
        }
        let why = self
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "the stream ended".into());
        Err(format!("sending to the worker at {}: {why}", self.address))
    }
}

// -------------------------------------------------------------- sending ---

pub use pw_core::report::SendRecord;

/// A piece to send.
pub struct Outgoing {
    pub key: PieceKey,
    pub to: u32,
    pub buffer: Arc<Buffer>,
    pub done: Completion,
    /// Where to log the send, and the part's start.
    pub log: Arc<Mutex<Vec<SendRecord>>>,
    pub t0: Instant,
}

/// How a sender damages what it sends (fault injection for tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Damage {
    pub corrupt: bool,
    pub truncate: bool,
}

/// Counts of what a sender sent.
#[derive(Debug, Default)]
pub struct SendCounters {
    pub bytes: AtomicU64,
    pub pieces: AtomicU64,
}

/// The sending side of a worker (see the module doc).
pub struct Sender {
    transport: Transport,
    from: Mutex<u32>,
    lanes: Mutex<HashMap<PeerAddress, Arc<Lane>>>,
    /// Workers that were lost, and why: pieces for them fail at once.
    lost: Mutex<HashMap<u32, String>>,
    /// Runs of which nothing more is sent (see [`Spoiled`]).
    spoiled: Spoiled,
    handle: tokio::runtime::Handle,
    damage: Damage,
    pub counters: Arc<SendCounters>,
}

/// How long a link may take to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

impl Sender {
    pub fn new(
        transport: Transport,
        handle: tokio::runtime::Handle,
        damage: Damage,
        spoiled: Spoiled,
    ) -> Sender {
        Sender {
            transport,
            from: Mutex::new(u32::MAX),
            lanes: Mutex::new(HashMap::new()),
            lost: Mutex::default(),
            spoiled,
            handle,
            damage,
            counters: Arc::default(),
        }
    }

    /// The worker id pieces are sent as (set at each registration); the
    /// links of an earlier registration are closed.
    pub fn set_id(&self, id: u32) {
        *self.from.lock().unwrap_or_else(|e| e.into_inner()) = id;
        self.clear();
    }

    /// Queues `piece` for `peer`: it is written once it is ready and every
    /// piece queued for `peer` before it has been.
    pub fn send(&self, peer: &PeerAddress, piece: Outgoing) {
        if let Some(why) = self
            .lost
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&piece.to)
        {
            piece
                .done
                .complete(Err(format!("worker {} was lost: {why}", piece.to)));
            return;
        }
        let lane = {
            let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
            match lanes.get(peer) {
                Some(lane) => lane.clone(),
                None => {
                    let lane = Arc::new(Lane {
                        transport: self.transport,
                        from: *self.from.lock().unwrap_or_else(|e| e.into_inner()),
                        peer: peer.clone(),
                        handle: self.handle.clone(),
                        damage: self.damage,
                        spoiled: self.spoiled.clone(),
                        counters: self.counters.clone(),
                        state: Mutex::new(LaneState::default()),
                        work: Condvar::new(),
                    });
                    let worker = lane.clone();
                    if let Err(e) = std::thread::Builder::new()
                        .name("pw-data-out".into())
                        .spawn(move || worker.run())
                    {
                        piece
                            .done
                            .complete(Err(format!("cannot start a sender thread: {e}")));
                        return;
                    }
                    lanes.insert(peer.clone(), lane.clone());
                    lane
                }
            }
        };
        lane.push(piece);
    }

    /// Worker `worker` (at `peer`) was lost: the pieces queued for it, and
    /// the one being written, fail with `why`; later ones fail at once.
    pub fn peer_lost(&self, worker: u32, peer: &PeerAddress, why: &str) {
        self.lost
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(worker, why.to_owned());
        let lane = self
            .lanes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(peer);
        if let Some(lane) = lane {
            lane.fail(&format!("worker {worker} was lost: {why}"));
        }
    }

    /// Closes every link (their threads end once their queues are empty).
    pub fn clear(&self) {
        let lanes = std::mem::take(&mut *self.lanes.lock().unwrap_or_else(|e| e.into_inner()));
        for lane in lanes.values() {
            lane.close();
        }
    }
}

/// Pieces this small are written by the thread that completes them, when
/// their link is free: no hand-off to the lane's thread on the way.
const INLINE_BYTES: usize = 64 << 10;

/// The pieces for one peer, written in the order they were queued.
///
/// A piece becomes ready when its buffer does (a PJRT completion callback).
/// Whoever finds the head of the queue ready and nobody writing writes it:
/// the completing thread itself for a small piece on a TCP link, else the
/// lane's thread (large pieces, gRPC links, a link to open).
struct Lane {
    transport: Transport,
    from: u32,
    peer: PeerAddress,
    handle: tokio::runtime::Handle,
    damage: Damage,
    spoiled: Spoiled,
    counters: Arc<SendCounters>,
    state: Mutex<LaneState>,
    /// Wakes the lane's thread.
    work: Condvar,
}

#[derive(Default)]
struct LaneState {
    next: u64,
    queue: std::collections::VecDeque<Queued>,
    /// Someone is writing (the head was taken).
    writing: bool,
    /// The completion of the piece being written.
    in_flight: Option<Completion>,
    link: Option<Box<dyn Link>>,
    closed: bool,
}

struct Queued {
    seq: u64,
    piece: Outgoing,
    /// Bytes, when known (small pieces may be written inline).
    bytes: usize,
    /// Set once the buffer is ready (or failed).
    ready: Option<Outcome>,
}

impl Lane {
    fn lock(&self) -> std::sync::MutexGuard<'_, LaneState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(self: &Arc<Self>, piece: Outgoing) {
        let bytes = piece.buffer.on_device_size().unwrap_or(usize::MAX);
        let event = piece.buffer.ready_event();
        let seq = {
            let mut st = self.lock();
            let seq = st.next;
            st.next += 1;
            st.queue.push_back(Queued {
                seq,
                piece,
                bytes,
                ready: None,
            });
            seq
        };
        let lane = self.clone();
        let registered = event.and_then(|e| {
            e.on_ready(move |outcome| {
                lane.ready(
                    seq,
                    outcome.map_err(|e| format!("the piece's source failed: {e}")),
                    true,
                )
            })
        });
        if let Err(e) = registered {
            self.ready(
                seq,
                Err(format!("cannot watch the piece's buffer: {e}")),
                false,
            );
        }
    }

    /// Piece `seq` is ready (or failed): writes what can be written now.
    fn ready(&self, seq: u64, outcome: Outcome, completing: bool) {
        let mut st = self.lock();
        if let Some(q) = st.queue.iter_mut().find(|q| q.seq == seq) {
            q.ready = Some(outcome);
        }
        self.drain(st, completing);
    }

    /// Writes the ready pieces at the head of the queue, in order, unless
    /// someone already is. From a completion callback (`inline`), only
    /// small pieces on an open TCP link; the rest goes to the lane's thread.
    fn drain<'a>(&'a self, mut st: std::sync::MutexGuard<'a, LaneState>, inline: bool) {
        loop {
            if st.writing {
                return;
            }
            let Some(head) = st.queue.front() else { return };
            let Some(outcome) = &head.ready else { return };
            let here = !inline
                || outcome.is_err()
                || (self.transport == Transport::Tcp
                    && head.bytes <= INLINE_BYTES
                    && st.link.is_some());
            if !here {
                self.work.notify_one();
                return;
            }
            let Some(q) = st.queue.pop_front() else {
                return;
            };
            st.writing = true;
            st.in_flight = Some(q.piece.done.clone());
            let mut link = st.link.take();
            drop(st);
            let ready = match q.ready.clone().unwrap_or(Ok(())) {
                Ok(()) if self.spoiled.contains(q.piece.key.run) => Err(format!(
                    "not sent: a piece this worker needed for run {} failed, so this one may rest on it",
                    q.piece.key.run
                )),
                other => other,
            };
            let outcome = match ready {
                Ok(()) => self.write(&mut link, &q.piece),
                Err(e) => {
                    // The receiver's step fails instead of waiting for it.
                    let told = self.tell_failed(&mut link, q.piece.key, &e);
                    if told.is_err() {
                        link = None;
                    }
                    Err(e)
                }
            };
            if outcome.is_err() {
                // The next piece opens a new link.
                link = None;
            }
            q.piece.done.complete(outcome);
            st = self.lock();
            st.link = link;
            st.writing = false;
            st.in_flight = None;
        }
    }

    /// The lane's thread: writes what the callbacks leave to it, until the
    /// lane is closed and its queue empty.
    fn run(&self) {
        let mut st = self.lock();
        loop {
            let head_ready = !st.writing && st.queue.front().is_some_and(|q| q.ready.is_some());
            if head_ready {
                self.drain(st, false);
                st = self.lock();
                continue;
            }
            if st.closed && st.queue.is_empty() {
                st.link = None;
                return;
            }
            st = self
                .work
                .wait_timeout(st, Duration::from_millis(500))
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.work.notify_one();
    }

    /// Fails every piece queued, and the one being written, and closes the
    /// lane (its peer is gone).
    fn fail(&self, why: &str) {
        let mut st = self.lock();
        for q in std::mem::take(&mut st.queue) {
            q.piece.done.complete(Err(why.to_owned()));
        }
        if let Some(done) = st.in_flight.take() {
            done.complete(Err(why.to_owned()));
        }
        st.closed = true;
        drop(st);
        self.work.notify_one();
    }

    fn connect(&self) -> Result<Box<dyn Link>, String> {
        Ok(match self.transport {
            Transport::Tcp => Box::new(TcpLink::connect(
                self.from,
                &self.peer.data,
                CONNECT_TIMEOUT,
            )?),
            Transport::Grpc => Box::new(GrpcLink::connect(
                self.from,
                &self.peer.service,
                CONNECT_TIMEOUT,
                &self.handle,
            )?),
        })
    }

    /// Writes one ready piece, from where it lies when it can.
    fn write(&self, link: &mut Option<Box<dyn Link>>, piece: &Outgoing) -> Outcome {
        let start = piece.t0.elapsed();
        let sent = piece
            .buffer
            .read_in_place(|bytes| self.write_piece(link, piece.key, bytes))
            .map_err(|e| e.to_string())?;
        let size = match sent {
            Some(outcome) => outcome?,
            None => {
                let bytes = piece.buffer.to_host_copy().map_err(|e| e.to_string())?;
                self.write_piece(link, piece.key, &bytes)?
            }
        };
        self.counters.bytes.fetch_add(size, Ordering::Relaxed);
        self.counters.pieces.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut log) = piece.log.lock() {
            log.push(SendRecord {
                step: piece.key.step,
                piece: piece.key.piece,
                to: piece.to,
                bytes: size,
                start,
                end: piece.t0.elapsed(),
            });
        }
        Ok(())
    }

    /// Tells the peer piece `key` will not come (opening the link if needed).
    fn tell_failed(
        &self,
        link: &mut Option<Box<dyn Link>>,
        key: PieceKey,
        why: &str,
    ) -> Result<(), String> {
        let l = match link {
            Some(l) => l,
            None => link.insert(self.connect()?),
        };
        l.fail(key, why)
    }

    /// Writes one piece's bytes on the link (opening it if needed), damaged
    /// as the faults say; returns its size.
    fn write_piece(
        &self,
        link: &mut Option<Box<dyn Link>>,
        key: PieceKey,
        bytes: &[u8],
    ) -> Result<u64, String> {
        let total = bytes.len() as u64;
        let crc = crc32fast::hash(bytes);
        if self.damage.truncate {
            // The first half of the bytes on a link of its own, which then
            // closes: the receiver sees its stream end inside the piece.
            let mut l = self.connect()?;
            l.write(key, &bytes[..bytes.len() / 2], total, crc)?;
            return Ok(total);
        }
        let l = match link {
            Some(l) => l,
            None => link.insert(self.connect()?),
        };
        if self.damage.corrupt && !bytes.is_empty() {
            // The checksum stays that of the true bytes: the receiver must notice.
            let mut damaged = bytes.to_vec();
            damaged[0] ^= 0xff;
            l.write(key, &damaged, total, crc)?;
        } else {
            l.write(key, bytes, total, crc)?;
        }
        Ok(total)
    }
}

// ------------------------------------------------------------ receiving ---

/// Where a piece lands: the buffer's transfer, and what completes when
/// it landed (or failed).
pub struct Destination {
    pub transfer: AsyncTransfer,
    pub landed: Completion,
}

impl Destination {
    /// The piece will not come: its step fails with `why`, and the buffer
    /// is filled with zeros so that whatever reads it finishes (the CPU
    /// plugin never finishes a multi-device execution that reads a failed
    /// buffer); run `run` is spoiled here.
    fn give_up(mut self, why: &str, spoiled: &Spoiled, run: u64) {
        spoiled.mark(run);
        self.landed.complete(Err(why.to_owned()));
        let rest = self.transfer.size() - self.transfer.written();
        if !self.transfer.is_finished() && self.transfer.write(vec![0u8; rest], true).is_err() {
            let _ = self.transfer.fail(why);
        }
    }
}

/// Runs of which a piece failed on this worker: what they computed since
/// may rest on the zeros its buffer holds, so nothing more of them is sent
/// (each piece's receiver is told it will not come), and the executor
/// keeps none of it ([`pw_exec::Enqueued::tainted`]).
#[derive(Clone, Default)]
pub struct Spoiled(Arc<Mutex<HashSet<u64>>>);

impl Spoiled {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<u64>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn mark(&self, run: u64) {
        self.lock().insert(run);
    }

    pub fn contains(&self, run: u64) -> bool {
        self.lock().contains(&run)
    }

    pub fn forget(&self, run: u64) {
        self.lock().remove(&run);
    }
}

/// A piece's destination, as the receiver tracks it.
enum Slot {
    /// The executor created the destination; chunks go straight in. The
    /// check starts with the first chunk.
    Expecting {
        from: u32,
        dest: Destination,
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
    /// Its sender said it will not come, before the executor reached it.
    Failed(String),
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
    /// Runs that are over: their pieces are refused or dropped. Locked only
    /// while `slots` is held.
    ended: Mutex<HashSet<u64>>,
    /// Workers that were lost: their pieces fail, whenever expected, and
    /// nothing more is taken from them. Locked only while `slots` is held.
    lost: Mutex<HashMap<u32, String>>,
    /// Runs a piece of which failed here (see [`Spoiled`]).
    spoiled: Spoiled,
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
            ended: Mutex::default(),
            lost: Mutex::default(),
            spoiled: Spoiled::default(),
            early: AtomicU64::new(0),
            early_limit,
            counters: ReceiveCounters::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PieceKey, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The runs whose pieces failed here (shared with this worker's
    /// [`Sender`], which then sends nothing more of them).
    pub fn spoiled(&self) -> Spoiled {
        self.spoiled.clone()
    }

    /// Whether run `run` is over; call with `slots` held.
    fn is_over(&self, run: u64) -> bool {
        self.ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&run)
    }

    /// The executor made the destination of piece `key` (from worker
    /// `from`): writes what already arrived, and routes the rest to it. An
    /// error for a run that is over.
    pub fn expect(&self, key: PieceKey, from: u32, mut dest: Destination) -> Result<(), String> {
        let mut slots = self.lock();
        if self.is_over(key.run) {
            let why = format!("run {} is over", key.run);
            dest.give_up(&why, &self.spoiled, key.run);
            return Err(why);
        }
        if let Some(why) = self.lost_reason(from) {
            // Its step fails (a recovery computes the piece again).
            dest.give_up(
                &format!(
                    "piece {}/{} of run {}: worker {from} was lost: {why}",
                    key.step, key.piece, key.run
                ),
                &self.spoiled,
                key.run,
            );
            return Ok(());
        }
        match slots.remove(&key) {
            None => {
                slots.insert(
                    key,
                    Slot::Expecting {
                        from,
                        dest,
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
                    if check.total() != dest.transfer.size() as u64 {
                        return Err(format!(
                            "piece {key:?} is {} bytes, its destination {}",
                            check.total(),
                            dest.transfer.size()
                        ));
                    }
                    let complete = check.is_done();
                    let n = chunks.len();
                    for (i, chunk) in chunks.into_iter().enumerate() {
                        let last = complete && i + 1 == n;
                        dest.transfer
                            .write(chunk.data, last)
                            .map_err(|e| e.to_string())?;
                    }
                    Ok(complete)
                })();
                match outcome {
                    Ok(true) => {
                        self.counters.pieces.fetch_add(1, Ordering::Relaxed);
                        dest.landed.complete(Ok(()));
                        slots.insert(key, Slot::Closed);
                    }
                    Ok(false) => {
                        // `check` has seen the held chunks: it goes on from there.
                        slots.insert(
                            key,
                            Slot::Expecting {
                                from,
                                dest,
                                check: Some(check),
                            },
                        );
                    }
                    Err(e) => {
                        dest.give_up(&e, &self.spoiled, key.run);
                        slots.insert(key, Slot::Closed);
                    }
                }
                Ok(())
            }
            Some(Slot::Failed(why)) => {
                dest.give_up(&why, &self.spoiled, key.run);
                slots.insert(key, Slot::Closed);
                Ok(())
            }
            Some(other) => {
                slots.insert(key, other);
                Err(format!("piece {key:?} is expected twice"))
            }
        }
    }

    /// Whether piece `key` has not landed yet (for the status page).
    pub fn awaits(&self, key: PieceKey) -> bool {
        !matches!(self.lock().get(&key), Some(Slot::Closed | Slot::Failed(_)))
    }

    /// A chunk of piece `key` from worker `from`. An error ends the peer's
    /// stream (the piece's destination, if any, fails with it); a chunk of
    /// a run that is over is dropped.
    pub fn deliver(&self, from: u32, key: PieceKey, chunk: proto::Chunk) -> Result<(), WireError> {
        let what = || {
            format!(
                "piece {}/{} of run {} from worker {from}",
                key.step, key.piece, key.run
            )
        };
        let mut slots = self.lock();
        if self.is_over(key.run) {
            return Ok(());
        }
        if let Some(why) = self.lost_reason(from) {
            return Err(WireError(format!(
                "{}: worker {from} was lost ({why}); nothing more is taken from it",
                what()
            )));
        }
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
                dest,
                check,
            }) => {
                let outcome = (|| {
                    if *sender != from {
                        return Err(WireError(format!(
                            "{}: expected from worker {sender}",
                            what()
                        )));
                    }
                    let size = dest.transfer.size() as u64;
                    let check = match check {
                        Some(c) => c,
                        None => check.insert(ChunkCheck::new(&chunk, size, Some(size), what())?),
                    };
                    let last = check.check(&chunk)?;
                    dest.transfer
                        .write(chunk.data, last)
                        .map_err(|e| WireError(format!("{}: {e}", what())))?;
                    Ok(last)
                })();
                match outcome {
                    Ok(false) => {}
                    Ok(true) => {
                        self.counters.pieces.fetch_add(1, Ordering::Relaxed);
                        if let Some(Slot::Expecting { dest, .. }) = slots.insert(key, Slot::Closed)
                        {
                            dest.landed.complete(Ok(()));
                        }
                    }
                    Err(e) => {
                        if let Some(Slot::Expecting { dest, .. }) = slots.insert(key, Slot::Closed)
                        {
                            dest.give_up(&e.0, &self.spoiled, key.run);
                        }
                        return Err(e);
                    }
                }
            }
            Some(Slot::Closed | Slot::Failed(_)) => {
                return Err(WireError(format!(
                    "{}: a chunk after the piece was complete",
                    what()
                )));
            }
        }
        self.counters.bytes.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    /// Worker `from` says piece `key` will not come (its source failed):
    /// the step waiting for it fails with `why`, now or when it expects it.
    pub fn piece_failed(&self, from: u32, key: PieceKey, why: &str) {
        let mut slots = self.lock();
        if self.is_over(key.run) {
            return;
        }
        let why = format!(
            "piece {}/{} of run {} will not come from worker {from}: {why}",
            key.step, key.piece, key.run
        );
        match slots.remove(&key) {
            Some(Slot::Expecting {
                from: sender, dest, ..
            }) if sender == from => {
                dest.give_up(&why, &self.spoiled, key.run);
                slots.insert(key, Slot::Closed);
            }
            Some(Slot::Early {
                from: sender,
                bytes,
                ..
            }) if sender == from => {
                self.early.fetch_sub(bytes, Ordering::SeqCst);
                slots.insert(key, Slot::Failed(why));
            }
            None => {
                slots.insert(key, Slot::Failed(why));
            }
            Some(other) => {
                slots.insert(key, other);
            }
        }
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

    /// Why worker `from` was lost, if it was; call with `slots` held.
    fn lost_reason(&self, from: u32) -> Option<String> {
        self.lost
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&from)
            .cloned()
    }

    /// Worker `from` was lost: its pieces not yet complete fail with
    /// `why`, so do those expected from it later, and what it still sends
    /// is refused.
    pub fn peer_lost(&self, from: u32, why: &str) {
        {
            let _slots = self.lock();
            self.lost
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(from, why.to_owned());
        }
        self.close(
            |_, sender| sender == from,
            &format!("worker {from} was lost: {why}"),
        );
    }

    /// The stream from worker `from` ended: its incomplete pieces fail.
    pub fn stream_ended(&self, from: u32, why: &str) {
        self.close(
            |_, sender| sender == from,
            &format!("the stream from worker {from} ended: {why}"),
        );
    }

    /// Run `run` is over: its pieces not yet complete fail with `why`,
    /// everything the receiver holds for it is dropped, and its pieces are
    /// refused from now on (until [`Receiver::forget`]).
    pub fn end_run(&self, run: u64, why: &str) {
        {
            let _slots = self.lock();
            self.ended
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(run);
        }
        self.close(|key, _| key.run == run, why);
        self.lock().retain(|key, _| key.run != run);
    }

    /// Forgets that run `run` ended.
    pub fn forget(&self, run: u64) {
        self.spoiled.forget(run);
        let _slots = self.lock();
        self.ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&run);
    }

    fn close(&self, matches: impl Fn(&PieceKey, u32) -> bool, why: &str) {
        let mut slots = self.lock();
        for (key, slot) in slots.iter_mut() {
            let from = match slot {
                Slot::Expecting { from, .. } | Slot::Early { from, .. } => *from,
                Slot::Closed | Slot::Failed(_) => continue,
            };
            if !matches(key, from) {
                continue;
            }
            match std::mem::replace(slot, Slot::Closed) {
                Slot::Expecting { dest, check, .. } => {
                    let detail = check.map(|c| c.truncated().0).unwrap_or_else(|| {
                        format!(
                            "piece {}/{} of run {}: no byte arrived",
                            key.step, key.piece, key.run
                        )
                    });
                    dest.give_up(&format!("{detail} ({why})"), &self.spoiled, key.run);
                }
                Slot::Early { bytes, .. } => {
                    self.early.fetch_sub(bytes, Ordering::SeqCst);
                }
                Slot::Closed | Slot::Failed(_) => {}
            }
        }
    }
}
