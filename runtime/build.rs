//! Generates the Rust of pw's wire protocol (`proto/pw.proto`) with protox,
//! a .proto compiler in Rust: no `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/pw.proto");
    let descriptors = protox::compile(["proto/pw.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .bytes(".pw.v1.Chunk.data")
        .compile_fds(descriptors)?;
    Ok(())
}
