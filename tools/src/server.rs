//! pw-server: the controller, with the resource manager, serving workers
//! and clients on one address (see `docs/cluster.md`).

use crate::{bytecode_check, lower};
use clap::Parser;
use pw_compiler::schedule::Policy;
use pw_controller::{api, service::ControllerService, Config, Controller, Limits, Lowerer};
use pw_core::diagnostic::Diagnostics;
use pw_core::{plan::Plan, Topology};
use pw_exec::cache::DiskCache;
use pw_pjrt::Plugin;
use pw_wire::{self as wire, net, proto, MAX_MESSAGE_BYTES};
use std::{io::Write, path::PathBuf, sync::Arc, time::Duration};

/// Command line of pw-server.
#[derive(Parser, Debug)]
#[command(
    name = "pw-server",
    version,
    about = "The pw controller: registers pw-workers, lowers programs onto them, compiles each computation once and runs programs across them",
    after_help = "Examples:\n  \
        pw-server --listen 127.0.0.1:29000\n  \
        pw-worker --controller 127.0.0.1:29000 --devices 2   # on every host\n  \
        pw-run examples/pipeline.mlir examples/pipeline/input_*.npy --server 127.0.0.1:29000\n  \
        PW_TOKEN=$(cat token) PW_CLUSTER_SECRET=$(cat cluster-secret) pw-server --listen 0.0.0.0:29000   # reachable from other hosts\n  \
        pw-server --http 8080          # the status page on http://127.0.0.1:8080/, metrics on /metrics\n  \
        pw-server --log-format json    # one JSON object per log line\n  \
        pw-server --otlp-endpoint http://127.0.0.1:4317   # session traces to an OpenTelemetry collector\n  \
        pw-server --max-recoveries 0   # a lost worker fails the run at once\n  \
        pw-server --state-dir /var/lib/pw --checkpoint-dir /shared/ckpt   # sessions outlive a restart of the server\n  \
        pw-status --server 127.0.0.1:29000   # the same in a terminal\n\n\
        The server prints `pw-server: listening on HOST:PORT` once it serves. Set\n\
        PW_LOG=debug for more detail. Stop it with SIGINT or SIGTERM."
)]
pub struct Cli {
    /// Serve workers and clients here (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:29000", value_name = "HOST:PORT")]
    pub listen: String,

    /// Serve the status page (`/`), its JSON (`/api/status`) and
    /// Prometheus metrics (`/metrics`) here: what is queued on every
    /// device and what each did lately, the runs, stalled ones with their
    /// chain of unmet dependencies, the sessions. A bare PORT is on loopback; give a host
    /// (0.0.0.0:PORT) to serve others (then --token is needed). With
    /// --tls-cert it is served over HTTPS. `/metrics` also admits the
    /// scrape token PW_METRICS_TOKEN (`Authorization: Bearer`), which
    /// opens nothing else.
    #[arg(long, value_name = "HOST:PORT|PORT")]
    pub http: Option<String>,

