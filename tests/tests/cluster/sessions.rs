//! A session driven over the gRPC `Session` stream by a client that is not
//! Python: calls sent without waiting, each taking the previous call's
//! outputs, keep their order and give JAX's outputs; a flood is held to
//! `--max-calls-in-flight`; a client that vanishes with calls in flight
//! leaves nothing on the workers and its devices to the next client; with
//! `--otlp-endpoint`, the session's trace reaches an OpenTelemetry
//! collector (a real OTLP/gRPC service in the test); a program compiled
//! from bytecode runs as its text does, and crafted bytecode cannot crash
//! the server.

use crate::harness::{serial, Cluster, Place};
use pw_controller::api::controller_client::ControllerClient;
use pw_tests::repo_root;
use pw_wire::proto::{
    self, call_argument::Argument, session_event::Event, session_request::Request as Rq,
};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::{transport::Channel, Request, Streaming};

const IN_FLIGHT: u64 = 1;
/// The first array id a client may choose.
const CLIENT_IDS: u64 = 1 << 62;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

struct Session {
    id: u64,
    key: String,
    devices: usize,
    requests: UnboundedSender<proto::SessionRequest>,
    events: Streaming<proto::SessionEvent>,
}

impl Session {
    async fn open(api: &mut ControllerClient<Channel>) -> Session {
        let (requests, rx) = tokio::sync::mpsc::unbounded_channel();
        let open = proto::SessionOpen {
            protocol: pw_wire::PROTOCOL as i32,
            name: "rust-client".into(),
            ..Default::default()
        };
        requests
            .send(proto::SessionRequest {
                request: Some(Rq::Open(open)),
            })
            .unwrap();
        let mut events = api
            .session(UnboundedReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(20), events.message())
                .await
                .expect("granted within 20 s")
                .unwrap()
                .expect("an event");
            match event.event {
                Some(Event::Granted(g)) => {
                    return Session {
                        id: g.session,
                        key: g.key,
                        devices: g.devices.len(),
                        requests,
                        events,
                    }
                }
                Some(Event::Queued(_)) => continue,
                other => panic!("not granted: {other:?}"),
            }
        }
    }

    fn send(&self, request: Rq) {
        self.requests
            .send(proto::SessionRequest {
                request: Some(request),
            })
            .unwrap();
    }

    /// The bytes of `array` (all its reply chunks).
    async fn fetch(&mut self, id: u64, array: u64) -> Vec<u8> {
        self.send(Rq::Fetch(proto::SessionFetch {
            id,
            array,
            checksum: false,
            direct: false,
        }));
        let mut bytes = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(60), self.events.message())
                .await
                .expect("a fetch answered within 60 s")
                .unwrap()
                .expect("an event");
            let Some(Event::Reply(r)) = event.event else {
                panic!("not a reply: {event:?}")
            };
            assert_eq!(r.id, id);
            assert!(r.error.is_empty(), "fetch of array {array}: {}", r.error);
            let c = r.chunk.expect("a chunk");
            bytes.extend_from_slice(&c.data);
            if c.offset + c.data.len() as u64 >= c.total {
                return bytes;
            }
        }
    }
}

/// A client of the server at `address`, and a session it opened.
async fn connect(address: &str) -> (ControllerClient<Channel>, Session) {
    let channel = pw_wire::net::channel(address, Duration::from_secs(5))
        .await
        .unwrap();
    let mut api = ControllerClient::new(channel);
    let session = Session::open(&mut api).await;
    (api, session)
}

/// `program` (MLIR text or bytecode) compiled in `session`, or the
/// server's error.
async fn compile(
    api: &mut ControllerClient<Channel>,
    session: &Session,
    program: bytes::Bytes,
) -> Result<proto::CompiledProgram, tonic::Status> {
    let mut request = Request::new(proto::CompileProgramRequest {
        session: session.id,
        name: "pipeline".into(),
        program,
        ..Default::default()
    });
    request
        .metadata_mut()
        .insert(pw_wire::net::SESSION_KEY, session.key.parse().unwrap());
    let mut replies = api.compile_program(request).await?.into_inner();
    loop {
        match replies.message().await?.expect("a compiled program") {
            proto::CompileProgramReply {
                reply: Some(proto::compile_program_reply::Reply::Program(p)),
            } => return Ok(p),
            _ => continue,
        }
    }
}

