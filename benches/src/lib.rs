//! Helpers shared by pw's benchmarks (the bench targets of this crate).

use std::{path::Path, process::Command};

/// Ends a benchmark with a message (benchmarks print, they do not panic).
pub fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("bench: {message}");
    std::process::exit(1)
}

/// A chain of `nodes` tiny calls (`x * 0.5 + 1` on `f32[4]`), on mesh
/// `@a`, or alternating between `@a` and `@b`.
pub fn chain_program(nodes: usize, alternate: bool) -> String {
    let mut text = String::from(concat!(
        "module {\n  pw.mesh @a []\n  pw.mesh @b []\n",
        "  \"builtin.module\"() <{sym_name = \"step\"}> ({\n",
        "    \"func.func\"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = \"main\", sym_visibility = \"public\"}> ({\n",
        "    ^bb0(%x: tensor<4xf32>):\n",
        "      %h = \"stablehlo.constant\"() <{value = dense<5.000000e-01> : tensor<4xf32>}> : () -> tensor<4xf32>\n",
        "      %o = \"stablehlo.constant\"() <{value = dense<1.000000e+00> : tensor<4xf32>}> : () -> tensor<4xf32>\n",
        "      %0 = \"stablehlo.multiply\"(%x, %h) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n",
        "      %1 = \"stablehlo.add\"(%0, %o) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n",
        "      \"func.return\"(%1) : (tensor<4xf32>) -> ()\n",
        "    }) : () -> ()\n  }) {mhlo.num_partitions = 1 : i32} : () -> ()\n",
    ));
    let mesh = |i: usize| if alternate && i % 2 == 1 { "b" } else { "a" };
    let last = mesh(nodes - 1);
    text.push_str(&format!(
        "  func.func @main(%v0: !pw.array<4xf32, @a, [{{}}]>) -> !pw.array<4xf32, @{last}> {{\n"
    ));
    let mut previous = "!pw.array<4xf32, @a, [{}]>".to_owned();
    for i in 0..nodes {
        let m = mesh(i);
        let t = format!("!pw.array<4xf32, @{m}>");
        text.push_str(&format!(
            "    %v{} = pw.call @step(%v{i}) on @{m} : ({previous}) -> {t}\n",
            i + 1
        ));
        previous = t;
    }
    text.push_str(&format!("    return %v{nodes} : {previous}\n  }}\n}}\n"));
    text
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
