//! Taking sessions back after the server restarted (`--state-dir`).
//!
//! * **Restore**: at start, every session of the journal
//!   ([`crate::journal`]) is made again with its key, its slice (the same
//!   global devices: workers get their ids back when they register again)
//!   and the programs of its executables, and waits for its client, for
//!   at most [`crate::Config::reattach_window`]; then it is closed (and
//!   its workers drop what they kept). Nobody else is given its devices.
//! * **Workers** keep the shards of sessions' arrays while they are
//!   without a controller and list them when they register again
//!   ([`proto::Register::held`]); shards of sessions the journal does not
//!   know are released at once.
//! * **Reattach**: the client presents the session's id and key and the
//!   arrays it holds, each as an input or output of one of its
//!   executables. Once every device of the slice is registered again (or
//!   [`crate::Config::reattach_workers`] has passed: the devices still
//!   missing leave the slice, which is topped up from free devices as
//!   after a lost worker), each executable is lowered again under its old
//!   handle (its computations come from the caches): onto the same
//!   devices, or onto the slice as it is now when some of those are gone.
//!   Each array whose every shard a worker kept (as its executable lays
//!   it out) is an array of the session again, ready. The others get
//!   their lineage back from the journal's log of calls
//!   ([`crate::journal::calls`]) and are computed again where they are
//!   used; without one they are lost (a data-loss error where they are
//!   used; the reply lists them). Kept shards the client no longer holds,
//!   and those of arrays computed again, are released.
//! * **Calls in flight** when the server went away: the client sends its
//!   recent calls again ([`proto::SessionCall::again`]); a call whose
//!   outputs are already arrays of the session ran before and is skipped,
//!   any other runs now.
//!
//! A paused session comes back paused (its arrays are in its pause
//! checkpoint, ready to resume); the IFRT proxy's sessions are not
//! journaled (their executables are plans on fixed devices, and jaxlib's
//! client does not reconnect).

use super::{
    arrays::{ArrayState, SessionArray},
    executables::{Build, Executable},
    lineage::Lineage,
    pause::Paused,
    Session, Sessions, Waiter,
};
use crate::{
    error::{Error, Kind, Result, DATA_LOSS},
    journal::SessionRecord,
    resource_manager::{Lease, Want},
    transfer,
};
use pw_wire::proto;
use std::{
    collections::{BTreeSet, HashMap, HashSet},
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};
use tokio::sync::watch;

/// A session from the journal that its client has not taken back yet.
#[derive(Clone)]
pub(crate) struct Restored {
    /// Its executables' programs, by handle.
    executables: Vec<(u64, proto::CompileProgramRequest)>,
    /// Its pause checkpoint, when it was paused (and the arrays in it).
    paused: Option<(PathBuf, usize, BTreeSet<u64>)>,
    /// Its logged calls (the lineage of its arrays), oldest first.
    calls: Arc<Vec<(u64, proto::JournalCall)>>,
    /// Whether its client is taking it back now (workers that register
    /// meanwhile still keep its arrays for it).
    taking: bool,
}

impl Restored {
    /// A session granted its devices while its client, in line when the
    /// server restarted, was not back yet: nothing to rebuild.
    pub(super) fn granted() -> Restored {
        Restored {
            executables: Vec::new(),
            paused: None,
            calls: Arc::default(),
            taking: false,
        }
    }
}

impl Session {
    /// What the journal keeps of it.
    pub(crate) fn record(&self) -> proto::JournalSession {
        let paused = self.paused.as_ref().and_then(Paused::on_storage);
        proto::JournalSession {
            name: self.name.clone(),
            key: self.key.clone(),
            // A paused one: how many it had (it holds none).
            size: paused.as_ref().map_or(self.size, |(_, n, _)| *n) as u32,
            devices: if paused.is_some() {
                Vec::new()
            } else {
                self.devices.clone()
            },
            next_id: self.next_id,
            paused: paused
                .as_ref()
                .map(|(dir, _, _)| dir.display().to_string())
                .unwrap_or_default(),
            saved: paused.map(|(_, _, saved)| saved).unwrap_or_default(),
        }
    }
}

