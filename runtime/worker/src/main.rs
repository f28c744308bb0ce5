//! pw-worker: the per-host process of a pw cluster. It holds one PJRT
//! client over the host's devices, registers them with a pw-server, and
//! runs the parts of programs the server sends it (the `pw_worker` library).
//! It links no MLIR: executables arrive compiled.

// The binary speaks to its operator on standard output and error.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use clap::Parser;
use pw_dataplane::Transport;
use pw_worker::{faults::Faults, serve, Config, Error};
use std::{io::Write, path::PathBuf, time::Duration};

/// Command line of pw-worker.
#[derive(Parser, Debug)]
#[command(
    name = "pw-worker",
    version,
    about = "A pw worker: registers this host's PJRT devices with a pw-server and runs what it sends",
    after_help = "Examples:\n  \
        pw-worker --controller 127.0.0.1:29000 --devices 2\n  \
        PW_CLUSTER_SECRET=$(cat /run/secrets/pw-cluster) pw-worker --controller head:29000 --listen 0.0.0.0:29100 --advertise $(hostname):29100 --plugin /opt/pjrt/xla_cuda_plugin.so\n  \
        pw-worker --controller 127.0.0.1:29000 --island pod0   # share an island with other workers\n  \
        pw-worker --controller 127.0.0.1:29000 --metrics 9400  # Prometheus metrics on http://127.0.0.1:9400/metrics\n\n\
        The worker prints `pw-worker: listening on HOST:PORT`, then registers. If the\n\
        server refuses it (incompatible plugin or protocol), it exits with code 2 and\n\
        the reason. If it loses the server, it finishes the parts under way, drops its runs, keeps\n\
        sessions' arrays (for a server restarted with --state-dir) and registers again; it\n\
        exits with code 1 when the server stays unreachable for --connect-timeout.\n\n\
        Fault injection for tests: PW_WORKER_FAULTS=exit-at-step=N | delay-step=N:MS |\n\
        corrupt-pieces | truncate-pieces | exit-on-put (comma-separated; N: a plan step index,\n\
        `first` for the first step of every part, or @K for its step at position K)."
)]
struct Cli {
    /// The pw-server to register with.
    #[arg(long, value_name = "HOST:PORT")]
    controller: String,

    /// Ask the PJRT plugin for this many devices (a CPU plugin makes them;
    /// any other must have exactly as many; default: the plugin's own
    /// count).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    devices: Option<u32>,

    /// The PJRT plugin (default: $PW_PJRT_PLUGIN, else the CPU plugin
    /// scripts/setup.sh recorded). Its client options come from
    /// $PW_PJRT_CLIENT_OPTIONS, `name=value;...` (a GPU plugin:
    /// `preallocate=false`, `memory_fraction=0.5`, `visible_devices=[0,1]`).
    #[arg(long, value_name = "PATH")]
    plugin: Option<PathBuf>,

    /// Where this worker's service listens, for the server and peer
    /// workers (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0", value_name = "HOST:PORT")]
    listen: String,

    /// The address the server and peers should use (default: the bound
    /// --listen address).
    #[arg(long, value_name = "HOST:PORT")]
    advertise: Option<String>,

    /// Join this island (default: an island of its own). Workers of one
    /// island must run the same plugin.
    #[arg(long, value_name = "NAME")]
    island: Option<String>,

    /// The TCP port peers send pieces to (0: any free port), on the
    /// --listen host; advertised with the --advertise host.
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    data_port: u16,

    /// How to send pieces to peers: frames on a TCP connection (`tcp`) or
    /// a gRPC stream (`grpc`). A worker receives both ways.
    #[arg(long, default_value = "tcp", value_name = "tcp|grpc")]
    data_plane: Transport,

