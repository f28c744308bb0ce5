//! `pw-deploy k8s`: a pw cluster as Kubernetes objects.
//!
//! pw never becomes its own cluster manager: on Kubernetes, a cluster is one
//! JobSet (`jobset.x-k8s.io/v1alpha2`) that the JobSet controller runs.
//!
//! - **`head`**, a replicated job of one indexed Job with one pod, runs
//!   `pw-server` on `0.0.0.0:SERVER_PORT`. JobSet's DNS hostnames give the
//!   pod the stable name `NAME-head-0-0.NAME` (the pod hostname
//!   `<jobset>-<replicated job>-<job index>-<pod index>` under the subdomain
//!   `NAME`, a headless Service the JobSet controller creates).
//! - **`worker`**, a replicated job of one indexed Job with W pods
//!   (`completions = parallelism = W`), runs one `pw-worker` per pod,
//!   pointed at `NAME-head-0-0.NAME:SERVER_PORT` and advertising its own pod
//!   address (`status.podIP`, through the downward API).
//! - Both jobs restart their pods on failure (`restartPolicy: OnFailure`)
//!   with a large `backoffLimit`: a worker that dies comes back in its pod
//!   and registers again; the controller takes it as a new worker.
//! - The head starts first: `startupPolicy: InOrder` (or the newer
//!   `dependsOn` on the head being ready), and the head's readiness probe
//!   is its gRPC port accepting connections.
//! - The JobSet succeeds when the head does (pw-server exits 0 only when
//!   asked to stop), and fails after `--max-restarts` restarts of the whole
//!   set (when a job exhausts its backoffLimit).
//! - One Secret holds the token (pw-server reads it as `PW_TOKEN`; clients
//!   present it) and the cluster secret (both containers read it as
//!   `PW_CLUSTER_SECRET`: workers present it to register, and every port of
//!   a worker asks for it). pw-server needs both on a non-loopback address.
//! - With `--tls-secret`, a Secret of type `kubernetes.io/tls` (what
//!   cert-manager writes: `tls.crt`, `tls.key`, `ca.crt`) is mounted in
//!   every pod at [`TLS_DIR`]: pw-server's gRPC port and status page, the
//!   workers' ports and their data plane serve TLS with it, and every
//!   process checks the others against its CA. Workers then advertise
//!   their JobSet DNS names (`NAME-worker-0-I.NAME`, from the pod's
//!   completion index) rather than pod IPs, so one certificate naming
//!   `*.NAME` covers the head and every worker.
//! - A ClusterIP Service `NAME-server` gives clients (`pw-run --server`,
//!   `pw.connect`) one name for the server (and its status page), and a
//!   NetworkPolicy `NAME-workers` admits to the workers' service and data
//!   ports only the pods of this cluster (their metrics port, which asks
//!   for a bearer credential, from anywhere).
//! - Prometheus metrics: pw-server's on its status page's `/metrics`, each
//!   worker's on `--metrics-port`. Both also take the scrape token (the
//!   Secret's `metrics-token`, read as `PW_METRICS_TOKEN`), which opens
//!   `/metrics` and nothing else. The pods carry the `prometheus.io/*`
//!   scrape annotations; with `--service-monitor`, a headless Service
//!   `NAME-metrics` and a ServiceMonitor `NAME` (the Prometheus
//!   operator's) instead, which name the scrape token's Secret key.
//!
//! Paths inside the containers are those of the images `deploy/Dockerfile`
//! builds: [`SERVER_BIN`], [`WORKER_BIN`], plugins in [`PLUGIN_DIR`].

pub mod objects;

use crate::{names, Error};
use clap::{Args, ValueEnum};
use objects::*;

/// pw-server in the server image.
pub const SERVER_BIN: &str = "/usr/local/bin/pw-server";
/// pw-worker in the worker image.
pub const WORKER_BIN: &str = "/usr/local/bin/pw-worker";
/// Where the images keep the PJRT plugin: the plugin's Python wheel,
/// installed there as it is (`pip install --target`), so that a plugin
/// finds the libraries it ships beside it.
pub const PLUGIN_DIR: &str = "/opt/pw/site";
/// The server's compile cache (an emptyDir: it lives as long as the pod).
pub const COMPILE_CACHE: &str = "/var/cache/pw";
/// The group of the user the images of `deploy/Dockerfile` run as.
pub const IMAGE_GROUP: u32 = 65532;
/// Where `--tls-secret` is mounted in every pod.
pub const TLS_DIR: &str = "/etc/pw/tls";
/// The replicated job of pw-server.
pub const HEAD: &str = "head";
/// The replicated job of the pw-workers.
pub const WORKER: &str = "worker";
/// The most workers, and devices in all, a cluster may have: pw's limit
/// on a topology (65,536 devices).
pub const MAX_DEVICES: u32 = 65_536;
/// The most devices one pw-worker asks its plugin for (`pw-worker --devices`).
pub const MAX_DEVICES_PER_WORKER: u32 = 4096;
/// pw-server's defaults for `--heartbeat-ms` and `--lease-ms`, to check a
/// lease against a heartbeat when only one of them is given.
const DEFAULT_HEARTBEAT_MS: u64 = 250;
const DEFAULT_LEASE_MS: u64 = 1500;
/// The suffix Kubernetes appends to a Job's pod names (the JobSet webhook
/// checks names with it).
const POD_SUFFIX: &str = "-abcde";

