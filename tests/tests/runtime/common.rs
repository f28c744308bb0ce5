//! Shared helpers: finding the plugins, making clients, checking for leaks.

use std::path::{Path, PathBuf};

use pw_pjrt::{take_unreported_errors, Client, ClientOptions, Plugin};

/// The two CPU plugins the suite runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `lammps-jax-pjrt-cpu==0.11.2`, PJRT C API 0.115 (the default plugin).
    Api0115,
    /// `xla-cpu-pjrt==0.0.1` (OpenXLA), PJRT C API 0.81.
    Api081,
}

impl Target {
    /// The plugin file: `PW_PJRT_PLUGIN` for the default plugin, else the
    /// project venv (`PW_VENV` or `<repo>/.venv`). Missing plugins fail the
    /// test with a message saying how to install them.
    pub fn path(self) -> PathBuf {
        let rel = match self {
            Target::Api0115 => "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so",
            Target::Api081 => "xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so",
        };
        if self == Target::Api0115 {
            if let Some(path) = std::env::var_os("PW_PJRT_PLUGIN") {
                return PathBuf::from(path);
            }
        }
        let venv = std::env::var_os("PW_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join(".venv"));
        let lib = venv.join("lib");
        let found = std::fs::read_dir(&lib).ok().and_then(|dirs| {
            dirs.flatten()
                .map(|d| d.path().join("site-packages").join(rel))
                .find(|p| p.is_file())
        });
        match found {
            Some(path) => path,
            None => panic!(
                "PJRT plugin {rel} not found under {}: run `scripts/setup.sh` (it installs \
                 lammps-jax-pjrt-cpu and xla-cpu-pjrt into .venv) or set PW_VENV / PW_PJRT_PLUGIN",
                lib.display()
            ),
        }
    }

    pub fn plugin(self) -> Plugin {
        let path = self.path();
        Plugin::load(&path).unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
    }

    /// A client with `n` CPU devices.
    pub fn client(self, n: usize) -> Client {
        let plugin = self.plugin();
        let client = Client::new(&plugin, &ClientOptions::new().cpu_device_count(n))
            .unwrap_or_else(|e| panic!("creating a {n}-device client on {plugin:?}: {e}"));
        assert!(
            client.devices().len() >= n,
            "{plugin:?} gave {} devices, asked {n}",
            client.devices().len()
        );
        client
    }
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/runtime").join(name)
}

/// Asserts the client has no live buffers, events or executables left and
/// that no `Drop` failed. A buffer a bitcast view pins is released when PJRT
/// frees the view's memory, which can happen on a plugin thread just after
/// the view is dropped: so the count is given a moment to settle.
pub fn assert_no_leaks(client: &Client) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while client.live() != Default::default() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let live = client.live();
    assert_eq!(
        live,
        Default::default(),
        "live PJRT objects left behind: {live:?}"
    );
    let errors = take_unreported_errors();
    assert!(errors.is_empty(), "drop errors: {errors:?}");
}

/// Instantiates each listed `fn name(target: Target)` as one test per plugin.
macro_rules! on_both_plugins {
    ($($name:ident),* $(,)?) => {
        mod api_0_115 {
            $(#[test] fn $name() { super::$name($crate::common::Target::Api0115) })*
        }
        mod api_0_81 {
            $(#[test] fn $name() { super::$name($crate::common::Target::Api081) })*
        }
    };
}

/// `x * 2 + 1` on one `f32[4]`.
pub const AFFINE: &str = r#"
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.multiply %x, %two : tensor<4xf32>
  %1 = stablehlo.add %0, %one : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"#;
