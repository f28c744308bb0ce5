//! pw-server and pw-workers as real processes on 127.0.0.1, in one run, as
//! one table (not a timed test):
//!
//! a. 256 MiB moved between two workers (produced on one, consumed on the
//!    other): GB/s from when the bytes were ready at the sender to when the
//!    last landed in the receiver's buffer, beside raw TCP over loopback in
//!    the same run;
//! b. a 1,000-node chain of tiny calls alternating between two workers:
//!    time per node (every hop crosses workers), beside JAX's `device_put`
//!    chain between two devices of one process;
//! c. the 3-stage pipeline (the example, and one with 256-512-512-256
//!    layers and 8 microbatches) on 3 workers of 2 devices vs the embedded
//!    in-process executor on 6 devices: wall time of the run (parts sent to
//!    every part done, vs enqueue to last output), and when the hosts were
//!    done enqueuing.
//!
//!     benches/cluster.sh        # builds the release binaries, then this
//!     PW_BENCH_SECURED=1 benches/cluster.sh   # the same, authenticated
//!
//! With `PW_BENCH_SECURED=1` the cluster runs as a shared service must: the
//! server with `--token`, server and workers with a cluster secret (so
//! every worker port asks for it, and each data connection starts with its
//! handshake), and this process's calls presenting the token.
//!
//! Uses the release `pw-server`, `pw-worker` of `target/release`, the CPU
//! plugin the set-up recorded, and the venv's JAX. Compilation is excluded
//! (a warm-up run first); medians of 5 runs. On a GPU machine,
//! benches/gpu.sh runs the same binary with the CUDA plugin
//! (`PW_PJRT_PLUGIN`, `PW_PJRT_CLIENT_OPTIONS`, `PW_PYTHON`,
//! `PW_BENCH_JAX_PLATFORM`, `PW_BENCH_BIN_DIR`, `PW_ROOT`); `c` then needs
//! more devices than one GPU and is not run.

