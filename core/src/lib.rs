//! pw's plain data, shared by the compiler and the runtime, with no MLIR:
//!
//! * [`DType`]: the element types;
//! * [`diagnostic`]: diagnostics about a program, and their renderer;
//! * [`geometry`]: mesh shapes, shardings and the boxes each mesh position
//!   holds (the one shard geometry of pw);
//! * [`piece`]: the boxes of bytes a physical copy moves;
//! * [`relayout`]: the pieces that lay an array out anew (pw's one
//!   relayout planner, for the lowering and the runtime alike);
//! * [`topology`]: devices in islands, what programs are lowered onto;
//! * [`plan`]: a lowered program as the runtime executes it (serde data),
//!   and [`plans`]: small plans of one operation, built without lowering;
//! * [`python`]: a Python function for a worker's sidecar, as a plan
//!   carries it;
//! * [`recovery`]: what a run recomputes after losing a worker;
//! * [`report`]: what a worker reports of its part of a run.
//!
//! The dialect reads and writes these types in MLIR form; the runtime and
//! the workers use them without linking MLIR.

pub mod diagnostic;
pub mod dtype;
pub mod geometry;
pub mod piece;
pub mod plan;
pub mod plans;
pub mod python;
pub mod recovery;
pub mod relayout;
pub mod report;
pub mod topology;

pub use dtype::DType;
pub use piece::{Link, Piece};
pub use topology::Topology;