/// The accelerator of the workers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Platform {
    /// The PJRT CPU plugin; `--devices-per-worker` CPU devices per worker.
    Cpu,
    /// NVIDIA GPUs (the device plugin's `nvidia.com/gpu`).
    Cuda,
    /// Cloud TPUs (`google.com/tpu`).
    Tpu,
}

impl Platform {
    pub const ALL: [Platform; 3] = [Platform::Cpu, Platform::Cuda, Platform::Tpu];

    /// The name `deploy/Dockerfile`'s `PLATFORM` argument takes.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Cpu => "cpu",
            Platform::Cuda => "cuda",
            Platform::Tpu => "tpu",
        }
    }

    /// The platform's PJRT plugin, relative to [`PLUGIN_DIR`]: where its
    /// wheel puts it (`deploy/Dockerfile` checks the file is there).
    pub fn plugin_file(self) -> &'static str {
        match self {
            Platform::Cpu => "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so",
            Platform::Cuda => "jax_plugins/xla_cuda12/xla_cuda_plugin.so",
            Platform::Tpu => "libtpu/libtpu.so",
        }
    }

    /// The plugin's path in the worker image.
    pub fn default_plugin(self) -> String {
        format!("{PLUGIN_DIR}/{}", self.plugin_file())
    }

    /// The extended resource that gives a pod this platform's devices
    /// (none for CPU devices, which the plugin makes up).
    pub fn resource(self) -> Option<&'static str> {
        match self {
            Platform::Cpu => None,
            Platform::Cuda => Some("nvidia.com/gpu"),
            Platform::Tpu => Some("google.com/tpu"),
        }
    }
}

/// How the worker job waits for the head.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Startup {
    /// `spec.startupPolicy.startupPolicyOrder: InOrder` (every JobSet release).
    InOrder,
    /// `dependsOn: [{name: head, status: Ready}]` on the worker job (newer
    /// JobSet releases, which deprecate startupPolicy).
    DependsOn,
}

/// pw-worker's `--data-plane`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DataPlane {
    Tcp,
    Grpc,
}

impl DataPlane {
    fn name(self) -> &'static str {
        match self {
            DataPlane::Tcp => "tcp",
            DataPlane::Grpc => "grpc",
        }
    }
}

/// The options of `pw-deploy k8s`.
#[derive(Args, Debug, Clone)]
pub struct Options {
    /// The cluster's name: the JobSet's, and the prefix of every object,
    /// job and pod (a DNS-1035 label, short enough that the pod names fit
    /// in 63 characters).
    #[arg(long, value_name = "NAME")]
    pub name: String,

    /// The namespace of every object (default: none written, so `kubectl
    /// apply -n` or the context decides).
    #[arg(long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// How many pw-workers: one pod, on its own host, per worker.
    #[arg(long, value_name = "W", value_parser = clap::value_parser!(u32).range(1..=MAX_DEVICES as i64))]
    pub workers: u32,

