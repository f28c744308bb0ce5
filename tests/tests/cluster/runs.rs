//! Runs across workers: results, compilation, traffic, refusals.

use crate::harness::{bin, example_args, other_plugin, run_bounded, serial, text, Cluster, Place};
use std::{process::Command, time::Duration};

const EXAMPLES: [&str; 4] = ["pipeline", "rl_step", "partially_placed", "pipeline_train"];

/// Every example on 3 workers of 2 devices gives JAX's outputs; the pieces
/// between stages go worker to worker: the controller moves only inputs
/// and outputs; nothing is left on any worker.
#[test]
fn examples_match_jax_on_three_workers() {
    let _serial = serial();
    let cluster = Cluster::start(3, 2);
    let mut client_bytes = 0;
    for example in EXAMPLES {
        let out = cluster.pw_run(&example_args(example), &Place::default());
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{example}:\n{stdout}\n{stderr}");
        assert!(
            stdout.contains("matches") && !stdout.contains("MISMATCH"),
            "{example}: {stdout}"
        );
        assert!(
            stdout.contains("3 workers") || stdout.contains("2 workers"),
            "{example}: {stdout}"
        );
        // The traffic line: worker-to-worker bytes, then the controller's.
        let traffic = stdout
            .lines()
            .find(|l| l.starts_with("traffic"))
            .expect("traffic line");
        let peer: u64 = traffic
            .split("worker to worker: ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("peer bytes");
        assert!(
            peer > 0,
            "{example}: no piece went worker to worker: {traffic}"
        );
        client_bytes += args_bytes(&example_args(example));
    }
    // The server lowers with the schedule the client asks for.
    let mut args = example_args("pipeline_train");
    args.extend(["--schedule".into(), "1f1b".into()]);
    let out = cluster.pw_run(&args, &Place::default());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout.matches("matches").count(), 16, "{stdout}");
    client_bytes += args_bytes(&args);
    // --stats and --trace: a track per worker device, and the network.
    let trace = cluster.dir.join("trace.json");
    let mut args = example_args("pipeline");
    args.extend([
        "--stats".into(),
        "--trace".into(),
        trace.display().to_string(),
    ]);
    let out = cluster.pw_run(&args, &Place::default());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("(worker 1)") && stdout.contains("finished"),
        "{stdout}"
    );
    // The buffers each device held at most, as the workers measured them.
    let peaks = stdout
        .lines()
        .skip_while(|l| !l.starts_with("peak device bytes"))
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("device"))
        .count();
    assert_eq!(peaks, 6, "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let tracks: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    for w in 0..3 {
        assert!(
            tracks
                .iter()
                .any(|t| t.contains(&format!("(worker {w}, local 0)"))),
            "{tracks:?}"
        );
        assert!(
            tracks.contains(&format!("worker {w} host (enqueue)").as_str()),
            "{tracks:?}"
        );
    }
    assert!(
        tracks.iter().any(|t| t.starts_with("network")),
        "{tracks:?}"
    );
    assert!(events.iter().any(|e| e["cat"] == "network"));
    assert!(events.iter().any(|e| e["cat"] == "execute"));
    client_bytes += args_bytes(&example_args("pipeline"));

    let status = cluster.settled_status();
    let counters = status.counters.expect("counters");
    let to_peers: u64 = status
        .workers
        .iter()
        .map(|w| w.counters.unwrap_or_default().bytes_to_peers)
        .sum();
    let from_peers: u64 = status
        .workers
        .iter()
        .map(|w| w.counters.unwrap_or_default().bytes_from_peers)
        .sum();
    assert!(
        to_peers > 0 && to_peers == from_peers,
        "sent {to_peers}, received {from_peers}"
    );
    // The controller saw exactly the inputs: no piece passed through it.
    assert_eq!(counters.bytes_from_clients, client_bytes, "{counters:?}");
    assert_eq!(counters.runs_ok, EXAMPLES.len() as u64 + 2);
    cluster.assert_no_buffers();
}

/// Bytes of the input arrays among pw-run arguments (npy data, no header).
fn args_bytes(args: &[String]) -> u64 {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--expect")
        .map(|p| pw_exec::npy::read(p).expect("npy").bytes().len() as u64)
        .sum()
}

