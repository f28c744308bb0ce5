//! Every array operation, checked by values, for f32, bf16, i32 and bool on
//! 1, 2 and 4 devices, under every copy semantics it accepts.

use half::bf16;
use pw_runtime::pjrt::{Client, Device};
use pw_runtime::{
    Array, ArraySpec, CopySemantics, DType, Error, HostArray, Mesh, Region, RemapMapping,
    RemapPlan, Sharding,
};

use crate::common::{assert_no_leaks, Target};

/// Divisible by every device count tested.
const COLS: usize = 8;

const SEMANTICS: [CopySemantics; 3] = [
    CopySemantics::AlwaysCopy,
    CopySemantics::ReuseInput,
    CopySemantics::DonateInput,
];

/// Deterministic, distinct-looking values of `dtype` for `shape`.
fn sample(dtype: DType, shape: &[usize]) -> HostArray {
    let n: usize = shape.iter().product();
    match dtype {
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
    }
    .unwrap()
}

/// A 2-D shape whose dimensions split over `n` devices in every sharding used.
fn shape_for(n: usize) -> Vec<usize> {
    vec![4 * n, COLS]
}

/// The shardings every operation is tried with, on `devices`.
fn shardings(devices: &[Device]) -> Vec<(String, Sharding)> {
    let n = devices.len();
    let line = Mesh::new(&[("x", n)], devices).unwrap();
    let mut out = vec![
        ("single".into(), Sharding::SingleDevice(devices[0].clone())),
        ("rows".into(), Sharding::named(&line, &[&["x"]])),
        ("cols".into(), Sharding::named(&line, &[&[], &["x"]])),
        ("replicated".into(), Sharding::replicated(devices).unwrap()),
    ];
    if n == 4 {
        let grid = Mesh::new(&[("a", 2), ("b", 2)], devices).unwrap();
        out.push(("grid".into(), Sharding::named(&grid, &[&["a"], &["b"]])));
        out.push((
            "rows over a,b".into(),
            Sharding::named(&grid, &[&["a", "b"]]),
        ));
        out.push((
            "rows over a, replicated over b".into(),
            Sharding::named(&grid, &[&["a"]]),
        ));
    }
    if n >= 2 {
        // Uneven rows: device 0 gets 1 row, the last device the rest.
        let rows = 4 * n;
        let mut domains = Vec::new();
        let mut at = 0;
        for i in 0..n {
            let take = if i + 1 == n { rows - at } else { 1 };
            domains.push(Region {
                offsets: vec![at as i64, 0],
                sizes: vec![take as i64, COLS as i64],
            });
            at += take;
        }
        out.push((
            "explicit uneven".into(),
            Sharding::explicit(devices, domains),
        ));
    }
    out
}

/// Runs every operation for one dtype on one device count.
fn array_ops(target: Target, dtype: DType, n: usize) {
    let client = target.client(4);
    {
        let devices = client.first_devices(n, "the test").unwrap();
        let shape = shape_for(n);
        let host = sample(dtype, &shape);
        let all = shardings(&devices);
        make_and_copy_to_host(&client, &host, &all);
        assemble_disassemble(&client, &host, &all);
        fully_replicated_shard(&client, &host, &devices);
        reshard(&client, &host, &all);
        remap(&client, &host, &devices);
        bitcast(&client, &host, &devices);
    }
    assert_no_leaks(&client);
}

fn make_and_copy_to_host(client: &Client, host: &HostArray, all: &[(String, Sharding)]) {
    for (name, sharding) in all {
        let array = Array::from_host(client, host, sharding).unwrap();
        assert_eq!(array.dtype(), host.dtype());
        assert_eq!(array.shape(), host.shape());
        assert!(array.layout().is_row_major());
        assert_eq!(array.num_shards(), sharding.num_shards());
        assert_eq!(&array.to_host().unwrap(), host, "{name}: copy to host");
        // Every shard holds exactly its box, on its device.
        for ((buffer, domain), device) in array
            .buffers()
            .unwrap()
            .iter()
            .zip(array.shard_domains())
            .zip(sharding.devices())
        {
            assert_eq!(&buffer.device().unwrap(), device, "{name}");
            let shape: Vec<usize> = domain.sizes.iter().map(|&s| s as usize).collect();
            assert_eq!(buffer.dims().unwrap(), shape, "{name}");
            let part = HostArray::new(host.dtype(), &shape, buffer.to_host().unwrap()).unwrap();
            assert_eq!(
                part,
                host.slice(domain).unwrap(),
                "{name}: shard {domain:?}"
            );
        }
    }
}

