//! The small plans (`pw_core::plans`) run through the executor on real
//! devices and move every element where it belongs: uploads split and
//! fetched back, relayouts between any two layouts (rows, columns,
//! replicated, 2-D, permuted device orders, other devices), splits and
//! joins, for f32, bf16, i32 and bool on 1, 2 and 4 devices, on both
//! plugins. These are the operations of IFRT's arrays as pw performs them
//! (the proxy runs one plan per IFRT operation).

use half::bf16;
use pw_core::geometry::{Layout, MeshShape, Sharding};
use pw_core::plan::{Plan, ValueInfo};
use pw_core::{plans, DType};
use pw_exec::{self as exec, cache::Executables, Executor, HostArray};
use pw_pjrt::Client;

use crate::common::{assert_no_leaks, Target};

/// Divisible by every device count tested.
const COLS: usize = 8;
const ROWS: usize = 4;

/// Deterministic, distinct-looking values of `dtype` for `shape`.
fn sample(dtype: DType, shape: &[usize]) -> HostArray {
    let n: usize = shape.iter().product();
    let r = match dtype {
        DType::F32 => HostArray::from_slice(
            shape,
            &(0..n).map(|i| i as f32 * 0.5 - 3.0).collect::<Vec<_>>(),
        ),
        DType::BF16 => HostArray::from_slice(
            shape,
            &(0..n)
                .map(|i| bf16::from_f32(i as f32 * 0.25 - 1.0))
                .collect::<Vec<_>>(),
        ),
        DType::I32 => HostArray::from_slice(
            shape,
            &(0..n).map(|i| i as i32 * 7 - 20).collect::<Vec<_>>(),
        ),
        DType::Bool => {
            HostArray::from_slice(shape, &(0..n).map(|i| i % 3 == 0).collect::<Vec<_>>())
        }
        other => panic!("no sample for {other}"),
    };
    r.unwrap()
}

/// A `ROWS x COLS` array of `dtype` laid out as `mesh`/`dims` say, on
/// `devices` (position `p` on `devices[p]`).
fn laid_out(dtype: DType, mesh: &[(&str, i64)], dims: [&[&str]; 2], devices: &[i64]) -> ValueInfo {
    let mesh = MeshShape::new(mesh.iter().map(|(n, s)| (n.to_string(), *s)).collect());
    let sharding = Sharding {
        dims: dims
            .iter()
            .map(|axes| axes.iter().map(|a| a.to_string()).collect())
            .collect(),
    };
    let shape = [ROWS as i64, COLS as i64];
    let layout = Layout::new(&shape, &sharding, &mesh).unwrap();
    plans::value(dtype, &shape, devices.to_vec(), layout)
}

/// Every layout of a `ROWS x COLS` array on the first `n` devices of 4,
/// and on other devices: one device, rows, columns, replicated, 2-D, a
/// reversed device order.
fn layouts(dtype: DType, n: usize) -> Vec<(String, ValueInfo)> {
    let first: Vec<i64> = (0..n as i64).collect();
    let last: Vec<i64> = (4 - n as i64..4).collect();
    let mut reversed = first.clone();
    reversed.reverse();
    let x = [("x", n as i64)];
    let mut all = vec![
        (
            "rows".to_string(),
            laid_out(dtype, &x, [&["x"], &[]], &first),
        ),
        ("columns".into(), laid_out(dtype, &x, [&[], &["x"]], &first)),
        ("replicated".into(), laid_out(dtype, &x, [&[], &[]], &first)),
        (
            "rows, reversed".into(),
            laid_out(dtype, &x, [&["x"], &[]], &reversed),
        ),
        (
            "columns elsewhere".into(),
            laid_out(dtype, &x, [&[], &["x"]], &last),
        ),
    ];
    if n == 4 {
        let grid = [("a", 2), ("b", 2)];
        all.push((
            "2-D".into(),
            laid_out(dtype, &grid, [&["a"], &["b"]], &first),
        ));
        all.push((
            "columns over both".into(),
            laid_out(dtype, &grid, [&[], &["b", "a"]], &first),
        ));
        all.push((
            "rows, half replicated".into(),
            laid_out(dtype, &grid, [&["b"], &[]], &first),
        ));
    }
    all
}

/// Runs small plans on one client with `devices` devices.
struct Runner {
    client: Client,
    cache: Executables,
    executor: Executor,
}

impl Runner {
    fn new(target: Target) -> Runner {
        let client = target.client(4);
        Runner {
            cache: Executables::new(&client, None),
            executor: Executor::new(&client),
            client,
        }
    }

