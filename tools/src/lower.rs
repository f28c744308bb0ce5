//! From program text to the plan the runtime executes: parse, verify, lower
//! unless already lowered, read the plan. Shared by pw-run (onto its own
//! devices) and pw-server (onto its workers); diagnostics are rendered like
//! mlir-opt's, with the program's lines.

use crate::{
    diagnostics::{render, Capture},
    pipeline::{self, Timings},
};
use melior::ir::ValueLike;
use pw_core::{plan::Plan, DType, Topology};
use pw_dialect::{
    ops::{self, OpKind},
    ArrayType,
};
use std::time::Instant;

/// Whether a program still needs lowering: a mesh without devices, or a
/// value or op of an earlier stage.
fn needs_lowering(program: &pw_dialect::Program) -> bool {
    program.meshes.iter().any(|m| m.devices.is_none())
        || program.meshes.is_empty()
        || program.ops().iter().any(|op| {
            matches!(OpKind::of(op), Some(OpKind::Transfer | OpKind::Reshard))
                || (OpKind::of(op) == Some(OpKind::Call)
                    && ops::symbol_attr(op, ops::ATTR_MESH).is_none())
        })
}

/// The plan of program `text` (named `name` in diagnostics), lowered onto
/// `topology()` (which also says how to describe it) when it is not lowered
/// yet. Returns how it was lowered (None: it already was). Errors are
/// rendered, ready to print.
pub fn plan_of(
    name: &str,
    text: &str,
    topology: &dyn Fn() -> Result<(Topology, String), String>,
) -> Result<(Plan, Option<String>), String> {
    with_diagnostics(name, text, |context| plan_in(context, name, text, topology))
}

/// Runs `f` in a fresh context; an error comes after the diagnostics `f`
/// emitted, rendered with the program's lines.
fn with_diagnostics<T>(
    name: &str,
    text: &str,
    f: impl FnOnce(&melior::Context) -> Result<T, String>,
) -> Result<T, String> {
    let context = pw_dialect::new_context();
    let capture = Capture::new(&context);
    let outcome = f(&context);
    let diagnostics: String = capture
        .take()
        .iter()
        .map(|d| render(d, Some((name, text))))
        .collect();
    drop(capture);
    outcome.map_err(|e| format!("{diagnostics}{e}"))
}

fn plan_in(
    context: &melior::Context,
    name: &str,
    text: &str,
    topology: &dyn Fn() -> Result<(Topology, String), String>,
) -> Result<(Plan, Option<String>), String> {
    let mut module = pw_dialect::parse_source(context, text, name)
        .ok_or_else(|| "error: the program does not parse".to_owned())?;
    if pw_dialect::diag::emit_all(&pw_dialect::verify::verify(&module)) {
        return Err("error: the program is not valid".into());
    }
    let lower = pw_dialect::Program::read(&module)
        .map(|p| needs_lowering(&p))
        .unwrap_or(true);
    let mut how = None;
    if lower {
        let (topology, description) = topology()?;
        let steps = pipeline::lowering(topology).map_err(|e| format!("error: {e}"))?;
        let started = Instant::now();
        pipeline::run(
            context,
            &mut module,
            &steps,
            None,
            true,
            &mut Timings::default(),
        )
        .map_err(|_| "error: lowering failed".to_owned())?;
        how = Some(format!(
            "{description} in {:.1} ms",
            started.elapsed().as_secs_f64() * 1e3
        ));
    }
    let plan = pw_lowering::to_plan(&module).map_err(|e| format!("error: {e}"))?;
    Ok((plan, how))
}

/// The element type and shape of each input of program `text`, read from
/// `@main`'s signature (no lowering needed).
pub fn input_types(name: &str, text: &str) -> Result<Vec<(DType, Vec<i64>)>, String> {
    with_diagnostics(name, text, |context| {
        let module = pw_dialect::parse_source(context, text, name)
            .ok_or_else(|| "error: the program does not parse".to_owned())?;
        let program = pw_dialect::Program::read(&module).map_err(|d| {
            pw_dialect::diag::emit_all(&d);
            "error: the program is not valid".to_owned()
        })?;
        program
            .inputs()
            .iter()
            .map(|v| {
                ArrayType::read(v.r#type())
                    .map(|t| (t.dtype, t.shape))
                    .map_err(|e| format!("error: {e}"))
            })
            .collect()
    })
}
