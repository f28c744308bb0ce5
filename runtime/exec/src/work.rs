//! What a part asks of one worker, worked out once from the plan: the
//! executables it needs and, per step, which pieces are cut, copied, sent,
//! received and placed.
//!
//! [`Work::of`] is deterministic: the controller computes it to know which
//! executables to compile and ship; the worker computes the same thing from
//! the same part and finds them loaded, in the same order.

use super::kernels;
use pw_core::plan::{Part, PlanError, StepKind, ValueInfo};
use std::{collections::HashMap, sync::Arc};

/// One executable a part needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// What it is, for messages (`@stage0`, `a transfer kernel`).
    pub what: String,
    /// The StableHLO module (text or bytecode, as PJRT's `mlir` format
    /// takes it).
    pub module: Arc<[u8]>,
    /// The worker-local PJRT ids of its devices (partition order).
    pub local_devices: Vec<i32>,
    /// The plan's ids of the same devices.
    pub devices: Vec<i64>,
    /// Compiled SPMD (a computation of the program) or for one device (a
    /// transfer kernel).
    pub spmd: bool,
}

/// Where a piece of a destination shard comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A shard on this worker: the source position, and the slice kernel
    /// that cuts the piece out (None: the piece is the whole shard).
    Local {
        position: usize,
        slice: Option<usize>,
    },
    /// Another worker sends it: piece `piece` of the step, from `worker`.
    Remote { piece: usize, worker: u32 },
}

/// The pieces that make one destination shard on this worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The destination position and device.
    pub position: usize,
    pub device: i64,
    /// Each piece, with its index in the step and its source.
    pub pieces: Vec<(usize, Source)>,
    /// The kernel placing the pieces into the shard (None: one piece is the
    /// whole shard).
    pub place: Option<usize>,
}

/// A piece this worker cuts from its shard and sends to another worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Send {
    pub piece: usize,
    pub position: usize,
    pub slice: Option<usize>,
    pub worker: u32,
}

/// One step's share of work on this worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepWork {
    Call {
        need: usize,
    },
    Copy {
        targets: Vec<Target>,
        sends: Vec<Send>,
    },
    Assemble,
}

/// Everything a part asks of its worker.
#[derive(Debug, Clone, Default)]
pub struct Work {
    pub needs: Vec<Need>,
    /// Parallel to the part's steps.
    pub steps: Vec<StepWork>,
}

/// The needs of a part, each once.
struct Needs<'p> {
    part: &'p Part,
    needs: Vec<Need>,
    /// Calls by (computation, devices); kernels by (text, device).
    calls: HashMap<(usize, Vec<i64>), usize>,
    kernels: HashMap<(String, i64), usize>,
}

impl<'p> Needs<'p> {
    fn push(
        &mut self,
        what: String,
        module: Arc<[u8]>,
        devices: &[i64],
        spmd: bool,
    ) -> Result<usize, PlanError> {
        let local_devices = devices
            .iter()
            .map(|d| {
                self.part
                    .addr(*d)
                    .map(|a| a.local as i32)
                    .ok_or_else(|| PlanError(format!("device {d} has no address")))
            })
            .collect::<Result<_, _>>()?;
        self.needs.push(Need {
            what,
            module,
            local_devices,
            devices: devices.to_vec(),
            spmd,
        });
        Ok(self.needs.len() - 1)
    }

    /// Computation `c` of the part, SPMD over `devices`.
    fn call(&mut self, c: usize, devices: &[i64]) -> Result<usize, PlanError> {
        if let Some(&i) = self.calls.get(&(c, devices.to_vec())) {
            return Ok(i);
        }
        let computation = &self.part.computations[c];
        let i = self.push(
            format!("@{}", computation.name),
            Arc::from(computation.module.as_bytes()),
            devices,
            true,
        )?;
        self.calls.insert((c, devices.to_vec()), i);
        Ok(i)
    }

    /// A transfer kernel on one device.
    fn kernel(&mut self, text: String, device: i64) -> Result<usize, PlanError> {
        let key = (text, device);
        if let Some(&i) = self.kernels.get(&key) {
            return Ok(i);
        }
        let i = self.push(
            "a transfer kernel".into(),
            Arc::from(key.0.as_bytes()),
            &[device],
            false,
        )?;
        self.kernels.insert(key, i);
        Ok(i)
    }

