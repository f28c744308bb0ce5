//! The PJRT binding itself: plugin, client, devices, memories, transfers,
//! events, compilation, execution and serialization.

use std::sync::mpsc;
use std::time::Duration;

use pw_core::DType;
use pw_exec::HostArray;
use pw_pjrt::{ApiVersion, Error};
use pw_pjrt::{
    Buffer, Client, ClientOptions, CompileOptions, DeviceAssignment, Event, ExecuteOptions,
    NamedValue, Program, COVERED_FUNCTIONS,
};

use crate::common::{assert_no_leaks, Target, AFFINE};

fn f32_buffer(client: &Client, values: &[f32], device: usize) -> Buffer {
    let host = HostArray::from_slice(&[values.len()], values).unwrap();
    client
        .buffer_from_host(
            host.bytes(),
            DType::F32,
            host.shape(),
            &client.devices()[device],
        )
        .unwrap()
}

fn f32_values(buffer: &Buffer) -> Vec<f32> {
    HostArray::new(
        DType::F32,
        &buffer.dims().unwrap(),
        buffer.to_host().unwrap(),
    )
    .unwrap()
    .to_vec()
    .unwrap()
}

fn plugin_version(target: Target) {
    let plugin = target.plugin();
    let expected = match target {
        Target::Api0115 => ApiVersion {
            major: 0,
            minor: 115,
        },
        Target::Api081 => ApiVersion {
            major: 0,
            minor: 81,
        },
    };
    assert_eq!(plugin.version(), expected);
    // Loading the same file again gives the same plugin (initialized once).
    assert_eq!(target.plugin().path(), plugin.path());
    let attributes = plugin.attributes();
    assert!(
        attributes
            .iter()
            .any(|(name, _)| name == "stablehlo_current_version"),
        "{attributes:?}"
    );
    assert!(plugin.provides("PJRT_LoadedExecutable_Execute"));
    // Event_Create/Set arrived in 0.89.
    assert_eq!(
        plugin.provides("PJRT_Event_Create"),
        target == Target::Api0115
    );
    assert!(COVERED_FUNCTIONS.contains(&"PJRT_Client_Compile"));
}

fn devices_and_memories(target: Target) {
    for n in [1, 4, 8] {
        let client = target.client(n);
        assert_eq!(client.platform_name(), "cpu");
        let devices = client.devices();
        assert_eq!(devices.len(), n);
        assert_eq!(client.addressable_devices(), devices);
        for (i, device) in devices.iter().enumerate() {
            assert_eq!(device.id(), i as i32);
            assert_eq!(device.kind(), "cpu");
            assert!(device.is_addressable());
            assert_eq!(device.process_index(), 0);
            let default = device
                .default_memory()
                .expect("CPU devices have a default memory");
            assert!(device.memories().contains(&default));
            assert!(
                default.devices().contains(device),
                "{default:?} not addressable by {device:?}"
            );
            assert_eq!(client.device_by_id(device.id()).unwrap(), *device);
        }
        assert!(client.memories().len() >= n);
        assert!(client.memories().iter().any(|m| m.kind() == "device"));
    }
    // Options reach the plugin; the 0.115 plugin rejects names it does not
    // know, the 0.81 one ignores them.
    let plugin = target.plugin();
    let options = ClientOptions::new()
        .cpu_device_count(2)
        .with("pw_unknown_option", NamedValue::Bool(true));
    match (target, Client::new(&plugin, &options)) {
        (Target::Api081, Ok(client)) => assert_eq!(client.devices().len(), 2),
        (Target::Api0115, Err(err)) => {
            assert!(
                matches!(
                    err,
                    Error::Pjrt {
                        function: "PJRT_Client_Create",
                        ..
                    }
                ),
                "{err}"
            );
            assert!(err.to_string().contains("pw_unknown_option"), "{err}");
        }
        (_, other) => panic!("unexpected {:?}", other.map(|c| c.devices().len())),
    }
}

/// Host bytes of `n` elements of `dtype`: varied, and valid for it (a
/// `bool` is 0 or 1, a sub-byte element only its low bits).
fn host_bytes(dtype: DType, n: usize) -> Vec<u8> {
    let mask = match dtype {
        DType::Bool => 1,
        d if d.is_sub_byte() => (1u8 << d.bits()) - 1,
        _ => u8::MAX,
    };
    (0..n * dtype.size_in_bytes())
        .map(|i| (i * 37 % 251) as u8 & mask)
        .collect()
}

