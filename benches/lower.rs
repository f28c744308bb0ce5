//! How `pw-opt --pw-lower` scales: programs of 1k, 10k and 100k calls
//! (chains and fan-outs across 8 meshes) are generated and lowered, each in
//! its own process so that its peak memory can be measured. Prints a table.
//!
//!     cargo bench -p pw-benches --bench lower [-- SIZES...]
//!
//! Each call of the generated program reads the previous call's result (a
//! chain) and the result of call `i/2` (a fan-out: early results feed many
//! later calls); calls cycle over 8 meshes, every fifth is left unplaced,
//! and the computation expects other shardings than it produces, so the
//! program needs transfers and reshards everywhere.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    process::Command,
    time::Instant,
};

const MESHES: usize = 8;

fn program(calls: usize) -> String {
    let t = |mesh: Option<usize>| match mesh {
        Some(m) => format!("!pw.array<64x64xf32, @m{m}>"),
        None => "!pw.array<64x64xf32>".to_owned(),
    };
    let mut text = String::from("module @bench {\n");
    for m in 0..MESHES {
        let _ = writeln!(text, "  pw.mesh @m{m} [\"x\"=2]");
    }
    text.push_str(concat!(
        "  \"builtin.module\"() <{sym_name = \"step\"}> ({\n",
        "    \"sdy.mesh\"() <{mesh = #sdy.mesh<[\"x\"=2]>, sym_name = \"mesh\"}> : () -> ()\n",
        "    \"func.func\"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}, {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"x\"}]>}], ",
        "function_type = (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>, ",
        "res_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}], sym_name = \"main\", sym_visibility = \"public\"}> ({\n",
        "    ^bb0(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>):\n",
        "      %0 = \"stablehlo.dot_general\"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n",
        "      \"func.return\"(%0) : (tensor<64x64xf32>) -> ()\n",
        "    }) : () -> ()\n",
        "  }) {mhlo.num_partitions = 2 : i32} : () -> ()\n",
    ));
    let mut types = vec![t(None), t(None)];
    let _ = writeln!(
        text,
        "  func.func @main(%v0: {}, %v1: {}) -> ({}) {{",
        types[0],
        types[1],
        (0..MESHES).map(|_| t(None)).collect::<Vec<_>>().join(", ")
    );
    for i in 0..calls {
        let v = i + 2;
        let (a, b) = (v - 1, v / 2);
        let mesh = (i % 5 != 4).then_some((i * 3) % MESHES);
        let on = mesh.map(|m| format!(" on @m{m}")).unwrap_or_default();
        let _ = writeln!(
            text,
            "    %v{v} = pw.call @step(%v{a}, %v{b}){on} : ({}, {}) -> {}",
            types[a],
            types[b],
            t(mesh)
        );
        types.push(t(mesh));
    }
    let last: Vec<usize> = (types.len() - MESHES..types.len()).collect();
    let values: Vec<String> = last.iter().map(|v| format!("%v{v}")).collect();
    let result_types: Vec<String> = last.iter().map(|&v| types[v].clone()).collect();
    let _ = writeln!(
        text,
        "    return {} : {}",
        values.join(", "),
        result_types.join(", ")
    );
    text.push_str("  }\n}\n");
    // The signature promised unplaced results; state what the body returns.
    text.replacen(
        &format!(
            "-> ({}) {{",
            (0..MESHES).map(|_| t(None)).collect::<Vec<_>>().join(", ")
        ),
        &format!("-> ({}) {{", result_types.join(", ")),
        1,
    )
}

/// The child: lowers one file in-process, like `pw-opt --pw-lower`.
fn child(file: &Path) -> i32 {
    let args = [
        "pw-opt",
        "--pw-lower",
        "--mlir-timing",
        file.to_str().unwrap_or(""),
        "-o",
        "/dev/null",
    ];
    pw_tools::opt::main(
        args.iter().map(Into::into).collect(),
        &mut std::io::empty(),
        &mut std::io::sink(),
        &mut std::io::stderr(),
    )
}

struct Row {
    calls: usize,
    bytes: usize,
    seconds: f64,
    peak_mib: f64,
    timing: String,
}

fn measure(calls: usize, dir: &Path) -> Result<Row, String> {
    let file = dir.join(format!("bench_{calls}.mlir"));
    let text = program(calls);
    std::fs::write(&file, &text).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let start = Instant::now();
    let spawned = Command::new(exe)
        .arg("--child")
        .arg(&file)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = spawned.id() as libc::pid_t;
    let mut stderr = spawned.stderr.ok_or("no stderr")?;
    let mut timing = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut timing).map_err(|e| e.to_string())?;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 reaps our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&file);
    if reaped != pid || status != 0 {
        return Err(format!("lowering {calls} calls failed:\n{timing}"));
    }
    Ok(Row {
        calls,
        bytes: text.len(),
        seconds,
        peak_mib: usage.ru_maxrss as f64 / 1024.0,
        timing,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let file = PathBuf::from(args.get(i + 1).cloned().unwrap_or_default());
        std::process::exit(child(&file));
    }
    let mut sizes: Vec<usize> = args.iter().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 100_000];
    }
    let dir = std::env::temp_dir();
    let mut rows = Vec::new();
    for calls in sizes {
        eprintln!("lowering {calls} calls...");
        match measure(calls, &dir) {
            Ok(row) => rows.push(row),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    println!("| calls | program | wall time | per call | peak memory | memory per call |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in &rows {
        println!(
            "| {} | {:.1} MiB | {:.2} s | {:.1} µs | {:.0} MiB | {:.1} KiB |",
            r.calls,
            r.bytes as f64 / (1 << 20) as f64,
            r.seconds,
            r.seconds * 1e6 / r.calls as f64,
            r.peak_mib,
            r.peak_mib * 1024.0 / r.calls as f64,
        );
    }
    if let Some(largest) = rows.last() {
        println!(
            "\nWhere the time goes at {} calls (pw-opt --mlir-timing):\n",
            largest.calls
        );
        println!("{}", largest.timing.trim_end());
    }
}
