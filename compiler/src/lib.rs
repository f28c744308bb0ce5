//! pw's compiler: from a location-agnostic program to a physical,
//! scheduled one, and from there to the plan the runtime executes. It is
//! built in phases, Shardy-style; each phase owns its passes (one file a
//! pass, named for it), the pipeline step it contributes and the passes it
//! registers, and its tests live in `tests/ir/<phase>/`:
//!
//! | phase | passes | reaches |
//! | --- | --- | --- |
//! | [`place`] | assign-devices, propagate-shardings, insert-transfers, fold-transfers, dce | placed |
//! | [`lower`] | lower-to-physical | physical |
//! | [`schedule`] | schedule | scheduled |
//!
//! Beside them: what a pass is ([`pass`]); the whole-program facts passes
//! reuse ([`analysis`]: cost model, live bytes, pipeline stages); the
//! `pw-lower` pipeline built from the phases with typed options
//! ([`pipeline`]); the registry of every pass by name, derived from the
//! phases, for `pw-opt`'s flags and textual pipelines ([`registry`]); the
//! runner that checks each pass's required stage, verifies after each pass
//! and checks each phase's stage ([`mod@run`]); and the way from a parsed
//! program at any stage to the plan ([`export`]). Errors are one type
//! ([`Error`]), located at their op.

pub mod analysis;
mod error;
pub mod export;
pub mod lower;
pub mod pass;
pub mod pipeline;
pub mod place;
pub mod registry;
pub mod run;
pub mod schedule;

pub use error::Error;
pub use pass::{check_options, fail, OptionList, Options, Pass, PassFailure};
pub use pipeline::{LowerOptions, Phase, Pipeline, Step, StepPass};
pub use run::{run, Failed, RunOptions, Timings};
