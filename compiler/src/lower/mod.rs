//! The lower phase: from a placed pw program to a physical one.
//!
//! - [`allocate`]: virtual meshes onto device ids of a
//!   [`Topology`](pw_core::Topology), meeting their constraints;
//! - [`lower_to_physical`]: the pass that binds meshes to devices and turns
//!   every move into per-shard copies (planned by [`pw_core::relayout`]).

pub mod allocate;
pub mod lower_to_physical;

pub use lower_to_physical::LowerToPhysical;

use crate::{
    pipeline::{LowerOptions, Phase, Step},
    registry::{Make, PassInfo},
    Pass,
};
use pw_dialect::legality::Stage;

/// The phase: binds meshes to devices and turns moves into per-shard
/// copies.
pub fn phase(options: &LowerOptions) -> Phase {
    Phase {
        name: "lower",
        steps: vec![Step::pw(LowerToPhysical {
            topology: options.topology.clone(),
        })],
        reaches: Some(Stage::Physical),
    }
}

/// The passes of the phase, by name.
pub const PASSES: &[PassInfo] = &[PassInfo {
    argument: lower_to_physical::PASS,
    summary: "bind meshes to devices; turn moves into per-shard copies",
    options: lower_to_physical::OPTIONS,
    make: Make::Pw(|o| Ok(Box::new(LowerToPhysical::from_options(o)?) as Box<dyn Pass>)),
}];
