//! The executor layer's one error type.

use pw_core::{geometry::Region, plan::PlanError, DType};

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in `pw-exec`: host arrays and `.npy` files,
/// compiling, and executing a part. Errors of the binding keep their own
/// type ([`pw_pjrt::Error`]) as the source of the variant that says what
/// pw was doing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A check of the binding, or a plugin failure, outside any step.
    #[error(transparent)]
    Pjrt(#[from] pw_pjrt::Error),

    /// A plan or part that cannot be executed as it is.
    #[error(transparent)]
    Plan(#[from] PlanError),

    /// Host bytes whose length is not what their type needs.
    #[error("a {dtype}{shape:?} array has {needed} bytes, got {given}")]
    HostBytes {
        dtype: DType,
        shape: Vec<usize>,
        needed: usize,
        given: usize,
    },

    /// Typed values whose count is not what the shape holds.
    #[error("shape {shape:?} has {needed} elements, got {given} values")]
    HostElements {
        shape: Vec<usize>,
        needed: usize,
        given: usize,
    },

    /// Two element types that must agree do not.
    #[error("dtype mismatch in {context}: expected {expected}, got {actual}")]
    DTypeMismatch {
        context: &'static str,
        expected: DType,
        actual: DType,
    },

    /// Two shapes that must agree do not.
    #[error("shape mismatch in {context}: expected {expected:?}, got {actual:?}")]
    ShapeMismatch {
        context: &'static str,
        expected: Vec<usize>,
        actual: Vec<usize>,
    },

    /// A box outside the array it is taken from or written into.
    #[error("the box at {:?} of size {:?} does not fit shape {shape:?}", region.offsets, region.sizes)]
    Outside { region: Region, shape: Vec<usize> },

    /// No shard holds part of an array being assembled.
    #[error("no shard holds the box at {offsets:?} of {dtype}{shape:?}")]
    Missing {
        offsets: Vec<i64>,
        dtype: DType,
        shape: Vec<usize>,
    },

    /// Reading or writing a `.npy` file.
    #[error("npy {path}: {reason}")]
    Npy { path: String, reason: String },

    /// Reading or writing an array as zarr.
    #[error("zarr {path}: {reason}")]
    Zarr { path: String, reason: String },

    /// A program input of another type than the program takes.
    #[error("input #{index} is {given}, but the program expects {expected}")]
    Input {
        index: usize,
        given: String,
        expected: String,
    },

    /// A program given another number of inputs than it takes.
    #[error("the program takes {expected} inputs, {given} given")]
    InputCount { expected: usize, given: usize },

    /// A device the plan names that this client does not have.
    #[error("the program uses device {device}, which this worker's PJRT client does not have")]
    NoDevice { device: i64 },

    /// What a step needs is not there (released early, a shard missing,
    /// the work not matching the step): a bug of the plan or the executor.
    #[error("{step}: {what}")]
    Inconsistent { step: String, what: &'static str },

    /// A piece from or to another worker in a run that has none.
    #[error("piece {piece} would come from or go to worker {worker}, but this run has no peers")]
    NoPeers { piece: String, worker: u32 },

    /// A piece that did not arrive or was not sent.
    #[error("{0}")]
    Piece(String),

    /// A colocated Python function that cannot run, or a program that is
    /// not one.
    #[error("{0}")]
    Sidecar(String),

    /// Compiling an executable failed.
    #[error("compiling {what} for devices {devices:?} failed: {source}")]
    Compile {
        what: String,
        devices: Vec<i64>,
        #[source]
        source: Box<Error>,
    },

    /// A step failed on its devices.
    #[error("step {step} on devices {devices:?} failed: {source}")]
    Step {
        step: String,
        devices: Vec<i64>,
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// The PJRT status code, when a plugin reported the failure.
    pub fn code(&self) -> Option<pw_pjrt::ErrorCode> {
        match self {
            Error::Pjrt(e) => e.code(),
            Error::Compile { source, .. } | Error::Step { source, .. } => source.code(),
            _ => None,
        }
    }
}
