//! Executing plans: what a part asks of a worker ([`work`]), the executor
//! that enqueues it on PJRT devices ([`executor`]), the generated transfer
//! kernels ([`kernels`]), the resource manager of one client
//! ([`resources`]) and Chrome traces ([`trace`]).
//!
//! [`run_local`] is the embedded case: one process, one client, every
//! device of the plan local. A worker runs its part of a distributed run
//! with the same [`Executor`] (`crate::worker`).

pub mod executor;
pub mod kernels;
pub mod resources;
pub mod trace;
pub mod work;

pub use executor::{
    download, Completion, Completions, Done, Enqueued, Executor, NoPeers, Peers, PieceKey, Shards,
    StepTiming,
};
pub use work::{Need, Work};

use crate::{cache::Executables, error::Error, host::HostArray};
use pw_core::plan::{Part, Plan};
use std::time::{Duration, Instant};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{0}")]
    Setup(String),
    #[error("compiling {what} for devices {devices:?} failed: {source}")]
    Compile {
        what: String,
        devices: Vec<i64>,
        source: Box<Error>,
    },
    #[error("step {step} on devices {devices:?} failed: {source}")]
    Step {
        step: String,
        devices: Vec<i64>,
        source: Box<Error>,
    },
    #[error("{0}")]
    Runtime(Box<Error>),
}

impl From<Error> for ExecError {
    fn from(e: Error) -> Self {
        ExecError::Runtime(Box::new(e))
    }
}

impl From<pw_core::plan::PlanError> for ExecError {
    fn from(e: pw_core::plan::PlanError) -> Self {
        ExecError::Setup(e.0)
    }
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    /// When the host had enqueued every step.
    pub enqueued: Duration,
    /// When the last output was ready.
    pub outputs_ready: Duration,
    /// When the outputs were on the host.
    pub finished: Duration,
    /// Per step of the plan.
    pub steps: Vec<StepTiming>,
    /// The most bytes of buffers held at once, per device (recorded runs).
    pub peak_bytes: std::collections::BTreeMap<i64, u64>,
}

/// A plan made ready to run in this process: its part (all of it) and the
/// executables it needs.
pub struct Prepared {
    pub part: Part,
    pub work: Work,
    pub executables: Vec<std::sync::Arc<crate::pjrt::LoadedExecutable>>,
}

/// Gets every executable `plan` needs from `cache` (memory, disk, or
/// compiled); `progress` hears of each compilation as it starts.
pub fn prepare(
    plan: &Plan,
    cache: &mut Executables,
    progress: &mut dyn FnMut(&str),
) -> Result<Prepared, ExecError> {
    let part = plan.local_part()?;
    part.check()?;
    let work = Work::of(&part)?;
    let executables = work
        .needs
        .iter()
        .map(|need| cache.get(need, progress))
        .collect::<Result<_, _>>()?;
    Ok(Prepared {
        part,
        work,
        executables,
    })
}

/// Runs a prepared plan on `inputs` (host arrays, in program order), every
/// device local; returns the outputs on the host and the timings (with
/// completion times when `record`).
pub fn run_local(
    executor: &Executor,
    prepared: &Prepared,
    inputs: &[HostArray],
    record: bool,
) -> Result<(Vec<HostArray>, RunReport), ExecError> {
    let part = &prepared.part;
    if inputs.len() != part.inputs.len() {
        return Err(ExecError::Setup(format!(
            "the program takes {} inputs, got {}",
            part.inputs.len(),
            inputs.len()
        )));
    }
    let t0 = Instant::now();
    let mut values = vec![None; part.values.len()];
    for (i, (&id, host)) in part.inputs.iter().zip(inputs).enumerate() {
        values[id] = Some(executor.upload(part, id, host).map_err(|e| match e {
            ExecError::Runtime(source) => ExecError::Step {
                step: format!("input #{i}"),
                devices: part.values[id].devices.clone(),
                source,
            },
            ExecError::Setup(message) => ExecError::Setup(format!("input #{i} {message}")),
            other => other,
        })?);
    }
    let enqueued = executor.enqueue(
        0,
        part,
        &prepared.work,
        &prepared.executables,
        values,
        &NoPeers,
        t0,
        record,
    )?;
    // Block only now: wait for the outputs, then check every step in
    // schedule order, so the first failure is reported as the cause.
    let mut first_failure = None;
    for &id in &part.outputs {
        for buffer in enqueued.values[id].iter().flatten().flatten() {
            if let Err(e) = buffer.wait_ready() {
                first_failure.get_or_insert(e);
            }
        }
    }
    let outputs_ready = t0.elapsed();
    if let Err((i, source)) = enqueued.done.wait(Duration::from_secs(1)) {
        let step = &part.steps[i].step;
        return Err(ExecError::Step {
            step: step.label.clone(),
            devices: step.devices.clone(),
            source: Box::new(source),
        });
    }
    if let Some(source) = first_failure {
        return Err(source.into());
    }
    let mut outputs = Vec::with_capacity(part.outputs.len());
    for &id in &part.outputs {
        let shards = enqueued.values[id]
            .as_ref()
            .ok_or_else(|| ExecError::Setup("an output was released early".into()))?;
        outputs.push(download(part, id, shards)?);
    }
    Ok((
        outputs,
        RunReport {
            enqueued: enqueued.enqueued,
            outputs_ready,
            finished: t0.elapsed(),
            steps: enqueued.timings(true),
            peak_bytes: enqueued.peak_bytes.clone(),
        },
    ))
}
