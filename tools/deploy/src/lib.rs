//! pw-deploy: runs a pw cluster on a cluster engine its users already
//! operate, rather than making pw a cluster manager of its own.
//!
//! `pw-deploy k8s` prints the Kubernetes objects of a cluster: a JobSet
//! whose head job runs pw-server and whose worker job runs one pw-worker per
//! host ([`k8s`]). The Ray launcher is in the Python package (`pw.ray`);
//! `docs/deploy.md` walks from a laptop to both.
//!
//! pw-deploy links no MLIR and needs none of pw's other crates: it only
//! writes text.

#![forbid(unsafe_code)]

pub mod k8s;
pub mod names;

use clap::{Parser, Subcommand};
use std::{
    ffi::OsString,
    io::Write,
    path::{Path, PathBuf},
};

/// Why pw-deploy printed nothing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag's value breaks a rule (of Kubernetes, JobSet or pw).
    #[error("--{flag} {value:?}: {why}")]
    Flag {
        flag: &'static str,
        value: String,
        why: String,
    },
    /// The objects could not be rendered.
    #[error("cannot render the manifests as YAML: {0}")]
    Yaml(String),
    /// `--out` could not be written.
    #[error("cannot write {path}: {why}")]
    Write { path: PathBuf, why: String },
}

/// Command line of pw-deploy.
#[derive(Parser, Debug)]
#[command(
    name = "pw-deploy",
    version,
    about = "Prints what runs a pw cluster on an existing cluster engine (Kubernetes JobSet)",
    after_help = "Examples:\n  \
        pw-deploy k8s --name pw --workers 4 --devices-per-worker 8 --image pw-server:0.1 --worker-image pw-worker:0.1 | kubectl apply -f -\n  \
        pw-deploy k8s --name pw --workers 2 --devices-per-worker 8 --platform cuda --image pw-server:0.1 --worker-image pw-worker-cuda:0.1 --out pw.yaml\n\n\
        Ray: the Python package's pw.ray starts one pw-worker per Ray node.\n\
        See docs/deploy.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Kubernetes: a JobSet with a head job (pw-server) and a worker job
    /// (one pw-worker per pod), a Service for clients, a NetworkPolicy and,
    /// with --service-monitor, a ServiceMonitor for Prometheus.
    #[command(after_help = K8S_HELP)]
    K8s(k8s::Options),
}

const K8S_HELP: &str = "Examples:\n  \
    kubectl create secret generic pw-token --from-literal=token=$(openssl rand -hex 16) --from-literal=cluster-secret=$(openssl rand -hex 16) --from-literal=metrics-token=$(openssl rand -hex 16)\n  \
    pw-deploy k8s --name pw --workers 4 --devices-per-worker 8 --image pw-server:0.1 --worker-image pw-worker:0.1 | kubectl apply -f -\n  \
    pw-deploy k8s --name gpu --workers 2 --devices-per-worker 8 --platform cuda --image pw-server:0.1 --worker-image pw-worker-cuda:0.1\n  \
    pw-deploy k8s --name tpu --workers 4 --devices-per-worker 4 --platform tpu --node-selector pool=tpu --image pw-server:0.1 --worker-image pw-worker-tpu:0.1 --out tpu.yaml\n  \
    pw-deploy k8s --name pw --workers 4 --devices-per-worker 8 --image pw-server:0.1 --tls-secret pw-tls   # TLS on every port (cert-manager's Secret)\n  \
    pw-deploy k8s --name pw --workers 4 --devices-per-worker 8 --image pw-server:0.1 --service-monitor --service-monitor-label release=prometheus   # scraped by the Prometheus operator\n\n\
    The head pod is NAME-head-0-0.NAME (JobSet DNS hostnames); workers register\n\
    there and advertise their pod IP (with --tls-secret, their DNS name\n\
    NAME-worker-0-I.NAME: the certificate names *.NAME and NAME-server). Pods restart on failure (restartPolicy\n\
    OnFailure, --backoff-limit); a restarted worker registers again. The JobSet\n\
    controller must be installed, and the Secret (--token-secret, default\n\
    NAME-token) must hold the token under --token-key and the cluster secret\n\
    under --cluster-secret-key (and, unless nothing serves /metrics, the scrape\n\
    token under --metrics-token-key). Clients reach the server and its status page\n\
    through the Service NAME-server (kubectl port-forward service/NAME-server 29000 29080).\n\
    Prometheus scrapes the server's /metrics on --status-port and each worker's on\n\
    --metrics-port with the scrape token (pod annotations prometheus.io/*, or --service-monitor).\n\
    Images: deploy/Dockerfile. See docs/deploy.md.";

/// Runs pw-deploy with `args` (the program name first); returns the exit
/// code: 0, 1 for a refused option or a failed write, 2 for a bad command
/// line.
pub fn main(args: Vec<OsString>, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            let _ = if e.use_stderr() {
                write!(stderr, "{text}")
            } else {
                write!(stdout, "{text}")
            };
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match &cli.command {
        Command::K8s(o) => k8s::manifests(o)
            .and_then(|m| m.to_yaml(o))
            .and_then(|yaml| match &o.out {
                Some(path) => write_all_or_nothing(path, &yaml),
                None => stdout.write_all(yaml.as_bytes()).map_err(|e| Error::Write {
                    path: "<stdout>".into(),
                    why: e.to_string(),
                }),
            }),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(stderr, "pw-deploy: error: {e}");
            1
        }
    }
}

/// Writes `text` to `path` through a temporary file beside it, renamed
/// into place: the file is either all of it or untouched.
fn write_all_or_nothing(path: &Path, text: &str) -> Result<(), Error> {
    let failed = |why: String| Error::Write {
        path: path.to_owned(),
        why,
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| failed("not a file name".into()))?;
    let mut tmp_name = OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        failed(e.to_string())
    })
}
