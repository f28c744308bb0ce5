//! The executable form of a lowered pw program: plain serde data.
//!
//! The lowering layer reads a physical program once into a [`Plan`]: the
//! computations (their StableHLO text, as JAX lowered them), every value
//! (dtype, shape, devices and shard layout), and the steps in schedule
//! order. The runtime executes plans and never reads IR.
//!
//! Device ids in a plan are *global*: the ids of the topology the program
//! was lowered onto. Where a device physically is, (worker, local PJRT
//! device), is a [`DeviceAddr`]; a [`Part`] is the share of a plan one
//! worker executes, with the addresses of every device it names.
//!
//! Plans and parts come from the network too, so [`Plan::check`] and
//! [`Part::check`] verify every index and size before anything is indexed.

use crate::{
    geometry::{Layout, Region},
    DType, Piece,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Index of a value in [`Plan::values`].
pub type ValueId = usize;

/// One computation, as PJRT compiles it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Computation {
    pub name: String,
    pub module: Module,
    pub num_partitions: usize,
}

/// What a computation runs: an MLIR module as PJRT's `mlir` program
/// format takes it, or a Python function for the worker's sidecar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Module {
    /// Text: what JAX lowered, in generic form, without pw's annotations.
    Text(String),
    /// Bytecode: a StableHLO portable artifact (what JAX's IFRT proxy
    /// client sends).
    Bytecode(Vec<u8>),
    /// A Python function, run by the sidecars of the workers that hold
    /// its devices: a [`crate::python::Function`]'s encoding (which says
    /// what it is in its first bytes).
    Python(Vec<u8>),
}

impl Module {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Module::Text(t) => t.as_bytes(),
            Module::Bytecode(b) | Module::Python(b) => b,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }
}

/// One logical array of the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueInfo {
    pub dtype: DType,
    pub shape: Vec<i64>,
    pub mesh: String,
    /// The device of each mesh position.
    pub devices: Vec<i64>,
    /// Which box of the array each position holds.
    pub layout: Layout,
    /// The sharding, printed (for messages).
    pub sharding: String,
}

impl ValueInfo {
    /// The box mesh position `position` holds.
    pub fn region(&self, position: usize) -> Region {
        Region {
            offsets: self.layout.offsets[position].clone(),
            sizes: self.layout.shard_shape.clone(),
        }
    }

    /// The mesh position of `device`, if it holds a shard.
    pub fn position_of(&self, device: i64) -> Option<usize> {
        self.devices.iter().position(|&d| d == device)
    }

    /// Bytes of one shard.
    pub fn shard_bytes(&self) -> u64 {
        self.layout.shard_elements().max(0) as u64 * self.dtype.size_in_bytes() as u64
    }

    /// Bytes on devices: one shard on each of its devices.
    pub fn device_bytes(&self) -> u64 {
        self.shard_bytes().saturating_mul(self.devices.len() as u64)
    }

    /// `float32[8, 16]`, for messages.
    pub fn describe(&self) -> String {
        format!("{}{:?}", self.dtype, self.shape)
    }
}

/// What one step does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepKind {
    /// Runs a computation on the devices of its mesh.
    Call {
        computation: usize,
        args: Vec<ValueId>,
        results: Vec<ValueId>,
    },
    /// `pw.copy`, `pw.scatter` or `pw.gather`: writes whole shards of
    /// `output` (a partial value) from pieces of `input`'s shards.
    Copy {
        input: ValueId,
        output: ValueId,
        pieces: Vec<Piece>,
    },
    /// `pw.assemble`: the shards written by `parts` form `output`.
    Assemble {
        parts: Vec<ValueId>,
        output: ValueId,
    },
}

/// One node of the schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub kind: StepKind,
    /// What to call the step in messages and traces (`#3 pw.call @f on @m`).
    pub label: String,
    /// The devices it occupies.
    pub devices: Vec<i64>,
    /// Values no later step or output reads: freed after this step.
    pub frees: Vec<ValueId>,
}

impl StepKind {
    /// `call`, `copy` or `assemble`.
    pub fn name(&self) -> &'static str {
        match self {
            StepKind::Call { .. } => "call",
            StepKind::Copy { .. } => "copy",
            StepKind::Assemble { .. } => "assemble",
        }
    }
}

impl Step {
    /// The values the step reads.
    pub fn reads(&self) -> Vec<ValueId> {
        match &self.kind {
            StepKind::Call { args, .. } => args.clone(),
            StepKind::Copy { input, .. } => vec![*input],
            StepKind::Assemble { parts, .. } => parts.clone(),
        }
    }

