//! Resizing a session device to device: its arrays are laid out anew on
//! the new slice by relayout plans, without storage.
//!
//! A session shrinks onto the first devices of its slice, or grows by
//! devices free now; then, with its requests refused meanwhile
//! ([`super::State::active`]) and its calls finished, its executables are
//! lowered onto the new slice ([`Sessions::rebuild`]) and each ready array
//! is moved from its old layout to the same input or output of its rebuilt
//! executable: a relayout plan of the one relayout planner writes it under
//! a temporary id, then every worker renames it to its own (`RenameArray`,
//! dropping the old shards). Devices no longer in the slice go to the
//! line. When the slice cannot grow at once (the devices are held), the
//! resize is a pause and a resume ([`super::pause`]), through storage.

use super::{
    arrays::ArrayState,
    call::{link, Launch},
    executables::{Build, Executable},
    pause::{movable, same_value, Paused, Rebuilt},
    Sessions,
};
use crate::{
    error::{Error, Result},
    transfer,
};
use pw_core::plans;
use pw_wire::proto;
use std::{
    collections::{BTreeMap, BTreeSet},
    path::PathBuf,
    sync::Arc,
    time::Instant,
};
use tokio::sync::watch;

/// How a resize goes, once begun.
pub enum Begun {
    /// Device to device, from the slice (old) to the new one.
    Move(Vec<i64>, Vec<i64>),
    /// Through storage: a pause into this directory, then a resume.
    Pause(PathBuf),
}

