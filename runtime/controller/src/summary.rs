//! What a distributed run reports to its client (serde data, sent as JSON).

use crate::compile::Source;
use pw_core::plan::{DeviceAddr, MeshPlacement};
use pw_core::report::PartReport;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// See the module doc.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunSummary {
    pub run: u64,
    /// How the program was lowered (or that it already was).
    pub lowered: String,
    /// The workers that took part.
    pub workers: Vec<WorkerLine>,
    pub placement: Vec<MeshPlacement>,
    /// Where each device of the plan is.
    pub devices: Vec<(i64, DeviceAddr)>,
    /// Every executable the run needed, per worker, and where it came from.
    pub executables: Vec<ExecutableLine>,
    /// The plan's steps, in schedule order.
    pub steps: Vec<StepLine>,
    pub timings: Timings,
    /// Each worker's report (step timings when recorded, pieces sent).
    pub parts: Vec<PartReport>,
    /// When each worker was sent its part, from the start of the run.
    pub part_sent: Vec<(u32, Duration)>,
    /// Bytes the controller moved to and from each worker for the run.
    pub controller_bytes: Vec<(u32, u64, u64)>,
    /// Each time the run lost a worker and recovered (or tried to).
    #[serde(default)]
    pub recoveries: Vec<RecoveryLine>,
}

/// One recovery from lost workers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RecoveryLine {
    /// The workers lost, and why.
    pub lost: Vec<String>,
    /// Each lost device and the device that took its place.
    pub moved: Vec<(i64, i64)>,
    /// The steps run again, of the plan's.
    pub steps_replayed: usize,
    pub steps: usize,
    /// Values survivors kept (read in place by the replay), and their bytes.
    pub values_kept: usize,
    pub bytes_kept: u64,
    /// When the controller noticed the loss, and when every survivor had
    /// settled (from the run's start); how long it then waited for a worker
    /// to take the lost devices.
    #[serde(default)]
    pub noticed: Duration,
    pub detected: Duration,
    pub waited: Duration,
    /// When the replay had finished, from the run's start (None: it did
    /// not).
    pub recovered: Option<Duration>,
}

/// One step of the plan.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StepLine {
    pub label: String,
    /// `call`, `copy` or `assemble`.
    pub kind: String,
    pub devices: Vec<i64>,
}

/// One worker of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkerLine {
    pub id: u32,
    pub address: String,
    pub island: String,
    pub host: String,
    pub pid: u32,
    /// Its PJRT platform (`cpu`, `cuda`).
    #[serde(default)]
    pub platform: String,
    pub devices: Vec<i64>,
}

/// One executable a worker needed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecutableLine {
    pub what: String,
    pub devices: Vec<i64>,
    pub worker: u32,
    pub key: String,
    /// None: the worker had it loaded already.
    pub source: Option<Source>,
}

/// When the run got where, from its start (the request's arrival).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Timings {
    pub lowered: Duration,
    /// Every executable compiled (or found) and shipped.
    pub executables_ready: Duration,
    pub inputs_sent: Duration,
    pub parts_sent: Duration,
    /// Every worker reported its part done.
    pub parts_done: Duration,
    pub outputs_fetched: Duration,
}

impl RunSummary {
    /// When `worker` was sent its part, from the start of the run.
    pub fn part_sent(&self, worker: u32) -> Duration {
        self.part_sent
            .iter()
            .find(|(w, _)| *w == worker)
            .map_or(Duration::ZERO, |x| x.1)
    }

    /// The run's timeline, from its start: per worker, its host and its
    /// devices; pieces between workers on the network track (see
    /// [`pw_exec::trace`]).
    pub fn spans(&self) -> Vec<pw_exec::trace::Span> {
        use pw_exec::trace::{run_spans, Span, Track};
        let mut spans = Vec::new();
        for p in &self.parts {
            let sent = self.part_sent(p.worker);
            let steps = p.steps.iter().filter_map(|(index, timing)| {
                let line = self.steps.get(*index)?;
                Some((
                    line.label.as_str(),
                    line.kind.as_str(),
                    timing,
                    Duration::ZERO,
                ))
            });
            spans.extend(run_spans(p.worker, steps, sent));
            for send in &p.sends {
                spans.push(Span {
                    name: format!(
                        "step {} piece {}: worker {} -> {} ({} bytes)",
                        send.step, send.piece, p.worker, send.to, send.bytes
                    ),
                    category: "network",
                    track: Track::Network,
                    start: sent + send.start,
                    end: sent + send.end,
                });
            }
        }
        spans
    }

    /// Bytes sent worker to worker in the run.
    pub fn peer_bytes(&self) -> u64 {
        self.parts
            .iter()
            .flat_map(|p| &p.sends)
            .map(|s| s.bytes)
            .sum()
    }
}