fn assemble_disassemble(client: &Client, host: &HostArray, all: &[(String, Sharding)]) {
    for (name, sharding) in all {
        for semantics in SEMANTICS {
            let array = Array::from_host(client, host, sharding).unwrap();
            let parts = array.disassemble(semantics).unwrap();
            assert_eq!(parts.len(), sharding.num_shards());
            for ((part, domain), device) in parts
                .iter()
                .zip(array.shard_domains())
                .zip(sharding.devices())
            {
                assert_eq!(part.sharding(), &Sharding::SingleDevice(device.clone()));
                assert_eq!(
                    part.to_host().unwrap(),
                    host.slice(domain).unwrap(),
                    "{name} {semantics:?}"
                );
            }
            check_input_after(&array, host, semantics, &format!("disassemble {name}"));

            let spec = ArraySpec::new(host.dtype(), host.shape(), sharding.clone());
            let whole = Array::assemble(spec, &parts, semantics).unwrap();
            assert_eq!(
                &whole.to_host().unwrap(),
                host,
                "assemble {name} {semantics:?}"
            );
            for part in &parts {
                assert_eq!(part.is_donated(), semantics == CopySemantics::DonateInput);
            }
        }
    }
    // A shard of the wrong shape is refused, and nothing is donated.
    let (_, rows) = &all[1];
    if rows.num_shards() > 1 {
        let parts = Array::from_host(client, host, rows)
            .unwrap()
            .disassemble(CopySemantics::ReuseInput)
            .unwrap();
        let mut wrong = parts.clone();
        wrong.swap(0, 1);
        let spec = ArraySpec::new(host.dtype(), host.shape(), rows.clone());
        assert!(Array::assemble(spec, &wrong, CopySemantics::DonateInput).is_err());
        assert!(parts.iter().all(|p| !p.is_donated()));
    }
}

/// After an operation: the input is intact unless it was donated.
fn check_input_after(input: &Array, host: &HostArray, semantics: CopySemantics, what: &str) {
    if semantics == CopySemantics::DonateInput {
        assert!(input.is_donated(), "{what}: input not marked donated");
        let err = input.to_host().unwrap_err();
        assert!(matches!(err, Error::Donated { .. }), "{what}: {err}");
        assert!(err.to_string().contains("was donated"), "{err}");
    } else {
        assert_eq!(&input.to_host().unwrap(), host, "{what}: input changed");
    }
}

fn fully_replicated_shard(client: &Client, host: &HostArray, devices: &[Device]) {
    for semantics in SEMANTICS {
        let array =
            Array::from_host(client, host, &Sharding::replicated(devices).unwrap()).unwrap();
        let shard = array.fully_replicated_shard(semantics).unwrap();
        assert_eq!(
            shard.sharding(),
            &Sharding::SingleDevice(devices[0].clone())
        );
        assert_eq!(&shard.to_host().unwrap(), host);
        check_input_after(&array, host, semantics, "fully_replicated_shard");
    }
    if devices.len() > 1 {
        let line = Mesh::new(&[("x", devices.len())], devices).unwrap();
        let split = Array::from_host(client, host, &Sharding::named(&line, &[&["x"]])).unwrap();
        let err = split
            .fully_replicated_shard(CopySemantics::ReuseInput)
            .unwrap_err();
        assert!(err.to_string().contains("not fully replicated"), "{err}");
    }
}

