//! Small plans, built without lowering: one operation on arrays each, so
//! that its bytes move (host to worker, worker to worker) and its
//! computations run through the same executor as any pw program. The IFRT
//! proxy runs one per IFRT operation; sessions run [`relayout()`] for an
//! argument laid out otherwise than a call takes it.
//!
//! * [`put`]: an upload, as is (the plan's input is its output);
//! * [`call`]: one computation, SPMD over its devices;
//! * [`relayout()`]: an array laid out anew, on other devices or cut
//!   otherwise, device to device (the [relayout planner](crate::relayout));
//! * [`split`]: each shard of an array as an array of its own;
//! * [`join`]: arrays of one shard each, as the shards of one array;
//! * [`remap`]: shards of some arrays as the shards of others.

use crate::{
    geometry::Layout,
    plan::{Computation, Module, Plan, Step, StepKind, ValueInfo},
    relayout::{self, Placed},
    DType, Link, Piece,
};

/// The name every proxy value's mesh has (IFRT arrays have none).
const MESH: &str = "ifrt";

/// An array on `devices`, position `p` holding the box at
/// `layout.offsets[p]`.
pub fn value(dtype: DType, shape: &[i64], devices: Vec<i64>, layout: Layout) -> ValueInfo {
    let sharding = if devices.len() == 1 {
        format!("on device {}", devices[0])
    } else {
        format!("shards {:?} on devices {devices:?}", layout.shard_shape)
    };
    ValueInfo {
        dtype,
        shape: shape.to_vec(),
        mesh: MESH.into(),
        devices,
        layout,
        sharding,
    }
}

/// The whole array on one device.
pub fn on_device(dtype: DType, shape: &[i64], device: i64) -> ValueInfo {
    let layout = Layout {
        shard_shape: shape.to_vec(),
        offsets: vec![vec![0; shape.len()]],
    };
    value(dtype, shape, vec![device], layout)
}

fn plan(values: Vec<ValueInfo>, inputs: Vec<usize>, outputs: Vec<usize>, steps: Vec<Step>) -> Plan {
    let mut plan = Plan {
        computations: Vec::new(),
        values,
        inputs,
        outputs,
        steps,
        meshes: Vec::new(),
    };
    plan.compute_frees();
    plan
}

/// Uploads `v`: its input is its output.
pub fn put(v: ValueInfo) -> Plan {
    plan(vec![v], vec![0], vec![0], Vec::new())
}

/// Computation `module` (`name` in messages) on `devices`, taking
/// `params` and making `results` (all on `devices`, in partition order).
pub fn call(
    name: &str,
    module: Module,
    devices: Vec<i64>,
    params: Vec<ValueInfo>,
    results: Vec<ValueInfo>,
) -> Plan {
    let args: Vec<usize> = (0..params.len()).collect();
    let outs: Vec<usize> = (params.len()..params.len() + results.len()).collect();
    let step = Step {
        kind: StepKind::Call {
            computation: 0,
            args: args.clone(),
            results: outs.clone(),
        },
        label: format!("#0 {name} on {devices:?}"),
        devices: devices.clone(),
        frees: Vec::new(),
    };
    let mut p = plan(
        params.into_iter().chain(results).collect(),
        args,
        outs,
        vec![step],
    );
    p.computations.push(Computation {
        name: name.into(),
        module,
        num_partitions: devices.len(),
    });
    p
}

/// The link between two devices when nothing more is known of where they
/// are: the same device, or far apart.
pub fn link(src: i64, dst: i64) -> Link {
    if src == dst {
        Link::SameDevice
    } else {
        Link::CrossIsland
    }
}

/// Position `p` of `from`, whole, into position `q` of `to`.
fn whole(from: &ValueInfo, p: usize, to: &ValueInfo, q: usize) -> Piece {
    Piece {
        src_device: from.devices[p],
        src_offsets: vec![0; from.shape.len()],
        dst_device: to.devices[q],
        dst_offsets: vec![0; to.shape.len()],
        sizes: from.layout.shard_shape.clone(),
        link: link(from.devices[p], to.devices[q]),
    }
}

fn copy_step(index: usize, input: usize, output: usize, pieces: Vec<Piece>) -> Step {
    let (devices, flows) = crate::piece::span(&pieces);
    Step {
        kind: StepKind::Copy {
            input,
            output,
            pieces,
        },
        label: format!("#{index} copy {flows}"),
        devices,
        frees: Vec::new(),
    }
}

/// Why a small plan cannot be built: the arrays it names do not fit the
/// operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unfit(pub String);

