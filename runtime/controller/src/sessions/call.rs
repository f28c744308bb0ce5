//! Calling a session's executable: its arguments are settled under the
//! session's lock before anything moves (`Settled`); arguments laid out
//! otherwise than the executable takes them are laid out anew device to
//! device (`Sessions::relayout`); then one run is launched
//! (`Sessions::launch`): uploads, every worker's part, and a task that
//! marks the outputs ready (or failed) when the run ends. A call returns
//! once its parts are sent.

use super::{
    arrays::{ArrayState, SessionArray},
    executables::{Build, Executable},
    lineage::{KeptHost, Lineage, Origin},
    Session, Sessions,
};
use crate::{
    error::{Error, Result, DATA_LOSS},
    runs::{self, Bindings, Dispatch, Patience},
    summary::RunSummary,
    transfer,
};
use pw_core::{
    plan::{DeviceAddr, ValueId, ValueInfo},
    plans, Link,
};
use pw_exec::HostArray;
use pw_wire::proto;
use std::{
    collections::{BTreeMap, BTreeSet, HashMap, HashSet},
    sync::{atomic::Ordering, Arc},
    time::Instant,
};
use tokio::sync::watch;

type State = Arc<watch::Sender<ArrayState>>;

/// One run of a session executable: the session arrays its inputs bind
/// (value, array, taken), the host arrays it uploads, and the arrays its
/// outputs become (value, array, state).
pub(crate) struct Launch {
    pub exe: Arc<Executable>,
    pub bound: Vec<(ValueId, u64, bool)>,
    pub uploads: Vec<(ValueId, Arc<HostArray>)>,
    pub outputs: Vec<(ValueId, u64, State)>,
}

/// A call on its way: the arrays its outputs became, and its run.
pub struct Called {
    pub outputs: Vec<u64>,
    pub run: u64,
}

/// An argument that is a session array laid out otherwise than the
/// executable takes it.
struct Relayout {
    value: ValueId,
    array: u64,
    source: SessionArray,
    /// Donated to the call: the source goes once it is laid out anew.
    donated: bool,
}

/// A call's arguments, settled (see the module doc).
struct Settled {
    launch: Launch,
    relayouts: Vec<Relayout>,
    /// Arrays the client released with the call, and their workers.
    released: Vec<(u64, Vec<u32>)>,
}

/// What settling arguments builds up.
#[derive(Default)]
struct Arguments {
    bound: Vec<(ValueId, u64, bool)>,
    relayouts: Vec<Relayout>,
    uploads: Vec<(ValueId, Arc<HostArray>)>,
    donated: Vec<u64>,
    /// The outputs' lineage (None once an upload does not fit the budget,
    /// and when running a lineage again).
    origins: Option<Vec<Origin>>,
}

