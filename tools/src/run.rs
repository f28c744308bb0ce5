//! pw-run: runs a pw program on PJRT devices.
//!
//! It takes a program at any stage: unless it is already lowered (every
//! mesh bound to devices, no transfers left), it runs the `pw-lower`
//! pipeline itself, onto the devices the plugin offers (one island) or a
//! `--topology` file. Inputs are `.npy` files in order (or random, seeded);
//! outputs are written as `.npy` files named by position.

use crate::{
    diagnostics::{Capture, Source},
    opt::write_atomically,
};
use clap::Parser;
use pw_compiler::LowerOptions;
use pw_core::plan::{Plan, StepKind};
use pw_runtime::{
    cache::{DiskCache, Executables},
    exec::{self, resources::Resources, trace, Executor, Prepared, RunReport},
    host::HostArray,
    npy,
    pjrt::{Client, ClientOptions, Plugin},
    DType,
};
use std::{
    ffi::OsString,
    fmt::Write as _,
    io::{Read, Write},
    path::{Path, PathBuf},
};

/// Command line of pw-run.
#[derive(Parser, Debug)]
#[command(
    name = "pw-run",
    version,
    about = "Run a pw program on PJRT devices, asynchronously, and write its outputs as .npy files",
    after_help = "Examples:\n  \
        pw-run examples/pipeline.mlir examples/pipeline/input_*.npy --out-dir out\n  \
        pw-run examples/pipeline.mlir examples/pipeline/input_*.npy --expect examples/pipeline/expected_*.npy\n  \
        pw-run program.mlir --random-inputs --seed 7 --devices 8 --trace run.json --stats\n  \
        pw-run lowered.mlir x.npy --plugin /path/to/pjrt_plugin.so\n\n\
        Set PW_LOG=debug (or trace) to log compilations and enqueued steps.\n\
        A program that is not lowered yet is lowered first (pw-opt --pw-lower) onto\n\
        the plugin's devices, one island, or onto --topology. Outputs are written as\n\
        DIR/output_0.npy, DIR/output_1.npy, ... The exit code is 0 on success, 1 on\n\
        any error (and on an --expect mismatch)."
)]
pub struct Cli {
    /// The program (.mlir), at any stage; `-` reads standard input.
    pub program: PathBuf,

    /// The program's inputs as .npy files, in order.
    pub inputs: Vec<PathBuf>,

    /// Use random inputs instead of files.
    #[arg(long, conflicts_with = "inputs")]
    pub random_inputs: bool,

    /// Seed of --random-inputs.
    #[arg(long, default_value_t = 0, requires = "random_inputs")]
    pub seed: u64,

    /// Write the outputs here, as output_<i>.npy.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,

    /// Compare the outputs with these .npy files (in order).
    #[arg(long, num_args = 1.., value_name = "NPY")]
    pub expect: Vec<PathBuf>,

    /// Relative tolerance of --expect (finite, >= 0).
    #[arg(long, default_value_t = 1e-5, value_parser = tolerance)]
    pub rtol: f64,

    /// Absolute tolerance of --expect (finite, >= 0).
    #[arg(long, default_value_t = 1e-6, value_parser = tolerance)]
    pub atol: f64,

    /// The PJRT plugin (default: $PW_PJRT_PLUGIN, else the CPU plugin of the
    /// project's venv).
    #[arg(long, value_name = "PATH")]
    pub plugin: Option<PathBuf>,

    /// Ask the plugin for this many devices (CPU plugins; 1 to 1024).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_DEVICES))]
    pub devices: Option<u16>,

    /// Lower onto this topology (TOML or JSON) instead of the plugin's
    /// devices as one island.
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,

    /// Write a Chrome/Perfetto trace of compilation and execution.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,

    /// Print when each step was enqueued and when it finished.
    #[arg(long)]
    pub stats: bool,

    /// Keep compiled executables here (default: $PW_COMPILE_CACHE, else
    /// ~/.cache/pw/executables): a second run of a program compiles nothing.
    #[arg(long, value_name = "DIR")]
    pub compile_cache: Option<PathBuf>,

