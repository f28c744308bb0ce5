//! Lowering: from a placed pw program to a physical one.
//!
//! - [`topology`]: the devices there are, in islands (a TOML or JSON file,
//!   or one local island);
//! - [`allocate`]: virtual meshes onto device ids, meeting their constraints;
//! - [`plan`]: byte-minimal transfer plans between two shardings;
//! - [`lower_to_physical`]: the pass that applies all three to a program.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod allocate;
pub mod lower_to_physical;
pub mod plan;
pub mod topology;

pub use lower_to_physical::LowerToPhysical;
pub use topology::Topology;
