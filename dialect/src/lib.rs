//! The `pw` dialect: one program of many compiled computations.
//!
//! A pw program is an MLIR module whose `func.func @main` is a dataflow
//! graph: each node runs one computation lowered by JAX (embedded in the
//! module), each edge is a logical, possibly sharded array
//! (`!pw.array`). The dialect's ops and types are defined in ODS
//! (`cpp/PwDialect.td`) and compiled into the binary; this crate loads them,
//! parses ([`source`]), prints ([`print`]) and writes as bytecode
//! ([`bytecode`]) programs, reads them
//! ([`program`], [`analysis`]), verifies them ([`verify`]), says which
//! stage of lowering they are at ([`legality`]) and edits them for the
//! passes ([`edit`]).
//!
//! Every raw MLIR handle pw touches is touched here: the compiler and the
//! tools use this crate's safe functions and contain no `unsafe`.
//!
//! The reference of every op, type and attribute is `docs/dialect.md`.

// One of the two FFI crates (with pw-pjrt): MLIR's C API is reached here,
// each `unsafe` block with its SAFETY comment.
#![allow(unsafe_code)]

pub mod analysis;
mod array_type;
pub mod bytecode;
mod context;
pub mod diag;
pub mod edit;
pub mod error;
mod ffi;
pub mod legality;
pub mod ops;
mod piece;
pub mod print;
pub mod program;
pub mod sdy;
pub mod source;
pub mod upstream;
pub mod verify;

pub use analysis::{Analysis, ArrayInfo};
pub use array_type::{read_sharding, sharding_attribute, ArrayType, Tensor, TypeError};
pub use bytecode::is_bytecode;
pub use context::new_context;
pub use diag::{Diag, Located};
pub use error::Error;
pub use piece::{piece_attribute, pieces_attribute, read_piece, read_pieces};
pub use program::{Computation, Mesh, Program};
pub use source::parse_source;
