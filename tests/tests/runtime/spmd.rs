//! The matmul+tanh program JAX lowered for 2 and 4 partitions (Shardy
//! shardings) compiles and runs SPMD, and its shards reassemble to JAX's
//! result (`tests/fixtures/gen_runtime_fixtures.py`).

use pw_core::geometry::{Layout, MeshShape, Region, Sharding};
use pw_exec::host::{self, dims};
use pw_exec::{npy, HostArray};
use pw_pjrt::{Buffer, CompileOptions, Device, LoadedExecutable, Program};
use serde_json::Value;

use crate::common::{assert_no_leaks, fixture, Target};

/// The mesh axes and per-dimension shardings recorded by the generator.
struct Case {
    partitions: usize,
    axes: Vec<(String, usize)>,
    device_ids: Vec<i32>,
    x: Vec<Vec<String>>,
    w: Vec<Vec<String>>,
    out: Vec<Vec<String>>,
}

fn case(partitions: usize) -> Case {
    let text = std::fs::read_to_string(fixture(&format!("matmul_tanh_{partitions}.json"))).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    let dims = |key: &str| -> Vec<Vec<String>> {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                d.as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string())
                    .collect()
            })
            .collect()
    };
    Case {
        partitions: json["num_partitions"].as_u64().unwrap() as usize,
        axes: json["mesh"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a[0].as_str().unwrap().to_string(),
                    a[1].as_u64().unwrap() as usize,
                )
            })
            .collect(),
        device_ids: json["mesh_device_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_i64().unwrap() as i32)
            .collect(),
        x: dims("x"),
        w: dims("w"),
        out: dims("out"),
    }
}

/// The box of an array of `shape` each mesh position holds under `dims`.
fn regions(shape: &[usize], axes: &[(String, usize)], dims_of: &[Vec<String>]) -> Vec<Region> {
    let mesh = MeshShape::new(axes.iter().map(|(n, s)| (n.clone(), *s as i64)).collect());
    let sharding = Sharding {
        dims: dims_of.to_vec(),
    };
    let layout = Layout::new(&dims(shape), &sharding, &mesh).unwrap();
    layout
        .offsets
        .into_iter()
        .map(|offsets| Region {
            offsets,
            sizes: layout.shard_shape.clone(),
        })
        .collect()
}

/// `host` cut into the shards `regions` say, each on its device.
fn upload(host: &HostArray, regions: &[Region], devices: &[Device]) -> Vec<Buffer> {
    let client = devices[0].client();
    host::split(host, regions)
        .unwrap()
        .iter()
        .zip(devices)
        .map(|(shard, device)| shard.to_device(client, device).unwrap())
        .collect()
}

/// Runs `exe` on the shards of `x` and `w` (position `p` on device `p`);
/// returns its output assembled on the host, and each output shard.
fn run(
    exe: &LoadedExecutable,
    x: &[Buffer],
    w: &[Buffer],
    out: (&HostArray, &[Region]),
) -> (HostArray, Vec<HostArray>) {
    let lists: Vec<Vec<&Buffer>> = x.iter().zip(w).map(|(a, b)| vec![a, b]).collect();
    let outputs = exe.execute(&lists).unwrap();
    let (expected, regions) = out;
    let shards: Vec<HostArray> = outputs
        .outputs
        .iter()
        .zip(regions)
        .map(|(per_device, region)| {
            let bytes = per_device[0].to_host().unwrap();
            HostArray::new(expected.dtype(), &host::sizes(region), bytes).unwrap()
        })
        .collect();
    let whole = host::assemble(expected.dtype(), expected.shape(), regions, |p| {
        Ok(Some(shards[p].bytes().to_vec()))
    })
    .unwrap();
    (whole, shards)
}

