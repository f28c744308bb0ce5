//! Generates the Rust of the IFRT proxy protocol JAX's proxy client speaks,
//! from the descriptors `scripts/gen-ifrt-proto.py` extracted from jaxlib
//! (`proto/ifrt/ifrt_proxy.fds`): no `protoc` is needed.

// A build script speaks to cargo on standard output and fails by panicking.
#![allow(
    clippy::print_stdout,
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic
)]

use protox::prost::Message;

/// The IFRT proxy protocol's descriptors, and the file that includes the
/// modules generated from them, one per protobuf package.
const IFRT_FDS: &str = "proto/ifrt/ifrt_proxy.fds";
const IFRT_INCLUDE: &str = "ifrt_proxy.rs";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={IFRT_FDS}");
    let ifrt = tonic_prost_build::FileDescriptorSet::decode(std::fs::read(IFRT_FDS)?.as_slice())?;
    tonic_prost_build::configure()
        // `google.protobuf.Any` is generated with the rest (no prost-types).
        .compile_well_known_types(true)
        // Host buffer chunks and serialized programs: shared, not copied.
        .bytes(".xla.ifrt.proxy.GrpcHostBufferStoreRequest.data")
        .bytes(".xla.ifrt.proxy.GrpcHostBufferLookupResponse.data")
        .bytes(".xla.ifrt.Serialized.data")
        .include_file(IFRT_INCLUDE)
        .compile_fds(ifrt)?;
    Ok(())
}
