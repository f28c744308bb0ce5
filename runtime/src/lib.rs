//! The pw runtime core: a binding to the PJRT C API and IFRT-style arrays.
//!
//! * [`pjrt`]: our own binding to recent PJRT plugins (loading, clients,
//!   devices, compilation, execution, transfers, events).
//! * [`Array`]: one logical array that knows its [`DType`], shape,
//!   [`Sharding`] and [`MemoryLayout`], over per-device [`pjrt::Buffer`]s, with the
//!   operations of IFRT's `Array`/`Client` (make from host, assemble,
//!   disassemble, reshard, remap, bitcast...).
//! * [`npy`]: arrays in and out of `.npy` files.
//! * [`exec`]: runs lowered pw programs (plan, resources, executor, traces).
//!
//! All `unsafe` code lives in [`pjrt`], but for one `madvise` hint in
//! [`npy`]; everything above them is safe Rust.
#![deny(unsafe_code)]
// Unit tests may unwrap: a failure there is the test failing.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::todo,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

pub mod array;
pub mod cache;
pub mod client;
pub mod controller;
pub mod dataplane;
pub mod dtype;
pub mod error;
pub mod exec;
pub mod host;
pub mod net;
pub mod npy;
pub mod pjrt;
pub mod process;
pub mod proxy;
pub mod sharding;
pub mod wire;
pub mod worker;

pub use array::{Array, ArraySpec, CopySemantics, RemapMapping, RemapPlan};
pub use dtype::{DType, Element};
pub use error::{ApiVersion, Error, ErrorCode, Result};
pub use host::HostArray;
pub use pw_core::geometry::Region;
pub use sharding::{MemoryLayout, Mesh, Sharding};
