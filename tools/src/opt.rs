//! pw-opt: reads a pw program, verifies it, runs passes, prints it.
//!
//! It follows mlir-opt's conventions: the input is a file or `-` (stdin),
//! `-o` names the output, `--split-input-file` treats `// -----`-separated
//! buffers independently, `--verify-diagnostics` checks `expected-*`
//! comments instead of reporting, `--emit-bytecode` writes MLIR bytecode
//! (read back wherever pw reads programs), and every error is a located
//! diagnostic. The exit code is 0 on success and 1 on any error.

use crate::{
    diagnostics::{Capture, Diagnostic, Position, Source},
    expected, split, views,
};
use clap::{Arg, ArgAction, ArgMatches, CommandFactory, FromArgMatches, Parser, ValueEnum};
use melior::Context;
use pw_compiler::{
    registry::{self, FULL_PIPELINE},
    Pipeline, RunOptions, Timings,
};
use pw_dialect::print::{self, PrintOptions};
use std::{
    ffi::OsString,
    io::{Read, Write},
    path::{Path, PathBuf},
};

/// Command line of pw-opt.
#[derive(Parser, Debug)]
#[command(
    name = "pw-opt",
    version,
    about = "Verify, transform and print pw programs (mlir-opt conventions)",
    after_help = "Examples:\n  \
        pw-opt examples/pipeline.mlir\n  \
        pw-opt --pw-lower examples/pipeline.mlir -o lowered.mlir\n  \
        pw-opt --pw-lower --emit-bytecode examples/pipeline.mlir -o lowered.mlirbc\n  \
        pw-opt lowered.mlirbc    # bytecode back to text\n  \
        pw-opt --pw-lower='topology=islands.toml' --emit=summary examples/rl_step.mlir\n  \
        pw-opt --pass-pipeline='builtin.module(pw-assign-devices,pw-propagate-shardings,cse)' program.mlir\n  \
        pw-opt --split-input-file --verify-diagnostics tests/ir/dialect/invalid.mlir\n  \
        cat program.mlir | pw-opt - -o checked.mlir\n\n\
        Pass flags run in the order given; a pass's options follow '=' as\n\
        'name=value' words, e.g. --pw-lower-to-physical='devices=4 kind=cpu'."
)]
pub struct Cli {
    /// Input file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub input: PathBuf,

    /// Output file (written only when everything succeeded).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Treat `// -----`-separated parts of the input as separate programs.
    #[arg(long)]
    pub split_input_file: bool,

    /// Check diagnostics against `// expected-error {{...}}` comments.
    #[arg(long)]
    pub verify_diagnostics: bool,

    /// Print every op in MLIR's generic form.
    #[arg(long = "mlir-print-op-generic")]
    pub print_generic: bool,

    /// Write MLIR bytecode instead of text: for programs that machines read
    /// back (pw-opt, pw-run and pw-server read it wherever they read text,
    /// several times faster).
    #[arg(long, conflicts_with_all = ["split_input_file", "print_generic"])]
    pub emit_bytecode: bool,

    /// Run this pipeline, e.g. 'builtin.module(pw-assign-devices,cse)'.
    #[arg(long, value_name = "PIPELINE")]
    pub pass_pipeline: Option<String>,

    /// List the passes and their options, then exit.
    #[arg(long)]
    pub list_passes: bool,

    /// Print the IR after every pass (to standard error).
    #[arg(long)]
    pub print_ir_after_all: bool,

    /// Verify the program after every pass (`--verify-each=false` to skip).
    #[arg(long, default_value_t = true, action = ArgAction::Set, value_name = "BOOL")]
    pub verify_each: bool,

    /// Print the wall time of parsing, each pass and printing (to standard
    /// error).
    #[arg(long = "mlir-timing")]
    pub timing: bool,

    /// What to print: the IR, a Graphviz graph, or a summary table.
    #[arg(long, value_enum, default_value_t = Emit::Mlir)]
    pub emit: Emit,

    /// Leave the program to the operating system instead of destroying it
    /// op by op (as clang's -disable-free): the pw-opt binary sets it, since
    /// it exits right after.
    #[arg(long, hide = true)]
    pub disable_free: bool,
}

/// Output formats of pw-opt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The program as MLIR.
    Mlir,
    /// The dataflow graph for Graphviz: calls grouped by mesh, transfers
    /// labelled with bytes and link.
    Dot,
    /// Tables of placement, transfers (bytes per link) and schedule.
    Summary,
}

