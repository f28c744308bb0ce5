//! The resource manager's registry: the workers that registered, their
//! devices under global ids, and the topology they form. [`Workers`] owns
//! it: admission, heartbeats and leases, losses, and what the rest of the
//! controller asks of the workers (handles to their services, where each
//! device is).
//!
//! Every worker's devices get global ids, counted up across registrations
//! and never reused (a worker that registers again gets new ones). A worker
//! forms an island of its own unless it names one (`--island`); the
//! devices of one worker are one host of its island.

use crate::{
    error::{Error, Result},
    summary::WorkerLine,
    Controller,
};
use pw_core::{
    plan::DeviceAddr,
    topology::{Island, Topology},
};
use pw_exec::{cache::Key, resources::device_kind};
use pw_wire::{net::WorkerClient, proto};
use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::{atomic::Ordering, Mutex, MutexGuard},
    time::{Duration, Instant},
};
use tokio::sync::mpsc;

/// One registered worker.
pub struct WorkerEntry {
    pub id: u32,
    pub address: String,
    /// Its TCP data port (pieces from peers).
    pub data_address: String,
    pub island: String,
    pub host: String,
    pub pid: u32,
    pub platform: String,
    pub plugin: String,
    pub can_compile: bool,
    /// (global id, local id, kind), in registration order.
    pub devices: Vec<(i64, u32, String)>,
    /// A channel to its `Worker` service.
    pub client: WorkerClient,
    pub last_heartbeat: Instant,
    pub counters: proto::WorkerCounters,
    /// Per local device: what it did and holds (the last heartbeat).
    pub devices_activity: Vec<proto::DeviceActivity>,
    /// Per active run: the part's steps known complete.
    pub progress: BTreeMap<u64, u32>,
    /// Executables it has loaded.
    pub loaded: HashSet<Key>,
    /// Dropping it ends the worker's session.
    pub session: tokio::sync::mpsc::UnboundedSender<Result<proto::ControllerEvent, tonic::Status>>,
    /// Its command and report links (closed when it is dropped).
    pub link: std::sync::Arc<crate::worker_link::WorkerLink>,
    /// Shards it kept from an earlier controller for sessions waiting to be
    /// taken back: (session, array, position).
    pub kept: HashSet<(u64, u64, u32)>,
}

impl WorkerEntry {
    /// `worker 2 (127.0.0.1:40001, pid 812)`.
    pub fn describe(&self) -> String {
        format!("worker {} ({}, pid {})", self.id, self.address, self.pid)
    }
}

/// See the module doc.
#[derive(Default)]
pub struct Registry {
    pub workers: BTreeMap<u32, WorkerEntry>,
    next_worker: u32,
    next_device: i64,
    /// From the journal of an earlier server: each worker's id and device
    /// ids, by address, given back when it registers again.
    known: HashMap<String, (u32, Vec<i64>)>,
}

impl Registry {
    /// Why `register` cannot join, if it cannot.
    pub fn refusal(&self, register: &proto::Register) -> Option<String> {
        if register.protocol != pw_wire::PROTOCOL as i32 {
            return Some(format!(
                "it speaks wire protocol {}, this controller {}",
                register.protocol,
                pw_wire::PROTOCOL as i32
            ));
        }
        let (major, min_minor) = (0, pw_pjrt::MIN_MINOR as u32);
        if register.api_major != major || register.api_minor < min_minor {
            return Some(format!(
                "its plugin implements PJRT C API {}.{}; pw needs {major}.{min_minor} or newer within major {major}",
                register.api_major, register.api_minor
            ));
        }
        if register.devices.is_empty() {
            return Some("it offers no device".into());
        }
        if !register.island.is_empty() {
            if let Some(other) = self
                .workers
                .values()
                .find(|w| w.island == register.island && w.plugin != register.plugin)
            {
                return Some(format!(
                    "island \"{}\" runs plugin [{}] ({}), and this worker's plugin [{}] differs: \
                     one island runs one plugin (give the worker another --island)",
                    register.island,
                    other.plugin,
                    other.describe(),
                    register.plugin
                ));
            }
        }
        None
    }