use pw_benches::{binary, fail, pipeline_program, pjrt_client, python};
use pw_controller::{
    client::{self, RemoteRun},
    summary::RunSummary,
};
use pw_core::DType;
use pw_exec::{self as exec, cache::Executables, Executor, HostArray};
use pw_tests::chain_program;
use std::{
    io::{BufRead, BufReader, Read, Write},
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

const RUNS: usize = 5;
const NODES: usize = 1000;

/// Processes started by PID, ended by PID on drop.
struct Cluster {
    children: Vec<Child>,
    address: String,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Starts `command` and waits (at most 30 s) for "listening on" on stdout.
fn start(mut command: Command) -> (Child, String) {
    // `PW_BENCH_VERBOSE=1`: the processes' logs on this one's stderr.
    let verbose = std::env::var("PW_BENCH_VERBOSE").is_ok_and(|v| v == "1");
    command
        .stdout(Stdio::piped())
        .stderr(if verbose {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .env("TF_CPP_MIN_LOG_LEVEL", "2");
    let mut child = command.spawn().unwrap_or_else(|e| fail(e));
    let stdout = child.stdout.take().unwrap_or_else(|| fail("no stdout"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(a) = line.split("listening on ").nth(1) {
                let _ = tx.send(a.trim().to_owned());
            }
        }
    });
    let address = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| fail("a process did not start"));
    (child, address)
}

/// The token and cluster secret of a secured run (`PW_BENCH_SECURED=1`).
const TOKEN: &str = "bench-token-0123456789";
const CLUSTER_SECRET: &str = "bench-cluster-secret-0123456789";

fn secured() -> bool {
    std::env::var("PW_BENCH_SECURED").is_ok_and(|v| v == "1")
}

/// `command` with the cluster secret, or without any, as the run asks.
fn credentials(command: &mut Command) {
    command
        .env_remove("PW_TOKEN")
        .env_remove("PW_CLUSTER_SECRET");
    if secured() {
        command.env("PW_CLUSTER_SECRET", CLUSTER_SECRET);
    }
}

/// A server with `workers` workers of `devices` devices, sending pieces
/// over `data_plane` (`tcp` or `grpc`).
fn cluster(root: &Path, workers: usize, devices: usize, data_plane: &str) -> Cluster {
    let cache = std::env::temp_dir().join(format!("pw-bench-cluster-{}", std::process::id()));
    let mut server = Command::new(binary(root, "pw-server"));
    server
        .args(["--listen", "127.0.0.1:0", "--compile-cache"])
        .arg(&cache);
    credentials(&mut server);
    if secured() {
        server.args(["--token", TOKEN]);
    }
    let (child, address) = start(server);
    let mut c = Cluster {
        children: vec![child],
        address,
    };
    for _ in 0..workers {
        let mut w = Command::new(binary(root, "pw-worker"));
        w.args([
            "--controller",
            &c.address,
            "--devices",
            &devices.to_string(),
            "--data-plane",
            data_plane,
        ]);
        credentials(&mut w);
        let (child, _) = start(w);
        c.children.push(child);
    }
    let runtime = runtime();
    let deadline = Instant::now() + Duration::from_secs(30);
    while runtime
        .block_on(client::status(&c.address))
        .map(|s| s.workers.len())
        .unwrap_or(0)
        < workers
    {
        if Instant::now() > deadline {
            fail("the workers did not register");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    c
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(e))
}

/// Runs `text` on the cluster `RUNS` times after a warm-up; the summaries.
fn remote_runs(c: &Cluster, text: &str, inputs: &[HostArray], record: bool) -> Vec<RunSummary> {
    let runtime = runtime();
    let run = || {
        runtime
            .block_on(client::run(
                &c.address,
                RemoteRun {
                    name: "bench",
                    source: text.as_bytes(),
                    inputs,
                    record,
                    timeout: None,
                    schedule: None,
                },
                &mut |_| {},
            ))
            .unwrap_or_else(|e| fail(e))
            .1
    };
    run();
    (0..RUNS).map(|_| run()).collect()
}

/// Adds a row to the table, and shows it at once (a later part may fail).
fn add(rows: &mut Vec<[String; 3]>, row: [String; 3]) {
    eprintln!("| {} | {} | {} |", row[0], row[1], row[2]);
    rows.push(row);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn ms(d: f64) -> String {
    format!("{:.2} ms", d * 1e3)
}

/// `y = broadcast(s)` (256 MiB) on @a, then one element of it on @b.
fn transfer_program(rows: usize, cols: usize) -> String {
    let big = format!("tensor<{rows}x{cols}xf32>");
    format!(
        r#"module {{
  pw.mesh @a []
  pw.mesh @b []
  "builtin.module"() <{{sym_name = "produce"}}> ({{
    "func.func"() <{{function_type = (tensor<f32>) -> {big}, sym_name = "main", sym_visibility = "public"}}> ({{
    ^bb0(%s: tensor<f32>):
      %0 = "stablehlo.broadcast_in_dim"(%s) <{{broadcast_dimensions = array<i64>}}> : (tensor<f32>) -> {big}
      "func.return"(%0) : ({big}) -> ()
    }}) : () -> ()
  }}) {{mhlo.num_partitions = 1 : i32}} : () -> ()
  "builtin.module"() <{{sym_name = "consume"}}> ({{
    "func.func"() <{{function_type = ({big}) -> tensor<1x1xf32>, sym_name = "main", sym_visibility = "public"}}> ({{
    ^bb0(%x: {big}):
      %0 = "stablehlo.slice"(%x) <{{limit_indices = array<i64: 1, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}}> : ({big}) -> tensor<1x1xf32>
      "func.return"(%0) : (tensor<1x1xf32>) -> ()
    }}) : () -> ()
  }}) {{mhlo.num_partitions = 1 : i32}} : () -> ()
  func.func @main(%s: !pw.array<f32, @a, []>) -> !pw.array<1x1xf32, @b> {{
    %y = pw.call @produce(%s) on @a : (!pw.array<f32, @a, []>) -> !pw.array<{rows}x{cols}xf32, @a>
    %z = pw.call @consume(%y) on @b : (!pw.array<{rows}x{cols}xf32, @a>) -> !pw.array<1x1xf32, @b>
    return %z : !pw.array<1x1xf32, @b>
  }}
}}
"#
    )
}

/// a: seconds from the sender's bytes being ready to the receiver's copy
/// step being done, per run.
fn transfer_seconds(s: &RunSummary) -> Option<f64> {
    let sent = |w: u32| {
        s.part_sent
            .iter()
            .find(|(x, _)| *x == w)
            .map_or(Duration::ZERO, |x| x.1)
    };
    let send = s
        .parts
        .iter()
        .find_map(|p| p.sends.first().map(|r| (p.worker, r.clone())))?;
    let receiver = s.parts.iter().find(|p| p.worker == send.1.to)?;
    let done = receiver
        .steps
        .iter()
        .find(|(i, _)| *i as u32 == send.1.step)?
        .1
        .done
        .iter()
        .filter_map(|(_, d)| *d)
        .max()?;
    let start = sent(send.0) + send.1.start;
    let end = sent(receiver.worker) + done;
    Some(end.checked_sub(start)?.as_secs_f64())
}

/// Raw TCP over loopback: `bytes` from one thread to another, GB/s.
fn raw_tcp(bytes: usize) -> f64 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| fail(e));
    let address = listener.local_addr().unwrap_or_else(|e| fail(e));
    let reader = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap_or_else(|e| fail(e));
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0;
        while got < bytes {
            let n = s.read(&mut buf).unwrap_or_else(|e| fail(e));
            if n == 0 {
                break;
            }
            got += n;
        }
        Instant::now()
    });
    let data = vec![7u8; 1 << 20];
    let mut s = std::net::TcpStream::connect(address).unwrap_or_else(|e| fail(e));
    let start = Instant::now();
    for _ in 0..bytes / data.len() {
        s.write_all(&data).unwrap_or_else(|e| fail(e));
    }
    drop(s);
    let end = reader.join().unwrap_or_else(|_| fail("reader"));
    bytes as f64 / (end - start).as_secs_f64() / 1e9
}

