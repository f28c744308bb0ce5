//! A worker's object store: device buffers keyed by (owner, value, shard
//! position). The owner is a run (its inputs and outputs, the value a plan
//! value) or a session (its arrays, the value an array id): everything of
//! an owner is dropped together when it is released (a run finished,
//! failed or was abandoned; a session closed), and single arrays of a
//! session when the client deletes them.

use pw_core::plan::ValueId;
use pw_pjrt::Buffer;
use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};
use tokio::sync::Notify;

/// What the store holds of one run.
#[derive(Default)]
struct RunObjects {
    buffers: HashMap<(ValueId, usize), Stored>,
    /// Why the run is over, once it is: waiting readers give up.
    ended: Option<String>,
}

/// A stored shard, with what [`ObjectStore::held`] counts of it.
struct Stored {
    buffer: Arc<Buffer>,
    /// Its local device (`u32::MAX` if PJRT could not say).
    device: u32,
    bytes: u64,
}

/// What the store holds on one local device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    pub bytes: u64,
    pub buffers: u64,
}

/// See the module doc.
#[derive(Default)]
pub struct ObjectStore {
    runs: Mutex<HashMap<u64, RunObjects>>,
    changed: Notify,
}

impl ObjectStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, RunObjects>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores shard `position` of value `value` of run `run`; refused (the
    /// buffer is dropped) once the run is over.
    pub fn put(
        &self,
        run: u64,
        value: ValueId,
        position: usize,
        buffer: Arc<Buffer>,
    ) -> Result<(), String> {
        let stored = Stored {
            device: buffer.device().map_or(u32::MAX, |d| d.id() as u32),
            bytes: buffer.on_device_size().map_or(0, |b| b as u64),
            buffer,
        };
        let mut runs = self.lock();
        let objects = runs.entry(run).or_default();
        if let Some(why) = &objects.ended {
            return Err(format!("run {run} is over: {why}"));
        }
        objects.buffers.insert((value, position), stored);
        drop(runs);
        self.changed.notify_waiters();
        Ok(())
    }

    /// Why run `run` is over, if it is.
    pub fn ended(&self, run: u64) -> Option<String> {
        self.lock().get(&run).and_then(|o| o.ended.clone())
    }

    /// Every shard of `value` of owner `run`: taken out of the store when
    /// `take`, else shared with it.
    pub fn value(&self, run: u64, value: ValueId, take: bool) -> Vec<(usize, Arc<Buffer>)> {
        let mut runs = self.lock();
        let Some(objects) = runs.get_mut(&run) else {
            return Vec::new();
        };
        let positions: Vec<(ValueId, usize)> = objects
            .buffers
            .keys()
            .filter(|(v, _)| *v == value)
            .copied()
            .collect();
        positions
            .into_iter()
            .filter_map(|k| {
                if take {
                    objects.buffers.remove(&k).map(|s| s.buffer)
                } else {
                    objects.buffers.get(&k).map(|s| s.buffer.clone())
                }
                .map(|b| (k.1, b))
            })
            .collect()
    }

    /// Shard `position` of `value` of owner `run`, if it is stored.
    pub fn get(&self, run: u64, value: ValueId, position: usize) -> Option<Arc<Buffer>> {
        self.lock()
            .get(&run)
            .and_then(|o| o.buffers.get(&(value, position)).map(|s| s.buffer.clone()))
    }

    /// Drops values `values` of owner `run` (the owner lives on).
    pub fn delete(&self, run: u64, values: &[ValueId]) {
        if let Some(objects) = self.lock().get_mut(&run) {
            objects.buffers.retain(|(v, _), _| !values.contains(v));
        }
    }

    /// The shard, once stored: waits at most `timeout`; an error at once
    /// for a run the store knows nothing of, and once the run has ended.
    pub async fn wait_for(
        &self,
        run: u64,
        value: ValueId,
        position: usize,
        timeout: Duration,
    ) -> Result<Arc<Buffer>, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            // Registered before looking, so a change in between is not missed.
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let runs = self.lock();
                let objects = runs
                    .get(&run)
                    .ok_or_else(|| format!("this worker holds nothing of run {run}"))?;
                if let Some(s) = objects.buffers.get(&(value, position)) {
                    return Ok(s.buffer.clone());
                }
                if let Some(why) = &objects.ended {
                    return Err(format!("run {run} is over: {why}"));
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(format!(
                    "shard {position} of value {value} of run {run} did not appear within {timeout:?}"
                ));
            }
        }
    }

    /// Marks run `run` over (waiting readers give up with `why`) and drops
    /// its buffers.
    pub fn end_run(&self, run: u64, why: &str) {
        let mut runs = self.lock();
        let objects = runs.entry(run).or_default();
        objects.buffers.clear();
        objects.ended = Some(why.to_owned());
        drop(runs);
        self.changed.notify_waiters();
    }

    /// Value `from` of owner `run` becomes value `to` (whose shards go).
    pub fn rename(&self, run: u64, from: ValueId, to: ValueId) {
        if let Some(objects) = self.lock().get_mut(&run) {
            objects.buffers.retain(|(v, _), _| *v != to);
            let moved: Vec<(ValueId, usize)> = objects
                .buffers
                .keys()
                .filter(|(v, _)| *v == from)
                .copied()
                .collect();
            for key in moved {
                if let Some(stored) = objects.buffers.remove(&key) {
                    objects.buffers.insert((to, key.1), stored);
                }
            }
        }
        self.changed.notify_waiters();
    }

    /// Drops every buffer of owner `run`, which lives on.
    pub fn drop_owner(&self, run: u64) {
        if let Some(objects) = self.lock().get_mut(&run) {
            objects.buffers.clear();
        }
    }

    /// Forgets a run that ended (after its waiters had their answer).
    pub fn forget(&self, run: u64) {
        self.lock().remove(&run);
    }

    /// Every shard held of an owner that has not ended, as (owner, value,
    /// position).
    pub fn shards(&self) -> Vec<(u64, ValueId, usize)> {
        self.lock()
            .iter()
            .filter(|(_, o)| o.ended.is_none())
            .flat_map(|(&owner, o)| o.buffers.keys().map(move |&(v, p)| (owner, v, p)))
            .collect()
    }

    /// Drops every run (the controller is gone).
    pub fn clear(&self, why: &str) {
        let mut runs = self.lock();
        for objects in runs.values_mut() {
            objects.buffers.clear();
            objects.ended = Some(why.to_owned());
        }
        drop(runs);
        self.changed.notify_waiters();
    }

    /// Buffers held, over all runs.
    pub fn len(&self) -> usize {
        self.lock().values().map(|o| o.buffers.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the store holds per local device, over every owner.
    pub fn held(&self) -> std::collections::BTreeMap<u32, Held> {
        let mut held = std::collections::BTreeMap::<u32, Held>::new();
        for s in self.lock().values().flat_map(|o| o.buffers.values()) {
            let h = held.entry(s.device).or_default();
            h.bytes += s.bytes;
            h.buffers += 1;
        }
        held
    }
}
