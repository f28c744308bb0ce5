//! pw-run: runs a pw program on PJRT devices.
//!
//! It takes a program at any stage: unless it is already lowered (every
//! mesh bound to devices, no transfers left), it runs the `pw-lower`
//! pipeline itself, onto the devices the plugin offers (one island) or a
//! `--topology` file. Inputs are `.npy` files in order (or random, seeded);
//! outputs are written as `.npy` files named by position.

use crate::{lower, opt::write_atomically};
use clap::Parser;
use pw_compiler::schedule::Policy;
use pw_controller::{
    client::{self, RemoteRun},
    summary::RunSummary,
};
use pw_core::{plan::StepKind, DType};
use pw_exec::{
    self as exec,
    cache::{DiskCache, Executables},
    npy,
    resources::Resources,
    trace, Executor, HostArray, Prepared, RunReport,
};
use pw_pjrt::{Client, ClientOptions, Plugin};
use std::{
    ffi::OsString,
    fmt::Write as _,
    io::{Read, Write},
    path::{Path, PathBuf},
    time::Duration,
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
        pw-run lowered.mlir x.npy --plugin /path/to/pjrt_plugin.so\n  \
        pw-run examples/pipeline.mlir examples/pipeline/input_*.npy --server 127.0.0.1:29000 --stats\n  \
        pw-run examples/pipeline_train.mlir examples/pipeline_train/input_*.npy --devices 4 --schedule 1f1b --warmup 2 --trace t.json\n\n\
        Set PW_LOG=debug (or trace) to log compilations and enqueued steps.\n\
        Without --server, pw-run is one process: it lowers, compiles and runs on its\n\
        own PJRT client. With --server, a pw-server lowers the program onto its\n\
        registered workers and runs it there (see docs/cluster.md).\n\
        A program that is not lowered yet is lowered first (pw-opt --pw-lower) onto\n\
        the plugin's devices, one island, or onto --topology. Outputs are written as\n\
        DIR/output_0.npy, DIR/output_1.npy, ... The exit code is 0 on success, 1 on\n\
        any error (and on an --expect mismatch)."
)]
pub struct Cli {
    /// The program (.mlir text, or MLIR bytecode as `pw-opt --emit-bytecode`
    /// writes it), at any stage; `-` reads standard input.
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

    /// Run on the workers of the pw-server at HOST:PORT instead of in this
    /// process.
    #[arg(long, value_name = "HOST:PORT", conflicts_with_all = ["plugin", "devices", "topology", "compile_cache"])]
    pub server: Option<String>,

    /// With --server: give up on the run after this many seconds (default:
    /// the server's limit).
    #[arg(long, value_name = "SECONDS", requires = "server")]
    pub timeout: Option<f64>,

    /// The PJRT plugin (default: $PW_PJRT_PLUGIN, else the CPU plugin
    /// scripts/setup.sh recorded). Its client options come from
    /// $PW_PJRT_CLIENT_OPTIONS, `name=value;...` (a GPU plugin:
    /// `preallocate=false`, `memory_fraction=0.5`, `visible_devices=[0,1]`).
    #[arg(long, value_name = "PATH")]
    pub plugin: Option<PathBuf>,

    /// Ask the plugin for this many devices (a CPU plugin makes them; any
    /// other must have exactly as many; 1 to 1024).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_DEVICES))]
    pub devices: Option<u16>,

    /// Lower onto this topology (TOML or JSON) instead of the plugin's
    /// devices as one island.
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,

    /// Order the program by this pw-schedule policy: critical-path (the
    /// default when lowering), gpipe or 1f1b. A lowered program is
    /// scheduled again.
    #[arg(long, value_name = "POLICY", value_parser = Policy::parse)]
    pub schedule: Option<Policy>,

    /// Run the program this many times first (outputs discarded), so that
    /// timings, --stats and --trace show a warm run (0 to 1000).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=1000), conflicts_with = "server")]
    pub warmup: u16,

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