impl Sessions<'_> {
    /// Runs an executable of a session (see the module doc); returns once
    /// every worker has its part, with the output arrays.
    pub async fn call(&self, begin: proto::CallBegin, hosts: Vec<HostArray>) -> Result<Called> {
        let hosts = hosts.into_iter().map(Arc::new).collect();
        self.call_as(begin, hosts, None).await
    }

    /// [`Sessions::call`], or the call of `restoring` run again: then its
    /// outputs take the place of the lost arrays it made, and the others
    /// are new arrays (that the caller deletes when done).
    pub(crate) async fn call_as(
        &self,
        begin: proto::CallBegin,
        hosts: Vec<Arc<HostArray>>,
        restoring: Option<&Arc<Lineage>>,
    ) -> Result<Called> {
        let id = begin.session;
        self.active(id, "a call")?;
        let t0 = Instant::now();
        let deadline = t0 + self.c.inner.config.run_timeout;
        // Lost arguments are computed again first, and the executable
        // lowered again when its devices are gone.
        for a in &begin.arguments {
            if let Some(proto::call_argument::Argument::Array(r)) = &a.argument {
                if r.session == id {
                    self.restore(id, r.array).await?;
                }
            }
        }
        let exe = self.current(id, begin.executable).await?;
        let Settled {
            mut launch,
            relayouts,
            released,
        } = self.settle(&begin, exe, hosts, restoring)?;
        self.release(id, released);
        for r in relayouts {
            let want = &launch.exe.prepared.plan.values[r.value];
            match self.relayout(id, &r, want, (t0, deadline)).await {
                Ok(temporary) => launch.bound.push((r.value, temporary, true)),
                Err(e) => {
                    fail(&launch.outputs, &e.to_string());
                    return Err(e);
                }
            }
            if r.donated {
                self.release(id, vec![(r.array, r.source.workers())]);
            }
        }
        let outputs = launch.outputs.iter().map(|(_, a, _)| *a).collect();
        let run = self.launch(id, launch, (t0, deadline)).await?;
        Ok(Called { outputs, run })
    }

    /// Settles a call's arguments under the session's lock: checks them,
    /// takes donated arrays, records the outputs' lineage, and makes the
    /// output arrays (pending).
    fn settle(
        &self,
        begin: &proto::CallBegin,
        exe: Arc<Executable>,
        hosts: Vec<Arc<HostArray>>,
        restoring: Option<&Arc<Lineage>>,
    ) -> Result<Settled> {
        let id = begin.session;
        let limit = self.c.inner.config.lineage_budget;
        let mut guard = self.lock();
        let kept = guard.kept.clone();
        let session = guard.get(id)?;
        let released = begin
            .release
            .iter()
            .filter_map(|a| session.arrays.remove(a).map(|x| (*a, x.workers())))
            .collect();
        let plan = &exe.prepared.plan;
        if begin.arguments.len() != plan.inputs.len() {
            return Err(Error::ArgumentCount {
                name: exe.name.clone(),
                expected: plan.inputs.len(),
                given: begin.arguments.len(),
            });
        }
        let mut args = Arguments {
            origins: restoring
                .is_none()
                .then(|| Vec::with_capacity(plan.inputs.len())),
            ..Arguments::default()
        };
        let taken = donated(&exe.donate, &begin.arguments);
        let mut hosts = hosts.into_iter();
        for (i, (a, &value)) in begin.arguments.iter().zip(&plan.inputs).enumerate() {
            match &a.argument {
                Some(proto::call_argument::Argument::Array(r)) => {
                    let take = taken.contains(&r.array);
                    args.array((session, id), (i, value), r, &exe, take)?;
                }
                Some(proto::call_argument::Argument::Host(t)) => {
                    let host = hosts.next().ok_or(Error::Argument {
                        index: i,
                        what: "no bytes came",
                    })?;
                    args.host((i, value), t, host, &exe)?;
                    args.keep_host(&kept, limit);
                }
                None => {
                    return Err(Error::Argument {
                        index: i,
                        what: "it is empty",
                    })
                }
            }
        }
        if restoring.is_none() {
            within_limits(
                id,
                session,
                &exe,
                &args.donated,
                &self.c.inner.config.limits,
            )?;
        }
        for a in &args.donated {
            session.arrays.remove(a);
        }
        let handles = output_handles(id, session, &exe, &begin.outputs, restoring)?;
        let log = self.c.call_log().map(|log| (log, id));
        let lineage = match (restoring, args.origins.take()) {
            (Some(l), _) => Some(l.clone()),
            (None, Some(arguments)) => {
                Lineage::of(begin.executable, arguments, handles.clone(), log)
            }
            (None, None) => None,
        };
        let outputs = make_outputs(session, &exe, lineage, handles);
        session.counters.calls += 1;
        Ok(Settled {
            launch: Launch {
                exe,
                bound: args.bound,
                uploads: args.uploads,
                outputs,
            },
            relayouts: args.relayouts,
            released,
        })
    }

    /// Lays the array of `r` out as `want` into a new array of session
    /// `id` (which the call then takes), device to device; the executable
    /// that does it is built once per source and target layout.
    async fn relayout(
        &self,
        id: u64,
        r: &Relayout,
        want: &ValueInfo,
        (t0, deadline): (Instant, Instant),
    ) -> Result<u64> {
        let from = r.source.info();
        let key = format!(
            "{} {:?} {:?} -> {:?} {:?}",
            from.describe(),
            from.devices,
            from.layout,
            want.devices,
            want.layout
        );
        let known = self.lock().get(id)?.relayouts.get(&key).cloned();
        let exe = match known {
            Some(exe) => exe,
            None => {
                let addrs = self.c.inner.workers.addresses();
                let plan = plans::relayout(from.clone(), want.clone(), |a, b| link(&addrs, a, b))
                    .map_err(|source| Error::Relayout { source })?;
                let slice = self.lock().get(id)?.devices.clone();
                let build = Build::Plan(plan);
                let name = format!("relayout of array {}", r.array);
                let (exe, _) = self
                    .build(id, name, build, slice, BTreeSet::new(), &|_| {})
                    .await?;
                let exe = Arc::new(exe);
                let mut s = self.lock();
                s.get(id)?.relayouts.insert(key, exe.clone());
                exe
            }
        };
        let temporary = self.lock().get(id)?.mint();
        let state = Arc::new(watch::Sender::new(ArrayState::Pending));
        let launch = Launch {
            exe,
            bound: vec![(0, r.array, false)],
            uploads: Vec::new(),
            outputs: vec![(1, temporary, state)],
        };
        self.launch(id, launch, (t0, deadline)).await?;
        Ok(temporary)
    }

    /// Launches one run of session `id` (see the module doc); returns its
    /// id once every worker has its part.
    pub(crate) async fn launch(
        &self,
        id: u64,
        launch: Launch,
        (t0, deadline): (Instant, Instant),
    ) -> Result<u64> {
        self.update(id, |s| s.calls_running += 1);
        let prepared = &launch.exe.prepared;
        let run = self.c.inner.runs.next_id();
        let mut events = self.c.inner.runs.open(run, &prepared.workers);
        let status = self.c.status();
        let watching = status.watch_run(
            run,
            (&launch.exe.name, Some(id)),
            &prepared.plan,
            &prepared.parts,
        );
        let traced = self.traced();
        let mut summary = RunSummary::default();
        let started = self.start(id, run, &launch, traced, &mut summary, t0).await;
        let to_workers = match started {
            Ok(bytes) => bytes,
            Err(e) => {
                self.c.inner.runs.close(run);
                let why = format!("the call failed: {e}");
                transfer::release(self.c, run, &prepared.workers, &why);
                fail(&launch.outputs, &e.to_string());
                self.update(id, Session::call_done);
                return Err(e);
            }
        };
        self.update(id, |s| s.counters.bytes_to_workers += to_workers);
        // The run finishes on its own; its outputs say how it went.
        let c = self.c.clone();
        tokio::spawn(async move {
            let patience = Patience {
                deadline,
                settle: None,
                t0,
            };
            let prepared = &launch.exe.prepared;
            let waited = runs::wait_parts(prepared, &mut events, &patience, &mut summary).await;
            // A call that lost a worker lost its outputs: they are computed
            // again on use.
            let outcome = waited
                .map(|_| ())
                .map_err(|stop| match stop.lost.is_empty() {
                    true => stop.error.to_string(),
                    false => format!(
                        "{DATA_LOSS}: the call making it lost a worker: {}",
                        stop.error
                    ),
                });
            c.inner.runs.close(run);
            drop(watching);
            c.sessions()
                .finish(id, run, &launch, outcome, (t0, &mut summary))
                .await;
        });
        Ok(run)
    }

    /// Uploads a run's host arrays and sends its parts; the bytes uploaded.
    async fn start(
        &self,
        id: u64,
        run: u64,
        launch: &Launch,
        record: bool,
        summary: &mut RunSummary,
        t0: Instant,
    ) -> Result<u64> {
        let prepared = &launch.exe.prepared;
        let uploaded = transfer::upload(self.c, run, prepared, &launch.uploads).await?;
        let bindings = bindings(id, launch);
        let dispatch = Dispatch {
            run,
            prepared,
            keys: &launch.exe.keys,
            record,
            bindings: &bindings,
            inline: uploaded.inline,
            keep: Some((id, &launch.exe.kept)),
            ends_run: prepared.is_one_part(),
        };
        runs::dispatch(self.c, dispatch, summary, t0)?;
        Ok(uploaded.bytes.values().sum())
    }

    /// A session run ended (`outcome`): its outputs are ready or failed,
    /// its buffers released, its timeline traced.
    async fn finish(
        &self,
        id: u64,
        run: u64,
        launch: &Launch,
        outcome: std::result::Result<(), String>,
        (t0, summary): (Instant, &mut RunSummary),
    ) {
        let why = match &outcome {
            Ok(_) => "the call finished".to_owned(),
            Err(e) => format!("the call failed: {e}"),
        };
        let prepared = &launch.exe.prepared;
        // Traced before the outputs are told: the trace is whole by the
        // time a client that waited for them closes its session.
        if self.traced() {
            let sent = summary.part_sent.iter().map(|(_, t)| *t).max();
            self.trace_completed(id, &launch.exe.name, t0 + sent.unwrap_or_default());
            self.trace_call(id, t0, &prepared.plan, summary);
        }
        // The outputs first: whoever waits for them is on the critical path;
        // the release only frees the run's buffers.
        let state = match &outcome {
            Ok(()) => ArrayState::Ready,
            Err(e) => ArrayState::Failed(e.clone()),
        };
        for (_, _, s) in &launch.outputs {
            // A worker lost meanwhile has already failed it.
            s.send_if_modified(|now| {
                let pending = *now == ArrayState::Pending;
                if pending {
                    *now = state.clone();
                }
                pending
            });
        }
        // A run of one part that succeeded was ended by its worker.
        if outcome.is_err() || !prepared.is_one_part() {
            transfer::release(self.c, run, &prepared.workers, &why);
        }
        let counters = &self.c.inner.counters;
        let counter = match outcome {
            Ok(_) => &counters.runs_ok,
            Err(_) => &counters.runs_failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let sent = summary
            .part_sent
            .iter()
            .map(|(_, t)| *t)
            .min()
            .unwrap_or_default();
        let took = t0.elapsed();
        let ran = took.saturating_sub(sent).as_nanos() as u64;
        let metrics = self.c.metrics();
        self.update(id, |s| {
            s.counters.run_ns += ran;
            s.call_done();
            metrics.call(id, &s.name, took.as_secs_f64());
        });
    }
}

