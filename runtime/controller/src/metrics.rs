//! The controller's Prometheus metrics (`pw-server --http` serves them as
//! `/metrics`): what it counts (runs, workers lost, bytes), the workers'
//! counters and their devices' activity as their last heartbeats told
//! (the families of [`pw_wire::metrics::WorkerMetrics`], labelled with the
//! worker and the plan's device id), the sessions and the line of waiting
//! clients, each session's call latency, and the IFRT proxy's requests by
//! type and outcome.
//!
//! The two things counted as they happen (call latencies, proxy requests)
//! live in [`Metrics`]; everything else is read from the controller's
//! state when scraped. A session's samples leave with it.

use crate::Controller;
use prometheus_client::{
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{exponential_buckets, Histogram},
    },
    registry::{Registry, Unit},
};
use pw_wire::metrics::{labels, Labels, WorkerMetrics};

/// A histogram per label set, with the call latency buckets.
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

fn call_buckets() -> Histogram {
    // 50 µs to ~26 s, doubling.
    Histogram::new(exponential_buckets(50e-6, 2.0, 20))
}

/// See the module doc.
pub struct Metrics {
    calls: Histograms,
    proxy_requests: Family<Labels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            calls: Family::new_with_constructor(call_buckets),
            proxy_requests: Family::default(),
        }
    }
}

fn session_labels(session: u64, name: &str) -> Labels {
    labels(&[("session", session.to_string()), ("name", name.to_owned())])
}

impl Metrics {
    /// A call of session `session` (named `name`) took `seconds` from its
    /// request to its outputs ready (or failed).
    pub fn call(&self, session: u64, name: &str, seconds: f64) {
        self.calls
            .get_or_create(&session_labels(session, name))
            .observe(seconds);
    }

    /// Session `session` closed: its samples go.
    pub fn session_closed(&self, session: u64, name: &str) {
        self.calls.remove(&session_labels(session, name));
    }

    /// The IFRT proxy answered a request of type `request` (its name in
    /// the protocol, `ExecuteRequest`), well or not.
    pub fn proxy_request(&self, request: &str, ok: bool) {
        let status = if ok { "ok" } else { "error" };
        self.proxy_requests
            .get_or_create(&labels(&[("request", request), ("status", status)]))
            .inc();
    }
}

impl Controller {
    /// What the controller counts as it happens.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// Every metric, in the text format Prometheus scrapes.
    pub fn metrics_text(&self) -> String {
        let mut r = Registry::default();
        self.register_counters(&mut r);
        self.register_workers(&mut r);
        self.register_sessions(&mut r);
        let m = &self.inner.metrics;
        r.register_with_unit(
            "pw_session_call_duration",
            "Time from a session call's request to its outputs ready or failed",
            Unit::Seconds,
            m.calls.clone(),
        );
        r.register(
            "pw_proxy_requests",
            "Requests the IFRT proxy answered, by type and status",
            m.proxy_requests.clone(),
        );
        pw_wire::metrics::text(&r)
    }