    /// Run the program's Python steps (made with `pw.sidecar`) in a
    /// sidecar started with this interpreter: one with JAX, cloudpickle
    /// and pw's front end (the venv's `bin/python`). Without it a program
    /// with Python steps is refused. (With --server, the server's workers
    /// run them.)
    #[arg(long, env = "PW_SIDECAR_PYTHON", value_name = "PATH")]
    pub sidecar_python: Option<PathBuf>,

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

/// What a run gave, whichever way it ran.
struct Ran {
    outputs: Vec<HostArray>,
    /// The summary lines before the outputs.
    header: String,
    /// `--stats` lines.
    stats: String,
    /// The Chrome trace.
    trace: serde_json::Value,
}

/// The element type and shape of each input, in order.
type InputTypes = Vec<(DType, Vec<i64>)>;

/// Returns Ok(false) when the run worked but an --expect comparison failed.
fn run(
    cli: &Cli,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<bool, String> {
    let (name, source) = read_program(&cli.program, stdin)?;
    let quiet = cli.quiet;
    let mut progress = |what: &str| {
        if !quiet {
            let _ = writeln!(stderr, "pw-run: {what}");
        }
    };
    let ran = match &cli.server {
        Some(server) => remote(cli, server, &name, &source, &mut progress)?,
        None => local(cli, &name, &source, &mut progress)?,
    };
    if let Some(dir) = &cli.out_dir {
        write_outputs(dir, &ran.outputs)?;
    }
    let (matched, comparison) = compare(cli, &ran.outputs)?;
    if let Some(path) = &cli.trace {
        write_atomically(path, ran.trace.to_string())
            .map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
    }
    if !cli.quiet {
        let mut out = format!("pw-run {name}\n{}", ran.header);
        let _ = writeln!(out, "outputs");
        for (i, o) in ran.outputs.iter().enumerate() {
            let place = cli
                .out_dir
                .as_ref()
                .map(|d| format!(" -> {}", d.join(format!("output_{i}.npy")).display()))
                .unwrap_or_default();
            let _ = writeln!(out, "  #{i} {}{:?}{place}", o.dtype(), o.shape());
        }
        if !comparison.is_empty() {
            let _ = writeln!(out, "comparison with the expected outputs");
            for line in &comparison {
                let _ = writeln!(out, "  {line}");
            }
        }
        let _ = write!(stdout, "{out}");
    }
    if cli.stats {
        let _ = write!(stdout, "{}", ran.stats);
    }
    Ok(matched)
}

/// Runs in this process, on the plugin's devices.
fn local(
    cli: &Cli,
    name: &str,
    source: &[u8],
    progress: &mut dyn FnMut(&str),
) -> Result<Ran, String> {
    let plugin = match &cli.plugin {
        Some(path) => Plugin::load(path),
        None => Plugin::discover(),
    }
    .map_err(|e| format!("error: {e}"))?;
    let client = ClientOptions::from_env()
        .and_then(|options| Client::open(&plugin, &options, cli.devices.map(usize::from)))
        .map_err(|e| format!("error: {e}"))?;
    let resources = Resources::of(&client);
    let topology = || match &cli.topology {
        Some(path) => Ok((
            pw_core::Topology::load(path).map_err(|e| format!("error: {e}"))?,
            format!("topology {}", path.display()),
        )),
        None => Ok((
            resources.topology(),
            format!(
                "one island of {} {} devices",
                resources.devices.len(),
                resources.kind
            ),
        )),
    };
    let (plan, lowered) =
        lower::plan_of(name, source, cli.schedule, &topology).map_err(|d| d.to_string())?;
    resources.admit(&plan).map_err(|e| format!("error: {e}"))?;
    let types: InputTypes = plan
        .inputs
        .iter()
        .map(|&id| (plan.values[id].dtype, plan.values[id].shape.clone()))
        .collect();
    let inputs = inputs(cli, &types)?;
    let mut cache = Executables::new(&client, DiskCache::open(cli.compile_cache.as_deref()));
    let prepared = exec::prepare(&plan, &mut cache, progress).map_err(|e| format!("error: {e}"))?;
    let executor = Executor::new(&client);
    let sidecar = cli.sidecar_python.as_ref().map(|python| {
        exec::sidecar::Sidecar::new(
            exec::sidecar::Config {
                python: python.clone(),
                call_timeout: Duration::from_secs(exec::sidecar::DEFAULT_CALL_TIMEOUT_S),
            },
            0,
        )
    });
    for i in 0..cli.warmup {
        progress(&format!("warm-up run {} of {}", i + 1, cli.warmup));
        exec::run_local(&executor, &prepared, &inputs, sidecar.as_ref(), false)
            .map_err(|e| format!("error: warm-up run {}: {e}", i + 1))?;
    }
    let (outputs, report) = exec::run_local(
        &executor,
        &prepared,
        &inputs,
        sidecar.as_ref(),
        cli.stats || cli.trace.is_some(),
    )
    .map_err(|e| format!("error: {e}"))?;

    let mut header = String::new();
    let _ = writeln!(
        header,
        "  plugin     {} (PJRT C API {}), {} devices",
        plugin.path().display(),
        plugin.version(),
        resources.devices.len()
    );
    let _ = writeln!(
        header,
        "  lowered    {}",
        lowered.map_or("already".to_owned(), |how| format!("onto {how}"))
    );
    placement(&mut header, &plan.meshes, |_| String::new());
    if cli.warmup > 0 {
        let _ = writeln!(header, "  warm-up    {} runs before this one", cli.warmup);
    }
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
        header,
        "compile    {} executables compiled{from_cache} in {:.2} s ({} reused in this run: each computation is compiled once per device set)",
        stats.compiled, stats.seconds, stats.hits
    );
    let _ = writeln!(
        header,
        "run        {} steps ({} calls); host enqueued everything at {}, last output ready at {}, outputs on host at {}",
        plan.steps.len(),
        calls(&plan),
        ms(report.enqueued),
        ms(report.outputs_ready),
        ms(report.finished)
    );
    let (mut spans, shift) = trace::compile_spans(&cache.stats.spans);
    let ready = trace::inputs_ready(&prepared.part, &report.steps);
    let steps = prepared
        .part
        .steps
        .iter()
        .zip(&report.steps)
        .zip(ready)
        .map(|((s, t), r)| (s.step.label.as_str(), s.step.kind.name(), t, r));
    spans.extend(trace::run_spans(0, steps, shift));
    let trace = trace::chrome_json(&spans, &|track| match track {
        trace::Track::Compiler => "compiler".into(),
        trace::Track::Host(_) => "host (enqueue)".into(),
        trace::Track::Device(d) => format!("device {d}"),
        trace::Track::Network => "network".into(),
        trace::Track::Recovery => "recovery".into(),
        trace::Track::Client => "client".into(),
        trace::Track::Controller => "controller".into(),
    });
    Ok(Ran {
        outputs,
        header,
        stats: local_stats(&prepared, &report),
        trace,
    })
}

/// Runs on the workers of a pw-server.
fn remote(
    cli: &Cli,
    server: &str,
    name: &str,
    source: &[u8],
    progress: &mut dyn FnMut(&str),
) -> Result<Ran, String> {
    let types = lower::input_types(name, source).map_err(|d| d.to_string())?;
    let inputs = inputs(cli, &types)?;
    let timeout = match cli.timeout {
        Some(t) if t.is_finite() && t > 0.0 && t < 1e9 => Some(Duration::from_secs_f64(t)),
        Some(t) => {
            return Err(format!(
                "error: --timeout {t} is not a positive number of seconds"
            ))
        }
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("error: {e}"))?;
    let (outputs, summary) = runtime
        .block_on(client::run(
            server,
            RemoteRun {
                name,
                source,
                inputs: &inputs,
                record: cli.stats || cli.trace.is_some(),
                timeout,
                schedule: cli.schedule.map(Policy::name),
            },
            progress,
        ))
        .map_err(|e| e.render())?;
    Ok(Ran {
        outputs,
        header: remote_header(server, &summary),
        stats: remote_stats(&summary),
        trace: remote_trace(&summary),
    })
}

/// The program's name and bytes (MLIR text or bytecode, told apart when
/// it is parsed).
fn read_program(path: &Path, stdin: &mut dyn Read) -> Result<(String, Vec<u8>), String> {
    if path.as_os_str() == "-" {
        let mut source = Vec::new();
        stdin
            .read_to_end(&mut source)
            .map_err(|e| format!("error: cannot read standard input: {e}"))?;
        return Ok(("<stdin>".into(), source));
    }
    let source =
        std::fs::read(path).map_err(|e| format!("error: cannot read {}: {e}", path.display()))?;
    Ok((path.display().to_string(), source))
}

/// The inputs: the `.npy` files given, checked against `types`, or random
/// ones.
fn inputs(cli: &Cli, types: &InputTypes) -> Result<Vec<HostArray>, String> {
    if cli.random_inputs {
        return random_inputs(types, cli.seed);
    }
    if cli.inputs.len() != types.len() {
        return Err(format!(
            "error: the program takes {} inputs, {} given{}",
            types.len(),
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
        .zip(types)
        .enumerate()
        .map(|(i, (path, (dtype, shape)))| {
            let host =
                npy::read_expecting(path, *dtype).map_err(|e| format!("error: input #{i}: {e}"))?;
            if host.dtype() != *dtype || !same_shape(host.shape(), shape) {
                return Err(format!(
                    "error: input #{i} ({}) is {}{:?}, but the program expects {dtype}{shape:?}",
                    path.display(),
                    host.dtype(),
                    host.shape(),
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
fn random_inputs(types: &InputTypes, seed: u64) -> Result<Vec<HostArray>, String> {
    let shapes = random_shapes(
        types
            .iter()
            .map(|(dtype, shape)| (*dtype, shape.as_slice(), format!("{dtype}{shape:?}"))),
    )?;
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let unit = |bits: u64| (bits >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    types
        .iter()
        .zip(shapes)
        .map(|(&(dtype, _), shape)| {
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
                    DType::C64 => {
                        bytes.extend_from_slice(&(unit(bits) as f32).to_ne_bytes());
                        bytes.extend_from_slice(&(unit(next()) as f32).to_ne_bytes());
                    }
                    DType::C128 => {
                        bytes.extend_from_slice(&unit(bits).to_ne_bytes());
                        bytes.extend_from_slice(&unit(next()).to_ne_bytes());
                    }
                    f8 if f8.is_float8() => {
                        // A byte whose value is finite and in [-1, 1].
                        let in_range = |b: u8| {
                            f8.float8_value(b)
                                .is_some_and(|v| v.is_finite() && v.abs() <= 1.0)
                        };
                        let mut b = bits as u8;
                        while !in_range(b) {
                            b = next() as u8;
                        }
                        bytes.push(b);
                    }
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
        // Real and imaginary parts, interleaved: compared part by part.
        DType::C64 => a
            .bytes()
            .chunks_exact(4)
            .map(|c| <[u8; 4]>::try_from(c).map_or(f64::NAN, |b| f64::from(f32::from_ne_bytes(b))))
            .collect(),
        DType::C128 => a
            .bytes()
            .chunks_exact(8)
            .map(|c| <[u8; 8]>::try_from(c).map_or(f64::NAN, f64::from_ne_bytes))
            .collect(),

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
        // The 8-bit floats.
        f8 => a
            .bytes()
            .iter()
            .map(|&b| f8.float8_value(b).unwrap_or(f64::NAN))
            .collect(),
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
        let want = npy::read_expecting(path, got.dtype())
            .map_err(|e| format!("error: --expect #{i}: {e}"))?;
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

fn calls(plan: &pw_core::plan::Plan) -> usize {
    plan.steps
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Call { .. }))
        .count()
}

/// The placement lines; `where_` says where a mesh's devices are.
fn placement(
    out: &mut String,
    meshes: &[pw_core::plan::MeshPlacement],
    where_: impl Fn(&[i64]) -> String,
) {
    let _ = writeln!(out, "placement");
    let width = meshes.iter().map(|m| m.name.len()).max().unwrap_or(0);
    for m in meshes {
        let _ = writeln!(
            out,
            "  @{:<width$}  {:<12} devices {:?}{}",
            m.name,
            m.axes,
            m.devices,
            where_(&m.devices)
        );
    }
}

/// One row of the `--stats` table.
struct StatRow<'a> {
    step: usize,
    /// The worker that ran it (a distributed run).
    worker: Option<u32>,
    label: &'a str,
    devices: &'a [i64],
    timing: &'a exec::StepTiming,
    /// Added to the timing's times (they count from when its worker got its part).
    shift: Duration,
}

fn local_stats(prepared: &Prepared, report: &RunReport) -> String {
    let mut out = peak_bytes_table(&report.peak_bytes);
    let rows = prepared
        .part
        .steps
        .iter()
        .zip(&report.steps)
        .map(|(s, timing)| StatRow {
            step: s.index,
            worker: None,
            label: &s.step.label,
            devices: &s.step.devices,
            timing,
            shift: Duration::ZERO,
        })
        .collect();
    out.push_str(&stats_table(rows));
    out
}

/// The `--stats` lines of the most bytes each device held at once.
fn peak_bytes_table(peak: &std::collections::BTreeMap<i64, u64>) -> String {
    let mut out = String::from(
        "peak device bytes (buffers held by the run, per device)
",
    );
    for (device, bytes) in peak {
        let _ = writeln!(out, "  device {device:>4}  {bytes:>12} B");
    }
    out
}

/// The `--stats` table: per step, when it was enqueued and finished.
fn stats_table(mut rows: Vec<StatRow>) -> String {
    rows.sort_by_key(|r| (r.step, r.worker));
    let mut out = String::from("steps (times from the start of the run)\n");
    let _ = writeln!(
        out,
        "  {:>10}  {:>10}  {:>10}  step",
        "enqueued", "enq. done", "finished"
    );
    for r in rows {
        let finished = r.timing.done.iter().filter_map(|(_, d)| *d).max();
        let on = r
            .worker
            .map(|w| format!(" (worker {w})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:>10}  {:>10}  {:>10}  {} on {:?}{on}",
            ms(r.shift + r.timing.enqueue_start),
            ms(r.shift + r.timing.enqueue_end),
            finished.map_or("-".to_owned(), |d| ms(r.shift + d)),
            r.label,
            r.devices,
        );
    }
    out
}

/// The summary lines of a run on a server.
fn remote_header(server: &str, s: &RunSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  server     {server}, run {}; {} workers",
        s.run,
        s.workers.len()
    );
    let _ = writeln!(
        out,
        "  lowered    {}",
        if s.lowered.is_empty() {
            "already".to_owned()
        } else {
            format!("onto {}", s.lowered)
        }
    );
    let _ = writeln!(out, "workers");
    for w in &s.workers {
        let _ = writeln!(
            out,
            "  worker {}  {} ({} pid {})  island {}  devices {:?}",
            w.id, w.address, w.host, w.pid, w.island, w.devices
        );
    }
    let worker_of = |devices: &[i64]| {
        let mut ws: Vec<u32> = devices
            .iter()
            .filter_map(|d| {
                s.devices
                    .iter()
                    .find(|(g, _)| g == d)
                    .map(|(_, a)| a.worker)
            })
            .collect();
        ws.dedup();
        format!(
            " on worker {}",
            ws.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )
    };
    placement(&mut out, &s.placement, worker_of);
    let count = |f: &dyn Fn(&Option<pw_controller::compile::Source>) -> bool| {
        s.executables.iter().filter(|e| f(&e.source)).count()
    };
    use pw_controller::compile::Source;
    let compiled = count(&|x| matches!(x, Some(Source::Controller | Source::Worker(_))));
    let _ = writeln!(
        out,
        "compile    {compiled} executables compiled, {} from the compile cache, {} compiled by an earlier run, {} already loaded on their workers",
        count(&|x| matches!(x, Some(Source::DiskCache))),
        count(&|x| matches!(x, Some(Source::Memory))),
        count(&|x| x.is_none()),
    );
    for e in &s.executables {
        let how = match &e.source {
            Some(source) => format!("{source}, shipped"),
            None => "already loaded".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {} for devices {:?} on worker {}: {how}",
            e.what, e.devices, e.worker
        );
    }
    let t = &s.timings;
    let calls = s.steps.iter().filter(|l| l.kind == "call").count();
    let _ = writeln!(
        out,
        "run        {} steps ({calls} calls); lowered at {}, executables ready at {}, inputs sent at {}, parts sent at {}, every part done at {}, outputs on host at {}",
        s.steps.len(),
        ms(t.lowered),
        ms(t.executables_ready),
        ms(t.inputs_sent),
        ms(t.parts_sent),
        ms(t.parts_done),
        ms(t.outputs_fetched)
    );
    for p in &s.parts {
        let sent = s.part_sent(p.worker);
        let _ = writeln!(
            out,
            "  worker {}: host enqueued its {} steps by {}",
            p.worker,
            p.steps.len(),
            ms(sent + p.enqueued)
        );
    }
    let pieces: usize = s.parts.iter().map(|p| p.sends.len()).sum();
    let (to_workers, from_workers) = s
        .controller_bytes
        .iter()
        .fold((0, 0), |(a, b), (_, x, y)| (a + x, b + y));
    let _ = writeln!(
        out,
        "traffic    worker to worker: {} bytes in {pieces} pieces; controller to workers: {to_workers} bytes (inputs); workers to controller: {from_workers} bytes (outputs)",
        s.peer_bytes()
    );
    for r in &s.recoveries {
        out.push_str(&recovery_line(r));
    }
    out
}

/// `recovery  lost worker 1 (...) ...; devices 2->6, 3->7; replayed 5 of
/// 12 steps, 3 values (96 bytes) kept; ...`.
fn recovery_line(r: &pw_controller::summary::RecoveryLine) -> String {
    let moved: Vec<String> = r.moved.iter().map(|(a, b)| format!("{a}->{b}")).collect();
    let outcome = match r.recovered {
        Some(t) => format!("recovered at {}", ms(t)),
        None => "not recovered".to_owned(),
    };
    format!(
        "recovery   lost {}; noticed at {}, survivors settled at {} (then waited {} for capacity); devices {}; replayed {} of {} steps; survivors kept {} values ({} bytes); {outcome}\n",
        r.lost.join(", "),
        ms(r.noticed),
        ms(r.detected),
        ms(r.waited),
        if moved.is_empty() { "not moved".to_owned() } else { moved.join(", ") },
        r.steps_replayed,
        r.steps,
        r.values_kept,
        r.bytes_kept,
    )
}

fn remote_stats(s: &RunSummary) -> String {
    let mut rows = Vec::new();
    for p in &s.parts {
        let shift = s.part_sent(p.worker);
        for (index, timing) in &p.steps {
            if let Some(line) = s.steps.get(*index) {
                rows.push(StatRow {
                    step: *index,
                    worker: Some(p.worker),
                    label: &line.label,
                    devices: &line.devices,
                    timing,
                    shift,
                });
            }
        }
    }
    // Device ids are global: each is one worker's.
    let peak = s
        .parts
        .iter()
        .flat_map(|p| p.peak_bytes.iter().map(|(d, b)| (*d, *b)))
        .collect();
    let mut out = peak_bytes_table(&peak);
    out.push_str(&stats_table(rows));
    for r in &s.recoveries {
        out.push_str(&recovery_line(r));
    }
    out
}

/// The trace of a run on a server: per worker, its host and its devices;
/// pieces between workers on the network track.
fn remote_trace(s: &RunSummary) -> serde_json::Value {
    let mut spans = s.spans();
    for r in &s.recoveries {
        // From when the loss was noticed to when the replay had finished.
        spans.push(trace::Span {
            name: format!(
                "recovery: lost {}; replayed {} of {} steps",
                r.lost.join(", "),
                r.steps_replayed,
                r.steps
            ),
            category: "recovery",
            track: trace::Track::Recovery,
            start: r.noticed,
            end: r.recovered.unwrap_or(r.detected + r.waited),
        });
    }
    let name_of = |d: i64| {
        s.devices
            .iter()
            .find(|(g, _)| *g == d)
            .map_or(format!("device {d}"), |(_, a)| {
                format!("device {d} (worker {}, local {})", a.worker, a.local)
            })
    };
    trace::chrome_json(&spans, &|track| match track {
        trace::Track::Compiler => "compiler".into(),
        trace::Track::Host(w) => format!("worker {w} host (enqueue)"),
        trace::Track::Device(d) => name_of(d),
        trace::Track::Network => "network (worker to worker)".into(),
        trace::Track::Recovery => "controller: recoveries".into(),
        trace::Track::Client => "client".into(),
        trace::Track::Controller => "controller".into(),
    })
}
