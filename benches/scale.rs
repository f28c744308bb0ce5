//! How pw scales, in one table measured in one run:
//! - `pw-opt --pw-lower` on programs of 1k, 10k and 100k calls (chains and
//!   fan-outs across 8 meshes), with verification after every pass and
//!   without (`--verify-each=false`), each in its own process so that its
//!   peak memory can be measured;
//! - `pw-opt` on the lowered 100k-call program alone: parse, verify, print;
//!   then the same program as MLIR bytecode (`--emit-bytecode`): written
//!   from the text, read back and written again, read back and printed;
//! - reading and writing a 64 MiB `.npy` file, beside NumPy doing the same
//!   in the same run (the project venv's Python, `$PW_VENV`).
//!
//!     cargo bench -p pw-benches --bench scale [-- SIZES...]
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

/// The child: runs pw-opt in-process with `args`, as the binary does.
fn child(args: &[String]) -> i32 {
    let mut argv = vec!["pw-opt".to_owned(), "--disable-free".to_owned()];
    argv.extend(args.iter().cloned());
    pw_tools::opt::main(
        argv.into_iter().map(Into::into).collect(),
        &mut std::io::empty(),
        &mut std::io::sink(),
        &mut std::io::stderr(),
    )
}

/// What one child process took.
struct Measured {
    seconds: f64,
    peak_mib: f64,
    stderr: String,
}

/// Runs this binary as a child running pw-opt with `args`.
fn measure(args: &[String]) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let start = Instant::now();
    let spawned = Command::new(exe)
        .arg("--child")
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = spawned.id() as libc::pid_t;
    let mut stderr = spawned.stderr.ok_or("no stderr")?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut text).map_err(|e| e.to_string())?;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 reaps our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let seconds = start.elapsed().as_secs_f64();
    if reaped != pid || status != 0 {
        return Err(format!("pw-opt {args:?} failed:\n{text}"));
    }
    Ok(Measured {
        seconds,
        peak_mib: usage.ru_maxrss as f64 / 1024.0,
        stderr: text,
    })
}

