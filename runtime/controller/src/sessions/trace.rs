//! Session traces (`pw-server --trace-sessions DIR`): each finished call's
//! timeline joins its session's, written as a Chrome trace when the session
//! closes; with `--otlp-endpoint`, the same spans go to an OpenTelemetry
//! collector as they are recorded ([`crate::otlp`]). Beside the workers' tracks (enqueue, devices, network), a call
//! shows where its time went before and after: on the client's track,
//! asking for it and getting it to the server (from the times the client
//! put in the call: exact on one host, as good as the clocks' agreement
//! across hosts); on the controller's, reading and checking it, holding it
//! back (calls in flight), dispatching it, and the run until its outputs
//! are ready; and every fetch.

use super::Sessions;
use crate::{lowering::step_lines, summary::RunSummary};
use pw_exec::trace::{chrome_json, Span, Track};
use std::time::{Duration, Instant, SystemTime};

/// The most spans a session's trace keeps (later calls are not traced).
const MAX_SPANS: usize = 1 << 20;

impl Sessions<'_> {
    /// Adds a finished call's timeline (it started at `t0`) to session
    /// `id`'s trace.
    pub(crate) fn trace_call(
        &self,
        id: u64,
        t0: Instant,
        plan: &pw_core::plan::Plan,
        summary: &mut RunSummary,
    ) {
        summary.steps = step_lines(plan);
        let spans = summary.spans();
        self.add_spans(id, |opened| {
            let shift = t0.saturating_duration_since(opened);
            spans
                .into_iter()
                .map(|mut s| {
                    s.start += shift;
                    s.end += shift;
                    s
                })
                .collect()
        });
    }
}

/// When a call reached the server and each step of taking it ended.
pub(crate) struct CallTimes {
    /// The client's `client_start_unix_ns` and `client_enqueue_ns`.
    pub client: (u64, u64),
    pub received: Instant,
    pub read: Instant,
    /// Whether it waited for room (calls in flight), until `room`.
    pub held_back: bool,
    pub room: Instant,
    pub dispatched: Instant,
}

impl Sessions<'_> {
    /// Whether sessions are traced (to files or to a collector).
    pub(crate) fn traced(&self) -> bool {
        self.c.inner.config.trace_sessions.is_some() || self.c.inner.otlp.is_some()
    }

    /// The name of session `id`'s executable `exe`, for its spans.
    pub(crate) fn executable_name(&self, id: u64, exe: u64) -> String {
        let mut sessions = self.lock();
        let known = sessions.get(id).ok().and_then(|s| s.executables.get(&exe));
        known.map_or_else(|| format!("executable {exe}"), |e| e.name.clone())
    }

    /// Adds spans to session `id`'s trace (kept for its file, handed to
    /// the OTLP exporter); `spans` gets the session's opening instant.
    fn add_spans(&self, id: u64, spans: impl FnOnce(Instant) -> Vec<Span>) {
        let otlp = self.c.inner.otlp.as_ref();
        let files = self.c.inner.config.trace_sessions.is_some();
        self.update(id, |session| {
            let spans = spans(session.opened);
            if session.trace.len() + spans.len() > MAX_SPANS {
                return;
            }
            if let Some(q) = otlp {
                q.offer(otlp_batch(id, session, spans.clone(), None));
            }
            if files {
                session.trace.extend(spans);
            }
        });
    }

    /// Session `id` closed: the collector gets its root span.
    pub(crate) fn trace_closed(&self, id: u64, session: &super::Session) {
        if let Some(q) = self.c.inner.otlp.as_ref() {
            let closed = session.opened.elapsed();
            q.offer(otlp_batch(id, session, Vec::new(), Some(closed)));
        }
    }

    /// Traces how call `n` of executable `name` was taken (`t`).
    pub(crate) fn trace_taken(&self, id: u64, n: u64, name: &str, t: &CallTimes) {
        self.add_spans(id, |opened| {
            let at = |i: Instant| i.saturating_duration_since(opened);
            let span = |what: &str, track, start, end| Span {
                name: format!("call {n} of {name}: {what}"),
                category: "session",
                track,
                start,
                end,
            };
            let mut spans = Vec::with_capacity(5);
            if let Some((asked, queued)) = client_times(t) {
                let received = at(t.received);
                let asked = received.checked_sub(asked);
                let queued = received.checked_sub(queued);
                if let (Some(asked), Some(queued)) = (asked, queued) {
                    spans.push(span("exe() queues it", Track::Client, asked, queued));
                    spans.push(span(
                        "in the client's queue and on the wire",
                        Track::Client,
                        queued,
                        at(t.received),
                    ));
                }
            }
            spans.push(span(
                "read and checked",
                Track::Controller,
                at(t.received),
                at(t.read),
            ));
            if t.held_back {
                spans.push(span(
                    "held back (calls in flight)",
                    Track::Controller,
                    at(t.read),
                    at(t.room),
                ));
            }
            spans.push(span(
                "dispatched",
                Track::Controller,
                at(t.room),
                at(t.dispatched),
            ));
            spans
        });
    }

    /// Traces the run of a call from its parts sent (`sent`) to its
    /// outputs ready or failed (now).
    pub(crate) fn trace_completed(&self, id: u64, name: &str, sent: Instant) {
        let now = Instant::now();
        self.add_spans(id, |opened| {
            vec![Span {
                name: format!("{name}: on the workers until its outputs are ready"),
                category: "session",
                track: Track::Controller,
                start: sent.saturating_duration_since(opened),
                end: now.saturating_duration_since(opened),
            }]
        });
    }

    /// Traces a fetch of `array` (`bytes`) asked for at `asked`, answered now.
    pub(crate) fn trace_fetch(&self, id: u64, array: u64, bytes: u64, asked: Instant) {
        let now = Instant::now();
        self.add_spans(id, |opened| {
            vec![Span {
                name: format!("fetch of array {array} ({bytes} bytes)"),
                category: "session",
                track: Track::Controller,
                start: asked.saturating_duration_since(opened),
                end: now.saturating_duration_since(opened),
            }]
        });
    }
}

