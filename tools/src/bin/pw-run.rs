//! pw-run: see `pw_tools::run`.

fn main() {
    // XLA's errors only; pw's own log with PW_LOG=debug (compilations,
    // enqueueing) or trace (every step).
    pw_wire::process::init("warn", pw_wire::process::LogFormat::Text);
    // A bug must still end as a one-line error and exit code 1, never as a
    // panic message with a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal error in pw-run: {info}");
    }));
    let code = std::panic::catch_unwind(|| {
        let stdin = &mut std::io::stdin().lock();
        let stdout = &mut std::io::stdout().lock();
        let stderr = &mut std::io::stderr().lock();
        pw_tools::run::main(std::env::args_os().collect(), stdin, stdout, stderr)
    })
    .unwrap_or(1);
    std::process::exit(code);
}