    /// The devices of each worker: CPU devices its plugin makes, or the
    /// GPUs / TPU chips its pod asks for.
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=MAX_DEVICES_PER_WORKER as i64))]
    pub devices_per_worker: u32,

    /// The pw-server image (deploy/Dockerfile, target `server`); also the
    /// workers' unless --worker-image is given.
    #[arg(long, value_name = "IMAGE")]
    pub image: String,

    /// The pw-worker image (deploy/Dockerfile, target `worker`: pw-worker
    /// and the PJRT plugin, no MLIR).
    #[arg(long, value_name = "IMAGE")]
    pub worker_image: Option<String>,

    /// The workers' accelerator: the plugin's default path and the device
    /// resource each worker pod requests.
    #[arg(long, value_enum, default_value = "cpu")]
    pub platform: Platform,

    /// The PJRT plugin inside the worker image (default: the platform's
    /// plugin where deploy/Dockerfile puts it, under /opt/pw/site). On CPU
    /// the server compiles with the same file.
    #[arg(long, value_name = "PATH")]
    pub plugin: Option<String>,

    /// pw-server's port for workers and clients.
    #[arg(long, default_value_t = 29000, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub server_port: u16,

    /// pw-server's status page and its /metrics, on the pod's address
    /// and the NAME-server Service (port `http`): the page asks for the
    /// token, /metrics for the token or the scrape token; HTTPS with
    /// --tls-secret. 0: no status page.
    #[arg(long, default_value_t = 29080, value_name = "PORT")]
    pub status_port: u16,

    /// Each pw-worker's Prometheus metrics (`pw-worker --metrics`), for a
    /// scrape with the scrape token or the cluster secret; HTTPS with
    /// --tls-secret. 0: none.
    #[arg(long, default_value_t = 29102, value_name = "PORT")]
    pub metrics_port: u16,

    /// Each pw-worker's service port, for the server and its peers.
    #[arg(long, default_value_t = 29100, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub worker_port: u16,

    /// Each pw-worker's data port, where peers send shard pieces.
    #[arg(long, default_value_t = 29101, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub data_port: u16,

    /// The Secret holding the server's token (default: NAME-token); both
    /// pw-server and the workers read it as PW_TOKEN.
    #[arg(long, value_name = "SECRET")]
    pub token_secret: Option<String>,

    /// The key of the token in that Secret.
    #[arg(long, default_value = "token", value_name = "KEY")]
    pub token_key: String,

    /// The key, in the same Secret, of the secret pw-server and its workers
    /// share (PW_CLUSTER_SECRET; no client needs it).
    #[arg(long, default_value = "cluster-secret", value_name = "KEY")]
    pub cluster_secret_key: String,

    /// The key, in the same Secret, of the scrape token (PW_METRICS_TOKEN):
    /// it opens the /metrics ports and nothing else, so Prometheus holds
    /// neither the clients' token nor the cluster secret. Needed unless
    /// both --status-port and --metrics-port are 0.
    #[arg(long, default_value = "metrics-token", value_name = "KEY")]
    pub metrics_token_key: String,

    /// Add a ServiceMonitor (monitoring.coreos.com/v1, the Prometheus
    /// operator's) that scrapes the server and every worker with the
    /// scrape token, and the headless Service NAME-metrics it selects,
    /// instead of the pods' prometheus.io/* annotations.
    #[arg(long)]
    pub service_monitor: bool,

    /// A label of the ServiceMonitor (repeatable), for the Prometheus that
    /// should pick it up (its serviceMonitorSelector), e.g.
    /// release=prometheus.
    #[arg(long = "service-monitor-label", value_name = "KEY=VALUE")]
    pub service_monitor_labels: Vec<String>,

    /// A Secret of type kubernetes.io/tls (tls.crt, tls.key, ca.crt, as
    /// cert-manager issues it) to mount in every pod: every gRPC port, the
    /// status page and the data plane then serve TLS, and each process
    /// checks the others against ca.crt. The certificate must name
    /// `*.NAME` (the head and the workers, which then advertise their DNS
    /// names) and NAME-server (the clients' Service).
    #[arg(long, value_name = "SECRET")]
    pub tls_secret: Option<String>,

    /// pw-server --heartbeat-ms: how often workers send heartbeats.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub heartbeat_ms: Option<u64>,

    /// pw-server --lease-ms: how long a silent worker keeps its lease.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub lease_ms: Option<u64>,

    /// pw-server --run-timeout: the longest a run may take.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub run_timeout: Option<u64>,

    /// pw-server --client-lease-ms: how long a silent client keeps its session.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub client_lease_ms: Option<u64>,

    /// pw-worker --connect-timeout: how long a worker tries to reach a
    /// server it lost before it exits (and its pod restarts it).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub connect_timeout: Option<u64>,

    /// pw-worker --data-plane: how workers send pieces to each other.
    #[arg(long, value_enum, value_name = "tcp|grpc")]
    pub data_plane: Option<DataPlane>,

    /// pw-worker --island: every worker joins this island (default: an
    /// island of its own each).
    #[arg(long, value_name = "NAME")]
    pub island: Option<String>,

    /// Each Job's backoffLimit: how many pod failures it survives.
    #[arg(long, default_value_t = 1_000_000, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=i32::MAX as i64))]
    pub backoff_limit: u32,

    /// The JobSet's failurePolicy.maxRestarts: how often the whole set is
    /// recreated after a job failed for good.
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=i32::MAX as i64))]
    pub max_restarts: u32,

    /// How the workers wait for the head to be ready.
    #[arg(long, value_enum, default_value = "in-order")]
    pub startup: Startup,

    /// A node label the worker pods require (repeatable), e.g. a GPU or
    /// TPU node pool's.
    #[arg(long = "node-selector", value_name = "KEY=VALUE")]
    pub node_selectors: Vec<String>,

    /// The CPU each worker pod requests (a Kubernetes quantity: 4, 500m).
    #[arg(long, value_name = "QUANTITY")]
    pub worker_cpu: Option<String>,

    /// The memory each worker pod requests (a Kubernetes quantity: 16Gi).
    #[arg(long, value_name = "QUANTITY")]
    pub worker_memory: Option<String>,

    /// Never put two workers on one node (required pod anti-affinity;
    /// default: preferred).
    #[arg(long)]
    pub one_per_node: bool,

    /// Leave out the NetworkPolicy that admits only this cluster's pods to
    /// the workers' ports.
    #[arg(long)]
    pub no_network_policy: bool,

    /// Write the manifests to FILE (all or nothing) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
}

impl Options {
    /// The Secret of the token.
    pub fn token_secret(&self) -> String {
        self.token_secret
            .clone()
            .unwrap_or_else(|| format!("{}-token", self.name))
    }

    /// The PJRT plugin's path in the worker image.
    pub fn plugin(&self) -> String {
        self.plugin
            .clone()
            .unwrap_or_else(|| self.platform.default_plugin())
    }

    /// The head pod's stable DNS name, within the namespace.
    pub fn head_host(&self) -> String {
        format!("{0}-{HEAD}-0-0.{0}", self.name)
    }

    /// A worker pod's stable DNS name, within the namespace (`index`: its
    /// completion index, or a `$(VAR)` that holds it).
    pub fn worker_host(&self, index: &str) -> String {
        format!("{0}-{WORKER}-0-{index}.{0}", self.name)
    }

    /// The client Service's name.
    pub fn service_name(&self) -> String {
        format!("{}-server", self.name)
    }

    /// The name of the Service that the ServiceMonitor selects.
    pub fn metrics_service_name(&self) -> String {
        format!("{}-metrics", self.name)
    }

    /// Whether any process serves `/metrics`.
    pub fn scraped(&self) -> bool {
        self.status_port != 0 || self.metrics_port != 0
    }

    /// The NetworkPolicy's name.
    pub fn policy_name(&self) -> String {
        format!("{}-workers", self.name)
    }

