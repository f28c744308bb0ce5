//! Parsing program text.

use crate::ffi;
use melior::{ir::Module, Context, StringRef};

/// Parses `source` into a module whose locations name `source_name`.
///
/// Top-level ops without an enclosing `module` are wrapped in one, as
/// mlir-opt does. On failure the parser's errors have gone to the context's
/// diagnostic handlers and `None` is returned. Parsing also runs MLIR's own
/// verifier (op structure, SSA dominance, symbol uniqueness).
pub fn parse_source<'c>(
    context: &'c Context,
    source: &str,
    source_name: &str,
) -> Option<Module<'c>> {
    let source = StringRef::new(source);
    let name = StringRef::new(source_name);
    // SAFETY: the context is live; the strings outlive the call; a null
    // module is mapped to None.
    unsafe {
        Module::from_option_raw(ffi::pwParseSourceString(
            context.to_raw(),
            source.to_raw(),
            name.to_raw(),
        ))
    }
}
