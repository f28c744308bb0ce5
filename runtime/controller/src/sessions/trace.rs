//! Session traces (`pw-server --trace-sessions DIR`): each finished call's
//! timeline joins its session's, written as a Chrome trace when the session
//! closes.

use super::Sessions;
use crate::{lowering::step_lines, summary::RunSummary};
use pw_exec::trace::{chrome_json, Span, Track};
use std::time::Instant;

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
        self.update(id, |session| {
            let shift = t0.saturating_duration_since(session.opened);
            if session.trace.len() + spans.len() <= MAX_SPANS {
                session.trace.extend(spans.into_iter().map(|mut s| {
                    s.start += shift;
                    s.end += shift;
                    s
                }));
            }
        });
    }
}

/// Writes session `id`'s trace to `dir/session-ID.json` (whole or not at
/// all: through a temporary file).
pub(crate) fn write(dir: &std::path::Path, id: u64, spans: &[Span]) {
    let json = chrome_json(spans, &|track| match track {
        Track::Host(w) => format!("worker {w} host (enqueue)"),
        Track::Device(d) => format!("device {d}"),
        Track::Network => "network (worker to worker)".into(),
        Track::Compiler => "compiler".into(),
        Track::Recovery => "recoveries".into(),
    });
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
