//! The command-line tools of pw, as a library so that tests drive them
//! in-process exactly as the binaries do.

#![forbid(unsafe_code)]
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod bytecode_check;
pub mod diagnostics;
pub mod expected;
pub mod lower;
pub mod opt;
pub mod run;
pub mod server;
pub mod split;
pub mod status;
pub mod views;
