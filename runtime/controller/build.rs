//! Generates the client-facing `Controller` service of pw's wire protocol
//! (`proto/controller.proto`): its server and client, over the messages of
//! `pw_wire::proto` (which `../wire/proto/pw.proto` defines and pw-wire
//! generates).

// A build script speaks to cargo on standard output and fails by panicking.
#![allow(
    clippy::print_stdout,
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic
)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/controller.proto");
    println!("cargo:rerun-if-changed=../wire/proto/pw.proto");
    let mut descriptors = protox::compile(["controller.proto"], ["proto", "../wire/proto"])?;
    // pw.proto is pw-wire's to generate: only this file's service is ours.
    descriptors.file.retain(|f| f.name() == "controller.proto");
    tonic_prost_build::configure()
        .extern_path(".pw.v1", "::pw_wire::proto")
        .compile_fds(descriptors)?;
    Ok(())
}
