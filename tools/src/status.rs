//! The status page: what is queued on every device of every worker, the
//! active runs and, for a stalled one, its chain of unmet dependencies
//! (the data is the controller's, `pw_controller::watch`).
//!
//! * `pw-server --http HOST:PORT` serves `/api/status` (JSON), `/` (one
//!   self-contained page, `status.html`, polling the JSON once a second)
//!   and `/metrics` (Prometheus, `pw_controller::metrics`).
//! * `pw-status --server ADDR` prints the same as tables, or the JSON with
//!   `--json`. It asks the controller's gRPC (`Controller.Overview`), so it
//!   needs only the address workers and pw-run use, not the HTTP port.

use clap::Parser;
use pw_controller::Controller;
use serde_json::Value;
use std::{fmt::Write as _, io::Write, sync::Arc};

/// The page, served as is.
pub const PAGE: &str = include_str!("status.html");

/// Serves the page and `/api/status` on `listener` until the runtime ends,
/// over TLS with `tls` (HTTPS). With a `token`, each request must present it: the `x-pw-token` header,
/// `Authorization: Bearer TOKEN`, or the cookie that opening
/// `/?token=TOKEN` once sets (so a browser needs it in the address only
/// the first time); `/metrics` also takes the scrape token
/// (`PW_METRICS_TOKEN`, as `Authorization: Bearer`).
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    controller: Controller,
    token: Option<String>,
    tls: Option<Arc<pw_wire::http::TlsConfig>>,
) {
    use axum::{
        extract::{Request, State},
        http::{header, StatusCode},
        middleware::{self, Next},
        response::{IntoResponse, Response},
        routing::get,
        Router,
    };
    async fn page() -> impl IntoResponse {
        (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            PAGE,
        )
    }
    async fn api(State(c): State<Controller>) -> impl IntoResponse {
        (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            c.status().overview().await.to_string(),
        )
    }
    async fn metrics(State(c): State<Controller>) -> impl IntoResponse {
        (
            [
                (header::CONTENT_TYPE, pw_wire::metrics::CONTENT_TYPE),
                (header::CACHE_CONTROL, "no-store"),
            ],
            c.metrics_text(),
        )
    }
    async fn check(
        token: Arc<Option<String>>,
        secure: bool,
        request: Request,
        next: Next,
    ) -> Response {
        let Some(want) = token.as_deref() else {
            return next.run(request).await;
        };
        if scrapes(&request) {
            return next.run(request).await;
        }
        match presented(&request, want) {
            Presented::Yes => next.run(request).await,
            Presented::InQuery => (
                StatusCode::SEE_OTHER,
                [
                    (header::LOCATION, "/".to_owned()),
                    (
                        header::SET_COOKIE,
                        format!(
                            "{COOKIE}={want}; HttpOnly; SameSite=Strict; Path=/{}",
                            if secure { "; Secure" } else { "" }
                        ),
                    ),
                ],
            )
                .into_response(),
            Presented::No => (
                StatusCode::UNAUTHORIZED,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                "this pw-server has a token: open /?token=TOKEN once, or send the x-pw-token header\n",
            )
                .into_response(),
        }
    }
    let token = Arc::new(token);
    let secure = tls.is_some();
    let app = Router::new()
        .route("/", get(page))
        .route("/api/status", get(api))
        .route("/metrics", get(metrics))
        .with_state(controller)
        .layer(middleware::from_fn(move |r, n| {
            check(token.clone(), secure, r, n)
        }));
    let listener = pw_wire::http::Speaking::new(listener, tls);
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("pw-server: error: the status page stopped: {e}");
    }
}

/// The cookie that carries the token for a browser.
const COOKIE: &str = "pw_token";

enum Presented {
    Yes,
    /// In the address (`?token=`): answered with the cookie.
    InQuery,
    No,
}

/// Whether `request` presents the token `want`, and how.
/// Whether `request` is a scrape of `/metrics` with the scrape token
/// (`PW_METRICS_TOKEN`), which opens that path alone.
fn scrapes(request: &axum::extract::Request) -> bool {
    let Ok(Some(scrape)) = pw_wire::auth::metrics_token() else {
        return false;
    };
    let given = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    request.uri().path() == "/metrics" && pw_wire::auth::bearer_is(given, &[scrape.as_bytes()])
}

