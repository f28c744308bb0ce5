//! The controller's journal (`pw-server --state-dir DIR`): what a restarted
//! server needs to take its sessions back, in an embedded database
//! (`DIR/journal.redb`, [redb]).
//!
//! It holds each session (name, key, slice, the next handle it mints,
//! where its pause checkpoint is while it is paused), the line of clients
//! waiting for devices (in order, with their keys), each executable
//! built from a program (the program and how it was lowered) and the
//! global id of every device a worker registered, by the worker's address,
//! so that a worker that registers again after a restart gets its ids
//! back and the slices and plans stay valid. It changes when sessions
//! open, close, pause, resume or resize and when a program is compiled.
//! Arrays' bytes are not in it: the workers keep their shards while their
//! controller is away and say which they hold when they register again,
//! and the client lists the arrays it holds when it takes its session back
//! ([`crate::sessions::reattach`]). Their lineage is, in the log of calls
//! ([`calls`]), which a call only queues: no call waits for storage.
//!
//! Every commit is durable when it returns (written, then synced). A
//! journal that cannot be read (damaged, truncated, another format, held
//! by another server) is refused with its path: the server never starts
//! afresh over state it could not read.

pub mod calls;

use calls::{CallLog, CALLS};
use prost::Message;
use pw_wire::proto;
use redb::{Database, ReadableTable, TableDefinition};
use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Arc,
};

const SESSIONS: TableDefinition<u64, &[u8]> = TableDefinition::new("sessions");
/// (session, handle) -> the `CompileProgramRequest` it was built from.
const EXECUTABLES: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("executables");
/// A worker's address -> its worker id, then the global ids of its
/// devices in local order (little-endian i64s).
const DEVICES: TableDefinition<&str, &[u8]> = TableDefinition::new("devices");
/// The line of clients waiting for devices: id -> `JournalWaiter`.
const LINE: TableDefinition<u64, &[u8]> = TableDefinition::new("line");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// Why a database operation failed (redb's error types, boxed).
type Failure = Box<dyn std::error::Error + Send + Sync>;

/// The journal's layout; another is refused.
const FORMAT: u64 = 1;

/// The journal's file in the state directory.
pub const FILE: &str = "journal.redb";

/// What went wrong with the journal, with its path.
#[derive(Debug, thiserror::Error)]
#[error("the journal {path}: {what}")]
pub struct JournalError {
    pub path: PathBuf,
    pub what: String,
}

/// A session as the journal keeps it, with its executables.
pub struct SessionRecord {
    pub id: u64,
    pub session: proto::JournalSession,
    pub executables: Vec<(u64, proto::CompileProgramRequest)>,
    /// Its logged calls ([`calls`]), by entry, oldest first.
    pub calls: Vec<(u64, proto::JournalCall)>,
}

/// What a journal held when it was opened.
#[derive(Default)]
pub struct Restored {
    pub sessions: Vec<SessionRecord>,
    /// Worker address -> its worker id and its devices' global ids.
    pub devices: HashMap<String, (u32, Vec<i64>)>,
    /// The clients waiting for devices, first first.
    pub line: Vec<(u64, proto::JournalWaiter)>,
}

/// Opens the database at `path`; a damaged file that makes redb panic
/// (a truncated one does) is an `Err` with the panic's message, and
/// prints no backtrace.
fn open_quietly(path: &Path) -> Result<Result<Database, redb::DatabaseError>, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = std::panic::catch_unwind(|| Database::create(path));
    std::panic::set_hook(hook);
    opened.map_err(|panic| {
        panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "it is damaged".to_owned())
    })
}

/// See the module doc.
pub struct Journal {
    db: Arc<Database>,
    path: PathBuf,
    calls: CallLog,
}

/// Removes session `id`'s rows from `table` (keyed by session first).
fn remove_session(table: &mut redb::Table<(u64, u64), &[u8]>, id: u64) -> Result<(), Failure> {
    let keys: Vec<u64> = table
        .range((id, 0)..=(id, u64::MAX))?
        .map(|e| e.map(|(k, _)| k.value().1))
        .collect::<Result<_, _>>()?;
    for k in keys {
        table.remove((id, k))?;
    }
    Ok(())
}