fn host_round_trip_every_dtype(target: Target) {
    let client = target.client(2);
    for dtype in DType::ALL {
        let bytes = host_bytes(dtype, 6);
        for device in client.devices() {
            let buffer = client
                .buffer_from_host(&bytes, dtype, &[2, 3], &device)
                .unwrap();
            assert_eq!(buffer.dtype().unwrap(), dtype);
            assert_eq!(buffer.dims().unwrap(), vec![2, 3]);
            assert_eq!(buffer.device().unwrap(), device);
            assert_eq!(Some(buffer.memory().unwrap()), device.default_memory());
            // Sub-byte elements are packed on the device.
            assert!(buffer.on_device_size().unwrap() >= (6 * dtype.bits()).div_ceil(8));
            assert_eq!(buffer.to_host().unwrap(), bytes, "{dtype} on {device:?}");
        }
    }
    // Scalars and empty arrays too.
    let scalar = client
        .buffer_from_host(&7i32.to_ne_bytes(), DType::I32, &[], &client.devices()[0])
        .unwrap();
    assert_eq!(scalar.to_host().unwrap(), 7i32.to_ne_bytes());
    let empty = client
        .buffer_from_host(&[], DType::F32, &[0, 3], &client.devices()[0])
        .unwrap();
    assert!(empty.to_host().unwrap().is_empty());
    drop((scalar, empty));
    assert_no_leaks(&client);
}

fn device_to_device_copies(target: Target) {
    let client = target.client(4);
    {
        let source = f32_buffer(&client, &[1.0, 2.0, 3.0, 4.0], 0);
        for device in client.devices() {
            let copy = source.copy_to_device(&device).unwrap();
            assert_eq!(copy.device().unwrap(), device);
            assert_eq!(f32_values(&copy), vec![1.0, 2.0, 3.0, 4.0]);
            let memory = device.default_memory().unwrap();
            let again = copy.copy_to_memory(&memory).unwrap();
            assert_eq!(again.memory().unwrap(), memory);
            assert_eq!(f32_values(&again), vec![1.0, 2.0, 3.0, 4.0]);
            assert_eq!(
                f32_values(&copy.duplicate().unwrap()),
                vec![1.0, 2.0, 3.0, 4.0]
            );
        }
        // Delete frees the memory; the handle reports it and reads fail.
        source.delete().unwrap();
        assert!(source.is_deleted().unwrap());
        // (The 0.115 plugin reports it when the transfer is awaited, 0.81 at once.)
        let err = source.to_host().unwrap_err();
        assert!(matches!(err, Error::Pjrt { .. }), "{err}");
        assert!(err.to_string().contains("deleted"), "{err}");
    }
    assert_no_leaks(&client);
}

fn events(target: Target) {
    let client = target.client(2);
    {
        let source = f32_buffer(&client, &[1.0, 2.0, 3.0, 4.0], 0);
        let ready = source.ready_event().unwrap();
        ready.wait().unwrap();
        assert!(ready.is_ready().unwrap());
        // A callback sees the status (here: immediately, the event being done).
        let (tx, rx) = mpsc::channel();
        ready
            .on_ready(move |status| tx.send(status.is_ok()).unwrap())
            .unwrap();
        assert!(rx.recv_timeout(Duration::from_secs(10)).unwrap());

        // Events as dependencies: a copy starts once the joined readiness of
        // two buffers is reached, from the callback.
        let other = f32_buffer(&client, &[5.0, 6.0, 7.0, 8.0], 1);
        let events = [source.ready_event().unwrap(), other.ready_event().unwrap()];
        match Event::after_all(&client, &[&events[0], &events[1]]) {
            Ok(joined) => {
                let (tx, rx) = mpsc::channel();
                let dst = client.devices()[1].clone();
                let source = std::sync::Arc::new(source);
                let src = std::sync::Arc::clone(&source);
                joined
                    .on_ready(move |status| {
                        status.unwrap();
                        tx.send(src.copy_to_device(&dst).unwrap()).unwrap();
                    })
                    .unwrap();
                let copied = rx.recv_timeout(Duration::from_secs(10)).unwrap();
                assert_eq!(f32_values(&copied), vec![1.0, 2.0, 3.0, 4.0]);
                joined.wait().unwrap();
                assert!(target == Target::Api0115);
            }
            Err(err) => {
                // The 0.81 plugin predates PJRT_Event_Create: reported, not crashed.
                assert_eq!(target, Target::Api081);
                assert!(
                    matches!(
                        err,
                        Error::Unsupported {
                            function: "PJRT_Event_Create",
                            ..
                        }
                    ),
                    "{err}"
                );
                assert!(err.to_string().contains("C API 0.81"), "{err}");
                Event::wait_all(&events).unwrap();
            }
        }
    }
    assert_no_leaks(&client);
}