/// JAX's chain: (µs per node alternating between two devices, or on its
/// one device where it has one; what was measured).
fn jax_chain(root: &Path) -> (f64, String) {
    let out = Command::new(python(root))
        .arg(root.join("benches/jax_chain.py"))
        .args(["--nodes", &NODES.to_string()])
        .output()
        .unwrap_or_else(|e| fail(e));
    if !out.status.success() {
        fail(String::from_utf8_lossy(&out.stderr));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| fail(e));
    let version = v["jax"].as_str().unwrap_or("?");
    let kind = v["kind"].as_str().unwrap_or("?");
    match v["alternating"].as_f64() {
        Some(t) => (
            t,
            format!("JAX {version}, device_put between 2 devices ({kind}) of one process"),
        ),
        None => (
            v["single"].as_f64().unwrap_or(f64::NAN),
            format!("JAX {version}, the chain on its one device ({kind}; no second to hop to)"),
        ),
    }
}

/// Inputs for a program's signature: small floats.
fn inputs_for(text: &str) -> Vec<HostArray> {
    pw_tools::lower::input_types("bench", text.as_bytes())
        .unwrap_or_else(|e| fail(e))
        .iter()
        .map(|(dtype, shape)| {
            let shape: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
            let n: usize = shape.iter().product();
            match dtype {
                DType::F32 => HostArray::from_slice(
                    &shape,
                    &(0..n).map(|i| (i % 7) as f32 * 0.1).collect::<Vec<_>>(),
                ),
                other => Ok(HostArray::zeros(*other, &shape)),
            }
            .unwrap_or_else(|e| fail(e))
        })
        .collect()
}

/// The embedded executor on `devices` devices: median (enqueued, last
/// output ready) over `RUNS` after a warm-up.
fn embedded(text: &str, inputs: &[HostArray], devices: usize) -> (f64, f64) {
    let client = pjrt_client(Some(devices));
    let topology = || {
        Ok((
            pw_core::Topology::local(devices as i64, "cpu")?,
            String::new(),
        ))
    };
    let (plan, _) = pw_tools::lower::plan_of("bench", text.as_bytes(), None, &topology)
        .unwrap_or_else(|e| fail(e));
    let mut cache = Executables::new(&client, None);
    let prepared = exec::prepare(&plan, &mut cache, &mut |_| {}).unwrap_or_else(|e| fail(e));
    let executor = Executor::new(&client);
    let run = || {
        exec::run_local(&executor, &prepared, inputs, None, false)
            .unwrap_or_else(|e| fail(e))
            .1
    };
    run();
    let reports: Vec<_> = (0..RUNS).map(|_| run()).collect();
    (
        median(reports.iter().map(|r| r.enqueued.as_secs_f64()).collect()),
        median(
            reports
                .iter()
                .map(|r| r.outputs_ready.as_secs_f64())
                .collect(),
        ),
    )
}