/// A second run compiles nothing (the workers keep what they loaded); a
/// restarted server reads the disk cache; a server that cannot compile has
/// one worker compile and says so.
#[test]
fn each_executable_is_compiled_once() {
    let _serial = serial();
    let mut cluster = Cluster::start(3, 2);
    let args = example_args("pipeline");
    let first = text(&cluster.pw_run(&args, &Place::default())).0;
    assert!(first.contains("5 executables compiled"), "{first}");
    assert!(first.contains("compiled on the controller"), "{first}");
    let second = text(&cluster.pw_run(&args, &Place::default())).0;
    assert!(
        second.contains("0 executables compiled") && second.contains("5 already loaded"),
        "{second}"
    );
    // A new server, new workers, the same disk cache.
    cluster.restart_server(&[]);
    for _ in 0..3 {
        cluster.add_worker(2, &[], &[], &Place::default());
    }
    cluster.wait_for_workers(3);
    let third = text(&cluster.pw_run(&args, &Place::default())).0;
    assert!(
        third.contains("0 executables compiled, 5 from the compile cache"),
        "{third}"
    );
    assert!(third.contains("matches"), "{third}");
    // No compiling on the controller: a worker compiles, the others load.
    let mut other = Cluster::server(&["--no-compile"], &Place::default());
    for _ in 0..3 {
        other.add_worker(2, &[], &[], &Place::default());
    }
    other.wait_for_workers(3);
    let out = other.pw_run(&args, &Place::default());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("compiled on worker"), "{stdout}");
    assert!(!stdout.contains("compiled on the controller"), "{stdout}");
}

/// A worker whose plugin differs from its island's is refused, with the
/// reason, and exits 2; a program needing a mesh bigger than any worker,
/// or bound to devices no worker has, is refused before anything runs.
#[test]
fn misfits_are_refused() {
    let _serial = serial();
    let mut cluster = Cluster::server(&[], &Place::default());
    cluster.add_worker(2, &["--island", "shared"], &[], &Place::default());
    cluster.wait_for_workers(1);
    let plugin = other_plugin();
    let i = cluster.add_worker(
        2,
        &["--island", "shared", "--plugin", plugin.to_str().unwrap()],
        &[],
        &Place::default(),
    );
    let status = cluster.workers[i].wait_exit(Duration::from_secs(20));
    assert_eq!(status.and_then(|s| s.code()), Some(2));
    let stderr = cluster.workers[i].stderr_text();
    assert!(
        stderr.contains("refused") && stderr.contains("island \"shared\" runs plugin"),
        "{stderr}"
    );
    assert_eq!(cluster.status().workers.len(), 1);
    assert_eq!(cluster.status().counters.unwrap().workers_refused, 1);

    // A 4-device mesh on 2-device workers.
    let big = r#"module {
  pw.mesh @m ["x"=4]
  module @f attributes {mhlo.num_partitions = 4 : i32} {
    func.func public @main(%x: tensor<16xf32>) -> tensor<16xf32> {
      return %x : tensor<16xf32>
    }
  }
  func.func @main(%x: !pw.array<16xf32>) -> !pw.array<16xf32, @m> {
    %0 = pw.call @f(%x) on @m : (!pw.array<16xf32>) -> !pw.array<16xf32, @m>
    return %0 : !pw.array<16xf32, @m>
  }
}
"#;
    let file = cluster.dir.join("big.mlir");
    std::fs::write(&file, big).unwrap();
    let out = cluster.pw_run(
        &[file.display().to_string(), "--random-inputs".into()],
        &Place::default(),
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("mesh @m needs 4 devices"), "{stderr}");
    // Already lowered onto devices [0, 1, 2, 3]: the one worker has 0 and 1.
    let mut lower = Command::new(bin("pw-opt"));
    lower.arg(&file).arg("--pw-lower=devices=4");
    let lowered = run_bounded(lower, Duration::from_secs(60));
    assert!(lowered.status.success(), "{}", text(&lowered).1);
    std::fs::write(&file, &lowered.stdout).unwrap();
    let out = cluster.pw_run(
        &[file.display().to_string(), "--random-inputs".into()],
        &Place::default(),
    );
    let stderr = text(&out).1;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is bound to device 2, which no registered worker offers"),
        "{stderr}"
    );
    cluster.assert_no_buffers();
    assert_eq!(cluster.status().counters.unwrap().runs_failed, 2);
}

/// pw-worker links no MLIR (it receives compiled executables); pw-server
/// does (it lowers).
#[test]
fn pw_worker_links_no_mlir() {
    let worker = std::fs::read(bin("pw-worker")).expect("pw-worker");
    let server = std::fs::read(bin("pw-server")).expect("pw-server");
    let has = |binary: &[u8], needle: &[u8]| binary.windows(needle.len()).any(|w| w == needle);
    for symbol in [&b"mlirContextCreate"[..], b"MLIRContext"] {
        assert!(
            has(&server, symbol),
            "pw-server lacks {:?}: the check would not notice MLIR",
            String::from_utf8_lossy(symbol)
        );
        assert!(
            !has(&worker, symbol),
            "pw-worker contains {:?}",
            String::from_utf8_lossy(symbol)
        );
    }
}

