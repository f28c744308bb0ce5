//! The runtime core against real PJRT CPU plugins (no mocks): the binding,
//! small plans through the executor, SPMD execution, `.npy` I/O and what a worker does with late
//! arrivals of a released run, each on the 0.115 plugin
//! (`lammps-jax-pjrt-cpu`) and on the 0.81 one (`xla-cpu-pjrt`).

#[macro_use]
#[path = "runtime/common.rs"]
mod common;

#[path = "runtime/binding.rs"]
mod binding;
#[path = "runtime/errors.rs"]
mod errors;
#[path = "runtime/npy.rs"]
mod npy;
#[path = "runtime/plans.rs"]
mod plans;
#[path = "runtime/released.rs"]
mod released;
#[path = "runtime/spmd.rs"]
mod spmd;