impl Drop for Journal {
    /// Writes what the log of calls has queued before the database closes.
    fn drop(&mut self) {
        self.calls.flush();
    }
}

impl Journal {
    /// Opens (or creates) the journal in `dir`, and reads what it holds.
    pub fn open(dir: &Path) -> Result<(Journal, Restored), JournalError> {
        let path = dir.join(FILE);
        let fail = |what: String| JournalError {
            path: path.clone(),
            what,
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| fail(format!("cannot make its directory: {e}")))?;
        let fresh = !path.exists();
        let refuse = |why: String| {
            fail(format!(
                "cannot be opened ({why}); pw-server will not start afresh over a journal it cannot read: \
                 move it aside to start without its sessions"
            ))
        };
        let db = match open_quietly(&path) {
            Ok(Ok(db)) => db,
            Ok(Err(e)) => return Err(refuse(e.to_string())),
            Err(why) => return Err(refuse(format!("the database refused it: {why}"))),
        };
        let db = Arc::new(db);
        // Its log of calls starts once it is read (numbering on from it).
        let mut journal = Journal {
            calls: CallLog::idle(),
            db,
            path,
        };
        if fresh {
            journal.write(|tx| {
                tx.open_table(META)?.insert("format", FORMAT)?;
                tx.open_table(SESSIONS)?;
                tx.open_table(EXECUTABLES)?;
                tx.open_table(DEVICES)?;
                tx.open_table(LINE)?;
                tx.open_table(CALLS)?;
                Ok(())
            })?;
        }
        let restored = journal.read_all()?;
        let next = restored
            .sessions
            .iter()
            .flat_map(|s| s.calls.last())
            .map(|(e, _)| e + 1)
            .max()
            .unwrap_or(1);
        let db = Arc::downgrade(&journal.db);
        journal.calls = CallLog::start(db, journal.path.clone(), next).map_err(|e| {
            journal.error(format!("cannot start the writer of its log of calls: {e}"))
        })?;
        Ok((journal, restored))
    }

    /// The log of calls ([`calls`]).
    pub fn calls(&self) -> &CallLog {
        &self.calls
    }

    fn error(&self, what: impl std::fmt::Display) -> JournalError {
        JournalError {
            path: self.path.clone(),
            what: what.to_string(),
        }
    }