fn compile_and_execute(target: Target) {
    let client = target.client(4);
    {
        let device = client.devices()[2].clone();
        let exe = client
            .compile(
                &Program::mlir_text(AFFINE),
                &CompileOptions::single_device(&device).unwrap(),
            )
            .unwrap();
        assert_eq!(exe.devices(), std::slice::from_ref(&device));
        assert_eq!(exe.num_outputs(), 1);
        let meta = exe.executable().unwrap();
        assert_eq!(meta.num_replicas().unwrap(), 1);
        assert_eq!(meta.num_partitions().unwrap(), 1);
        assert_eq!(
            meta.output_types().unwrap(),
            vec![pw_pjrt::OutputType::Array(DType::F32)]
        );
        assert_eq!(meta.output_dims().unwrap(), vec![vec![4]]);
        assert!(!meta.name().unwrap().is_empty());
        // What the compiler planned: an f32[4] in, one out, and (where the
        // plugin implements it) 8 flops of `x * 2 + 1`.
        let memory = meta.compiled_memory_stats().unwrap();
        assert_eq!((memory.arguments, memory.outputs), (16, 16), "{memory:?}");
        match (target, meta.cost_analysis()) {
            (Target::Api081, Ok(cost)) => assert!(
                cost.iter()
                    .any(|(k, v)| k == "flops" && *v == NamedValue::Float(8.0)),
                "{cost:?}"
            ),
            (Target::Api0115, Err(Error::Pjrt { code, .. })) => {
                assert_eq!(code, pw_pjrt::ErrorCode::Unimplemented)
            }
            (_, other) => panic!("unexpected cost analysis {other:?}"),
        }
        drop(meta);

        let x = f32_buffer(&client, &[0.0, 1.0, 2.0, 3.0], 2);
        // Execute returns output buffers and per-device completion events
        // without waiting; readiness is then awaited through the events.
        let run = exe.execute(&[vec![&x]]).unwrap();
        assert_eq!(run.outputs.len(), 1);
        assert_eq!(run.done.len(), 1);
        run.outputs[0][0].ready_event().unwrap().wait().unwrap();
        run.wait().unwrap();
        assert_eq!(f32_values(&run.outputs[0][0]), vec![1.0, 3.0, 5.0, 7.0]);
        assert_eq!(run.outputs[0][0].device().unwrap(), device);

        // One program on two devices: two replicas, one argument list each.
        let two = CompileOptions {
            num_replicas: 2,
            device_assignment: Some(DeviceAssignment::new(vec![vec![0], vec![3]]).unwrap()),
            ..CompileOptions::default()
        };
        let exe2 = client.compile(&Program::mlir_text(AFFINE), &two).unwrap();
        let (a, b) = (
            f32_buffer(&client, &[1.0; 4], 0),
            f32_buffer(&client, &[2.0; 4], 3),
        );
        let run = exe2
            .execute_with(&[&[&a], &[&b]], &ExecuteOptions::default())
            .unwrap();
        run.wait().unwrap();
        assert_eq!(f32_values(&run.outputs[0][0]), vec![3.0; 4]);
        assert_eq!(f32_values(&run.outputs[1][0]), vec![5.0; 4]);

        // The plugin's default assignment for 1x2.
        let default = client.default_device_assignment(1, 2).unwrap();
        assert_eq!(default.len(), 1);
        assert_eq!(default[0].len(), 2);
    }
    assert_no_leaks(&client);
}