impl Arguments {
    /// Argument `i` (for input `value`) of a call of session `id` is
    /// array `r`; `take`: the call takes it over.
    fn array(
        &mut self,
        (session, id): (&Session, u64),
        (i, value): (usize, ValueId),
        r: &proto::ArrayRef,
        exe: &Executable,
        take: bool,
    ) -> Result<()> {
        if r.session != id {
            return Err(Error::ForeignArray {
                index: i,
                array: r.array,
                owner: r.session,
                session: id,
            });
        }
        let array = session.arrays.get(&r.array).ok_or(Error::NoArray {
            index: Some(i),
            array: r.array,
            session: id,
        })?;
        if let Some(why) = array.failure() {
            return Err(Error::Unusable {
                index: Some(i),
                array: r.array,
                why,
            });
        }
        let (have, want) = (array.info(), &exe.prepared.plan.values[value]);
        if have.dtype != want.dtype || have.shape != want.shape {
            return Err(Error::ArgumentType {
                index: i,
                given: have.describe(),
                name: exe.name.clone(),
                expected: want.describe(),
            });
        }
        if take {
            self.donated.push(r.array);
        }
        if let Some(o) = &mut self.origins {
            o.push(Origin::Array {
                array: r.array,
                made_by: array.lineage.clone(),
            });
        }
        if have.devices == want.devices && have.layout == want.layout {
            self.bound.push((value, r.array, take));
        } else {
            self.relayouts.push(Relayout {
                value,
                array: r.array,
                source: array.clone(),
                donated: take,
            });
        }
        Ok(())
    }

