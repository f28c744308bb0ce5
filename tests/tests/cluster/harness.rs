//! A cluster of real processes for tests: one pw-server and pw-workers on
//! 127.0.0.1 (or in network namespaces the test made), pw-run as a client.
//!
//! Every process a test starts is recorded by PID and ended on drop (also
//! when the test fails); every wait is bounded.

use pw_tests::repo_root;
use pw_wire::proto;
use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    sync::{Mutex, MutexGuard},
    time::{Duration, Instant},
};

/// Cluster tests run one at a time: two cores cannot host several
/// clusters and keep their timings meaningful.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A binary of the workspace, built by `cargo build --workspace`.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test> -> target/<profile>/<name>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target directory");
    let path = dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace` first",
        path.display()
    );
    path
}

/// The CPU plugin of the other PJRT C API version (0.81), for refusals.
pub fn other_plugin() -> PathBuf {
    let venv = std::env::var_os("PW_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv"));
    std::fs::read_dir(venv.join("lib"))
        .expect("venv lib")
        .flatten()
        .map(|d| {
            d.path()
                .join("site-packages/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so")
        })
        .find(|p| p.is_file())
        .expect("the xla-cpu-pjrt plugin (scripts/setup.sh installs it)")
}

/// A started process and what it printed on stdout first.
pub struct Proc {
    pub child: Child,
    pub stderr: PathBuf,
}

impl Proc {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it has exited, and how.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits at most `limit` for it to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(s) = self.exited() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    pub fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// What it printed on stdout, when that went to a file (pw-run in the
    /// background).
    pub fn stdout_text(&self) -> String {
        std::fs::read_to_string(self.stderr.with_extension("stdout")).unwrap_or_default()
    }

    /// Waits (at most 120 s) for it to exit; fails the test unless with 0.
    pub fn exit_ok(&mut self) {
        let status = self.wait_exit(Duration::from_secs(120));
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(0),
            "{}",
            self.stderr_text()
        );
    }

    /// Sends `signal` (by PID).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.pid().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal} {}", self.pid());
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.exited().is_none() {
            // A stopped process must be continued to die of SIGKILL promptly.
            let _ = Command::new("kill")
                .args(["-CONT", &self.pid().to_string()])
                .status();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Starts `command`, its stderr to a file in `dir`, and waits (at most
/// `limit`) for a stdout line containing `ready`; returns the line.
fn start(
    mut command: Command,
    name: &str,
    dir: &Path,
    ready: &str,
    limit: Duration,
) -> (Proc, String) {
    let stderr = dir.join(format!("{name}.stderr"));
    let file = std::fs::File::create(&stderr).expect("stderr file");
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::from(file))
        .env("TF_CPP_MIN_LOG_LEVEL", "2");
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("starting {name}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let wanted = ready.to_owned();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains(&wanted) {
                let _ = tx.send(line);
            }
        }
    });
    let proc = Proc { child, stderr };
    match rx.recv_timeout(limit) {
        Ok(line) => (proc, line),
        Err(_) => panic!(
            "{name} did not print {ready:?} within {limit:?}; its stderr:\n{}",
            proc.stderr_text()
        ),
    }
}

/// The address after "listening on " in a line.
fn address_of(line: &str) -> String {
    line.rsplit("listening on ")
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Where processes run: this host, or a network namespace.
#[derive(Clone, Debug, Default)]
pub struct Place {
    /// `ip netns exec NAME` prefix.
    pub netns: Option<String>,
    /// The address to listen on (`host:0`).
    pub listen: Option<String>,
    /// `PW_TOKEN` for the processes started there.
    pub token: Option<String>,
    /// `PW_CLUSTER_SECRET` for the processes started there.
    pub cluster_secret: Option<String>,
    /// More environment for them (e.g. `PW_TLS_*`).
    pub env: Vec<(String, String)>,
}

impl Place {
    pub fn command(&self, program: &Path) -> Command {
        let mut c = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(program);
                c
            }
            None => Command::new(program),
        };
        match &self.token {
            Some(t) => c.env("PW_TOKEN", t),
            None => c.env_remove("PW_TOKEN"),
        };
        match &self.cluster_secret {
            Some(s) => c.env("PW_CLUSTER_SECRET", s),
            None => c.env_remove("PW_CLUSTER_SECRET"),
        };
        for v in ["PW_TLS_CERT", "PW_TLS_KEY", "PW_TLS_CA"] {
            c.env_remove(v);
        }
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }
}

/// Starts pw-server; returns it and its address.
fn start_server(server_args: &[&str], place: &Place, dir: &Path, cache: &Path) -> (Proc, String) {
    let mut command = place.command(&bin("pw-server"));
    let listen = place.listen.clone().unwrap_or_else(|| "127.0.0.1:0".into());
    command
        .args(["--listen", &listen, "--compile-cache"])
        .arg(cache)
        .args(server_args);
    let (server, line) = start(
        command,
        "pw-server",
        dir,
        "listening on",
        Duration::from_secs(20),
    );
    (server, address_of(&line))
}

/// A pw-server and its workers.
pub struct Cluster {
    pub dir: PathBuf,
    pub server: Proc,
    pub address: String,
    pub workers: Vec<Proc>,
    cache: PathBuf,
}

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Cluster {
    /// A server with `server_args`, and no worker yet.
    pub fn server(server_args: &[&str], place: &Place) -> Cluster {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("pw-cluster-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("cluster dir");
        let cache = dir.join("compile-cache");
        Self::server_with_cache(server_args, place, dir, cache)
    }

    fn server_with_cache(
        server_args: &[&str],
        place: &Place,
        dir: PathBuf,
        cache: PathBuf,
    ) -> Cluster {
        let (server, address) = start_server(server_args, place, &dir, &cache);
        Cluster {
            address,
            server,
            workers: Vec::new(),
            dir,
            cache,
        }
    }

    /// Stops the workers and the server (SIGTERM) and starts a new server on
    /// the same compile cache; the workers must be started again.
    pub fn restart_server(&mut self, server_args: &[&str]) {
        self.workers.clear();
        self.server.signal("TERM");
        assert!(
            self.server.wait_exit(Duration::from_secs(10)).is_some(),
            "pw-server did not stop on SIGTERM"
        );
        let (server, address) =
            start_server(server_args, &Place::default(), &self.dir, &self.cache);
        self.server = server;
        self.address = address;
    }

    /// A server and `workers` workers of `devices` devices each.
    pub fn start(workers: usize, devices: usize) -> Cluster {
        let mut c = Cluster::server(&[], &Place::default());
        for _ in 0..workers {
            c.add_worker(devices, &[], &[], &Place::default());
        }
        c.wait_for_workers(workers);
        c
    }

    /// Starts a worker; returns its index in `workers`.
    pub fn add_worker(
        &mut self,
        devices: usize,
        args: &[&str],
        env: &[(&str, &str)],
        place: &Place,
    ) -> usize {
        let i = self.workers.len();
        let mut command = place.command(&bin("pw-worker"));
        let listen = place.listen.clone().unwrap_or_else(|| "127.0.0.1:0".into());
        command
            .args([
                "--controller",
                &self.address,
                "--listen",
                &listen,
                "--devices",
                &devices.to_string(),
            ])
            .args(["--connect-timeout", "10"])
            .args(args);
        for (k, v) in env {
            command.env(k, v);
        }
        let (proc, _) = start(
            command,
            &format!("pw-worker-{i}"),
            &self.dir,
            "listening on",
            Duration::from_secs(20),
        );
        self.workers.push(proc);
        i
    }

    /// The server's status.
    pub fn status(&self) -> proto::StatusReply {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime
            .block_on(pw_controller::client::status(&self.address))
            .unwrap_or_else(|e| panic!("status of {}: {e}", self.address))
    }

    /// The status once the workers' counters (sent with heartbeats, every
    /// 250 ms) stop changing: two equal readings 300 ms apart, within 10 s.
    pub fn settled_status(&self) -> proto::StatusReply {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut last = self.status();
        loop {
            std::thread::sleep(Duration::from_millis(300));
            let now = self.status();
            if now == last || Instant::now() > deadline {
                return now;
            }
            last = now;
        }
    }

    /// Waits (at most 20 s) until `n` workers are registered.
    pub fn wait_for_workers(&self, n: usize) -> proto::StatusReply {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let status = self.status();
            if status.workers.len() == n {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} workers registered, {n} expected; server stderr:\n{}",
                status.workers.len(),
                self.server.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits (at most 20 s) until registered worker `id` reports an active
    /// run.
    pub fn wait_run_started(&self, id: u32) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let active = self
                .status()
                .workers
                .iter()
                .find(|w| w.worker == id)
                .and_then(|w| w.counters)
                .is_some_and(|c| c.runs_active > 0);
            if active {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("worker {id} never started the run");
    }

    /// The last lines of the server's and every worker's log, for a
    /// failure's message.
    pub fn logs(&self) -> String {
        let tail = |name: String, text: String| {
            let lines: Vec<&str> = text.lines().rev().take(20).collect();
            let lines: Vec<&str> = lines.into_iter().rev().collect();
            format!("{name}:\n{}", lines.join("\n"))
        };
        let mut logs = vec![tail("pw-server".into(), self.server.stderr_text())];
        for (i, w) in self.workers.iter().enumerate() {
            logs.push(tail(format!("worker process #{i}"), w.stderr_text()));
        }
        logs.join("\n")
    }

    /// Waits (at most 10 s) until no registered worker holds a buffer.
    pub fn assert_no_buffers(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let status = self.status();
            let held: Vec<(u32, u64, u64, u64)> = status
                .workers
                .iter()
                .map(|w| {
                    let c = w.counters.unwrap_or_default();
                    (w.worker, c.live_buffers, c.live_transfers, c.runs_active)
                })
                .filter(|(_, b, t, r)| *b + *t + *r > 0)
                .collect();
            if held.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "workers still hold (worker, buffers, transfers, runs): {held:?}\n{}",
                    self.logs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// pw-run --server with `args`, in `place`, bounded by 120 s.
    pub fn pw_run(&self, args: &[String], place: &Place) -> Output {
        let mut command = place.command(&bin("pw-run"));
        command
            .args(args)
            .args(["--server", &self.address])
            .env("TF_CPP_MIN_LOG_LEVEL", "2");
        run_bounded(command, Duration::from_secs(120))
    }

    /// Starts pw-run --server in the background.
    pub fn spawn_pw_run(&self, args: &[String]) -> Proc {
        self.spawn_pw_run_in(args, &Place::default())
    }

    /// Starts pw-run --server in the background, in `place`; its stdout
    /// and stderr go to files ([`Proc::stdout_text`]).
    pub fn spawn_pw_run_in(&self, args: &[String], place: &Place) -> Proc {
        let mut command = place.command(&bin("pw-run"));
        command.args(args).args(["--server", &self.address]);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let stderr = self.dir.join(format!("pw-run-{n}.stderr"));
        let file = std::fs::File::create(&stderr).expect("stderr file");
        let out = std::fs::File::create(stderr.with_extension("stdout")).expect("stdout file");
        let child = command
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(file))
            .env("TF_CPP_MIN_LOG_LEVEL", "2")
            .spawn()
            .expect("pw-run");
        Proc { child, stderr }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.workers.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs a command to completion, killing it (by PID) after `limit`.
pub fn run_bounded(mut command: Command, limit: Duration) -> Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let watchdog = std::thread::spawn(move || {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if flag.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    });
    let output = child.wait_with_output().expect("wait");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = watchdog.join();
    output
}

/// An example's program, inputs and expected outputs as pw-run arguments.
pub fn example_args(example: &str) -> Vec<String> {
    let examples = repo_root().join("examples");
    program_args(
        &examples.join(format!("{example}.mlir")),
        &examples.join(example),
    )
}

/// A 3-stage MLP pipeline of `microbatches` through `width`-wide layers,
/// `batch` rows each, made by the front end with its JAX outputs (once:
/// kept under `target/test-artefacts/NAME-pipeline`), as pw-run arguments.
pub fn made_pipeline(name: &str, [microbatches, width, batch]: [u32; 3]) -> Vec<String> {
    let dir = repo_root().join(format!("target/test-artefacts/{name}-pipeline"));
    let program = dir.join(format!("{name}.mlir"));
    if !program.is_file() {
        std::fs::create_dir_all(&dir).expect("artefact dir");
        let partial = dir.join(format!("{name}.mlir.tmp"));
        let mut make = Command::new(repo_root().join(".venv/bin/python"));
        make.arg(repo_root().join("benches/make_pipeline.py"))
            .arg(&partial)
            .args([microbatches, width, batch].map(|n| n.to_string()))
            .arg("--data")
            .arg(dir.join("data"));
        let out = run_bounded(make, Duration::from_secs(300));
        assert!(out.status.success(), "make_pipeline.py: {}", text(&out).1);
        std::fs::rename(&partial, &program).expect("rename");
    }
    // JAX's outputs come from jaxlib's own XLA, pw's from the PJRT
    // plugin's build of it: over 1024-wide float32 sums they differ by a
    // few units in the last place on some CPUs (seen: 1.6e-6).
    let mut args = program_args(&program, &dir.join("data"));
    args.extend(["--atol".to_owned(), "1e-5".to_owned()]);
    args
}

/// The long pipeline of the recovery tests: 64 microbatches through
/// 512-wide layers, about two seconds of work here.
pub fn long_pipeline() -> Vec<String> {
    made_pipeline("long", [64, 512, 256])
}

/// `program`, the `input_<i>.npy` of `data` and `--expect` its
/// `expected_<i>.npy` (in order of i), as pw-run arguments.
pub fn program_args(program: &Path, data: &Path) -> Vec<String> {
    let files = |prefix: &str| {
        let mut found: Vec<(usize, String)> = std::fs::read_dir(data)
            .expect("data dir")
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let n = name
                    .strip_prefix(prefix)?
                    .strip_suffix(".npy")?
                    .parse()
                    .ok()?;
                Some((n, e.path().display().to_string()))
            })
            .collect();
        found.sort();
        found.into_iter().map(|(_, p)| p).collect::<Vec<_>>()
    };
    let mut args = vec![program.display().to_string()];
    args.extend(files("input_"));
    args.push("--expect".into());
    args.extend(files("expected_"));
    args
}

/// pw-run exited with 0 and every output matched its expected one.
pub fn assert_matches(out: &Output) {
    let (stdout, stderr) = text(out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("matches") && !stdout.contains("MISMATCH"),
        "{stdout}"
    );
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A server with `server_args` and three 2-device workers, of which worker
/// 1 (stage 1 of the pipeline) sleeps 30 s before its first step, so that
/// a fault can strike (or a stall be seen) while a run is under way.
pub fn slow_cluster(server_args: &[&str]) -> Cluster {
    faulty_cluster(server_args, 1, "delay-step=first:30000")
}

/// A server with `server_args` and three 2-device workers, worker `faulty`
/// with `PW_WORKER_FAULTS=fault`, all registered.
pub fn faulty_cluster(server_args: &[&str], faulty: usize, fault: &str) -> Cluster {
    let mut c = Cluster::server(server_args, &Place::default());
    for i in 0..3 {
        let env: &[(&str, &str)] = if i == faulty {
            &[("PW_WORKER_FAULTS", fault)]
        } else {
            &[]
        };
        c.add_worker(2, &[], env, &Place::default());
    }
    c.wait_for_workers(3);
    c
}