/// Spans of session `id` for the OTLP exporter.
fn otlp_batch(
    id: u64,
    session: &super::Session,
    spans: Vec<Span>,
    closed: Option<Duration>,
) -> crate::otlp::Batch {
    crate::otlp::Batch {
        session: id,
        name: session.name.clone(),
        opened: SystemTime::now()
            .checked_sub(session.opened.elapsed())
            .unwrap_or(SystemTime::UNIX_EPOCH),
        spans,
        closed,
    }
}

/// How long before the call reached the server the client was asked for
/// it, and had queued it; None when the client said nothing or its clock
/// is ahead of the server's.
fn client_times(t: &CallTimes) -> Option<(Duration, Duration)> {
    let (start_ns, enqueue_ns) = t.client;
    if start_ns == 0 {
        return None;
    }
    let now_ns = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?
        .as_nanos() as u64;
    let received_ns = now_ns.checked_sub(t.received.elapsed().as_nanos() as u64)?;
    let before = Duration::from_nanos(received_ns.checked_sub(start_ns)?);
    let queued = before.checked_sub(Duration::from_nanos(enqueue_ns))?;
    Some((before, queued))
}

/// A track's name in a session's trace (its file and its OTLP spans).
pub(crate) fn track_name(track: Track) -> String {
    match track {
        Track::Host(w) => format!("worker {w} host (enqueue)"),
        Track::Device(d) => format!("device {d}"),
        Track::Network => "network (worker to worker)".into(),
        Track::Compiler => "compiler".into(),
        Track::Recovery => "recoveries".into(),
        Track::Client => "client".into(),
        Track::Controller => "controller (the session's requests)".into(),
    }
}

/// Writes session `id`'s trace to `dir/session-ID.json` (whole or not at
/// all: through a temporary file).
pub(crate) fn write(dir: &std::path::Path, id: u64, spans: &[Span]) {
    let json = chrome_json(spans, &track_name);
    let path = dir.join(format!("session-{id}.json"));
    let tmp = dir.join(format!(".session-{id}.json.tmp"));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, json.to_string()))
        .and_then(|()| std::fs::rename(&tmp, &path));
    match written {
        Ok(()) => tracing::info!("session {id}: trace written to {}", path.display()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            tracing::warn!(
                "session {id}: cannot write its trace to {}: {e}",
                path.display()
            );
        }
    }
}
