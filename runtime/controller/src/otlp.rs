//! Session traces over OpenTelemetry (`pw-server --otlp-endpoint URL`, or
//! `OTEL_EXPORTER_OTLP_ENDPOINT`; off by default): the spans a traced
//! session records (`sessions::trace`: each call's client, controller,
//! host, device and network spans, each fetch) go to an OTLP/gRPC
//! collector as they are recorded, as one trace per session: a root span
//! for the session (sent when it closes) and its recorded spans as
//! children, with the span's track (`pw.track`), category, and the
//! session's id and name as attributes.
//!
//! Export never holds up a session: spans join a bounded queue
//! ([`QUEUE`] batches; more are dropped and counted) that one task drains,
//! sending at most once per [`FLUSH`] (or at [`BATCH_SPANS`] spans). A
//! collector that is down or refuses costs a warning per failure streak
//! and the spans of those exports, nothing else.

use crate::sessions::trace::track_name;
use crate::Controller;
use opentelemetry_proto::tonic::{
    collector::trace::v1::{trace_service_client::TraceServiceClient, ExportTraceServiceRequest},
    common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue},
    resource::v1::Resource,
    trace::v1::{span::SpanKind, ResourceSpans, ScopeSpans, Span as OtlpSpan},
};
use pw_exec::trace::Span;
use std::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
    time::{Duration, SystemTime},
};
use tokio::sync::mpsc;

/// Batches of spans waiting for the exporter.
pub const QUEUE: usize = 1024;
/// How often the exporter sends what it has.
pub const FLUSH: Duration = Duration::from_secs(1);
/// It sends at once when it has this many spans.
pub const BATCH_SPANS: usize = 2048;
/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Spans of one session, recorded together.
pub(crate) struct Batch {
    pub session: u64,
    pub name: String,
    /// When the session opened, on the wall clock.
    pub opened: SystemTime,
    pub spans: Vec<Span>,
    /// Set when the session closed, this long after it opened: the root
    /// span goes with this batch.
    pub closed: Option<Duration>,
}

/// Whether `endpoint` names an OTLP/gRPC collector pw can reach:
/// `http://HOST:PORT` or `https://HOST:PORT`.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(format!(
            "--otlp-endpoint {endpoint}: give the collector's OTLP/gRPC URL, http://HOST:PORT or https://HOST:PORT (4317 is OTLP's gRPC port)"
        ));
    }
    tonic::transport::Endpoint::from_shared(endpoint.to_owned())
        .map(|_| ())
        .map_err(|e| format!("--otlp-endpoint {endpoint}: not a URL: {e}"))
}

/// The queue between the sessions and the exporter task.
pub struct Queue {
    endpoint: String,
    tx: mpsc::Sender<Batch>,
    rx: Mutex<Option<mpsc::Receiver<Batch>>>,
    /// Spans dropped: the queue was full.
    dropped: AtomicU64,
    /// Makes this server's trace ids its own.
    nonce: u64,
}

impl Queue {
    pub fn new(endpoint: String) -> Queue {
        let (tx, rx) = mpsc::channel(QUEUE);
        Queue {
            endpoint,
            tx,
            rx: Mutex::new(Some(rx)),
            dropped: AtomicU64::new(0),
            nonce: pw_wire::auth::random_id(),
        }
    }