    /// The slice kernel cutting `p` out of its source shard (None: it is
    /// the whole shard).
    fn slice(&mut self, p: &pw_core::Piece, src: &ValueInfo) -> Result<Option<usize>, PlanError> {
        if is_whole(p, src) {
            return Ok(None);
        }
        let text = kernels::slice(
            src.dtype,
            &usizes(&src.layout.shard_shape),
            &usizes(&p.src_offsets),
            &usizes(&p.sizes),
        );
        self.kernel(text, p.src_device).map(Some)
    }
}

impl Work {
    /// Works out `part` (which [`Part::check`] accepted).
    pub fn of(part: &Part) -> Result<Work, PlanError> {
        let mut needs = Needs {
            part,
            needs: Vec::new(),
            calls: HashMap::new(),
            kernels: HashMap::new(),
        };
        let mut steps = Vec::with_capacity(part.steps.len());
        for s in &part.steps {
            let step = &s.step;
            steps.push(match &step.kind {
                StepKind::Call { computation, .. } => {
                    let c = &part.computations[*computation];
                    if c.num_partitions != step.devices.len() {
                        return Err(PlanError(format!(
                            "{}: @{} has {} partitions but runs on {} devices",
                            step.label,
                            c.name,
                            c.num_partitions,
                            step.devices.len()
                        )));
                    }
                    StepWork::Call {
                        need: needs.call(*computation, &step.devices)?,
                    }
                }
                StepKind::Copy {
                    input,
                    output,
                    pieces,
                } => copy_work(
                    part,
                    &step.label,
                    &part.values[*input],
                    &part.values[*output],
                    pieces,
                    &mut needs,
                )?,
                StepKind::Assemble { .. } => StepWork::Assemble,
            });
        }
        Ok(Work {
            needs: needs.needs,
            steps,
        })
    }
}

/// The work of one copy step on this worker.
fn copy_work(
    part: &Part,
    label: &str,
    src: &ValueInfo,
    dst: &ValueInfo,
    pieces: &[pw_core::Piece],
    needs: &mut Needs,
) -> Result<StepWork, PlanError> {
    let worker_of = |d: i64| part.addr(d).map_or(u32::MAX, |a| a.worker);
    let mut targets: Vec<Target> = Vec::new();
    let mut sends = Vec::new();
    for (i, p) in pieces.iter().enumerate() {
        let (src_mine, dst_mine) = (part.is_mine(p.src_device), part.is_mine(p.dst_device));
        let position = src.position_of(p.src_device).ok_or_else(|| {
            PlanError(format!(
                "{label}: device {} holds no source shard",
                p.src_device
            ))
        })?;
        if src_mine && !dst_mine {
            sends.push(Send {
                piece: i,
                position,
                slice: needs.slice(p, src)?,
                worker: worker_of(p.dst_device),
            });
            continue;
        }
        if !dst_mine {
            continue;
        }
        let source = if src_mine {
            Source::Local {
                position,
                slice: needs.slice(p, src)?,
            }
        } else {
            Source::Remote {
                piece: i,
                worker: worker_of(p.src_device),
            }
        };
        match targets.iter_mut().find(|t| t.device == p.dst_device) {
            Some(t) => t.pieces.push((i, source)),
            None => targets.push(Target {
                position: dst.position_of(p.dst_device).ok_or_else(|| {
                    PlanError(format!(
                        "{label}: device {} holds no destination shard",
                        p.dst_device
                    ))
                })?,
                device: p.dst_device,
                pieces: vec![(i, source)],
                place: None,
            }),
        }
    }
    for t in &mut targets {
        let fills = t.pieces.len() == 1 && pieces[t.pieces[0].0].sizes == dst.layout.shard_shape;
        if !fills {
            let layout: Vec<(Vec<usize>, Vec<usize>)> = t
                .pieces
                .iter()
                .map(|(i, _)| (usizes(&pieces[*i].dst_offsets), usizes(&pieces[*i].sizes)))
                .collect();
            let text = kernels::place(dst.dtype, &usizes(&dst.layout.shard_shape), &layout);
            t.place = Some(needs.kernel(text, t.device)?);
        }
    }
    Ok(StepWork::Copy { targets, sends })
}

/// Whether piece `p` is the whole source shard.
fn is_whole(p: &pw_core::Piece, src: &ValueInfo) -> bool {
    p.src_offsets.iter().all(|&o| o == 0) && p.sizes == src.layout.shard_shape
}

pub(crate) fn usizes(v: &[i64]) -> Vec<usize> {
    v.iter().map(|&x| x.max(0) as usize).collect()
}
