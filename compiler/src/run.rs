//! Runs a pipeline: the input is verified, then each pass runs with the
//! analysis of the last verification and is verified after (MLIR's
//! verifier, then pw's), a pass that requires a stage ([`crate::Pass::requires`])
//! runs only on a program at that stage, and after each phase the program
//! must be at the phase's stage. With verification after each pass off, passes get an
//! analysis of the program's structure only, and stages are not checked.
//!
//! Every error goes out through the context's diagnostic handlers, located
//! at its op; the runner returns [`Failed`].

use crate::{
    pipeline::{Pipeline, Step, StepPass},
    Error,
};
use melior::{
    ir::{operation::OperationLike, Module},
    Context,
};
use pw_dialect::{
    analysis::Analysis,
    diag::{emit_all, Located},
    legality::{self, Stage},
    print, upstream, verify,
};
use std::{io::Write, time::Duration};

/// The pipeline failed; the reasons went to the context's handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failed;

/// How to run a pipeline.
pub struct RunOptions<'w> {
    /// Verify after every pass (and check each phase's stage).
    pub verify_each: bool,
    /// Print the IR after every pass here (`--print-ir-after-all`).
    pub ir_after: Option<&'w mut dyn Write>,
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        Self {
            verify_each: true,
            ir_after: None,
        }
    }
}

/// Wall time spent per phase, in the order phases first ran.
#[derive(Default, Debug)]
pub struct Timings {
    pub phases: Vec<(String, Duration)>,
}

impl Timings {
    /// Runs `f`, adding its wall time to phase `name`.
    pub fn time<T>(&mut self, name: &str, f: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let result = f();
        let elapsed = start.elapsed();
        match self.phases.iter_mut().find(|(n, _)| n == name) {
            Some((_, total)) => *total += elapsed,
            None => self.phases.push((name.to_owned(), elapsed)),
        }
        result
    }

    /// The report `--mlir-timing` prints.
    pub fn report(&self) -> String {
        let total: f64 = self.phases.iter().map(|(_, d)| d.as_secs_f64()).sum();
        let mut out = format!("pw-opt timing: {total:.4} s in all\n   wall (s)    share  phase\n");
        for (name, d) in &self.phases {
            let share = if total > 0.0 {
                100.0 * d.as_secs_f64() / total
            } else {
                0.0
            };
            out.push_str(&format!(
                "  {:>9.4}  {share:>6.1}%  {name}\n",
                d.as_secs_f64()
            ));
        }
        out
    }
}

/// Verifies `module` (MLIR's verifier, then pw's): its analysis, or the
/// errors emitted.
fn verified<'c, 'a>(
    module: &'a Module<'c>,
    timings: &mut Timings,
) -> Result<Analysis<'c, 'a>, Failed> {
    if !timings.time("MLIR verifier after each pass", || {
        module.as_operation().verify()
    }) {
        return Err(Failed);
    }
    timings.time("pw verifier after each pass", || {
        verify::verify(module).map_err(|errors| {
            emit_all(&errors);
            Failed
        })
    })
}

/// Runs `pipeline` over the parsed `module` (see the module doc); returns
/// the final analysis (verified unless `verify_each` is off).
pub fn run<'c, 'a>(
    context: &'c Context,
    module: &'a Module<'c>,
    pipeline: &Pipeline,
    options: &mut RunOptions,
    timings: &mut Timings,
) -> Result<Analysis<'c, 'a>, Failed> {
    // Parsing ran MLIR's verifier; pw's comes next.
    let mut analysis = timings.time("verify", || {
        verify::verify(module).map_err(|errors| {
            emit_all(&errors);
            Failed
        })
    })?;
    // Whether `analysis` is of a verified program (stages can be checked).
    let mut verified_now = true;
    for phase in &pipeline.phases {
        for step in &phase.steps {
            run_step(context, module, step, (&analysis, verified_now), timings)?;
            analysis = if options.verify_each {
                verified(module, timings).inspect_err(|_| {
                    let here = module.as_operation().location();
                    Located::new(here, Error::InvalidAfter { pass: step.name }).emit();
                })?
            } else {
                Analysis::read(module).map_err(|errors| {
                    emit_all(&errors);
                    Failed
                })?
            };
            verified_now = options.verify_each;
            if let Some(out) = options.ir_after.as_deref_mut() {
                dump(module, step.name, options.verify_each, out);
            }
        }
        if let (Some(stage), true) = (phase.reaches, verified_now) {
            at_stage(module, &analysis, stage, |stage| Error::PhaseIncomplete {
                phase: phase.name,
                stage: stage.name(),
            })?;
        }
    }
    Ok(analysis)
}

/// Runs one step: a pw pass over `analysis` (of a `verified` program,
/// first checked to be at the stage the pass requires), or an upstream
/// pass through MLIR's pass manager.
fn run_step<'c>(
    context: &'c Context,
    module: &Module<'c>,
    step: &Step,
    (analysis, verified): (&Analysis<'c, '_>, bool),
    timings: &mut Timings,
) -> Result<(), Failed> {
    match &step.pass {
        StepPass::Pw(pass) => {
            if let (Some(stage), true) = (pass.requires(), verified) {
                at_stage(module, analysis, stage, |stage| Error::NotAtStage {
                    pass: step.name,
                    stage: stage.name(),
                })?;
            }
            timings
                .time(step.name, || pass.run(context, module, analysis))
                .map_err(|errors| {
                    emit_all(&errors);
                    Failed
                })
        }
        StepPass::Upstream => timings
            .time(step.name, || upstream::run(context, module, step.name))
            .map_err(|reason| {
                let here = module.as_operation().location();
                let error = Error::Upstream {
                    pass: step.name,
                    reason,
                };
                Located::new(here, error).emit();
                Failed
            }),
    }
}

/// Fails (emitting why, and then `summary`) unless the program of
/// `analysis` is at `stage`.
fn at_stage(
    module: &Module,
    analysis: &Analysis,
    stage: Stage,
    summary: impl FnOnce(Stage) -> Error,
) -> Result<(), Failed> {
    let errors = legality::check(analysis, stage);
    if errors.is_empty() {
        return Ok(());
    }
    emit_all(&errors);
    Located::new(module.as_operation().location(), summary(stage)).emit();
    Err(Failed)
}

/// Prints the IR after pass `pass` (`--print-ir-after-all`).
fn dump(module: &Module, pass: &str, verified: bool, out: &mut dyn Write) {
    let text = print::print(
        &module.as_operation(),
        print::PrintOptions {
            generic: false,
            verified,
        },
    );
    let _ = writeln!(out, "// -----// IR Dump After {pass} //----- //\n{text}");
}