    /// The values the step writes.
    pub fn writes(&self) -> Vec<ValueId> {
        match &self.kind {
            StepKind::Call { results, .. } => results.clone(),
            StepKind::Copy { output, .. } | StepKind::Assemble { output, .. } => vec![*output],
        }
    }
}

/// Where a mesh was placed, for reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeshPlacement {
    pub name: String,
    /// The axes, printed (`["x"=2]`).
    pub axes: String,
    pub devices: Vec<i64>,
}

/// A lowered program, ready to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub computations: Vec<Computation>,
    pub values: Vec<ValueInfo>,
    pub inputs: Vec<ValueId>,
    pub outputs: Vec<ValueId>,
    pub steps: Vec<Step>,
    pub meshes: Vec<MeshPlacement>,
}

/// Why a plan or part cannot be executed as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

fn bad(message: impl Into<String>) -> PlanError {
    PlanError(message.into())
}

/// Where a device is: the worker that drives it and its PJRT device id
/// there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DeviceAddr {
    pub worker: u32,
    pub local: u32,
}

impl Plan {
    /// Fills each step's `frees` with the values whose last reader it is.
    pub fn compute_frees(&mut self) {
        let frees = last_readers(self.steps.iter().enumerate(), &self.outputs);
        for (i, step) in self.steps.iter_mut().enumerate() {
            step.frees = frees.get(&i).cloned().unwrap_or_default();
        }
    }

    /// Every device the plan names, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut all: BTreeSet<i64> = BTreeSet::new();
        for v in &self.values {
            all.extend(&v.devices);
        }
        for s in &self.steps {
            all.extend(&s.devices);
        }
        all.into_iter().collect()
    }

    /// Checks every index and size (see the module doc).
    pub fn check(&self) -> Result<(), PlanError> {
        check_values(&self.values)?;
        let n = self.values.len();
        for &v in self.inputs.iter().chain(&self.outputs) {
            if v >= n {
                return Err(bad(format!("input or output names value {v} of {n}")));
            }
        }
        for step in &self.steps {
            check_step(step, &self.values, &self.computations)?;
        }
        Ok(())
    }

    /// The share of the plan that worker `worker` executes: the steps that
    /// touch one of its devices, in schedule order, with frees recomputed
    /// for that share; of the values in `kept` (checkpoints, see
    /// [`crate::recovery::checkpoints`]), those it holds are never freed.
    /// `addrs` maps every device of the plan to its address.
    pub fn part(
        &self,
        worker: u32,
        addrs: &BTreeMap<i64, DeviceAddr>,
        kept: &BTreeSet<ValueId>,
    ) -> Result<Part, PlanError> {
        let mine = |d: &i64| addrs.get(d).is_some_and(|a| a.worker == worker);
        let named = self.devices();
        let mut devices = Vec::with_capacity(named.len());
        for d in named {
            let addr = addrs
                .get(&d)
                .ok_or_else(|| bad(format!("device {d} has no address")))?;
            devices.push((d, *addr));
        }
        let mut used = BTreeSet::new();
        let mut steps = Vec::new();
        for (index, step) in self.steps.iter().enumerate() {
            let touches = match &step.kind {
                StepKind::Copy { pieces, .. } => pieces
                    .iter()
                    .any(|p| mine(&p.src_device) || mine(&p.dst_device)),
                _ => step.devices.iter().any(mine),
            };
            if touches {
                if let StepKind::Call { computation, .. } = &step.kind {
                    used.insert(*computation);
                }
                steps.push(PartStep {
                    index,
                    step: step.clone(),
                });
            }
        }
        let holds = |v: &ValueId| self.values[*v].devices.iter().any(mine);
        let mut part = Part {
            worker,
            computations: self
                .computations
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if used.contains(&i) {
                        c.clone()
                    } else {
                        Computation {
                            name: c.name.clone(),
                            module: Module::Text(String::new()),
                            num_partitions: c.num_partitions,
                        }
                    }
                })
                .collect(),
            values: self.values.clone(),
            inputs: self.inputs.iter().copied().filter(holds).collect(),
            outputs: self.outputs.iter().copied().filter(holds).collect(),
            steps,
            devices,
            kept: kept.iter().copied().filter(holds).collect(),
        };
        part.compute_frees();
        Ok(part)
    }

    /// The whole plan as one worker's part, every device local with the
    /// same id: the embedded, in-process case.
    pub fn local_part(&self) -> Result<Part, PlanError> {
        let addrs = self
            .devices()
            .into_iter()
            .map(|d| {
                let local = u32::try_from(d)
                    .map_err(|_| bad(format!("device id {d} is not a local device id")))?;
                Ok((d, DeviceAddr { worker: 0, local }))
            })
            .collect::<Result<_, PlanError>>()?;
        self.part(0, &addrs, &BTreeSet::new())
    }
}