    /// Argument `i` (for input `value`) is `host`, of type `t`.
    fn host(
        &mut self,
        (i, value): (usize, ValueId),
        t: &proto::ArrayType,
        host: Arc<HostArray>,
        exe: &Executable,
    ) -> Result<()> {
        let want = &exe.prepared.plan.values[value];
        let shape: Vec<i64> = t.dims.iter().map(|&d| d as i64).collect();
        if host.dtype() != want.dtype || shape != want.shape {
            return Err(Error::ArgumentType {
                index: i,
                given: format!("{}{:?}", host.dtype(), host.shape()),
                name: exe.name.clone(),
                expected: want.describe(),
            });
        }
        self.uploads.push((value, host));
        Ok(())
    }

    /// Keeps the last upload for lineage, within `limit` bytes of the
    /// shared `budget`; past it the outputs get no lineage.
    fn keep_host(&mut self, budget: &Arc<std::sync::atomic::AtomicU64>, limit: u64) {
        let (Some(o), Some((_, host))) = (&mut self.origins, self.uploads.last()) else {
            return;
        };
        match KeptHost::keep(host, budget, limit) {
            Some(k) => o.push(Origin::Host(k)),
            None => self.origins = None,
        }
    }
}

/// The arrays a call takes: those it passes as an input the executable
/// donates, and passes once.
pub(super) fn donated(donate: &BTreeSet<usize>, arguments: &[proto::CallArgument]) -> HashSet<u64> {
    let mut uses: HashMap<u64, usize> = HashMap::new();
    for a in arguments {
        if let Some(proto::call_argument::Argument::Array(r)) = &a.argument {
            *uses.entry(r.array).or_default() += 1;
        }
    }
    let passed = arguments
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match &a.argument {
            Some(proto::call_argument::Argument::Array(r)) if donate.contains(&i) => Some(r.array),
            _ => None,
        });
    passed.filter(|a| uses[a] == 1).collect()
}