fn serialize_round_trip(target: Target) {
    let client = target.client(2);
    {
        let device = client.devices()[1].clone();
        let options = CompileOptions::single_device(&device).unwrap();
        let exe = client
            .compile(&Program::mlir_text(AFFINE), &options)
            .unwrap();
        let bytes = exe.serialize().unwrap();
        assert!(!bytes.is_empty());
        drop(exe);
        let loaded = client.deserialize_executable(&bytes, None).unwrap();
        assert_eq!(loaded.devices(), &[device]);
        let x = f32_buffer(&client, &[1.0, 1.0, 2.0, 2.0], 1);
        let run = loaded.execute(&[vec![&x]]).unwrap();
        assert_eq!(f32_values(&run.outputs[0][0]), vec![3.0, 3.0, 5.0, 5.0]);
        // With overridden compile options.
        let again = client
            .deserialize_executable(&bytes, Some(&options))
            .unwrap();
        assert_eq!(again.num_outputs(), 1);
        // Garbage is a plugin error, not a crash.
        let err = client
            .deserialize_executable(b"not an executable", None)
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Pjrt {
                    function: "PJRT_Executable_DeserializeAndLoad",
                    ..
                }
            ),
            "{err}"
        );
    }
    assert_no_leaks(&client);
}

/// Many threads use one client at once (the handles are `Send + Sync`).
fn concurrent_use(target: Target) {
    let client = target.client(4);
    {
        let exe = client
            .compile(
                &Program::mlir_text(AFFINE),
                &CompileOptions::single_device(&client.devices()[0]).unwrap(),
            )
            .unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let (client, exe) = (&client, &exe);
                s.spawn(move || {
                    for i in 0..20 {
                        let x = f32_buffer(client, &[t as f32, i as f32, 0.0, 1.0], 0);
                        let out = exe.execute(&[vec![&x]]).unwrap();
                        let moved = out.outputs[0][0]
                            .copy_to_device(&client.devices()[1 + t % 3])
                            .unwrap();
                        assert_eq!(
                            f32_values(&moved),
                            vec![2.0 * t as f32 + 1.0, 2.0 * i as f32 + 1.0, 1.0, 3.0]
                        );
                    }
                });
            }
        });
    }
    assert_no_leaks(&client);
}

/// A buffer created before its bytes: an execution enqueued on it at once
/// waits for the chunks, and computes on them; a failed or abandoned
/// transfer fails its consumers instead of leaving them waiting; chunks that
/// do not fit are refused.
fn async_transfers(target: Target) {
    let client = target.client(2);
    let device = client.devices()[1].clone();
    let options = CompileOptions::for_device_ids(&[device.id()], false).unwrap();
    let exe = client
        .compile(&Program::mlir_text(AFFINE), &options)
        .unwrap();
    {
        let (mut transfer, x) = client
            .buffer_for_async_transfer(&device, DType::F32, &[4])
            .unwrap();
        assert_eq!(transfer.size(), 16);
        let run = exe.execute(&[vec![&x]]).unwrap();
        let bytes = HostArray::from_slice(&[4], &[0.0f32, 1.0, 2.0, 3.0])
            .unwrap()
            .into_bytes();
        // Out of order or overrunning chunks are refused; nothing is written.
        assert!(transfer.write(vec![0u8; 20], true).is_err());
        assert!(transfer.write(bytes[..8].to_vec(), true).is_err());
        transfer.write(bytes[..8].to_vec(), false).unwrap();
        transfer.write(bytes[8..].to_vec(), true).unwrap();
        assert!(transfer.is_finished());
        run.wait().unwrap();
        assert_eq!(f32_values(&run.outputs[0][0]), vec![1.0, 3.0, 5.0, 7.0]);
        assert_eq!(device, x.device().unwrap());
    }
    // Sub-byte types are packed on the device: chunks of host bytes that
    // end inside a device byte still land where they belong.
    for dtype in DType::ALL.into_iter().filter(|d| d.is_sub_byte()) {
        let bytes = host_bytes(dtype, 13);
        let (mut transfer, x) = client
            .buffer_for_async_transfer(&device, dtype, &[13])
            .unwrap();
        assert_eq!(transfer.size(), 13);
        for (i, chunk) in bytes.chunks(3).enumerate() {
            transfer.write(chunk.to_vec(), 3 * (i + 1) >= 13).unwrap();
        }
        assert!(x.on_device_size().unwrap() < 13, "{dtype} is not packed");
        assert_eq!(x.to_host().unwrap(), bytes, "{dtype}");
    }
    // Failed, then dropped unfinished: the consumers fail with the reason.
    for fail in [true, false] {
        let (mut transfer, x) = client
            .buffer_for_async_transfer(&device, DType::F32, &[4])
            .unwrap();
        let run = exe.execute(&[vec![&x]]).unwrap();
        transfer.write(vec![0u8; 4], false).unwrap();
        if fail {
            transfer.fail("the sender went away").unwrap();
        }
        drop(transfer);
        let err = run.wait().unwrap_err().to_string();
        let expected = if fail {
            "the sender went away"
        } else {
            "abandoned"
        };
        assert!(err.contains(expected), "{err}");
        assert!(x.to_host().is_err());
    }
    drop(exe);
    assert_no_leaks(&client);
}

