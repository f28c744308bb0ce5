//! The IFRT proxy seam: what unmodified JAX (`JAX_PLATFORMS=proxy`) speaks
//! to a server.
//!
//! * [`protocol`]: the protocol's messages and the `xla.ifrt.proxy.GrpcIfrtService`
//!   gRPC service (server and client), generated from jaxlib's own descriptors.
//! * [`ProxyService`]: that service on pw-server: each `IfrtSession` is a
//!   pw session (`session`) whose operations run as small plans
//!   ([`pw_core::plans`]); IFRT's dtypes and shardings map onto pw's ([`convert`]).

pub mod convert;
mod direct;
mod error;
mod hlo;
mod hlo_cost;
mod hlo_text;
mod host_buffers;
mod named_sharding;
pub mod protocol;
mod service;
mod session;

pub use error::{Error, Failure, Result};
pub use host_buffers::HostBuffers;
pub use service::{ProxyService, PROTOCOLS};
