//! The small plans (`pw_core::plans`) run on real
//! devices and move each element where it belongs.

use pw_core::geometry::Layout;
use pw_core::plans;
use pw_core::DType;
use pw_exec::{self as exec, Executor};
use pw_exec::{cache::Executables, HostArray};
use pw_pjrt::ClientOptions;

use crate::common::Target;

fn halves() -> pw_core::plan::ValueInfo {
    plans::value(
        DType::F32,
        &[4, 2],
        vec![0, 1],
        Layout {
            shard_shape: vec![2, 2],
            offsets: vec![vec![0, 0], vec![2, 0]],
        },
    )
}

fn run(plan: &pw_core::plan::Plan, inputs: &[HostArray]) -> Vec<Vec<f32>> {
    let plugin = Target::Api0115.plugin();
    let client =
        pw_pjrt::Client::new(&plugin, &ClientOptions::new().cpu_device_count(4)).expect("client");
    let mut cache = Executables::new(&client, None);
    let prepared = exec::prepare(plan, &mut cache, &mut |_| {}).expect("prepare");
    let executor = Executor::new(&client);
    let (outputs, _) = exec::run_local(&executor, &prepared, inputs, false).expect("run");
    outputs.iter().map(|o| o.to_vec::<f32>().unwrap()).collect()
}

#[test]
fn split_join_and_copy_move_every_element_where_it_belongs() {
    let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let whole = HostArray::from_slice(&[4, 2], &x).unwrap();
    // Split: each shard alone.
    let shards = run(&plans::split(halves()), std::slice::from_ref(&whole));
    assert_eq!(shards, vec![x[..4].to_vec(), x[4..].to_vec()]);
    // Join: the shards back as one array.
    let parts = vec![
        plans::on_device(DType::F32, &[2, 2], 0),
        plans::on_device(DType::F32, &[2, 2], 1),
    ];
    let top = HostArray::from_slice(&[2, 2], &x[..4]).unwrap();
    let bottom = HostArray::from_slice(&[2, 2], &x[4..]).unwrap();
    let joined = run(&plans::join(parts, halves()).unwrap(), &[top, bottom]);
    assert_eq!(joined, vec![x.clone()]);
    // Remap: the two halves swapped.
    let one = |d| plans::on_device(DType::F32, &[2, 2], d);
    let swapped = plans::value(
        DType::F32,
        &[4, 2],
        vec![1, 0],
        Layout {
            shard_shape: vec![2, 2],
            offsets: vec![vec![0, 0], vec![2, 0]],
        },
    );
    let moves = [
        plans::Move {
            from: (0, 0),
            to: (0, 1),
        },
        plans::Move {
            from: (1, 0),
            to: (0, 0),
        },
    ];
    let top = HostArray::from_slice(&[2, 2], &x[..4]).unwrap();
    let bottom = HostArray::from_slice(&[2, 2], &x[4..]).unwrap();
    let remapped = run(
        &plans::remap(vec![one(0), one(1)], vec![swapped], &moves).unwrap(),
        &[top, bottom],
    );
    let mut want = x[4..].to_vec();
    want.extend_from_slice(&x[..4]);
    assert_eq!(remapped, vec![want]);
    // Copy onto other devices.
    let moved = plans::value(DType::F32, &[4, 2], vec![3, 2], halves().layout);
    let copied = run(
        &plans::relayout(halves(), moved, plans::link).unwrap(),
        std::slice::from_ref(&whole),
    );
    assert_eq!(copied, vec![x.clone()]);
    // Relayout: rows on two devices become columns on three others.
    let columns = plans::value(
        DType::F32,
        &[4, 2],
        vec![1, 2],
        Layout {
            shard_shape: vec![4, 1],
            offsets: vec![vec![0, 0], vec![0, 1]],
        },
    );
    let cut = run(
        &plans::relayout(halves(), columns, plans::link).unwrap(),
        &[whole],
    );
    assert_eq!(cut, vec![x]);
}