    /// Gives back, to the worker that registers again at its address
    /// after a restart, the ids the journal says it had (see
    /// [`Registry::allocate`]); fresh ids start past them.
    pub fn remember(&mut self, known: HashMap<String, (u32, Vec<i64>)>) {
        for (worker, devices) in known.values() {
            self.next_worker = self.next_worker.max(worker + 1);
            if let Some(&most) = devices.iter().max() {
                self.next_device = self.next_device.max(most + 1);
            }
        }
        self.known = known;
    }

    /// The worker id and global device ids for a worker at `address` with
    /// `count` devices: those it had before a restart, else fresh ones.
    pub fn allocate(&mut self, address: &str, count: usize) -> (u32, Vec<i64>) {
        if let Some((id, globals)) = self.known.remove(address) {
            let taken = |d: &i64| {
                self.workers
                    .values()
                    .any(|w| w.devices.iter().any(|x| x.0 == *d))
            };
            if globals.len() == count
                && !self.workers.contains_key(&id)
                && !globals.iter().any(taken)
            {
                return (id, globals);
            }
        }
        let id = self.next_worker;
        self.next_worker += 1;
        let first = self.next_device;
        self.next_device += count as i64;
        (id, (first..self.next_device).collect())
    }

    /// The island a worker joins: its own (`w<id>`) unless it names one.
    pub fn island_name(id: u32, asked: &str) -> String {
        if asked.is_empty() {
            format!("w{id}")
        } else {
            asked.to_owned()
        }
    }

    /// The topology of the registered workers' devices (only those of
    /// `within`, a session's slice, when given): islands, each of its
    /// workers one host.
    pub fn topology(&self, within: Option<&[i64]>) -> Topology {
        let mut islands: BTreeMap<&str, Island> = BTreeMap::new();
        for w in self.workers.values() {
            let ids: Vec<i64> = w
                .devices
                .iter()
                .map(|d| d.0)
                .filter(|d| within.is_none_or(|s| s.contains(d)))
                .collect();
            if ids.is_empty() {
                continue;
            }
            let island = islands.entry(&w.island).or_insert_with(|| Island {
                name: w.island.clone(),
                kind: device_kind(&w.platform),
                devices: Vec::new(),
                hosts: Vec::new(),
            });
            island.devices.extend(&ids);
            island.hosts.push(ids);
        }
        Topology {
            islands: islands.into_values().collect(),
        }
    }

    /// Where every registered device is.
    pub fn addresses(&self) -> BTreeMap<i64, DeviceAddr> {
        self.workers
            .values()
            .flat_map(|w| {
                w.devices.iter().map(move |(global, local, _)| {
                    (
                        *global,
                        DeviceAddr {
                            worker: w.id,
                            local: *local,
                        },
                    )
                })
            })
            .collect()
    }
}

/// A worker's service, as a run uses it: its plugin identity, a client of
/// its `Worker` service, and the executables it has loaded.
pub struct Handle {
    pub plugin: String,
    pub client: WorkerClient,
    pub loaded: HashSet<Key>,
}

/// The registry, shared (see the module doc).
#[derive(Default)]
pub struct Workers {
    registry: Mutex<Registry>,
}

impl Workers {
    /// The registry itself, for what reads several workers at once.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits `entry` (made by `entry` from its fresh id and device ids)
    /// unless `register` can no longer join; the reason otherwise.
    pub fn admit(
        &self,
        register: &proto::Register,
        entry: impl FnOnce(u32, Vec<i64>) -> WorkerEntry,
    ) -> std::result::Result<proto::Registered, String> {
        let mut registry = self.lock();
        // Checked again: another worker may have joined the island meanwhile.
        if let Some(why) = registry.refusal(register) {
            return Err(why);
        }
        let (id, globals) = registry.allocate(&register.address, register.devices.len());
        let entry = entry(id, globals.clone());
        tracing::info!(
            "{} registered: island {}, devices {globals:?}, {}",
            entry.describe(),
            entry.island,
            entry.plugin
        );
        registry.workers.insert(id, entry);
        Ok(proto::Registered {
            worker: id,
            device_ids: globals,
            ..Default::default()
        })
    }

