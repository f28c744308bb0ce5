//! Pausing a session (its arrays to storage, its devices to the line) and
//! resuming it on another slice, possibly of another size.
//!
//! * **Pause**: new requests are refused at once ([`super::State::active`]);
//!   the calls already sent finish; every array that is ready is written
//!   by the workers holding it to a checkpoint of the server's own
//!   (`.pw-paused-SESSION-RANDOM` under `--checkpoint-dir`, the format of
//!   [`super::checkpoints`]); then the workers drop everything the session
//!   held (its sidecars too) and its devices go to the line. The session,
//!   its lease, its executables and its arrays' handles stay. A failed
//!   write leaves the session as it was, unpaused.
//! * **Resume**: the session waits in line for its devices like a new
//!   client; its executables are lowered again onto the new slice (their
//!   computations come from the caches) and each array is read back by the
//!   workers of the new slice, laid out as the same input or output of its
//!   rebuilt executable. Arrays that had failed before the pause keep
//!   their failure (and their lineage). The checkpoint is removed once
//!   every array is back.
//!
//! Only executables built from programs can move; a session holding a plan
//! on fixed devices (the IFRT proxy's) cannot pause.

use super::{
    arrays::{ArrayState, SessionArray},
    executables::{array_info, Build, Executable},
    Sessions,
};
use crate::{
    error::{Error, Result},
    resource_manager::Want,
    transfer,
};
use pw_core::plan::{Plan, ValueId};
use pw_wire::proto;
use std::{
    collections::{BTreeSet, HashMap},
    path::PathBuf,
    sync::Arc,
    time::Duration,
};
use tokio::sync::watch;

/// Where a paused session is in its pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Pausing,
    Paused,
    Resuming,
    /// Moving device to device ([`super::resize`]).
    Resizing,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Pausing => "pausing",
            Phase::Paused => "paused",
            Phase::Resuming => "resuming",
            Phase::Resizing => "resizing",
        }
    }
}

/// A session's pause.
pub(crate) struct Paused {
    pub phase: Phase,
    /// The checkpoint holding its arrays (none while it resizes in
    /// memory).
    dir: PathBuf,
    /// How many devices it held.
    size: usize,
    /// The arrays written there (the others had failed).
    saved: BTreeSet<u64>,
}

impl Paused {
    /// A session moving device to device, from `size` devices.
    pub(super) fn resizing(size: usize) -> Paused {
        Paused {
            phase: Phase::Resizing,
            dir: PathBuf::new(),
            size,
            saved: BTreeSet::new(),
        }
    }
}

impl Paused {
    /// A paused session taken from the journal after a restart, its arrays
    /// `saved` in checkpoint `dir`, paused from `size` devices.
    pub(super) fn restored(dir: PathBuf, size: usize, saved: BTreeSet<u64>) -> Paused {
        Paused {
            phase: Phase::Paused,
            dir,
            size,
            saved,
        }
    }

    /// Where its arrays are while they are off the devices: the checkpoint,
    /// how many devices it had, the arrays in it.
    pub(super) fn on_storage(&self) -> Option<(PathBuf, usize, Vec<u64>)> {
        self.off_devices().then(|| {
            (
                self.dir.clone(),
                self.size,
                self.saved.iter().copied().collect(),
            )
        })
    }

    /// Whether its arrays are off the devices (in the checkpoint, or on
    /// their way back).
    pub fn off_devices(&self) -> bool {
        matches!(self.phase, Phase::Paused | Phase::Resuming)
    }