/// Reading a host-memory buffer where it lies gives the bytes a copy
/// gives, for every dtype and rank.
fn in_place_reads_match_copies(target: Target) {
    let client = target.client(1);
    let device = &client.devices()[0];
    for dtype in DType::ALL {
        for dims in [vec![], vec![5], vec![2, 3], vec![2, 0, 4]] {
            let bytes = host_bytes(dtype, dims.iter().product());
            let b = client
                .buffer_from_host(&bytes, dtype, &dims, device)
                .unwrap();
            let copied = b.to_host_copy().unwrap();
            assert_eq!(copied, bytes, "{dtype}{dims:?}");
            if let Some(in_place) = b.read_in_place(<[u8]>::to_vec).unwrap() {
                assert_eq!(in_place, bytes, "{dtype}{dims:?}");
            }
            assert_eq!(b.to_host().unwrap(), bytes, "{dtype}{dims:?}");
        }
    }
    assert_no_leaks(&client);
}

/// `Client::open`: a CPU plugin makes the devices asked for, in one client
/// or two.
fn open_with_a_device_count(target: Target) {
    let plugin = target.plugin();
    let options = ClientOptions::new();
    let default = Client::open(&plugin, &options, None).expect("client");
    let n = default.addressable_devices().len();
    drop(default);
    for wanted in [n, n + 2] {
        let client = Client::open(&plugin, &options, Some(wanted)).expect("client");
        assert_eq!(client.addressable_devices().len(), wanted);
        assert_eq!(client.platform_name(), "cpu");
    }
}

#[test]
fn client_options_parse_from_text() {
    let parsed = ClientOptions::parse(
        " preallocate=false; memory_fraction=0.5;visible_devices=[0, 1];n=8;s=\"8\";allocator=bfc;",
    )
    .expect("parses");
    assert_eq!(
        parsed.values(),
        &[
            ("preallocate".to_owned(), NamedValue::Bool(false)),
            ("memory_fraction".to_owned(), NamedValue::Float(0.5)),
            (
                "visible_devices".to_owned(),
                NamedValue::Int64List(vec![0, 1])
            ),
            ("n".to_owned(), NamedValue::Int64(8)),
            ("s".to_owned(), NamedValue::String("8".into())),
            ("allocator".to_owned(), NamedValue::String("bfc".into())),
        ]
    );
    assert!(ClientOptions::parse("").expect("empty").values().is_empty());
    for (bad, says) in [
        ("preallocate", "not name=value"),
        ("=3", "has no name"),
        ("visible_devices=[0,x]", "`x` in [0,x] is not an int64"),
    ] {
        let err = ClientOptions::parse(bad).expect_err(bad);
        assert!(err.contains(says), "{bad}: {err}");
    }
}

on_both_plugins!(
    open_with_a_device_count,
    in_place_reads_match_copies,
    async_transfers,
    plugin_version,
    devices_and_memories,
    host_round_trip_every_dtype,
    device_to_device_copies,
    events,
    compile_and_execute,
    serialize_round_trip,
    concurrent_use,
);