/// One step of a part, with its index in the whole plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartStep {
    pub index: usize,
    pub step: Step,
}

/// The share of a plan one worker executes. Value ids, step indices and
/// device ids are the plan's; computations the worker does not run have
/// empty texts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    pub worker: u32,
    pub computations: Vec<Computation>,
    pub values: Vec<ValueInfo>,
    /// Inputs this worker holds shards of.
    pub inputs: Vec<ValueId>,
    /// Outputs this worker holds shards of.
    pub outputs: Vec<ValueId>,
    pub steps: Vec<PartStep>,
    /// The address of every device the plan names.
    pub devices: Vec<(i64, DeviceAddr)>,
    /// Checkpoints this worker holds shards of: never freed, kept to the
    /// run's end so that a loss elsewhere replays less.
    pub kept: Vec<ValueId>,
}

impl Part {
    fn compute_frees(&mut self) {
        let never: Vec<ValueId> = self.outputs.iter().chain(&self.kept).copied().collect();
        let frees = last_readers(
            self.steps.iter().enumerate().map(|(i, s)| (i, &s.step)),
            &never,
        );
        for (i, s) in self.steps.iter_mut().enumerate() {
            s.step.frees = frees.get(&i).cloned().unwrap_or_default();
        }
    }

    /// The address of device `id`.
    pub fn addr(&self, id: i64) -> Option<DeviceAddr> {
        self.devices.iter().find(|(d, _)| *d == id).map(|(_, a)| *a)
    }

    /// Whether device `id` is this worker's.
    pub fn is_mine(&self, id: i64) -> bool {
        self.addr(id).is_some_and(|a| a.worker == self.worker)
    }

    /// Checks every index and size, and that every call runs on this
    /// worker's devices only (see the module doc).
    pub fn check(&self) -> Result<(), PlanError> {
        check_values(&self.values)?;
        let n = self.values.len();
        for &v in self.inputs.iter().chain(&self.outputs).chain(&self.kept) {
            if v >= n {
                return Err(bad(format!(
                    "an input, output or kept value names value {v} of {n}"
                )));
            }
        }
        let mut last = None;
        for s in &self.steps {
            if last.is_some_and(|l| s.index <= l) {
                return Err(bad("the part's steps are not in schedule order"));
            }
            last = Some(s.index);
            check_step(&s.step, &self.values, &self.computations)?;
            let devices: Vec<i64> = match &s.step.kind {
                StepKind::Copy { pieces, .. } => pieces
                    .iter()
                    .flat_map(|p| [p.src_device, p.dst_device])
                    .collect(),
                _ => s.step.devices.clone(),
            };
            for d in &devices {
                if self.addr(*d).is_none() {
                    return Err(bad(format!("{}: device {d} has no address", s.step.label)));
                }
            }
            if let StepKind::Call { computation, .. } = &s.step.kind {
                if !s.step.devices.iter().all(|d| self.is_mine(*d)) {
                    return Err(bad(format!(
                        "{}: a call must run on one worker's devices, but {:?} span workers: a \
                         worker's PJRT client holds only its own devices, and the plugin's \
                         collectives cannot reach another process (docs/cluster.md, \
                         \"Computations that span hosts\")",
                        s.step.label, s.step.devices
                    )));
                }
                if self.computations[*computation].module.is_empty() {
                    return Err(bad(format!("{}: the computation is missing", s.step.label)));
                }
            }
        }
        let mut seen = BTreeSet::new();
        for (d, a) in &self.devices {
            if !seen.insert(*a) {
                return Err(bad(format!("device {d}: address {a:?} is given twice")));
            }
        }
        Ok(())
    }
}