/// What the PJRT plugin spends per hop of the chain, without any
/// network: (an execution enqueued on a buffer whose bytes come later, from
/// its last byte to its output read, or None where execute waits for its
/// input; the same on a ready input), medians.
fn hop_in_pjrt() -> (Option<f64>, f64) {
    const STEP: &str = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %h = stablehlo.constant dense<0.5> : tensor<4xf32>\n  %0 = stablehlo.multiply %x, %h : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n";
    let client = pjrt_client(Some(1));
    let device = client.devices()[0].clone();
    let options = pw_pjrt::CompileOptions::for_device_ids(&[0], false).unwrap_or_else(|e| fail(e));
    let exe = client
        .compile(&pw_pjrt::Program::mlir_text(STEP), &options)
        .unwrap_or_else(|e| fail(e));
    let bytes = vec![0u8; 16];
    let read = |b: &pw_pjrt::Buffer| b.to_host().unwrap_or_else(|e| fail(e));
    let (mut deferred, mut ready) = (Vec::new(), Vec::new());
    let mut blocks = false;
    for _ in 0..100 {
        // 16 at a time: below the 32 executions a CPU device admits in
        // flight. Enqueued by another thread: a plugin whose execute waits
        // for its input to be defined (seen as a stall of 10 s) gets its
        // bytes anyway, and the row says so.
        let (transfers, buffers): (Vec<_>, Vec<_>) = (0..16)
            .map(|_| {
                client
                    .buffer_for_async_transfer(&device, DType::F32, &[4])
                    .unwrap_or_else(|e| fail(e))
            })
            .unzip();
        let (tx, rx) = std::sync::mpsc::channel();
        let runs = std::thread::scope(|scope| {
            let enqueue = scope.spawn(|| {
                let runs: Vec<_> = buffers
                    .iter()
                    .map(|b| exe.execute(&[vec![b]]).unwrap_or_else(|e| fail(e)))
                    .collect();
                let _ = tx.send(());
                runs
            });
            let mut transfers = transfers;
            if rx.recv_timeout(Duration::from_secs(10)).is_err() {
                blocks = true;
                for t in &mut transfers {
                    t.write(bytes.clone(), true).unwrap_or_else(|e| fail(e));
                }
                transfers.clear();
            }
            let runs = enqueue.join().unwrap_or_else(|_| fail("enqueue"));
            runs.into_iter()
                .zip(
                    transfers
                        .into_iter()
                        .map(Some)
                        .chain(std::iter::repeat_with(|| None)),
                )
                .collect::<Vec<_>>()
        });
        for (run, transfer) in runs {
            let Some(mut transfer) = transfer else {
                read(&run.outputs[0][0]);
                continue;
            };
            let start = Instant::now();
            transfer
                .write(bytes.clone(), true)
                .unwrap_or_else(|e| fail(e));
            read(&run.outputs[0][0]);
            deferred.push(start.elapsed().as_secs_f64());
        }
        let input = client
            .buffer_from_host(&bytes, DType::F32, &[4], &device)
            .unwrap_or_else(|e| fail(e));
        let start = Instant::now();
        let run = exe.execute(&[vec![&input]]).unwrap_or_else(|e| fail(e));
        read(&run.outputs[0][0]);
        ready.push(start.elapsed().as_secs_f64());
        if blocks {
            break;
        }
    }
    ((!blocks).then(|| median(deferred)), median(ready))
}

