//! What a pass is: a plain Rust function over the module ([`Pass`]) that
//! reads the program through the [`Analysis`] the verifier returned, and
//! says which stage of lowering it starts from ([`Pass::requires`]), which
//! the runner checks before it runs. A pass that fails says why, at the op
//! it could not handle ([`PassFailure`]).

use crate::Error;
use melior::{ir::Module, Context};
use pw_dialect::{legality::Stage, Analysis, Located};
use std::collections::BTreeMap;

/// The errors of a failed pass, each where it happened.
pub type PassFailure<'c> = Vec<Located<'c, Error>>;

/// Options of a pass, as `name=value` pairs from the command line.
pub type Options = BTreeMap<String, String>;

/// A pw pass: transforms a program module in place.
pub trait Pass {
    /// The pass's command-line name, e.g. `pw-assign-devices`.
    fn argument(&self) -> &'static str;

    /// The stage of lowering the program must be at before the pass runs
    /// (None: any verified program; what a pass needs beyond that it checks
    /// op by op).
    fn requires(&self) -> Option<Stage> {
        None
    }

    /// Runs the pass over `module`, whose verified `analysis` it may read.
    fn run<'c>(
        &self,
        context: &'c Context,
        module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>>;
}

/// One error at `location`, as a failed pass returns it.
pub fn fail<'c>(location: melior::ir::Location<'c>, error: impl Into<Error>) -> PassFailure<'c> {
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
