//! The program verifier: whole-program rules that the op definitions alone
//! cannot check.
//!
//! MLIR's own verifier has already run when this one does (parsing
//! verifies): op structure, types of operands and attributes, SSA dominance
//! (every value defined before use, hence an acyclic graph) and unique
//! symbols. This one checks, each failure located at the offending op, in
//! phases; a phase checks only what the phases before it found sound, so no
//! check ever relies on something an earlier error broke (phases 3 and 4
//! share one walk of the body: an op's rules are checked while no value up
//! to it has failed phase 3):
//! 1. the program's structure (see [`crate::program`]): its top-level ops,
//!    one `@main` of one block, computations with a readable signature;
//! 2. declarations ([`declarations`]): meshes with well-formed axes of at
//!    most [`MAX_MESH_DEVICES`](pw_core::geometry::MAX_MESH_DEVICES)
//!    devices, constraints naming existing meshes, device lists of the
//!    mesh's size;
//! 3. values ([`body`](body::body)): only pw ops in the body; every value is a
//!    `!pw.array` of a supported element type and at most 2^63 bytes, on a
//!    declared mesh, with a sharding that names axes of that mesh once each
//!    and divides the dimensions it splits;
//! 4. ops ([`body`](body::body), [`physical`]): calls match their computation's
//!    signature, run on a mesh it fits, and agree with the shardings it
//!    declares (`in_shardings` for its arguments, result types for its
//!    results); transfers keep the array type and cross meshes (transfer)
//!    or stay within one (reshard); physical copies read inside a source
//!    shard and write inside a destination shard at the same global
//!    position, have their shape, and assembled parts give every
//!    destination device exactly one shard.
//!
//! At most [`MAX_ERRORS`](crate::diag::MAX_ERRORS) errors are reported.
//! What the verifier read comes back as an [`Analysis`], which the passes
//! reuse. Which ops and types may exist at each stage of lowering is
//! [`crate::legality`]'s business.

mod body;
mod declarations;
mod physical;

use crate::{
    analysis::Analysis,
    diag::{Diag, Errors},
};
use melior::ir::Module;

/// Verifies a program: its analysis, or the errors (see the module doc).
pub fn verify<'c, 'a>(module: &'a Module<'c>) -> Result<Analysis<'c, 'a>, Vec<Diag<'c>>> {
    let analysis = Analysis::read(module)?;
    let mut errors = Errors::default();
    declarations::check(&analysis, &mut errors);
    if errors.is_empty() {
        body::body(&analysis, &mut errors);
    }
    if errors.is_empty() {
        Ok(analysis)
    } else {
        Err(errors.into_vec())
    }
}