    /// Why `register` cannot join, if it cannot.
    pub fn refusal(&self, register: &proto::Register) -> Option<String> {
        self.lock().refusal(register)
    }

    /// The shards workers kept for session `session` (see
    /// [`WorkerEntry::kept`]), as (worker, array, position); forgotten here.
    pub fn take_kept(&self, session: u64) -> HashSet<(u32, u64, u32)> {
        let mut taken = HashSet::new();
        for w in self.lock().workers.values_mut() {
            let worker = w.id;
            w.kept.retain(|&(owner, array, position)| {
                let mine = owner == session;
                if mine {
                    taken.insert((worker, array, position));
                }
                !mine
            });
        }
        taken
    }

    /// A heartbeat of `worker`: renews its lease.
    pub fn heartbeat(&self, worker: u32, beat: &proto::Heartbeat) {
        if let Some(w) = self.lock().workers.get_mut(&worker) {
            w.last_heartbeat = Instant::now();
            w.counters = beat.counters.unwrap_or_default();
            w.devices_activity = beat.devices.clone();
            w.progress = beat.runs.iter().map(|p| (p.run, p.steps_done)).collect();
        }
    }

    /// Takes `worker` out of the registry.
    pub fn remove(&self, worker: u32) -> Option<WorkerEntry> {
        self.lock().workers.remove(&worker)
    }

