//! The receiving side of a worker: arriving chunks matched with the
//! destination buffers the executor created before the bytes came.

use crate::{Error, Result};
use pw_exec::{Completion, PieceKey};
use pw_pjrt::AsyncTransfer;
use pw_wire::{proto, ChunkCheck};
use std::{
    collections::{HashMap, HashSet},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
};

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
    /// Its sender said it will not come, before the executor reached it
    /// (`held`: what it counts against the early budget).
    Failed { why: String, held: u64 },
}

/// The most bytes of a peer's reason for a failed piece that are kept.
const MAX_REASON: usize = 1024;

/// What a slot the executor has not asked for yet (early or failed)
/// counts against the early budget beyond its bytes, so that pieces made
/// up by a peer (empty chunks, failures of pieces no run has) cannot grow
/// the receiver without bound.
const SLOT_BYTES: u64 = 256;

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
    /// [`crate::Sender`], which then sends nothing more of them).
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
    pub fn expect(&self, key: PieceKey, from: u32, mut dest: Destination) -> Result<()> {
        let mut slots = self.lock();
        if self.is_over(key.run) {
            let over = Error::RunOver { run: key.run };
            dest.give_up(&over.to_string(), &self.spoiled, key.run);
            return Err(over);
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
                self.release(bytes + SLOT_BYTES);
                let outcome = (|| {
                    if sender != from {
                        return Err(Error::CameFrom { key, sender, from });
                    }
                    if check.total() != dest.transfer.size() as u64 {
                        return Err(Error::SizeMismatch {
                            key,
                            size: check.total(),
                            destination: dest.transfer.size() as u64,
                        });
                    }
                    let complete = check.is_done();
                    let n = chunks.len();
                    for (i, chunk) in chunks.into_iter().enumerate() {
                        let last = complete && i + 1 == n;
                        dest.transfer
                            .write(chunk.data, last)
                            .map_err(|source| Error::Land {
                                piece: format!("piece {key:?}"),
                                source,
                            })?;
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
                        dest.give_up(&e.to_string(), &self.spoiled, key.run);
                        slots.insert(key, Slot::Closed);
                    }
                }
                Ok(())
            }
            Some(Slot::Failed { why, held }) => {
                self.release(held);
                dest.give_up(&why, &self.spoiled, key.run);
                slots.insert(key, Slot::Closed);
                Ok(())
            }
            Some(other) => {
                slots.insert(key, other);
                Err(Error::Twice { key })
            }
        }
    }

    /// Whether piece `key` has not landed yet (for the status page).
    pub fn awaits(&self, key: PieceKey) -> bool {
        !matches!(
            self.lock().get(&key),
            Some(Slot::Closed | Slot::Failed { .. })
        )
    }

    /// A chunk of piece `key` from worker `from`. An error ends the peer's
    /// stream (the piece's destination, if any, fails with it); a chunk of
    /// a run that is over is dropped.
    pub fn deliver(&self, from: u32, key: PieceKey, chunk: proto::Chunk) -> Result<()> {
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
            return Err(Error::FromLost {
                piece: what(),
                from,
                why,
            });
        }
        let len = chunk.data.len() as u64;
        match slots.get_mut(&key) {
            None => {
                let mut check = ChunkCheck::new(&chunk, self.early_limit, None, what())?;
                self.hold(len + SLOT_BYTES)?;
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
                    return Err(Error::AlsoSent {
                        piece: what(),
                        sender: *sender,
                    });
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
                        return Err(Error::NotExpectedFrom {
                            piece: what(),
                            sender: *sender,
                        });
                    }
                    let size = dest.transfer.size() as u64;
                    let check = match check {
                        Some(c) => c,
                        None => check.insert(ChunkCheck::new(&chunk, size, Some(size), what())?),
                    };
                    let last = check.check(&chunk)?;
                    dest.transfer
                        .write(chunk.data, last)
                        .map_err(|source| Error::Land {
                            piece: what(),
                            source,
                        })?;
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
                            dest.give_up(&e.to_string(), &self.spoiled, key.run);
                        }
                        return Err(e);
                    }
                }
            }
            Some(Slot::Closed | Slot::Failed { .. }) => {
                return Err(Error::AfterComplete { piece: what() });
            }
        }
        self.counters.bytes.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    /// Worker `from` says piece `key` will not come (its source failed):
    /// the step waiting for it fails with `why`, now or when it expects it.
    /// An error (the early budget is spent) ends the peer's stream.
    pub fn piece_failed(&self, from: u32, key: PieceKey, why: &str) -> Result<()> {
        let mut slots = self.lock();
        if self.is_over(key.run) {
            return Ok(());
        }
        // What is kept of a reason is bounded, whoever sent it.
        let why = why.get(..MAX_REASON).unwrap_or(why);
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
                self.release(bytes + SLOT_BYTES);
                self.hold_failed(&mut slots, key, why)?;
            }
            None => self.hold_failed(&mut slots, key, why)?,
            Some(other) => {
                slots.insert(key, other);
            }
        }
        Ok(())
    }

    /// Keeps piece `key`'s failure until the executor asks for it, within
    /// the early budget.
    fn hold_failed(
        &self,
        slots: &mut HashMap<PieceKey, Slot>,
        key: PieceKey,
        why: String,
    ) -> Result<()> {
        let held = why.len() as u64 + SLOT_BYTES;
        self.hold(held)?;
        slots.insert(key, Slot::Failed { why, held });
        Ok(())
    }

    fn release(&self, bytes: u64) {
        self.early.fetch_sub(bytes, Ordering::SeqCst);
    }

    fn hold(&self, bytes: u64) -> Result<()> {
        let held = self.early.fetch_add(bytes, Ordering::SeqCst) + bytes;
        if held > self.early_limit {
            self.early.fetch_sub(bytes, Ordering::SeqCst);
            return Err(Error::EarlyLimit {
                limit: self.early_limit,
            });
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
        self.lock().retain(|key, slot| {
            if let Slot::Failed { held, .. } = slot {
                if key.run == run {
                    self.release(*held);
                }
            }
            key.run != run
        });
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
                Slot::Closed | Slot::Failed { .. } => continue,
            };
            if !matches(key, from) {
                continue;
            }
            match std::mem::replace(slot, Slot::Closed) {
                Slot::Expecting { dest, check, .. } => {
                    let detail = check.map(|c| c.truncated().to_string()).unwrap_or_else(|| {
                        format!(
                            "piece {}/{} of run {}: no byte arrived",
                            key.step, key.piece, key.run
                        )
                    });
                    dest.give_up(&format!("{detail} ({why})"), &self.spoiled, key.run);
                }
                Slot::Early { bytes, .. } => self.release(bytes + SLOT_BYTES),
                Slot::Closed | Slot::Failed { .. } => {}
            }
        }
    }
}