/// The arrays a call's outputs become: those the client chose (each at
/// least [`super::stream::CLIENT_ARRAYS`], distinct, not in use), else
/// fresh ones. Run again (`restoring`), an output takes the place of the
/// array it made if that is still lost.
fn output_handles(
    id: u64,
    session: &mut Session,
    exe: &Executable,
    chosen: &[u64],
    restoring: Option<&Arc<Lineage>>,
) -> Result<Vec<u64>> {
    let n = exe.prepared.plan.outputs.len();
    if let Some(l) = restoring {
        return Ok((0..n)
            .map(|k| {
                l.outputs
                    .get(k)
                    .copied()
                    .filter(|h| session.arrays.get(h).is_some_and(SessionArray::lost))
                    .unwrap_or_else(|| session.mint())
            })
            .collect());
    }
    if chosen.is_empty() {
        return Ok((0..n).map(|_| session.mint()).collect());
    }
    let bad = |why: String| Error::OutputHandles {
        name: exe.name.clone(),
        session: id,
        why,
    };
    if chosen.len() != n {
        return Err(bad(format!("{} named for its {n} outputs", chosen.len())));
    }
    for (k, &h) in chosen.iter().enumerate() {
        if h < super::stream::CLIENT_ARRAYS {
            return Err(bad(format!(
                "{h} is below {}, where the server names arrays",
                super::stream::CLIENT_ARRAYS
            )));
        }
        if session.arrays.contains_key(&h) || chosen[..k].contains(&h) {
            return Err(bad(format!("array {h} is in use")));
        }
    }
    Ok(chosen.to_vec())
}

