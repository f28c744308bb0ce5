//! `pw-worker --metrics HOST:PORT`: this worker's Prometheus metrics on
//! `/metrics` (the families of [`pw_wire::metrics::WorkerMetrics`], each
//! device labelled with its local id and kind), the same the controller's
//! `/metrics` shows of it from heartbeats, but read when scraped.
//!
//! HTTPS when the worker has a certificate (`--tls-cert`), with the one it
//! serves its other ports with; plain HTTP otherwise. With a cluster
//! secret or a scrape token (`PW_METRICS_TOKEN`), a scrape must present
//! one of them (`Authorization: Bearer SECRET`); without a cluster secret
//! the port must be on loopback (`serve` refuses otherwise, as the
//! worker's service does).

use crate::State;
use pw_wire::metrics::{labels, WorkerMetrics};
use std::sync::{Arc, Weak};

/// The metrics of `state`'s worker, in the text format.
pub fn text(state: &State) -> String {
    let m = WorkerMetrics::default();
    let id = state
        .id()
        .map_or_else(|| "unregistered".to_owned(), |i| i.to_string());
    m.add_worker(&labels(&[("worker", id.clone())]), &state.snapshot());
    let kinds: std::collections::HashMap<u32, String> = state
        .client
        .addressable_devices()
        .iter()
        .map(|d| (d.id() as u32, d.kind().to_owned()))
        .collect();
    for d in state.activity.counters(state) {
        let kind = kinds.get(&d.local_device).cloned().unwrap_or_default();
        let device = labels(&[
            ("worker", id.clone()),
            ("local_device", d.local_device.to_string()),
            ("kind", kind),
        ]);
        m.add_device(&device, &d);
    }
    let mut registry = prometheus_client::registry::Registry::default();
    m.register(&mut registry);
    pw_wire::metrics::text(&registry)
}

/// Whether `headers` present the cluster secret or the scrape token
/// (always, with neither).
fn admitted(headers: &axum::http::HeaderMap) -> bool {
    let wanted: Vec<&[u8]> = [
        pw_wire::auth::cluster_secret(),
        pw_wire::auth::metrics_token().ok().flatten(),
    ]
    .into_iter()
    .flatten()
    .map(pw_wire::auth::Secret::as_bytes)
    .collect();
    let given = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    wanted.is_empty() || pw_wire::auth::bearer_is(given, &wanted)
}

/// Serves `/metrics` on `listener` (over TLS with `tls`) while the worker
/// lives.
pub async fn serve(
    listener: tokio::net::TcpListener,
    tls: Option<Arc<pw_wire::http::TlsConfig>>,
    state: Weak<State>,
) {
    use axum::{
        extract::State as Shared,
        http::{header, HeaderMap, StatusCode},
        response::{IntoResponse, Response},
        routing::get,
        Router,
    };
    async fn metrics(Shared(state): Shared<Arc<Weak<State>>>, headers: HeaderMap) -> Response {
        if !admitted(&headers) {
            return (
                StatusCode::UNAUTHORIZED,
                "this worker has a cluster secret: send Authorization: Bearer SECRET\n",
            )
                .into_response();
        }
        let Some(state) = state.upgrade() else {
            return (StatusCode::SERVICE_UNAVAILABLE, "the worker is stopping\n").into_response();
        };
        (
            [
                (header::CONTENT_TYPE, pw_wire::metrics::CONTENT_TYPE),
                (header::CACHE_CONTROL, "no-store"),
            ],
            text(&state),
        )
            .into_response()
    }
    let app = Router::new()
        .route("/metrics", get(metrics))
        .with_state(Arc::new(state));
    let listener = pw_wire::http::Speaking::new(listener, tls);
    if let Err(e) = axum::serve(listener, app).await {
        tracing::error!("the metrics port stopped: {e}");
    }
}
