//! A run that loses a worker recovers: its lost devices move onto healthy
//! ones and only the lost part of the DAG runs again (see
//! [`pw_core::recovery`] for what is replayed, and `docs/cluster.md`).
//!
//! A run goes in rounds. The first runs the whole plan. When a worker is
//! lost, the survivors are told ([`proto::PeerLost`]): what they wait for
//! from it fails, they settle, and each reports what it still holds (a
//! value is kept while a reader of it has not completed). The controller
//! then picks, for each lost worker, a healthy worker of its platform with
//! enough devices that the plan does not use (a spare, or free devices of
//! one in use), waiting a bounded time for one to register; moves the plan
//! onto them; and runs the replay as the next round, whose inputs are the
//! kept values (read in place) and the program inputs (which the
//! controller keeps). Every round's buffers are released when the run
//! ends.

use crate::{
    error::{Error, Result},
    lowering::{self, Prepared},
    runs::Stop,
    summary::{RecoveryLine, RunSummary},
    Controller,
};
use pw_core::plan::{Plan, ValueId};
use pw_wire::proto;
use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    time::{Duration, Instant},
};

/// What the rounds of a run keep on workers: per value, per round (owner)
/// and worker, the shard positions it holds.
#[derive(Debug, Default)]
pub struct Kept {
    by_value: HashMap<ValueId, Vec<(u64, u32, Vec<u32>)>>,
    /// Workers lost during the run: what they held is gone.
    lost: BTreeSet<u32>,
}

impl Kept {
    /// Worker `worker` holds `held` of round `owner`.
    pub fn add(&mut self, owner: u64, worker: u32, held: &[proto::Held]) {
        for h in held {
            self.by_value.entry(h.value as usize).or_default().push((
                owner,
                worker,
                h.positions.clone(),
            ));
        }
    }

    /// Worker `worker` was lost.
    pub fn lose(&mut self, worker: u32) {
        self.lost.insert(worker);
    }

    /// Whether worker `worker` was lost (and recovered from) already.
    pub fn is_lost(&self, worker: u32) -> bool {
        self.lost.contains(&worker)
    }

    /// The latest round holding every one of value `v`'s `positions`
    /// shards on workers still alive.
    pub fn owner(&self, v: ValueId, positions: usize) -> Option<u64> {
        let entries = self.by_value.get(&v)?;
        let mut owners: Vec<u64> = entries.iter().map(|e| e.0).collect();
        owners.sort_unstable();
        owners.dedup();
        owners.into_iter().rev().find(|&owner| {
            let covered: BTreeSet<u32> = entries
                .iter()
                .filter(|e| e.0 == owner && !self.lost.contains(&e.1))
                .flat_map(|e| e.2.iter().copied())
                .collect();
            (0..positions as u32).all(|p| covered.contains(&p))
        })
    }

    /// How many values are kept whole, and their bytes.
    pub fn whole(&self, plan: &Plan) -> (usize, u64) {
        let mut count = 0;
        let mut bytes = 0;
        for &v in self.by_value.keys() {
            if let Some(info) = plan.values.get(v) {
                if self.owner(v, info.devices.len()).is_some() {
                    count += 1;
                    bytes += info.shard_bytes() * info.devices.len() as u64;
                }
            }
        }
        (count, bytes)
    }
}

/// A worker that can take devices: its id, platform, devices (global ids).
pub struct Candidate {
    pub worker: u32,
    pub platform: String,
    pub devices: Vec<i64>,
}

/// A lost worker's devices that no healthy worker can take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no healthy worker has {} free {platform} devices for the devices {devices:?} of worker {worker}",
    devices.len()
)]
pub struct Unplaceable {
    pub worker: u32,
    pub platform: String,
    pub devices: Vec<i64>,
}

