//! Prometheus metrics (the `prometheus-client` crate's registry and text
//! encoding): what a worker counts and what its devices did, written the
//! same way by the worker's own `/metrics` (`pw-worker --metrics`) and by
//! the controller's (from the workers' heartbeats), and the HTTP answer
//! both give. Names follow Prometheus' conventions: `pw_` first, counters
//! end in `_total`, units (`_seconds`, `_bytes`) last.

use crate::proto;
use prometheus_client::{
    encoding::text::encode,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};
use std::sync::atomic::AtomicU64;

/// The labels of one sample: (name, value) pairs.
pub type Labels = Vec<(String, String)>;
/// A counter of seconds.
pub type Seconds = Counter<f64, AtomicU64>;

/// `[("worker", "2"), ...]` from `&[("worker", 2), ...]`.
pub fn labels<V: ToString>(pairs: &[(&str, V)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.to_string()))
        .collect()
}

/// The families of what workers count and what their devices did; one
/// sample per worker (and device) added, then registered at once.
#[derive(Default)]
pub struct WorkerMetrics {
    live_buffers: Family<Labels, Gauge>,
    runs_active: Family<Labels, Gauge>,
    executables_loaded: Family<Labels, Counter>,
    executables_compiled: Family<Labels, Counter>,
    parts: Family<Labels, Counter>,
    peer_bytes: Family<Labels, Counter>,
    peer_pieces: Family<Labels, Counter>,
    controller_bytes: Family<Labels, Counter>,
    client_bytes: Family<Labels, Counter>,
    device_busy: Family<Labels, Seconds>,
    device_waiting: Family<Labels, Seconds>,
    device_queued: Family<Labels, Gauge>,
    device_held_bytes: Family<Labels, Gauge>,
    device_held_buffers: Family<Labels, Gauge>,
}

fn with(base: &Labels, key: &str, value: &str) -> Labels {
    let mut l = base.clone();
    l.push((key.to_owned(), value.to_owned()));
    l
}

fn gauge(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl WorkerMetrics {
    /// A worker's counters, its samples labelled `worker`.
    pub fn add_worker(&self, worker: &Labels, c: &proto::WorkerCounters) {
        self.live_buffers
            .get_or_create(worker)
            .set(gauge(c.live_buffers));
        self.runs_active
            .get_or_create(worker)
            .set(gauge(c.runs_active));
        self.executables_loaded
            .get_or_create(worker)
            .inc_by(c.executables_loaded);
        self.executables_compiled
            .get_or_create(worker)
            .inc_by(c.executables_compiled);
        for (outcome, n) in [("done", c.parts_done), ("failed", c.parts_failed)] {
            self.parts
                .get_or_create(&with(worker, "outcome", outcome))
                .inc_by(n);
        }
        for (family, sent, received) in [
            (&self.peer_bytes, c.bytes_to_peers, c.bytes_from_peers),
            (&self.peer_pieces, c.pieces_to_peers, c.pieces_from_peers),
            (
                &self.controller_bytes,
                c.bytes_to_controller,
                c.bytes_from_controller,
            ),
            (&self.client_bytes, c.bytes_to_clients, c.bytes_from_clients),
        ] {
            family
                .get_or_create(&with(worker, "direction", "sent"))
                .inc_by(sent);
            family
                .get_or_create(&with(worker, "direction", "received"))
                .inc_by(received);
        }
    }

    /// What one device did and holds, its samples labelled `device`.
    pub fn add_device(&self, device: &Labels, d: &proto::DeviceActivity) {
        self.device_busy
            .get_or_create(device)
            .inc_by(d.busy_us as f64 / 1e6);
        self.device_waiting
            .get_or_create(device)
            .inc_by(d.waiting_us as f64 / 1e6);
        self.device_queued
            .get_or_create(device)
            .set(i64::from(d.queued_steps));
        self.device_held_bytes
            .get_or_create(device)
            .set(gauge(d.held_bytes));
        self.device_held_buffers
            .get_or_create(device)
            .set(gauge(d.held_buffers));
    }

    /// Registers every family with `registry`.
    pub fn register(self, r: &mut Registry) {
        r.register(
            "pw_worker_live_buffers",
            "PJRT buffers alive on the worker",
            self.live_buffers,
        );
        r.register(
            "pw_worker_runs_active",
            "Runs with a part on the worker",
            self.runs_active,
        );
        r.register(
            "pw_worker_executables_loaded",
            "Executables the worker loaded (shipped compiled or compiled there)",
            self.executables_loaded,
        );
        r.register(
            "pw_worker_executables_compiled",
            "Executables the worker compiled itself",
            self.executables_compiled,
        );
        r.register(
            "pw_worker_parts",
            "Parts of runs the worker finished, by outcome",
            self.parts,
        );
        r.register(
            "pw_worker_peer_bytes",
            "Bytes of pieces between the worker and its peers, by direction",
            self.peer_bytes,
        );
        r.register(
            "pw_worker_peer_pieces",
            "Pieces between the worker and its peers, by direction",
            self.peer_pieces,
        );
        r.register(
            "pw_worker_controller_bytes",
            "Bytes between the worker and the controller, by direction",
            self.controller_bytes,
        );
        r.register(
            "pw_worker_client_bytes",
            "Bytes clients moved straight to and from the worker, by direction",
            self.client_bytes,
        );
        r.register_with_unit(
            "pw_device_busy",
            "Time the device was seen running a step (sampled)",
            prometheus_client::registry::Unit::Seconds,
            self.device_busy,
        );
        r.register_with_unit(
            "pw_device_waiting",
            "Time the device's next step was seen waiting for an input (sampled)",
            prometheus_client::registry::Unit::Seconds,
            self.device_waiting,
        );
        r.register(
            "pw_device_queued_steps",
            "Steps not complete on the device",
            self.device_queued,
        );
        r.register_with_unit(
            "pw_device_held",
            "Bytes of the worker's store on the device (arrays of sessions, inputs and outputs of runs)",
            prometheus_client::registry::Unit::Bytes,
            self.device_held_bytes,
        );
        r.register(
            "pw_device_held_buffers",
            "Buffers of the worker's store on the device",
            self.device_held_buffers,
        );
    }
}

/// The content type of [`text`]'s answer (OpenMetrics text, which
/// Prometheus scrapes).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `registry` in the text format.
pub fn text(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut out, registry);
    out
}
