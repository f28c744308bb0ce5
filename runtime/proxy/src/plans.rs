//! The small plans the IFRT proxy runs in its pw session: each IFRT
//! operation that makes arrays on devices is one plan, so that its bytes
//! move (host to worker, worker to worker) and its computations run through
//! the same executor as any pw program.
//!
//! * [`put`]: an upload, as is (the plan's input is its output);
//! * [`call`]: one computation, SPMD over its devices;
//! * [`copy`]: the same shards onto other devices (worker to worker);
//! * [`split`]: each shard of an array as an array of its own;
//! * [`join`]: arrays of one shard each, as the shards of one array;
//! * [`remap`]: shards of some arrays as the shards of others.

use pw_core::{
    geometry::Layout,
    plan::{Computation, Module, Plan, Step, StepKind, ValueInfo},
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

fn link(src: i64, dst: i64) -> Link {
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
    let (devices, flows) = pw_core::piece::span(&pieces);
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

/// `from` onto `devices`, laid out the same (position `p` to
/// `devices[p]`).
pub fn copy(from: ValueInfo, devices: Vec<i64>) -> Result<Plan, String> {
    if devices.len() != from.devices.len() {
        return Err(format!(
            "error: an array of {} shards cannot be copied onto {} devices",
            from.devices.len(),
            devices.len()
        ));
    }
    let to = value(from.dtype, &from.shape, devices, from.layout.clone());
    let pieces = (0..from.devices.len())
        .map(|p| whole(&from, p, &to, p))
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
pub fn join(parts: Vec<ValueInfo>, to: ValueInfo) -> Result<Plan, String> {
    if parts.len() != to.devices.len() {
        return Err(format!(
            "error: {} arrays cannot be the {} shards of one array",
            parts.len(),
            to.devices.len()
        ));
    }
    for (p, part) in parts.iter().enumerate() {
        if part.devices != [to.devices[p]]
            || part.dtype != to.dtype
            || part.shape != to.layout.shard_shape
        {
            return Err(format!(
                "error: array #{p} ({}) is not shard #{p} of {}{:?} on device {}",
                part.describe(),
                to.dtype,
                to.shape,
                to.devices[p]
            ));
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
) -> Result<Plan, String> {
    let mut written: Vec<Vec<bool>> = outputs
        .iter()
        .map(|o| vec![false; o.devices.len()])
        .collect();
    for m in moves {
        let (i, p) = m.from;
        let (o, q) = m.to;
        let (Some(src), Some(dst)) = (inputs.get(i), outputs.get(o)) else {
            return Err(format!(
                "error: a move names array {i} -> {o}, which the remap does not have"
            ));
        };
        if p >= src.devices.len() || q >= dst.devices.len() {
            return Err(format!(
                "error: a move names shard {p} -> {q}, which the arrays do not have"
            ));
        }
        if src.dtype != dst.dtype || src.layout.shard_shape != dst.layout.shard_shape {
            return Err(format!(
                "error: shard {p} of input {i} ({}) cannot be shard {q} of output {o} ({})",
                src.describe(),
                dst.describe()
            ));
        }
        if std::mem::replace(&mut written[o][q], true) {
            return Err(format!("error: shard {q} of output {o} is written twice"));
        }
    }
    if let Some((o, q)) = written
        .iter()
        .enumerate()
        .find_map(|(o, w)| w.iter().position(|x| !x).map(|q| (o, q)))
    {
        return Err(format!("error: nothing writes shard {q} of output {o}"));
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
        copy(v.clone(), vec![2, 3]).unwrap().check().unwrap();
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
        assert!(copy(halves(), vec![2]).is_err());
        let wrong = vec![
            on_device(DType::F32, &[4, 4], 0),
            on_device(DType::F32, &[4, 4], 2),
        ];
        assert!(join(wrong, halves()).is_err());
    }
}