/// Where to move the lost devices, grouped by the worker that had them:
/// each group onto one healthy worker of the same platform, on devices the
/// plan does not use; spare workers (none of whose devices the plan uses)
/// first, then the one with the most free devices. Err: the group that
/// does not fit.
pub fn place(
    lost: &BTreeMap<u32, (String, Vec<i64>)>,
    candidates: &[Candidate],
    used: &BTreeSet<i64>,
) -> std::result::Result<BTreeMap<i64, i64>, Unplaceable> {
    let mut taken: BTreeSet<i64> = used.clone();
    let mut map = BTreeMap::new();
    for (worker, (platform, devices)) in lost {
        let free = |c: &Candidate, taken: &BTreeSet<i64>| -> Vec<i64> {
            c.devices
                .iter()
                .copied()
                .filter(|d| !taken.contains(d))
                .collect()
        };
        let best = candidates
            .iter()
            .filter(|c| &c.platform == platform && free(c, &taken).len() >= devices.len())
            .max_by_key(|c| {
                let spare = c.devices.iter().all(|d| !used.contains(d));
                (spare, free(c, &taken).len(), std::cmp::Reverse(c.worker))
            })
            .ok_or_else(|| Unplaceable {
                worker: *worker,
                platform: platform.clone(),
                devices: devices.clone(),
            })?;
        for (from, to) in devices.iter().zip(free(best, &taken)) {
            map.insert(*from, to);
            taken.insert(to);
        }
    }
    Ok(map)
}

/// After a round lost workers: moves their devices onto healthy ones
/// (waiting, bounded, for a worker to register if none can take them) and
/// prepares the replay of what was lost. Returns it and the whole plan's
/// index of each replayed step.
pub(crate) async fn recover(
    c: &Controller,
    whole: &mut Plan,
    kept: &Kept,
    stop: &Stop,
    t0: Instant,
    summary: &mut RunSummary,
) -> Result<(Prepared, Vec<usize>)> {
    let detected = t0.elapsed();
    let lost_names: Vec<String> = summary
        .workers
        .iter()
        .filter(|w| stop.lost.contains(&w.id))
        .map(|w| format!("worker {} ({}, pid {})", w.id, w.address, w.pid))
        .collect();
    let mut line = RecoveryLine {
        lost: lost_names,
        steps: whole.steps.len(),
        noticed: stop.noticed,
        detected,
        ..RecoveryLine::default()
    };
    (line.values_kept, line.bytes_kept) = kept.whole(whole);
    let waiting_since = Instant::now();
    let placed = wait_for_capacity(c, whole, summary, waiting_since).await;
    line.waited = waiting_since.elapsed();
    let (map, addrs) = match placed {
        Ok(found) => found,
        Err(placement) => {
            summary.recoveries.push(line);
            return Err(Error::NoCapacity {
                placement,
                waited: waiting_since.elapsed().as_secs_f64(),
                lost: lost_values(whole, kept),
            });
        }
    };
    pw_core::recovery::remap_devices(whole, &map);
    let available = |v: usize| {
        whole.inputs.contains(&v) || kept.owner(v, whole.values[v].devices.len()).is_some()
    };
    let replay = whole.replay(available);
    tracing::warn!(
        "run {}: {} lost; devices {:?} moved; replaying {} of {} steps",
        summary.run,
        line.lost.join(", "),
        map,
        replay.original.len(),
        whole.steps.len()
    );
    line.moved = map.iter().map(|(a, b)| (*a, *b)).collect();
    line.steps_replayed = replay.original.len();
    summary.recoveries.push(line);
    let prepared = lowering::cut(c, replay.plan, &addrs, summary)?;
    Ok((prepared, replay.original))
}