/// The `examples/pipeline` program, compiled in `session`; its inputs.
async fn pipeline(
    api: &mut ControllerClient<Channel>,
    session: &Session,
) -> (proto::CompiledProgram, Vec<pw_exec::HostArray>) {
    let text = std::fs::read(repo_root().join("examples/pipeline.mlir")).unwrap();
    let program = compile(api, session, text.into()).await.unwrap();
    let inputs = pipeline_inputs(&program);
    (program, inputs)
}

fn pipeline_inputs(program: &proto::CompiledProgram) -> Vec<pw_exec::HostArray> {
    let examples = repo_root().join("examples");
    (0..program.inputs.len())
        .map(|i| pw_exec::npy::read(examples.join(format!("pipeline/input_{i}.npy"))).unwrap())
        .collect()
}

fn expected(i: usize) -> Vec<f32> {
    let path = repo_root().join(format!("examples/pipeline/expected_{i}.npy"));
    let a = pw_exec::npy::read(path).unwrap();
    floats(a.bytes())
}

/// Output `i` is JAX's, to 1e-5.
fn assert_jax(got: &[f32], want: &[f32], i: usize) {
    assert_eq!(got.len(), want.len(), "output {i}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-5 + 1e-5 * w.abs(),
            "output {i}: {g} against JAX's {w}"
        );
    }
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// A call of `program` on the host `inputs` (inline), making the arrays
/// `outputs` and releasing `release`.
fn call(
    program: &proto::CompiledProgram,
    inputs: &[pw_exec::HostArray],
    outputs: Vec<u64>,
    release: Vec<u64>,
) -> Rq {
    Rq::Call(proto::SessionCall {
        executable: program.executable,
        arguments: inputs
            .iter()
            .map(|a| proto::CallArgument {
                argument: Some(Argument::Host(proto::ArrayType::of(a.dtype(), a.shape()))),
            })
            .collect(),
        outputs,
        release,
        inline: inputs
            .iter()
            .map(|a| bytes::Bytes::copy_from_slice(a.bytes()))
            .collect(),
        ..Default::default()
    })
}