/// The clap command: the fixed options plus one flag per registered pass.
pub fn command() -> clap::Command {
    let pass_flag = |name: &'static str, help: &'static str| {
        Arg::new(name)
            .long(name)
            .help(help)
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("")
            .value_name("OPTIONS")
            .action(ArgAction::Append)
            .help_heading("Passes (run in the order given)")
    };
    let mut command = Cli::command().arg(pass_flag(FULL_PIPELINE, registry::FULL_PIPELINE_SUMMARY));
    for info in registry::passes() {
        command = command.arg(pass_flag(info.argument, info.summary));
    }
    command
}

/// The pass flags of a command line, in the order they were given.
fn pipeline_from_flags(matches: &ArgMatches) -> Result<Pipeline, String> {
    let names = std::iter::once(FULL_PIPELINE).chain(registry::passes().map(|p| p.argument));
    let mut given: Vec<(usize, &str, String)> = Vec::new();
    for name in names {
        if let (Some(indices), Some(values)) =
            (matches.indices_of(name), matches.get_many::<String>(name))
        {
            given.extend(indices.zip(values).map(|(i, v)| (i, name, v.clone())));
        }
    }
    given.sort_by_key(|(i, _, _)| *i);
    let mut pipeline = Pipeline::default();
    for (_, name, options) in given {
        pipeline.extend(registry::pipeline(
            name,
            &registry::parse_options(&options)?,
        )?);
    }
    Ok(pipeline)
}

fn list_passes(out: &mut dyn Write) {
    let _ = writeln!(out, "Passes:");
    let _ = writeln!(out, "  --{FULL_PIPELINE:<24} the full pipeline, by phase:");
    let full = Pipeline::lower(&pw_compiler::LowerOptions::default());
    for phase in &full.phases {
        let names: Vec<&str> = phase.steps.iter().map(|s| s.name).collect();
        let _ = writeln!(out, "  {:<26}   {}: {}", "", phase.name, names.join(", "));
    }
    for (option, help) in registry::FULL_PIPELINE_OPTIONS {
        let _ = writeln!(out, "  {:<26}   {option}=...  {help}", "");
    }
    for info in registry::passes() {
        let _ = writeln!(out, "  --{:<24} {}", info.argument, info.summary);
        for (option, help) in info.options {
            let _ = writeln!(out, "  {:<26}   {option}=...  {help}", "");
        }
    }
}

/// Runs pw-opt with `args` (program name first); returns the exit code.
pub fn main(
    args: Vec<OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let parsed = command()
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = write!(stderr, "{}", e.render());
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    if cli.list_passes {
        list_passes(stdout);
        return 0;
    }
    let pipeline = match (&cli.pass_pipeline, pipeline_from_flags(&matches)) {
        (_, Err(e)) => Err(e),
        (Some(_), Ok(flags)) if !flags.phases.is_empty() => {
            Err("give either --pass-pipeline or pass flags, not both".to_owned())
        }
        (Some(text), Ok(_)) => registry::parse_pipeline(text),
        (None, Ok(flags)) => Ok(flags),
    };
    let pipeline = match pipeline {
        Ok(pipeline) => pipeline,
        Err(e) => {
            let _ = writeln!(stderr, "error: {e}");
            return 1;
        }
    };
    match run(&cli, &pipeline, stdin, stdout, stderr) {
        Ok(()) => 0,
        Err(()) => 1,
    }
}

