//! Bad inputs give clear errors and leak nothing.

use pw_core::DType;
use pw_exec::HostArray;
use pw_pjrt::{Client, ClientOptions, CompileOptions, NamedValue, Plugin, Program};
use pw_pjrt::{Error, ErrorCode};

use crate::common::{assert_no_leaks, repo_root, Target};

const ADD: &str = r#"
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
"#;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pw-runtime-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn wrong_plugin_path() {
    let err = Plugin::load("/nonexistent/pjrt_plugin.so").unwrap_err();
    assert!(matches!(err, Error::PluginNotFound { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "PJRT plugin not found: /nonexistent/pjrt_plugin.so does not exist"
    );
}

#[test]
fn file_that_is_not_a_plugin() {
    // Not a shared object at all.
    let text = scratch("not_a_plugin.so");
    std::fs::write(&text, "just text\n").unwrap();
    let err = Plugin::load(&text).unwrap_err();
    assert!(matches!(err, Error::PluginLoad { .. }), "{err}");
    assert!(
        err.to_string().starts_with("cannot load PJRT plugin"),
        "{err}"
    );

    // A real shared object without `GetPjrtApi`.
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .expect("libm.so.6");
    let err = Plugin::load(libm).unwrap_err();
    assert!(matches!(err, Error::NotAPlugin { .. }), "{err}");
    assert!(err.to_string().contains("exports no `GetPjrtApi`"), "{err}");
}

#[test]
fn discover_honours_the_environment_variable_name() {
    // `discover_path` reads PW_PJRT_PLUGIN or the venv; both lead somewhere here.
    let path = Plugin::discover_path().unwrap();
    assert!(
        path.exists() || std::env::var_os("PW_PJRT_PLUGIN").is_some(),
        "{}",
        path.display()
    );
    let _ = repo_root();
}

fn invalid_program(target: Target) {
    let client = target.client(1);
    let options = CompileOptions::single_device(&client.devices()[0]).unwrap();
    for bad in [
        "this is not MLIR",
        "func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> { return %x : tensor<2xf32> }",
    ] {
        let err = client
            .compile(&Program::mlir_text(bad), &options)
            .unwrap_err();
        match &err {
            Error::Pjrt {
                function, message, ..
            } => {
                assert_eq!(*function, "PJRT_Client_Compile");
                assert!(message.contains("error"), "{message}");
            }
            other => panic!("expected a plugin error, got {other}"),
        }
        assert!(
            err.to_string().starts_with("PJRT_Client_Compile failed ["),
            "{err}"
        );
    }
    assert_no_leaks(&client);
}

fn execute_shape_mismatch(target: Target) {
    let client = target.client(2);
    {
        let device = client.devices()[0].clone();
        let exe = client
            .compile(
                &Program::mlir_text(ADD),
                &CompileOptions::single_device(&device).unwrap(),
            )
            .unwrap();
        let upload = |values: &[f32], shape: &[usize], device: usize| {
            let host = HostArray::from_slice(shape, values).unwrap();
            client
                .buffer_from_host(host.bytes(), DType::F32, shape, &client.devices()[device])
                .unwrap()
        };
        // Wrong shape: the plugin says which parameter and what it expected.
        let wrong = upload(&[1.0, 2.0, 3.0], &[3], 0);
        let err = exe.execute(&[vec![&wrong]]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Pjrt {
                    function: "PJRT_LoadedExecutable_Execute",
                    code: ErrorCode::InvalidArgument,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("parameter 0"), "{err}");
        // Wrong number of arguments.
        let right = upload(&[1.0; 4], &[2, 2], 0);
        let err = exe.execute(&[vec![&right, &right]]).unwrap_err();
        assert!(err.to_string().contains("expected 1"), "{err}");
        // Checked before the plugin: one argument list per device, on that device.
        let err = exe.execute(&[vec![&right], vec![&right]]).unwrap_err();
        assert!(
            err.to_string().contains("needs 1 argument lists, got 2"),
            "{err}"
        );
        let elsewhere = upload(&[1.0; 4], &[2, 2], 1);
        let err = exe.execute(&[vec![&elsewhere]]).unwrap_err();
        assert!(err.to_string().contains("is on CpuDevice(id=1)"), "{err}");
        // Host data of the wrong size never reaches the plugin.
        let err = client
            .buffer_from_host(&[0u8; 5], DType::F32, &[2], &device)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    }
    assert_no_leaks(&client);
}

fn too_few_devices(target: Target) {
    let client = target.client(2);
    {
        let err = client.first_devices(4, "a 4-way mesh").unwrap_err();
        assert!(
            matches!(
                err,
                Error::NotEnoughDevices {
                    needed: 4,
                    available: 2,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "a 4-way mesh needs 4 devices, but the client has 2"
        );

        let program =
            std::fs::read_to_string(crate::common::fixture("matmul_tanh_4.mlir")).unwrap();
        let options = CompileOptions {
            num_partitions: 4,
            use_spmd_partitioning: true,
            use_shardy_partitioner: true,
            ..Default::default()
        };
        let err = client
            .compile(&Program::mlir_text(program), &options)
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::NotEnoughDevices {
                    needed: 4,
                    available: 2,
                    ..
                }
            ),
            "{err}"
        );

        let err = client.device_by_id(7).unwrap_err();
        assert!(err.to_string().contains("no device with id 7"), "{err}");

        // Host bytes bound for a device of another client.
        let other = target.client(1);
        let host = HostArray::from_slice(&[2], &[1i32, 2]).unwrap();
        let err = host.to_device(&client, &other.devices()[0]).unwrap_err();
        assert!(
            err.to_string().contains("belongs to another client"),
            "{err}"
        );
        assert_no_leaks(&other);
    }
    assert_no_leaks(&client);
}

fn bad_client_options(target: Target) {
    // Checked before the plugin sees it (the 0.81 plugin would abort).
    let plugin = target.plugin();
    let options = ClientOptions::new().with("cpu_device_count", NamedValue::String("four".into()));
    let err = Client::new(&plugin, &options).unwrap_err();
    assert!(
        err.to_string()
            .contains("cpu_device_count must be a positive int64"),
        "{err}"
    );
}

on_both_plugins!(
    invalid_program,
    execute_shape_mismatch,
    too_few_devices,
    bad_client_options
);
