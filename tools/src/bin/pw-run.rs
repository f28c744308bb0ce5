//! pw-run: see `pw_tools::run`.

fn main() {
    // XLA's logging is chatty on stderr: keep its errors only, unless the
    // user chose a level. (Set before any thread exists.)
    if std::env::var_os("TF_CPP_MIN_LOG_LEVEL").is_none() {
        std::env::set_var("TF_CPP_MIN_LOG_LEVEL", "2");
    }
    // pw's own log: PW_LOG=debug (compilations, enqueueing) or trace (every
    // step), to standard error.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PW_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
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