fn reshard(client: &Client, host: &HostArray, all: &[(String, Sharding)]) {
    for (from_name, from) in all {
        for (to_name, to) in all {
            for semantics in SEMANTICS {
                let array = Array::from_host(client, host, from).unwrap();
                let moved = array.reshard(to, semantics).unwrap();
                assert_eq!(moved.sharding(), to);
                let what = format!("reshard {from_name} -> {to_name} {semantics:?}");
                assert_eq!(&moved.to_host().unwrap(), host, "{what}");
                for (buffer, device) in moved.buffers().unwrap().iter().zip(to.devices()) {
                    assert_eq!(&buffer.device().unwrap(), device, "{what}");
                }
                check_input_after(&array, host, semantics, &what);
            }
        }
    }
}

/// Splits a row-sharded array into single-device arrays with `remap`, and
/// glues them back.
fn remap(client: &Client, host: &HostArray, devices: &[Device]) {
    let n = devices.len();
    let line = Mesh::new(&[("x", n)], devices).unwrap();
    let rows = Sharding::named(&line, &[&["x"]]);
    let shard_shape = vec![host.shape()[0] / n, host.shape()[1]];
    let singles: Vec<ArraySpec> = devices
        .iter()
        .map(|d| {
            ArraySpec::new(
                host.dtype(),
                &shard_shape,
                Sharding::SingleDevice(d.clone()),
            )
        })
        .collect();
    let split = RemapPlan {
        outputs: singles.clone(),
        mappings: (0..n)
            .map(|i| RemapMapping {
                in_array: 0,
                out_array: i,
                from: vec![i],
                to: vec![0],
            })
            .collect(),
    };
    let join = RemapPlan {
        outputs: vec![ArraySpec::new(host.dtype(), host.shape(), rows.clone())],
        mappings: (0..n)
            .map(|i| RemapMapping {
                in_array: i,
                out_array: 0,
                from: vec![0],
                to: vec![i],
            })
            .collect(),
    };
    for semantics in [CopySemantics::ReuseInput, CopySemantics::DonateInput] {
        let array = Array::from_host(client, host, &rows).unwrap();
        let parts = Array::remap(std::slice::from_ref(&array), &split, semantics).unwrap();
        for (i, part) in parts.iter().enumerate() {
            assert_eq!(
                part.to_host().unwrap(),
                host.slice(&array.shard_domains()[i]).unwrap(),
                "remap split {semantics:?}"
            );
        }
        check_input_after(&array, host, semantics, "remap split");
        let joined = Array::remap(&parts, &join, semantics).unwrap();
        assert_eq!(
            &joined[0].to_host().unwrap(),
            host,
            "remap join {semantics:?}"
        );
        assert_eq!(
            parts[0].is_donated(),
            semantics == CopySemantics::DonateInput
        );
    }
    let array = Array::from_host(client, host, &rows).unwrap();
    let err = Array::remap(
        std::slice::from_ref(&array),
        &split,
        CopySemantics::AlwaysCopy,
    )
    .unwrap_err();
    assert!(err.to_string().contains("metadata-only"), "{err}");
    // A plan that leaves an output shard empty is refused before donating.
    let incomplete = RemapPlan {
        outputs: singles,
        mappings: vec![],
    };
    let err = Array::remap(
        std::slice::from_ref(&array),
        &incomplete,
        CopySemantics::DonateInput,
    )
    .unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
    assert!(!array.is_donated());
}

