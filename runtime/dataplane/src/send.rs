//! The sending side of a worker: a lane per peer, writing pieces in the
//! order the executor queued them, each once its buffer is ready.

use crate::{GrpcLink, Link, PeerAddress, Result, SendRecord, Spoiled, TcpLink, Transport};
use pw_exec::{executor::Outcome, Completion, PieceKey};
use pw_pjrt::Buffer;
use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Condvar, Mutex,
    },
    time::{Duration, Instant},
};

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

/// Pieces this small, in host memory, are written by the thread that
/// completes them, when their link is free: no hand-off to the lane's
/// thread on the way. A piece on a GPU is not: reading it would wait for a
/// device-to-host copy inside the plugin's own completion callback, which
/// the CUDA plugin never finishes (the chain of benches/cluster.rs hung so).
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
    /// Bytes, when known and in host memory (small pieces may be written
    /// inline); `usize::MAX` otherwise.
    bytes: usize,
    /// Set once the buffer is ready (or failed).
    ready: Option<Outcome>,
}

impl Lane {
    fn lock(&self) -> std::sync::MutexGuard<'_, LaneState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(self: &Arc<Self>, piece: Outgoing) {
        let bytes = match piece.buffer.is_on_cpu() {
            true => piece.buffer.on_device_size().unwrap_or(usize::MAX),
            false => usize::MAX,
        };
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

    fn connect(&self) -> Result<Box<dyn Link>> {
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
            Some(outcome) => outcome.map_err(|e| e.to_string())?,
            None => {
                let bytes = piece.buffer.to_host_copy().map_err(|e| e.to_string())?;
                self.write_piece(link, piece.key, &bytes)
                    .map_err(|e| e.to_string())?
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
    ) -> Result<()> {
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
    ) -> Result<u64> {
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
