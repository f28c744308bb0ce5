//! The matmul+tanh program JAX lowered for 2 and 4 partitions (Shardy
//! shardings) compiles and runs SPMD, and its shards reassemble to JAX's
//! result (`tests/fixtures/gen_runtime_fixtures.py`).

use pw_runtime::array::execute;
use pw_runtime::pjrt::{CompileOptions, Program};
use pw_runtime::{npy, Array, ArraySpec, CopySemantics, DType, HostArray, Mesh, Sharding};
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

fn named(mesh: &Mesh, dims: &[Vec<String>]) -> Sharding {
    Sharding::Named {
        mesh: mesh.clone(),
        dims: dims.to_vec(),
    }
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
        let axes: Vec<(&str, usize)> = case.axes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
        let mesh = Mesh::new(&axes, &devices).unwrap();
        let x = npy::load_array(
            &client,
            fixture("matmul_tanh_x.npy"),
            &named(&mesh, &case.x),
        )
        .unwrap();
        let w = npy::load_array(
            &client,
            fixture("matmul_tanh_w.npy"),
            &named(&mesh, &case.w),
        )
        .unwrap();
        let expected = npy::read(fixture(&format!("matmul_tanh_{partitions}_out.npy"))).unwrap();

        let program = program(partitions, form);
        let exe = client
            .compile(&program, &CompileOptions::spmd(&devices).unwrap())
            .unwrap();
        assert_eq!(exe.devices(), devices.as_slice());
        assert_eq!(
            exe.executable().unwrap().num_partitions().unwrap(),
            partitions
        );

        let out_spec = ArraySpec::new(DType::F32, expected.shape(), named(&mesh, &case.out));
        let out = execute(&exe, &[&x, &w], std::slice::from_ref(&out_spec)).unwrap();
        let result = &out[0];
        assert_eq!(result.num_shards(), partitions);
        assert_close(&result.to_host().unwrap(), &expected, "reassembled result");
        // Each shard holds its own box of JAX's result.
        for (shard, domain) in result
            .disassemble(CopySemantics::ReuseInput)
            .unwrap()
            .iter()
            .zip(result.shard_domains())
        {
            assert_close(
                &shard.to_host().unwrap(),
                &expected.slice(domain).unwrap(),
                "shard",
            );
        }

        // The executable survives serialization and runs again.
        let bytes = exe.serialize().unwrap();
        let again = client.deserialize_executable(&bytes, None).unwrap();
        let out2 = execute(&again, &[&x, &w], &[out_spec]).unwrap();
        assert_close(&out2[0].to_host().unwrap(), &expected, "after deserialize");
        // Inputs are still usable: execution never donates them.
        assert_eq!(
            x.to_host().unwrap(),
            npy::read(fixture("matmul_tanh_x.npy")).unwrap()
        );
        let _: Vec<Array> = out2;
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
