//! Runs the tools in-process, exactly as their binaries do.

use std::{ffi::OsString, panic::AssertUnwindSafe};

/// What a tool run produced.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `pw-opt ARGS` with `stdin`; a panic fails the test with its message.
pub fn pw_opt(args: &[&str], stdin: &[u8]) -> Output {
    let mut argv: Vec<OsString> = vec!["pw-opt".into()];
    argv.extend(args.iter().map(OsString::from));
    let mut input = stdin;
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let code = std::panic::catch_unwind(AssertUnwindSafe(|| {
        pw_tools::opt::main(argv, &mut input, &mut stdout, &mut stderr)
    }))
    .unwrap_or_else(|_| panic!("pw-opt {args:?} panicked"));
    Output {
        code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}
