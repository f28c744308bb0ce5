//! Faults: a worker killed, hung, exiting at a step, or sending corrupted
//! or truncated pieces; malformed requests. With recovery off
//! (`--max-recoveries 0`), each fails the run with a clear error naming
//! what went wrong; the server carries on with what is left; no worker
//! keeps a buffer.

use crate::harness::{
    assert_matches, example_args, faulty_cluster, serial, slow_cluster, text, Cluster, Place,
};
use pw_wire::proto;
use std::time::{Duration, Instant};

/// These tests see a lost worker fail the run (recovery: `recovery.rs`).
const NO_RECOVERY: &[&str] = &["--max-recoveries", "0"];

/// The run fails within `limit` of the fault; returns pw-run's stderr and
/// how long it took.
fn fails_within(
    run: &mut crate::harness::Proc,
    since: Instant,
    limit: Duration,
) -> (String, Duration) {
    let status = run.wait_exit(limit + Duration::from_secs(10));
    let took = since.elapsed();
    let stderr = run.stderr_text();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "pw-run: {stderr}");
    assert!(
        took <= limit,
        "the run failed {took:?} after the fault (limit {limit:?}): {stderr}"
    );
    (stderr, took)
}

/// The surviving workers run the next program (sharing devices if they
/// must), and hold nothing afterwards.
fn carries_on(c: &Cluster, workers: usize) {
    c.wait_for_workers(workers);
    assert_matches(&c.pw_run(&example_args("pipeline"), &Place::default()));
    c.assert_no_buffers();
}

#[test]
fn a_killed_worker_fails_the_run_and_the_server_carries_on() {
    let _serial = serial();
    let mut c = slow_cluster(NO_RECOVERY);
    let mut run = c.spawn_pw_run(&example_args("pipeline"));
    c.wait_run_started(1);
    let killed = Instant::now();
    c.workers[1].signal("KILL");
    let (stderr, took) = fails_within(&mut run, killed, Duration::from_secs(2));
    eprintln!("killed worker detected; the run failed {took:?} after the kill");
    assert!(stderr.contains("worker 1 ("), "{stderr}");
    assert!(stderr.contains("was lost"), "{stderr}");
    assert!(stderr.contains("had not finished step #"), "{stderr}");
    assert!(c.server.exited().is_none(), "the server died");
    carries_on(&c, 2);
}

#[test]
fn a_hung_worker_loses_its_lease() {
    let _serial = serial();
    let c = slow_cluster(NO_RECOVERY);
    let mut run = c.spawn_pw_run(&example_args("pipeline"));
    c.wait_run_started(1);
    let stopped = Instant::now();
    c.workers[1].signal("STOP");
    // The lease is 1.5 s, checked every 100 ms.
    let (stderr, took) = fails_within(&mut run, stopped, Duration::from_secs(4));
    eprintln!("hung worker detected; the run failed {took:?} after SIGSTOP");
    assert!(
        stderr.contains("worker 1 (") && stderr.contains("was lost"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no heartbeat") || stderr.contains("silent for"),
        "{stderr}"
    );
    carries_on(&c, 2);
}

#[test]
fn a_worker_exiting_at_a_step_fails_the_run() {
    let _serial = serial();
    let mut c = faulty_cluster(NO_RECOVERY, 1, "exit-at-step=first");
    let out = c.pw_run(&example_args("pipeline"), &Place::default());
    let stderr = text(&out).1;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("worker 1 (") && stderr.contains("was lost"),
        "{stderr}"
    );
    assert_eq!(
        c.workers[1]
            .wait_exit(Duration::from_secs(5))
            .and_then(|s| s.code()),
        Some(86)
    );
    carries_on(&c, 2);
}

/// Corrupted or truncated pieces are errors at the receiver, never wrong
/// data.
#[test]
fn bad_pieces_fail_the_run() {
    let _serial = serial();
    for (fault, expected) in [
        ("corrupt-pieces", "checksum mismatch"),
        ("truncate-pieces", "the stream from worker 0 ended"),
    ] {
        let mut c = Cluster::server(&[], &Place::default());
        c.add_worker(2, &[], &[("PW_WORKER_FAULTS", fault)], &Place::default());
        c.add_worker(2, &[], &[], &Place::default());
        c.add_worker(2, &[], &[], &Place::default());
        c.wait_for_workers(3);
        let out = c.pw_run(&example_args("pipeline"), &Place::default());
        let stderr = text(&out).1;
        assert_eq!(out.status.code(), Some(1), "{fault}: {stderr}");
        assert!(stderr.contains(expected), "{fault}: {stderr}");
        assert!(stderr.contains("failed on worker 1"), "{fault}: {stderr}");
        c.assert_no_buffers();
        // The faulty worker stays; the server still runs programs that do
        // not need its pieces: here every run does, so only check status.
        assert_eq!(c.status().workers.len(), 3);
    }
}

