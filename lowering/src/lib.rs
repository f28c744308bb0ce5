//! Lowering: from a placed pw program to a physical one, and from a
//! physical one to the plan the runtime executes.
//!
//! - [`allocate`]: virtual meshes onto device ids of a
//!   [`Topology`](pw_core::Topology), meeting their constraints;
//! - [`transfer_plan`]: byte-minimal transfer plans between two shardings;
//! - [`lower_to_physical`]: the pass that applies both to a program;
//! - [`to_plan`]: a physical program as a [`Plan`](pw_core::plan::Plan).

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod allocate;
pub mod lower_to_physical;
pub mod to_plan;
pub mod transfer_plan;

pub use lower_to_physical::LowerToPhysical;
pub use to_plan::to_plan;