    /// Checks every option; the error names the flag and why.
    pub fn check(&self) -> Result<(), Error> {
        let flag = |flag: &'static str, value: &str, why: String| Error::Flag {
            flag,
            value: value.to_owned(),
            why,
        };
        if let Some(why) = names::dns1035_label(&self.name) {
            return Err(flag("name", &self.name, why));
        }
        if self.workers == 0 || self.devices_per_worker == 0 {
            return Err(flag(
                if self.workers == 0 {
                    "workers"
                } else {
                    "devices-per-worker"
                },
                "0",
                "must be at least 1".into(),
            ));
        }
        // The longest names Kubernetes derives from NAME must be labels too.
        let longest_pod = format!("{}-{WORKER}-0-{}{POD_SUFFIX}", self.name, self.workers - 1);
        for derived in [
            longest_pod,
            self.service_name(),
            self.metrics_service_name(),
        ] {
            if derived.len() > names::MAX_LABEL {
                return Err(flag(
                    "name",
                    &self.name,
                    format!(
                        "too long: the name {derived:?} made from it has {} characters, more than {} (shorten --name by {})",
                        derived.len(),
                        names::MAX_LABEL,
                        derived.len() - names::MAX_LABEL
                    ),
                ));
            }
        }
        if let Some(ns) = &self.namespace {
            if let Some(why) = names::dns1123_label(ns) {
                return Err(flag("namespace", ns, why));
            }
        }
        match self.workers.checked_mul(self.devices_per_worker) {
            Some(total) if total <= MAX_DEVICES => {}
            _ => {
                return Err(flag(
                    "devices-per-worker",
                    &self.devices_per_worker.to_string(),
                    format!(
                    "{} workers x {} devices is more than pw's {MAX_DEVICES} devices in a cluster",
                    self.workers, self.devices_per_worker
                ),
                ))
            }
        }
        for (name, image) in [
            ("image", Some(&self.image)),
            ("worker-image", self.worker_image.as_ref()),
        ] {
            if let Some(image) = image {
                if let Some(why) = word(image) {
                    return Err(flag(name, image, why));
                }
            }
        }
        let plugin = self.plugin();
        if let Some(why) = word(&plugin) {
            return Err(flag("plugin", &plugin, why));
        }
        if !plugin.starts_with('/') {
            return Err(flag(
                "plugin",
                &plugin,
                "must be an absolute path inside the worker image".into(),
            ));
        }
        if let Some(island) = &self.island {
            if let Some(why) = word(island) {
                return Err(flag("island", island, why));
            }
        }
        let secret = self.token_secret();
        if let Some(why) = names::dns1123_subdomain(&secret) {
            return Err(flag("token-secret", &secret, why));
        }
        if let Some(tls) = &self.tls_secret {
            if let Some(why) = names::dns1123_subdomain(tls) {
                return Err(flag("tls-secret", tls, why));
            }
        }
        if let Some(why) = names::secret_key(&self.token_key) {
            return Err(flag("token-key", &self.token_key, why));
        }
        if let Some(why) = names::secret_key(&self.cluster_secret_key) {
            return Err(flag("cluster-secret-key", &self.cluster_secret_key, why));
        }
        if let Some(why) = names::secret_key(&self.metrics_token_key) {
            return Err(flag("metrics-token-key", &self.metrics_token_key, why));
        }
        if [&self.token_key, &self.cluster_secret_key].contains(&&self.metrics_token_key) {
            return Err(flag(
                "metrics-token-key",
                &self.metrics_token_key,
                "must differ from --token-key and --cluster-secret-key: the scrape token opens only /metrics"
                    .into(),
            ));
        }
        if self.cluster_secret_key == self.token_key {
            return Err(flag(
                "cluster-secret-key",
                &self.cluster_secret_key,
                "must differ from --token-key: clients hold the token, never the cluster secret"
                    .into(),
            ));
        }
        if self.status_port == self.server_port {
            return Err(flag(
                "status-port",
                &self.status_port.to_string(),
                "is also --server-port: pw-server needs two ports".into(),
            ));
        }
        if self.metrics_port != 0 && [self.worker_port, self.data_port].contains(&self.metrics_port)
        {
            return Err(flag(
                "metrics-port",
                &self.metrics_port.to_string(),
                "is also --worker-port or --data-port: pw-worker needs a port for each".into(),
            ));
        }
        if self.service_monitor && !self.scraped() {
            return Err(flag(
                "service-monitor",
                "true",
                "has nothing to scrape: --status-port and --metrics-port are both 0".into(),
            ));
        }
        if !self.service_monitor && !self.service_monitor_labels.is_empty() {
            return Err(flag(
                "service-monitor-label",
                &self.service_monitor_labels[0],
                "labels the ServiceMonitor, which only --service-monitor adds".into(),
            ));
        }
        if self.data_port == self.worker_port {
            return Err(flag(
                "data-port",
                &self.data_port.to_string(),
                "is also --worker-port: pw-worker needs two ports".into(),
            ));
        }
        let heartbeat = self.heartbeat_ms.unwrap_or(DEFAULT_HEARTBEAT_MS);
        let lease = self.lease_ms.unwrap_or(DEFAULT_LEASE_MS);
        if lease <= heartbeat {
            return Err(flag(
                "lease-ms",
                &lease.to_string(),
                format!("must be longer than the heartbeat ({heartbeat} ms), or pw-server refuses to start"),
            ));
        }
        for (name, labels) in [
            ("node-selector", &self.node_selectors),
            ("service-monitor-label", &self.service_monitor_labels),
        ] {
            for label in labels {
                if let Some(why) = check_label(label) {
                    return Err(flag(name, label, why));
                }
            }
        }
        for (name, quantity) in [
            ("worker-cpu", &self.worker_cpu),
            ("worker-memory", &self.worker_memory),
        ] {
            if let Some(q) = quantity {
                if let Some(why) = check_quantity(q) {
                    return Err(flag(name, q, why));
                }
            }
        }
        Ok(())
    }
}

