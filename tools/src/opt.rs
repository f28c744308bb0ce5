//! pw-opt: reads a pw program, verifies it, runs passes, prints it.
//!
//! It follows mlir-opt's conventions: the input is a file or `-` (stdin),
//! `-o` names the output, `--split-input-file` treats `// -----`-separated
//! buffers independently, `--verify-diagnostics` checks `expected-*`
//! comments instead of reporting, and every error is a located diagnostic.
//! The exit code is 0 on success and 1 on any error.

use crate::{
    diagnostics::{render, Capture, Captured, Position},
    expected, split,
};
use clap::Parser;
use melior::{
    ir::{
        operation::{OperationLike, OperationPrintingFlags},
        Module,
    },
    Context,
};
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
        pw-opt --split-input-file --verify-diagnostics tests/ir/verify_invalid.mlir\n  \
        cat program.mlir | pw-opt - -o checked.mlir"
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
}

/// Runs pw-opt with `args` (program name first); returns the exit code.
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
        Ok(()) => 0,
        Err(()) => 1,
    }
}

fn run(
    cli: &Cli,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), ()> {
    let (name, bytes) = read_input(&cli.input, stdin).map_err(|e| {
        let _ = writeln!(stderr, "error: {e}");
    })?;
    let Ok(source) = String::from_utf8(bytes) else {
        let _ = writeln!(stderr, "{name}:1:1: error: input is not UTF-8 text");
        return Err(());
    };
    let chunks = if cli.split_input_file {
        split::split(&source)
    } else {
        vec![split::Chunk {
            text: source.clone(),
        }]
    };

    let context = pw_dialect::new_context();
    let mut outputs = Vec::new();
    let mut failed = false;
    for chunk in &chunks {
        let capture = Capture::new(&context);
        let printed = process(cli, &context, &chunk.text, &name);
        let produced = capture.take();
        drop(capture);
        if cli.verify_diagnostics {
            let (mut expected, mut problems) = expected::parse(&chunk.text, &name);
            problems.extend(expected::check(&mut expected, &produced, &name));
            for p in &problems {
                failed = true;
                report(stderr, p.position.clone(), &p.message, &source);
            }
        } else {
            for d in &produced {
                let _ = write!(stderr, "{}", render(d, Some(&source)));
            }
            if printed.is_none() || produced.iter().any(is_error) {
                failed = true;
            }
        }
        if let Some(text) = printed {
            outputs.push(text);
        }
    }
    let separator = format!("\n{}\n\n", split::SEPARATOR);
    let text = outputs.join(&separator);
    match &cli.output {
        Some(path) if !failed => write_atomically(path, &text).map_err(|e| {
            let _ = writeln!(stderr, "error: cannot write {}: {e}", path.display());
        })?,
        Some(_) => {}
        None => {
            let _ = stdout.write_all(text.as_bytes());
        }
    }
    if failed {
        Err(())
    } else {
        Ok(())
    }
}

/// Parses, verifies and prints one buffer; `None` when it failed (the
/// reasons went to the context's diagnostics).
fn process(cli: &Cli, context: &Context, text: &str, name: &str) -> Option<String> {
    let module = pw_dialect::parse_source(context, text, name)?;
    if pw_dialect::diag::emit_all(&pw_dialect::verify::verify(&module)) {
        return None;
    }
    print(cli, &module)
}

fn print(cli: &Cli, module: &Module) -> Option<String> {
    let op = module.as_operation();
    let text = if cli.print_generic {
        op.to_string_with_flags(OperationPrintingFlags::new().print_generic_operation_form())
            .ok()?
    } else {
        op.to_string()
    };
    Some(text)
}

fn is_error(d: &Captured) -> bool {
    d.severity == crate::diagnostics::Severity::Error
}

fn report(stderr: &mut dyn Write, position: Option<Position>, message: &str, source: &str) {
    let d = Captured {
        severity: crate::diagnostics::Severity::Error,
        position,
        message: message.to_owned(),
        notes: Vec::new(),
    };
    let _ = write!(stderr, "{}", render(&d, Some(source)));
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
/// leaves a half-written output behind.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
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