/// `from` laid out as `to` (same element type and shape; other devices, or
/// cut otherwise), one copy step of the pieces the relayout planner gives;
/// `link` classifies a device pair (the planner reads the closest replica).
pub fn relayout(
    from: ValueInfo,
    to: ValueInfo,
    link: impl Fn(i64, i64) -> Link,
) -> Result<Plan, Unfit> {
    if from.dtype != to.dtype || from.shape != to.shape {
        return Err(Unfit(format!(
            "{} cannot be laid out as {}",
            from.describe(),
            to.describe()
        )));
    }
    for (v, what) in [(&from, "source"), (&to, "destination")] {
        if v.devices.len() != v.layout.offsets.len() || !relayout::is_even(&v.layout, &v.shape) {
            return Err(Unfit(format!(
                "the {what} layout of {} is not an even tiling of it on {} devices",
                v.describe(),
                v.devices.len()
            )));
        }
    }
    let src = Placed {
        tiles: &from.layout,
        devices: &from.devices,
    };
    let dst = Placed {
        tiles: &to.layout,
        devices: &to.devices,
    };
    let pieces: Vec<Piece> = relayout::plan(src, dst, link)
        .into_iter()
        .flatten()
        .collect();
    let step = copy_step(0, 0, 1, pieces);
    Ok(plan(vec![from, to], vec![0], vec![1], vec![step]))
}

/// Each shard of `from` as an array of one device (in position order).
pub fn split(from: ValueInfo) -> Plan {
    let shard = from.layout.shard_shape.clone();
    let mut values = vec![from.clone()];
    let mut steps = Vec::new();
    for (p, &d) in from.devices.iter().enumerate() {
        let to = on_device(from.dtype, &shard, d);
        steps.push(copy_step(p, 0, values.len(), vec![whole(&from, p, &to, 0)]));
        values.push(to);
    }
    let outputs = (1..values.len()).collect();
    plan(values, vec![0], outputs, steps)
}

/// Arrays of one device each (`parts[p]` on `to.devices[p]`, shaped as
/// `to`'s shards) as the shards of `to`.
pub fn join(parts: Vec<ValueInfo>, to: ValueInfo) -> Result<Plan, Unfit> {
    if parts.len() != to.devices.len() {
        return Err(Unfit(format!(
            "{} arrays cannot be the {} shards of one array",
            parts.len(),
            to.devices.len()
        )));
    }
    for (p, part) in parts.iter().enumerate() {
        if part.devices != [to.devices[p]]
            || part.dtype != to.dtype
            || part.shape != to.layout.shard_shape
        {
            return Err(Unfit(format!(
                "array #{p} ({}) is not shard #{p} of {}{:?} on device {}",
                part.describe(),
                to.dtype,
                to.shape,
                to.devices[p]
            )));
        }
    }
    let n = parts.len();
    let mut values = parts;
    let mut steps = Vec::new();
    let mut pieces_of = Vec::new();
    for p in 0..n {
        // The result with only shard `p` written (what assemble takes).
        let partial = to.clone();
        let piece = whole(&values[p], 0, &partial, p);
        let at = values.len();
        values.push(partial);
        steps.push(copy_step(p, p, at, vec![piece]));
        pieces_of.push(at);
    }
    let output = values.len();
    values.push(to.clone());
    steps.push(Step {
        kind: StepKind::Assemble {
            parts: pieces_of,
            output,
        },
        label: format!("#{n} assemble"),
        devices: to.devices.clone(),
        frees: Vec::new(),
    });
    Ok(plan(values, (0..n).collect(), vec![output], steps))
}

/// One shard moved by [`remap`]: shard `from.1` of input `from.0` becomes
/// shard `to.1` of output `to.0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub from: (usize, usize),
    pub to: (usize, usize),
}

