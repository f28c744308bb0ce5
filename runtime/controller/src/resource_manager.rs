//! The resource manager: who holds which devices, who waits for them, and
//! whose lease lapsed, as plain state (no I/O, no clocks of its own), so
//! that its rules are tested directly.
//!
//! * A session asks for a number of devices (or every device). It gets
//!   them at once when nobody waits before it and that many are free;
//!   otherwise it joins the end of the line. The line is served strictly in
//!   order: a later request never overtakes an earlier one, even when it
//!   would fit, so a large request is never starved by small ones.
//! * A slice is chosen to span as few workers as possible: one worker with
//!   enough free devices if there is one (the fewest such devices left
//!   over), else the workers with the most free devices first.
//! * Releasing a slice (the session closed, its client vanished or its
//!   lease lapsed) hands the freed devices to the head of the line, as far
//!   as they go.
//! * A session that lost devices with a worker is topped up to its size
//!   again from free devices before the line is served: it held them
//!   first, and its arrays are recomputed there ([`crate::sessions`]).

use std::{
    collections::{BTreeMap, VecDeque},
    time::{Duration, Instant},
};

/// How many devices a session asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Every device registered when it is granted.
    All,
    Count(usize),
}

impl Want {
    fn count(self, total: usize) -> usize {
        match self {
            Want::All => total,
            Want::Count(n) => n,
        }
    }
}

/// The answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    Granted(Vec<i64>),
    /// The place in line (1: next).
    Queued(usize),
    Refused(String),
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct Slices {
    /// Device -> the session holding it.
    held: BTreeMap<i64, u64>,
    /// Sessions waiting, in arrival order.
    line: VecDeque<(u64, Want)>,
}

impl Slices {
    /// Session `session` asks for `want` of `devices` (every registered
    /// device, by worker).
    pub fn ask(&mut self, session: u64, want: Want, devices: &BTreeMap<u32, Vec<i64>>) -> Ask {
        let total: usize = devices.values().map(Vec::len).sum();
        let n = want.count(total);
        if n == 0 {
            return Ask::Refused(if total == 0 {
                "no worker is registered with this server".into()
            } else {
                "a session needs at least one device".into()
            });
        }
        if n > total {
            return Ask::Refused(format!(
                "{n} devices asked for, the registered workers offer {total}"
            ));
        }
        if self.line.is_empty() {
            if let Some(slice) = self.pick(n, devices) {
                self.take(session, &slice);
                return Ask::Granted(slice);
            }
        }
        self.line.push_back((session, want));
        Ask::Queued(self.line.len())
    }

    /// Session `session` waits at the end of the line (put back from the
    /// journal after a restart, in its order).
    pub fn enqueue(&mut self, session: u64, want: Want) {
        self.line.push_back((session, want));
    }

    /// Session `session` holds `devices` (taken from the journal after a
    /// restart, whether registered yet or not).
    pub fn hold(&mut self, session: u64, devices: &[i64]) {
        self.take(session, devices);
    }

    /// Session `session` is gone: its devices are free and it leaves the
    /// line. Returns the sessions granted a slice as a result, in order.
    pub fn release(
        &mut self,
        session: u64,
        devices: &BTreeMap<u32, Vec<i64>>,
    ) -> Vec<(u64, Vec<i64>)> {
        self.held.retain(|_, s| *s != session);
        self.line.retain(|(s, _)| *s != session);
        self.serve(devices)
    }

    /// Grants slices from the head of the line while they fit (also after
    /// workers joined). Requests that can no longer ever fit stay in line
    /// until their own timeout.
    pub fn serve(&mut self, devices: &BTreeMap<u32, Vec<i64>>) -> Vec<(u64, Vec<i64>)> {
        let total: usize = devices.values().map(Vec::len).sum();
        let mut granted = Vec::new();
        while let Some(&(session, want)) = self.line.front() {
            let Some(slice) = self.pick(want.count(total), devices) else {
                break;
            };
            self.line.pop_front();
            self.take(session, &slice);
            granted.push((session, slice));
        }
        granted
    }

    /// `n` free devices for session `session`, which lost as many with a
    /// worker (all or none: None when fewer are free).
    pub fn top_up(
        &mut self,
        session: u64,
        n: usize,
        devices: &BTreeMap<u32, Vec<i64>>,
    ) -> Option<Vec<i64>> {
        let slice = self.pick(n, devices)?;
        self.take(session, &slice);
        Some(slice)
    }

    /// Session `session` gives devices `given` back (it shrank); returns
    /// the sessions granted a slice as a result, in order.
    pub fn give_back(
        &mut self,
        session: u64,
        given: &[i64],
        devices: &BTreeMap<u32, Vec<i64>>,
    ) -> Vec<(u64, Vec<i64>)> {
        self.held.retain(|d, s| *s != session || !given.contains(d));
        self.serve(devices)
    }