/// Where the devices of `whole` that no registered worker has now go,
/// waiting up to the capacity wait for workers to take them; the device
/// map and the devices' addresses, or why they do not fit.
async fn wait_for_capacity(
    c: &Controller,
    whole: &Plan,
    summary: &RunSummary,
    since: Instant,
) -> std::result::Result<(BTreeMap<i64, i64>, BTreeMap<i64, pw_core::plan::DeviceAddr>), Unplaceable>
{
    let by = since + c.inner.config.capacity_wait;
    loop {
        let attempt = {
            let r = c.inner.workers.lock();
            let addrs = r.addresses();
            let mut lost: BTreeMap<u32, (String, Vec<i64>)> = BTreeMap::new();
            for d in whole.devices() {
                if addrs.contains_key(&d) {
                    continue;
                }
                let w = summary
                    .devices
                    .iter()
                    .find(|(g, _)| *g == d)
                    .map(|(_, a)| a.worker);
                let platform = summary
                    .workers
                    .iter()
                    .find(|l| Some(l.id) == w)
                    .map(|l| l.platform.clone())
                    .unwrap_or_default();
                lost.entry(w.unwrap_or(u32::MAX))
                    .or_insert_with(|| (platform, Vec::new()))
                    .1
                    .push(d);
            }
            let candidates: Vec<Candidate> = r
                .workers
                .values()
                .map(|w| Candidate {
                    worker: w.id,
                    platform: w.platform.clone(),
                    devices: w.devices.iter().map(|d| d.0).collect(),
                })
                .collect();
            let used: BTreeSet<i64> = whole.devices().into_iter().collect();
            place(&lost, &candidates, &used).map(|m| (m, addrs))
        };
        match attempt {
            Ok(found) => return Ok(found),
            Err(e) if Instant::now() >= by => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The workers of `rounds` that are gone and not recovered from yet,
/// waiting (at most a lease and a heartbeat) for the registry to notice
/// one: a fetch can fail just before the worker's loss is known.
pub(crate) async fn lost_meanwhile(
    c: &Controller,
    rounds: &[(u64, Vec<u32>)],
    kept: &Kept,
) -> Vec<u32> {
    let by = Instant::now() + c.inner.config.lease + c.inner.config.heartbeat;
    loop {
        let mut lost: Vec<u32> = rounds
            .iter()
            .flat_map(|(_, ws)| ws.iter().copied())
            .filter(|w| !c.inner.workers.is_registered(*w) && !kept.is_lost(*w))
            .collect();
        lost.sort_unstable();
        lost.dedup();
        if !lost.is_empty() || Instant::now() >= by {
            return lost;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The values the plan still needs and no live worker keeps whole.
fn lost_values(whole: &Plan, kept: &Kept) -> String {
    let gone: Vec<String> = whole
        .outputs
        .iter()
        .filter(|v| kept.owner(**v, whole.values[**v].devices.len()).is_none())
        .map(|v| format!("output value {v} ({})", whole.values[*v].describe()))
        .collect();
    match gone.len() {
        0 => "no output".into(),
        n if n > 4 => format!("{} and {} more outputs", gone[..4].join(", "), n - 4),
        _ => gone.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(worker: u32, devices: &[i64]) -> Candidate {
        Candidate {
            worker,
            platform: "cpu".into(),
            devices: devices.to_vec(),
        }
    }

    #[test]
    fn lost_devices_go_to_a_spare_first_then_to_free_devices() {
        let lost = BTreeMap::from([(1, ("cpu".to_string(), vec![2, 3]))]);
        let used = BTreeSet::from([0, 1, 4]);
        // Worker 2 has a free device (5), worker 3 is a spare.
        let c = [
            candidate(0, &[0, 1]),
            candidate(2, &[4, 5]),
            candidate(3, &[6, 7]),
        ];
        assert_eq!(
            place(&lost, &c, &used),
            Ok(BTreeMap::from([(2, 6), (3, 7)]))
        );
        // Without the spare, no worker has two free devices.
        assert!(place(&lost, &c[..2], &used).is_err());
        // A worker of another platform does not count.
        let mut other = candidate(3, &[6, 7]);
        other.platform = "cuda".into();
        assert!(place(&lost, &[other], &used).is_err());
    }

    #[test]
    fn a_value_is_kept_when_live_workers_hold_all_its_shards() {
        let mut k = Kept::default();
        let held = |v: u32, p: &[u32]| proto::Held {
            value: v,
            positions: p.to_vec(),
        };
        k.add(10, 0, &[held(5, &[0]), held(6, &[0, 1])]);
        k.add(10, 1, &[held(5, &[1])]);
        assert_eq!(k.owner(5, 2), Some(10));
        assert_eq!(k.owner(6, 2), Some(10));
        assert_eq!(k.owner(6, 3), None);
        k.lose(1);
        assert_eq!(k.owner(5, 2), None);
        // A later round that recomputed it whole wins.
        k.add(11, 2, &[held(5, &[0, 1])]);
        assert_eq!(k.owner(5, 2), Some(11));
    }
}
