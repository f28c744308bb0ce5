//! Timelines in the Chrome/Perfetto trace format: one track per device,
//! one per worker's host (its enqueueing), one for the compiler and one for
//! the network between workers.

use super::StepTiming;
use serde_json::{json, Value};
use std::{collections::HashMap, time::Duration};

/// Where a span is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Track {
    Compiler,
    /// A worker's host thread, enqueueing (worker 0 in the embedded case).
    Host(u32),
    /// A device, by the plan's id.
    Device(i64),
    /// Bytes between workers.
    Network,
    /// The controller's recoveries from lost workers.
    Recovery,
    /// A session's client: asking for calls, queueing them, the wire.
    Client,
    /// The controller's side of a session's requests: reading and
    /// checking, holding back, dispatching, completing, fetching.
    Controller,
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

/// Compile spans laid end to end from time zero (they happened before the
/// run, one after the other); returns them and where they end.
pub fn compile_spans(compiles: &[Span]) -> (Vec<Span>, Duration) {
    let mut at = Duration::ZERO;
    let spans = compiles
        .iter()
        .map(|s| {
            let span = Span {
                start: at,
                end: at + (s.end - s.start),
                ..s.clone()
            };
            at = span.end;
            span
        })
        .collect();
    (spans, at)
}

/// When each step's inputs were all ready, from the recorded completion
/// times of the steps that wrote them (an assembly is ready when its parts
/// are; a part's inputs count as ready from the start).
pub fn inputs_ready(part: &pw_core::plan::Part, timings: &[StepTiming]) -> Vec<Duration> {
    let mut value_ready: HashMap<pw_core::plan::ValueId, Duration> = HashMap::new();
    let mut ready = Vec::with_capacity(part.steps.len());
    for (s, timing) in part.steps.iter().zip(timings) {
        let inputs = s
            .step
            .reads()
            .iter()
            .filter_map(|v| value_ready.get(v).copied())
            .max()
            .unwrap_or_default();
        let done = timing
            .done
            .iter()
            .filter_map(|(_, d)| *d)
            .max()
            .unwrap_or(inputs);
        for v in s.step.writes() {
            value_ready.insert(v, done);
        }
        ready.push(inputs);
    }
    ready
}

/// The spans of one worker's part of a run, shifted by `shift`: the host
/// enqueueing each step, and each device working on each step. `steps`
/// gives each step's label, kind (`StepKind::name`), timing and when its
/// inputs were ready (zero: unknown). PJRT does not report start times, so
/// a device's span starts at the bound: when the host had enqueued the
/// step, the device had finished its previous one, and the inputs were
/// ready.
pub fn run_spans<'a>(
    worker: u32,
    steps: impl IntoIterator<Item = (&'a str, &'a str, &'a StepTiming, Duration)>,
    shift: Duration,
) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut device_free: HashMap<i64, Duration> = HashMap::new();
    for (label, kind, timing, ready) in steps {
        spans.push(Span {
            name: label.to_owned(),
            category: "enqueue",
            track: Track::Host(worker),
            start: shift + timing.enqueue_start,
            end: shift + timing.enqueue_end,
        });
        let category = match kind {
            "call" => "execute",
            "copy" => "transfer",
            _ => continue,
        };
        for (device, done) in &timing.done {
            let Some(done) = done else { continue };
            let free = device_free.get(device).copied().unwrap_or_default();
            let start = timing.enqueue_end.max(free).max(ready).min(*done);
            // Completions can be recorded out of order: the device is free
            // after the latest.
            device_free.insert(*device, free.max(*done));
            spans.push(Span {
                name: label.to_owned(),
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
        Track::Network => 1_000_001,
        Track::Recovery => 1_000_002,
        Track::Client => 1_000_003,
        Track::Controller => 1_000_004,
        Track::Host(w) => 2_000_000 + i64::from(w),
        Track::Device(d) => d,
    }
}

/// The trace as Chrome's JSON object format; `name` names each track.
pub fn chrome_json(spans: &[Span], name: &dyn Fn(Track) -> String) -> Value {
    let mut events: Vec<Value> = Vec::new();
    let mut tracks: Vec<Track> = spans.iter().map(|s| s.track).collect();
    tracks.sort_by_key(|t| track_id(*t));
    tracks.dedup();
    for track in tracks {
        let id = track_id(track);
        events.push(json!({"ph": "M", "name": "thread_name", "pid": 1, "tid": id, "args": {"name": name(track)}}));
        // A session's client and the controller above the workers.
        let sort = match track {
            Track::Client => -2,
            Track::Controller => -1,
            _ => id,
        };
        events.push(json!({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": id, "args": {"sort_index": sort}}));
    }
    events.push(json!({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "pw"}}));
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
