//! The journal's log of calls: every call that gives its outputs a lineage
//! ([`crate::sessions::lineage`]) is logged (its executable, its outputs,
//! each argument's origin, the bytes of its kept uploads) and stays in the
//! log as long as its lineage node lives, so that a restarted server can
//! compute again the arrays lost while it was away.
//!
//! A call never waits for storage: it queues its entry, and a thread of
//! the log's own writes the queue in batches, one durable commit each
//! (a few milliseconds behind the calls: the arrays of calls made in that
//! time before the server dies are not computed again after its restart).
//! When more than [`QUEUED_MAX`] bytes of uploads wait to be written, a
//! call is not logged: its outputs' lineage then ends at a restart.

use super::{Failure, JournalError};
use prost::Message;
use pw_exec::HostArray;
use pw_wire::proto;
use redb::{Database, TableDefinition};
use std::{
    path::PathBuf,
    sync::{
        atomic::{AtomicU64, Ordering},
        mpsc, Arc, Weak,
    },
};

/// (session, entry) -> the `JournalCall`.
pub(super) const CALLS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("calls");

/// The most bytes of uploads queued for the log; past them a call is not
/// logged (see the module doc).
pub const QUEUED_MAX: u64 = 256 << 20;

/// The most entries one commit writes.
const BATCH: usize = 4096;

/// Where an argument of a logged call came from.
pub enum Argument {
    /// An upload, kept for lineage.
    Host(Arc<HostArray>),
    /// Array `array` of the session, made by output `.1` of logged entry
    /// `.0` when one made it.
    Array {
        array: u64,
        made_by: Option<(u64, u32)>,
    },
}

/// A call to log.
pub struct Call {
    pub session: u64,
    pub executable: u64,
    pub arguments: Vec<Argument>,
    pub outputs: Vec<u64>,
}

enum Entry {
    Made {
        entry: u64,
        call: Call,
        bytes: u64,
    },
    /// Answered once what was queued before it is written.
    Flush(mpsc::Sender<()>),
    Gone {
        session: u64,
        entry: u64,
    },
}

/// See the module doc. Cheap to clone.
#[derive(Clone)]
pub struct CallLog {
    tx: mpsc::Sender<Entry>,
    /// Bytes of uploads queued.
    queued: Arc<AtomicU64>,
    next: Arc<AtomicU64>,
}

/// A logged call; dropping it takes it out of the log.
pub struct Logged {
    session: u64,
    pub entry: u64,
    log: CallLog,
}

impl Drop for Logged {
    fn drop(&mut self) {
        let _ = self.log.tx.send(Entry::Gone {
            session: self.session,
            entry: self.entry,
        });
    }
}

impl CallLog {
    /// Starts the log's writer on `db` (the journal at `path`, which
    /// closes when its owner drops it: the writer then stops); entries are
    /// numbered from `next`.
    pub(super) fn start(db: Weak<Database>, path: PathBuf, next: u64) -> std::io::Result<CallLog> {
        let (tx, rx) = mpsc::channel();
        let log = CallLog {
            tx,
            queued: Arc::new(AtomicU64::new(0)),
            next: Arc::new(AtomicU64::new(next)),
        };
        let writer = Writer {
            db,
            path,
            queued: log.queued.clone(),
        };
        std::thread::Builder::new()
            .name("pw-journal".into())
            .spawn(move || writer.run(rx))?;
        Ok(log)
    }

    /// A log that writes nothing (until the journal is read).
    pub(super) fn idle() -> CallLog {
        CallLog {
            tx: mpsc::channel().0,
            queued: Arc::default(),
            next: Arc::default(),
        }
    }

    /// Queues `call`; its entry, or None when it is not logged (too many
    /// bytes wait to be written).
    pub fn made(&self, call: Call) -> Option<Logged> {
        let bytes: u64 = call
            .arguments
            .iter()
            .map(|a| match a {
                Argument::Host(h) => h.bytes().len() as u64,
                Argument::Array { .. } => 0,
            })
            .sum();
        let room = self
            .queued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |q| {
                q.checked_add(bytes).filter(|&n| n <= QUEUED_MAX)
            });
        if room.is_err() {
            return None;
        }
        let (session, entry) = (call.session, self.next.fetch_add(1, Ordering::Relaxed));
        self.tx
            .send(Entry::Made { entry, call, bytes })
            .ok()
            .map(|_| Logged {
                session,
                entry,
                log: self.clone(),
            })
    }

    /// Waits until what was queued so far is written.
    pub fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        if self.tx.send(Entry::Flush(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// Entry `entry` of `session`, read back from the journal: dropping it
    /// takes it out.
    pub fn adopt(&self, session: u64, entry: u64) -> Logged {
        Logged {
            session,
            entry,
            log: self.clone(),
        }
    }
}

/// The log's writer thread.
struct Writer {
    db: Weak<Database>,
    path: PathBuf,
    queued: Arc<AtomicU64>,
}

impl Writer {
    /// Writes what comes, a batch per commit, until every sender is gone.
    fn run(self, rx: mpsc::Receiver<Entry>) {
        while let Ok(first) = rx.recv() {
            let mut batch = vec![first];
            while batch.len() < BATCH {
                match rx.try_recv() {
                    Ok(e) => batch.push(e),
                    Err(_) => break,
                }
            }
            let bytes: u64 = batch
                .iter()
                .map(|e| match e {
                    Entry::Made { bytes, .. } => *bytes,
                    _ => 0,
                })
                .sum();
            let Some(db) = self.db.upgrade() else {
                return;
            };
            if let Err(e) = write(&db, &batch) {
                tracing::error!(
                    "{}: {} calls' lineage is not journaled (arrays they made are not computed again after a restart)",
                    JournalError {
                        path: self.path.clone(),
                        what: e.to_string()
                    },
                    batch.len()
                );
            }
            drop(db);
            self.queued.fetch_sub(bytes, Ordering::Relaxed);
            for e in batch {
                if let Entry::Flush(done) = e {
                    let _ = done.send(());
                }
            }
        }
    }
}

/// Writes `batch` to `db` in one durable commit.
fn write(db: &Database, batch: &[Entry]) -> Result<(), Failure> {
    let tx = db.begin_write()?;
    {
        let mut table = tx.open_table(CALLS)?;
        for e in batch {
            match e {
                Entry::Made { entry, call, .. } => {
                    table.insert((call.session, *entry), encode(call).as_slice())?;
                }
                Entry::Gone { session, entry } => {
                    table.remove((*session, *entry))?;
                }
                Entry::Flush(_) => {}
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// `call` as the journal keeps it.
fn encode(call: &Call) -> Vec<u8> {
    use proto::journal_argument::Origin;
    let arguments = call
        .arguments
        .iter()
        .map(|a| proto::JournalArgument {
            origin: Some(match a {
                Argument::Host(h) => Origin::Host(proto::JournalUpload {
                    r#type: Some(proto::ArrayType::of(h.dtype(), h.shape())),
                    bytes: h.bytes().to_vec(),
                }),
                Argument::Array { array, made_by } => Origin::Array(proto::JournalArray {
                    array: *array,
                    made_by: made_by.map(|(e, _)| e),
                    output: made_by.map_or(0, |(_, k)| k),
                }),
            }),
        })
        .collect();
    proto::JournalCall {
        executable: call.executable,
        arguments,
        outputs: call.outputs.clone(),
    }
    .encode_to_vec()
}