    /// A worker is gone: its devices are no longer anyone's.
    pub fn forget_devices(&mut self, gone: &[i64]) {
        self.held.retain(|d, _| !gone.contains(d));
    }

    /// The place in line of `session` (1: next), if it waits.
    pub fn position(&self, session: u64) -> Option<usize> {
        self.line
            .iter()
            .position(|(s, _)| *s == session)
            .map(|p| p + 1)
    }

    /// The sessions waiting, in order, with what they ask for.
    pub fn line(&self) -> impl Iterator<Item = (u64, Want)> + '_ {
        self.line.iter().copied()
    }

    /// The devices `session` holds.
    pub fn held_by(&self, session: u64) -> Vec<i64> {
        self.held
            .iter()
            .filter(|(_, s)| **s == session)
            .map(|(d, _)| *d)
            .collect()
    }

    fn take(&mut self, session: u64, slice: &[i64]) {
        for &d in slice {
            self.held.insert(d, session);
        }
    }

    /// `n` free devices on as few workers as possible, or None.
    fn pick(&self, n: usize, devices: &BTreeMap<u32, Vec<i64>>) -> Option<Vec<i64>> {
        let free: Vec<(u32, Vec<i64>)> = devices
            .iter()
            .map(|(w, ds)| {
                (
                    *w,
                    ds.iter()
                        .copied()
                        .filter(|d| !self.held.contains_key(d))
                        .collect::<Vec<_>>(),
                )
            })
            .filter(|(_, ds)| !ds.is_empty())
            .collect();
        if free.iter().map(|(_, ds)| ds.len()).sum::<usize>() < n {
            return None;
        }
        // One worker, the tightest fit.
        if let Some((_, ds)) = free
            .iter()
            .filter(|(_, ds)| ds.len() >= n)
            .min_by_key(|(w, ds)| (ds.len(), *w))
        {
            return Some(ds[..n].to_vec());
        }
        // Else the fullest workers first.
        let mut by_size = free;
        by_size.sort_by_key(|(w, ds)| (std::cmp::Reverse(ds.len()), *w));
        let mut slice: Vec<i64> = by_size.into_iter().flat_map(|(_, ds)| ds).take(n).collect();
        slice.sort_unstable();
        Some(slice)
    }
}

/// A client's lease: renewed by each heartbeat, lapsed after `ttl` of
/// silence.
#[derive(Debug, Clone, Copy)]
pub struct Lease {
    ttl: Duration,
    renewed: Instant,
}

impl Lease {
    pub fn new(ttl: Duration, now: Instant) -> Lease {
        Lease { ttl, renewed: now }
    }

    pub fn renew(&mut self, now: Instant) {
        self.renewed = self.renewed.max(now);
    }

    /// When it lapses, unless renewed before.
    pub fn deadline(&self) -> Instant {
        self.renewed + self.ttl
    }

