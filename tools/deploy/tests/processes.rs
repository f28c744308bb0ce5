//! The strongest check of `pw-deploy k8s` short of a Kubernetes cluster:
//! the container command lines of the manifests, with 127.0.0.1 for the
//! DNS names and pod IP and free ports for the ports (and this machine's
//! CPU plugin for the image's), start a real pw-server and two pw-workers
//! with the environment the manifests give them (the token from the
//! Secret); the workers register, a program runs across them and matches
//! JAX's outputs; a worker killed and started again as its pod would be
//! registers again and the next run works.
//!
//! The binaries come from `$PW_BIN_DIR`, else the target directory these
//! tests were built in (`cargo build --workspace` builds them first). The
//! test is skipped, saying so, when they or the CPU plugin are missing,
//! unless `PW_REQUIRE_BINARIES` is set (as `scripts/test.sh` does). Every
//! process is ended by PID, every wait is bounded.

mod common;

use common::*;
use serde_yaml_ng::Value;
use std::{
    collections::{BTreeSet, HashMap},
    io::{BufRead, BufReader, Read},
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

const START_LIMIT: Duration = Duration::from_secs(60);
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// The directory holding pw-server, pw-worker, pw-run and pw-status.
fn bin_dir() -> Option<PathBuf> {
    let tools = ["pw-server", "pw-worker", "pw-run", "pw-status"];
    let has_all = |d: &Path| tools.iter().all(|t| d.join(t).is_file());
    if let Some(dir) = std::env::var_os("PW_BIN_DIR").map(PathBuf::from) {
        return has_all(&dir).then_some(dir);
    }
    // target/<profile>/deps/<test> -> target/<profile>
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.to_path_buf();
    has_all(&dir).then_some(dir)
}

/// The PJRT CPU plugin of this machine: $PW_PJRT_PLUGIN, else the one
/// scripts/setup.sh recorded.
fn cpu_plugin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PW_PJRT_PLUGIN").map(PathBuf::from) {
        return p.is_file().then_some(p);
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    let recorded = std::fs::read_to_string(config.join("pw/pjrt-plugin")).ok()?;
    let p = PathBuf::from(recorded.trim());
    p.is_file().then_some(p)
}

/// The binaries and plugin, or None after saying why the test is skipped
/// (failing instead when PW_REQUIRE_BINARIES is set).
fn prerequisites() -> Option<(PathBuf, PathBuf)> {
    let found = (bin_dir(), cpu_plugin());
    if let (Some(b), Some(p)) = found {
        return Some((b, p));
    }
    let why = match found {
        (None, _) => "pw-server, pw-worker, pw-run and pw-status are not built (cargo build --workspace, or set PW_BIN_DIR)",
        _ => "no PJRT CPU plugin (set PW_PJRT_PLUGIN or run scripts/setup.sh)",
    };
    assert!(
        std::env::var_os("PW_REQUIRE_BINARIES").is_none(),
        "PW_REQUIRE_BINARIES is set but {why}"
    );
    eprintln!("skipped: {why}");
    None
}

/// A process of the test, killed (by PID) and reaped when dropped.
struct Proc {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `command` (stderr to a log in `dir`) and waits, at most
/// START_LIMIT, for its `... listening on` line.
fn start(mut command: Command, name: &str, dir: &Path) -> Proc {
    let log = dir.join(format!("{name}.log"));
    let file = std::fs::File::create(&log).expect("a log file");
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::from(file))
        .stdin(Stdio::null())
        .env("TF_CPP_MIN_LOG_LEVEL", "2");
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("starting {name}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains("listening on") {
                let _ = tx.send(line);
            }
        }
    });
    let proc = Proc {
        name: name.to_owned(),
        child,
        log,
    };
    if rx.recv_timeout(START_LIMIT).is_err() {
        panic!(
            "{} did not start within {START_LIMIT:?}:\n{}",
            proc.name,
            proc.log()
        );
    }
    proc
}

