//! What each local device did lately, for the status page's timelines and
//! the metrics: every [`SAMPLE`] the worker looks at each device's first
//! unfinished step ([`queues::queues`], the same view `Worker.Queues`
//! gives) and counts the time since the last look as *busy* (the step is
//! enqueued with every input met: the device runs it), *waiting* (it
//! waits for an input, for the host to enqueue it, or it is a piece sent
//! to or received from a peer: the network's work) or idle (nothing
//! queued). Busy and waiting time add up into counters;
//! the last [`KEEP`] of it is kept as spans (at most [`MAX_SPANS`] per
//! device), each naming the run whose step it was.
//!
//! Sampling costs one look at the queues per [`SAMPLE`] and nothing on the
//! path of a step; a step shorter than the period is seen in proportion to
//! the time it takes (on average), not one by one.

use crate::{queues, State};
use pw_wire::proto;
use std::{
    collections::{BTreeMap, VecDeque},
    sync::Mutex,
    time::{Duration, Instant},
};

/// How often each device is looked at.
pub const SAMPLE: Duration = Duration::from_millis(50);
/// How much of the past the spans cover.
pub const KEEP: Duration = Duration::from_secs(60);
/// The most spans kept per device (older ones go first).
pub const MAX_SPANS: usize = 512;

/// What a device was seen doing, for the step of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doing {
    Busy { run: u64 },
    Waiting { run: u64 },
}

struct Span {
    start: Instant,
    end: Instant,
    doing: Doing,
}

#[derive(Default)]
struct Device {
    busy: Duration,
    waiting: Duration,
    queued: u32,
    spans: VecDeque<Span>,
}

/// See the module doc.
pub struct Activity {
    devices: Mutex<BTreeMap<u32, Device>>,
    last: Mutex<Instant>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            devices: Mutex::default(),
            last: Mutex::new(Instant::now()),
        }
    }
}

/// What one look saw on a local device: what it is doing (None: idle)
/// and how many steps are queued on it.
pub type Seen = BTreeMap<u32, (Option<Doing>, u32)>;

impl Activity {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u32, Device>> {
        self.devices.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts the time since the last look (at most two periods: a late
    /// look does not stretch what it saw over a gap) as what `seen` says
    /// at `now`; `devices` are every local device.
    pub fn record(&self, now: Instant, devices: &[u32], seen: &Seen) {
        let since = {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            let since = now.saturating_duration_since(*last).min(2 * SAMPLE);
            *last = now;
            since
        };
        let mut all = self.lock();
        for &local in devices {
            let d = all.entry(local).or_default();
            let (doing, queued) = seen.get(&local).copied().unwrap_or((None, 0));
            d.queued = queued;
            while d
                .spans
                .front()
                .is_some_and(|s| now.saturating_duration_since(s.end) > KEEP)
            {
                d.spans.pop_front();
            }
            let Some(doing) = doing else { continue };
            match doing {
                Doing::Busy { .. } => d.busy += since,
                Doing::Waiting { .. } => d.waiting += since,
            }
            let start = now - since;
            match d.spans.back_mut() {
                // The same as the last look, with no idle look between.
                Some(last) if last.doing == doing && start <= last.end => last.end = now,
                _ => {
                    if d.spans.len() == MAX_SPANS {
                        d.spans.pop_front();
                    }
                    d.spans.push_back(Span {
                        start,
                        end: now,
                        doing,
                    });
                }
            }
        }
    }

    /// The counters of every device, with what the store holds on each.
    pub fn counters(&self, state: &State) -> Vec<proto::DeviceActivity> {
        let held = state.store.held();
        self.lock()
            .iter()
            .map(|(&local, d)| {
                let h = held.get(&local).copied().unwrap_or_default();
                proto::DeviceActivity {
                    local_device: local,
                    busy_us: d.busy.as_micros() as u64,
                    waiting_us: d.waiting.as_micros() as u64,
                    queued_steps: d.queued,
                    held_bytes: h.bytes,
                    held_buffers: h.buffers,
                }
            })
            .collect()
    }

    /// The spans of every device, as of `now`.
    pub fn timelines(&self, now: Instant) -> Vec<proto::DeviceTimeline> {
        let ago = |t: Instant| now.saturating_duration_since(t).as_millis() as u32;
        self.lock()
            .iter()
            .map(|(&local, d)| proto::DeviceTimeline {
                local_device: local,
                spans: d
                    .spans
                    .iter()
                    .map(|s| {
                        let (waiting, run) = match s.doing {
                            Doing::Busy { run } => (false, run),
                            Doing::Waiting { run } => (true, run),
                        };
                        proto::ActivitySpan {
                            start_ago_ms: ago(s.start),
                            end_ago_ms: ago(s.end),
                            waiting,
                            run,
                        }
                    })
                    .collect(),
            })
            .collect()
    }
}

/// What each local device is doing, from the queues: the first
/// unfinished step of the earliest run that has one on it.
pub fn look(queues: &proto::QueuesReply) -> Seen {
    let mut seen = Seen::new();
    // Runs come in run order: the earliest run's step is the running one.
    for run in &queues.runs {
        for d in &run.devices {
            let entry = seen.entry(d.local_device).or_insert((None, 0));
            entry.1 += d.steps.len() as u32 + d.more;
            if entry.0.is_some() {
                continue;
            }
            entry.0 = d.steps.first().map(|s| {
                // A piece to or from a peer is the network's work, not the
                // device's.
                let network = s.role.starts_with("send") || s.role.starts_with("receive");
                if s.not_enqueued || !s.waits_for.is_empty() || network {
                    Doing::Waiting { run: run.run }
                } else {
                    Doing::Busy { run: run.run }
                }
            });
        }
    }
    seen
}

/// Looks at the devices every [`SAMPLE`] until the worker ends.
pub async fn sample(state: std::sync::Weak<State>, devices: Vec<u32>) {
    let mut ticker = tokio::time::interval(SAMPLE);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(state) = state.upgrade() else { return };
        let seen = look(&queues::queues(&state));
        state.activity.record(Instant::now(), &devices, &seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_add_up_into_spans_and_counters() {
        let a = Activity::default();
        let t0 = *a.last.lock().unwrap();
        let busy = |run| Seen::from([(0, (Some(Doing::Busy { run }), 3))]);
        a.record(t0 + SAMPLE, &[0, 1], &busy(7));
        a.record(t0 + 2 * SAMPLE, &[0, 1], &busy(7));
        a.record(t0 + 3 * SAMPLE, &[0, 1], &Seen::new());
        a.record(
            t0 + 4 * SAMPLE,
            &[0, 1],
            &Seen::from([(0, (Some(Doing::Waiting { run: 8 }), 1))]),
        );
        let d = a.lock();
        assert_eq!(d[&0].busy, 2 * SAMPLE);
        assert_eq!(d[&0].waiting, SAMPLE);
        assert_eq!(d[&0].spans.len(), 2);
        assert_eq!(d[&0].spans[0].end - d[&0].spans[0].start, 2 * SAMPLE);
        assert_eq!(d[&1].busy + d[&1].waiting, Duration::ZERO);
        drop(d);
        let t = a.timelines(t0 + 4 * SAMPLE);
        assert_eq!(t[0].spans[0].start_ago_ms, 200);
        assert_eq!(t[0].spans[0].end_ago_ms, 100);
        assert!(t[0].spans[1].waiting && t[0].spans[1].run == 8);
        assert!(t[1].spans.is_empty());
    }
}