    /// Print only errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The most devices `--devices` asks a plugin for.
pub const MAX_DEVICES: i64 = 1024;

/// The most bytes `--random-inputs` makes, all inputs together.
pub const MAX_RANDOM_BYTES: u64 = 4 << 30;

/// A tolerance of `--expect`: a finite number, at least 0 (NaN would make
/// every comparison pass).
fn tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(format!("'{text}' is not a finite tolerance >= 0")),
    }
}

/// Runs pw-run with `args` (program name first); returns the exit code.
pub fn main(
    args: Vec<OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = write!(stderr, "{}", e.render());
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    match run(&cli, stdin, stdout, stderr) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(message) => {
            let _ = writeln!(stderr, "{}", message.trim_end());
            1
        }
    }
}

/// Everything pw-run learned, for the summary.
struct Summary {
    lowered_here: Option<String>,
    plugin: String,
    devices: usize,
}

/// Returns Ok(false) when the run worked but an --expect comparison failed.
fn run(
    cli: &Cli,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<bool, String> {
    let (name, text) = read_program(&cli.program, stdin)?;
    let plugin = match &cli.plugin {
        Some(path) => Plugin::load(path),
        None => Plugin::discover(),
    }
    .map_err(|e| format!("error: {e}"))?;
    let mut options = ClientOptions::new();
    if let Some(n) = cli.devices {
        options = options.cpu_device_count(usize::from(n));
    }
    let client = Client::new(&plugin, &options).map_err(|e| format!("error: {e}"))?;
    let resources = Resources::of(&client);
    let mut summary = Summary {
        lowered_here: None,
        plugin: format!(
            "{} (PJRT C API {})",
            plugin.path().display(),
            plugin.version()
        ),
        devices: resources.devices.len(),
    };

    let context = pw_dialect::new_context();
    let capture = Capture::new(&context);
    let plan = prepare_plan(cli, &context, &text, &name, &resources, &mut summary);
    let source = Source::new(&name, &text);
    let mut diagnostics = String::new();
    for d in capture.take() {
        source.render(&d, &mut diagnostics);
    }
    drop(capture);
    let plan = plan.map_err(|e| format!("{diagnostics}{e}"))?;
    resources.admit(&plan).map_err(|e| format!("error: {e}"))?;

    let inputs = if cli.random_inputs {
        random_inputs(&plan, cli.seed)?
    } else {
        read_inputs(cli, &plan)?
    };

    let mut cache = Executables::new(&client, DiskCache::open(cli.compile_cache.as_deref()));
    let quiet = cli.quiet;
    let mut progress = |what: &str| {
        if !quiet {
            let _ = writeln!(stderr, "pw-run: {what}");
        }
    };
    let prepared =
        exec::prepare(&plan, &mut cache, &mut progress).map_err(|e| format!("error: {e}"))?;
    let executor = Executor::new(&client);
    let (outputs, report) = exec::run_local(
        &executor,
        &prepared,
        &inputs,
        cli.stats || cli.trace.is_some(),
    )
    .map_err(|e| format!("error: {e}"))?;

    if let Some(dir) = &cli.out_dir {
        write_outputs(dir, &outputs)?;
    }
    let (matched, comparison) = compare(cli, &outputs)?;
    if let Some(path) = &cli.trace {
        let (mut spans, shift) = trace::compile_spans(&cache.stats.spans);
        spans.extend(trace::run_spans(
            0,
            &prepared.part.steps,
            &report.steps,
            shift,
        ));
        let json = trace::chrome_json(&spans, &|track| match track {
            trace::Track::Compiler => "compiler".into(),
            trace::Track::Host(_) => "host (enqueue)".into(),
            trace::Track::Device(d) => format!("device {d}"),
            trace::Track::Network => "network".into(),
        })
        .to_string();
        write_atomically(path, &json)
            .map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
    }
    if !cli.quiet {
        let _ = write!(
            stdout,
            "{}",
            report_text(
                cli,
                &name,
                &summary,
                &plan,
                &cache,
                &report,
                &outputs,
                &comparison
            )
        );
    }
    if cli.stats {
        let _ = write!(stdout, "{}", stats_text(&prepared, &report));
    }
    Ok(matched)
}

fn read_program(path: &Path, stdin: &mut dyn Read) -> Result<(String, String), String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        stdin
            .read_to_string(&mut text)
            .map_err(|e| format!("error: cannot read standard input: {e}"))?;
        return Ok(("<stdin>".into(), text));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("error: cannot read {}: {e}", path.display()))?;
    Ok((path.display().to_string(), text))
}