    /// How log lines are written to standard error: `text`, or `json` (one
    /// object per line, for log shippers). PW_LOG sets the level.
    #[arg(
        long,
        env = "PW_LOG_FORMAT",
        default_value = "text",
        value_name = "text|json"
    )]
    pub log_format: pw_wire::process::LogFormat,

    /// A run whose progress did not change for this long is flagged
    /// stalled (status page, pw-status), in milliseconds.
    #[arg(long, default_value_t = 10000, value_name = "MS")]
    pub stall_ms: u64,

    /// The PJRT plugin the controller compiles with (default: the one
    /// pw-run would use). Workers whose plugin differs compile for
    /// themselves.
    #[arg(long, value_name = "PATH", conflicts_with = "no_compile")]
    pub plugin: Option<PathBuf>,

    /// Never compile here: one worker of each plugin compiles, the others
    /// receive its executables.
    #[arg(long)]
    pub no_compile: bool,

    /// Keep compiled executables here (default: $PW_COMPILE_CACHE, else
    /// ~/.cache/pw/executables).
    #[arg(long, value_name = "DIR")]
    pub compile_cache: Option<PathBuf>,

    /// How often workers send heartbeats, in milliseconds.
    #[arg(long, default_value_t = 250, value_name = "MS")]
    pub heartbeat_ms: u64,

    /// How long a silent worker keeps its lease, in milliseconds.
    #[arg(long, default_value_t = 1500, value_name = "MS")]
    pub lease_ms: u64,

    /// How many times one run may recover from lost workers: their devices
    /// move onto healthy ones and only what was lost runs again. 0: a lost
    /// worker fails the run at once.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub max_recoveries: u32,

    /// How long a recovery waits for a worker able to take the lost
    /// devices to register, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub capacity_wait_ms: u64,

    /// How many MiB of checkpoints a run keeps on each worker: values one
    /// worker sends another, kept at the sender until the run ends instead
    /// of freed once sent, so that losing the receiver replays only what
    /// was lost after them (deepest lineage per byte first; 0: keep none,
    /// a loss may replay back to the inputs).
    #[arg(long, default_value_t = 512, value_name = "MIB")]
    pub checkpoint_mb: u64,

    /// How many MiB of the host arrays sessions upload the server keeps so
    /// that a session array lost with its worker can be computed again
    /// from its lineage (0: keep none; such arrays are then lost for good).
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub lineage_budget_mb: u64,

    /// Write a Chrome/Perfetto trace of each session (every call's steps on
    /// each device, from the session's opening) to DIR/session-ID.json when
    /// it closes.
    #[arg(long, value_name = "DIR")]
    pub trace_sessions: Option<PathBuf>,

    /// Where sessions save checkpoints and load them from
    /// (`client.save(path, ...)`: DIR/path). Every worker must reach DIR
    /// at the same path (a shared filesystem): each writes and reads the
    /// shards it holds. Without it, sessions cannot save or load.
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: Option<PathBuf>,

    /// Keep the server's state in a journal under DIR (DIR/journal.redb):
    /// sessions with their keys and slices, their executables' programs,
    /// the workers' device ids. A server restarted with the same DIR takes
    /// its sessions back: workers keep sessions' arrays while they look
    /// for it, and clients reconnect with their session's key. A journal
    /// it cannot read is refused (never silently started afresh).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// How long a session taken from the journal waits for its client to
    /// reconnect before it is closed, in seconds.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    pub reattach_window_s: u64,

    /// How long a session taken from the journal waits for the workers of
    /// its slice to register again, in seconds; it then goes on without
    /// the missing ones (topped up from free devices, what they held
    /// computed again from its lineage).
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub reattach_workers_s: u64,

    /// Send each session's trace (the spans --trace-sessions writes) to
    /// this OpenTelemetry collector over OTLP/gRPC as they are recorded,
    /// one trace per session. Off unless given.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// The longest a run may take, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub run_timeout: u64,

    /// How long a silent client keeps its session (its devices and
    /// arrays), in milliseconds.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub client_lease_ms: u64,

    /// The most bytes one request may upload, in MiB.
    #[arg(long, default_value_t = 16 << 10, value_name = "MIB")]
    pub max_request_mb: u64,

    /// The most bytes a session's transfers through the server (uploads,
    /// fetches, IFRT host buffers) may have in flight at once, in MiB.
    #[arg(long, default_value_t = 32 << 10, value_name = "MIB")]
    pub session_transfer_mb: u64,

    /// The most device memory a session's arrays may hold, every shard
    /// counted, in MiB (0: no limit but the devices').
    #[arg(long, default_value_t = 0, value_name = "MIB")]
    pub session_device_mb: u64,

    /// The most arrays a session may hold.
    #[arg(long, default_value_t = 1 << 20, value_name = "N")]
    pub session_arrays: usize,

    /// The most calls of one session that may run at once: a client that
    /// sends more is held back until some finish (back-pressure).
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_calls_in_flight: u64,

    /// The most clients that may wait in line for devices.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_waiting: usize,

    /// Close a session (a client's, or JAX's through the proxy) that made
    /// no request for this many seconds while others wait for devices (0:
    /// never).
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub idle_timeout_s: u64,

    /// Stop when process PID exits (for a server started by one client,
    /// such as `pw.connect()`'s local server).
    #[arg(long, value_name = "PID")]
    pub exit_with: Option<u32>,

    /// Serve only clients that present this token (they read it from
    /// PW_TOKEN; JAX through the proxy sends it as the pw plugin's
    /// initialization data). Needed to listen on anything but loopback.
    #[arg(long, env = "PW_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,

    /// The secret this server and its workers share (workers present it to
    /// register, the server to every worker, workers to each other); no
    /// client needs it. Needed with --token, and to listen on anything but
    /// loopback.
    #[arg(
        long,
        env = "PW_CLUSTER_SECRET",
        hide_env_values = true,
        value_name = "SECRET"
    )]
    pub cluster_secret: Option<String>,

    /// PEM certificate this process serves its gRPC port and the status
    /// page (HTTPS) with (TLS); with --tls-key.
    #[arg(long, env = "PW_TLS_CERT", value_name = "PEM")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key of --tls-cert.
    #[arg(long, env = "PW_TLS_KEY", value_name = "PEM")]
    pub tls_key: Option<PathBuf>,

    /// PEM of the CA that signed the certificates of the pw ports this
    /// process calls: it then calls them over TLS only.
    #[arg(long, env = "PW_TLS_CA", value_name = "PEM")]
    pub tls_ca: Option<PathBuf>,
}

/// Lowers with pw's pipeline (the MLIR side of the controller).
struct PipelineLowerer;