fn presented(request: &axum::extract::Request, want: &str) -> Presented {
    use axum::http::header;
    let same = |given: &str| pw_wire::auth::same(given.as_bytes(), want.as_bytes());
    let headers = request.headers();
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let in_header = text(pw_wire::net::TOKEN_KEY).is_some_and(same)
        || pw_wire::auth::bearer_is(text(header::AUTHORIZATION.as_str()), &[want.as_bytes()]);
    let in_cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .any(same);
    if in_header || in_cookie {
        return Presented::Yes;
    }
    let in_query = request
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|kv| kv.strip_prefix("token="))
        .any(same);
    if in_query {
        Presented::InQuery
    } else {
        Presented::No
    }
}

/// Command line of pw-status.
#[derive(Parser, Debug)]
#[command(
    name = "pw-status",
    version,
    about = "What is queued on every device of a pw cluster: per worker and device the running step, the queue and what each step waits for; the active runs, and for a stalled one the chain of unmet dependencies",
    after_help = "Examples:\n  \
        pw-status --server 127.0.0.1:29000          # tables\n  \
        pw-status --server 127.0.0.1:29000 --json   # the JSON of /api/status\n  \
        watch -n1 pw-status --server head:29000\n\n\
        It asks the server's gRPC (the address workers and pw-run use); the\n\
        server asks each worker for at most 500 ms. `pw-server --http PORT`\n\
        serves the same as a live page."
)]
pub struct Cli {
    /// The pw-server to ask.
    #[arg(long, default_value = "127.0.0.1:29000", value_name = "HOST:PORT")]
    pub server: String,

    /// Print the raw JSON (as `/api/status` serves it).
    #[arg(long)]
    pub json: bool,
}

/// Runs pw-status with `args`; returns the exit code.
pub fn main(args: Vec<std::ffi::OsString>, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let fetched = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("error: {e}"))
        .and_then(|rt| {
            rt.block_on(pw_controller::client::overview(&cli.server))
                .map_err(|e| e.render())
        });
    let json = match fetched {
        Ok(j) => j,
        Err(e) => {
            let _ = writeln!(stderr, "pw-status: {e}");
            return 1;
        }
    };
    if cli.json {
        let _ = writeln!(stdout, "{json}");
        return 0;
    }
    match serde_json::from_str::<Value>(&json) {
        Ok(v) => {
            let _ = write!(stdout, "{}", render(&v));
            0
        }
        Err(e) => {
            let _ = writeln!(
                stderr,
                "pw-status: error: the server's answer is not JSON: {e}"
            );
            1
        }
    }
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// `value 7 (from #3 @f on device 2, worker 1)`.
fn wait_text(w: &Value) -> String {
    format!(
        "value {} from {} on device {}, worker {}{}",
        s(&w["value"]),
        w["producer_label"]
            .as_str()
            .map_or_else(|| "an input".to_owned(), str::to_owned),
        s(&w["device"]),
        s(&w["worker"]),
        if w["remote"].as_bool() == Some(true) {
            " (a piece it sends)"
        } else {
            ""
        }
    )
}

fn step_text(st: &Value) -> String {
    let mut t = format!("run {} {}", s(&st["run"]), s(&st["label"]));
    if let Some(role) = st["role"].as_str().filter(|r| !r.is_empty()) {
        let _ = write!(t, " [{role}]");
    }
    if st["not_enqueued"].as_bool() == Some(true) {
        t.push_str(" (not enqueued yet)");
    }
    t
}