    /// The secret pw-server and its workers share: every call to this
    /// worker, its registration and every data connection must prove it.
    /// Needed to listen on anything but loopback.
    #[arg(
        long,
        env = "PW_CLUSTER_SECRET",
        hide_env_values = true,
        value_name = "SECRET"
    )]
    cluster_secret: Option<String>,

    /// PEM certificate this process serves its gRPC port with (TLS); with
    /// --tls-key.
    #[arg(long, env = "PW_TLS_CERT", value_name = "PEM")]
    tls_cert: Option<PathBuf>,

    /// PEM private key of --tls-cert.
    #[arg(long, env = "PW_TLS_KEY", value_name = "PEM")]
    tls_key: Option<PathBuf>,

    /// PEM of the CA that signed the certificates of the pw ports this
    /// process calls: it then calls them over TLS only.
    #[arg(long, env = "PW_TLS_CA", value_name = "PEM")]
    tls_ca: Option<PathBuf>,

    /// Give up after this many seconds without reaching the server.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    connect_timeout: u64,

    /// Serve Prometheus metrics (`/metrics`) here: what this worker
    /// counts and what each of its devices did and holds. A bare PORT is
    /// on loopback; another host needs the cluster secret. A scrape
    /// presents it, or the scrape token PW_METRICS_TOKEN (which opens
    /// only this port), as `Authorization: Bearer SECRET`; HTTPS with
    /// --tls-cert.
    #[arg(long, value_name = "HOST:PORT|PORT")]
    metrics: Option<String>,

    /// Run sessions' Python functions (JAX's
    /// `jax.experimental.colocated_python`, the steps of pw programs made
    /// with `pw.sidecar`) in a sidecar per session, with this interpreter:
    /// one with JAX, cloudpickle and pw's front end (the venv's
    /// `bin/python`). The functions are the clients' own code,
    /// run as this worker's user: give it only where the clients are
    /// trusted. Without it such calls are refused.
    #[arg(long, env = "PW_SIDECAR_PYTHON", value_name = "PATH")]
    sidecar_python: Option<PathBuf>,

    /// How long one Python call may run before its sidecar is
    /// ended (the call fails; the next starts a new sidecar).
    #[arg(long, default_value_t = pw_exec::sidecar::DEFAULT_CALL_TIMEOUT_S, value_name = "SECONDS")]
    sidecar_timeout: u64,

    /// How log lines are written to standard error: `text`, or `json` (one
    /// object per line, for log shippers). PW_LOG sets the level.
    #[arg(
        long,
        env = "PW_LOG_FORMAT",
        default_value = "text",
        value_name = "text|json"
    )]
    log_format: pw_wire::process::LogFormat,
}

fn main() {
    let cli = Cli::parse();
    pw_wire::process::init("info", cli.log_format);
    let faults = match Faults::from_env() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("pw-worker: error: {e}");
            std::process::exit(2);
        }
    };
    if let Some(text) = cli.cluster_secret.as_deref().filter(|s| !s.is_empty()) {
        match pw_wire::auth::Secret::new(text, "--cluster-secret") {
            Ok(secret) => pw_wire::auth::set_cluster_secret(Some(secret)),
            Err(e) => {
                eprintln!("pw-worker: error: {e}");
                std::process::exit(2);
            }
        }
    }
    if let Err(e) = pw_wire::auth::metrics_token() {
        eprintln!("pw-worker: error: {e}");
        std::process::exit(2);
    }
    let tls = pw_wire::tls::Files {
        cert: cli.tls_cert.clone(),
        key: cli.tls_key.clone(),
        ca: cli.tls_ca.clone(),
    };
    if let Err(e) = pw_wire::tls::init(&tls) {
        eprintln!("pw-worker: error: {e}");
        std::process::exit(2);
    }
    let metrics = match cli
        .metrics
        .as_deref()
        .map(|a| pw_wire::net::listen_address(a, "--metrics"))
    {
        None => None,
        Some(Ok(at)) => Some(at),
        Some(Err(e)) => {
            eprintln!("pw-worker: error: {e}");
            std::process::exit(2);
        }
    };
    let config = Config {
        controller: cli.controller,
        listen: cli.listen,
        advertise: cli.advertise,
        plugin: cli.plugin,
        devices: cli.devices.map(|d| d as usize),
        island: cli.island,
        connect_timeout: Duration::from_secs(cli.connect_timeout),
        data_port: cli.data_port,
        transport: cli.data_plane,
        early_limit: 4 << 30,
        faults,
        metrics,
        sidecar: cli.sidecar_python.map(|python| pw_exec::sidecar::Config {
            python,
            call_timeout: Duration::from_secs(cli.sidecar_timeout),
        }),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("pw-worker: error: {e}");
            std::process::exit(1);
        }
    };
    let outcome = runtime.block_on(serve(
        config,
        |address| {
            println!("pw-worker: listening on {address}");
            let _ = std::io::stdout().flush();
        },
        pw_wire::process::shutdown_signal(),
    ));
    let code = match outcome {
        Ok(()) => 0,
        Err(e @ Error::Refused { .. }) => {
            eprintln!("pw-worker: error: {e}");
            2
        }
        Err(e) => {
            eprintln!("pw-worker: error: {e}");
            1
        }
    };
    // Leave at once: PJRT's threads are not joined.
    std::process::exit(code);
}