/// A taken port is a clear error, not a panic.
#[test]
fn a_taken_port_is_a_clear_error() {
    let _serial = serial();
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = holder.local_addr().unwrap().to_string();
    let mut command = Command::new(bin("pw-server"));
    command.args(["--listen", &address]);
    let out = run_bounded(command, Duration::from_secs(20));
    let stderr = text(&out).1;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("already in use"), "{stderr}");
    let mut command = Command::new(bin("pw-worker"));
    command.args(["--controller", "127.0.0.1:1", "--listen", &address]);
    let out = run_bounded(command, Duration::from_secs(20));
    let stderr = text(&out).1;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("already in use"), "{stderr}");
}

/// pw-run finds the plugin the set-up recorded from any directory, with no
/// environment telling it where.
#[test]
fn the_plugin_is_found_from_any_directory() {
    let recorded = pw_pjrt::recorded_plugin_file().expect("a config directory");
    assert!(
        recorded.is_file(),
        "scripts/setup.sh records the plugin in {}",
        recorded.display()
    );
    let mut command = Command::new(bin("pw-run"));
    command
        .args(example_args("pipeline"))
        .current_dir(std::env::temp_dir())
        .env_remove("PW_PJRT_PLUGIN")
        .env_remove("PW_VENV")
        .env(
            "PW_COMPILE_CACHE",
            std::env::temp_dir().join(format!("pw-any-dir-{}", std::process::id())),
        );
    let out = run_bounded(command, Duration::from_secs(120));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("matches"), "{stdout}");
    let _ = std::fs::remove_dir_all(
        std::env::temp_dir().join(format!("pw-any-dir-{}", std::process::id())),
    );
}

/// Two clients at once on the same workers: both runs give JAX's outputs
/// (each worker enqueues one part at a time, in one order).
#[test]
fn concurrent_runs_share_the_workers() {
    let _serial = serial();
    let cluster = Cluster::start(3, 2);
    let runs: Vec<_> = ["pipeline", "rl_step", "partially_placed", "pipeline"]
        .iter()
        .map(|e| {
            let mut args = example_args(e);
            args.push("-q".into());
            cluster.spawn_pw_run(&args)
        })
        .collect();
    runs.into_iter().for_each(|mut run| run.exit_ok());
    assert_eq!(cluster.status().counters.unwrap().runs_ok, 4);
    cluster.assert_no_buffers();
}

/// Long chains in both directions at once, each deeper than what a CPU
/// device admits in flight (32), so a worker blocks while enqueueing: every
/// worker enqueues runs in one order, so none waits for a run the other has
/// not enqueued. One program is big (its text and its parts exceed a
/// megabyte) and travels in chunks.
#[test]
fn long_chains_in_both_directions_at_once() {
    let _serial = serial();
    let mut cluster = Cluster::server(&[], &Place::default());
    cluster.add_worker(1, &[], &[], &Place::default());
    cluster.add_worker(1, &[], &[], &Place::default());
    cluster.wait_for_workers(2);
    // x -> x/2 + 1 converges to 2 from anywhere in [-1, 1) within 60 steps.
    let expected = cluster.dir.join("twos.npy");
    pw_exec::npy::write(
        &expected,
        &pw_exec::HostArray::from_slice(&[4], &[2.0f32; 4]).unwrap(),
    )
    .unwrap();
    let mut runs = Vec::new();
    for (i, (nodes, from_b)) in [(300, false), (300, true), (301, true), (5000, false)]
        .into_iter()
        .enumerate()
    {
        let file = cluster.dir.join(format!("chain{i}.mlir"));
        std::fs::write(
            &file,
            pw_tests::chain_program(nodes, |i| if (i % 2 == 1) != from_b { "b" } else { "a" }),
        )
        .unwrap();
        runs.push(cluster.spawn_pw_run(&[
            file.display().to_string(),
            "--random-inputs".into(),
            "--expect".into(),
            expected.display().to_string(),
            "--timeout".into(),
            "60".into(),
            "-q".into(),
        ]));
    }
    runs.into_iter().for_each(|mut run| run.exit_ok());
    cluster.assert_no_buffers();
}