    /// Its session closed: its checkpoint goes.
    pub fn forget(&self) {
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Refuses to move session `id` when it holds a plan on fixed devices
/// (only programs are lowered again).
pub(super) fn movable(id: u64, session: &super::Session) -> Result<()> {
    let plan = session
        .executables
        .values()
        .chain(session.arrays.values().map(|a| &a.exe))
        .find(|e| matches!(e.build, Build::Plan(_)));
    match plan {
        Some(exe) => Err(Error::Unmovable {
            session: id,
            name: exe.name.clone(),
        }),
        None => Ok(()),
    }
}

/// The name of array `id` in a pause's checkpoint.
fn saved_name(id: u64) -> String {
    format!("a{id}")
}

/// Where value `value` of `old` is in `new`, the same program lowered
/// again: the same input, or the same output.
pub(super) fn same_value(old: &Plan, new: &Plan, value: ValueId) -> Option<ValueId> {
    if let Some(i) = old.inputs.iter().position(|&v| v == value) {
        return new.inputs.get(i).copied();
    }
    let o = old.outputs.iter().position(|&v| v == value)?;
    new.outputs.get(o).copied()
}

impl Sessions<'_> {
    /// Starts pausing session `id` (see the module doc): from now on its
    /// requests are refused; [`Sessions::pause`] does the rest. Returns
    /// where its arrays go.
    pub fn begin_pause(&self, id: u64) -> Result<PathBuf> {
        let root = self
            .c
            .inner
            .config
            .checkpoint_dir
            .clone()
            .ok_or_else(|| Error::Checkpoint {
                path: "(a pause)".into(),
                why: "a session pauses into the server's checkpoint directory; start pw-server \
                      with --checkpoint-dir"
                    .into(),
            })?;
        let dir = root.join(format!(
            ".pw-paused-{id}-{:016x}",
            pw_wire::auth::random_id()
        ));
        {
            let mut s = self.lock();
            let session = s.get(id)?;
            if let Some(p) = &session.paused {
                return Err(Error::NotPausable {
                    session: id,
                    doing: "pause",
                    phase: p.phase.name(),
                });
            }
            movable(id, session)?;
            session.paused = Some(Paused {
                phase: Phase::Pausing,
                dir: dir.clone(),
                size: session.size,
                saved: BTreeSet::new(),
            });
        }
        Ok(dir)
    }

    /// Pauses session `id` once [`Sessions::begin_pause`] began it, its
    /// arrays going to `dir`.
    pub async fn pause(&self, id: u64, dir: PathBuf) -> Result<()> {
        let paused = self.write_pause(id, &dir).await;
        let mut s = self.lock();
        let Ok(session) = s.get(id) else {
            let _ = std::fs::remove_dir_all(&dir);
            return paused.map(|_| ());
        };
        let saved = match paused {
            Ok(saved) => saved,
            Err(e) => {
                session.paused = None;
                drop(s);
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let held = std::mem::take(&mut session.devices);
        session.size = 0;
        session.relayouts.clear();
        if let Some(p) = session.paused.as_mut() {
            p.phase = Phase::Paused;
            p.saved = saved;
        }
        let record = session.record();
        let registered = self.registered();
        let granted = s.slices.release(id, &registered);
        s.grant(granted, self.client_lease());
        drop(s);
        // Journaled before the workers drop its arrays: a server restarted
        // after this point finds them in the checkpoint.
        let journaled = self.c.journal(|j| j.session(id, &record));
        let workers: Vec<u32> = registered
            .iter()
            .filter(|(_, ds)| ds.iter().any(|d| held.contains(d)))
            .map(|(w, _)| *w)
            .collect();
        transfer::drop_held(self.c, id, &workers, &format!("session {id} paused"));
        journaled?;
        tracing::info!("session {id} paused: devices {held:?} freed, its arrays in {dir:?}");
        Ok(())
    }

    /// Waits for session `id`'s calls, then writes its ready arrays into
    /// `dir`; the ids written.
    async fn write_pause(&self, id: u64, dir: &std::path::Path) -> Result<BTreeSet<u64>> {
        let deadline = tokio::time::Instant::now() + self.c.inner.config.run_timeout;
        self.calls_below(id, 1, Some(deadline)).await;
        let arrays: Vec<(u64, SessionArray)> = {
            let mut s = self.lock();
            let session = s.get(id)?;
            if session.calls_running > 0 {
                return Err(Error::CallTimedOut);
            }
            session
                .arrays
                .iter()
                .map(|(a, x)| (*a, x.clone()))
                .collect()
        };
        let mut ready = Vec::new();
        for (a, array) in arrays {
            // Uploads and loads are done before their answer; a failed
            // array keeps its failure.
            let waited = array.wait_ready(deadline.into_std()).await;
            if waited.is_ok() {
                ready.push((saved_name(a), a, array));
            }
        }
        if !ready.is_empty() {
            let named: Vec<(&str, u64, SessionArray)> = ready
                .iter()
                .map(|(n, a, x)| (n.as_str(), *a, x.clone()))
                .collect();
            let label = format!("(the pause of session {id})");
            // A pause's checkpoint outlives the host only when the server's
            // state does (`--state-dir`); else it is left to the page cache.
            let durable = self.c.inner.journal.is_some();
            self.write_checkpoint(id, &label, dir, &named, durable)
                .await?;
        }
        Ok(ready.into_iter().map(|(_, a, _)| a).collect())
    }

    /// Resumes paused session `id` (see the module doc).
    pub async fn resume(&self, id: u64, r: &proto::SessionResume) -> Result<proto::SessionResumed> {
        let (dir, size, name) = {
            let mut s = self.lock();
            let session = s.get(id)?;
            let p = match session.paused.as_mut() {
                Some(p) if p.phase == Phase::Paused => p,
                other => {
                    return Err(Error::NotPausable {
                        session: id,
                        doing: "resume",
                        phase: other.map_or("not paused", |p| p.phase.name()),
                    })
                }
            };
            p.phase = Phase::Resuming;
            (p.dir.clone(), p.size, session.name.clone())
        };
        let n = match r.devices {
            0 => size,
            n => n as usize,
        };
        let resumed = self.resume_on(id, n, &name, r).await;
        let mut s = self.lock();
        let Ok(session) = s.get(id) else {
            // Closed meanwhile: what was read back after its close goes.
            drop(s);
            let workers: Vec<u32> = self.registered().into_keys().collect();
            transfer::release(self.c, id, &workers, &format!("session {id} closed"));
            let _ = std::fs::remove_dir_all(&dir);
            return resumed;
        };
        match &resumed {
            Ok(_) => {
                session.paused = None;
                let record = session.record();
                drop(s);
                self.c.journal(|j| j.session(id, &record))?;
                let _ = std::fs::remove_dir_all(&dir);
                tracing::info!("session {id} resumed on {n} devices");
            }
            Err(_) => {
                // Still paused: its arrays stay in the checkpoint, and the
                // devices it got go back.
                if let Some(p) = session.paused.as_mut() {
                    p.phase = Phase::Paused;
                }
                let held = std::mem::take(&mut session.devices);
                session.size = 0;
                if !held.is_empty() {
                    let registered = self.registered();
                    let granted = s.slices.release(id, &registered);
                    s.grant(granted, self.client_lease());
                }
            }
        }
        resumed
    }

    /// Waits in line for `n` devices, then lowers session `id`'s
    /// executables onto them and reads its arrays back.
    async fn resume_on(
        &self,
        id: u64,
        n: usize,
        name: &str,
        r: &proto::SessionResume,
    ) -> Result<proto::SessionResumed> {
        let failed = |why: &str, source: Error| Error::Resume {
            session: id,
            why: why.to_owned(),
            source: Box::new(source),
        };
        let timeout = (r.timeout_ms > 0).then(|| Duration::from_millis(r.timeout_ms));
        let granted = self
            .queue(
                id,
                Want::Count(n),
                name,
                timeout,
                &|_| {},
                None::<&mut NoStream>,
            )
            .await
            .map_err(|e| failed("no devices", e))?;
        let slice =
            granted.ok_or_else(|| failed("no devices", Error::NoSession { session: id }))?;
        let moved = self
            .rebuild(id, &slice)
            .await
            .map_err(|e| failed("an executable could not be lowered onto the new slice", e))?;
        self.read_back(id, &moved).await?;
        self.placed(id)
    }

    /// Where session `id`'s devices, arrays and executables are now.
    pub(super) fn placed(&self, id: u64) -> Result<proto::SessionResumed> {
        let mut s = self.lock();
        let session = s.get(id)?;
        let arrays = session
            .arrays
            .iter()
            .map(|(a, x)| proto::PlacedArray {
                array: *a,
                devices: x.info().devices.clone(),
            })
            .collect();
        let executables = session
            .executables
            .iter()
            .map(|(handle, exe)| {
                let plan = &exe.prepared.plan;
                proto::PlacedExecutable {
                    executable: *handle,
                    inputs: plan.inputs.iter().map(|&v| array_info(plan, v)).collect(),
                    outputs: plan.outputs.iter().map(|&v| array_info(plan, v)).collect(),
                }
            })
            .collect();
        Ok(proto::SessionResumed {
            devices: session.devices.clone(),
            arrays,
            executables,
        })
    }

    /// Lowers every executable of session `id` (those its arrays were made
    /// by too) onto `slice`; the old ones (by address) with the new.
    pub(super) async fn rebuild(&self, id: u64, slice: &[i64]) -> Result<Rebuilt> {
        let (size, exes) = {
            let mut s = self.lock();
            let session = s.get(id)?;
            let size = session.paused.as_ref().map_or(slice.len(), |p| p.size);
            let mut exes: Vec<Arc<Executable>> = session.executables.values().cloned().collect();
            exes.extend(session.arrays.values().map(|a| a.exe.clone()));
            (size, exes)
        };
        let mut moved = Rebuilt::new();
        for exe in exes {
            let key = Arc::as_ptr(&exe) as usize;
            if moved.contains_key(&key) {
                continue;
            }
            // An executable on every device of the session follows its
            // size; one on fewer keeps its count where it fits.
            let count = if exe.devices >= size {
                slice.len()
            } else {
                exe.devices.min(slice.len())
            };
            let (fresh, _) = self
                .build(
                    id,
                    exe.name.clone(),
                    exe.build.clone(),
                    slice[..count].to_vec(),
                    exe.donate.clone(),
                    &|_| {},
                )
                .await?;
            moved.insert(key, (exe, Arc::new(fresh)));
        }
        let mut s = self.lock();
        let session = s.get(id)?;
        for exe in session.executables.values_mut() {
            if let Some((_, fresh)) = moved.get(&(Arc::as_ptr(exe) as usize)) {
                *exe = fresh.clone();
            }
        }
        session.counters.lowerings += moved.len() as u64;
        Ok(moved)
    }

    /// Reads session `id`'s saved arrays back onto their rebuilt
    /// executables' layouts; every array (saved or not) is moved to its
    /// executable's new build. An array that cannot be read back fails
    /// (it raises where it is used), as a lost one does.
    async fn read_back(&self, id: u64, moved: &Rebuilt) -> Result<()> {
        let (dir, loads) = {
            let mut s = self.lock();
            let session = s.get(id)?;
            let Some(p) = &session.paused else {
                return Ok(());
            };
            let (dir, saved) = (p.dir.clone(), p.saved.clone());
            let mut loads = Vec::new();
            for (a, array) in session.arrays.iter_mut() {
                let Some((old, fresh)) = moved.get(&(Arc::as_ptr(&array.exe) as usize)) else {
                    continue;
                };
                let value = same_value(&old.prepared.plan, &fresh.prepared.plan, array.value);
                let Some(value) = value else {
                    array.state.send_replace(ArrayState::Failed(format!(
                        "array {a} of session {id} has no place in {} after the resume",
                        fresh.name
                    )));
                    continue;
                };
                array.exe = fresh.clone();
                array.value = value;
                if saved.contains(a) {
                    array.state = Arc::new(watch::Sender::new(ArrayState::Pending));
                    loads.push((*a, fresh.clone(), value, array.state.clone()));
                }
            }
            (dir, loads)
        };
        let label = format!("(the pause of session {id})");
        let reads = loads.into_iter().map(|(a, exe, value, state)| {
            let (dir, label) = (&dir, &label);
            async move {
                let name = saved_name(a);
                let array_dir = pw_exec::zarr::array_dir(dir, &name);
                let read = self
                    .read_shards((id, a), (&exe, value), (label, &array_dir, &name))
                    .await;
                let now = match read {
                    Ok(()) => ArrayState::Ready,
                    Err(e) => {
                        tracing::warn!("session {id}: array {a} was not read back: {e}");
                        ArrayState::Failed(format!(
                            "array {a} of session {id} could not be read back when it resumed: {e}"
                        ))
                    }
                };
                state.send_replace(now);
            }
        });
        futures::future::join_all(reads).await;
        Ok(())
    }

    /// Whether request kind `doing` may go on in session `id`.
    pub(crate) fn active(&self, id: u64, doing: &'static str) -> Result<()> {
        self.lock().active(id, doing).map(|_| ())
    }
}

/// Old executables (by address) with what they became.
pub(super) type Rebuilt = HashMap<usize, (Arc<Executable>, Arc<Executable>)>;

/// The type of "no client stream" for [`Sessions::queue`].
type NoStream = tonic::Streaming<proto::SessionRequest>;