    fn read_all(&self) -> Result<Restored, JournalError> {
        let read = || -> Result<Restored, Box<dyn std::error::Error>> {
            let tx = self.db.begin_read()?;
            let format = tx.open_table(META)?.get("format")?.map(|v| v.value());
            if format != Some(FORMAT) {
                return Err(format!(
                    "it is of format {format:?}, this server reads format {FORMAT}"
                )
                .into());
            }
            let mut executables: HashMap<u64, Vec<(u64, proto::CompileProgramRequest)>> =
                HashMap::new();
            for entry in tx.open_table(EXECUTABLES)?.iter()? {
                let (k, v) = entry?;
                let (session, handle) = k.value();
                let request = proto::CompileProgramRequest::decode(v.value())
                    .map_err(|e| format!("executable {handle} of session {session}: {e}"))?;
                executables
                    .entry(session)
                    .or_default()
                    .push((handle, request));
            }
            let mut calls: HashMap<u64, Vec<(u64, proto::JournalCall)>> = HashMap::new();
            // A journal from before the log of calls has none.
            match tx.open_table(CALLS) {
                Err(redb::TableError::TableDoesNotExist(_)) => {}
                table => {
                    for entry in table?.iter()? {
                        let (k, v) = entry?;
                        let (session, e) = k.value();
                        let call = proto::JournalCall::decode(v.value())
                            .map_err(|err| format!("call {e} of session {session}: {err}"))?;
                        calls.entry(session).or_default().push((e, call));
                    }
                }
            }
            let mut sessions = Vec::new();
            for entry in tx.open_table(SESSIONS)?.iter()? {
                let (k, v) = entry?;
                let id = k.value();
                let session = proto::JournalSession::decode(v.value())
                    .map_err(|e| format!("session {id}: {e}"))?;
                sessions.push(SessionRecord {
                    id,
                    session,
                    executables: executables.remove(&id).unwrap_or_default(),
                    calls: calls.remove(&id).unwrap_or_default(),
                });
            }
            let mut devices = HashMap::new();
            for entry in tx.open_table(DEVICES)?.iter()? {
                let (k, v) = entry?;
                let bytes = v.value();
                let mut ids = bytes
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()));
                let worker = ids.next().and_then(|w| u32::try_from(w).ok());
                let (Some(worker), 0) = (worker, bytes.len() % 8) else {
                    let at = k.value();
                    return Err(format!(
                        "the devices of the worker at {at}: {} bytes",
                        bytes.len()
                    )
                    .into());
                };
                devices.insert(k.value().to_owned(), (worker, ids.collect()));
            }
            let mut line = Vec::new();
            for entry in tx.open_table(LINE)?.iter()? {
                let (k, v) = entry?;
                let id = k.value();
                let waiter = proto::JournalWaiter::decode(v.value())
                    .map_err(|e| format!("the client {id} in line: {e}"))?;
                // A session of the journal left the line already.
                if !sessions.iter().any(|s: &SessionRecord| s.id == id) {
                    line.push((id, waiter));
                }
            }
            line.sort_by_key(|(_, w)| w.since_unix_ns);
            Ok(Restored {
                sessions,
                devices,
                line,
            })
        };
        read().map_err(|e| {
            self.error(format!(
                "cannot be read ({e}); pw-server will not start afresh over a journal it cannot read: \
                 move it aside to start without its sessions"
            ))
        })
    }

    /// Runs `f` in one write transaction and commits it durably.
    fn write(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<(), Failure>,
    ) -> Result<(), JournalError> {
        let tx = self.db.begin_write().map_err(|e| self.error(e))?;
        f(&tx).map_err(|e| self.error(e))?;
        tx.commit().map_err(|e| self.error(e))
    }

    /// Session `id` is as `session` says (opened, resumed, resized,
    /// paused); it is no longer in line.
    pub fn session(&self, id: u64, session: &proto::JournalSession) -> Result<(), JournalError> {
        let bytes = session.encode_to_vec();
        self.write(|tx| {
            tx.open_table(SESSIONS)?.insert(id, bytes.as_slice())?;
            tx.open_table(LINE)?.remove(id)?;
            Ok(())
        })
    }

    /// Client `id` waits in line for devices.
    pub fn waiting(&self, id: u64, waiter: &proto::JournalWaiter) -> Result<(), JournalError> {
        let bytes = waiter.encode_to_vec();
        self.write(|tx| {
            tx.open_table(LINE)?.insert(id, bytes.as_slice())?;
            Ok(())
        })
    }

    /// Client `id` left the line without a session.
    pub fn left_line(&self, id: u64) -> Result<(), JournalError> {
        self.write(|tx| {
            tx.open_table(LINE)?.remove(id)?;
            Ok(())
        })
    }

    /// Session `id` closed: it, its executables and its calls go.
    pub fn session_closed(&self, id: u64) -> Result<(), JournalError> {
        self.write(|tx| {
            tx.open_table(SESSIONS)?.remove(id)?;
            tx.open_table(LINE)?.remove(id)?;
            remove_session(&mut tx.open_table(EXECUTABLES)?, id)?;
            remove_session(&mut tx.open_table(CALLS)?, id)
        })
    }

    /// Executable `handle` of session `session` was built from `request`.
    pub fn executable(
        &self,
        session: u64,
        handle: u64,
        request: &proto::CompileProgramRequest,
    ) -> Result<(), JournalError> {
        let bytes = request.encode_to_vec();
        self.write(|tx| {
            tx.open_table(EXECUTABLES)?
                .insert((session, handle), bytes.as_slice())?;
            Ok(())
        })
    }

    /// Executable `handle` of session `session` was dropped.
    pub fn executable_dropped(&self, session: u64, handle: u64) -> Result<(), JournalError> {
        self.write(|tx| {
            tx.open_table(EXECUTABLES)?.remove((session, handle))?;
            Ok(())
        })
    }

    /// The worker at `address` registered as `worker`, its devices as
    /// `ids` (in local order).
    pub fn devices(&self, address: &str, worker: u32, ids: &[i64]) -> Result<(), JournalError> {
        let bytes: Vec<u8> = std::iter::once(i64::from(worker))
            .chain(ids.iter().copied())
            .flat_map(|i| i.to_le_bytes())
            .collect();
        self.write(|tx| {
            tx.open_table(DEVICES)?.insert(address, bytes.as_slice())?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary one.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "pw-journal-{name}-{}-{}",
            std::process::id(),
            pw_wire::auth::random_id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn what_is_written_is_read_back_after_a_reopen() {
        let dir = scratch("reopen");
        {
            let (j, restored) = Journal::open(&dir).unwrap();
            assert!(restored.sessions.is_empty() && restored.devices.is_empty());
            let session = proto::JournalSession {
                name: "trainer".into(),
                key: "k".into(),
                size: 2,
                devices: vec![4, 5],
                next_id: 9,
                ..Default::default()
            };
            j.session(7, &session).unwrap();
            j.session(8, &session).unwrap();
            let program = proto::CompileProgramRequest {
                session: 7,
                name: "step".into(),
                donate: vec![0],
                ..Default::default()
            };
            j.executable(7, 3, &program).unwrap();
            j.executable(8, 1, &program).unwrap();
            j.session_closed(8).unwrap();
            j.devices("127.0.0.1:4000", 2, &[4, 5]).unwrap();
            let waiter = |name: &str, since| proto::JournalWaiter {
                name: name.into(),
                since_unix_ns: since,
                ..Default::default()
            };
            // In line: 11 then 10 (by when they came); 12 left; 7 was
            // granted (its session is journaled).
            j.waiting(10, &waiter("second", 2)).unwrap();
            j.waiting(11, &waiter("first", 1)).unwrap();
            j.waiting(12, &waiter("gone", 3)).unwrap();
            j.left_line(12).unwrap();
            j.waiting(7, &waiter("granted", 0)).unwrap();
            j.session(7, &session).unwrap();
        }
        let (_, restored) = Journal::open(&dir).unwrap();
        assert_eq!(restored.sessions.len(), 1, "the closed session is gone");
        let s = &restored.sessions[0];
        assert_eq!(
            (s.id, s.session.devices.as_slice(), s.session.next_id),
            (7, &[4, 5][..], 9)
        );
        assert_eq!(s.executables.len(), 1);
        assert_eq!(
            (s.executables[0].0, s.executables[0].1.name.as_str()),
            (3, "step")
        );
        assert_eq!(restored.devices["127.0.0.1:4000"], (2, vec![4, 5]));
        let line: Vec<(u64, &str)> = restored
            .line
            .iter()
            .map(|(id, w)| (*id, w.name.as_str()))
            .collect();
        assert_eq!(line, [(11, "first"), (10, "second")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_hears_how_many_of_its_calls_are_logged_once_they_are() {
        use redb::ReadableTableMetadata;
        use std::sync::atomic::{AtomicU64, Ordering};
        let dir = scratch("marks");
        let (j, _) = Journal::open(&dir).unwrap();
        let call = calls::Call {
            session: 7,
            executable: 3,
            arguments: Vec::new(),
            outputs: vec![10],
        };
        let logged = Arc::new(AtomicU64::new(0));
        let entry = j.calls().made(call);
        j.calls().mark(&logged, 1);
        // A call with nothing to log (no lineage) counts too.
        j.calls().mark(&logged, 2);
        j.calls().flush();
        assert_eq!(logged.load(Ordering::Relaxed), 2);
        assert_eq!(j.read_all().unwrap().sessions.len(), 0, "no session row");
        let tx = j.db.begin_read().unwrap();
        assert_eq!(tx.open_table(calls::CALLS).unwrap().len().unwrap(), 1);
        drop((tx, entry));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_only_server_fault_is_a_lagging_journal() {
        use std::time::Duration;
        assert_eq!(calls::lag_fault(None).unwrap(), Duration::ZERO);
        assert_eq!(
            calls::lag_fault(Some("journal-lag=250")).unwrap(),
            Duration::from_millis(250)
        );
        for bad in ["journal-lag=", "journal-lag=x", "exit-at-step=1"] {
            let e = calls::lag_fault(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("PW_SERVER_FAULTS") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn a_call_stays_in_the_log_while_its_lineage_lives() {
        use calls::{Argument, Call};
        use redb::ReadableTableMetadata;
        let dir = scratch("calls");
        let (j, _) = Journal::open(&dir).unwrap();
        j.session(7, &proto::JournalSession::default()).unwrap();
        let dtype = pw_core::DType::from_name("float32").expect("float32");
        let host = pw_exec::HostArray::new(dtype, &[2], vec![1; 8]).unwrap();
        let call = |arguments, outputs| Call {
            session: 7,
            executable: 3,
            arguments,
            outputs,
        };
        let first = j
            .calls()
            .made(call(vec![Argument::Host(Arc::new(host))], vec![10]))
            .unwrap();
        let from_first = Argument::Array {
            array: 10,
            made_by: Some((first.entry, 0)),
        };
        let second = j.calls().made(call(vec![from_first], vec![11])).unwrap();
        let third = j.calls().made(call(Vec::new(), vec![12])).unwrap();
        drop(third);
        j.calls().flush();
        let restored = j.read_all().unwrap();
        let logged = &restored.sessions[0].calls;
        let entries: Vec<u64> = logged.iter().map(|(e, _)| *e).collect();
        assert_eq!(entries, [first.entry, second.entry], "the third dropped");
        let upload = match &logged[0].1.arguments[0].origin {
            Some(proto::journal_argument::Origin::Host(h)) => h,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            (
                upload.bytes.as_slice(),
                upload.r#type.as_ref().unwrap().dims.as_slice()
            ),
            (&[1u8; 8][..], &[2u64][..])
        );
        match &logged[1].1.arguments[0].origin {
            Some(proto::journal_argument::Origin::Array(a)) => {
                assert_eq!((a.array, a.made_by, a.output), (10, Some(first.entry), 0))
            }
            other => panic!("{other:?}"),
        }
        // A closed session's calls go with it.
        j.session_closed(7).unwrap();
        drop((first, second));
        j.calls().flush();
        assert!(j.read_all().unwrap().sessions.is_empty());
        let tx = j.db.begin_read().unwrap();
        assert_eq!(tx.open_table(CALLS).unwrap().len().unwrap(), 0);
        drop(tx);
        drop(j);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_journal_is_refused_naming_it() {
        for damage in ["truncated", "garbage", "empty"] {
            let dir = scratch(damage);
            drop(Journal::open(&dir).unwrap());
            let path = dir.join(FILE);
            let bytes = std::fs::read(&path).unwrap();
            let damaged = match damage {
                "truncated" => bytes[..bytes.len() / 3].to_vec(),
                "garbage" => (0..bytes.len()).map(|i| (i * 7 + 3) as u8).collect(),
                _ => Vec::new(),
            };
            std::fs::write(&path, damaged).unwrap();
            let Err(e) = Journal::open(&dir) else {
                panic!("a {damage} journal was opened");
            };
            let message = e.to_string();
            assert!(
                message.contains(&path.display().to_string()) && message.contains("move it aside"),
                "{damage}: {message}"
            );
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