/// Requests that make no sense get errors, never crashes; the worker
/// serves on.
#[test]
fn malformed_requests_get_errors() {
    let _serial = serial();
    let c = Cluster::start(1, 2);
    let address = c.status().workers[0].address.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let channel = pw_wire::net::channel(&address, Duration::from_secs(5))
            .await
            .unwrap();
        let mut w = proto::worker_client::WorkerClient::new(channel);
        // (Parts come only on the worker's session, from the controller:
        // `pw_wire::part::decode` checks them, and the `requests` fuzz
        // target feeds it.)
        // A shard of an unknown run.
        let e = w
            .fetch(proto::FetchRequest {
                run: 77,
                value: 0,
                position: 0,
            })
            .await
            .unwrap_err();
        assert!(e.message().contains("nothing of run 77"), "{e:?}");
        // Chunks out of order, and one declaring more than its type.
        let t = proto::ArrayType {
            dtype: "float32".into(),
            dims: vec![4],
        };
        let chunk = |offset: u64, total: u64, n: usize| proto::Chunk {
            offset,
            total,
            data: bytes::Bytes::from(vec![0u8; n]),
            crc32: None,
        };
        for chunks in [vec![chunk(8, 16, 8)], vec![chunk(0, 1 << 40, 8)]] {
            let messages: Vec<proto::PutRequest> = chunks
                .into_iter()
                .map(|c| proto::PutRequest {
                    run: 1,
                    r#type: Some(t.clone()),
                    chunk: Some(c),
                    ..Default::default()
                })
                .collect();
            let e = w.put(tokio_stream::iter(messages)).await.unwrap_err();
            assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        }
        // A type larger than any shard.
        let huge = proto::PutRequest {
            run: 1,
            r#type: Some(proto::ArrayType {
                dtype: "float64".into(),
                dims: vec![1 << 32, 1 << 32],
            }),
            chunk: Some(chunk(0, 0, 0)),
            ..Default::default()
        };
        let e = w.put(tokio_stream::iter(vec![huge])).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        // An executable under a key that is not one.
        let e = w
            .load(tokio_stream::iter(vec![proto::LoadRequest {
                key: "nope".into(),
                chunk: Some(chunk(0, 0, 0)),
            }]))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        // A piece whose checksum is wrong ends the peer's stream.
        let piece = proto::PushRequest {
            from: 9,
            run: 5,
            step: 0,
            piece: 0,
            chunk: Some(proto::Chunk {
                offset: 0,
                total: 4,
                data: bytes::Bytes::from_static(&[1, 2, 3, 4]),
                crc32: Some(0),
            }),
            failed: String::new(),
        };
        let e = w.push(tokio_stream::iter(vec![piece])).await.unwrap_err();
        assert!(e.message().contains("checksum"), "{e:?}");
        // Registrations speaking another protocol, or an old PJRT C API,
        // are refused with the reason.
        let channel = pw_wire::net::channel(&c.address, Duration::from_secs(5))
            .await
            .unwrap();
        let mut s = proto::registry_client::RegistryClient::new(channel);
        let good = proto::Register {
            protocol: proto::Protocol::V1 as i32,
            address: address.clone(),
            api_major: 0,
            api_minor: 115,
            devices: vec![proto::DeviceInfo {
                local_id: 0,
                kind: "cpu".into(),
            }],
            ..Default::default()
        };
        for (register, reason) in [
            (
                proto::Register {
                    protocol: 99,
                    ..good.clone()
                },
                "wire protocol 99",
            ),
            (
                proto::Register {
                    api_minor: 20,
                    ..good.clone()
                },
                "PJRT C API 0.20",
            ),
            (
                proto::Register {
                    devices: vec![],
                    ..good.clone()
                },
                "no device",
            ),
        ] {
            let event = proto::WorkerEvent {
                event: Some(proto::worker_event::Event::Register(register)),
            };
            let mut replies = s
                .attach(tokio_stream::iter(vec![event]))
                .await
                .unwrap()
                .into_inner();
            match replies.message().await.unwrap() {
                Some(proto::ControllerEvent {
                    event: Some(proto::controller_event::Event::Refused(r)),
                }) => {
                    assert!(r.reason.contains(reason), "{r:?}")
                }
                other => panic!("not refused: {other:?}"),
            }
        }
        // A session that does not start with a registration.
        let channel = pw_wire::net::channel(&c.address, Duration::from_secs(5))
            .await
            .unwrap();
        let mut s = proto::registry_client::RegistryClient::new(channel);
        let beat = proto::WorkerEvent {
            event: Some(proto::worker_event::Event::Heartbeat(Default::default())),
        };
        let e = s.attach(tokio_stream::iter(vec![beat])).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    });
    // Still serving.
    let out = c.pw_run(&example_args("rl_step"), &Place::default());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    c.assert_no_buffers();
}
