//! Helpers shared by pw's benchmarks (the bench targets of this crate).

use std::{path::Path, process::Command};

/// Ends a benchmark with a message (benchmarks print, they do not panic).
pub fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("bench: {message}");
    std::process::exit(1)
}

/// The pipeline example's block captured with `microbatches` microbatches
/// (and optionally wider layers), by the front end.
pub fn pipeline_program(
    root: &Path,
    microbatches: usize,
    width_batch: Option<(usize, usize)>,
) -> String {
    let file = std::env::temp_dir().join(format!("pw-bench-pipeline-{}.mlir", std::process::id()));
    let mut command = Command::new(root.join(".venv/bin/python"));
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