/// Runs `command` to its end, for at most `limit`; returns (exit code,
/// stdout, stderr).
fn run(mut command: Command, limit: Duration) -> (Option<i32>, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn");
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + limit;
    let code = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break s.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The pipes close once the process is gone.
    let text = |t: std::thread::JoinHandle<String>| t.join().unwrap_or_default();
    (code, text(stdout), text(stderr))
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The manifests' command line with local stand-ins: `hosts` and `ports`
/// map hosts and ports of `HOST:PORT` arguments (and the bare port after
/// `--data-port`), `paths` whole arguments. Every other argument stays as
/// the manifest has it; a `HOST:PORT` whose host is not mapped fails.
fn substitute(
    args: &[String],
    hosts: &HashMap<&str, &str>,
    ports: &HashMap<u16, u16>,
    paths: &HashMap<String, String>,
) -> Vec<String> {
    let port = |p: u16| {
        *ports
            .get(&p)
            .unwrap_or_else(|| panic!("no local port for {p}"))
    };
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let previous = if i > 0 { args[i - 1].as_str() } else { "" };
        let replaced = if let Some(p) = paths.get(a) {
            p.clone()
        } else if previous == "--data-port" {
            port(a.parse().expect("a port")).to_string()
        } else if let Some((host, p)) = a.rsplit_once(':').filter(|_| !a.starts_with('/')) {
            let p: u16 = p.parse().unwrap_or_else(|_| panic!("{a}: not HOST:PORT"));
            let local = hosts.get(host).unwrap_or_else(|| {
                panic!("{a}: the host {host} is not one the manifests should name")
            });
            format!("{local}:{}", port(p))
        } else {
            a.clone()
        };
        out.push(replaced);
    }
    out
}

/// The pw-server or pw-worker of a container, as `command` would run it
/// there: its program from `bins`, its arguments substituted, its
/// environment from the container's `env` (the Secret's token and cluster
/// secret, the pod IP).
fn local_command(c: &Value, bins: &Path, args: Vec<String>, token: &str) -> Command {
    let program = strings(c, "command");
    assert_eq!(program.len(), 1);
    let name = Path::new(&program[0]).file_name().expect("a program");
    let mut cmd = Command::new(bins.join(name));
    cmd.args(args)
        .env_remove("PW_TOKEN")
        .env_remove("PW_CLUSTER_SECRET")
        .env_remove("PW_METRICS_TOKEN");
    for e in seq(c, "env") {
        let name = str_at(e, "name");
        let value = if try_at(e, "valueFrom.secretKeyRef").is_some() {
            secret_value(str_at(e, "valueFrom.secretKeyRef.key"), token)
        } else if str_at(e, "valueFrom.fieldRef.fieldPath") == "status.podIP" {
            "127.0.0.1".to_owned()
        } else {
            panic!("an env entry the test does not know: {}", dump(e));
        };
        cmd.env(name, value);
    }
    cmd
}

/// The value of the cluster Secret's `key` in this test (the keys
/// pw-deploy writes by default).
fn secret_value(key: &str, token: &str) -> String {
    match key {
        "token" => token.to_owned(),
        "cluster-secret" => format!("{token}-cluster"),
        "metrics-token" => format!("{token}-scrape"),
        other => panic!("a key of the Secret the test does not know: {other}"),
    }
}

/// `GET path` on `address` with one `header` (`Name: value`): the status
/// code and the body, or None when nothing answers.
fn get(address: &str, path: &str, header: &str) -> Option<(u16, String)> {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(address).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\n{header}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let code = head.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()?;
    Some((code, body.to_owned()))
}

