//! Timelines in the Chrome/Perfetto trace format: one track per device,
//! one for the host's enqueueing and one for the compiler.

use super::{plan::Plan, plan::StepKind, CompileCache, RunReport};
use serde_json::{json, Value};
use std::{collections::HashMap, time::Duration};

/// Where a span is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Track {
    Compiler,
    Host,
    Device(i64),
}

/// One span of a timeline.
#[derive(Debug, Clone)]
pub struct Span {
    pub name: String,
    pub category: &'static str,
    pub track: Track,
    pub start: Duration,
    pub end: Duration,
}

/// The spans of a run: compilations (laid end to end before time zero's
/// run, as they happened before it), the host enqueueing each step, and each
/// device working on each step. A device starts a step when the host has
/// enqueued it and the device finished its previous one: PJRT does not
/// report start times, so the start is this bound.
pub fn spans(plan: &Plan, cache: &CompileCache, report: &RunReport) -> Vec<Span> {
    let mut spans = Vec::new();
    let compile_total: Duration = cache.spans.iter().map(|s| s.end).sum();
    let mut at = Duration::ZERO;
    for s in &cache.spans {
        spans.push(Span {
            start: at,
            end: at + s.end,
            ..s.clone()
        });
        at += s.end;
    }
    let shift = compile_total;
    let mut device_free: HashMap<i64, Duration> = HashMap::new();
    for (step, timing) in plan.steps.iter().zip(&report.steps) {
        spans.push(Span {
            name: step.label.clone(),
            category: "enqueue",
            track: Track::Host,
            start: shift + timing.enqueue_start,
            end: shift + timing.enqueue_end,
        });
        let category = match step.kind {
            StepKind::Call { .. } => "execute",
            StepKind::Copy { .. } => "transfer",
            StepKind::Assemble { .. } => continue,
        };
        for (device, done) in &timing.done {
            let Some(done) = done else { continue };
            let free = device_free.get(device).copied().unwrap_or_default();
            let start = timing.enqueue_end.max(free).min(*done);
            device_free.insert(*device, *done);
            spans.push(Span {
                name: step.label.clone(),
                category,
                track: Track::Device(*device),
                start: shift + start,
                end: shift + *done,
            });
        }
    }
    spans
}

fn track_id(track: Track) -> i64 {
    match track {
        Track::Compiler => 1_000_000,
        Track::Host => 1_000_001,
        Track::Device(d) => d,
    }
}

/// The trace as Chrome's JSON object format.
pub fn chrome_json(spans: &[Span]) -> Value {
    let mut events: Vec<Value> = Vec::new();
    let mut tracks: Vec<Track> = spans.iter().map(|s| s.track).collect();
    tracks.sort_by_key(|t| track_id(*t));
    tracks.dedup();
    for track in tracks {
        let name = match track {
            Track::Compiler => "compiler".to_owned(),
            Track::Host => "host (enqueue)".to_owned(),
            Track::Device(d) => format!("device {d}"),
        };
        events.push(json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": track_id(track), "args": {"name": name}}));
        events.push(json!({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": track_id(track), "args": {"sort_index": track_id(track)}}));
    }
    events.push(json!({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "pw-run"}}));
    for s in spans {
        let start = s.start.as_secs_f64() * 1e6;
        let duration = (s.end.saturating_sub(s.start)).as_secs_f64() * 1e6;
        events.push(json!({
            "name": s.name, "cat": s.category, "ph": "X", "pid": 1, "tid": track_id(s.track),
            "ts": start, "dur": duration,
        }));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ms"})
}
