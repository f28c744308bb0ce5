//! The `pw-lower` pipeline: the three phases ([`crate::place`],
//! [`crate::lower`], [`crate::schedule`]), each a list of passes and the
//! stage (`pw_dialect::legality`) the program must be at afterwards.
//!
//! [`LowerOptions`] is the pipeline's typed options: the topology to lower
//! onto and the schedule policy; pw-opt builds it from
//! `--pw-lower='topology=... devices=N kind=K schedule=P'`, pw-run from the
//! plugin's devices or `--topology`, and `--schedule`.

use crate::{
    lower::{self, lower_to_physical::DEFAULT_DEVICES, LowerToPhysical},
    place,
    schedule::{self, Policy},
    Options, Pass,
};
use pw_core::Topology;
use pw_dialect::legality::Stage;

/// The options of the `pw-lower` pipeline.
#[derive(Clone, Debug)]
pub struct LowerOptions {
    /// The devices to lower onto.
    pub topology: Topology,
    /// How the schedule phase orders the program.
    pub schedule: Policy,
}

impl Default for LowerOptions {
    /// One island `local` of [`DEFAULT_DEVICES`] cpu devices.
    fn default() -> Self {
        Self {
            topology: Topology {
                islands: vec![pw_core::topology::Island {
                    name: "local".into(),
                    kind: "cpu".into(),
                    devices: (0..DEFAULT_DEVICES).collect(),
                    hosts: Vec::new(),
                }],
            },
            schedule: Policy::default(),
        }
    }
}

impl LowerOptions {
    /// From `pw-lower`'s command-line options: those of
    /// `pw-lower-to-physical` (`topology=FILE`, or `devices=N kind=K`) and
    /// `schedule=POLICY`.
    pub fn from_options(options: &Options) -> Result<Self, String> {
        let mut placement = options.clone();
        let schedule = placement
            .remove("schedule")
            .map(|p| Policy::parse(&p))
            .transpose()?
            .unwrap_or_default();
        LowerToPhysical::from_options(&placement).map(|pass| Self {
            topology: pass.topology,
            schedule,
        })
    }
}

/// How a step runs.
pub enum StepPass {
    Pw(Box<dyn Pass>),
    /// An upstream pass, run by MLIR's pass manager under the step's name.
    Upstream,
}

/// One pass of a pipeline, built with its options.
pub struct Step {
    pub name: &'static str,
    pub pass: StepPass,
}

impl Step {
    pub fn pw(pass: impl Pass + 'static) -> Self {
        Self {
            name: pass.argument(),
            pass: StepPass::Pw(Box::new(pass)),
        }
    }
}

/// Passes run in order, then a check of the stage they reach.
pub struct Phase {
    pub name: &'static str,
    pub steps: Vec<Step>,
    /// The stage the program is at after the phase (checked when the
    /// pipeline verifies after each pass).
    pub reaches: Option<Stage>,
}

impl Phase {
    /// One step, checked by nothing but the verifier (a pass run alone).
    pub fn single(step: Step) -> Self {
        Self {
            name: step.name,
            steps: vec![step],
            reaches: None,
        }
    }
}

/// Phases run in order.
#[derive(Default)]
pub struct Pipeline {
    pub phases: Vec<Phase>,
}

impl Pipeline {
    /// The full lowering: place, lower, schedule.
    pub fn lower(options: &LowerOptions) -> Self {
        Self {
            phases: vec![
                place::phase(),
                lower::phase(options),
                schedule::phase(options.schedule),
            ],
        }
    }

    /// The names of its passes, in order.
    pub fn pass_names(&self) -> Vec<&'static str> {
        self.phases
            .iter()
            .flat_map(|p| p.steps.iter().map(|s| s.name))
            .collect()
    }

    pub fn extend(&mut self, other: Pipeline) {
        self.phases.extend(other.phases);
    }
}