impl Sessions<'_> {
    /// Journals session `id` as it is now (see [`crate::journal`]).
    pub(crate) fn journal_session(&self, id: u64) -> Result<()> {
        let Some(record) = self.lock().live.get(&id).map(Session::record) else {
            return Ok(());
        };
        self.c.journal(|j| j.session(id, &record))
    }

    /// Makes the journal's sessions again, each waiting for its client
    /// (see the module doc).
    pub(crate) fn restore_journaled(
        &self,
        records: Vec<SessionRecord>,
        line: Vec<(u64, proto::JournalWaiter)>,
    ) {
        let window = self.c.inner.config.reattach_window;
        for r in records {
            let s = r.session;
            let next_id = r
                .executables
                .iter()
                .map(|(h, _)| h + 1)
                .chain([s.next_id, 1])
                .max()
                .unwrap_or(1);
            let paused = (!s.paused.is_empty()).then(|| {
                (
                    PathBuf::from(&s.paused),
                    s.size as usize,
                    s.saved.iter().copied().collect(),
                )
            });
            tracing::info!(
                "session {} ({}) restored from the journal on devices {:?}{}: waiting {window:?} for its client",
                r.id,
                s.name,
                s.devices,
                if paused.is_some() { " (paused)" } else { "" }
            );
            let now = Instant::now();
            let mut session = Session::new(s.name, s.devices.clone(), Lease::new(window, now));
            session.key = s.key;
            session.size = if paused.is_some() { 0 } else { s.size as usize };
            session.next_id = next_id;
            session.restored = Some(Restored {
                executables: r.executables,
                paused,
                calls: Arc::new(r.calls),
                taking: false,
            });
            let mut state = self.lock();
            state.slices.hold(r.id, &s.devices);
            state.live.insert(r.id, session);
        }
        for (id, w) in line {
            tracing::info!(
                "client {id} ({}) restored to its place in line from the journal: waiting {window:?} for it",
                w.name
            );
            let want = match w.devices {
                0 => Want::All,
                n => Want::Count(n as usize),
            };
            let mut state = self.lock();
            state.slices.enqueue(id, want);
            state.waiting.insert(
                id,
                Waiter {
                    name: w.name,
                    since: Instant::now(),
                    tx: tokio::sync::mpsc::unbounded_channel().0,
                    key: w.key,
                    detached: true,
                },
            );
        }
        let c = self.c.clone();
        tokio::spawn(async move {
            tokio::time::sleep(window).await;
            let sessions = c.sessions();
            let gone: Vec<u64> = sessions
                .lock()
                .waiting
                .iter()
                .filter(|(_, w)| w.detached)
                .map(|(id, _)| *id)
                .collect();
            for id in gone {
                tracing::info!("client {id} did not take its place in line back within {window:?}");
                sessions.leave_line(id);
            }
            let stale: Vec<u64> = sessions
                .lock()
                .live
                .iter()
                .filter(|(_, s)| s.restored.as_ref().is_some_and(|r| !r.taking))
                .map(|(id, _)| *id)
                .collect();
            for id in stale {
                let why = format!(
                    "its client did not take it back within {window:?} of the server's restart"
                );
                sessions.close(id, &why).await;
            }
        });
    }

    /// Shards a registering worker kept from an earlier controller: those
    /// of sessions waiting to be taken back, and the other owners (to be
    /// released once the worker is told it is registered: see the module
    /// doc).
    pub(crate) fn kept_by(
        &self,
        held: &[proto::HeldShard],
    ) -> (HashSet<(u64, u64, u32)>, Vec<u64>) {
        let waiting: HashSet<u64> = self
            .lock()
            .live
            .iter()
            .filter(|(_, s)| s.restored.is_some())
            .map(|(id, _)| *id)
            .collect();
        let mut kept = HashSet::new();
        let mut strangers = BTreeSet::new();
        for h in held {
            if waiting.contains(&h.owner) {
                kept.insert((h.owner, h.array, h.position));
            } else {
                strangers.insert(h.owner);
            }
        }
        (kept, strangers.into_iter().collect())
    }

    /// Releases on `worker` what it kept of owners this controller does
    /// not know.
    pub(crate) fn release_strangers(&self, worker: u32, strangers: &[u64]) {
        for &owner in strangers {
            let why = "the controller does not know it (it restarted without it)";
            transfer::release(self.c, owner, &[worker], why);
        }
    }

    /// Takes session `open.session` back for the client presenting its key
    /// (see the module doc); what the client is told.
    pub(crate) async fn reattach(
        &self,
        open: &proto::SessionOpen,
    ) -> Result<proto::SessionGranted> {
        let id = open.session;
        let not = |why: &str| Error::NotReattachable {
            session: id,
            why: why.to_owned(),
        };
        let (restored, devices) = {
            let mut s = self.lock();
            let session = s.owned(id, Some(&open.key))?;
            let restored = match session.restored.as_mut() {
                Some(r) if !r.taking => {
                    r.taking = true;
                    r.clone()
                }
                _ => {
                    return Err(not(
                        "it is not waiting for its client (it was taken back already)",
                    ))
                }
            };
            (restored, session.devices.clone())
        };
        let taken = self.take_back(id, restored, devices, &open.arrays).await;
        let (lost, paused) = match taken {
            Ok(t) => t,
            Err(e) => {
                let why = format!("taking it back failed: {e}");
                self.close(id, &why).await;
                return Err(e);
            }
        };
        // A session granted while its client was away is journaled now.
        self.journal_session(id)?;
        let lease = self.client_lease();
        let mut s = self.lock();
        let session = s.get(id)?;
        session.lease = Lease::new(lease, Instant::now());
        let again = session.arrays.values().filter(|a| a.lost()).count();
        tracing::info!(
            "session {id} ({}) taken back by its client: {} executables, {} arrays kept, {again} to compute again from their journaled lineage, {} not kept (lost, or taken by a call that ran){}",
            session.name,
            session.executables.len(),
            session.arrays.len() - again,
            lost.len(),
            if paused { " (paused)" } else { "" }
        );
        Ok(proto::SessionGranted {
            session: id,
            devices: session.devices.clone(),
            heartbeat_ms: (lease.as_millis() / 4).max(1) as u32,
            lease_ms: lease.as_millis() as u32,
            key: session.key.clone(),
            lost,
            paused,
            journaled: true,
        })
    }

    /// Lowers session `id`'s executables again and takes the client's
    /// `arrays` back from what the workers kept; the arrays lost, and
    /// whether it is paused.
    async fn take_back(
        &self,
        id: u64,
        restored: Restored,
        devices: Vec<i64>,
        arrays: &[proto::ClientArray],
    ) -> Result<(Vec<u64>, bool)> {
        // The client's list is checked against the session's limit before
        // anything is lowered or looked up.
        let most = self.c.inner.config.limits.session_arrays;
        if arrays.len() > most {
            return Err(Error::OverLimit {
                what: format!("session {id}'s arrays, as its client lists them to take it back"),
                asked: arrays.len() as u64,
                limit: most as u64,
                flag: "--session-arrays",
            });
        }
        // A paused session's executables are lowered onto its old devices
        // only to know its arrays' layouts; a resume lowers them again.
        let slice = match &restored.paused {
            Some(_) => self.any_devices(id, &restored).await?,
            None => {
                self.devices_back(id, &devices).await?;
                devices
            }
        };
        let registered = self.c.inner.workers.addresses();
        let mut executables = HashMap::new();
        // Those lowered onto other devices than before (some of theirs are
        // gone): the shards kept are not laid out as they say.
        let mut moved = HashSet::new();
        for (handle, request) in restored.executables {
            let mut on = slice.clone();
            if request.devices > 0 {
                on.truncate(request.devices as usize);
            }
            if !on.iter().all(|d| registered.contains_key(d)) {
                on = self.slice_of(id, on.len(), &request.name).await?;
                moved.insert(handle);
            }
            let build = Build::Program {
                source: request.program,
                schedule: (!request.schedule.is_empty()).then_some(request.schedule),
            };
            let donate = request.donate.iter().map(|&d| d as usize).collect();
            let (exe, _) = self
                .build(id, request.name, build, on, donate, &|_| {})
                .await?;
            executables.insert(handle, Arc::new(exe));
        }
        let kept = self.c.inner.workers.take_kept(id);
        let mut lineage = match self.c.call_log() {
            Some(log) => {
                let budget = (
                    &self.lock().kept.clone(),
                    self.c.inner.config.lineage_budget,
                );
                Lineage::read_back(id, &restored.calls, log, budget)
            }
            None => HashMap::new(),
        };
        let mut made = HashMap::new();
        let mut lost = Vec::new();
        for a in arrays {
            let value = executables.get(&a.executable).and_then(|exe| {
                let values = if a.input {
                    &exe.prepared.plan.inputs
                } else {
                    &exe.prepared.plan.outputs
                };
                values.get(a.index as usize).map(|&v| (exe.clone(), v))
            });
            let Some((exe, value)) = value else {
                lost.push(a.array);
                continue;
            };
            let on_storage = restored
                .paused
                .as_ref()
                .is_some_and(|(_, _, saved)| saved.contains(&a.array));
            let info = &exe.prepared.plan.values[value];
            let whole = !moved.contains(&a.executable)
                && (0..info.devices.len()).all(|p| {
                    exe.prepared
                        .addr(info.devices[p])
                        .is_ok_and(|at| kept.contains(&(at.worker, a.array, p as u32)))
                });
            let made_by = lineage.remove(&a.array);
            let state = if on_storage || whole {
                ArrayState::Ready
            } else if made_by.is_some() {
                // Computed again from its lineage where it is used.
                ArrayState::Failed(format!(
                    "{DATA_LOSS}: array {} was not kept whole when the server restarted",
                    a.array
                ))
            } else {
                // Not an array of the session: a call sent again may make
                // it; else using it says it was lost.
                lost.push(a.array);
                continue;
            };
            made.insert(
                a.array,
                SessionArray {
                    exe,
                    value,
                    state: Arc::new(watch::Sender::new(state)),
                    lineage: made_by,
                },
            );
        }
        // The calls no array needs leave the journal's log.
        drop(lineage);
        // What the workers kept that the client no longer holds goes, and
        // what is left of arrays to compute again.
        let mut unclaimed: HashMap<u32, Vec<u64>> = HashMap::new();
        for &(worker, array, _) in &kept {
            if made.get(&array).is_none_or(SessionArray::lost) {
                unclaimed.entry(worker).or_default().push(array);
            }
        }
        for (worker, mut gone) in unclaimed {
            gone.sort_unstable();
            gone.dedup();
            let why = "its client no longer holds it, or it is computed again (taken back after a restart)";
            transfer::release_arrays(self.c, id, &[worker], why, &gone, &[]);
        }
        let paused = restored.paused.is_some();
        let mut s = self.lock();
        let session = s.get(id)?;
        session.restored = None;
        session.executables = executables;
        session.arrays = made;
        for &a in &lost {
            let why = format!(
                "array {a} is lost ({DATA_LOSS}: no worker kept all of it when the server restarted, and its lineage was not journaled)"
            );
            session.refused.insert(a, (Kind::Array, why));
            session.refused_order.push_back(a);
        }
        if let Some((dir, size, saved)) = restored.paused {
            session.paused = Some(Paused::restored(dir, size, saved));
        }
        Ok((lost, paused))
    }

    /// Waits, for at most [`crate::Config::reattach_workers`], until every
    /// device of session `id`'s journaled slice `devices` is registered
    /// again. Those that are not leave its slice, which is topped up from
    /// free devices as after a lost worker ([`Sessions::lost_worker`]).
    async fn devices_back(&self, id: u64, devices: &[i64]) -> Result<()> {
        let wait = self.c.inner.config.reattach_workers;
        let deadline = Instant::now() + wait;
        let missing = loop {
            let registered = self.c.inner.workers.addresses();
            let missing: Vec<i64> = devices
                .iter()
                .copied()
                .filter(|d| !registered.contains_key(d))
                .collect();
            if missing.is_empty() || Instant::now() >= deadline {
                break missing;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        if missing.is_empty() {
            return Ok(());
        }
        tracing::warn!(
            "session {id}: devices {missing:?} of its slice did not register again within {wait:?}; \
             it goes on without them, topped up from free devices (its arrays with shards there are \
             computed again from their lineage)"
        );
        {
            let mut s = self.lock();
            s.slices.forget_devices(&missing);
            s.get(id)?.devices.retain(|d| !missing.contains(d));
        }
        self.workers_changed();
        Ok(())
    }

    /// As many registered devices as a paused session had (to lay its
    /// executables out until it resumes).
    async fn any_devices(&self, id: u64, restored: &Restored) -> Result<Vec<i64>> {
        let size = restored.paused.as_ref().map_or(0, |(_, size, _)| *size);
        let deadline = Instant::now() + self.c.inner.config.reattach_workers;
        loop {
            let registered: Vec<i64> = self.c.inner.workers.addresses().into_keys().collect();
            if registered.len() >= size {
                return Ok(registered.into_iter().take(size).collect());
            }
            if Instant::now() >= deadline {
                return Err(Error::NotReattachable {
                    session: id,
                    why: format!(
                        "it was paused on {size} devices, and {} are registered",
                        registered.len()
                    ),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Whether `executable` is one the journal can rebuild (built from a
/// program).
pub(crate) fn journaled(executable: &Executable) -> bool {
    matches!(executable.build, Build::Program { .. })
}