/// For each step (by position), the values whose last reader it is, and
/// the values it writes that nothing reads (freed at once); outputs are
/// never freed.
fn last_readers<'s>(
    steps: impl Iterator<Item = (usize, &'s Step)>,
    outputs: &[ValueId],
) -> HashMap<usize, Vec<ValueId>> {
    let mut last: HashMap<ValueId, usize> = HashMap::new();
    for (i, step) in steps {
        for v in step.writes() {
            last.entry(v).or_insert(i);
        }
        for v in step.reads() {
            last.insert(v, i);
        }
    }
    for output in outputs {
        last.remove(output);
    }
    let mut frees: HashMap<usize, Vec<ValueId>> = HashMap::new();
    for (value, step) in last {
        frees.entry(step).or_default().push(value);
    }
    for list in frees.values_mut() {
        list.sort_unstable();
    }
    frees
}

fn check_values(values: &[ValueInfo]) -> Result<(), PlanError> {
    for (id, v) in values.iter().enumerate() {
        let rank = v.shape.len();
        let what = || format!("value {id} ({})", v.describe());
        if v.shape.iter().any(|&d| d < 0) {
            return Err(bad(format!("{} has a negative dimension", what())));
        }
        if v.layout.shard_shape.len() != rank || v.layout.offsets.len() != v.devices.len() {
            return Err(bad(format!("{} has a malformed layout", what())));
        }
        if v.devices.is_empty() {
            return Err(bad(format!("{} has no device", what())));
        }
        // The whole array is assembled on the host for outputs: its size too.
        // An array with a dimension of 0 holds no bytes, however large the
        // others (the dialect's verifier counts it so too).
        let bytes = |dims: &[i64]| {
            if dims.contains(&0) {
                return Some(0);
            }
            dims.iter()
                .try_fold(v.dtype.size_in_bytes() as i64, |acc, &d| acc.checked_mul(d))
        };
        bytes(&v.shape).ok_or_else(|| bad(format!("{}: the array's size overflows", what())))?;
        bytes(&v.layout.shard_shape)
            .ok_or_else(|| bad(format!("{}: the shard size overflows", what())))?;
        for position in 0..v.devices.len() {
            if v.layout.offsets[position].len() != rank || !v.region(position).fits(&v.shape) {
                return Err(bad(format!(
                    "{}: the shard of position {position} is outside the array",
                    what()
                )));
            }
        }
    }
    Ok(())
}

