//! A client's bytecode is read first by a child process of pw-server.
//!
//! MLIR's bytecode reader trusts its input: bytecode that a client crafted
//! (or damaged, then signed again with a matching checksum) can corrupt the
//! reader's heap or make it allocate without end. A shared controller must
//! not let one client crash or stall it, so pw-server hands every bytecode
//! program a client sends to a child of its own first (`pw-server
//! --check-bytecode`, the bytes on its standard input), which parses it and
//! exits. Parsing is deterministic: a program the child read without
//! crashing, within [`CHECK_TIMEOUT`] and [`memory_limit`], the server
//! reads the same way. A child that died of a signal (an allocation past
//! its memory limit aborts it), or ran out of time (it is then killed),
//! refuses the program. (Seen: a re-signed mutation that made the reader
//! allocate 4 GiB in 5 s, without end.) Programs sent as text need no such step: pw's
//! screen bounds what MLIR's text parser is given (`pw_dialect::source`).

use std::{
    io::{Read, Write},
    process::{Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

/// The hidden flag that runs pw-server as the checking child.
pub const FLAG: &str = "--check-bytecode";

/// How long the child may take to read a program: far more than any
/// program within the 1 GiB limit takes (100k calls read in under a
/// second).
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the parent looks whether the child has ended.
const POLL: Duration = Duration::from_millis(5);

/// The address space the child may use to read `bytes` of bytecode: 2 GiB
/// (MLIR, the parsing thread's stack, the plugin-free binary) and 64 bytes
/// per byte of input (reading the lowered 100k-call program, 13 MiB, peaks
/// at 317 MiB).
pub fn memory_limit(bytes: usize) -> u64 {
    (2u64 << 30).saturating_add((bytes as u64).saturating_mul(64))
}

/// The child's side: parses the bytecode on standard input and exits 0,
/// whether or not it parsed (the server parses it again, with its
/// diagnostics); a crash ends it by a signal.
pub fn child() -> i32 {
    let mut source = Vec::new();
    if std::io::stdin().lock().read_to_end(&mut source).is_err() {
        return 1;
    }
    let limit = memory_limit(source.len());
    let limit = rustix::process::Rlimit {
        current: Some(limit),
        maximum: Some(limit),
    };
    if rustix::process::setrlimit(rustix::process::Resource::As, limit).is_err() {
        return 1;
    }
    let context = pw_dialect::new_context();
    let _ = pw_dialect::parse_source(&context, &source, "<client bytecode>");
    0
}

/// Whether MLIR reads `source` (bytecode) without crashing or stalling,
/// as found by a child process; the error says why not.
pub fn survives(source: &[u8]) -> Result<(), String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find pw-server's own binary to check the bytecode: {e}"))?;
    let mut child = Command::new(exe)
        .arg(FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the process that checks the bytecode: {e}"))?;
    let stdin = child.stdin.take();
    let started = Instant::now();
    let status = std::thread::scope(|scope| {
        // Written from another thread: a child that stops reading must not
        // block the wait below. A child that dies mid-way breaks the pipe,
        // which its exit status then explains.
        if let Some(mut stdin) = stdin {
            scope.spawn(move || stdin.write_all(source));
        }
        loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if started.elapsed() < CHECK_TIMEOUT => std::thread::sleep(POLL),
                Ok(None) => {
                    // Ends only the child started above (by its PID).
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(format!(
                        "MLIR's bytecode reader did not finish this program within {} s; \
                         the program is refused",
                        CHECK_TIMEOUT.as_secs()
                    ));
                }
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(format!(
                        "cannot wait for the process that checks the bytecode: {e}"
                    ));
                }
            }
        }
    })?;
    judge(status)
}

fn judge(status: ExitStatus) -> Result<(), String> {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0), _) => Ok(()),
        (_, Some(signal)) => Err(format!(
            "MLIR's bytecode reader crashed on this program (signal {signal}, in a process that \
             checks client bytecode, within a memory limit); the program is refused: send it as \
             text, or as bytecode that pw-opt --emit-bytecode wrote"
        )),
        (code, None) => Err(format!(
            "the process that checks client bytecode failed (exit code {}); the program is refused",
            code.unwrap_or(-1)
        )),
    }
}
