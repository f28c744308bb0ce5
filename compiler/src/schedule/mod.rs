//! The schedule phase: one total order of the program's ops (critical path
//! first, or a pipeline schedule), last, so that the order covers the
//! physical copies.

// The phase and its one pass share the name, as the pass and its flag do.
#[allow(clippy::module_inception)]
pub mod schedule;

pub use schedule::{Policy, Schedule};

use crate::{
    pipeline::{Phase, Step},
    registry::{Make, PassInfo},
    Pass,
};
use pw_dialect::legality::Stage;

/// The phase, ordering the body by `policy`.
pub fn phase(policy: Policy) -> Phase {
    Phase {
        name: "schedule",
        steps: vec![Step::pw(Schedule { policy })],
        reaches: Some(Stage::Scheduled),
    }
}

/// The passes of the phase, by name.
pub const PASSES: &[PassInfo] = &[PassInfo {
    argument: schedule::PASS,
    summary:
        "order the program's ops in one total order (critical path first, or a pipeline schedule)",
    options: schedule::OPTIONS,
    make: Make::Pw(|o| Ok(Box::new(Schedule::from_options(o)?) as Box<dyn Pass>)),
}];