impl Lowerer for PipelineLowerer {
    fn lower(
        &self,
        name: &str,
        source: &[u8],
        topology: &Topology,
        schedule: Option<&str>,
    ) -> Result<(Plan, String), Diagnostics> {
        let schedule = schedule
            .map(Policy::parse)
            .transpose()
            .map_err(|e| refused(name, e.to_string()))?;
        let description = || {
            let devices: usize = topology.islands.iter().map(|i| i.devices.len()).sum();
            let kinds: Vec<&str> = topology.islands.iter().map(|i| i.kind.as_str()).collect();
            Ok((
                topology.clone(),
                format!(
                    "{} islands of {devices} {} devices (the registered workers)",
                    topology.islands.len(),
                    kinds.first().copied().unwrap_or("?")
                ),
            ))
        };
        // A client's bytecode is read by a child process first (it may be
        // crafted to crash MLIR's reader); pw's checksum is checked before,
        // so damaged bytecode gets its own error without a process.
        if pw_dialect::is_bytecode(source) && pw_dialect::bytecode::check(source).is_ok() {
            bytecode_check::survives(source).map_err(|e| refused(name, e))?;
        }
        let (plan, how) = lower::plan_of(name, source, schedule, &description)?;
        Ok((plan, how.unwrap_or_default()))
    }
}

/// The diagnostics of program `name` refused before it was parsed.
fn refused(name: &str, message: String) -> Diagnostics {
    let mut d = Diagnostics {
        name: name.to_owned(),
        text: String::new(),
        items: Vec::new(),
    };
    d.error(message);
    d
}

/// How long pw-server waits, once asked to stop, for its connections to
/// close.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Runs pw-server with `args`; returns the exit code.
pub fn main(args: Vec<std::ffi::OsString>) -> i32 {
    if args.get(1).is_some_and(|a| a == bytecode_check::FLAG) {
        return bytecode_check::child();
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    pw_wire::process::init("info", cli.log_format);
    match serve(cli) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pw-server: error: {e}");
            1
        }
    }
}

