//! A program run on the workers (`Controller.Run`, `pw-run --server`):
//! lowered onto the registered topology, then run in rounds. The first
//! round runs the whole plan; after a loss, the next runs only what was
//! lost ([`crate::recovery`]). The outputs are fetched from the rounds that
//! kept them, and every round is released at the end.

use crate::{
    compile,
    error::{Error, Result},
    lowering::{self, Prepared, Program},
    recovery::{self, Kept},
    runs::{self, Bindings, Dispatch, Patience, Stop},
    summary::RunSummary,
    transfer, Controller,
};
use pw_core::plan::Plan;
use pw_exec::HostArray;
use pw_wire::proto;
use std::{
    collections::{BTreeMap, HashMap},
    sync::{atomic::Ordering, Arc},
    time::{Duration, Instant},
};

/// How many times a run is lowered again because a worker left while it
/// was lowered.
const MAX_RELOWERINGS: u32 = 3;

/// A program to run, with its inputs.
pub struct RunRequest {
    pub name: String,
    /// The program: MLIR text or bytecode.
    pub source: Vec<u8>,
    pub inputs: Vec<Arc<HostArray>>,
    /// Record completion times (stats, traces).
    pub record: bool,
    /// None: the controller's default.
    pub timeout: Option<Duration>,
    /// The schedule policy to lower with (None: the lowerer's default).
    pub schedule: Option<String>,
}

/// Runs a program (see the module doc); `progress` hears what happens.
pub async fn run(
    c: &Controller,
    request: RunRequest,
    progress: &(dyn Fn(String) + Send + Sync),
) -> Result<(Vec<HostArray>, RunSummary)> {
    let outcome = run_rounds(c, request, progress).await;
    let counters = &c.inner.counters;
    match &outcome {
        Ok((_, summary)) => {
            counters.runs_ok.fetch_add(1, Ordering::Relaxed);
            if !summary.recoveries.is_empty() {
                counters.runs_recovered.fetch_add(1, Ordering::Relaxed);
            }
        }
        Err(_) => {
            counters.runs_failed.fetch_add(1, Ordering::Relaxed);
        }
    }
    outcome
}

/// A run between its rounds.
struct Rounds<'a> {
    request: &'a RunRequest,
    /// The whole plan on its current devices.
    whole: Plan,
    /// What the next round runs.
    prepared: Prepared,
    /// The program's inputs, by value.
    inputs: HashMap<usize, &'a Arc<HostArray>>,
    /// What the rounds keep on workers.
    kept: Kept,
    /// Each round's run id and workers, released at the end.
    rounds: Vec<(u64, Vec<u32>)>,
    /// A replayed round's step indices in the whole plan.
    original: Option<Vec<usize>>,
    /// What the status page calls the next round.
    label: String,
    summary: RunSummary,
    t0: Instant,
    deadline: Instant,
}

async fn run_rounds(
    c: &Controller,
    request: RunRequest,
    progress: &(dyn Fn(String) + Send + Sync),
) -> Result<(Vec<HostArray>, RunSummary)> {
    let t0 = Instant::now();
    let mut summary = RunSummary::default();
    if c.inner.workers.is_empty() {
        return Err(Error::NoWorkers);
    }
    let program = Program {
        name: &request.name,
        source: &request.source,
        schedule: request.schedule.as_deref(),
    };
    // A worker that leaves while the program is lowered onto the workers
    // registered then has run nothing yet: lower again onto those left.
    let mut attempts = 0;
    let prepared = loop {
        let (topology, addrs) = c.inner.workers.topology(None);
        match lowering::prepare(c, program, topology, &addrs, &mut summary).await {
            Err(Error::WorkerLeft { worker }) if attempts < MAX_RELOWERINGS => {
                tracing::info!(
                    "worker {worker} left while {} was lowered; lowering again",
                    request.name
                );
                attempts += 1;
                summary = RunSummary::default();
            }
            prepared => break prepared?,
        }
    };
    summary.timings.lowered = t0.elapsed();
    check_inputs(&prepared.plan, &request.inputs)?;
    let whole = prepared.plan.clone();
    let inputs = whole.inputs.iter().copied().zip(&request.inputs).collect();
    let mut r = Rounds {
        request: &request,
        whole,
        prepared,
        inputs,
        kept: Kept::default(),
        rounds: Vec::new(),
        original: None,
        label: request.name.clone(),
        summary,
        t0,
        deadline: t0 + request.timeout.unwrap_or(c.inner.config.run_timeout),
    };
    let outcome = loop {
        let stop = match r.next_round(c, progress).await {
            Ok(outputs) => break Ok(outputs),
            Err(stop) if stop.lost.is_empty() => break Err(stop.error),
            Err(stop) => stop,
        };
        if let Err(e) = r.recover(c, stop, progress).await {
            break Err(e);
        }
    };
    let why = match &outcome {
        Ok(_) => "the run finished".to_owned(),
        Err(e) => format!("the run failed: {e}"),
    };
    for (run, workers) in &r.rounds {
        transfer::release(c, *run, workers, &why);
    }
    outcome.map(|outputs| (outputs, r.summary))
}

