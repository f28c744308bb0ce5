//! The compiler layer's one error type: what a pass, the lowering, the
//! plan reader or the pipeline runner found wrong, located at its op by
//! [`pw_dialect::Located`] and rendered as an MLIR diagnostic.

/// Everything that can go wrong compiling a program.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The program is not at the stage the pass starts from.
    #[error("{pass} needs {needs}; run {run} first")]
    Precondition {
        pass: &'static str,
        needs: &'static str,
        run: &'static str,
    },
    /// A rule of the dialect the pass found broken, or the program not at
    /// the stage asked for.
    #[error(transparent)]
    Program(#[from] pw_dialect::Error),
    /// MLIR refused an op a pass built.
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
    #[error("the program has {shards} shards in all; a plan holds at most {limit}")]
    PlanTooLarge { shards: u64, limit: u64 },
    /// The plan read from a verified physical program failed its own
    /// check: a bug of the reader.
    #[error("internal error: {0}")]
    Plan(#[from] pw_core::plan::PlanError),
    #[error("{pass} needs a {stage} program (see the errors above)")]
    NotAtStage {
        pass: &'static str,
        stage: &'static str,
    },
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