fn assert_close(actual: &HostArray, expected: &HostArray, what: &str) {
    assert_eq!(actual.shape(), expected.shape(), "{what}: shape");
    let (a, e) = (
        actual.to_vec::<f32>().unwrap(),
        expected.to_vec::<f32>().unwrap(),
    );
    for (i, (x, y)) in a.iter().zip(&e).enumerate() {
        assert!((x - y).abs() <= 1e-5, "{what}: element {i}: {x} vs JAX {y}");
    }
}

/// The program as JAX printed it (MLIR text) or exported it (bytecode).
#[derive(Clone, Copy)]
enum Form {
    Text,
    Bytecode,
}

fn program(partitions: usize, form: Form) -> Program {
    match form {
        Form::Text => Program::mlir_text(
            std::fs::read_to_string(fixture(&format!("matmul_tanh_{partitions}.mlir"))).unwrap(),
        ),
        Form::Bytecode => Program::mlir(
            std::fs::read(fixture(&format!("matmul_tanh_{partitions}.mlirbc"))).unwrap(),
        ),
    }
}

fn matmul_tanh(target: Target, partitions: usize, form: Form) {
    let case = case(partitions);
    assert_eq!(case.partitions, partitions);
    let client = target.client(4);
    {
        let devices: Vec<_> = case
            .device_ids
            .iter()
            .map(|&id| client.device_by_id(id).unwrap())
            .collect();
        let x_host = npy::read(fixture("matmul_tanh_x.npy")).unwrap();
        let w_host = npy::read(fixture("matmul_tanh_w.npy")).unwrap();
        let expected = npy::read(fixture(&format!("matmul_tanh_{partitions}_out.npy"))).unwrap();
        let x = upload(
            &x_host,
            &regions(x_host.shape(), &case.axes, &case.x),
            &devices,
        );
        let w = upload(
            &w_host,
            &regions(w_host.shape(), &case.axes, &case.w),
            &devices,
        );
        let out_regions = regions(expected.shape(), &case.axes, &case.out);

        let program = program(partitions, form);
        let exe = client
            .compile(&program, &CompileOptions::spmd(&devices).unwrap())
            .unwrap();
        assert_eq!(exe.devices(), devices.as_slice());
        assert_eq!(
            exe.executable().unwrap().num_partitions().unwrap(),
            partitions
        );

        let (result, shards) = run(&exe, &x, &w, (&expected, &out_regions));
        assert_eq!(shards.len(), partitions);
        assert_close(&result, &expected, "reassembled result");
        // Each shard holds its own box of JAX's result.
        for (shard, region) in shards.iter().zip(&out_regions) {
            assert_close(shard, &expected.slice(region).unwrap(), "shard");
        }

        // The executable survives serialization and runs again.
        let bytes = exe.serialize().unwrap();
        let again = client.deserialize_executable(&bytes, None).unwrap();
        let (result, _) = run(&again, &x, &w, (&expected, &out_regions));
        assert_close(&result, &expected, "after deserialize");
        // Inputs are still usable: execution never donates them.
        let x_regions = regions(x_host.shape(), &case.axes, &case.x);
        let x_back = host::assemble(x_host.dtype(), x_host.shape(), &x_regions, |p| {
            Ok(Some(x[p].to_host().unwrap()))
        })
        .unwrap();
        assert_eq!(x_back, x_host);
    }
    assert_no_leaks(&client);
}

fn matmul_tanh_2_partitions(target: Target) {
    matmul_tanh(target, 2, Form::Text);
}

fn matmul_tanh_4_partitions(target: Target) {
    matmul_tanh(target, 4, Form::Text);
}

fn matmul_tanh_2_partitions_from_bytecode(target: Target) {
    matmul_tanh(target, 2, Form::Bytecode);
}

fn matmul_tanh_4_partitions_from_bytecode(target: Target) {
    matmul_tanh(target, 4, Form::Bytecode);
}

on_both_plugins!(
    matmul_tanh_2_partitions,
    matmul_tanh_4_partitions,
    matmul_tanh_2_partitions_from_bytecode,
    matmul_tanh_4_partitions_from_bytecode,
);
