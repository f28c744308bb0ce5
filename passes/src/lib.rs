//! The passes that take a pw program from location-agnostic to placed, and
//! the one that schedules it.
//!
//! Each pass is a file named for what it does, and its module doc says what
//! holds after it runs. A pass is a plain Rust function over the module
//! (see [`Pass`]) that reads the program through the [`Analysis`] the
//! verifier returned; the pipeline (`pw-compiler`) mixes them with the
//! lowering pass and upstream MLIR passes. A pass that fails says why, at
//! the op it could not handle ([`PassError`]).

#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod assign_devices;
pub mod cost;
pub mod dce;
pub mod fold_transfers;
pub mod insert_transfers;
pub mod live_bytes;
pub mod propagate_shardings;
pub mod schedule;
pub mod stages;

use melior::{ir::Module, Context};
use pw_dialect::{Analysis, Located};
use std::collections::BTreeMap;

/// Why a pass could not do its work.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The program is not at the stage the pass starts from.
    #[error("{pass} needs {needs}; run {run} first")]
    Precondition {
        pass: &'static str,
        needs: &'static str,
        run: &'static str,
    },
    /// A rule of the dialect the pass found broken.
    #[error(transparent)]
    Program(#[from] pw_dialect::Error),
    /// MLIR refused an op the pass built.
    #[error("{pass} cannot build {op}: {reason}")]
    Build {
        pass: &'static str,
        op: &'static str,
        reason: String,
    },
    /// A schedule policy that cannot order this program.
    #[error("pw-schedule{{policy={policy}}} cannot order this program: {reason}")]
    Unschedulable {
        policy: &'static str,
        reason: String,
    },
    /// An error of a layer above (lowering).
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// The errors of a failed pass, each where it happened.
pub type PassFailure<'c> = Vec<Located<'c, PassError>>;

/// Options of a pass, as `name=value` pairs from the command line.
pub type Options = BTreeMap<String, String>;

/// A pw pass: transforms a program module in place.
pub trait Pass {
    /// The pass's command-line name, e.g. `pw-assign-devices`.
    fn argument(&self) -> &'static str;

    /// Runs the pass over `module`, whose verified `analysis` it may read.
    fn run<'c>(
        &self,
        context: &'c Context,
        module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>>;
}

/// One error at `location`, as a failed pass returns it.
pub fn fail<'c>(
    location: melior::ir::Location<'c>,
    error: impl Into<PassError>,
) -> PassFailure<'c> {
    vec![Located::new(location, error.into())]
}

/// The options a pass takes: `(name, help)` pairs.
pub type OptionList = &'static [(&'static str, &'static str)];

/// Fails a pass when `options` holds names it does not know.
pub fn check_options(pass: &str, options: &Options, known: OptionList) -> Result<(), String> {
    match options.keys().find(|k| !known.iter().any(|(n, _)| n == k)) {
        Some(unknown) => Err(format!(
            "unknown option '{unknown}' of {pass} (known: {})",
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            }
        )),
        None => Ok(()),
    }
}
