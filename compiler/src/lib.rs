//! The compiler driver: the `pw-lower` pipeline as named phases with typed
//! options ([`pipeline`]), the registry of every pass by name for
//! `pw-opt`'s flags and textual pipelines ([`registry`]), and the runner
//! that verifies after each pass, hands the verifier's analysis to the next
//! one and checks each phase's stage ([`run`]); and the way from a parsed
//! program at any stage to the plan the runtime executes ([`plan`]).
//! pw-opt and pw-run both lower through it.

#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod pipeline;
pub mod plan;
pub mod registry;
pub mod run;

pub use pipeline::{LowerOptions, Phase, Pipeline, Step, StepPass};
pub use run::{run, Failed, RunOptions, Timings};

/// The driver's own errors (the passes', the verifier's and lowering's are
/// theirs).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("internal error: {pass} produced an invalid program")]
    InvalidAfter { pass: &'static str },
    #[error("internal error: after the {phase} phase the program is not {stage}")]
    PhaseIncomplete {
        phase: &'static str,
        stage: &'static str,
    },
    #[error("{pass} failed: {reason}")]
    Upstream { pass: &'static str, reason: String },
}
