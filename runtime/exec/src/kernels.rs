//! Small StableHLO computations the executor generates for device-local
//! work of a transfer plan: cutting a piece out of a shard, and placing
//! pieces that arrived on a device into one shard. Each is compiled once per
//! (text, device) and cached like any computation.

use pw_core::DType;
use std::fmt::Write;

fn tensor(dtype: DType, shape: &[usize]) -> String {
    let dims: String = shape.iter().map(|d| format!("{d}x")).collect();
    format!("tensor<{dims}{}>", dtype.mlir_name())
}

fn zero(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "false",
        DType::C64 | DType::C128 => "(0.000000e+00,0.000000e+00)",
        d if d.is_float() => "0.000000e+00",
        _ => "0",
    }
}

fn list(values: &[usize]) -> String {
    values
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Cuts the box `sizes` at `offsets` out of a `shape` shard.
pub fn slice(dtype: DType, shape: &[usize], offsets: &[usize], sizes: &[usize]) -> String {
    let limits: Vec<usize> = offsets.iter().zip(sizes).map(|(o, s)| o + s).collect();
    let strides = vec![1; shape.len()];
    let (from, to) = (tensor(dtype, shape), tensor(dtype, sizes));
    format!(
        "module @pw_slice {{\n  func.func public @main(%arg0: {from}) -> {to} {{\n    \
         %0 = \"stablehlo.slice\"(%arg0) <{{limit_indices = array<i64: {}>, start_indices = array<i64: {}>, strides = array<i64: {}>}}> : ({from}) -> {to}\n    \
         return %0 : {to}\n  }}\n}}\n",
        list(&limits),
        list(offsets),
        list(&strides)
    )
}

/// Writes pieces (`(offsets, sizes)` each, in argument order) into a zero
/// `shape` shard; together they cover it.
pub fn place(dtype: DType, shape: &[usize], pieces: &[(Vec<usize>, Vec<usize>)]) -> String {
    let whole = tensor(dtype, shape);
    let args: Vec<String> = pieces
        .iter()
        .enumerate()
        .map(|(i, (_, sizes))| format!("%arg{i}: {}", tensor(dtype, sizes)))
        .collect();
    let mut body = format!(
        "    %acc0 = \"stablehlo.constant\"() <{{value = dense<{}> : {whole}}}> : () -> {whole}\n",
        zero(dtype)
    );
    let mut constants: Vec<usize> = pieces.iter().flat_map(|(o, _)| o.iter().copied()).collect();
    constants.sort_unstable();
    constants.dedup();
    for c in &constants {
        let _ = writeln!(
            body,
            "    %c{c} = \"stablehlo.constant\"() <{{value = dense<{c}> : tensor<i64>}}> : () -> tensor<i64>"
        );
    }
    for (i, (offsets, sizes)) in pieces.iter().enumerate() {
        let indices: Vec<String> = offsets.iter().map(|o| format!("%c{o}")).collect();
        let index_types = vec!["tensor<i64>"; offsets.len()].join(", ");
        let _ = writeln!(
            body,
            "    %acc{} = \"stablehlo.dynamic_update_slice\"(%acc{i}, %arg{i}, {}) : ({whole}, {}, {index_types}) -> {whole}",
            i + 1,
            indices.join(", "),
            tensor(dtype, sizes)
        );
    }
    format!(
        "module @pw_place {{\n  func.func public @main({}) -> {whole} {{\n{body}    return %acc{} : {whole}\n  }}\n}}\n",
        args.join(", "),
        pieces.len()
    )
}