    /// Returns once any of `workers` is no longer registered (lost, or
    /// gone), with its id; for racing a request to them against their loss.
    pub async fn any_gone(&self, workers: &[u32]) -> u32 {
        loop {
            if let Some(&w) = workers.iter().find(|w| !self.is_registered(**w)) {
                return w;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Workers silent for longer than `lease`.
    pub fn expired(&self, lease: Duration) -> Vec<u32> {
        self.lock()
            .workers
            .values()
            .filter(|w| w.last_heartbeat.elapsed() > lease)
            .map(|w| w.id)
            .collect()
    }

    /// Sends `event` on `worker`'s session (at once: not in order with its
    /// commands).
    pub fn tell(&self, worker: u32, event: proto::controller_event::Event) -> Result<()> {
        let r = self.lock();
        let e = r.workers.get(&worker).ok_or(Error::WorkerGone { worker })?;
        e.session
            .send(Ok(proto::ControllerEvent { event: Some(event) }))
            .map_err(|_| Error::WorkerGone { worker })
    }

    /// Sends `event` to every worker's session.
    pub fn tell_all(&self, event: &proto::ControllerEvent) {
        for w in self.lock().workers.values() {
            let _ = w.session.send(Ok(event.clone()));
        }
    }

    pub fn is_registered(&self, worker: u32) -> bool {
        self.lock().workers.contains_key(&worker)
    }

    pub fn is_empty(&self) -> bool {
        self.lock().workers.is_empty()
    }

    /// Sends `event` on `worker`'s command link: commands reach a worker
    /// in the order they were sent (see `ControllerEvent` in the protocol).
    pub fn command(&self, worker: u32, event: proto::controller_event::Event) -> Result<()> {
        // Written outside the registry's lock: a large part takes a while.
        let link = self
            .lock()
            .workers
            .get(&worker)
            .map(|e| e.link.clone())
            .ok_or(Error::WorkerGone { worker })?;
        if link.send(event) {
            Ok(())
        } else {
            Err(Error::WorkerGone { worker })
        }
    }

    /// The service of `worker`.
    pub fn handle(&self, worker: u32) -> Result<Handle> {
        let r = self.lock();
        let e = r.workers.get(&worker).ok_or(Error::WorkerGone { worker })?;
        Ok(Handle {
            plugin: e.plugin.clone(),
            client: e.client.clone(),
            loaded: e.loaded.clone(),
        })
    }

    /// `worker` has loaded the executable `key`.
    pub fn loaded(&self, worker: u32, key: Key) {
        if let Some(e) = self.lock().workers.get_mut(&worker) {
            e.loaded.insert(key);
        }
    }

    /// The topology of the registered devices (of `within` only, when
    /// given), and where every registered device is.
    pub fn topology(&self, within: Option<&[i64]>) -> (Topology, BTreeMap<i64, DeviceAddr>) {
        let r = self.lock();
        (r.topology(within), r.addresses())
    }

    /// Where every registered device is.
    pub fn addresses(&self) -> BTreeMap<i64, DeviceAddr> {
        self.lock().addresses()
    }

    /// Every registered device, by worker.
    pub fn devices_by_worker(&self) -> BTreeMap<u32, Vec<i64>> {
        self.lock()
            .workers
            .values()
            .map(|w| (w.id, w.devices.iter().map(|d| d.0).collect()))
            .collect()
    }

    /// The addresses peers reach each of `workers` at.
    pub fn peers<'a>(
        &self,
        workers: impl Iterator<Item = &'a u32>,
    ) -> HashMap<u32, proto::PeerAddress> {
        let r = self.lock();
        workers
            .filter_map(|w| {
                r.workers.get(w).map(|e| {
                    (
                        *w,
                        proto::PeerAddress {
                            service: e.address.clone(),
                            data: e.data_address.clone(),
                        },
                    )
                })
            })
            .collect()
    }

    /// `worker` as a run summary lists it.
    pub fn line(&self, worker: u32) -> Result<WorkerLine> {
        let r = self.lock();
        let e = r.workers.get(&worker).ok_or(Error::WorkerLeft { worker })?;
        Ok(WorkerLine {
            id: worker,
            address: e.address.clone(),
            island: e.island.clone(),
            host: e.host.clone(),
            pid: e.pid,
            platform: e.platform.clone(),
            devices: e.devices.iter().map(|d| d.0).collect(),
        })
    }

    /// `devices` with their worker, platform and kind.
    pub fn describe_devices(&self, devices: &[i64]) -> Vec<(i64, u32, String, String)> {
        let r = self.lock();
        devices
            .iter()
            .filter_map(|d| {
                r.workers.values().find_map(|w| {
                    w.devices
                        .iter()
                        .find(|x| x.0 == *d)
                        .map(|x| (*d, w.id, w.platform.clone(), x.2.clone()))
                })
            })
            .collect()
    }
}

/// Admits a worker, or says why not. `session` is the worker's event
/// stream; dropping the registry's copy ends the session. Also returns the
/// owners of shards it kept that nobody here knows, to release once it
/// heard it is registered.
pub async fn register(
    c: &Controller,
    register: &proto::Register,
    session: mpsc::UnboundedSender<std::result::Result<proto::ControllerEvent, tonic::Status>>,
) -> std::result::Result<(proto::Registered, Vec<u64>), String> {
    let refused = |why: String| {
        c.inner
            .counters
            .workers_refused
            .fetch_add(1, Ordering::Relaxed);
        why
    };
    let workers = &c.inner.workers;
    if let Some(why) = workers.refusal(register) {
        return Err(refused(why));
    }
    let channel = pw_wire::net::channel(&register.address, Duration::from_secs(3))
        .await
        .map_err(|e| {
            refused(format!(
                "the controller cannot reach its service at {}: {e}",
                register.address
            ))
        })?;
    let client = pw_wire::net::worker_client(channel);
    // Before it is admitted: a session taken back once its devices are
    // registered finds what it kept.
    let (kept, strangers) = c.sessions().kept_by(&register.held);
    let registered = workers
        .admit(register, |id, globals| WorkerEntry {
            id,
            address: register.address.clone(),
            data_address: register.data_address.clone(),
            island: Registry::island_name(id, &register.island),
            host: register.host.clone(),
            pid: register.pid,
            platform: register.platform.clone(),
            plugin: register.plugin.clone(),
            can_compile: register.can_compile,
            devices: globals
                .iter()
                .zip(&register.devices)
                .map(|(g, d)| (*g, d.local_id, d.kind.clone()))
                .collect(),
            client,
            last_heartbeat: Instant::now(),
            counters: proto::WorkerCounters::default(),
            devices_activity: Vec::new(),
            progress: BTreeMap::new(),
            loaded: Default::default(),
            session,
            link: std::sync::Arc::new(crate::worker_link::WorkerLink::open(
                c,
                id,
                register.data_address.clone(),
            )),
            kept,
        })
        .map_err(refused)?;
    let journaled =
        c.journal(|j| j.devices(&register.address, registered.worker, &registered.device_ids));
    if let Err(e) = journaled {
        tracing::error!(
            "the devices of worker {} are not journaled: {e}",
            registered.worker
        );
    }
    c.sessions().workers_changed();
    let config = &c.inner.config;
    let registered = proto::Registered {
        heartbeat_ms: config.heartbeat.as_millis() as u32,
        lease_ms: config.lease.as_millis() as u32,
        ..registered
    };
    Ok((registered, strangers))
}

/// A heartbeat of `worker`: renews its lease, and says how far its runs
/// have got.
pub fn heartbeat(c: &Controller, worker: u32, beat: proto::Heartbeat) {
    c.inner.workers.heartbeat(worker, &beat);
    c.inner.watch.heartbeat(worker, &beat.runs);
}

/// Drops `worker` (its session ended, or its lease expired): its peers are
/// fenced off from it, sessions lose its devices and arrays, and every run
/// it takes part in hears of it.
pub fn lost(c: &Controller, worker: u32, why: &str) {
    let Some(entry) = c.inner.workers.remove(worker) else {
        return;
    };
    c.inner
        .counters
        .workers_lost
        .fetch_add(1, Ordering::Relaxed);
    // A session that ends after a silence is a hang or a cut link that
    // the transport noticed first.
    let silence = entry.last_heartbeat.elapsed();
    let why = if silence > c.inner.config.heartbeat * 3 {
        format!(
            "{why} (silent for {:.1} s: it hangs or its link is down)",
            silence.as_secs_f64()
        )
    } else {
        why.to_owned()
    };
    tracing::warn!("{} is gone: {why}", entry.describe());
    // Its peers stop waiting for it, and take nothing more from it.
    c.inner.workers.tell_all(&proto::ControllerEvent {
        event: Some(proto::controller_event::Event::PeerLost(proto::PeerLost {
            worker,
            address: Some(proto::PeerAddress {
                service: entry.address.clone(),
                data: entry.data_address.clone(),
            }),
            reason: why.clone(),
        })),
    });
    let devices: Vec<i64> = entry.devices.iter().map(|d| d.0).collect();
    let why = format!("{} was lost: {why}", entry.describe());
    c.sessions().lost_worker(worker, &devices, &why);
    c.inner.reads.lost(worker, &why);
    c.inner.stores.lost(worker, &why);
    c.inner.runs.lost(worker, &why, &entry.progress);
}

/// Drops workers whose lease expired; runs until the controller is
/// dropped (call it once, in a task).
pub async fn watch_leases(c: Controller) {
    let config = &c.inner.config;
    let mut tick = tokio::time::interval(config.heartbeat.min(Duration::from_millis(100)));
    loop {
        tick.tick().await;
        if c.is_last() {
            return;
        }
        let lease = config.lease;
        for id in c.inner.workers.expired(lease) {
            lost(
                &c,
                id,
                &format!("no heartbeat for {lease:?}: it hangs or its link is down"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_gets_back_the_ids_the_journal_gave_it() {
        let mut r = Registry::default();
        let known = HashMap::from([
            ("10.0.0.1:1".to_owned(), (3, vec![6, 7])),
            ("10.0.0.2:1".to_owned(), (1, vec![2, 3])),
        ]);
        r.remember(known);
        assert_eq!(r.allocate("10.0.0.1:1", 2), (3, vec![6, 7]));
        // Another count of devices, or an unknown address: fresh ids,
        // past every id the journal gave.
        assert_eq!(r.allocate("10.0.0.2:1", 4), (4, vec![8, 9, 10, 11]));
        assert_eq!(r.allocate("10.0.0.9:1", 1), (5, vec![12]));
        // Ids are given back once.
        assert_eq!(r.allocate("10.0.0.1:1", 2), (6, vec![13, 14]));
    }
}