/// Outputs made of the inputs' shards, as `moves` say; every shard of every
/// output is written exactly once.
pub fn remap(
    inputs: Vec<ValueInfo>,
    outputs: Vec<ValueInfo>,
    moves: &[Move],
) -> Result<Plan, Unfit> {
    let mut written: Vec<Vec<bool>> = outputs
        .iter()
        .map(|o| vec![false; o.devices.len()])
        .collect();
    for m in moves {
        let (i, p) = m.from;
        let (o, q) = m.to;
        let (Some(src), Some(dst)) = (inputs.get(i), outputs.get(o)) else {
            return Err(Unfit(format!(
                "a move names array {i} -> {o}, which the remap does not have"
            )));
        };
        if p >= src.devices.len() || q >= dst.devices.len() {
            return Err(Unfit(format!(
                "a move names shard {p} -> {q}, which the arrays do not have"
            )));
        }
        if src.dtype != dst.dtype || src.layout.shard_shape != dst.layout.shard_shape {
            return Err(Unfit(format!(
                "shard {p} of input {i} ({}) cannot be shard {q} of output {o} ({})",
                src.describe(),
                dst.describe()
            )));
        }
        if std::mem::replace(&mut written[o][q], true) {
            return Err(Unfit(format!("shard {q} of output {o} is written twice")));
        }
    }
    if let Some((o, q)) = written
        .iter()
        .enumerate()
        .find_map(|(o, w)| w.iter().position(|x| !x).map(|q| (o, q)))
    {
        return Err(Unfit(format!("nothing writes shard {q} of output {o}")));
    }
    let n = inputs.len();
    let mut values = inputs;
    let mut steps = Vec::new();
    let mut outs = Vec::new();
    for (o, out) in outputs.into_iter().enumerate() {
        let mut parts = Vec::new();
        for i in 0..n {
            let pieces: Vec<Piece> = moves
                .iter()
                .filter(|m| m.from.0 == i && m.to.0 == o)
                .map(|m| whole(&values[i], m.from.1, &out, m.to.1))
                .collect();
            if pieces.is_empty() {
                continue;
            }
            let at = values.len();
            values.push(out.clone());
            steps.push(copy_step(steps.len(), i, at, pieces));
            parts.push(at);
        }
        let at = values.len();
        values.push(out.clone());
        steps.push(Step {
            kind: StepKind::Assemble { parts, output: at },
            label: format!("#{} assemble", steps.len()),
            devices: out.devices.clone(),
            frees: Vec::new(),
        });
        outs.push(at);
    }
    Ok(plan(values, (0..n).collect(), outs, steps))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn halves() -> ValueInfo {
        value(
            DType::F32,
            &[8, 4],
            vec![0, 1],
            Layout {
                shard_shape: vec![4, 4],
                offsets: vec![vec![0, 0], vec![4, 0]],
            },
        )
    }

    #[test]
    fn every_plan_is_runnable() {
        let v = halves();
        put(v.clone()).check().unwrap();
        let moved = value(v.dtype, &v.shape, vec![2, 3], v.layout.clone());
        relayout(v.clone(), moved, link).unwrap().check().unwrap();
        let s = split(v.clone());
        s.check().unwrap();
        assert_eq!(s.outputs.len(), 2);
        let parts = vec![
            on_device(DType::F32, &[4, 4], 0),
            on_device(DType::F32, &[4, 4], 1),
        ];
        join(parts, v.clone()).unwrap().check().unwrap();
        // Two one-shard arrays as the halves, and back.
        let one = |d| on_device(DType::F32, &[4, 4], d);
        let moves = [
            Move {
                from: (0, 0),
                to: (0, 0),
            },
            Move {
                from: (1, 0),
                to: (0, 1),
            },
        ];
        remap(vec![one(0), one(1)], vec![v.clone()], &moves)
            .unwrap()
            .check()
            .unwrap();
        assert!(remap(vec![one(0), one(1)], vec![v.clone()], &moves[..1]).is_err());
        assert!(remap(
            vec![one(0)],
            vec![v.clone()],
            &[
                moves[0],
                Move {
                    from: (0, 0),
                    to: (0, 0)
                }
            ]
        )
        .is_err());
        let c = call(
            "f",
            Module::Text("module {}".into()),
            vec![0, 1],
            vec![v.clone()],
            vec![v],
        );
        c.check().unwrap();
    }

    #[test]
    fn unlike_arrays_are_refused() {
        let columns = value(
            DType::F32,
            &[8, 4],
            vec![2],
            Layout {
                shard_shape: vec![8, 2],
                offsets: vec![vec![0, 0]],
            },
        );
        assert!(relayout(halves(), columns, link).is_err());
        let ragged = Layout {
            shard_shape: vec![4, 4],
            offsets: vec![vec![0, 0], vec![3, 0]],
        };
        let ragged = value(DType::F32, &[8, 4], vec![2, 3], ragged);
        assert!(relayout(halves(), ragged, link).is_err());
        let wrong = vec![
            on_device(DType::F32, &[4, 4], 0),
            on_device(DType::F32, &[4, 4], 2),
        ];
        assert!(join(wrong, halves()).is_err());
    }
}