fn prepare_plan(
    cli: &Cli,
    context: &melior::Context,
    text: &str,
    name: &str,
    resources: &Resources,
    summary: &mut Summary,
) -> Result<Plan, String> {
    let module = pw_dialect::parse_source(context, text, name)
        .ok_or_else(|| "error: the program does not parse".to_owned())?;
    let description = match &cli.topology {
        Some(path) => format!("topology {}", path.display()),
        None => format!(
            "one island of {} {} devices",
            resources.devices.len(),
            resources.kind
        ),
    };
    let (plan, took) = pw_compiler::plan::plan(context, &module, || {
        let topology = match &cli.topology {
            Some(path) => pw_core::Topology::load(path).map_err(|e| e.to_string())?,
            None => resources.topology(),
        };
        Ok(LowerOptions { topology })
    })
    .map_err(|e| format!("error: {e}"))?;
    if let Some(took) = took {
        summary.lowered_here = Some(format!(
            "{description} in {:.1} ms",
            took.as_secs_f64() * 1e3
        ));
    }
    Ok(plan)
}

fn read_inputs(cli: &Cli, plan: &Plan) -> Result<Vec<HostArray>, String> {
    if cli.inputs.len() != plan.inputs.len() {
        return Err(format!(
            "error: the program takes {} inputs, {} given{}",
            plan.inputs.len(),
            cli.inputs.len(),
            if cli.inputs.is_empty() {
                " (or use --random-inputs)"
            } else {
                ""
            }
        ));
    }
    cli.inputs
        .iter()
        .zip(&plan.inputs)
        .enumerate()
        .map(|(i, (path, &id))| {
            let host = npy::read(path).map_err(|e| format!("error: input #{i}: {e}"))?;
            let want = &plan.values[id];
            if host.dtype() != want.dtype || !same_shape(host.shape(), &want.shape) {
                return Err(format!(
                    "error: input #{i} ({}) is {}{:?}, but the program expects {}",
                    path.display(),
                    host.dtype(),
                    host.shape(),
                    want.describe()
                ));
            }
            Ok(host)
        })
        .collect()
}

fn same_shape(host: &[usize], want: &[i64]) -> bool {
    host.len() == want.len() && host.iter().zip(want).all(|(&h, &w)| h as i64 == w)
}

/// The shapes of random inputs of these (dtype, shape, description)s,
/// after checking that they hold at most [`MAX_RANDOM_BYTES`] in all.
fn random_shapes<'v>(
    inputs: impl Iterator<Item = (DType, &'v [i64], String)>,
) -> Result<Vec<Vec<usize>>, String> {
    let mut total = 0u64;
    let mut shapes = Vec::new();
    for (i, (dtype, shape, describe)) in inputs.enumerate() {
        let dims: Option<Vec<usize>> = shape.iter().map(|&d| usize::try_from(d).ok()).collect();
        let within = dims
            .as_ref()
            .and_then(|s| {
                s.iter().try_fold(dtype.size_in_bytes() as u64, |acc, &d| {
                    acc.checked_mul(d as u64)
                })
            })
            .and_then(|b| total.checked_add(b))
            .filter(|&t| t <= MAX_RANDOM_BYTES);
        match (dims, within) {
            (Some(dims), Some(t)) => {
                total = t;
                shapes.push(dims);
            }
            _ => {
                return Err(format!(
                "error: input #{i} is {describe}: --random-inputs makes at most {} GiB of inputs",
                MAX_RANDOM_BYTES >> 30
            ))
            }
        }
    }
    Ok(shapes)
}

