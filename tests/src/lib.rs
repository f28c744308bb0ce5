//! Shared helpers of pw's integration tests (the tests live in `tests/`).

use std::path::PathBuf;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// A chain of `nodes` tiny calls (`x * 0.5 + 1` on `f32[4]`), call `i` on
/// mesh `mesh(i)` (`"a"` or `"b"`; the input is on `mesh(0)`'s).
pub fn chain_program(nodes: usize, mesh: impl Fn(usize) -> &'static str) -> String {
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
    let (first, last) = (mesh(0), mesh(nodes.saturating_sub(1)));
    text.push_str(&format!(
        "  func.func @main(%v0: !pw.array<4xf32, @{first}, [{{}}]>) -> !pw.array<4xf32, @{last}> {{\n"
    ));
    let mut previous = format!("!pw.array<4xf32, @{first}, [{{}}]>");
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