    /// Hands `batch` to the exporter, or drops it when the queue is full.
    pub(crate) fn offer(&self, batch: Batch) {
        if let Err(mpsc::error::TrySendError::Full(b) | mpsc::error::TrySendError::Closed(b)) =
            self.tx.try_send(batch)
        {
            let n = b.spans.len() as u64 + u64::from(b.closed.is_some());
            self.dropped.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Spans dropped so far (the queue was full).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn trace_id(&self, session: u64) -> Vec<u8> {
        [self.nonce.to_be_bytes(), session.to_be_bytes()].concat()
    }

    fn root_id(&self, session: u64) -> Vec<u8> {
        (session ^ self.nonce.rotate_left(17))
            .to_be_bytes()
            .to_vec()
    }

    /// `batch` as OTLP spans.
    fn spans(&self, batch: &Batch) -> Vec<OtlpSpan> {
        let at = |d: Duration| {
            batch
                .opened
                .checked_add(d)
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |t| t.as_nanos() as u64)
        };
        let trace_id = self.trace_id(batch.session);
        let root = self.root_id(batch.session);
        let session = [
            text("pw.session.id", batch.session.to_string()),
            text("pw.session.name", batch.name.clone()),
        ];
        let mut out: Vec<OtlpSpan> = batch
            .spans
            .iter()
            .map(|s| OtlpSpan {
                trace_id: trace_id.clone(),
                span_id: pw_wire::auth::random_bytes::<8>().to_vec(),
                parent_span_id: root.clone(),
                name: s.name.clone(),
                kind: SpanKind::Internal as i32,
                start_time_unix_nano: at(s.start),
                end_time_unix_nano: at(s.end),
                attributes: [
                    text("pw.track", track_name(s.track)),
                    text("pw.category", s.category.to_owned()),
                ]
                .into_iter()
                .chain(session.iter().cloned())
                .collect(),
                ..Default::default()
            })
            .collect();
        if let Some(closed) = batch.closed {
            out.push(OtlpSpan {
                trace_id,
                span_id: root,
                name: format!("session {}", batch.name),
                kind: SpanKind::Server as i32,
                start_time_unix_nano: at(Duration::ZERO),
                end_time_unix_nano: at(closed),
                attributes: session.to_vec(),
                ..Default::default()
            });
        }
        out
    }
}

fn text(key: &str, value: String) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value)),
        }),
        ..Default::default()
    }
}

fn request(spans: Vec<OtlpSpan>) -> ExportTraceServiceRequest {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: vec![
                    text("service.name", "pw-server".into()),
                    text("host.name", host.trim().to_owned()),
                ],
                ..Default::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "pw".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// Drains the controller's queue into its collector until the queue
/// closes (runs once; returns at once when export is off).
pub async fn export(c: Controller) {
    let Some(queue) = c.inner.otlp.as_ref() else {
        return;
    };
    let Some(mut rx) = queue.rx.lock().ok().and_then(|mut r| r.take()) else {
        return;
    };
    let mut exporter = Exporter {
        endpoint: &queue.endpoint,
        client: None,
        failing: false,
    };
    let mut pending: Vec<OtlpSpan> = Vec::new();
    let mut ticker = tokio::time::interval(FLUSH);
    loop {
        tokio::select! {
            batch = rx.recv() => match batch {
                Some(b) => {
                    pending.extend(queue.spans(&b));
                    if pending.len() < BATCH_SPANS {
                        continue;
                    }
                }
                None => {
                    exporter.flush(std::mem::take(&mut pending)).await;
                    return;
                }
            },
            _ = ticker.tick() => {}
        }
        exporter.flush(std::mem::take(&mut pending)).await;
    }
}

/// The connection to the collector, made again after a failure.
struct Exporter<'a> {
    endpoint: &'a str,
    client: Option<TraceServiceClient<tonic::transport::Channel>>,
    /// Whether the last export failed (one warning per streak).
    failing: bool,
}

impl Exporter<'_> {
    async fn flush(&mut self, spans: Vec<OtlpSpan>) {
        if spans.is_empty() {
            return;
        }
        let n = spans.len();
        match send(self.endpoint, &mut self.client, request(spans)).await {
            Ok(()) if self.failing => {
                tracing::info!(endpoint = %self.endpoint, "OTLP export works again");
                self.failing = false;
            }
            Ok(()) => {}
            Err(why) => {
                self.client = None;
                if !self.failing {
                    tracing::warn!(endpoint = %self.endpoint, spans = n, "OTLP export failed (spans are dropped until it works): {why}");
                }
                self.failing = true;
            }
        }
    }
}

async fn send(
    endpoint: &str,
    client: &mut Option<TraceServiceClient<tonic::transport::Channel>>,
    request: ExportTraceServiceRequest,
) -> Result<(), String> {
    if client.is_none() {
        let channel = tonic::transport::Endpoint::from_shared(endpoint.to_owned())
            .map_err(|e| format!("not a URL: {e}"))?
            .connect_timeout(EXPORT_TIMEOUT)
            .timeout(EXPORT_TIMEOUT)
            .connect()
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        *client = Some(TraceServiceClient::new(channel));
    }
    let Some(c) = client.as_mut() else {
        return Err("no client".into());
    };
    let reply = c
        .export(request)
        .await
        .map_err(|s| format!("{}: {}", s.code(), s.message()))?
        .into_inner();
    match reply.partial_success {
        Some(p) if p.rejected_spans > 0 => Err(format!(
            "the collector rejected {} spans: {}",
            p.rejected_spans, p.error_message
        )),
        _ => Ok(()),
    }
}