/// The objects of one pw cluster.
#[derive(Debug, Clone)]
pub struct Manifests {
    pub jobset: Object<JobSetSpec>,
    pub service: Object<ServiceSpec>,
    pub policy: Option<Object<NetworkPolicySpec>>,
    /// With `--service-monitor`: the headless Service of the metrics
    /// ports and the ServiceMonitor that selects it.
    pub monitor: Option<(Object<ServiceSpec>, Object<ServiceMonitorSpec>)>,
}

impl Manifests {
    /// The objects as one YAML stream (documents separated by `---`), with
    /// a header saying what it needs.
    pub fn to_yaml(&self, o: &Options) -> Result<String, Error> {
        let mut out = format!(
            "# pw cluster {name}: pw-server and {w} pw-worker(s) with {d} {p} device(s) each,\n\
             # as a JobSet (generated by pw-deploy {version}). It needs the JobSet controller\n\
             # and the Secret {secret} (keys {key}: the server's token, {cluster}: the secret\n\
             # pw-server and the workers share{scrape}){tls}; see docs/deploy.md.\n",
            name = o.name,
            w = o.workers,
            d = o.devices_per_worker,
            p = o.platform.name(),
            version = env!("CARGO_PKG_VERSION"),
            secret = o.token_secret(),
            key = o.token_key,
            cluster = o.cluster_secret_key,
            scrape = if o.scraped() {
                format!(",\n# {}: the scrape token of the /metrics ports", o.metrics_token_key)
            } else {
                String::new()
            },
            tls = match &o.tls_secret {
                Some(t) => format!(
                    ",\n# and the TLS Secret {t} (tls.crt, tls.key, ca.crt; the certificate names *.{0}\n# and {0}-server)",
                    o.name
                ),
                None => String::new(),
            },
        );
        let yaml = |e: serde_yaml_ng::Error| Error::Yaml(e.to_string());
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(&self.jobset).map_err(yaml)?);
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(&self.service).map_err(yaml)?);
        if let Some(policy) = &self.policy {
            out.push_str("---\n");
            out.push_str(&serde_yaml_ng::to_string(policy).map_err(yaml)?);
        }
        if let Some((service, monitor)) = &self.monitor {
            out.push_str("---\n");
            out.push_str(&serde_yaml_ng::to_string(service).map_err(yaml)?);
            out.push_str("---\n");
            out.push_str(&serde_yaml_ng::to_string(monitor).map_err(yaml)?);
        }
        Ok(out)
    }
}

/// Builds the objects of the cluster `o` describes (checked first).
pub fn manifests(o: &Options) -> Result<Manifests, Error> {
    o.check()?;
    let head = job(o, HEAD, 1, server_pod(o));
    let mut workers = job(o, WORKER, o.workers, worker_pod(o));
    let startup_policy = match o.startup {
        Startup::InOrder => Some(StartupPolicy {
            startup_policy_order: "InOrder",
        }),
        Startup::DependsOn => {
            workers.depends_on = vec![DependsOn {
                name: HEAD.into(),
                status: "Ready",
            }];
            None
        }
    };
    let jobset = Object {
        api_version: "jobset.x-k8s.io/v1alpha2",
        kind: "JobSet",
        metadata: metadata(o, o.name.clone(), None),
        spec: JobSetSpec {
            network: Network {
                enable_dns_hostnames: true,
                subdomain: o.name.clone(),
                publish_not_ready_addresses: true,
            },
            startup_policy,
            // pw-server exits 0 only when asked to stop: then the cluster
            // is done, workers included.
            success_policy: SuccessPolicy {
                operator: "Any",
                target_replicated_jobs: vec![HEAD.into()],
            },
            failure_policy: FailurePolicy {
                max_restarts: o.max_restarts,
            },
            // The head first: InOrder starts them as listed.
            replicated_jobs: vec![head, workers],
        },
    };
    let mut ports = vec![service_port("grpc", o.server_port, "grpc")];
    if o.status_port != 0 {
        ports.push(service_port("http", o.status_port, "http"));
    }
    let service = Object {
        api_version: "v1",
        kind: "Service",
        metadata: metadata(o, o.service_name(), Some("server")),
        spec: ServiceSpec {
            kind: "ClusterIP",
            cluster_ip: None,
            selector: selector(o, "server"),
            ports,
        },
    };
    let policy = (!o.no_network_policy).then(|| Object {
        api_version: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: metadata(o, o.policy_name(), Some("worker")),
        spec: NetworkPolicySpec {
            pod_selector: LabelSelector {
                match_labels: selector(o, "worker"),
            },
            policy_types: vec!["Ingress"],
            ingress: policy_rules(o),
        },
    });
    Ok(Manifests {
        jobset,
        service,
        policy,
        monitor: o
            .service_monitor
            .then(|| (metrics_service(o), service_monitor(o))),
    })
}

/// Who may reach a worker: the pods of this cluster its service and data
/// ports, anyone its metrics port (which asks for a bearer credential).
fn policy_rules(o: &Options) -> Vec<IngressRule> {
    let ports = |ports: &[u16]| {
        ports
            .iter()
            .map(|&port| PolicyPort {
                protocol: "TCP",
                port,
            })
            .collect()
    };
    let mut rules = vec![IngressRule {
        from: vec![Peer {
            pod_selector: LabelSelector {
                match_labels: instance(o),
            },
        }],
        ports: ports(&[o.worker_port, o.data_port]),
    }];
    if o.metrics_port != 0 {
        rules.push(IngressRule {
            from: Vec::new(),
            ports: ports(&[o.metrics_port]),
        });
    }
    rules
}

