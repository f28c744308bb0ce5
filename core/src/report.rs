//! What a part of a run reports about itself: when each step was enqueued
//! and done, and the pieces it sent. Workers send a [`PartReport`] with
//! their `PartDone`; the controller merges them into the run's summary and
//! traces. Times are from when the worker got the part.

use serde::{Deserialize, Serialize};
use std::{collections::BTreeMap, time::Duration};

/// When one step was enqueued and when its devices finished it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StepTiming {
    pub enqueue_start: Duration,
    pub enqueue_end: Duration,
    /// Per device of the step: when its part was done (None: not recorded).
    pub done: Vec<(i64, Option<Duration>)>,
}

/// One piece sent to a peer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SendRecord {
    pub step: u32,
    pub piece: u32,
    pub to: u32,
    pub bytes: u64,
    /// When its bytes were ready, and when the last was handed to the link
    /// (from the part's start).
    pub start: Duration,
    pub end: Duration,
}

/// When a worker's part of a run did what (step timings only when the run
/// records them).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PartReport {
    pub worker: u32,
    /// When the host had enqueued every step.
    pub enqueued: Duration,
    /// Per step of the part: its plan index and timing.
    pub steps: Vec<(usize, StepTiming)>,
    /// Pieces sent to peers.
    pub sends: Vec<SendRecord>,
    /// When recorded: the most bytes of buffers the part held at once, per
    /// device.
    #[serde(default)]
    pub peak_bytes: BTreeMap<i64, u64>,
}

impl PartReport {
    /// Moves every time `by` later.
    pub fn shift(&mut self, by: Duration) {
        self.enqueued += by;
        for (_, t) in &mut self.steps {
            t.enqueue_start += by;
            t.enqueue_end += by;
            for (_, done) in &mut t.done {
                if let Some(d) = done {
                    *d += by;
                }
            }
        }
        for s in &mut self.sends {
            s.start += by;
            s.end += by;
        }
    }
}