fn run(
    cli: &Cli,
    pipeline: &Pipeline,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), ()> {
    let mut fail = |message: String| {
        let _ = writeln!(stderr, "{message}");
    };
    let (name, bytes) = read_input(&cli.input, stdin).map_err(|e| fail(format!("error: {e}")))?;
    if cli.emit_bytecode && cli.emit != Emit::Mlir {
        fail("error: --emit-bytecode writes the program: it needs --emit=mlir".into());
        return Err(());
    }
    // Bytecode is one program, without text to split or comments to check.
    let bytecode = pw_dialect::is_bytecode(&bytes);
    if bytecode && (cli.split_input_file || cli.verify_diagnostics) {
        fail(format!(
            "error: {name} is MLIR bytecode; --split-input-file and --verify-diagnostics need text"
        ));
        return Err(());
    }
    let text = if bytecode {
        ""
    } else {
        std::str::from_utf8(&bytes).map_err(|_| {
            fail(format!(
                "{name}:1:1: error: the input is neither UTF-8 text nor MLIR bytecode"
            ))
        })?
    };
    let split = if cli.split_input_file {
        split::split(text)
    } else {
        Vec::new()
    };
    // Each buffer's bytes (what is parsed) and text (what expectations are
    // read from: none for bytecode).
    let chunks: Vec<(&[u8], &str)> = if cli.split_input_file {
        split
            .iter()
            .map(|c| (c.text.as_bytes(), c.text.as_str()))
            .collect()
    } else {
        vec![(&bytes, text)]
    };

    let context = pw_dialect::new_context();
    let quoted = Source::new(&name, text);
    let mut outputs = Vec::new();
    let mut failed = false;
    for &(chunk, chunk_text) in &chunks {
        let capture = Capture::new(&context);
        let printed = process(cli, pipeline, &context, chunk, &name, stderr);
        let produced = capture.take();
        drop(capture);
        if cli.verify_diagnostics {
            let (mut expected, mut problems) = expected::parse(chunk_text, &name);
            problems.extend(expected::check(&mut expected, &produced, &name));
            for p in &problems {
                failed = true;
                report(stderr, p.position.clone(), &p.message, &quoted);
            }
        } else {
            let mut rendered = String::new();
            for d in &produced {
                quoted.render(d, &mut rendered);
            }
            let _ = stderr.write_all(rendered.as_bytes());
            if printed.is_none() || produced.iter().any(is_error) {
                failed = true;
            }
        }
        if let Some(output) = printed {
            outputs.push(output);
        }
    }
    let separator = format!("\n{}\n\n", split::SEPARATOR);
    let output = outputs.join(separator.as_bytes());
    match &cli.output {
        Some(path) if !failed => write_atomically(path, &output).map_err(|e| {
            let _ = writeln!(stderr, "error: cannot write {}: {e}", path.display());
        })?,
        Some(_) => {}
        None => {
            let _ = stdout.write_all(&output);
        }
    }
    if cli.disable_free {
        std::mem::forget(context);
    }
    if failed {
        Err(())
    } else {
        Ok(())
    }
}

/// Parses, verifies, transforms and prints (or writes as bytecode) one
/// buffer; `None` when it failed (the reasons went to the context's
/// diagnostics).
fn process(
    cli: &Cli,
    pipeline: &Pipeline,
    context: &Context,
    source: &[u8],
    name: &str,
    stderr: &mut dyn Write,
) -> Option<Vec<u8>> {
    let mut timings = Timings::default();
    let module = timings.time("parse", || pw_dialect::parse_source(context, source, name))?;
    let result = {
        let mut options = RunOptions {
            verify_each: cli.verify_each,
            ir_after: if cli.print_ir_after_all {
                Some(&mut *stderr)
            } else {
                None
            },
        };
        pw_compiler::run(context, &module, pipeline, &mut options, &mut timings)
    };
    let analysis = result.ok()?;
    // Parsing ran MLIR's verifier; so did every pass when verifying.
    let verified = cli.verify_each || pipeline.phases.is_empty();
    let printed = timings.time("print", || match cli.emit {
        Emit::Mlir if cli.emit_bytecode => {
            let written = pw_dialect::bytecode::write(&module.as_operation());
            if written.is_none() {
                let _ = writeln!(stderr, "{name}: error: MLIR could not write the bytecode");
            }
            written
        }
        Emit::Mlir => Some(
            print::print(
                &module.as_operation(),
                PrintOptions {
                    generic: cli.print_generic,
                    verified,
                },
            )
            .into_bytes(),
        ),
        Emit::Dot => views::dot(&analysis).map(String::into_bytes),
        Emit::Summary => views::summary(&analysis).map(String::into_bytes),
    });
    if cli.timing {
        let _ = write!(stderr, "{}", timings.report());
    }
    if cli.disable_free {
        drop(analysis);
        std::mem::forget(module);
    }
    printed
}

fn is_error(d: &Diagnostic) -> bool {
    d.severity == crate::diagnostics::Severity::Error
}

fn report(stderr: &mut dyn Write, position: Option<Position>, message: &str, source: &Source) {
    let d = Diagnostic {
        severity: crate::diagnostics::Severity::Error,
        position,
        message: message.to_owned(),
        notes: Vec::new(),
    };
    let mut out = String::new();
    source.render(&d, &mut out);
    let _ = stderr.write_all(out.as_bytes());
}

fn read_input(path: &Path, stdin: &mut dyn Read) -> Result<(String, Vec<u8>), String> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        stdin
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(("<stdin>".to_owned(), bytes))
    } else {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok((path.display().to_string(), bytes))
    }
}

/// Writes through a temporary file and a rename, so that a failure never
/// leaves a half-written output behind. Anything but a regular file
/// (`/dev/null`, a pipe, a terminal) is written in place: renaming over it
/// would replace the device with a file.
pub fn write_atomically(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    let text = text.as_ref();
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::write(path, text);
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