    fn register_counters(&self, r: &mut Registry) {
        let c = self.status().reply().counters.unwrap_or_default();
        let counter = |r: &mut Registry, name: &str, help: &str, pairs: &[(&str, &str, u64)]| {
            let f = Family::<Labels, Counter>::default();
            for (k, v, n) in pairs {
                f.get_or_create(&labels(&[(*k, *v)])).inc_by(*n);
            }
            r.register(name, help, f);
        };
        counter(
            r,
            "pw_runs",
            "Runs (and session calls) that ended, by outcome",
            &[
                ("outcome", "ok", c.runs_ok),
                ("outcome", "failed", c.runs_failed),
            ],
        );
        let one = |r: &mut Registry, name: &str, help: &str, n: u64| {
            let m = Counter::<u64>::default();
            m.inc_by(n);
            r.register(name, help, m);
        };
        one(
            r,
            "pw_runs_recovered",
            "Runs that lost a worker and finished on the others",
            c.runs_recovered,
        );
        one(r, "pw_workers_lost", "Workers lost", c.workers_lost);
        one(
            r,
            "pw_workers_refused",
            "Workers refused at registration",
            c.workers_refused,
        );
        one(
            r,
            "pw_executables_compiled",
            "Executables compiled",
            c.executables_compiled,
        );
        one(
            r,
            "pw_compile_cache_hits",
            "Executables taken from the compile cache on disk",
            c.executables_from_cache,
        );
        one(
            r,
            "pw_executables_shipped",
            "Executables sent to workers",
            c.executables_shipped,
        );
        one(
            r,
            "pw_executables_shipped_bytes",
            "Bytes of executables sent to workers",
            c.bytes_shipped,
        );
        counter(
            r,
            "pw_client_bytes",
            "Bytes between clients and the controller, by direction",
            &[
                ("direction", "received", c.bytes_from_clients),
                ("direction", "sent", c.bytes_to_clients),
            ],
        );
    }

    fn register_workers(&self, r: &mut Registry) {
        let families = WorkerMetrics::default();
        let heartbeat_age = Family::<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>::default();
        let workers = Gauge::<i64>::default();
        {
            let registry = self.inner.workers.lock();
            workers.set(registry.workers.len() as i64);
            for w in registry.workers.values() {
                let worker = labels(&[("worker", w.id.to_string()), ("host", w.host.clone())]);
                heartbeat_age
                    .get_or_create(&worker)
                    .set(w.last_heartbeat.elapsed().as_secs_f64());
                families.add_worker(&worker, &w.counters);
                for d in &w.devices_activity {
                    let Some((global, local, kind)) = w
                        .devices
                        .iter()
                        .find(|(_, local, _)| *local == d.local_device)
                    else {
                        continue;
                    };
                    let device = labels(&[
                        ("worker", w.id.to_string()),
                        ("device", global.to_string()),
                        ("local_device", local.to_string()),
                        ("kind", kind.clone()),
                    ]);
                    families.add_device(&device, d);
                }
            }
        }
        r.register("pw_workers", "Workers registered", workers);
        r.register_with_unit(
            "pw_worker_heartbeat_age",
            "Time since the worker's last heartbeat",
            Unit::Seconds,
            heartbeat_age,
        );
        families.register(r);
    }

    fn register_sessions(&self, r: &mut Registry) {
        let (sessions, waiting) = self.sessions().view();
        let open = Gauge::<i64>::default();
        open.set(sessions.len() as i64);
        r.register("pw_sessions", "Sessions open", open);
        let line = Gauge::<i64>::default();
        line.set(waiting.len() as i64);
        r.register(
            "pw_line_length",
            "Clients waiting in line for devices",
            line,
        );
        let devices = Family::<Labels, Gauge>::default();
        let arrays = Family::<Labels, Gauge>::default();
        let bytes = Family::<Labels, Gauge>::default();
        let calls = Family::<Labels, Counter>::default();
        let running = Family::<Labels, Gauge>::default();
        for s in &sessions {
            let l = session_labels(s.session, &s.name);
            devices.get_or_create(&l).set(s.devices.len() as i64);
            arrays.get_or_create(&l).set(s.arrays as i64);
            bytes
                .get_or_create(&l)
                .set(i64::try_from(s.device_bytes).unwrap_or(i64::MAX));
            calls.get_or_create(&l).inc_by(s.calls);
            running.get_or_create(&l).set(s.calls_running as i64);
        }
        r.register("pw_session_devices", "Devices the session holds", devices);
        r.register("pw_session_arrays", "Arrays the session holds", arrays);
        r.register_with_unit(
            "pw_session_device",
            "Bytes the session's arrays hold on devices, every shard counted",
            Unit::Bytes,
            bytes,
        );
        r.register("pw_session_calls", "Calls the session made", calls);
        r.register(
            "pw_session_calls_running",
            "The session's calls not finished yet",
            running,
        );
    }
}
