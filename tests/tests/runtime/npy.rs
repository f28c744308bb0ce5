//! `.npy` files in and out, including what NumPy and ml_dtypes write.

use half::{bf16, f16};
use pw_runtime::{npy, DType, Error, HostArray, Mesh, Sharding};

use crate::common::{assert_no_leaks, fixture, Target};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pw-runtime-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn base() -> Vec<i64> {
    (0..12).collect()
}

#[test]
fn reads_what_numpy_writes() {
    let read = |name: &str| npy::read(fixture(name)).unwrap();
    let bf = read("npy_bf16.npy");
    assert_eq!((bf.dtype(), bf.shape()), (DType::BF16, &[3, 4][..]));
    assert_eq!(
        bf.to_vec::<bf16>().unwrap(),
        base()
            .iter()
            .map(|&i| bf16::from_f32(i as f32 * 0.25 - 1.0))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        read("npy_bool.npy").to_vec::<bool>().unwrap(),
        base().iter().map(|i| i % 3 == 0).collect::<Vec<_>>()
    );
    assert_eq!(
        read("npy_i32.npy").to_vec::<i32>().unwrap(),
        base()
            .iter()
            .map(|&i| i as i32 * 7 - 20)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        read("npy_f16.npy").to_vec::<f16>().unwrap(),
        base()
            .iter()
            .map(|&i| f16::from_f32(i as f32 * 0.5))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        read("npy_u8.npy").to_vec::<u8>().unwrap(),
        base().iter().map(|&i| i as u8).collect::<Vec<_>>()
    );
    // Fortran order is reordered to C order; big-endian is converted.
    let fortran = read("npy_f32_fortran.npy");
    assert_eq!(fortran.shape(), &[3, 4]);
    assert_eq!(
        fortran.to_vec::<f32>().unwrap(),
        base()
            .iter()
            .map(|&i| i as f32 * 0.5 - 3.0)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        read("npy_i64_big_endian.npy").to_vec::<i64>().unwrap(),
        base().iter().map(|i| i * 1000).collect::<Vec<_>>()
    );
    let x = read("matmul_tanh_x.npy");
    assert_eq!((x.dtype(), x.shape()), (DType::F32, &[8, 16][..]));
}

#[test]
fn round_trips_every_dtype() {
    for dtype in DType::ALL {
        let bytes: Vec<u8> = (0..6 * dtype.size_in_bytes())
            .map(|i| {
                if dtype == DType::Bool {
                    (i % 2) as u8
                } else {
                    (i * 29 % 253) as u8
                }
            })
            .collect();
        let host = HostArray::new(dtype, &[2, 3], bytes).unwrap();
        let path = scratch(&format!("{dtype}.npy"));
        npy::write(&path, &host).unwrap();
        assert_eq!(npy::read(&path).unwrap(), host, "{dtype}");
    }
    // bfloat16 is written the way ml_dtypes writes it, as NumPy's raw 2-byte type.
    let path = scratch("bf16_header.npy");
    npy::write(&path, &HostArray::from_slice(&[1], &[bf16::ONE]).unwrap()).unwrap();
    let header = String::from_utf8_lossy(&std::fs::read(&path).unwrap()[..64]).into_owned();
    assert!(header.contains("'descr': '<V2'"), "{header}");
    // Scalars.
    let scalar = HostArray::from_slice(&[], &[3.5f64]).unwrap();
    let path = scratch("scalar.npy");
    npy::write(&path, &scalar).unwrap();
    assert_eq!(npy::read(&path).unwrap(), scalar);
}

#[test]
fn bad_files() {
    let err = npy::read("/nonexistent/x.npy").unwrap_err();
    assert!(matches!(err, Error::Npy { .. }), "{err}");
    let garbage = scratch("garbage.npy");
    std::fs::write(&garbage, b"definitely not npy").unwrap();
    assert!(matches!(
        npy::read(&garbage).unwrap_err(),
        Error::Npy { .. }
    ));
}

fn arrays_in_and_out(target: Target) {
    let client = target.client(2);
    {
        let devices = client.devices();
        let mesh = Mesh::new(&[("x", 2)], &devices).unwrap();
        // Split along columns (4 of them) over 2 devices.
        let columns = Sharding::named(&mesh, &[&[], &["x"]]);
        for name in [
            "npy_bf16.npy",
            "npy_bool.npy",
            "npy_i32.npy",
            "npy_f32_fortran.npy",
        ] {
            let host = npy::read(fixture(name)).unwrap();
            let array = npy::load_array(&client, fixture(name), &columns).unwrap();
            assert_eq!(array.num_shards(), 2);
            let path = scratch(&format!("out_{name}"));
            npy::save_array(&path, &array).unwrap();
            assert_eq!(npy::read(&path).unwrap(), host, "{name}");
        }
    }
    assert_no_leaks(&client);
}

on_both_plugins!(arrays_in_and_out);
