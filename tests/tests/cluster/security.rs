//! A cluster with a token and a cluster secret, tried as an outsider on
//! the same network would: the workers' ports, the registry and the data
//! plane refuse whoever lacks the secret (and never echo it); requests
//! that declare huge sizes are refused before anything is allocated; the
//! IFRT proxy checks its protocol version, its token and its host
//! buffers' sessions. After each attack the cluster still runs the
//! examples and matches JAX.

use crate::harness::{assert_matches, example_args, serial, Cluster, Place};
use bytes::Bytes;
use prost::Message;
use pw_proxy::protocol as ifrt;
use pw_wire::proto;
use std::{
    io::{Read, Write},
    time::Duration,
};
use tonic::{metadata::MetadataValue, Code, Request};

const TOKEN: &str = "security-test-token";
const SECRET: &str = "security-test-cluster-secret";

fn secured() -> Place {
    Place {
        token: Some(TOKEN.into()),
        cluster_secret: Some(SECRET.into()),
        ..Place::default()
    }
}

/// `PW_TOKEN` in this process (the harness's status calls present it)
/// while it lives; the tests of this binary run one at a time (`serial`).
struct TokenEnv;

impl TokenEnv {
    fn set() -> TokenEnv {
        std::env::set_var("PW_TOKEN", TOKEN);
        TokenEnv
    }
}

impl Drop for TokenEnv {
    fn drop(&mut self) {
        std::env::remove_var("PW_TOKEN");
    }
}

