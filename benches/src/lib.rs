//! Helpers shared by pw's benchmarks (the bench targets of this crate).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// Ends a benchmark with a message (benchmarks print, they do not panic).
pub fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("bench: {message}");
    std::process::exit(1)
}

/// The project's root: `$PW_ROOT` (a copy of the tree on another machine,
/// as benches/gpu.sh runs the benches built here), else where this crate
/// was built.
pub fn root() -> PathBuf {
    match std::env::var_os("PW_ROOT") {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    }
}

/// The Python that runs JAX for the peers: `$PW_PYTHON`, else the venv's.
pub fn python(root: &Path) -> PathBuf {
    std::env::var_os("PW_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".venv/bin/python"))
}

/// A release binary of pw: in `$PW_BENCH_BIN_DIR`, else `target/release`.
pub fn binary(root: &Path, name: &str) -> PathBuf {
    let p = std::env::var_os("PW_BENCH_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/release"))
        .join(name);
    if !p.is_file() {
        fail(format!(
            "{} is missing: run benches/cluster.sh",
            p.display()
        ));
    }
    p
}

/// A PJRT client of the plugin `Plugin::discover` finds, with the options
/// of `$PW_PJRT_CLIENT_OPTIONS`, and `devices` devices where asked.
pub fn pjrt_client(devices: Option<usize>) -> pw_pjrt::Client {
    let plugin = pw_pjrt::Plugin::discover().unwrap_or_else(|e| fail(e));
    pw_pjrt::ClientOptions::from_env()
        .and_then(|options| pw_pjrt::Client::open(&plugin, &options, devices))
        .unwrap_or_else(|e| fail(e))
}

/// The pipeline example's block captured with `microbatches` microbatches
/// (and optionally wider layers), by the front end.
pub fn pipeline_program(
    root: &Path,
    microbatches: usize,
    width_batch: Option<(usize, usize)>,
) -> String {
    let file = std::env::temp_dir().join(format!("pw-bench-pipeline-{}.mlir", std::process::id()));
    let mut command = Command::new(python(root));
    command
        .arg(root.join("benches/make_pipeline.py"))
        .arg(&file)
        .arg(microbatches.to_string());
    if let Some((width, batch)) = width_batch {
        command.arg(width.to_string()).arg(batch.to_string());
    }
    let made = command.output().unwrap_or_else(|e| fail(e));
    if !made.status.success() {
        fail(String::from_utf8_lossy(&made.stderr));
    }
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| fail(e));
    let _ = std::fs::remove_file(&file);
    text
}
