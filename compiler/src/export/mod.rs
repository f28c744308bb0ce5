//! From a parsed program to the plan the runtime executes: verify it, lower
//! it unless it is physical already (`pw_dialect::legality`), read the plan
//! ([`mod@to_plan`]). What pw-run and pw-server do with a program, at any
//! stage.

pub mod to_plan;

pub use to_plan::to_plan;

use crate::{run, schedule, LowerOptions, Pipeline, RunOptions, Timings};
use melior::{ir::Module, Context};
use pw_core::plan::Plan;
use pw_dialect::{
    diag::emit_all,
    legality::{self, Stage},
    verify,
};
use schedule::Policy;
use std::time::{Duration, Instant};

/// Why there is no plan; the program's own errors went to the context's
/// diagnostic handlers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanFailure {
    #[error("the program is not valid")]
    Invalid,
    /// The lowering options could not be made (the message says why).
    #[error("{0}")]
    Options(String),
    #[error("lowering failed")]
    Lowering,
    #[error("the program cannot run")]
    NotRunnable,
}

/// The plan of `module`, and how long lowering it took (`None`: it was
/// physical already). `lower` gives the lowering options, asked for only
/// when the program needs lowering. A physical program is scheduled again
/// when `reschedule` names a policy.
pub fn plan<'c>(
    context: &'c Context,
    module: &Module<'c>,
    reschedule: Option<Policy>,
    lower: impl FnOnce() -> Result<LowerOptions, String>,
) -> Result<(Plan, Option<Duration>), PlanFailure> {
    let analysis = verify::verify(module).map_err(|errors| {
        emit_all(&errors);
        PlanFailure::Invalid
    })?;
    let (analysis, took) = if legality::check(&analysis, Stage::Physical).is_empty() {
        match reschedule {
            None => (analysis, None),
            Some(policy) => {
                drop(analysis);
                let pipeline = Pipeline {
                    phases: vec![schedule::phase(policy)],
                };
                let analysis = run(
                    context,
                    module,
                    &pipeline,
                    &mut RunOptions::default(),
                    &mut Timings::default(),
                )
                .map_err(|_| PlanFailure::Lowering)?;
                (analysis, None)
            }
        }
    } else {
        drop(analysis);
        let options = lower().map_err(PlanFailure::Options)?;
        let started = Instant::now();
        let analysis = run(
            context,
            module,
            &Pipeline::lower(&options),
            &mut RunOptions::default(),
            &mut Timings::default(),
        )
        .map_err(|_| PlanFailure::Lowering)?;
        (analysis, Some(started.elapsed()))
    };
    let plan = to_plan(&analysis).map_err(|errors| {
        emit_all(&errors);
        PlanFailure::NotRunnable
    })?;
    Ok((plan, took))
}