/// A free TCP port on loopback (for a worker's data port).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A secured server (`server_args` more) and one worker of 2 devices
/// whose data port is `data_port`.
fn cluster(server_args: &[&str], data_port: u16) -> Cluster {
    let place = secured();
    let mut c = Cluster::server(server_args, &place);
    c.add_worker(2, &["--data-port", &data_port.to_string()], &[], &place);
    c.wait_for_workers(1);
    c
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// `request` with header `key: value`.
fn with<T>(mut request: Request<T>, key: &'static str, value: &str) -> Request<T> {
    let value: MetadataValue<_> = value.parse().expect("ascii");
    request.metadata_mut().insert(key, value);
    request
}

/// `request`, with header `key: value` when there is a key.
fn credential<T>(request: T, key: Option<&'static str>, value: &str) -> Request<T> {
    match key {
        Some(k) => with(Request::new(request), k, value),
        None => Request::new(request),
    }
}

/// The cluster still runs an example across its worker and matches JAX.
fn still_serves(c: &Cluster) {
    let out = c.pw_run(&example_args("rl_step"), &secured());
    assert_matches(&out);
}

#[test]
fn workers_and_the_registry_serve_only_the_cluster() {
    let _serial = serial();
    let _token = TokenEnv::set();
    let c = cluster(&[], free_port());
    let worker = c.status().workers[0].address.clone();
    runtime().block_on(async {
        let channel = pw_wire::net::channel(&worker, Duration::from_secs(5))
            .await
            .unwrap();
        let mut w = proto::worker_client::WorkerClient::new(channel);
        // No secret, the clients' token, or a wrong secret: refused, and the
        // refusal never names the secret.
        for (key, value) in [
            (None, ""),
            (Some(pw_wire::net::TOKEN_KEY), TOKEN),
            (Some(pw_wire::net::CLUSTER_KEY), "not-the-cluster-secret"),
        ] {
            let fetch = proto::FetchRequest {
                run: 1,
                value: 0,
                position: 0,
            };
            let e = w.fetch(credential(fetch, key, value)).await.unwrap_err();
            assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
            assert!(!e.message().contains(SECRET), "{e:?}");
            let put = proto::PutRequest::default();
            let e = w
                .put(credential(tokio_stream::iter(vec![put]), key, value))
                .await
                .unwrap_err();
            assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
            let compile = proto::CompileRequest::default();
            let e = w
                .compile(credential(compile, key, value))
                .await
                .unwrap_err();
            assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
        }
        // A registration without the secret is refused before it is read.
        let channel = pw_wire::net::channel(&c.address, Duration::from_secs(5))
            .await
            .unwrap();
        let mut r = proto::registry_client::RegistryClient::new(channel);
        let register = proto::WorkerEvent {
            event: Some(proto::worker_event::Event::Register(Default::default())),
        };
        let e = r
            .attach(with(
                Request::new(tokio_stream::iter(vec![register])),
                pw_wire::net::TOKEN_KEY,
                TOKEN,
            ))
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");
    });
    // A worker without the secret is refused at once (exit code 2).
    let mut c = c;
    let outsider = Place {
        cluster_secret: Some("another-cluster-secret".into()),
        ..secured()
    };
    let i = c.add_worker(1, &[], &[], &outsider);
    let status = c.workers[i].wait_exit(Duration::from_secs(20));
    assert_eq!(status.and_then(|s| s.code()), Some(2), "{}", c.logs());
    assert!(
        c.workers[i].stderr_text().contains("cluster secret"),
        "{}",
        c.workers[i].stderr_text()
    );
    assert_eq!(c.status().workers.len(), 1);
    still_serves(&c);
}

#[test]
fn a_data_connection_without_the_secret_is_closed_unheard() {
    let _serial = serial();
    let _token = TokenEnv::set();
    let data_port = free_port();
    let c = cluster(&[], data_port);
    // The old introduction (magic and a claimed worker id), then a frame
    // with a valid CRC: the worker closes the connection without taking it.
    let mut s = std::net::TcpStream::connect(("127.0.0.1", data_port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut forged = b"PWDATA02".to_vec();
    forged.extend_from_slice(&0u32.to_le_bytes());
    forged.extend_from_slice(&[7u8; 16]);
    s.write_all(&forged).unwrap();
    // The worker proves itself (nonce and MAC), then waits for ours: a
    // made-up proof ends the connection.
    let mut answer = [0u8; 48];
    s.read_exact(&mut answer).unwrap();
    let _ = s.write_all(&[0u8; 32]);
    let mut frame = vec![0u8; 44];
    frame[0] = 1;
    let _ = s.write_all(&frame);
    let mut rest = Vec::new();
    let read = s.read_to_end(&mut rest);
    assert!(
        matches!(read, Ok(0)) || read.is_err(),
        "the connection stays open: {read:?}"
    );
    // Silence is not an introduction either: closed within the handshake's
    // time.
    let mut silent = std::net::TcpStream::connect(("127.0.0.1", data_port)).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(matches!(silent.read(&mut byte), Ok(0)), "not closed");
    assert!(c.logs().contains("refused"), "{}", c.logs());
    still_serves(&c);
}

#[test]
fn huge_declared_sizes_are_refused_before_anything_is_allocated() {
    let _serial = serial();
    let _token = TokenEnv::set();
    let c = cluster(&["--max-request-mb", "64"], free_port());
    let worker = c.status().workers[0].address.clone();
    let huge = proto::ArrayType {
        dtype: "float32".into(),
        dims: vec![1 << 34],
    };
    let chunk = proto::Chunk {
        offset: 0,
        total: 64 << 30,
        data: Bytes::from_static(&[0; 4]),
        crc32: None,
    };
    runtime().block_on(async {
        let channel = pw_wire::net::channel(&c.address, Duration::from_secs(5))
            .await
            .unwrap();
        let mut api = pw_controller::api::controller_client::ControllerClient::new(channel);
        // A run whose input declares 64 GiB: over --max-request-mb.
        let run = vec![
            proto::RunRequest {
                request: Some(proto::run_request::Request::Begin(proto::RunBegin {
                    protocol: pw_wire::PROTOCOL as i32,
                    name: "huge".into(),
                    inputs: 1,
                    ..Default::default()
                })),
            },
            proto::RunRequest {
                request: Some(proto::run_request::Request::Program(
                    pw_wire::chunks(Bytes::from_static(b"module {}"))[0].clone(),
                )),
            },
            proto::RunRequest {
                request: Some(proto::run_request::Request::Input(proto::RunInput {
                    index: 0,
                    r#type: Some(huge.clone()),
                    chunk: Some(chunk.clone()),
                })),
            },
        ];
        let e = api
            .run(with(
                Request::new(tokio_stream::iter(run)),
                pw_wire::net::TOKEN_KEY,
                TOKEN,
            ))
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains("limit"), "{e:?}");
        // The same through a worker's Put, as a member of the cluster: the
        // worker reads 4 bytes of the 64 GiB declared and says so.
        let channel = pw_wire::net::channel(&worker, Duration::from_secs(5))
            .await
            .unwrap();
        let mut w = proto::worker_client::WorkerClient::new(channel);
        let put = proto::PutRequest {
            run: 77,
            value: 0,
            position: 0,
            local_device: 0,
            r#type: Some(huge.clone()),
            chunk: Some(chunk.clone()),
        };
        let e = w
            .put(with(
                Request::new(tokio_stream::iter(vec![put])),
                pw_wire::net::CLUSTER_KEY,
                SECRET,
            ))
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    });
    still_serves(&c);
}

/// An IFRT session's metadata header: protocol `version`, and `data` as
/// the initialization data.
fn session_metadata(
    version: i32,
    data: &[(&str, ifrt::xla::ifrt::attribute_map_proto::Value)],
) -> Vec<u8> {
    let m = ifrt::GrpcIfrtSessionMetadata {
        version: Some(ifrt::IfrtProxyVersion {
            protocol_version: version,
            ifrt_serdes_version_number: 3,
        }),
        initialization_data: Some(ifrt::xla::ifrt::AttributeMapProto {
            attributes: data
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            ..Default::default()
        }),
    };
    m.encode_to_vec()
}

fn string_value(s: &str) -> ifrt::xla::ifrt::attribute_map_proto::Value {
    use ifrt::xla::ifrt::attribute_map_proto::value::Value;
    ifrt::xla::ifrt::attribute_map_proto::Value {
        value: Some(Value::StringValue(s.as_bytes().to_vec())),
    }
}

fn int_value(n: i64) -> ifrt::xla::ifrt::attribute_map_proto::Value {
    use ifrt::xla::ifrt::attribute_map_proto::value::Value;
    ifrt::xla::ifrt::attribute_map_proto::Value {
        value: Some(Value::Int64Value(n)),
    }
}

#[test]
fn the_ifrt_proxy_checks_versions_tokens_sessions_and_sizes() {
    let _serial = serial();
    let _token = TokenEnv::set();
    let c = cluster(&["--max-request-mb", "64"], free_port());
    runtime().block_on(async {
        let channel = pw_wire::net::channel(&c.address, Duration::from_secs(5))
            .await
            .unwrap();
        let mut proxy = ifrt::grpc_ifrt_service_client::GrpcIfrtServiceClient::new(channel);
        let open = |version: i32, data: &[(&str, ifrt::xla::ifrt::attribute_map_proto::Value)]| {
            let mut r = Request::new(tokio_stream::iter(Vec::<ifrt::IfrtRequest>::new()));
            r.metadata_mut().insert_bin(
                ifrt::SESSION_METADATA_HEADER,
                tonic::metadata::MetadataValue::from_bytes(&session_metadata(version, data)),
            );
            r
        };
        // Versions outside what the server speaks.
        for version in [0, 9999] {
            let e = proxy
                .ifrt_session(open(version, &[("pw.token", string_value(TOKEN))]))
                .await
                .unwrap_err();
            assert_eq!(e.code(), Code::FailedPrecondition, "{version}: {e:?}");
        }
        // No token, a wrong one: every request is answered UNAUTHENTICATED.
        for data in [vec![], vec![("pw.token", string_value("wrong"))]] {
            let init = ifrt::IfrtRequest {
                request_metadata: Some(ifrt::RequestMetadata {
                    op_id: 1,
                    ..Default::default()
                }),
                request: Some(ifrt::ifrt_request::Request::InitRequest(
                    ifrt::InitRequest {},
                )),
            };
            let mut r = open(25, &data);
            let metadata = r.metadata().clone();
            r = Request::new(tokio_stream::iter(vec![init]));
            *r.metadata_mut() = metadata;
            let mut replies = proxy.ifrt_session(r).await.unwrap().into_inner();
            let reply = replies.message().await.unwrap().unwrap();
            let status = reply.response_metadata.and_then(|m| m.status).unwrap();
            assert_eq!(status.code, 16, "{status:?}");
            assert!(status.message.contains("needs its token"), "{status:?}");
            assert!(reply.response.is_none());
        }
        // More devices than there are, or than fit.
        for n in [(1i64 << 32) - 1, 1 << 40] {
            let e = proxy
                .ifrt_session(open(
                    25,
                    &[
                        ("pw.token", string_value(TOKEN)),
                        ("pw.devices", int_value(n)),
                    ],
                ))
                .await
                .unwrap_err();
            assert_eq!(e.code(), Code::InvalidArgument, "{n}: {e:?}");
        }
        // Host buffers for a session the server did not open.
        let mut store = Request::new(tokio_stream::iter(vec![ifrt::GrpcHostBufferStoreRequest {
            data: Bytes::from_static(&[0, 0, 0x26, 0x44]),
        }]));
        let m = ifrt::GrpcHostBufferStoreMetadata {
            session_id: 1,
            handle: 1,
            buffer_size: 4,
        };
        store.metadata_mut().insert_bin(
            ifrt::HOST_BUFFER_STORE_METADATA_HEADER,
            tonic::metadata::MetadataValue::from_bytes(&m.encode_to_vec()),
        );
        let e = proxy.host_buffer_store(store).await.unwrap_err();
        assert_eq!(e.code(), Code::NotFound, "{e:?}");
        let e = proxy
            .host_buffer_lookup(ifrt::GrpcHostBufferLookupRequest {
                session_id: 1,
                handle: 1,
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::NotFound, "{e:?}");
        in_a_session(&mut proxy, open(25, &[("pw.token", string_value(TOKEN))])).await;
    });
    still_serves(&c);
}

type Proxy = ifrt::grpc_ifrt_service_client::GrpcIfrtServiceClient<tonic::transport::Channel>;

/// Inside a real IFRT session: its id is random; host buffers whose shape
/// and strides would make more than --max-request-mb (a stride of 0 over
/// 2^28 elements, a shape of 2^40 with no buffers) are refused with
/// RESOURCE_EXHAUSTED, and a small broadcast still works.
async fn in_a_session(
    proxy: &mut Proxy,
    open: Request<impl tokio_stream::Stream<Item = ifrt::IfrtRequest> + Send + 'static>,
) {
    use ifrt::{ifrt_request::Request as Rq, ifrt_response::Response as Rs};
    use pw_proxy::convert;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<ifrt::IfrtRequest>();
    let mut request = Request::new(tokio_stream::wrappers::UnboundedReceiverStream::new(rx));
    *request.metadata_mut() = open.metadata().clone();
    let mut responses = proxy.ifrt_session(request).await.unwrap().into_inner();
    let mut op = 0u64;
    let mut ask = |r: Rq| {
        op += 1;
        let _ = tx.send(ifrt::IfrtRequest {
            request_metadata: Some(ifrt::RequestMetadata {
                op_id: op,
                ..Default::default()
            }),
            request: Some(r),
        });
    };
    ask(Rq::InitRequest(ifrt::InitRequest {}));
    let init = responses.message().await.unwrap().unwrap();
    let Some(Rs::InitResponse(init)) = init.response else {
        panic!("no init response: {init:?}")
    };
    assert!(
        init.session_id >= 1 << 32,
        "a random session id: {}",
        init.session_id
    );
    // Four bytes, for each request below (each takes its buffer).
    let store = |handle: u64| {
        let mut r = Request::new(tokio_stream::iter(vec![ifrt::GrpcHostBufferStoreRequest {
            data: Bytes::from_static(&[0, 0, 0x80, 0x3f]),
        }]));
        let m = ifrt::GrpcHostBufferStoreMetadata {
            session_id: init.session_id,
            handle,
            buffer_size: 4,
        };
        r.metadata_mut().insert_bin(
            ifrt::HOST_BUFFER_STORE_METADATA_HEADER,
            tonic::metadata::MetadataValue::from_bytes(&m.encode_to_vec()),
        );
        r
    };
    let f32 = convert::dtype_proto(pw_core::DType::F32);
    let make = |handle: u64, n: i64| {
        Rq::MakeArrayFromHostBufferRequest(ifrt::MakeArrayFromHostBufferRequest {
            dtype: Some(f32),
            shape: Some(ifrt::xla::ifrt::ShapeProto {
                dims: vec![n],
                ..Default::default()
            }),
            sharding: Some(convert::single_device(0, None)),
            host_buffer_handle: handle,
            byte_strides: Some(ifrt::xla::ifrt::proto::ByteStrides { strides: vec![0] }),
            array_handle: Some(100 + handle),
            ..Default::default()
        })
    };
    let status = |r: ifrt::IfrtResponse| {
        r.response_metadata
            .and_then(|m| m.status)
            .map_or(0, |s| s.code)
    };
    // 2^28 float32 from 4 bytes: 1 GiB, over the 64 MiB limit.
    proxy.host_buffer_store(store(1)).await.unwrap();
    ask(make(1, 1 << 28));
    let r = responses.message().await.unwrap().unwrap();
    assert_eq!(status(r.clone()), 8, "RESOURCE_EXHAUSTED: {r:?}");
    // 2^40 elements and no buffer at all.
    let spec =
        ifrt::make_arrays_from_host_buffer_shards_request::MakeArraysFromHostBufferShardsSpec {
            addressable_shard_indices: vec![],
            host_buffers: vec![],
            array_spec: Some(ifrt::xla::ifrt::ArraySpecProto {
                dtype: Some(f32),
                shape: Some(ifrt::xla::ifrt::ShapeProto {
                    dims: vec![1 << 40],
                    ..Default::default()
                }),
                sharding: Some(convert::single_device(0, None)),
                ..Default::default()
            }),
        };
    ask(Rq::MakeArraysFromHostBufferShardsRequest(
        ifrt::MakeArraysFromHostBufferShardsRequest {
            specs: vec![spec],
            array_handles: vec![200],
        },
    ));
    let r = responses.message().await.unwrap().unwrap();
    assert_ne!(status(r.clone()), 0, "refused: {r:?}");
    // A small broadcast (stride 0 over 1024 elements) is what numpy's
    // broadcast_to sends: it works.
    proxy.host_buffer_store(store(2)).await.unwrap();
    ask(make(2, 1024));
    let r = responses.message().await.unwrap().unwrap();
    assert_eq!(status(r.clone()), 0, "{r:?}");
}

/// A CA and a certificate for 127.0.0.1 it signed, made with openssl in
/// `dir`; the `PW_TLS_*` variables that name them.
fn certificates(dir: &std::path::Path) -> Vec<(String, String)> {
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=pw test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "key.pem",
                "-out",
                "cert.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("ext.cnf");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "cert.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
    [
        "PW_TLS_CERT:cert.pem",
        "PW_TLS_KEY:key.pem",
        "PW_TLS_CA:ca.pem",
    ]
    .iter()
    .filter_map(|kv| kv.split_once(':'))
    .map(|(k, f)| (k.to_owned(), dir.join(f).display().to_string()))
    .collect()
}

#[test]
fn grpc_and_the_data_plane_run_inside_tls() {
    let _serial = serial();
    let _token = TokenEnv::set();
    let dir = std::env::temp_dir().join(format!("pw-tls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let place = Place {
        env: certificates(&dir),
        ..secured()
    };
    let ca = place.env[2].1.clone();
    let mut c = Cluster::server(&[], &place);
    let data_ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    for port in &data_ports {
        c.add_worker(2, &["--data-port", &port.to_string()], &[], &place);
    }
    // Asked through pw-status, which has the CA (this process has none).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut status = place.command(&crate::harness::bin("pw-status"));
        status.args(["--server", &c.address]);
        let out = crate::harness::run_bounded(status, Duration::from_secs(20));
        if String::from_utf8_lossy(&out.stdout).contains("WORKERS (3)") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{}", c.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    // The pipeline example across three workers: pieces go worker to
    // worker, inside TLS, and the outputs match JAX.
    let args = example_args("pipeline");
    let out = c.pw_run(&args, &place);
    assert_matches(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let traffic = stdout
        .lines()
        .find(|l| l.starts_with("traffic"))
        .unwrap_or_default();
    assert!(!traffic.contains("worker to worker: 0 bytes"), "{traffic}");
    // The data port speaks TLS with the certificate the CA signed.
    for port in [
        data_ports[0].to_string(),
        c.address.rsplit_once(':').unwrap().1.to_owned(),
    ] {
        let out = std::process::Command::new("openssl")
            .args([
                "s_client",
                "-connect",
                &format!("127.0.0.1:{port}"),
                "-CAfile",
                &ca,
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Verify return code: 0 (ok)"),
            "port {port}: {text}"
        );
    }
    // Without the CA, a client cannot talk to the server.
    let plain = Place {
        env: Vec::new(),
        ..secured()
    };
    let out = c.pw_run(&args, &plain);
    assert_ne!(out.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}
