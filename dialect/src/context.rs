//! The MLIR context every pw tool works in.

use crate::ffi;
use melior::{
    dialect::{DialectHandle, DialectRegistry},
    Context,
};

/// A context with the `pw` and `func` dialects loaded.
///
/// Unregistered dialects are allowed so that the computations JAX lowered
/// (StableHLO, Shardy and friends, in generic op form) parse and print back
/// unchanged without those dialects being linked in.
pub fn new_context() -> Context {
    let registry = DialectRegistry::new();
    DialectHandle::func().insert_dialect(&registry);
    // SAFETY: the handle comes from the dialect's registration function.
    unsafe { DialectHandle::from_raw(ffi::mlirGetDialectHandle__pw__()) }.insert_dialect(&registry);
    let context = Context::new();
    context.append_dialect_registry(&registry);
    context.load_all_available_dialects();
    context.set_allow_unregistered_dialects(true);

    // SAFETY: the context is live.
    unsafe { ffi::pwContextQuietDiagnostics(context.to_raw()) };
    context
}