fn main() {
    // This process's calls present the token of a secured run (set before
    // any thread exists).
    if secured() {
        std::env::set_var("PW_TOKEN", TOKEN);
    } else {
        std::env::remove_var("PW_TOKEN");
    }
    let root = pw_benches::root();
    // The plugin's platform and device kind; the pipelines of c need six
    // devices, which only a CPU plugin makes on one machine.
    let (platform, kind) = {
        let client = pjrt_client(None);
        let kind = client.devices().first().map(|d| d.kind().to_owned());
        (client.platform_name().to_owned(), kind.unwrap_or_default())
    };
    let cpu = platform == "cpu";
    let mut rows: Vec<[String; 3]> = Vec::new();

    let tcp = median((0..RUNS).map(|_| raw_tcp(256 << 20)).collect());
    for plane in ["tcp", "grpc"] {
        eprintln!("a. 256 MiB between two workers ({plane})...");
        let c = cluster(&root, 2, 1, plane);
        let text = transfer_program(8192, 8192);
        let inputs = vec![HostArray::from_slice::<f32>(&[], &[1.5]).unwrap_or_else(|e| fail(e))];
        let summaries = remote_runs(&c, &text, &inputs, true);
        let bytes = 8192.0 * 8192.0 * 4.0;
        let pw = median(
            summaries
                .iter()
                .filter_map(transfer_seconds)
                .map(|s| bytes / s / 1e9)
                .collect(),
        );
        add(&mut rows, [
            format!("a. 256 MiB from one worker to another over the {plane} data plane (bytes ready at the sender to the last in the receiver's buffer)"),
            format!("{pw:.2} GB/s"),
            format!("raw TCP over loopback: {tcp:.2} GB/s"),
        ]);
    }

    let (jax, peer) = jax_chain(&root);
    for plane in ["tcp", "grpc"] {
        eprintln!("b. 1,000-node chain across two workers ({plane})...");
        let c = cluster(&root, 2, 1, plane);
        let text = chain_program(NODES, |i| if i % 2 == 1 { "b" } else { "a" });
        let inputs = inputs_for(&text);
        let summaries = remote_runs(&c, &text, &inputs, false);
        let per_node = median(
            summaries
                .iter()
                .map(|s| (s.timings.parts_done - s.timings.parts_sent).as_secs_f64() / NODES as f64)
                .collect(),
        );
        add(&mut rows, [
            format!("b. chain of {NODES} tiny calls alternating between two workers, {plane} data plane: time per node (each a hop between workers)"),
            format!("{:.1} µs", per_node * 1e6),
            format!("{peer}: {jax:.1} µs"),
        ]);
    }

    eprintln!("b. what one hop costs PJRT...");
    {
        let (deferred, ready) = hop_in_pjrt();
        add(&mut rows, [
            "b. of a hop, in PJRT alone (one process): an execution enqueued before its input, from the input's last byte to its output read".into(),
            match deferred {
                Some(d) => format!("{:.1} µs", d * 1e6),
                None => "n/a: this plugin's execute waits until its input is defined".into(),
            },
            format!("the same execution on a ready input, enqueue to output read: {:.1} µs", ready * 1e6),
        ]);
    }

    eprintln!("c. pipelines on 3 workers vs in one process...");
    if !cpu {
        add(
            &mut rows,
            [
                "c. pipelines on 3 workers of 2 devices vs in process (6 devices)".into(),
                format!("not run: the {platform} plugin has too few devices here"),
                String::new(),
            ],
        );
    } else {
        let c = cluster(&root, 3, 2, "tcp");
        let example = std::fs::read_to_string(root.join("examples/pipeline.mlir"))
            .unwrap_or_else(|e| fail(e));
        for (what, text) in [
            ("the pipeline example (3 stages, 4 microbatches)", example),
            (
                "a 3-stage pipeline 256-512-512-256, 64 rows, 8 microbatches",
                pipeline_program(&root, 8, Some((256, 64))),
            ),
        ] {
            let inputs = inputs_for(&text);
            let summaries = remote_runs(&c, &text, &inputs, false);
            let wall = median(
                summaries
                    .iter()
                    .map(|s| (s.timings.parts_done - s.timings.parts_sent).as_secs_f64())
                    .collect(),
            );
            let end_to_end = median(
                summaries
                    .iter()
                    .map(|s| s.timings.outputs_fetched.as_secs_f64())
                    .collect(),
            );
            let enqueued = median(
                summaries
                    .iter()
                    .map(|s| {
                        s.parts
                            .iter()
                            .map(|p| {
                                let sent = s
                                    .part_sent
                                    .iter()
                                    .find(|(w, _)| *w == p.worker)
                                    .map_or(Duration::ZERO, |x| x.1);
                                (sent + p.enqueued)
                                    .saturating_sub(s.timings.parts_sent)
                                    .as_secs_f64()
                            })
                            .fold(0.0, f64::max)
                    })
                    .collect(),
            );
            let (local_enqueued, local_ready) = embedded(&text, &inputs, 6);
            add(
                &mut rows,
                [
                    format!("c. {what}: wall time, 3 workers vs in process (6 devices)"),
                    format!(
                        "{} ({:.2}x in process); hosts done enqueuing at {}; whole request {}",
                        ms(wall),
                        wall / local_ready,
                        ms(enqueued),
                        ms(end_to_end)
                    ),
                    format!(
                        "in process: {} (enqueued at {})",
                        ms(local_ready),
                        ms(local_enqueued)
                    ),
                ],
            );
        }
    }

    let how = if secured() {
        "authenticated: --token, a cluster secret, the data plane's handshake"
    } else {
        "no token, no cluster secret"
    };
    println!("pw-server and pw-workers on 127.0.0.1 (release builds; {platform} plugin, {kind}; medians of {RUNS} runs after a warm-up; {how})\n");
    println!("| benchmark | pw | peer, same run |");
    println!("| --- | --- | --- |");
    for [a, b, c] in rows {
        println!("| {a} | {b} | {c} |");
    }
}
