//! The passes that take a pw program from location-agnostic to placed, and
//! the one that schedules it.
//!
//! Each pass is a file named for what it does, and its module doc says what
//! holds after it runs. A pass is a plain Rust function over the module
//! (see [`Pass`]); pw-opt's registry and pipeline runner (in `pw-tools`)
//! mix them with upstream MLIR passes.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod assign_devices;
pub mod cost;
pub mod dce;
pub mod edit;
pub mod fold_transfers;
pub mod insert_transfers;
pub mod propagate_shardings;
pub mod schedule;

use melior::{ir::Module, Context};
use std::collections::BTreeMap;

/// A pass failed; its diagnostics went to the context's handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassFailed;

/// Options of a pass, as `name=value` pairs from the command line.
pub type Options = BTreeMap<String, String>;

/// A pw pass: transforms a program module in place.
pub trait Pass {
    /// The pass's command-line name, e.g. `pw-assign-devices`.
    fn argument(&self) -> &'static str;

    /// Runs the pass. On failure the reasons are emitted as diagnostics.
    fn run<'c>(&self, context: &'c Context, module: &Module<'c>) -> Result<(), PassFailed>;
}

/// Reads the program of `module`, emitting the structural problems if any.
pub fn read_program<'c, 'a>(
    module: &'a Module<'c>,
) -> Result<pw_dialect::Program<'c, 'a>, PassFailed> {
    pw_dialect::Program::read(module).map_err(|diags| {
        pw_dialect::diag::emit_all(&diags);
        PassFailed
    })
}

/// Fails a pass when `options` holds names it does not know.
pub fn check_options(pass: &str, options: &Options, known: &[&str]) -> Result<(), String> {
    match options.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(format!(
            "unknown option '{unknown}' of {pass} (known: {})",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        )),
        None => Ok(()),
    }
}
