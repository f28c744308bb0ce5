//! The resource manager's registry: the workers that registered, their
//! devices under global ids, and the topology they form.
//!
//! Every worker's devices get global ids, counted up across registrations
//! and never reused (a worker that registers again gets new ones). A worker
//! forms an island of its own unless it names one (`--island`); the
//! devices of one worker are one host of its island.

use pw_core::{
    plan::DeviceAddr,
    topology::{Island, Topology},
};
use pw_exec::{cache::Key, resources::device_kind};
use pw_wire::proto::{self, worker_client::WorkerClient};
use std::{
    collections::{BTreeMap, HashSet},
    time::Instant,
};
use tonic::transport::Channel;

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
    pub client: WorkerClient<Channel>,
    pub last_heartbeat: Instant,
    pub counters: proto::WorkerCounters,
    /// Per active run: the part's steps known complete.
    pub progress: BTreeMap<u64, u32>,
    /// Executables it has loaded.
    pub loaded: HashSet<Key>,
    /// Dropping it ends the worker's session.
    pub session: tokio::sync::mpsc::UnboundedSender<Result<proto::ControllerEvent, tonic::Status>>,
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

    /// A fresh worker id and global ids for `count` devices.
    pub fn allocate(&mut self, count: usize) -> (u32, Vec<i64>) {
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