/// Deterministic inputs: floats in [-1, 1), integers in [0, 8), booleans;
/// at most [`MAX_RANDOM_BYTES`] in all, checked before any is made.
fn random_inputs(plan: &Plan, seed: u64) -> Result<Vec<HostArray>, String> {
    let shapes = random_shapes(plan.inputs.iter().map(|&id| {
        let v = &plan.values[id];
        (v.dtype, v.shape.as_slice(), v.describe())
    }))?;
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let unit = |bits: u64| (bits >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    plan.inputs
        .iter()
        .zip(shapes)
        .map(|(&id, shape)| {
            let dtype = plan.values[id].dtype;
            let n: usize = shape.iter().product();
            let mut bytes = Vec::with_capacity(n * dtype.size_in_bytes());
            for _ in 0..n {
                let bits = next();
                match dtype {
                    DType::F32 => bytes.extend_from_slice(&(unit(bits) as f32).to_ne_bytes()),
                    DType::F64 => bytes.extend_from_slice(&unit(bits).to_ne_bytes()),
                    DType::BF16 => {
                        bytes.extend_from_slice(&half::bf16::from_f64(unit(bits)).to_ne_bytes())
                    }
                    DType::F16 => {
                        bytes.extend_from_slice(&half::f16::from_f64(unit(bits)).to_ne_bytes())
                    }
                    DType::Bool => bytes.push((bits & 1) as u8),
                    other => {
                        let v = bits % 8;
                        bytes.extend_from_slice(&v.to_ne_bytes()[..other.size_in_bytes()]);
                    }
                }
            }
            HostArray::new(dtype, &shape, bytes).map_err(|e| format!("error: {e}"))
        })
        .collect()
}

/// Writes every output, or none: they go to temporary names first, and a
/// failure removes what this run wrote (temporaries and renamed outputs).
fn write_outputs(dir: &Path, outputs: &[HostArray]) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("error: cannot create {}: {e}", dir.display()))?;
    let pid = std::process::id();
    let finals: Vec<PathBuf> = (0..outputs.len())
        .map(|i| dir.join(format!("output_{i}.npy")))
        .collect();
    let tmps: Vec<PathBuf> = (0..outputs.len())
        .map(|i| dir.join(format!(".output_{i}.npy.{pid}.tmp")))
        .collect();
    let undo = |paths: &[PathBuf]| {
        for p in paths {
            let _ = std::fs::remove_file(p);
        }
    };
    for (i, (output, tmp)) in outputs.iter().zip(&tmps).enumerate() {
        if let Err(e) = npy::write(tmp, output) {
            undo(&tmps[..=i]);
            return Err(format!(
                "error: cannot write output #{i} to {}: {e}",
                tmp.display()
            ));
        }
    }
    for (i, (tmp, path)) in tmps.iter().zip(&finals).enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            undo(&tmps[i..]);
            undo(&finals[..i]);
            return Err(format!(
                "error: cannot write output #{i} to {}: {e}",
                path.display()
            ));
        }
    }
    Ok(())
}

/// Every element as f64, for comparisons.
fn as_f64(a: &HostArray) -> Vec<f64> {
    macro_rules! cast {
        ($t:ty) => {
            a.to_vec::<$t>()
                .unwrap_or_default()
                .into_iter()
                .map(|v| v as f64)
                .collect()
        };
    }
    match a.dtype() {
        DType::Bool => a.bytes().iter().map(|&b| f64::from(b)).collect(),
        DType::I8 => cast!(i8),
        DType::I16 => cast!(i16),
        DType::I32 => cast!(i32),
        DType::I64 => cast!(i64),
        DType::U8 => cast!(u8),
        DType::U16 => cast!(u16),
        DType::U32 => cast!(u32),
        DType::U64 => cast!(u64),
        DType::F16 => a
            .to_vec::<half::f16>()
            .unwrap_or_default()
            .into_iter()
            .map(f64::from)
            .collect(),
        DType::BF16 => a
            .to_vec::<half::bf16>()
            .unwrap_or_default()
            .into_iter()
            .map(f64::from)
            .collect(),
        DType::F32 => cast!(f32),
        DType::F64 => cast!(f64),
    }
}