/// The Service of every `/metrics` port of the cluster, headless (one
/// endpoint per pod) so Prometheus scrapes each process: the server's
/// status page (port `server-metrics`) and each worker's metrics port
/// (`worker-metrics`). A pod joins the endpoints of the port it names.
fn metrics_service(o: &Options) -> Object<ServiceSpec> {
    let mut ports = Vec::new();
    if o.status_port != 0 {
        ports.push(service_port("server-metrics", o.status_port, "http"));
    }
    if o.metrics_port != 0 {
        ports.push(service_port("worker-metrics", o.metrics_port, "metrics"));
    }
    Object {
        api_version: "v1",
        kind: "Service",
        metadata: metadata(o, o.metrics_service_name(), Some("metrics")),
        spec: ServiceSpec {
            kind: "ClusterIP",
            cluster_ip: Some("None"),
            selector: instance(o),
            ports,
        },
    }
}

/// The Prometheus operator's ServiceMonitor of [`metrics_service`]: each
/// port scraped with the scrape token and, with `--tls-secret`, over
/// HTTPS checked against the cluster's CA for the name the certificate
/// holds (targets are pod addresses).
fn service_monitor(o: &Options) -> Object<ServiceMonitorSpec> {
    let endpoint = |port: &str, host: String| MonitorEndpoint {
        port: port.into(),
        path: "/metrics",
        scheme: scheme(o),
        authorization: MonitorAuthorization {
            kind: "Bearer",
            credentials: SecretKeyRef {
                name: o.token_secret(),
                key: o.metrics_token_key.clone(),
            },
        },
        tls_config: o.tls_secret.as_ref().map(|secret| MonitorTls {
            ca: SecretOrConfigMap {
                secret: SecretKeyRef {
                    name: secret.clone(),
                    key: "ca.crt".into(),
                },
            },
            server_name: host,
        }),
    };
    let mut endpoints = Vec::new();
    if o.status_port != 0 {
        endpoints.push(endpoint("server-metrics", o.head_host()));
    }
    if o.metrics_port != 0 {
        endpoints.push(endpoint("worker-metrics", o.worker_host("0")));
    }
    let mut metadata = metadata(o, o.name.clone(), Some("metrics"));
    metadata
        .labels
        .extend(split_labels(&o.service_monitor_labels));
    Object {
        api_version: "monitoring.coreos.com/v1",
        kind: "ServiceMonitor",
        metadata,
        spec: ServiceMonitorSpec {
            selector: LabelSelector {
                match_labels: selector(o, "metrics"),
            },
            endpoints,
        },
    }
}

/// The scheme of the `/metrics` ports: HTTPS with `--tls-secret`.
fn scheme(o: &Options) -> &'static str {
    if o.tls_secret.is_some() {
        "https"
    } else {
        "http"
    }
}

