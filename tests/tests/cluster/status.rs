//! The status page: `/api/status` and `pw-status` show what is queued on
//! every device and, for a run that stopped making progress, its chain of
//! unmet dependencies; a real headless Chromium renders the page of a run
//! stalled by a hung (SIGSTOPped) worker, with the chain drawn as a graph
//! and the timeline of a device that was busy, and the screenshot holds
//! both.

use crate::harness::{
    bin, example_args, made_pipeline, run_bounded, serial, slow_cluster, text, Cluster, Proc,
};
use pw_tests::repo_root;
use serde_json::Value;
use std::{
    io::{Read, Write},
    net::TcpStream,
    process::Command,
    time::{Duration, Instant},
};

/// A free port on loopback (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// GET `path` from `127.0.0.1:port`: (status line, body), bounded by 10 s.
fn get(port: u16, path: &str) -> Result<(String, String), String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut all = String::new();
    s.read_to_string(&mut all).map_err(|e| e.to_string())?;
    let (head, body) = all.split_once("\r\n\r\n").ok_or("no HTTP header")?;
    Ok((
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    ))
}

fn api_status(port: u16) -> Value {
    let (status, body) = get(port, "/api/status").expect("GET /api/status");
    assert!(status.contains("200"), "{status}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Waits (at most `limit`) until `/api/status` satisfies `ok`.
fn wait_status(port: u16, limit: Duration, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let v = api_status(port);
        if ok(&v) {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "/api/status did not get there within {limit:?}: {v:#}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A server with the status page on `port`, a lease long enough that a
/// hung worker keeps it during the test, and runs stalled after 1 s
/// without progress; worker 1 (stage 1 of the pipeline) sleeps 30 s before
/// its first step, so the run stays under way.
fn cluster(port: u16) -> Cluster {
    let http = format!("127.0.0.1:{port}");
    slow_cluster(&[
        "--http",
        &http,
        "--lease-ms",
        "120000",
        "--stall-ms",
        "1000",
    ])
}

fn stalled(v: &Value) -> bool {
    v["runs"]
        .as_array()
        .is_some_and(|r| r.iter().any(|r| r["stalled"] == true))
}

fn list(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

/// Every queued step of every device of worker `w`.
fn queued(w: &Value) -> Vec<Value> {
    list(&w["devices"])
        .iter()
        .flat_map(|d| {
            std::iter::once(d["running"].clone())
                .filter(|r| !r.is_null())
                .chain(list(&d["queue"]))
        })
        .collect()
}

#[test]
fn the_status_json_and_pw_status_show_queues_and_the_stalled_chain() {
    let _serial = serial();
    let port = free_port();
    let c = cluster(port);
    let (status, page) = get(port, "/").expect("GET /");
    assert!(
        status.contains("200") && page.contains("/api/status"),
        "{status}"
    );
    let idle = api_status(port);
    assert_eq!(list(&idle["workers"]).len(), 3, "{idle:#}");
    assert_eq!(idle["sessions"], Value::Array(vec![]));
    assert_eq!(idle["waiting"], Value::Array(vec![]));
    let mut run: Proc = c.spawn_pw_run(&example_args("pipeline"));
    let v = wait_status(port, Duration::from_secs(60), stalled);
    // Workers: every field, every device.
    for w in list(&v["workers"]) {
        for field in [
            "id",
            "address",
            "host",
            "pid",
            "island",
            "answering",
            "last_heartbeat_ms",
        ] {
            assert!(!w[field].is_null(), "worker without {field}: {w:#}");
        }
        assert_eq!(w["answering"], true, "{w:#}");
        let devices = list(&w["devices"]);
        assert_eq!(devices.len(), 2, "{w:#}");
        for d in devices {
            assert!(d["id"].is_i64() && d["local_id"].is_u64(), "{d:#}");
            assert!(d.get("running").is_some() && d["queue"].is_array(), "{d:#}");
        }
    }
    // Worker 2 (stage 2) waits for pieces worker 1 sends.
    let w2 = &list(&v["workers"])[2];
    let waits: Vec<Value> = queued(w2)
        .iter()
        .flat_map(|s| list(&s["waits_for"]))
        .collect();
    assert!(
        waits
            .iter()
            .any(|w| w["worker"] == 1 && w["remote"] == true && w["producer_label"].is_string()),
        "{w2:#}"
    );
    // The run: stalled, its chain ending on worker 1, which has not
    // enqueued its first step (it sleeps).
    let r = list(&v["runs"]).remove(0);
    for field in [
        "run",
        "name",
        "steps_done",
        "steps_total",
        "since_progress_ms",
    ] {
        assert!(!r[field].is_null(), "run without {field}: {r:#}");
    }
    assert!(r["name"].as_str().unwrap_or_default().contains("pipeline"));
    let chain = list(&r["chain"]);
    let last = chain.last().expect("a chain");
    assert_eq!(last["worker"], 1, "{r:#}");
    assert_eq!(last["state"], "not enqueued", "{r:#}");
    assert!(v["counters"]["runs_ok"].is_u64(), "{v:#}");
    // Every device has its activity; worker 2's devices have been seen
    // waiting for the pieces worker 1 does not send yet.
    let v = wait_status(port, Duration::from_secs(30), |v| {
        list(&v["workers"]).iter().any(|w| {
            w["id"] == 2
                && list(&w["devices"])
                    .iter()
                    .flat_map(|d| list(&d["timeline"]))
                    .any(|s| s["state"] == "waiting" && s["owner"].is_string())
        })
    });
    for d in list(&v["workers"]).iter().flat_map(|w| list(&w["devices"])) {
        let a = &d["activity"];
        for field in [
            "busy_s",
            "waiting_s",
            "queued_steps",
            "held_bytes",
            "held_buffers",
        ] {
            assert!(
                a[field].is_number(),
                "device activity without {field}: {d:#}"
            );
        }
    }
    // pw-status: the same as tables, and the raw JSON.
    let mut tables = Command::new(bin("pw-status"));
    tables.args(["--server", &c.address]);
    let out = run_bounded(tables, Duration::from_secs(30));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for wanted in [
        "WORKERS (3)",
        "STALLED",
        "waits for value",
        "worker 1 (a piece it sends)",
        "not enqueued",
        "running:",
    ] {
        assert!(
            stdout.contains(wanted),
            "pw-status lacks {wanted:?}:\n{stdout}"
        );
    }
    let mut json = Command::new(bin("pw-status"));
    json.args(["--server", &c.address, "--json"]);
    let out = run_bounded(json, Duration::from_secs(30));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let parsed: Value = serde_json::from_str(stdout.trim()).expect("pw-status --json");
    assert_eq!(list(&parsed["workers"]).len(), 3);
    assert!(stalled(&parsed), "{parsed:#}");
    let mut help = Command::new(bin("pw-status"));
    help.arg("--help");
    let (stdout, _) = text(&run_bounded(help, Duration::from_secs(30)));
    assert!(
        stdout.contains("Examples") && stdout.contains("--json"),
        "{stdout}"
    );
    // An unreachable server is a clear error.
    let mut nobody = Command::new(bin("pw-status"));
    nobody.args(["--server", &format!("127.0.0.1:{}", free_port())]);
    let out = run_bounded(nobody, Duration::from_secs(30));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot reach pw-server"), "{stderr}");
    let _ = run.child.kill();
}

/// How many busy spans worker `w`'s devices show.
fn busy_spans(w: &Value) -> usize {
    list(&w["devices"])
        .iter()
        .flat_map(|d| list(&d["timeline"]))
        .filter(|s| s["state"] == "busy")
        .count()
}

/// Pixels of the PNG at `path` within 3 of colour `hex` (`rrggbb`) in
/// each channel.
fn pixels_of(path: &std::path::Path, hex: &str) -> usize {
    let want: Vec<i32> = (0..3)
        .map(|i| i32::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("a hex colour"))
        .collect();
    let file = std::fs::File::open(path).expect("the screenshot");
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    assert!(channels >= 3, "a colour screenshot: {:?}", info.color_type);
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| (0..3).all(|i| (i32::from(p[i]) - want[i]).abs() <= 3))
        .count()
}

/// The DOM text of `s` as Chromium serializes it.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[test]
fn the_page_shows_a_run_stalled_by_a_hung_worker_in_chromium() {
    let _serial = serial();
    let chromium = std::env::var_os("PW_CHROMIUM").unwrap_or_else(|| "chromium".into());
    if Command::new(&chromium).arg("--version").output().is_err() {
        assert!(
            std::env::var_os("PW_REQUIRE_BROWSER").is_none(),
            "chromium is missing (scripts/test.sh installs it)"
        );
        eprintln!("skipped: chromium is not installed (scripts/test.sh installs it)");
        return;
    }
    let port = free_port();
    // Wide layers: worker 0's stage keeps its devices busy for a while
    // before worker 1 (which sleeps before its first step) hangs; few
    // microbatches, so every host enqueues its whole part.
    let args = made_pipeline("wide", [8, 1024, 1024]);
    let c = cluster(port);
    let mut run = c.spawn_pw_run(&args);
    let deadline = Instant::now() + Duration::from_secs(60);
    let started = |c: &Cluster| {
        c.status()
            .workers
            .iter()
            .find(|w| w.worker == 1)
            .and_then(|w| w.counters)
            .is_some_and(|c| c.runs_active > 0)
    };
    while !started(&c) {
        assert!(Instant::now() < deadline, "worker 1 never started the run");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Worker 0 computes its stage (worker 1 takes its pieces while its host
    // sleeps); then worker 1 hangs.
    wait_status(port, Duration::from_secs(60), |v| {
        list(&v["workers"]).iter().any(|w| {
            w["id"] == 0
                && busy_spans(w) > 0
                && list(&w["devices"])
                    .iter()
                    .all(|d| d["activity"]["queued_steps"] == 0)
        })
    });
    c.workers[1].signal("STOP");
    let v = wait_status(port, Duration::from_secs(60), |v| {
        stalled(v)
            && list(&v["workers"])
                .iter()
                .any(|w| w["id"] == 0 && busy_spans(w) > 0)
            && list(&v["workers"])
                .iter()
                .any(|w| w["id"] == 1 && w["answering"] == false)
            && list(&v["runs"]).iter().any(|r| {
                list(&r["chain"])
                    .last()
                    .is_some_and(|l| l["state"] == "not answering")
            })
    });
    let r = list(&v["runs"])
        .into_iter()
        .find(|r| r["stalled"] == true)
        .expect("a stalled run");
    let chain = list(&r["chain"]);
    // The stalled step (where the chain starts, on an answering worker)
    // and the input it waits for, from the hung worker.
    let first = &chain[0];
    let stalled_step = first["label"].as_str().expect("a label").to_owned();
    let wait = list(&first["waits_for"])
        .into_iter()
        .next()
        .expect("an unmet input");
    assert_eq!(wait["worker"], 1, "{r:#}");
    let value = wait["value"].to_string();
    let profile = c.dir.join("chromium-profile");
    let url = format!("http://127.0.0.1:{port}/");
    let browse = |extra: &[&str]| {
        let mut cmd = Command::new(&chromium);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--virtual-time-budget=4000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(&url);
        run_bounded(cmd, Duration::from_secs(90))
    };
    let out = browse(&["--dump-dom"]);
    let (dom, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "chromium: {stderr}");
    assert!(
        dom.contains("class=\"run stalled\""),
        "no stalled run:\n{dom}"
    );
    assert!(
        dom.contains(&escaped(&stalled_step)),
        "no {stalled_step}:\n{dom}"
    );
    assert!(
        dom.contains(&format!("waits for value {value} from")),
        "no unmet value {value}:\n{dom}"
    );
    assert!(dom.contains("not answering"), "{dom}");
    // The chain as a graph, ending at the hung worker; worker 0's devices
    // busy with the run, in its colour.
    assert!(
        dom.contains("class=\"chain-graph\""),
        "no chain graph:\n{dom}"
    );
    assert!(
        dom.contains("class=\"node not-answering\""),
        "no hung link in the graph:\n{dom}"
    );
    let row = dom
        .split("<tr class=\"device-row\" data-worker=\"0\"")
        .nth(1)
        .expect("worker 0's devices in the timelines");
    let busy = row
        .split("</tr>")
        .next()
        .and_then(|r| r.split("<rect class=\"busy\"").nth(1))
        .expect("a busy span on worker 0");
    let fill = busy
        .split("fill=\"#")
        .nth(1)
        .map(|f| f[..6].to_owned())
        .expect("the span's colour");
    // The picture, kept as a test artefact.
    let dir = repo_root().join("target/test-artefacts");
    std::fs::create_dir_all(&dir).expect("artefacts dir");
    let png = dir.join("status-page.png");
    let _ = std::fs::remove_file(&png);
    let out = browse(&[
        "--window-size=1280,1600",
        &format!("--screenshot={}", png.display()),
    ]);
    assert_eq!(out.status.code(), Some(0), "chromium: {}", text(&out).1);
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(size > 1000, "no screenshot at {}", png.display());
    // In the picture: the busy span in its colour, and the red of the
    // hung link.
    let busy_pixels = pixels_of(&png, &fill);
    let red_pixels = pixels_of(&png, "d62728");
    assert!(
        busy_pixels >= 20,
        "{busy_pixels} pixels of the busy span's #{fill} in {}",
        png.display()
    );
    assert!(
        red_pixels >= 500,
        "{red_pixels} pixels of the hung link's red in {}",
        png.display()
    );
    eprintln!("the status page: {}", png.display());
    c.workers[1].signal("CONT");
    let _ = run.child.kill();
}