/// Compares outputs with --expect files like numpy.allclose; returns
/// whether all matched and one line per output.
fn compare(cli: &Cli, outputs: &[HostArray]) -> Result<(bool, Vec<String>), String> {
    if cli.expect.is_empty() {
        return Ok((true, Vec::new()));
    }
    if cli.expect.len() != outputs.len() {
        return Err(format!(
            "error: the program has {} outputs but {} --expect files were given",
            outputs.len(),
            cli.expect.len()
        ));
    }
    let mut all = true;
    let mut lines = Vec::new();
    for (i, (path, got)) in cli.expect.iter().zip(outputs).enumerate() {
        let want = npy::read(path).map_err(|e| format!("error: --expect #{i}: {e}"))?;
        if want.dtype() != got.dtype() || want.shape() != got.shape() {
            all = false;
            lines.push(format!(
                "#{i}: MISMATCH: got {}{:?}, {} holds {}{:?}",
                got.dtype(),
                got.shape(),
                path.display(),
                want.dtype(),
                want.shape()
            ));
            continue;
        }
        let (g, w) = (as_f64(got), as_f64(&want));
        let mut worst = 0.0f64;
        let mut bad = 0usize;
        for (a, b) in g.iter().zip(&w) {
            let diff = (a - b).abs();
            worst = worst.max(diff);
            if diff > cli.atol + cli.rtol * b.abs() || a.is_nan() != b.is_nan() {
                bad += 1;
            }
        }
        all &= bad == 0;
        lines.push(format!(
            "#{i}: {} {} (max |diff| {worst:.2e}, rtol {:.0e}, atol {:.0e}{})",
            if bad == 0 { "matches" } else { "MISMATCH with" },
            path.display(),
            cli.rtol,
            cli.atol,
            if bad > 0 {
                format!(", {bad} elements off")
            } else {
                String::new()
            }
        ));
    }
    Ok((all, lines))
}

fn ms(d: std::time::Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

#[allow(clippy::too_many_arguments)]
fn report_text(
    cli: &Cli,
    name: &str,
    summary: &Summary,
    plan: &Plan,
    cache: &Executables,
    report: &RunReport,
    outputs: &[HostArray],
    comparison: &[String],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pw-run {name}");
    let _ = writeln!(
        out,
        "  plugin     {}, {} devices",
        summary.plugin, summary.devices
    );
    match &summary.lowered_here {
        Some(how) => {
            let _ = writeln!(out, "  lowered    onto {how}");
        }
        None => {
            let _ = writeln!(out, "  lowered    already");
        }
    }
    let _ = writeln!(out, "placement");
    let width = plan.meshes.iter().map(|m| m.name.len()).max().unwrap_or(0);
    for m in &plan.meshes {
        let _ = writeln!(
            out,
            "  @{:<width$}  {:<12} devices {:?}",
            m.name, m.axes, m.devices
        );
    }
    let calls = plan
        .steps
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Call { .. }))
        .count();
    let stats = &cache.stats;
    let from_cache = match cache.disk() {
        Some(disk) if stats.from_disk > 0 => format!(
            ", {} loaded from the compile cache {}",
            stats.from_disk,
            disk.dir().display()
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "compile    {} executables compiled{from_cache} in {:.2} s ({} reused in this run: each computation is compiled once per device set)",
        stats.compiled, stats.seconds, stats.hits
    );
    let _ = writeln!(
        out,
        "run        {} steps ({calls} calls); host enqueued everything at {}, last output ready at {}, outputs on host at {}",
        plan.steps.len(),
        ms(report.enqueued),
        ms(report.outputs_ready),
        ms(report.finished)
    );
    let _ = writeln!(out, "outputs");
    for (i, o) in outputs.iter().enumerate() {
        let place = cli
            .out_dir
            .as_ref()
            .map(|d| format!(" -> {}", d.join(format!("output_{i}.npy")).display()))
            .unwrap_or_default();
        let _ = writeln!(out, "  #{i} {}{:?}{place}", o.dtype(), o.shape());
    }
    if !comparison.is_empty() {
        let _ = writeln!(out, "comparison with the expected outputs");
        for line in comparison {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

fn stats_text(prepared: &Prepared, report: &RunReport) -> String {
    let mut out = String::from("steps (times from the start of the run)\n");
    let _ = writeln!(
        out,
        "  {:>10}  {:>10}  {:>10}  step",
        "enqueued", "enq. done", "finished"
    );
    for (s, timing) in prepared.part.steps.iter().zip(&report.steps) {
        let step = &s.step;
        let finished = timing.done.iter().filter_map(|(_, d)| *d).max();
        let _ = writeln!(
            out,
            "  {:>10}  {:>10}  {:>10}  {} on {:?}",
            ms(timing.enqueue_start),
            ms(timing.enqueue_end),
            finished.map_or("-".to_owned(), ms),
            step.label,
            step.devices
        );
    }
    out
}