    fn run(&mut self, plan: &Plan, inputs: &[HostArray]) -> Vec<HostArray> {
        plan.check().unwrap();
        let prepared = exec::prepare(plan, &mut self.cache, &mut |_| {}).unwrap();
        exec::run_local(&self.executor, &prepared, inputs, None, false)
            .unwrap()
            .0
    }
}

fn moves_every_element(target: Target) {
    let mut r = Runner::new(target);
    for dtype in [DType::F32, DType::BF16, DType::I32, DType::Bool] {
        let host = sample(dtype, &[ROWS, COLS]);
        for n in [1, 2, 4] {
            let all = layouts(dtype, n);
            for (k, (name, from)) in all.iter().enumerate() {
                // Up to the devices and back.
                let back = r.run(&plans::put(from.clone()), std::slice::from_ref(&host));
                assert_eq!(
                    back,
                    std::slice::from_ref(&host),
                    "{dtype} put {name} on {n}"
                );
                // Laid out anew: f32 into every layout, the others into the
                // next one (their bytes move the same way).
                let targets: Vec<&(String, ValueInfo)> = match dtype {
                    DType::F32 => all.iter().collect(),
                    _ => all.iter().cycle().skip(k + 1).take(1).collect(),
                };
                for (other, to) in targets {
                    let plan = plans::relayout(from.clone(), to.clone(), plans::link).unwrap();
                    let moved = r.run(&plan, std::slice::from_ref(&host));
                    assert_eq!(
                        moved,
                        std::slice::from_ref(&host),
                        "{dtype} {name} -> {other} on {n}"
                    );
                }
                // Each shard alone, and the shards joined again.
                let shards = r.run(&plans::split(from.clone()), std::slice::from_ref(&host));
                for (p, shard) in shards.iter().enumerate() {
                    let want = host.slice(&from.region(p)).unwrap();
                    assert_eq!(shard, &want, "{dtype} {name} shard {p} on {n}");
                }
                let parts = (0..from.devices.len())
                    .map(|p| plans::on_device(dtype, &from.layout.shard_shape, from.devices[p]))
                    .collect();
                let joined = r.run(&plans::join(parts, from.clone()).unwrap(), &shards);
                assert_eq!(
                    joined,
                    std::slice::from_ref(&host),
                    "{dtype} {name} joined on {n}"
                );
            }
        }
    }
    drop(r.executor);
    drop(r.cache);
    assert_no_leaks(&r.client);
}

/// Remap: the shards of two one-device arrays become the halves of one
/// array, in either order.
fn remaps_shards(target: Target) {
    let mut r = Runner::new(target);
    let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let top = HostArray::from_slice(&[2, 2], &x[..4]).unwrap();
    let bottom = HostArray::from_slice(&[2, 2], &x[4..]).unwrap();
    let one = |d| plans::on_device(DType::F32, &[2, 2], d);
    let halves = |devices: Vec<i64>| {
        let layout = Layout {
            shard_shape: vec![2, 2],
            offsets: vec![vec![0, 0], vec![2, 0]],
        };
        plans::value(DType::F32, &[4, 2], devices, layout)
    };
    let moves = |swap: bool| {
        let (a, b) = if swap { (1, 0) } else { (0, 1) };
        [
            plans::Move {
                from: (0, 0),
                to: (0, a),
            },
            plans::Move {
                from: (1, 0),
                to: (0, b),
            },
        ]
    };
    let inputs = [top.clone(), bottom.clone()];
    let straight = r.run(
        &plans::remap(
            vec![one(0), one(1)],
            vec![halves(vec![0, 1])],
            &moves(false),
        )
        .unwrap(),
        &inputs,
    );
    assert_eq!(straight[0].to_vec::<f32>().unwrap(), x);
    let swapped = r.run(
        &plans::remap(vec![one(0), one(1)], vec![halves(vec![1, 0])], &moves(true)).unwrap(),
        &inputs,
    );
    let mut want = x[4..].to_vec();
    want.extend_from_slice(&x[..4]);
    assert_eq!(swapped[0].to_vec::<f32>().unwrap(), want);
    // A remap that leaves a shard unwritten is refused before it runs.
    assert!(plans::remap(
        vec![one(0), one(1)],
        vec![halves(vec![0, 1])],
        &moves(false)[..1]
    )
    .is_err());
    drop(r.executor);
    drop(r.cache);
    assert_no_leaks(&r.client);
}

on_both_plugins!(moves_every_element, remaps_shards);