/// The PIDs of the workers the server lists on its status page
/// (`GET /api/status` on the manifests' `--http` port, presenting the
/// token), or None when it does not answer.
fn registered(status: &str, token: &str) -> Option<BTreeSet<u32>> {
    let (code, body) = get(status, "/api/status", &format!("x-pw-token: {token}"))?;
    if code != 200 {
        return None;
    }
    let v: Value = serde_yaml_ng::from_str(&body).ok()?;
    Some(
        seq(&v, "workers")
            .iter()
            .map(|w| u64_at(w, "pid") as u32)
            .collect(),
    )
}

/// Waits (at most START_LIMIT) until the registered workers are `procs`.
fn wait_for_workers(server: &Proc, status: &str, token: &str, procs: &[&Proc]) {
    let want: BTreeSet<u32> = procs.iter().map(|p| p.child.id()).collect();
    let deadline = Instant::now() + START_LIMIT;
    loop {
        let now = registered(status, token);
        if now.as_ref() == Some(&want) {
            return;
        }
        if Instant::now() > deadline {
            let logs: Vec<String> = std::iter::once(server)
                .chain(procs.iter().copied())
                .map(|p| format!("== {}\n{}", p.name, p.log()))
                .collect();
            panic!(
                "workers {want:?} did not register within {START_LIMIT:?} (registered: {now:?})\n{}",
                logs.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// pw-run of examples/pipeline.mlir on the server, compared with JAX's
/// outputs (`--expect`); returns its report.
fn run_pipeline(bins: &Path, server: &str, token: &str) -> String {
    let examples = repo_root().join("examples");
    let mut cmd = Command::new(bins.join("pw-run"));
    cmd.arg(examples.join("pipeline.mlir"));
    let npy = |prefix: &str| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(examples.join("pipeline"))
            .expect("examples/pipeline")
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
            })
            .collect();
        // input_10 after input_9: by the number.
        files.sort_by_key(|p| {
            p.file_stem()
                .and_then(|s| s.to_str())
                .and_then(|s| s.rsplit('_').next())
                .and_then(|n| n.parse::<u32>().ok())
        });
        files
    };
    cmd.args(npy("input_"))
        .arg("--expect")
        .args(npy("expected_"));
    cmd.args(["--server", server]).env("PW_TOKEN", token);
    let (code, stdout, stderr) = run(cmd, RUN_LIMIT);
    assert_eq!(code, Some(0), "pw-run failed:\n{stdout}\n{stderr}");
    stdout
}

/// Tests that the manifests' pw-server and pw-worker command lines run a
/// cluster: the workers register with the server's token, a program runs
/// across both and matches JAX, a request without the token is refused,
/// and a worker killed and restarted as by `restartPolicy: OnFailure`
/// registers again so the next run works.
#[test]
fn the_manifests_command_lines_run_a_cluster() {
    let Some((bins, plugin)) = prerequisites() else {
        return;
    };
    let docs = manifests(&[
        "--workers",
        "2",
        "--devices-per-worker",
        "2",
        "--heartbeat-ms",
        "100",
        "--lease-ms",
        "1000",
        "--connect-timeout",
        "20",
        "--service-monitor",
    ]);
    let js = object(&docs, "JobSet");
    let head = container(pod(replicated_job(js, "head")));
    let worker = container(pod(replicated_job(js, "worker")));
    let server_args = command_line(head)[1..].to_vec();
    let worker_args = command_line(worker)[1..].to_vec();
    let head_dns = flag(&worker_args, "--controller").expect("--controller");
    let (head_host, _) = host_port(&head_dns);

    let dir = tempfile::tempdir().expect("a temporary directory");
    let token = format!("test-token-{}", std::process::id());
    let hosts: HashMap<&str, &str> = [
        ("0.0.0.0", "127.0.0.1"),
        ("127.0.0.1", "127.0.0.1"),
        ("$(POD_IP)", "127.0.0.1"),
        (head_host, "127.0.0.1"),
    ]
    .into_iter()
    .collect();
    let mut paths: HashMap<String, String> = HashMap::new();
    paths.insert(
        flag(&worker_args, "--plugin").expect("--plugin"),
        plugin.display().to_string(),
    );
    let cache = dir.path().join("compile-cache");
    paths.insert(
        flag(&server_args, "--compile-cache").expect("--compile-cache"),
        cache.display().to_string(),
    );

    // The head: its ports are every port its command listens on.
    let server_ports: HashMap<u16, u16> = listening(&command_line(head))
        .into_iter()
        .map(|(_, p)| (p, free_port()))
        .collect();
    let args = substitute(&server_args, &hosts, &server_ports, &paths);
    let server = start(
        local_command(head, &bins, args, &token),
        "pw-server",
        dir.path(),
    );
    let (_, manifest_server_port) = host_port(&flag(&server_args, "--listen").expect("--listen"));
    let address = format!("127.0.0.1:{}", server_ports[&manifest_server_port]);
    let (_, manifest_status_port) = host_port(&flag(&server_args, "--http").expect("--http"));
    let status = format!("127.0.0.1:{}", server_ports[&manifest_status_port]);

    // Each worker pod has its own address, so the same ports; here each
    // gets its own free ports, and the head's port for --controller.
    let worker_command = || {
        let mut ports: HashMap<u16, u16> = listening(&command_line(worker))
            .into_iter()
            .map(|(_, p)| (p, free_port()))
            .collect();
        ports.insert(manifest_server_port, server_ports[&manifest_server_port]);
        let args = substitute(&worker_args, &hosts, &ports, &paths);
        assert_eq!(
            flag(&args, "--advertise").map(|a| host_port(&a).1),
            flag(&args, "--listen").map(|a| host_port(&a).1),
            "a worker advertises the port it listens on"
        );
        (local_command(worker, &bins, args, &token), ports)
    };
    let (command, w0_ports) = worker_command();
    let w0 = start(command, "pw-worker-0", dir.path());
    let mut w1 = start(worker_command().0, "pw-worker-1", dir.path());
    wait_for_workers(&server, &status, &token, &[&w0, &w1]);
    scrape_as_the_service_monitor_says(
        &docs,
        &token,
        &[(head, &server_ports), (worker, &w0_ports)],
    );

    let report = run_pipeline(&bins, &address, &token);
    assert!(
        report.contains("on worker 0") && report.contains("on worker 1"),
        "the program ran on both workers:\n{report}"
    );
    assert!(report.contains("matches"), "{report}");

    // The token of the Secret is what guards the server.
    let mut no_token = Command::new(bins.join("pw-run"));
    no_token
        .arg(repo_root().join("examples/pipeline.mlir"))
        .args(["--random-inputs", "--server", &address])
        .env_remove("PW_TOKEN");
    let (code, _, stderr) = run(no_token, RUN_LIMIT);
    assert_ne!(code, Some(0), "a request without the token is refused");
    assert!(stderr.contains("needs its token"), "{stderr}");

    // A worker's process dies (kill -9, by PID); its pod would start the
    // same command again: the new process registers as a new worker and
    // the next run works.
    let old_pid = w1.child.id();
    w1.kill();
    let w1b = start(worker_command().0, "pw-worker-1-restarted", dir.path());
    assert_ne!(w1b.child.id(), old_pid);
    wait_for_workers(&server, &status, &token, &[&w0, &w1b]);
    let report = run_pipeline(&bins, &address, &token);
    assert!(
        report.contains("worker 2"),
        "the restarted worker has a new id:\n{report}"
    );
    assert!(report.contains("matches"), "{report}");
    drop((w0, w1b, server));
}

/// Scrapes every endpoint of the manifests' ServiceMonitor as Prometheus
/// would: its Service port's target, a named port of one of `containers`
/// (each with its manifest-to-local port map), with the credentials the
/// endpoint names. They get the metrics; no credentials, and the
/// clients' token at a worker, get 401; and the scrape token opens
/// nothing but `/metrics`.
fn scrape_as_the_service_monitor_says(
    docs: &[Value],
    token: &str,
    containers: &[(&Value, &HashMap<u16, u16>)],
) {
    let monitor = object(docs, "ServiceMonitor");
    let service = docs
        .iter()
        .find(|d| {
            str_at(d, "kind") == "Service"
                && selects(
                    at(monitor, "spec.selector.matchLabels"),
                    at(d, "metadata.labels"),
                )
        })
        .expect("the Service the ServiceMonitor selects");
    let endpoints = seq(monitor, "spec.endpoints");
    assert_eq!(endpoints.len(), 2, "the server and the workers");
    for e in endpoints {
        let port = str_at(e, "port");
        let target = seq(service, "spec.ports")
            .iter()
            .find(|p| str_at(p, "name") == port)
            .map(|p| str_at(p, "targetPort"))
            .unwrap_or_else(|| panic!("no Service port {port}"));
        let (program, local) = containers
            .iter()
            .find_map(|(c, ports)| {
                let (_, manifest) = container_ports(c).into_iter().find(|(n, _)| n == target)?;
                Some((str_at(c, "name"), ports[&manifest]))
            })
            .unwrap_or_else(|| panic!("no container serves the port {target}"));
        let address = format!("127.0.0.1:{local}");
        assert_eq!(str_at(e, "scheme"), "http");
        assert_eq!(str_at(e, "authorization.type"), "Bearer");
        let scrape = secret_value(str_at(e, "authorization.credentials.key"), token);
        let path = str_at(e, "path");
        let (code, body) = get(&address, path, &format!("Authorization: Bearer {scrape}"))
            .unwrap_or_else(|| panic!("{program}: nothing answers on {address}"));
        assert_eq!(
            code, 200,
            "{program}: the ServiceMonitor's credentials:\n{body}"
        );
        assert!(
            body.lines().any(|l| l.starts_with("pw_")),
            "{program}: pw's metrics:\n{body}"
        );
        for (header, why) in [
            ("X-None: 1".to_owned(), "no credentials"),
            (
                format!("Authorization: Bearer {scrape}x"),
                "a wrong scrape token",
            ),
        ] {
            let (code, _) = get(&address, path, &header).expect("an answer");
            assert_eq!(code, 401, "{program}: {why}");
        }
        if program == "pw-worker" {
            let (code, _) =
                get(&address, path, &format!("Authorization: Bearer {token}")).expect("an answer");
            assert_eq!(code, 401, "a client's token does not open a worker");
        } else {
            let (code, _) = get(
                &address,
                "/api/status",
                &format!("Authorization: Bearer {scrape}"),
            )
            .expect("an answer");
            assert_eq!(code, 401, "the scrape token opens /metrics alone");
        }
    }
}

/// Tests that every pw-server, pw-worker, pw-run and pw-status flag that
/// docs/deploy.md shows is one the binary has.
#[test]
fn docs_deploy_md_uses_real_flags_of_the_binaries() {
    let Some((bins, _)) = prerequisites() else {
        return;
    };
    let docs = std::fs::read_to_string(repo_root().join("docs/deploy.md")).expect("docs/deploy.md");
    let lines = shell_lines(&docs);
    for tool in ["pw-server", "pw-worker", "pw-run", "pw-status"] {
        let used = flags_used(&lines, tool);
        if tool != "pw-status" {
            assert!(!used.is_empty(), "docs/deploy.md shows {tool}");
        }
        let (code, stdout, stderr) = run(
            {
                let mut c = Command::new(bins.join(tool));
                c.arg("--help");
                c
            },
            Duration::from_secs(20),
        );
        assert_eq!(code, Some(0), "{tool} --help");
        // (pw-run prints its help on stderr)
        let known = flags_in_help(&format!("{stdout}{stderr}"));
        let unknown: Vec<_> = used.difference(&known).collect();
        assert!(
            unknown.is_empty(),
            "docs/deploy.md uses {tool} flags it lacks: {unknown:?}"
        );
    }
}
