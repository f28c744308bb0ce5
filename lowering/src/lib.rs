//! Lowering: from a placed pw program to a physical one, and from a
//! physical one to the plan the runtime executes.
//!
//! - [`allocate`]: virtual meshes onto device ids of a
//!   [`Topology`](pw_core::Topology), meeting their constraints;
//! - [`lower_to_physical`]: the pass that applies both to a program;
//! - [`to_plan`]: a physical program as a [`Plan`](pw_core::plan::Plan).

#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod allocate;
pub mod lower_to_physical;
pub mod to_plan;

pub use lower_to_physical::LowerToPhysical;
pub use to_plan::to_plan;

/// Why a program cannot be lowered or read into a plan.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    /// A mesh whose request the topology cannot meet (the message names
    /// the constraint).
    #[error("{0}")]
    Allocation(String),
    #[error("lowering needs placed, sharded arrays on declared meshes; run the place phase first")]
    NotPlaced,
    #[error(
        "lowering would make more than {limit} pieces of copies (the program moves arrays \
         between too many shards)"
    )]
    TooManyPieces { limit: u64 },
    #[error("cannot build {op}: {reason}")]
    Build { op: &'static str, reason: String },
    /// The program breaks a rule of the dialect, or is not at the stage
    /// asked for.
    #[error(transparent)]
    Program(#[from] pw_dialect::Error),
    #[error("the program has {shards} shards in all; a plan holds at most {limit}")]
    PlanTooLarge { shards: u64, limit: u64 },
    /// The plan read from a verified physical program failed its own
    /// check: a bug of the reader.
    #[error("internal error: {0}")]
    Plan(#[from] pw_core::plan::PlanError),
}

impl From<LowerError> for pw_passes::PassError {
    fn from(e: LowerError) -> Self {
        match e {
            LowerError::Program(e) => pw_passes::PassError::Program(e),
            other => pw_passes::PassError::Other(Box::new(other)),
        }
    }
}