/// The most calls of `session` seen running at once, sampled from the
/// server's overview until `stop` is set.
fn watch_calls_running(
    mut api: ControllerClient<Channel>,
    session: u64,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<Vec<u64>> {
    tokio::spawn(async move {
        let mut seen = Vec::new();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let json = api
                .overview(proto::OverviewRequest::default())
                .await
                .unwrap()
                .into_inner()
                .json;
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            for s in v["sessions"].as_array().into_iter().flatten() {
                if s["session"].as_u64() == Some(session) {
                    seen.push(s["calls_running"].as_u64().unwrap_or_default());
                }
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        seen
    })
}

#[test]
fn a_sessions_calls_keep_their_order_are_held_back_and_end_with_it() {
    let _serial = serial();
    let mut c = Cluster::server(
        &["--max-calls-in-flight", &IN_FLIGHT.to_string()],
        &Place::default(),
    );
    c.add_worker(4, &[], &[], &Place::default());
    c.wait_for_workers(1);
    runtime().block_on(async {
        let (mut api, mut session) = connect(&c.address).await;
        let (program, inputs) = pipeline(&mut api, &session).await;
        let outputs = program.outputs.len() as u64;
        // Forty calls sent at once, each freeing the previous call's
        // outputs: at most IN_FLIGHT run at a time, and the last one's
        // outputs are JAX's.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watcher = watch_calls_running(api.clone(), session.id, stop.clone());
        let ids = |k: u64| (0..outputs).map(move |o| CLIENT_IDS + k * outputs + o);
        for k in 0..40 {
            let release = if k == 0 { vec![] } else { ids(k - 1).collect() };
            session.send(call(&program, &inputs, ids(k).collect(), release));
        }
        for (i, array) in ids(39).enumerate() {
            let got = floats(&session.fetch(i as u64 + 1, array).await);
            assert_jax(&got, &expected(i), i);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let seen = watcher.await.unwrap();
        assert!(!seen.is_empty());
        assert!(
            seen.iter().all(|&n| n <= IN_FLIGHT),
            "calls running at once: {seen:?} (limit {IN_FLIGHT})"
        );
        // Forty more, then the client vanishes (its stream is dropped)
        // with them in flight.
        for k in 40..80 {
            session.send(call(&program, &inputs, ids(k).collect(), vec![]));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(session);
        // The next client gets every device once the session is gone.
        let next = Session::open(&mut api).await;
        assert_eq!(next.devices, 4);
    });
    c.assert_no_buffers();
}

/// A program sent as bytecode (`pw-opt --emit-bytecode`) compiles and
/// gives JAX's outputs as its text does. Bytecode crafted against MLIR's
/// reader (mutations of pw's bytecode, signed again so that the checksum
/// matches: one corrupts the heap of any process that reads it, one makes
/// it allocate without end) is refused by the process that checks client
/// bytecode, and the server and the session carry on.
#[test]
fn bytecode_compiles_and_crafted_bytecode_cannot_crash_the_server() {
    let _serial = serial();
    let mut c = Cluster::server(&[], &Place::default());
    c.add_worker(4, &[], &[], &Place::default());
    c.wait_for_workers(1);
    let bytecode = c.dir.join("pipeline.mlirbc");
    let mut pw_opt = std::process::Command::new(crate::harness::bin("pw-opt"));
    pw_opt
        .arg(repo_root().join("examples/pipeline.mlir"))
        .args(["--emit-bytecode", "-o"])
        .arg(&bytecode);
    let out = crate::harness::run_bounded(pw_opt, Duration::from_secs(60));
    assert!(out.status.success(), "{}", crate::harness::text(&out).1);
    let bytecode = std::fs::read(&bytecode).unwrap();
    assert!(pw_dialect::is_bytecode(&bytecode));
    let fixtures = repo_root().join("tests/fixtures/bytecode");
    let crafted: Vec<Vec<u8>> = ["crashes_mlir_reader.mlirbc", "allocates_without_end.mlirbc"]
        .iter()
        .map(|f| std::fs::read(fixtures.join(f)).unwrap())
        .collect();
    runtime().block_on(async {
        let (mut api, mut session) = connect(&c.address).await;
        let program = compile(&mut api, &session, bytecode.clone().into())
            .await
            .unwrap();
        run_and_check(&mut session, &program, 0).await;
        for bytes in crafted {
            let started = std::time::Instant::now();
            let refused = compile(&mut api, &session, bytes.into())
                .await
                .expect_err("crafted bytecode is refused");
            assert!(
                refused.message().contains("crashed") && refused.message().contains("refused"),
                "{refused:?}"
            );
            // Refused by the memory limit or the crash, not the timeout.
            assert!(started.elapsed() < Duration::from_secs(30));
        }
        let program = compile(&mut api, &session, bytecode.into()).await.unwrap();
        run_and_check(&mut session, &program, 1).await;
    });
    assert!(c.server.exited().is_none(), "the server is still running");
    c.assert_no_buffers();
}

/// One call of the pipeline `program` in `session` (the `k`th of the
/// test): its outputs are JAX's.
async fn run_and_check(session: &mut Session, program: &proto::CompiledProgram, k: u64) {
    let inputs = pipeline_inputs(program);
    let outputs: Vec<u64> = (0..program.outputs.len() as u64)
        .map(|o| CLIENT_IDS + k * 16 + o)
        .collect();
    session.send(call(program, &inputs, outputs.clone(), vec![]));
    for (i, &array) in outputs.iter().enumerate() {
        let got = floats(&session.fetch(k * 16 + i as u64 + 1, array).await);
        assert_jax(&got, &expected(i), i);
    }
}

/// A span a collector received, with its resource's attributes.
type Received = (Vec<KeyValue>, OtlpSpan);

/// An OTLP trace collector: keeps every span it is sent.
#[derive(Clone, Default)]
struct Collector(std::sync::Arc<std::sync::Mutex<Vec<Received>>>);

use opentelemetry_proto::tonic::{
    collector::trace::v1::{
        trace_service_server::{TraceService, TraceServiceServer},
        ExportTraceServiceRequest, ExportTraceServiceResponse,
    },
    common::v1::{any_value::Value as Any, KeyValue},
    trace::v1::Span as OtlpSpan,
};

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut kept = self.0.lock().unwrap();
        for r in request.into_inner().resource_spans {
            let resource = r.resource.map(|r| r.attributes).unwrap_or_default();
            for s in r.scope_spans.into_iter().flat_map(|s| s.spans) {
                kept.push((resource.clone(), s));
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// The string value of attribute `key`.
fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes.iter().find(|a| a.key == key).and_then(|a| {
        match a.value.as_ref()?.value.as_ref()? {
            Any::StringValue(s) => Some(s.as_str()),
            _ => None,
        }
    })
}

#[test]
fn a_sessions_trace_reaches_an_opentelemetry_collector() {
    let _serial = serial();
    let rt = runtime();
    let collector = Collector::default();
    let incoming = rt.block_on(async {
        tonic::transport::server::TcpIncoming::bind("127.0.0.1:0".parse().unwrap()).unwrap()
    });
    let endpoint = format!("http://{}", incoming.local_addr().unwrap());
    let service = TraceServiceServer::new(collector.clone());
    rt.spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(incoming),
    );
    let mut c = Cluster::server(&["--otlp-endpoint", &endpoint], &Place::default());
    c.add_worker(4, &[], &[], &Place::default());
    c.wait_for_workers(1);
    const CALLS: u64 = 3;
    let session_id = rt.block_on(async {
        let (mut api, mut session) = connect(&c.address).await;
        let (program, inputs) = pipeline(&mut api, &session).await;
        let outputs = program.outputs.len() as u64;
        let ids = |k: u64| (0..outputs).map(move |o| CLIENT_IDS + k * outputs + o);
        for k in 0..CALLS {
            session.send(call(&program, &inputs, ids(k).collect(), vec![]));
        }
        let got = floats(&session.fetch(1, ids(CALLS - 1).next().unwrap()).await);
        assert_jax(&got, &expected(0), 0);
        let id = session.id;
        drop(session);
        id
    });
    // The root span comes when the session has closed.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let spans = loop {
        let spans = collector.0.lock().unwrap().clone();
        if spans.iter().any(|(_, s)| s.name == "session rust-client") {
            break spans;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no root span within 20 s; the collector has {} spans",
            spans.len()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let (_, root) = spans
        .iter()
        .find(|(_, s)| s.name == "session rust-client")
        .unwrap();
    assert_eq!(root.trace_id.len(), 16);
    assert_eq!(root.span_id.len(), 8);
    assert!(root.end_time_unix_nano > root.start_time_unix_nano);
    let id = session_id.to_string();
    for (resource, s) in &spans {
        assert_eq!(attribute(resource, "service.name"), Some("pw-server"));
        assert_eq!(s.trace_id, root.trace_id, "{}", s.name);
        assert_eq!(attribute(&s.attributes, "pw.session.id"), Some(id.as_str()));
        if s.span_id != root.span_id {
            assert_eq!(s.parent_span_id, root.span_id, "{}", s.name);
            assert!(attribute(&s.attributes, "pw.track").is_some(), "{}", s.name);
            // Within the session, to the clocks' agreement (1 ms).
            assert!(
                s.start_time_unix_nano + 1_000_000 >= root.start_time_unix_nano
                    && s.end_time_unix_nano <= root.end_time_unix_nano + 1_000_000
                    && s.start_time_unix_nano <= s.end_time_unix_nano,
                "{} outside the session",
                s.name
            );
        }
    }
    let named = |part: &str| spans.iter().filter(|(_, s)| s.name.contains(part)).count();
    assert_eq!(
        named("on the workers until its outputs are ready"),
        CALLS as usize
    );
    // Calls count from 1.
    for k in 1..=CALLS {
        assert!(named(&format!("call {k} of ")) >= 2, "call {k}'s spans");
    }
    assert_eq!(named("fetch of array"), 1);
    assert!(
        spans
            .iter()
            .any(|(_, s)| attribute(&s.attributes, "pw.track")
                .is_some_and(|t| t.starts_with("device"))),
        "no device spans"
    );
}
