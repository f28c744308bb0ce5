//! From a program (MLIR text or bytecode) to the plan the runtime executes
//! (`pw_compiler::export`: verify, lower unless physical already, read the
//! plan). Shared by pw-run (onto its own devices) and pw-server (onto its
//! workers); diagnostics are rendered like mlir-opt's, with the program's
//! lines.

use crate::diagnostics::Capture;
use melior::ir::ValueLike;
use pw_compiler::schedule::Policy;
use pw_compiler::LowerOptions;
use pw_core::diagnostic::Diagnostics;
use pw_core::{plan::Plan, DType, Topology};
use pw_dialect::ArrayType;

/// The plan of program `source` (text or bytecode, named `name` in
/// diagnostics), lowered onto
/// `topology()` (which also says how to describe it) when it is not
/// physical yet, and scheduled by `schedule` (None: the default for a
/// program it lowers, the program's own order for one already lowered).
/// Returns how it was lowered (None: it already was). Errors are the
/// program's diagnostics (with its text, to render them).
pub fn plan_of(
    name: &str,
    source: &[u8],
    schedule: Option<Policy>,
    topology: &dyn Fn() -> Result<(Topology, String), String>,
) -> Result<(Plan, Option<String>), Diagnostics> {
    with_diagnostics(name, source, |context| {
        let module = pw_dialect::parse_source(context, source, name)
            .ok_or_else(|| "the program does not parse".to_owned())?;
        let mut description = String::new();
        let (plan, took) = pw_compiler::export::plan(context, &module, schedule, || {
            let (topology, how) = topology()?;
            description = how;
            Ok(LowerOptions {
                topology,
                schedule: schedule.unwrap_or_default(),
            })
        })
        .map_err(|e| e.to_string())?;
        Ok((
            plan,
            took.map(|t| format!("{description} in {:.1} ms", t.as_secs_f64() * 1e3)),
        ))
    })
}

/// The element type and shape of each input of program `source`, read from
/// `@main`'s signature (no lowering needed).
pub fn input_types(name: &str, source: &[u8]) -> Result<Vec<(DType, Vec<i64>)>, Diagnostics> {
    with_diagnostics(name, source, |context| {
        let module = pw_dialect::parse_source(context, source, name)
            .ok_or_else(|| "the program does not parse".to_owned())?;
        let program = pw_dialect::Program::read(&module).map_err(|d| {
            pw_dialect::diag::emit_all(&d);
            "the program is not valid".to_owned()
        })?;
        program
            .inputs()
            .iter()
            .map(|v| {
                ArrayType::read(v.r#type())
                    .map(|t| (t.dtype, t.shape))
                    .map_err(|e| e.to_string())
            })
            .collect()
    })
}

/// Runs `f` in a fresh context; its error comes after the diagnostics `f`
/// emitted (which quote the program's lines when it is text).
fn with_diagnostics<T>(
    name: &str,
    source: &[u8],
    f: impl FnOnce(&melior::Context) -> Result<T, String>,
) -> Result<T, Diagnostics> {
    let context = pw_dialect::new_context();
    let capture = Capture::new(&context);
    let outcome = f(&context);
    let items = capture.take();
    drop(capture);
    outcome.map_err(|e| {
        let mut diagnostics = Diagnostics {
            name: name.to_owned(),
            text: if pw_dialect::is_bytecode(source) {
                String::new()
            } else {
                String::from_utf8_lossy(source).into_owned()
            },
            items,
        };
        diagnostics.error(e);
        diagnostics
    })
}