/// The median of `runs` timings of `f` (seconds).
fn median(runs: usize, mut f: impl FnMut() -> Result<f64, String>) -> Result<f64, String> {
    let mut times = (0..runs)
        .map(|_| f())
        .collect::<Result<Vec<f64>, String>>()?;
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// pw's `.npy` read and write of `bytes` of float32: GB/s each.
fn npy_pw(dir: &Path, bytes: usize) -> Result<(f64, f64), String> {
    let n = bytes / 4;
    let values: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let host =
        pw_exec::HostArray::from_slice(&[n / 1024, 1024], &values).map_err(|e| e.to_string())?;
    let path = dir.join("pw.npy");
    let write = median(7, || {
        let start = Instant::now();
        pw_exec::npy::write(&path, &host).map_err(|e| e.to_string())?;
        Ok(start.elapsed().as_secs_f64())
    })?;
    let read = median(7, || {
        let start = Instant::now();
        let back = pw_exec::npy::read(&path).map_err(|e| e.to_string())?;
        let seconds = start.elapsed().as_secs_f64();
        if back.bytes().len() != host.bytes().len() {
            return Err("read back another size".into());
        }
        Ok(seconds)
    })?;
    let _ = std::fs::remove_file(&path);
    Ok((bytes as f64 / read / 1e9, bytes as f64 / write / 1e9))
}

/// NumPy's `np.load` and `np.save` of the same array: GB/s each.
fn npy_numpy(dir: &Path, bytes: usize) -> Result<(f64, f64), String> {
    let python = std::env::var_os("PW_VENV")
        .map(|v| PathBuf::from(v).join("bin/python"))
        .ok_or("PW_VENV is not set (source scripts/setup.sh)")?;
    let script = format!(
        r#"
import numpy as np, time, statistics, sys
n = {bytes} // 4
a = (np.arange(n, dtype=np.float32) * 0.5).reshape(n // 1024, 1024)
path = sys.argv[1]
def timed(f):
    ts = []
    for _ in range(7):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)
w = timed(lambda: np.save(path, a))
r = timed(lambda: np.load(path))
print({bytes} / r / 1e9, {bytes} / w / 1e9)
"#
    );
    let path = dir.join("numpy.npy");
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut numbers = text
        .split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok());
    match (numbers.next(), numbers.next()) {
        (Some(r), Some(w)) => Ok((r, w)),
        _ => Err(format!(
            "numpy failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        std::process::exit(child(&args[i + 1..]));
    }
    let mut sizes: Vec<usize> = args.iter().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 100_000];
    }
    let dir = std::env::temp_dir().join(format!("pw-bench-scale-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("{e}");
        std::process::exit(1);
    }
    match table(&sizes, &dir) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("{e}");
            let _ = std::fs::remove_dir_all(&dir);
            std::process::exit(1);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn table(sizes: &[usize], dir: &Path) -> Result<String, String> {
    let mut rows = Vec::new();
    let mut timing = String::new();
    let mut largest: Option<(usize, PathBuf, usize)> = None;
    for &calls in sizes {
        let file = dir.join(format!("bench_{calls}.mlir"));
        let text = program(calls);
        std::fs::write(&file, &text).map_err(|e| e.to_string())?;
        let lowered = dir.join(format!("lowered_{calls}.mlir"));
        let f = file.display().to_string();
        for verify in [true, false] {
            eprintln!(
                "lowering {calls} calls (verification {})...",
                if verify { "on" } else { "off" }
            );
            let mut args = vec![
                "--pw-lower".to_owned(),
                "--mlir-timing".to_owned(),
                f.clone(),
            ];
            if !verify {
                args.push("--verify-each=false".into());
            }
            args.extend(["-o".to_owned(), lowered.display().to_string()]);
            let m = measure(&args)?;
            if verify {
                timing = m.stderr.clone();
            }
            rows.push(vec![
                format!(
                    "`pw-opt --pw-lower`{}",
                    if verify { "" } else { " `--verify-each=false`" }
                ),
                format!("{calls} calls ({})", mib(text.len())),
                format!("{:.2} s", m.seconds),
                format!("{:.1} µs", m.seconds * 1e6 / calls as f64),
                format!("{:.0} MiB", m.peak_mib),
                "-".into(),
            ]);
        }
        let size = std::fs::metadata(&lowered).map_or(0, |m| m.len() as usize);
        largest = Some((calls, lowered, size));
        let _ = std::fs::remove_file(&file);
    }
    if let Some((calls, lowered, size)) = &largest {
        eprintln!("parse, verify, print the lowered {calls}-call program...");
        let m = measure(&[
            lowered.display().to_string(),
            "-o".into(),
            "/dev/null".into(),
        ])?;
        let text_seconds = m.seconds;
        rows.push(vec![
            "`pw-opt` (parse, verify, print) of the lowered program".into(),
            format!("{calls} calls ({})", mib(*size)),
            format!("{:.2} s", m.seconds),
            format!("{:.1} µs", m.seconds * 1e6 / *calls as f64),
            format!("{:.0} MiB", m.peak_mib),
            "-".into(),
        ]);
        // The same program as bytecode: written once from the text, then
        // read back the two ways a machine or a person would.
        let bytecode = dir.join(format!("lowered_{calls}.mlirbc"));
        let b = bytecode.display().to_string();
        let l = lowered.display().to_string();
        let runs: [(&str, Vec<String>); 3] = [
            (
                "`pw-opt --emit-bytecode` (parse text, verify, write bytecode)",
                vec![l, "--emit-bytecode".into(), "-o".into(), b.clone()],
            ),
            (
                "`pw-opt --emit-bytecode` (parse bytecode, verify, write bytecode)",
                vec![
                    b.clone(),
                    "--emit-bytecode".into(),
                    "-o".into(),
                    "/dev/null".into(),
                ],
            ),
            (
                "`pw-opt` (parse bytecode, verify, print text)",
                vec![b, "-o".into(), "/dev/null".into()],
            ),
        ];
        for (i, (what, args)) in runs.into_iter().enumerate() {
            eprintln!("{what}...");
            let m = measure(&args)?;
            let read = if i == 0 {
                *size
            } else {
                std::fs::metadata(&bytecode).map_or(0, |m| m.len() as usize)
            };
            rows.push(vec![
                what.into(),
                format!("{calls} calls ({})", mib(read)),
                format!("{:.2} s", m.seconds),
                format!("{:.1} µs", m.seconds * 1e6 / *calls as f64),
                format!("{:.0} MiB", m.peak_mib),
                format!("text read back: {:.2}x", m.seconds / text_seconds),
            ]);
        }
    }
    let bytes = 64 << 20;
    eprintln!(".npy read and write of 64 MiB, pw and NumPy...");
    let (pw_read, pw_write) = npy_pw(dir, bytes)?;
    let (np_read, np_write) = npy_numpy(dir, bytes)?;
    for (what, pw, np) in [("read", pw_read, np_read), ("write", pw_write, np_write)] {
        rows.push(vec![
            format!("`.npy` {what} (float32)"),
            "64 MiB".into(),
            format!("{:.1} ms", bytes as f64 / pw / 1e6),
            format!("{pw:.2} GB/s"),
            "-".into(),
            format!("NumPy: {np:.2} GB/s ({:.2}x)", pw / np),
        ]);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| benchmark | size | wall time | per call / throughput | peak memory | peer, same run |"
    );
    let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: | --- |");
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    if let Some((calls, _, _)) = largest {
        let _ = writeln!(
            out,
            "\nWhere the time goes at {calls} calls, verification on (pw-opt --mlir-timing):\n\n{}",
            timing.trim_end()
        );
    }
    Ok(out)
}
