//! The `pw` dialect: one program of many compiled computations.
//!
//! A pw program is an MLIR module whose `func.func @main` is a dataflow
//! graph: each node runs one computation lowered by JAX (embedded in the
//! module), each edge is a logical, possibly sharded array
//! (`!pw.array`). The dialect's ops and types are defined in ODS
//! (`cpp/PwDialect.td`) and compiled into the binary; this crate loads them,
//! reads and builds them from Rust, and verifies whole programs.
//!
//! The reference of every op, type and attribute is `docs/dialect.md`.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod array_type;
mod context;
pub mod diag;
mod ffi;
pub mod ops;
mod piece;
pub mod program;
pub mod sdy;
mod source;
pub mod verify;

pub use array_type::{read_sharding, sharding_attribute, ArrayType, TypeError};
pub use context::new_context;
pub use piece::{piece_attribute, pieces_attribute, read_piece, read_pieces};
pub use program::{Computation, Mesh, Program};
pub use source::parse_source;
