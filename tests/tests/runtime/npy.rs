//! `.npy` files in and out, including what NumPy and ml_dtypes write.

use half::{bf16, f16};
use pw_core::geometry::{Layout, MeshShape, Sharding};
use pw_core::plans;
use pw_core::DType;
use pw_exec::{self as exec, cache::Executables, host::dims, npy, Error, Executor, HostArray};

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
    // Complex: each half of a big-endian number converted on its own.
    let parts = |a: &HostArray| a.bytes().to_vec();
    let c64: Vec<u8> = base()
        .iter()
        .flat_map(|&i| [i as f32 * 0.5, i as f32 - 2.0])
        .flat_map(f32::to_ne_bytes)
        .collect();
    let got = read("npy_c64_big_endian.npy");
    assert_eq!((got.dtype(), parts(&got)), (DType::C64, c64));
    let c128: Vec<u8> = base()
        .iter()
        .flat_map(|&i| [i as f64 * 0.25, 0.0 - i as f64])
        .flat_map(f64::to_ne_bytes)
        .collect();
    let got = read("npy_c128.npy");
    assert_eq!((got.dtype(), parts(&got)), (DType::C128, c128));
    // An ml_dtypes float8 file names no float8 type: refused, saying so,
    // unless the reader says which it expects.
    let err = npy::read(fixture("npy_f8e4m3fn.npy"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("float8"), "{err}");
    let f8 = npy::read_expecting(fixture("npy_f8e4m3fn.npy"), DType::F8E4M3FN).unwrap();
    let values: Vec<f64> = f8
        .bytes()
        .iter()
        .filter_map(|&b| DType::F8E4M3FN.float8_value(b))
        .collect();
    assert_eq!(
        values,
        base().iter().map(|&i| i as f64 * 0.5).collect::<Vec<_>>()
    );
    let err = npy::read_expecting(fixture("npy_f8e4m3fn.npy"), DType::U8).unwrap_err();
    assert!(err.to_string().contains("float8"), "{err}");
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
        if dtype.is_raw_byte() {
            // Written as np.save writes them (one raw byte), and read only as
            // the type the reader expects: the file does not say which of
            // ml_dtypes' one-byte types it holds.
            let header = String::from_utf8_lossy(&std::fs::read(&path).unwrap()[..64]).into_owned();
            assert!(header.contains("'descr': '|V1'"), "{header}");
            let err = npy::read(&path).unwrap_err().to_string();
            assert!(
                err.contains("float8") && err.contains(&*path.to_string_lossy()),
                "{err}"
            );
            assert_eq!(npy::read_expecting(&path, dtype).unwrap(), host, "{dtype}");
            continue;
        }
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

/// Each file's array goes onto two devices split along its columns, comes
/// back reassembled, and is written out as it was read.
fn arrays_in_and_out(target: Target) {
    let client = target.client(2);
    {
        let mut cache = Executables::new(&client, None);
        let executor = Executor::new(&client);
        let mesh = MeshShape::new(vec![("x".into(), 2)]);
        let columns = Sharding {
            dims: vec![vec![], vec!["x".into()]],
        };
        for name in [
            "npy_bf16.npy",
            "npy_bool.npy",
            "npy_i32.npy",
            "npy_f32_fortran.npy",
        ] {
            let host = npy::read(fixture(name)).unwrap();
            let shape = dims(host.shape());
            let layout = Layout::new(&shape, &columns, &mesh).unwrap();
            let put = plans::put(plans::value(host.dtype(), &shape, vec![0, 1], layout));
            let prepared = exec::prepare(&put, &mut cache, &mut |_| {}).unwrap();
            let (back, _) = exec::run_local(
                &executor,
                &prepared,
                std::slice::from_ref(&host),
                None,
                false,
            )
            .unwrap();
            let path = scratch(&format!("out_{name}"));
            npy::write(&path, &back[0]).unwrap();
            assert_eq!(npy::read(&path).unwrap(), host, "{name}");
        }
    }
    assert_no_leaks(&client);
}

on_both_plugins!(arrays_in_and_out);

/// A file with `header` as its header (version 1.0) and `data` after it.
fn npy_file(name: &str, header: &str, data: &[u8]) -> std::path::PathBuf {
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    let path = scratch(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn npy_refusal(path: &std::path::Path) -> String {
    match npy::read(path) {
        Err(Error::Npy { reason, .. }) => reason,
        other => panic!("{} was not refused: {other:?}", path.display()),
    }
}

/// Headers that made the previous parser backtrack exponentially (a file of
/// a hundred bytes never finished) are refused at once.
#[test]
fn nested_headers_are_refused_in_linear_time() {
    for (name, header) in [
        (
            "nested_lists.npy",
            format!("{{'descr': {}'<f4'", "[".repeat(60)),
        ),
        (
            "nested_dicts.npy",
            format!("{{'descr': {}", "{'a':".repeat(40)),
        ),
        (
            "nested_mixed.npy",
            format!("{{'descr': {}", "([{".repeat(30)),
        ),
    ] {
        let reason = npy_refusal(&npy_file(name, &header, b""));
        assert!(reason.contains("bad header"), "{name}: {reason}");
    }
}

/// The declared shape is checked against the file's size before anything
/// is allocated, with checked arithmetic.
#[test]
fn declared_sizes_are_checked_against_the_file() {
    let huge = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }";
    let reason = npy_refusal(&npy_file("huge.npy", huge, &[0; 16]));
    assert!(reason.contains("the file holds 16 bytes"), "{reason}");
    let wraps = "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }";
    let reason = npy_refusal(&npy_file("wraps.npy", wraps, &[0; 16]));
    assert!(reason.contains("too large"), "{reason}");
    let short = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
    let reason = npy_refusal(&npy_file("short.npy", short, &[0; 8]));
    assert!(reason.contains("holds 8 bytes"), "{reason}");
    let reason = npy_refusal(&npy_file("long.npy", short, &[0; 13]));
    assert!(reason.contains("holds 13 bytes"), "{reason}");
    // From a reader whose length is unknown, memory follows the bytes read.
    let mut bytes = std::fs::read(scratch("huge.npy")).unwrap();
    bytes.truncate(bytes.len() - 4);
    let err = npy::read_from(&bytes[..], "stream").unwrap_err();
    assert!(err.to_string().contains("ends after 12 of"), "{err}");
}

#[test]
fn truncated_and_foreign_headers() {
    for (name, bytes) in [
        ("magic_only.npy", &b"\x93NUMPY"[..]),
        ("no_header.npy", &b"\x93NUMPY\x01\x00\x40\x00{'de"[..]),
        ("version_9.npy", &b"\x93NUMPY\x09\x00\x00\x00"[..]),
    ] {
        let path = scratch(name);
        std::fs::write(&path, bytes).unwrap();
        let reason = npy_refusal(&path);
        assert!(
            reason.contains("ends inside") || reason.contains("version 9.0"),
            "{name}: {reason}"
        );
    }
    let structured = "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }";
    assert!(npy_refusal(&npy_file("structured.npy", structured, &[0; 4])).contains("bad header"));
}

/// NumPy reads any non-zero byte of a bool array as true; pw's bools are 0/1.
#[test]
fn bool_bytes_are_normalized() {
    let header = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }";
    let host = npy::read(npy_file("bools.npy", header, &[0, 1, 7])).unwrap();
    assert_eq!(host.bytes(), &[0, 1, 1]);
}