fn check_step(
    step: &Step,
    values: &[ValueInfo],
    computations: &[Computation],
) -> Result<(), PlanError> {
    let n = values.len();
    let label = &step.label;
    for v in step
        .reads()
        .into_iter()
        .chain(step.writes())
        .chain(step.frees.clone())
    {
        if v >= n {
            return Err(bad(format!("{label}: names value {v} of {n}")));
        }
    }
    match &step.kind {
        StepKind::Call {
            computation,
            args,
            results,
        } => {
            let Some(c) = computations.get(*computation) else {
                return Err(bad(format!("{label}: names computation {computation}")));
            };
            // An SPMD program takes its values shard for partition; a
            // Python function takes them whole, from devices of the call
            // in any order.
            let python = matches!(c.module, Module::Python(_));
            for v in args.iter().chain(results) {
                let devices = &values[*v].devices;
                let fits = if python {
                    devices.iter().all(|d| step.devices.contains(d))
                } else {
                    *devices == step.devices
                };
                if !fits {
                    return Err(bad(format!(
                        "{label}: value {v} is not on the call's devices"
                    )));
                }
            }
        }
        StepKind::Copy {
            input,
            output,
            pieces,
        } => {
            let (src, dst) = (&values[*input], &values[*output]);
            if src.dtype != dst.dtype || src.shape.len() != dst.shape.len() {
                return Err(bad(format!("{label}: copies between unlike arrays")));
            }
            for p in pieces {
                let rank = src.shape.len();
                if p.src_offsets.len() != rank
                    || p.dst_offsets.len() != rank
                    || p.sizes.len() != rank
                {
                    return Err(bad(format!("{label}: a piece has the wrong rank")));
                }
                let inside = |v: &ValueInfo, device: i64, offsets: &[i64]| {
                    v.position_of(device).is_some()
                        && Region {
                            offsets: offsets.to_vec(),
                            sizes: p.sizes.clone(),
                        }
                        .fits(&v.layout.shard_shape)
                };
                if !inside(src, p.src_device, &p.src_offsets)
                    || !inside(dst, p.dst_device, &p.dst_offsets)
                {
                    return Err(bad(format!(
                        "{label}: piece {}->{} is outside its shards",
                        p.src_device, p.dst_device
                    )));
                }
            }
        }
        StepKind::Assemble { parts, output } => {
            for p in parts {
                if values[*p]
                    .devices
                    .iter()
                    .any(|d| !values[*output].devices.contains(d))
                {
                    return Err(bad(format!("{label}: a part is on other devices")));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{MeshShape, Sharding};

    fn value(devices: Vec<i64>, split: bool) -> ValueInfo {
        let mesh = MeshShape::new(vec![("x".into(), devices.len() as i64)]);
        let sharding = Sharding {
            dims: vec![if split { vec!["x".into()] } else { vec![] }],
        };
        ValueInfo {
            dtype: DType::F32,
            shape: vec![4],
            mesh: "m".into(),
            layout: Layout::new(&[4], &sharding, &mesh).unwrap(),
            devices,
            sharding: sharding.to_string(),
        }
    }

    /// Two calls on two workers joined by a copy: each worker's part has the
    /// steps it takes part in, and frees recomputed for its share.
    #[test]
    fn parts_split_by_worker() {
        let piece = Piece {
            src_device: 0,
            src_offsets: vec![0],
            dst_device: 1,
            dst_offsets: vec![0],
            sizes: vec![4],
            link: crate::Link::CrossIsland,
        };
        let mut plan = Plan {
            computations: vec![Computation {
                name: "f".into(),
                module: Module::Text("module {}".into()),
                num_partitions: 1,
            }],
            values: vec![
                value(vec![0], false),
                value(vec![0], false),
                value(vec![1], false),
                value(vec![1], false),
            ],
            inputs: vec![0],
            outputs: vec![3],
            steps: vec![
                Step {
                    kind: StepKind::Call {
                        computation: 0,
                        args: vec![0],
                        results: vec![1],
                    },
                    label: "#0".into(),
                    devices: vec![0],
                    frees: vec![],
                },
                Step {
                    kind: StepKind::Copy {
                        input: 1,
                        output: 2,
                        pieces: vec![piece],
                    },
                    label: "#1".into(),
                    devices: vec![0, 1],
                    frees: vec![],
                },
                Step {
                    kind: StepKind::Call {
                        computation: 0,
                        args: vec![2],
                        results: vec![3],
                    },
                    label: "#2".into(),
                    devices: vec![1],
                    frees: vec![],
                },
            ],
            meshes: vec![],
        };
        plan.compute_frees();
        plan.check().unwrap();
        let addrs: BTreeMap<i64, DeviceAddr> = [
            (
                0,
                DeviceAddr {
                    worker: 7,
                    local: 0,
                },
            ),
            (
                1,
                DeviceAddr {
                    worker: 8,
                    local: 0,
                },
            ),
        ]
        .into_iter()
        .collect();
        let a = plan.part(7, &addrs, &BTreeSet::new()).unwrap();
        let b = plan.part(8, &addrs, &BTreeSet::new()).unwrap();
        a.check().unwrap();
        b.check().unwrap();
        assert_eq!(a.steps.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(b.steps.iter().map(|s| s.index).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(a.inputs, [0]);
        assert!(b.inputs.is_empty());
        assert_eq!(b.outputs, [3]);
        // Worker 7 frees the copied value after the copy, and the copy's
        // output, which none of its steps reads; worker 8 frees what it
        // received after its call.
        assert_eq!(a.steps[1].step.frees, [1, 2]);
        assert_eq!(b.steps[1].step.frees, [2]);
        // Each worker gets the texts of the computations it runs.
        assert!(!b.computations[0].module.is_empty());
        let mut unused = plan.clone();
        unused.steps.truncate(2);
        unused.outputs = vec![2];
        assert!(unused
            .part(8, &addrs, &BTreeSet::new())
            .unwrap()
            .computations[0]
            .module
            .is_empty());
        // A call across workers is refused.
        let mut bad_part = a.clone();
        bad_part.steps[0].step.devices = vec![0, 1];
        assert!(bad_part.check().is_err());
    }

    #[test]
    fn check_refuses_bad_indices() {
        let mut plan = Plan {
            computations: vec![],
            values: vec![value(vec![0, 1], true)],
            inputs: vec![0],
            outputs: vec![5],
            steps: vec![],
            meshes: vec![],
        };
        assert!(plan.check().is_err());
        plan.outputs = vec![0];
        plan.check().unwrap();
        plan.values[0].layout.offsets[1] = vec![3];
        assert!(plan.check().is_err());
        // A plan from the network whose array is too big to assemble on
        // the host, though its shards are small.
        let mut huge = value(vec![0, 1], true);
        huge.shape = vec![i64::MAX / 2];
        plan.values = vec![huge];
        assert!(plan.check().unwrap_err().0.contains("size overflows"));
    }
}
