//! Integration tests of pw's compiler and tools, in one binary (MLIR links
//! statically, so every test binary is large: keep them few). The runtime
//! core, which does not link MLIR, has its own binary (`runtime.rs`).

mod bytecode;
mod common;
mod examples;
mod lit;
mod pipeline;
mod robustness;
mod run;
mod schedules;
mod transfer_plans;
