//! The IFRT proxy seam: what unmodified JAX (`JAX_PLATFORMS=proxy`) speaks
//! to a server.
//!
//! * [`wire`]: the protocol's messages and the `xla.ifrt.proxy.GrpcIfrtService`
//!   gRPC service (server and client), generated from jaxlib's own descriptors.

pub mod wire;
