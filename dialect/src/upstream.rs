//! Upstream MLIR passes (canonicalize, cse, symbol-dce, inline), run on a
//! module held by shared reference, like pw's own passes.

use melior::{ir::Module, pass::PassManager, Context};

/// The upstream passes pw-opt offers, by pipeline name.
pub const PASSES: &[&str] = &["canonicalize", "cse", "symbol-dce", "inline"];

/// Runs upstream pass `name` over `module`; the error says why it failed
/// (MLIR's own diagnostics have gone to the context's handlers).
pub fn run(context: &Context, module: &Module, name: &str) -> Result<(), String> {
    if !PASSES.contains(&name) {
        return Err(format!("'{name}' is not an upstream pass pw offers"));
    }
    melior::pass::transform::register_canonicalizer();
    melior::pass::transform::register_cse();
    melior::pass::transform::register_symbol_dce();
    melior::pass::transform::register_inliner();
    let manager = PassManager::new(context);
    melior::utility::parse_pass_pipeline(
        manager.as_operation_pass_manager(),
        &format!("builtin.module({name})"),
    )
    .map_err(|e| e.to_string())?;
    // SAFETY: the pass manager and the module's op are live; the pass
    // manager runs on the op in place, as `PassManager::run` does.
    let result = unsafe {
        mlir_sys::mlirPassManagerRunOnOp(manager.to_raw(), module.as_operation().to_raw())
    };
    if result.value == 0 {
        Err(format!("{name} failed"))
    } else {
        Ok(())
    }
}