/// Reinterprets each dtype as another of the same width and checks the bits.
fn bitcast(client: &Client, host: &HostArray, devices: &[Device]) {
    let n = devices.len();
    let line = Mesh::new(&[("x", n)], devices).unwrap();
    let rows = Sharding::named(&line, &[&["x"]]);
    let (as_dtype, expect): (DType, HostArray) = match host.dtype() {
        DType::F32 => (
            DType::I32,
            HostArray::from_slice(
                host.shape(),
                &host
                    .to_vec::<f32>()
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits() as i32)
                    .collect::<Vec<_>>(),
            )
            .unwrap(),
        ),
        DType::I32 => (
            DType::F32,
            HostArray::from_slice(
                host.shape(),
                &host
                    .to_vec::<i32>()
                    .unwrap()
                    .iter()
                    .map(|v| f32::from_bits(*v as u32))
                    .collect::<Vec<_>>(),
            )
            .unwrap(),
        ),
        DType::BF16 => (
            DType::U16,
            HostArray::from_slice(
                host.shape(),
                &host
                    .to_vec::<bf16>()
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect::<Vec<_>>(),
            )
            .unwrap(),
        ),
        DType::Bool => (
            DType::U8,
            HostArray::from_slice(
                host.shape(),
                &host
                    .to_vec::<bool>()
                    .unwrap()
                    .iter()
                    .map(|v| u8::from(*v))
                    .collect::<Vec<_>>(),
            )
            .unwrap(),
        ),
        other => panic!("no bitcast for {other}"),
    };
    for semantics in [CopySemantics::ReuseInput, CopySemantics::DonateInput] {
        let array = Array::from_host(client, host, &rows).unwrap();
        let spec = ArraySpec::new(as_dtype, host.shape(), rows.clone());
        let cast = array.bitcast(spec, semantics).unwrap();
        assert_eq!(cast.dtype(), as_dtype);
        assert_eq!(cast.to_host().unwrap(), expect, "bitcast {semantics:?}");
        check_input_after(&array, host, semantics, "bitcast");
        // The view is a real PJRT buffer of the new type.
        assert_eq!(cast.buffers().unwrap()[0].dtype().unwrap(), as_dtype);
        // And back, which must give the original values.
        let back = cast
            .bitcast(
                ArraySpec::new(host.dtype(), host.shape(), rows.clone()),
                CopySemantics::ReuseInput,
            )
            .unwrap();
        assert_eq!(&back.to_host().unwrap(), host);
    }
    // Reshaping while bitcasting: [4n, 8] -> [4n, 4, 2] keeps every shard's bytes.
    let array = Array::from_host(client, host, &rows).unwrap();
    let mut shape3 = host.shape().to_vec();
    shape3[1] = COLS / 2;
    shape3.push(2);
    let cast = array
        .bitcast(
            ArraySpec::new(host.dtype(), &shape3, rows.clone()),
            CopySemantics::ReuseInput,
        )
        .unwrap();
    assert_eq!(
        cast.to_host().unwrap(),
        host.clone().reinterpret(host.dtype(), &shape3).unwrap()
    );
    // Errors: copying is not metadata-only; byte sizes must match.
    let spec = ArraySpec::new(host.dtype(), host.shape(), rows.clone());
    assert!(array.bitcast(spec, CopySemantics::AlwaysCopy).is_err());
    let wrong = ArraySpec::new(DType::F32, &[host.shape()[0], 1], rows);
    let err = array
        .bitcast(wrong, CopySemantics::DonateInput)
        .unwrap_err();
    assert!(err.to_string().contains("bytes"), "{err}");
    assert!(!array.is_donated());
}

macro_rules! dtype_device_tests {
    ($($name:ident: $dtype:expr, $n:expr;)*) => {
        $(fn $name(target: Target) { array_ops(target, $dtype, $n) })*
        on_both_plugins!($($name),*);
    };
}

dtype_device_tests! {
    f32_on_1_device: DType::F32, 1;
    f32_on_2_devices: DType::F32, 2;
    f32_on_4_devices: DType::F32, 4;
    bf16_on_1_device: DType::BF16, 1;
    bf16_on_2_devices: DType::BF16, 2;
    bf16_on_4_devices: DType::BF16, 4;
    i32_on_1_device: DType::I32, 1;
    i32_on_2_devices: DType::I32, 2;
    i32_on_4_devices: DType::I32, 4;
    bool_on_1_device: DType::Bool, 1;
    bool_on_2_devices: DType::Bool, 2;
    bool_on_4_devices: DType::Bool, 4;
}
