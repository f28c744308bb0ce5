//! From a program to what each worker runs: the program is lowered onto a
//! topology by the [`Lowerer`] pw-server gives (it links MLIR; the
//! controller does not), then the plan is checked against the registered
//! devices and cut into each worker's part (`cut`).

use crate::{
    error::{Error, Result},
    summary::{RunSummary, StepLine},
    Controller,
};
use pw_core::{
    diagnostic::Diagnostics,
    plan::{DeviceAddr, Part, Plan},
    Topology,
};
use pw_exec::Work;
use std::collections::{BTreeMap, HashMap};

/// Lowers programs onto a topology (pw-server gives the MLIR pipeline).
pub trait Lowerer: Send + Sync + 'static {
    /// The plan of program `source` (MLIR text or bytecode, named `name`
    /// in messages) on
    /// `topology`, scheduled by policy `schedule` (None: the default), and
    /// a line saying how it was lowered; or the program's diagnostics.
    fn lower(
        &self,
        name: &str,
        source: &[u8],
        topology: &Topology,
        schedule: Option<&str>,
    ) -> std::result::Result<(Plan, String), Diagnostics>;
}

/// A program lowered onto the workers: its plan, each worker's part, and
/// where every device of the plan is.
pub(crate) struct Prepared {
    pub plan: Plan,
    pub parts: BTreeMap<u32, (Part, Work)>,
    pub workers: Vec<u32>,
    pub addrs: HashMap<i64, DeviceAddr>,
}

impl Prepared {
    /// Where `device` of its placement is (worker and local device).
    pub fn addr(&self, device: i64) -> Result<DeviceAddr> {
        self.addrs.get(&device).copied().ok_or(Error::Unplaced)
    }

    /// Whether one worker runs all of it, as one part (which that worker
    /// ends by itself: `ExecuteRequest.ends_run`).
    pub fn is_one_part(&self) -> bool {
        self.parts.len() == 1 && self.workers.len() == 1
    }

    /// The workers holding shards of `value` of the plan.
    pub fn workers_of(&self, value: usize) -> Vec<u32> {
        let mut w: Vec<u32> = self.plan.values[value]
            .devices
            .iter()
            .filter_map(|d| self.addrs.get(d))
            .map(|a| a.worker)
            .collect();
        w.sort_unstable();
        w.dedup();
        w
    }
}

/// A program to lower: its name (for messages), source (MLIR text or
/// bytecode) and schedule policy (None: the lowerer's default).
#[derive(Clone, Copy)]
pub(crate) struct Program<'a> {
    pub name: &'a str,
    pub source: &'a [u8],
    pub schedule: Option<&'a str>,
}

/// Lowers `program` onto `topology`; its placement and steps go into
/// `summary`.
pub(crate) async fn lower(
    c: &Controller,
    program: Program<'_>,
    topology: Topology,
    summary: &mut RunSummary,
) -> Result<Plan> {
    let lowerer = c.inner.lowerer.clone();
    let (name, source) = (program.name.to_owned(), program.source.to_owned());
    let schedule = program.schedule.map(str::to_owned);
    let (plan, lowered) = tokio::task::spawn_blocking(move || {
        lowerer.lower(&name, &source, &topology, schedule.as_deref())
    })
    .await
    .map_err(|e| Error::LoweringCrashed {
        message: e.to_string(),
    })?
    .map_err(|diagnostics| Error::Lowering { diagnostics })?;
    summary.lowered = lowered;
    plan.check().map_err(|source| Error::Plan { source })?;
    summary.placement = plan.meshes.clone();
    summary.steps = step_lines(&plan);
    Ok(plan)
}

/// The plan's steps as the summary lists them.
pub(crate) fn step_lines(plan: &Plan) -> Vec<StepLine> {
    plan.steps
        .iter()
        .map(|s| StepLine {
            label: s.label.clone(),
            kind: s.kind.name().to_owned(),
            devices: s.devices.clone(),
        })
        .collect()
}

/// Lowers `program` onto `topology` and cuts it into each worker's part.
pub(crate) async fn prepare(
    c: &Controller,
    program: Program<'_>,
    topology: Topology,
    addrs: &BTreeMap<i64, DeviceAddr>,
    summary: &mut RunSummary,
) -> Result<Prepared> {
    let plan = lower(c, program, topology, summary).await?;
    cut(c, plan, addrs, summary)
}

/// Refuses a plan that needs devices no registered worker offers, and cuts
/// it into each worker's part; the workers and devices it uses join those
/// `summary` lists.
pub(crate) fn cut(
    c: &Controller,
    plan: Plan,
    addrs: &BTreeMap<i64, DeviceAddr>,
    summary: &mut RunSummary,
) -> Result<Prepared> {
    // Admission: every device of the plan is a registered worker's.
    for mesh in &plan.meshes {
        if let Some(&device) = mesh.devices.iter().find(|d| !addrs.contains_key(d)) {
            return Err(Error::NotOffered {
                mesh: mesh.name.clone(),
                device,
                offered: addrs.keys().copied().collect(),
            });
        }
    }
    let devices = plan.devices();
    let mut workers: Vec<u32> = devices
        .iter()
        .filter_map(|d| addrs.get(d))
        .map(|a| a.worker)
        .collect();
    workers.sort_unstable();
    workers.dedup();
    let kept = pw_core::recovery::checkpoints(
        &plan,
        |d| addrs.get(&d).map(|a| a.worker),
        c.inner.config.checkpoint_budget,
    );
    let mut parts: BTreeMap<u32, (Part, Work)> = BTreeMap::new();
    for &w in &workers {
        let part = plan
            .part(w, addrs, &kept)
            .map_err(|source| Error::Plan { source })?;
        part.check().map_err(|source| Error::Plan { source })?;
        let work = Work::of(&part).map_err(|source| Error::Plan { source })?;
        parts.insert(w, (part, work));
    }
    for (d, a) in addrs.iter().filter(|(d, _)| devices.contains(d)) {
        if !summary.devices.iter().any(|(g, _)| g == d) {
            summary.devices.push((*d, *a));
        }
    }
    for &w in &workers {
        if !summary.workers.iter().any(|l| l.id == w) {
            summary.workers.push(c.inner.workers.line(w)?);
        }
    }
    let addrs = parts
        .values()
        .next()
        .map(|(p, _)| p.devices.iter().copied().collect())
        .unwrap_or_default();
    Ok(Prepared {
        plan,
        parts,
        workers,
        addrs,
    })
}