/// The arrays a call's outputs become (`handles`), pending until its run
/// ends.
fn make_outputs(
    session: &mut Session,
    exe: &Arc<Executable>,
    lineage: Option<Arc<Lineage>>,
    handles: Vec<u64>,
) -> Vec<(ValueId, u64, State)> {
    let plan = &exe.prepared.plan;
    let mut outputs = Vec::with_capacity(plan.outputs.len());
    for ((k, &value), handle) in plan.outputs.iter().enumerate().zip(handles) {
        session.refused.remove(&handle);
        let state = Arc::new(watch::Sender::new(ArrayState::Pending));
        session.arrays.insert(
            handle,
            SessionArray {
                exe: exe.clone(),
                value,
                state: state.clone(),
                lineage: lineage.clone().map(|l| (l, k)),
            },
        );
        outputs.push((value, handle, state));
    }
    outputs
}

/// Refuses a call whose outputs would take session `id` over the arrays or
/// the device bytes it may hold (`donated` arrays go with the call).
fn within_limits(
    id: u64,
    session: &Session,
    exe: &Executable,
    donated: &[u64],
    limits: &crate::Limits,
) -> Result<()> {
    let plan = &exe.prepared.plan;
    let made = plan.outputs.iter().map(|&v| &plan.values[v]);
    room_for(id, session, (made, &exe.name), donated, limits)
}

/// Refuses new arrays (`new`, made for `what`) that would take session
/// `id` over the arrays or the device bytes it may hold (`gone` arrays go
/// at the same time).
pub(crate) fn room_for<'a>(
    id: u64,
    session: &Session,
    (new, what): (impl ExactSizeIterator<Item = &'a ValueInfo>, &str),
    gone: &[u64],
    limits: &crate::Limits,
) -> Result<()> {
    let count = new.len();
    let arrays = (session.arrays.len() + count).saturating_sub(gone.len());
    if arrays > limits.session_arrays {
        return Err(Error::OverLimit {
            what: format!("session {id}'s arrays"),
            asked: arrays as u64,
            limit: limits.session_arrays as u64,
            flag: "--session-arrays",
        });
    }
    if limits.session_device_bytes > 0 {
        let held: u64 = session
            .arrays
            .iter()
            .filter(|(a, _)| !gone.contains(a))
            .map(|(_, a)| a.info().device_bytes())
            .sum();
        let made: u64 = new.map(ValueInfo::device_bytes).sum();
        if held + made > limits.session_device_bytes {
            return Err(Error::OverLimit {
                what: format!(
                    "session {id}'s arrays on devices (bytes: {held} held, {made} more for {what})"
                ),
                asked: held + made,
                limit: limits.session_device_bytes,
                flag: "--session-device-mb",
            });
        }
    }
    Ok(())
}

/// Which worker takes which session array, and keeps which output.
fn bindings(id: u64, launch: &Launch) -> Bindings {
    let binding = |value: ValueId, array: u64, take: bool| proto::Binding {
        value: value as u32,
        owner: id,
        array,
        take,
    };
    let mut bindings = Bindings::new();
    for (&w, (part, _)) in &launch.exe.prepared.parts {
        let entry = bindings.entry(w).or_default();
        for &(value, array, take) in &launch.bound {
            if part.inputs.contains(&value) {
                entry.0.push(binding(value, array, take));
            }
        }
        for (value, array, _) in &launch.outputs {
            if part.outputs.contains(value) {
                entry.1.push(binding(*value, *array, false));
            }
        }
    }
    bindings
}

/// Marks every output of a call that did not start as failed.
fn fail(outputs: &[(ValueId, u64, State)], why: &str) {
    for (_, _, state) in outputs {
        state.send_replace(ArrayState::Failed(why.to_owned()));
    }
}

/// The link between devices `a` and `b` of the registered workers.
pub(super) fn link(addrs: &BTreeMap<i64, DeviceAddr>, a: i64, b: i64) -> Link {
    match (addrs.get(&a), addrs.get(&b)) {
        _ if a == b => Link::SameDevice,
        (Some(x), Some(y)) if x.worker == y.worker => Link::IntraIsland,
        _ => Link::CrossIsland,
    }
}