/// The status as terminal tables.
pub fn render(v: &Value) -> String {
    let mut out = String::new();
    let empty = Vec::new();
    let list = |x: &Value| x.as_array().unwrap_or(&empty).clone();
    let workers = list(&v["workers"]);
    let _ = writeln!(out, "WORKERS ({})", workers.len());
    for w in &workers {
        let answering = w["answering"].as_bool() == Some(true);
        let _ = writeln!(
            out,
            "worker {}  {}  host {} pid {}  island {}  heartbeat {} ms ago{}",
            s(&w["id"]),
            s(&w["address"]),
            s(&w["host"]),
            s(&w["pid"]),
            s(&w["island"]),
            s(&w["last_heartbeat_ms"]),
            if answering {
                String::new()
            } else {
                format!("  NOT ANSWERING: {}", s(&w["error"]))
            }
        );
        for e in list(&w["enqueuing"]) {
            let _ = writeln!(
                out,
                "  host still enqueueing run {} (at position {})",
                s(&e["run"]),
                s(&e["position"])
            );
        }
        for d in list(&w["devices"]) {
            let queue = list(&d["queue"]);
            let _ = writeln!(
                out,
                "  device {} (local {})  running: {}  queued: {}{}",
                s(&d["id"]),
                s(&d["local_id"]),
                if d["running"].is_null() {
                    "-".to_owned()
                } else {
                    step_text(&d["running"])
                },
                queue.len(),
                match d["more"].as_u64() {
                    Some(n) if n > 0 => format!(" (+{n} more)"),
                    _ => String::new(),
                }
            );
            let all = std::iter::once(&d["running"])
                .filter(|r| !r.is_null())
                .chain(queue.iter());
            for (i, st) in all.enumerate() {
                let _ = writeln!(
                    out,
                    "    {} {}",
                    if i == 0 { ">" } else { " " },
                    step_text(st)
                );
                for wt in list(&st["waits_for"]) {
                    let _ = writeln!(out, "        waits for {}", wait_text(&wt));
                }
            }
        }
    }
    let runs = list(&v["runs"]);
    let _ = writeln!(out, "RUNS ({})", runs.len());
    for r in &runs {
        let stalled = r["stalled"].as_bool() == Some(true);
        let _ = writeln!(
            out,
            "run {}  {}  steps {}/{}  workers {}  no progress for {} ms{}",
            s(&r["run"]),
            s(&r["name"]),
            s(&r["steps_done"]),
            s(&r["steps_total"]),
            s(&r["workers"]),
            s(&r["since_progress_ms"]),
            if stalled { "  STALLED" } else { "" }
        );
        for (i, link) in list(&r["chain"]).iter().enumerate() {
            let _ = writeln!(
                out,
                "  {}{} {} on worker {} device {}: {}",
                "  ".repeat(i.min(8)),
                if i == 0 { "*" } else { "└" },
                s(&link["label"]),
                s(&link["worker"]),
                s(&link["device"]),
                s(&link["why"])
            );
        }
    }
    let c = &v["counters"];
    let _ = writeln!(
        out,
        "COUNTERS  runs ok {} (recovered {})  failed {}  workers lost {}  executables compiled {}, shipped {}",
        s(&c["runs_ok"]),
        s(&c["runs_recovered"]),
        s(&c["runs_failed"]),
        s(&c["workers_lost"]),
        s(&c["executables_compiled"]),
        s(&c["executables_shipped"])
    );
    let limits = &v["limits"];
    let of = |held: &Value, limit: &Value| match limit.as_u64() {
        Some(0) | None => s(held),
        Some(_) => format!("{} of {}", s(held), s(limit)),
    };
    for x in list(&v["sessions"]) {
        let devices: Vec<String> = list(&x["devices"]).iter().map(s).collect();
        let state = match x["state"].as_str() {
            Some("open") | None => String::new(),
            Some(other) => format!(" ({other})"),
        };
        let _ = writeln!(
            out,
            "SESSION {} {}{state}  devices [{}]  arrays {}  device bytes {}  in flight {}  executables {}  calls {} ({} running)",
            s(&x["session"]),
            s(&x["name"]),
            devices.join(", "),
            of(&x["arrays"], &limits["session_arrays"]),
            of(&x["device_bytes"], &limits["session_device_bytes"]),
            of(&x["in_flight_bytes"], &limits["session_transfer_bytes"]),
            s(&x["executables"]),
            s(&x["calls"]),
            s(&x["calls_running"])
        );
    }
    for w in list(&v["waiting"]) {
        let asks = match w["devices"].as_u64() {
            Some(0) | None => "every device".to_owned(),
            Some(n) => format!("{n} devices"),
        };
        let _ = writeln!(
            out,
            "WAITING {}. session {} {}  asks for {asks}  for {} ms",
            s(&w["position"]),
            s(&w["session"]),
            s(&w["name"]),
            s(&w["waiting_ms"])
        );
    }
    out
}
