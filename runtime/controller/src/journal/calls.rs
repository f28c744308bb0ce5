//! The journal's log of calls: every call that gives its outputs a lineage
//! ([`crate::sessions::lineage`]) is logged (its executable, its outputs,
//! each argument's origin, the bytes of its kept uploads) and stays in the
//! log as long as its lineage node lives, so that a restarted server can
//! compute again the arrays lost while it was away.
//!
//! A call never waits for storage: it queues its entry, and a thread of
//! the log's own writes the queue in batches, one durable commit each, a
//! few milliseconds behind the calls. A session's link tells its client
//! how many of its calls the log holds ([`CallLog::mark`],
//! `SessionReply.calls_logged`): the client keeps the later ones, to send
//! again if the server dies before it wrote them. When more than
//! [`QUEUED_MAX`] bytes of uploads wait to be written, a call is not
//! logged: its outputs' lineage then ends at a restart.

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
    time::Duration,
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
    /// A link's first `calls` calls are written once what was queued
    /// before it is: `logged` becomes at least `calls` then.
    Mark {
        logged: Arc<AtomicU64>,
        calls: u64,
    },
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
        let lag = lag_fault(std::env::var(FAULTS_ENV).ok().as_deref())?;
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
            lag,
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

    /// Raises `logged` to `calls` once every call queued so far is written
    /// (a link's count of calls whose lineage is in the log, or was never
    /// to be: see the module doc).
    pub fn mark(&self, logged: &Arc<AtomicU64>, calls: u64) {
        let _ = self.tx.send(Entry::Mark {
            logged: logged.clone(),
            calls,
        });
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

/// Fault injection for tests: `PW_SERVER_FAULTS=journal-lag=MS` makes the
/// writer wait MS milliseconds before each commit (calls stay out of the
/// log that long; the double-fault test). Anything else there is an error
/// at start-up.
pub const FAULTS_ENV: &str = "PW_SERVER_FAULTS";

pub(super) fn lag_fault(faults: Option<&str>) -> std::io::Result<Duration> {
    let Some(faults) = faults.filter(|f| !f.is_empty()) else {
        return Ok(Duration::ZERO);
    };
    faults
        .strip_prefix("journal-lag=")
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis)
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "{FAULTS_ENV}={faults}: the only fault is journal-lag=MS"
            ))
        })
}

/// The log's writer thread.
struct Writer {
    db: Weak<Database>,
    path: PathBuf,
    queued: Arc<AtomicU64>,
    /// Before each commit ([`FAULTS_ENV`]).
    lag: Duration,
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
            if !self.lag.is_zero() {
                std::thread::sleep(self.lag);
            }
            // A batch of marks and flushes only has nothing to write.
            let writes = batch
                .iter()
                .any(|e| matches!(e, Entry::Made { .. } | Entry::Gone { .. }));
            if let Err(e) = writes.then(|| write(&db, &batch)).transpose() {
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
                match e {
                    Entry::Flush(done) => {
                        let _ = done.send(());
                    }
                    Entry::Mark { logged, calls } => {
                        logged.fetch_max(calls, Ordering::Relaxed);
                    }
                    Entry::Made { .. } | Entry::Gone { .. } => {}
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
                Entry::Flush(_) | Entry::Mark { .. } => {}
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
