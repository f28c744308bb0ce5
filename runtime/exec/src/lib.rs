//! Executing plans on one PJRT client: what a part asks of a worker
//! ([`work`]), the executor that enqueues it on PJRT devices
//! ([`executor`]), the generated transfer kernels ([`kernels`]), each
//! executable compiled once ([`cache`]), the devices of one client
//! ([`resources`]), Chrome traces ([`trace`]), and the host side of arrays:
//! [`HostArray`] ([`host`], split into shards and assembled from them by
//! the shard geometry of `pw-core`) and `.npy` files ([`npy`]). A
//! computation that is a Python function runs in a session's
//! [`sidecar`] process instead.
//!
//! [`run_local`] is the embedded case: one process, one client, every
//! device of the plan local. A worker (`pw-worker`) runs its part of a
//! distributed run with the same [`Executor`].
//!
//! This crate may use the binding (`pw-pjrt`) and `pw-core`; it knows no
//! network, no controller and no MLIR.

pub mod cache;
pub mod element;
pub mod error;
pub mod executor;
pub mod host;
pub mod kernels;
pub mod npy;
pub mod resources;
pub mod sidecar;
pub mod trace;
pub mod work;
pub mod zarr;

pub use element::Element;
pub use error::{Error, Result};
pub use executor::{
    download, Completion, Completions, Done, Enqueued, Executor, NoPeers, Peers, PieceKey, Shards,
    StepTiming,
};
pub use host::HostArray;
pub use work::{Need, Work};

use crate::cache::Executables;
use pw_core::plan::{Part, Plan};
use std::time::{Duration, Instant};

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
    pub executables: Vec<cache::Executable>,
}

/// Gets every executable `plan` needs from `cache` (memory, disk, or
/// compiled); `progress` hears of each compilation as it starts.
pub fn prepare(
    plan: &Plan,
    cache: &mut Executables,
    progress: &mut dyn FnMut(&str),
) -> Result<Prepared, Error> {
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
    sidecar: Option<&sidecar::Sidecar>,
    record: bool,
) -> Result<(Vec<HostArray>, RunReport), Error> {
    let part = &prepared.part;
    if inputs.len() != part.inputs.len() {
        return Err(Error::InputCount {
            expected: part.inputs.len(),
            given: inputs.len(),
        });
    }
    let t0 = Instant::now();
    let mut values = vec![None; part.values.len()];
    for (i, (&id, host)) in part.inputs.iter().zip(inputs).enumerate() {
        values[id] = Some(executor.upload(part, id, host).map_err(|e| match e {
            Error::Input {
                given, expected, ..
            } => Error::Input {
                index: i,
                given,
                expected,
            },
            source => Error::Step {
                step: format!("input #{i}"),
                devices: part.values[id].devices.clone(),
                source: Box::new(source),
            },
        })?);
    }
    let enqueued = executor.enqueue(
        0,
        part,
        &prepared.work,
        &prepared.executables,
        values,
        &NoPeers,
        sidecar,
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
        return Err(Error::Step {
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
        let shards = enqueued.values[id].as_ref().ok_or(Error::Inconsistent {
            step: format!("output value {id}"),
            what: "it was released early",
        })?;
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