    pub fn lapsed(&self, now: Instant) -> bool {
        now >= self.deadline()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(workers: &[usize]) -> BTreeMap<u32, Vec<i64>> {
        let mut next = 0;
        workers
            .iter()
            .enumerate()
            .map(|(w, &n)| {
                let ids = (next..next + n as i64).collect();
                next += n as i64;
                (w as u32, ids)
            })
            .collect()
    }

    #[test]
    fn a_slice_spans_as_few_workers_as_possible() {
        let devices = cluster(&[2, 4, 2]);
        let mut s = Slices::default();
        // Two devices: the tightest worker that has them (worker 0).
        assert_eq!(s.ask(1, Want::Count(2), &devices), Ask::Granted(vec![0, 1]));
        // Three: only worker 1 has three free.
        assert_eq!(
            s.ask(2, Want::Count(3), &devices),
            Ask::Granted(vec![2, 3, 4])
        );
        // Three more: worker 2 (2 free) and worker 1 (1 free), fullest first.
        assert_eq!(
            s.ask(3, Want::Count(3), &devices),
            Ask::Granted(vec![5, 6, 7])
        );
        assert_eq!(s.held_by(3), vec![5, 6, 7]);
    }

    #[test]
    fn the_line_is_served_in_order() {
        let devices = cluster(&[4]);
        let mut s = Slices::default();
        assert_eq!(
            s.ask(1, Want::All, &devices),
            Ask::Granted(vec![0, 1, 2, 3])
        );
        assert_eq!(s.ask(2, Want::Count(4), &devices), Ask::Queued(1));
        assert_eq!(s.ask(3, Want::Count(1), &devices), Ask::Queued(2));
        assert_eq!(s.position(3), Some(2));
        // Session 1 closes: 2 gets everything; 3, though it would fit in
        // what 2 leaves (nothing), waits on.
        assert_eq!(s.release(1, &devices), vec![(2, vec![0, 1, 2, 3])]);
        assert_eq!(s.position(3), Some(1));
        assert_eq!(s.release(2, &devices), vec![(3, vec![0])]);
        assert_eq!(s.position(3), None);
    }

    #[test]
    fn a_small_request_does_not_overtake_a_large_one() {
        let devices = cluster(&[4]);
        let mut s = Slices::default();
        assert_eq!(
            s.ask(1, Want::Count(3), &devices),
            Ask::Granted(vec![0, 1, 2])
        );
        assert_eq!(s.ask(2, Want::Count(4), &devices), Ask::Queued(1));
        // One device is free, but session 2 is first in line.
        assert_eq!(s.ask(3, Want::Count(1), &devices), Ask::Queued(2));
        assert_eq!(s.serve(&devices), vec![]);
    }

    #[test]
    fn leaving_the_line_lets_the_next_go() {
        let devices = cluster(&[2]);
        let mut s = Slices::default();
        assert_eq!(s.ask(1, Want::Count(2), &devices), Ask::Granted(vec![0, 1]));
        assert_eq!(s.ask(2, Want::Count(2), &devices), Ask::Queued(1));
        assert_eq!(s.ask(3, Want::Count(1), &devices), Ask::Queued(2));
        // Session 2 gives up waiting (timeout, or its client vanished).
        assert_eq!(s.release(2, &devices), vec![]);
        assert_eq!(s.position(3), Some(1));
        assert_eq!(s.release(1, &devices), vec![(3, vec![0])]);
    }

    #[test]
    fn impossible_requests_are_refused() {
        let devices = cluster(&[2, 2]);
        let mut s = Slices::default();
        assert_eq!(
            s.ask(1, Want::Count(5), &devices),
            Ask::Refused("5 devices asked for, the registered workers offer 4".into())
        );
        assert!(matches!(
            s.ask(2, Want::Count(0), &devices),
            Ask::Refused(_)
        ));
        assert!(matches!(
            s.ask(3, Want::All, &BTreeMap::new()),
            Ask::Refused(m) if m.contains("no worker")
        ));
    }

    #[test]
    fn a_lost_worker_frees_its_devices_from_the_book() {
        let devices = cluster(&[2, 2]);
        let mut s = Slices::default();
        assert_eq!(
            s.ask(1, Want::All, &devices),
            Ask::Granted(vec![0, 1, 2, 3])
        );
        s.forget_devices(&[2, 3]);
        assert_eq!(s.held_by(1), vec![0, 1]);
        let left = cluster(&[2]);
        assert_eq!(s.ask(2, Want::Count(1), &left), Ask::Queued(1));
    }

    #[test]
    fn a_session_that_lost_devices_is_topped_up_from_free_ones() {
        let mut s = Slices::default();
        let mut cluster = cluster(&[2, 2]);
        assert_eq!(s.ask(1, Want::Count(2), &cluster), Ask::Granted(vec![0, 1]));
        s.forget_devices(&[0, 1]);
        cluster.remove(&0);
        assert_eq!(s.top_up(1, 2, &cluster), Some(vec![2, 3]));
        assert_eq!(s.held_by(1), vec![2, 3]);
        // Nothing free: nothing taken.
        assert_eq!(s.top_up(1, 1, &cluster), None);
    }

    #[test]
    fn a_session_that_shrinks_gives_its_devices_to_the_line() {
        let devices = cluster(&[2, 2]);
        let mut s = Slices::default();
        assert_eq!(
            s.ask(1, Want::All, &devices),
            Ask::Granted(vec![0, 1, 2, 3])
        );
        assert_eq!(s.ask(2, Want::Count(2), &devices), Ask::Queued(1));
        // Another session's devices are not its to give.
        assert_eq!(s.give_back(2, &[0, 1], &devices), vec![]);
        assert_eq!(s.give_back(1, &[2, 3], &devices), vec![(2, vec![2, 3])]);
        assert_eq!(s.held_by(1), vec![0, 1]);
    }

    #[test]
    fn a_lease_lapses_after_its_ttl_of_silence() {
        let t0 = Instant::now();
        let ttl = Duration::from_secs(10);
        let mut lease = Lease::new(ttl, t0);
        assert!(!lease.lapsed(t0 + Duration::from_secs(9)));
        lease.renew(t0 + Duration::from_secs(9));
        assert!(!lease.lapsed(t0 + Duration::from_secs(18)));
        assert!(lease.lapsed(t0 + Duration::from_secs(19)));
        // A late-delivered older heartbeat does not move it back.
        lease.renew(t0 + Duration::from_secs(1));
        assert_eq!(lease.deadline(), t0 + Duration::from_secs(19));
    }
}