/// `prometheus.io/*`: the annotations Prometheus' usual pod scrape
/// configuration reads (none with `--service-monitor`, or without a port).
fn scrape_annotations(o: &Options, port: u16) -> Map {
    if o.service_monitor || port == 0 {
        return Map::new();
    }
    [
        ("prometheus.io/scrape", "true".to_owned()),
        ("prometheus.io/port", port.to_string()),
        ("prometheus.io/path", "/metrics".to_owned()),
        ("prometheus.io/scheme", scheme(o).to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// A replicated job of one indexed Job with `pods` pods of `pod`.
fn job(o: &Options, name: &str, pods: u32, pod: PodTemplate) -> ReplicatedJob {
    ReplicatedJob {
        name: name.into(),
        replicas: 1,
        depends_on: Vec::new(),
        template: JobTemplate {
            spec: JobSpec {
                completion_mode: "Indexed",
                completions: pods,
                parallelism: pods,
                backoff_limit: o.backoff_limit,
                template: pod,
            },
        },
    }
}

/// The head's pod: pw-server.
fn server_pod(o: &Options) -> PodTemplate {
    let mut args = vec![
        "--listen".to_owned(),
        format!("0.0.0.0:{}", o.server_port),
        "--compile-cache".into(),
        COMPILE_CACHE.into(),
    ];
    match o.platform {
        // The server compiles with the workers' plugin: both images carry it.
        Platform::Cpu => args.extend(["--plugin".to_owned(), o.plugin()]),
        // The head has no accelerator: the workers compile.
        Platform::Cuda | Platform::Tpu => args.push("--no-compile".into()),
    }
    if o.status_port != 0 {
        args.extend(["--http".to_owned(), format!("0.0.0.0:{}", o.status_port)]);
    }
    for (flag, value) in [
        ("--heartbeat-ms", o.heartbeat_ms),
        ("--lease-ms", o.lease_ms),
        ("--run-timeout", o.run_timeout),
        ("--client-lease-ms", o.client_lease_ms),
    ] {
        if let Some(v) = value {
            args.extend([flag.to_owned(), v.to_string()]);
        }
    }
    let mut env = vec![
        secret_env("PW_TOKEN", o, &o.token_key),
        secret_env("PW_CLUSTER_SECRET", o, &o.cluster_secret_key),
    ];
    env.extend(scrape_env(o));
    env.extend(tls_env(o));
    let mut ports = vec![port("grpc", o.server_port)];
    if o.status_port != 0 {
        ports.push(port("http", o.status_port));
    }
    let mut volume_mounts = vec![VolumeMount {
        name: "compile-cache".into(),
        mount_path: COMPILE_CACHE.into(),
        read_only: false,
    }];
    volume_mounts.extend(tls_mount(o));
    let container = Container {
        name: "pw-server".into(),
        image: o.image.clone(),
        command: vec![SERVER_BIN.into()],
        args,
        env,
        ports,
        readiness_probe: Some(probe("grpc")),
        resources: Resources::default(),
        volume_mounts,
    };
    let mut volumes = vec![Volume {
        name: "compile-cache".into(),
        empty_dir: Some(EmptyDir {}),
        secret: None,
    }];
    volumes.extend(tls_volume(o));
    PodTemplate {
        metadata: Metadata {
            labels: labels(o, Some("server")),
            annotations: scrape_annotations(o, o.status_port),
            ..Metadata::default()
        },
        spec: PodSpec {
            restart_policy: "OnFailure",
            node_selector: Map::new(),
            affinity: None,
            containers: vec![container],
            volumes,
            security_context: tls_group(o),
        },
    }
}

/// A worker's pod: pw-worker.
fn worker_pod(o: &Options) -> PodTemplate {
    let mut args = vec![
        "--controller".to_owned(),
        format!("{}:{}", o.head_host(), o.server_port),
        "--listen".into(),
        format!("0.0.0.0:{}", o.worker_port),
        "--advertise".into(),
        // Over TLS, the name the certificate holds; else the pod's address.
        match o.tls_secret {
            Some(_) => format!("{}:{}", o.worker_host("$(POD_INDEX)"), o.worker_port),
            None => format!("$(POD_IP):{}", o.worker_port),
        },
        "--data-port".into(),
        o.data_port.to_string(),
        "--plugin".into(),
        o.plugin(),
    ];
    if o.platform == Platform::Cpu {
        args.extend(["--devices".to_owned(), o.devices_per_worker.to_string()]);
    }
    if let Some(s) = o.connect_timeout {
        args.extend(["--connect-timeout".to_owned(), s.to_string()]);
    }
    if let Some(d) = o.data_plane {
        args.extend(["--data-plane".to_owned(), d.name().to_owned()]);
    }
    if let Some(island) = &o.island {
        args.extend(["--island".to_owned(), island.clone()]);
    }
    let mut ports = vec![port("worker", o.worker_port), port("data", o.data_port)];
    if o.metrics_port != 0 {
        args.extend([
            "--metrics".to_owned(),
            format!("0.0.0.0:{}", o.metrics_port),
        ]);
        ports.push(port("metrics", o.metrics_port));
    }
    let mut resources = Resources::default();
    if let Some(resource) = o.platform.resource() {
        resources
            .limits
            .insert(resource.into(), o.devices_per_worker.to_string());
    }
    if let Some(cpu) = &o.worker_cpu {
        resources.requests.insert("cpu".into(), cpu.clone());
    }
    if let Some(memory) = &o.worker_memory {
        resources.requests.insert("memory".into(), memory.clone());
    }
    let mut env = vec![match o.tls_secret {
        Some(_) => field_env("POD_INDEX", COMPLETION_INDEX),
        None => field_env("POD_IP", "status.podIP"),
    }];
    env.push(secret_env("PW_CLUSTER_SECRET", o, &o.cluster_secret_key));
    env.extend(scrape_env(o));
    env.extend(tls_env(o));
    let container = Container {
        name: "pw-worker".into(),
        image: o.worker_image.clone().unwrap_or_else(|| o.image.clone()),
        command: vec![WORKER_BIN.into()],
        args,
        env,
        ports,
        readiness_probe: Some(probe("worker")),
        resources,
        volume_mounts: tls_mount(o).into_iter().collect(),
    };
    let term = PodAffinityTerm {
        label_selector: LabelSelector {
            match_labels: selector(o, "worker"),
        },
        topology_key: "kubernetes.io/hostname".into(),
    };
    let anti = if o.one_per_node {
        PodAntiAffinity {
            required: vec![term],
            preferred: Vec::new(),
        }
    } else {
        PodAntiAffinity {
            required: Vec::new(),
            preferred: vec![WeightedPodAffinityTerm {
                weight: 100,
                pod_affinity_term: term,
            }],
        }
    };
    PodTemplate {
        metadata: Metadata {
            labels: labels(o, Some("worker")),
            annotations: scrape_annotations(o, o.metrics_port),
            ..Metadata::default()
        },
        spec: PodSpec {
            restart_policy: "OnFailure",
            node_selector: split_labels(&o.node_selectors),
            affinity: Some(Affinity {
                pod_anti_affinity: anti,
            }),
            containers: vec![container],
            volumes: tls_volume(o).into_iter().collect(),
            security_context: tls_group(o),
        },
    }
}

/// The annotation of an indexed Job's pod that holds its index.
const COMPLETION_INDEX: &str = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

/// `name`, read from the pod's field `path` (the downward API).
fn field_env(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: None,
        value_from: Some(EnvSource {
            field_ref: Some(FieldRef {
                field_path: path.into(),
            }),
            ..EnvSource::default()
        }),
    }
}

/// `PW_TLS_CERT`, `PW_TLS_KEY` and `PW_TLS_CA`: the files of the mounted
/// `--tls-secret` (none without it).
fn tls_env(o: &Options) -> Vec<EnvVar> {
    if o.tls_secret.is_none() {
        return Vec::new();
    }
    [
        ("PW_TLS_CERT", "tls.crt"),
        ("PW_TLS_KEY", "tls.key"),
        ("PW_TLS_CA", "ca.crt"),
    ]
    .into_iter()
    .map(|(name, file)| EnvVar {
        name: name.into(),
        value: Some(format!("{TLS_DIR}/{file}")),
        value_from: None,
    })
    .collect()
}

fn tls_mount(o: &Options) -> Option<VolumeMount> {
    o.tls_secret.as_ref().map(|_| VolumeMount {
        name: "tls".into(),
        mount_path: TLS_DIR.into(),
        read_only: true,
    })
}

/// With `--tls-secret`, the pod's volumes belong to the images' group, so
/// the images' user (not root) reads the key.
fn tls_group(o: &Options) -> Option<PodSecurityContext> {
    o.tls_secret.as_ref().map(|_| PodSecurityContext {
        fs_group: IMAGE_GROUP,
    })
}

fn tls_volume(o: &Options) -> Option<Volume> {
    o.tls_secret.as_ref().map(|secret| Volume {
        name: "tls".into(),
        empty_dir: None,
        secret: Some(SecretVolume {
            secret_name: secret.clone(),
            default_mode: 0o440,
        }),
    })
}

/// `PW_METRICS_TOKEN`, the scrape token (none when nothing is scraped).
fn scrape_env(o: &Options) -> Option<EnvVar> {
    o.scraped()
        .then(|| secret_env("PW_METRICS_TOKEN", o, &o.metrics_token_key))
}

/// `name`, read from key `key` of the cluster's Secret.
fn secret_env(name: &str, o: &Options, key: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: None,
        value_from: Some(EnvSource {
            secret_key_ref: Some(SecretKeyRef {
                name: o.token_secret(),
                key: key.to_owned(),
            }),
            ..EnvSource::default()
        }),
    }
}

fn service_port(name: &str, port: u16, target: &str) -> ServicePort {
    ServicePort {
        name: name.into(),
        port,
        target_port: target.into(),
        protocol: "TCP",
    }
}

fn port(name: &str, port: u16) -> ContainerPort {
    ContainerPort {
        name: name.into(),
        container_port: port,
        protocol: "TCP",
    }
}

/// Ready once the named port accepts connections.
fn probe(port: &str) -> Probe {
    Probe {
        tcp_socket: TcpSocket { port: port.into() },
        period_seconds: 2,
        failure_threshold: 3,
    }
}

fn metadata(o: &Options, name: String, component: Option<&str>) -> Metadata {
    Metadata {
        name: Some(name),
        namespace: o.namespace.clone(),
        labels: labels(o, component),
        ..Metadata::default()
    }
}

/// The labels of every object and pod of the cluster.
fn labels(o: &Options, component: Option<&str>) -> Map {
    let mut m = instance(o);
    m.insert("app.kubernetes.io/name".into(), "pw".into());
    m.insert("app.kubernetes.io/managed-by".into(), "pw-deploy".into());
    if let Some(c) = component {
        m.insert("app.kubernetes.io/component".into(), c.into());
    }
    m
}

/// Selects the pods of the cluster.
fn instance(o: &Options) -> Map {
    Map::from([("app.kubernetes.io/instance".into(), o.name.clone())])
}

/// Selects the pods of one component (`server`, `worker`) of the cluster.
fn selector(o: &Options, component: &str) -> Map {
    let mut m = instance(o);
    m.insert("app.kubernetes.io/component".into(), component.into());
    m
}

/// Returns why `label` is not `KEY=VALUE` with a label's key and value.
fn check_label(label: &str) -> Option<String> {
    let Some((key, value)) = label.split_once('=') else {
        return Some("is not KEY=VALUE".into());
    };
    if let Some(why) = names::label_key(key) {
        return Some(format!("the label key {why}"));
    }
    names::label_value(value).map(|why| format!("the label value {why}"))
}

/// `KEY=VALUE` labels (checked by [`check_label`]) as a map.
fn split_labels(labels: &[String]) -> Map {
    labels
        .iter()
        .filter_map(|s| s.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Returns why `s` cannot be one argument or image name: empty, with
/// white space or control characters, or with `$` (Kubernetes expands
/// `$(VAR)` in a container's arguments).
fn word(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("is empty".into());
    }
    if let Some(c) = s.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Some(format!(
            "has {c:?}; white space and control characters are not allowed"
        ));
    }
    if s.contains('$') {
        return Some("has '$', which Kubernetes would expand as $(VAR)".into());
    }
    None
}

/// Returns why `q` is not a Kubernetes quantity (a decimal number with an
/// optional suffix: m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei).
fn check_quantity(q: &str) -> Option<String> {
    let digits = q
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(q.len(), |(i, _)| i);
    let (number, suffix) = q.split_at(digits);
    let number_ok = !number.is_empty()
        && number.matches('.').count() <= 1
        && !number.starts_with('.')
        && !number.ends_with('.');
    const SUFFIXES: [&str; 14] = [
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    if number_ok && SUFFIXES.contains(&suffix) {
        None
    } else {
        Some("is not a Kubernetes quantity (a number with an optional suffix such as m, Gi: 4, 500m, 16Gi)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        for ok in ["4", "500m", "16Gi", "1.5", "2M"] {
            assert_eq!(check_quantity(ok), None, "{ok}");
        }
        for bad in ["", "Gi", "1.2.3", ".5", "4 cores", "16gb", "-1"] {
            assert!(check_quantity(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn words() {
        assert_eq!(word("pw-worker:1.0"), None);
        assert!(word("").is_some());
        assert!(word("a b").is_some());
        assert!(word("$(HOME)/x").is_some());
    }
}