impl Rounds<'_> {
    /// Runs the next round and, when it ends well, fetches the outputs.
    /// A loss (in the round, or while fetching) is a [`Stop`] with the
    /// workers lost.
    async fn next_round(
        &mut self,
        c: &Controller,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> std::result::Result<Vec<HostArray>, Stop> {
        let run = c.inner.runs.next_id();
        if self.rounds.is_empty() {
            self.summary.run = run;
        }
        self.rounds.push((run, self.prepared.workers.clone()));
        let reports_before = self.summary.parts.len();
        let round = self.round(c, run, progress).await;
        remap_reports(&mut self.summary, reports_before, self.original.as_deref());
        let reports = round?;
        for (w, done) in &reports {
            self.kept.add(run, *w, &done.held);
        }
        if let Some(last) = self.summary.recoveries.last_mut() {
            last.recovered = Some(self.t0.elapsed());
        }
        match self.fetch_outputs(c).await {
            Ok(outputs) => Ok(outputs),
            // A worker lost while its outputs were fetched: they are
            // computed again.
            Err(error) => match recovery::lost_meanwhile(c, &self.rounds, &self.kept).await {
                lost if lost.is_empty() => Err(error.into()),
                lost => Err(Stop {
                    error,
                    lost,
                    noticed: self.t0.elapsed(),
                    reports: BTreeMap::new(),
                }),
            },
        }
    }

    /// One round: the executables, the inputs it uploads (the program's)
    /// and binds (values earlier rounds kept), its parts; waits for them.
    /// Returns every part's report.
    async fn round(
        &mut self,
        c: &Controller,
        run: u64,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> std::result::Result<BTreeMap<u32, proto::PartDone>, Stop> {
        let prepared = &self.prepared;
        let mut events = c.inner.runs.open(run, &prepared.workers);
        let watching =
            c.status()
                .watch_run(run, (&self.label, None), &prepared.plan, &prepared.parts);
        let may_recover = c.inner.config.max_recoveries as usize > self.summary.recoveries.len();
        let patience = Patience {
            deadline: self.deadline,
            settle: may_recover.then_some(self.deadline),
            t0: self.t0,
        };
        let outcome = self
            .send_and_wait(c, run, &mut events, &patience, progress)
            .await;
        c.inner.runs.close(run);
        drop(watching);
        // A worker lost before its part was sent: the whole round is lost
        // with it (what was sent already is released with the run). A
        // request that failed on a worker's link (a put, a part, an
        // executable) may be a loss not noticed yet: wait for the verdict
        // (at most a lease).
        let stop = match outcome {
            Ok(reports) => return Ok(reports),
            Err(stop) if !stop.lost.is_empty() || !may_recover => return Err(stop),
            Err(stop) => stop,
        };
        let lost = match stop.error.worker() {
            Some(_) => {
                let round = [(run, self.prepared.workers.clone())];
                recovery::lost_meanwhile(c, &round, &self.kept).await
            }
            None => self
                .prepared
                .workers
                .iter()
                .copied()
                .filter(|w| !c.inner.workers.is_registered(*w))
                .collect(),
        };
        Err(Stop {
            lost,
            noticed: self.t0.elapsed(),
            ..stop
        })
    }

    async fn send_and_wait(
        &mut self,
        c: &Controller,
        run: u64,
        events: &mut tokio::sync::mpsc::UnboundedReceiver<runs::RunEvent>,
        patience: &Patience,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> std::result::Result<BTreeMap<u32, proto::PartDone>, Stop> {
        let (prepared, summary, t0) = (&self.prepared, &mut self.summary, self.t0);
        let keys = compile::executables(c, &prepared.parts, summary, progress).await?;
        summary.timings.executables_ready = t0.elapsed();
        let uploads: Vec<(usize, Arc<HostArray>)> = prepared
            .plan
            .inputs
            .iter()
            .filter_map(|v| self.inputs.get(v).map(|h| (*v, Arc::clone(*h))))
            .collect();
        let uploaded = transfer::upload(c, run, prepared, &uploads).await?;
        summary.timings.inputs_sent = t0.elapsed();
        let bindings = kept_bindings(prepared, &self.inputs, &self.kept)?;
        let dispatch = Dispatch {
            run,
            prepared,
            keys: &keys,
            record: self.request.record,
            bindings: &bindings,
            inline: uploaded.inline,
            keep: None,
            ends_run: false,
        };
        let sent = runs::dispatch(c, dispatch, summary, t0)?;
        summary.timings.parts_sent = t0.elapsed();
        let before = summary.parts.len();
        let waited = runs::wait_parts(prepared, events, patience, summary).await;
        // A later round's timings, on the worker's first part's clock.
        for report in summary.parts.iter_mut().skip(before) {
            let first = summary
                .part_sent
                .iter()
                .find(|(w, _)| *w == report.worker)
                .map_or(sent, |p| p.1);
            report.shift(sent.saturating_sub(first));
        }
        let reports = waited?;
        summary.timings.parts_done = t0.elapsed();
        for (w, b) in uploaded.bytes {
            summary.controller_bytes.push((w, b, 0));
        }
        Ok(reports)
    }

    /// After a round lost workers: gives up past `max_recoveries`, or
    /// moves the lost devices and prepares the replay as the next round.
    async fn recover(
        &mut self,
        c: &Controller,
        stop: Stop,
        progress: &(dyn Fn(String) + Send + Sync),
    ) -> Result<()> {
        if self.summary.recoveries.len() >= c.inner.config.max_recoveries as usize {
            return Err(stop.error);
        }
        let run = self.rounds.last().map_or(0, |r| r.0);
        for (w, done) in &stop.reports {
            self.kept.add(run, *w, &done.held);
        }
        for w in &stop.lost {
            self.kept.lose(*w);
        }
        let cause = stop.error.to_string();
        progress(format!("{cause}; recovering"));
        let recovered = recovery::recover(
            c,
            &mut self.whole,
            &self.kept,
            &stop,
            self.t0,
            &mut self.summary,
        )
        .await;
        let (next, replayed) = recovered.map_err(|e| Error::CannotRecover {
            cause: Box::new(stop.error),
            reason: Box::new(e),
        })?;
        if let Some(r) = self.summary.recoveries.last() {
            self.label = format!(
                "{} (recovering from the loss of {}: replaying {} of {} steps)",
                self.request.name,
                r.lost.join(", "),
                r.steps_replayed,
                r.steps
            );
        }
        self.prepared = next;
        self.original = Some(replayed);
        Ok(())
    }

    /// Fetches the program's outputs from the rounds that kept them.
    async fn fetch_outputs(&mut self, c: &Controller) -> Result<Vec<HostArray>> {
        let addrs: HashMap<i64, pw_core::plan::DeviceAddr> =
            c.inner.workers.addresses().into_iter().collect();
        let whole = &self.whole;
        let summary = &mut self.summary;
        let mut outputs = Vec::with_capacity(whole.outputs.len());
        let mut fetched: BTreeMap<u32, u64> = BTreeMap::new();
        for &id in &whole.outputs {
            let value = &whole.values[id];
            let what = format!("output {id}");
            let owner = self
                .kept
                .owner(id, value.devices.len())
                .ok_or_else(|| Error::Unheld { what: what.clone() })?;
            let (host, bytes) = transfer::fetch_value(c, (owner, id), value, &addrs)
                .await
                .map_err(|e| Error::Output {
                    what,
                    source: Box::new(e),
                })?;
            for (w, b) in bytes {
                *fetched.entry(w).or_default() += b;
            }
            outputs.push(host);
        }
        summary.timings.outputs_fetched = self.t0.elapsed();
        for (w, b) in fetched {
            summary.controller_bytes.push((w, 0, b));
        }
        // One line per worker: what it got and what it gave.
        let mut merged: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        for (w, put, got) in summary.controller_bytes.drain(..) {
            let e = merged.entry(w).or_default();
            e.0 += put;
            e.1 += got;
        }
        summary.controller_bytes = merged.into_iter().map(|(w, (a, b))| (w, a, b)).collect();
        Ok(outputs)
    }
}

/// The values a round's parts take from earlier rounds (neither program
/// inputs nor computed in the round), bound from the round that kept them.
fn kept_bindings(
    prepared: &Prepared,
    inputs: &HashMap<usize, &Arc<HostArray>>,
    kept: &Kept,
) -> Result<Bindings> {
    let mut bindings = Bindings::new();
    for (&w, (part, _)) in &prepared.parts {
        for &v in &part.inputs {
            if inputs.contains_key(&v) {
                continue;
            }
            let owner =
                kept.owner(v, part.values[v].devices.len())
                    .ok_or_else(|| Error::Unheld {
                        what: format!("value {v}, neither an input nor computed in the round,"),
                    })?;
            bindings.entry(w).or_default().0.push(proto::Binding {
                value: v as u32,
                owner,
                array: v as u64,
                take: false,
            });
        }
    }
    Ok(bindings)
}

/// Checks the inputs against the plan before anything is sent.
fn check_inputs(plan: &Plan, inputs: &[Arc<HostArray>]) -> Result<()> {
    if inputs.len() != plan.inputs.len() {
        return Err(Error::InputCount {
            expected: plan.inputs.len(),
            given: inputs.len(),
        });
    }
    for (i, (&id, host)) in plan.inputs.iter().zip(inputs).enumerate() {
        let want = &plan.values[id];
        if host.dtype() != want.dtype || pw_exec::host::dims(host.shape()) != want.shape {
            return Err(Error::Input {
                index: i,
                given: format!("{}{:?}", host.dtype(), host.shape()),
                expected: want.describe(),
            });
        }
    }
    Ok(())
}

/// Puts the reports of a replayed round (from `from` on) in terms of the
/// whole plan: step positions of the replay become the plan's indices.
fn remap_reports(summary: &mut RunSummary, from: usize, original: Option<&[usize]>) {
    let Some(original) = original else { return };
    for report in summary.parts.iter_mut().skip(from) {
        for (index, _) in &mut report.steps {
            if let Some(&o) = original.get(*index) {
                *index = o;
            }
        }
    }
}