impl Sessions<'_> {
    /// Begins resizing session `id` onto `n` devices: its later requests
    /// are refused from now on (see the module doc).
    pub fn begin_resize(&self, id: u64, n: usize) -> Result<Begun> {
        match self.plan_move(id, n)? {
            Some((old, new)) => Ok(Begun::Move(old, new)),
            None => Ok(Begun::Pause(self.begin_pause(id)?)),
        }
    }

    /// Resizes session `id` as [`Sessions::begin_resize`] began it; where
    /// things are now.
    pub async fn resize(
        &self,
        id: u64,
        r: &proto::SessionResize,
        begun: Begun,
    ) -> Result<proto::SessionResumed> {
        let (old, new) = match begun {
            Begun::Move(old, new) => (old, new),
            Begun::Pause(dir) => {
                self.pause(id, dir).await?;
                let resume = proto::SessionResume {
                    id: r.id,
                    devices: r.devices,
                    timeout_ms: r.timeout_ms,
                };
                return self.resume(id, &resume).await;
            }
        };
        let moved = self.move_to(id, &old, &new).await;
        let registered = self.registered();
        let mut s = self.lock();
        let Ok(session) = s.get(id) else {
            return moved.and(Err(Error::NoSession { session: id }));
        };
        // Whatever happened, the session is on the new slice (an array
        // whose move failed raises where it is used).
        session.paused = None;
        session.devices = new.clone();
        session.size = new.len();
        session.relayouts.clear();
        let record = session.record();
        let dropped: Vec<i64> = old.iter().filter(|d| !new.contains(d)).copied().collect();
        let granted = s.slices.give_back(id, &dropped, &registered);
        s.grant(granted, self.client_lease());
        drop(s);
        self.c.journal(|j| j.session(id, &record))?;
        let gone: Vec<u32> = registered
            .iter()
            .filter(|(_, ds)| ds.iter().any(|d| dropped.contains(d)))
            .filter(|(_, ds)| !ds.iter().any(|d| new.contains(d)))
            .map(|(w, _)| *w)
            .collect();
        transfer::drop_held(self.c, id, &gone, &format!("session {id} shrank"));
        moved?;
        tracing::info!("session {id} resized from {old:?} to {new:?}");
        self.placed(id)
    }

    /// Plans the move of session `id` onto `n` devices: its slice now and
    /// the new one (taken already when it grows), its requests refused
    /// from now on; None when it cannot grow at once.
    fn plan_move(&self, id: u64, n: usize) -> Result<Option<(Vec<i64>, Vec<i64>)>> {
        let registered = self.registered();
        let mut s = self.lock();
        let state = &mut *s;
        let session = state.active(id, "a resize")?;
        movable(id, session)?;
        let total: usize = registered.values().map(Vec::len).sum();
        if n == 0 || n > total {
            // Refused before anything moves: a resize that could never be
            // granted must not pause the session first.
            return Err(Error::BadResize {
                session: id,
                why: format!(
                    "{n} devices asked for; a session needs at least one, and the registered \
                     workers offer {total}"
                ),
            });
        }
        let old = session.devices.clone();
        let new = if n <= old.len() {
            old[..n].to_vec()
        } else {
            match state.slices.top_up(id, n - old.len(), &registered) {
                Some(more) => old.iter().copied().chain(more).collect(),
                None => return Ok(None),
            }
        };
        let session = state.get(id)?;
        session.paused = Some(Paused::resizing(session.size));
        // Held from now: a worker lost meanwhile leaves both slices.
        session.devices = old
            .iter()
            .chain(&new)
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        Ok(Some((old, new)))
    }

    /// Lowers session `id`'s executables onto `new` and moves its arrays
    /// there from `old` (see the module doc).
    async fn move_to(&self, id: u64, old: &[i64], new: &[i64]) -> Result<()> {
        let deadline = Instant::now() + self.c.inner.config.run_timeout;
        self.calls_below(id, 1, Some(deadline.into())).await;
        let moved = self.rebuild(id, new).await?;
        let both: Vec<i64> = old
            .iter()
            .chain(new)
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let arrays: Vec<u64> = self.lock().get(id)?.arrays.keys().copied().collect();
        let mut first = None;
        for a in arrays {
            if let Err(e) = self.move_array(id, a, &moved, &both, deadline).await {
                tracing::warn!("session {id}: array {a} was not moved: {e}");
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Moves array `a` of session `id` onto its rebuilt executable's
    /// layout, on devices `both` (the old slice and the new).
    async fn move_array(
        &self,
        id: u64,
        a: u64,
        moved: &Rebuilt,
        both: &[i64],
        deadline: Instant,
    ) -> Result<()> {
        let Ok(array) = self.lock().array(id, a) else {
            return Ok(()); // deleted meanwhile
        };
        let Some((old, fresh)) = moved.get(&(Arc::as_ptr(&array.exe) as usize)) else {
            return Ok(());
        };
        let value =
            same_value(&old.prepared.plan, &fresh.prepared.plan, array.value).ok_or_else(|| {
                Error::BadResize {
                    session: id,
                    why: format!("array {a} has no place in {} on the new slice", fresh.name),
                }
            })?;
        let from = array.info().clone();
        let want = fresh.prepared.plan.values[value].clone();
        let ready = *array.state.borrow() == ArrayState::Ready;
        if ready && (from.devices != want.devices || from.layout != want.layout) {
            if let Err(e) = self.relay(id, a, (from, want), both, deadline).await {
                array.state.send_replace(ArrayState::Failed(format!(
                    "array {a} of session {id} could not move to the new slice: {e}"
                )));
                return Err(e);
            }
        }
        let mut s = self.lock();
        if let Some(x) = s.get(id)?.arrays.get_mut(&a) {
            x.exe = fresh.clone();
            x.value = value;
        }
        Ok(())
    }

    /// Lays array `a` of session `id` out from `from` to `want` under a
    /// temporary id, then has every worker of `both` rename it to `a`.
    async fn relay(
        &self,
        id: u64,
        a: u64,
        (from, want): (pw_core::plan::ValueInfo, pw_core::plan::ValueInfo),
        both: &[i64],
        deadline: Instant,
    ) -> Result<()> {
        let addrs = self.c.inner.workers.addresses();
        let plan = plans::relayout(from, want, |x, y| link(&addrs, x, y))
            .map_err(|source| Error::Relayout { source })?;
        let name = format!("the move of array {a}");
        let (exe, _) = self
            .build(
                id,
                name,
                Build::Plan(plan),
                both.to_vec(),
                BTreeSet::new(),
                &|_| {},
            )
            .await?;
        let exe: Arc<Executable> = Arc::new(exe);
        let temporary = self.lock().get(id)?.mint();
        let state = Arc::new(watch::Sender::new(ArrayState::Pending));
        let launch = Launch {
            exe: exe.clone(),
            bound: vec![(0, a, false)],
            uploads: Vec::new(),
            outputs: vec![(1, temporary, state.clone())],
        };
        self.launch(id, launch, (Instant::now(), deadline)).await?;
        let mut rx = state.subscribe();
        let done =
            tokio::time::timeout_at(deadline.into(), rx.wait_for(|s| *s != ArrayState::Pending))
                .await;
        let failure = match done {
            Err(_) => Some(Error::CallTimedOut),
            Ok(Err(_)) => Some(Error::CallAbandoned),
            Ok(Ok(s)) => match &*s {
                ArrayState::Failed(why) => Some(Error::CallFailed { why: why.clone() }),
                _ => None,
            },
        };
        let workers: BTreeMap<u32, ()> = both
            .iter()
            .filter_map(|d| addrs.get(d))
            .map(|addr| (addr.worker, ()))
            .collect();
        if let Some(e) = failure {
            let workers: Vec<u32> = workers.into_keys().collect();
            let why = "its move failed";
            transfer::release_arrays(self.c, id, &workers, why, &[temporary], &[]);
            return Err(e);
        }
        let _order = self.c.inner.runs.in_order();
        for &w in workers.keys() {
            let rename = proto::RenameArray {
                owner: id,
                from: temporary,
                to: a,
            };
            let _ = self
                .c
                .inner
                .workers
                .command(w, proto::controller_event::Event::Rename(rename));
        }
        Ok(())
    }
}