fn serve(cli: Cli) -> Result<(), String> {
    let http = cli
        .http
        .as_deref()
        .map(|a| pw_wire::net::listen_address(a, "--http"))
        .transpose()?;
    if cli.lease_ms <= cli.heartbeat_ms {
        return Err("--lease-ms must be longer than --heartbeat-ms".into());
    }
    if let Some(endpoint) = cli.otlp_endpoint.as_deref().filter(|e| !e.is_empty()) {
        pw_controller::otlp::check_endpoint(endpoint)?;
    }
    // Workers are told absolute paths under it.
    let checkpoint_dir = cli
        .checkpoint_dir
        .as_deref()
        .map(|d| {
            std::fs::create_dir_all(d)
                .and_then(|()| d.canonicalize())
                .map_err(|e| format!("--checkpoint-dir {}: {e}", d.display()))
        })
        .transpose()?;
    let plugin = if cli.no_compile {
        None
    } else {
        match &cli.plugin {
            Some(p) => Some(p.clone()),
            None => Plugin::discover_path().ok(),
        }
    };
    let config = Config {
        plugin,
        compile_cache: DiskCache::open(cli.compile_cache.as_deref()).map(|d| d.dir().to_path_buf()),
        heartbeat: Duration::from_millis(cli.heartbeat_ms),
        lease: Duration::from_millis(cli.lease_ms),
        run_timeout: Duration::from_secs(cli.run_timeout),
        client_lease: Duration::from_millis(cli.client_lease_ms.max(1)),
        stall: Duration::from_millis(cli.stall_ms),
        max_recoveries: cli.max_recoveries,
        capacity_wait: Duration::from_millis(cli.capacity_wait_ms),
        checkpoint_budget: cli.checkpoint_mb.saturating_mul(1 << 20),
        lineage_budget: cli.lineage_budget_mb.saturating_mul(1 << 20),
        trace_sessions: cli.trace_sessions.clone(),
        checkpoint_dir,
        otlp_endpoint: cli.otlp_endpoint.clone().filter(|e| !e.is_empty()),
        state_dir: cli.state_dir.clone(),
        reattach_window: Duration::from_secs(cli.reattach_window_s.max(1)),
        reattach_workers: Duration::from_secs(cli.reattach_workers_s),
        limits: Limits {
            request_bytes: cli.max_request_mb.saturating_mul(1 << 20),
            session_transfer_bytes: cli.session_transfer_mb.saturating_mul(1 << 20),
            session_device_bytes: cli.session_device_mb.saturating_mul(1 << 20),
            session_arrays: cli.session_arrays,
            calls_in_flight: cli.max_calls_in_flight,
            waiting: cli.max_waiting,
            idle: (cli.idle_timeout_s > 0).then(|| Duration::from_secs(cli.idle_timeout_s)),
        },
    };
    let token = cli.token.clone().filter(|t| !t.is_empty());
    let cluster_secret = cli
        .cluster_secret
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(|s| pw_wire::auth::Secret::new(s, "--cluster-secret"))
        .transpose()?;
    if token.is_some() && cluster_secret.is_none() {
        return Err("--token protects the clients' calls, but the workers' ports would stay open to anyone who can reach them: give --cluster-secret (or PW_CLUSTER_SECRET) too, to pw-server and every pw-worker".into());
    }
    pw_wire::auth::metrics_token()?;
    let secured = cluster_secret.is_some();
    pw_wire::tls::init(&pw_wire::tls::Files {
        cert: cli.tls_cert.clone(),
        key: cli.tls_key.clone(),
        ca: cli.tls_ca.clone(),
    })
    .map_err(|e| e.to_string())?;
    pw_wire::auth::set_cluster_secret(cluster_secret);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        if (token.is_none() || !secured) && !net::is_loopback(&cli.listen).await {
            return Err(format!(
                "--listen {}: not a loopback address, so anyone who can reach it could use the devices; give --token (or PW_TOKEN) for clients and --cluster-secret (or PW_CLUSTER_SECRET) for workers",
                cli.listen
            ));
        }
        if let Some(http) = http {
            if token.is_none() && !http.ip().is_loopback() {
                return Err(format!(
                    "--http {http}: not a loopback address, and the status page shows every session; give --token (or PW_TOKEN): the page then asks for it"
                ));
            }
        }
        let listener = net::bind(&cli.listen).await.map_err(|e| e.to_string())?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        let controller =
            Controller::new(config, Arc::new(PipelineLowerer)).map_err(|e| format!("--state-dir: {e}"))?;
        tokio::spawn(pw_controller::registry::watch_leases(controller.clone()));
        tokio::spawn(pw_controller::sessions::line::reclaim_idle(controller.clone()));
        tokio::spawn(pw_controller::otlp::export(controller.clone()));
        if let Some(http) = http {
            let listener = tokio::net::TcpListener::bind(http)
                .await
                .map_err(|e| format!("--http {http}: cannot listen there: {e}"))?;
            let bound = listener.local_addr().map_err(|e| e.to_string())?;
            let tls = pw_wire::tls::http_server().map_err(|e| e.to_string())?;
            let scheme = if tls.is_some() { "https" } else { "http" };
            tokio::spawn(crate::status::serve_http(
                listener,
                controller.clone(),
                token.clone(),
                tls,
            ));
            println!("pw-server: status page on {scheme}://{bound}/");
        }
        // JAX's proxy client sends no headers of its own: the token comes
        // in the session's initialization data (the pw JAX plugin puts it
        // there), and the proxy checks it.
        let proxy = pw_proxy::ProxyService::new(controller.clone(), token.clone()).server();
        // Session links share the port: TLS covers gRPC only, so with a
        // certificate there are none (clients use the gRPC stream).
        let (incoming, mut links) = net::split_links(net::incoming(listener));
        if pw_wire::tls::server().map_err(|e| e.to_string())?.is_some() {
            drop(links);
        } else {
            let (c, token) = (controller.clone(), token.clone().map(std::sync::Arc::<str>::from));
            tokio::spawn(async move {
                while let Some(stream) = links.recv().await {
                    tokio::spawn(pw_controller::sessions::link::serve(c.clone(), stream, token.clone()));
                }
            });
        }
        let service = ControllerService::new(controller);
        let registry = net::cluster_only(
            proto::registry_server::RegistryServer::new(service.clone())
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES),
        );
        let service = net::checked(
            api::controller_server::ControllerServer::new(service)
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES),
            token,
        );
        println!("pw-server: listening on {address}");
        let _ = std::io::stdout().flush();
        // A silent worker keeps its session as long as its lease: the
        // transport's keepalive does not drop it sooner.
        let keepalive = wire::KEEPALIVE_TIMEOUT.max(Duration::from_millis(cli.lease_ms));
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let serving = net::server()
            .map_err(|e| e.to_string())?
            .http2_keepalive_timeout(Some(keepalive))
            .add_service(registry)
            .add_service(service)
            .add_service(proxy)
            .serve_with_incoming_shutdown(incoming, async move {
                let _ = stop_rx.await;
            });
        tokio::pin!(serving);
        tokio::select! {
            served = &mut serving => return served.map_err(|e| e.to_string()),
            _ = pw_wire::process::shutdown_signal() => {}
            _ = pw_wire::process::parent_gone(cli.exit_with) => {}
        }
        // Workers' sessions and clients' streams never end by themselves:
        // they get a moment to go, then the process does.
        let _ = stop_tx.send(());
        let _ = tokio::time::timeout(STOP_GRACE, serving).await;
        Ok(())
    })
}
