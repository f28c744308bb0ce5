//! Generates the dialect's C++ from its ODS file and compiles it.

// A build script speaks to cargo on standard output and fails by panicking.
#![allow(
    clippy::print_stdout,
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic
)]

use std::{env, path::PathBuf, process::Command};

const GENERATORS: &[(&str, &str)] = &[
    ("-gen-dialect-decls", "PwDialect.h.inc"),
    ("-gen-dialect-defs", "PwDialect.cpp.inc"),
    ("-gen-typedef-decls", "PwTypes.h.inc"),
    ("-gen-typedef-defs", "PwTypes.cpp.inc"),
    ("-gen-attrdef-decls", "PwAttrs.h.inc"),
    ("-gen-attrdef-defs", "PwAttrs.cpp.inc"),
    ("-gen-op-decls", "PwOps.h.inc"),
    ("-gen-op-defs", "PwOps.cpp.inc"),
];

fn main() {
    let prefix = PathBuf::from(
        env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into()),
    );
    let include = prefix.join("include");
    let tblgen = prefix.join("bin/mlir-tblgen");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let td = PathBuf::from("cpp/PwDialect.td");

    for (generator, file) in GENERATORS {
        let status = Command::new(&tblgen)
            .arg(generator)
            .arg("-I")
            .arg(&include)
            .arg(&td)
            .arg("-o")
            .arg(out.join(file))
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", tblgen.display()));
        assert!(status.success(), "mlir-tblgen {generator} failed");
    }

    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .flag("-fno-exceptions")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-comment")
        .include(&include)
        .include(&out)
        .include("cpp")
        .file("cpp/PwDialect.cpp")
        .compile("pw_dialect_cpp");

    println!("cargo:rerun-if-changed=cpp");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
}
